"""Simulated shuffles for measuring the alarm: the Gilbert-Shannon-Reeds riffle and a table.

GSR (Gilbert 1955, Reeds 1981; Bayer and Diaconis 1992): cut the deck binomially (each card
goes to the top packet with probability 1/2), then drop cards one at a time from the bottoms
of the packets with probability proportional to the packets' sizes. Seven of them are the
usual bar for a "well-shuffled" deck of 52.
"""

from __future__ import annotations

import random
from typing import Sequence


def gsr_riffle(deck: Sequence[int], rng: random.Random) -> list[int]:
    """One Gilbert-Shannon-Reeds riffle of `deck` (first card = top)."""
    n = len(deck)
    cut = sum(1 for _ in range(n) if rng.random() < 0.5)
    left, right = list(deck[:cut]), list(deck[cut:])
    out: list[int] = []
    i = j = 0
    while i < len(left) or j < len(right):
        a, b = len(left) - i, len(right) - j
        if rng.random() * (a + b) < a:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out


def riffles(deck: Sequence[int], times: int, rng: random.Random) -> list[int]:
    """`deck` after `times` GSR riffles."""
    out = list(deck)
    for _ in range(times):
        out = gsr_riffle(out, rng)
    return out


def cut(deck: Sequence[int], rng: random.Random) -> list[int]:
    """A single cut at a uniform place (what a false shuffle that only cuts leaves)."""
    k = rng.randrange(1, len(deck))
    return list(deck[k:]) + list(deck[:k])
