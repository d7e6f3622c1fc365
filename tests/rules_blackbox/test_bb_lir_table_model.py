"""Whole Let It Ride tables against a model written here from LIR v2 3.8-3.18 and 4.1-4.5.

Seeded random tables with pull-backs, progressive wagers of several credits, a Magic Card that
is sometimes in a hand, sometimes in the community cards, a Lucky Player, and straight / royal
flushes planted through the community cards. Several percentage winners are paid in seat
order from the pool as it stands, the royal after the lower hands (readings 20, MTCP 3.18.2).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from blackbox_helpers import LIR, make_round, seat, settle_dict
from test_bb_oracles import DECK, RANKS, tcls

POOL, RESET = 1_000_000, 500_000
BASE_ODDS = {1: 200, 2: 50, 3: 11, 4: 8, 5: 5, 6: 3, 7: 2}  # 4.1.1; royal 1,000; pair below
PROG_TO = {2: 500, 3: 100, 4: 50}  # 4.2 "to 1"


def base_odds(cards: list[str]) -> int | None:
    score, cls = tcls(cards)
    if score == 1:
        return 1000
    if cls == 8:
        pair = Counter(c[0] for c in cards).most_common(1)[0][0]
        return 1 if RANKS.index(pair) >= RANKS.index("T") else None  # 3.18
    return BASE_ODDS.get(cls)


def expected_table(seats: list[dict[str, Any]], community: list[str], magic: str, lucky: int) -> tuple[dict[tuple[int, str], int], int]:
    paid: dict[tuple[int, str], int] = {}
    sf: list[int] = []
    royal: list[int] = []
    for s in seats:
        n, w, cards = s["seat"], s["wagers"], s["cards"] + community
        odds = base_odds(cards)
        for name in ("one", "two", "dollar"):
            if name != "dollar" and s["decisions"][name] == "withdraw":
                paid[(n, name)] = w[name]  # 3.10 / 3.14
            else:
                paid[(n, name)] = 0 if odds is None else w[name] * (odds + 1)
        if "progressive" in w:
            stake = w["progressive"]
            score, cls = tcls(cards)
            to_one = 0
            if score == 1:
                royal.append(n)
            elif cls == 1:
                sf.append(n)
            elif cls in PROG_TO:
                to_one += PROG_TO[cls]
            if magic in s["cards"] or magic in community:  # 4.3, 4.3.1
                to_one += 5
            if n == lucky:  # 4.4
                to_one += 5
            paid[(n, "progressive")] = stake * (to_one + 1) if to_one else 0
    pool = POOL
    for n in sf:  # seat order, each 10% of the pool as it stands
        amount = pool // 10
        paid[(n, "progressive")] += amount
        pool -= amount
    for n in royal:
        paid[(n, "progressive")] += pool
        pool = RESET
    return paid, pool


def random_table(rng: random.Random) -> tuple[list[dict[str, Any]], list[str], str, int]:
    deck = list(DECK)
    rng.shuffle(deck)
    numbers = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
    hands: dict[int, list[str]] = {}
    if rng.random() < 0.6:
        suit = rng.choice("cdhs")
        lo = rng.randint(0, 8)  # a window of five ranks lo..lo+4 (indexes into RANKS)
        ranks = rng.sample(range(lo, lo + 5), 2)
        community = [RANKS[i] + suit for i in ranks]
        windows = [w for w in range(0, 9) if all(w <= i <= w + 4 for i in ranks)]
        used: set[str] = set(community)
        for n, w in zip(rng.sample(numbers, len(numbers)), rng.sample(windows, len(windows))):
            if rng.random() < 0.2:
                continue
            rest = [RANKS[i] + suit for i in range(w, w + 5) if i not in ranks]
            if used.isdisjoint(rest):
                hands[n] = rest
                used.update(rest)
        for c in used:
            deck.remove(c)
    else:
        community = [deck.pop(), deck.pop()]
    for n in numbers:
        if n not in hands:
            hands[n] = [deck.pop(), deck.pop(), deck.pop()]
    pick = rng.random()
    if pick < 0.3:
        magic = rng.choice(community)
    elif pick < 0.6:
        magic = rng.choice(hands[rng.choice(numbers)])
    else:
        magic = deck.pop()
    lucky = rng.randint(1, 7)
    seats = []
    for n in numbers:
        stake = rng.choice([100, 500, 2500])
        wagers = {"one": stake, "two": stake, "dollar": stake}
        if rng.random() < 0.7:
            wagers["progressive"] = 100 * rng.randint(1, 3)
        decisions = {"one": rng.choice(["ride", "withdraw"]), "two": rng.choice(["ride", "withdraw"])}
        seats.append(seat(n, hands[n], wagers, decisions))
    return seats, community, magic, lucky


def test_lir_random_tables_against_model() -> None:
    rng = random.Random(9052013)
    hits = Counter[str]()
    for _ in range(600):
        seats, community, magic, lucky = random_table(rng)
        jp = {"pool": POOL, "reset": RESET, "magic_card": magic, "lucky_player": lucky}
        limits = {"one": {"min": 100, "max": 10_000}, "progressive": {"min": 100, "max": 300}}
        r = settle_dict(make_round(LIR, seats, community=community, jackpot=jp, limits=limits))
        exp, pool_after = expected_table(seats, community, magic, lucky)
        got = {(s["seat"], w["wager"]): w["paid"] for s in r["seats"] for w in s["wagers"]}
        assert got == exp, (seats, community, magic, lucky)
        assert r["jackpot"]["pool_after"] == pool_after, (seats, community)
        payouts = [m for m in r["jackpot"]["movements"] if m["kind"] == "payout"]
        hits["several percentage winners"] += len(payouts) > 1
        hits["royal"] += pool_after == RESET
    assert hits["several percentage winners"] >= 5 and hits["royal"] >= 10, hits
