"""The main loop sleeps until there is work (issue 26, item 7).

A pass of `Shoe.run` that finds nothing to do hands the board's `wait()` the time to its
own next timer: the resend of an unacknowledged frame, the heartbeat, the memory check
(each second) - hundreds of milliseconds, not a fixed 10 ms. Host bytes and hardware events
end the wait before (the boards' wait(): tests/firmware/test_drivers_pico_board.py for the
Pico's exit IRQ and reader checks; the virtual board polls its USB line and sim channel).
On main at 60da493 the loop woke every 10 ms: about 90 passes a second idle on the virtual
board, 70 on an emulated Pico (40 % of its CPU)."""

from __future__ import annotations

import cardshoe.protocol as P


def test_an_idle_pass_sleeps_until_the_next_timer(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    out = mpy("""
import shoetest as T
root = T.mount(T.BlockDev(path=IMG))
T.provision(root)
shoe, board = T.new_shoe(root)
waits = []
def wait(ms):
    waits.append(ms)
    if len(waits) == 3:
        shoe.outbox.ack(shoe.outbox.next_seq - 1)   # the host's ACK: nothing held any more
    if len(waits) == 6:
        shoe.maintenance = True
board.wait = wait
shoe.run()
print('WAITS', *waits)
""")
    waits = [int(x) for x in next(line for line in out.splitlines() if line.startswith("WAITS")).split()[1:]]
    # Frames held: until their resend (300 ms at first); nothing held: until the memory
    # check (1 s), which comes before the heartbeat (2 s). Never the old 10 ms.
    assert all(250 <= w <= 300 for w in waits[:3]), waits
    assert all(900 <= w <= 1000 for w in waits[3:]), waits
    hellos = [f for batch in wire.decode(out) for f in batch if isinstance(f.message, P.Hello)]
    assert hellos
