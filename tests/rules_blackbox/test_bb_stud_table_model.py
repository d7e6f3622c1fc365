"""Whole Singapore Stud tables against a model written here from SSP v9 3.9-3.15 and 4.1-4.2.

Seeded random tables with straight flushes and royal flushes dealt on purpose, folds, and
progressive wagers of 1-5 times the minimum, so that sharing (3.15.1, 3.15.2), the royal paid
after lower hands (3.15.3) and the multiplier (3.5.3.1) meet. Hands are ranked by `treys`.
"""

from __future__ import annotations

import random
from typing import Any

from blackbox_helpers import SSP, make_round, seat, settle_dict
from test_bb_oracles import DECK, RANKS, tcls

POOL, RESET = 1_000_000, 500_000
BET_ODDS = {1: 50, 2: 20, 3: 7, 4: 5, 5: 4, 6: 3, 7: 2, 8: 1, 9: 1}  # 4.1.2; royal 250
PROG_FOR = {2: 400, 3: 80, 4: 40, 5: 20}  # 4.2 "for 1", times the stake (3.5.3.1)


def expected_table(seats: list[dict[str, Any]], dealer: list[str]) -> tuple[dict[tuple[int, str], int], int]:
    ds, dc = tcls(dealer)
    qualifies = dc <= 8 or {"A", "K"} <= {c[0] for c in dealer}
    paid: dict[tuple[int, str], int] = {}
    sf_winners: list[int] = []
    royal_winners: list[int] = []
    for s in seats:
        n, w = s["seat"], s["wagers"]
        ps, pc = tcls(s["cards"])
        a = w["ante"]
        if s["decisions"]["ante"] == "fold":
            paid[(n, "ante")] = 0
        elif not qualifies:
            paid[(n, "ante")], paid[(n, "bet")] = 2 * a, 2 * a
        elif ps < ds:
            odds = 250 if ps == 1 else BET_ODDS[pc]
            paid[(n, "ante")], paid[(n, "bet")] = 2 * a, 2 * a * (odds + 1)
        elif ps == ds:
            paid[(n, "ante")], paid[(n, "bet")] = a, 2 * a
        else:
            paid[(n, "ante")], paid[(n, "bet")] = 0, 0
        if "progressive" in w:
            if ps == 1:
                royal_winners.append(n)
            elif pc == 1:
                sf_winners.append(n)
            else:
                paid[(n, "progressive")] = PROG_FOR.get(pc, 0) * w["progressive"]
    pool = POOL
    if sf_winners:  # 3.15.2 (reading 18): 10% of the pool + 10% of a reset per extra winner
        k = len(sf_winners)
        total = pool // 10 + (k - 1) * (RESET // 10)
        share = total // k
        for n in sf_winners:
            paid[(n, "progressive")] = share
        pool = pool - pool // 10 + (total - k * share)
    if royal_winners:  # 3.15.3 then 3.15.1 (reading 19)
        m = len(royal_winners)
        total = pool + (m - 1) * RESET
        share = total // m
        for n in royal_winners:
            paid[(n, "progressive")] = share
        pool = RESET + (total - m * share)
    return paid, pool


def straight_flush(suit: str, top: int) -> list[str]:
    """Five cards of the suit ending at RANKS[top] (top 3 = 5-high wheel)."""
    if top == 3:
        return ["A" + suit] + [RANKS[i] + suit for i in range(0, 4)]
    return [RANKS[i] + suit for i in range(top - 4, top + 1)]


def random_table(rng: random.Random) -> tuple[list[dict[str, Any]], list[str]]:
    deck = list(DECK)
    rng.shuffle(deck)
    numbers = sorted(rng.sample(range(1, 8), rng.randint(2, 7)))
    hands: dict[int, list[str]] = {}
    planted = rng.sample(numbers, min(len(numbers), rng.randint(0, 4)))
    for n, suit in zip(planted, rng.sample("cdhs", len(planted))):
        top = 12 if rng.random() < 0.3 else rng.randint(3, 11)  # 12 = Ace: a royal
        hands[n] = straight_flush(suit, top)
        for c in hands[n]:
            deck.remove(c)
    for n in numbers:
        if n not in hands:
            hands[n] = [deck.pop() for _ in range(5)]
    dealer = [deck.pop() for _ in range(5)]
    seats = []
    for n in numbers:
        ante = rng.choice([100, 1000])
        fold = rng.random() < 0.25
        wagers = {"ante": ante} if fold else {"ante": ante, "bet": 2 * ante}
        if rng.random() < 0.8:
            wagers["progressive"] = 100 * rng.randint(1, 5)
        seats.append(seat(n, hands[n], wagers, {"ante": "fold" if fold else "bet"}))
    return seats, dealer


def test_ssp_random_tables_against_model() -> None:
    rng = random.Random(4072023)
    sharing_rounds = 0
    for _ in range(600):
        seats, dealer = random_table(rng)
        r = settle_dict(make_round(SSP, seats, dealer=dealer, jackpot={"pool": POOL, "reset": RESET}))
        exp, pool_after = expected_table(seats, dealer)
        got = {(s["seat"], w["wager"]): w["paid"] for s in r["seats"] for w in s["wagers"]}
        assert got == exp, (seats, dealer)
        assert r["jackpot"]["pool_after"] == pool_after, (seats, dealer)
        movements = r["jackpot"]["movements"]
        sharing_rounds += len([m for m in movements if m["kind"] == "payout"]) > 1
    assert sharing_rounds > 50  # the deals do exercise 3.15
