"""A round of play as a state machine of recorded operations.

``Round.do(op)`` verifies an operation (``verify`` raises a typed error naming what is wrong;
``can`` answers yes or no), applies it, records it in ``operations`` and returns the events it
caused. A refused operation changes nothing. ``Round.replay(operations)`` rebuilds a round,
with the same state and events, from its recorded operations.

Choices made where the rules are silent (reported to the lead):

- The first card out of the shoe closes betting if "no more bets" was not announced: the rules
  take wagers "prior to the first card being dealt" (3.4), so a card is the latest point.
- Count points are the "deal complete" key, the first decision and settlement (the dealer's
  hand in Xtreme method B is checked by a second key press or at settlement). A count point
  that finds too few cards, and any card drawn when none is due, opens one count flag per
  phase; a person then reports which position holds the wrong count.
- "During the deal" (5.4; LIR 5.5) is while a dealing phase is open. Two declarations naming
  the same card (by place or shoe index) count once; declarations naming no card count apart.
- Any flag that waits for a person blocks settlement.
- Manual device (3.8), one seat one card short or long: the shoe's order cannot show which
  pass slipped, so the flag lists the candidate placements and a supervisor confirms one (5.7
  voids the seat) or refuses them (5.2, void); a manual deal no list can settle is void.
- Let It Ride 3.4: the 1, 2 and $ are kept equal (a change moves all three); "no more bets"
  is refused while a seat holds only some of them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from .errors import (
    BadAmountError,
    BadSeatError,
    CandidateError,
    DecisionError,
    DuplicateShoeIndexError,
    ExposureMismatchError,
    ProcedureError,
    RoundOperationError,
    UnequalWagersError,
    UnknownFlagError,
    UnknownWagerError,
    WagersClosedError,
    WrongStateError,
)
from .events import (
    BetsClosed,
    CardEvidence,
    CardNotDue,
    CardPlaced,
    CountChecked,
    CountReport,
    DecisionKind,
    DecisionRecorded,
    Event,
    ExposureRecorded,
    FlagResolved,
    Flagged,
    HandComplete,
    HandsRebuilt,
    Irregularity,
    IrregularityKind,
    PlacementCandidate,
    RoundSettled,
    RoundVoided,
    SeatVoided,
    VoidMark,
    WagerAccepted,
    to_jsonable,
)
from .layout import UnitLayout, layout_placements, physical_layout, reconstruction, slip_passes
from .operations import (
    ChangeWager,
    Choice,
    DealComplete,
    Decision,
    DeckFault,
    DeckIrregularity,
    ExposureDeclared,
    HandCountReported,
    NoMoreBets,
    OpenRound,
    Operation,
    PlaceWager,
    PlayerAbsent,
    ProgressiveSelection,
    Settle,
    ShoeCard,
    SupervisorConfirmation,
    VoidRound,
    WagerWithdrawn,
)
from .places import MAX_SEATS, Place, PlaceKind, Position
from .procedures import (
    BASE_WAGERS,
    DECISION_WAGERS,
    GAME_IDS,
    LET_IT_RIDE,
    STUD,
    WAGERS,
    CountPoint,
    DealingProcedure,
    Device,
    GameRules,
    Phase,
    XtremeMethod,
    build_procedure,
    game_rules,
)

__all__ = ["Round", "RoundStatus", "Exposure"]


class RoundStatus(StrEnum):
    BETTING = "betting"
    DEALING = "dealing"
    """The initial deal (phase ``deal``) is open."""
    DECIDING = "deciding"
    """The deal is closed; players decide."""
    DEALER = "dealer"
    """Xtreme method B: the dealer's hand is being dealt after the decisions."""
    COMPLETE = "complete"
    """Every phase is closed; waiting for settlement."""
    SETTLED = "settled"


@dataclass(frozen=True)
class Exposure:
    """An exposure as recorded: who declared it, which card if known, and whether it counted."""

    source: str
    place: Place | None
    shoe_index: int | None
    during_deal: bool
    counted: bool
    time_ms: int


@dataclass
class _PhaseState:
    opened: bool = False
    closed: bool = False
    indices: list[int] = field(default_factory=list)
    """Shoe indices of the cards dealt in this phase, in order, including cards not due."""
    flag: int | None = None
    """The open count flag of this phase, if any."""


_TCP_FAMILY = ("three-card-poker", "megalink-three-card-poker", "megalink-three-card-poker-xtreme")
_LIR_TRIO = ("one", "two", "dollar")  # Let It Ride 3.4: three equal wagers placed together
_DEALING_STATUSES = (RoundStatus.DEALING, RoundStatus.DEALER)


class Round:
    """One round of one game at one table, rebuilt from its operations."""

    def __init__(self, opening: OpenRound) -> None:
        """Use :meth:`open`; this validates ``opening`` and sets up an empty round."""
        if opening.game not in GAME_IDS:
            raise ProcedureError(f"unknown game {opening.game!r}; expected one of {', '.join(GAME_IDS)}")
        if not isinstance(opening.positions, int) or not 1 <= opening.positions <= MAX_SEATS:
            raise BadSeatError(f"positions must be 1..{MAX_SEATS}, got {opening.positions!r}")
        if not opening.round_id:
            raise RoundOperationError("round_id must not be empty")
        # Building a one-seat procedure validates the device and the Xtreme method up front.
        build_procedure(opening.game, opening.device, (1,), opening.method)
        self.round_id = opening.round_id
        self.game = opening.game
        self.device = Device(opening.device)
        self.method = XtremeMethod(opening.method) if opening.method is not None else None
        self.positions = opening.positions
        self.rules: GameRules = game_rules(opening.game)
        self.status = RoundStatus.BETTING
        self.wagers: dict[int, dict[str, int]] = {}
        self.magic_card: int | None = None
        self.lucky_seat: int | None = None
        self.procedure: DealingProcedure | None = None
        self._phases: list[_PhaseState] = []
        self.cards: dict[int, ShoeCard] = {}
        self.shoe_no: int | None = None
        self.placements: dict[int, Place] = {}
        self.not_due: list[int] = []
        self.other_shoe_cards: list[ShoeCard] = []
        self.exposures: list[Exposure] = []
        self.decisions: dict[int, list[Choice]] = {}
        self.absent: set[int] = set()
        self._flags: list[Irregularity] = []
        self.void: VoidMark | None = None
        self.void_seats: dict[int, VoidMark] = {}
        self.jackpot_pool: int | None = None
        self.settled_ms: int | None = None
        self._operations: list[Operation] = [opening]
        self._events: list[Event] = []

    # ---- construction and replay ---------------------------------------------------------

    @classmethod
    def open(cls, opening: OpenRound) -> Round:
        """Open a round ("Place your bets, please", 3.1)."""
        return cls(opening)

    @classmethod
    def replay(cls, operations: Iterable[Operation]) -> Round:
        """Rebuild a round from its recorded operations (the first must be OpenRound)."""
        ops = list(operations)
        if not ops or not isinstance(ops[0], OpenRound):
            raise WrongStateError("a round's operations must start with open_round")
        rnd = cls(ops[0])
        for op in ops[1:]:
            rnd.do(op)
        return rnd

    @property
    def operations(self) -> tuple[Operation, ...]:
        return tuple(self._operations)

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def irregularities(self) -> tuple[Irregularity, ...]:
        return tuple(self._flags)

    @property
    def pending_flags(self) -> tuple[Irregularity, ...]:
        """Flags waiting for a person (they block settlement)."""
        return tuple(f for f in self._flags if f.open)

    # ---- the verify / can / do triple ----------------------------------------------------

    def verify(self, op: Operation) -> None:
        """Raise a RoundOperationError subclass naming why ``op`` cannot be applied now."""
        if self.status is RoundStatus.SETTLED:
            raise WrongStateError(f"round {self.round_id} is settled; {op.OP} refused")
        handler = getattr(self, "_verify_" + op.OP, None)
        if handler is None:
            raise WrongStateError(f"{op.OP} is not an operation on an open round")
        handler(op)

    def can(self, op: Operation) -> bool:
        """Whether ``op`` would be accepted now."""
        try:
            self.verify(op)
        except RoundOperationError:
            return False
        return True

    def do(self, op: Operation) -> tuple[Event, ...]:
        """Verify and apply ``op``; record it and return the events it caused.

        Raises a RoundOperationError subclass, leaving the round unchanged, if ``op`` is refused.
        """
        self.verify(op)
        saved = self._save()
        try:
            events: list[Event] = []
            getattr(self, "_do_" + op.OP)(op, events)
        except BaseException:
            self._restore(saved)
            raise
        self._operations.append(op)
        self._events.extend(events)
        return tuple(events)

    _STATE_FIELDS = (
        "status", "wagers", "magic_card", "lucky_seat", "procedure", "_phases", "cards", "shoe_no",
        "placements", "not_due", "other_shoe_cards", "exposures", "decisions", "absent", "_flags",
        "void", "void_seats", "jackpot_pool", "settled_ms",
    )

    def _save(self) -> dict[str, Any]:
        # Values inside the containers are frozen, so copying the containers is enough to undo
        # an operation that fails half way (a bug, since verify ran first: belt and braces).
        saved: dict[str, Any] = {}
        for name in self._STATE_FIELDS:
            value = getattr(self, name)
            if name == "wagers":
                value = {s: dict(w) for s, w in value.items()}
            elif name == "decisions":
                value = {s: list(c) for s, c in value.items()}
            elif name == "_phases":
                value = [_PhaseState(p.opened, p.closed, list(p.indices), p.flag) for p in value]
            elif isinstance(value, (dict, list, set)):
                value = copy.copy(value)
            saved[name] = value
        return saved

    def _restore(self, saved: dict[str, Any]) -> None:
        for name, value in saved.items():
            setattr(self, name, value)

    # ---- helpers -------------------------------------------------------------------------

    def active_seats(self) -> tuple[int, ...]:
        """Seats holding a base wager (3.4): the positions the procedure deals to."""
        if self.procedure is not None:
            return self.procedure.seats
        base = BASE_WAGERS[self.game]
        return tuple(sorted(s for s, w in self.wagers.items() if any(name in base for name in w)))

    def _check_seat(self, seat: int) -> None:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= self.positions:
            raise BadSeatError(f"seat must be 1..{self.positions} on this table, got {seat!r}")

    def _phase_index(self) -> int | None:
        for i, ph in enumerate(self._phases):
            if ph.opened and not ph.closed:
                return i
        return None

    def _card_evidence(self, index: int) -> CardEvidence:
        card = self.cards[index]
        return CardEvidence(index, card.code, card.reader_id, card.shoe_ms, card.time_ms)

    def _flag(self, flag: Irregularity, events: list[Event]) -> Irregularity:
        flag = replace(flag, id=len(self._flags) + 1)
        self._flags.append(flag)
        events.append(Flagged(flag))
        self._apply_decision(flag, events)
        return flag

    def _update_flag(self, flag: Irregularity, events: list[Event], *, resolved: bool = False) -> None:
        self._flags[flag.id - 1] = flag
        events.append(FlagResolved(flag) if resolved else Flagged(flag))

    def _void_round(self, rules: tuple[str, ...], reason: str, flag: int | None, events: list[Event]) -> None:
        if self.void is None:
            self.void = VoidMark(rules, reason, flag)
            events.append(RoundVoided(rules, reason))

    def _void_seat(self, seat: int, rules: tuple[str, ...], reason: str, flag: int | None, events: list[Event]) -> None:
        if seat not in self.void_seats:
            self.void_seats[seat] = VoidMark(rules, reason, flag)
            events.append(SeatVoided(seat, rules, reason))

    def _apply_decision(self, flag: Irregularity, events: list[Event]) -> None:
        if flag.decision is DecisionKind.VOID_ROUND:
            self._void_round(flag.rules, flag.detail, flag.id, events)
        elif flag.decision is DecisionKind.VOID_SEAT:
            for seat in flag.void_seats:
                self._void_seat(seat, flag.rules, flag.detail, flag.id, events)
        self._maybe_open_dealer_phase(events)

    def hand(self, position: Position) -> tuple[int | None, ...]:
        """The cards a position holds, by card number (None for an unread card)."""
        placed = sorted(
            (place.number, self.cards[index].code)
            for index, place in self.placements.items()
            if place.kind is position.kind and place.seat == position.seat
        )
        return tuple(code for _, code in placed)

    def hands(self) -> dict[Position, tuple[int | None, ...]]:
        """Every seat, dealer and community hand holding cards."""
        positions = sorted({p.position for p in self.placements.values() if p.kind in (PlaceKind.SEAT, PlaceKind.DEALER, PlaceKind.COMMUNITY)})
        return {pos: self.hand(pos) for pos in positions}

    @property
    def burns(self) -> tuple[int | None, ...]:
        """The procedure's burn cards, by burn number."""
        return tuple(self.cards[i].code for i, p in sorted(self.placements.items(), key=lambda kv: kv[1].number) if p.kind is PlaceKind.BURN)

    @property
    def security(self) -> tuple[int | None, ...]:
        """Xtreme method C's security card (3.7.3.1), out of play."""
        return tuple(self.cards[i].code for i, p in self.placements.items() if p.kind is PlaceKind.SECURITY)

    # ---- wagers --------------------------------------------------------------------------

    def _verify_wager(self, seat: int, wager: str, amount: int, *, change: bool) -> None:
        if self.status is not RoundStatus.BETTING:
            raise WagersClosedError(
                f"wagers are closed after 'no more bets' (rules {', '.join(self.rules.wagers_closed)}); "
                f"{'change of' if change else 'new'} {wager!r} on seat {seat} refused"
            )
        self._check_seat(seat)
        if wager not in WAGERS[self.game]:
            raise UnknownWagerError(f"{self.game} has no wager {wager!r}; its wagers are {', '.join(sorted(WAGERS[self.game]))}")
        if wager in DECISION_WAGERS[self.game]:
            raise UnknownWagerError(f"{wager!r} is placed by a player's decision after the deal, not before 'no more bets'")
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < (0 if change else 1):
            raise BadAmountError(f"amount must be {'a non-negative' if change else 'a positive'} integer in minor units, got {amount!r}")
        held = self.wagers.get(seat, {})
        if change and wager not in held:
            raise UnknownWagerError(f"seat {seat} has no {wager!r} wager to change; place it first")
        if not change and wager in held:
            raise UnknownWagerError(f"seat {seat} already has a {wager!r} wager; change it instead")
        if not change and self.game == LET_IT_RIDE and wager in _LIR_TRIO:
            for other in _LIR_TRIO:
                if other in held and held[other] != amount:
                    raise UnequalWagersError(
                        f"seat {seat}: the {wager!r} wager of {amount} differs from its {other!r} wager of "
                        f"{held[other]}; the 1, 2 and $ are three equal wagers placed together (3.4)"
                    )

    def _verify_place_wager(self, op: PlaceWager) -> None:
        self._verify_wager(op.seat, op.wager, op.amount, change=False)

    def _verify_change_wager(self, op: ChangeWager) -> None:
        self._verify_wager(op.seat, op.wager, op.amount, change=True)

    def _do_place_wager(self, op: PlaceWager, events: list[Event]) -> None:
        self.wagers.setdefault(op.seat, {})[op.wager] = op.amount
        events.append(WagerAccepted(op.seat, op.wager, op.amount))

    def _do_change_wager(self, op: ChangeWager, events: list[Event]) -> None:
        names: tuple[str, ...] = (op.wager,)
        if self.game == LET_IT_RIDE and op.wager in _LIR_TRIO:
            # 3.4: the 1, 2 and $ are three equal wagers placed together, so changing (or
            # withdrawing) one changes them all; they can never be left unequal.
            names = (op.wager,) + tuple(w for w in _LIR_TRIO if w != op.wager and w in self.wagers[op.seat])
        for name in names:
            if op.amount == 0:
                del self.wagers[op.seat][name]
            else:
                self.wagers[op.seat][name] = op.amount
            events.append(WagerAccepted(op.seat, name, op.amount))
        if not self.wagers[op.seat]:
            del self.wagers[op.seat]

    def _verify_progressive_selection(self, op: ProgressiveSelection) -> None:
        if self.game != LET_IT_RIDE:
            raise WrongStateError("the Magic Card and Lucky Player belong to Let It Ride (4.3-4.4)")
        if self.cards:
            raise WrongStateError("the Magic Card and Lucky Player must be recorded before the first card is dealt")
        if op.magic_card is not None and (not isinstance(op.magic_card, int) or not 0 <= op.magic_card <= 51):
            raise RoundOperationError(f"magic_card must be a card code 0..51, got {op.magic_card!r}")
        if op.lucky_seat is not None:
            self._check_seat(op.lucky_seat)

    def _do_progressive_selection(self, op: ProgressiveSelection, events: list[Event]) -> None:
        self.magic_card, self.lucky_seat = op.magic_card, op.lucky_seat

    def _verify_no_more_bets(self, op: NoMoreBets) -> None:
        if self.status is not RoundStatus.BETTING:
            raise WrongStateError("'no more bets' was already announced")
        if not self.active_seats():
            raise ProcedureError("no seat holds a wager that takes part (3.4); nothing to deal")
        if self.game == LET_IT_RIDE:
            for seat, held in sorted(self.wagers.items()):
                placed = [w for w in _LIR_TRIO if w in held]
                missing = [w for w in _LIR_TRIO if w not in held]
                if placed and missing:
                    raise UnequalWagersError(
                        f"seat {seat} holds {', '.join(repr(w) for w in placed)} but no {missing[0]!r} wager; "
                        "the 1, 2 and $ are three equal wagers placed together (3.4)"
                    )

    def _do_no_more_bets(self, op: NoMoreBets, events: list[Event]) -> None:
        self._close_bets(events)

    def _close_bets(self, events: list[Event]) -> None:
        if self.game == LET_IT_RIDE:
            self._return_partial_trios(events)
        seats = self.active_seats()
        self.procedure = build_procedure(self.game, self.device, seats, self.method) if seats else None
        self._phases = [_PhaseState() for _ in (self.procedure.phases if self.procedure else ())]
        if self._phases:
            self._phases[0].opened = True
        self.status = RoundStatus.DEALING
        expected = len(self.procedure.places) if self.procedure else 0
        events.append(BetsClosed(seats, expected))

    def _return_partial_trios(self, events: list[Event]) -> None:
        """Let It Ride 3.4 when the first card closes betting (NoMoreBets refuses this): a seat
        holding only some of the 1, 2 and $ has no valid wager, so those are returned before the
        deal (the seat is not dealt to) and the return is flagged for the record."""
        for seat, held in sorted(self.wagers.items()):
            placed = [w for w in _LIR_TRIO if w in held]
            if not placed or len(placed) == len(_LIR_TRIO):
                continue
            amounts = ", ".join(f"{w!r} {held[w]}" for w in placed)
            for w in placed:
                del held[w]
                events.append(WagerAccepted(seat, w, 0))
            if not held:
                del self.wagers[seat]
            self._flag(Irregularity(
                0, IrregularityKind.NOT_COVERED, ("3.4",),
                f"the first card closed betting while seat {seat} held only {amounts}; the 1, 2 and $ are three "
                "equal wagers placed together, so these were returned and the seat is not dealt to",
                DecisionKind.ACKNOWLEDGED, "host", None, resolved_by="host",
            ), events)

    # ---- cards ---------------------------------------------------------------------------

    def _verify_shoe_card(self, op: ShoeCard) -> None:
        if not isinstance(op.index, int) or op.index < 1:
            raise RoundOperationError(f"shoe index must be 1 or more, got {op.index!r}")
        if op.code is not None and (not isinstance(op.code, int) or not 0 <= op.code <= 51):
            raise RoundOperationError(f"card code must be 0..51 or None (unread), got {op.code!r}")
        if (self.shoe_no is None or op.shoe_no == self.shoe_no) and op.index in self.cards:
            raise DuplicateShoeIndexError(f"shoe {op.shoe_no} card {op.index} is already in round {self.round_id}")
        if any(c.shoe_no == op.shoe_no and c.index == op.index for c in self.other_shoe_cards):
            raise DuplicateShoeIndexError(f"shoe {op.shoe_no} card {op.index} is already in round {self.round_id}")

    def _do_shoe_card(self, op: ShoeCard, events: list[Event]) -> None:
        if self.shoe_no is not None and op.shoe_no != self.shoe_no:
            # A card of another shoe session in the same round: not of the deck in use (5.1).
            self.other_shoe_cards.append(op)
            ev = CardEvidence(op.index, op.code, op.reader_id, op.shoe_ms, op.time_ms)
            self._flag(self._deck_flag(DeckFault.FOREIGN, f"card from shoe session {op.shoe_no} while round dealt from {self.shoe_no}", (ev,), "shoe"), events)
            return
        self.shoe_no = op.shoe_no
        if self.status is RoundStatus.BETTING:
            self._close_bets(events)  # 3.4: wagers are placed before the first card is dealt
        self.cards[op.index] = op
        i = self._phase_index()
        if i is not None and self.procedure is not None:
            phase, state = self.procedure.phases[i], self._phases[i]
            if len(state.indices) < len(phase.places):
                place = phase.places[len(state.indices)]
                state.indices.append(op.index)
                self.placements[op.index] = place
                events.append(CardPlaced(op.index, place, op.code, place in self.procedure.public_places, op.reader_id, op.shoe_ms))
                self._hand_complete(place.position, events)
            else:
                state.indices.append(op.index)
                self._not_due(op, i, events)
        else:
            # No phase open: a card between phases (method B before all decisions) or after the last.
            last = max((k for k, ph in enumerate(self._phases) if ph.opened), default=None)
            if last is not None:
                self._phases[last].indices.append(op.index)
            self._not_due(op, last, events)
        self._check_card_identity(op, events)

    def _hand_complete(self, position: Position, events: list[Event]) -> None:
        if self.procedure is None or position.kind not in (PlaceKind.SEAT, PlaceKind.DEALER, PlaceKind.COMMUNITY):
            return
        if len(self.hand(position)) == self.procedure.expected(position):
            events.append(HandComplete(position, self.hand(position)))

    def _not_due(self, op: ShoeCard, phase: int | None, events: list[Event]) -> None:
        self.not_due.append(op.index)
        events.append(CardNotDue(op.index, op.code, op.reader_id, op.shoe_ms))
        if self.void is not None:
            return  # the round is void already; the card is recorded as evidence only
        evidence = (self._card_evidence(op.index),)
        if phase is None or self.procedure is None:
            flag = Irregularity(
                0, IrregularityKind.CARD_NOT_DUE, self.rules.reconstruction, "a card left the shoe with no seat in play",
                DecisionKind.VOID_ROUND, "host", None, evidence, time_ms=op.time_ms,
            )
            self._flag(flag, events)
            return
        self._count_flag(phase, IrregularityKind.CARD_NOT_DUE, evidence, op.time_ms, events)

    def _count_flag(self, phase: int, kind: IrregularityKind, evidence: tuple[CardEvidence, ...], time_ms: int, events: list[Event]) -> None:
        assert self.procedure is not None
        state = self._phases[phase]
        ph = self.procedure.phases[phase]
        expected, dealt = len(ph.places), len(state.indices)
        detail = (
            f"phase {ph.name}: {dealt} card(s) dealt, the procedure deals {expected}; "
            "waiting for the table to report which position holds the wrong count"
        )
        if state.flag is not None and self._flags[state.flag - 1].decision in (
            DecisionKind.PENDING, DecisionKind.RECONSTRUCTION_PROPOSED, DecisionKind.PLACEMENT_PROPOSED,
        ):
            old = self._flags[state.flag - 1]
            self._update_flag(replace(old, detail=detail, evidence=old.evidence + evidence), events)
            self._try_resolve_count(old.id, events)
            return
        rules = self.rules.reconstruction
        # A later count problem in the same phase starts from what people already counted.
        earlier = self._flags[state.flag - 1].reports if state.flag is not None else ()
        flag = self._flag(
            Irregularity(
                0, kind, rules, detail, DecisionKind.PENDING, "shoe" if kind is IrregularityKind.CARD_NOT_DUE else "host",
                ph.name, evidence, reports=earlier, time_ms=time_ms,
            ),
            events,
        )
        state.flag = flag.id

    def _check_card_identity(self, op: ShoeCard, events: list[Event]) -> None:
        ev = (CardEvidence(op.index, op.code, op.reader_id, op.shoe_ms, op.time_ms),)
        # Foreign first: an ID that maps to no card of the deck (code None, foreign flag) is a
        # foreign card, not an unread one.
        if op.foreign:
            fault, detail = DeckFault.FOREIGN, f"card {op.index} does not belong to the deck in use (deck {op.deck_id}, reader {op.reader_id or 'none'})"
        elif op.code is None:
            fault, detail = DeckFault.UNREAD, f"card {op.index} left the shoe unread"
        elif op.duplicate or any(c.code == op.code for i, c in self.cards.items() if i != op.index):
            fault, detail = DeckFault.DUPLICATE, f"card {op.index} repeats a card already dealt from this deck"
        else:
            return
        self._flag(self._deck_flag(fault, detail, ev, "shoe"), events)

    def _deck_flag(self, fault: DeckFault, detail: str, evidence: tuple[CardEvidence, ...], source: str) -> Irregularity:
        rules = {
            DeckFault.FOREIGN: self.rules.foreign,
            DeckFault.DUPLICATE: self.rules.foreign,
            DeckFault.UNREAD: self.rules.unread,
            DeckFault.EXTRA: self.rules.extra_missing,
            DeckFault.MISSING: self.rules.extra_missing,
        }[fault]
        return Irregularity(
            0, IrregularityKind.DECK, rules, f"{fault.value}: {detail}; the round is void, earlier rounds stand",
            DecisionKind.VOID_ROUND, source, None, evidence, fault=fault.value,
            time_ms=evidence[0].time_ms if evidence else 0,
        )

    def _verify_deck_irregularity(self, op: DeckIrregularity) -> None:
        if op.fault not in tuple(DeckFault):
            raise RoundOperationError(f"unknown deck fault {op.fault!r}; expected one of {', '.join(DeckFault)}")
        if op.shoe_index is not None and op.shoe_index not in self.cards:
            raise RoundOperationError(f"shoe index {op.shoe_index} is not a card of round {self.round_id}")

    def _do_deck_irregularity(self, op: DeckIrregularity, events: list[Event]) -> None:
        evidence = (self._card_evidence(op.shoe_index),) if op.shoe_index is not None else ()
        flag = self._deck_flag(DeckFault(op.fault), op.detail or "reported by the shoe's deck status", evidence, "shoe")
        self._flag(replace(flag, time_ms=op.time_ms), events)

    # ---- count points --------------------------------------------------------------------

    def _close_phase(self, point: CountPoint, time_ms: int, events: list[Event]) -> None:
        i = self._phase_index()
        if i is None or self.procedure is None:
            return
        ph, state = self.procedure.phases[i], self._phases[i]
        state.closed = True
        expected = len(ph.places)
        dealt = len(state.indices)
        events.append(CountChecked(ph.name, point.value, expected, dealt))
        if dealt < expected and self.void is None:
            evidence = tuple(self._card_evidence(k) for k in state.indices)
            self._count_flag(i, IrregularityKind.TOO_FEW_CARDS, evidence, time_ms, events)
        self.status = RoundStatus.DECIDING if ph.name == "deal" else RoundStatus.COMPLETE
        self._maybe_open_dealer_phase(events)

    def _verify_deal_complete(self, op: DealComplete) -> None:
        if self._phase_index() is None:
            raise WrongStateError(f"no deal is in progress ({self.status.value}); 'deal complete' refused")

    def _do_deal_complete(self, op: DealComplete, events: list[Event]) -> None:
        self._close_phase(CountPoint.DEAL_COMPLETE, op.time_ms, events)

    # ---- exposures -----------------------------------------------------------------------

    def _verify_exposure_declared(self, op: ExposureDeclared) -> None:
        if self.status is RoundStatus.BETTING:
            raise WrongStateError("no card has been dealt; an exposure needs a card")
        if op.shoe_index is not None and op.shoe_index not in self.cards:
            raise RoundOperationError(f"shoe index {op.shoe_index} is not a card of round {self.round_id}")
        if op.place is not None and op.place not in self.placements.values():
            raise RoundOperationError(f"no card has been placed at {op.place.label()}")
        if op.place is not None and op.shoe_index is not None:
            at = self.placements.get(op.shoe_index)
            if at != op.place:
                where = at.label() if at is not None else "no place (a card not due)"
                raise ExposureMismatchError(
                    f"exposure names shoe index {op.shoe_index} and {op.place.label()}, but shoe index "
                    f"{op.shoe_index} is at {where}; declare the card by one of them"
                )

    def _do_exposure_declared(self, op: ExposureDeclared, events: list[Event]) -> None:
        place = op.place
        if place is None and op.shoe_index is not None:
            place = self.placements.get(op.shoe_index)
        index = op.shoe_index
        if index is None and place is not None:
            index = next((k for k, p in self.placements.items() if p == place), None)
        public = self.procedure is not None and place is not None and place in self.procedure.public_places
        same = index is not None and any(e.shoe_index == index and e.counted for e in self.exposures)
        during = self.status in _DEALING_STATUSES
        counted = not public and not same
        exposure = Exposure(op.source.value, place, index, during, counted, op.time_ms)
        self.exposures.append(exposure)
        events.append(ExposureRecorded(op.source.value, place, index, during, counted))
        if not counted:
            return
        evidence = (self._card_evidence(index),) if index is not None else ()
        during_count = sum(1 for e in self.exposures if e.counted and e.during_deal)
        if during and during_count >= 2:
            # 5.4 (LIR 5.5): two or more exposed during the deal void the round; an earlier single
            # exposure's referral is decided by the same rule, and its record says so.
            void_id = len(self._flags) + 1
            rule_text = ", ".join(self.rules.exposure)
            for f in self._flags:
                if f.kind is IrregularityKind.EXPOSURE and f.open:
                    superseded = (
                        f"a single card exposed during the deal, superseded by #{void_id}: a further exposure "
                        f"during the deal voids the round ({rule_text})"
                    )
                    self._update_flag(replace(f, decision=DecisionKind.VOID_ROUND, rules=self.rules.exposure, detail=superseded,
                                              fallback=None, resolved_by="host"), events, resolved=True)
            # The decision rests on every card exposed during the deal, so all are its evidence.
            indices = list(dict.fromkeys(e.shoe_index for e in self.exposures if e.counted and e.during_deal and e.shoe_index is not None))
            all_evidence = tuple(self._card_evidence(k) for k in indices)
            unnamed = sum(1 for e in self.exposures if e.counted and e.during_deal and e.shoe_index is None)
            detail = f"{during_count} cards exposed during the deal (last declared by {op.source.value})"
            if unnamed:
                detail += f"; {unnamed} declaration(s) named no card"
            self._flag(
                Irregularity(
                    0, IrregularityKind.EXPOSURES_DURING_DEAL, self.rules.exposure, detail + "; the round is void",
                    DecisionKind.VOID_ROUND, "table" if op.source.value == "table" else "shoe", None, all_evidence, time_ms=op.time_ms,
                ),
                events,
            )
            return
        rules = self.rules.referral or self.rules.exposure
        detail = "a single card exposed " + ("during the deal" if during else "after the deal") + "; referred to the shift manager"
        if not self.rules.referral:
            detail += " (this document has no general provision; its exposure rule covers two or more)"
        self._flag(
            Irregularity(0, IrregularityKind.EXPOSURE, rules, detail, DecisionKind.REFERRED,
                         "table" if op.source.value == "table" else "shoe", None, evidence, fallback=DecisionKind.VOID_ROUND, time_ms=op.time_ms),
            events,
        )

    # ---- decisions -----------------------------------------------------------------------

    def _seat_in_play(self, seat: int) -> None:
        self._check_seat(seat)
        if seat not in self.active_seats():
            raise BadSeatError(f"seat {seat} has no hand in this round")
        if seat in self.void_seats:
            raise BadSeatError(f"seat {seat}'s hand is void ({', '.join(self.void_seats[seat].rules)})")
        if seat in self.absent:
            raise BadSeatError(f"seat {seat}'s player was recorded absent")

    def _needs_decision(self, seat: int) -> bool:
        if self.game in _TCP_FAMILY:
            return "ante" in self.wagers.get(seat, {})
        return True

    def _allowed(self, seat: int) -> set[Choice]:
        made = self.decisions.get(seat, [])
        if self.game in _TCP_FAMILY or self.game == STUD:
            raise_ = Choice.BET if self.game == STUD else Choice.PLAY
            if not self._needs_decision(seat):
                return set() if Choice.DECLINE_COMPARISON in made else {Choice.DECLINE_COMPARISON}
            if not made:
                return {raise_, Choice.FOLD}
            if made == [raise_]:
                return {Choice.DECLINE_COMPARISON}
            return set()
        # Let It Ride: decision 1 for every seat before decision 2 (3.8, 3.11-3.12).
        if not made:
            return {Choice.PULL_1, Choice.RIDE_1}
        if len(made) == 1:
            seats = [s for s in self.active_seats() if s not in self.void_seats]
            if all(len(self.decisions.get(s, [])) >= 1 for s in seats):
                return {Choice.PULL_2, Choice.RIDE_2}
        return set()

    def _verify_decision(self, op: Decision) -> None:
        if self.status in (RoundStatus.BETTING,) or self.procedure is None:
            raise WrongStateError("decisions come after the deal")
        if self.void is not None:
            raise WrongStateError(f"round is void ({', '.join(self.void.rules)}); no decisions")
        self._seat_in_play(op.seat)
        try:
            choice = Choice(op.choice)
        except ValueError:
            raise DecisionError(f"unknown decision {op.choice!r}") from None
        allowed = self._allowed(op.seat)
        if choice not in allowed:
            made = [c.value for c in self.decisions.get(op.seat, [])]
            raise DecisionError(
                f"seat {op.seat} cannot {choice.value} now in {self.game} (decided {made or 'nothing'}; "
                f"allowed {sorted(c.value for c in allowed) or 'nothing'})"
            )

    def _do_decision(self, op: Decision, events: list[Event]) -> None:
        if self.status is RoundStatus.DEALING:
            self._close_phase(CountPoint.DECISION, op.time_ms, events)
        self.decisions.setdefault(op.seat, []).append(Choice(op.choice))
        events.append(DecisionRecorded(op.seat, Choice(op.choice).value))
        self._maybe_open_dealer_phase(events)

    def _owing_decisions(self) -> list[int]:
        """Seats still owing a decision."""
        if self.void is not None or self.procedure is None:
            return []
        owing = []
        for seat in self.active_seats():
            if seat in self.void_seats or seat in self.absent or not self._needs_decision(seat):
                continue
            made = self.decisions.get(seat, [])
            if self.game == LET_IT_RIDE:
                if len(made) < 2:
                    owing.append(seat)
            elif not any(c in (Choice.PLAY, Choice.FOLD, Choice.BET) for c in made):
                owing.append(seat)
        return owing

    def _maybe_open_dealer_phase(self, events: list[Event]) -> None:
        if self.procedure is None or len(self._phases) < 2:
            return
        first, dealer = self._phases
        if first.closed and not dealer.opened and not self._owing_decisions():
            dealer.opened = True  # 3.7.2.1: the dealer's three after every player has decided
            self.status = RoundStatus.DEALER

    def _verify_player_absent(self, op: PlayerAbsent) -> None:
        if self.status is RoundStatus.BETTING or self.procedure is None:
            raise WrongStateError("a player is absent for a decision, after the deal")
        if not self.rules.absent:
            raise DecisionError(f"{self.game} has no absent-player rule; record the decisions the shift manager rules")
        self._seat_in_play(op.seat)
        if not self._needs_decision(op.seat):
            raise DecisionError(f"seat {op.seat} has no ante, so there is no decision to be absent for (5.11)")
        if self.decisions.get(op.seat):
            raise DecisionError(f"seat {op.seat} has already decided")

    def _do_player_absent(self, op: PlayerAbsent, events: list[Event]) -> None:
        if self.status is RoundStatus.DEALING:
            self._close_phase(CountPoint.DECISION, op.time_ms, events)
        self.absent.add(op.seat)
        self._void_seat(op.seat, self.rules.absent, "player not present to decide; wagers returned", None, events)
        self._maybe_open_dealer_phase(events)

    # ---- a person's reports and confirmations --------------------------------------------

    def _get_flag(self, flag_id: int) -> Irregularity:
        if not isinstance(flag_id, int) or not 1 <= flag_id <= len(self._flags):
            raise UnknownFlagError(f"round {self.round_id} has no irregularity {flag_id!r}")
        return self._flags[flag_id - 1]

    def _verify_hand_count_reported(self, op: HandCountReported) -> None:
        flag = self._get_flag(op.flag)
        if flag.kind not in (IrregularityKind.CARD_NOT_DUE, IrregularityKind.TOO_FEW_CARDS) or flag.phase is None:
            raise UnknownFlagError(f"irregularity {op.flag} is not about a card count")
        if flag.decision not in (DecisionKind.PENDING, DecisionKind.RECONSTRUCTION_PROPOSED, DecisionKind.PLACEMENT_PROPOSED):
            raise WrongStateError(f"irregularity {op.flag} is already decided ({flag.decision.value})")
        if not isinstance(op.count, int) or isinstance(op.count, bool) or not 0 <= op.count <= 52:
            raise BadAmountError(f"count must be 0..52, got {op.count!r}")
        if not op.reporter:
            raise RoundOperationError("a count report must name the person who counted")
        assert self.procedure is not None
        phase = next(ph for ph in self.procedure.phases if ph.name == flag.phase)
        pos = op.position
        kinds = {u.position.kind for u in phase.units}
        if pos.kind is PlaceKind.SEAT:
            self._check_seat(pos.seat)
            if PlaceKind.SEAT not in kinds:
                raise BadSeatError(f"phase {phase.name} deals no seat; {pos.label()} cannot hold its cards")
        elif pos.kind not in kinds and pos.kind is not PlaceKind.DISCARD:
            raise BadSeatError(f"phase {phase.name} deals nothing to the {pos.kind.value}")

    def _do_hand_count_reported(self, op: HandCountReported, events: list[Event]) -> None:
        flag = self._flags[op.flag - 1]
        reports = tuple(r for r in flag.reports if r.position != op.position) + (
            CountReport(op.position, op.count, op.reporter, op.time_ms),
        )
        self._update_flag(replace(flag, reports=reports), events)
        self._try_resolve_count(flag.id, events)

    def _try_resolve_count(self, flag_id: int, events: list[Event]) -> None:
        flag = self._flags[flag_id - 1]
        if not flag.reports or self.procedure is None:
            return
        i = next(k for k, ph in enumerate(self.procedure.phases) if ph.name == flag.phase)
        phase, state = self.procedure.phases[i], self._phases[i]
        counts = {r.position: r.count for r in flag.reports}
        layout = physical_layout(phase, counts)
        total = sum(u.count for u in layout)
        if total != len(state.indices):
            # Back to the procedure's own placement until the counts account for every card.
            nominal = {idx: phase.places[k] for k, idx in enumerate(state.indices) if k < len(phase.places)}
            self._apply_placements(nominal, flag_id, events)
            self.placements = {k: p for k, p in self.placements.items() if k in nominal or k not in state.indices}
            self.not_due = sorted(set(self.not_due) | {idx for idx in state.indices if idx not in nominal})
            self._update_flag(replace(flag, decision=DecisionKind.PENDING, proposal=(), fallback=None, wrong=(), candidates=(), detail=(
                f"phase {phase.name}: {len(state.indices)} card(s) dealt; the counts reported so far account "
                f"for {total}; waiting for further counts"
            )), events)
            return
        physical = {state.indices[k]: place for k, place in layout_placements(layout).items()}
        # 5.2 (LIR 5.3) allows moving hands only while no player has handled their cards; a
        # recorded decision means someone has.
        handled = phase.name == "deal" and any(self.decisions.values())
        proposal_by_order = None if handled else reconstruction(phase, layout, self.procedure.hand_size)
        wrong = [u for u in layout if not u.correct]
        wrong_kinds = {u.position.kind for u in wrong}
        rules: tuple[str, ...]
        seats: tuple[int, ...] = ()
        if not wrong:
            decision, rules = DecisionKind.ACKNOWLEDGED, ()
            detail = f"phase {phase.name}: the reported counts match the procedure; the count point came early"
        elif PlaceKind.DEALER in wrong_kinds or PlaceKind.COMMUNITY in wrong_kinds:
            decision = DecisionKind.VOID_ROUND
            rules = self.rules.reconstruction + (self.rules.dealer_count if PlaceKind.DEALER in wrong_kinds else self.rules.community_count)
            detail = "wrong number of cards to the " + " and ".join(sorted(k.value for k in wrong_kinds - {PlaceKind.SEAT})) + "; the round is void"
        elif any(u.nominal is None and u.position.kind is PlaceKind.SEAT for u in wrong):
            decision, rules = DecisionKind.VOID_ROUND, self.rules.reconstruction
            detail = "cards dealt to a position without a wager and the deal cannot be rebuilt; the round is void"
        elif PlaceKind.SEAT in wrong_kinds:
            seats = tuple(u.position.seat for u in wrong if u.position.kind is PlaceKind.SEAT)
            if self.rules.seat_count_voids_round:
                decision, rules = DecisionKind.VOID_ROUND, self.rules.seat_count
                detail = f"wrong number of cards at seat(s) {', '.join(map(str, seats))}; the deal cannot be rebuilt, the round is void"
                seats = ()
            else:
                decision, rules = DecisionKind.VOID_SEAT, self.rules.seat_count
                detail = f"wrong number of cards at seat(s) {', '.join(map(str, seats))}; that hand is void and its wagers returned"
        else:  # only cards straight to the discard: every hand is right
            decision, rules = DecisionKind.REFERRED, self.rules.referral or self.rules.reconstruction
            detail = "card(s) drawn in error went to the discard; every hand holds its cards; referred to the shift manager"
        flag = replace(flag, wrong=tuple(u.position for u in wrong), candidates=())
        if proposal_by_order is None and decision is DecisionKind.VOID_SEAT and self.device is Device.MANUAL:
            # 3.8: one card per position per pass. The shoe's order cannot show in which pass a
            # position was missed (or doubled), and every card after the slip lies elsewhere
            # depending on it, so the other hands are not known: a supervisor decides.
            passes = slip_passes(phase, wrong[0].position, wrong[0].count) if len(wrong) == 1 else None
            if passes is not None:
                cands = self._slip_candidates(phase, state.indices, counts, wrong[0].position, wrong[0].count, passes)
                label = wrong[0].position.label()
                how = "missed in" if wrong[0].count < len(wrong[0].nominal.places if wrong[0].nominal else ()) else "given an extra card in"
                if len(cands) == 1:
                    ask = (f"the other hands are the same whichever pass; a supervisor confirms the void of {label}'s hand "
                           f"({', '.join(self.rules.seat_count)})")
                else:
                    ask = (f"{len(cands)} candidate placements, by the pass {label} was {how}; a supervisor confirms the one "
                           f"seen at the table (then {label}'s hand is void, {', '.join(self.rules.seat_count)}) or refuses "
                           f"them (the round is void, {', '.join(self.rules.reconstruction)})")
                new = replace(
                    flag, decision=DecisionKind.PLACEMENT_PROPOSED, rules=self.rules.seat_count + self.rules.reconstruction,
                    detail=(f"manual deal: {label} holds {wrong[0].count} card(s), the procedure deals "
                            f"{len(wrong[0].nominal.places) if wrong[0].nominal else 0}; the shoe's order cannot show in which "
                            f"pass, so where the other hands' cards lie is not known: {ask}"),
                    proposal=(), fallback=DecisionKind.VOID_ROUND, void_seats=seats, candidates=cands, resolved_by=None,
                )
                self._update_flag(new, events)
                return
            decision, rules = DecisionKind.VOID_ROUND, self.rules.seat_count + self.rules.reconstruction
            detail = (f"manual deal: wrong number of cards at seat(s) {', '.join(map(str, seats))}; the shoe's order cannot "
                      "show where the other hands' cards lie, so the deal cannot be shown; the round is void")
            seats = ()
        if proposal_by_order is not None:
            proposal = tuple(sorted((state.indices[k], place) for k, place in proposal_by_order.items()))
            moved = ", ".join(f"{self._position_of(physical, idx)}->{p.label()}" for idx, p in proposal if physical[idx] != p)
            new = replace(
                flag, decision=DecisionKind.RECONSTRUCTION_PROPOSED, rules=self.rules.reconstruction,
                detail=f"the deal can be rebuilt by moving complete hands ({moved}); waiting for a supervisor; otherwise: {detail}",
                proposal=proposal, fallback=decision, void_seats=seats,
            )
            self._apply_placements(physical, flag_id, events)
            self._update_flag(new, events)
            return
        self._apply_placements(physical, flag_id, events)
        new = replace(flag, decision=decision, rules=rules or flag.rules, detail=detail, void_seats=seats,
                      fallback=DecisionKind.VOID_ROUND if decision is DecisionKind.REFERRED else None,
                      resolved_by=None if decision is DecisionKind.REFERRED else "host")
        self._update_flag(new, events, resolved=not new.open)
        self._apply_decision(new, events)

    def _slip_candidates(
        self, phase: Phase, indices: list[int], counts: dict[Position, int], position: Position, count: int,
        passes: tuple[int, ...],
    ) -> tuple[PlacementCandidate, ...]:
        """The placements of a manual phase for each pass in which ``position`` may have been
        missed or doubled; one candidate when the other hands are the same whichever pass."""
        found: list[tuple[int, dict[int, Place], list[UnitLayout]]] = []
        for p in passes:
            layout = physical_layout(phase, counts, (position, p))
            placed = {indices[k]: place for k, place in layout_placements(layout).items()}
            if all(placed != other for _, other, _ in found):
                found.append((p, placed, layout))

        def others(placed: dict[int, Place]) -> dict[int, Place]:
            return {k: pl for k, pl in placed.items() if pl.position != position}

        if all(others(placed) == others(found[0][1]) for _, placed, _ in found):
            found = [found[-1]]
        size = next(len(u.places) for u in phase.units if u.position == position)
        short = count < size
        out: list[PlacementCandidate] = []
        for number, (p, placed, layout) in enumerate(found, start=1):
            hands = tuple(
                (u.position, tuple(indices[k] for k in u.order)) for u in layout if u.count
            )
            if short:
                what = f"{position.label()} missed in pass {p}"
            elif p > size:
                what = f"{position.label()} given an extra card after the last pass"
            else:
                what = f"{position.label()} given two cards in pass {p}"
            shown = "; ".join(f"{pos.label()} #{', #'.join(map(str, idx))}" for pos, idx in hands)
            out.append(PlacementCandidate(number, position, p, tuple(sorted(placed.items())), hands, f"{what}: {shown}"))
        return tuple(out)

    @staticmethod
    def _position_of(placements: dict[int, Place], index: int) -> str:
        return placements[index].label()

    def _apply_placements(self, placements: dict[int, Place], flag_id: int, events: list[Event]) -> None:
        changed = {k: p for k, p in placements.items() if self.placements.get(k) != p}
        if not changed:
            return
        self.placements.update(placements)
        self.not_due = [k for k in self.not_due if k not in placements]
        events.append(HandsRebuilt(flag_id, tuple(sorted(changed.items()))))

    def _verify_wager_withdrawn(self, op: WagerWithdrawn) -> None:
        flag = self._get_flag(op.flag)
        if flag.decision is not DecisionKind.VOID_SEAT:
            raise WrongStateError(f"irregularity {op.flag} voided no hand for a wrong count; 5.7.1 does not apply")
        if not op.permitted_by:
            raise RoundOperationError("a withdrawal under 5.7.1 must name who permitted it")
        self._seat_in_play(op.seat)
        if self.decisions.get(op.seat):
            raise DecisionError(f"seat {op.seat} has already decided; the wager is in play")

    def _do_wager_withdrawn(self, op: WagerWithdrawn, events: list[Event]) -> None:
        flag = self._flags[op.flag - 1]
        self._update_flag(replace(flag, withdrawn_seats=flag.withdrawn_seats + (op.seat,)), events, resolved=True)
        reason = f"withdrew after another hand's wrong card count (#{flag.id}), permitted by {op.permitted_by}"
        self._void_seat(op.seat, tuple(f"{r}.1" for r in self.rules.seat_count), reason, flag.id, events)
        self._maybe_open_dealer_phase(events)

    def _verify_supervisor_confirmation(self, op: SupervisorConfirmation) -> None:
        flag = self._get_flag(op.flag)
        if flag.decision not in (DecisionKind.RECONSTRUCTION_PROPOSED, DecisionKind.REFERRED, DecisionKind.PLACEMENT_PROPOSED):
            raise WrongStateError(f"irregularity {op.flag} is not waiting for a supervisor ({flag.decision.value})")
        if not op.supervisor:
            raise RoundOperationError("a confirmation must name the supervisor")
        if op.candidate is not None:
            if not flag.candidates:
                raise CandidateError(f"irregularity {op.flag} offers no candidate placements; confirm it without one")
            if isinstance(op.candidate, bool) or not isinstance(op.candidate, int) or not 1 <= op.candidate <= len(flag.candidates):
                raise CandidateError(f"candidate must be 1..{len(flag.candidates)} for irregularity {op.flag}, got {op.candidate!r}")
        elif op.confirmed and len(flag.candidates) > 1:
            raise CandidateError(
                f"irregularity {op.flag} offers {len(flag.candidates)} candidate placements; name the one confirmed "
                f"(candidate 1..{len(flag.candidates)}) or refuse them all"
            )

    def _do_supervisor_confirmation(self, op: SupervisorConfirmation, events: list[Event]) -> None:
        flag = self._flags[op.flag - 1]
        if flag.decision is DecisionKind.PLACEMENT_PROPOSED:
            if op.confirmed:
                cand = flag.candidates[(op.candidate or 1) - 1]
                self._apply_placements(dict(cand.placements), flag.id, events)
                labels = ", ".join(f"seat {n}" for n in flag.void_seats)
                new = replace(flag, decision=DecisionKind.VOID_SEAT, rules=self.rules.seat_count, resolved_by=op.supervisor,
                              detail=(f"manual deal, candidate {cand.number} confirmed by {op.supervisor} ({cand.description}); "
                                      f"wrong number of cards at {labels}: that hand is void and its wagers returned"))
            else:
                new = replace(flag, decision=DecisionKind.VOID_ROUND, rules=self.rules.reconstruction, resolved_by=op.supervisor,
                              detail=(f"manual deal: no placement of the cards could be established (refused by {op.supervisor}); "
                                      "the deal cannot be shown, the round is void"))
            self._update_flag(new, events, resolved=True)
            self._apply_decision(new, events)
            return
        if flag.decision is DecisionKind.RECONSTRUCTION_PROPOSED:
            if op.confirmed:
                self._apply_placements(dict(flag.proposal), flag.id, events)
                new = replace(flag, decision=DecisionKind.RECONSTRUCTED, void_seats=(), resolved_by=op.supervisor,
                              detail=f"hands moved as proposed; confirmed by {op.supervisor}")
            else:
                fallback = flag.fallback or DecisionKind.VOID_ROUND
                new = replace(flag, decision=fallback, resolved_by=op.supervisor,
                              detail=f"reconstruction refused by {op.supervisor}; {fallback.value}")
        else:
            if op.confirmed:
                new = replace(flag, decision=DecisionKind.ACKNOWLEDGED, resolved_by=op.supervisor,
                              detail=flag.detail + f"; the round stands ({op.supervisor})")
            else:
                new = replace(flag, decision=DecisionKind.VOID_ROUND, resolved_by=op.supervisor,
                              detail=flag.detail + f"; voided by {op.supervisor}")
        self._update_flag(new, events, resolved=True)
        self._apply_decision(new, events)

    def _verify_void_round(self, op: VoidRound) -> None:
        if not op.rule or not op.by:
            raise RoundOperationError("voiding a round needs the rule and who decided it")

    def _do_void_round(self, op: VoidRound, events: list[Event]) -> None:
        for f in self._flags:
            if f.open:
                self._update_flag(replace(f, decision=DecisionKind.VOID_ROUND, resolved_by=op.by), events, resolved=True)
        flag = Irregularity(
            0, IrregularityKind.NOT_COVERED, (op.rule,), f"{op.reason} (voided by {op.by})", DecisionKind.VOID_ROUND,
            "table", None, resolved_by=op.by, time_ms=op.time_ms,
        )
        self._flag(flag, events)

    # ---- settlement ----------------------------------------------------------------------

    def _verify_settle(self, op: Settle) -> None:
        if op.jackpot_pool is not None and (not isinstance(op.jackpot_pool, int) or op.jackpot_pool < 0):
            raise BadAmountError(f"jackpot_pool must be a non-negative integer in minor units, got {op.jackpot_pool!r}")
        if self.void is not None:
            return
        if self.status is RoundStatus.BETTING:
            raise WrongStateError("nothing has been dealt; void the round instead of settling it")
        pending = self.pending_flags
        if pending:
            raise WrongStateError("irregularities wait for a person: " + "; ".join(f"#{f.id} {f.kind.value} ({f.decision.value})" for f in pending))
        owing = self._owing_decisions()
        if owing:
            raise DecisionError(f"seat(s) {', '.join(map(str, owing))} have not decided")
        if self.status is RoundStatus.DECIDING and len(self._phases) > 1 and not self._phases[1].opened:
            raise WrongStateError("the dealer's hand has not been dealt")

    def _do_settle(self, op: Settle, events: list[Event]) -> None:
        self.jackpot_pool = op.jackpot_pool
        if self.void is None and self._phase_index() is not None:
            self._close_phase(CountPoint.SETTLE, op.time_ms, events)
            if self.pending_flags:
                return  # the count point found a problem: settlement waits for it
        self.status = RoundStatus.SETTLED
        self.settled_ms = op.time_ms
        events.append(RoundSettled(self.void is not None))

    def _verify_open_round(self, op: OpenRound) -> None:
        raise WrongStateError(f"round {self.round_id} is already open; open_round starts a new round")

    # ---- views ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The round's state as plain JSON values (for comparing replays and for the API)."""
        out: dict[str, Any] = to_jsonable({
            "round_id": self.round_id,
            "game": self.game,
            "device": self.device.value,
            "method": self.method.value if self.method else None,
            "status": self.status.value,
            "wagers": {str(s): dict(sorted(w.items())) for s, w in sorted(self.wagers.items())},
            "magic_card": self.magic_card,
            "lucky_seat": self.lucky_seat,
            "procedure": self.procedure.to_json() if self.procedure else None,
            "placements": {str(k): p for k, p in sorted(self.placements.items())},
            "cards": {str(k): to_jsonable(c) for k, c in sorted(self.cards.items())},
            "not_due": list(self.not_due),
            "hands": {pos.label(): list(cards) for pos, cards in self.hands().items()},
            "burns": list(self.burns),
            "security": list(self.security),
            "exposures": list(self.exposures),
            "decisions": {str(s): [c.value for c in cs] for s, cs in sorted(self.decisions.items())},
            "absent": sorted(self.absent),
            "irregularities": list(self._flags),
            "void": self.void,
            "void_seats": {str(s): m for s, m in sorted(self.void_seats.items())},
            "jackpot_pool": self.jackpot_pool,
        })
        return out

    def to_round_json(
        self,
        *,
        limits: Mapping[str, Mapping[str, int]],
        jackpot_reset: int | None = None,
        rules_version: str | None = None,
        currency: str | None = None,
    ) -> dict[str, Any]:
        """The round in the games task's round format (docs/round-format.md); see
        :func:`cardshoe.rounds.export.round_to_json` for the arguments."""
        from .export import round_to_json

        return round_to_json(self, limits=limits, jackpot_reset=jackpot_reset, rules_version=rules_version, currency=currency)


