"""Barcode payloads of SPEC section 6: `CS` + deck ID (8 hex) + rank + suit + Luhn mod 36."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProtocolError

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
PREFIX = "CS"
RANKS = "23456789TJQKA"
SUITS = "CDHS"
LENGTH = 13
_N = len(ALPHABET)
_HEX = "0123456789ABCDEF"


class BarcodeError(ProtocolError, ValueError):
    """A barcode that is not a card: a misread (the shoe retries; the exit sensor decides).

    `reason` is one of: length, alphabet, check, prefix, deck_id, rank, suit, range.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class BarcodePayload:
    """The identity a valid barcode carries: deck ID and card code (SPEC 6)."""

    deck_id: int
    code: int


def _luhn_sum(text: str, double_rightmost: bool) -> int:
    total = 0
    double = double_rightmost
    for ch in reversed(text):
        value = ALPHABET.index(ch)
        if double:
            value *= 2
            value = value // _N + value % _N
        total += value
        double = not double
    return total


def check_character(text: str) -> str:
    """The Luhn mod 36 check character of the 12 characters before it."""
    if any(ch not in ALPHABET for ch in text):
        raise BarcodeError("alphabet", f"character outside 0-9A-Z in {text!r}")
    return ALPHABET[(_N - _luhn_sum(text, True) % _N) % _N]


def make_barcode(deck_id: int, code: int) -> str:
    """The 13-character payload printed on card `code` of deck `deck_id` (no terminator)."""
    if not 0 <= deck_id <= 0xFFFFFFFF:
        raise BarcodeError("range", f"deck ID {deck_id} is not a u32")
    if not 0 <= code <= 51:
        raise BarcodeError("range", f"card code {code} is not 0..51")
    body = f"{PREFIX}{deck_id:08X}{RANKS[code // 4]}{SUITS[code % 4]}"
    return body + check_character(body)


def parse_barcode(text: str | bytes) -> BarcodePayload:
    """The deck ID and card code of a barcode payload, with or without its CR/LF terminator.

    Raises BarcodeError naming what is wrong: length, alphabet, prefix, deck ID, rank,
    suit or check character.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("ascii")
        except UnicodeDecodeError:
            raise BarcodeError("alphabet", f"non-ASCII barcode {text!r}") from None
    for ending in ("\r\n", "\n", "\r"):
        if text.endswith(ending):
            text = text[: -len(ending)]
            break
    if len(text) != LENGTH:
        raise BarcodeError("length", f"barcode {text!r} has {len(text)} characters, not {LENGTH}")
    bad = [ch for ch in text if ch not in ALPHABET]
    if bad:
        raise BarcodeError("alphabet", f"barcode {text!r} has a character outside 0-9A-Z: {bad[0]!r}")
    if _luhn_sum(text, False) % _N != 0:
        raise BarcodeError("check", f"barcode {text!r} has a bad check character")
    if not text.startswith(PREFIX):
        raise BarcodeError("prefix", f"barcode {text!r} does not start with {PREFIX}")
    deck_hex = text[2:10]
    if any(ch not in _HEX for ch in deck_hex):
        raise BarcodeError("deck_id", f"barcode {text!r} has a deck ID that is not hex: {deck_hex}")
    if text[10] not in RANKS:
        raise BarcodeError("rank", f"barcode {text!r} has no rank {text[10]!r}")
    if text[11] not in SUITS:
        raise BarcodeError("suit", f"barcode {text!r} has no suit {text[11]!r}")
    return BarcodePayload(int(deck_hex, 16), RANKS.index(text[10]) * 4 + SUITS.index(text[11]))
