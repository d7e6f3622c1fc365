"""Progressive wagers and the jackpot pool ledger.

Readings applied here (docs/rule-readings.md):

* Fixed amounts are per minimum progressive wager, multiplied by the number of minimum
  wagers staked (Xtreme 3.5.4, Stud 3.5.3.1); they and "for 1"/"to 1" odds are paid by the
  table and do not move the pool. The stake is not returned on a fixed amount or a share of
  the pool (the progressive system keeps the wager); "to 1" returns it, once per wager.
* Percentages of the pool are never multiplied (Xtreme 3.5.4, Stud 3.5.3.1), are floored
  to the minor unit, and the remainder stays in the pool.
* Lower hands are paid from the pool before the Royal Flush (TCP 3.20.1, Megalink/Xtreme
  3.18.2, Stud 3.15.3), so the Royal Flush takes the pool as it stands after them.
* Several winners of one hand on one table share where the document says so (Megalink/
  Xtreme 3.18.1, Stud 3.15.1/3.15.2): the displayed percentage plus the same percentage of
  one reset amount per further winner, divided equally. The reset amounts added are seeded by
  the operator (ledger "seed"), as if the jackpot had reset between the winners.
* Where the document has no sharing clause (Let It Ride), winners are paid one after the
  other in seat order from the dealer's left, each from the pool as it stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cardshoe.games import Basis, Game, PayLine

from .result import JackpotResult, Line, Movement, Outcome, WagerResult
from .round import Round

__all__ = ["Extra", "Claim", "settle_progressives"]


@dataclass(frozen=True)
class Extra:
    """A payment on a progressive wager besides its hand (Envy Bonus, Magic Card, Lucky Player)."""

    label: str
    pays: str
    amount: int
    rule: str
    returns_stake: bool  # a "to 1" payment gives the stake back


@dataclass
class Claim:
    """One progressive wager in action, with the hand line it makes (None: no paying hand)."""

    seat: int
    stake: int
    line: PayLine | None
    rules: list[str]
    extras: list[Extra] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pool_amount: int = 0
    pool_rules: list[str] = field(default_factory=list)


def _units(rnd: Round, stake: int) -> int:
    return stake // rnd.limit("progressive").min


def settle_progressives(rnd: Round, claims: list[Claim]) -> tuple[dict[int, WagerResult], JackpotResult | None]:
    """Settle every progressive wager in action; return results by seat and the pool ledger."""
    game = rnd.game
    table = game.progressive_table
    jackpot = rnd.jackpot
    movements: list[Movement] = []
    balance = jackpot.pool if jackpot is not None else 0
    reset = jackpot.reset if jackpot is not None else 0

    # Lower lines before higher ones: walk the table from its lowest line up.
    lower_paid = False
    for line in reversed(table.lines):
        winners = sorted((c for c in claims if c.line is line), key=lambda c: c.seat)
        if not winners:
            continue
        if line.pool_percent is None:
            lower_paid = True
            continue
        if jackpot is None:  # parse_round requires it whenever a progressive is in action
            raise ValueError("progressive wagers in action without jackpot data")
        pct = line.pool_percent
        last_rule = game.progressive.top_hand_last
        order_rules = [last_rule] if (pct == 100 and lower_paid and last_rule) else []
        share_rule = game.progressive.sharing.get(line.hand)
        if len(winners) > 1 and share_rule is not None:
            from_pool = balance * pct // 100
            seed = (len(winners) - 1) * (reset * pct // 100)
            if seed:
                balance += seed
                movements.append(Movement("seed", seed, share_rule, balance, line=line.label))
            total = from_pool + seed
            share = total // len(winners)
            for claim in winners:
                balance -= share
                claim.pool_amount = share
                claim.pool_rules = [share_rule, *order_rules]
                claim.notes.append(
                    f"{line.label}: {len(winners)} winners share {pct}% of the pool and {pct}% of "
                    f"{len(winners) - 1} reset amount(s) = {total}, {share} each ({share_rule})"
                )
                movements.append(Movement("payout", share, share_rule, balance, claim.seat, line.label))
            if pct == 100:
                balance += reset
                movements.append(Movement("reset", reset, table.rule, balance))
        else:
            for claim in winners:
                amount = balance * pct // 100
                balance -= amount
                claim.pool_amount = amount
                claim.pool_rules = [table.rule, *order_rules]
                if len(winners) > 1:
                    claim.notes.append(
                        f"{line.label}: no sharing clause; paid in seat order from the pool as it stands"
                    )
                movements.append(Movement("payout", amount, table.rule, balance, claim.seat, line.label))
                if pct == 100:
                    balance += reset
                    movements.append(Movement("reset", reset, table.rule, balance))
        lower_paid = True

    results: dict[int, WagerResult] = {}
    for claim in claims:
        results[claim.seat] = _result(rnd, game, claim)
    ledger = None
    if jackpot is not None:
        ledger = JackpotResult(jackpot.pool, balance, jackpot.reset, tuple(movements))
    return results, ledger


def _result(rnd: Round, game: Game, claim: Claim) -> WagerResult:
    table = game.progressive_table
    lines: list[Line] = []
    rules = list(claim.rules)
    returns_stake = False
    line = claim.line
    if line is not None:
        if line.pool_percent is not None:
            lines.append(Line(line.label, line.pays_text, claim.pool_amount, table.rule))
            rules += claim.pool_rules
            if game.progressive.multiples and max(game.progressive.multiples) > 1:
                rules.append(game.rule("progressive_multiplied"))
        elif line.fixed is not None:
            lines.append(Line(line.label, line.pays_text, line.fixed * _units(rnd, claim.stake), table.rule))
        else:
            assert line.odds is not None
            lines.append(Line(line.label, line.pays_text, line.odds * claim.stake, table.rule))
            returns_stake = line.basis is Basis.TO
            if line.basis is Basis.FOR and "progressive_multiplied" in game.rules and _units(rnd, claim.stake) > 1:
                rules.append(game.rule("progressive_multiplied"))
        rules.append(table.rule)
    for extra in claim.extras:
        lines.append(Line(extra.label, extra.pays, extra.amount, extra.rule))
        returns_stake = returns_stake or extra.returns_stake
        rules.append(extra.rule)
    rules = list(dict.fromkeys(rules))
    if not lines:
        return WagerResult("progressive", claim.stake, Outcome.LOSE, 0, tuple(rules), (), tuple(claim.notes))
    paid = sum(x.amount for x in lines) + (claim.stake if returns_stake else 0)
    return WagerResult("progressive", claim.stake, Outcome.WIN, paid, tuple(rules), tuple(lines), tuple(claim.notes))
