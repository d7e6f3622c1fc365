"""Megalink Singapore Stud Poker v9, black box, amounts by hand from 4.1-4.2.

Stakes: ante 1000, bet 2000 (1.1.2 twice the ante), progressive 100 (min) unless stated.
Dealer A-K-7-4-2 is the lowest qualifying hand (3.10.3, "at least an Ace and a King").
"""

from __future__ import annotations

from typing import Any

import pytest

from blackbox_helpers import SSP, check, make_round, seat, settle_dict, wager

JP = {"pool": 1_000_000, "reset": 500_000}
BET = {"ante": "bet"}
FOLD = {"ante": "fold"}
AK_DEALER = ["As", "Kd", "7h", "4c", "2s"]


def sseat(cards: list[str], n: int = 1, prog: int | None = 100, **extra: Any) -> dict[str, Any]:
    w = {"ante": 1000, "bet": 2000}
    if prog is not None:
        w["progressive"] = prog
    return seat(n, cards, w, BET, **extra)


def one(cards: list[str], dealer: list[str] = AK_DEALER, prog: int | None = 100, **extra: Any) -> dict[str, Any]:
    return settle_dict(make_round(SSP, [sseat(cards, prog=prog, **extra)], dealer=dealer, jackpot=JP))


@pytest.mark.parametrize(
    ("cards", "bet_paid", "prog_paid", "pool_after"),
    [
        # Royal hearts: bet 250 to 1 on 2000 -> 502,000; progressive 100% -> 1,000,000.
        (["Ah", "Kh", "Qh", "Jh", "Th"], 502_000, 1_000_000, 500_000),
        # SF 5-9 clubs: 50 to 1 -> 102,000; progressive 10% -> 100,000.
        (["9c", "8c", "7c", "6c", "5c"], 102_000, 100_000, 900_000),
        # Four 9s: 20 to 1 -> 42,000; progressive 400 for 1 on 100 -> 40,000.
        (["9s", "9h", "9d", "9c", "3d"], 42_000, 40_000, 1_000_000),
        # Full house 8s over Ks: 7 to 1 -> 16,000; 80 for 1 -> 8,000.
        (["8s", "8h", "8d", "Kc", "Kh"], 16_000, 8_000, 1_000_000),
        # Flush diamonds: 5 to 1 -> 12,000; 40 for 1 -> 4,000.
        (["Jd", "9d", "6d", "5d", "3d"], 12_000, 4_000, 1_000_000),
        # Straight 5-9: 4 to 1 -> 10,000; 20 for 1 -> 2,000.
        (["9h", "8s", "7d", "6c", "5h"], 10_000, 2_000, 1_000_000),
        # Wheel A-2-3-4-5 (3.3.1.2 Ace as 1): straight 4 to 1 -> 10,000; 20 for 1 -> 2,000.
        (["Ah", "2h", "3d", "4s", "5c"], 10_000, 2_000, 1_000_000),
        # Three queens: 3 to 1 -> 8,000; progressive none.
        (["Qs", "Qh", "Qd", "6c", "3h"], 8_000, 0, 1_000_000),
        # Two pairs: 2 to 1 -> 6,000.
        (["Js", "Jh", "5s", "5d", "3c"], 6_000, 0, 1_000_000),
        # One pair of 2s: 1 to 1 -> 4,000.
        (["2d", "2h", "9c", "8s", "6h"], 4_000, 0, 1_000_000),
        # Reading 5: A-K-Q high beats A-K-7 and "One Pair or Lower" pays 1 to 1 -> 4,000.
        (["Ac", "Kh", "Qd", "8c", "6s"], 4_000, 0, 1_000_000),
    ],
)
def test_ssp_4_1_2_bet_and_4_2_progressive_lines(cards: list[str], bet_paid: int, prog_paid: int, pool_after: int) -> None:
    r = one(cards)
    assert r["dealer"]["qualifies"] is True
    check(r, 1, "ante", 1000, 2000)  # 4.1.1 ante 1 to 1
    check(r, 1, "bet", 2000, bet_paid)
    check(r, 1, "progressive", 100, prog_paid)
    assert r["jackpot"]["pool_after"] == pool_after


@pytest.mark.parametrize(
    ("stake", "cards", "prog_paid"),
    [
        # 3.5.3.1: fixed odds multiplied: straight 20 for 1 on 3x (300) -> 6000.
        (300, ["9h", "8s", "7d", "6c", "5h"], 6_000),
        # Four of a kind 400 for 1 on 5x (500) -> 200,000.
        (500, ["9s", "9h", "9d", "9c", "3d"], 200_000),
        # Straight flush: 10% of the pool on 5x is still 100,000 (not multiplied).
        (500, ["9c", "8c", "7c", "6c", "5c"], 100_000),
        # Royal: 100% on 2x is the pool 1,000,000 (not doubled).
        (200, ["Ah", "Kh", "Qh", "Jh", "Th"], 1_000_000),
    ],
)
def test_ssp_3_5_3_1_multiplier(stake: int, cards: list[str], prog_paid: int) -> None:
    r = one(cards, prog=stake)
    check(r, 1, "progressive", stake, prog_paid)


def test_ssp_3_10_2_dealer_no_hand() -> None:
    # Dealer A-Q-J-9-8 has no A-K: "No hand": bet returned (3.10.2.1), ante paid 1 to 1
    # (3.10.2.2) -> 2000, even though the player's K-high loses to it; progressive still paid
    # (3.10.2.3): player flush? no - player 7-6-5-4-3 straight 20 for 1 -> 2000.
    r = one(["7h", "6s", "5d", "4c", "3h"], dealer=["Ac", "Qd", "Jh", "9s", "8c"])
    assert r["dealer"]["qualifies"] is False
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "bet", 2000, 2000)
    check(r, 1, "progressive", 100, 2000)


def test_ssp_3_10_2_dealer_no_hand_even_if_player_lower() -> None:
    # Dealer A-Q-J-9-8 "No hand"; player K-J-9-5-3 (lower): ante still paid, bet returned.
    r = one(["Kh", "Js", "9d", "5c", "3h"], dealer=["Ac", "Qd", "Jh", "9s", "8c"])
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "bet", 2000, 2000)


def test_ssp_3_10_3_dealer_pair_of_twos_qualifies_reading_3() -> None:
    # Dealer 2-2-9-7-4 qualifies (pair beats A-K); player A-K-Q-J-9 loses ante and bet.
    r = one(["Ah", "Kh", "Qd", "Js", "9c"], dealer=["2c", "2d", "9h", "7s", "4h"])
    assert r["dealer"]["qualifies"] is True
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "bet", 2000, 0)


@pytest.mark.parametrize(
    ("player", "dealer", "ante_paid", "bet_paid"),
    [
        # 3.12.3 one pair, kickers compared in order: 8-8-K-7-4 beats 8-8-K-7-3 -> bet 1 to 1.
        (["8s", "8h", "Kc", "7d", "4s"], ["8d", "8c", "Kd", "7s", "3h"], 2000, 4000),
        # 3.12.3 all three kickers equal: stand-off (3.10.4).
        (["8s", "8h", "Kc", "7d", "4s"], ["8d", "8c", "Kd", "7s", "4h"], 1000, 2000),
        # 3.12.2 two pairs: second pair decides: J-J-5-5-9 beats J-J-4-4-A -> 2 to 1 = 6000.
        (["Js", "Jh", "5s", "5d", "9c"], ["Jd", "Jc", "4h", "4s", "Ac"], 2000, 6000),
        # 3.12.2 same two pairs, fifth card decides: J-J-5-5-9 beats J-J-5-5-8.
        (["Js", "Jh", "5s", "5d", "9c"], ["Jd", "Jc", "5h", "5c", "8h"], 2000, 6000),
        # 3.12.2 same two pairs and fifth card: stand-off.
        (["Js", "Jh", "5s", "5d", "9c"], ["Jd", "Jc", "5h", "5c", "9h"], 1000, 2000),
        # 3.12.5 full houses ranked by the three of a kind: 4-4-4-2-2 beats 3-3-3-A-A -> 7 to 1.
        (["4s", "4h", "4d", "2c", "2d"], ["3s", "3h", "3d", "Ac", "Ad"], 2000, 16000),
        # 3.12.4 2-6 straight beats the wheel A-5: 4 to 1 -> 10000.
        (["2s", "3h", "4d", "5c", "6d"], ["As", "2h", "3d", "4c", "5h"], 2000, 10000),
        # 3.12.4 the wheel loses to a 2-6 straight.
        (["As", "2h", "3d", "4c", "5h"], ["2s", "3h", "4d", "5c", "6d"], 0, 0),
        # 3.12.6 same straight 8-Q vs 8-Q: stand-off.
        (["8s", "9h", "Td", "Jc", "Qd"], ["8d", "9c", "Th", "Js", "Qh"], 1000, 2000),
        # 3.12 high cards compared down to the fifth: A-K-7-4-3 beats A-K-7-4-2 -> 1 to 1.
        (["Ah", "Kc", "7d", "4s", "3h"], ["As", "Kd", "7h", "4c", "2s"], 2000, 4000),
        # Broadway A-K-Q-J-T straight beats K-high straight 9-K.
        (["Ah", "Kc", "Qd", "Js", "Th"], ["9s", "Kd", "Qh", "Jc", "Tc"], 2000, 10000),
    ],
)
def test_ssp_3_12_ties_and_kickers(player: list[str], dealer: list[str], ante_paid: int, bet_paid: int) -> None:
    r = one(player, dealer=dealer, prog=None)
    check(r, 1, "ante", 1000, ante_paid)
    check(r, 1, "bet", 2000, bet_paid)


def test_ssp_3_10_4_stand_off_outcome_is_push() -> None:
    r = one(["8s", "8h", "Kc", "7d", "4s"], dealer=["8d", "8c", "Kd", "7s", "4h"], prog=None)
    assert wager(r, 1, "ante")["outcome"] == "push"
    assert wager(r, 1, "bet")["outcome"] == "push"


def test_ssp_3_9_1_fold_keeps_progressive() -> None:
    # Folded four 9s: ante lost; progressive still eligible: 400 for 1 on 200 -> 80000.
    s = seat(1, ["9s", "9h", "9d", "9c", "3d"], {"ante": 1000, "progressive": 200}, FOLD)
    r = settle_dict(make_round(SSP, [s], dealer=AK_DEALER, jackpot=JP))
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "progressive", 200, 80_000)


def test_ssp_3_10_2_2_folded_ante_not_paid_when_dealer_has_no_hand() -> None:
    # 3.10.2.2 pays the antes "of the Players who have not folded": a folded ante is lost.
    s = seat(1, ["7h", "6s", "2d", "4c", "3h"], {"ante": 1000}, FOLD)
    r = settle_dict(make_round(SSP, [s], dealer=["Ac", "Qd", "Jh", "9s", "8c"]))
    check(r, 1, "ante", 1000, 0)


def test_ssp_3_10_1_declined_comparison() -> None:
    # Declined with four 9s against qualifying A-K: ante and bet lost, no progressive.
    r = one(["9s", "9h", "9d", "9c", "3d"], declined_comparison=True)
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "bet", 2000, 0)
    check(r, 1, "progressive", 100, 0)


def test_ssp_3_10_2_3_declined_with_dealer_no_hand_reading_9() -> None:
    # Dealer "No hand": ante paid 2000, bet returned (reading 9); the progressive is not paid
    # to a declined hand (3.10.2.3 "has not declined a comparison").
    r = one(["9s", "9h", "9d", "9c", "3d"], dealer=["Ac", "Qd", "Jh", "7s", "8c"], declined_comparison=True)
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "bet", 2000, 2000)
    check(r, 1, "progressive", 100, 0)


def test_ssp_3_15_1_two_royals_share() -> None:
    # Two royals: (pool 1,000,000 + one reset 500,000) / 2 = 750,000 each; pool resets.
    seats = [sseat(["Ah", "Kh", "Qh", "Jh", "Th"], 2), sseat(["As", "Ks", "Qs", "Js", "Ts"], 6, prog=500)]
    r = settle_dict(make_round(SSP, seats, dealer=["Ad", "Kc", "7h", "4c", "2s"], jackpot=JP))
    check(r, 2, "progressive", 100, 750_000)
    check(r, 6, "progressive", 500, 750_000)
    assert r["jackpot"]["pool_after"] == 500_000


def test_ssp_3_15_2_two_straight_flushes_share() -> None:
    # (10% of 1,000,000 + 10% of 500,000) / 2 = 75,000 each; pool charged 100,000.
    seats = [sseat(["9c", "8c", "7c", "6c", "5c"], 1), sseat(["9d", "8d", "7d", "6d", "5d"], 3, prog=300)]
    r = settle_dict(make_round(SSP, seats, dealer=AK_DEALER, jackpot=JP))
    check(r, 1, "progressive", 100, 75_000)
    check(r, 3, "progressive", 300, 75_000)
    assert r["jackpot"]["pool_after"] == 900_000


def test_ssp_3_15_2_three_straight_flushes_share_floored() -> None:
    # 10% of 1,000,000 + 2 x 10% of 500,000 = 200,000 / 3 = 66,666 each (floored, reading 15).
    seats = [
        sseat(["9c", "8c", "7c", "6c", "5c"], 1),
        sseat(["9d", "8d", "7d", "6d", "5d"], 3),
        sseat(["Ts", "9s", "8s", "7s", "6s"], 5),
    ]
    r = settle_dict(make_round(SSP, seats, dealer=["Ah", "Kh", "4h", "3h", "2c"], jackpot=JP))
    for n in (1, 3, 5):
        check(r, n, "progressive", 100, 66_666)


def test_ssp_3_15_3_royal_after_straight_flush() -> None:
    # SF first 10% of 1,000,000 = 100,000; the royal then takes 900,000; pool resets 500,000.
    seats = [sseat(["Ah", "Kh", "Qh", "Jh", "Th"], 1), sseat(["9c", "8c", "7c", "6c", "5c"], 4)]
    r = settle_dict(make_round(SSP, seats, dealer=AK_DEALER, jackpot=JP))
    check(r, 4, "progressive", 100, 100_000)
    check(r, 1, "progressive", 100, 900_000)
    assert r["jackpot"]["pool_after"] == 500_000
