"""The report's exact moments against an enumeration written in the test from the rule document.

`tcp_enum` counts every Three Card Poker deal with its own hand ranking and the pay tables of
TCP v5 (4.1-4.3); the report's moments (`cardshoe.report.theory`, from the par sheets, kept in
theory.json) must equal it exactly (fractions), and its exact cross-seat covariance must sit
where a second, independent computation puts it.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tcp_enum  # noqa: E402

from cardshoe.report import theory  # noqa: E402

GAME = "three-card-poker"


def _player_ante_play() -> tuple[Fraction, Fraction]:
    t = tcp_enum.table()
    n, dealers = t["n"], t["dealers"]
    first = sum((Fraction(int(s), dealers) if p else Fraction(-1)) for s, p in zip(t["s1"], t["play"]))
    second = sum((Fraction(int(s), dealers) if p else Fraction(1)) for s, p in zip(t["s2"], t["play"]))
    return first / n, second / n


def test_ante_play_mean_and_variance_are_exactly_the_enumerations() -> None:
    """The house's win per ante (ante, play, ante bonus; optimal play) has the mean and the
    variance every one of the 407,170,400 deals gives, to the last digit of the fraction."""
    e1, e2 = _player_ante_play()
    got = theory.theory_for(GAME).components["ante_play"]
    assert got.mean == -e1
    assert got.var == e2 - e1 * e1
    assert abs(float(got.mean) - 0.033730) < 1e-6  # the published 3.37% (docs/parsheets.md)


def test_pair_plus_mean_variance_and_same_seat_covariance_are_the_enumerations() -> None:
    t = tcp_enum.table()
    n = t["n"]
    pp = [int(x) for x in t["pp"]]
    mean = Fraction(sum(pp), n)
    var = Fraction(sum(x * x for x in pp), n) - mean * mean
    got = theory.theory_for(GAME)
    assert got.components["pair_plus"].mean == -mean and got.components["pair_plus"].var == var
    # One seat's ante/play and pair plus share the hand: E[AP * PP] over every player hand.
    ap_given_hand = [Fraction(int(s), t["dealers"]) if p else Fraction(-1) for s, p in zip(t["s1"], t["play"])]
    e1, _ = _player_ante_play()
    cov = sum((a * x for a, x in zip(ap_given_hand, pp)), Fraction(0)) / n - e1 * mean
    assert got.same_seat[("ante_play", "pair_plus")] == cov


@pytest.mark.slow
def test_cross_seat_covariance_sits_where_the_dealers_hand_puts_it() -> None:
    """Two seats of a round share the dealer's hand. Without the cards the two players' hands
    take from each other, their covariance would be Var_D(E[AP | D]); the report's exact figure
    (which counts those cards too) must be within a few percent of it, and positive."""
    t = tcp_enum.table()
    n, mask = t["n"], t["mask"]
    means = np.empty(n)
    for d in range(n):
        valid = (mask & mask[d]) == 0
        means[d] = tcp_enum.ante_play_per_hand(d)[valid].mean()
    approx = float(np.mean(means ** 2) - np.mean(means) ** 2)
    exact = float(theory.theory_for(GAME).cross_seat[("ante_play", "ante_play")])
    var = float(theory.theory_for(GAME).components["ante_play"].var)
    assert exact > 0
    assert abs(exact - approx) / approx < 0.08, (exact, approx)
    assert 0.15 < exact / var < 0.25  # correlation of two seats' results: about 0.19


def test_a_pay_table_the_moments_were_not_computed_from_is_not_priced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed pay table without --refresh-theory: the report says the game is not priced."""
    monkeypatch.setattr(theory, "paytable_digest", lambda game: "0" * 64)
    with pytest.raises(theory.TheoryError, match="refresh-theory"):
        theory.theory_for(GAME)


def test_the_installed_moments_are_the_par_sheets_of_the_installed_pay_tables() -> None:
    """theory.json names the digest of each pay table it was computed from."""
    for game, got in theory.load_theory_file().items():
        assert got.digest == theory.paytable_digest(game), game


def test_every_game_is_priced_at_its_par_sheets_edge() -> None:
    """The five games' components at the edges docs/parsheets.md publishes (with their sources)."""
    want = {("three-card-poker", "ante_play"): 0.033730, ("megalink-three-card-poker-xtreme", "six_card_bonus"): 0.134380,
            ("megalink-three-card-poker", "pair_plus"): 0.055747, ("megalink-let-it-ride", "base"): 0.035057,
            ("megalink-singapore-stud-poker", "ante_bet"): 0.051991}
    for (game, comp), edge in want.items():
        got = theory.theory_for(game).components[comp]
        assert abs(float(got.mean) - edge) < 5e-7, (game, comp, float(got.mean))
        assert got.var > 0
