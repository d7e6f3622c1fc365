"""Exit sensor driver under the real `micropython` (heap 64k): synthetic edges, bounce,
jams, chatter, and the Pin IRQ path with a fake pin (GPIO cannot exist here)."""

from __future__ import annotations

import pytest

from fakes.build import build
from micropython_runner import run_micropython

SETUP = """
from drivers.exitsensor import ExitSensor
from fakes.pins import FakePin
def exits(s):
    out = []
    while s.pending():
        out.append(s.take())
    return out
"""

# The beam: 1 clear, 0 blocked (the default blocked_level=0).


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


def test_clean_cards_are_counted_with_their_fire_time(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
s = ExitSensor(debounce_ms=3)
t0 = s._raw_t
for k in range(5):
    base = t0 + 1000 + k * 400
    s.feed_edge(0, base)
    s.poll(base + 10)
    print(s.blocked, s.pending())
    s.feed_edge(1, base + 80)
    s.poll(base + 90)
print([t - t0 for t in exits(s)], s.exits, s.take())
"""
    )
    assert out[:5] == [f"True {k}" for k in range(5)]  # counted only once clear
    assert out[5] == "[1000, 1400, 1800, 2200, 2600] 5 None"


def test_bounce_is_filtered_and_fire_time_is_the_first_edge(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
s = ExitSensor(debounce_ms=3)
t = s._raw_t + 1000
# leading edge bounces, a 1 ms glitch mid-card, trailing edge bounces
for dt, level in ((0, 0), (1, 1), (2, 0), (40, 1), (41, 0), (80, 1), (81, 0), (82, 1)):
    s.feed_edge(level, t + dt)
s.poll(t + 100)
print([x - t for x in exits(s)], s.exits, s.bounces, s.blocked)
"""
    )
    assert out == ["[0] 1 5 False"]


def test_glitch_shorter_than_debounce_is_not_a_card(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
s = ExitSensor(debounce_ms=5)
t = s._raw_t + 1000
s.feed_edge(0, t); s.feed_edge(1, t + 4)
s.poll(t + 50)
print(s.pending(), s.exits, s.bounces)
s.set_debounce(2)
s.feed_edge(0, t + 100); s.feed_edge(1, t + 104)
s.poll(t + 150)
print(s.pending(), s.exits)
"""
    )
    assert out == ["0 0 1", "1 1"]


def test_poll_between_edges_gives_same_result(run) -> None:  # type: ignore[no-untyped-def]
    # Whether the main loop polls after every edge or rarely, the count is the same.
    out = run(
        """
import random
def deal(poll_every):
    s = ExitSensor(debounce_ms=3)
    t = s._raw_t + 1000
    random.seed(7)
    edges = []
    for k in range(30):
        base = t + k * 200
        edges.append((0, base)); edges.append((1, base + 1)); edges.append((0, base + 2))
        edges.append((1, base + 60 + random.getrandbits(5)))
    for i, (lv, at) in enumerate(edges):
        s.feed_edge(lv, at)
        if i % poll_every == 0:
            s.poll(at)
    s.poll(t + 30 * 200 + 500)
    return s.exits, len(exits(s))
print(deal(1), deal(3), deal(7))
"""
    )
    assert out == ["(30, 30) (30, 30) (30, 30)"]


def test_jam_raised_after_jam_ms_and_card_still_counts(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
s = ExitSensor(debounce_ms=3, jam_ms=1500)
t = s._raw_t + 1000
s.feed_edge(0, t)
s.poll(t + 1000); print(s.jammed)
s.poll(t + 1600); print(s.jammed, s.pending())
s.feed_edge(1, t + 2000)
s.poll(t + 2010); print(s.jammed, [x - t for x in exits(s)])
"""
    )
    assert out == ["False", "True 0", "False [0]"]


def test_chatter_is_a_sensor_fault_that_clears_when_quiet(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
s = ExitSensor(debounce_ms=3, chatter_edges=16, chatter_window_ms=250, quiet_ms=1000)
t = s._raw_t + 1000
for i in range(40):
    s.feed_edge(i % 2 == 0 and 0 or 1, t + i)
    if i % 8 == 7:
        s.poll(t + i)
print(s.chattering, s.exits)
s.poll(t + 500); print(s.chattering)
s.poll(t + 1100); print(s.chattering)
"""
    )
    assert out == ["True 0", "True", "False"]


def test_full_ring_loses_edges_not_cards_silently(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=0)
for i in range(100):          # the main loop stalled while the sensor chattered
    pin.drive(i % 2)
print(s.lost > 0)
s.poll()
print(s.chattering)
"""
    )
    assert out == ["True", "True"]


def test_pin_irq_path(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
import time
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=2)
print(pin.trigger == pin.IRQ_RISING | pin.IRQ_FALLING, pin.hard, pin.handler is not None)
for k in range(3):
    pin.drive(0); print(s.fired)
    s.poll()
    time.sleep_ms(5); s.poll()
    pin.drive(1)
    s.poll(); time.sleep_ms(5); s.poll()
print(s.exits, s.pending(), s.fired)
"""
    )
    assert out == ["True True True", "True", "True", "True", "3 3 False"]


def test_missed_irq_edge_is_recovered_from_the_pin(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
import time
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=2)
pin.level = 0                 # the beam broke but no interrupt came
s.poll(); time.sleep_ms(5); s.poll()
print(s.blocked)
pin.level = 1
s.poll(); time.sleep_ms(5); s.poll()
print(s.blocked, s.exits)
"""
    )
    assert out == ["True", "False 1"]


def test_blocked_level_high(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
s = ExitSensor(blocked_level=1, debounce_ms=3)
t = s._raw_t + 1000
s.feed_edge(1, t); s.feed_edge(0, t + 50)
s.poll(t + 100)
print(s.exits)
"""
    )
    assert out == ["1"]


def test_more_exits_than_the_queue_are_all_counted(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
s = ExitSensor(debounce_ms=1)
t = s._raw_t + 1000
for k in range(25):
    s.feed_edge(0, t + k * 100); s.feed_edge(1, t + k * 100 + 50)
    s.poll(t + k * 100 + 60)
got = exits(s)
print(len(got), s.exits, got[0] - t, s.pending())
"""
    )
    assert out == ["25 25 0 0"]


def test_irq_handler_and_poll_allocate_nothing(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
import micropython
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=0)
t = s._raw_t
k = n = 0
micropython.heap_lock()
try:
    for k in range(20):
        pin.drive(0)
        s.poll(t + 3 * k)
        pin.drive(1)
        s.poll(t + 3 * k + 1)
        s.feed_edge(0, t + 3 * k + 2)
        s.feed_edge(1, t + 3 * k + 2)
        s.poll(t + 3 * k + 2)
        n += s.pending()
        while s.pending():
            s.take()
finally:
    micropython.heap_unlock()
print(s.exits > 0, s.lost)
"""
    )
    assert out == ["True 0"]


# -- interrupts off while the flash is written (rp2: every erase and program) -----------
# The model: FakePin.irqs_off() latches edges in the pin's IRQ flags, irqs_on() delivers
# them as one IRQ, as the rp2 port does once interrupts are back on. A card takes about
# 50 ms to pass; a 4 KB sector erase takes tens of ms.

def test_a_card_that_passes_while_interrupts_are_off_is_counted(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
import time
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=3)
s.flash = True                 # the board: a flash erase is running
FakePin.irqs_off()
pin.drive(0); time.sleep_ms(25); pin.drive(1); time.sleep_ms(25)   # 50 ms, one whole card
print(s.fired)                 # nothing handled yet: interrupts are off
FakePin.irqs_on()              # one IRQ, both flags, the level as it was
s.flash = False
print(pin.flags() == pin.IRQ_FALLING | pin.IRQ_RISING, pin.value())
s.poll(); time.sleep_ms(5); s.poll()
print(s.exits, s.pending(), s.blocked, s.bounces)
"""
    )
    assert out == ["False", "True 1", "1 1 False 0"]


def test_a_card_ending_and_the_next_starting_in_one_flash_write(run) -> None:  # type: ignore[no-untyped-def]
    # First card's leading edge seen; its trailing edge and the next card's leading edge
    # both land in one IRQ (level 0 before and after): two cards, the second still in the beam.
    out = run(
        """
import time
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=3)
pin.drive(0); s.poll(); time.sleep_ms(10); s.poll()
s.flash = True
FakePin.irqs_off()
pin.drive(1); time.sleep_ms(20); pin.drive(0); time.sleep_ms(30)
FakePin.irqs_on()
s.flash = False
s.poll(); time.sleep_ms(5); s.poll()
print(s.exits, s.blocked)
pin.drive(1); s.poll(); time.sleep_ms(5); s.poll()
print(s.exits, s.pending(), s.blocked)
"""
    )
    assert out == ["1 True", "2 2 False"]


def test_a_whole_card_and_the_next_leading_edge_in_one_flash_write(run) -> None:  # type: ignore[no-untyped-def]
    # Three edges in one IRQ (clear -> blocked -> clear -> blocked): one card out, one in.
    out = run(
        """
import time
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=3)
s.flash = True
FakePin.irqs_off()
pin.drive(0); time.sleep_ms(20); pin.drive(1); time.sleep_ms(20); pin.drive(0); time.sleep_ms(10)
FakePin.irqs_on()
s.flash = False
s.poll(); time.sleep_ms(5); s.poll()
print(s.exits, s.blocked)
pin.drive(1); s.poll(); time.sleep_ms(5); s.poll()
print(s.exits, s.blocked)
"""
    )
    assert out == ["1 True", "2 False"]


def test_both_edges_in_one_irq_outside_a_flash_write_is_a_glitch(run) -> None:  # type: ignore[no-untyped-def]
    # With interrupts on, both edges in one IRQ means a pulse shorter than the IRQ latency
    # (microseconds): debounced away, as before, never a card.
    out = run(
        """
import time
pin = FakePin(1)
s = ExitSensor(pin, debounce_ms=3)
FakePin.irqs_off(); pin.drive(0); pin.drive(1); FakePin.irqs_on()
s.poll(); time.sleep_ms(5); s.poll()
print(s.exits, s.blocked)
"""
    )
    assert out == ["0 False"]
