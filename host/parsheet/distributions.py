"""Exact hand distributions by enumeration, with the evaluator of cardshoe.poker.

* 3 cards: all 22,100 hands, evaluated one by one.
* 5 cards: all 2,598,960 hands, evaluated one by one (about a second).
* best 5 of 6 (20,358,520 hands) and of 7 (133,784,560): by rank multiset. Every rank
  multiset (at most 4 of a rank) is looked up once in the evaluator's non-flush table
  and weighted by its number of suit assignments (the product of C(4, m) over its
  ranks); then each hand holding five or more cards of one suit is moved from its
  non-flush value to its flush value. Those flush hands are enumerated explicitly
  (207,636 for 6 cards), so the result is exact, not sampled. The same method applied
  to 5 cards reproduces the one-by-one enumeration exactly (tested), and for 7 cards
  the published 7-card frequencies (tested).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import combinations
from math import comb, prod

from ..poker import strength3, strength3_royal, strengths5
from ..poker import _T5  # the evaluator's own tables: the same lookups as strength6/7
from ..poker.tables import RANK_KEYS, multisets

__all__ = ["hands3", "histogram5", "histogram_best"]


@lru_cache(maxsize=None)
def hands3() -> tuple[tuple[tuple[int, int, int], int, int], ...]:
    """All 22,100 3-card hands as (cards, strength, strength with the TCP v5 royal)."""
    return tuple(
        (h, strength3(*h), strength3_royal(*h)) for h in combinations(range(52), 3)
    )


@lru_cache(maxsize=None)
def histogram5() -> dict[int, int]:
    """Number of 5-card hands of each strength (sums to 2,598,960)."""
    return dict(Counter(strengths5(combinations(range(52), 5))))


def _ranks_key(ranks: tuple[int, ...]) -> int:
    return sum(RANK_KEYS[r] for r in ranks)


@lru_cache(maxsize=None)
def histogram_best(n: int) -> dict[int, int]:
    """Number of n-card hands (n = 5, 6 or 7) whose best 5 cards have each strength."""
    if n not in (5, 6, 7):
        raise ValueError(f"n must be 5, 6 or 7, not {n!r}")
    def lookup(key: int) -> int:
        return _T5.nonflush(n, key)

    flush = _T5.flush_by_bits
    hist: Counter[int] = Counter()
    for counts in multisets(n):
        key = sum(k * RANK_KEYS[r] for r, k in enumerate(counts) if k)
        hist[lookup(key)] += prod(comb(4, k) for k in counts if k)
    # Hands with k >= 5 cards of one suit (times 4 suits): the other n - k cards come
    # from the other three suits; any choice of those cards is a distinct hand.
    for k in range(5, n + 1):
        rest = n - k
        for suited in combinations(range(13), k):
            bits = sum(1 << r for r in suited)
            base = _ranks_key(suited)
            value = flush[bits]
            if rest == 0:
                hist[lookup(base)] -= 4
                hist[value] += 4
                continue
            # other cards: (rank, suit index among the 3 other suits), distinct cards
            others = [(r, s) for r in range(13) for s in range(3)]
            for extra in combinations(others, rest):
                key = base + sum(RANK_KEYS[r] for r, _ in extra)
                hist[lookup(key)] -= 4
                hist[value] += 4
    return {s: c for s, c in hist.items() if c}
