"""boards/pico.py on the unix port with a stand-in `machine` module (tests/firmware/fakes/rp2).

Pins, SPI, UART and the watchdog cannot exist here; the fake `machine` records what the
board builds, and its SPI bus is wired to the MFRC522 register model, so the board's
event path runs the real drivers end to end. Runs under `micropython -X heapsize=64k`
with everything compiled by mpy-cross, as deployed, but with a 128 KB heap: the board
with all four drivers takes ~45 KB on this 64-bit port (about half that on the RP2040's
32-bit one, whose heap is ~190 KB), and the stand-in machine and chip model add ~17 KB
that a board does not carry. The drivers' own tests run at 64 KB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.build import TESTS_FIRMWARE, build, compile_tree
from micropython_runner import run_micropython

SETUP = """
import time
import machine
from fakes.mfrc522_chip import Card
from boards import pico
EV = {0: 'none', 1: 'rfid', 2: 'barcode', 3: 'exit', 4: 'key', 5: 'fault'}
class Out:
    def __init__(self):
        self.data = bytearray()
    def write(self, mv):
        self.data.extend(mv)
        return len(mv)
out = Out()
machine.initial_levels[14] = 0       # lid shut
def events(board, ms=60):
    got = []
    end = time.ticks_add(time.ticks_ms(), ms)
    while time.ticks_diff(end, time.ticks_ms()) > 0:
        ev = board.poll()
        if ev == 1 or ev == 2:
            got.append(EV[ev] + ':' + bytes(board.ev_buf[:board.ev_len]).hex() + ':' + str(board.ev_arg))
        elif ev == 4:
            got.append('key:%d' % board.ev_arg)
        elif ev == 5:
            got.append('fault:%d:%d' % (board.ev_arg, board.ev_on))
        elif ev:
            got.append(EV[ev])
        else:
            time.sleep_ms(1)
    return got
"""


@pytest.fixture(scope="module")
def mp_path(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    dest = tmp_path_factory.mktemp("mpy")
    path = build(dest, packages=("drivers", "boards"))
    compile_tree(TESTS_FIRMWARE / "fakes" / "rp2", dest, "rp2")
    return [str(Path(dest) / "rp2")] + path


@pytest.fixture
def run(mp_path: list[str]):  # type: ignore[no-untyped-def]
    def go(code: str, stdin: bytes | None = None) -> list[str]:
        result = run_micropython(
            SETUP + code, heapsize="128k", path=mp_path, stdin=stdin if stdin is not None else b""
        )
        if result.returncode != 0:
            pytest.fail(f"micropython failed\n{result.stdout}\n{result.stderr}")
        return result.stdout.splitlines()

    return go


def test_wiring_is_built_as_documented(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
b = pico.Board(stdout=out)
b.start()
spi = machine.spis[0]
print(spi.id, spi.baudrate, spi.polarity, spi.phase, spi.sck.id, spi.mosi.id, spi.miso.id)
p = machine.pins
print(p[17].mode == machine.Pin.OUT, p[17].level, p[20].level)
u = machine.uarts[0]
print(u.id, u.baudrate, u.bits, u.parity, u.stop, u.tx.id, u.rx.id, u.timeout)
e = p[15]
print(e.pull == machine.Pin.PULL_UP, e.trigger == e.IRQ_RISING | e.IRQ_FALLING, e.hard)
print([p[g].pull == machine.Pin.PULL_UP for g in (10, 11, 12, 13, 14)])
print('LED' in p, b.readers, b.name, b.root == '')
print(machine.chip.regs[0x14] & 3)
"""
    )
    assert out == [
        "0 4000000 0 0 18 19 16",
        "True 1 1",
        "1 9600 8 None 1 4 5 0",
        "True True True",
        "[True, True, True, True, True]",
        "True 3 pico True",
        "3",
    ]


@pytest.mark.parametrize("cause, code", [(1, 1), (3, 2), (99, 0)])
def test_reset_cause_maps_to_hello_codes(run, cause: int, code: int) -> None:  # type: ignore[no-untyped-def]
    out = run(f"machine.set_reset_cause({cause})\nprint(pico.Board(stdout=out).reset_cause)")
    assert out == [str(code)]


def test_card_read_then_exit(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
b = pico.Board(stdout=out)
b.start()
card = machine.chip.enter(Card(bytes.fromhex('04a1b2c3d4e5f6')))
print(*events(b, 30))
beam = machine.pins[15]
beam.drive(0)
t_fire = time.ticks_ms()
print(*events(b, 20))
machine.chip.leave(card)
beam.drive(1)
got = events(b, 20)
print(*got, abs(time.ticks_diff(b.ev_ms, t_fire)) <= 2)
"""
    )
    assert out == ["rfid:04a1b2c3d4e5f6:0", "", "exit True"]


def test_read_errors_become_retries_of_the_good_read(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
b = pico.Board(stdout=out)
b.start()
bad = machine.chip.enter(Card(bytes.fromhex('a1b2c3d4'), corrupt_sak_crc=True))
print(*events(b, 30))
machine.chip.leave(bad)
machine.chip.enter(Card(bytes.fromhex('a1b2c3d4')))
got = events(b, 30)
print(len(got), got[0].rsplit(':', 1)[0], int(got[0].rsplit(':', 1)[1]) > 0)
"""
    )
    assert out == ["", "1 rfid:a1b2c3d4 True"]


def test_barcode_line_is_handed_out_as_read(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
b = pico.Board(stdout=out)
b.start()
machine.uarts[0].feed(b'CS1234ABCDASU\\r\\nnoise\\n' + b'Z' * 40 + b'\\n')
print(*events(b, 30))
"""
    )
    assert out == ["barcode:" + b"CS1234ABCDASU".hex() + ":0 barcode:" + b"noise".hex() + ":0"]


def test_keys_and_held_at_boot(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
b = pico.Board(stdout=out)
print(b.key_held())
b.start()
machine.pins[12].level = 0
print(*events(b, 80))
machine.pins[12].level = 1
machine.initial_levels[13] = 0      # END_SHOE held while the next board boots
b2 = pico.Board(stdout=out)
print(b2.key_held())
"""
    )
    assert out == ["False", "key:3", "True"]


def test_dead_reader_is_a_fault_until_it_answers(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
machine.chip.dead = True
b = pico.Board(stdout=out)
b.rfid_retry_ms = 20
b.start()
print(*events(b, 30))
machine.chip.dead = False
print(*events(b, 60))
machine.chip.stuck = True
print(*events(b, 20))
"""
    )
    assert out == ["fault:1:1", "fault:1:0", "fault:1:1"]


def test_lid_and_jam_faults(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
machine.initial_levels[14] = 1      # lid open at boot
b = pico.Board(stdout=out)
b.jam_ms = 50
b.start()
print(*events(b, 10))
machine.pins[14].level = 0
print(*events(b, 100))
machine.pins[15].drive(0)
print(*events(b, 100))
machine.pins[15].drive(1)
print(*events(b, 20))
"""
    )
    assert out == ["fault:3:1", "fault:3:0", "fault:2:1", "fault:2:0 exit"]


@pytest.mark.parametrize(("chip", "clear", "cap"), [
    (2040, "[(0x4005B000, 1 << 30)]", 8388),     # RP2040 WATCHDOG CTRL, atomic clear alias
    (2350, "[(0x400DB000, 1 << 30)]", 16777),    # RP2350: 0x40058000 is PLL_USB there
    (0, "[]", 8388),                             # a chip it does not know: no register write
], ids=["rp2040", "rp2350", "unknown-chip"])
def test_watchdog_and_close(run, chip: int, clear: str, cap: int) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
pico.CHIP = {chip}
machine.wdt_max[0] = {cap}
b = pico.Board(stdout=out)
b.start()
b.wdt_feed()                         # before start: nothing to feed, no error
b.wdt_start(20000)
w = machine.wdts[0]
b.wdt_feed(); b.wdt_feed()
print(w.timeout, w.feeds)
b.close()
print(machine.mem32_writes == {clear}, machine.spis[0].deinited, machine.uarts[0].deinited)
print(machine.pins[15].handler is None, machine.chip.regs[0x14] & 3)
"""
    )
    assert out == [f"{cap} 2", "True True True", "True 0"]


def test_serial_over_stdin_and_stdout(run) -> None:  # type: ignore[no-untyped-def]
    payload = bytes(range(256)) * 2
    out = run(
        """
b = pico.Board(stdout=out)
b.start()
buf = bytearray(100)
got = bytearray()
for _ in range(20):
    n = b.read_serial(buf)
    got.extend(buf[:n])
print(len(got), got == bytes(range(256)) * 2)
b.write_serial(memoryview(b'\\x00frame\\x00'))
print(bytes(out.data))
""",
        stdin=payload,
    )
    assert out == ["512 True", "b'\\x00frame\\x00'"]


def test_board_source_has_no_app_import() -> None:
    # The board builds hardware; the app never imports machine (only boards/ may).
    repo = TESTS_FIRMWARE.parent.parent
    app = repo / "firmware" / "app"
    for path in list(app.glob("*.py")) + list((repo / "firmware" / "drivers").glob("*.py")):
        text = path.read_text()
        assert "import machine" not in text, path


def test_pico_board_offers_everything_the_unix_board_does(run) -> None:  # type: ignore[no-untyped-def]
    # boards/unix.py documents the board interface the app calls; the Pico must match it.
    out = run(
        """
from boards import unix
def public(obj):
    return set(n for n in dir(obj) if not n.startswith('_'))
u = public(unix.Board())
p = public(pico.Board(stdout=out))
print(sorted(u - p))
print(len(u) > 10)
"""
    )
    assert out == ["[]", "True"]


def test_poll_allocates_nothing_in_steady_state(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
import micropython
b = pico.Board(stdout=out)
b.start()
# The fake chip answers at once: only this process held back by a loaded host could pass the
# reader's busy-wait deadline (and a timeout's exception allocates), so give it room.
b._rfid._wait_ms = 1000
b.led(2)
spi = machine.spis[0]
uart = machine.uarts[0]
card = machine.chip.enter(Card(bytes.fromhex('04a1b2c3d4e5f6')))
uart.feed(b'CS1234ABCDASU\\r\\n')
events(b, 10)                        # warm up: first calls may make internal objects
machine.chip.leave(card)
machine.chip.enter(Card(bytes.fromhex('a1b2c3d4')))
uart.feed(b'CS1234ABCDASU\\r\\n')
spi.heap_guard = uart.heap_guard = True
seen = bytearray(8)
# The beam is blocked (pin low) 5 ms in for at least 15 ms, then cleared; the loop runs until the three
# events are seen (or 5 s pass). Steps go by time since the last step, never by a fixed
# window, so a test process the machine holds back only lengthens them.
ev = phase = 0
start = step = time.ticks_ms()
micropython.heap_lock()
try:
    while time.ticks_diff(time.ticks_ms(), start) < 5000 and not (seen[1] and seen[2] and seen[3]):
        ev = b.poll()
        seen[ev] = 1
        if phase == 0 and time.ticks_diff(time.ticks_ms(), step) > 5:
            machine.pins[15].drive(0)
            phase, step = 1, time.ticks_ms()
        elif phase == 1 and time.ticks_diff(time.ticks_ms(), step) > 15:
            machine.pins[15].drive(1)
            phase = 2
finally:
    micropython.heap_unlock()
    spi.heap_guard = uart.heap_guard = False
print(seen[1], seen[2], seen[3])
"""
    )
    assert out == ["1 1 1"]


def test_a_card_that_passes_during_a_flash_erase_is_counted(run) -> None:  # type: ignore[no-untyped-def]
    # rp2_flash.c erases with interrupts off: the fake rp2.Flash does the same (pin edges
    # latch in the IRQ flags, tests/firmware/fakes/pins.py) and moves a card through the
    # beam in the 50 ms the erase takes. The board's FlashWatch (mounted as start() mounts
    # it on a Pico) tells the sensor the flash was being written: the card is counted.
    out = run(
        """
import vfs, rp2
flash = rp2.Flash(8)
vfs.VfsLfs2.mkfs(flash, progsize=256)
vfs.mount(vfs.VfsLfs2(flash, progsize=256), '/flash')
b = pico.Board(stdout=out)
b.start()
fw = pico.watch_flash(b._sensor, flash, '/flash')
beam = machine.pins[15]
def card():
    flash.during = None
    beam.drive(0); time.sleep_ms(25); beam.drive(1); time.sleep_ms(25)
flash.during = card
e0 = fw.erases
with open('/flash/log', 'wb') as f:
    f.write(b'x' * 600)        # past littlefs's inline size: a data block is erased
    f.flush()
print(flash.during is None, fw.erases > e0, fw.programs > 0, b._sensor.flash)
print(events(b, 40))
"""
    )
    assert out == ["True True True False", "['exit']"]


def test_a_host_that_stops_reading_blocks_the_board_once_not_per_frame(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 9, item 8. The USB CDC as rp2 has it (`mphalport.h`, rp2-port-facts): a
    write waits (500 ms there, 30 ms here) for room for its chunk, then gives up having
    written nothing; `poll` says POLLOUT while there is any room. The host stops reading:
    the board may block once when it meets the full FIFO, never again while the host
    stays away; once the host reads again frames go out whole."""
    out = run(
        """
import io, select
class Cdc(io.IOBase):
    def __init__(self, size):
        self.size = size
        self.fifo = bytearray()
        self.blocks = 0
        self.sent = bytearray()
    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL
            return arg & select.POLLOUT if len(self.fifo) < self.size else 0
        return 0
    def write(self, buf):
        n = len(buf)
        if n > self.size - len(self.fifo):
            self.blocks += 1
            time.sleep_ms(30)
            return 0
        self.fifo.extend(buf)
        return n
    def host_reads(self):
        self.sent.extend(self.fifo)
        self.fifo = bytearray()
cdc = Cdc(256)
b = pico.Board(stdout=cdc)
frame = memoryview(bytes(range(1, 41)))
for i in range(6):                   # 240 bytes: the host reads nothing, the FIFO fills
    b.write_serial(frame)
t = time.ticks_ms()
for i in range(50):                  # the host is gone: these must not wait
    b.write_serial(frame)
print('blocks', cdc.blocks, time.ticks_diff(time.ticks_ms(), t) < 200)
cdc.host_reads()
for i in range(5):
    b.write_serial(frame)
    cdc.host_reads()
print('tail whole', bytes(cdc.sent[-200:]) == bytes(frame) * 5, cdc.blocks)
"""
    )
    assert out == ["blocks 1 True", "tail whole True 1"]


def test_wait_sleeps_until_work_and_reads_the_reader_meanwhile(run) -> None:  # type: ignore[no-untyped-def]
    """issue 26 item 7: the loop sleeps in wait() until there is work (the app passes a time
    up to its next timer, a second or more, not 10 ms). Meanwhile the board makes the RFID
    presence check every RFID_EVERY_MS itself (the MFRC522 has no interrupt wired): a card
    in the field ends the wait with its UID held for poll(); an exit edge (the sensor's hard
    IRQ) ends it at once; with nothing, it sleeps the whole time. On main at 60da493 wait()
    made no presence check: a card under the reader during a long wait went unread."""
    out = run(
        """
import _thread, io
class Quiet(io.IOBase):  # a USB line with nothing from the host (the runner's stdin is at its end)
    def ioctl(self, req, arg):
        return 0 if req == 3 else -1
    def readinto(self, buf):
        return 0
b = pico.Board(stdin=Quiet(), stdout=out)
b.start()
print(*events(b, 30))   # settle: the reader's first fault report, if any
def later(ms, f):
    def go():
        time.sleep_ms(ms)
        f()
    _thread.start_new_thread(go, ())
REQA = (b'\\x26', 7)
def reqas():
    return sum(1 for f in machine.chip.frames if f == REQA)
# 1. Nothing happens: the whole 300 ms asleep, the reader checked about every 5 ms.
n = reqas(); t = time.ticks_ms()
b.wait(300)
print('idle', time.ticks_diff(time.ticks_ms(), t) >= 290, reqas() - n >= 20)
# 2. A card enters the field 100 ms into a 2 s wait: read within a few ms, handed out by poll().
later(100, lambda: machine.chip.enter(Card(bytes.fromhex('04a1b2c3d4e5f6'))))
t = time.ticks_ms()
b.wait(2000)
woke = time.ticks_diff(time.ticks_ms(), t)
print('card', 95 <= woke < 400, b.poll() == 1, bytes(b.ev_buf[:b.ev_len]).hex())
machine.chip.cards.clear()
print(*events(b, 30))
# 3. An exit edge 100 ms into a 2 s wait ends it (the IRQ), and the exit follows its debounce.
later(100, lambda: machine.pins[15].drive(0))
t = time.ticks_ms()
b.wait(2000)
woke = time.ticks_diff(time.ticks_ms(), t)
print('edge', 95 <= woke < 400)
print(*events(b, 20))   # the card in the beam: no exit yet
machine.pins[15].drive(1)
b.wait(2000)            # the beam clears: the edge ends the wait at once
print(*events(b, 20))
"""
    )
    assert out[1:] == ["idle True True", "card True True 04a1b2c3d4e5f6", "", "edge True", "", "exit"], out
