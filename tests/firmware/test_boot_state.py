"""The boot counter: two state records, never reused, no frame under an unsaved one.

SPEC 3.3: the boot counter is written power-safely before the first frame of a boot, so it
is never reused. AGCO 6.1.8: no communication after a reset until the self-test (here: the
boot counted in flash) has passed. Under the real micropython with a 64 KB heap, on littlefs2.
"""

from __future__ import annotations

from pathlib import Path

import cardshoe.protocol as P
from vshoe import VShoe

STORE = """
import os
import shoetest as T
from app.store import Store, StorageError
from app import boot as B
bd = T.BlockDev(path=IMG)
root = T.mount(bd)
T.provision(root)

def boot_once():
    st = Store(root)
    B.load_ident(st)
    try:
        n = B.count_boot(st)
    except StorageError:
        return st, 'REFUSED'
    B.open_log(st)  # as the boot does: the session's card log, created on the first boot
    st.close_log()
    return st, n

def corrupt(name, at=9):
    with open(root + 'data/' + name, 'r+b') as f:
        f.seek(at); b = f.read(1); f.seek(at); f.write(bytes((b[0] ^ 0xFF,)))

def states():
    return sorted(n for n in os.listdir(root + 'data') if n.startswith('state'))
"""


def test_a_brand_new_shoe_starts_at_boot_1_and_counts_up(mpy) -> None:  # type: ignore[no-untyped-def]
    out = mpy(STORE + """
print('BOOTS', [boot_once()[1] for _ in range(3)])
""")
    assert "BOOTS [1, 2, 3]" in out


def test_one_corrupt_state_record_loses_neither_the_boot_counter_nor_the_host_window(mpy) -> None:  # type: ignore[no-untyped-def]
    out = mpy(STORE + """
st, n = boot_once()
st.epoch, st.hseq, st.faults = 1700000000, 42, 1 << 3  # a command accepted, TAMPER latched
st.save()
boot_once()  # boot 2 writes its counter, with that state, into both records
for name in states():  # each record in turn is the one that rots
    corrupt(name)
    st2, n2 = boot_once()
    print('AFTER', name, n2, st2.epoch, st2.hseq, st2.faults)
""")
    # Old firmware (one state.bin): a corrupt record restarted the counter at 1, window (0, 0).
    lines = [line for line in out.splitlines() if line.startswith("AFTER")]
    assert len(lines) >= 2, out
    assert [line.split()[2:] for line in lines] == [[str(3 + i), "1700000000", "42", "8"] for i in range(len(lines))]


def test_saves_alternate_and_the_newest_valid_record_wins(mpy) -> None:  # type: ignore[no-untyped-def]
    out = mpy(STORE + """
st, n = boot_once()
st.hseq = 7
st.save()  # one record: the older one
st2, n2 = boot_once()
print('NEWEST', n2, st2.hseq)
st2.hseq = 9
st2.save()
def gen(name):  # the record's generation (low byte, enough here)
    with open(root + 'data/' + name, 'rb') as f:
        f.seek(40)
        return f.read(1)[0]
newest = max(states(), key=gen)
corrupt(newest)  # the last save's record rots: the one before it is used, with the next counter
st3, n3 = boot_once()
print('ROLLBACK', n3, st3.hseq)
""")
    assert "NEWEST 2 7" in out
    # The counter is never lost; the state goes back one save. Old firmware: 1 0.
    assert "ROLLBACK 3 7" in out


def test_a_shoe_that_booted_before_refuses_to_restart_its_counter(mpy) -> None:  # type: ignore[no-untyped-def]
    out = mpy(STORE + """
boot_once(); boot_once()
for name in states():
    corrupt(name)
print('ALLBAD', boot_once()[1])
for name in states():
    os.remove(root + 'data/' + name)
print('GONE', boot_once()[1], 'log' in os.listdir(root + 'data'))
""")
    # Old firmware: 1 both times (the counter restarted, frames of boot 1 replayable).
    assert "ALLBAD REFUSED" in out
    assert "GONE REFUSED True" in out  # the card log (its folder) shows the shoe has booted


def test_the_single_state_record_of_firmware_0_1_0_is_taken_over(mpy) -> None:  # type: ignore[no-untyped-def]
    out = mpy(STORE + """
import struct
from binascii import crc32
body = struct.pack('<4sIIIBBHHHIIHHHH', b'CSS1', 41, 9, 7, 1, 0, 0, 0, 0, 1700000000, 5, 2000, 300, 5000, 5)
with open(root + 'data/state.bin', 'wb') as f:
    f.write(body + struct.pack('<I', crc32(body)))
st, n = boot_once()
print('TAKEN', n, st.shoe_no, st.hseq)
from app.deck import Deck
st = Store(root)
print('BOOT', B.boot(st, Deck()), st.boot, 'state.bin' in os.listdir(root + 'data'))
""")
    assert "TAKEN 42 9 5" in out
    assert "BOOT True 43 False" in out  # the old record is removed once the new ones are written


def test_no_frame_is_sent_when_the_boot_counter_cannot_be_written(tmp_path: Path, fw_build: Path) -> None:
    vs = VShoe(tmp_path / "shoe", fw_build)
    try:
        # Flash on which the state cannot be replaced: each temp name is taken by a directory.
        blocker = tmp_path / "blocker"
        for name in ("state.bin.tmp", "state0.bin.tmp", "state1.bin.tmp"):
            (blocker / "data" / name).mkdir(parents=True)
            (blocker / "data" / name / "x").write_bytes(b"x")
        vs.install(blocker)
        lines, serial, status = vs.power_on_refused()
        # Old firmware: 'ready 1' and a HELLO (with the STORAGE fault) under an unsaved boot 1.
        assert not any(line.startswith("ready") for line in lines), lines
        assert "led blink" in lines
        frames = [item for item in P.Receiver(keys=lambda s: vs.key).feed(serial) if isinstance(item, P.Frame)]
        assert frames == []
        assert b"not streaming" in serial
        assert status == 0  # back to the REPL (the unix port: the boot script ends)
    finally:
        vs.close()


def test_a_shoe_whose_state_records_are_all_lost_does_not_stream(tmp_path: Path, fw_build: Path) -> None:
    vs = VShoe(tmp_path / "shoe", fw_build)
    try:
        assert vs.power_on() == 1
        vs.cut()
        assert vs.power_on() == 2
        vs.cut()
        bad = tmp_path / "bad"
        (bad / "data").mkdir(parents=True)
        for name in ("state0.bin", "state1.bin"):
            (bad / "data" / name).write_bytes(b"\x00" * 48)
        vs.install(bad)
        lines, serial, _ = vs.power_on_refused()
        # Old firmware: the counter restarted at 1 ('ready 1', a HELLO of boot 1 again).
        assert not any(line.startswith("ready") for line in lines), lines
        assert [i for i in P.Receiver(keys=lambda s: vs.key).feed(serial) if isinstance(i, P.Frame)] == []
    finally:
        vs.close()

