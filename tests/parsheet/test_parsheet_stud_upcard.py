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
