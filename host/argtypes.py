"""Argument types for the `cardshoe` commands' parsers: a bad value is a one-line usage
error (exit 2) naming the option, never a traceback or a run that does nothing."""

from __future__ import annotations

import argparse
import math

__all__ = ["probability", "positive_int", "non_negative_int", "u32"]


def probability(text: str) -> float:
    """A probability 0..1 (`--corrupt 0.01`)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a probability in [0, 1]")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    """A whole number of at least 1 (`--cards 2000`)."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def non_negative_int(text: str) -> int:
    """A whole number of at least 0 (`--unplug-every 0`: never)."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def u32(text: str) -> int:
    """A 32-bit unsigned number, decimal or 0x hex (`--deck 0x00C0FFEE`)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (decimal, or hex as 0x00C0FFEE)") from None
    if not 0 <= value <= 0xFFFFFFFF:
        raise argparse.ArgumentTypeError(f"{text} is not a 32-bit unsigned number (0 to 0xFFFFFFFF)")
    return value
