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
- a HELLO naming the session of a NEW_SHOE this daemon sent but never saw answered (the
  REPLY lost across a shoe reboot) reconciles the session from the HELLO's (shoe_no,
  deck_id), so the NEW_SHOE's reissue, REFUSED because cards were dealt, is no failure.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from cardshoe.daemon.bus import EventBus, streamable
from cardshoe.daemon.config import TableConfig
from cardshoe.daemon.control import TableControl
from cardshoe.daemon.core import Derived, TableCore
from cardshoe.daemon.service import FrameInput, TableService
from cardshoe.journal import Journal, now_ns
from cardshoe.journal.replay import ReplayReport, replay
from cardshoe.link import Command, LinkState, ShoeLink
from cardshoe.protocol.frames import Frame, KeyLookup, Rejection
from cardshoe.protocol.messages import (
    CardsFrom,
    Clear,
    Maintenance,
    Config,
    ManifestEntry,
    NewShoe,
    Reply,
    Time,
    message_fields,
)
from cardshoe.protocol.errors import Reason
from cardshoe.protocol.spec import MAX_PAYLOAD, VERSION, MessageType

log = logging.getLogger(__name__)

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


class Daemon:
    """One table's daemon; also the link's sink."""

    def __init__(self, config: TableConfig, *, keys: KeyLookup, clock: Callable[[], int] = now_ns,
                 randbelow: Callable[[int], int] | None = None, synchronous: str = "FULL",
                 journal_restored: bool = False) -> None:
        self.config = config
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
        # Shoes whose HELLO was rejected `bad_version`: serial -> the version it speaks (SPEC 7).
        self.version_mismatch: dict[int, int] = {}

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        """Open the journal, rebuild the table from it, and start the link."""
        cfg = self.config
        self.journal = Journal(cfg.journal, synchronous=self.synchronous)
        self.epoch = self.journal.start_epoch()
        wanted = cfg.setup()
        core = TableCore(wanted)
        self.restored, _ = replay(cfg.journal, core)
        with self.journal.reader() as reader:
            windows = reader.windows()
        for problem in self.restored.mismatches:
            log.error("journal rebuild: %s", problem)
        self.service = TableService(core, self.journal, self.bus, clock=self.clock, on_derived=self._on_derived)
        kwargs: dict[str, Any] = {"draw_magic": cfg.draw_magic}
        if self._randbelow is not None:
            kwargs["randbelow"] = self._randbelow
        self.control = TableControl(self.service, **kwargs)
        if windows and self.shoe_serial is None and len(windows) == 1:
            self.shoe_serial = next(iter(windows))
        self.service.record("daemon", {
            "type": "daemon_started", "epoch": self.epoch, "port": cfg.port,
            "restored_inputs": self.restored.inputs, "rebuild_mismatches": len(self.restored.mismatches),
            "journal_restored": self.journal_restored,
        }, publish=True)
        if self.restored.inputs == 0 or core.setup != wanted:
            self.service.submit_input({"action": "setup", **wanted.to_json()})
        self.link = ShoeLink(cfg.port, self.keys, self, epoch=self.epoch, windows=windows,
                             resend_ms=cfg.link.resend_ms, resend_max_ms=cfg.link.resend_max_ms,
                             journal_restored=self.journal_restored)
        self.link.start()
        # A previous run may have died between learning that the shoe holds cards the journal
        # lacks and getting them: ask again (the shoe will not send another HELLO for it).
        with self.service.lock:
            missing = [(shoe, s.shoe_no, s.missing_from()) for shoe, s in core.shoes.items()]
        for shoe, shoe_no, first in missing:
            if first is not None and self.keys(shoe) is not None:
                log.warning("shoe %d: the journal lacks cards from index %d of shoe %d; asking again",
                            shoe, first, shoe_no)
                self.link.send_command(shoe, CardsFrom(shoe_no, first))

    def stop(self) -> None:
        """Stop the link, then drain and close the journal. Safe to call more than once."""
        if self.link is not None:
            self.link.stop()
        if self.service is not None and self.journal is not None and not self.journal.closed:
            self.service.record("daemon", {"type": "daemon_stopped", "epoch": self.epoch})
        if self.journal is not None:
            self.journal.close()

    def _svc(self) -> TableService:
        if self.service is None:
            raise RuntimeError("daemon not started")
        return self.service

    # -- LinkSink --------------------------------------------------------------------
    def frame_accepted(self, frame: Frame) -> None:
        """Journal and apply an accepted frame (raises if it could not be journaled)."""
        if self.shoe_serial is None:
            self.shoe_serial = frame.shoe
        if self.version_mismatch.pop(frame.shoe, None) is not None:
            log.info("shoe %d: speaks protocol %d again", frame.shoe, VERSION)
        message = {"type": frame.type.name, **message_fields(frame.message)}
        if frame.type is MessageType.HELLO:
            message["boot"] = frame.boot
        self._svc().submit_frame(FrameInput(frame.shoe, frame.boot, frame.seq, int(frame.type), message, frame.raw))

    def frame_rejected(self, rejection: Rejection, note: str) -> None:
        """Count and journal a rejected frame with its reason."""
        header = rejection.header
        body: dict[str, Any] = {"type": "frame_rejected", "reason": rejection.reason.value,
                                "detail": rejection.detail, "note": note}
        if header is not None:
            body.update(boot=header.boot, seq=header.seq, frame_type=header.type, flags=header.flags)
        security = streamable("reject", body)
        if security:
            log.warning("security: frame rejected (%s) %s", rejection.reason.value, rejection.detail)
        self._svc().record("reject", body, shoe=header.shoe if header else None, raw=rejection.raw,
                           publish=security)
        if rejection.reason is Reason.BAD_VERSION and header is not None and header.type == MessageType.HELLO:
            self._version_mismatch(header.shoe, header.version)

    def _version_mismatch(self, shoe: int, version: int) -> None:
        # SPEC 7. The version byte is checked before the tag, so this HELLO is not
        # authenticated: it stops this daemon dealing to the shoe (it could not be understood
        # anyway) until an authenticated frame of this version arrives, and acts on nothing else.
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
        """Journal, log and publish the port's loss or return."""
        self.link_up = state.up
        self.link_changed_ns = state.t_ns
        (log.info if state.up else log.warning)("link %s: %s", "up" if state.up else "lost", state.detail)
        self._svc().record("link", {"type": "link_up" if state.up else "link_lost", "detail": state.detail,
                                    "at_ns": state.t_ns}, publish=True)

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
        self._svc().record("command", body, shoe=command.shoe, publish=streamable("command", body))
        msg = command.message
        if isinstance(msg, NewShoe) and reply is not None and msg.part == msg.parts - 1:
            if reply.status == 0:
                if self._loading.get(command.shoe) == (msg.shoe_no, msg.deck_id):
                    del self._loading[command.shoe]
                with self._svc().lock:
                    session = self._svc().core.shoes.get(command.shoe)
                    reconciled = session is not None and session.shoe_no == msg.shoe_no
                if not reconciled:
                    self._svc().submit_input({"action": "shoe_loaded", "shoe": command.shoe,
                                              "shoe_no": msg.shoe_no, "deck_id": msg.deck_id})
            elif reply.status == 1 and reply.detail == 1:
                self._new_shoe_refused(command.shoe, msg)

    def _new_shoe_refused(self, shoe: int, msg: NewShoe) -> None:
        # SPEC 4: a NEW_SHOE reissued under a new seq after the first copy ran (its REPLY
        # lost, with the reply cache, across a shoe reboot) is REFUSED "bad state" once a
        # card of that session is dealt. The shoe's HELLO already named the session, and
        # `_on_derived` reconciled it; then the refusal is the first copy's success.
        with self._svc().lock:
            session = self._svc().core.shoes.get(shoe)
            loaded = session is not None and (session.shoe_no, session.deck_id) == (msg.shoe_no, msg.deck_id)
        if loaded:
            self._loading.pop(shoe, None)
            log.info("shoe %d: NEW_SHOE %d refused as already loaded; the session runs", shoe, msg.shoe_no)
            self._svc().record("command", {"type": "new_shoe_already_loaded", "shoe_no": msg.shoe_no,
                                           "deck_id": msg.deck_id}, shoe=shoe, publish=True)

    # -- reactions to derived events ---------------------------------------------------
    def _on_derived(self, derived_in: Iterable[Derived]) -> None:
        link = self.link
        if link is None:
            return
        derived = list(derived_in)
        for d in derived:
            etype = d.body.get("type")
            if etype == "shoe_hello":
                shoe = int(d.body["shoe"])
                adopted = any(e.body.get("type") == "shoe_session_adopted" and e.body.get("shoe") == shoe
                              for e in derived)
                self._reconcile_loading(shoe, d.body, adopted)
                t = self.config.link
                link.send_command(shoe, Time(self.clock() // 1_000_000))
                link.send_command(shoe, Config(t.heartbeat_ms, t.resend_ms, t.resend_max_ms, t.debounce_ms))
            elif etype == "cards_requested":
                link.send_command(int(d.body["shoe"]), CardsFrom(int(d.body["shoe_no"]), int(d.body["from_index"])))

    def _reconcile_loading(self, shoe: int, hello: dict[str, Any], adopted: bool) -> None:
        """A HELLO naming the session of our unanswered NEW_SHOE: the NEW_SHOE ran (SPEC 4)."""
        loading = self._loading.get(shoe)
        named = (int(hello.get("shoe_no", 0)), int(hello.get("deck_id", 0)))
        if loading is None or named != loading:
            return
        del self._loading[shoe]
        with self._svc().lock:
            session = self._svc().core.shoes.get(shoe)
            if session is not None and session.shoe_no == loading[0] and not adopted:
                return  # already loaded (its REPLY came): the core asks for what it lacks
        # Otherwise the core holds another session, or adopted this one from the HELLO with
        # its cards taken as dealt before this journal: they were dealt in our session.
        log.warning("shoe %d: its HELLO names shoe session %d (deck %d), whose NEW_SHOE was never answered; "
                    "the session is loaded", shoe, loading[0], loading[1])
        # Journaled as an input, so a replay reconciles alike; `dealt` makes the core ask
        # for the cards the shoe dealt in it (CARDS_FROM), which it places once by index.
        self._svc().submit_input({"action": "shoe_loaded", "shoe": shoe, "shoe_no": loading[0],
                                  "deck_id": loading[1], "dealt": int(hello.get("dealt", 0)),
                                  "reconciled": "hello"})

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
        """Start a new shoe session (NEW_SHOE; an RFID manifest in parts). Returns its shoe_no."""
        serial = self._shoe(shoe)
        assert self.journal is not None and self.link is not None
        version = self.version_mismatch.get(serial)
        if version is not None:
            raise LookupError(f"shoe: shoe {serial} speaks protocol {version}, daemon speaks {VERSION}; "
                              "not dealing to it")
        shoe_no = int(self.journal.counter("shoe_no"))
        if manifest:
            parts = manifest_parts(shoe_no, deck_id, manifest)
        else:
            parts = [NewShoe(shoe_no, deck_id, 2, 0, 1, ())]
        self._loading[serial] = (shoe_no, deck_id)
        commands = [self.link.send_command(serial, part) for part in parts]
        self._svc().record("command", {"type": "new_shoe", "shoe_no": shoe_no, "deck_id": deck_id,
                                       "parts": len(parts), "scheme": parts[0].scheme}, shoe=serial)
        if wait_s is not None:
            commands[-1].done.wait(wait_s)
        return shoe_no

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

    def status(self) -> dict[str, Any]:
        """The daemon's state for the status endpoint."""
        svc = self._svc()
        link = self.link
        with svc.lock:
            current = svc.core.current_round_id()
            counters = dict(svc.counters)
            shoes = {str(k): {"shoe_no": v.shoe_no, "deck_id": v.deck_id, "next_index": v.next_index,
                              "boot": v.boot} for k, v in svc.core.shoes.items()}
        return {
            "table": self.config.name, "game": self.config.game, "seats": self.config.seats,
            "epoch": self.epoch, "port": self.config.port, "link_up": self.link_up,
            "link_changed_ns": self.link_changed_ns, "current_round": current,
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
            },
            "subscribers": self.bus.subscribers,
        }
