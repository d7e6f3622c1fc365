"""`cardshoe settle ROUND.json`: settle a round file offline and print the settlement as JSON.

Exit status: 0 settled; 1 the round is invalid (the message names the field); 2 usage, or
the file cannot be read or is not JSON within the round file's bounds (`ROUND_FILE` in
cardshoe.strictjson: size, UTF-8, duplicate keys, numbers, nesting, lengths; the message
names the field). ``-`` reads the round from standard input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from cardshoe.games import GameError
from cardshoe.strictjson import ROUND_FILE, JSONInputError
from cardshoe.strictjson import loads as strict_loads

from . import parse_round, settle
from .errors import RoundError

__all__ = ["main"]


def _read(path: str) -> Any:
    """The round file's JSON, read strictly within the round file's bounds."""
    # One byte over the limit is enough to refuse it: a huge file is never read whole.
    if path == "-":
        data = sys.stdin.buffer.read(ROUND_FILE.max_bytes + 1)
    else:
        with open(path, "rb") as f:
            data = f.read(ROUND_FILE.max_bytes + 1)
    if len(data) > ROUND_FILE.max_bytes:
        raise JSONInputError("", f"over the limit of {ROUND_FILE.max_bytes} bytes")
    return strict_loads(data, ROUND_FILE)


def main(argv: list[str]) -> int:
    """Run the subcommand; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="cardshoe settle",
        description="Settle a round file (docs/round-format.md) and print the settlement as JSON.",
    )
    parser.add_argument("round", metavar="ROUND.json", help="the round file, or - for standard input")
    parser.add_argument("--compact", action="store_true", help="print on one line")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        data = _read(args.round)
    except OSError as exc:
        print(f"cardshoe settle: cannot read {args.round}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except JSONInputError as exc:
        print(f"cardshoe settle: {args.round}: {exc}", file=sys.stderr)
        return 2
    try:
        settlement = settle(parse_round(data))
    except RoundError as exc:
        print(f"cardshoe settle: invalid round {args.round}: {exc.field}: {exc.message}", file=sys.stderr)
        return 1
    except GameError as exc:
        print(f"cardshoe settle: {exc}", file=sys.stderr)
        return 1
    indent = None if args.compact else 2
    try:
        print(json.dumps(settlement.to_json(), indent=indent))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, with the status of a closed
        # pipe (141, as `cardshoe --help` lists), not a claim that everything was printed.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0
