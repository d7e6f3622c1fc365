"""MFRC522 driver against a register/FIFO/command model of the chip and ISO 14443A cards.

Runs under the real `micropython` (heap 64k) with the driver compiled by mpy-cross, as
deployed. The model (tests/firmware/fakes/mfrc522_chip.py) stands in for what cannot
exist here: SPI registers and the RF field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.build import build
from micropython_runner import run_micropython

SETUP = """
from fakes.mfrc522_chip import make_reader_bus, Card, crc16_a
from drivers.mfrc522 import (MFRC522, ReaderError, ReaderNotFound, ReaderTimeout,
    CollisionError, CRCError, BCCError, ProtocolError)
chip, spi, cs, rst = make_reader_bus()
reader = MFRC522(spi, cs, rst)
buf = bytearray(10)
def hexs(b, n=None):
    return ''.join('%02x' % x for x in (b if n is None else b[:n]))
def frames():
    return [hexs(f) + '/' + str(bits) for f, bits in chip.frames]
"""


@pytest.fixture(scope="module")
def mp_path(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return build(tmp_path_factory.mktemp("mpy"))


@pytest.fixture
def run(mp_path: list[str]):  # type: ignore[no-untyped-def]
    def go(code: str) -> list[str]:
        result = run_micropython(SETUP + code, path=mp_path)
        if result.returncode != 0:
            pytest.fail(f"micropython failed\n{result.stdout}\n{result.stderr}")
        return result.stdout.split()

    return go


def bits_lsb_first(data: bytes) -> list[int]:
    return [(b >> j) & 1 for b in data for j in range(8)]


def first_diff_bit(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(bits_lsb_first(a), bits_lsb_first(b))):
        if x != y:
            return i + 1
    raise AssertionError("no difference")


def test_init_configures_the_chip(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
chip.regs[0x14] = 0x80
print(hex(reader.init()))
print(chip.regs[0x14] & 3, chip.regs[0x2A] & 0x80, chip.regs[0x11] & 3, chip.regs[0x15] & 0x40)
print(cs.level, rst.level)
"""
    )
    assert out == ["0x92", "3", "128", "1", "64", "1", "1"]


@pytest.mark.parametrize("version", [0x88, 0x91, 0x92, 0xB2])
def test_known_versions_are_accepted(run, version: int) -> None:  # type: ignore[no-untyped-def]
    out = run(f"chip.version = chip.regs[0x37] = {version}\nprint(reader.init())")
    assert out == [str(version)]


@pytest.mark.parametrize("setup", ["chip.version = chip.regs[0x37] = 0x12", "chip.version = chip.regs[0x37] = 0", "chip.dead = True"])
def test_unknown_or_dead_chip_is_not_found(run, setup: str) -> None:  # type: ignore[no-untyped-def]
    out = run(
        setup
        + """
try:
    reader.init()
    print('accepted')
except ReaderNotFound as e:
    print('notfound', isinstance(e, ReaderError))
"""
    )
    assert out == ["notfound", "True"]


def test_soft_reset_wait_is_bounded(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
chip.reset_polls = 3
print(reader.init())
chip.reset_polls = 10**9
try:
    reader.init()
except ReaderTimeout:
    print('timeout')
"""
    )
    assert out == [str(0x92), "timeout"]


def test_no_card_is_zero_after_one_short_frame(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
print(reader.read_uid(buf))
print(*frames())
"""
    )
    assert out == ["0", "26/7"]


def test_four_byte_uid_frames_on_the_air(run) -> None:  # type: ignore[no-untyped-def]
    uid = bytes.fromhex("a1b2c3d4")
    bcc = uid[0] ^ uid[1] ^ uid[2] ^ uid[3]
    out = run(
        f"""
reader.init()
card = chip.enter(Card(bytes.fromhex('{uid.hex()}')))
n = reader.read_uid(buf)
print(n, hexs(buf, n), hex(reader.sak), hex(reader.atqa), card.state == Card.HALT)
print(*frames())
"""
    )
    assert out[:5] == ["4", uid.hex(), "0x8", "0x4", "True"]
    select = bytes([0x93, 0x70]) + uid + bytes([bcc])
    assert out[5:] == ["26/7", "9320/0", (select + _crc_a(select)).hex() + "/0", "500057cd/0"]


def _crc_a(data: bytes, preset: int = 0x6363) -> bytes:
    # Reference CRC_A computed on the host, independent of both the chip model and the driver.
    crc = preset
    for byte in data:
        b = byte ^ (crc & 0xFF)
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    return bytes([crc & 0xFF, crc >> 8])


def test_crc_a_reference() -> None:
    assert _crc_a(b"\x50\x00") == bytes.fromhex("57cd")  # ISO 14443-3 HLTA as sent on the air


def test_driver_crc_uses_the_coprocessor(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
out = bytearray(2)
reader.crc_a(b'\\x93\\x70\\x01\\x02\\x03\\x04\\x04', 7, out)
print(hexs(out))
chip.regs[0x11] = 0x3F  # a driver that left the 0xFFFF preset would get a different CRC
reader.crc_a(b'\\x50\\x00', 2, out)
print(hexs(out))
"""
    )
    assert out == [_crc_a(bytes.fromhex("93700102030404")).hex(), _crc_a(b"\x50\x00", 0xFFFF).hex()]


@pytest.mark.parametrize(
    "uid_hex, sels",
    [
        ("04a1b2c3d4e5f6", ["93", "95"]),  # NTAG21x: 7 bytes, two cascade levels
        ("04112233445566778899", ["93", "95", "97"]),  # 10 bytes, three levels
    ],
)
def test_cascade_levels(run, uid_hex: str, sels: list[str]) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
reader.init()
card = chip.enter(Card(bytes.fromhex('{uid_hex}')))
n = reader.read_uid(buf)
print(n, hexs(buf, n), hex(reader.sak))
print(*[f.split('/')[0][:2] for f in frames() if f.split('/')[0][2:4] == '20'])
print(chip.frames[1][0][:2] == b'\\x93\\x20', frames()[-1])
"""
    )
    n = len(uid_hex) // 2
    assert out[0:3] == [str(n), uid_hex, "0x0"]
    assert out[3 : 3 + len(sels)] == sels
    assert out[3 + len(sels) :] == ["True", "500057cd/0"]


def test_halted_card_stays_quiet_until_it_leaves_or_is_woken(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
card = chip.enter(Card(bytes.fromhex('04a1b2c3d4e5f6')))
print(reader.read_uid(buf), reader.read_uid(buf))
print(reader.read_uid(buf, wake=True))
chip.leave(card); chip.enter(card)
print(reader.read_uid(buf), card.selected_count)
"""
    )
    assert out == ["7", "0", "7", "7", "3"]


@pytest.mark.parametrize(
    "uid_a, uid_b",
    [
        ("04a1b2c3d4e5f6", "04a1b7c3d4e5f6"),  # two NTAGs, same ATQA, differ in CL1
        ("a1b2c3d4", "a1b2c3c4"),  # two 4-byte cards
        ("a1b2c3d4", "04a1b2c3d4e5f6"),  # ATQA collides too; anticollision still runs
    ],
)
def test_two_cards_collide(run, uid_a: str, uid_b: str) -> None:  # type: ignore[no-untyped-def]
    a, b = bytes.fromhex(uid_a), bytes.fromhex(uid_b)

    def cl1(uid: bytes) -> bytes:
        return uid if len(uid) == 4 else b"\x88" + uid[:3]

    expected = first_diff_bit(cl1(a), cl1(b))
    out = run(
        f"""
reader.init()
ca = chip.enter(Card(bytes.fromhex('{uid_a}')))
cb = chip.enter(Card(bytes.fromhex('{uid_b}')))
try:
    reader.read_uid(buf)
    print('read')
except CollisionError as e:
    print('collision', e.bit, isinstance(e, ReaderError))
print(ca.selected_count, cb.selected_count)
chip.leave(cb)
# ISO 14443-3: a READY card that hears REQA drops to IDLE, so one poll may pass empty.
n = reader.read_uid(buf) or reader.read_uid(buf)
print(n, hexs(buf, n))
"""
    )
    assert out == ["collision", str(expected), "True", "0", "0", str(len(a)), uid_a]


@pytest.mark.parametrize("uid_hex, level", [("a1b2c3d4", 0), ("04a1b2c3d4e5f6", 0), ("04a1b2c3d4e5f6", 1)])
def test_bad_bcc(run, uid_hex: str, level: int) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
reader.init()
chip.enter(Card(bytes.fromhex('{uid_hex}'), corrupt_bcc_level={level}))
try:
    reader.read_uid(buf)
    print('read')
except BCCError as e:
    print('bcc', isinstance(e, CRCError))
"""
    )
    assert out == ["bcc", "True"]


def test_bad_sak_crc(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
card = chip.enter(Card(bytes.fromhex('04a1b2c3d4e5f6'), corrupt_sak_crc=True))
try:
    reader.read_uid(buf)
    print('read')
except BCCError:
    print('bcc')
except CRCError:
    print('crc', card.state != Card.HALT)
"""
    )
    assert out == ["crc", "True"]


def test_parity_error_is_a_protocol_error(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
chip.enter(Card(bytes.fromhex('a1b2c3d4')))
chip.parity_noise = True
try:
    reader.read_uid(buf)
except ProtocolError:
    print('protocol')
"""
    )
    assert out == ["protocol"]


def test_silent_chip_ends_in_reader_timeout(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
chip.enter(Card(bytes.fromhex('a1b2c3d4')))
chip.stuck = True
try:
    reader.read_uid(buf)
except ReaderTimeout:
    print('timeout')
chip.stuck = False
print(reader.read_uid(buf))
"""
    )
    assert out == ["timeout", "4"]


def test_timer_not_automatic_means_timeout_not_no_card(run) -> None:  # type: ignore[no-untyped-def]
    # If the driver's timer set-up were missing, a silent field would hang the chip: the
    # bounded wait must turn that into a fault rather than "no card" or a hang.
    out = run(
        """
reader.init()
chip.regs[0x2A] = 0
try:
    print(reader.read_uid(buf))
except ReaderTimeout:
    print('timeout')
"""
    )
    assert out == ["timeout"]


def test_antenna_off_means_no_card(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
chip.enter(Card(bytes.fromhex('a1b2c3d4')))
reader.antenna(False)
print(reader.read_uid(buf))
reader.antenna(True)
print(reader.read_uid(buf))
"""
    )
    assert out == ["0", "4"]


def test_read_uid_allocates_nothing(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
import micropython
reader.init()
for uid in ('a1b2c3d4', '04a1b2c3d4e5f6', '04112233445566778899'):
    card = chip.enter(Card(bytes.fromhex(uid)))
    spi.heap_guard = True
    micropython.heap_lock()
    try:
        n = reader.read_uid(buf)
        empty = reader.read_uid(buf)
    finally:
        micropython.heap_unlock()
        spi.heap_guard = False
    print(n, empty)
    chip.leave(card)
"""
    )
    assert out == ["4", "0", "7", "0", "10", "0"]


def test_buffer_too_small_is_refused(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
reader.init()
try:
    reader.read_uid(bytearray(7))
except ValueError:
    print('refused')
"""
    )
    assert out == ["refused"]


def test_source_imports_on_a_small_heap() -> None:
    # The board runs the .mpy; this checks the source itself is valid MicroPython.
    repo = Path(__file__).resolve().parents[2]
    result = run_micropython("import drivers.mfrc522 as m; print(m.MFRC522.__name__)", path=[str(repo / "firmware")])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["MFRC522"]
