"""Turning hand counts into par-sheet lines for a pay table.

Which line a hand is paid on is decided by :func:`cardshoe.games.best_line`, the
function settlement uses: the first line (best hand first) that the evaluated hand
matches, with its suit and pair-rank conditions. Lines printed as one in the rule
document (TCP 4.3 "Royal Flush/Straight Flush") are merged into one par line.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from typing import Iterable, Sequence

from ..games import Basis, Game, PayLine, PayTable, best_line
from ..poker import STRENGTH5_MAX, Hand, evaluate5
from ..poker.tables import multisets
from .model import Line

__all__ = [
    "net_per_unit",
    "describe",
    "line_index",
    "lines_by_strength5",
    "representatives5",
    "table_lines",
    "edge_of",
    "merge_lines",
]


def net_per_unit(line: PayLine) -> Fraction | None:
    """Net win per unit staked: N "to 1" wins N, N "for 1" wins N - 1 (the stake is part
    of the payment); None for fixed amounts and pool percentages."""
    if line.odds is None:
        return None
    return Fraction(line.odds) if line.basis is Basis.TO else Fraction(line.odds - 1)


def describe(line: PayLine, game: Game) -> str:
    """The price as the rules print it."""
    if line.pool_percent is not None:
        return f"{line.pool_percent}% of pool"
    if line.fixed is not None:
        return f"{game.currency} {line.fixed / game.minor_per_major:,.2f} fixed"
    assert line.basis is not None
    return f"{line.odds} {line.basis.value} 1"


def line_index(table: PayTable, hand: Hand | None) -> int | None:
    """Index in ``table.lines`` of the line settlement pays this hand on, or None."""
    line = best_line(table, hand)
    if line is None:
        return None
    for i, candidate in enumerate(table.lines):
        if candidate is line:
            return i
    raise AssertionError("best_line returned a line not in the table")  # pragma: no cover


@lru_cache(maxsize=None)
def representatives5() -> tuple[Hand, ...]:
    """One evaluated 5-card hand for every strength 1..7462 (index = strength).

    Suit-independent pay lines (every 5-card table here) pay all hands of a strength
    alike, so one hand per strength decides the line.
    """
    reps: list[Hand | None] = [None] * (STRENGTH5_MAX + 1)
    for counts in multisets(5):
        cards: list[int] = []
        distinct = 0
        for r, k in enumerate(counts):
            for copy in range(k):
                # distinct suits within a rank; five distinct ranks get suits 0,1,2,3,0
                suit = copy if k > 1 else distinct % 4
                cards.append(r * 4 + suit)
            if k == 1:
                distinct += 1
        hand = evaluate5(cards)
        reps[hand.strength] = hand
    for ranks in combinations(range(13), 5):
        hand = evaluate5([r * 4 for r in ranks])
        reps[hand.strength] = hand
    out: list[Hand] = []
    for rep in reps[1:]:
        if rep is None:
            raise AssertionError("a 5-card strength has no representative")  # pragma: no cover
        out.append(rep)
    return tuple(out)


def lines_by_strength5(table: PayTable) -> list[int]:
    """For each 5-card strength (index), the pay-line index or -1 for no payment."""
    reps = representatives5()
    out = [-1] * (STRENGTH5_MAX + 1)
    for hand in reps:
        i = line_index(table, hand)
        out[hand.strength] = -1 if i is None else i
    return out


def merge_lines(lines: Iterable[Line]) -> list[Line]:
    """Merge consecutive lines with the same label and price (probabilities add)."""
    out: list[Line] = []
    for line in lines:
        if out and out[-1].label == line.label and out[-1].pays == line.pays and out[-1].net == line.net:
            prev = out.pop()
            count = None if prev.count is None or line.count is None else prev.count + line.count
            line = Line(line.label, prev.probability + line.probability, line.pays, line.net,
                        count, line.total)
        out.append(line)
    return out


def table_lines(
    table: PayTable,
    counts: Sequence[int],
    no_win: int,
    total: int,
    game: Game,
    lose_label: str = "No paying hand",
) -> list[Line]:
    """Par lines for a hand-only pay table from per-line hand counts out of ``total``."""
    lines: list[Line] = []
    for pay, n in zip(table.lines, counts):
        lines.append(Line(pay.label, Fraction(n, total), describe(pay, game), net_per_unit(pay),
                          n, total))
    lines = merge_lines(lines)
    lines.append(Line(lose_label, Fraction(no_win, total), "loses", Fraction(-1), no_win, total))
    return lines


def edge_of(lines: Sequence[Line]) -> Fraction | None:
    """House edge (minus the expected net win) when every line has a net, else None."""
    total = Fraction(0)
    for line in lines:
        c = line.contribution
        if c is None:
            return None
        total += c
    return -total
