"""How a round's results co-vary: exact covariances and joint distributions by enumeration.

Seats of one round share cards: the dealer's hand (the Three Card Poker family, Stud) or the
two community cards (Let It Ride); a seat's wagers share its hand. The report's variance
needs, per unit staked, the covariance of two components on one seat and on two seats of
one round; the alarm's sequential boundary needs the distribution of one seat's wagers
together (`cardshoe.report.boundary`). Everything here is an integer count over every deal,
turned into exact fractions:

| game | what | how |
|---|---|---|
| TCP, Megalink TCP, Xtreme | `ante_play`, `pair_plus`, `six_card_bonus`: one seat and two seats; one seat's joint distribution | every dealer hand (up to suits) x every player hand disjoint from it; two players' hands by inclusion-exclusion over the cards they would share |
| Let It Ride | `base` of two seats (they share the two community cards) | every ordered pair of community cards x every player hand, both pull-backs decided as the par sheet decides them; two players by the same inclusion-exclusion |
| Singapore Stud | not computed: `ante_bet` of two seats keeps the correlation-1 bound | five-card hands on both sides, the bet decided on the up card: no small shared part to enumerate around (docs/report.md) |

Inclusion-exclusion: for functions f, g of a 3-card hand, the sum over ordered pairs of
*disjoint* hands is (sum f)(sum g) minus the sum over pairs that share a card, which is
sum_{S != 0} (-1)^(|S|+1) F_S G_S with F_S the sum of f over the hands holding the cards S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from typing import Any

import numpy as np

__all__ = ["Enumerated", "tcp_family", "let_it_ride", "strengths5_colex", "colex5"]

Pair = tuple[str, str]


@dataclass(frozen=True)
class Enumerated:
    """Exact covariances per unit (one seat, two seats of a round) and one seat's joint distribution."""

    same_seat: dict[Pair, Fraction] = field(default_factory=dict)
    cross_seat: dict[Pair, Fraction] = field(default_factory=dict)
    joint_components: tuple[str, ...] = ()
    joint: tuple[tuple[Fraction, ...], ...] = ()
    """Rows (player's net per unit of each joint component..., probability)."""
    means: dict[str, Fraction] = field(default_factory=dict)
    """The player's expected net per unit, as the enumeration found it (checked against the par sheet)."""


# -- five-card strengths by combination index ----------------------------------------------------
_BINOM = np.array([[math.comb(n, k) for k in range(6)] for n in range(53)], dtype=np.int64)


def colex5(cards: Any, valid: Any = None) -> Any:
    """The colexicographic index of 5-card hands (rows of 5 distinct cards, any order); rows
    not `valid` (cards repeated) get index 0."""
    s = np.sort(np.asarray(cards, dtype=np.int64), axis=1)
    out = sum(_BINOM[s[:, i], i + 1] for i in range(5))
    return out if valid is None else np.where(valid, out, 0)


@lru_cache(maxsize=1)
def strengths5_colex() -> Any:
    """Strength (1..7462) of every 5-card hand, indexed by `colex5` (the project's evaluator)."""
    from cardshoe.poker import strengths5

    hands = np.array(list(combinations(range(52), 5)), dtype=np.int64)
    out = np.zeros(len(hands), dtype=np.int16)
    out[colex5(hands)] = strengths5(hands.tolist())
    return out


def _net_by_strength5(table: Any) -> Any:
    """The player's net per unit for every 5-card strength (-1: no paying line)."""
    from cardshoe.parsheet.lines import lines_by_strength5, net_per_unit

    line_of = lines_by_strength5(table)
    nets = []
    for line in table.lines:
        v = net_per_unit(line)
        assert v is not None and v.denominator == 1, line.label
        nets.append(int(v))
    return np.array([nets[i] if i >= 0 else -1 for i in line_of], dtype=np.int64)


# -- inclusion-exclusion over 3-card hands ---------------------------------------------------------
class _Hands3:
    """All 22,100 3-card hands (lexicographic) and the sums over hands sharing cards."""

    def __init__(self) -> None:
        self.combos = list(combinations(range(52), 3))
        self.cards = np.array(self.combos, dtype=np.int64)
        self.mask = np.array([(1 << a) | (1 << b) | (1 << c) for a, b, c in self.combos], dtype=np.int64)
        self.index: dict[tuple[int, ...], int] = {h: i for i, h in enumerate(self.combos)}
        c = self.cards
        self.pair_ix = [c[:, 0] * 52 + c[:, 1], c[:, 0] * 52 + c[:, 2], c[:, 1] * 52 + c[:, 2]]

    def overlap(self, f: Any, g: Any) -> int:
        """Sum over ordered (P1, P2) sharing at least one card of f(P1) g(P2)."""
        cards = self.cards
        fc = sum(np.bincount(cards[:, k], weights=f, minlength=52) for k in range(3))
        gc = sum(np.bincount(cards[:, k], weights=g, minlength=52) for k in range(3))
        fp = sum(np.bincount(self.pair_ix[k], weights=f, minlength=52 * 52) for k in range(3))
        gp = sum(np.bincount(self.pair_ix[k], weights=g, minlength=52 * 52) for k in range(3))
        return int(round(float(np.dot(fc, gc)))) - int(round(float(np.dot(fp, gp)))) + int(round(float(np.dot(f, g))))


@lru_cache(maxsize=1)
def _hands3() -> _Hands3:
    return _Hands3()


def _sums(fs: dict[str, Any], weight: int, acc: dict[tuple[str, str, str], int], h: _Hands3) -> None:
    """Add one dealer (or community) hand's sums: per component, per pair on one seat, per pair on two seats."""
    names = list(fs)
    totals = {n: int(fs[n].sum()) for n in names}
    floats = {n: fs[n].astype(np.float64) for n in names}
    for i, a in enumerate(names):
        acc[("mean", a, a)] = acc.get(("mean", a, a), 0) + weight * totals[a]
        for b in names[i:]:
            acc[("same", a, b)] = acc.get(("same", a, b), 0) + weight * int(np.dot(fs[a], fs[b]))
            cross = totals[a] * totals[b] - h.overlap(floats[a], floats[b])
            acc[("cross", a, b)] = acc.get(("cross", a, b), 0) + weight * cross


def _finish(acc: dict[tuple[str, str, str], int], names: list[str], per_seat: int,
            two_seats: int) -> tuple[dict[Pair, Fraction], dict[Pair, Fraction], dict[str, Fraction]]:
    means = {a: Fraction(acc[("mean", a, a)], per_seat) for a in names}
    same: dict[Pair, Fraction] = {}
    cross: dict[Pair, Fraction] = {}
    for i, a in enumerate(names):
        for b in names[i:]:
            if a != b:
                same[(a, b)] = Fraction(acc[("same", a, b)], per_seat) - means[a] * means[b]
            cross[(a, b)] = Fraction(acc[("cross", a, b)], two_seats) - means[a] * means[b]
    return same, cross, means


# -- the Three Card Poker family ---------------------------------------------------------------------
def tcp_family(game: str) -> Enumerated:
    """Exact covariances of `ante_play` (per ante, the par sheet's optimal play), `pair_plus`
    and, in Xtreme, `six_card_bonus` (per unit), on one seat and on two seats of a round, and
    one seat's joint distribution of them: every dealer hand (up to suits, weighted by its
    class size) against every player hand disjoint from it (22,100 x 18,424 deals); a second
    seat by inclusion-exclusion (18,424 x 15,180 per dealer hand). About a minute of CPU
    (three with the Six Card Bonus's 6-card hands)."""
    from cardshoe.games import dealer_qualifies, get_game
    from cardshoe.parsheet.let_it_ride import canonical_classes
    from cardshoe.parsheet.lines import line_index, net_per_unit
    from cardshoe.parsheet.three_card import DEALER3, DealerHands, hands3_evaluated

    spec = get_game(game)
    h = _hands3()
    hands = hands3_evaluated(spec.three_card_royal)
    n = len(h.combos)
    strength = np.array([x.strength for x in hands], dtype=np.int64)
    qualifies = np.array([dealer_qualifies(spec.dealer_qualifier or "", x) for x in hands], dtype=bool)

    def nets(table_name: str) -> Any:
        table = spec.tables.get(table_name)
        out = np.zeros(n, dtype=np.int64)
        if table is None:
            return out
        for i, hand in enumerate(hands):
            li = line_index(table, hand)
            if li is not None:
                v = net_per_unit(table.lines[li])
                assert v is not None and v.denominator == 1
                out[i] = int(v)
        return out

    bonus = nets("ante_bonus")
    pp = nets("pair_plus")
    pp = np.where(pp == 0, -1, pp)  # no paying line: the stake is lost
    # The optimal decision per player hand, as the par sheet finds it (play iff E[play] >= -1).
    dealer = DealerHands(hands, spec.dealer_qualifier or "")
    play = np.zeros(n, dtype=bool)
    for i, hand in enumerate(hands):
        nq, win, _tie, lose = dealer.outcomes(hand)
        play[i] = nq + 2 * win - 2 * lose + DEALER3 * int(bonus[i]) >= -DEALER3
    six = "six_card_bonus" in spec.tables
    if six:
        net5 = _net_by_strength5(spec.table("six_card_bonus"))
        s5 = strengths5_colex()
    names = ["ante_play", "pair_plus"] + (["six_card_bonus"] if six else [])
    acc: dict[tuple[str, str, str], int] = {}
    joint: dict[tuple[int, ...], int] = {}
    deals = 0
    for rep, weight in canonical_classes(3).items():
        a0, b0, c0 = sorted(rep)
        d = h.index[(a0, b0, c0)]
        valid = (h.mask & h.mask[d]) == 0
        if qualifies[d]:
            base = np.where(strength > strength[d], 2, np.where(strength == strength[d], 0, -2))
        else:
            base = np.ones(n, dtype=np.int64)
        fs = {"ante_play": np.where(play, base + bonus, -1) * valid, "pair_plus": pp * valid}
        if six:
            dc = np.broadcast_to(np.array(rep, dtype=np.int64), (n, 3))
            best = np.zeros(n, dtype=np.int64)
            for k in range(3):  # the best 5 of 6: drop one player card, or one dealer card
                keep = [j for j in range(3) if j != k]
                best = np.maximum(best, s5[colex5(np.hstack([h.cards[:, keep], dc]), valid)] * valid)
                best = np.maximum(best, s5[colex5(np.hstack([h.cards, dc[:, keep]]), valid)] * valid)
            fs["six_card_bonus"] = net5[best] * valid
        _sums(fs, weight, acc, h)
        code = sum((fs[c][valid] + 8) << (10 * k) for k, c in enumerate(names))  # every net is in -2..500
        keys, counts = np.unique(code, return_counts=True)
        for key, count in zip(keys.tolist(), counts.tolist()):
            values = tuple(((key >> (10 * k)) & 1023) - 8 for k in range(len(names)))
            joint[values] = joint.get(values, 0) + weight * count
        deals += weight * int(valid.sum())
    per_seat = deals  # 22,100 x 18,424 (D, P) pairs
    two_seats = per_seat * 15180  # and P2 disjoint from both: C(46, 3)
    same, cross, means = _finish(acc, names, per_seat, two_seats)
    rows = tuple(tuple(Fraction(v) for v in key) + (Fraction(c, per_seat),) for key, c in sorted(joint.items()))
    return Enumerated(same, cross, tuple(names), rows, means)


# -- Let It Ride -------------------------------------------------------------------------------------
def let_it_ride(game: str = "megalink-let-it-ride") -> Enumerated:
    """Exact covariance of two seats' `base` results (1, 2 and $ per unit of one wager, both
    pull-backs as the par sheet decides them: a wager rides iff its expectation given the
    cards seen is above 0), which share the two community cards: every ordered pair of
    community cards (2,652) x every player hand disjoint from it, a second seat by
    inclusion-exclusion (19,600 x 16,215 per community pair). About a minute of CPU."""
    from cardshoe.games import get_game

    spec = get_game(game)
    h = _hands3()
    n = len(h.combos)
    net5 = _net_by_strength5(spec.table("hand"))
    s5 = strengths5_colex()
    pairs = list(combinations(range(52), 2))
    pair_index = {p: i for i, p in enumerate(pairs)}
    # X[P, Q]: the player's net multiple of the final hand, P's 3 cards and the community pair Q.
    x = np.zeros((n, len(pairs)), dtype=np.int16)
    for qi, (a, b) in enumerate(pairs):
        valid = (h.mask & ((1 << a) | (1 << b))) == 0
        five = np.hstack([h.cards, np.broadcast_to(np.array([a, b], dtype=np.int64), (n, 2))])
        x[:, qi] = np.where(valid, net5[s5[colex5(five, valid)]], 0)
    incidence = np.zeros((len(pairs), 52), dtype=np.float64)
    for qi, (a, b) in enumerate(pairs):
        incidence[qi, a] = incidence[qi, b] = 1
    sum4 = (x.astype(np.float64) @ incidence).astype(np.int64)  # sum over the second community card
    keep1 = sum4.sum(axis=1) > 0  # 3.8: E[X | 3 cards] > 0 (ties pulled back)
    keep2 = sum4 > 0  # 3.12: E[X | 3 cards and the first community card] > 0
    acc: dict[tuple[str, str, str], int] = {}
    joint: dict[int, int] = {}
    for c1 in range(52):
        for c2 in range(52):
            if c1 == c2:
                continue
            col = x[:, pair_index[(min(c1, c2), max(c1, c2))]].astype(np.int64)
            f = (1 + keep1 + keep2[:, c1]) * col
            _sums({"base": f}, 1, acc, h)
            valid = (h.mask & ((1 << c1) | (1 << c2))) == 0
            values, counts = np.unique(f[valid], return_counts=True)
            for v, c in zip(values.tolist(), counts.tolist()):
                joint[v] = joint.get(v, 0) + c
    per_seat = 52 * 51 * 19600
    same, cross, means = _finish(acc, ["base"], per_seat, per_seat * 16215)
    rows = tuple((Fraction(v), Fraction(c, per_seat)) for v, c in sorted(joint.items()))
    return Enumerated({}, cross, ("base",), rows, means)
