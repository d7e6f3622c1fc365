"""Singapore Stud's exact up-card optimum (cardshoe.parsheet.stud_upcard)."""

from __future__ import annotations

import dataclasses
import random
from itertools import combinations
from math import comb

import pytest

from cardshoe.games import get_game
from cardshoe.parsheet.stud import _bet_nets, qualifying_minimum
from cardshoe.parsheet.stud_upcard import (
    _Folds,
    folds,
    COMPLETIONS,
    dealer_counts,
    dealer_tables,
    player_classes,
    upcard_optimum,
)
from cardshoe.poker import strength5, strengths5

STUD = "megalink-singapore-stud-poker"


def test_player_classes_cover_every_hand_once() -> None:
    classes = list(player_classes(5 * 4))  # up card 7c
    assert sum(w for _, w in classes) == comb(51, 5)
    assert len({frozenset(hand) for hand, _ in classes}) == len(classes)
    assert all(len(set(hand)) == 5 for hand, _ in classes)
    assert all(20 not in hand for hand, _ in classes)


def test_dealer_counts_against_brute_force() -> None:
    qmin = qualifying_minimum("ace_king")
    rng = random.Random(7)
    for up in (0, 48):  # 2c, Ac
        table, singles = dealer_tables(up, qmin)
        rest = [c for c in range(52) if c != up]
        for _ in range(3):
            hand = tuple(rng.sample(rest, 5))
            sp = strength5(*hand)
            left = [c for c in rest if c not in hand]
            nq = less = greater = 0
            for s in strengths5((up, *four) for four in combinations(left, 4)):
                if s < qmin:
                    nq += 1
                elif s < sp:
                    less += 1
                elif s > sp:
                    greater += 1
            assert dealer_counts(hand, sp, table, singles, qmin) == (nq, less, greater)
            assert nq + less + greater <= COMPLETIONS


@pytest.mark.slow
def test_caribbean_stud_perfect_strategy() -> None:
    """About 5 minutes per core: the published Caribbean Stud optimum, exactly.

    Wizard of Odds: total loss 1,041,372,912,372 over 19,933,230,517,200 combinations
    (5.224%) under perfect strategy with a 100 to 1 royal.
    """
    game = get_game(STUD)
    table = game.table("bet")
    lines = tuple(dataclasses.replace(line, odds=100 if line.hand == "ROYAL_FLUSH" else line.odds)
                  for line in table.lines)
    nets, _ = _bet_nets(dataclasses.replace(table, lines=lines))
    result = upcard_optimum(nets, qualifying_minimum("ace_king"), workers=2)
    assert result.deals == 19_933_230_517_200
    assert -result.ev_units == 1_041_372_912_372


def test_folds_match_full_counting() -> None:
    """The shortcuts (non-qualifying count alone below A-K, a lower bound on betting's
    expectation above) fold exactly the situations, with exactly the counts, that full
    counting of every situation folds (issue 15's faster optimum)."""
    game = get_game(STUD)
    nets, _ = _bet_nets(game.table("bet"))
    qmin = qualifying_minimum("ace_king")
    m = 2
    for up in (48, 20):  # Ac, 7c
        classes = list(player_classes(up))
        # every 40th class, and every high-card class near A-K where decisions turn
        sample = [cw for i, cw in enumerate(classes)
                  if i % 40 == 0 or qmin <= strength5(*cw[0]) < qmin + 60]
        got = folds(up, nets, qmin, m, sample)
        table, singles = dealer_tables(up, qmin)
        want = _Folds()
        for hand, weight in sample:
            sp = strength5(*hand)
            nq, less, greater = dealer_counts(hand, sp, table, singles, qmin)
            ev_bet = nq + less * (1 + m * nets[sp]) - greater * (1 + m)
            w = 4 * weight
            want.situations += w
            if ev_bet >= -COMPLETIONS:
                continue
            want.folded_by_strength[sp] = want.folded_by_strength.get(sp, 0) + w
            want.deals += w * COMPLETIONS
            want.nq += w * nq
            want.tie += w * (COMPLETIONS - nq - less - greater)
            want.lose += w * greater
            if less:
                want.wins_by_strength[sp] = want.wins_by_strength.get(sp, 0) + w * less
            want.ev_bet += w * ev_bet
        got.wins_by_strength = {s: n for s, n in got.wins_by_strength.items() if n}
        assert got == want
        assert got.deals and len(sample) > 10000


@pytest.mark.slow
def test_default_sheet_is_the_upcard_optimum() -> None:
    """About a minute of CPU: `cardshoe parsheet megalink-singapore-stud-poker`'s ante/bet
    is the exact up-card optimum (total loss 1,036,344,990,372 ante units, 5.1991%), its
    lines sum to 1, and the hand-alone strategy it quotes is the --rank-only sheet's."""
    from fractions import Fraction

    from cardshoe.parsheet import compute

    deals = 19_933_230_517_200
    sheet = compute(STUD, workers=2)
    wager = sheet.wagers[0]
    assert wager.wager == "ante+bet" and "up card" in wager.edge_basis
    assert wager.house_edge == Fraction(1_036_344_990_372, deals)
    assert sum(line.probability for line in wager.lines) == 1
    fold = next(line for line in wager.lines if line.label.startswith("Fold"))
    bet = dict(wager.figures)["probability of betting"]
    assert fold.probability == 1 - bet
    quick = compute(STUD, rank_only=True).wagers[0]
    assert dict(wager.figures)["house edge, best strategy on the player's hand alone"] == quick.house_edge
    assert quick.house_edge is not None and wager.house_edge < quick.house_edge
