"""Three Card Poker by exhaustive enumeration, written from the rule document alone (TCP v5),
independently of cardshoe's evaluator, par sheets and report: the expectation the report's
figures are checked against.

Hand ranks (3.16, 3.17): straight flush (a royal, A-K-Q suited, is the top one) > three of a
kind > straight > flush > pair > high card; an ace is high, or low in A-2-3 only, the lowest
straight (3.3.1.2, 3.17.3). The dealer qualifies with Queen high or better (3.11). Pay tables:
ante and play 1 to 1 (4.1), ante bonus straight flush 5, three of a kind 4, straight 1 to 1
(4.2, paid whatever the dealer holds, not after a fold), pair plus straight flush 40, three of
a kind 30, straight 5, flush 4, pair 1 to 1 (4.3). Cards are 0..51, rank = card // 4 (0 = two),
suit = card % 4 (cardshoe's coding, so the simulated shoe's cards can be named).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from typing import Any

import numpy as np

SF, TRIPS, STRAIGHT, FLUSH, PAIR, HIGH = 5, 4, 3, 2, 1, 0
ANTE_BONUS = {SF: 5, TRIPS: 4, STRAIGHT: 1}
PAIR_PLUS = {SF: 40, TRIPS: 30, STRAIGHT: 5, FLUSH: 4, PAIR: 1}
QUEEN = 10  # rank index of a queen (two = 0)


def classify(cards: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """(category, tie-break ranks high first)."""
    ranks = sorted((c // 4 for c in cards), reverse=True)
    suited = len({c % 4 for c in cards}) == 1
    distinct = len(set(ranks)) == 3
    run = None
    if distinct and ranks[0] - ranks[2] == 2:
        run = ranks[0]
    elif ranks == [12, 1, 0]:  # A-3-2: the ace low, the lowest straight
        run = 1
    if run is not None:
        return (SF if suited else STRAIGHT), (run,)
    if ranks[0] == ranks[2]:
        return TRIPS, (ranks[0],)
    if suited:
        return FLUSH, tuple(ranks)
    if not distinct:
        pair = ranks[1]
        kicker = ranks[0] if ranks[0] != pair else ranks[2]
        return PAIR, (pair, kicker)
    return HIGH, tuple(ranks)


@lru_cache(maxsize=None)
def table() -> dict[str, Any]:
    """Every 3-card hand: mask, dense strength, category, pays; the optimal decision and the
    house's win per ante on ante/play against every disjoint dealer hand."""
    hands = list(combinations(range(52), 3))
    keys = [classify(h) for h in hands]
    order = sorted(set(keys))
    rank_of = {k: i for i, k in enumerate(order)}
    strength = np.array([rank_of[k] for k in keys], dtype=np.int64)
    cat = np.array([k[0] for k in keys], dtype=np.int64)
    qualifies = np.array([k[0] > HIGH or k[1][0] >= QUEEN for k in keys], dtype=bool)
    mask = np.array([(1 << a) | (1 << b) | (1 << c) for a, b, c in hands], dtype=np.int64)
    bonus = np.array([ANTE_BONUS.get(c, 0) for c in cat], dtype=np.int64)
    pp = np.array([PAIR_PLUS.get(c, -1) for c in cat], dtype=np.int64)
    n = len(hands)
    # Per player hand: the sum over disjoint dealer hands of the player's net on ante+play
    # if he plays (per ante), and of its square; folding is -1 always.
    s1 = np.zeros(n, dtype=np.int64)
    s2 = np.zeros(n, dtype=np.int64)
    sneg = np.zeros(n, dtype=np.int64)  # the player's losses only (a dealer returning every losing hand)
    for i in range(n):
        d = (mask & mask[i]) == 0
        ds, dq = strength[d], qualifies[d]
        net = np.where(~dq, 1, np.where(strength[i] > ds, 2, np.where(strength[i] == ds, 0, -2))) + bonus[i]
        s1[i] = int(net.sum())
        s2[i] = int((net * net).sum())
        sneg[i] = int(np.minimum(net, 0).sum())
    dealers = 18424
    play = s1 >= -dealers  # play when E[play] >= E[fold] = -1 (ties: play)
    return {"hands": hands, "index": {h: i for i, h in enumerate(hands)}, "strength": strength, "cat": cat,
            "qualifies": qualifies, "mask": mask, "bonus": bonus, "pp": pp, "play": play, "s1": s1, "s2": s2, "sneg": sneg,
            "n": n, "dealers": dealers}


def ante_play_per_hand(dealer_index: int) -> np.ndarray:
    """The player's net per ante on ante/play for every player hand against one dealer hand
    (optimal decisions; 0 for hands sharing a card with it: mask them)."""
    t = table()
    d = dealer_index
    s = t["strength"]
    if t["qualifies"][d]:
        base = np.where(s > s[d], 2, np.where(s == s[d], 0, -2))
    else:
        base = np.ones(t["n"], dtype=np.int64)
    return np.where(t["play"], base + t["bonus"], -1)
