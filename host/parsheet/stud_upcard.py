"""Singapore Stud ante/bet under the exact optimal strategy with the dealer's up card.

The default ante/bet sheet of ``cardshoe parsheet megalink-singapore-stud-poker``.

For every dealer up card u and every player hand P (5 of the other 51 cards) the
player bets when the expected return of betting, over all C(46, 4) = 163,185 dealer
completions, is at least that of folding (-1 ante). The dealer counts for (P, u) come
from inclusion-exclusion over the cards S of P that a dealer hand would share:

    count over D containing u, disjoint from P = sum over S subset of P of
        (-1)^|S| * count over D containing S and u,

with, for each u, the sorted strengths of the 5-card hands containing u and each set S
of up to 3 further cards built once. Up cards are taken up to suit (13 ranks, times 4),
and player hands up to the permutations of the three suits other than the up card's
(about 434,000 classes per up-card rank).

Most situations need not be counted in full: the totals start from "always bet" (the
disjoint-pair counts of :func:`cardshoe.parsheet.stud.stud_totals`, five deals each), and
only the situations the optimum folds are moved to fold, with their exact counts. Below
A-K only the non-qualifying count decides (one inclusion-exclusion sum of plain counts);
at A-K or better a lower bound on betting's expectation settles the clear bets, and the
rest (about 6%) are counted exactly as above. Every (P, u, D) of the 19,933,230,517,200
is enumerated once (checked against the baseline's total); the tests check the published
Caribbean Stud figure under this strategy.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Iterable, Iterator, Sequence

from ..poker import _T5, kind5, strength5
from .distributions import histogram5
from .stud import StudTotals, stud_totals

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
    # the "always bet" disjoint-pair counts the optimum started from
    baseline: StudTotals | None = None
    # CPU seconds: "baseline" (counted in the calling process while the workers run)
    # and, per process that counted up-card ranks, the sum of its ranks' times
    cpu: dict[str, float] = field(default_factory=dict)


def player_classes(up: int) -> Iterator[tuple[tuple[int, ...], int]]:
    """Player hands of 5 of the 51 cards other than ``up``, up to permutations of the
    three suits other than the up card's: (representative, number of hands). The cards of
    a representative are grouped by suit (the up card's suit first), not sorted."""
    up_suit = up & 3
    others = [s for s in range(4) if s != up_suit]
    up_rank = up >> 2
    subsets: list[tuple[int, ...]] = [()]
    for k in range(1, 6):
        subsets.extend(combinations(range(13), k))
    index = {s: i for i, s in enumerate(subsets)}
    size = [len(sub) for sub in subsets]
    upto = [sum(1 for sub in subsets if len(sub) <= k) for k in range(6)]
    # each rank set as cards of each of the other three suits (built once, concatenated)
    in_suit = [[tuple(r * 4 + suit for r in sub) for sub in subsets] for suit in others]
    s1, s2, s3 = in_suit
    for k0 in range(0, 6):
        for a in combinations([r for r in range(13) if r != up_rank], k0):
            head = tuple(r * 4 + up_suit for r in a)
            rest = 5 - k0
            # three rank sets for the other suits, in non-increasing subset index order
            # (subsets are listed by size, so "size <= k" is an index range)
            for i in range(upto[rest]):
                n1 = size[i]
                h1 = head + s1[i]
                for j in range(min(i + 1, upto[rest - n1])):
                    n2 = n1 + size[j]
                    h2 = h1 + s2[j]
                    for b3 in _sets_of_size(subsets, index, rest - n2, j):
                        i3 = index[b3]
                        if i == j == i3:
                            weight = 1
                        elif i == j or j == i3:
                            weight = 3
                        else:
                            weight = 6
                        yield h2 + s3[i3], weight


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
    totals: StudTotals | None = None,
) -> UpcardResult:
    """Exact totals under the optimal bet/fold decision for every (player hand, up card).

    ``bet_net[s]`` is the bet's net multiple when the player wins with strength s (4.1.2).
    Starts from "always bet" (``totals``: stud_totals' disjoint-pair counts, five deals
    each, one per dealer card exposed), then each up-card rank, independently and in up
    to ``workers`` processes, moves the situations the optimum folds from bet to fold.
    """
    jobs = [(rank, tuple(bet_net), qmin, bet_multiple) for rank in range(13)]
    done = 0
    counted = 0
    workers_seen: dict[int, str] = {}
    if progress is not None:
        progress("stud up-card optimum", 0.0)
    parts: Iterable[_Folds]
    pool = None
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=workers)
        parts = pool.map(_one_up_rank, jobs)
    else:
        parts = map(_one_up_rank, jobs)
    try:
        # the workers start on the up-card ranks while this process counts the baseline
        cpu0 = time.process_time()
        if totals is None:
            totals = stud_totals(qmin, progress)
        cpu_baseline = time.process_time() - cpu0
        m = bet_multiple
        n = len(bet_net) - 1
        names = ["", *(_category(s, qmin) for s in range(1, n + 1))]
        h5 = histogram5()
        result = UpcardResult(0, 0, 0, 0, 0, 0, {}, 0, {}, totals)
        result.cpu["baseline"] = cpu_baseline
        for a in range(1, n + 1):
            nq, win, tie, lose = (5 * x for x in (totals.nq[a], totals.win[a], totals.tie[a],
                                                   totals.lose[a]))
            result.deals += nq + win + tie + lose
            result.nq += nq
            result.tie += tie
            result.lose += lose
            if win:
                result.wins_by_strength[a] = win
            result.ev_units += nq + win * (1 + m * bet_net[a]) - lose * (1 + m)
            seen = 47 * h5.get(a, 0)  # (P, u) situations: the 47 up cards outside P
            entry = result.decisions.setdefault(names[a], [0, 0])
            entry[0] += seen
            entry[1] += seen
        result.bet_deals = result.deals
        for part in parts:
            counted += part.situations
            _apply(result, part, names)
            if part.pid == os.getpid():
                who = "this process"
            else:  # workers numbered in the order their first rank came back
                who = workers_seen.setdefault(part.pid, f"worker {len(workers_seen) + 1}")
            result.cpu[who] = result.cpu.get(who, 0.0) + part.cpu
            done += 1
            if progress is not None:
                progress("stud up-card optimum", done / 13)
    finally:
        if pool is not None:
            pool.shutdown()
    if counted * COMPLETIONS != result.deals:  # every (P, u, D) once, as the baseline has it
        raise RuntimeError(f"up-card enumeration counted {counted * COMPLETIONS} deals, "
                           f"not {result.deals}")
    return result


@dataclass
class _Folds:
    """One up-card rank's folded situations: their exact bet outcome counts, weighted."""

    situations: int = 0  # (P, u) situations enumerated (a check against the baseline)
    nq: int = 0
    tie: int = 0
    lose: int = 0
    ev_bet: int = 0
    deals: int = 0
    wins_by_strength: dict[int, int] = field(default_factory=dict)
    folded_by_strength: dict[int, int] = field(default_factory=dict)  # situations
    cpu: float = 0.0  # CPU seconds of the process that counted them
    pid: int = 0  # and its process id


def _apply(result: UpcardResult, part: _Folds, names: list[str]) -> None:
    """Move the folded situations from "bet" to "fold" (3.9.1: a fold loses the ante)."""
    result.bet_deals -= part.deals
    result.nq -= part.nq
    result.tie -= part.tie
    result.lose -= part.lose
    result.fold += part.deals
    result.ev_units -= part.ev_bet + part.deals
    for sp, wins in part.wins_by_strength.items():
        if not wins:
            continue
        left = result.wins_by_strength[sp] - wins
        if left:
            result.wins_by_strength[sp] = left
        else:
            del result.wins_by_strength[sp]
    for sp, situations in part.folded_by_strength.items():
        result.decisions[names[sp]][0] -= situations


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


def _one_up_rank(job: tuple[int, tuple[int, ...], int, int]) -> _Folds:
    """The situations folded against one up-card rank (its four suits by symmetry).

    Betting's expectation needs the three dealer counts. Most situations are decided
    without them: below A-K only the non-qualifying count matters (one inclusion-exclusion
    sum of plain counts); at A-K or better a lower bound on betting's expectation (first-
    order inclusion-exclusion, the pair terms bounded by their size) settles every hand
    that clearly bets. The rest are counted exactly (dealer_counts)."""
    rank, bet_net, qmin, m = job
    up = rank * 4  # suit 0; the other three up-card suits are the same by symmetry
    cpu0 = time.process_time()
    out = folds(up, bet_net, qmin, m, player_classes(up))
    out.cpu = time.process_time() - cpu0
    out.pid = os.getpid()
    return out


def folds(up: int, bet_net: Sequence[int], qmin: int, m: int,
          classes: Iterable[tuple[tuple[int, ...], int]]) -> _Folds:
    """The folded situations among ``classes`` (player hand, weight) against ``up``
    (weights times 4 for the up card's suits); see _one_up_rank."""
    table, singles = dealer_tables(up, qmin)
    card, t5, mask = _T5.card5, _T5.table5, _T5.mask5
    bit = _BIT
    # q[S]: dealer hands holding S and up that do not qualify (for |S| = 4: 0 or 1)
    q = {key: t[1] for key, t in table.items()}
    for key, sv in singles.items():
        q[key] = 1 if sv < qmin else 0
    q0 = q.pop(0)
    # below0[s], below1[c][s]: hands holding up (and c) with strength below s
    base = table[0][0]
    top = len(bet_net) + 1
    below0 = [bisect_left(base, s) for s in range(top)]
    below1: list[list[int]] = [[] for _ in range(52)]
    for c in range(52):
        if c != up:
            below1[c] = [bisect_left(table[bit[c]][0], s) for s in range(top)]
    others = [c for c in range(52) if c != up]
    n0 = len(base)  # 249,900: 4 of the other 51
    n1 = len(table[bit[others[0]]][0])  # 19,600: 3 of the other 50
    pair_slack = 10 * len(table[bit[others[0]] | bit[others[1]]][0])  # 10 pairs x 1,176
    out = _Folds()
    wins = out.wins_by_strength
    folded = out.folded_by_strength
    for hand, weight in classes:
        a, b, c, d, e = hand
        sp = t5[(card[a] + card[b] + card[c] + card[d] + card[e]) & mask]
        w = 4 * weight  # four up-card suits
        out.situations += w
        if sp < qmin:
            ba, bb, bc, bd, be = bit[a], bit[b], bit[c], bit[d], bit[e]
            ab, ac, ad, ae = ba | bb, ba | bc, ba | bd, ba | be
            bcm, bdm, bem = bb | bc, bb | bd, bb | be
            cd, ce, de = bc | bd, bc | be, bd | be
            nq = (q0 - q[ba] - q[bb] - q[bc] - q[bd] - q[be]
                  + q[ab] + q[ac] + q[ad] + q[ae] + q[bcm] + q[bdm] + q[bem] + q[cd] + q[ce]
                  + q[de]
                  - q[ab | bc] - q[ab | bd] - q[ab | be] - q[ac | bd] - q[ac | be]
                  - q[ad | be] - q[bcm | bd] - q[bcm | be] - q[bdm | be] - q[cd | be]
                  + q[ab | cd] + q[ab | ce] + q[ab | de] + q[ac | de] + q[bcm | de])
            # below A-K the player only wins when the dealer does not qualify (3.10.2):
            # betting's expectation 4 nq - 3 C against folding's -C
            if 2 * nq >= COMPLETIONS:
                continue  # bets: the baseline has it
            folded[sp] = folded.get(sp, 0) + w
            out.deals += w * COMPLETIONS
            out.nq += w * nq
            out.lose += w * (COMPLETIONS - nq)
            out.ev_bet += w * (nq - (1 + m) * (COMPLETIONS - nq))
            continue
        # A lower bound on betting's expectation: the hands sharing a player card removed
        # from the non-qualifying and beaten counts by first-order sums (removes at least
        # as many as share), and from the better hands by first-order sums less the
        # pairs' sizes (removes at most as many as share).
        r0, r1, r2, r3, r4 = below1[a], below1[b], below1[c], below1[d], below1[e]
        nq_lo = below0[qmin] - r0[qmin] - r1[qmin] - r2[qmin] - r3[qmin] - r4[qmin]
        less_lo = (below0[sp] - r0[sp] - r1[sp] - r2[sp] - r3[sp] - r4[sp]) - nq_lo
        s1 = sp + 1
        greater_hi = (n0 - below0[s1] + pair_slack
                      - 5 * n1 + r0[s1] + r1[s1] + r2[s1] + r3[s1] + r4[s1])
        if nq_lo + less_lo * (1 + m * bet_net[sp]) - (1 + m) * greater_hi >= -COMPLETIONS:
            continue  # bets for certain: the baseline has it
        nq, less, greater = dealer_counts(hand, sp, table, singles, qmin)
        ev_bet = nq + less * (1 + m * bet_net[sp]) - greater * (1 + m)
        if ev_bet >= -COMPLETIONS:
            continue
        folded[sp] = folded.get(sp, 0) + w
        out.deals += w * COMPLETIONS
        out.nq += w * nq
        out.tie += w * (COMPLETIONS - nq - less - greater)
        out.lose += w * greater
        wins[sp] = wins.get(sp, 0) + w * less
        out.ev_bet += w * ev_bet
    return out


def _category(strength: int, qmin: int) -> str:
    kind = kind5(strength).name.replace("_", " ").lower()
    if kind == "high card":
        return "A-K high" if strength >= qmin else "below A-K"
    return kind


