"""Dealer keys under the real `micropython` (heap 64k): debounce, queue, held at boot.
Pins are fakes (GPIO cannot exist here); pressed is level 0 (key to ground, pull-up)."""

from __future__ import annotations

import pytest

from fakes.build import build
from micropython_runner import run_micropython

SETUP = """
import time
from drivers.keys import Keys
from fakes.pins import FakePin
NEW_ROUND, DEAL_COMPLETE, EXPOSURE, END_SHOE = 1, 2, 3, 4
pins = [FakePin(1) for _ in range(4)]
keys = Keys(pins, debounce_ms=30)
def presses():
    out = []
    while keys.pending():
        out.append(keys.take())
    return out
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


def test_press_counts_once_after_debounce(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
t = 1000
pins[2].level = 0                      # EXPOSURE down
keys.poll(t); keys.poll(t + 20)
print(presses())
keys.poll(t + 31)
print(presses(), keys.t_ms - t, keys.held(EXPOSURE))
for dt in range(40, 2000, 10):          # held for two seconds: no repeat
    keys.poll(t + dt)
print(presses())
pins[2].level = 1
keys.poll(t + 2000); keys.poll(t + 2040)
print(presses(), keys.held(EXPOSURE), keys.take())
"""
    )
    assert out == ["[]", "[3] 0 True", "[]", "[] False 0"]


def test_bouncing_contact_is_one_press(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
t = 1000
for dt, level in ((0, 0), (2, 1), (4, 0), (6, 1), (9, 0)):
    pins[0].level = level
    keys.poll(t + dt)
for dt in range(10, 100, 5):
    keys.poll(t + dt)
print(presses(), keys.t_ms - t)
"""
    )
    assert out == ["[1] 9"]


def test_short_glitch_is_not_a_press(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
pins[3].level = 0; keys.poll(1000)
pins[3].level = 1; keys.poll(1010)
for t in range(1020, 1200, 10):
    keys.poll(t)
print(presses())
"""
    )
    assert out == ["[]"]


def test_all_four_keys_in_order(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
t = 1000
for i in (0, 1, 2, 3):
    pins[i].level = 0; keys.poll(t); keys.poll(t + 40)
    pins[i].level = 1; keys.poll(t + 50); keys.poll(t + 90)
    t += 100
print(presses())
"""
    )
    assert out == ["[1, 2, 3, 4]"]


def test_feed_and_press_without_pins(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
k = Keys(None, debounce_ms=30)
k.feed(END_SHOE, True, 500)
k.poll(520); print(k.pending())
k.poll(531); print(k.take(), k.t_ms)
k.feed(END_SHOE, False, 600); k.poll(700)
k.press(NEW_ROUND, 800)
print(k.take(), k.t_ms, k.take())
try:
    k.press(9)
except ValueError:
    print('unknown')
"""
    )
    assert out == ["0", "4 500", "1 800 0", "unknown"]


def test_full_queue_counts_dropped(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
k = Keys(None)
for i in range(10):
    k.press(DEAL_COMPLETE, i)
print(k.pending(), k.dropped)
"""
    )
    assert out == ["7 3"]


def test_held_at_boot(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
print(keys.held_at_boot(hold_ms=50))
pins[3].level = 0
k = Keys(pins, debounce_ms=30)
print(k.held_at_boot(hold_ms=50))
k.poll(); print(presses())               # the held key is not a press afterwards
"""
    )
    assert out == ["0", "4", "[]"]


def test_key_released_during_boot_hold_is_not_maintenance(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
class Releasing(FakePin):
    def value(self, v=None):
        self.n = getattr(self, 'n', 0) + 1
        return 0 if self.n < 4 else 1
p = [FakePin(1), Releasing(1), FakePin(1), FakePin(1)]
k = Keys(p)
print(k.held_at_boot(hold_ms=100, step_ms=10))
"""
    )
    assert out == ["0"]


def test_poll_allocates_nothing(run) -> None:  # type: ignore[no-untyped-def]
    out = run(
        """
import micropython
t = i = 0
micropython.heap_lock()
try:
    for i in range(40):
        pins[i % 4].level = (i // 4) % 2
        keys.poll(1000 + 20 * i)
finally:
    micropython.heap_unlock()
print(len(presses()) > 0)
"""
    )
    assert out == ["True"]
