"""Singapore Stud ante/bet under the exact optimal strategy with the dealer's up card.

The slow, exact mode of ``cardshoe parsheet megalink-singapore-stud-poker --upcard``.

For every dealer up card u and every player hand P (5 of the other 51 cards) the
player bets when the expected return of betting, over all C(46, 4) = 163,185 dealer
completions, is at least that of folding (-1 ante). The dealer counts for (P, u) come
from inclusion-exclusion over the cards S of P that a dealer hand would share:

    count over D containing u, disjoint from P = sum over S subset of P of
        (-1)^|S| * count over D containing S and u,

with, for each u, the sorted strengths of the 5-card hands containing u and each set S
of up to 3 further cards built once. Up cards are taken up to suit (13 ranks, times 4),
and player hands up to the permutations of the three suits other than the up card's
(about 400,000 classes per up card). Every (P, u, D) of the 19,933,230,517,200 is
counted exactly once; the tests check the total and the published Caribbean Stud
figure under this strategy.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Iterator, Sequence

from ..poker import kind5, strength5

__all__ = ["UpcardResult", "upcard_optimum", "player_classes", "dealer_tables", "dealer_counts"]

COMPLETIONS = 163185  # C(46, 4)


@dataclass
class UpcardResult:
    """Totals over all (player hand, up card, dealer hand) deals under the optimum."""

    deals: int
    bet_deals: int
    nq: int
    tie: int
    lose: int
    fold: int
    wins_by_strength: dict[int, int]
    ev_units: int  # total net return in ante units over all deals
    # (player hand class, is A-K high) -> [situations bet, situations], weighted
    decisions: dict[str, list[int]] = field(default_factory=dict)


def player_classes(up: int) -> Iterator[tuple[tuple[int, ...], int]]:
    """Player hands of 5 of the 51 cards other than ``up``, up to permutations of the
    three suits other than the up card's: (representative, number of hands)."""
    up_suit = up & 3
    others = [s for s in range(4) if s != up_suit]
    up_rank = up >> 2
    subsets: list[tuple[int, ...]] = [()]
    for k in range(1, 6):
        subsets.extend(combinations(range(13), k))
    index = {s: i for i, s in enumerate(subsets)}
    for k0 in range(0, 6):
        for a in combinations([r for r in range(13) if r != up_rank], k0):
            rest = 5 - k0
            # three rank sets for the other suits, in non-increasing subset index order
            for i in range(len(subsets)):
                b1 = subsets[i]
                if len(b1) > rest:
                    continue
                for j in range(i + 1):
                    b2 = subsets[j]
                    if len(b1) + len(b2) > rest:
                        continue
                    need = rest - len(b1) - len(b2)
                    for b3 in _sets_of_size(subsets, index, need, j):
                        cards = tuple(sorted(
                            [r * 4 + up_suit for r in a]
                            + [r * 4 + others[0] for r in b1]
                            + [r * 4 + others[1] for r in b2]
                            + [r * 4 + others[2] for r in b3]))
                        i3 = index[b3]
                        if i == j == i3:
                            weight = 1
                        elif i == j or j == i3:
                            weight = 3
                        else:
                            weight = 6
                        yield cards, weight


_SIZE_CACHE: dict[tuple[int, int], list[tuple[int, ...]]] = {}


def _sets_of_size(
    subsets: list[tuple[int, ...]], index: dict[tuple[int, ...], int], size: int, max_index: int
) -> list[tuple[int, ...]]:
    key = (size, max_index)
    found = _SIZE_CACHE.get(key)
    if found is None:
        found = [s for s in subsets[: max_index + 1] if len(s) == size]
        _SIZE_CACHE[key] = found
    return found


def _dealer_lists(up: int) -> tuple[dict[int, list[int]], dict[int, int]]:
    """For every set S of 0..3 cards other than ``up`` (keyed by its bit mask): the
    sorted strengths of the 5-card hands holding S and ``up``; and for 4-card S the
    strength of S + up."""
    lists: dict[int, list[int]] = defaultdict(list)
    singles: dict[int, int] = {}
    rest = [c for c in range(52) if c != up]
    bit = [1 << c for c in range(52)]
    for four in combinations(rest, 4):
        s = strength5(up, *four)
        a, b, c, d = four
        ba, bb, bc, bd = bit[a], bit[b], bit[c], bit[d]
        singles[ba | bb | bc | bd] = s
        for key in (0, ba, bb, bc, bd, ba | bb, ba | bc, ba | bd, bb | bc, bb | bd, bc | bd,
                    ba | bb | bc, ba | bb | bd, ba | bc | bd, bb | bc | bd):
            lists[key].append(s)
    for lst in lists.values():
        lst.sort()
    return dict(lists), singles


def upcard_optimum(
    bet_net: Sequence[int], qmin: int, bet_multiple: int = 2,
    progress: Callable[[str, float], None] | None = None, workers: int = 1,
) -> UpcardResult:
    """Exact totals under the optimal bet/fold decision for every (player hand, up card).

    ``bet_net[s]`` is the bet's net multiple when the player wins with strength s (4.1.2).
    The 13 up-card ranks are independent and may run in ``workers`` processes.
    """
    total = UpcardResult(0, 0, 0, 0, 0, 0, {}, 0, {})
    jobs = [(rank, tuple(bet_net), qmin, bet_multiple) for rank in range(13)]
    done = 0
    if progress is not None:
        progress("stud up-card optimum", 0.0)
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            for part in pool.map(_one_up_rank, jobs):
                _add(total, part)
                done += 1
                if progress is not None:
                    progress("stud up-card optimum", done / 13)
    else:
        for job in jobs:
            _add(total, _one_up_rank(job))
            done += 1
            if progress is not None:
                progress("stud up-card optimum", done / 13)
    return total


def _add(total: UpcardResult, part: UpcardResult) -> None:
    total.deals += part.deals
    total.bet_deals += part.bet_deals
    total.nq += part.nq
    total.tie += part.tie
    total.lose += part.lose
    total.fold += part.fold
    total.ev_units += part.ev_units
    for s, n in part.wins_by_strength.items():
        total.wins_by_strength[s] = total.wins_by_strength.get(s, 0) + n
    for name, (bet, seen) in part.decisions.items():
        entry = total.decisions.setdefault(name, [0, 0])
        entry[0] += bet
        entry[1] += seen


def _one_up_rank(job: tuple[int, tuple[int, ...], int, int]) -> UpcardResult:
    """All player hands against one up-card rank (its four suits by symmetry)."""
    rank, bet_net, qmin, bet_multiple = job
    nq_t = tie_t = lose_t = fold_t = bet_deals = ev_total = deals = 0
    wins: dict[int, int] = defaultdict(int)
    up = rank * 4  # suit 0; the other three up-card suits are the same by symmetry
    table, singles = dealer_tables(up, qmin)
    names = ["", *(_category(s, qmin) for s in range(1, len(bet_net)))]
    decisions: dict[str, list[int]] = {}
    for hand, weight in player_classes(up):
        sp = strength5(*hand)
        nq, less, greater = dealer_counts(hand, sp, table, singles, qmin)
        eq = COMPLETIONS - nq - less - greater
        ev_bet = nq + less * (1 + bet_multiple * bet_net[sp]) - greater * (1 + bet_multiple)
        w = 4 * weight  # four up-card suits
        deals += w * COMPLETIONS
        entry = decisions.setdefault(names[sp], [0, 0])
        entry[1] += w
        if ev_bet >= -COMPLETIONS:
            entry[0] += w
            bet_deals += w * COMPLETIONS
            nq_t += w * nq
            tie_t += w * eq
            lose_t += w * greater
            wins[sp] += w * less
            ev_total += w * ev_bet
        else:
            fold_t += w * COMPLETIONS
            ev_total -= w * COMPLETIONS
    return UpcardResult(deals, bet_deals, nq_t, tie_t, lose_t, fold_t, dict(wins), ev_total,
                        decisions)


_IDX1 = [(i,) for i in range(5)]
_IDX2 = list(combinations(range(5), 2))
_IDX3 = list(combinations(range(5), 3))
_IDX4 = list(combinations(range(5), 4))
_BIT = [1 << c for c in range(52)]

DealerTable = dict[int, tuple[list[int], int, int]]


def dealer_tables(up: int, qmin: int) -> tuple[DealerTable, dict[int, int]]:
    """The per-up-card dealer data: for each set S of 0..3 other cards (bit mask), the
    sorted strengths of hands holding S and ``up``, how many of them do not qualify, and
    how many there are; and the strength of ``up`` plus each 4-card set."""
    raw, singles = _dealer_lists(up)
    return {key: (lst, bisect_left(lst, qmin), len(lst)) for key, lst in raw.items()}, singles


def dealer_counts(
    hand: Sequence[int], sp: int, table: DealerTable, singles: dict[int, int], qmin: int
) -> tuple[int, int, int]:
    """(does not qualify, qualifies below the player, qualifies above the player) over the
    163,185 dealer hands holding the up card and none of ``hand``; the rest are ties."""
    b = [_BIT[c] for c in hand]
    base_lst, base_q, base_n = table[0]
    odd = [table[b[i]] for (i,) in _IDX1] + [table[b[i] | b[j] | b[k]] for i, j, k in _IDX3]
    even = [table[b[i] | b[j]] for i, j in _IDX2]
    four = [singles[b[i] | b[j] | b[k] | b[m]] for i, j, k, m in _IDX4]
    if sp < qmin:
        # a player below A-K beats no qualifying dealer (3.10.3) and ties none
        nq = base_q - sum(t[1] for t in odd) + sum(t[1] for t in even)
        nq += sum(1 for s in four if s < qmin)
        return nq, 0, COMPLETIONS - nq
    lo = bisect_left(base_lst, sp)
    hi = bisect_right(base_lst, sp)
    nq = base_q
    less = lo - base_q
    greater = base_n - hi
    for lst, q_lo, size in odd:
        lo = bisect_left(lst, sp)
        hi = bisect_right(lst, sp)
        nq -= q_lo
        less -= lo - q_lo
        greater -= size - hi
    for lst, q_lo, size in even:
        lo = bisect_left(lst, sp)
        hi = bisect_right(lst, sp)
        nq += q_lo
        less += lo - q_lo
        greater += size - hi
    for s in four:
        if s < qmin:
            nq += 1
        elif s < sp:
            less += 1
        elif s > sp:
            greater += 1
    return nq, less, greater


def _category(strength: int, qmin: int) -> str:
    kind = kind5(strength).name.replace("_", " ").lower()
    if kind == "high card":
        return "A-K high" if strength >= qmin else "below A-K"
    return kind


