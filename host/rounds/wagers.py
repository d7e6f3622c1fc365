"""Betting: wagers placed and changed, Let It Ride's progressive selection, "no more bets".

Each operation has a ``verify_`` function (raises a RoundOperationError subclass naming what
is wrong, changes nothing) and a ``do_`` function (applies it, appending events), called by
``Round.do`` in that order. :func:`close_bets` is also the first card's doing (3.4).

Let It Ride 3.4: the 1, 2 and $ are kept equal (a change moves all three); "no more bets"
is refused while a seat holds only some of them.
"""

from __future__ import annotations

from ..cards import card_text
from .errors import (
    BadAmountError,
    ProcedureError,
    RoundOperationError,
    UnequalWagersError,
    UnknownWagerError,
    WagersClosedError,
    WrongStateError,
)
from .events import BetsClosed, DecisionKind, Event, Irregularity, IrregularityKind, WagerAccepted
from .operations import ChangeWager, NoMoreBets, PlaceWager, ProgressiveSelection
from .procedures import BASE_WAGERS, DECISION_WAGERS, LET_IT_RIDE, WAGERS, build_procedure
from .state import LIR_TRIO, PhaseState, RoundState, RoundStatus


def _verify_wager(rnd: RoundState, seat: int, wager: str, amount: int, *, change: bool) -> None:
    if rnd.status is not RoundStatus.BETTING:
        raise WagersClosedError(
            f"wagers are closed after 'no more bets' (rules {', '.join(rnd.rules.wagers_closed)}); "
            f"{'change of' if change else 'new'} {wager!r} on seat {seat} refused"
        )
    rnd.check_seat(seat)
    if wager not in WAGERS[rnd.game]:
        raise UnknownWagerError(f"{rnd.game} has no wager {wager!r}; its wagers are {', '.join(sorted(WAGERS[rnd.game]))}")
    if wager in DECISION_WAGERS[rnd.game]:
        raise UnknownWagerError(f"{wager!r} is placed by a player's decision after the deal, not before 'no more bets'")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < (0 if change else 1):
        raise BadAmountError(f"amount must be {'a non-negative' if change else 'a positive'} integer in minor units, got {amount!r}")
    held = rnd.wagers.get(seat, {})
    if change and wager not in held:
        raise UnknownWagerError(f"seat {seat} has no {wager!r} wager to change; place it first")
    if not change and wager in held:
        raise UnknownWagerError(f"seat {seat} already has a {wager!r} wager; change it instead")
    if not change and rnd.game == LET_IT_RIDE and wager in LIR_TRIO:
        for other in LIR_TRIO:
            if other in held and held[other] != amount:
                raise UnequalWagersError(
                    f"seat {seat}: the {wager!r} wager of {amount} differs from its {other!r} wager of "
                    f"{held[other]}; the 1, 2 and $ are three equal wagers placed together (3.4)"
                )


def verify_place_wager(rnd: RoundState, op: PlaceWager) -> None:
    """A new wager, before "no more bets" (3.4; 5.5-5.6)."""
    _verify_wager(rnd, op.seat, op.wager, op.amount, change=False)


def do_place_wager(rnd: RoundState, op: PlaceWager, events: list[Event]) -> None:
    rnd.wagers.setdefault(op.seat, {})[op.wager] = op.amount
    events.append(WagerAccepted(op.seat, op.wager, op.amount))


def verify_change_wager(rnd: RoundState, op: ChangeWager) -> None:
    """A wager changed (0 withdraws it), before "no more bets"."""
    _verify_wager(rnd, op.seat, op.wager, op.amount, change=True)


def do_change_wager(rnd: RoundState, op: ChangeWager, events: list[Event]) -> None:
    names: tuple[str, ...] = (op.wager,)
    if rnd.game == LET_IT_RIDE and op.wager in LIR_TRIO:
        # 3.4: the 1, 2 and $ are three equal wagers placed together, so changing (or
        # withdrawing) one changes them all; they can never be left unequal.
        names = (op.wager,) + tuple(w for w in LIR_TRIO if w != op.wager and w in rnd.wagers[op.seat])
    for name in names:
        if op.amount == 0:
            del rnd.wagers[op.seat][name]
        else:
            rnd.wagers[op.seat][name] = op.amount
        events.append(WagerAccepted(op.seat, name, op.amount))
    if not rnd.wagers[op.seat]:
        del rnd.wagers[op.seat]


def selection_needed(rnd: RoundState) -> tuple[str, ...]:
    """What of Let It Ride's progressive selection settling this round still needs: the
    operation fields (``magic_card``, ``lucky_seat``) not recorded while a live hand holds a
    progressive wager (4.3-4.4: the system selects both every round, and a progressive wager
    qualifies for their payouts). Empty for other games, a void round, or no such wager."""
    if rnd.game != LET_IT_RIDE or rnd.void is not None:
        return ()
    base = BASE_WAGERS[rnd.game]
    live = [s for s in rnd.active_seats() if s not in rnd.void_seats]
    if not any("progressive" in rnd.wagers.get(s, {}) and not base.isdisjoint(rnd.wagers[s]) for s in live):
        return ()
    missing: list[str] = []
    if rnd.magic_card is None:
        missing.append("magic_card")
    if rnd.lucky_seat is None:
        missing.append("lucky_seat")
    return tuple(missing)


def verify_progressive_selection(rnd: RoundState, op: ProgressiveSelection) -> None:
    """Let It Ride's Magic Card and Lucky Player (4.3-4.4), as the progressive system selected
    them for the round: recorded (and re-recorded) freely before the first card; after it, only
    what is still missing may be recorded, never a recorded value changed (reading 70)."""
    if rnd.game != LET_IT_RIDE:
        raise WrongStateError("the Magic Card and Lucky Player belong to Let It Ride (4.3-4.4)")
    if op.magic_card is not None and (
        not isinstance(op.magic_card, int) or isinstance(op.magic_card, bool) or not 0 <= op.magic_card <= 51
    ):
        raise RoundOperationError(f"magic_card must be a card code 0..51, got {op.magic_card!r}")
    if op.lucky_seat is not None:
        rnd.check_seat(op.lucky_seat)
    if not rnd.cards:
        return
    # After the first card the cards are known, so the selection must already have been made
    # by the system: the table may only supply a value it failed to record, never change one.
    for name, given, held in (("magic_card", op.magic_card, rnd.magic_card), ("lucky_seat", op.lucky_seat, rnd.lucky_seat)):
        if given is not None and held is not None and given != held:
            raise WrongStateError(
                f"the {name} was recorded as {held!r} and cannot be changed after the first card is dealt (4.3-4.4)"
            )
    if not any(given is not None and held is None
               for given, held in ((op.magic_card, rnd.magic_card), (op.lucky_seat, rnd.lucky_seat))):
        raise WrongStateError(
            "after the first card only a missing Magic Card or Lucky Player may be recorded (4.3-4.4); "
            "this selection records nothing new"
        )


def do_progressive_selection(rnd: RoundState, op: ProgressiveSelection, events: list[Event]) -> None:
    if not rnd.cards:
        rnd.magic_card, rnd.lucky_seat = op.magic_card, op.lucky_seat
        return
    late: list[str] = []
    if op.magic_card is not None and rnd.magic_card is None:
        rnd.magic_card = op.magic_card
        late.append(f"the Magic Card {card_text(op.magic_card)}")
    if op.lucky_seat is not None and rnd.lucky_seat is None:
        rnd.lucky_seat = op.lucky_seat
        late.append(f"the Lucky Player seat {op.lucky_seat}")
    # Recorded late, with the cards out: kept on the record for surveillance to check against
    # the progressive system's own log (reading 70); it changes no wager.
    rnd.add_flag(Irregularity(
        0, IrregularityKind.NOT_COVERED, ("4.3", "4.4"),
        f"{' and '.join(late)} recorded after the first card was dealt ({len(rnd.cards)} card(s) out); "
        "the progressive system selects them for the round, so this is the late record of that "
        "selection, to be checked against the system's log",
        DecisionKind.ACKNOWLEDGED, "table", None, resolved_by="host", time_ms=op.time_ms,
    ), events)


def verify_no_more_bets(rnd: RoundState, op: NoMoreBets) -> None:
    """"No more bets" (3.2): refused with nothing to deal, or a Let It Ride trio incomplete."""
    if rnd.status is not RoundStatus.BETTING:
        raise WrongStateError("'no more bets' was already announced")
    if not rnd.active_seats():
        raise ProcedureError("no seat holds a wager that takes part (3.4); nothing to deal")
    if rnd.game == LET_IT_RIDE:
        for seat, held in sorted(rnd.wagers.items()):
            placed = [w for w in LIR_TRIO if w in held]
            missing = [w for w in LIR_TRIO if w not in held]
            if placed and missing:
                raise UnequalWagersError(
                    f"seat {seat} holds {', '.join(repr(w) for w in placed)} but no {missing[0]!r} wager; "
                    "the 1, 2 and $ are three equal wagers placed together (3.4)"
                )


def do_no_more_bets(rnd: RoundState, op: NoMoreBets, events: list[Event]) -> None:
    close_bets(rnd, events)


def close_bets(rnd: RoundState, events: list[Event]) -> None:
    """Close betting: the active seats fix the dealing procedure and its first phase opens."""
    if rnd.game == LET_IT_RIDE:
        _return_partial_trios(rnd, events)
    seats = rnd.active_seats()
    rnd.procedure = build_procedure(rnd.game, rnd.device, seats, rnd.method) if seats else None
    rnd.phase_states = [PhaseState() for _ in (rnd.procedure.phases if rnd.procedure else ())]
    if rnd.phase_states:
        rnd.phase_states[0].opened = True
    rnd.status = RoundStatus.DEALING
    expected = len(rnd.procedure.places) if rnd.procedure else 0
    events.append(BetsClosed(seats, expected))


def _return_partial_trios(rnd: RoundState, events: list[Event]) -> None:
    """Let It Ride 3.4 when the first card closes betting (NoMoreBets refuses this): a seat
    holding only some of the 1, 2 and $ has no valid wager, so those are returned before the
    deal (the seat is not dealt to) and the return is flagged for the record."""
    for seat, held in sorted(rnd.wagers.items()):
        placed = [w for w in LIR_TRIO if w in held]
        if not placed or len(placed) == len(LIR_TRIO):
            continue
        amounts = ", ".join(f"{w!r} {held[w]}" for w in placed)
        for w in placed:
            del held[w]
            events.append(WagerAccepted(seat, w, 0))
        if not held:
            del rnd.wagers[seat]
        rnd.add_flag(Irregularity(
            0, IrregularityKind.NOT_COVERED, ("3.4",),
            f"the first card closed betting while seat {seat} held only {amounts}; the 1, 2 and $ are three "
            "equal wagers placed together, so these were returned and the seat is not dealt to",
            DecisionKind.ACKNOWLEDGED, "host", None, resolved_by="host",
        ), events)
