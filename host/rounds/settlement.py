"""Settlement: the last count point, then the round is closed for the settlement engine.

The round itself pays nothing: :mod:`.export` writes it in the round format and
:mod:`cardshoe.settlement` settles it. A void round is always closed (every wager returned).
"""

from __future__ import annotations

from .deal import close_phase
from .errors import BadAmountError, DecisionError, MissingInputError, WrongStateError
from .events import Event, RoundSettled
from .operations import Settle
from .procedures import CountPoint
from .state import RoundState, RoundStatus
from .wagers import selection_needed


def verify_settle(rnd: RoundState, op: Settle) -> None:
    """Settle: a void round always; otherwise nothing waiting for a person, every decision made,
    and (Let It Ride with a progressive wager in play) the Magic Card and Lucky Player recorded."""
    if op.jackpot_pool is not None and (not isinstance(op.jackpot_pool, int) or op.jackpot_pool < 0):
        raise BadAmountError(f"jackpot_pool must be a non-negative integer in minor units, got {op.jackpot_pool!r}")
    if rnd.void is not None:
        return
    if rnd.status is RoundStatus.BETTING:
        raise WrongStateError("nothing has been dealt; void the round instead of settling it")
    pending = rnd.pending_flags
    if pending:
        raise WrongStateError("irregularities wait for a person: " + "; ".join(f"#{f.id} {f.kind.value} ({f.decision.value})" for f in pending))
    owing = rnd.owing_decisions()
    if owing:
        raise DecisionError(f"seat(s) {', '.join(map(str, owing))} have not decided")
    if rnd.status is RoundStatus.DECIDING and len(rnd.phase_states) > 1 and not rnd.phase_states[1].opened:
        raise WrongStateError("the dealer's hand has not been dealt")
    missing = selection_needed(rnd)
    if missing:
        # Let It Ride 4.3-4.4: a progressive wager's Magic Card and Lucky Player payouts depend
        # on the system's selection, so the round cannot be settled without it. Refused here,
        # before the round closes, so the table can still record it (or a supervisor void).
        names = {"magic_card": "the Magic Card", "lucky_seat": "the Lucky Player"}
        raise MissingInputError(
            ", ".join(missing),
            f"{' and '.join(names[m] for m in missing)} of round {rnd.round_id} "
            f"{'is' if len(missing) == 1 else 'are'} not recorded, and a progressive wager is in play "
            "(4.3, 4.4: the system selects them every round); record "
            f"{', '.join(missing)} as the progressive system selected {'it' if len(missing) == 1 else 'them'} "
            "(progressive_selection), or void the round",
        )


def do_settle(rnd: RoundState, op: Settle, events: list[Event]) -> None:
    """Close the round; a last count point that finds a problem leaves it open, waiting."""
    rnd.jackpot_pool = op.jackpot_pool
    if rnd.void is None and rnd.phase_index() is not None:
        close_phase(rnd, CountPoint.SETTLE, op.time_ms, events)
        if rnd.pending_flags:
            return  # the count point found a problem: settlement waits for it
    rnd.status = RoundStatus.SETTLED
    rnd.settled_ms = op.time_ms
    events.append(RoundSettled(rnd.void is not None))
