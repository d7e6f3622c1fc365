"""Decisions: each player's choice after the deal, and a player absent for it (5.11).

Three Card Poker and its Megalink versions: play or fold with an ante (3.9), and a hand may
decline the comparison (3.10.1); stud: bet or fold. Let It Ride: the 1 then the 2, each
withdrawn or let ride, decision 1 for every seat before decision 2 (3.8, 3.11-3.12). The
first decision is also a count point: it closes the deal (a player has seen their cards).
"""

from __future__ import annotations

from .deal import close_phase
from .errors import DecisionError, WrongStateError
from .events import DecisionRecorded, Event
from .operations import Choice, Decision, PlayerAbsent
from .procedures import STUD, CountPoint
from .state import TCP_FAMILY, RoundState, RoundStatus


def _allowed(rnd: RoundState, seat: int) -> set[Choice]:
    """The choices ``seat`` may make now."""
    made = rnd.decisions.get(seat, [])
    if rnd.game in TCP_FAMILY or rnd.game == STUD:
        raise_ = Choice.BET if rnd.game == STUD else Choice.PLAY
        if not rnd.needs_decision(seat):
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
        seats = [s for s in rnd.active_seats() if s not in rnd.void_seats]
        if all(len(rnd.decisions.get(s, [])) >= 1 for s in seats):
            return {Choice.PULL_2, Choice.RIDE_2}
    return set()


def verify_decision(rnd: RoundState, op: Decision) -> None:
    """A player's decision, allowed for that seat at this point of the game."""
    if rnd.status in (RoundStatus.BETTING,) or rnd.procedure is None:
        raise WrongStateError("decisions come after the deal")
    if rnd.void is not None:
        raise WrongStateError(f"round is void ({', '.join(rnd.void.rules)}); no decisions")
    rnd.seat_in_play(op.seat)
    try:
        choice = Choice(op.choice)
    except ValueError:
        raise DecisionError(f"unknown decision {op.choice!r}") from None
    allowed = _allowed(rnd, op.seat)
    if choice not in allowed:
        made = [c.value for c in rnd.decisions.get(op.seat, [])]
        raise DecisionError(
            f"seat {op.seat} cannot {choice.value} now in {rnd.game} (decided {made or 'nothing'}; "
            f"allowed {sorted(c.value for c in allowed) or 'nothing'})"
        )


def do_decision(rnd: RoundState, op: Decision, events: list[Event]) -> None:
    if rnd.status is RoundStatus.DEALING:
        close_phase(rnd, CountPoint.DECISION, op.time_ms, events)
    rnd.decisions.setdefault(op.seat, []).append(Choice(op.choice))
    events.append(DecisionRecorded(op.seat, Choice(op.choice).value))
    rnd.maybe_open_dealer_phase(events)


def verify_player_absent(rnd: RoundState, op: PlayerAbsent) -> None:
    """A player absent for the decision (5.11), where the game's document has the rule."""
    if rnd.status is RoundStatus.BETTING or rnd.procedure is None:
        raise WrongStateError("a player is absent for a decision, after the deal")
    if not rnd.rules.absent:
        raise DecisionError(f"{rnd.game} has no absent-player rule; record the decisions the shift manager rules")
    rnd.seat_in_play(op.seat)
    if not rnd.needs_decision(op.seat):
        raise DecisionError(f"seat {op.seat} has no ante, so there is no decision to be absent for (5.11)")
    if rnd.decisions.get(op.seat):
        raise DecisionError(f"seat {op.seat} has already decided")


def do_player_absent(rnd: RoundState, op: PlayerAbsent, events: list[Event]) -> None:
    if rnd.status is RoundStatus.DEALING:
        close_phase(rnd, CountPoint.DECISION, op.time_ms, events)
    rnd.absent.add(op.seat)
    rnd.mark_seat_void(op.seat, rnd.rules.absent, "player not present to decide; wagers returned", None, events)
    rnd.maybe_open_dealer_phase(events)
