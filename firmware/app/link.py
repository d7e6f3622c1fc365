"""Host frames in: the replay window, ACK and RESEND_FROM, commands and their REPLY.

The wire codec's receiver checks each frame (COBS, CRC, version, flags, shoe, tag,
direction, then replay against its window). Here (SPEC section 3.3) the window is
the last accepted host `(epoch, seq)`: kept in RAM and written to flash with every
state-changing command (the store saves it with the command's own state), so a
recorded command replayed after a reboot is still refused.

The host resends a command whose REPLY it did not get, with the same `(epoch, seq)`:
that is a replay, so it is not executed again, but the REPLY it earned is repeated
(SPEC 4): while that REPLY is still in the outbox, the held frame itself goes out again
(`Outbox.resend`); only once it has been acknowledged is a copy pushed, and never into
the REPLY slots (app/outbox.py). A host that still has no answer issues the command again
under a new seq; the same command again (type and payload) while the REPLY to the last
one is held is answered by that REPLY again, not executed again. Before, every resend
pushed another copy: on a noisy line the copies filled the outbox, and a restarted
daemon's PING found no slot for its REPLY (issue 11, defect A).

A new command is only taken when the outbox has a slot for its REPLY: otherwise the
window is moved back (for it and every frame after it in the same read) so the host's
resend is taken later. ACK and RESEND_FROM frames after it in that read still take
effect (they are idempotent and name the shoe's boot), so a full outbox drains; and a
RESEND_FROM(boot, n) also acknowledges every frame before n, since the host asks from
the first frame it has not journaled (SPEC 4).
"""

import struct

import wire
from micropython import const

from app.mem import ctx
from app.outbox import REPLY_SLOTS

_CACHE = const(4)
_SAME_MAX = const(16)  # commands up to this payload size are recognised when issued again
_REPLY_UNSUPPORTED = const(2)
# SPEC 5 types, here as consts: wire's public names are not loaded on the shoe (lib/payloads.py).
_REPLY = const(0x08)
_ACK = const(0x81)
_RESEND_FROM = const(0x82)


class Link:
    """Dispatch host frames; `handler.command(type, payload, n)` returns (status, detail)."""

    def __init__(self, store, outbox, handler):
        self.store = store
        self.outbox = outbox
        self.handler = handler
        self.rx = None
        self.epoch = store.epoch
        self.seq = store.hseq
        self.replays = 0
        self.ignored = 0  # authenticated frames of unknown type or bad payload, or naming an older boot
        self.rejected = 0  # frames the codec refused (noise, bad tag ...): rx.counts by reason
        self._reply = bytearray(14)
        self._c_epoch = [0] * _CACHE
        self._c_seq = [0] * _CACHE
        self._c_result = bytearray(_CACHE * 2)
        self._c_frame = [0] * _CACHE  # the seq of the outbox frame that carried the REPLY
        self._c_next = 0
        # The last command executed: type, epoch, payload, and the seq of its REPLY frame.
        self._l_type = 0
        self._l_epoch = 0
        self._l_len = -1
        self._l_payload = bytearray(_SAME_MAX)
        self._l_frame = 0
        self._stalled = False

    def attach(self, key, serial, enc=None):
        """Make the receiver for this shoe's key, its window from flash (`enc`: the shoe's
        Encoder, whose HMAC and AES context the receiver shares)."""
        self.epoch = self.store.epoch
        self.seq = self.store.hseq
        self.rx = wire.Receiver(key, serial, self.epoch, self.seq, False, enc)

    def feed(self, buf, n):
        """Bytes from the serial line."""
        rx = self.rx
        self._stalled = False
        while True:
            result = rx.take(buf, n)  # no generator per read: rx.feed's would be garbage
            if result is None:
                return
            new = result == "ok" or result == "unknown_type" or result == "bad_payload"
            if self._stalled and new:
                # A command before this one waits for room: nothing after it may move the
                # window past it, or its resend would look like a replay. An ACK or
                # RESEND_FROM still takes effect (idempotent; it names the shoe's boot).
                if result == "ok" and rx.mtype <= _RESEND_FROM:
                    self._link_control(rx.mtype, rx.payload)
                rx.last_boot = self.epoch
                rx.last_seq = self.seq
            elif result == "ok":
                self._frame(rx.mtype, rx.boot, rx.seq, rx.payload)
            elif result == "replay":
                self.replays += 1
                self._replayed(rx.mtype, rx.boot, rx.seq)
            elif new:
                # unknown_type or bad_payload: authenticated and new, never acted on (SPEC
                # 3.1); a command is answered UNSUPPORTED so the host stops resending it (SPEC 4).
                self.ignored += 1
                if rx.mtype > _RESEND_FROM:  # a command, known or not
                    self._frame(rx.mtype, rx.boot, rx.seq, None)
                else:
                    self._accept(rx.boot, rx.seq)
            else:
                self.rejected += 1

    def _accept(self, epoch, seq):
        self.epoch = epoch
        self.seq = seq
        # RAM copy; written to flash by the next state save (state-changing commands).
        self.store.epoch = epoch
        self.store.hseq = seq

    def _frame(self, mtype, epoch, seq, payload):
        if mtype == _ACK or mtype == _RESEND_FROM:
            self._accept(epoch, seq)
            self._link_control(mtype, payload)
            return
        if payload is not None and self._same_as_last(mtype, epoch, payload):
            # The host issued the last command again under a new seq (SPEC 4: its same-seq
            # resend went unanswered): the REPLY it earned is still held, so that frame goes
            # out again; executing it again would take another slot for the same answer.
            self._accept(epoch, seq)
            self.outbox.resend(self._l_frame)
            return
        # The REPLY slots (app/outbox.py) are for the first command of a newer epoch: a
        # restarted host's PING, which must be answered before that host acknowledges
        # anything (SPEC 3.4 item 6). A host's later commands leave them free, so no number
        # of its REPLYs left unacknowledged when it died can keep the next one from a slot.
        if self.outbox.free() <= (0 if epoch > self._l_epoch else REPLY_SLOTS) or not self.handler.ready(mtype):
            # No slot for the REPLY, or the shoe cannot take it yet: forget we saw it (and
            # what follows it); the host resends it.
            self.rx.last_boot = self.epoch
            self.rx.last_seq = self.seq
            self._stalled = True
            return
        self._accept(epoch, seq)
        self._l_epoch = epoch
        if payload is None:  # rejected unknown_type or bad_payload
            status, detail = _REPLY_UNSUPPORTED, 0
            self._l_len = -1
        else:
            n = len(payload)
            # The command being executed, for a crash record (app/crash.py): a command that
            # crashes the shoe is reported in the next boot's CRASH frame, and the host
            # stops resending it (SPEC 4, "A command that crashes the shoe").
            c = ctx
            c[5] = mtype
            struct.pack_into("<II", c, 8, epoch, seq)
            status, detail = self.handler.command(mtype, payload, n)
            c[5] = 0
            self._l_type = mtype
            self._l_len = n if n <= _SAME_MAX else -1
            lp = self._l_payload
            for j in range(n if n <= _SAME_MAX else 0):
                lp[j] = payload[j]
        self._command_done(epoch, seq, status, detail)

    def _link_control(self, mtype, payload):
        """ACK or RESEND_FROM: free what the host has journaled, resend what it asks for."""
        # boot, seq (u32 each) byte by byte: struct.unpack_from would make a tuple per ACK
        boot = payload[0] | payload[1] << 8 | payload[2] << 16 | payload[3] << 24
        upto = payload[4] | payload[5] << 8 | payload[6] << 16 | payload[7] << 24
        if boot != self.store.boot:
            self.ignored += 1  # names an earlier boot of the shoe: acknowledges nothing now
        elif mtype == _ACK:
            self.outbox.ack(upto)
        else:
            # The host asks from the first frame it has not journaled: the ones before it
            # are journaled, as an ACK would say (SPEC 4). ACKs are lost on a noisy line
            # like any frame; this one says the same.
            self.outbox.ack(upto - 1)
            self.outbox.resend_from(upto)

    def _same_as_last(self, mtype, epoch, payload):
        """True when this command is the last one executed, again (type, epoch, payload),
        and the REPLY to it is still held in the outbox."""
        n = self._l_len
        if n < 0 or mtype != self._l_type or epoch != self._l_epoch or len(payload) != n:
            return False
        ob = self.outbox
        if not ob.acked < self._l_frame < ob.next_seq:
            return False
        lp = self._l_payload
        for j in range(n):
            if payload[j] != lp[j]:
                return False
        return True

    def _command_done(self, epoch, seq, status, detail):
        self._accept(epoch, seq)
        i = self._c_next
        self._c_next = (i + 1) % _CACHE
        self._c_epoch[i] = epoch
        self._c_seq[i] = seq
        self._c_result[2 * i] = status
        self._c_result[2 * i + 1] = detail
        self._c_frame[i] = self._l_frame = self._send_reply(epoch, seq, status, detail, 0)

    def _replayed(self, mtype, epoch, seq):
        if mtype <= _RESEND_FROM:  # ACK and RESEND_FROM are never answered
            return
        for i in range(_CACHE):
            if self._c_epoch[i] == epoch and self._c_seq[i] == seq and (epoch or seq):
                # The REPLY still held goes out again from its slot; once acknowledged (the
                # host has it, this resend crossed the ACK) a copy, outside the REPLY slots.
                if not self.outbox.resend(self._c_frame[i]):
                    f = self._send_reply(epoch, seq, self._c_result[2 * i], self._c_result[2 * i + 1], REPLY_SLOTS)
                    if f:
                        self._c_frame[i] = f
                return

    def _send_reply(self, epoch, seq, status, detail, keep):
        """Push a REPLY if more than `keep` slots are free; returns its frame's seq (0: none)."""
        # `oldest` (SPEC 3.4 item 6): the first seq of this boot the outbox still holds,
        # this REPLY included; every frame before it was acknowledged and is gone, so a
        # host proving this boot live refuses a recording of those as `replay`.
        struct.pack_into("<IIBBI", self._reply, 0, epoch, seq, status, detail, self.outbox.acked + 1)
        if self.outbox.free() > keep:
            return self.outbox.push(_REPLY, self._reply, 14)
        return 0
