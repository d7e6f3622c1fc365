"""The exact covariances of Six Card Bonus and Let It Ride (`cardshoe.report.covariance`),
checked against what does not come from that module.

* The inclusion-exclusion that turns sums over every pair of hands into sums over pairs of
  *disjoint* hands (two seats cannot hold one card) is checked against a brute-force count.
* One seat's joint distribution of its wagers, which the enumeration produces, has as its
  marginals the par sheets' own distributions (`cardshoe.parsheet`, a separate computation,
  tested against the published house edges) and, for pair plus, the test's own count from the
  rule document (`tcp_enum`, TCP v5 4.3).
* Its same-seat covariances are the stored ones, and their signs are the ones the cards force.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tcp_enum  # noqa: E402

from cardshoe.report import covariance  # noqa: E402
from cardshoe.report.theory import theory_for  # noqa: E402

XTREME = "megalink-three-card-poker-xtreme"


def test_inclusion_exclusion_sums_exactly_the_pairs_of_hands_that_share_a_card() -> None:
    hands = list(combinations(range(52), 3))
    rng = np.random.default_rng(3)
    f = np.zeros(len(hands))
    g = np.zeros(len(hands))
    fi = rng.choice(len(hands), 1500, replace=False)
    gi = rng.choice(len(hands), 1500, replace=False)
    f[fi] = rng.integers(-5, 40, len(fi))
    g[gi] = rng.integers(-5, 40, len(gi))
    masks = np.array([(1 << a) | (1 << b) | (1 << c) for a, b, c in hands], dtype=np.int64)
    brute = 0
    for i in fi:  # every ordered pair (P1, P2) sharing at least one card, P1 = P2 included
        share = (masks[gi] & masks[i]) != 0
        brute += int(f[i]) * int(g[gi][share].sum())
    assert covariance._hands3().overlap(f, g) == brute


def _marginals(components: tuple[str, ...], rows: tuple[tuple[Fraction, ...], ...]) -> dict[str, dict[Fraction, Fraction]]:
    out: dict[str, dict[Fraction, Fraction]] = {c: defaultdict(Fraction) for c in components}
    for row in rows:
        for k, c in enumerate(components):
            out[c][row[k]] += row[-1]
    return {c: {v: p for v, p in m.items() if p} for c, m in out.items()}


@pytest.mark.parametrize("game", ["three-card-poker", XTREME])
def test_one_seats_joint_distribution_has_the_par_sheets_marginals(game: str) -> None:
    th = theory_for(game)
    expect = {"three-card-poker": ("ante_play", "pair_plus"), XTREME: ("ante_play", "pair_plus", "six_card_bonus")}
    assert th.joint_components == expect[game]
    assert sum(row[-1] for row in th.joint) == 1
    got = _marginals(th.joint_components, th.joint)
    for comp in th.joint_components:
        sheet = {v: p for v, p in th.atoms[comp] if p}
        assert got[comp] == sheet, comp
    if game == "three-card-poker":  # and pair plus as the rule document counts it
        counts = Counter(int(x) for x in tcp_enum.table()["pp"])
        total = sum(counts.values())
        assert got["pair_plus"] == {Fraction(v): Fraction(c, total) for v, c in counts.items()}


def test_the_same_seat_covariances_are_the_joint_distributions_and_have_the_cards_signs() -> None:
    th = theory_for(XTREME)
    comps = th.joint_components
    mean = {c: sum(row[k] * row[-1] for row in th.joint) for k, c in enumerate(comps)}
    for (a, b), cov in th.same_seat.items():
        ia, ib = comps.index(a), comps.index(b)
        # The house's win is minus the player's: a covariance is the same either way.
        assert sum(row[ia] * row[ib] * row[-1] for row in th.joint) - mean[a] * mean[b] == cov, (a, b)
    # A seat's strong hand wins its ante/play, its pair plus and (with the dealer's cards) its
    # six card bonus: positive. The dealer's strong hand beats another seat's ante/play and
    # lifts this seat's six card bonus (it uses the dealer's three cards): negative.
    assert th.same_seat[("ante_play", "pair_plus")] > 0 and th.same_seat[("ante_play", "six_card_bonus")] > 0
    assert th.cross_seat[("ante_play", "six_card_bonus")] < 0
    assert th.cross_seat[("six_card_bonus", "six_card_bonus")] > 0  # two seats share the dealer's cards
    # Exact where the merged version used correlation 1: far narrower.
    for a, b in (("six_card_bonus", "six_card_bonus"), ("ante_play", "six_card_bonus")):
        rho = float(th.cross_seat[(a, b)]) / float(th.components[a].var * th.components[b].var) ** 0.5
        assert abs(rho) < 0.1, (a, b, rho)


def test_stud_keeps_the_bound_and_says_so() -> None:
    th = theory_for("megalink-singapore-stud-poker")
    assert ("ante_bet", "ante_bet") not in th.cross_seat
    assert any("Cauchy-Schwarz" in n for n in th.notes)


@pytest.mark.slow
def test_let_it_ride_two_seats_enumeration_gives_the_par_sheets_distribution() -> None:
    """The enumeration behind Let It Ride's two-seat covariance (about a minute of CPU) decides
    both pull-backs as the par sheet does: one seat's result has exactly the par sheet's
    distribution, and the covariance stored is the one it computes."""
    th = theory_for("megalink-let-it-ride")
    got = covariance.let_it_ride("megalink-let-it-ride")
    assert {v: p for v, p in got.joint if p} == {v: p for v, p in th.atoms["base"] if p}
    assert got.cross_seat[("base", "base")] == th.cross_seat[("base", "base")]
    rho = float(th.cross_seat[("base", "base")] / th.components["base"].var)
    assert 0 < rho < 0.05  # two seats share two of five cards; the variance is the rare big hands'
