"""The outbox's REPLY slots and repeated REPLYs, in the real firmware under micropython (64 KB heap).

Issue 11, defect A: after a daemon restart on a noisy line the shoe's outbox was full of
frames the new daemon may not acknowledge until the REPLY to its PING proves the shoe live
(SPEC 3.4 item 6), and that REPLY found no slot: FAULTs and a copy of a REPLY for every
resent command had taken the slots kept for it. Defect C: ACKs lost on the line (or dropped
after a command that found no slot) left the shoe resending frames the host had journaled.
The rules these tests hold the firmware to are SPEC section 4 ("Outbox full", the repeated
REPLY, RESEND_FROM) and section 5 (REPLY).
"""

from __future__ import annotations

from typing import Any

# A booted shoe (in-process, on the scripted board) with a barcode shoe loaded and every
# frame so far acknowledged; `feed()` hands the next host line to the link in one read.
SHOE = """
import shoetest as T
import struct
bd = T.BlockDev(path=IMG)
root = T.mount(bd)
T.provision(root)
shoe, board = T.new_shoe(root)
T.spin(shoe)
ob = shoe.outbox
p = bytearray(12)
struct.pack_into('<IIBBBB', p, 0, 9, 0xABCD, 2, 0, 1, 0)
print('LOAD', shoe.command(0x83, p, 12))
T.spin(shoe)
ob.ack(ob.next_seq - 1)
def phase(name):
    print('PHASE', name, ob.acked, ob.count, ob.next_seq)
def host_line():
    T.host(board)
    T.spin(shoe, 8)
def feed():
    T.host(board)
    shoe.link.feed(board.host, board.host_len)
    board.host_pos = board.host_len
def deal(n):
    for c in range(n):
        board.barcode(T.barcode_of(0xABCD, c)); board.exit()
        T.spin(shoe, 2)
"""


def phases(wire: Any, stdout: str) -> dict[str, dict[str, Any]]:
    """Per `phase(name)` line (`PHASE name acked count next`): the outbox then, and the frames
    the shoe wrote since the phase before."""
    from cardshoe import protocol as P

    out: dict[str, dict[str, Any]] = {}
    frames: list[Any] = []
    for line in stdout.splitlines():
        if line.startswith("PHASE "):
            _, name, acked, count, next_seq = line.split()
            out[name] = {"acked": int(acked), "count": int(count), "next": int(next_seq), "frames": frames}
            frames = []
        elif line.startswith("OUT "):
            for item in wire.rx.feed(bytes.fromhex(line[4:])):
                assert isinstance(item, P.Frame), f"the shoe wrote a frame the host codec rejects: {item}"
                frames.append(item)
    return out


def test_a_resent_command_gets_its_held_reply_again_and_a_restarted_host_always_a_slot(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    from cardshoe import protocol as P

    first = type(wire)(epoch=1)  # the host codec's frame maker (conftest.Wire)
    second = type(wire)(epoch=2)
    ping1 = first.frame(P.Ping(nonce=11))
    ping1_again = first.frame(P.Ping(nonce=11), seq=1, flags=P.FLAG_RESENT)
    ping2 = second.frame(P.Ping(nonce=22))
    ping2_new_seq = second.frame(P.Ping(nonce=22))  # issued again under seq 2 (SPEC 4)
    time2 = second.frame(P.Time(unix_ms=1_800_000_000_000))
    host = [ping1] + [ping1_again] * 6 + [ping2, ping2_new_seq, time2]
    out = mpy(SHOE + """
deal(20)                   # no ACKs from here on: cards fill what they may, OUTBOX_FULL is raised
board.fault(2, 1)          # and a JAM: it waits, as FAULTs leave the REPLY slots free
T.spin(shoe, 2)
phase('full')
host_line()
phase('ping1')
for _ in range(6):
    host_line()
phase('resent')
host_line()                # a restarted host: epoch 2, its PING
phase('ping2')
host_line()
phase('ping2_new_seq')
host_line()
phase('time2')
""", host=host)
    ph = phases(wire, out)
    assert "LOAD (0, 0)" in out, out
    # The first host's PING is answered (the first command of its epoch may take a REPLY slot).
    (r1,) = [f for f in ph["ping1"]["frames"] if isinstance(f.message, P.Reply)]
    assert (r1.message.epoch, r1.message.seq) == (1, 1) and not r1.resent
    # Resent six times: the same frame again each time (same seq, RESENT), never a new one.
    again = ph["resent"]["frames"]
    assert [(type(f.message).__name__, f.seq, f.resent) for f in again] == [("Reply", r1.seq, True)] * 6, again
    assert ph["resent"]["next"] == ph["ping1"]["next"] == r1.seq + 1
    # SPEC 4 "Outbox full": cards leave three slots free, FAULT two.
    cards = [f for f in ph["full"]["frames"] if isinstance(f.message, P.Card)]
    faults = [f for f in ph["full"]["frames"] if isinstance(f.message, P.Fault)]
    assert len(cards) == 13 and [f.message.code for f in faults] == [6], ph["full"]
    assert ph["full"]["count"] == 14, ph["full"]
    # That host died unproven, its REPLY held. The next one's PING still finds a slot.
    (r2,) = [f for f in ph["ping2"]["frames"] if isinstance(f.message, P.Reply)]
    assert (r2.message.epoch, r2.message.seq, r2.seq) == (2, 1, r1.seq + 1)
    # The same PING issued again under a new seq: that REPLY again, not a second one.
    assert [(type(f.message).__name__, f.seq, f.resent) for f in ph["ping2_new_seq"]["frames"]] == [
        ("Reply", r2.seq, True)]
    assert ph["ping2_new_seq"]["count"] == 16
    # The outbox is full now; a later command of that host waits for room (no frame).
    assert not [f for f in ph["time2"]["frames"] if isinstance(f.message, P.Reply)]


def test_a_later_command_of_a_host_leaves_the_reply_slots_to_the_next_host(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    from cardshoe import protocol as P

    first = type(wire)(epoch=1)  # the host codec's frame maker (conftest.Wire)
    second = type(wire)(epoch=2)
    # The first host's commands are all answered but never acknowledged (it dies with them held).
    lines = [first.frame(P.Ping(nonce=n)) for n in range(1, 6)]
    lines.append(second.frame(P.Ping(nonce=99)))
    out = mpy(SHOE + """
deal(20)
phase('full')
for _ in range(5):
    host_line()
phase('first')
host_line()
phase('second')
""", host=lines)
    ph = phases(wire, out)
    # The next host's PING is answered, whatever the first one left held.
    assert [(r.epoch, r.seq) for r in (f.message for f in ph["second"]["frames"]) if isinstance(r, P.Reply)] == [(2, 1)]
    replies = [f.message for f in ph["first"]["frames"] if isinstance(f.message, P.Reply)]
    # The first host's first command took a REPLY slot; its later ones left the last two free.
    assert [(r.epoch, r.seq) for r in replies] == [(1, 1)], replies
    assert ph["first"]["count"] == 15


def test_resend_from_acknowledges_what_is_before_it(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    from cardshoe import protocol as P

    # SPEC 4: RESEND_FROM(boot, n) is sent for the first frame the host has not journaled,
    # so the frames before n are journaled, as ACK(boot, n - 1) says. HELLO is seq 1, the
    # loaded shoe's DECK_STATUS 2 (both acknowledged), the six cards 3 to 8.
    host = type(wire)(epoch=1)
    out = mpy(SHOE + """
phase('start')
deal(6)
phase('dealt')
host_line()
phase('asked')
""", host=[host.frame(P.ResendFrom(boot=1, seq=6))])
    ph = phases(wire, out)
    assert (ph["dealt"]["acked"], ph["dealt"]["next"]) == (2, 9), ph["dealt"]
    assert ph["asked"]["acked"] == 5, ph["asked"]
    assert [(f.seq, f.resent) for f in ph["asked"]["frames"]] == [(6, True), (7, True), (8, True)]


def test_an_ack_after_a_command_that_found_no_slot_still_counts(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    from cardshoe import protocol as P

    # A command that finds no slot is not taken and the window stays before it (so its
    # resend is not a replay); an ACK after it in the same read must still free the slots,
    # or the shoe resends frames the host has journaled while the host waits for room.
    # HELLO 1 and DECK_STATUS 2 acknowledged; then 13 cards (3-15), FAULT 16, REPLY 17.
    host = type(wire)(epoch=1)
    first = host.frame(P.Ping(nonce=1))  # takes a REPLY slot, as the first command of an epoch may
    second = host.frame(P.Ping(nonce=2))  # finds no slot: a later command leaves them free
    ack = host.frame(P.Ack(boot=1, seq=13))
    out = mpy(SHOE + """
deal(20)
host_line()
phase('full')
feed()
phase('after')
""", host=[first, second + ack])
    ph = phases(wire, out)
    assert ph["after"]["acked"] == 13, (ph["full"], ph["after"])
    assert (ph["full"]["acked"], ph["full"]["count"], ph["full"]["next"]) == (2, 15, 18), ph["full"]
