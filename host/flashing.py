"""`cardshoe flash`: compile, copy and provision the firmware onto a board, then verify it.

    cardshoe flash --port PORT [--serial N] [--keys DIR] [--timeout S] [--no-romfs]

1. Compile firmware/{app,boards,drivers,lib} with mpy-cross (main.py stays source).
2. Hash the built files as the firmware does at boot (firmware/app/fwhash.py).
3. With the real mpremote: remove the old firmware files (data/ is kept: the boot
   counter must never go back, or the host would take the shoe's frames for replays),
   put the new ones on the board, and write data/ident.bin: the shoe serial and a new 32-byte
   HMAC key. The key goes only into the host key store (mode 0600) and, through a
   private temporary file, onto the board's flash; it is never printed.
4. Soft-reset the board (from the friendly REPL, so main.py runs), read its HELLO on the serial port with the new key, and
   check that the firmware hash it reports is the one computed here.

Where the compiled code goes: a board whose MicroPython has a ROMFS partition
(`vfs.rom_ioctl`, MicroPython 1.25+ built with `MICROPY_HW_ROMFS_BYTES`; the virtual
board has one) gets it as a ROMFS image (`mpremote romfs deploy`), run in place from
flash so that it takes almost none of the heap; any other board, or `--no-romfs`, gets
the .mpy files copied onto its filesystem, loaded into the heap at boot. main.py and
data/ are on the filesystem either way.

The board must be at its REPL: a fresh board, one booted with a dealer key held, or
one sent MAINTENANCE (`cardshoe maintenance --port PORT`, or the daemon's
`POST /shoe/maintenance`): a streaming shoe ignores Ctrl-C by design. Before anything
else the port is listened to for a few seconds: a streaming shoe is refused at once
with those ways to its REPL, rather than mpremote timing out. Then the board is asked
what it runs: a MicroPython that cannot load the build's .mpy files (another .mpy
version), that lacks what the firmware uses, or a board the firmware has no
`boards/` module for, is refused before anything on it is touched.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .keys import KeyStore, KeyStoreError

FIRMWARE_DIRS = ("app", "boards", "drivers", "lib")
HASH_SUFFIXES = (".py", ".mpy")


class FlashError(Exception):
    """A step of flashing failed; the message says which and what to do."""


class VerifyError(FlashError):
    """The board booted but reports another firmware hash, or no HELLO came."""


@dataclass(frozen=True)
class Build:
    """A compiled firmware tree ready to copy."""

    root: Path
    files: tuple[str, ...]  # paths relative to root, '/'-separated, sorted
    fw_hash: bytes


def repo_firmware() -> Path:
    """The firmware/ folder of this checkout."""
    here = Path(__file__).resolve().parent.parent / "firmware"
    if not (here / "main.py").exists():
        raise FlashError(f"no firmware at {here}")
    return here


def _tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if not found:
        raise FlashError(f"{name} not found: install the cardshoe package's dependencies")
    return found


def manifest(root: Path) -> list[str]:
    """The firmware's files under `root`, sorted: the rule of firmware/app/fwhash.py."""
    files = [p.name for p in root.iterdir() if p.is_file() and p.name.endswith(HASH_SUFFIXES)]
    for d in FIRMWARE_DIRS:
        base = root / d
        if base.is_dir():
            for p in base.rglob("*"):
                if p.is_file() and p.name.endswith(HASH_SUFFIXES):
                    files.append(p.relative_to(root).as_posix())
    return sorted(files)


def firmware_hash(root: Path) -> bytes:
    """SHA-256 over each manifest file: path, NUL, u32 size, bytes (as the firmware computes it)."""
    h = hashlib.sha256()
    for rel in manifest(root):
        data = (root / rel).read_bytes()
        h.update(rel.encode())
        h.update(struct.pack("<BI", 0, len(data)))
        h.update(data)
    return h.digest()


def build(dest: Path, source: Path | None = None) -> Build:
    """Compile the firmware into `dest` (mpy-cross; main.py copied as source).

    Each module embeds its path in the firmware tree (`-s app/shoe.py`), not where this
    checkout happens to live: the build, and so the firmware hash, is the same from any
    clone, and a long checkout path costs the board no heap (the name is a string each
    module keeps for its tracebacks)."""
    src = source or repo_firmware()
    mpy_cross = _tool("mpy-cross")
    for d in FIRMWARE_DIRS:
        for py in sorted((src / d).rglob("*.py")):
            rel = py.relative_to(src)
            out = dest / rel.with_suffix(".mpy")
            out.parent.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run([mpy_cross, "-s", rel.as_posix(), "-o", str(out), str(py)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise FlashError(f"mpy-cross failed on {py}: {proc.stderr.strip()}")
    shutil.copy(src / "main.py", dest / "main.py")
    return Build(dest, tuple(manifest(dest)), firmware_hash(dest))


def ident_bytes(serial: int, key: bytes) -> bytes:
    """data/ident.bin: magic, serial, key, CRC-32 (firmware/app/store.py)."""
    body = struct.pack("<4sI32s", b"CSI1", serial, key)
    return body + struct.pack("<I", zlib.crc32(body))


# Run on the board, on its 8 KB C stack: folders removed with a list of those still to
# read, not a call per level (a folder tree of any depth).
_CLEAN = """
import os
def rm(top):
    todo = [top]
    done = []
    while todo:
        p = todo.pop()
        try:
            for e in os.ilistdir(p):
                q = p + '/' + e[0]
                if e[1] == 0x4000:
                    todo.append(q)
                else:
                    os.remove(q)
        except OSError:
            continue
        done.append(p)
    for p in reversed(done):
        try:
            os.rmdir(p)
        except OSError:
            pass
for d in ('app', 'boards', 'drivers', 'lib'):
    rm(d)
for e in os.ilistdir():  # main.py, and any module that would be imported before ours
    if e[1] != 0x4000 and (e[0].endswith('.py') or e[0].endswith('.mpy')):
        os.remove(e[0])
try:
    os.mkdir('data')
except OSError:
    pass
"""

# The size of ROM partition 0, as mpremote's `romfs query` reads it (a device object with
# ioctl, or a buffer); 0 without one (no `vfs.rom_ioctl`, or MicroPython before `vfs`).
_ROMFS_SIZE = """
try:
    import vfs
    dev = vfs.rom_ioctl(2, 0) if vfs.rom_ioctl(1) > 0 else None
    size = 0 if dev is None or isinstance(dev, int) else (
        dev.ioctl(4, 0) * dev.ioctl(5, 0) if hasattr(dev, 'ioctl') else len(dev))
except Exception:
    size = 0
print('ROMFS', size)
"""

# What the board runs: port, MicroPython version, the .mpy version it loads
# (sys.implementation._mpy, MicroPython 1.19+), its machine, and what the firmware needs
# that it lacks. One line, so a board's banner or echo around it does not matter.
_BOARD_INFO = """
import sys
impl = sys.implementation
need = (('binascii', 'crc32'), ('hashlib', 'sha256'), ('micropython', 'kbd_intr'), ('select', 'poll'),
        ('struct', 'pack_into'), ('time', 'ticks_ms'), ('gc', 'mem_free'))
miss = []
for mod, name in need:
    try:
        if not hasattr(__import__(mod), name):
            miss.append(mod + '.' + name)
    except ImportError:
        miss.append(mod)
print('BOARD', sys.platform, '.'.join(str(v) for v in impl.version[:3]), getattr(impl, '_mpy', 0),
      ','.join(miss) or '-', getattr(impl, '_machine', '?'))
"""

#: Bytecode .mpy files of version 6 (what mpy-cross 1.19 and later emit) load on
#: MicroPython 1.19 and later (docs/reference/mpyfiles.rst); older releases have no
#: sys.implementation._mpy to ask. The build's own version comes from `mpy-cross --version`.
MIN_MICROPYTHON = (1, 19)
#: Boards the firmware has a `boards/` module for: the Pico (rp2, RP2040 or RP2350, whose
#: watchdog it stops by register) and the unix port (the virtual board).
KNOWN_CHIPS = ("RP2040", "RP2350")


@dataclass(frozen=True)
class BoardInfo:
    """What `_BOARD_INFO` printed."""

    platform: str
    version: tuple[int, ...]
    mpy: int
    missing: tuple[str, ...]
    machine: str


def parse_board_info(text: str) -> BoardInfo:
    """The BoardInfo of the board's answer; FlashError if there is none."""
    for line in text.splitlines():
        if line.startswith("BOARD "):
            parts = line.split(" ", 5)
            if len(parts) == 6:
                version = tuple(int(v) for v in parts[2].split(".") if v.isdigit())
                missing = () if parts[4] == "-" else tuple(parts[4].split(","))
                return BoardInfo(parts[1], version, int(parts[3]), missing, parts[5].strip())
    raise FlashError("the board did not say what MicroPython it runs: is it a MicroPython board at its REPL?")


def mpy_cross_version() -> int:
    """The .mpy version the installed mpy-cross emits ("... mpy-cross emitting mpy v6.3")."""
    proc = subprocess.run([_tool("mpy-cross"), "--version"], capture_output=True, text=True)
    match = re.search(r"mpy v(\d+)", proc.stdout + proc.stderr)
    if match is None:
        raise FlashError(f"mpy-cross --version does not say which .mpy version it emits: {proc.stdout.strip()!r}")
    return int(match.group(1))


def check_board(info: BoardInfo, mpy_version: int) -> None:
    """Refuse a board the firmware (compiled to .mpy `mpy_version`) cannot run on (FlashError)."""
    running = f"MicroPython {'.'.join(map(str, info.version))} on {info.platform} ({info.machine})"
    if info.mpy == 0 or tuple(info.version[:2]) < MIN_MICROPYTHON:
        raise FlashError(f"the board runs {running}: the firmware needs MicroPython "
                         f"{MIN_MICROPYTHON[0]}.{MIN_MICROPYTHON[1]} or later (.mpy version {mpy_version}); "
                         "update the board's MicroPython first")
    if info.mpy & 0xFF != mpy_version:
        raise FlashError(f"the board runs {running}, which loads .mpy version {info.mpy & 0xFF}; the firmware is "
                         f"compiled to .mpy version {mpy_version}: install a MicroPython that loads it")
    if info.platform == "rp2":
        if not any(chip in info.machine for chip in KNOWN_CHIPS):
            raise FlashError(f"the board runs {running}: the firmware knows the RP2040 and RP2350 (their watchdog "
                             "registers), not this chip")
    elif info.platform != "linux":
        raise FlashError(f"the board runs {running}: the firmware has boards/ modules for the Raspberry Pi Pico "
                         "(rp2) and the virtual board (unix port) only")
    if info.missing:
        raise FlashError(f"the board runs {running}, which lacks {', '.join(info.missing)}: the firmware uses "
                         "them; install a MicroPython build that has them")


def board_info(port: str, log: Callable[[str], None] | None = None) -> BoardInfo:
    """Ask the board what it runs (mpremote exec)."""
    return parse_board_info(_mpremote(port, "exec", _BOARD_INFO, what="asking the board what MicroPython it runs",
                                      log=log))


#: How long `flash` listens before mpremote, at most: two heartbeat periods and a margin. A
#: streaming shoe with nothing unacknowledged sends a HEARTBEAT every 2 s (its default;
#: CONFIG can lengthen it up to 65 s, so this is a courtesy, not a guarantee: mpremote still
#: times out on a silent streaming shoe). One period was not enough: on an emulated Pico
#: (slower than a real one) a 2.5 s probe missed the 2 s heartbeat once (issue 26). A board
#: at its REPL answers the probe's carriage return with its prompt, and the probe ends then.
HEARTBEAT_S = 2.0
PROBE_S = 2 * HEARTBEAT_S + 0.5
#: mpremote's first contact may find the board not yet at its raw REPL (straight after
#: `cardshoe maintenance`, or a board still booting): tried again after these pauses.
RAW_REPL_RETRY_S = (1.0, 2.0, 3.0)


def streaming_shoe(port: str, keys: KeyStore, seconds: float = PROBE_S) -> int | None:
    """The serial of a shoe streaming on `port` (frames whose header names a shoe), or None
    (after `seconds`, or at once when the board's REPL prompt answers a carriage return)."""
    import serial as pyserial

    from cardshoe import protocol as P
    from cardshoe.maintenance import REPL_SIGNS

    rx = P.Receiver(keys=keys.lookup)
    try:
        line = pyserial.serial_for_url(port, baudrate=115200, timeout=0.1)
    except (pyserial.SerialException, OSError) as exc:
        raise FlashError(f"cannot open {port}: {exc}") from None
    with line:
        line.write(b"\r")  # a REPL prints its prompt; a streaming shoe takes it as line noise
        tail = b""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            data = line.read(512)
            tail = (tail + data)[-64:]
            if any(sign in tail for sign in REPL_SIGNS):
                return None
            for item in rx.feed(data):
                header = item.header
                if header is not None and header.type < 0x80:
                    return header.shoe
    return None


_READ_SERIAL = """
try:
    f = open('data/ident.bin', 'rb'); d = f.read(8); f.close()
    print('SERIAL', d[4] | d[5] << 8 | d[6] << 16 | d[7] << 24 if d[:4] == b'CSI1' else 0)
except OSError:
    print('SERIAL', 0)
"""


def _maintenance_hint(port: str) -> str:
    return (f"put it into maintenance first: `cardshoe maintenance --port {port}` (no daemon holding it), "
            "or the daemon's POST /shoe/maintenance, or power it up with a dealer key held; then flash again")


def _mpremote(port: str, *args: str, what: str, timeout: float = 120.0,
              log: Callable[[str], None] | None = None) -> str:
    """Run mpremote on `port`; `what` names the step in an error (never the script it runs).
    When mpremote cannot enter the raw REPL, it is tried again after each pause of
    RAW_REPL_RETRY_S (each step is safe to repeat: it starts from the REPL), said on `log`."""
    argv = [_tool("mpremote"), "connect", port, *args]
    for pause in (*RAW_REPL_RETRY_S, None):
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise FlashError(f"mpremote timed out on {port} while {what}: is the board a streaming shoe? "
                             + _maintenance_hint(port)) from None
        if proc.returncode == 0:
            return proc.stdout
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        last = detail[-1] if detail else str(proc.returncode)
        if "raw repl" not in last.lower() or pause is None:
            break
        if log is not None:
            log(f"the board's raw REPL did not answer while {what} ({last}); trying again in {pause:g} s")
        time.sleep(pause)
    tries = f" ({len(RAW_REPL_RETRY_S) + 1} tries)" if "raw repl" in last.lower() else ""
    hint = "; is the board a streaming shoe? " + _maintenance_hint(port) if "raw repl" in last.lower() else ""
    raise FlashError(f"mpremote failed on {port} while {what}: {last}{tries}{hint}")


def _board_number(port: str, script: str, label: str, what: str) -> int:
    """Run `script` on the board; the number it printed after `label`, or 0."""
    for line in _mpremote(port, "exec", script, what=what).splitlines():
        if line.startswith(label + " "):
            return int(line.split()[1])
    return 0


def read_serial_from_board(port: str) -> int:
    """The serial already provisioned on the board, or 0."""
    return _board_number(port, _READ_SERIAL, "SERIAL", "reading the shoe serial on the board")


def romfs_partition_size(port: str) -> int:
    """The size of the board's ROMFS partition (`vfs.rom_ioctl`), 0 when it has none."""
    return _board_number(port, _ROMFS_SIZE, "ROMFS", "asking the board for its ROM partition")


def romfs_image(fw: Build | None, dest: Path) -> Path:
    """The build's code (not main.py) as a ROMFS image, made by `mpremote romfs build`;
    with no build, an image with no files (what `--no-romfs` deploys over an old one)."""
    stage = dest / "romfs"
    stage.mkdir(parents=True, exist_ok=True)
    for d in FIRMWARE_DIRS:
        if fw is not None and (fw.root / d).is_dir():
            shutil.copytree(fw.root / d, stage / d)
    image = dest / "firmware.romfs"
    proc = subprocess.run([_tool("mpremote"), "romfs", "--no-mpy", "-o", str(image), "build", str(stage)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise FlashError(f"mpremote romfs build failed: {(proc.stderr or proc.stdout).strip()}")
    return image


def copy_and_provision(port: str, fw: Build, serial: int, key: bytes, romfs: Path | None = None,
                       files: bool = True) -> None:
    """Clean the old firmware, put the build on the board and write ident.bin, with
    mpremote: `romfs` (an image) deployed to the ROM partition, the code copied as files
    if `files`."""
    with tempfile.TemporaryDirectory(prefix="cardshoe-ident-") as private:
        os.chmod(private, 0o700)
        ident = Path(private) / "ident.bin"
        fd = os.open(ident, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, ident_bytes(serial, key))
        finally:
            os.close(fd)
        args = ["exec", _CLEAN]
        if romfs is not None:
            args += ["+", "romfs", "deploy", str(romfs)]
        if files:
            for d in FIRMWARE_DIRS:
                if (fw.root / d).is_dir():
                    args += ["+", "fs", "cp", "-r", str(fw.root / d), ":"]
        args += ["+", "fs", "cp", str(fw.root / "main.py"), ":main.py"]
        args += ["+", "fs", "cp", str(ident), ":data/ident.bin"]
        _mpremote(port, *args, what="copying the firmware and the shoe's identity")


def reset_and_read_hello(port: str, serial: int, key: bytes, timeout: float) -> tuple[bytes, int]:
    """Soft-reset the board into main.py and wait for its HELLO; returns (fw_hash, boot counter).

    A soft reset from the raw REPL (mpremote's) does not run main.py on a board, so the
    reset is done from the friendly REPL: Ctrl-C, Ctrl-B (leave the raw REPL), Ctrl-D.
    """
    import serial as pyserial

    from cardshoe import protocol as P

    rx = P.Receiver(keys=lambda s: key if s == serial else None)
    end = time.monotonic() + timeout
    reasons: dict[str, int] = {}
    with pyserial.serial_for_url(port, baudrate=115200, timeout=0.1) as line:
        line.write(b"\r\x03\x03\x02")
        time.sleep(0.3)
        line.reset_input_buffer()
        line.write(b"\x04")
        while time.monotonic() < end:
            data = line.read(512)
            if not data:
                continue
            for item in rx.feed(data):
                if isinstance(item, P.Frame):
                    if isinstance(item.message, P.Hello):
                        return item.message.fw_hash, item.boot
                else:
                    reasons[str(item.reason)] = reasons.get(str(item.reason), 0) + 1
    seen = ", ".join(f"{k} x{v}" for k, v in reasons.items()) or "nothing"
    raise VerifyError(f"no HELLO from shoe {serial} on {port} within {timeout:.0f}s (rejected: {seen})")


def flash(
    port: str,
    serial: int | None,
    keys: KeyStore,
    timeout: float = 20.0,
    log: Callable[[str], None] = print,
    use_romfs: bool = True,
) -> Build:
    """Run the whole procedure; returns the build. Raises FlashError/VerifyError."""
    streaming = streaming_shoe(port, keys)
    if streaming is not None:
        raise FlashError(f"shoe {streaming} is streaming on {port}: a streaming shoe ignores Ctrl-C by design, "
                         "so mpremote cannot reach its REPL; " + _maintenance_hint(port))
    info = board_info(port, log)
    check_board(info, mpy_cross_version())
    log(f"the board runs MicroPython {'.'.join(map(str, info.version))} on {info.platform} ({info.machine}), "
        f".mpy version {info.mpy & 0xFF}")
    with tempfile.TemporaryDirectory(prefix="cardshoe-build-") as tmp:
        fw = build(Path(tmp) / "fw")
        log(f"built {len(fw.files)} files, firmware hash {fw.fw_hash.hex()}")
        if serial is None:
            serial = read_serial_from_board(port)
            if not serial:
                raise FlashError("the board has no shoe serial yet: give one with --serial N")
            log(f"shoe serial {serial} (from the board)")
        partition = romfs_partition_size(port)
        image = None
        if partition and use_romfs:
            image = romfs_image(fw, Path(tmp))
            size = image.stat().st_size
            if size > partition:  # checked before anything on the board is touched
                raise FlashError(f"the firmware's ROMFS image is {size} bytes, the board's ROM partition "
                                 f"{partition}: flash with --no-romfs, or give the board a larger partition")
            log(f"the board has a ROMFS partition: the code goes there as a {size}-byte image")
        elif partition:
            # An image left there would still be mounted at /rom and counted in the hash.
            image = romfs_image(None, Path(tmp) / "empty")
            log("the board has a ROMFS partition: --no-romfs, so it gets an empty image and the code goes on the "
                "flash as .mpy files")
        elif use_romfs:
            log("the board has no ROMFS partition (its MicroPython was built without one, as the stock Pico "
                "build is: MICROPY_HW_ROMFS_BYTES 0): the code goes on the flash as .mpy files, loaded into RAM")
        else:
            log("--no-romfs: the code goes on the flash as .mpy files")
        key = keys.create(serial)
        log(f"new key for shoe {serial} stored in {keys.path(serial)}")
        copy_and_provision(port, fw, serial, key, image, files=not (partition and use_romfs))
        log(f"copied and provisioned over {port}; resetting")
        reported, boot = reset_and_read_hello(port, serial, key, timeout)
        if reported != fw.fw_hash:
            raise VerifyError(
                f"shoe {serial} reports firmware hash {reported.hex()}, expected {fw.fw_hash.hex()}: "
                "the copy is incomplete or other files are on the board"
                + (" or in its ROMFS image" if partition else "") + "; flash again"
            )
        where = "its code in ROMFS" if partition and use_romfs else "its code as .mpy files on the flash"
        log(f"verified: shoe {serial} boot {boot} runs firmware {fw.fw_hash.hex()}, {where}")
        return fw


def main(argv: Sequence[str]) -> int:
    """`cardshoe flash` entry point."""
    parser = argparse.ArgumentParser(prog="cardshoe flash", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", required=True, help="serial port of the board (e.g. /dev/ttyACM0)")
    parser.add_argument("--serial", type=int, help="shoe serial to provision (default: the board's)")
    parser.add_argument("--keys", help="key store directory (default $CARDSHOE_KEYS or ~/.local/share/cardshoe/keys)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for the HELLO")
    parser.add_argument("--no-romfs", action="store_true",
                        help="copy the code as .mpy files even when the board has a ROMFS partition")
    args = parser.parse_args(list(argv))
    if args.serial is not None and not 0 < args.serial < 2**32:
        print(f"cardshoe flash: --serial {args.serial} is not in 1..4294967295", file=sys.stderr)
        return 2
    try:
        flash(args.port, args.serial, KeyStore(args.keys), args.timeout, use_romfs=not args.no_romfs)
    except (FlashError, KeyStoreError) as e:
        print(f"cardshoe flash: {e}", file=sys.stderr)
        return 1
    return 0
