"""Megalink Three Card Poker and its Xtreme variant, black box, amounts by hand from 4.1-4.5.

Stakes: ante/play 1000, pair plus 500, six card bonus 500, progressive min 100 (SGD 1.00).
Fixed jackpot amounts (MTCP 4.4) are per minimum progressive wager: SGD 2,000 = 200000.
"""

from __future__ import annotations

from typing import Any

import pytest

from blackbox_helpers import MTCP, XT, check, make_round, paid, seat, settle_dict, wager

JP = {"pool": 1_000_000, "reset": 500_000}
PLAY = {"ante": "play"}
FOLD = {"ante": "fold"}


def mseat(cards: list[str], n: int = 1, prog: int = 100, **extra: Any) -> dict[str, Any]:
    return seat(n, cards, {"ante": 1000, "play": 1000, "pair_plus": 500, "progressive": prog}, PLAY, **extra)


def xseat(cards: list[str], n: int = 1, prog: int = 100, **extra: Any) -> dict[str, Any]:
    w = {"ante": 1000, "play": 1000, "pair_plus": 500, "six_card_bonus": 500, "progressive": prog}
    return seat(n, cards, w, PLAY, **extra)


# ============================ Megalink Three Card Poker ======================================


@pytest.mark.parametrize(
    ("cards", "prog_paid", "pool_after"),
    [
        # community Th Jh. A-K-Q hearts + J-T hearts: Royal Flush, 100% of 1,000,000 (4.4),
        # pool resets to 500,000.
        (["Ah", "Kh", "Qh"], 1_000_000, 500_000),
        # 9-8-7 hearts + T-J hearts: Straight Flush 7-J, 10% = 100,000; pool 900,000.
        (["9h", "8h", "7h"], 100_000, 900_000),
        # T-T-T + T-J: Four of a Kind SGD 2,000 = 200000 (stake not returned, pool unchanged).
        (["Tc", "Td", "Ts"], 200_000, 1_000_000),
        # J-J-T + T-J: Full House SGD 200 = 20000.
        (["Jc", "Jd", "Ts"], 20_000, 1_000_000),
        # 7-5-2 hearts + T-J hearts: Flush SGD 100 = 10000.
        (["7h", "5h", "2h"], 10_000, 1_000_000),
        # K-Q-9 + T-J: a straight, which MTCP 4.4 does not pay.
        (["Kc", "Qd", "9s"], 0, 1_000_000),
        # T-T-2 + T-J: three of a kind, not on 4.4.
        (["Tc", "Td", "2s"], 0, 1_000_000),
    ],
)
def test_mtcp_4_4_progressive_lines(cards: list[str], prog_paid: int, pool_after: int) -> None:
    r = settle_dict(make_round(MTCP, [mseat(cards)], dealer=["Kd", "6s", "3c"], community=["Th", "Jh"], jackpot=JP))
    check(r, 1, "progressive", 100, prog_paid)
    assert r["jackpot"]["pool_after"] == pool_after


def test_mtcp_4_2_4_3_ak_q_suited_is_a_straight_flush() -> None:
    # MTCP has no Royal line in 4.2/4.3: A-K-Q of clubs is a Straight Flush (3.14.1):
    # ante bonus 5 to 1 on 1000 -> 5000; pair plus 40 to 1 on 500 -> 20500; beats K-6-3:
    # ante 2000, play 2000.
    r = settle_dict(make_round(MTCP, [mseat(["Ac", "Kc", "Qc"])], dealer=["Kd", "6s", "3c"], community=["2h", "7d"], jackpot=JP))
    assert paid(r, 1, "ante_bonus") == 5000
    check(r, 1, "pair_plus", 500, 20_500)
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 2000)


@pytest.mark.parametrize(
    ("cards", "bonus", "pp"),
    [
        (["6s", "6h", "6d"], 4000, 500 + 30 * 500),  # trips: 4 to 1 / 30 to 1
        (["Jc", "Qd", "Ks"], 1000, 500 + 5 * 500),  # straight: 1 to 1 / 5 to 1
        (["Jc", "8c", "3c"], 0, 500 + 4 * 500),  # flush: - / 4 to 1
        (["Jc", "Jd", "3c"], 0, 500 + 1 * 500),  # pair: - / 1 to 1
    ],
)
def test_mtcp_4_2_4_3_lines(cards: list[str], bonus: int, pp: int) -> None:
    r = settle_dict(make_round(MTCP, [mseat(cards)], dealer=["Kd", "6c", "3h"], community=["2h", "7d"], jackpot=JP))
    assert paid(r, 1, "ante_bonus") == bonus
    check(r, 1, "pair_plus", 500, pp)


def test_mtcp_3_11_dealer_not_qualifying() -> None:
    # Dealer J-9-4 no Queen: ante paid 2000, play back 1000 (3.11.1-3.11.2).
    r = settle_dict(make_round(MTCP, [mseat(["Tc", "8d", "3h"])], dealer=["Jd", "9c", "4s"], community=["2h", "7d"], jackpot=JP))
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 1000)


def test_mtcp_3_15_2_pair_kicker_and_3_15_3_lowest_straight() -> None:
    # Seat 1: 9-9-K vs dealer 9-9-Q: kicker K wins (3.15.2) -> ante 2000.
    # Seat 2: A-2-3 straight vs dealer? same dealer 9-9-Q (pair): straight beats pair -> 2000.
    # Seat 3: K-Q-T (three odd cards) loses to the dealer's pair -> 0.
    seats = [mseat(["9s", "9h", "Kc"], 1), mseat(["Ac", "2d", "3s"], 2), mseat(["Ks", "Qh", "Tc"], 3)]
    r = settle_dict(make_round(MTCP, seats, dealer=["9d", "9c", "Qd"], community=["5h", "7d"], jackpot=JP))
    check(r, 1, "ante", 1000, 2000)
    check(r, 2, "ante", 1000, 2000)
    check(r, 3, "ante", 1000, 0)


def test_mtcp_3_9_1_fold_keeps_pair_plus_and_progressive() -> None:
    # Folded J-J-T with community Th Jh: ante lost; pair plus (3.9.1.1) pair 1 to 1 -> 1000;
    # progressive (3.9.1) full house J-J-J-T-T SGD 200 -> 20000.
    s = seat(1, ["Jc", "Jd", "Tc"], {"ante": 1000, "pair_plus": 500, "progressive": 100}, FOLD)
    r = settle_dict(make_round(MTCP, [s], dealer=["Kd", "6s", "3c"], community=["Th", "Jh"], jackpot=JP))
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "pair_plus", 500, 1000)
    check(r, 1, "progressive", 100, 20_000)


def test_mtcp_3_10_2_declined_comparison_no_progressive() -> None:
    # Declined with 9-8-7 hearts (+T-J hearts would be a straight flush): ante and play lost
    # against qualifying K-6-3, progressive nothing, pool unchanged.
    r = settle_dict(
        make_round(MTCP, [mseat(["9h", "8h", "7h"], declined_comparison=True)], dealer=["Kd", "6s", "3c"], community=["Th", "Jh"], jackpot=JP)
    )
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)
    check(r, 1, "progressive", 100, 0)
    assert r["jackpot"]["pool_after"] == 1_000_000


def test_mtcp_3_18_1_two_straight_flushes_share() -> None:
    # Community 9h Th. Seat 2: 6-7-8 hearts -> 6-T SF; seat 5: J-Q-K hearts -> 9-K SF.
    # 10% of 1,000,000 + 10% of the 500,000 reset = 150,000, divided by 2 = 75,000 each.
    # The pool is charged its 10% (reading 18): 900,000 after.
    seats = [mseat(["6h", "7h", "8h"], 2), mseat(["Jh", "Qh", "Kh"], 5)]
    r = settle_dict(make_round(MTCP, seats, dealer=["Ad", "6s", "3c"], community=["9h", "Th"], jackpot=JP))
    check(r, 2, "progressive", 100, 75_000)
    check(r, 5, "progressive", 100, 75_000)
    assert r["jackpot"]["pool_after"] == 900_000


def test_mtcp_3_18_2_royal_paid_after_straight_flush() -> None:
    # Community Jh Th. Seat 1: A-K-Q hearts -> Royal; seat 4: 9-8-7 hearts -> SF 7-J.
    # SF first: 10% of 1,000,000 = 100,000 -> pool 900,000; then the royal takes 900,000;
    # pool resets to 500,000.
    seats = [mseat(["Ah", "Kh", "Qh"], 1), mseat(["9h", "8h", "7h"], 4)]
    r = settle_dict(make_round(MTCP, seats, dealer=["Kd", "6s", "3c"], community=["Jh", "Th"], jackpot=JP))
    check(r, 4, "progressive", 100, 100_000)
    check(r, 1, "progressive", 100, 900_000)
    assert r["jackpot"]["pool_after"] == 500_000


# ================================ Xtreme ==========================================================


@pytest.mark.parametrize(
    ("player", "dealer", "six_paid"),
    [
        # 4.5 on 500: Royal A-K-Q-J-T spades 500 to 1 -> 250000 + 500.
        (["As", "Ks", "Qs"], ["Js", "Ts", "2d"], 250_500),
        # Straight Flush 5-9 hearts 100 to 1 -> 50500.
        (["9h", "8h", "7h"], ["6h", "5h", "Kc"], 50_500),
        # Four 7s 50 to 1 -> 25500.
        (["7s", "7h", "7d"], ["7c", "Kd", "2s"], 25_500),
        # Full house 8s over Ks 20 to 1 -> 10500.
        (["8s", "8h", "8d"], ["Kc", "Kd", "2s"], 10_500),
        # Flush of diamonds 15 to 1 -> 8000.
        (["2d", "6d", "9d"], ["Jd", "Kd", "3c"], 8_000),
        # Straight 4-8 10 to 1 -> 5500.
        (["4c", "5d", "6h"], ["7s", "8c", "Kd"], 5_500),
        # Wheel A-2-3-4-5 straight 10 to 1 -> 5500 (ace low).
        (["Ac", "2d", "3h"], ["4s", "5c", "Kd"], 5_500),
        # Three 9s 7 to 1 -> 4000.
        (["9c", "9d", "2h"], ["9s", "Kd", "5c"], 4_000),
        # Two pairs K-K-9-9: below the table -> collected.
        (["9c", "9d", "2h"], ["2s", "Kd", "Kc"], 0),
        # Only the highest hand (1.1.11): flush 2-5-6-7-8 hearts beats straight 5-9 -> 15 to 1.
        (["5h", "6h", "7h"], ["8h", "9c", "2h"], 8_000),
    ],
)
def test_xt_4_5_six_card_bonus_lines(player: list[str], dealer: list[str], six_paid: int) -> None:
    r = settle_dict(make_round(XT, [xseat(player)], dealer=dealer, community=["Tc", "Jc"], jackpot=JP, dealing="A"))
    check(r, 1, "six_card_bonus", 500, six_paid)


@pytest.mark.parametrize(
    ("cards", "stake", "prog_paid", "pool_after"),
    [
        # community Tc Jc. A-K-Q clubs: Royal, 100% of the pool, not multiplied by the 3x wager.
        (["Ac", "Kc", "Qc"], 300, 1_000_000, 500_000),
        # 9-8-7 clubs: SF 10% = 100,000 on a 5x wager, not multiplied (3.5.4).
        (["9c", "8c", "7c"], 500, 100_000, 900_000),
        # T-T-T + T: Four of a Kind 400 for 1 on 2x (200) -> 80000 (3.5.4).
        (["Ts", "Th", "Td"], 200, 80_000, 1_000_000),
        # J-J-T + T-J: Full House 80 for 1 on 5x (500) -> 40000.
        (["Js", "Jh", "Ts"], 500, 40_000, 1_000_000),
        # 7-5-2 clubs + T-J clubs: Flush 40 for 1 on 1x -> 4000.
        (["7c", "5c", "2c"], 100, 4_000, 1_000_000),
        # K-Q-9 + T-J: Straight 20 for 1 on 3x (300) -> 6000.
        (["Kd", "Qh", "9s"], 300, 6_000, 1_000_000),
        # T-T-2: three of a kind, not on 4.4 -> 0.
        (["Ts", "Th", "2d"], 400, 0, 1_000_000),
    ],
)
def test_xt_4_4_and_3_5_4_progressive_lines(cards: list[str], stake: int, prog_paid: int, pool_after: int) -> None:
    r = settle_dict(
        make_round(XT, [xseat(cards, prog=stake)], dealer=["Kh", "6s", "3d"], community=["Tc", "Jc"], jackpot=JP, dealing="A")
    )
    check(r, 1, "progressive", stake, prog_paid)
    assert r["jackpot"]["pool_after"] == pool_after


def test_xt_4_4_1_6_wheel_straight_progressive() -> None:
    # A-2-3 + 4-5 community, mixed suits: straight (ace low), 20 for 1 on 100 -> 2000.
    # The three-card hand A-2-3 is also a straight: ante bonus 1 to 1 -> 1000, pair plus 5 to 1.
    r = settle_dict(make_round(XT, [xseat(["As", "2h", "3s"])], dealer=["Kh", "9s", "7d"], community=["4c", "5d"], jackpot=JP, dealing="A"))
    check(r, 1, "progressive", 100, 2000)
    assert paid(r, 1, "ante_bonus") == 1000
    check(r, 1, "pair_plus", 500, 3000)


def test_xt_3_11_5_six_card_bonus_when_dealer_does_not_qualify() -> None:
    # Dealer J-9-5 has no Queen: ante 2000, play back 1000; six card bonus J-9-5 + 7-8-? :
    # player 6-7-8 with dealer J-9-5 -> 5-6-7-8-9 straight 10 to 1 on 500 -> 5500.
    r = settle_dict(make_round(XT, [xseat(["6c", "7d", "8h"])], dealer=["Js", "9c", "5d"], community=["2c", "3d"], jackpot=JP, dealing="A"))
    assert r["dealer"]["qualifies"] is False
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 1000)
    check(r, 1, "six_card_bonus", 500, 5500)
    assert paid(r, 1, "ante_bonus") == 1000  # 6-7-8 straight, 1 to 1


def test_xt_3_9_1_fold_keeps_pair_plus_six_card_and_progressive() -> None:
    # Folded 8-8-8 (3.9.1): ante -1000. Pair plus (3.9.1.1) trips 30 to 1 on 500 -> 15500.
    # Six card bonus (3.9.1.2) with dealer K-K-2: full house 20 to 1 -> 10500.
    # Progressive (3.9.1) 8-8-8 + 8c? no: community 2c 3d -> 8-8-8-3-2 trips, nothing.
    w = {"ante": 1000, "pair_plus": 500, "six_card_bonus": 500, "progressive": 200}
    s = seat(1, ["8s", "8h", "8d"], w, FOLD)
    r = settle_dict(make_round(XT, [s], dealer=["Kc", "Kd", "2s"], community=["2c", "3d"], jackpot=JP, dealing="A"))
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "pair_plus", 500, 15_500)
    check(r, 1, "six_card_bonus", 500, 10_500)
    check(r, 1, "progressive", 200, 0)
    assert paid(r, 1, "ante_bonus") == 0


def test_xt_3_9_1_folded_hand_progressive_still_paid() -> None:
    # Folded 7-5-2 clubs, community T-J clubs: flush 40 for 1 on 2x -> 8000 (3.9.1, 3.5.4).
    s = seat(1, ["7c", "5c", "2c"], {"ante": 1000, "progressive": 200}, FOLD)
    r = settle_dict(make_round(XT, [s], dealer=["Kh", "6s", "3d"], community=["Tc", "Jc"], jackpot=JP, dealing="B"))
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "progressive", 200, 8_000)


def test_xt_3_10_3_declined_no_six_card_no_progressive() -> None:
    # Declined: deemed lower than dealer K-6-3 (ante, play lost); "no winning Progressive
    # Jackpot or Six Card Bonus combinations" although 9-8-7 clubs + 6-? ... would pay.
    r = settle_dict(
        make_round(XT, [xseat(["9c", "8c", "7c"], declined_comparison=True)], dealer=["Kh", "6c", "5c"], community=["Tc", "Jc"], jackpot=JP, dealing="A")
    )
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)
    check(r, 1, "six_card_bonus", 500, 0)
    check(r, 1, "progressive", 100, 0)
    assert r["jackpot"]["pool_after"] == 1_000_000


def test_xt_3_18_1_sharing_not_multiplied() -> None:
    # Community 9s Ts. Seat 1: 6-7-8 spades (3x wager) -> SF 6-T; seat 4: J-Q-K spades (1x) ->
    # SF 9-K. 10% of 1,000,000 + 10% of 500,000 = 150,000 / 2 = 75,000 each, the 3x wager does
    # not multiply it (3.5.4). Pool charged 100,000 -> 900,000.
    seats = [xseat(["6s", "7s", "8s"], 1, prog=300), xseat(["Js", "Qs", "Ks"], 4, prog=100)]
    r = settle_dict(make_round(XT, seats, dealer=["Ah", "5d", "2c"], community=["9s", "Ts"], jackpot=JP, dealing="A"))
    check(r, 1, "progressive", 300, 75_000)
    check(r, 4, "progressive", 100, 75_000)
    assert r["jackpot"]["pool_after"] == 900_000


def test_xt_3_18_2_royal_after_straight_flush() -> None:
    # Community Jd Td. Seat 2: A-K-Q diamonds Royal; seat 3: 9-8-7 diamonds SF 7-J.
    # SF 10% of 1,000,000 = 100,000 first; royal takes 900,000; pool resets to 500,000.
    seats = [xseat(["Ad", "Kd", "Qd"], 2, prog=500), xseat(["9d", "8d", "7d"], 3, prog=200)]
    r = settle_dict(make_round(XT, seats, dealer=["Ah", "5s", "2c"], community=["Jd", "Td"], jackpot=JP, dealing="A"))
    check(r, 3, "progressive", 200, 100_000)
    check(r, 2, "progressive", 500, 900_000)
    assert r["jackpot"]["pool_after"] == 500_000


@pytest.mark.parametrize("method", ["A", "B", "C", "manual"])
def test_xt_3_7_dealing_methods_settle_alike(method: str) -> None:
    # The dealing method (3.7.1-3.7.3, 3.8) changes the order, not the settlement.
    # Player Q-Q-4 beats dealer J-J-9? dealer J-J-9 qualifies (pair) and loses to Q-Q:
    # ante 2000, play 2000, pair plus 1 to 1 -> 1000, six card Q-Q-J-J-9 two pair -> 0.
    extra: dict[str, Any] = {"dealing": method}
    if method == "C":
        extra["out_of_play"] = [{"card": "2s", "role": "security"}, {"card": "3s", "role": "burn"}]
    r = settle_dict(make_round(XT, [xseat(["Qc", "Qd", "4h"])], dealer=["Jc", "Jh", "9d"], community=["5c", "6d"], jackpot=JP, **extra))
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 2000)
    check(r, 1, "pair_plus", 500, 1000)
    check(r, 1, "six_card_bonus", 500, 0)


def test_xt_3_15_2_pair_kicker_stand_off() -> None:
    # Q-Q-5 vs Q-Q-5: stand-off (3.15.2): ante and play back.
    r = settle_dict(make_round(XT, [xseat(["Qc", "Qd", "5h"])], dealer=["Qh", "Qs", "5d"], community=["7c", "8d"], jackpot=JP, dealing="A"))
    check(r, 1, "ante", 1000, 1000)
    check(r, 1, "play", 1000, 1000)
    assert wager(r, 1, "ante")["outcome"] == "push"


@pytest.mark.parametrize(
    ("cards", "bonus", "pp"),
    [
        # XT 4.2 / 4.3 on ante 1000 / pair plus 500, dealer K-6-3 (community T-J clubs):
        (["9h", "8h", "7h"], 5000, 500 + 40 * 500),  # straight flush: 5 to 1 / 40 to 1
        (["Qd", "Kd", "Ad"], 5000, 500 + 40 * 500),  # A-K-Q suited is a straight flush (3.14.1)
        (["6s", "6h", "6d"], 4000, 500 + 30 * 500),  # three of a kind: 4 to 1 / 30 to 1
        (["Jh", "Qd", "Ks"], 1000, 500 + 5 * 500),  # straight: 1 to 1 / 5 to 1
        (["Jd", "8d", "3d"], 0, 500 + 4 * 500),  # flush: - / 4 to 1
        (["Js", "Jd", "3s"], 0, 500 + 1 * 500),  # pair: - / 1 to 1
        (["Js", "8d", "2s"], 0, 0),  # three odd cards
    ],
)
def test_xt_4_2_4_3_lines(cards: list[str], bonus: int, pp: int) -> None:
    r = settle_dict(make_round(XT, [xseat(cards)], dealer=["Kh", "6c", "3h"], community=["Tc", "Jc"], jackpot=JP, dealing="A"))
    assert paid(r, 1, "ante_bonus") == bonus
    check(r, 1, "pair_plus", 500, pp)
