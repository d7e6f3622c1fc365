"""`cardshoe hil`: the hardware-in-the-loop bench.

Subcommands (argparse subparsers):
  run      run scenario files on the virtual board, or a real one with --port (hil/runcmd.py)
  soak     many shoes in a row with random faults, totals checked (hil/soak.py)
  board    run a virtual board standalone: print its serial path and how to deal, keep it
           powered until interrupted, and take bench commands on stdin and on its control
           socket (`--flash` deploys the firmware first)
  deal     deal named cards (`As Kd`) through a running virtual board: each card's barcode
           to the reader, then the exit sensor
  key      press a dealer key on a running virtual board
  barcode  print the barcode printed on a card of a deck (protocol/SPEC.md section 6)
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

from cardshoe.argtypes import positive_int, u32
from cardshoe.hil.boardctl import UNREAD, BoardControlError, ControlServer, dealing_lines, send
from cardshoe.hil.vboard import PICO_FLASH_SIZE, SimTimeout, VirtualBoard, VirtualBoardError
from cardshoe.hil.vboard.sim import KEYS

#: The deck the printed instructions load and `deal` and `barcode` assume (the bench's).
DEFAULT_DECK = 0x00C0_FFEE
#: The shoe serial `--flash` provisions by default (the bench's).
DEFAULT_SERIAL = 0x00C5_0E01

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
        help="run a virtual board standalone; print its serial path and how to deal",
        description="Run a virtual board (MicroPython unix port on a pseudo-terminal, littlefs flash). "
        "The first line on stdout is the serial path to give mpremote or the daemon.",
        epilog=BOARD_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _board_options(board)
    board.add_argument("--safe-boot", action="store_true", help="boot without running main.py (a key held at boot)")
    board.add_argument("--off", action="store_true", help="start powered off (power on with `!on`)")
    board.add_argument("--flash", action="store_true",
                       help="deploy the firmware with `cardshoe flash` first (a new shoe, ready to stream)")
    board.add_argument("--serial", type=u32, default=DEFAULT_SERIAL,
                       help=f"with --flash: the shoe serial to provision (default {DEFAULT_SERIAL:#010x})")
    board.add_argument("--keys", type=Path, default=None,
                       help="with --flash: the key store to write the shoe's key to (default WORKDIR/keys)")
    board.set_defaults(run=_cmd_board)

    where = "the work folder of a running `cardshoe hil board` (default $CARDSHOE_BOARD)"
    deal = sub.add_parser(
        "deal", help="deal named cards through a running virtual board",
        description="Deal cards through a running virtual board (`cardshoe hil board`): for each card its "
        "barcode (SPEC 6) is presented to the shoe's reader, then the exit sensor sees it leave. The shoe "
        "reads, logs and sends each card to the daemon as a real one would. "
        f"A card is its text (As, Td, 2c); {UNREAD!r} is a card the reader cannot read (the exit sensor alone).",
    )
    deal.add_argument("cards", nargs="+", metavar="CARD", help=f"cards in the order they leave the shoe (or {UNREAD!r})")
    deal.add_argument("--board", type=Path, default=None, help=where)
    deal.add_argument("--deck", type=u32, default=DEFAULT_DECK,
                      help=f"the deck the cards are from (default {DEFAULT_DECK:#010x}; another deck's cards are foreign)")
    deal.set_defaults(run=_cmd_deal)

    key = sub.add_parser("key", help="press a dealer key on a running virtual board",
                         description="Press one of the shoe's dealer keys on a running virtual board.")
    key.add_argument("name", choices=KEYS, help="the key")
    key.add_argument("--board", type=Path, default=None, help=where)
    key.set_defaults(run=_cmd_key)

    barcode = sub.add_parser(
        "barcode", help="print the barcode of a card of a deck",
        description="Print the 13-character barcode payload printed on each card (protocol/SPEC.md section 6: "
        "CS, the deck ID in 8 hex digits, rank, suit, a Luhn mod 36 check character), one line per card.")
    barcode.add_argument("cards", nargs="+", metavar="CARD", help="card texts (As, Td, 2c)")
    barcode.add_argument("--deck", type=u32, default=DEFAULT_DECK, help=f"the deck ID (default {DEFAULT_DECK:#010x})")
    barcode.set_defaults(run=_cmd_barcode)

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
    except (VirtualBoardError, BoardControlError) as exc:
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
    if args.flash and (args.off or args.safe_boot):
        print("cardshoe hil board: --flash powers the board on and runs the firmware; "
              "it excludes --off and --safe-boot", file=sys.stderr)
        return 2
    board = _make_board(args)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    control: ControlServer | None = None
    try:
        keys = (args.keys if args.keys is not None else board.workdir / "keys").resolve()
        if not args.off:
            board.power_on(safe_boot=args.safe_boot)
        if args.flash:
            _flash(board, args.serial, keys)
        print(board.tty_path, flush=True)
        print(f"serial {board.tty_path} -> {board.serial_device}; sim {board.sim_path}; flash {board.flash.path}", file=sys.stderr)
        threading.Thread(target=_print_sim_lines, args=(board, stop), daemon=True).start()
        control = ControlServer(board.workdir, lambda line: _command(board, stop, line))
        print(how_to_deal(board.workdir, flashed=args.flash, serial=args.serial, keys=keys), flush=True)
        threading.Thread(target=_read_commands, args=(board, stop), daemon=True).start()
        while not stop.wait(0.2):
            pass
    finally:
        if control is not None:
            control.close()
        board.close()
    return 0


def _flash(board: VirtualBoard, serial: int, keys: Path) -> None:
    """Deploy the firmware with the real `cardshoe flash` and wait for it to stream."""
    import subprocess

    keys.mkdir(mode=0o700, parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "cardshoe.cli", "flash", "--port", str(board.tty_path), "--serial", str(serial),
            "--keys", str(keys)]
    print(f"flashing: {' '.join(argv[2:])}", file=sys.stderr, flush=True)
    proc = subprocess.run(argv, capture_output=True, timeout=600)
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise VirtualBoardError(f"cardshoe flash exited {proc.returncode}: {out.splitlines()[-1] if out else ''}")
    print(out, file=sys.stderr, flush=True)
    board.sim.wait_ready(60.0)


def how_to_deal(workdir: Path, *, flashed: bool, serial: int, keys: Path) -> str:
    """What `cardshoe hil board` prints after the serial path: a round from a shell and a browser."""
    tty = workdir / "tty"
    deck = DEFAULT_DECK
    first = (f"The firmware is deployed (shoe serial {serial}, key in {keys})." if flashed else
             f"0. Deploy the firmware (or start this board with --flash):\n"
             f"     cardshoe flash --port {tty} --serial {serial} --keys {keys}")
    return f"""\
== Virtual board in {workdir}: serial device {tty}. Ctrl-C powers it off.
{first}
How to deal a round from another shell (docs: README, "A virtual table from a shell"):
1. Start the daemon on the board's serial device:
     export CARDSHOE_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
     cardshoe run --port {tty} --keys {keys} --game three-card-poker --seats 7 \\
         --journal {workdir / 'journal.sqlite'} --listen 127.0.0.1:8600
2. Load a shoe of barcode deck {deck:#010x} ({deck}), open a round, wagers, no more bets:
     api() {{ curl -s -H "Authorization: Bearer $CARDSHOE_TOKEN" -H 'Content-Type: application/json' "$@"; echo; }}
     api -d '{{"deck_id": {deck}}}' http://127.0.0.1:8600/shoe/load
     api -X POST http://127.0.0.1:8600/rounds                      # -> {{"round_id": "R", ...}}
     api -d '{{"seat": 1, "wager": "ante", "amount": 1000}}' http://127.0.0.1:8600/rounds/R/wagers
     api -X POST http://127.0.0.1:8600/rounds/R/no-more-bets
3. Deal: each card's barcode is read, then it leaves the shoe; the firmware sends it to the daemon:
     cardshoe hil deal --board {workdir} As Kd 7h 2c 2d 9s          # '-': a card the reader cannot read
     cardshoe hil key --board {workdir} deal_complete               # {', '.join(KEYS)}
     cardshoe hil barcode --deck {deck:#x} As                       # the barcode printed on a card
4. Watch it at http://127.0.0.1:8600/table (sign in with the token); decisions and settlement:
     api -d '{{"seat": 1, "choice": "play"}}' http://127.0.0.1:8600/rounds/R/decisions
     api -d '{{}}' http://127.0.0.1:8600/rounds/R/settle
Board commands, here on stdin or `echo LINE | nc -U {workdir / 'control.sock'}`: !cut !on !off !reset !unplug !replug !quit
"""


def _print_sim_lines(board: VirtualBoard, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            line = board.sim.read_line(0.5)
        except SimTimeout:
            continue
        except VirtualBoardError:
            return
        print(f"sim< {line}", file=sys.stderr, flush=True)


def _command(board: VirtualBoard, stop: threading.Event, line: str) -> str:
    """Carry out one board command or sim line (stdin or the control socket); `ok` or `error: WHY`."""
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
    try:
        if line in actions:
            actions[line]()
            print(f"ok {line}; serial {board.serial_device}", file=sys.stderr, flush=True)
        elif line.startswith("!"):
            return f"error: unknown command {line!r}; known: {' '.join(actions)}"
        elif not line:
            return "error: an empty line"
        else:
            board.sim.send(line)
    except (VirtualBoardError, ValueError) as exc:
        return f"error: {exc}"
    return "ok"


def _read_commands(board: VirtualBoard, stop: threading.Event) -> None:
    for raw in sys.stdin:
        line = raw.rstrip("\r\n")
        if not line:
            continue
        answer = _command(board, stop, line)
        if answer != "ok":
            print(answer if not answer.startswith("error: unknown") else f"{answer}\n{BOARD_HELP}",
                  file=sys.stderr, flush=True)
        if stop.is_set():
            return
    # stdin closed: keep running until a signal, as a service would.


def _board_dir(given: Path | None) -> Path:
    import os

    if given is not None:
        return given
    env = os.environ.get("CARDSHOE_BOARD")
    if not env:
        raise BoardControlError("which board? give --board WORKDIR (the folder `cardshoe hil board` printed) "
                                "or set $CARDSHOE_BOARD")
    return Path(env)


def _cmd_deal(args: argparse.Namespace) -> int:
    from cardshoe.protocol import make_barcode

    try:
        lines = dealing_lines(list(args.cards), args.deck)
    except ValueError as exc:
        print(f"cardshoe hil deal: {exc}", file=sys.stderr)
        return 2
    board = _board_dir(args.board)
    send(board, lines)
    for text in args.cards:
        read = "not read (exit sensor only)" if text == UNREAD else f"barcode {make_barcode(args.deck, _code(text))}"
        print(f"{text}: {read}, left the shoe")
    return 0


def _code(text: str) -> int:
    from cardshoe.cards import parse_card

    return parse_card(text)


def _cmd_key(args: argparse.Namespace) -> int:
    send(_board_dir(args.board), [f"key {args.name}"])
    print(f"key {args.name} pressed")
    return 0


def _cmd_barcode(args: argparse.Namespace) -> int:
    from cardshoe.cards import CardError
    from cardshoe.protocol import make_barcode

    try:
        codes = [_code(text) for text in args.cards]
    except CardError as exc:
        print(f"cardshoe hil barcode: {exc}", file=sys.stderr)
        return 2
    for code in codes:
        print(make_barcode(args.deck, code))
    return 0


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
