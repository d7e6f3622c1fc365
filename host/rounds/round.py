"""A round of play as a state machine of recorded operations.

``Round.do(op)`` verifies an operation (``verify`` raises a typed error naming what is wrong;
``can`` answers yes or no), applies it, records it in ``operations`` and returns the events it
caused. A refused operation changes nothing; ``Round.do_then(op, check)`` also undoes ``op``
if a check after it raises. ``Round.replay(operations)`` rebuilds a round,
with the same state and events, from its recorded operations.

Each operation belongs to one phase of the round, whose module holds its ``verify_`` and
``do_`` pair (PokerKit's verify / can / do pattern):

========================  ====================================================================
:mod:`.wagers`            place_wager, change_wager, progressive_selection, no_more_bets
:mod:`.deal`              shoe_card, deal_complete (and the count points that close a phase)
:mod:`.decisions`         decision, player_absent
:mod:`.counts`            hand_count_reported, wager_withdrawn (count flags and what they decide)
:mod:`.irregularities`    deck_irregularity, exposure_declared, supervisor_confirmation, void_round
:mod:`.settlement`        settle
========================  ====================================================================

The state they share, and the writes every phase makes (a flag and its decision, Xtreme
method B's dealer phase opening), are :class:`.state.RoundState`. The statuses in order:
``betting`` -> ``dealing`` (the first card or "no more bets") -> ``deciding`` (a count point
closes the deal) -> ``dealer`` (Xtreme method B, once every seat decided) -> ``complete`` ->
``settled``; a void round may be settled from any status.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from . import counts, deal, decisions, irregularities, powerfail, settlement, wagers
from .errors import RoundOperationError, WrongStateError
from .events import Event, to_jsonable
from .export import round_to_json
from .operations import OpenRound, Operation
from .state import Exposure, RoundState, RoundStatus

__all__ = ["Round", "RoundStatus", "Exposure"]

_T = TypeVar("_T")
_Verify = Callable[[RoundState, Any], None]
_Do = Callable[[RoundState, Any, list[Event]], None]

#: Each operation's verify and do, by its ``OP`` name.
_PHASES: dict[str, tuple[_Verify, _Do]] = {
    "place_wager": (wagers.verify_place_wager, wagers.do_place_wager),
    "change_wager": (wagers.verify_change_wager, wagers.do_change_wager),
    "progressive_selection": (wagers.verify_progressive_selection, wagers.do_progressive_selection),
    "no_more_bets": (wagers.verify_no_more_bets, wagers.do_no_more_bets),
    "shoe_card": (deal.verify_shoe_card, deal.do_shoe_card),
    "deal_complete": (deal.verify_deal_complete, deal.do_deal_complete),
    "decision": (decisions.verify_decision, decisions.do_decision),
    "player_absent": (decisions.verify_player_absent, decisions.do_player_absent),
    "hand_count_reported": (counts.verify_hand_count_reported, counts.do_hand_count_reported),
    "wager_withdrawn": (counts.verify_wager_withdrawn, counts.do_wager_withdrawn),
    "deck_irregularity": (irregularities.verify_deck_irregularity, irregularities.do_deck_irregularity),
    "exposure_declared": (irregularities.verify_exposure_declared, irregularities.do_exposure_declared),
    "supervisor_confirmation": (irregularities.verify_supervisor_confirmation, irregularities.do_supervisor_confirmation),
    "void_round": (irregularities.verify_void_round, irregularities.do_void_round),
    "shoe_power_failure": (powerfail.verify_shoe_power_failure, powerfail.do_shoe_power_failure),
    "settle": (settlement.verify_settle, settlement.do_settle),
}


class Round(RoundState):
    """One round of one game at one table, rebuilt from its operations."""

    def __init__(self, opening: OpenRound) -> None:
        """Use :meth:`open`; this validates ``opening`` and sets up an empty round."""
        super().__init__(opening)
        self._operations: list[Operation] = [opening]
        self._events: list[Event] = []

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

    # ---- the verify / can / do triple ----------------------------------------------------

    def verify(self, op: Operation) -> None:
        """Raise a RoundOperationError subclass naming why ``op`` cannot be applied now."""
        if self.status is RoundStatus.SETTLED:
            raise WrongStateError(f"round {self.round_id} is settled; {op.OP} refused")
        if isinstance(op, OpenRound):
            raise WrongStateError(f"round {self.round_id} is already open; open_round starts a new round")
        handlers = _PHASES.get(op.OP)
        if handlers is None:
            raise WrongStateError(f"{op.OP} is not an operation on an open round")
        handlers[0](self, op)

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
        saved = self.save()
        try:
            events: list[Event] = []
            _PHASES[op.OP][1](self, op, events)
        except BaseException:
            self.restore(saved)
            raise
        self._operations.append(op)
        self._events.extend(events)
        return tuple(events)

    def do_then(self, op: Operation, check: Callable[[Round], _T]) -> tuple[tuple[Event, ...], _T]:
        """:meth:`do`, then ``check(self)``, as one step: if ``check`` raises, the round is put
        back exactly as it was before ``op`` (state, operations and events) and the error
        propagates. For an operation that stands only if something outside the round accepts
        its result: the daemon closes a round only if the settlement engine settles it, so a
        round the engine refuses stays in play (its missing input can be given, or a
        supervisor can void it) instead of being closed with no settlement."""
        self.verify(op)
        saved = self.save()
        n_ops, n_events = len(self._operations), len(self._events)
        try:
            events: list[Event] = []
            _PHASES[op.OP][1](self, op, events)
            self._operations.append(op)
            self._events.extend(events)
            result = check(self)
        except BaseException:
            self.restore(saved)
            del self._operations[n_ops:]
            del self._events[n_events:]
            raise
        return tuple(events), result

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
            "irregularities": list(self.flags),
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
        return round_to_json(self, limits=limits, jackpot_reset=jackpot_reset, rules_version=rules_version, currency=currency)
