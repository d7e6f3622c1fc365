"""The virtual board's C stack is a Pico's (issue 26, item 2; hil/vboard/runtime/picostack.py).

On the stock rp2 build (v1.28, RPI_PICO, 8 KB of C stack) a one-argument recursive function
at the top level reaches depth 30 before "maximum recursion depth exceeded"
(/work/shared/notes/rp2-port-facts.md); the unix port's own limit lets it reach about 200.
The board must be no more lenient than the Pico (at most 30) and not so strict that it fails
what a Pico runs (at least 28); an import must cost what it costs there (about 3 calls:
the port's 4 KB path buffer is compensated), not 13. The check is the real one, in the
unix port's C (`mp_cstack_check`), raised as on a Pico.
"""

from __future__ import annotations

import re

from cardshoe.hil.vboard import VirtualBoard

PROBE = b"""
import micropython
def f(n):
    global deepest
    deepest = n
    f(n + 1)
deepest = 0
try:
    f(1)
except RuntimeError as e:
    print("TOP", deepest, e)
import probe_mod
print("IMPORTED", probe_mod.deepest)
"""
MODULE = b"""
def f(n):
    global deepest
    deepest = n
    f(n + 1)
deepest = 0
try:
    f(1)
except RuntimeError:
    pass
"""


def _probe(board: VirtualBoard) -> tuple[int, int]:
    board.flash.create()
    board.flash.write("/main.py", PROBE)
    board.flash.write("/probe_mod.py", MODULE)
    mark = board.output_mark()
    board.power_on()
    board.wait_output(b"IMPORTED", timeout=30, since=mark)
    text = board.transcript().decode("utf-8", "replace")
    top = re.search(r"TOP (\d+) maximum recursion depth exceeded", text)
    imported = re.search(r"IMPORTED (\d+)", text)
    assert top and imported, text[-600:]
    return int(top.group(1)), int(imported.group(1))


def test_a_trivial_recursion_reaches_the_depth_it_reaches_on_a_pico(board: VirtualBoard) -> None:
    top, imported = _probe(board)
    assert 28 <= top <= 30, top
    assert 2 <= top - imported <= 4, (top, imported)


def test_the_unix_ports_own_stack_is_many_times_deeper(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # What the board would be without picostack: the same probe reaches about 200 calls.
    board = VirtualBoard(tmp_path / "unix-board", stack="unix")
    try:
        top, _ = _probe(board)
    finally:
        board.close()
    assert top > 150, top
