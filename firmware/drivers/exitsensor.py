"""Exit sensor: every card that leaves the shoe, read or not, debounced; jams and faults.

The sensor (an IR break-beam or slot sensor across the shoe's mouth) is blocked while a
card passes. A card has left when the beam, having been blocked, is clear again; the
time the card "fired" the sensor is the first edge of the blocking. The count never
depends on whether the card was read: the app pairs reads with exits.

Interface (for the boards and the app)
--------------------------------------
``ExitSensor(pin=None, *, blocked_level=0, debounce_ms=3, jam_ms=2000,
chatter_edges=16, chatter_window_ms=250, quiet_ms=1000)``
    ``pin`` (optional) is an input pin with ``value()`` and ``irq(handler=, trigger=,
    hard=)`` (``machine.Pin``; its ``IRQ_RISING``/``IRQ_FALLING`` constants are read
    from the pin object, so this module never imports ``machine``). With a pin, the
    driver hooks both edges; without one (the unix board) edges come from
    ``feed_edge``. ``blocked_level`` is the pin level while a card blocks the beam.

``feed_edge(level, t_ms)``: an edge with its time (``time.ticks_ms()`` clock), from a
    board that has no pin. The pin's IRQ handler does the same with ``pin.value()``
    and ``time.ticks_ms()``: it only writes the preallocated ring and sets ``fired``
    (no allocation, safe as a hard IRQ).
``poll(now=None)``: in the main loop: debounce the queued edges, queue exits, update
    ``jammed`` and ``chattering``. ``now`` is ``time.ticks_ms()`` when omitted.
``pending() -> int``: exits waiting. ``take() -> int | None``: the oldest exit's
    fire time (ticks_ms), None when none is waiting.
``due(now) -> int``: milliseconds until ``poll`` must run to settle a change (a board
    that sleeps until there is work wakes then; ``fired``, set by the IRQ, wakes it for
    the edge itself).
``set_debounce(ms)``.
State: ``blocked`` (debounced level), ``jammed`` (blocked for ``jam_ms`` or more:
    a card stuck in the mouth, FAULT JAM; ends when the beam clears, and that card
    still counts), ``chattering`` (more than ``chatter_edges`` edges within
    ``chatter_window_ms``, or edges lost to a full ring: a failing sensor, FAULT
    SENSOR; ends after ``quiet_ms`` without an edge). Counters: ``exits``,
    ``bounces`` (glitches shorter than the debounce), ``lost`` (edges dropped on a
    full ring).

A level change counts once it has held for ``debounce_ms``; shorter glitches are
bounces. If the ring was full (edges lost) or an edge was missed, ``poll`` puts the
debounced state back in step with the pin level, so a lost edge cannot freeze it.

Interrupts off (``flash``): on the rp2 port every flash erase and program runs with
interrupts off (a 4 KB erase takes tens of ms), and edges that happen meanwhile reach
the handler as one IRQ once they are back on, whose flags (``pin.irq().flags()``) hold
both IRQ_FALLING and IRQ_RISING. A card that blocked and cleared the beam in that window
leaves the level as it was: the level alone would say nothing happened. The board sets
``flash`` while the flash is written (boards/pico.py wraps the filesystem's block
device); an IRQ with both flags then queues the edges the flags prove happened (two if
the level is back where it was, three if not) as *sure* edges, which no debounce drops,
stamped with the time the IRQ ran (the end of the flash operation). With ``flash``
false, both flags in one IRQ are a glitch shorter than the IRQ latency, debounced as
before. At most one whole card fits in one flash operation (a card takes longer than a
sector erase), so two proven edges are never more than one card.
"""

from micropython import const
import time
from array import array

_RING = const(32)  # edges; a power of two
_EVENTS = const(16)  # exits waiting for the app
_SURE = const(2)  # in the edge ring: an edge proven by the IRQ flags, never a bounce
_IDLE = const(60000)  # due(): nothing to settle


class ExitSensor:
    """Debounced exit sensor; see the module docstring for the interface."""

    def __init__(
        self,
        pin=None,
        *,
        blocked_level=0,
        debounce_ms=3,
        jam_ms=2000,
        chatter_edges=16,
        chatter_window_ms=250,
        quiet_ms=1000,
    ):
        self._pin = pin
        self._blocked_level = 1 if blocked_level else 0
        self._debounce = debounce_ms
        self._jam_ms = jam_ms
        self._chatter_edges = chatter_edges
        self._chatter_window = chatter_window_ms
        self._quiet = quiet_ms
        # Edge ring: written only by _push (IRQ or feed_edge), read only by poll.
        self._t = array("i", [0] * _RING)
        self._lv = bytearray(_RING)
        self._head = 0
        self._tail = 0
        self.fired = False
        self.lost = 0
        self._lost_seen = 0
        # Exit ring.
        self._ev = array("i", [0] * _EVENTS)
        self._ev_head = 0
        self._ev_tail = 0
        self._ev_extra = 0  # exits beyond the ring: counted, their time is the newest kept
        self._ev_last = 0
        now = time.ticks_ms()
        level = pin.value() if pin is not None else 1 - self._blocked_level
        self._raw = level
        self._raw_t = now
        self._depart_t = now
        self._stable = level
        self._blocked_t = now
        self._last_edge = now
        self._win_t = now
        self._win_n = 0
        self.exits = 0
        self.bounces = 0
        self.jammed = False
        self.chattering = False
        self.flash = False  # the flash is being written: interrupts may have been off
        self._plv = level  # the level of the last edge queued (producer side)
        self._irqo = None
        self._both = 0
        self._handler = self._irq  # bound once: making it in the IRQ would allocate
        if pin is not None:
            trigger = pin.IRQ_RISING | pin.IRQ_FALLING
            self._both = trigger
            try:
                self._irqo = pin.irq(handler=self._handler, trigger=trigger, hard=True)
            except TypeError:  # a port without hard IRQs
                self._irqo = pin.irq(handler=self._handler, trigger=trigger)

    @property
    def blocked(self):
        return self._stable == self._blocked_level

    def set_debounce(self, ms):
        """Minimum time a level must hold before it counts (CONFIG debounce_ms)."""
        self._debounce = ms

    # -- producer side: IRQ or feed_edge; must not allocate --------------------------

    def _push(self, level, t):
        head = self._head
        if ((head + 1) & (_RING - 1)) == self._tail:
            self.lost += 1
            self.fired = True
            return
        self._t[head] = t
        self._lv[head] = level
        self._head = (head + 1) & (_RING - 1)
        self.fired = True

    def _irq(self, pin):
        level = pin.value()
        t = time.ticks_ms()
        q = self._irqo
        if self.flash and q is not None and q.flags() & self._both == self._both:
            # Both edges latched while interrupts were off (a flash erase or program):
            # queue the edges the flags prove, ending at the level the pin has now.
            if level != self._plv:
                self._push(level | _SURE, t)
            self._push((1 - level) | _SURE, t)
            self._push(level | _SURE, t)
        else:
            self._push(level, t)
        self._plv = level

    def feed_edge(self, level, t_ms):
        """Queue an edge at ``t_ms`` (for boards without a pin, and for tests)."""
        self._push(1 if level else 0, t_ms)

    def due(self, now):
        """Milliseconds until ``poll`` has a level to settle (a change held for the debounce
        time makes an exit): 0 when edges wait, ``_IDLE`` when nothing is changing. For a
        board that sleeps until there is work (boards/pico.py ``wait``)."""
        if self._tail != self._head:
            return 0
        if self._raw == self._stable:
            return _IDLE
        left = self._debounce - time.ticks_diff(now, self._raw_t)
        return left if left > 0 else 0

    # -- consumer side: the main loop -------------------------------------------------

    def _settle(self, level):
        if level == self._stable:
            return
        self._stable = level
        if level == self._blocked_level:
            self._blocked_t = self._depart_t
        else:
            self.jammed = False
            self.exits += 1
            self._queue_exit(self._blocked_t)

    def _queue_exit(self, t):
        head = self._ev_head
        if ((head + 1) & (_EVENTS - 1)) == self._ev_tail:
            self._ev_extra += 1  # never lose the count, only the time
            self._ev_last = t
            return
        self._ev[head] = t
        self._ev_head = (head + 1) & (_EVENTS - 1)

    def _edge(self, level, t, sure=0):
        if time.ticks_diff(t, self._win_t) > self._chatter_window:
            self._win_t = t
            self._win_n = 0
        self._win_n += 1
        if self._win_n > self._chatter_edges:
            self.chattering = True
        self._last_edge = t
        if level == self._raw:
            return  # two samples of one level: an edge too short to see
        # A sure edge proves the level before it was there (a card in the beam while
        # interrupts were off), however short it looks from here.
        held = sure or time.ticks_diff(t, self._raw_t) >= self._debounce
        if held:
            self._settle(self._raw)  # the level before this edge was real
            if self._raw == self._stable:
                self._depart_t = t  # leaving a settled level: the first edge of a change
        else:
            self.bounces += 1
        self._raw = level
        self._raw_t = t

    def poll(self, now=None):
        """Debounce queued edges; update exits, ``jammed`` and ``chattering``."""
        if now is None:
            now = time.ticks_ms()
        self.fired = False
        while self._tail != self._head:
            tail = self._tail
            v = self._lv[tail]
            self._edge(v & 1, self._t[tail], v & _SURE)
            self._tail = (tail + 1) & (_RING - 1)
        if self._lost_seen != self.lost:
            self._lost_seen = self.lost
            self.chattering = True
            self._last_edge = now
        if self._pin is not None and self._tail == self._head:
            level = self._pin.value()
            if level != self._raw:
                self._plv = level
                self._edge(level, now)  # an edge the IRQ missed
        if time.ticks_diff(now, self._raw_t) >= self._debounce:
            self._settle(self._raw)
        if self._stable == self._blocked_level and time.ticks_diff(now, self._blocked_t) >= self._jam_ms:
            self.jammed = True
        if self.chattering and time.ticks_diff(now, self._last_edge) >= self._quiet:
            self.chattering = False
            self._win_n = 0

    def pending(self):
        """Number of exits waiting for ``take``."""
        return ((self._ev_head - self._ev_tail) & (_EVENTS - 1)) + self._ev_extra

    def take(self):
        """The oldest waiting exit's fire time (ticks_ms), or None."""
        if self._ev_tail != self._ev_head:
            t = self._ev[self._ev_tail]
            self._ev_tail = (self._ev_tail + 1) & (_EVENTS - 1)
            return t
        if self._ev_extra:
            self._ev_extra -= 1
            return self._ev_last
        return None
