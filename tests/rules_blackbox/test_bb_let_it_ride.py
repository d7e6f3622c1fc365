"""Megalink Let It Ride v2, black box, amounts by hand from 4.1-4.5.

Stakes: "1", "2", "$" 1000 each (3.4 equal), progressive 100 (one credit of SGD 1.00).
The system-selected Magic Card / Lucky Player are set to a card nobody holds and to an empty
seat unless a test is about them.
"""

from __future__ import annotations

from typing import Any

import pytest

from blackbox_helpers import LIR, check, make_round, seat, settle_dict, wager

RIDE = {"one": "ride", "two": "ride"}
BASE = {"one": 1000, "two": 1000, "dollar": 1000}


def jp(magic: str = "2c", lucky: int = 7, pool: int = 1_000_000) -> dict[str, Any]:
    return {"pool": pool, "reset": 500_000, "magic_card": magic, "lucky_player": lucky}


def lseat(cards: list[str], n: int = 1, prog: int | None = 100, decisions: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    w = dict(BASE)
    if prog is not None:
        w["progressive"] = prog
    return seat(n, cards, w, decisions or RIDE, **extra)


@pytest.mark.parametrize(
    ("cards", "each_paid", "prog_paid", "pool_after"),
    [
        # community Th Jh.
        # Royal A-K-Q-J-T hearts: 1,000 to 1 -> 1,001,000 each; progressive 100% of 1,000,000.
        (["Ah", "Kh", "Qh"], 1_001_000, 1_000_000, 500_000),
        # Straight flush 7-J hearts: 200 to 1 -> 201,000; progressive 10% -> 100,000.
        (["9h", "8h", "7h"], 201_000, 100_000, 900_000),
        # Four tens: 50 to 1 -> 51,000; progressive 500 to 1 on 100 -> 50,000 + 100.
        (["Ts", "Tc", "Td"], 51_000, 50_100, 1_000_000),
        # Full house J-J-J-T-T: 11 to 1 -> 12,000; progressive 100 to 1 -> 10,100.
        (["Jc", "Jd", "Ts"], 12_000, 10_100, 1_000_000),
        # Flush of hearts: 8 to 1 -> 9,000; progressive 50 to 1 -> 5,100.
        (["7h", "5h", "2h"], 9_000, 5_100, 1_000_000),
        # Straight 9-K: 5 to 1 -> 6,000; progressive (no straight line in 4.2) -> 0.
        (["Kc", "Qd", "9s"], 6_000, 0, 1_000_000),
        # Three tens: 3 to 1 -> 4,000.
        (["Tc", "Td", "2s"], 4_000, 0, 1_000_000),
        # Two pairs J-J-T-T: 2 to 1 -> 3,000.
        (["Jc", "Tc", "2s"], 3_000, 0, 1_000_000),
        # Pair of tens (the threshold, 3.18): 1 to 1 -> 2,000.
        (["Tc", "4d", "2s"], 2_000, 0, 1_000_000),
        # Pair of jacks: 1 to 1 -> 2,000.
        (["Jc", "4d", "2s"], 2_000, 0, 1_000_000),
        # K-J-T-4-2: no pair -> all three collected (3.3).
        (["Kc", "4d", "2s"], 0, 0, 1_000_000),
    ],
)
def test_lir_4_1_and_4_2_pay_lines(cards: list[str], each_paid: int, prog_paid: int, pool_after: int) -> None:
    r = settle_dict(make_round(LIR, [lseat(cards)], community=["Th", "Jh"], jackpot=jp()))
    for name in ("one", "two", "dollar"):
        check(r, 1, name, 1000, each_paid)
    check(r, 1, "progressive", 100, prog_paid)
    assert r["jackpot"]["pool_after"] == pool_after


@pytest.mark.parametrize(
    ("cards", "community", "each_paid"),
    [
        # 3.18: a pair of 9s is below the threshold -> lost.
        (["9d", "Kc", "2s"], ["9h", "4c"], 0),
        # Reading 6: two pairs of 2s and 3s pay 2 to 1 (above one pair, 3.21) -> 3000.
        (["2d", "3c", "Kh"], ["2h", "3s"], 3_000),
        # Wheel A-2-3-4-5 (Ace low, 3.21.6): straight 5 to 1 -> 6000.
        (["Ac", "2d", "3h"], ["4s", "5c"], 6_000),
        # A-K-Q-J-T mixed suits (Ace high): straight 5 to 1 -> 6000.
        (["Ac", "Kd", "Qh"], ["Js", "Tc"], 6_000),
        # Q-K-A-2-3 is no straight (no wrap-around): Ace high, no pair -> lost.
        (["Ac", "Kd", "Qh"], ["2s", "3c"], 0),
        # Pair of aces: 1 to 1 -> 2000.
        (["Ac", "Ad", "7h"], ["2s", "3c"], 2_000),
    ],
)
def test_lir_3_18_threshold_and_straights(cards: list[str], community: list[str], each_paid: int) -> None:
    r = settle_dict(make_round(LIR, [lseat(cards, prog=None)], community=community))
    for name in ("one", "two", "dollar"):
        check(r, 1, name, 1000, each_paid)


def test_lir_3_8_to_3_16_pull_backs() -> None:
    # Community Qd 7c. Seat 1 withdraws "1" (3.10: returned), lets "2" ride; Q-Q: 1 to 1:
    # one 1000 back, two 2000, $ 2000.
    # Seat 2 withdraws "2" only: one 2000, two 1000 back, $ 2000 (pair of kings).
    # Seat 3 withdraws both with no pair: one and two back, $ (3.16 cannot be withdrawn) lost.
    seats = [
        lseat(["Qh", "5s", "3d"], 1, prog=None, decisions={"one": "withdraw", "two": "ride"}),
        lseat(["Kh", "Ks", "4d"], 2, prog=None, decisions={"one": "ride", "two": "withdraw"}),
        lseat(["2h", "8s", "9d"], 3, prog=None, decisions={"one": "withdraw", "two": "withdraw"}),
    ]
    r = settle_dict(make_round(LIR, seats, community=["Qd", "7c"]))
    check(r, 1, "one", 1000, 1000)
    assert wager(r, 1, "one")["outcome"] == "returned"
    check(r, 1, "two", 1000, 2000)
    check(r, 1, "dollar", 1000, 2000)
    check(r, 2, "one", 1000, 2000)
    check(r, 2, "two", 1000, 1000)
    check(r, 2, "dollar", 1000, 2000)
    check(r, 3, "one", 1000, 1000)
    check(r, 3, "two", 1000, 1000)
    check(r, 3, "dollar", 1000, 0)
    assert r["totals"]["net"] == (0 + 1000 + 1000) + (1000 + 0 + 1000) + (0 + 0 - 1000)


def test_lir_4_3_magic_card_in_players_hand() -> None:
    # Seat 1 holds the Magic Card 5s with a progressive: 5 to 1 on 100 -> 500 + 100 back = 600.
    # Seat 2 holds no magic card: progressive lost (no hand). Seat 3 holds... nobody else.
    seats = [lseat(["5s", "8d", "3h"], 1), lseat(["6c", "9d", "Kh"], 2)]
    r = settle_dict(make_round(LIR, seats, community=["Qd", "7c"], jackpot=jp(magic="5s")))
    check(r, 1, "progressive", 100, 600)
    check(r, 2, "progressive", 100, 0)


def test_lir_4_3_1_magic_card_in_community_pays_every_progressive() -> None:
    # Magic Card 7c is a community card: every progressive pays 5 to 1: seat 1 on 100 -> 600,
    # seat 4 on 300 credits -> 1500 + 300 = 1800; seat 5 has no progressive wager: nothing.
    seats = [lseat(["5s", "8d", "3h"], 1), lseat(["6c", "9d", "Kh"], 4, prog=300), lseat(["6d", "9s", "Ah"], 5, prog=None)]
    r = settle_dict(make_round(LIR, seats, community=["Qd", "7c"], jackpot=jp(magic="7c")))
    check(r, 1, "progressive", 100, 600)
    check(r, 4, "progressive", 300, 1800)
    assert all(w["wager"] != "progressive" for w in r["seats"][2]["wagers"])
    assert r["jackpot"]["pool_after"] == 1_000_000


def test_lir_4_4_lucky_player() -> None:
    # Lucky Player seat 3 with a progressive: 5 to 1 on 100 -> 600. Seat 1 not selected -> 0.
    seats = [lseat(["5s", "8d", "3h"], 1), lseat(["6c", "9d", "Kh"], 3)]
    r = settle_dict(make_round(LIR, seats, community=["Qd", "7c"], jackpot=jp(lucky=3)))
    check(r, 3, "progressive", 100, 600)
    check(r, 1, "progressive", 100, 0)


def test_lir_4_4_lucky_player_without_progressive_wager_gets_nothing() -> None:
    # Seat 3 is the Lucky Player but has no progressive wager: nothing is paid (4.4).
    seats = [lseat(["5s", "8d", "3h"], 1), lseat(["6c", "9d", "Kh"], 3, prog=None)]
    r = settle_dict(make_round(LIR, seats, community=["Qd", "7c"], jackpot=jp(lucky=3)))
    assert all(w["wager"] != "progressive" for w in r["seats"][1]["wagers"])
    check(r, 1, "progressive", 100, 0)


def test_lir_4_2_to_4_5_hand_magic_and_lucky_add_up() -> None:
    # Seat 2: flush of hearts (7-5-2 + T-J hearts) 50 to 1 on 200 -> 10000, holds the Magic
    # Card 5h -> 5 to 1 = 1000, is the Lucky Player -> 1000; stake returned once:
    # paid 10000 + 1000 + 1000 + 200 = 12200, net 12000. Base: flush 8 to 1 -> 9000 each.
    r = settle_dict(make_round(LIR, [lseat(["7h", "5h", "2h"], 2, prog=200)], community=["Th", "Jh"], jackpot=jp(magic="5h", lucky=2)))
    check(r, 2, "progressive", 200, 12_200)
    check(r, 2, "dollar", 1000, 9_000)


def test_lir_4_2_progressive_multiple_credits() -> None:
    # 3.5 "one or more credits": 3 credits (300) on a full house, 100 to 1 -> 30000 + 300.
    r = settle_dict(make_round(LIR, [lseat(["Jc", "Jd", "Ts"], prog=300)], community=["Th", "Jh"], jackpot=jp()))
    check(r, 1, "progressive", 300, 30_300)


def test_lir_withdrawn_wagers_do_not_touch_the_progressive() -> None:
    # Pulling back "1" and "2" (3.10, 3.14) leaves the progressive in action: four tens pay
    # 500 to 1 on 100 -> 50100; $ four of a kind 50 to 1 -> 51000.
    s = lseat(["Ts", "Tc", "Td"], decisions={"one": "withdraw", "two": "withdraw"})
    r = settle_dict(make_round(LIR, [s], community=["Th", "Jh"], jackpot=jp()))
    check(r, 1, "one", 1000, 1000)
    check(r, 1, "two", 1000, 1000)
    check(r, 1, "dollar", 1000, 51_000)
    check(r, 1, "progressive", 100, 50_100)


def test_lir_absent_player_wagers_ride_reading_10() -> None:
    # Reading 10: LIR has no absent-player rule; by 1.1.4 the "1" and "2" stay in play.
    # Pair of queens: 1 to 1 on all three -> 2000 each.
    s = seat(1, ["Qh", "5s", "3d"], dict(BASE), absent=True)
    r = settle_dict(make_round(LIR, [s], community=["Qd", "7c"]))
    for name in ("one", "two", "dollar"):
        check(r, 1, name, 1000, 2000)


def test_lir_two_straight_flushes_paid_in_seat_order_reading_20() -> None:
    # Reading 20: no sharing clause in LIR. Community 9h Th: seat 2 6-7-8 hearts (SF 6-T) is
    # paid 10% of 1,000,000 = 100,000 first; seat 5 J-Q-K hearts (SF 9-K) is paid 10% of the
    # remaining 900,000 = 90,000. Pool 810,000.
    seats = [lseat(["6h", "7h", "8h"], 2), lseat(["Jh", "Qh", "Kh"], 5)]
    r = settle_dict(make_round(LIR, seats, community=["9h", "Th"], jackpot=jp()))
    check(r, 2, "progressive", 100, 100_000)
    check(r, 5, "progressive", 100, 90_000)
    assert r["jackpot"]["pool_after"] == 810_000
