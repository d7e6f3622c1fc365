"""The outbox: every shoe frame, kept until the host's cumulative ACK (SPEC section 4).

A fixed ring of preallocated slots holds the decoded payload, type and seq of each
frame not yet acknowledged. Frames are encoded when sent (the RESENT flag changes the
header, hence the tag and CRC), by the `emit(type, flags, seq, buf, off, n)` callable
the link gives: the payload is `buf[off:off + n]` (the ring's own buffer, passed whole:
a slice would be a new view per frame). No slot is ever overwritten before its ACK: when the ring is full the
caller must wait (cards wait in the flash log, commands are resent by the host).

The last `REPLY_SLOTS` slots are for the REPLY to the first command of a newer host
epoch (SPEC 4, "Outbox full"): a restarted daemon acknowledges nothing until the REPLY to
its PING proves the shoe live (SPEC 3.4 item 6), so that REPLY must find a slot however
full the outbox is. Cards, keys and deck status stop `REPLY_SLOTS + 1` short of full,
FAULTs and the REPLYs to a host's later commands `REPLY_SLOTS` short, and a REPLY repeated
for a resent command goes out again from its own slot (`resend`) rather than taking
another (app/link.py). Two slots: the daemon before may have died unproven holding one.
"""

import time

from micropython import const

from app.mem import take

_SLOTS = const(16)
# The largest shoe-to-host payload is HELLO's 51 bytes (CARD at most 35): slots need no more.
_PAYLOAD_MAX = const(52)
_FLAG_RESENT = const(1)
# Slots only a REPLY to a new command may take (see above); shoe.py and link.py read it.
REPLY_SLOTS = 2


class Outbox:
    def __init__(self, emit, slots=_SLOTS, resend_ms=300, resend_max_ms=5000):
        self._emit = emit
        self.size = slots
        # One buffer for all slots, handed whole to `emit` with the slot's offset (a view
        # per slot kept for ever would cost more heap than the slots themselves on a 64-bit
        # port, and one made per frame is garbage).
        self.buf = take(_PAYLOAD_MAX * slots)
        self._types = bytearray(slots)
        self._lens = bytearray(slots)
        self._head = 0  # slot of the oldest unacknowledged frame
        self.count = 0
        self.next_seq = 1
        self.acked = 0  # every seq <= acked is acknowledged
        self.resend_ms = resend_ms
        self.resend_max_ms = resend_max_ms
        self._backoff = resend_ms
        self.ticks = time.ticks_ms  # replaceable clock (tests)
        self._last_tx = self.ticks()  # when anything was last sent (heartbeat, resends)
        self.resent = 0  # frames retransmitted (service data)

    def free(self):
        return self.size - self.count

    def push(self, mtype, payload, n):
        """Queue and send a new frame; returns its seq (the caller checked free())."""
        if self.count >= self.size:
            raise OverflowError("outbox full")
        buf = self.buf
        o = (self._head + self.count) % self.size * _PAYLOAD_MAX
        for i in range(n):
            buf[o + i] = payload[i]
        return self.push_in_place(mtype, n)

    def reserve_payload(self):
        """Where to build the next payload in place: its offset in `buf` (_PAYLOAD_MAX bytes)."""
        return (self._head + self.count) % self.size * _PAYLOAD_MAX

    def push_in_place(self, mtype, n):
        """Send the frame whose payload was built in `reserve_payload()`; returns its seq."""
        slot = (self._head + self.count) % self.size
        self._types[slot] = mtype
        self._lens[slot] = n
        seq = self.next_seq
        self.next_seq += 1
        if self.count == 0:
            self._backoff = self.resend_ms  # the resend clock starts with the oldest frame
        self.count += 1
        self._send(slot, seq, 0)
        return seq

    def _send(self, slot, seq, flags):
        self._last_tx = self.ticks()
        self._emit(self._types[slot], flags, seq, self.buf, slot * _PAYLOAD_MAX, self._lens[slot])

    def ack(self, seq):
        """Cumulative ACK up to `seq`: free those slots. Returns how many were freed."""
        if seq >= self.next_seq or seq <= self.acked:
            return 0  # an ACK of a frame never sent, or an old one
        freed = seq - self.acked
        self.acked = seq
        self._head = (self._head + freed) % self.size
        self.count -= freed
        self._backoff = self.resend_ms
        self._last_tx = self.ticks()  # progress: give the rest a full timeout
        return freed

    def resend_from(self, seq):
        """RESEND_FROM: retransmit every held frame from `seq` on, now."""
        first = self.acked + 1
        if seq < first:
            seq = first
        while seq < self.next_seq:
            slot = (self._head + seq - first) % self.size
            self.resent += 1
            self._send(slot, seq, _FLAG_RESENT)
            seq += 1
        self._backoff = self.resend_ms

    def resend(self, seq):
        """Retransmit the held frame `seq` now (RESENT set); False when it is not held
        (acknowledged, or never sent)."""
        if not self.acked < seq < self.next_seq:
            return False
        self.resent += 1
        self._send((self._head + seq - self.acked - 1) % self.size, seq, _FLAG_RESENT)
        return True

    def service(self, now):
        """Resend every held frame, oldest first, when the ACK is overdue, doubling the wait
        each time (SPEC 4).

        Every held frame, not only the oldest: when the oldest's ACK was lost, or the host's
        RESEND_FROM after a gap, resending only the oldest gave one frame per timeout, each
        half lost again on a noisy line, while the frames behind it waited (issue 11, defect
        C: a journaled frame resent for seconds, about 1 card/s). Now the host takes the
        frames behind it from the same resend, and its cumulative ACK covers the oldest too."""
        if not self.count or time.ticks_diff(now, self._last_tx) < self._backoff:
            return False
        seq = self.acked + 1
        for i in range(self.count):
            self.resent += 1
            self._send((self._head + i) % self.size, seq + i, _FLAG_RESENT)
        self._backoff = min(self._backoff * 2, self.resend_max_ms)
        return True
