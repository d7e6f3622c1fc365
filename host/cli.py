"""The `cardshoe` console command.

Each subcommand lives in the module that owns its job; this dispatcher imports that
module only when the subcommand is used, so `cardshoe decode` does not pay for
FastAPI and `cardshoe settle` does not need pyserial.

The dispatcher also keeps the promise `cardshoe --help` makes about every command: no
traceback for a bad argument, file or device, one line on standard error, and the exit
statuses of EXIT_STATUS; and it runs every command under umask 077, so that nothing a
command creates is readable by group or others (`cardshoe.private`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from importlib import metadata
from typing import Any, Callable, NoReturn, Sequence

from cardshoe.private import UMASK

# subcommand -> (module, one-line help). Each module exposes `main(argv) -> int`.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("cardshoe.daemon.cli", "run the table daemon against a shoe on a serial port"),
    "demo": ("cardshoe.hil.demo", "set up a virtual board and deal and settle one round (the main job)"),
    "flash": ("cardshoe.flashing", "compile, copy and provision the firmware onto a board"),
    "maintenance": ("cardshoe.maintenance", "stop a streaming shoe at its REPL, for `cardshoe flash`"),
    "hil": ("cardshoe.hil.cli", "the hardware-in-the-loop bench: scenarios, soak, real board"),
    "settle": ("cardshoe.settlement.cli", "settle a round file offline and print the result as JSON"),
    "replay": ("cardshoe.journal.replay", "rebuild every round from a journal (or a chain of days) and check it"),
    "days": ("cardshoe.journal.dayscli", "a table's gaming-day journal files: list them, archive the old ones"),
    "evidence": ("cardshoe.evidence.cli", "export a round's signed evidence file, or verify one offline"),
    "parsheet": ("cardshoe.parsheet.cli", "exact probabilities and house edge of a game's wagers"),
    "report": ("cardshoe.report.cli", "the shift report: pace, hold against the exact theoretical, ratings, alarms"),
    "decode": ("cardshoe.protocol.decode", "dissect a capture of the wire protocol into JSON lines"),
    "floor": ("cardshoe.floor.cli", "the casino floor: every table's journal, the linked progressive, a search"),
    "bench": ("cardshoe.benchmarks", "run the benchmark scripts and print their figures"),
}


EXIT_STATUS = """\
exit status (every command):
  0    done (settled, decoded, every check passed)
  1    the command ran and found a problem: an invalid round, a capture with no valid
       frame, a replay that differs, a failed scenario or soak, a board that does not
       answer or fails to flash
  2    usage: a bad argument, or a file that cannot be read or is not in its format
  3    an internal error (a bug: please report it; CARDSHOE_DEBUG=1 shows the traceback)
  130  interrupted (Ctrl-C)
  141  standard output was closed early (`| head`): the output stops quietly
Errors are one line on standard error, never a traceback."""

INTERNAL_ERROR = 3
INTERRUPTED = 130
BROKEN_PIPE = 141


def version() -> str:
    """The installed cardshoe version."""
    try:
        return metadata.version("cardshoe")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _usage() -> str:
    lines = ["usage: cardshoe COMMAND [ARGS...]", "       cardshoe --version", "", "commands:"]
    for name, (_, help_text) in SUBCOMMANDS.items():
        lines.append(f"  {name:<12} {help_text}")
    lines.append("")
    lines.append("`cardshoe COMMAND --help` describes a command's arguments.")
    lines.append("")
    lines.append(EXIT_STATUS)
    return "\n".join(lines)


def _one_line_usage_error(self: argparse.ArgumentParser, message: str) -> NoReturn:
    """argparse's error, in one line: what was wrong and where to look (exit 2)."""
    self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _quiet_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's last flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a subcommand; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help", "-V", "--version"):
        text = f"cardshoe {version()}" if args and args[0] in ("-V", "--version") else _usage()
        try:
            print(text)
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
            return BROKEN_PIPE
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"cardshoe: unknown command {name!r} (see cardshoe --help)", file=sys.stderr)
        return 2
    return _run(name, rest)


def _run(name: str, rest: list[str]) -> int:
    """Run one subcommand, turning what escapes it into one line and an exit status."""
    prog = f"cardshoe {name}"
    # Every subcommand builds its own argparse parser; their usage errors become one line
    # here, for this call only (restored below), so library users keep argparse's default.
    saved: Any = argparse.ArgumentParser.error
    argparse.ArgumentParser.error = _one_line_usage_error  # type: ignore[method-assign]
    # What a command creates (the journal and its -wal/-shm, keys, tokens, evidence, the
    # floor's store) is its user's alone whatever the umask it was started with; each such
    # file is also made 0600 where it is created (cardshoe.private), for library users.
    # (Restored after, as argparse's error is, for a caller that runs a command in-process.)
    saved_umask = os.umask(UMASK)
    try:
        module = importlib.import_module(SUBCOMMANDS[name][0])
        entry: Callable[[list[str]], int] = getattr(module, "main")
        status = int(entry(rest) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
        return status
    except BrokenPipeError:
        _quiet_stdout()
        return BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except SystemExit as exc:
        # argparse's --help and usage errors, and commands that exit themselves.
        code = exc.code
        if code is None or isinstance(code, int):
            return int(code or 0)
        print(f"{prog}: {code}", file=sys.stderr)
        return 1
    except OSError as exc:
        # A file or device that could not be used, and that the command did not name itself.
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"{prog}: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last line of defence against a traceback
        if os.environ.get("CARDSHOE_DEBUG"):
            raise
        text = " ".join(str(exc).split())[:300]
        print(f"{prog}: internal error: {type(exc).__name__}: {text} (CARDSHOE_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return INTERNAL_ERROR
    finally:
        argparse.ArgumentParser.error = saved  # type: ignore[method-assign]
        os.umask(saved_umask)


if __name__ == "__main__":
    raise SystemExit(main())
