"""Never the REPL after a crash, and a crash the host hears about (issue 26, items 3 and 4).

An exception that escapes the firmware's boot or main loop (here a host command whose code
raises, as a firmware bug would: tests/firmware_faults.py) is written to data/crash.bin
(56 bytes, write-temp-then-rename) and the board resets at once (machine.reset(): the
virtual shoe's process ends with RESET_STATUS). The next boot's HELLO says reset cause 6
and a CRASH frame right after it names the boot, the command (type, epoch, seq) and the
exception; the shoe serves the cards it holds. On main at 60da493 the shoe stayed at the
REPL after the exception (here: the process printed a traceback and ended with status 1).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cardshoe.protocol as P
from firmware_faults import crashing_build
from vshoe import RESET_STATUS, Host, VShoe, uid_of

import pytest


def _load(host: Host, shoe_no: int) -> None:
    for part in range(4):
        entries = tuple(P.ManifestEntry(code=c, uid=uid_of(c)) for c in range(part * 13, part * 13 + 13))
        assert host.command(P.NewShoe(shoe_no=shoe_no, deck_id=7, scheme=1, part=part, parts=4,
                                      entries=entries)).status == 0


def _boot(vs: VShoe, host: Host) -> P.Hello:
    vs.power_on()
    host.hello = None
    host.until(lambda: host.hello is not None)
    assert host.hello is not None
    return host.hello


def _record(vs: VShoe, name: str = "/data/crash.bin") -> tuple[int, ...] | None:
    data = vs.read_file(name)
    if data is None:
        return None
    assert len(data) == 56 and data[:4] == b"CSK1", data
    assert zlib.crc32(data[:52]) == struct.unpack_from("<I", data, 52)[0]
    return struct.unpack_from("<IBBBBII32s", data, 4)


@pytest.fixture
def crashing(tmp_path: Path) -> Path:
    return crashing_build(tmp_path / "build", "CONFIG", "RuntimeError").root


def test_a_command_that_crashes_the_shoe_is_recorded_and_reported_and_the_cards_are_served(
        tmp_path: Path, crashing: Path) -> None:
    vs = VShoe(tmp_path / "shoe", crashing)
    host = Host(vs)
    try:
        first = _boot(vs, host)
        assert first.reset_cause == 1 and not host.crashes
        _load(host, 5)
        vs.send_sim(*[line for c in (3, 9, 27) for line in (f"rfid {uid_of(c).hex()}", "exit")])
        host.until(lambda: host.count(5) == 3)
        config = P.Config(heartbeat_ms=2000, resend_ms=300, resend_max_ms=5000, debounce_ms=5)
        seq = vs.send(config)
        # The shoe resets itself at once: no REPL, no waiting for the watchdog.
        assert vs.wait_reset(10) == RESET_STATUS
        boot, where, error, count, cmd_type, epoch, cmd_seq, text = _record(vs)  # type: ignore[misc]
        assert (boot, where, error, count, cmd_type, epoch, cmd_seq) == (
            host.boot, 2, 2, 1, P.MessageType.CONFIG, vs.peer.epoch, seq)
        assert text.rstrip(b"\0").startswith(b"RuntimeError commands:"), text
        # The next boot reports it once: HELLO reset cause 6, then CRASH.
        hello = _boot(vs, host)
        assert hello.reset_cause == P.ResetCause.CRASH
        assert (hello.shoe_no, hello.dealt) == (5, 3)
        host.until(lambda: len(host.crashes) == 1)
        crash = host.crashes[0]
        assert (crash.boot, crash.where, crash.error, crash.count, crash.cmd_type, crash.cmd_epoch, crash.cmd_seq) == (
            hello_boot := host.boot - 1, 2, 2, 1, P.MessageType.CONFIG, vs.peer.epoch, seq), hello_boot
        crash_frame = next(f for f in vs.peer.frames if isinstance(f.message, P.Crash))
        assert crash_frame.seq == 2  # right after HELLO
        # The cards it holds are served, and it deals on.
        assert host.command(P.CardsFrom(shoe_no=5, index=1)).status == 0
        vs.send_sim(f"rfid {uid_of(40).hex()}", "exit")
        host.until(lambda: host.count(5) == 4)
        assert host.placed[(5, 4)] == 40
        # The same command again crashes it again: the second in a row.
        vs.send(config)
        assert vs.wait_reset(10) == RESET_STATUS
        assert _record(vs)[3] == 2  # type: ignore[index]
        assert _record(vs, "/data/crash.old") is not None  # the first, as reported
        _boot(vs, host)
        host.until(lambda: len(host.crashes) == 2)
        assert host.crashes[1].count == 2
        # A boot that was not preceded by a crash reports none.
        vs.cut()
        hello = _boot(vs, host)
        assert hello.reset_cause == 1
        host.pump(0.3)
        assert len(host.crashes) == 2
    finally:
        vs.close()


def test_the_record_is_written_after_a_memory_error(mpy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A MemoryError leaves the heap full; what the crashed code held is garbage once it has
    unwound (main.py), and the record needs no more than a collection gives back."""
    out = mpy(f"""
import gc, os
from app import crash, mem
os.mkdir({str(tmp_path / 'data')!r})
mem.ctx[0] = 7   # boot 7, streaming, in command 0x83 (epoch 1, seq 9)
mem.ctx[4] = 1
mem.ctx[5] = 0x83
mem.ctx[8] = 1
mem.ctx[12] = 9
def fill():
    hog = []
    while True:
        hog.append(bytearray(256))
try:
    fill()
except MemoryError as e:
    err = e
gc.collect()
crash.record(err, {str(tmp_path / 'data') + '/'!r})
r = crash.read({str(tmp_path / 'data' / 'crash.bin')!r})
print('REC', r[4], r[8], r[9], r[10], r[11], r[12], r[16], bytes(r[20:52]).rstrip(b'\\0'))
""")
    assert "REC 7 2 1 1 131 1 9 b'MemoryError" in out, out
