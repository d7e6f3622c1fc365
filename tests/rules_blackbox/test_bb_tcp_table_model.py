"""Whole Three Card Poker tables against a small model written here from TCP v5 3.9-3.15, 4.1-4.4.

Seeded random tables of 1-7 seats mix ante/play, folds, Pair-Plus-only bets, progressive wagers
and players on several seats (blind betting), with royal flushes dealt on purpose so that the
Envy Bonus (3.14), its exclusion (3.15) and the spades royal (4.4, 3.20) interact.
"""

from __future__ import annotations

import random
from typing import Any

from blackbox_helpers import TCP, make_round, seat, settle_dict
from test_bb_oracles import DECK, rank_value, three_card_key

POOL, RESET = 1_000_000, 250_000
MIN_PROG = 100
ROYALS = {s: [f"A{s}", f"K{s}", f"Q{s}"] for s in "cdhs"}


def expected_table(seats: list[dict[str, Any]], dealer: list[str]) -> tuple[dict[tuple[int, str], int], int]:
    """(paid per (seat, wager), pool after) by TCP v5; 'ante_bonus' is keyed like a wager."""
    dk = three_card_key(dealer)
    qualifies = dk[0] > 0 or max(rank_value(c) for c in dealer) >= 12  # 3.11/3.12 (reading 2)
    paid: dict[tuple[int, str], int] = {}
    pool_after = POOL
    envy_from: list[tuple[int, str, int]] = []  # (seat, player, amount per min wager)
    for s in seats:
        n, w, cards = s["seat"], s["wagers"], s["cards"]
        pk = three_card_key(cards)
        royal_suit = next((suit for suit, r in ROYALS.items() if sorted(r) == sorted(cards)), None)
        if "ante" in w:
            if s["decisions"]["ante"] == "fold":
                paid[(n, "ante")] = 0  # 3.9.1
            else:
                a = w["ante"]
                if not qualifies:
                    paid[(n, "ante")], paid[(n, "play")] = 2 * a, a  # 3.11.1-3.11.2
                elif pk > dk:
                    paid[(n, "ante")], paid[(n, "play")] = 2 * a, 2 * a
                elif pk == dk:
                    paid[(n, "ante")], paid[(n, "play")] = a, a
                else:
                    paid[(n, "ante")], paid[(n, "play")] = 0, 0
                paid[(n, "ante_bonus")] = {5: 5, 4: 4, 3: 1}.get(pk[0], 0) * a  # 4.2
            if royal_suit is not None:  # 3.14: any player with an ante wager
                envy_from.append((n, s["player"], 25_000 if royal_suit == "s" else 5_000))
        if "pair_plus" in w:
            odds = {5: 40, 4: 30, 3: 5, 2: 4, 1: 1}.get(pk[0])
            paid[(n, "pair_plus")] = 0 if odds is None else w["pair_plus"] * (odds + 1)
        if "progressive" in w:
            if royal_suit == "s":
                paid[(n, "progressive")] = POOL
                pool_after = RESET
            elif royal_suit is not None:
                paid[(n, "progressive")] = 125_000  # 3.20.2: the SGD 1,250 line only
            else:
                paid[(n, "progressive")] = {5: 17_500, 4: 15_000, 3: 1_500}.get(pk[0], 0)
    for s in seats:
        if "progressive" in s["wagers"]:
            for trig_seat, trig_player, amount in envy_from:
                if trig_seat != s["seat"] and trig_player != s["player"]:
                    paid[(s["seat"], "progressive")] += amount
    return paid, pool_after


def random_table(rng: random.Random) -> tuple[list[dict[str, Any]], list[str]]:
    deck = list(DECK)
    rng.shuffle(deck)
    numbers = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
    hands: dict[int, list[str]] = {}
    for suit in rng.sample("cdhs", rng.randint(0, 2)):  # plant 0-2 royals
        n = rng.choice(numbers)
        if n not in hands:
            hands[n] = ROYALS[suit]
            for c in ROYALS[suit]:
                deck.remove(c)
    for n in numbers:
        if n not in hands:
            hands[n] = [deck.pop(), deck.pop(), deck.pop()]
    dealer = [deck.pop(), deck.pop(), deck.pop()]
    seats = []
    for n in numbers:
        wagers: dict[str, int] = {}
        decisions: dict[str, str] | None = None
        kind = rng.choice(["play", "play", "fold", "pp_only"])
        if kind != "pp_only":
            ante = rng.choice([100, 500, 2500])
            wagers["ante"] = ante
            decisions = {"ante": "fold" if kind == "fold" else "play"}
            if kind == "play":
                wagers["play"] = ante
            if rng.random() < 0.5:
                wagers["pair_plus"] = rng.choice([100, 1000])
        else:
            wagers["pair_plus"] = rng.choice([100, 1000])
        if rng.random() < 0.7:
            wagers["progressive"] = MIN_PROG
        player = rng.choice(["P1", "P2", f"seat-{n}", f"seat-{n}"])
        seats.append(seat(n, hands[n], wagers, decisions, player=player))
    return seats, dealer


def test_tcp_random_tables_against_model() -> None:
    rng = random.Random(20190802)
    for _ in range(600):
        seats, dealer = random_table(rng)
        limits = {"ante": {"min": 100, "max": 10_000}, "pair_plus": {"min": 100, "max": 10_000}, "progressive": {"min": MIN_PROG, "max": MIN_PROG}}
        r = settle_dict(make_round(TCP, seats, dealer=dealer, jackpot={"pool": POOL, "reset": RESET}, limits=limits))
        exp, pool_after = expected_table(seats, dealer)
        got: dict[tuple[int, str], int] = {}
        for s in r["seats"]:
            for w in s["wagers"]:
                got[(s["seat"], w["wager"])] = got.get((s["seat"], w["wager"]), 0) + w["paid"]
        got_nonzero_bonus = {k: v for k, v in got.items() if not (k[1] == "ante_bonus" and v == 0)}
        exp_nonzero_bonus = {k: v for k, v in exp.items() if not (k[1] == "ante_bonus" and v == 0)}
        assert got_nonzero_bonus == exp_nonzero_bonus, (seats, dealer)
        assert r["jackpot"]["pool_after"] == pool_after
