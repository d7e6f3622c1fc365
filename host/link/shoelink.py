"""The host end of the shoe link (protocol/SPEC.md sections 3-4).

Bytes from the serial transport go through the protocol's bounded `Receiver`; every
frame that comes out is either

- **accepted**: authenticated, new and next in sequence. The sink journals it (and the
  shoe's new window with it, in one transaction); only when that returns is the shoe's
  window moved and an ACK sent, so an ACK always means "committed to the journal";
- a **duplicate** (at or below the window: a resend of a frame already journaled): dropped,
  journaled as a `replay` rejection, and answered with a fresh ACK so the shoe stops;
- a **gap** (new but not next): not accepted, answered with RESEND_FROM(boot, next);
- **held** (SPEC 3.4 item 6): authenticated and new, but from a shoe whose current boot
  this daemon has not yet proven live. A host cannot tell a live stream from a recorded
  one by the frames alone, and its journal may be a restored backup, so at every daemon
  start every shoe is untrusted: its frames are journaled as held, never acted on and not
  acknowledged, and the host challenges it with a PING under its epoch (new at every
  start). The first authenticated REPLY naming a command of this epoch proves its frame's
  boot is the shoe's current one (no recording can name a command not yet sent), and
  names under its tag the first seq of that boot the shoe still holds (`oldest`): frames
  before it have left the shoe, so a copy of one is a recording, refused `replay` for the
  rest of the run. The window moves into that boot, the held frames go through the rules
  above in (boot, seq) order (so those of older boots, and those the shoe no longer
  holds, are `replay`), and the shoe is trusted for the run;
- **rejected** for one of the SPEC 3.1 reasons (bad CRC, bad tag, unknown shoe, ...):
  handed to the sink to be counted and journaled, never acted on. A frame hit by line
  noise (no readable header) is most often a shoe's resend of a frame already journaled
  whose ACK was lost on the same noisy line: every proven shoe on the port is acknowledged
  again (at most once per half resend period), so the shoe stops resending it. (Before,
  only an intact duplicate earned a fresh ACK: on a line where half the resends and a
  third of the ACKs are hit, a journaled frame was resent for seconds; issue 11, defect C.) An authenticated frame
  of an unknown type (or with a bad payload) that is next in sequence still moves the
  window and is acknowledged (SPEC 7), so the shoe does not resend it for ever.

**The ACK path** (issue 20 item 4): a proven shoe that keeps resending a frame this daemon
journaled and acknowledged is not getting the ACKs (a cable that drops the host's frames, or
an attacker who drops only ACK and RESEND_FROM). The link follows the oldest such frame the
shoe resends; when the shoe is still resending it `ack_path_ms` after it was first seen again
(a few heartbeats), the sink is told (`ack_path_broken`), and told again once the shoe's
outbox has drained (`ack_path_restored`: a HEARTBEAT, which the shoe sends only with nothing
left unacknowledged, or a new boot, which empties the outbox).

Host commands (NEW_SHOE, CONFIG, TIME, CLEAR, CARDS_FROM, ...) are queued and sent one at
a time, resent with the same (epoch, seq) and the RESENT flag, with the timeout doubling
from `resend_ms` to `resend_max_ms`, until the shoe's REPLY names them.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Protocol

from cardshoe.link.transport import LinkState, SerialTransport
from cardshoe.protocol.errors import Reason
from cardshoe.protocol.frames import Frame, KeyLookup, Receiver, Rejection, ReplayWindow, encode_frame
from cardshoe.protocol.messages import Ack, Heartbeat, Hello, Message, Ping, Reply, ResendFrom
from cardshoe.protocol.spec import FLAG_RESENT

log = logging.getLogger(__name__)

#: Rejections of an authenticated, new frame that still move the window (SPEC 7).
_ADVANCING = (Reason.UNKNOWN_TYPE, Reason.BAD_PAYLOAD)

#: Held frames kept in memory per untrusted shoe (each is journaled whether kept or not);
#: more than the shoe's outbox holds, and a flood of recorded frames cannot grow it.
MAX_HELD = 64


class LinkSink(Protocol):
    """What the link reports to (the daemon's table service)."""

    def frame_accepted(self, frame: Frame) -> None:
        """Journal `frame` durably (with the window); raise to withhold the ACK."""

    def frame_rejected(self, rejection: Rejection, note: str) -> None:
        """Count and journal a rejected frame; `note` adds the link's view (duplicate, gap)."""

    def link_state(self, state: LinkState) -> None:
        """The port was lost or came back."""

    def window_adopted(self, shoe: int, boot: int, seq: int) -> None:
        """A shoe never seen before starts at (boot, seq) rather than at seq 1 of its boot."""

    def frame_held(self, frame: Frame) -> None:
        """Journal an authenticated frame of a shoe not yet proven live; it is not acted on."""

    def shoe_challenged(self, shoe: int, epoch: int, seq: int) -> None:
        """A PING was sent to prove that shoe's current boot (SPEC 3.4 item 6)."""

    def shoe_verified(self, shoe: int, boot: int, epoch: int, seq: int, held: int) -> None:
        """A REPLY naming command (epoch, seq) proved `boot` is the shoe's current boot."""

    def command_answered(self, command: Command, reply: Reply | None) -> None:
        """A command got its REPLY (or None: abandoned when the link was stopped)."""

    def ack_path_broken(self, shoe: int, boot: int, seq: int, seconds: float, resends: int) -> None:
        """The shoe still resends (boot, seq), journaled and acknowledged, `seconds` after it was
        first seen again (`resends` copies): the ACKs are not reaching it."""

    def ack_path_restored(self, shoe: int, boot: int, seq: int, why: str) -> None:
        """The shoe's outbox has drained (`why`: its HEARTBEAT, or a new boot) after an alarm."""


@dataclass
class ResendWatch:
    """The oldest journaled frame a shoe is seen resending, followed for the ACK path."""

    boot: int
    seq: int
    first_ns: int
    last_ns: int
    copies: int = 1
    alarmed: bool = False


@dataclass
class Command:
    """A host command waiting for its REPLY."""

    shoe: int
    message: Message
    seq: int = 0
    seqs: set[int] = field(default_factory=set)
    resent_same: bool = False
    sent: int = 0
    next_at: float = 0.0
    timeout_s: float = 0.0
    reply: Reply | None = None
    done: threading.Event = field(default_factory=threading.Event)
    on_reply: Callable[[Command], None] | None = None
    crashes: int = 0
    """Times the shoe reported (CRASH, SPEC 5) that it crashed executing this command."""
    abandoned: str | None = None
    """Why it was given up unanswered (`shoe_crash_loop`), or None."""


@dataclass
class LinkStats:
    """Counters shown by the API and the benchmark."""

    frames_accepted: int = 0
    duplicates: int = 0
    gaps: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    acks_sent: int = 0
    resend_from_sent: int = 0
    commands_sent: int = 0
    commands_resent: int = 0
    link_lost: int = 0
    held: int = 0
    """Frames of shoes not yet proven live (SPEC 3.4 item 6), journaled, not acted on."""
    held_dropped: int = 0
    not_held: int = 0
    """Frames of a proven boot from before the first one the shoe still holds (recordings)."""
    ack_path_alarms: int = 0
    """Times a shoe kept resending a journaled, acknowledged frame past the bound."""


class ShoeLink:
    """One serial port to one (or, on a bus, several) shoes, from the host's side."""

    def __init__(
        self,
        url: str,
        keys: KeyLookup,
        sink: LinkSink,
        *,
        epoch: int,
        windows: dict[int, tuple[int, int]] | None = None,
        resend_ms: int = 300,
        resend_max_ms: int = 5000,
        journal_restored: bool = False,
        ack_path_ms: int | None = None,
    ) -> None:
        self.url = url
        self.keys = keys
        self.sink = sink
        self.epoch = epoch
        self.resend_s = resend_ms / 1000
        self.resend_max_s = resend_max_ms / 1000
        # A journaled frame still resent this long after it was first seen again: the ACKs are
        # not reaching the shoe (the daemon passes a few heartbeats; see `ack_path_limit_ms`).
        self.ack_path_ns = (ack_path_ms if ack_path_ms is not None else 2 * resend_max_ms) * 1_000_000
        self._resends: dict[int, ResendWatch] = {}
        self.windows: dict[int, ReplayWindow] = {
            shoe: ReplayWindow(boot, seq) for shoe, (boot, seq) in (windows or {}).items()
        }
        # Shoes this journal has accepted a frame from (the receiver adds empty windows to
        # `windows` for any shoe it decodes, so that cannot say it).
        # A journal restored from a backup (`journal_restored`) still rejects what is at or
        # below its windows, but its windows may lag the shoe's outbox (frames acknowledged
        # to the lost journal are gone), so they do not decide where a shoe is taken up.
        self.journal_restored = journal_restored
        self._known: set[int] = set() if journal_restored else set(self.windows)
        # SPEC 3.4 item 6: no shoe is trusted at start, whatever the journal says (it may be
        # a restored backup); a shoe is trusted once a REPLY proves its current boot.
        self.trusted: set[int] = set()
        self._held: dict[int, dict[tuple[int, int], Frame]] = {}
        self._challenged: set[int] = set()
        # Per verified shoe, (boot, oldest) from the REPLY that proved it: frames of that
        # boot before `oldest` have left the shoe, and a copy of one is a recording.
        self._floors: dict[int, tuple[int, int]] = {}
        # Seqs of commands sent to each shoe under this epoch: a REPLY naming one is fresh.
        self._asked: dict[int, set[int]] = {}
        # The receiver checks replay (SPEC 3.1 check 11, before 12-13) against these windows;
        # only the link moves them, once a frame is journaled.
        self.receiver = Receiver(keys, windows=self.windows)
        self.stats = LinkStats()
        self._seq = itertools.count(1)
        # Only a journal that knows no shoe (a new one) or one declared restored can have
        # lost the last epoch used; one that knows its shoes took an epoch above theirs.
        self._epoch_ready = bool(self.windows) and not journal_restored
        self._last_seq = 0
        self._lock = threading.RLock()
        self._commands: deque[Command] = deque()
        self._last_resend_from: dict[int, tuple[tuple[int, int], float]] = {}
        self._noise_ack_at = 0.0
        self._stop = threading.Event()
        self._timer = threading.Thread(target=self._tick, name="link-commands", daemon=True)
        self.transport = SerialTransport(url, self._on_bytes, self._on_state)

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        """Open the port (retrying) and start the command timer."""
        self.transport.start()
        self._timer.start()

    def stop(self) -> None:
        """Close the port and stop; pending commands are abandoned (reported as unanswered)."""
        self._stop.set()
        self.transport.stop()
        if self._timer.is_alive():
            self._timer.join(2)
        with self._lock:
            pending, self._commands = list(self._commands), deque()
        for cmd in pending:
            cmd.done.set()
            self.sink.command_answered(cmd, None)

    @property
    def connected(self) -> bool:
        """True while the port is open."""
        return bool(self.transport.connected)

    # -- sending ---------------------------------------------------------------------
    def _send(self, shoe: int, message: Message, *, seq: int | None = None, flags: int = 0) -> int:
        key = self.keys(shoe)
        if key is None:
            raise KeyError(f"shoe {shoe}: no key, cannot address it")
        with self._lock:
            self._epoch_over()
            if seq is None:
                seq = next(self._seq)
                self._last_seq = seq
            data = encode_frame(message, key=key, shoe=shoe, boot=self.epoch, seq=seq, flags=flags)
            self.transport.write(data)
        return seq

    def _epoch_over(self) -> None:
        """Send nothing under an epoch taken from the clock until its second is over (SPEC 3.3).

        A journal's epoch is the unix time in seconds at start. A daemon started on a new or
        restored journal within the same second as the last one would take the same epoch;
        then a recorded REPLY of the last run could name one of its commands and pass for
        the live shoe's (SPEC 3.4 item 6), and a NEW_SHOE could be sealed under a nonce
        already used (3.5). Once this second is over before the first frame goes out, any
        daemon started after a frame of this one exists takes a greater epoch. At most one
        second, once, at start, and only on a journal that knows no shoe or was declared
        restored: a journal that knows its shoes holds the epoch they last saw, and takes
        one above it (an unflagged restored backup is assumed older than a second).
        """
        if not self._epoch_ready:
            delay = self.epoch + 1 - time.time()
            if 0 < delay <= 1:  # (an epoch ahead of the clock came from the journal: unique)
                time.sleep(delay)
            self._epoch_ready = True

    def send_command(self, shoe: int, message: Message, on_reply: Callable[[Command], None] | None = None) -> Command:
        """Queue a host command; it is sent (and resent) until the shoe's REPLY names it."""
        cmd = Command(shoe, message, on_reply=on_reply)
        with self._lock:
            self._commands.append(cmd)
            if len(self._commands) == 1:
                self._transmit(cmd)
        return cmd

    def _transmit(self, cmd: Command) -> None:
        # Runs with the lock held. The first send takes a new seq; a resend keeps it with
        # RESENT set (SPEC 4): a shoe that executed it answers again from its reply cache
        # without executing it twice. But once a newer host frame (an ACK) has gone out, a
        # shoe that never got the command refuses that seq as a replay and stays silent; so
        # when a same-seq resend has gone unanswered for a whole timeout, the command is
        # issued again under a new seq. (Commands are idempotent for the shoe.)
        if cmd.seq == 0:
            cmd.seq = self._send(cmd.shoe, cmd.message)
            cmd.timeout_s = self.resend_s
            self.stats.commands_sent += 1
        elif cmd.seq == self._last_seq or not cmd.resent_same:
            self._send(cmd.shoe, cmd.message, seq=cmd.seq, flags=FLAG_RESENT)
            cmd.resent_same = True
            cmd.timeout_s = min(cmd.timeout_s * 2, self.resend_max_s)
            self.stats.commands_resent += 1
        else:
            cmd.seq = self._send(cmd.shoe, cmd.message)
            cmd.resent_same = False
            cmd.timeout_s = min(cmd.timeout_s * 2, self.resend_max_s)
            self.stats.commands_resent += 1
        cmd.sent += 1
        cmd.next_at = time.monotonic() + cmd.timeout_s
        cmd.seqs.add(cmd.seq)
        self._asked.setdefault(cmd.shoe, set()).add(cmd.seq)

    def _tick(self) -> None:
        while not self._stop.wait(0.02):
            with self._lock:
                if self._commands and self.transport.connected and time.monotonic() >= self._commands[0].next_at:
                    try:
                        self._transmit(self._commands[0])
                    except Exception:  # noqa: BLE001 - a command that cannot be encoded must not stop the timer
                        log.exception("link: cannot send command %r", self._commands[0].message)
                        self._commands.popleft()

    def crashing_command(self, shoe: int, epoch: int, seq: int, mtype: int) -> Command | None:
        """The command being sent to `shoe` if the shoe's CRASH (SPEC 5) names it (this
        epoch, one of its seqs, its type), else None (an older command, another epoch's)."""
        with self._lock:
            cmd = self._commands[0] if self._commands else None
            if (cmd is None or cmd.shoe != shoe or epoch != self.epoch or seq not in cmd.seqs
                    or int(cmd.message.TYPE) != mtype):
                return None
            cmd.crashes += 1
            return cmd

    def queued(self, shoe: int, mtype: int) -> list[Command]:
        """The commands of type `mtype` waiting to go to `shoe` (the one being sent included)."""
        with self._lock:
            return [c for c in self._commands if c.shoe == shoe and int(c.message.TYPE) == mtype]

    def abandon(self, cmd: Command, reason: str) -> bool:
        """Give up `cmd` unanswered (`reason`): off the queue, its waiters told
        (command_answered with no REPLY), the next command sent. False if it is not queued."""
        with self._lock:
            at = next((i for i, c in enumerate(self._commands) if c is cmd), None)  # by identity
            if at is None:
                return False
            head = at == 0
            del self._commands[at]
            cmd.abandoned = reason
            if head and self._commands:
                self._transmit(self._commands[0])
        cmd.done.set()
        self.sink.command_answered(cmd, None)
        if cmd.on_reply is not None:
            cmd.on_reply(cmd)
        return True

    def pending_commands(self) -> int:
        """Commands sent or queued and not yet answered."""
        with self._lock:
            return len(self._commands)

    # -- receiving -------------------------------------------------------------------
    def _on_state(self, state: LinkState) -> None:
        self.receiver.reset()
        if not state.up:
            self.stats.link_lost += 1
        self.sink.link_state(state)
        if state.up:
            with self._lock:
                if self._commands:
                    self._commands[0].next_at = 0.0  # resend at once on reconnect

    def _on_bytes(self, data: bytes) -> None:
        ack: dict[int, bool] = {}
        for item in self.receiver.feed(data):
            if isinstance(item, Frame):
                shoe = item.shoe
                if self._on_frame(item):
                    ack[shoe] = True
            else:
                self._on_rejection(item, ack)
        for shoe in ack:
            window = self.windows.get(shoe)
            if window is not None and window.seq:
                self._send(shoe, Ack(window.boot, window.seq))
                self.stats.acks_sent += 1

    def _window(self, shoe: int) -> ReplayWindow:
        window = self.windows.get(shoe)
        if window is None:
            window = self.windows[shoe] = ReplayWindow()
        return window

    def _on_frame(self, frame: Frame) -> bool:
        """Handle one decoded frame; True when the shoe should get an ACK."""
        if frame.shoe not in self.trusted:
            return self._on_untrusted(frame)
        adopted = frame.shoe not in self._known
        window = self._window(frame.shoe)
        self._known.add(frame.shoe)
        if adopted and not window.is_next(frame.boot, frame.seq):
            # Unreachable since the shoe became trusted (`_verify` places the window), but
            # kept so that a trusted shoe with no window never asks for frames forever.
            window.boot, window.seq = frame.boot, frame.seq - 1
            self.sink.window_adopted(frame.shoe, frame.boot, frame.seq)
        if not window.is_new(frame.boot, frame.seq):
            self.stats.duplicates += 1
            rejection = Rejection(Reason.REPLAY, frame.raw, frame.header,
                                  f"({frame.boot}, {frame.seq}) not after ({window.boot}, {window.seq})")
            self._reject(rejection, "duplicate" if frame.boot == window.boot else "old boot")
            if frame.boot == window.boot:
                self._resent(frame.shoe, frame.boot, frame.seq)
            return True
        if self._not_held(frame):
            return False
        if not window.is_next(frame.boot, frame.seq):
            self._gap(frame.shoe, frame.boot, window, frame.raw, frame)
            return False
        try:
            self.sink.frame_accepted(frame)
        except Exception as exc:  # noqa: BLE001 - not journaled means not acknowledged; the shoe resends
            log.error("link: frame (%d, %d) from shoe %d not journaled, not acknowledged: %s",
                      frame.boot, frame.seq, frame.shoe, exc)
            return False
        window.accept(frame.boot, frame.seq)
        self.stats.frames_accepted += 1
        if isinstance(frame.message, (Heartbeat, Hello)):
            self._drained(frame.shoe, "heartbeat" if isinstance(frame.message, Heartbeat) else "new boot")
        if isinstance(frame.message, Reply):
            self._answered(frame.message)
        return True

    def _on_untrusted(self, frame: Frame) -> bool:
        """SPEC 3.4 item 6: hold (journal, not act on, not acknowledge) until proven live."""
        shoe = frame.shoe
        window = self._window(shoe)
        if not window.is_new(frame.boot, frame.seq):
            # At or below the journal's window: a replay whatever else is true.
            self.stats.duplicates += 1
            rejection = Rejection(Reason.REPLAY, frame.raw, frame.header,
                                  f"({frame.boot}, {frame.seq}) not after ({window.boot}, {window.seq})")
            self._reject(rejection, "duplicate" if frame.boot == window.boot else "old boot")
            return True
        message = frame.message
        proof = (isinstance(message, Reply) and message.epoch == self.epoch
                 and message.seq in self._asked.get(shoe, ()))
        held = self._held.setdefault(shoe, {})
        key = (frame.boot, frame.seq)
        if key not in held and (len(held) < MAX_HELD or proof):
            held[key] = frame
            self.stats.held += 1
            try:
                self.sink.frame_held(frame)
            except Exception:  # noqa: BLE001 - a held frame is never acknowledged; it comes again
                log.exception("link: cannot journal a held frame")
        elif key not in held:
            self.stats.held_dropped += 1
        if proof:
            assert isinstance(message, Reply)
            self._verify(shoe, frame.boot, frame.seq, message)
            return True
        if shoe not in self._challenged:
            self._challenged.add(shoe)
            cmd = self.send_command(shoe, Ping(secrets.randbits(32)))
            self.sink.shoe_challenged(shoe, self.epoch, cmd.seq)
        return False

    def _verify(self, shoe: int, boot: int, seq: int, reply: Reply) -> None:
        """The REPLY of a frame of `boot` named a command of this epoch: `boot` is live.

        Under the same tag the REPLY names `oldest`, the first seq of `boot` the shoe still
        held (SPEC 3.4 item 6): frames of `boot` before it were acknowledged (to this
        journal or another) and have left the shoe, so a copy of one now is a recording.
        They are refused `replay` whatever the window says, for the rest of this run.
        `oldest` is at most the REPLY frame's own `seq` (SPEC 5); a larger one is taken as
        `seq`, so a wrong count can never put the window past the frames that follow.
        """
        held = self._held.pop(shoe, {})
        window = self._window(shoe)
        oldest = min(max(1, reply.oldest), seq)
        self._floors[shoe] = (boot, oldest)
        if window.boot != boot:
            if shoe in self._known:
                # The journal knows this shoe (it rebooted since): its whole boot is asked
                # for from seq 1; every earlier boot is now behind the window (`replay`).
                # (Should the shoe no longer hold seq 1, another journal took part of this
                # boot: the link asks and stalls, visibly, rather than skip it unflagged.)
                window.boot, window.seq = boot, 0
            else:
                # A shoe never journaled, already running: the frames before `oldest` were
                # acknowledged to another journal and have left its outbox. Its window
                # starts at the first frame the shoe proved it holds, journaled and shown.
                window.boot, window.seq = boot, oldest - 1
                if oldest > 1:
                    self.sink.window_adopted(shoe, boot, oldest)
        elif self.journal_restored and shoe not in self._known and oldest - 1 > window.seq:
            # Same boot as the restored window, but frames after it were acknowledged to
            # the lost journal (the shoe no longer holds them): taken up at `oldest`.
            window.seq = oldest - 1
            self.sink.window_adopted(shoe, boot, oldest)
        self.trusted.add(shoe)
        self._known.add(shoe)
        self.sink.shoe_verified(shoe, boot, reply.epoch, reply.seq, len(held))
        # The held frames through the ordinary rules, oldest first: those of older boots
        # and those the shoe no longer holds (a recording) are `replay`, the proven boot's
        # are accepted in order or asked for.
        for key in sorted(held):
            self._on_frame(held[key])

    def _not_held(self, frame: Frame) -> bool:
        """True (and the frame refused `replay`) when the shoe's REPLY proved it no longer
        holds this frame of its live boot, yet the window has not passed it (SPEC 3.4 item 6)."""
        floor = self._floors.get(frame.shoe)
        if floor is None or frame.boot != floor[0] or frame.seq >= floor[1]:
            return False
        self.stats.not_held += 1
        self._reject(Rejection(Reason.REPLAY, frame.raw, frame.header,
                               f"({frame.boot}, {frame.seq}) before ({floor[0]}, {floor[1]}), the first frame "
                               "the shoe still holds: a recording"), "not held")
        return True

    def _gap(self, shoe: int, boot: int, window: ReplayWindow, raw: bytes, frame: Frame | None) -> None:
        self.stats.gaps += 1
        want = (boot, window.seq + 1) if boot == window.boot else (boot, 1)
        if frame is not None:
            self._reject(Rejection(Reason.REPLAY, raw, frame.header, f"gap: expected seq {want[1]}"), "gap")
        last = self._last_resend_from.get(shoe)
        now = time.monotonic()
        if last is not None and last[0] == want and now - last[1] < self.resend_s / 2:
            return  # one RESEND_FROM per gap per half resend period: the burst behind it needs no more
        self._last_resend_from[shoe] = (want, now)
        self._send(shoe, ResendFrom(*want))
        self.stats.resend_from_sent += 1

    def _on_rejection(self, rejection: Rejection, ack: dict[int, bool]) -> None:
        header = rejection.header
        if header is None:
            self._ack_on_noise(ack)
        if rejection.reason is Reason.REPLAY and header is not None:
            # At or below the window: a resend of a journaled frame (answered with a fresh
            # ACK so the shoe stops), or a frame of an earlier boot (a replay attack or a
            # very late resend; the ACK names the current boot, so it acknowledges nothing).
            window = self._window(header.shoe)
            self.stats.duplicates += 1
            self._reject(rejection, "duplicate" if header.boot == window.boot else "old boot")
            ack[header.shoe] = True
            if header.boot == window.boot and header.shoe in self.trusted:
                self._resent(header.shoe, header.boot, header.seq)
            return
        if rejection.reason in _ADVANCING and header is not None and header.shoe not in self.trusted:
            # Authenticated and new, but not proven live: journaled, the window stays; once
            # the shoe is trusted, its resend moves the window (SPEC 7) like any other.
            self._reject(rejection, "unverified")
            return
        if rejection.reason in _ADVANCING and header is not None:
            window = self._window(header.shoe)
            if window.is_next(header.boot, header.seq):
                # SPEC 7: journaled, never acted on, but the window moves and it is acknowledged.
                try:
                    self.sink.frame_rejected(rejection, "advance")
                except Exception as exc:  # noqa: BLE001 - not journaled, not acknowledged
                    log.error("link: rejection not journaled: %s", exc)
                    return
                window.accept(header.boot, header.seq)
                ack[header.shoe] = True
                self.stats.rejected[rejection.reason.value] = self.stats.rejected.get(rejection.reason.value, 0) + 1
                return
            if window.is_new(header.boot, header.seq):
                self._gap(header.shoe, header.boot, window, rejection.raw, None)
        self._reject(rejection, "")

    def _resent(self, shoe: int, boot: int, seq: int) -> None:
        """A proven shoe resent (boot, seq), which this daemon journaled and acknowledged.

        One lost ACK costs one resend, answered with a fresh ACK; a shoe still resending the
        same frame `ack_path_ns` after it was first seen again is not getting the ACKs. The
        frame followed is the oldest the shoe resends: a later one seen meanwhile is the rest
        of the same resend burst, and replaces it only once the followed frame has not come
        back for two of the shoe's longest resend periods (it was acknowledged after all)."""
        now = time.monotonic_ns()
        watch = self._resends.get(shoe)
        stale = watch is not None and now - watch.last_ns > 2 * self.resend_max_s * 1e9
        if watch is None or watch.boot != boot or seq < watch.seq or (seq > watch.seq and stale):
            alarmed = watch is not None and watch.alarmed
            self._resends[shoe] = ResendWatch(boot, seq, now, now, alarmed=alarmed)
            return
        if seq > watch.seq:
            return
        watch.last_ns = now
        watch.copies += 1
        if not watch.alarmed and now - watch.first_ns >= self.ack_path_ns:
            watch.alarmed = True
            self.stats.ack_path_alarms += 1
            try:
                self.sink.ack_path_broken(shoe, boot, seq, (now - watch.first_ns) / 1e9, watch.copies)
            except Exception:  # noqa: BLE001 - the alarm must not stop the link; the sink logs its own failure
                log.exception("link: cannot report the ACK path")

    def _drained(self, shoe: int, why: str) -> None:
        """The shoe's outbox is empty (its HEARTBEAT) or was emptied (a new boot): the frames it
        resent are gone; an ACK-path alarm clears."""
        watch = self._resends.pop(shoe, None)
        if watch is not None and watch.alarmed:
            try:
                self.sink.ack_path_restored(shoe, watch.boot, watch.seq, why)
            except Exception:  # noqa: BLE001 - as above
                log.exception("link: cannot report the ACK path restored")

    def _ack_on_noise(self, ack: dict[int, bool]) -> None:
        """Line noise in place of a frame: acknowledge every proven shoe again (SPEC 4).

        The noise names no shoe; an ACK is idempotent and names the shoe's boot, and
        only a shoe this run has proven live (SPEC 3.4 item 6) is acknowledged, at its
        journal window, as for a duplicate. At most once per half resend period: a line
        of pure garbage costs one small frame per shoe that often, not one per burst."""
        now = time.monotonic()
        if now - self._noise_ack_at < self.resend_s / 2:
            return
        self._noise_ack_at = now
        for shoe in self.trusted:
            ack[shoe] = True

    def _reject(self, rejection: Rejection, note: str) -> None:
        key = rejection.reason.value if not note else f"{rejection.reason.value}:{note}"
        self.stats.rejected[key] = self.stats.rejected.get(key, 0) + 1
        try:
            self.sink.frame_rejected(rejection, note)
        except Exception:  # noqa: BLE001 - counting must not stop the link; the sink logs its own failure
            log.exception("link: cannot journal a rejection")

    def _answered(self, reply: Reply) -> None:
        with self._lock:
            if not self._commands:
                return
            cmd = self._commands[0]
            if reply.epoch != self.epoch or reply.seq not in cmd.seqs:
                return  # a late answer to a command already answered
            self._commands.popleft()
            cmd.reply = reply
            if self._commands:
                self._transmit(self._commands[0])
        cmd.done.set()
        self.sink.command_answered(cmd, reply)
        if cmd.on_reply is not None:
            cmd.on_reply(cmd)
