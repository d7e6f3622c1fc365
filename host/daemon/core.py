"""The table's state machine: journaled inputs in, derived events and settlements out.

`TableCore` is pure: it never touches the serial port, the journal or the clock. Each
input carries the host time it was journaled with, and the core's output depends only on
the inputs and their order. The live daemon and `cardshoe replay` both feed it the same
journaled inputs, so the replay reproduces every event and settlement byte for byte.

Inputs are journal entries of two kinds:

- `frame`: an accepted shoe frame, decoded (`{"type": "CARD", ...fields}`), for a shoe.
- `input`: a table-controller or daemon input, `{"action": ..., ...}`:
  `open_round`, `op` (a `cardshoe.rounds` operation for the current round),
  `settle`, `jackpot_pool`, `shoe_loaded`.

A shoe's cards are placed by their `(shoe_no, index)` in index order: a card resent after
a shoe reboot (CARDS_FROM) is placed once, and a card that arrives ahead of a missing one
waits for it (the core asks for the missing ones with a `cards_requested` event, which the
live daemon turns into a CARDS_FROM command).

A shoe's other round events (KEY, DECK_STATUS) are applied in the same shoe order: after a
reboot the shoe sends its new boot's frames (the dealer's DEAL_COMPLETE key) before the
cards of its log that CARDS_FROM asks for, so a frame that arrives while cards the shoe
dealt before it are missing waits (`shoe_frame_held`) and is applied right after the last
of them is placed. Applied at once, a DEAL_COMPLETE would close the deal on a short count
and the late cards would land as cards not due: misplaced (issue 11). A HELLO saying the
shoe no longer holds the awaited cards ends the wait (`held_frames_released`): the cards
are lost, and flagged as missing.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from cardshoe import rounds, settlement  # loaded at start: the first settlement pays no import (issue 15)
from cardshoe.daemon import consistency
from cardshoe.rounds import Round, RoundOperationError
from cardshoe.rounds.events import to_jsonable
from cardshoe.shuffle.book import ShuffleBook, alarm_body
from cardshoe.shuffle.collect import collected_order

#: Rounds kept in memory for the API after they are settled (the journal keeps them all).
KEEP_ROUNDS = 1_000_000  # the API reads rounds from memory; a table plays a few hundred a shift


class InputError(ValueError):
    """A controller input the core cannot even read (missing or wrong field); names the field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


class SettlementRefused(InputError):
    """The settlement engine refused a round at settlement (`field` as the engine names it,
    e.g. `jackpot.pool`): the Settle is refused and the round stays in play."""


@dataclass(frozen=True)
class Derived:
    """One journal entry the core derived: an `event` or a `settlement`."""

    kind: str
    round_id: str | None
    body: dict[str, Any]


@dataclass(frozen=True)
class Applied:
    """What one input produced; `refused` is the error when the input was refused."""

    derived: tuple[Derived, ...]
    refused: RoundOperationError | InputError | None = None
    round_id: str | None = None


@dataclass(frozen=True)
class TableSetup:
    """The table's settings (from `TableConfig`), journaled at every daemon start."""

    name: str
    game: str
    seats: int
    dealing: str = "automated"
    method: str | None = None
    limits: tuple[tuple[str, int, int], ...] = ()
    """(wager, min, max) in minor units: the round file's `limits`."""
    jackpot_reset: int | None = None

    def limits_json(self) -> dict[str, dict[str, int]]:
        """The limits as the round file writes them."""
        return {w: {"min": lo, "max": hi} for w, lo, hi in self.limits}

    def to_json(self) -> dict[str, Any]:
        """The setup as journaled in a `setup` input."""
        return {"name": self.name, "game": self.game, "seats": self.seats, "dealing": self.dealing,
                "method": self.method, "limits": self.limits_json(), "jackpot_reset": self.jackpot_reset}


#: SPEC 5 FAULT codes.
FAULT_NAMES = {1: "reader", 2: "jam", 3: "tamper", 4: "sensor", 5: "low_memory", 6: "outbox_full", 7: "storage",
               8: "manifest"}
#: SPEC 5 KEY codes the table acts on: the count point and an exposed card.
KEY_NAMES = {2: "deal_complete", 3: "exposure"}
#: CARD flags bit 2: framed from the shoe's RAM, not in its flash log (SPEC 5).
NOT_DURABLE = 4


@dataclass
class ShoeSession:
    """What the core knows of one shoe's current session (SPEC 4, 5 HELLO/NEW_SHOE)."""

    shoe_no: int = 0
    deck_id: int = 0
    next_index: int = 1
    boot: int = 0
    pending: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    requested_from: int = 0
    known_dealt: int = 0
    """The most cards of this session the shoe is known to have dealt (HELLO, card indices)."""
    cards: dict[tuple[int, int], consistency.Fingerprint] = field(default_factory=dict)
    """(shoe_no, index) -> the card the journal holds there (placed or waiting), to compare resends."""
    faults: int = 0
    """The shoe's active faults as last reported (HELLO, FAULT): bit ``1 << code`` (SPEC 5)."""
    not_durable: int = 0
    """Cards received marked NOT_DURABLE (CARD flags bit 2): in no flash log of the shoe."""
    not_durable_at: set[tuple[int, int]] = field(default_factory=set)
    """(shoe_no, index) of those cards: a reboot may lose them from the shoe's count, as it said."""
    held: tuple[tuple[int, Mapping[str, Any]], ...] = ()
    """Frames (KEY, DECK_STATUS) waiting for missing cards, in arrival order: (the last card
    index the shoe dealt before the frame, the frame). A tuple: immutable, so a checkpoint of
    a core made before this field reads the class default."""

    def forget_other_sessions(self) -> None:
        """Drop the cards of sessions other than the current one: a card of another session is
        refused before its place is looked at (`card_from_other_session`), so they are never
        read again, and kept they would grow the state with every shoe ever dealt."""
        self.cards = {k: v for k, v in self.cards.items() if k[0] == self.shoe_no}

    def fault_names(self) -> list[str]:
        """The active faults by name (SPEC 5 FAULT codes)."""
        return [name for code, name in FAULT_NAMES.items() if self.faults & (1 << code)]

    def missing_from(self) -> int | None:
        """The first index the journal lacks of cards the shoe is known to hold, if any."""
        if self.shoe_no and self.known_dealt >= self.next_index:
            return self.next_index
        return None

    def must_hold(self) -> bool:
        """Whether a round event from the shoe now would come ahead of cards dealt before it
        that are not placed yet (or of frames already waiting for them): then it waits."""
        return bool(self.held) or self.missing_from() is not None


class _Frozen:
    """A settled round kept as its pickle inside a checkpoint: thawed when first used."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _Archived:
    """A settled round (or its settlement) whose pickle is in an earlier checkpoint entry."""

    __slots__ = ("entry", "settlement")

    def __init__(self, entry: int, settlement: bool) -> None:
        self.entry, self.settlement = entry, settlement


#: Reads the stored core of a checkpoint entry (for `_Archived` values); set at restore.
ArchiveLoader = Callable[[int], "TableCore"]


class FrozenBook(dict[str, Any]):
    """Rounds or settlements of a core restored from a checkpoint: settled ones come back frozen
    (their pickle) and are thawed on first use, so a start costs the same whatever the history
    (issue 15). Reads through `get`, `[]`, `items` and `values` always see thawed values."""

    loader: ArchiveLoader | None = None

    def __getitem__(self, key: str) -> Any:
        value: Any = dict.__getitem__(self, key)
        if isinstance(value, _Archived):
            if self.loader is None:
                raise LookupError(f"{key}: kept in checkpoint {value.entry}, and no journal to read it from")
            old = self.loader(value.entry)
            book: dict[str, Any] = old.settlements if value.settlement else old.rounds
            value = dict.__getitem__(book, key)
        if isinstance(value, _Frozen):
            from cardshoe.journal.checkpoint import loads  # the same restricted unpickler as the core

            value = loads(value.data)
        elif isinstance(value, _Archived):
            raise LookupError(f"{key}: checkpoint {value.entry} points to another checkpoint for it")
        dict.__setitem__(self, key, value)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if dict.__contains__(self, key) else default

    def values(self) -> Any:
        return [self[key] for key in self]

    def items(self) -> Any:
        return [(key, self[key]) for key in self]


def _as_journaled(msg: Mapping[str, Any]) -> dict[str, Any]:
    """A frame kept in the state, with its keys in the order the journal's canonical JSON
    gives them: the live daemon keeps the frame as decoded, a replay as read back from the
    journal, and a checkpoint of either must be the same state (the audit walks dicts in
    order: a held KEY made `cardshoe replay` report a checkpoint as different)."""
    return {k: msg[k] for k in sorted(msg)}


def _event(rid: str | None, etype: str, **fields: Any) -> Derived:
    return Derived("event", rid, {"type": etype, **fields})


def _error_body(error: Exception) -> dict[str, Any]:
    body: dict[str, Any] = {"error": type(error).__name__, "message": str(error)}
    field_name = getattr(error, "field", None)
    if isinstance(field_name, str):
        body["field"] = field_name
    rule = getattr(error, "rule", None)
    if isinstance(rule, str):
        body["rule"] = rule
    return body


class TableCore:
    """The state of one table, advanced only by `apply_frame` and `apply_input`."""

    def __init__(self, setup: TableSetup) -> None:
        self.setup = setup
        self.rounds: dict[str, Round] = {}
        self.current: Round | None = None
        self.rounds_opened = 0
        self.jackpot_pool: int | None = None
        self.shoes: dict[int, ShoeSession] = {}
        self.settlements: dict[str, dict[str, Any]] = {}
        # A jackpot pool given when re-settling a round closed without one (see `_settle`).
        self.pool_given_late: dict[str, int] = {}
        # Settled rounds' pickles (round, settlement), made once for checkpoints; dropped when
        # a round changes.
        self._frozen: dict[str, tuple[bytes, bytes]] = {}
        # rid -> the checkpoint entry that stores the settled round whole; the rounds the
        # checkpoint being written stores whole (see `checkpoint_written`).
        self._archived: dict[str, int] = {}
        self._pending_archive: list[str] = []
        # Earlier shoes' orders per deck and the alarms raised (issue 14 item 6).
        self.shuffle = ShuffleBook()

    # -- checkpoints (cardshoe.journal.checkpoint) -------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """The state as pickled into a checkpoint: a settled round (with its settlement, not
        the current one) as its pickle, made once and kept, so a checkpoint and a start from
        it cost what the open rounds and shoes cost, not the whole history (issue 15)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_frozen", "_pending_archive")}
        book: dict[str, Any] = {}
        paid: dict[str, Any] = {}
        pending: list[str] = []
        for rid in self.rounds:
            value: Any = dict.__getitem__(self.rounds, rid)
            if isinstance(value, (_Frozen, _Archived)):
                where = self._archived.get(rid)
                if isinstance(value, _Frozen) and where is not None:  # stored whole where it came from
                    book[rid], paid[rid] = _Archived(where, False), _Archived(where, True)
                else:
                    book[rid], paid[rid] = value, dict.__getitem__(self.settlements, rid)
                continue
            if value is not self.current and value.status is rounds.RoundStatus.SETTLED and rid in self.settlements:
                where = self._archived.get(rid)
                if where is not None:  # already in an earlier checkpoint: referred to, not copied
                    book[rid], paid[rid] = _Archived(where, False), _Archived(where, True)
                    continue
                frozen = self._frozen.get(rid)
                if frozen is None:
                    frozen = self._frozen[rid] = (pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL),
                                                  pickle.dumps(self.settlements[rid], protocol=pickle.HIGHEST_PROTOCOL))
                book[rid], paid[rid] = _Frozen(frozen[0]), _Frozen(frozen[1])
                pending.append(rid)
            else:
                book[rid] = value
        # In the settlements' own order (the order is part of the state).
        paid = {rid: paid[rid] if rid in paid else dict.__getitem__(self.settlements, rid) for rid in self.settlements}
        state["rounds"], state["settlements"] = book, paid
        self._pending_archive = pending
        return state

    def checkpoint_written(self, entry: int) -> None:
        """The checkpoint last pickled is journaled as `entry`: the settled rounds it stored
        whole are referred to there from now on (each round is stored once in the journal)."""
        for rid in self._pending_archive:
            self._archived[rid] = entry
            self._frozen.pop(rid, None)
        self._pending_archive = []

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.rounds = FrozenBook(state["rounds"])
        self.settlements = FrozenBook(state["settlements"])
        self.__dict__.setdefault("shuffle", ShuffleBook())  # a checkpoint from before the shuffle alarm
        self._frozen = {}
        self._pending_archive = []

    def loaded_from(self, entry: int) -> None:
        """This core was loaded from checkpoint `entry`: the rounds it stores whole are referred
        to there by later checkpoints, not copied into each."""
        for rid in self.rounds:
            if isinstance(dict.__getitem__(self.rounds, rid), _Frozen):
                self._archived[rid] = entry

    def set_archive(self, loader: ArchiveLoader | None) -> None:
        """Where rounds kept in earlier checkpoints are read from (the journal), once restored."""
        for book in (self.rounds, self.settlements):
            if isinstance(book, FrozenBook):
                book.loader = loader

    def canonical_state(self) -> dict[str, Any]:
        """The state for comparing two cores (the checkpoint audit): every round thawed, no caches."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_frozen", "_pending_archive", "_archived")}
        state["rounds"] = {rid: self.rounds[rid] for rid in self.rounds}
        state["settlements"] = {rid: self.settlements[rid] for rid in self.settlements}
        return state

    # -- frames ----------------------------------------------------------------------
    def apply_frame(self, shoe: int, msg: Mapping[str, Any], t_ns: int) -> Applied:
        """Advance by one accepted shoe frame (decoded message as journaled).

        A fault in the daemon's own code while applying a frame must not stall the link (the
        shoe would resend the frame for ever): the frame is journaled with an `internal_error`
        event for the shift manager (6.1), and replay reproduces the same event."""
        try:
            return self._apply_frame(shoe, msg, t_ns)
        except Exception as exc:  # noqa: BLE001 - reported as an event, journaled, shown
            return Applied((_event(self._round_id(), "internal_error", shoe=shoe, frame=str(msg.get("type")),
                                   error=type(exc).__name__, message=str(exc), rule="6.1"),))

    def _apply_frame(self, shoe: int, msg: Mapping[str, Any], t_ns: int) -> Applied:
        mtype = msg["type"]
        session = self.shoes.setdefault(shoe, ShoeSession())
        time_ms = t_ns // 1_000_000
        if mtype == "HELLO":
            return Applied(tuple(self._hello(shoe, session, msg, time_ms)))
        if mtype in ("CARD", "UNREAD"):
            return Applied(tuple(self._card(shoe, session, msg, time_ms)))
        if mtype in ("KEY", "DECK_STATUS") and not (mtype == "DECK_STATUS" and msg["reason"] == 1):
            if session.must_hold():
                # Shoe order (SPEC 4, issue 11): the cards the shoe dealt before this frame
                # come first; it is applied once they are placed (see `_release_held`).
                session.held += ((session.known_dealt, _as_journaled(msg)),)
                return Applied((_event(self._round_id(), "shoe_frame_held", shoe=shoe, frame=mtype,
                                       key=msg.get("key"), shoe_ms=msg.get("t_ms"), after_index=session.known_dealt,
                                       waiting_for=session.next_index, shoe_no=session.shoe_no),))
        if mtype == "KEY":
            return Applied(tuple(self._key(shoe, msg, time_ms)))
        if mtype == "DECK_STATUS":
            return Applied(tuple(self._deck_status(shoe, session, msg, time_ms)))
        if mtype == "FAULT":
            rid = self._round_id()
            code = int(msg["code"])
            if msg["active"]:
                session.faults |= 1 << code
            else:
                session.faults &= ~(1 << code)
            return Applied((_event(rid, "shoe_fault", shoe=shoe, code=code, name=FAULT_NAMES.get(code, "unknown"),
                                   active=bool(msg["active"]), detail=msg["detail"], shoe_ms=msg["t_ms"]),))
        return Applied(())  # HEARTBEAT, REPLY: link-level, journaled but not acted on here

    def current_round_id(self) -> str | None:
        """The id of the round in play (or last played), if any."""
        return self._round_id()

    def _round_id(self) -> str | None:
        return self.current.round_id if self.current is not None else None

    def _hello(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        out = [
            _event(self._round_id(), "shoe_hello", shoe=shoe, boot=msg.get("boot", 0),
                   fw=f"{msg['fw_major']}.{msg['fw_minor']}.{msg['fw_patch']}",
                   fw_hash=msg["fw_hash"], reset_cause=msg["reset_cause"], shoe_no=msg["shoe_no"],
                   deck_id=msg["deck_id"], dealt=msg["dealt"], integrity=msg["integrity"],
                   faults=msg["faults"])
        ]
        previous_boot, session.boot = session.boot, int(msg.get("boot", 0))
        session.faults = int(msg["faults"])
        shoe_no, dealt = int(msg["shoe_no"]), int(msg["dealt"])
        if shoe_no == 0:
            return out
        if previous_boot and session.boot != previous_boot and shoe_no == session.shoe_no:
            out += self._power_failure(shoe, session, msg, dealt, time_ms)
        if shoe_no != session.shoe_no:
            if session.shoe_no == 0 or session.next_index == 1:
                out += self._stop_waiting(shoe, session, session.next_index - 1, time_ms,
                                          f"shoe {shoe} is in another session ({shoe_no})")
                self._end_session(session)
                # A session this journal never saw a card of: adopt it. Cards dealt before
                # are not asked for; they belong to no round of this journal. (Only a HELLO
                # of the shoe's proven current boot gets here: SPEC 3.4 item 6, in the link.
                # A session this daemon loaded is reconciled by the daemon, see
                # `Daemon._reconcile_loading`.)
                session.shoe_no, session.deck_id = shoe_no, int(msg["deck_id"])
                session.next_index, session.pending, session.known_dealt = dealt + 1, {}, dealt
                session.forget_other_sessions()
                out.append(_event(self._round_id(), "shoe_session_adopted", shoe=shoe, shoe_no=shoe_no,
                                  next_index=dealt + 1))
            else:
                out.append(_event(self._round_id(), "shoe_session_mismatch", shoe=shoe, shoe_no=shoe_no,
                                  expected_shoe_no=session.shoe_no, rule="6.1"))
            return out
        holds = max(session.next_index - 1, max(session.pending, default=0))
        lost = [i for i in range(dealt + 1, holds + 1) if i < session.next_index or i in session.pending]
        if lost and not all((shoe_no, i) in session.not_durable_at for i in lost):
            # The shoe's log lost cards the journal holds: never dropped (issue 10 item 4).
            # Cards it sent marked NOT_DURABLE were never in its log (its flash refused them):
            # a reboot loses them from its count as the shoe said it would, and the reboot
            # itself is the power-failure flag (reading 51), not a missing card.
            body = consistency.count_backwards(shoe, shoe_no, dealt, holds, self._game())
            out += self._inconsistent(body, rounds.DeckFault.MISSING, time_ms)
        if session.known_dealt > max(dealt, holds):
            # The shoe counted cards earlier (a HELLO, a card's index) that neither its log nor
            # the journal holds now: they will never come. Flagged as missing cards, and the
            # frames waiting for them wait no longer than for the cards the shoe still holds.
            body = consistency.cards_unrecoverable(shoe, shoe_no, session.known_dealt, dealt, holds, self._game())
            out += self._inconsistent(body, rounds.DeckFault.MISSING, time_ms)
            out += self._stop_waiting(shoe, session, max(dealt, holds), time_ms,
                                      f"shoe {shoe}'s HELLO counts {dealt} cards of shoe {shoe_no}: cards "
                                      f"{max(dealt, holds) + 1}-{session.known_dealt} will never come")
            session.known_dealt = max(dealt, holds)
        session.known_dealt = max(session.known_dealt, dealt)
        if dealt >= session.next_index:
            # SPEC 4: the shoe logged cards the journal does not hold.
            session.requested_from = session.next_index
            out.append(_event(self._round_id(), "cards_requested", shoe=shoe, shoe_no=shoe_no,
                              from_index=session.next_index, dealt=dealt))
        return out

    def _release_held(self, shoe: int, session: ShoeSession, time_ms: int) -> list[Derived]:
        """Apply, in order, the waiting frames whose cards are all placed now."""
        out: list[Derived] = []
        while session.held and session.held[0][0] < session.next_index:
            msg = session.held[0][1]
            session.held = session.held[1:]
            if msg["type"] == "KEY":
                out += self._key(shoe, msg, time_ms)
            else:
                out += self._deck_status(shoe, session, msg, time_ms)
        return out

    def _stop_waiting(self, shoe: int, session: ShoeSession, last: int, time_ms: int, why: str) -> list[Derived]:
        """The cards after index `last` will never come (`why`): the frames waiting for them
        wait only for the cards up to `last`, and those already placed are applied now."""
        if not session.held:
            return []
        capped = tuple((min(after, last), msg) for after, msg in session.held)
        if capped == session.held:
            return []
        session.held = capped
        out = [_event(self._round_id(), "held_frames_released", shoe=shoe, shoe_no=session.shoe_no,
                      frames=[str(m["type"]) for _a, m in capped], waits_for_up_to=last, reason=why, rule="6.1")]
        return out + self._release_held(shoe, session, time_ms)

    def _power_failure(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], dealt: int,
                       time_ms: int) -> list[Derived]:
        """The shoe rebooted in a session of this journal: a round being dealt carries it
        (cardshoe.rounds.powerfail, 5.16 / 6.1), whatever the counts say."""
        if self.current is None or self.current.status not in (rounds.RoundStatus.DEALING, rounds.RoundStatus.DEALER):
            return []
        op = rounds.ShoePowerFailure(shoe=shoe, boot=session.boot, reset_cause=int(msg["reset_cause"]),
                                     shoe_dealt=dealt, host_count=session.next_index - 1, time_ms=time_ms)
        return list(self._do(self.current, op, source="shoe").derived)

    def _card(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        shoe_no, index = int(msg["shoe_no"]), int(msg["index"])
        out: list[Derived] = []
        if session.shoe_no == 0:
            # A shoe session this journal never saw loaded (nor in a HELLO): it starts here.
            # The cards before this one were dealt before this journal; none is asked for.
            session.shoe_no, session.next_index, session.pending, session.known_dealt = shoe_no, index, {}, index
            session.forget_other_sessions()
            out.append(_event(self._round_id(), "shoe_session_adopted", shoe=shoe, shoe_no=shoe_no,
                              next_index=index))
        if shoe_no != session.shoe_no:
            return [_event(self._round_id(), "card_from_other_session", shoe=shoe, shoe_no=shoe_no,
                           index=index, expected_shoe_no=session.shoe_no, rule="6.1")]
        if index < session.next_index or index in session.pending:
            # Already placed (or waiting): a card is placed once (SPEC 4). A resend repeats
            # it exactly; a different card there is flagged with both (issue 10 item 4).
            held = session.cards.get((shoe_no, index))
            body = None if held is None else consistency.card_conflict(shoe, shoe_no, index, held, msg, self._game())
            return [] if body is None else self._inconsistent(body, rounds.DeckFault.EXTRA, time_ms)
        if msg["type"] == "CARD" and int(msg["flags"]) & NOT_DURABLE:
            # The shoe's flash refused it (FAULT STORAGE): it is durable only in this journal.
            session.not_durable += 1
            session.not_durable_at.add((shoe_no, index))
            out.append(_event(self._round_id(), "card_not_durable", shoe=shoe, shoe_no=shoe_no, index=index))
        session.known_dealt = max(session.known_dealt, index)
        session.cards[(shoe_no, index)] = consistency.fingerprint(msg)
        if index > session.next_index:
            session.pending[index] = _as_journaled(msg)
            if session.requested_from != session.next_index:
                session.requested_from = session.next_index
                return [_event(self._round_id(), "cards_requested", shoe=shoe, shoe_no=shoe_no,
                               from_index=session.next_index, dealt=index)]
            return []
        out += self._place(shoe, msg, time_ms)
        session.next_index += 1
        out += self._release_held(shoe, session, time_ms)  # a frame the shoe sent after this card
        while session.next_index in session.pending:
            out += self._place(shoe, session.pending.pop(session.next_index), time_ms)
            session.next_index += 1
            out += self._release_held(shoe, session, time_ms)
        return out

    def _place(self, shoe: int, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        mismatch: dict[str, Any] | None = None
        if msg["type"] == "UNREAD":
            op: Any = rounds.ShoeCard(shoe_no=msg["shoe_no"], index=msg["index"], code=None, reader_id="",
                                      shoe_ms=msg["t_ms"], time_ms=time_ms)
        else:
            code = int(msg["code"])
            session = self.shoes.get(shoe)
            # A card of another deck is foreign whether or not the shoe flagged it (issue 10 item 4).
            mismatch = consistency.deck_mismatch(shoe, msg, session.deck_id if session else 0, self._game())
            op = rounds.ShoeCard(
                shoe_no=msg["shoe_no"], index=msg["index"],
                code=None if code == 0xFF else code,
                reader_id=str(msg["raw"]), shoe_ms=msg["t_ms"], deck_id=msg["card_deck"],
                read_method=msg["method"], duplicate=bool(msg["flags"] & 1),
                foreign=bool(msg["flags"] & 2) or code == 0xFF or mismatch is not None,
                time_ms=time_ms,
            )
        # A card of another deck: its evidence first, then the card as a foreign one (issue 10 item 4).
        head = [] if mismatch is None else [_event(self._round_id(), mismatch.pop("type"), **mismatch)]
        if self.current is None or self.current.status is rounds.RoundStatus.SETTLED:
            return head + [self._card_outside_round(shoe, op)]
        return head + list(self._do(self.current, op, source="shoe").derived)

    def _card_outside_round(self, shoe: int, card: rounds.ShoeCard) -> Derived:
        """A card out of the shoe while no round is in play: before the first round, or after
        the last one was settled and before the next is opened. No rule covers it, so it is
        flagged for the shift manager (6.1) with the card as evidence; it belongs to no round,
        so the settled round stands and the next one deals from the following card."""
        after = self.current.round_id if self.current is not None else None
        evidence = rounds.CardEvidence(card.index, card.code, card.reader_id, card.shoe_ms, card.time_ms)
        when = f"after round {after} was settled" if after is not None else "before any round was opened"
        return _event(None, "card_outside_round", shoe=shoe, shoe_no=card.shoe_no, index=card.index,
                      rule="6.1", rules=["6.1"], decision=rounds.DecisionKind.REFERRED.value,
                      detail=f"shoe card {card.index} left the shoe {when}, outside any round; "
                             "referred to the shift manager",
                      after_round=after, evidence=[to_jsonable(evidence)])

    def _between_rounds(self) -> dict[str, Any]:
        """Where the table is when no round has a card out: the last round settled (None
        before the first) and the round opened for betting, if any."""
        current = self.current
        if current is None:
            return {"after_round": None, "round_open": None}
        if current.status is rounds.RoundStatus.SETTLED:
            return {"after_round": current.round_id, "round_open": None}
        ids = list(self.rounds)  # in the order opened; the current round is the last
        before = ids[-2] if len(ids) > 1 and ids[-1] == current.round_id else None
        return {"after_round": before, "round_open": current.round_id}

    @staticmethod
    def _where(between: Mapping[str, Any]) -> str:
        after, open_ = between["after_round"], between["round_open"]
        if open_ is not None:
            return f"while round {open_} was taking bets, before its first card"
        return f"after round {after} was settled" if after is not None else "before any round was opened"

    def _key_outside_round(self, shoe: int, key: int, msg: Mapping[str, Any], time_ms: int) -> Derived:
        """A deal-complete or exposure key pressed while no round has a card out (after the
        last round was settled, before the next one's first card). The exposure rules (5.4;
        LIR 5.5) speak of cards exposed during the deal, and a count point needs a deal, so no
        rule covers it: it is referred to the shift manager (6.1) with the key press and the
        shoe's place in the deck as evidence (an exposed card may be the next one out). It
        belongs to no round: the settled round stands and the next round is not touched."""
        name = KEY_NAMES[key]
        session = self.shoes.get(shoe)
        shoe_no = session.shoe_no if session is not None else 0
        next_index = session.next_index if session is not None and session.shoe_no else None
        between = self._between_rounds()
        what = "an exposed card" if name == "exposure" else "a deal complete"
        evidence = {"key": key, "key_name": name, "shoe_ms": msg["t_ms"], "time_ms": time_ms, "shoe_no": shoe_no,
                    "next_index": next_index}
        return _event(None, "key_outside_round", shoe=shoe, key=key, key_name=name, shoe_no=shoe_no, rule="6.1",
                      rules=["6.1"], decision=rounds.DecisionKind.REFERRED.value,
                      detail=f"the shoe's {name} key ({what}) was pressed {self._where(between)}, outside any "
                             "round; no rule covers it: referred to the shift manager, the next round is not "
                             "affected",
                      **between, evidence=[evidence])

    def _deck_fault_outside_round(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any],
                                  time_ms: int) -> Derived:
        """Extra or missing cards reported by DECK_STATUS while no round is in play (after the
        last round was settled, typically at the end of the shoe). The deck rules (TCP family
        5.1, 5.8; LIR 5.2) void the round in play, and earlier rounds stand (5.1.2): with no
        round in play there is none to void, so the fault is referred to the shift manager
        (6.1) with the shoe's report as evidence (its counts and, at the end of a shoe, the
        cards never dealt), to count the deck by hand (5.8) before the next round. It belongs
        to no round: the settled rounds stand and the next round is not touched."""
        integrity = int(msg["integrity"])
        faults = [f.value for bit, f in ((8, rounds.DeckFault.MISSING), (16, rounds.DeckFault.EXTRA)) if integrity & bit]
        never_dealt: list[int] = []
        if integrity & 8:
            try:
                bitmap = bytes.fromhex(str(msg.get("missing_map", "")))
            except ValueError:
                bitmap = b""
            never_dealt = [code for code in range(52) if code // 8 < len(bitmap) and bitmap[code // 8] & (1 << (code % 8))]
        between = self._between_rounds()
        evidence = {"shoe_no": msg["shoe_no"], "deck_id": msg["deck_id"], "reason": msg["reason"],
                    "dealt": msg["dealt"], "remaining": msg["remaining"], "integrity": integrity,
                    "duplicates": msg["duplicates"], "foreign": msg["foreign"], "unread": msg["unread"],
                    "missing": msg["missing"], "never_dealt": never_dealt, "time_ms": time_ms,
                    "journal_holds": session.next_index - 1 if session.shoe_no == int(msg["shoe_no"]) else None}
        return _event(None, "deck_fault_outside_round", shoe=shoe, shoe_no=msg["shoe_no"], faults=faults,
                      rule="6.1", rules=consistency.deck_rules(self._game(), "extra_missing") + ["6.1"],
                      decision=rounds.DecisionKind.REFERRED.value,
                      detail=f"shoe {shoe} reported {' and '.join(f + ' cards' for f in faults)} (DECK_STATUS "
                             f"integrity {integrity}) {self._where(between)}, with no round in play to void; "
                             "earlier rounds stand: referred to the shift manager to count the deck, the next "
                             "round is not affected",
                      **between, evidence=[evidence])

    def _game(self) -> str:
        return self.current.game if self.current is not None else self.setup.game

    def _inconsistent(self, body: dict[str, Any], fault: rounds.DeckFault, time_ms: int) -> list[Derived]:
        """An inconsistent shoe: the event with its evidence, and the round in play (if any,
        and not void already) takes it as a deck irregularity its game's rules decide."""
        body = dict(body)
        out = [_event(self._round_id(), str(body.pop("type")), **body)]
        round_ = self.current
        if round_ is None or round_.void is not None or round_.status is rounds.RoundStatus.SETTLED:
            return out
        op = rounds.DeckIrregularity(fault=fault, detail=str(body["message"]), time_ms=time_ms)
        return out + list(self._do(round_, op, source="shoe").derived)

    def _key(self, shoe: int, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        key = int(msg["key"])
        rid = self._round_id()
        out = [_event(rid, "shoe_key", shoe=shoe, key=key, shoe_ms=msg["t_ms"])]
        if key not in KEY_NAMES:
            return out
        if self.current is None or self.current.status in (rounds.RoundStatus.SETTLED, rounds.RoundStatus.BETTING):
            # No round has a card out: nothing for the key to count or expose in a round.
            return out + [self._key_outside_round(shoe, key, msg, time_ms)]
        op: Any
        if key == 2:
            op = rounds.DealComplete(source=rounds.Source.SHOE_KEY, time_ms=time_ms)
        else:
            op = rounds.ExposureDeclared(source=rounds.Source.SHOE_KEY, time_ms=time_ms)
        return out + list(self._do(self.current, op, source="shoe").derived)

    def _deck_status(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        rid = self._round_id()
        out = [_event(rid, "deck_status", shoe=shoe, shoe_no=msg["shoe_no"], reason=msg["reason"],
                      dealt=msg["dealt"], remaining=msg["remaining"], integrity=msg["integrity"],
                      duplicates=msg["duplicates"], foreign=msg["foreign"], unread=msg["unread"],
                      missing=msg["missing"])]
        if msg["reason"] == 1 and int(msg["shoe_no"]) != session.shoe_no:
            # A shoe loaded with another session. One naming the session in use is no new
            # start: the firmware frames this status after the cards waiting in its log, so it
            # can come after cards of the session (a NEW_SHOE run again before the first card,
            # SPEC 4); taken as a new start it set the session back to index 1 and the shoe's
            # cards were asked for and placed again (issue 11 soak).
            out += self._stop_waiting(shoe, session, session.next_index - 1, time_ms,
                                      f"shoe {shoe} was loaded with shoe {msg['shoe_no']}")
            self._end_session(session)
            session.shoe_no, session.deck_id = int(msg["shoe_no"]), int(msg["deck_id"])
            session.next_index, session.pending, session.requested_from, session.known_dealt = 1, {}, 0, 0
            session.forget_other_sessions()
        integrity = int(msg["integrity"])
        if not integrity & (8 | 16):
            # Duplicate, foreign and unread cards are flagged from their own card frames.
            return out
        if self.current is None or self.current.status is rounds.RoundStatus.SETTLED:
            return out + [self._deck_fault_outside_round(shoe, session, msg, time_ms)]
        for bit, fault in ((8, rounds.DeckFault.MISSING), (16, rounds.DeckFault.EXTRA)):
            if integrity & bit:
                op = rounds.DeckIrregularity(fault=fault, detail=f"shoe {shoe} DECK_STATUS integrity {integrity}",
                                             time_ms=time_ms)
                out += list(self._do(self.current, op, source="shoe").derived)
        return out

    # -- controller inputs -----------------------------------------------------------
    def apply_input(self, body: Mapping[str, Any], t_ns: int) -> Applied:
        """Advance by one table-controller input; a refused input changes nothing.

        As for frames, a fault in the daemon's own code becomes an `internal_error` event
        (journaled with the input, reproduced by replay) rather than an input that changed
        state in memory but never reached the journal."""
        try:
            return self._apply_input(body, t_ns)
        except Exception as exc:  # noqa: BLE001 - reported as an event, journaled, shown
            return Applied((_event(self._round_id(), "internal_error", action=str(body.get("action")),
                                   error=type(exc).__name__, message=str(exc), rule="6.1"),))

    def _apply_input(self, body: Mapping[str, Any], t_ns: int) -> Applied:
        time_ms = t_ns // 1_000_000
        action = body.get("action")
        try:
            if action == "open_round":
                return self._open_round(time_ms)
            if action == "op":
                round_ = self._round_for(body)
                try:
                    op = rounds.operation_from_json(body["op"])
                except (KeyError, TypeError, ValueError) as exc:
                    raise InputError("op", str(exc)) from None
                if (isinstance(op, (rounds.PlaceWager, rounds.ChangeWager)) and op.wager == "progressive"
                        and op.amount and round_.can(op)):  # a wager the round refuses anyway says why
                    self._need_jackpot_reset("a progressive wager")
                done = self._do(round_, op, source="table")
                derived = done.derived
                if done.refused is None and isinstance(op, rounds.ProgressiveSelection):
                    # The engine records it silently; the table's displays need to see it.
                    # The round's selection as it now stands: after the first card an op only
                    # fills in what was missing (reading 70).
                    derived += (_event(round_.round_id, "progressive_selected", magic_card=round_.magic_card,
                                       lucky_seat=round_.lucky_seat, rules=["4.3", "4.4"]),)
                return Applied(derived, done.refused, done.round_id)
            if action == "settle":
                return self._settle(self._round_for(body), body.get("jackpot_pool"), time_ms)
            if action == "jackpot_pool":
                amount = body.get("amount")
                if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
                    raise InputError("amount", "the jackpot pool is a non-negative integer in minor units")
                self._need_jackpot_reset("a jackpot pool")
                self.jackpot_pool = amount
                return Applied((_event(self._round_id(), "jackpot_pool", amount=amount),))
            if action == "setup":
                return self._setup(body)
            if action == "shoe_loaded":
                session = self.shoes.setdefault(int(body["shoe"]), ShoeSession())
                # Frames still waiting for cards of the session being replaced: those cards
                # will never come (the shoe's log is the new session's).
                released = self._stop_waiting(int(body["shoe"]), session, session.next_index - 1, time_ms,
                                              f"shoe {body['shoe']} was loaded with shoe {body['shoe_no']}")
                if int(body["shoe_no"]) != session.shoe_no:
                    self._end_session(session)
                session.shoe_no, session.deck_id = int(body["shoe_no"]), int(body["deck_id"])
                session.next_index, session.pending, session.requested_from, session.known_dealt = 1, {}, 0, 0
                session.forget_other_sessions()
                loaded = released + [_event(self._round_id(), "shoe_loaded", shoe=body["shoe"],
                                            shoe_no=body["shoe_no"], deck_id=body["deck_id"])]
                dealt = int(body.get("dealt", 0))
                if dealt > 0:
                    # Reconciled from a HELLO (the NEW_SHOE's REPLY was lost across a shoe
                    # reboot): the shoe has dealt cards of it; they are asked for from 1.
                    loaded[len(released)].body["reconciled"] = str(body.get("reconciled", ""))
                    session.known_dealt, session.requested_from = dealt, 1
                    loaded.append(_event(self._round_id(), "cards_requested", shoe=body["shoe"],
                                         shoe_no=session.shoe_no, from_index=1, dealt=dealt))
                return Applied(tuple(loaded))
            raise InputError("action", f"unknown action {action!r}")
        except (RoundOperationError, InputError) as exc:
            refusal = _event(self._round_id(), "input_refused", action=action, **_error_body(exc))
            return Applied((refusal,), refused=exc)

    def _need_jackpot_reset(self, what: str) -> None:
        """Refuse `what` at once on a table with no jackpot reset: settling a progressive needs
        the pool and the amount it resets to (the round file's `jackpot`), so accepting it would
        only fail the round's settlement later, where no void could undo it."""
        if self.setup.jackpot_reset is None:
            raise InputError("jackpot.reset", f"{what} is refused: this table has no [jackpot] reset configured "
                             "(the amount the progressive resets to), so no progressive can be settled; "
                             "set it in the table file and restart the daemon")

    def _setup(self, body: Mapping[str, Any]) -> Applied:
        # A daemon start journals the table's settings, so a replay uses the settings each
        # round was played under. A round in play keeps its own game and procedure.
        try:
            limits = tuple(sorted((str(w), int(v["min"]), int(v["max"])) for w, v in dict(body["limits"]).items()))
            reset = body.get("jackpot_reset")
            setup = TableSetup(name=str(body["name"]), game=str(body["game"]), seats=int(body["seats"]),
                               dealing=str(body["dealing"]),
                               method=None if body.get("method") is None else str(body["method"]),
                               limits=limits, jackpot_reset=None if reset is None else int(reset))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError("setup", f"bad table settings: {exc}") from None
        self.setup = setup
        return Applied((_event(self._round_id(), "table_setup", **setup.to_json()),))

    def _round_for(self, body: Mapping[str, Any]) -> Round:
        rid = body.get("round_id")
        round_ = self.rounds.get(rid) if isinstance(rid, str) else None
        if round_ is None:
            raise InputError("round_id", f"no round {rid!r} at this table")
        return round_

    def next_round_id(self) -> str:
        """The id the next `open_round` will give (deterministic, so replay agrees)."""
        return f"{self.setup.name}-{self.rounds_opened + 1:06d}"

    def _open_round(self, time_ms: int) -> Applied:
        closing: tuple[Derived, ...] = ()
        previous = self.current
        if previous is not None and previous.status is not rounds.RoundStatus.SETTLED:
            if previous.void is None:
                raise InputError("round", f"round {previous.round_id} is still in play; settle or void it first")
            # A void round still gets its settlement (every wager returned) on the record.
            closed = self._settle(previous, None, time_ms)
            if closed.refused is not None:
                raise closed.refused
            closing = closed.derived
        rid = self.next_round_id()
        op = rounds.OpenRound(
            round_id=rid, game=self.setup.game, device=rounds.Device(self.setup.dealing),
            method=None if self.setup.method is None else rounds.XtremeMethod(self.setup.method),
            positions=self.setup.seats, time_ms=time_ms,
        )
        round_ = Round.open(op)
        self.rounds_opened += 1
        self.rounds[rid] = round_
        self.current = round_
        self._trim()
        opened = _event(rid, "round_opened", round_id=rid, game=self.setup.game, dealing=self.setup.dealing,
                        method=self.setup.method, positions=self.setup.seats)
        return Applied(closing + (opened,) + tuple(self._events(rid, round_.events)), round_id=rid)

    def _trim(self) -> None:
        if len(self.rounds) > KEEP_ROUNDS:
            for rid in list(self.rounds)[: len(self.rounds) - KEEP_ROUNDS]:
                if self.rounds[rid] is not self.current:
                    del self.rounds[rid]

    def _settle(self, round_: Round, pool: Any, time_ms: int) -> Applied:
        if pool is None:
            # A pool set while the table had a reset is not offered once it has none: with no
            # reset no progressive can be settled, and a round without one needs no pool.
            pool = self.jackpot_pool if self.setup.jackpot_reset is not None else None
        elif not isinstance(pool, int) or isinstance(pool, bool) or pool < 0:
            raise InputError("jackpot_pool", "a non-negative integer in minor units")
        else:
            self._need_jackpot_reset("a jackpot pool")
        retry_pool: int | None = None
        if round_.status is rounds.RoundStatus.SETTLED and round_.round_id not in self.settlements:
            # Closed earlier, but the settlement engine refused it (settlement_failed), e.g.
            # for want of a setting since corrected: settle the closed round again, with the
            # jackpot pool given now if the one given at closing was missing.
            derived: list[Derived] = []
            retry_pool = pool if round_.jackpot_pool is None else None
        else:
            op = rounds.Settle(jackpot_pool=pool, time_ms=time_ms)
            self._frozen.pop(round_.round_id, None)  # the round may change: its pickle is stale
            try:
                # The round closes only if the settlement engine settles it: a round it refuses
                # (an input missing, a setting wrong) stays in play, so the input can still be
                # given or a supervisor can void it; a closed round with no settlement could
                # be neither (the stranded round).
                events, made = round_.do_then(op, self._settles)
            except RoundOperationError as exc:
                refusal = _event(round_.round_id, "input_refused", op=type(op).__name__, **_error_body(exc))
                return Applied((refusal,), refused=exc, round_id=round_.round_id)
            except SettlementRefused as exc:
                refusal = _event(round_.round_id, "input_refused", op=type(op).__name__, **_error_body(exc))
                return Applied((refusal,), refused=exc, round_id=round_.round_id)
            derived = self._events(round_.round_id, events) + self._shuffle_check(round_)
            if round_.shoe_no is not None:  # its cards are collected onto the shoe's pile (reading 60)
                self.shuffle.round_collected(round_.shoe_no, collected_order(round_.placements, round_.cards))
            if made is not None:
                self.settlements[round_.round_id] = made
                derived.append(Derived("settlement", round_.round_id, made))
                return Applied(tuple(derived), round_id=round_.round_id)
        try:
            settlement = self._settlement(round_, retry_pool)
        except Exception as exc:  # noqa: BLE001 - the round is closed; its settlement waits for a person
            # The round is closed (the Settle operation was applied), but the settlement engine
            # refused it: shown and journaled for the shift manager (6.1); replay agrees.
            body = {"type": "settlement_failed", "round_id": round_.round_id, **_error_body(exc), "rule": "6.1"}
            derived.append(_event(round_.round_id, "settlement_failed", **{k: v for k, v in body.items()
                                                                            if k != "type"}))
            return Applied(tuple(derived), round_id=round_.round_id)
        self.settlements[round_.round_id] = settlement
        derived.append(Derived("settlement", round_.round_id, settlement))
        return Applied(tuple(derived), round_id=round_.round_id)

    def _settles(self, round_: Round) -> dict[str, Any] | None:
        """The settlement of `round_` just closed by Settle, or None when Settle did not close it
        (its last count point found a problem that waits for a person). Raises SettlementRefused
        naming the field when the settlement engine refuses the round."""
        if round_.status is not rounds.RoundStatus.SETTLED:
            return None
        try:
            return self._settlement(round_)
        except Exception as exc:  # noqa: BLE001 - any refusal keeps the round in play, named
            field_name = getattr(exc, "field", None)
            raise SettlementRefused(field_name if isinstance(field_name, str) else "settlement",
                                    f"the settlement engine refused round {round_.round_id}: "
                                    f"{getattr(exc, 'message', None) or exc}; the round is still in play "
                                    "(give what is missing and settle again, or void it)") from None

    def _settlement(self, round_: Round, pool: int | None = None) -> dict[str, Any]:
        if pool is not None:
            self.pool_given_late[round_.round_id] = pool
        parsed = settlement.parse_round(self.export(round_))
        result: dict[str, Any] = settlement.settle(parsed).to_json()
        return {"type": "settlement", "round_id": round_.round_id, "settlement": result}

    def export(self, round_: Round) -> dict[str, Any]:
        """`round_` in the round-file format, with this table's limits and jackpot reset."""
        data: dict[str, Any] = round_.to_round_json(limits=self.setup.limits_json(),
                                                    jackpot_reset=self.setup.jackpot_reset)
        late = self.pool_given_late.get(round_.round_id)
        if late is not None and isinstance(data.get("jackpot"), dict):
            data["jackpot"]["pool"] = late
        return data

    # -- shared ----------------------------------------------------------------------
    def _events(self, rid: str, events: Any) -> list[Derived]:
        return [Derived("event", rid, {"type": ev.kind, **ev.to_json()}) for ev in events]

    def _do(self, round_: Round, op: Any, *, source: str) -> Applied:
        try:
            self._frozen.pop(round_.round_id, None)  # the round may change: its pickle is stale
            events = round_.do(op)
        except RoundOperationError as exc:
            refusal = _event(round_.round_id, "input_refused" if source == "table" else "shoe_input_refused",
                             op=type(op).__name__, **_error_body(exc))
            return Applied((refusal,), refused=exc, round_id=round_.round_id)
        derived = self._events(round_.round_id, events) + self._shuffle_check(round_)
        return Applied(tuple(derived), round_id=round_.round_id)

    # -- the shuffle alarm (issue 14 item 6; cardshoe.shuffle) -------------------------
    @staticmethod
    def _session_order(session: ShoeSession) -> list[int | None]:
        """The current session's cards by index: codes, None for one unread or of no deck."""
        out: list[int | None] = []
        for (shoe_no, _), fp in sorted(session.cards.items()):
            if shoe_no == session.shoe_no:
                code = fp[1]
                out.append(code if code is not None and 0 <= code < 52 else None)
        return out

    def _end_session(self, session: ShoeSession) -> None:
        """The session in `session` ends (another is loaded): its order becomes a reference."""
        if session.shoe_no:
            dealt = [c for c in self._session_order(session) if c is not None]
            self.shuffle.shoe_finished(session.deck_id, session.shoe_no, dealt)

    def _shuffle_check(self, round_: Round) -> list[Derived]:
        """Once a round has been dealt, its shoe's order so far against the deck's earlier
        orders; a `shuffle_alarm` event (rule 5.1, referred) the first time it fails."""
        if round_.shoe_no is None or round_.status in (rounds.RoundStatus.BETTING, rounds.RoundStatus.DEALING):
            return []
        found = next(((serial, s) for serial, s in self.shoes.items() if s.shoe_no == round_.shoe_no), None)
        if found is None:
            return []
        serial, session = found
        dealt = self._session_order(session)
        verdict = self.shuffle.check(session.deck_id, session.shoe_no, dealt, round_.round_id)
        if verdict is None:
            return []
        body = alarm_body(verdict, shoe=serial, shoe_no=session.shoe_no, deck_id=session.deck_id,
                          round_id=round_.round_id, dealt=dealt,
                          history=self.shuffle.history.get(session.deck_id, []))
        self.shuffle.alarmed[session.shoe_no] = body
        return [_event(round_.round_id, "shuffle_alarm", **body)]
