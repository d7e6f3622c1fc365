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

    def __init__(self, level=1, on_change=None):
        self.level = level
        self.writes = 0
        self.on_change = on_change  # called with the new level on every driven change
        self.handler = None
        self.trigger = 0
        self.hard = None

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
        self.handler = handler
        self.trigger = trigger
        self.hard = hard

    def drive(self, level):
        """The outside world changes the pin's level: fire the IRQ like the hardware does."""
        level = 1 if level else 0
        if level == self.level:
            return
        self.level = level
        if self.handler is not None:
            edge = self.IRQ_RISING if level else self.IRQ_FALLING
            if self.trigger & edge:
                self.handler(self)
