"""A scripted shoe for daemon tests: the firmware's own codec (firmware/lib/wire.py, run
under CPython) on the master side of a real pseudo-terminal.

It behaves as SPEC section 4 says a shoe does: every frame stays in its outbox until the
host ACKs it, the oldest unacknowledged frame is resent (RESENT set) after `resend_s`,
RESEND_FROM resends at once, commands are answered with REPLY (a resent command again from
the reply cache, never executed twice), NEW_SHOE starts a session, CARDS_FROM resends the
logged cards under new sequence numbers, and a reboot takes a new boot counter and starts
again with HELLO. Its card log survives a reboot, as the firmware's flash log does.

Faults for the tests: `drop_next` (a frame lost on the wire once), `send_raw` (bytes of
anyone's making), `plug` (the pty, to unplug and replug).
"""

from __future__ import annotations

import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import payloads  # firmware/lib on sys.path (tests/daemon/conftest.py)
import wire

from link_ptys import PluggablePty


@dataclass
class Sent:
    seq: int
    mtype: int
    payload: bytes


@dataclass
class LoggedCard:
    index: int
    mtype: int
    fields: tuple[Any, ...]


@dataclass
class ShoeState:
    """What the shoe keeps in flash: boot counter, session, card log, host window."""

    boot: int = 0
    shoe_no: int = 0
    deck_id: int = 0
    dealt: int = 0
    log: list[LoggedCard] = field(default_factory=list)
    host_epoch: int = 0
    host_seq: int = 0


class WireShoe:
    """A shoe speaking the wire protocol through the firmware's codec."""

    def __init__(self, plug: PluggablePty, serial: int, key: bytes, *, state: ShoeState | None = None,
                 resend_s: float = 0.1) -> None:
        self.plug = plug
        self.serial = serial
        self.key = key
        self.state = state or ShoeState()
        self.resend_s = resend_s
        self.enc = wire.Encoder(key, serial)
        self.out = bytearray(wire.OUT_SIZE)
        self.payload = bytearray(wire.MAX_PAYLOAD)
        self.lock = threading.RLock()
        self.outbox: list[Sent] = []
        self.seq = 0
        self.acked = threading.Condition(self.lock)
        self.replies: dict[tuple[int, int], tuple[int, int]] = {}
        self.commands: list[tuple[int, tuple[Any, ...]]] = []
        self.drop_next = 0
        self.deaf_to_commands = False
        # Every ACK and RESEND_FROM lost on the way to the shoe (issue 20 item 4).
        self.acks_lost = False
        # (status, detail) to answer every NEW_SHOE with instead of taking it, e.g. (1, 2):
        # REFUSED, bad manifest (SPEC 5).
        self.new_shoe_answer: tuple[int, int] | None = None
        # CARDS_FROM answered at once but its cards held back until `send_deferred` (a test's
        # way to have the shoe's new frames arrive first, as they do from a real shoe).
        self.defer_cards_from = False
        # Refuse NEW_SHOE "bad state" as the firmware does while cards of its log are not yet
        # framed (firmware/app/shoe.py `_new_shoe`).
        self.busy = False
        self.deferred: list[LoggedCard] = []
        self.sent_frames = 0
        self.resent_frames = 0
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_tx = 0.0
        self.rx: Any = None
        # Seconds between HEARTBEATs when the outbox is empty (as the firmware does), or None.
        self.heartbeat_s: float | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def power_on(self, *, reset_cause: int = 1) -> None:
        """Boot: new boot counter, seq restarts, HELLO first (SPEC 3.3, 4)."""
        with self.lock:
            self.state.boot += 1
            self.seq = 0
            self.outbox = []
            self.replies = {}  # the reply cache is in RAM (SPEC 4): lost at every boot
            self.rx = wire.Receiver(self.key, self.serial, self.state.host_epoch, self.state.host_seq)
            n = payloads.pack_hello(self.payload, 1, 0, 0, bytes(32), reset_cause, 2, self.state.shoe_no,
                                self.state.deck_id, self.state.dealt, 0, 0)
            self._queue(wire.HELLO, bytes(self.payload[:n]))
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def power_off(self) -> None:
        """Power cut: RAM (outbox, seq) is lost; the flash state stays."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        with self.lock:
            self.outbox = []

    def reboot(self) -> None:
        self.power_off()
        self.power_on(reset_cause=2)

    # -- dealing ---------------------------------------------------------------------------
    def ms(self) -> int:
        return int((time.monotonic() - self.t0) * 1000) & 0xFFFFFFFF

    def deal(self, code: int, *, raw: bytes | None = None, flags: int = 0, deck_id: int | None = None,
             send: bool = True) -> int:
        """A card leaves the shoe: logged (flash), then framed. Returns its index."""
        with self.lock:
            self.state.dealt += 1
            index = self.state.dealt
            deck = self.state.deck_id if deck_id is None else deck_id
            rawid = raw if raw is not None else f"CS{deck:08X}{code}".encode()[:16]
            fields = (self.state.shoe_no, index, deck, code, 2, 0, flags, self.ms(), rawid)
            self.state.log.append(LoggedCard(index, wire.CARD, fields))
            if send:
                self._send_logged(self.state.log[-1])
            return index

    def unread(self) -> int:
        with self.lock:
            self.state.dealt += 1
            index = self.state.dealt
            card = LoggedCard(index, wire.UNREAD, (self.state.shoe_no, index, self.ms()))
            self.state.log.append(card)
            self._send_logged(card)
            return index

    def _send_logged(self, card: LoggedCard) -> None:
        if card.mtype == wire.CARD:
            n = payloads.pack_card(self.payload, *card.fields)
        else:
            n = payloads.pack_unread(self.payload, *card.fields)
        self._queue(card.mtype, bytes(self.payload[:n]))

    def send_deferred(self) -> None:
        """Send the cards CARDS_FROM asked for while `defer_cards_from` held them back."""
        with self.lock:
            due, self.deferred = self.deferred, []
            for card in due:
                self._send_logged(card)

    def key_press(self, key: int) -> None:
        with self.lock:
            n = payloads.pack_key(self.payload, key, 0, self.ms())
            self._queue(wire.KEY, bytes(self.payload[:n]))

    def deck_status(self, reason: int, integrity: int, *, missing: int = 0) -> None:
        with self.lock:
            s = self.state
            n = payloads.pack_deck_status(self.payload, s.shoe_no, s.deck_id, reason, s.dealt, max(0, 52 - s.dealt),
                                      integrity, 0, 0, 0, missing, bytes(7))
            self._queue(wire.DECK_STATUS, bytes(self.payload[:n]))

    def send_raw(self, data: bytes) -> None:
        self.plug.write(data)

    def encode(self, mtype: int, payload: bytes, *, boot: int, seq: int, flags: int = 0,
               key: bytes | None = None, serial: int | None = None) -> bytes:
        """Wire bytes of any frame (for forged and replayed frames)."""
        enc = wire.Encoder(key or self.key, self.serial if serial is None else serial)
        out = bytearray(wire.OUT_SIZE)
        n = enc.encode(mtype, flags, boot, seq, payload, out)
        return bytes(out[:n])

    # -- the link ----------------------------------------------------------------------------
    def _queue(self, mtype: int, payload: bytes) -> None:
        self.seq += 1
        item = Sent(self.seq, mtype, payload)
        self.outbox.append(item)
        self._tx(item, resent=False)

    def _tx(self, item: Sent, *, resent: bool) -> None:
        n = self.enc.encode(item.mtype, wire.FLAG_RESENT if resent else 0, self.state.boot, item.seq,
                            item.payload, self.out)
        self._last_tx = time.monotonic()
        if resent:
            self.resent_frames += 1
        else:
            self.sent_frames += 1
        if self.drop_next > 0:
            self.drop_next -= 1
            return
        self.plug.write(bytes(self.out[:n]))

    def _run(self) -> None:
        while not self._stop.is_set():
            data = self.plug.read(0.02)
            with self.lock:
                if data and self.rx is not None:
                    for result in self.rx.feed(data):
                        self._host_frame(result)
                if self.outbox and time.monotonic() - self._last_tx > self.resend_s:
                    self._tx(self.outbox[0], resent=True)
                elif (not self.outbox and self.heartbeat_s is not None
                      and time.monotonic() - self._last_tx >= self.heartbeat_s):
                    n = payloads.pack_heartbeat(self.payload, self.ms(), self.state.dealt, 0)
                    self._queue(wire.HEARTBEAT, bytes(self.payload[:n]))

    def _host_frame(self, result: str) -> None:
        rx = self.rx
        if result == wire.REPLAY:
            cached = self.replies.get((rx.boot, rx.seq))
            if cached is not None:
                self._reply(rx.boot, rx.seq, *cached)
            return
        if result != wire.OK:
            return
        mtype, p = rx.mtype, bytes(rx.payload)
        self.state.host_epoch, self.state.host_seq = rx.boot, rx.seq
        if mtype in (wire.ACK, wire.RESEND_FROM):
            if self.acks_lost:
                return
            boot, seq = struct.unpack_from("<II", p)
            if boot != self.state.boot:
                return
            if mtype == wire.ACK:
                self.outbox = [s for s in self.outbox if s.seq > seq]
                self.acked.notify_all()
            else:
                for item in [s for s in self.outbox if s.seq >= seq]:
                    self._tx(item, resent=True)
            return
        if self.deaf_to_commands:
            return  # (a test's fault: the command is lost before the shoe acts on it)
        status = 0
        if mtype == wire.NEW_SHOE:
            shoe_no, deck_id, scheme, part, parts, count = payloads.unpack_new_shoe(p)
            self.commands.append((mtype, (shoe_no, deck_id, scheme, part, parts, count)))
            if self.new_shoe_answer is not None:
                self.replies[(rx.boot, rx.seq)] = self.new_shoe_answer
                self._reply(rx.boot, rx.seq, *self.new_shoe_answer)
                return
            if shoe_no == self.state.shoe_no and self.state.dealt or self.busy:
                status = 1  # REFUSED, bad state: that session is loaded and dealing (SPEC 4), or busy
            elif part == parts - 1:
                self.state.shoe_no, self.state.deck_id, self.state.dealt = shoe_no, deck_id, 0
                self.state.log = []
        elif mtype == wire.CARDS_FROM:
            shoe_no, index = payloads.unpack_cards_from(p)
            self.commands.append((mtype, (shoe_no, index)))
            if shoe_no == self.state.shoe_no:
                due = [card for card in self.state.log if card.index >= index]
                if self.defer_cards_from:
                    self.deferred += due
                for card in [] if self.defer_cards_from else due:
                    self._send_logged(card)
            else:
                status = 1
        else:
            self.commands.append((mtype, (p,)))
        detail = 1 if status == 1 else 0  # bad state, as the firmware answers
        self.replies[(rx.boot, rx.seq)] = (status, detail)
        self._reply(rx.boot, rx.seq, status, detail)

    def answer_again(self) -> None:
        """Answer the last command again from the reply cache, as the shoe does when the host
        resends a command whose REPLY was late (SPEC 4): a new REPLY frame, a new seq."""
        with self.lock:
            (epoch, seq), (status, detail) = list(self.replies.items())[-1]
            self._reply(epoch, seq, status, detail)

    def _reply(self, epoch: int, seq: int, status: int, detail: int) -> None:
        # oldest (SPEC 3.4 item 6): the first seq still held, this REPLY's own when none is.
        oldest = self.outbox[0].seq if self.outbox else self.seq + 1
        n = payloads.pack_reply(self.payload, epoch, seq, status, detail, oldest)
        self._queue(wire.REPLY, bytes(self.payload[:n]))

    # -- waiting -----------------------------------------------------------------------------
    def wait_acked(self, timeout: float = 5.0) -> None:
        """Until every frame sent so far is acknowledged (i.e. journaled by the daemon)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.outbox:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"shoe {self.serial}: {len(self.outbox)} frames unacknowledged "
                                       f"(first seq {self.outbox[0].seq} type 0x{self.outbox[0].mtype:02X})")
                self.acked.wait(min(left, 0.05))

    def wait_command(self, mtype: int, timeout: float = 5.0) -> tuple[Any, ...]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for kind, args in self.commands:
                    if kind == mtype:
                        return args
            time.sleep(0.01)
        raise TimeoutError(f"no command 0x{mtype:02X} received")
