"""The daemon at one table: the journal, the table service, the shoe link, wired together.

`Daemon.start()` opens the journal, takes a new host epoch (SPEC 3.3), rebuilds the table
from the journal (the same path `cardshoe replay` takes; a restart is a replay), restores
each shoe's replay window, and opens the serial port. From then on:

- the link hands accepted frames to the service, which journals them before the ACK;
- rejected frames, link losses and returns, and host commands are journaled as
  observations (link events are also published on the event stream);
- a shoe's HELLO gets TIME and CONFIG; a HELLO reporting cards the journal lacks, or a card
  that arrives ahead of a missing one, gets CARDS_FROM.
- no shoe's frames are acted on before it has answered a command of this epoch (SPEC 3.4
  item 6: the link holds them and PINGs it), since the journal may be a restored backup;
- a HELLO rejected `bad_version` is shown as "shoe speaks protocol N, daemon speaks VERSION" and
  that shoe is not loaded (SPEC 7) until it speaks this version (VERSION);
- a shoe session is this journal's own: its `shoe_no` is the journal's random base plus a
  counter (never the session the shoe reports as its current one), journaled as a
  `shoe_loading` input before NEW_SHOE goes out; the core places only that session's cards
  (issue 20 item 3). A HELLO naming that session when its REPLY was lost across a shoe reboot
  starts it in the core, so the NEW_SHOE's reissue, REFUSED because cards were dealt, is no
  failure;
- a load that fails (refused, or unanswered for `stall_limit_ns`) is an alarm (`shoe_load`)
  until a load succeeds; a shoe in a session this journal did not start is one
  (`shoe_session`) until it is loaded; a shoe that keeps resending frames already journaled
  and acknowledged is one (`ack_path`) until its outbox drains;
- a port that cannot be opened or is lost, and an open port with no valid frame for a
  heartbeat period and a half, are alarms (`alarms` in /status, a link event, a WARNING)
  that clear themselves when the port opens or the shoe is heard (a watch thread keeps
  the time);
- a command the shoe reports (CRASH) it crashed executing is sent again once; a second
  crash gives it up with the `shoe_crash_loop` alarm (`cardshoe.daemon.crashloop`);
- rejected frames are journaled as a few samples per reason per second and one counted
  summary (`cardshoe.daemon.rejections`), so noise cannot grow the journal without bound;
- the journal is locked for this daemon alone (`JournalLocked` names the holder); a journal
  that cannot be used raises a `JournalError` subclass at start, and one that fails while
  running calls the `on_fatal` callbacks (`cardshoe run` then exits 6 to be restarted).
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from cardshoe.daemon.bus import SECURITY_REASONS, EventBus, streamable
from cardshoe.daemon.rejections import RejectionLimiter
from cardshoe.daemon.config import TableConfig, read_floor_public_key, read_floor_token
from cardshoe.daemon.control import TableControl
from cardshoe.daemon import crashloop
from cardshoe.daemon.core import Derived, TableCore
from cardshoe.daemon.gamingday import GamingDays, policy_of
from cardshoe.daemon.service import FrameInput, ServiceFailed, TableService
from cardshoe.floor.client import FloorClient
from cardshoe.floor.shipper import Shipper
from cardshoe.journal import Journal, JournalError, now_ns
from cardshoe.journal.store import classify
from cardshoe.journal.replay import ReplayReport, restore
from cardshoe.link import Command, LinkState, ShoeLink
from cardshoe.protocol.frames import Frame, KeyLookup, Rejection
from cardshoe.protocol.messages import (
    CardsFrom,
    Clear,
    Maintenance,
    Config,
    ManifestEntry,
    Message,
    NewShoe,
    Reply,
    Time,
    message_fields,
)
from cardshoe.protocol.errors import Reason
from cardshoe.protocol.spec import MAX_PAYLOAD, VERSION, MessageType

log = logging.getLogger(__name__)

#: Rejected frames journaled whole per second (at most REJECT_PER_REASON of each reason);
#: the rest are counted in a summary.
REJECT_SAMPLES = 24
REJECT_PER_REASON = 8
#: Rejections sampled outside REJECT_SAMPLES (each still REJECT_PER_REASON a second): the
#: security ones the stream shows, so that noise of every other kind cannot crowd them out.
SECURITY_KEYS = frozenset({*SECURITY_REASONS, "replay:old boot"})

#: NEW_SHOE's fixed part before the manifest entries (`<IIBBBB`).
_NEW_SHOE_HEAD = 12


class CachedKeys:
    """Shoe keys from the key store, cached; a missing key is looked up again after `retry_s`."""

    def __init__(self, load: Callable[[int], bytes | None], retry_s: float = 5.0) -> None:
        self._load = load
        self._retry = retry_s
        self._keys: dict[int, bytes] = {}
        self._missing: dict[int, float] = {}
        self._lock = threading.Lock()

    def __call__(self, shoe: int) -> bytes | None:
        with self._lock:
            key = self._keys.get(shoe)
            if key is not None:
                return key
            miss = self._missing.get(shoe)
            if miss is not None and time.monotonic() - miss < self._retry:
                return None
        key = self._load(shoe)
        with self._lock:
            if key is None:
                self._missing[shoe] = time.monotonic()
            else:
                self._keys[shoe] = key
                self._missing.pop(shoe, None)
        return key


def keystore_keys(directory: Path | None) -> KeyLookup:
    """Key lookup through `cardshoe.keys.KeyStore` (the files `cardshoe flash` wrote).

    A key file that cannot be used (readable by others, not 64 hex characters) is treated
    as no key, so that shoe's frames are rejected `unknown_shoe`, and logged as an error:
    a leaked key must not authenticate anything."""
    from cardshoe.keys import KeyStore, KeyStoreError

    store = KeyStore(directory) if directory is not None else KeyStore()

    def load(serial: int) -> bytes | None:
        try:
            return store.load(serial)
        except KeyStoreError as exc:
            log.error("shoe %d: key refused: %s", serial, exc)
            return None

    return CachedKeys(load)


def manifest_parts(shoe_no: int, deck_id: int, entries: list[ManifestEntry]) -> list[NewShoe]:
    """An RFID manifest split into NEW_SHOE parts that each fit one frame (SPEC 5)."""
    parts: list[list[ManifestEntry]] = [[]]
    size = _NEW_SHOE_HEAD
    for entry in entries:
        need = 2 + len(entry.uid)
        if size + need > MAX_PAYLOAD:
            parts.append([])
            size = _NEW_SHOE_HEAD
        parts[-1].append(entry)
        size += need
    return [NewShoe(shoe_no, deck_id, 1, i, len(parts), tuple(p)) for i, p in enumerate(parts)]


@dataclass
class ShoeCommandResult:
    """The outcome of a command the daemon sent to a shoe."""

    command: str
    status: int | None
    detail: int | None


#: How many times a NEW_SHOE refused "bad state" by a busy shoe is sent again.
RELOAD_TRIES = 5
#: A journal's shoe numbers are its base plus a counter; the base is drawn once per journal
#: from [SHOE_NO_LOW, SHOE_NO_HIGH) (kept in its meta), leaving 2^24 numbers above it.
SHOE_NO_LOW = 0x0001_0000
SHOE_NO_HIGH = 0xFF00_0000
#: The heartbeat periods a stall may last before it is an alarm (the ACK path, an unanswered
#: NEW_SHOE); at least two of the shoe's longest resend periods (see `stall_limit_ns`).
STALL_HEARTBEATS = 3


class Daemon:
    """One table's daemon; also the link's sink."""

    def __init__(self, config: TableConfig, *, keys: KeyLookup, clock: Callable[[], int] = now_ns,
                 randbelow: Callable[[int], int] | None = None, synchronous: str = "FULL",
                 journal_restored: bool = False, floor: FloorClient | None = None,
                 monotonic: Callable[[], int] = time.monotonic_ns) -> None:
        self.config = config
        # The gaming day's clock beside `clock` (issue 25: a stepped wall clock is seen against it).
        self._monotonic = monotonic
        self.days: GamingDays | None = None
        # The floor (issue 14): the journal shipped to it, the linked progressive settled by it.
        self.floor = floor
        self.shipper: Shipper | None = None
        self.synchronous = synchronous
        self.journal_restored = journal_restored
        self.keys = keys
        self.clock = clock
        self.bus = EventBus()
        self.journal: Journal | None = None
        self.service: TableService | None = None
        self.control: TableControl | None = None
        self.link: ShoeLink | None = None
        self.epoch = 0
        self.restored: ReplayReport | None = None
        self.shoe_serial: int | None = None
        self.link_up = False
        self.link_changed_ns = 0
        self._randbelow = randbelow
        # NEW_SHOEs sent and not yet answered OK: shoe serial -> (shoe_no, deck_id).
        self._loading: dict[int, tuple[int, int]] = {}
        self._loading_since: dict[int, int] = {}  # monotonic ns: when that NEW_SHOE was sent
        # NEW_SHOEs the shoe refused "bad state" while busy, to send again at its next
        # HEARTBEAT: shoe serial -> (the parts, how many times refused).
        self._reload: dict[int, tuple[list[NewShoe], int]] = {}
        self._load_parts: dict[int, list[NewShoe]] = {}
        self._load_refusals: dict[int, int] = {}  # the load in `_loading`: refusals so far
        # Shoes whose HELLO was rejected `bad_version`: serial -> the version it speaks (SPEC 7).
        self.version_mismatch: dict[int, int] = {}
        # The journal failed while running: the process should end (exit 6) and be restarted.
        self.fatal: BaseException | None = None
        self._fatal_callbacks: list[Callable[[BaseException], None]] = []
        # Alarms shown in /status until their cause is gone: "port" (cannot open / lost),
        # "shoe_silent" (no valid frame for a heartbeat and a half while the port is open),
        # "ack_path" (journaled frames resent past the bound), "shoe_load" (a NEW_SHOE
        # refused or unanswered) and "shoe_crash_loop:<shoe>:<command>" (a command given up:
        # it crashed the shoe; see cardshoe.daemon.crashloop). (`shoe_session`, a shoe in
        # another journal's session, is read from the core: see `session_alarms`.)
        self.alarms: dict[str, dict[str, Any]] = {}
        self._alarm_lock = threading.Lock()
        self.crash_watch = crashloop.CrashWatch()
        self._heard_ns = 0  # monotonic: the last valid frame, or the port's opening if later
        self._watch_stop = threading.Event()
        self._watch: threading.Thread | None = None
        # Rejected frames: a few samples per interval journaled whole, the rest counted.
        self.rejections = RejectionLimiter(interval_s=1.0, samples=REJECT_SAMPLES,
                                           per_reason=REJECT_PER_REASON, security=SECURITY_KEYS)
        self._rejections_lock = threading.Lock()
        # Evidence files being written for progressive hits (issue 14 item 5), joined at stop.
        self._evidence_threads: list[threading.Thread] = []
        self.evidence_files: dict[str, Path] = {}
        # The shift's live figures and hold alarm (cardshoe.report.live), made at start.
        self.live: Any = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        """Open the journal, rebuild the table from it, and start the link.

        A journal that cannot be used raises a `JournalError` subclass that says why in
        one line (`JournalLocked`, `JournalUnreadable`, `JournalReadOnly`,
        `JournalWriteFailed`), with the journal closed again."""
        try:
            self._start()
        except BaseException as exc:
            self.stop()
            cause: BaseException = exc
            if isinstance(exc, ServiceFailed) and exc.__cause__ is not None:
                cause = exc.__cause__  # the journal write that failed during the start
            if isinstance(cause, (sqlite3.Error, OSError, JournalError)):
                raise classify(self.config.journal, cause) from exc
            raise

    def on_fatal(self, callback: Callable[[BaseException], None]) -> None:
        """Call `callback` once if the journal fails while running (the process should end)."""
        self._fatal_callbacks.append(callback)

    def _journal_failed(self, exc: BaseException) -> None:
        self.fatal = exc
        for callback in list(self._fatal_callbacks):
            callback(exc)

    def _start(self) -> None:
        policy = policy_of(self.config)
        if policy is not None:
            # A file per gaming day (issue 25): the day's by the clock, or the day before if it
            # was not closed (it finishes first).
            self.days = GamingDays(self, policy, self._monotonic)
            self.config = dataclasses.replace(self.config, journal=self.days.choose())
        cfg = self.config
        self.journal = Journal(cfg.journal, synchronous=self.synchronous,
                               holder=f"cardshoe run, table {cfg.name}, port {cfg.port}")
        self.epoch = self.journal.start_epoch()
        with self.journal.reader() as journal_meta:
            # Fixed at the journal's creation: its rounds' ids are unique across journals
            # (None for a journal made before: it keeps its ids, TABLE-NNNNNN).
            scope = journal_meta.meta("round_scope")
        wanted = dataclasses.replace(cfg.setup(), round_scope=scope)
        # From the latest good checkpoint, replaying only what follows it (issue 15); a damaged
        # or mismatching one is not used: the whole journal is replayed, with a WARNING.
        self.restored, core, warning = restore(cfg.journal, TableCore(wanted))
        if warning is not None:
            log.warning("journal checkpoint not used: %s", warning)
        for problem in self.restored.mismatches:
            log.error("journal rebuild: %s", problem)
        self.live = self._live_shift()
        self.service = TableService(core, self.journal, self.bus, clock=self.clock, on_derived=self._on_derived,
                                    on_failed=self._journal_failed, on_published=self._published)
        if self.journal_restored:
            # A journal restored from a backup is another history than the one the floor may hold
            # beyond the backup: it gets a new id, and its shipper opens a stream of its own that
            # continues the old one where both agree (docs/floor.md, "A restored journal").
            old_id, new_id, top = self.journal.restored()
            log.warning("journal restored from a backup: journal %s continues %s from entry %d", new_id, old_id, top)
        if self.floor is None and cfg.floor_url is not None:
            with self.journal.reader() as journal_meta:
                journal_id = journal_meta.meta("journal_id")
            self.floor = FloorClient(cfg.floor_url, read_floor_token(cfg), cfg.name, cfg.floor_link, cfg.game,
                                     journal_id=journal_id, public_key=read_floor_public_key(cfg))
        kwargs: dict[str, Any] = {"draw_magic": cfg.draw_magic, "floor": self.floor}
        if self._randbelow is not None:
            kwargs["randbelow"] = self._randbelow
        self.control = TableControl(self.service, **kwargs)
        self.service.record("daemon", {
            "type": "daemon_started", "epoch": self.epoch, "port": cfg.port,
            "restored_inputs": self.restored.inputs, "rebuild_mismatches": len(self.restored.mismatches),
            "journal_restored": self.journal_restored,
        }, publish=True)
        if (self.restored.inputs == 0 and self.restored.started_from is None) or core.setup != wanted:
            self.service.submit_input({"action": "setup", **wanted.to_json()})
        self.service.since_checkpoint += self.restored.inputs
        if self.service.since_checkpoint >= self.service.checkpoint_every:
            self.service.checkpoint()  # a journal without a recent one: the next start is fast
        if self.days is not None:
            self.service.before_open = self.days.tick
            # A new day's opening (and the shoe handed over to it), or the rollover of a day
            # reopened because it was not closed, before any frame is taken (issue 25).
            self.days.started()
            cfg = self.config
        with self.journal.reader() as reader:
            windows = reader.windows()
        if windows and self.shoe_serial is None and len(windows) == 1:
            self.shoe_serial = next(iter(windows))
        self.link = ShoeLink(cfg.port, self.keys, self, epoch=self.epoch, windows=windows,
                             resend_ms=cfg.link.resend_ms, resend_max_ms=cfg.link.resend_max_ms,
                             journal_restored=self.journal_restored, ack_path_ms=self.stall_limit_ns() // 1_000_000)
        self.link.start()
        if self.days is not None:
            self.shipper = self.days.start_shipping()  # the closed day's end first, then this day
        elif self.floor is not None:
            self.shipper = Shipper(cfg.journal, self.floor)
            self.shipper.start()
        self._watch = threading.Thread(target=self._watch_loop, name="daemon-watch", daemon=True)
        self._watch.start()
        # A previous run may have died between learning that the shoe holds cards the journal
        # lacks and getting them: ask again (the shoe will not send another HELLO for it).
        with self.service.lock:
            missing = [(shoe, s.shoe_no, s.missing_from()) for shoe, s in core.shoes.items()]
        for shoe, shoe_no, first in missing:
            if first is not None and self.keys(shoe) is not None:
                log.warning("shoe %d: the journal lacks cards from index %d of shoe %d; asking again",
                            shoe, first, shoe_no)
                self.link.send_command(shoe, CardsFrom(shoe_no, first))

    # -- the live shift report (issue 23 items 4, 6) ----------------------------------------
    def _live_shift(self) -> Any:
        """The shift's figures, fed the journal so far, then every entry as it is published."""
        from cardshoe.report.alarm import AlarmPolicy
        from cardshoe.report.live import LiveShift

        cfg = self.config
        live = LiveShift(cfg.name, policy=AlarmPolicy(z=cfg.alarm_z, min_rounds=cfg.alarm_min_rounds,
                                                      sides=cfg.alarm_sides),
                         clock=self.clock, on_alarm=self._hold_alarm)
        path = cfg.journal

        def backlog() -> Iterable[Any]:
            # Read in the live figures' own thread: a start does not wait for the history (issue 15).
            from cardshoe.journal import JournalReader

            with JournalReader(path) as reader:
                yield from reader.entries(("event", "settlement"))

        live.start(backlog)
        return live

    def _published(self, published: list[Any]) -> None:
        live = getattr(self, "live", None)
        if live is not None:
            for item in published:
                live.feed(item)

    def _hold_alarm(self, kind: str, alarm: Any) -> None:
        """A hold alarm raised or cleared: journaled with its figures, shown on the stream, logged."""
        if self.service is None:
            return
        if kind == "hold_alarm":
            log.warning("hold alarm: %s", alarm.get("message"))
        self.service.record("daemon", {**dict(alarm), "type": kind}, publish=True)

    def stop(self) -> None:
        """Stop the link, then drain and close the journal. Safe to call more than once."""
        live = getattr(self, "live", None)
        if live is not None:
            live.stop()
        for thread in list(self._evidence_threads):
            thread.join(30)  # an evidence file being written is finished and journaled first
        self._watch_stop.set()
        if self._watch is not None and self._watch is not threading.current_thread():
            self._watch.join(5)
        if self.link is not None:
            self.link.stop()
        if self.shipper is not None:
            self.shipper.stop()
        for finishing in self.days.finishing if self.days is not None else []:
            finishing.stop()
        if self.service is not None and self.journal is not None and not self.journal.closed:
            self.flush_rejections()
        if self.service is not None and self.journal is not None and not self.journal.closed:
            self.service.record("daemon", {"type": "daemon_stopped", "epoch": self.epoch})
            if self.service.since_checkpoint > 0:
                try:
                    self.service.checkpoint()  # the next start replays nothing
                except ServiceFailed:
                    pass  # logged critically; the next start replays from the previous checkpoint
        if self.journal is not None:
            self.journal.close()

    def _svc(self) -> TableService:
        if self.service is None:
            raise RuntimeError("daemon not started")
        return self.service

    # -- LinkSink --------------------------------------------------------------------
    def frame_accepted(self, frame: Frame) -> None:
        """Journal and apply an accepted frame (raises if it could not be journaled)."""
        self._heard(frame.shoe)
        if self.shoe_serial is None:
            self.shoe_serial = frame.shoe
        if self.version_mismatch.pop(frame.shoe, None) is not None:
            log.info("shoe %d: speaks protocol %d again", frame.shoe, VERSION)
        message = {"type": frame.type.name, **message_fields(frame.message)}
        if frame.type is MessageType.HELLO:
            message["boot"] = frame.boot
        self._svc().submit_frame(FrameInput(frame.shoe, frame.boot, frame.seq, int(frame.type), message, frame.raw))
        if frame.type is MessageType.HEARTBEAT and frame.shoe in self._reload:
            self._load_again(frame.shoe)

    def frame_rejected(self, rejection: Rejection, note: str) -> None:
        """Count a rejected frame; journal it whole if it is one of the interval's samples.

        Rejections are bounded (see `cardshoe.daemon.rejections`): a few per interval are
        journaled whole, logged (security reasons at WARNING, naming shoe and seq) and
        shown; the rest are counted into one summary entry per interval. The exception is
        an authenticated, next-in-sequence frame the link acknowledges (`advance`, SPEC 7):
        it is journaled whole before its ACK, whatever the rate (only the shoe makes those)."""
        header = rejection.header
        body: dict[str, Any] = {"type": "frame_rejected", "reason": rejection.reason.value,
                                "detail": rejection.detail, "note": note}
        if header is not None:
            body.update(boot=header.boot, seq=header.seq, frame_type=header.type, flags=header.flags)
        shoe = header.shoe if header is not None else None
        security = streamable("reject", body)
        if shoe is not None and note in ("advance", "duplicate"):
            self._heard(shoe)  # authenticated, of the shoe's current boot: the shoe is talking
        if note == "advance":
            self._svc().record("reject", body, shoe=shoe, raw=rejection.raw, publish=security)
            return
        key = rejection.reason.value if not note else f"{rejection.reason.value}:{note}"
        with self._rejections_lock:
            sample, ended = self.rejections.admit(key, shoe, time.monotonic_ns())
        if ended is not None:
            self._record_summary(ended)
        if sample:
            if security:
                where = "no readable header" if header is None else \
                    f"shoe {header.shoe} boot {header.boot} seq {header.seq} type 0x{header.type:02X}"
                log.warning("security: frame rejected (%s) from %s %s", rejection.reason.value, where,
                            rejection.detail)
            self._svc().record("reject", body, shoe=shoe, raw=rejection.raw, publish=security)
        if rejection.reason is Reason.BAD_VERSION and header is not None and header.type == MessageType.HELLO:
            self._version_mismatch(header.shoe, header.version)

    def flush_rejections(self) -> None:
        """Journal the summary of the rejections counted so far in this interval, if any."""
        with self._rejections_lock:
            ended = self.rejections.take(time.monotonic_ns(), force=True)
        if ended is not None:
            self._record_summary(ended)

    def _record_summary(self, summary: dict[str, Any]) -> None:
        # Monotonic bounds are for the interval's length; the entry's own time stamp is wall time.
        seconds = (summary["to_ns"] - summary["from_ns"]) / 1e9
        unsampled = sum(summary["unsampled"].values())
        security = streamable("reject", summary)
        (log.warning if security else log.info)(
            "link: %d more frames rejected in %.1f s, counted not journaled: %s", unsampled, seconds,
            ", ".join(f"{k} {v}" for k, v in summary["unsampled"].items()))
        body = {k: v for k, v in summary.items() if k not in ("from_ns", "to_ns")}
        body["seconds"] = round(seconds, 3)
        self._svc().record("reject", body, publish=security)

    def _version_mismatch(self, shoe: int, version: int) -> None:
        # SPEC 7. The version byte is checked before the tag, so this HELLO is not
        # authenticated: it stops this daemon dealing to the shoe (it could not be understood
        # anyway) until an authenticated frame of this version arrives, and acts on nothing else.
        # Journaled once per (shoe, version), and only for a shoe this table has a key for:
        # a flood of such HELLOs (the serial is the sender's choice) adds nothing.
        if self.version_mismatch.get(shoe) == version or self.keys(shoe) is None:
            return
        text = f"shoe speaks protocol {version}, daemon speaks {VERSION}"
        log.error("shoe %d: %s; not dealing to it", shoe, text)
        self._svc().record("link", {"type": "shoe_version_mismatch", "shoe": shoe, "shoe_version": version,
                                    "daemon_version": VERSION, "message": text}, shoe=shoe, publish=True)
        # Shown in /status only once logged and journaled: whoever sees it there finds both.
        self.version_mismatch[shoe] = version

    def frame_held(self, frame: Frame) -> None:
        """Journal a frame of a shoe not yet proven live (SPEC 3.4 item 6): never acted on."""
        body = {"type": "frame_held", "reason": "unverified", "note": "held",
                "detail": "shoe's current boot not yet proven live (SPEC 3.4 item 6)",
                "boot": frame.boot, "seq": frame.seq, "frame_type": int(frame.type), "flags": frame.flags,
                "message": {"type": frame.type.name, **message_fields(frame.message)}}
        self._svc().record("reject", body, shoe=frame.shoe, raw=frame.raw)

    def shoe_challenged(self, shoe: int, epoch: int, seq: int) -> None:
        """The link PINGed an untrusted shoe: journal and show it."""
        log.info("shoe %d: not yet proven live; PING sent as (%d, %d)", shoe, epoch, seq)
        self._svc().record("link", {"type": "shoe_challenged", "shoe": shoe, "epoch": epoch, "seq": seq},
                           shoe=shoe, publish=True)

    def shoe_verified(self, shoe: int, boot: int, epoch: int, seq: int, held: int) -> None:
        """A REPLY to a command of this epoch proved the shoe's current boot."""
        log.info("shoe %d: boot %d proven live by its REPLY to (%d, %d); %d frames were held",
                 shoe, boot, epoch, seq, held)
        self._svc().record("link", {"type": "shoe_verified", "shoe": shoe, "boot": boot, "epoch": epoch,
                                    "seq": seq, "held": held}, shoe=shoe, publish=True)

    def link_state(self, state: LinkState) -> None:
        """Journal, log and publish the port's loss or return (or that it cannot be opened);
        a port that is not open is an alarm in /status until it opens."""
        self.link_up = state.up
        self.link_changed_ns = state.t_ns
        (log.info if state.up else log.warning)("link %s: %s", "up" if state.up else "lost", state.detail)
        with self._alarm_lock:
            if state.up:
                self.alarms.pop("port", None)
                self._heard_ns = time.monotonic_ns()  # silence is counted from the port's opening
            else:
                self.alarms["port"] = {"type": "port_unavailable", "port": self.config.port, "detail": state.detail,
                                       "since_ns": state.t_ns, "message": f"shoe port unavailable: {state.detail}"}
        self._svc().record("link", {"type": "link_up" if state.up else "link_lost", "detail": state.detail,
                                    "at_ns": state.t_ns}, publish=True)

    # -- alarms ------------------------------------------------------------------------
    def silence_limit_ns(self) -> int:
        """No valid frame for this long, with the port open, is a silent shoe: a heartbeat
        period and a half (the period the daemon gives the shoe in CONFIG)."""
        return self.config.link.heartbeat_ms * 1_500_000

    def stall_limit_ns(self) -> int:
        """How long a stall may last before it is an alarm: a shoe resending frames already
        journaled and acknowledged (`ack_path`), a NEW_SHOE unanswered (`shoe_load`). A few
        heartbeats (`STALL_HEARTBEATS`), and at least two of the shoe's longest resend periods,
        so that one lost ACK, or a few on a noisy line, never raise it (SPEC 3.6)."""
        t = self.config.link
        return max(STALL_HEARTBEATS * t.heartbeat_ms, 2 * t.resend_max_ms) * 1_000_000

    def ack_path_broken(self, shoe: int, boot: int, seq: int, seconds: float, resends: int) -> None:
        """The shoe keeps resending a frame journaled and acknowledged: its ACKs are not reaching
        it (a cable that drops the host's frames, or someone dropping them). The `ack_path`
        alarm, journaled and on the stream, until the shoe's outbox drains (issue 20 item 4)."""
        message = (f"shoe {shoe} still resends frame ({boot}, {seq}), journaled and acknowledged, {seconds:.1f} s "
                   f"after it first came again ({resends} copies): the daemon's ACKs are not reaching the shoe; "
                   "check the cable (its frames are journaled; none is lost)")
        alarm = {"type": "ack_path", "shoe": shoe, "boot": boot, "seq": seq, "resends": resends,
                 "since_ns": self.clock() - int(seconds * 1e9), "message": message}
        log.warning("ack path: %s", message)
        self._svc().record("link", alarm, shoe=shoe, publish=True)
        with self._alarm_lock:  # shown once logged and journaled
            self.alarms["ack_path"] = alarm

    def ack_path_restored(self, shoe: int, boot: int, seq: int, why: str) -> None:
        """The shoe's outbox drained after an `ack_path` alarm: it clears."""
        with self._alarm_lock:
            alarm = self.alarms.get("ack_path")
        log.warning("shoe %d: ACK path working again (%s)", shoe, why)
        self._svc().record("link", {"type": "ack_path_cleared", "shoe": shoe, "boot": boot, "seq": seq, "why": why,
                                    "since_ns": None if alarm is None else alarm["since_ns"]}, shoe=shoe, publish=True)
        with self._alarm_lock:  # cleared once journaled
            self.alarms.pop("ack_path", None)

    def _heard(self, shoe: int) -> None:
        """A valid frame from `shoe`: the silence clock restarts, and a silence alarm clears."""
        with self._alarm_lock:
            self._heard_ns = time.monotonic_ns()
            alarm = self.alarms.pop("shoe_silent", None)
        if alarm is not None:
            log.warning("shoe %d: heard again after %.1f s of silence", shoe,
                        (self.clock() - int(alarm["since_ns"])) / 1e9)
            self._svc().record("link", {"type": "shoe_silent_cleared", "shoe": shoe,
                                        "silent_since_ns": alarm["since_ns"]}, shoe=shoe, publish=True)

    def check_silence(self) -> None:
        """Raise the silence alarm if the open port has carried no valid frame for too long."""
        limit = self.silence_limit_ns()
        with self._alarm_lock:
            if not self.link_up or "shoe_silent" in self.alarms or self._heard_ns == 0:
                return
            quiet = time.monotonic_ns() - self._heard_ns
            if quiet <= limit:
                return
            since = self.clock() - quiet
            shoe = self.shoe_serial
            message = (f"no valid frame from {'shoe ' + str(shoe) if shoe is not None else 'any shoe'} for "
                       f"{quiet / 1e9:.1f} s (heartbeat every {self.config.link.heartbeat_ms / 1000:g} s)")
            alarm = {"type": "shoe_silent", "shoe": shoe, "port": self.config.port, "since_ns": since,
                     "heartbeat_ms": self.config.link.heartbeat_ms, "message": message}
            self.alarms["shoe_silent"] = alarm
        log.warning("shoe silent: %s", message)
        self._svc().record("link", alarm, shoe=shoe, publish=True)

    def _watch_loop(self) -> None:
        # The daemon's clock for what no input triggers: silence, and the end of an interval
        # of counted rejections (its summary is journaled even if nothing else arrives).
        while not self._watch_stop.wait(0.1):
            try:
                self.check_silence()
                self.check_loading()
                if self.days is not None and self.service is not None and self.service.failed is None:
                    self.days.tick()  # the gaming day's rollover, when due and the table is idle
                with self._rejections_lock:
                    ended = self.rejections.take(time.monotonic_ns())
                if ended is not None:
                    self._record_summary(ended)
            except Exception:  # noqa: BLE001 - the watch must outlive a failure it reports
                log.exception("daemon watch")

    def window_adopted(self, shoe: int, boot: int, seq: int) -> None:
        """A shoe unknown to this journal was found mid-boot: journal and show it."""
        log.warning("shoe %d: first seen at boot %d seq %d; its window starts there", shoe, boot, seq)
        self._svc().record("link", {"type": "window_adopted", "shoe": shoe, "boot": boot, "seq": seq},
                           shoe=shoe, publish=True)

    def command_answered(self, command: Command, reply: Reply | None) -> None:
        """Journal a command's outcome; a stored manifest's last part loads the shoe."""
        name = command.message.TYPE.name
        body: dict[str, Any] = {"type": "command_reply" if reply else "command_abandoned", "command": name,
                                "epoch": self.epoch, "seq": command.seq, "sends": command.sent}
        if reply is not None:
            body.update(status=reply.status, detail=reply.detail)
        if command.abandoned is not None:
            body.update(reason=command.abandoned, crashes=command.crashes)
        self._svc().record("command", body, shoe=command.shoe, publish=streamable("command", body))
        msg = command.message
        if command.abandoned is not None and isinstance(msg, NewShoe):
            # Given up (the shoe crashed on it): nothing sends this load again.
            if self._loading.get(command.shoe) == (msg.shoe_no, msg.deck_id):
                del self._loading[command.shoe]
                self._loading_since.pop(command.shoe, None)
            self._reload.pop(command.shoe, None)
        if reply is not None:
            cleared = self.crash_watch.answered(command.shoe, int(msg.TYPE), reply.status)
            if cleared is not None:
                self._crash_alarm_cleared(command.shoe, cleared, f"the shoe answered {name} OK")
        if not isinstance(msg, NewShoe) or reply is None:
            return
        if reply.status == 0 and msg.part == msg.parts - 1:
            with self._svc().lock:
                session = self._svc().core.shoes.get(command.shoe)
                started = session is not None and session.shoe_no == msg.shoe_no
            if not started:
                self._svc().submit_input({"action": "shoe_loaded", "shoe": command.shoe,
                                          "shoe_no": msg.shoe_no, "deck_id": msg.deck_id})
            self._load_done(command.shoe, msg.shoe_no)
        elif reply.status == 1 and reply.detail == 1:
            self._new_shoe_refused(command.shoe, msg)
        elif reply.status != 0 and self._loading.get(command.shoe) == (msg.shoe_no, msg.deck_id):
            why = {(1, 2): "bad manifest", (1, 3): "storage error", (2, 0): "unsupported"}.get(
                (reply.status, reply.detail), f"status {reply.status} detail {reply.detail}")
            self._load_failed(command.shoe, msg.shoe_no, msg.deck_id, why.replace(" ", "_"),
                              f"NEW_SHOE {msg.shoe_no} (deck {msg.deck_id}, part {msg.part + 1} of {msg.parts}) "
                              f"refused by shoe {command.shoe}: {why}; the shoe is not loaded")

    def _new_shoe_refused(self, shoe: int, msg: NewShoe) -> None:
        # SPEC 4: a NEW_SHOE reissued under a new seq after the first copy ran (its REPLY
        # lost, with the reply cache, across a shoe reboot) is REFUSED "bad state" once a
        # card of that session is dealt. The shoe's HELLO already named the session, and
        # `_on_derived` reconciled it; then the refusal is the first copy's success.
        with self._svc().lock:
            session = self._svc().core.shoes.get(shoe)
            loaded = session is not None and (session.shoe_no, session.deck_id) == (msg.shoe_no, msg.deck_id)
        if loaded:
            self._load_done(shoe, msg.shoe_no)
            log.info("shoe %d: NEW_SHOE %d refused as already loaded; the session runs", shoe, msg.shoe_no)
            self._svc().record("command", {"type": "new_shoe_already_loaded", "shoe_no": msg.shoe_no,
                                           "deck_id": msg.deck_id}, shoe=shoe, publish=True)
            return
        parts = self._load_parts.get(shoe)
        if self._loading.get(shoe) != (msg.shoe_no, msg.deck_id) or not parts or parts[-1] != msg:
            return  # an older load, superseded by a newer one
        # A shoe still framing cards of its session from its log (after a reboot's CARDS_FROM,
        # or with its outbox full) refuses a new session, so as not to lose them: the load is
        # sent again when the shoe's HEARTBEAT says its outbox is empty (SPEC 4), a few times;
        # without this the load waited for ever (issue 11 soak).
        refused = self._load_refusals[shoe] = self._load_refusals.get(shoe, 0) + 1
        if refused > RELOAD_TRIES:
            self._reload.pop(shoe, None)
            self._svc().record("command", {"type": "new_shoe_refused", "shoe_no": msg.shoe_no, "deck_id": msg.deck_id,
                                           "refused": refused}, shoe=shoe, publish=True)
            self._load_failed(shoe, msg.shoe_no, msg.deck_id, "bad_state",
                              f"NEW_SHOE {msg.shoe_no} (deck {msg.deck_id}) refused {refused} times by shoe {shoe} "
                              "(bad state: the shoe is busy with its session); the shoe is not loaded")
            return
        self._reload[shoe] = (parts, refused)
        self._loading_since[shoe] = time.monotonic_ns()  # waiting for the shoe's heartbeat now
        log.info("shoe %d: NEW_SHOE %d refused (bad state, the shoe is busy); sent again at its next heartbeat",
                 shoe, msg.shoe_no)

    def _load_again(self, shoe: int) -> None:
        """Send a refused NEW_SHOE again (see `_new_shoe_refused`), journaled as a command."""
        entry = self._reload.pop(shoe, None)
        if entry is None or self.link is None:
            return
        parts, refused = entry
        if self._loading.get(shoe) != (parts[-1].shoe_no, parts[-1].deck_id):
            return
        self._svc().record("command", {"type": "new_shoe_again", "shoe_no": parts[-1].shoe_no,
                                       "deck_id": parts[-1].deck_id, "refused": refused}, shoe=shoe)
        for part in parts:
            self.link.send_command(shoe, part)

    # -- reactions to derived events ---------------------------------------------------
    def _on_derived(self, derived_in: Iterable[Derived]) -> None:
        if self.shipper is not None:
            self.shipper.wake()
        derived = list(derived_in)
        self._evidence_for_hits(derived)
        link = self.link
        if link is None:
            return
        for d in derived:
            etype = d.body.get("type")
            if etype == "shoe_hello":
                shoe = int(d.body["shoe"])
                for alarm in self.crash_watch.hello(shoe, str(d.body["fw_hash"])):
                    self._crash_alarm_cleared(shoe, alarm, "the shoe runs another firmware")
                t = self.config.link
                self._send_auto(link, shoe, Time(self.clock() // 1_000_000))
                self._send_auto(link, shoe, Config(t.heartbeat_ms, t.resend_ms, t.resend_max_ms, t.debounce_ms))
            elif etype == "shoe_loaded":
                # This journal's session started (the REPLY, or a frame naming it: a HELLO when
                # the REPLY was lost across a shoe reboot; SPEC 4): the load is over.
                self._load_done(int(d.body["shoe"]), int(d.body["shoe_no"]))
            elif etype == "cards_requested":
                self._send_auto(link, int(d.body["shoe"]),
                                CardsFrom(int(d.body["shoe_no"]), int(d.body["from_index"])))
            elif etype == "shoe_crash":
                self._shoe_crashed(link, d.body)

    def _shoe_crashed(self, link: ShoeLink, crash: dict[str, Any]) -> None:
        """The shoe's CRASH (`shoe_crash`): count it against the command it names; at the
        bound, give that command up with the `shoe_crash_loop` alarm (cardshoe.daemon.crashloop)."""
        shoe = int(crash["shoe"])
        log.warning("%s", crash["message"])
        if not crash["cmd_type"]:
            return
        cmd = link.crashing_command(shoe, int(crash["cmd_epoch"]), int(crash["cmd_seq"]), int(crash["cmd_type"]))
        if cmd is None:
            return  # a command of an earlier epoch, or one already answered or given up
        alarm = self.crash_watch.crashed(shoe, cmd, crash, self.clock())
        if alarm is None:
            log.warning("shoe %d: %s crashed it; sent again (a crash in a row more gives it up)", shoe,
                        cmd.message.TYPE.name)
            return
        with self._alarm_lock:
            self.alarms[crashloop.alarm_key(shoe, alarm["command"])] = alarm
        log.error("shoe crash loop: %s", alarm["message"])
        self._svc().record("link", alarm, shoe=shoe, publish=True)
        link.abandon(cmd, "shoe_crash_loop")
        # The copies the daemon queued on its own since (a CONFIG at each HELLO) go too.
        for queued in link.queued(shoe, int(cmd.message.TYPE)):
            if self.crash_watch.withheld(shoe, int(queued.message.TYPE)):
                link.abandon(queued, "shoe_crash_loop")

    def _crash_alarm_cleared(self, shoe: int, alarm: dict[str, Any], why: str) -> None:
        with self._alarm_lock:
            self.alarms.pop(crashloop.alarm_key(shoe, alarm["command"]), None)
        log.warning("shoe %d: the crash-loop alarm for %s clears: %s", shoe, alarm["command"], why)
        self._svc().record("link", {"type": "shoe_crash_loop_cleared", "shoe": shoe, "command": alarm["command"],
                                    "since_ns": alarm["since_ns"], "reason": why}, shoe=shoe, publish=True)

    def _send_auto(self, link: ShoeLink, shoe: int, message: Message) -> None:
        """A command the daemon sends on its own, unless its type is given up for the shoe
        (it crashed the shoe: cardshoe.daemon.crashloop), which is journaled instead."""
        if self.crash_watch.withheld(shoe, int(message.TYPE)):
            log.warning("shoe %d: %s not sent (it crashed the shoe)", shoe, message.TYPE.name)
            self._svc().record("command", {"type": "command_withheld", "command": message.TYPE.name,
                                           "reason": "shoe_crash_loop"}, shoe=shoe)
            return
        link.send_command(shoe, message)

    # -- jackpot evidence (issue 14 item 5; cardshoe.evidence) ---------------------------
    def _evidence_for_hits(self, derived: list[Derived]) -> None:
        """A settlement that pays a progressive wager gets its evidence file, written by a
        thread of its own (it waits for the service lock the caller holds, so the round's
        entries are all committed when it reads them)."""
        from cardshoe.evidence import progressive_hits

        for d in derived:
            if d.kind == "settlement" and d.round_id is not None and progressive_hits(d.body.get("settlement", {})):
                self._evidence_threads = [t for t in self._evidence_threads if t.is_alive()]
                thread = threading.Thread(target=self._evidence_worker, args=(d.round_id,),
                                          name=f"evidence-{d.round_id}", daemon=True)
                self._evidence_threads.append(thread)
                thread.start()

    def _evidence_worker(self, round_id: str) -> None:
        try:
            self.write_evidence(round_id, "progressive_hit")
        except Exception as exc:  # noqa: BLE001 - reported, journaled and shown; the table plays on
            log.error("evidence of round %s not written: %s", round_id, exc)
            try:
                self._svc().record("daemon", {"type": "evidence_failed", "round_id": round_id,
                                              "error": type(exc).__name__, "message": str(exc)}, publish=True)
            except Exception:  # noqa: BLE001 - the journal itself failed: already logged critically
                pass

    def make_evidence(self, round_id: str, reason: str) -> dict[str, Any]:
        """The signed evidence file of settled round `round_id` (raises `EvidenceError`, or
        `KeyStoreError` for an unusable table key). The table's key is made at first use."""
        from cardshoe.evidence.build import build, chain_before, record_of, round_entries, sign
        from cardshoe.journal import JournalReader
        from cardshoe.keys import table_key

        seed = table_key(self.config.table_key_file())
        svc = self._svc()
        with svc.lock:
            record = record_of(svc.core, round_id)
            with JournalReader(self.config.journal) as reader:
                entries = round_entries(reader, round_id)
                prev = chain_before(reader, entries[0].id)
        return sign(build(record, entries, reason=reason, made_ns=self.clock(), chain_prev=prev), seed)

    def write_evidence(self, round_id: str, reason: str) -> Path:
        """Make the evidence of `round_id`, write it into the evidence folder, journal and
        publish `evidence_written` (its path and SHA-256); returns the path."""
        from cardshoe.evidence import store

        doc = self.make_evidence(round_id, reason)
        path, digest = store.write(self.config.evidence_folder(), f"{round_id}.{reason}.json", doc)
        log.info("evidence of round %s (%s) written to %s", round_id, reason, path)
        self._svc().record("daemon", {"type": "evidence_written", "round_id": round_id, "reason": reason,
                                      "path": str(path), "sha256": digest,
                                      "public_key": doc["signature"]["public_key"]}, publish=True)
        # Known as written only once journaled: a reader that sees the file also finds its entry
        # (the test read the journal in between under load, with the live figures' thread busy).
        self.evidence_files[round_id] = path
        return path

    def table_public_key(self) -> bytes:
        """The table's Ed25519 public key (the key is made at first use)."""
        from cardshoe.evidence import public_key_of
        from cardshoe.keys import table_key

        return public_key_of(table_key(self.config.table_key_file()))

    def shuffle_alarms(self) -> list[dict[str, Any]]:
        """The shuffle alarms of the shoes in play (issue 14 item 6), for `/status`."""
        svc = self._svc()
        with svc.lock:
            in_play = {s.shoe_no for s in svc.core.shoes.values()}
            raised = [dict(body) for shoe_no, body in svc.core.shuffle.alarmed.items() if shoe_no in in_play]
        return [{"type": "shuffle", "shoe": a["shoe"], "shoe_no": a["shoe_no"], "deck_id": a["deck_id"],
                 "round_id": a["round_id"], "rule": "5.1", "finding": a["finding"],
                 "message": a["detail"]} for a in raised]

    # -- commands from the table controller --------------------------------------------
    def _shoe(self, shoe: int | None) -> int:
        serial = shoe if shoe is not None else self.shoe_serial
        if serial is None:
            raise LookupError("shoe: no shoe has been seen on the link yet; name its serial")
        if self.keys(serial) is None:
            raise LookupError(f"shoe: no key for shoe {serial}")
        return serial

    def load_shoe(self, deck_id: int, manifest: list[ManifestEntry] | None, shoe: int | None = None,
                  wait_s: float | None = None) -> int:
        """Start a new shoe session (NEW_SHOE; an RFID manifest in parts). Returns its shoe_no.

        The number is this journal's own (`Journal.shoe_no`: a random base per journal plus a
        counter), never the session the shoe reports as its current one, so a new journal's
        NEW_SHOE is never refused as that session with cards dealt (issue 20). It is journaled
        as a `shoe_loading` input before the command goes out: the core then takes the first
        frame naming it, in whatever run of the daemon, as the start of this journal's session.
        A refusal, or no answer for `stall_limit_ns`, is the `shoe_load` alarm."""
        serial = self._shoe(shoe)
        assert self.journal is not None and self.link is not None
        version = self.version_mismatch.get(serial)
        if version is not None:
            raise LookupError(f"shoe: shoe {serial} speaks protocol {version}, daemon speaks {VERSION}; "
                              "not dealing to it")
        # Under the table's lock from the number to the journaled `shoe_loading`: a gaming day's
        # rollover (which waits for a load) falls before or after, never between (issue 25).
        with self._svc().lock:
            session = self._svc().core.shoes.get(serial)
            avoid = frozenset() if session is None else frozenset({session.foreign, session.shoe_no} - {0})
            assert self.journal is not None
            shoe_no = self.journal.shoe_no(SHOE_NO_LOW, SHOE_NO_HIGH, avoid)
            if manifest:
                parts = manifest_parts(shoe_no, deck_id, manifest)
            else:
                parts = [NewShoe(shoe_no, deck_id, 2, 0, 1, ())]
            done = self._svc().submit_input({"action": "shoe_loading", "shoe": serial, "shoe_no": shoe_no,
                                             "deck_id": deck_id})
            if done.refused is not None:
                raise LookupError(f"shoe: {done.refused}")
            self._loading[serial] = (shoe_no, deck_id)
        self._loading_since[serial] = time.monotonic_ns()
        self._load_parts[serial] = parts
        self._reload.pop(serial, None)
        self._load_refusals[serial] = 0
        commands = [self.link.send_command(serial, part) for part in parts]
        self._svc().record("command", {"type": "new_shoe", "shoe_no": shoe_no, "deck_id": deck_id,
                                       "parts": len(parts), "scheme": parts[0].scheme}, shoe=serial)
        if wait_s is not None:
            commands[-1].done.wait(wait_s)
        return shoe_no

    def _load_failed(self, shoe: int, shoe_no: int, deck_id: int, reason: str, message: str) -> None:
        """A NEW_SHOE that will not load (refused, or unanswered): the `shoe_load` alarm in
        /status, journaled and on the stream, until a load succeeds (issue 20 item 3)."""
        self._loading.pop(shoe, None)
        self._loading_since.pop(shoe, None)
        self._reload.pop(shoe, None)
        alarm = {"type": "shoe_load", "shoe": shoe, "shoe_no": shoe_no, "deck_id": deck_id, "reason": reason,
                 "since_ns": self.clock(), "message": message}
        log.error("shoe %d: %s", shoe, message)
        self._svc().record("command", {**alarm, "type": "shoe_load_failed"}, shoe=shoe, publish=True)
        with self._alarm_lock:  # shown once logged and journaled: whoever sees it finds both
            self.alarms["shoe_load"] = alarm

    def _load_done(self, shoe: int, shoe_no: int) -> None:
        """This journal's session `shoe_no` started on `shoe`: the load is over, its alarm clears."""
        if self._loading.get(shoe, (0, 0))[0] == shoe_no:
            del self._loading[shoe]
            self._loading_since.pop(shoe, None)
        with self._alarm_lock:
            alarm = self.alarms.get("shoe_load")
            if alarm is not None and alarm.get("shoe") == shoe:
                del self.alarms["shoe_load"]

    def check_loading(self) -> None:
        """A NEW_SHOE the shoe has not answered for `stall_limit_ns`, with the port open, fails
        (the shoe takes none while cards of its session wait to be framed, SPEC 5); so does one
        refused "bad state" whose shoe has not become free (no HEARTBEAT) for as long."""
        limit = self.stall_limit_ns()
        now = time.monotonic_ns()
        late = [(shoe, since) for shoe, since in list(self._loading_since.items()) if now - since > limit]
        for shoe, since in late:
            loading = self._loading.get(shoe)
            if loading is None or not self.link_up:
                continue
            seconds = (now - since) / 1e9
            if shoe in self._reload:
                self._load_failed(shoe, loading[0], loading[1], "bad_state",
                                  f"NEW_SHOE {loading[0]} (deck {loading[1]}) refused by shoe {shoe} (bad state: busy "
                                  f"with its session) and the shoe not free for {seconds:.1f} s: the shoe is not "
                                  "loaded; load again once it is")
            else:
                self._load_failed(shoe, loading[0], loading[1], "unanswered",
                                  f"NEW_SHOE {loading[0]} (deck {loading[1]}) not answered by shoe {shoe} for "
                                  f"{seconds:.1f} s: the shoe is not loaded; see its faults and link, then load again")

    def clear(self, integrity_mask: int, fault_mask: int, shoe: int | None = None) -> None:
        """A supervisor's CLEAR of integrity bits and faults on the shoe."""
        serial = self._shoe(shoe)
        assert self.link is not None
        self.link.send_command(serial, Clear(integrity_mask, fault_mask))

    def maintenance(self, supervisor: str, reason: str, shoe: int | None = None) -> tuple[int, int]:
        """A supervisor's request to put the shoe into maintenance (MAINTENANCE: it stops
        streaming and waits at the REPL for `cardshoe flash`). Journaled with who asked and
        why before it is sent; the shoe's REPLY is journaled as every command's is.
        Returns (shoe serial, the command's seq)."""
        serial = self._shoe(shoe)
        assert self.link is not None
        self._svc().record("command", {"type": "maintenance_requested", "supervisor": supervisor, "reason": reason},
                           shoe=serial, publish=True)
        command = self.link.send_command(serial, Maintenance())
        return serial, command.seq

    def session_alarms(self) -> list[dict[str, Any]]:
        """Shoes in a session this journal did not start (issue 20 item 3), for `/status`: their
        cards are placed in no round until the dealer loads a new shoe."""
        svc = self._svc()
        with svc.lock:
            foreign = [(serial, s.foreign, s.shoe_no) for serial, s in svc.core.shoes.items() if s.foreign]
        return [{"type": "shoe_session", "shoe": serial, "shoe_no": shoe_no, "journal_shoe_no": own or None,
                 "rule": "6.1",
                 "message": f"shoe {serial} is in shoe session {shoe_no}, which this journal did not start: its "
                            "cards are placed in no round; load a new shoe"} for serial, shoe_no, own in foreign]

    def current_alarms(self) -> list[dict[str, Any]]:
        """What needs a person now, each with its reason (`message`): the port, a silent shoe,
        a broken ACK path, a failed load, a shoe in another journal's session, a command that
        crashed the shoe until it was given up (`shoe_crash_loop`), a shoe whose order fails
        the shuffle check (until another shoe is loaded)."""
        with self._alarm_lock:
            alarms = [dict(a) for _, a in sorted(self.alarms.items())]
        floor = self.floor
        if floor is not None and floor.state.alarm is not None:
            # The floor refuses this table's journal (restored, edited, a gap, a frame that does
            # not verify): no progressive round settles until a person looks (docs/floor.md).
            alarms.append({"type": "floor_journal", "message": floor.state.alarm, "table": floor.table})
        live = getattr(self, "live", None)
        hold = live.alarms() if live is not None else []
        if self.service is None:
            return alarms + hold
        return alarms + self.session_alarms() + self.shuffle_alarms() + hold

    def status(self) -> dict[str, Any]:
        """The daemon's state for the status endpoint."""
        svc = self._svc()
        link = self.link
        with svc.lock:
            current = svc.core.current_round_id()
            counters = dict(svc.counters)
            shoes = {str(k): {"shoe_no": v.shoe_no, "deck_id": v.deck_id, "next_index": v.next_index,
                              "boot": v.boot, "faults": v.fault_names(), "storage_fault": "storage" in v.fault_names(),
                              "cards_not_durable": v.not_durable, "missing_from": v.missing_from(),
                              "frames_waiting": len(v.held), "loading": v.loading[0] or None,
                              "foreign_session": v.foreign or None} for k, v in svc.core.shoes.items()}
        return {
            "table": self.config.name, "game": self.config.game, "seats": self.config.seats,
            "epoch": self.epoch, "port": self.config.port, "link_up": self.link_up,
            "link_changed_ns": self.link_changed_ns, "current_round": current,
            "alarms": self.current_alarms(),
            "journal_failed": None if svc.failed is None else str(svc.failed),
            "shoe": self.shoe_serial, "shoes": shoes, "counters": counters,
            "version_mismatch": {str(k): {"shoe_version": v, "daemon_version": VERSION,
                                          "message": f"shoe speaks protocol {v}, daemon speaks {VERSION}"}
                                 for k, v in self.version_mismatch.items()},
            "link": None if link is None else {
                "frames_accepted": link.stats.frames_accepted, "duplicates": link.stats.duplicates,
                "gaps": link.stats.gaps, "rejected": dict(link.stats.rejected), "acks_sent": link.stats.acks_sent,
                "commands_pending": link.pending_commands(), "reconnects": link.transport.reconnects,
                "held": link.stats.held, "trusted": sorted(link.trusted),
                "ack_path_alarms": link.stats.ack_path_alarms,
            },
            "subscribers": self.bus.subscribers,
            "floor": None if self.floor is None else self.floor.status(),
            "gaming_day": None if self.days is None else self.days.status(),
        }
