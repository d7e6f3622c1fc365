"""The host end of the link (`cardshoe.link.ShoeLink`) against a shoe made of encoded frames.

The shoe here is the test: it writes frames made with the host codec into a real
pseudo-terminal and reads back what the link sends. The sink stands for the journal and
can refuse a frame, as a failing journal does. Expectations come from protocol/SPEC.md
section 4 (and the link's own contract: an ACK means "committed to the journal"); each
test names the mutation it was shown to kill (`scripts/mutations.toml`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import cardshoe.protocol as P
from cardshoe.link.shoelink import Command, ShoeLink
from cardshoe.link.transport import LinkState

from link_ptys import PluggablePty

KEY = bytes(range(32))
SERIAL = 4242
EPOCH = 1_800_000_000
BOOT = 7


def hello() -> P.Hello:
    return P.Hello(fw_major=0, fw_minor=1, fw_patch=0, fw_hash=bytes(32), reset_cause=1, readers=1,
                   shoe_no=0, deck_id=0, dealt=0, integrity=0, faults=0)


def beat(n: int) -> P.Heartbeat:
    return P.Heartbeat(t_ms=1000 * n, dealt=0, outbox=1)


@dataclass
class Sink:
    """The journal's stand-in: records what it journals; `refuse` seqs fail once each."""

    journaled: list[tuple[int, int]] = field(default_factory=list)
    ack_path: list[tuple[str, int, int]] = field(default_factory=list)
    refuse: set[int] = field(default_factory=set)
    refused: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def frame_accepted(self, frame: P.Frame) -> None:
        with self.lock:
            if frame.seq in self.refuse:
                self.refuse.discard(frame.seq)
                self.refused.append(frame.seq)
                raise OSError("disk full")
            self.journaled.append((frame.boot, frame.seq))

    def frame_rejected(self, rejection: P.Rejection, note: str) -> None:
        pass

    def link_state(self, state: LinkState) -> None:
        pass

    def window_adopted(self, shoe: int, boot: int, seq: int) -> None:
        pass

    def frame_held(self, frame: P.Frame) -> None:
        pass

    def shoe_challenged(self, shoe: int, epoch: int, seq: int) -> None:
        pass

    def shoe_verified(self, shoe: int, boot: int, epoch: int, seq: int, held: int) -> None:
        pass

    def command_answered(self, command: Command, reply: P.Reply | None) -> None:
        pass

    def ack_path_broken(self, shoe: int, boot: int, seq: int, seconds: float, resends: int) -> None:
        with self.lock:
            self.ack_path.append(("broken", boot, seq))

    def ack_path_restored(self, shoe: int, boot: int, seq: int, why: str) -> None:
        with self.lock:
            self.ack_path.append((f"restored: {why}", boot, seq))


class WireShoe:
    """The shoe's end of the pty: frames out by (boot, seq), host frames in, decoded."""

    def __init__(self, pty: PluggablePty) -> None:
        self.pty = pty
        self.rx = P.Receiver(keys=lambda s: KEY if s == SERIAL else None, direction=P.Direction.HOST_TO_SHOE)
        self.got: list[P.Frame] = []

    def send(self, message: P.Message, seq: int, boot: int = BOOT, resent: bool = False) -> None:
        self.pty.write(P.encode_frame(message, key=KEY, shoe=SERIAL, boot=boot, seq=seq,
                                      flags=P.FLAG_RESENT if resent else 0))

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for item in self.rx.feed(self.pty.read(0.05)):
                assert isinstance(item, P.Frame), item
                self.got.append(item)

    def until(self, what: str, cond: Callable[[], bool], timeout: float = 20.0) -> None:
        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                pytest.fail(f"timed out waiting for {what}; host sent {[f.message for f in self.got]}")
            self.pump(0.05)

    def of(self, kind: type) -> list:  # type: ignore[type-arg]
        return [f.message for f in self.got if isinstance(f.message, kind)]


@pytest.fixture
def linked(tmp_path: Path) -> Iterator[tuple[ShoeLink, WireShoe, Sink]]:
    """A link whose shoe has proven its boot (SPEC 3.4 item 6) and had HELLO and the REPLY
    acknowledged: window (BOOT, 2)."""
    yield from _proven(tmp_path, resend_ms=300)


@pytest.fixture
def linked_fast(tmp_path: Path) -> Iterator[tuple[ShoeLink, WireShoe, Sink]]:
    """As `linked`, with a shoe that resends within 100 ms and an ACK-path bound of 300 ms."""
    yield from _proven(tmp_path, resend_ms=50, resend_max_ms=100, ack_path_ms=300)


def _proven(tmp_path: Path, **kwargs: int) -> Iterator[tuple[ShoeLink, WireShoe, Sink]]:
    pty = PluggablePty(tmp_path / "tty")
    sink = Sink()
    link = ShoeLink(str(pty.path), lambda s: KEY if s == SERIAL else None, sink, epoch=EPOCH, **kwargs)
    shoe = WireShoe(pty)
    link.start()
    try:
        shoe.until("the port open", lambda: link.connected)
        shoe.send(hello(), 1)
        shoe.until("the PING challenge", lambda: bool(shoe.of(P.Ping)))
        ping = next(f for f in shoe.got if isinstance(f.message, P.Ping))
        shoe.send(P.Reply(epoch=ping.boot, seq=ping.seq, status=0, detail=0, oldest=1), 2)
        shoe.until("ACK of the REPLY", lambda: P.Ack(boot=BOOT, seq=2) in shoe.of(P.Ack))
        assert sink.journaled == [(BOOT, 1), (BOOT, 2)]
        shoe.got.clear()
        yield link, shoe, sink
    finally:
        link.stop()
        pty.close()


def test_a_gap_asks_for_exactly_the_first_missing_seq(linked: tuple[ShoeLink, WireShoe, Sink]) -> None:
    """SPEC 4: a frame whose seq is greater than the next expected is a gap, not accepted,
    answered RESEND_FROM(boot, next); a new boot whose first frame has seq > 1 is a gap from
    seq 1. Kills: RESEND_FROM one seq too early (or late)."""
    link, shoe, sink = linked
    shoe.send(beat(3), 3)
    shoe.until("ACK 3", lambda: P.Ack(boot=BOOT, seq=3) in shoe.of(P.Ack))
    shoe.send(beat(5), 5)  # 4 lost on the line
    shoe.until("RESEND_FROM", lambda: bool(shoe.of(P.ResendFrom)))
    assert shoe.of(P.ResendFrom) == [P.ResendFrom(boot=BOOT, seq=4)]
    assert (BOOT, 5) not in sink.journaled
    shoe.send(beat(4), 4, resent=True)
    shoe.send(beat(5), 5, resent=True)
    shoe.until("ACK 5", lambda: P.Ack(boot=BOOT, seq=5) in shoe.of(P.Ack))
    assert sink.journaled[2:] == [(BOOT, 3), (BOOT, 4), (BOOT, 5)]
    # The shoe reboots; the host hears seq 3 of the new boot first: a gap from seq 1.
    shoe.got.clear()
    shoe.send(beat(1), 3, boot=BOOT + 1)
    shoe.until("RESEND_FROM", lambda: bool(shoe.of(P.ResendFrom)))
    assert shoe.of(P.ResendFrom) == [P.ResendFrom(boot=BOOT + 1, seq=1)]


def test_a_duplicate_after_the_last_frame_is_acknowledged_at_once(linked: tuple[ShoeLink, WireShoe, Sink]) -> None:
    """SPEC 4: a frame at or below the last accepted is `replay`, dropped, and answered with
    a fresh ACK so the shoe stops resending; after the last card no later frame would bring
    that ACK. Kills: a duplicate not acknowledged."""
    link, shoe, sink = linked
    shoe.send(beat(3), 3)
    shoe.until("ACK 3", lambda: P.Ack(boot=BOOT, seq=3) in shoe.of(P.Ack))
    shoe.got.clear()
    shoe.send(beat(3), 3, resent=True)  # the ACK was lost: the shoe resends its last frame
    shoe.until("a fresh ACK", lambda: bool(shoe.of(P.Ack)), timeout=10)
    assert shoe.of(P.Ack) == [P.Ack(boot=BOOT, seq=3)]
    assert sink.journaled.count((BOOT, 3)) == 1  # journaled once, never twice


def test_a_resend_hit_by_line_noise_is_acknowledged_again(linked: tuple[ShoeLink, WireShoe, Sink]) -> None:
    """SPEC 4 (issue 11, defect C): the ACK of the shoe's last frame is lost, and so is the
    resend of that frame, hit by noise on the way (`bad_crc`, no readable header). The shoe
    cannot stop resending until an ACK arrives: noise from the shoe's line earns its proven
    shoe a fresh ACK of what is journaled. Kills: only an intact duplicate acknowledged."""
    link, shoe, sink = linked
    shoe.send(beat(3), 3)
    shoe.until("ACK 3", lambda: P.Ack(boot=BOOT, seq=3) in shoe.of(P.Ack))
    shoe.got.clear()
    shoe.pump(0.2)  # past the half resend period since the last noise ACK (none yet)
    wire = bytearray(P.encode_frame(beat(3), key=KEY, shoe=SERIAL, boot=BOOT, seq=3, flags=P.FLAG_RESENT))
    wire[20] ^= 0x04  # one bit flipped inside the frame: bad_crc (or an earlier framing check)
    assert 0 not in wire[1:-1]
    shoe.pty.write(bytes(wire))
    shoe.until("a fresh ACK", lambda: bool(shoe.of(P.Ack)), timeout=10)
    assert shoe.of(P.Ack) == [P.Ack(boot=BOOT, seq=3)]
    assert sink.journaled.count((BOOT, 3)) == 1


def test_a_frame_the_journal_refused_is_not_acknowledged_and_its_resend_is_taken(
        linked: tuple[ShoeLink, WireShoe, Sink]) -> None:
    """The link's contract (module docstring; SPEC 4 "ACK ... durable in the host's journal"):
    the window moves and the ACK goes only after the journal returns; a journal failure is
    not swallowed: no ACK, and the shoe's resend of the same frame is accepted then.
    Kills: the window moved before the journal commit; a journal failure swallowed."""
    link, shoe, sink = linked
    sink.refuse.add(3)
    shoe.send(beat(3), 3)
    shoe.until("the journal's refusal", lambda: sink.refused == [3])
    shoe.pump(0.5)
    assert not [a for a in shoe.of(P.Ack) if a.seq >= 3], shoe.of(P.Ack)
    shoe.send(beat(3), 3, resent=True)
    shoe.until("ACK 3", lambda: P.Ack(boot=BOOT, seq=3) in shoe.of(P.Ack))
    assert sink.journaled[2:] == [(BOOT, 3)]


def test_a_reply_naming_another_epoch_answers_nothing(linked: tuple[ShoeLink, WireShoe, Sink]) -> None:
    """SPEC 4: a host command is answered by the REPLY naming its (epoch, seq); a REPLY with
    the same seq under another epoch (a late answer to an earlier daemon) answers nothing,
    and the command is still resent. Kills: REPLY matched on seq without the epoch."""
    link, shoe, sink = linked
    cmd = link.send_command(SERIAL, P.Ping(nonce=77))
    shoe.until("the PING", lambda: P.Ping(nonce=77) in shoe.of(P.Ping))
    sent = next(f for f in shoe.got if f.message == P.Ping(nonce=77))
    shoe.send(P.Reply(epoch=EPOCH - 1, seq=sent.seq, status=0, detail=0, oldest=3), 3)
    shoe.until("ACK 3", lambda: P.Ack(boot=BOOT, seq=3) in shoe.of(P.Ack))
    assert not cmd.done.is_set() and link.pending_commands() == 1
    shoe.send(P.Reply(epoch=EPOCH, seq=sent.seq, status=0, detail=0, oldest=4), 4)
    assert cmd.done.wait(10)
    assert cmd.reply == P.Reply(epoch=EPOCH, seq=sent.seq, status=0, detail=0, oldest=4)


def test_a_recorded_reply_of_an_earlier_epoch_proves_nothing(tmp_path: Path) -> None:
    """SPEC 3.4 item 6: a shoe is trusted only once a REPLY names a command sent under this
    daemon's epoch; a REPLY of an earlier epoch (in any recording) proves nothing: the shoe's
    frames stay held, not journaled as accepted, not acknowledged.
    Kills: the proof's epoch not checked."""
    pty = PluggablePty(tmp_path / "tty")
    sink = Sink()
    link = ShoeLink(str(pty.path), lambda s: KEY if s == SERIAL else None, sink, epoch=EPOCH, resend_ms=300)
    shoe = WireShoe(pty)
    link.start()
    try:
        shoe.until("the port open", lambda: link.connected)
        shoe.send(hello(), 1)
        shoe.until("the PING challenge", lambda: bool(shoe.of(P.Ping)))
        ping = next(f for f in shoe.got if isinstance(f.message, P.Ping))
        shoe.send(P.Reply(epoch=EPOCH - 100, seq=ping.seq, status=0, detail=0, oldest=1), 2)
        shoe.pump(0.5)
        assert not shoe.of(P.Ack) and sink.journaled == [] and SERIAL not in link.trusted
        shoe.send(P.Reply(epoch=EPOCH, seq=ping.seq, status=0, detail=0, oldest=1), 3)
        shoe.until("ACK 3", lambda: P.Ack(boot=BOOT, seq=3) in shoe.of(P.Ack))
        assert sink.journaled == [(BOOT, 1), (BOOT, 2), (BOOT, 3)]
    finally:
        link.stop()
        pty.close()


def test_an_oldest_past_the_reply_never_puts_the_window_past_frames_to_come(tmp_path: Path) -> None:
    """SPEC 5 REPLY: `oldest` is at most the REPLY frame's own seq; the link takes a larger
    one (a shoe's wrong count) as that seq, so the window is never put past frames the shoe
    has yet to send: the REPLY and the frames after it are taken.
    Kills: `oldest` not clamped to the REPLY's seq."""
    pty = PluggablePty(tmp_path / "tty")
    sink = Sink()
    link = ShoeLink(str(pty.path), lambda s: KEY if s == SERIAL else None, sink, epoch=EPOCH, resend_ms=300)
    shoe = WireShoe(pty)
    link.start()
    try:
        shoe.until("the port open", lambda: link.connected)
        shoe.send(beat(1), 1)
        shoe.until("the PING challenge", lambda: bool(shoe.of(P.Ping)))
        ping = next(f for f in shoe.got if isinstance(f.message, P.Ping))
        shoe.send(P.Reply(epoch=EPOCH, seq=ping.seq, status=0, detail=0, oldest=9), 2)
        shoe.send(beat(3), 3)
        shoe.until("ACK 3", lambda: P.Ack(boot=BOOT, seq=3) in shoe.of(P.Ack))
        assert (BOOT, 2) in sink.journaled and (BOOT, 3) in sink.journaled
        assert not [a for a in shoe.of(P.Ack) if a.seq > 3], shoe.of(P.Ack)
    finally:
        link.stop()
        pty.close()


def key(n: int) -> P.Key:
    return P.Key(key=1, arg=0, t_ms=n)


def test_a_shoe_resending_acknowledged_frames_past_the_bound_is_reported_once_and_cleared_by_its_heartbeat(
        linked_fast: tuple[ShoeLink, WireShoe, Sink]) -> None:
    """Issue 20 item 4: the shoe resends its whole outbox, oldest first (SPEC 4), for as long as
    no ACK reaches it. Journaled frames still resent past the bound are reported once; the
    shoe's HEARTBEAT (sent only with its outbox empty) clears it. Kills: no report ever; a later
    frame of the same resend taken for a new oldest (the clock never runs out); no clearing."""
    link, shoe, sink = linked_fast
    for seq in (3, 4, 5):
        shoe.send(key(seq), seq)
    shoe.until("ACK 5", lambda: P.Ack(boot=BOOT, seq=5) in shoe.of(P.Ack))
    # The ACKs never reached the shoe: it resends 3, 4, 5 every 50 ms.
    end = time.monotonic() + 1.0
    while time.monotonic() < end and not sink.ack_path:
        for seq in (3, 4, 5):
            shoe.send(key(seq), seq, resent=True)
        shoe.pump(0.05)
    assert sink.ack_path == [("broken", BOOT, 3)]
    assert sink.journaled.count((BOOT, 3)) == 1
    for seq in (3, 4, 5):  # still resending: reported once, not per copy
        shoe.send(key(seq), seq, resent=True)
    shoe.pump(0.1)
    assert sink.ack_path == [("broken", BOOT, 3)]
    shoe.send(beat(6), 6)  # the ACKs pass again, the outbox drains: a HEARTBEAT
    shoe.until("ACK 6", lambda: P.Ack(boot=BOOT, seq=6) in shoe.of(P.Ack))
    assert sink.ack_path == [("broken", BOOT, 3), ("restored: heartbeat", BOOT, 3)]


def test_a_lost_ack_or_two_is_no_alarm(linked_fast: tuple[ShoeLink, WireShoe, Sink]) -> None:
    """One ACK lost costs one resend; the fresh ACK stops it. Frames resent within the bound,
    or resent again only after the shoe had dropped the earlier ones, raise nothing."""
    link, shoe, sink = linked_fast
    shoe.send(key(3), 3)
    shoe.send(key(3), 3, resent=True)
    shoe.pump(0.1)
    shoe.send(key(4), 4)
    shoe.pump(0.3)  # 3 is not resent again: it was acknowledged; 4's ACK is lost once
    shoe.send(key(4), 4, resent=True)
    shoe.pump(0.2)
    shoe.send(key(4), 4, resent=True)
    shoe.pump(0.1)
    assert sink.ack_path == []
    assert link.stats.duplicates == 3
