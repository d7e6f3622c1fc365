"""Whole Megalink Three Card Poker Xtreme tables against a model written here from XT 3.9-3.18
and 4.1-4.5: folds keeping Pair Plus / Six Card Bonus / progressive (3.9.1-3.9.1.2), the
multiplier (3.5.4), sharing of straight flushes (3.18.1) and the royal paid last (3.18.2).
Straight and royal flushes are planted through the community cards. Three-card hands are
ranked by test_bb_oracles.three_card_key, five-card hands by `treys`."""

from __future__ import annotations

import random
from typing import Any

from blackbox_helpers import XT, make_round, seat, settle_dict
from test_bb_oracles import DECK, RANKS, rank_value, tcls, three_card_key

POOL, RESET = 1_000_000, 500_000
PROG_FOR = {2: 400, 3: 80, 4: 40, 5: 20}  # 4.4 "for 1"
SIX_TO = {1: 100, 2: 50, 3: 20, 4: 15, 5: 10, 6: 7}  # 4.5; royal 500


def expected_table(seats: list[dict[str, Any]], dealer: list[str], community: list[str]) -> tuple[dict[tuple[int, str], int], int]:
    dk = three_card_key(dealer)
    qualifies = dk[0] > 0 or max(rank_value(c) for c in dealer) >= 12
    paid: dict[tuple[int, str], int] = {}
    sf: list[int] = []
    royal: list[int] = []
    for s in seats:
        n, w, cards = s["seat"], s["wagers"], s["cards"]
        pk = three_card_key(cards)
        if "ante" in w:
            a = w["ante"]
            if s["decisions"]["ante"] == "fold":
                paid[(n, "ante")] = 0
            else:
                if not qualifies:
                    paid[(n, "ante")], paid[(n, "play")] = 2 * a, a
                elif pk > dk:
                    paid[(n, "ante")], paid[(n, "play")] = 2 * a, 2 * a
                elif pk == dk:
                    paid[(n, "ante")], paid[(n, "play")] = a, a
                else:
                    paid[(n, "ante")], paid[(n, "play")] = 0, 0
                paid[(n, "ante_bonus")] = {5: 5, 4: 4, 3: 1}.get(pk[0], 0) * a
        if "pair_plus" in w:
            odds = {5: 40, 4: 30, 3: 5, 2: 4, 1: 1}.get(pk[0])
            paid[(n, "pair_plus")] = 0 if odds is None else w["pair_plus"] * (odds + 1)
        if "six_card_bonus" in w:
            score, cls = tcls(cards + dealer)
            odds = 500 if score == 1 else SIX_TO.get(cls)
            paid[(n, "six_card_bonus")] = 0 if odds is None else w["six_card_bonus"] * (odds + 1)
        if "progressive" in w:
            score, cls = tcls(cards + community)
            if score == 1:
                royal.append(n)
            elif cls == 1:
                sf.append(n)
            else:
                paid[(n, "progressive")] = PROG_FOR.get(cls, 0) * w["progressive"]
    pool = POOL
    if sf:
        k = len(sf)
        total = pool // 10 + (k - 1) * (RESET // 10)
        for n in sf:
            paid[(n, "progressive")] = total // k
        pool = pool - pool // 10 + (total - k * (total // k))
    for n in royal:  # two royals cannot share two community cards
        paid[(n, "progressive")] = pool
        pool = RESET
    return paid, pool


def random_table(rng: random.Random) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    deck = list(DECK)
    rng.shuffle(deck)
    numbers = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
    hands: dict[int, list[str]] = {}
    suit = rng.choice("cdhs")
    lo = rng.randint(0, 8)
    ranks = sorted(rng.sample(range(lo, lo + 5), 2)) if rng.random() < 0.6 else []
    community = [RANKS[i] + suit for i in ranks]
    used: set[str] = set(community)
    if ranks:
        windows = [w for w in range(0, 9) if all(w <= i <= w + 4 for i in ranks)]
        for n, w in zip(rng.sample(numbers, len(numbers)), rng.sample(windows, len(windows))):
            rest = [RANKS[i] + suit for i in range(w, w + 5) if i not in ranks]
            if used.isdisjoint(rest) and rng.random() < 0.8:
                hands[n] = rest
                used.update(rest)
    for c in used:
        deck.remove(c)
    if not community:
        community = [deck.pop(), deck.pop()]
    for n in numbers:
        if n not in hands:
            hands[n] = [deck.pop(), deck.pop(), deck.pop()]
    dealer = [deck.pop(), deck.pop(), deck.pop()]
    seats = []
    for n in numbers:
        wagers: dict[str, int] = {}
        decisions = None
        kind = rng.choice(["play", "play", "fold", "side_only"])
        if kind != "side_only":
            wagers["ante"] = rng.choice([100, 1000])
            decisions = {"ante": "fold" if kind == "fold" else "play"}
            if kind == "play":
                wagers["play"] = wagers["ante"]
        if kind == "side_only" or rng.random() < 0.5:
            wagers["pair_plus"] = rng.choice([100, 500])
        if kind == "side_only" or rng.random() < 0.5:
            wagers["six_card_bonus"] = rng.choice([100, 500])
        if rng.random() < 0.8:
            wagers["progressive"] = 100 * rng.randint(1, 5)
        seats.append(seat(n, hands[n], wagers, decisions))
    return seats, dealer, community


def test_xt_random_tables_against_model() -> None:
    rng = random.Random(22052023)
    shared = royals = 0
    for i in range(600):
        seats, dealer, community = random_table(rng)
        limits = {w: {"min": 100, "max": 10_000} for w in ("ante", "pair_plus", "six_card_bonus")}
        limits["progressive"] = {"min": 100, "max": 500}
        r = settle_dict(
            make_round(XT, seats, dealer=dealer, community=community, jackpot={"pool": POOL, "reset": RESET}, limits=limits, dealing="ABC"[i % 3])
        )
        exp, pool_after = expected_table(seats, dealer, community)
        got: dict[tuple[int, str], int] = {(s["seat"], w["wager"]): w["paid"] for s in r["seats"] for w in s["wagers"]}
        got = {k: v for k, v in got.items() if not (k[1] == "ante_bonus" and v == 0)}
        exp = {k: v for k, v in exp.items() if not (k[1] == "ante_bonus" and v == 0)}
        assert got == exp, (seats, dealer, community)
        assert r["jackpot"]["pool_after"] == pool_after
        shared += len([m for m in r["jackpot"]["movements"] if m["kind"] == "payout"]) > 1
        royals += pool_after == RESET
    assert shared >= 5 and royals >= 10, (shared, royals)
