"""A round's state, what every phase reads of it, and the few writes every phase shares.

:class:`RoundState` holds what a round knows (wagers, cards, placements, decisions, flags,
voids) and answers the questions every phase asks (which seats are in play, which phase is
open, who still owes a decision). The phase modules (:mod:`.wagers`, :mod:`.deal`,
:mod:`.decisions`, :mod:`.counts`, :mod:`.irregularities`, :mod:`.settlement`) verify and
apply operations on it; :class:`cardshoe.rounds.Round` is the state machine that dispatches
to them. Outside this package, change a round only through ``Round.do``.

The shared writes are recording a flag (and carrying out its decision: a void round or seat)
and opening Xtreme method B's dealer phase once every seat has decided, since a flag that
voids a seat can be the last thing that phase waited for.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from .errors import BadSeatError, ProcedureError, RoundOperationError, UnknownFlagError
from .events import (
    CardEvidence,
    DecisionKind,
    Event,
    FlagResolved,
    Flagged,
    Irregularity,
    RoundVoided,
    SeatVoided,
    VoidMark,
)
from .operations import Choice, OpenRound, ShoeCard
from .places import MAX_SEATS, Place, PlaceKind, Position
from .procedures import (
    BASE_WAGERS,
    GAME_IDS,
    LET_IT_RIDE,
    DealingProcedure,
    Device,
    GameRules,
    XtremeMethod,
    build_procedure,
    game_rules,
)

__all__ = ["RoundState", "RoundStatus", "Exposure", "PhaseState", "TCP_FAMILY", "LIR_TRIO", "DEALING_STATUSES"]


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
class PhaseState:
    """How far one phase of the dealing procedure has come."""

    opened: bool = False
    closed: bool = False
    indices: list[int] = field(default_factory=list)
    """Shoe indices of the cards dealt in this phase, in order, including cards not due."""
    flag: int | None = None
    """The open count flag of this phase, if any."""


TCP_FAMILY = ("three-card-poker", "megalink-three-card-poker", "megalink-three-card-poker-xtreme")
LIR_TRIO = ("one", "two", "dollar")  # Let It Ride 3.4: three equal wagers placed together
DEALING_STATUSES = (RoundStatus.DEALING, RoundStatus.DEALER)


class RoundState:
    """What one round knows; changed only by the phase modules through ``Round.do``."""

    def __init__(self, opening: OpenRound) -> None:
        """Validate ``opening`` and set up an empty round."""
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
        self.phase_states: list[PhaseState] = []
        self.cards: dict[int, ShoeCard] = {}
        self.shoe_no: int | None = None
        self.placements: dict[int, Place] = {}
        self.not_due: list[int] = []
        self.other_shoe_cards: list[ShoeCard] = []
        self.exposures: list[Exposure] = []
        self.decisions: dict[int, list[Choice]] = {}
        self.absent: set[int] = set()
        self.flags: list[Irregularity] = []
        """Every flag raised, by id - 1 (``irregularities`` is the read-only view)."""
        self.void: VoidMark | None = None
        self.void_seats: dict[int, VoidMark] = {}
        self.jackpot_pool: int | None = None
        self.settled_ms: int | None = None

    # ---- undo for an operation that fails half way ----------------------------------------

    _STATE_FIELDS = (
        "status", "wagers", "magic_card", "lucky_seat", "procedure", "phase_states", "cards", "shoe_no",
        "placements", "not_due", "other_shoe_cards", "exposures", "decisions", "absent", "flags",
        "void", "void_seats", "jackpot_pool", "settled_ms",
    )

    def save(self) -> dict[str, Any]:
        """A copy of the mutable state, for :meth:`restore`."""
        # Values inside the containers are frozen, so copying the containers is enough to undo
        # an operation that fails half way (a bug, since verify ran first: belt and braces).
        saved: dict[str, Any] = {}
        for name in self._STATE_FIELDS:
            value = getattr(self, name)
            if name == "wagers":
                value = {s: dict(w) for s, w in value.items()}
            elif name == "decisions":
                value = {s: list(c) for s, c in value.items()}
            elif name == "phase_states":
                value = [PhaseState(p.opened, p.closed, list(p.indices), p.flag) for p in value]
            elif isinstance(value, (dict, list, set)):
                value = copy.copy(value)
            saved[name] = value
        return saved

    def restore(self, saved: dict[str, Any]) -> None:
        """Put back the state :meth:`save` copied."""
        for name, value in saved.items():
            setattr(self, name, value)

    # ---- reads ---------------------------------------------------------------------------

    @property
    def irregularities(self) -> tuple[Irregularity, ...]:
        return tuple(self.flags)

    @property
    def pending_flags(self) -> tuple[Irregularity, ...]:
        """Flags waiting for a person (they block settlement)."""
        return tuple(f for f in self.flags if f.open)

    def active_seats(self) -> tuple[int, ...]:
        """Seats holding a base wager (3.4): the positions the procedure deals to."""
        if self.procedure is not None:
            return self.procedure.seats
        base = BASE_WAGERS[self.game]
        return tuple(sorted(s for s, w in self.wagers.items() if any(name in base for name in w)))

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

    def check_seat(self, seat: int) -> None:
        """Raise BadSeatError unless ``seat`` is a position of this table."""
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= self.positions:
            raise BadSeatError(f"seat must be 1..{self.positions} on this table, got {seat!r}")

    def seat_in_play(self, seat: int) -> None:
        """Raise BadSeatError unless ``seat`` holds a live hand in this round."""
        self.check_seat(seat)
        if seat not in self.active_seats():
            raise BadSeatError(f"seat {seat} has no hand in this round")
        if seat in self.void_seats:
            raise BadSeatError(f"seat {seat}'s hand is void ({', '.join(self.void_seats[seat].rules)})")
        if seat in self.absent:
            raise BadSeatError(f"seat {seat}'s player was recorded absent")

    def phase_index(self) -> int | None:
        """The dealing phase now open, if any."""
        for i, ph in enumerate(self.phase_states):
            if ph.opened and not ph.closed:
                return i
        return None

    def card_evidence(self, index: int) -> CardEvidence:
        """Shoe card ``index`` of this round as evidence for a flag."""
        card = self.cards[index]
        return CardEvidence(index, card.code, card.reader_id, card.shoe_ms, card.time_ms)

    def get_flag(self, flag_id: int) -> Irregularity:
        """Flag ``flag_id``, or UnknownFlagError."""
        if not isinstance(flag_id, int) or not 1 <= flag_id <= len(self.flags):
            raise UnknownFlagError(f"round {self.round_id} has no irregularity {flag_id!r}")
        return self.flags[flag_id - 1]

    def needs_decision(self, seat: int) -> bool:
        """Whether ``seat`` has a decision to make (Three Card Poker: only with an ante, 3.9)."""
        if self.game in TCP_FAMILY:
            return "ante" in self.wagers.get(seat, {})
        return True

    def owing_decisions(self) -> list[int]:
        """Seats still owing a decision."""
        if self.void is not None or self.procedure is None:
            return []
        owing = []
        for seat in self.active_seats():
            if seat in self.void_seats or seat in self.absent or not self.needs_decision(seat):
                continue
            made = self.decisions.get(seat, [])
            if self.game == LET_IT_RIDE:
                if len(made) < 2:
                    owing.append(seat)
            elif not any(c in (Choice.PLAY, Choice.FOLD, Choice.BET) for c in made):
                owing.append(seat)
        return owing

    # ---- shared writes -------------------------------------------------------------------

    def add_flag(self, flag: Irregularity, events: list[Event]) -> Irregularity:
        """Record a new flag (numbered here), announce it and carry out its decision."""
        flag = replace(flag, id=len(self.flags) + 1)
        self.flags.append(flag)
        events.append(Flagged(flag))
        self.apply_decision(flag, events)
        return flag

    def update_flag(self, flag: Irregularity, events: list[Event], *, resolved: bool = False) -> None:
        """Replace flag ``flag.id`` and announce it (resolved or still open)."""
        self.flags[flag.id - 1] = flag
        events.append(FlagResolved(flag) if resolved else Flagged(flag))

    def mark_round_void(self, rules: tuple[str, ...], reason: str, flag: int | None, events: list[Event]) -> None:
        """Void the round (the first void stands)."""
        if self.void is None:
            self.void = VoidMark(rules, reason, flag)
            events.append(RoundVoided(rules, reason))

    def mark_seat_void(self, seat: int, rules: tuple[str, ...], reason: str, flag: int | None, events: list[Event]) -> None:
        """Void one seat's hand (its first void stands)."""
        if seat not in self.void_seats:
            self.void_seats[seat] = VoidMark(rules, reason, flag)
            events.append(SeatVoided(seat, rules, reason))

    def apply_decision(self, flag: Irregularity, events: list[Event]) -> None:
        """Carry out a flag's decision: void the round or its seats."""
        if flag.decision is DecisionKind.VOID_ROUND:
            self.mark_round_void(flag.rules, flag.detail, flag.id, events)
        elif flag.decision is DecisionKind.VOID_SEAT:
            for seat in flag.void_seats:
                self.mark_seat_void(seat, flag.rules, flag.detail, flag.id, events)
        self.maybe_open_dealer_phase(events)

    def maybe_open_dealer_phase(self, events: list[Event]) -> None:
        """Xtreme method B: open the dealer's phase once the deal is closed and nobody owes a decision."""
        if self.procedure is None or len(self.phase_states) < 2:
            return
        first, dealer = self.phase_states
        if first.closed and not dealer.opened and not self.owing_decisions():
            dealer.opened = True  # 3.7.2.1: the dealer's three after every player has decided
            self.status = RoundStatus.DEALER
