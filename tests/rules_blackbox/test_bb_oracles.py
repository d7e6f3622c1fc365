"""Exhaustive and sampled checks against independent oracles, not the engine's evaluator.

* Three-card hands: all 22,100 hands through Pair Plus (TCP 4.3), checked hand by hand against a
  small ranking written here from TCP 3.16-3.17, and in total against the textbook counts
  (48 straight flushes, 52 trips, 720 straights, 1,096 flushes, 3,744 pairs).
* Five-card hands: seeded random deals checked against the third-party `treys` evaluator, for
  Singapore Stud (3.10, 4.1.2, 4.2), Let It Ride (4.1, 4.2), Xtreme's Six Card Bonus (4.5) and
  the Megalink progressive (MTCP 4.4, XT 4.4).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

from treys import Card, Evaluator

from blackbox_helpers import LIR, MTCP, SSP, TCP, XT, make_round, seat, settle_dict, wager

RANKS = "23456789TJQKA"
DECK = [r + s for r in RANKS for s in "cdhs"]
EVAL = Evaluator()
JP = {"pool": 1_000_000, "reset": 500_000}


def rank_value(card: str) -> int:
    return RANKS.index(card[0]) + 2


def three_card_key(cards: list[str]) -> tuple[int, tuple[int, ...]]:
    """(category, tie-break) from TCP 3.16-3.17: 5 SF, 4 trips, 3 straight, 2 flush, 1 pair, 0."""
    v = sorted((rank_value(c) for c in cards), reverse=True)
    flush = len({c[1] for c in cards}) == 1
    straight_top = 0
    if v[0] - v[1] == 1 and v[1] - v[2] == 1:
        straight_top = v[0]
    elif v == [14, 3, 2]:
        straight_top = 3  # 3.3.1.2 / 3.17.3: A-2-3 is the lowest straight
    if straight_top and flush:
        return 5, (straight_top,)
    if v[0] == v[2]:
        return 4, (v[0],)
    if straight_top:
        return 3, (straight_top,)
    if flush:
        return 2, tuple(v)
    if v[0] == v[1] or v[1] == v[2]:
        pair = v[1]
        kicker = v[2] if v[0] == v[1] else v[0]
        return 1, (pair, kicker)
    return 0, tuple(v)


PAIR_PLUS_ODDS = {5: 40, 4: 30, 3: 5, 2: 4, 1: 1}  # TCP 4.3


def test_tcp_4_3_every_three_card_hand() -> None:
    counts: Counter[int] = Counter()
    for combo in itertools.combinations(DECK, 3):
        cards = list(combo)
        cat, _ = three_card_key(cards)
        counts[cat] += 1
        dealer = [c for c in ("2c", "7d", "9h", "Js", "4c", "8s") if c not in cards][:3]
        r = settle_dict(make_round(TCP, [seat(1, cards, {"pair_plus": 100})], dealer=dealer))
        w = wager(r, 1, "pair_plus")
        expected = 100 + PAIR_PLUS_ODDS[cat] * 100 if cat in PAIR_PLUS_ODDS else 0
        assert w["paid"] == expected, (cards, w)
    assert counts == Counter({5: 48, 4: 52, 3: 720, 2: 1096, 1: 3744, 0: 16440})


def test_tcp_3_12_and_3_17_random_player_vs_dealer() -> None:
    rng = random.Random(3017)
    for _ in range(3000):
        cards = rng.sample(DECK, 6)
        player, dealer = cards[:3], cards[3:]
        pk, dk = three_card_key(player), three_card_key(dealer)
        # 3.11/3.12 (reading 2): the dealer qualifies with Queen high or any better hand.
        qualifies = dk[0] > 0 or max(rank_value(c) for c in dealer) >= 12
        s = seat(1, player, {"ante": 100, "play": 100}, {"ante": "play"})
        r = settle_dict(make_round(TCP, [s], dealer=dealer))
        if not qualifies:
            exp_ante, exp_play = 200, 100
        elif pk > dk:
            exp_ante, exp_play = 200, 200
        elif pk == dk:
            exp_ante, exp_play = 100, 100
        else:
            exp_ante, exp_play = 0, 0
        assert (wager(r, 1, "ante")["paid"], wager(r, 1, "play")["paid"]) == (exp_ante, exp_play), (player, dealer)
        bonus = {5: 5, 4: 4, 3: 1}.get(pk[0], 0) * 100  # 4.2
        assert sum(w["paid"] for w in r["seats"][0]["wagers"] if w["wager"] == "ante_bonus") == bonus


def tcls(cards: list[str]) -> tuple[int, int]:
    """treys score (lower is better, 1 = royal flush) and rank class (1 SF ... 9 high card)."""
    score = EVAL.evaluate([Card.new(c) for c in cards[:2]], [Card.new(c) for c in cards[2:]])
    return score, EVAL.get_rank_class(score)


def test_ssp_random_deals_against_treys() -> None:
    rng = random.Random(910)
    bet_odds = {1: 50, 2: 20, 3: 7, 4: 5, 5: 4, 6: 3, 7: 2, 8: 1, 9: 1}  # 4.1.2 (royal 250 below)
    prog_for = {2: 400, 3: 80, 4: 40, 5: 20}  # 4.2 "for 1"
    for _ in range(2000):
        cards = rng.sample(DECK, 10)
        player, dealer = cards[:5], cards[5:]
        ps, pc = tcls(player)
        ds, dc = tcls(dealer)
        ranks = {c[0] for c in dealer}
        qualifies = dc <= 8 or {"A", "K"} <= ranks  # 3.10.2-3.10.3 (reading 3)
        s = seat(1, player, {"ante": 100, "bet": 200, "progressive": 100}, {"ante": "bet"})
        r = settle_dict(make_round(SSP, [s], dealer=dealer, jackpot=JP))
        if not qualifies:
            exp = (200, 200)  # 3.10.2.1-3.10.2.2
        elif ps < ds:
            odds = 250 if ps == 1 else bet_odds[pc]
            exp = (200, 200 + odds * 200)
        elif ps == ds:
            exp = (100, 200)
        else:
            exp = (0, 0)
        got = (wager(r, 1, "ante")["paid"], wager(r, 1, "bet")["paid"])
        assert got == exp, (player, dealer, got, exp)
        if ps == 1:
            exp_prog = 1_000_000
        elif pc == 1:
            exp_prog = 100_000
        else:
            exp_prog = prog_for.get(pc, 0) * 100
        assert wager(r, 1, "progressive")["paid"] == exp_prog, (player, exp_prog)


def test_lir_random_deals_against_treys() -> None:
    rng = random.Random(421)
    odds = {1: 200, 2: 50, 3: 11, 4: 8, 5: 5, 6: 3, 7: 2}  # 4.1.1 (royal 1,000 below)
    prog_to = {2: 500, 3: 100, 4: 50}  # 4.2 "to 1"
    for _ in range(2000):
        cards = rng.sample(DECK, 5)
        player, community = cards[:3], cards[3:]
        score, cls = tcls(cards)
        if score == 1:
            n = 1000
        elif cls == 8:
            pair_rank = Counter(c[0] for c in cards).most_common(1)[0][0]
            n = 1 if RANKS.index(pair_rank) >= RANKS.index("T") else -1  # 3.18 tens or better
        else:
            n = odds.get(cls, -1)
        each = 0 if n < 0 else 100 + n * 100
        s = seat(1, player, {"one": 100, "two": 100, "dollar": 100, "progressive": 100}, {"one": "ride", "two": "ride"})
        jp = dict(JP, magic_card=next(c for c in DECK if c not in cards), lucky_player=7)
        r = settle_dict(make_round(LIR, [s], community=community, jackpot=jp))
        for name in ("one", "two", "dollar"):
            assert wager(r, 1, name)["paid"] == each, (cards, name)
        if score == 1:
            exp_prog = 1_000_000
        elif cls == 1:
            exp_prog = 100_000
        else:
            exp_prog = 100 + prog_to[cls] * 100 if cls in prog_to else 0
        assert wager(r, 1, "progressive")["paid"] == exp_prog, cards


def test_xt_six_card_bonus_and_progressive_random_against_treys() -> None:
    rng = random.Random(45)
    six = {1: 100, 2: 50, 3: 20, 4: 15, 5: 10, 6: 7}  # 4.5 (royal 500 below)
    prog_for = {2: 400, 3: 80, 4: 40, 5: 20}  # XT 4.4
    for _ in range(2000):
        cards = rng.sample(DECK, 8)
        player, dealer, community = cards[:3], cards[3:6], cards[6:]
        s6, c6 = tcls(player + dealer)  # best five of six (1.1.11, 3.10.1)
        exp_six = 100 + (500 if s6 == 1 else six.get(c6, -1)) * 100 if (s6 == 1 or c6 in six) else 0
        s5, c5 = tcls(player + community)
        exp_prog = 1_000_000 if s5 == 1 else 100_000 if c5 == 1 else prog_for.get(c5, 0) * 100
        w = {"ante": 100, "play": 100, "six_card_bonus": 100, "progressive": 100}
        r = settle_dict(make_round(XT, [seat(1, player, w, {"ante": "play"})], dealer=dealer, community=community, jackpot=JP, dealing="A"))
        assert wager(r, 1, "six_card_bonus")["paid"] == exp_six, (player, dealer)
        assert wager(r, 1, "progressive")["paid"] == exp_prog, (player, community)


def test_mtcp_progressive_random_against_treys() -> None:
    rng = random.Random(44)
    fixed = {2: 200_000, 3: 20_000, 4: 10_000}  # MTCP 4.4: SGD 2,000 / 200 / 100 per minimum
    for _ in range(2000):
        cards = rng.sample(DECK, 8)
        player, dealer, community = cards[:3], cards[3:6], cards[6:]
        s5, c5 = tcls(player + community)
        exp = 1_000_000 if s5 == 1 else 100_000 if c5 == 1 else fixed.get(c5, 0)
        w = {"ante": 100, "play": 100, "progressive": 100}
        r = settle_dict(make_round(MTCP, [seat(1, player, w, {"ante": "play"})], dealer=dealer, community=community, jackpot=JP))
        assert wager(r, 1, "progressive")["paid"] == exp, (player, community)
