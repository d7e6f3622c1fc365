"""Three Card Poker v5, black box: amounts computed by hand from rules 4.1-4.4.

Stakes: ante/play 1000, pair plus 500, progressive 100 (= the minimum progressive wager, so
the fixed amounts of 4.4 are paid once: SGD 1,250 = 125000 cents).
"""

from __future__ import annotations

from typing import Any

import pytest

from blackbox_helpers import TCP, check, make_round, paid, seat, settle_dict, wager

JP = {"pool": 1_000_000, "reset": 250_000}
PLAY = {"ante": "play"}
FOLD = {"ante": "fold"}


def full(cards: list[str], n: int = 1, **extra: Any) -> dict[str, Any]:
    """A seat with ante 1000, play 1000, pair plus 500, progressive 100 that plays."""
    return seat(
        n, cards, {"ante": 1000, "play": 1000, "pair_plus": 500, "progressive": 100}, PLAY, **extra
    )


def one(cards: list[str], dealer: list[str], **kw: Any) -> dict[str, Any]:
    return settle_dict(make_round(TCP, [full(cards)], dealer=dealer, jackpot=JP, **kw))


# --- 4.1 ante and play, 3.11 / 3.12 dealer qualifying --------------------------------------


def test_3_12_1_and_4_1_player_beats_queen_high_dealer() -> None:
    # Dealer Q-7-2 qualifies with a Queen (3.12). Player 8-8-3 (pair) beats it.
    # ante 1 to 1 on 1000 -> paid 2000; play 1 to 1 -> paid 2000;
    # pair plus pair 1 to 1 on 500 -> paid 1000; progressive: pair pays nothing -> paid 0.
    r = one(["8s", "8h", "3c"], ["Qd", "7c", "2h"])
    assert r["dealer"]["qualifies"] is True
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 2000)
    check(r, 1, "pair_plus", 500, 1000)
    check(r, 1, "progressive", 100, 0)
    assert paid(r, 1, "ante_bonus") == 0  # a pair earns no Ante Bonus (4.2)


def test_3_12_2_player_loses_to_qualifying_dealer() -> None:
    # Dealer A-9-4 qualifies; player K-J-4 loses: ante and play collected (paid 0).
    # Pair plus: K-J-4 is no pair -> collected.
    r = one(["Kc", "Jd", "4h"], ["Ad", "9c", "4s"])
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)
    check(r, 1, "pair_plus", 500, 0)


def test_3_11_dealer_jack_high_does_not_qualify() -> None:
    # Dealer J-9-4 has no Queen or higher: 3.11.2 ante paid 1 to 1 (2000), 3.11.1 play
    # neither paid nor collected (1000 back), even though the player's 10-8-3 is lower.
    r = one(["Tc", "8d", "3h"], ["Jd", "9c", "4s"])
    assert r["dealer"]["qualifies"] is False
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 1000)
    assert wager(r, 1, "play")["outcome"] in ("push", "returned")


def test_3_12_queen_high_exactly_qualifies() -> None:
    # Dealer Q-5-3 (Queen high, the lowest qualifying high-card hand) vs player J-T-8:
    # dealer qualifies and wins: ante and play collected.
    r = one(["Jc", "Td", "8h"], ["Qd", "5c", "3s"])
    assert r["dealer"]["qualifies"] is True
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)


def test_3_12_dealer_pair_without_queen_qualifies_reading_2() -> None:
    # rule-readings 2: "Queen high or better" - dealer 4-4-2 qualifies and beats K-Q-9.
    r = one(["Kc", "Qd", "9h"], ["4d", "4c", "2s"])
    assert r["dealer"]["qualifies"] is True
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)


def test_3_12_dealer_low_straight_qualifies_reading_2() -> None:
    # rule-readings 2: dealer 4-3-2 mixed suits (a straight) qualifies and beats A-K-J.
    r = one(["Ac", "Kd", "Jh"], ["4d", "3c", "2s"])
    assert r["dealer"]["qualifies"] is True
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)


# --- 4.2 Ante Bonus ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "bonus_paid"),
    [
        # 4.2 Straight Flush 5 to 1 on the 1000 ante -> 5000 (stake 0: it is a payment).
        (["9h", "8h", "7h"], 5000),
        # 4.2 Royal Flush shares the 5 to 1 line -> 5000.
        (["Ac", "Kc", "Qc"], 5000),
        # 4.2 Three of a Kind 4 to 1 -> 4000.
        (["6s", "6h", "6d"], 4000),
        # 4.2 Straight 1 to 1 -> 1000.
        (["9c", "8d", "7s"], 1000),
        # A flush is below a straight (3.16): no Ante Bonus.
        (["Jc", "8c", "3c"], 0),
    ],
)
def test_4_2_ante_bonus_lines(cards: list[str], bonus_paid: int) -> None:
    r = one(cards, ["Kd", "5h", "2d"])
    assert paid(r, 1, "ante_bonus") == bonus_paid


def test_3_12_4_ante_bonus_paid_even_when_losing_to_dealer() -> None:
    # Player straight 5-4-3 loses to dealer's straight flush 9-8-7 of diamonds: ante and play
    # collected, but the Ante Bonus is paid irrespective of the dealer's hand (3.12.4):
    # straight 1 to 1 on 1000 -> 1000. Pair plus straight 5 to 1 on 500 -> paid 3000.
    r = one(["5c", "4h", "3s"], ["9d", "8d", "7d"])
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)
    assert paid(r, 1, "ante_bonus") == 1000
    check(r, 1, "pair_plus", 500, 3000)


def test_3_11_3_ante_bonus_when_dealer_does_not_qualify() -> None:
    # Dealer J-6-2 does not qualify. Player three 5s: ante paid 2000, play back 1000,
    # ante bonus 4 to 1 -> 4000, pair plus 30 to 1 on 500 -> 15000 win, 15500 paid,
    # progressive three of a kind SGD 150 -> 15000 (stake not returned).
    r = one(["5c", "5h", "5s"], ["Jd", "6c", "2d"])
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 1000)
    assert paid(r, 1, "ante_bonus") == 4000
    check(r, 1, "pair_plus", 500, 15500)
    check(r, 1, "progressive", 100, 15000)


# --- 4.3 Pair Plus (paid irrespective of the dealer, 3.12.5) -------------------------------


@pytest.mark.parametrize(
    ("cards", "pp_paid"),
    [
        (["Ad", "Kd", "Qd"], 500 + 40 * 500),  # royal on the SF line 40 to 1 -> 20500
        (["4c", "3c", "2c"], 500 + 40 * 500),  # straight flush 40 to 1 -> 20500
        (["Jc", "Js", "Jh"], 500 + 30 * 500),  # three of a kind 30 to 1 -> 15500
        (["Qc", "Jd", "Th"], 500 + 5 * 500),  # straight 5 to 1 -> 3000
        (["Kh", "9h", "2h"], 500 + 4 * 500),  # flush 4 to 1 -> 2500
        (["3d", "3s", "Kc"], 500 + 1 * 500),  # pair 1 to 1 -> 1000
        (["Kc", "9d", "2s"], 0),  # three odd cards: collected
    ],
)
def test_4_3_pair_plus_lines(cards: list[str], pp_paid: int) -> None:
    # Dealer A-A-7 qualifies and beats all but the trips/straights; pair plus ignores it.
    r = one(cards, ["As", "Ac", "7d"])
    check(r, 1, "pair_plus", 500, pp_paid)


def test_3_9_3_pair_plus_only_seat() -> None:
    # A Pair-Plus-only player (3.9.3): flush 4 to 1 on 500 -> 2500 paid, no ante/play items.
    s = seat(2, ["Th", "7h", "3h"], {"pair_plus": 500})
    r = settle_dict(make_round(TCP, [s], dealer=["Kd", "5h", "2d"]))
    check(r, 2, "pair_plus", 500, 2500)
    assert {w["wager"] for w in r["seats"][0]["wagers"]} == {"pair_plus"}


# --- 3.17 ranking and stand-offs -----------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "dealer", "ante_paid"),
    [
        # 3.17.2 same pair, kicker decides: Q-Q-9 beats Q-Q-5 -> 2000.
        (["Qs", "Qh", "9c"], ["Qd", "Qc", "5h"], 2000),
        # 3.17.2 same pair and same kicker: stand-off -> 1000 back.
        (["Qs", "Qh", "5c"], ["Qd", "Qc", "5h"], 1000),
        # 3.17.2 higher pair wins regardless of kicker: 3-3-A loses to 4-4-2 -> 0.
        (["3s", "3h", "Ac"], ["4d", "4c", "Qh"], 0),
        # 3.17 high cards compared in order: K-J-4 loses to K-J-5 on the third card -> 0.
        (["Ks", "Jh", "4c"], ["Kd", "Jc", "5h"], 0),
        # 3.17.1 same ranks, different suits: stand-off.
        (["Ks", "Jh", "4c"], ["Kd", "Jc", "4h"], 1000),
        # 3.17.3 A-2-3 is the lowest straight: 2-3-4 beats it.
        (["4s", "3h", "2c"], ["Ad", "2d", "3c"], 2000),
        # 3.17.3 A-K-Q (ace high) beats K-Q-J.
        (["As", "Kh", "Qc"], ["Kd", "Qd", "Jc"], 2000),
        # 3.17.4 same straight 8-9-10 vs 8-9-10: stand-off.
        (["8s", "9h", "Tc"], ["8d", "9c", "Th"], 1000),
        # 3.16 a straight ranks above a flush: flush K-9-2 loses to straight 5-6-7.
        (["Kh", "9h", "2h"], ["5d", "6c", "7s"], 0),
        # 3.16 three of a kind beats a straight.
        (["2s", "2h", "2c"], ["Ad", "Kc", "Qh"], 2000),
        # 3.17.3 A-2-3 straight flush is the lowest straight flush: 2-3-4 suited beats it.
        (["2h", "3h", "4h"], ["As", "2s", "3s"], 2000),
    ],
)
def test_3_17_ranking_ties_and_kickers(player: list[str], dealer: list[str], ante_paid: int) -> None:
    r = one(player, dealer)
    check(r, 1, "ante", 1000, ante_paid)
    check(r, 1, "play", 1000, ante_paid)


def test_3_3_1_2_k_a_2_is_not_a_straight() -> None:
    # The Ace counts low only in 3-2-A (3.3.1.2): K-A-2 is three odd cards, pair plus loses,
    # no ante bonus.
    r = one(["Kc", "As", "2d"], ["Qd", "7c", "4h"])
    check(r, 1, "pair_plus", 500, 0)
    assert paid(r, 1, "ante_bonus") == 0
    check(r, 1, "ante", 1000, 2000)  # but A-K high beats Q-7-4


def test_3_3_1_2_a_2_3_is_a_straight_for_pair_plus_and_progressive() -> None:
    # A-2-3 mixed suits: straight. Pair plus 5 to 1 on 500 -> 3000; ante bonus 1 to 1 -> 1000;
    # progressive straight SGD 15 -> 1500.
    r = one(["Ac", "2s", "3d"], ["Kd", "7c", "4h"])
    check(r, 1, "pair_plus", 500, 3000)
    assert paid(r, 1, "ante_bonus") == 1000
    check(r, 1, "progressive", 100, 1500)


# --- 3.9.1 fold --------------------------------------------------------------------------


def test_3_9_1_fold_keeps_pair_plus_and_progressive() -> None:
    # Folded 7-6-5 straight: ante lost (3.9.1); pair plus still played (3.9.1.1): straight
    # 5 to 1 on 500 -> 3000; progressive still eligible (3.9.1): straight SGD 15 -> 1500;
    # no ante bonus on a folded hand (reading 7).
    s = seat(1, ["7c", "6d", "5s"], {"ante": 1000, "pair_plus": 500, "progressive": 100}, FOLD)
    r = settle_dict(make_round(TCP, [s], dealer=["Kd", "7h", "2h"], jackpot=JP))
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "pair_plus", 500, 3000)
    check(r, 1, "progressive", 100, 1500)
    assert paid(r, 1, "ante_bonus") == 0


# --- 3.10.1 declined comparison -----------------------------------------------------------


def test_3_10_1_declined_comparison_qualifying_dealer() -> None:
    # Player holds 9-8-7 of clubs (straight flush) but will not expose it: deemed lower than
    # the dealer's K-7-2: ante and play collected; no progressive (3.10.1); pair plus and
    # ante bonus unpaid (reading 9).
    r = settle_dict(
        make_round(TCP, [full(["9c", "8c", "7c"], declined_comparison=True)], dealer=["Kd", "7h", "2h"], jackpot=JP)
    )
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)
    check(r, 1, "progressive", 100, 0)
    check(r, 1, "pair_plus", 500, 0)
    assert paid(r, 1, "ante_bonus") == 0


def test_3_10_1_declined_comparison_dealer_not_qualifying_reading_9() -> None:
    # Reading 9: dealer J-7-2 does not qualify, so there is no comparison to decline:
    # ante paid 2000 (3.11.2), play back 1000 (3.11.1).
    r = settle_dict(
        make_round(TCP, [full(["9c", "4d", "2c"], declined_comparison=True)], dealer=["Jd", "7h", "3h"], jackpot=JP)
    )
    check(r, 1, "ante", 1000, 2000)
    check(r, 1, "play", 1000, 1000)


# --- 4.4 progressive, 3.20 -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "prog_paid"),
    [
        (["Ah", "Kh", "Qh"], 125_000),  # royal hearts SGD 1,250 per 100 minimum wager
        (["Ad", "Kd", "Qd"], 125_000),  # royal diamonds
        (["Ac", "Kc", "Qc"], 125_000),  # royal clubs
        (["Jc", "Tc", "9c"], 17_500),  # straight flush SGD 175
        (["9s", "9h", "9d"], 15_000),  # three of a kind SGD 150
        (["Tc", "Jd", "Qh"], 1_500),  # straight SGD 15
        (["Kh", "8h", "2h"], 0),  # flush: not on 4.4
        (["Kc", "Kh", "2s"], 0),  # pair: not on 4.4
    ],
)
def test_4_4_progressive_fixed_lines(cards: list[str], prog_paid: int) -> None:
    # Fixed amounts: the stake is not returned (reading 12), pool does not move.
    r = one(cards, ["5d", "4h", "7s"])
    check(r, 1, "progressive", 100, prog_paid)
    assert r["jackpot"]["pool_after"] == 1_000_000


def test_3_20_2_royal_other_suit_only_the_1250_line() -> None:
    # A-K-Q of hearts pays SGD 1,250 only, "not counted in addition to a Straight Flush":
    # 125000, not 125000 + 17500.
    r = one(["Ah", "Kh", "Qh"], ["5d", "4h", "7s"])
    w = wager(r, 1, "progressive")
    assert w["paid"] == 125_000
    assert len(w["lines"]) == 1


def test_4_4_royal_of_spades_takes_the_pool_and_resets() -> None:
    # Royal of spades: 100% of the pool 1,000,000 -> paid 1,000,000, net 999,900; pool resets
    # to 250,000 (3.20.1: the royal paid after lower hands, here none).
    r = one(["As", "Ks", "Qs"], ["5d", "4h", "7s"])
    check(r, 1, "progressive", 100, 1_000_000)
    assert r["jackpot"]["pool_before"] == 1_000_000
    assert r["jackpot"]["pool_after"] == 250_000


def test_3_20_1_royal_of_spades_paid_after_lower_hands() -> None:
    # Seat 1 royal of spades, seat 3 straight flush (SGD 175 fixed). The lower hand is paid
    # first; the royal is the last payout in the ledger; pool then resets to 250,000.
    seats = [full(["As", "Ks", "Qs"], 1), full(["8h", "7h", "6h"], 3)]
    r = settle_dict(make_round(TCP, seats, dealer=["5d", "4c", "Jc"], jackpot=JP))
    check(r, 3, "progressive", 100, 17_500 + 25_000)  # its SF + the Envy Bonus SGD 250 (3.14)
    payouts = [m for m in r["jackpot"]["movements"] if m["kind"] == "payout"]
    assert payouts[-1]["seat"] == 1
    assert r["jackpot"]["pool_after"] == 250_000


# --- 3.14 / 3.15 Envy Bonus ------------------------------------------------------------------


def test_3_14_envy_bonus_royal_spades_250_to_every_other_progressive() -> None:
    # Seat 1 (ante) royal of spades. Seat 4 (progressive, flush, nothing of its own) receives
    # SGD 250 = 25000; seat 5 has no progressive wager and receives nothing.
    # Seat 1 does not receive an Envy Bonus on its own hand: paid exactly the pool 1,000,000.
    seats = [
        full(["As", "Ks", "Qs"], 1),
        full(["9h", "6h", "2h"], 4),
        seat(5, ["8c", "8d", "3s"], {"ante": 1000, "play": 1000}, PLAY),
    ]
    r = settle_dict(make_round(TCP, seats, dealer=["Kd", "7c", "4d"], jackpot=JP))
    check(r, 1, "progressive", 100, 1_000_000)
    check(r, 4, "progressive", 100, 25_000)
    assert all(w["wager"] != "progressive" for w in r["seats"][2]["wagers"])


def test_3_14_envy_bonus_royal_other_suit_50() -> None:
    # Seat 2 ante royal of diamonds: it gets SGD 1,250 = 125000; seat 6 gets the Envy SGD 50 = 5000.
    seats = [full(["Ad", "Kd", "Qd"], 2), full(["9h", "6h", "2c"], 6)]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 2, "progressive", 100, 125_000)
    check(r, 6, "progressive", 100, 5_000)


def test_3_14_straight_flush_gives_no_envy() -> None:
    # 4.4: straight flush Envy "N/A". Seat 6's progressive (pair) gets nothing.
    seats = [full(["Jh", "Th", "9h"], 2), full(["9c", "9d", "2c"], 6)]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 2, "progressive", 100, 17_500)
    check(r, 6, "progressive", 100, 0)


def test_3_14_trigger_without_progressive_wager() -> None:
    # 3.14 "with or without a Progressive Jackpot wager": seat 1 has ante and play only and a
    # royal of spades; seat 3's progressive receives SGD 250 = 25000. The pool does not move.
    seats = [
        seat(1, ["As", "Ks", "Qs"], {"ante": 1000, "play": 1000}, PLAY),
        full(["9h", "6h", "2c"], 3),
    ]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 3, "progressive", 100, 25_000)
    assert r["jackpot"]["pool_after"] == 1_000_000


def test_3_14_folded_receiver_and_pair_plus_only_receiver_get_envy() -> None:
    # Reading 21 / round-format example: a folded hand's progressive stays in action (3.9.1)
    # and a Pair-Plus-only bettor's progressive is valid (3.5): both receive SGD 250.
    seats = [
        full(["As", "Ks", "Qs"], 1),
        seat(2, ["7c", "4d", "2s"], {"ante": 1000, "progressive": 100}, FOLD),
        seat(3, ["9h", "6h", "3c"], {"pair_plus": 500, "progressive": 100}),
    ]
    r = settle_dict(make_round(TCP, seats, dealer=["Kd", "7h", "4s"], jackpot=JP))
    check(r, 2, "progressive", 100, 25_000)
    check(r, 2, "ante", 1000, 0)
    check(r, 3, "progressive", 100, 25_000)
    check(r, 3, "pair_plus", 500, 0)


def test_3_15_pair_plus_only_royal_gives_no_envy() -> None:
    # Seat 1 bets pair plus + progressive (no ante) and makes the royal of spades: it takes
    # the pool (1,000,000) and pair plus 40 to 1 (20500), but nobody gets an Envy Bonus (3.15).
    seats = [
        seat(1, ["As", "Ks", "Qs"], {"pair_plus": 500, "progressive": 100}),
        full(["9h", "6h", "2c"], 4),
    ]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 1, "progressive", 100, 1_000_000)
    check(r, 1, "pair_plus", 500, 20_500)
    check(r, 4, "progressive", 100, 0)


def test_3_15_does_not_cancel_other_ante_backed_trigger_reading_22() -> None:
    # Seat 1 pair-plus-only royal of spades (no Envy, 3.15); seat 2 ante royal of hearts
    # triggers SGD 50 for the others (3.14). Seat 5 receives 5000 only. Seat 1 also has a
    # progressive wager and is "another player" for seat 2's hand: pool + 5000.
    seats = [
        seat(1, ["As", "Ks", "Qs"], {"pair_plus": 500, "progressive": 100}),
        full(["Ah", "Kh", "Qh"], 2),
        full(["9d", "6d", "2c"], 5),
    ]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 5, "progressive", 100, 5_000)
    check(r, 2, "progressive", 100, 125_000)
    check(r, 1, "progressive", 100, 1_000_000 + 5_000)


def test_3_14_two_triggering_hands_pay_two_bonuses() -> None:
    # Ante royals of spades (seat 1) and clubs (seat 2): seat 7 gets 25000 + 5000 = 30000.
    seats = [full(["As", "Ks", "Qs"], 1), full(["Ac", "Kc", "Qc"], 2), full(["9d", "6d", "2h"], 7)]
    r = settle_dict(make_round(TCP, seats, dealer=["Kh", "7h", "4s"], jackpot=JP))
    check(r, 7, "progressive", 100, 30_000)
    # seat 2 gets its own SGD 1,250 plus the Envy from seat 1's royal of spades: 150000.
    check(r, 2, "progressive", 100, 125_000 + 25_000)
    # seat 1 gets the pool plus the Envy from seat 2's royal of clubs: 1,005,000.
    check(r, 1, "progressive", 100, 1_000_000 + 5_000)


def test_3_14_no_envy_on_own_other_seat_reading_21() -> None:
    # Player P1 bets seats 1 and 2 (blind betting, seat 2 unviewed). Seat 1 royal of spades:
    # seat 2 (same player) gets no Envy; seat 3 (P2) gets 25000.
    seats = [
        full(["As", "Ks", "Qs"], 1, player="P1"),
        full(["9h", "6h", "2c"], 2, player="P1", viewed=False),
        full(["9d", "5d", "3c"], 3, player="P2"),
    ]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 2, "progressive", 100, 0)
    check(r, 3, "progressive", 100, 25_000)


def test_3_10_1_declined_royal_triggers_no_envy_reading_9() -> None:
    # A declined hand has "no winning Progressive Jackpot combinations" (3.10.1): its royal of
    # spades is neither paid nor triggers an Envy Bonus.
    seats = [full(["As", "Ks", "Qs"], 1, declined_comparison=True), full(["9h", "6h", "2c"], 4)]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 1, "progressive", 100, 0)
    check(r, 4, "progressive", 100, 0)
    assert r["jackpot"]["pool_after"] == 1_000_000


def test_3_14_folded_ante_royal_still_triggers_reading_21() -> None:
    # Reading 21: a folded ante hand keeps its progressive (3.9.1) and still triggers the Envy
    # Bonus: seat 1 folds A-K-Q of spades (ante -1000) yet takes the pool; seat 3 gets 25000.
    seats = [
        seat(1, ["As", "Ks", "Qs"], {"ante": 1000, "progressive": 100}, FOLD),
        full(["9h", "6h", "2c"], 3),
    ]
    r = settle_dict(make_round(TCP, seats, dealer=["Kc", "7c", "4s"], jackpot=JP))
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "progressive", 100, 1_000_000)
    check(r, 3, "progressive", 100, 25_000)
