"""The `cardshoe` console command.

Each subcommand lives in the module that owns its job; this dispatcher imports that
module only when the subcommand is used, so `cardshoe decode` does not pay for
FastAPI and `cardshoe settle` does not need pyserial.
"""

from __future__ import annotations

import importlib
import sys
from typing import Callable, Sequence

# subcommand -> (module, one-line help). Each module exposes `main(argv) -> int`.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("cardshoe.daemon.cli", "run the table daemon against a shoe on a serial port"),
    "demo": ("cardshoe.hil.demo", "set up a virtual board and deal and settle one round (the main job)"),
    "flash": ("cardshoe.flashing", "compile, copy and provision the firmware onto a board"),
    "maintenance": ("cardshoe.maintenance", "stop a streaming shoe at its REPL, for `cardshoe flash`"),
    "hil": ("cardshoe.hil.cli", "the hardware-in-the-loop bench: scenarios, soak, real board"),
    "settle": ("cardshoe.settlement.cli", "settle a round file offline and print the result as JSON"),
    "replay": ("cardshoe.journal.replay", "rebuild every round from a journal and check it"),
    "parsheet": ("cardshoe.parsheet.cli", "exact probabilities and house edge of a game's wagers"),
    "decode": ("cardshoe.protocol.decode", "dissect a capture of the wire protocol into JSON lines"),
    "bench": ("cardshoe.benchmarks", "run the benchmark scripts and print their figures"),
}


def _usage() -> str:
    lines = ["usage: cardshoe COMMAND [ARGS...]", "", "commands:"]
    for name, (_, help_text) in SUBCOMMANDS.items():
        lines.append(f"  {name:<12} {help_text}")
    lines.append("")
    lines.append("`cardshoe COMMAND --help` describes a command's arguments.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a subcommand; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"cardshoe: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    entry: Callable[[list[str]], int] = getattr(module, "main")
    return int(entry(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
