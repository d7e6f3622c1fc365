"""An exit during the boot carries a time that cannot wrap (issue 26, item 5).

The shoe's t_ms counts from the boot's start (app/run.py, before the board's hardware is
started), so an exit the sensor saw while the shoe was booting is a small positive time.
On main at 60da493 the clock started when the Shoe object was made, late in the boot: an
exit seen before it went out as UNREAD index 1 with t_ms 4294967274 (22 ms before 0,
wrapped). An event stamped before the origin at all is clamped to 0, never wrapped."""

from __future__ import annotations

import cardshoe.protocol as P

SETUP = """
import time
import shoetest as T
from app.run import boot_shoe

root = T.mount(T.BlockDev(path=IMG))
T.provision(root)

class BootBoard(T.ScriptBoard):
    # `readers` is read by the boot after the log's replay, before the Shoe exists: an exit
    # stamped then is one the sensor saw during the boot. EXIT_MS is a fixed stamp instead.
    def __init__(self, root):
        self.t_boot = None
        self.exit_ms = None
        super().__init__(root)
    @property
    def readers(self):
        if self.t_boot is None:
            self.t_boot = time.ticks_ms()
            time.sleep_ms(30)  # the rest of the boot takes a while: the stamp is well before the Shoe
        return self._readers
    @readers.setter
    def readers(self, v):
        self._readers = v
    def poll(self):
        k = super().poll()
        if k == 3:
            self.ev_ms = self.exit_ms if self.exit_ms is not None else self.t_boot
        return k

board = BootBoard(root)
"""


def _unreads(wire, out: str) -> list[P.Unread]:  # type: ignore[no-untyped-def]
    return [f.message for batch in wire.decode(out) for f in batch if isinstance(f.message, P.Unread)]


def test_an_exit_during_the_boot_has_a_small_time_not_a_wrapped_one(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    out = mpy(SETUP + """
t0 = time.ticks_ms()
shoe = boot_shoe(board, b'\\x01' * 32)
took = time.ticks_diff(time.ticks_ms(), t0)
shoe.hello()
board.exit()
T.spin(shoe)
print('BOOT', took)
""")
    took = int(next(line.split()[1] for line in out.splitlines() if line.startswith("BOOT")))
    (unread,) = _unreads(wire, out)
    assert unread.index == 1
    # Within the boot, counted from its start: after the boot's first steps, at least 30 ms
    # before its end (the stamp is taken, then 30 ms pass); never 0 (clamped) nor wrapped.
    assert 0 < unread.t_ms <= took - 30, (unread.t_ms, took)


def test_an_event_stamped_before_the_origin_is_at_0(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    out = mpy(SETUP + """
board.exit_ms = time.ticks_add(time.ticks_ms(), -5000)
shoe = boot_shoe(board, b'\\x01' * 32)
shoe.hello()
board.exit()
T.spin(shoe)
""")
    (unread,) = _unreads(wire, out)
    assert unread.t_ms == 0
