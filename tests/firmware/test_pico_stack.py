"""The firmware tests run on a Pico's C stack (issue 26, item 2): the in-process runner
(tests/micropython_runner.py) and the virtual shoe (vshoe.py) lower the unix port's stack
limit as the virtual board does (hil/vboard/runtime/picostack.py). Calibrated as there: a
one-argument recursive function at the top level reaches 28-30 (30 on the stock rp2 build),
not the unix port's ~200. tests/hil/test_vboard_pico_stack.py checks the virtual board itself."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from micropython_runner import run_micropython
from vshoe import VShoe

DEPTH = """
def f(n):
    global deepest
    deepest = n
    f(n + 1)
deepest = 0
try:
    f(1)
except RuntimeError:
    pass
print("DEPTH", deepest)
"""


def _depth(out: str) -> int:
    m = re.search(r"DEPTH (\d+)", out)
    assert m, out
    return int(m.group(1))


def test_the_runner_gives_the_code_a_picos_stack() -> None:
    assert 28 <= _depth(run_micropython(DEPTH).stdout) <= 30
    assert _depth(run_micropython(DEPTH, stack="unix").stdout) > 150


def test_a_firmware_path_as_deep_as_the_old_new_shoe_fails_here() -> None:
    """What killed NEW_SHOE on a Pico: 24 calls of a small function below a chain of 10 fails
    on the runner's stack, and passes on the unix port's (where every test passed)."""
    code = """
def chain(k):
    if k:
        return chain(k - 1)
    return collect(24)
def collect(d):
    return collect(d - 1) if d else 0
try:
    chain(10)
    print("PASSED")
except RuntimeError as e:
    print("FAILED", e)
"""
    assert "FAILED maximum recursion depth exceeded" in run_micropython(code).stdout
    assert "PASSED" in run_micropython(code, stack="unix").stdout


def test_the_virtual_shoe_gives_main_py_a_picos_stack(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    # main.py must connect to the sim socket (VShoe waits for it), then probe.
    (build / "main.py").write_text(
        "import os, socket, struct\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "s.connect(struct.pack('H108s', socket.AF_UNIX, os.getenv('CARDSHOE_SIM').encode()))\n" + DEPTH
    )
    vs = VShoe(tmp_path / "shoe", build)
    try:
        _, serial, status = vs.power_on_refused()
    finally:
        vs.close()
        shutil.rmtree(build)
    assert status == 0
    assert 28 <= _depth(serial.decode("utf-8", "replace")) <= 30
