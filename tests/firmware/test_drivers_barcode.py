"""Barcode driver: SPEC section 6 validation and the UART line reader.

The reader runs under the real `micropython` (heap 64k, compiled as deployed) with a fake
UART; `parse_barcode` also runs under CPython (the host side uses the same vectors).
"""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType

import pytest

from fakes.build import FIRMWARE, REPO, build
from micropython_runner import run_micropython


def _load_firmware_barcode() -> ModuleType:
    # The firmware module itself (it is also valid CPython), loaded under its own name so
    # the firmware folders never shadow host modules on this process's sys.path.
    spec = importlib.util.spec_from_file_location("firmware_drivers_barcode", FIRMWARE / "drivers" / "barcode.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


barcode = _load_firmware_barcode()

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def reference_check(body: str) -> str:
    """SPEC 6 in the test's own words: from the right, double every other value starting
    with the rightmost; a doubled v counts v // 36 + v % 36; check = (36 - sum % 36) % 36."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        v = ALPHABET.index(ch)
        if i % 2 == 0:
            v = 2 * v
            v = v // 36 + v % 36
        total += v
    return ALPHABET[(36 - total % 36) % 36]


def payload(deck_id: int, rank: str, suit: str) -> str:
    body = f"CS{deck_id:08X}{rank}{suit}"
    return body + reference_check(body)


VALID = [
    (payload(0, "2", "C"), 0, 0),
    (payload(0xDEADBEEF, "A", "S"), 0xDEADBEEF, 51),
    (payload(0x0000CAFE, "T", "D"), 0xCAFE, (10 - 2) * 4 + 1),
    (payload(0xFFFFFFFF, "Q", "H"), 0xFFFFFFFF, (12 - 2) * 4 + 2),
    (payload(0x12345678, "9", "S"), 0x12345678, 7 * 4 + 3),
]


def with_check(body: str) -> str:
    return body + reference_check(body)


INVALID = [
    ("", barcode.BadLength),
    (VALID[0][0][:12], barcode.BadLength),
    (VALID[0][0] + "0", barcode.BadLength),
    ("CS0000000a2C" + "0", barcode.BadCharacter),  # lower-case hex
    ("CS00000000 2C", barcode.BadCharacter),
    ("CS00000000\x002C", barcode.BadCharacter),
    (VALID[1][0][:12] + ("0" if VALID[1][0][12] != "0" else "1"), barcode.BadCheck),
    (with_check("XS000000002C"), barcode.BadPrefix),
    (with_check("CS0000000G2C"), barcode.BadDeckId),
    (with_check("CS000000001C"), barcode.BadRank),
    (with_check("CS00000000BC"), barcode.BadRank),
    (with_check("CS000000002X"), barcode.BadSuit),
]


@pytest.mark.parametrize("text, deck_id, code", VALID)
def test_parse_valid(text: str, deck_id: int, code: int) -> None:
    assert barcode.parse_barcode(text.encode(), 13) == (deck_id, code)
    assert barcode.barcode_text(deck_id, code) == text.encode()


@pytest.mark.parametrize("text, error", INVALID)
def test_parse_invalid_names_the_rule(text: str, error: type) -> None:
    data = text.encode("latin-1")
    with pytest.raises(error) as info:
        barcode.parse_barcode(data, len(data))
    assert type(info.value) is error
    assert isinstance(info.value, barcode.BarcodeError) and isinstance(info.value, ValueError)


def test_every_single_character_error_is_caught() -> None:
    for text, _, _ in VALID:
        for pos in range(13):
            for ch in ALPHABET:
                if ch == text[pos]:
                    continue
                bad = (text[:pos] + ch + text[pos + 1 :]).encode()
                with pytest.raises(barcode.BarcodeError):
                    barcode.parse_barcode(bad, 13)


def test_adjacent_transpositions_are_caught_except_0z() -> None:
    text = VALID[1][0]
    caught = missed = 0
    for pos in range(12):
        a, b = text[pos], text[pos + 1]
        if a == b:
            continue
        swapped = (text[:pos] + b + a + text[pos + 2 :]).encode()
        try:
            barcode.parse_barcode(swapped, 13)
            missed += 1
            assert {a, b} == {"0", "Z"}
        except barcode.BarcodeError:
            caught += 1
    assert caught > 0 and missed == 0


def test_all_52_cards_round_trip() -> None:
    for code in range(52):
        text = barcode.barcode_text(0xA5A5A5A5, code)
        assert text.decode() == payload(0xA5A5A5A5, "23456789TJQKA"[code // 4], "CDHS"[code % 4])
        assert barcode.parse_barcode(text, 13) == (0xA5A5A5A5, code)


VECTORS = REPO / "protocol" / "vectors" / "barcodes.json"


def _vector_entries() -> list[dict[str, object]]:
    data = json.loads(VECTORS.read_text())
    entries = data.get("vectors", data.get("barcodes")) if isinstance(data, dict) else data
    assert isinstance(entries, list)
    return entries


def _strip(text: str) -> bytes:
    data = text.encode("latin-1")
    for ending in (b"\r\n", b"\n", b"\r"):
        if data.endswith(ending):
            return data[: -len(ending)]
    return data


@pytest.mark.skipif(not VECTORS.exists(), reason="protocol/vectors/barcodes.json not written yet")
def test_protocol_vectors() -> None:
    entries = _vector_entries()
    assert entries
    for entry in entries:
        text = entry.get("payload", entry.get("text"))
        assert isinstance(text, str)
        data = _strip(text)
        if entry.get("valid", entry.get("code") is not None):
            assert barcode.parse_barcode(data, len(data)) == (entry["deck_id"], entry["code"]), entry
        else:
            with pytest.raises(barcode.BarcodeError) as info:
                barcode.parse_barcode(data, len(data))
            if "reason" in entry:
                assert barcode.REASONS[info.value.reason] == entry["reason"], entry


# -- the reader, under MicroPython ---------------------------------------------------

SETUP = """
from fakes.uart import FakeUART
from drivers.barcode import BarcodeReader, parse_barcode, BarcodeError, NONE, CARD, MISREAD
uart = FakeUART()
reader = BarcodeReader(uart, timeout_ms=50)
def drain(now=0):
    while True:
        ev = reader.poll(now)
        if ev == NONE:
            return
        if ev == CARD:
            print('card', reader.deck_id, reader.code, bytes(reader.line[:reader.length]).decode())
        else:
            print('misread', reader.reason)
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
        return result.stdout.splitlines()

    return go


A, B, C = VALID[0][0], VALID[1][0], VALID[2][0]


@pytest.mark.parametrize("ending", ["\\r", "\\n", "\\r\\n"])
def test_reader_line_endings(run, ending: str) -> None:  # type: ignore[no-untyped-def]
    out = run(f"uart.feed(b'{A}{ending}{B}{ending}')\ndrain()")
    assert out == [f"card 0 0 {A}", f"card {0xDEADBEEF} 51 {B}"]


def test_reader_split_lines_one_byte_per_read(run) -> None:  # type: ignore[no-untyped-def]
    out = run(f"uart.chunk = 1\nuart.feed(b'{A}\\r\\n{C}\\n')\ndrain()")
    assert out == [f"card 0 0 {A}", f"card {0xCAFE} 33 {C}"]


def test_reader_split_across_polls(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
uart.feed(b'{A[:5]}')
print(reader.poll(0))
uart.feed(b'{A[5:]}\\r')
drain(10)
"""
    )
    assert out == ["0", f"card 0 0 {A}"]


def test_reader_garbage_then_good(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
uart.feed(b'\\x00\\xff!!\\r\\n')
uart.feed(b'\\x00\\xff!!!!!!!!!!!\\r\\n')
uart.feed(b'{A[:12]}Z\\n')
uart.feed(b'cs00000000 2c\\n')
uart.feed(b'{A}\\n')
drain()
print(reader.cards, reader.misreads)
"""
    )
    assert out == ["misread 1", "misread 2", "misread 3", "misread 2", f"card 0 0 {A}", "1 4"]


def test_reader_overlong_line_is_dropped_whole(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
uart.feed(b'X' * 500 + b'\\r\\n')
uart.feed(b'{B}\\r\\n')
drain()
uart.feed(b'{A}{A}\\n{A}X\\n')
drain()
print(len(reader._buf))
"""
    )
    assert out == ["misread 8", f"card {0xDEADBEEF} 51 {B}", "misread 8", "misread 1", "16"]


def test_reader_inter_character_timeout_ends_a_line(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
uart.feed(b'{A}')
print(reader.poll(100))
print(reader.poll(149))
drain(150)
uart.feed(b'{B[:6]}')
print(reader.poll(1000))
drain(1050)
uart.feed(b'\\n')
drain(1060)
"""
    )
    assert out == ["0", "0", f"card 0 0 {A}", "0", "misread 1"]


def test_reader_timeout_survives_tick_wraparound(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
import time
start = time.ticks_add(0, -20)   # 20 ms before the ticks counter wraps
uart.feed(b'{A}')
print(reader.poll(start))
drain(time.ticks_add(start, 60))
"""
    )
    assert out == ["0", f"card 0 0 {A}"]


def test_reader_allocates_nothing(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
import micropython
uart.chunk = 5
uart.feed(b'{A}\\r\\ngarbage\\n{B}\\n' + b'Y' * 40 + b'\\n')
uart.heap_guard = True
events = bytearray(8)
k = i = ev = 0
micropython.heap_lock()
try:
    for i in range(40):
        ev = reader.poll(0)
        if ev:
            events[k] = ev * 16 + reader.reason
            k += 1
finally:
    micropython.heap_unlock()
    uart.heap_guard = False
print(list(events[:k]), reader.code)
"""
    )
    assert out == [f"[16, {2 * 16 + 1}, 16, {2 * 16 + 8}] 51"]


def test_parse_barcode_under_micropython(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        f"""
print(parse_barcode(b'{B}', 13))
try:
    parse_barcode(b'{B[:12]}0', 13)
except BarcodeError as e:
    print(type(e).__name__, e.reason)
"""
    )
    assert out == [f"({0xDEADBEEF}, 51)", "BadCheck 3"]


@pytest.mark.skipif(not VECTORS.exists(), reason="protocol/vectors/barcodes.json not written yet")
def test_protocol_vectors_through_the_reader(run) -> None:  # type: ignore[no-untyped-def]
    entries = [e for e in _vector_entries() if _strip(str(e["text"]))]
    feed = b"".join(_strip(str(e["text"])) + b"\r\n" for e in entries)
    out = run(
        f"""
from drivers.barcode import REASONS
uart.chunk = 7
uart.feed({feed!r})
while True:
    ev = reader.poll(0)
    if ev == NONE:
        break
    print(ev == CARD and 'card %d %d' % (reader.deck_id, reader.code) or 'misread ' + REASONS[reader.reason])
"""
    )
    expected = [
        f"card {e['deck_id']} {e['code']}" if e["valid"] else f"misread {e['reason']}" for e in entries
    ]
    assert out == expected
