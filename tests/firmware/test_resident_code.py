"""What code the streaming shoe holds, in the real firmware under micropython (64 KB heap).

Issue 15 asks for 8 KB free at 64 KB with the code in RAM (firmware/README.md, "Memory"):
the host's commands but PING (SPEC 5) run from app/commands.py, and a NEW_SHOE's new
session from app/session.py, each loaded for the command and dropped after it; the barcode
parser (app/barcode.py) is loaded at boot only on a board with a barcode reader (the HELLO
`readers` bit 2, SPEC 5). These tests fail if a command's module stays loaded, if a command
no longer works through it, or if an RFID-only shoe loads the barcode parser.
"""

from __future__ import annotations

SCRIPT = """
import sys, struct
import shoetest as T
from app.run import boot_shoe
root = T.mount(T.BlockDev(path=IMG))
T.provision(root)
board = T.ScriptBoard(root)
board.readers = READERS
shoe = boot_shoe(board, b'\\x01' * 32)
shoe.hello()
T.spin(shoe)
WATCH = ('app.commands', 'app.session', 'app.boot', 'app.fwhash', 'app.barcode')
def held():
    return ','.join(m for m in WATCH if m in sys.modules) or '-'
print('BOOTED', held())
p = bytearray(12)
struct.pack_into('<IIBBBB', p, 0, 9, 0xABCD, 2, 0, 1, 0)
print('NEW_SHOE', shoe.command(0x83, p, 12), shoe.deck.shoe_no, shoe.deck.deck_id, held())
T.spin(shoe)
q = bytearray(8)
struct.pack_into('<HHHH', q, 0, 250, 120, 480, 4)
print('CONFIG', shoe.command(0x84, q, 8), shoe.store.heartbeat_ms, shoe.outbox.resend_max_ms, held())
print('BAD', shoe.command(0x84, q, 7), held())
print('PING', shoe.command(0x86, bytearray(4), 4), held())
"""


def test_commands_run_from_code_loaded_for_them_and_dropped(mpy) -> None:  # type: ignore[no-untyped-def]
    out = mpy(SCRIPT.replace("READERS", "1"))
    assert "BOOTED -" in out, out
    # A scheme-2 (barcode) NEW_SHOE: REPLY OK and the session started (SPEC 5), nothing left loaded.
    assert "NEW_SHOE (0, 0) 9 43981 -" in out, out
    assert "CONFIG (0, 0) 250 480 -" in out, out
    # CONFIG with a short payload: REFUSED, bad state (SPEC 5), and its code dropped all the same.
    assert "BAD (1, 1) -" in out, out
    assert "PING (0, 0) -" in out, out


def test_the_barcode_parser_is_loaded_only_with_a_barcode_reader(mpy) -> None:  # type: ignore[no-untyped-def]
    # RFID and barcode fitted (readers 3): the parser is loaded with the streaming code and
    # stays (the RFID-only shoe, readers 1, holds none: the test above).
    out = mpy(SCRIPT.replace("READERS", "3"))
    assert "BOOTED app.barcode" in out, out
    assert "PING (0, 0) app.barcode" in out, out
