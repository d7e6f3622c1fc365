"""Settlement arithmetic shared by the games: odds, table limits, returned wagers.

Integer arithmetic only. A table limit changes the amount a wager is settled on, never
the stake the player put down: over the maximum (5.14) the wager is settled on the maximum
and the excess handed back; under the minimum (5.13) it is settled as it is, once.
"""

from __future__ import annotations

from cardshoe.games import Basis, PayLine

from .result import LimitApplied, Line, Outcome, WagerResult
from .round import Round, Seat

__all__ = ["limit_for", "settle_odds", "returned", "under_minimum_returned", "odds_amount", "bonus"]


def limit_for(rnd: Round, seat: Seat, wager: str) -> tuple[int, LimitApplied | None]:
    """The amount ``wager`` is settled on, and the limit rule that set it (if any)."""
    stake = seat.wagers[wager]
    limit = rnd.limit(wager)
    game = rnd.game
    if stake > limit.max:
        return limit.max, LimitApplied(game.rule("over_maximum"), limit.max, excess_returned=stake - limit.max)
    if stake < limit.min:
        return stake, LimitApplied(game.rule("under_minimum"), stake, under_minimum=True)
    return stake, None


def under_minimum_returned(rnd: Round, seat: Seat, wager: str) -> WagerResult | None:
    """5.13: after one under-minimum settlement, the player's under-minimum wagers go back."""
    stake = seat.wagers[wager]
    if seat.under_minimum_settled_before and stake < rnd.limit(wager).min:
        rule = rnd.game.rule("under_minimum")
        return returned(
            wager, stake, (rule,), f"under the table minimum {rnd.limit(wager).min}, already paid/collected once ({rule})"
        )
    return None


def odds_amount(line: PayLine, settled_on: int) -> int:
    """What an odds line pays on ``settled_on``, the returned stake not included."""
    assert line.odds is not None
    return int(line.odds) * settled_on


def settle_odds(
    rnd: Round,
    seat: Seat,
    wager: str,
    outcome: Outcome,
    rules: tuple[str, ...],
    *,
    line: PayLine | None = None,
    table_rule: str | None = None,
    notes: tuple[str, ...] = (),
) -> WagerResult:
    """Settle a wager paid at odds (or lost, or pushed), applying the table limits.

    A win "N to 1" on the settled amount e pays N*e and returns the stake; "N for 1" pays
    N*e in all (e is part of it) and returns only an excess over the maximum.
    """
    stake = seat.wagers[wager]
    settled_on, applied = limit_for(rnd, seat, wager)
    all_rules = rules + ((applied.rule,) if applied else ())
    if outcome is Outcome.WIN:
        if line is None or line.odds is None or line.basis is None:
            raise ValueError(f"a winning {wager} needs an odds line")
        amount = odds_amount(line, settled_on)
        back = settled_on if line.basis is Basis.TO else 0
        paid = amount + back + (stake - settled_on)
        pay_line = Line(line.label, line.pays_text, amount, table_rule or "")
        return WagerResult(wager, stake, outcome, paid, all_rules, (pay_line,), notes, applied)
    if outcome is Outcome.LOSE:
        return WagerResult(wager, stake, outcome, stake - settled_on, all_rules, (), notes, applied)
    if outcome is Outcome.PUSH:
        return WagerResult(wager, stake, outcome, stake, rules, (), notes, None)
    return WagerResult(wager, stake, outcome, stake, rules, (), notes, None)


def returned(wager: str, stake: int, rules: tuple[str, ...], note: str, outcome: Outcome = Outcome.RETURNED) -> WagerResult:
    """A wager handed back whole (returned, or void with the round)."""
    return WagerResult(wager, stake, outcome, stake, rules, (), (note,) if note else ())


def bonus(wager: str, on: str, line: PayLine, settled_on: int, rules: tuple[str, ...], table_rule: str) -> WagerResult:
    """A payment on another wager with no stake of its own (TCP Ante Bonus, 4.2)."""
    amount = odds_amount(line, settled_on)
    return WagerResult(
        wager, 0, Outcome.WIN, amount, rules, (Line(line.label, line.pays_text, amount, table_rule),), (), None, on
    )
