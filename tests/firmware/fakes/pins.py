"""A GPIO pin stand-in (runs under MicroPython and CPython).

GPIO pins cannot exist on the unix port, so the driver tests give drivers this instead:
it has the parts of `machine.Pin` the drivers use (call/value, irq with the trigger
constants) and records what was done to it.
"""


class FakePin:
    IRQ_FALLING = 4
    IRQ_RISING = 8
    IN = 0
    OUT = 1
    PULL_UP = 1
    # Interrupts off for every pin (rp2: a flash erase or program): edges are latched in
    # the pin's IRQ flags and handled as one IRQ when interrupts come back (`irqs_on`).
    masked = False
    latched = []

    def __init__(self, level=1, on_change=None):
        self.level = level
        self.writes = 0
        self.on_change = on_change  # called with the new level on every driven change
        self.handler = None
        self.trigger = 0
        self.hard = None
        self._flags = 0  # what `irq().flags()` returns: the edges of the IRQ being handled
        self._pend = 0  # edges latched while interrupts are off

    def __call__(self, v=None):
        return self.value(v)

    def value(self, v=None):
        if v is None:
            return self.level
        v = 1 if v else 0
        self.writes += 1
        changed = v != self.level
        self.level = v
        if changed and self.on_change is not None:
            self.on_change(v)
        return None

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def irq(self, handler=None, trigger=0, hard=False):
        """Hook the IRQ; returns the pin's irq object (here the pin: it has `flags()`)."""
        self.handler = handler
        self.trigger = trigger
        self.hard = hard
        return self

    def flags(self):
        return self._flags

    @staticmethod
    def irqs_off():
        FakePin.masked = True  # on FakePin itself, whichever subclass asks (fakes/rp2/machine.Pin)

    @staticmethod
    def irqs_on():
        """Interrupts back on: each pin with latched edges gets one IRQ with all its flags."""
        FakePin.masked = False
        while FakePin.latched:
            pin = FakePin.latched.pop(0)
            pin._flags, pin._pend = pin._pend, 0
            pin.handler(pin)

    def drive(self, level):
        """The outside world changes the pin's level: fire the IRQ like the hardware does."""
        level = 1 if level else 0
        if level == self.level:
            return
        self.level = level
        if self.handler is not None:
            edge = self.IRQ_RISING if level else self.IRQ_FALLING
            if self.trigger & edge:
                if FakePin.masked:
                    if not self._pend:
                        FakePin.latched.append(self)
                    self._pend |= edge
                else:
                    self._flags = edge
                    self.handler(self)
