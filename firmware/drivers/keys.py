"""Dealer keys: new round, deal complete, flag exposure, end shoe; debounced presses.

What only a person sees (an exposed card, the end of a deal) reaches the host through
these keys. Keys are slow and few, so they are sampled from the main loop, not by
interrupt: a press counts once the key has read pressed for ``debounce_ms``, and a key
held down counts once (no auto-repeat).

Interface (for the boards and the app)
--------------------------------------
``Keys(pins=None, *, codes=(1, 2, 3, 4), pressed_level=0, debounce_ms=30)``
    ``pins``: one input pin per code (``value()``), in the order of ``codes``, or
    None for a board without pins (the unix board), whose key levels come from
    ``feed``. Codes are SPEC KEY codes: 1 NEW_ROUND, 2 DEAL_COMPLETE, 3 EXPOSURE,
    4 END_SHOE. ``pressed_level`` is the pin level while pressed (0: a key to ground
    with the pin's pull-up).
``poll(now=None)``: sample and debounce; queue a press when a key settles pressed.
``pending() -> int``; ``take() -> int``: the oldest press's key code (0 when none);
    ``t_ms`` is then the time the key went down (``time.ticks_ms()`` clock).
``held(code) -> bool``: the key is pressed now (debounced).
``held_at_boot(hold_ms=500, step_ms=10) -> int``: at boot, the code of a key held
    down for the whole of ``hold_ms`` (sampled every ``step_ms``), else 0. The app
    then returns to the REPL for maintenance instead of streaming.
``feed(code, pressed, t_ms=None)``: set a key's level (boards without pins, tests).
``press(code, t_ms=None)``: queue a clean press directly (a simulated key).

Presses beyond the 8-press queue are counted in ``dropped`` and lost: a dealer who
presses nine keys while the app is stalled is told by the app's fault, not here.
"""

from micropython import const
import time
from array import array

_QUEUE = const(8)  # a power of two


class Keys:
    """Debounced dealer keys; see the module docstring for the interface."""

    def __init__(self, pins=None, *, codes=(1, 2, 3, 4), pressed_level=0, debounce_ms=30):
        if pins is not None and len(pins) != len(codes):
            raise ValueError("one pin per key code")
        self._pins = pins
        self._codes = bytes(codes)
        self._pressed = 1 if pressed_level else 0
        self._debounce = debounce_ms
        n = len(codes)
        now = time.ticks_ms()
        self._fed = bytearray(n)  # levels given by feed(), as pressed (1) or not (0)
        self._raw = bytearray(n)
        self._since = array("i", [now] * n)
        self._stable = bytearray(n)
        for i in range(n):
            self._raw[i] = self._stable[i] = self._sample(i)
        self._q = bytearray(_QUEUE)
        self._qt = array("i", [0] * _QUEUE)
        self._head = 0
        self._tail = 0
        self.t_ms = 0
        self.dropped = 0

    def _index(self, code):
        for i in range(len(self._codes)):
            if self._codes[i] == code:
                return i
        raise ValueError("unknown key code %d" % code)

    def _sample(self, i):
        pins = self._pins
        if pins is None or pins[i] is None:
            return self._fed[i]
        return 1 if pins[i].value() == self._pressed else 0

    def _queue(self, code, t):
        head = self._head
        if ((head + 1) & (_QUEUE - 1)) == self._tail:
            self.dropped += 1
            return
        self._q[head] = code
        self._qt[head] = t
        self._head = (head + 1) & (_QUEUE - 1)

    def set_debounce(self, ms):
        self._debounce = ms

    def feed(self, code, pressed, t_ms=None):
        """Set the level of key ``code`` (for a board without pins); ``poll`` debounces it."""
        i = self._index(code)
        level = 1 if pressed else 0
        self._fed[i] = level
        if self._raw[i] != level:
            self._raw[i] = level
            self._since[i] = time.ticks_ms() if t_ms is None else t_ms

    def press(self, code, t_ms=None):
        """Queue one clean press of ``code`` (a simulated key needs no debounce)."""
        self._index(code)
        self._queue(code, time.ticks_ms() if t_ms is None else t_ms)

    def poll(self, now=None):
        """Sample every key; a key that has read pressed for the debounce time is a press."""
        if now is None:
            now = time.ticks_ms()
        for i in range(len(self._codes)):
            level = self._sample(i)
            if level != self._raw[i]:
                self._raw[i] = level
                self._since[i] = now
            elif level != self._stable[i] and time.ticks_diff(now, self._since[i]) >= self._debounce:
                self._stable[i] = level
                if level:
                    self._queue(self._codes[i], self._since[i])

    def pending(self):
        return (self._head - self._tail) & (_QUEUE - 1)

    def take(self):
        """The oldest press's key code (``t_ms`` set to when it went down), or 0."""
        if self._tail == self._head:
            return 0
        tail = self._tail
        self.t_ms = self._qt[tail]
        self._tail = (tail + 1) & (_QUEUE - 1)
        return self._q[tail]

    def held(self, code):
        """The key is down now (debounced)."""
        return self._stable[self._index(code)] == 1

    def held_at_boot(self, hold_ms=500, step_ms=10):
        """The code of a key held down for the whole of ``hold_ms``, else 0 (bounded wait)."""
        n = len(self._codes)
        candidates = bytearray(n)
        any_down = False
        for i in range(n):
            candidates[i] = self._sample(i)
            any_down = any_down or candidates[i]
        if not any_down:
            return 0
        start = time.ticks_ms()
        while time.ticks_diff(time.ticks_ms(), start) < hold_ms:
            time.sleep_ms(step_ms)
            any_down = False
            for i in range(n):
                if candidates[i] and not self._sample(i):
                    candidates[i] = 0
                any_down = any_down or candidates[i]
            if not any_down:
                return 0
        for i in range(n):
            if candidates[i]:
                # Held through boot: do not report it as a press when streaming starts.
                self._raw[i] = self._stable[i] = 1
                return self._codes[i]
        return 0
