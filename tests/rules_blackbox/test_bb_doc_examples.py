"""The five examples of docs/round-format.md, re-checked with amounts worked out here from the
rules (not copied from the prose under each example)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from blackbox_helpers import check, settle_dict

DOC = Path(__file__).resolve().parents[2] / "docs" / "round-format.md"


def example(game: str) -> dict[str, Any]:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"<!-- example: " + re.escape(game) + r" -->\s*```json\n(.*?)```", text, re.S)
    assert m, f"no example for {game} in {DOC}"
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def test_example_three_card_poker() -> None:
    r = settle_dict(example("three-card-poker"))
    # Seat 1 A-K-Q spades vs K-7-2 (qualifies, 3.12): ante/play 1 to 1 on 5000; ante bonus
    # 5 to 1 = 25000 (4.2); pair plus 40 to 1 on 1000 = 40000 (4.3); progressive 100% of
    # 10,000,000 (4.4), stake kept.
    check(r, 1, "ante", 5000, 10_000)
    check(r, 1, "play", 5000, 10_000)
    check(r, 1, "pair_plus", 1000, 41_000)
    check(r, 1, "progressive", 500, 10_000_000)
    # Envy SGD 250 = 25000 (3.14) to seats 3 (folded), 4 (pair plus only) and 6.
    for n in (3, 4, 6):
        check(r, n, "progressive", 500, 25_000)
    check(r, 3, "ante", 2500, 0)
    check(r, 4, "pair_plus", 1000, 2000)  # A-A-4 pair 1 to 1
    check(r, 6, "ante", 2500, 0)  # Q-J-5 loses to K-7-2
    assert r["jackpot"]["pool_after"] == 2_500_000


def test_example_megalink_three_card_poker() -> None:
    r = settle_dict(example("megalink-three-card-poker"))
    # Seat 2: 7-8-9 hearts + T-J hearts = SF: 10% of 5,000,000 = 500,000; pair plus 40 to 1.
    check(r, 2, "progressive", 500, 500_000)
    check(r, 2, "pair_plus", 1000, 41_000)
    # Seat 5: K-K-4 beats A-6-3; K-K-4-T-J pays no progressive.
    check(r, 5, "ante", 2500, 5000)
    check(r, 5, "progressive", 500, 0)
    # Seat 7: J-J-J pair plus 30 to 1 = 30000; with Jh four jacks SGD 2,000 = 200000.
    check(r, 7, "pair_plus", 1000, 31_000)
    check(r, 7, "progressive", 500, 200_000)
    assert r["jackpot"]["pool_after"] == 4_500_000


def test_example_megalink_three_card_poker_xtreme() -> None:
    r = settle_dict(example("megalink-three-card-poker-xtreme"))
    # Two SFs (seats 1, 4) share (10% of 2,000,000 + 10% of 1,000,000) / 2 = 150,000.
    check(r, 1, "progressive", 300, 150_000)
    check(r, 4, "progressive", 100, 150_000)
    # Seat 1 six card 4-8 spades SF 100 to 1 on 500; seat 6 folded 2-6 straight 10 to 1.
    check(r, 1, "six_card_bonus", 500, 50_500)
    check(r, 6, "six_card_bonus", 500, 5_500)
    # Seat 7 A-2-3-9-T spades flush 40 for 1 on 2x (200) = 8000.
    check(r, 7, "progressive", 200, 8_000)
    assert r["jackpot"]["pool_after"] == 1_800_000


def test_example_megalink_let_it_ride() -> None:
    r = settle_dict(example("megalink-let-it-ride"))
    for name in ("one", "two", "dollar"):
        check(r, 1, name, 2500, 2500 + 3 * 2500)  # Q-Q-Q three of a kind 3 to 1
    check(r, 1, "progressive", 100, 600)  # Magic Card 7c in the community, 5 to 1
    check(r, 3, "dollar", 2500, 0)
    check(r, 5, "one", 2500, 5000)  # pair of tens 1 to 1
    check(r, 5, "two", 2500, 2500)  # withdrawn
    check(r, 5, "progressive", 200, 200 + 1000 + 1000)  # Magic Card + Lucky Player


@pytest.mark.parametrize("n, ante, bet", [(1, 5000, 5000 + 7 * 5000), (4, 10_000, 20_000), (6, 2500, 5000)])
def test_example_megalink_singapore_stud_poker(n: int, ante: int, bet: int) -> None:
    r = settle_dict(example("megalink-singapore-stud-poker"))
    # Seat 1 full house 7 to 1; seat 4 wins on the third card 1 to 1; seat 6 stand-off.
    stake = {1: 2500, 4: 5000, 6: 2500}[n]
    check(r, n, "ante", stake, ante)
    check(r, n, "bet", 2 * stake, bet)
    if n == 1:
        check(r, 1, "progressive", 100, 8000)  # 80 for 1
