"""`cardshoe hil`: the hardware-in-the-loop bench.

Subcommands (argparse subparsers):
  run      run scenario files on the virtual board, or a real one with --port (hil/runcmd.py)
  soak     many shoes in a row with random faults, totals checked (hil/soak.py)
  board    run a virtual board standalone: print its serial path, keep it powered until
           interrupted, and take bench commands on stdin
  timing   measure the virtual board: power cycle and mpremote copy times
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Callable

from cardshoe.argtypes import positive_int
from cardshoe.hil.vboard import PICO_FLASH_SIZE, SimTimeout, VirtualBoard, VirtualBoardError

BOARD_HELP = """\
stdin commands while the board runs: `!on`, `!safe` (power on, skipping main.py), `!off`,
`!cut` (power cut), `!reset`, `!unplug`, `!replug`, `!quit`; any other line is sent to the
firmware on the sim channel as is (e.g. `rfid 04A1B2C3`, `exit`, `key deal_complete`).
Lines from the firmware are printed as `sim< LINE` on stderr."""


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardshoe hil", description="The hardware-in-the-loop bench.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    board = sub.add_parser(
        "board",
        help="run a virtual board standalone and print its serial path",
        description="Run a virtual board (MicroPython unix port on a pseudo-terminal, littlefs flash). "
        "The first line on stdout is the serial path to give mpremote or the daemon.",
        epilog=BOARD_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _board_options(board)
    board.add_argument("--safe-boot", action="store_true", help="boot without running main.py (a key held at boot)")
    board.add_argument("--off", action="store_true", help="start powered off (power on with `!on`)")
    board.set_defaults(run=_cmd_board)

    timing = sub.add_parser("timing", help="measure power cycles and mpremote copies on a virtual board")
    _board_options(timing)
    timing.add_argument("--cycles", type=positive_int, default=10, help="power cycles to time (default 10)")
    timing.add_argument("--copy-kib", type=positive_int, default=16, help="size of the file copied with mpremote (KiB)")
    timing.set_defaults(run=_cmd_timing)

    # The scenario runner and the soak (bench task; cardshoe.hil.commands).
    from cardshoe.hil.commands import add_bench_commands

    add_bench_commands(sub)
    return parser


def _board_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workdir", type=Path, help="folder of the flash image, tty and sim socket (default: a new temp dir)")
    parser.add_argument("--heapsize", default="192k", help="MicroPython heap (default 192k, about a Pico's)")
    parser.add_argument("--flash-size", type=int, default=PICO_FLASH_SIZE, help="flash image bytes (default: a Pico's 1408 KiB)")
    parser.add_argument("--romfs-size", type=int, default=None,
                        help="ROM partition bytes, as a MicroPython built with ROMFS has (e.g. 131072); "
                             "default $CARDSHOE_VBOARD_ROMFS or 0: none, as on a stock Pico build")
    parser.add_argument(
        "--keep-serial",
        action="store_true",
        help="keep the serial device while the board is off (default: it vanishes, as a Pico's USB does)",
    )


def main(argv: list[str]) -> int:
    """Entry point of `cardshoe hil`."""
    args = _build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except VirtualBoardError as exc:
        print(f"cardshoe hil: {exc}", file=sys.stderr)
        return 1


def _make_board(args: argparse.Namespace) -> VirtualBoard:
    workdir = args.workdir if args.workdir is not None else Path(tempfile.mkdtemp(prefix="cardshoe-vboard-"))
    return VirtualBoard(
        workdir,
        heapsize=args.heapsize,
        flash_size=args.flash_size,
        serial_follows_power=not args.keep_serial,
        romfs_size=args.romfs_size,
    )


def _cmd_board(args: argparse.Namespace) -> int:
    board = _make_board(args)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        if not args.off:
            board.power_on(safe_boot=args.safe_boot)
        print(board.tty_path, flush=True)
        print(f"serial {board.tty_path} -> {board.serial_device}; sim {board.sim_path}; flash {board.flash.path}", file=sys.stderr)
        threading.Thread(target=_print_sim_lines, args=(board, stop), daemon=True).start()
        threading.Thread(target=_read_commands, args=(board, stop), daemon=True).start()
        while not stop.wait(0.2):
            pass
    finally:
        board.close()
    return 0


def _print_sim_lines(board: VirtualBoard, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            line = board.sim.read_line(0.5)
        except SimTimeout:
            continue
        except VirtualBoardError:
            return
        print(f"sim< {line}", file=sys.stderr, flush=True)


def _read_commands(board: VirtualBoard, stop: threading.Event) -> None:
    actions: dict[str, Callable[[], None]] = {
        "!on": board.power_on,
        "!safe": lambda: board.power_on(safe_boot=True),
        "!off": board.power_off,
        "!cut": board.power_cut,
        "!reset": board.reset,
        "!unplug": board.unplug,
        "!replug": board.replug,
        "!quit": stop.set,
    }
    for raw in sys.stdin:
        line = raw.rstrip("\r\n")
        if not line:
            continue
        try:
            if line in actions:
                actions[line]()
                print(f"ok {line}; serial {board.serial_device}", file=sys.stderr, flush=True)
            elif line.startswith("!"):
                print(f"unknown command {line!r}; {BOARD_HELP}", file=sys.stderr, flush=True)
            else:
                board.sim.send(line)
        except (VirtualBoardError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
        if stop.is_set():
            return
    # stdin closed: keep running until a signal, as a service would.


def _cmd_timing(args: argparse.Namespace) -> int:
    import subprocess

    mpremote = str(Path(sys.executable).with_name("mpremote"))
    with tempfile.TemporaryDirectory(prefix="cardshoe-timing-") as tmp:
        args.workdir = args.workdir or Path(tmp) / "board"
        board = _make_board(args)
        try:
            board.power_on()
            board.power_off()
            payload = Path(tmp) / "payload.bin"
            payload.write_bytes(bytes(range(256)) * (4 * args.copy_kib))
            copies: list[float] = []
            for _ in range(5):
                board.power_on()
                start = time.perf_counter()
                subprocess.run(
                    [mpremote, "connect", str(board.tty_path), "fs", "cp", "--force", str(payload), ":payload.bin"],
                    check=True,
                    capture_output=True,
                )
                copies.append(time.perf_counter() - start)
                board.power_cut()
            cycles: list[float] = []
            ready: list[float] = []
            cuts: list[float] = []
            probe = Path(tmp) / "main.py"
            probe.write_text("print('up')\n")
            board.power_on()
            subprocess.run([mpremote, "connect", str(board.tty_path), "fs", "cp", str(probe), ":main.py"], check=True, capture_output=True)
            board.power_cut()
            for _ in range(args.cycles):
                start = time.perf_counter()
                mark = board.output_mark()
                board.power_on()
                cycles.append(time.perf_counter() - start)
                board.wait_output(b"up", timeout=10, since=mark)
                ready.append(time.perf_counter() - start)
                start = time.perf_counter()
                board.power_cut()
                cuts.append(time.perf_counter() - start)
            round_trip = _echo_round_trip(board, Path(tmp) / "echo.py", mpremote)
        finally:
            board.close()
    kib = args.copy_kib
    print(f"power_on() returns (interpreter spawned): median {_median(cycles) * 1000:.1f} ms over {len(cycles)}")
    print(f"power_on() to main.py output:             median {_median(ready) * 1000:.1f} ms")
    print(f"power_cut() (SIGKILL, reap, USB gone):    median {_median(cuts) * 1000:.1f} ms")
    print(f"mpremote fs cp of {kib} KiB (whole command):  median {_median(copies) * 1000:.0f} ms over {len(copies)}")
    print(f"1-byte round trip host -> main.py -> host: median {round_trip * 1e6:.0f} us")
    return 0


_ECHO_MAIN = """\
import sys, micropython
micropython.kbd_intr(-1)
print("echo ready")
r, w = sys.stdin.buffer, sys.stdout.buffer
while True:
    w.write(r.read(1))
"""


def _echo_round_trip(board: VirtualBoard, script: Path, mpremote: str, rounds: int = 300) -> float:
    import subprocess

    import serial

    script.write_text(_ECHO_MAIN)
    board.power_on(safe_boot=True)
    subprocess.run([mpremote, "connect", str(board.tty_path), "fs", "cp", str(script), ":main.py"], check=True, capture_output=True)
    board.power_cut()
    mark = board.output_mark()
    board.power_on()
    times = []
    with serial.Serial(str(board.tty_path), timeout=5) as port:
        board.wait_output(b"echo ready", timeout=10, since=mark)
        port.write(b"S")
        port.read_until(b"S")
        for _ in range(rounds):
            start = time.perf_counter()
            port.write(b"x")
            if port.read(1) != b"x":
                raise VirtualBoardError("the echo main.py did not echo")
            times.append(time.perf_counter() - start)
    board.power_cut()
    return _median(times)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")
