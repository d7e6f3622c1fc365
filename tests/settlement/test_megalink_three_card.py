"""Megalink Three Card Poker and Megalink Three Card Poker Xtreme.

Rule numbers are those of each game's document (Megalink: unnumbered version; Xtreme:
w.e.f. 22 May 2023).
"""

from __future__ import annotations

from typing import Any

import pytest

from cardshoe.settlement import Outcome, RoundError, parse_round
from settlement_helpers import POOL, RESET, amounts, dealer_cards, make_round, run

MEGA = "megalink-three-card-poker"
XTREME = "megalink-three-card-poker-xtreme"


def seat(n: int, cards: str, **wagers: int) -> dict[str, Any]:
    s: dict[str, Any] = {"seat": n, "wagers": wagers, "cards": cards.split()}
    if "ante" in wagers:
        s["decisions"] = {"ante": "play" if "play" in wagers else "fold"}
    return s


def rnd(game: str, *seats: dict[str, Any], community: str, dealer: str | None = None, **fields: Any) -> dict[str, Any]:
    used = [c for s in seats for c in s["cards"]] + community.split()
    cards = dealer.split() if dealer else dealer_cards(used)
    return make_round(game, list(seats), dealer={"cards": cards}, community=community.split(), **fields)


# --- Megalink 4.4: progressive on the three cards + two community cards ----------------------------

@pytest.mark.parametrize(
    ("cards", "community", "paid"),
    [
        ("As Ks Qs", "Js Ts", POOL),  # Royal Flush: 100% of the Progressive Jackpot
        ("9h 8h 7h", "6h 5h", POOL // 10),  # Straight Flush: 10%
        ("Ah 2h 3h", "4h 5h", POOL // 10),  # the wheel straight flush
        ("9c 9d 9h", "9s 2c", 200000),  # Four of a Kind $2,000
        ("9c 9d 9h", "2s 2c", 20000),  # Full House $200
        ("Kd 9d 4d", "2d 7d", 10000),  # Flush $100
        ("9c Td Jh", "Qs Kc", 0),  # a straight pays nothing in Megalink 4.4
        ("9c 9d 9h", "Ks 2c", 0),  # three of a kind neither
    ],
)
def test_megalink_progressive_every_line(cards: str, community: str, paid: int) -> None:
    s = run(rnd(MEGA, seat(3, cards, pair_plus=1000, progressive=500), community=community))
    prog = s.seat(3).wager("progressive")
    assert (prog.paid, prog.net) == (paid, paid - 500)
    assert "3.10.1" in prog.rules  # the community cards decide the progressive
    assert s.jackpot is not None
    if paid == POOL:
        assert s.jackpot.pool_after == RESET
    elif paid == POOL // 10:
        assert s.jackpot.pool_after == POOL - POOL // 10
    else:
        assert s.jackpot.pool_after == POOL


def test_megalink_three_card_tables_have_no_royal() -> None:
    # Megalink 3.14: no 3-card Royal Flush; A-K-Q suited is the top Straight Flush, 40 to 1.
    s = run(rnd(MEGA, seat(1, "Ah Kh Qh", pair_plus=1000), community="2c 7d"))
    assert amounts(s, 1)["pair_plus"] == ("win", 41000, 40000)
    assert s.seat(1).hands["player"].name == "Straight Flush"


def test_megalink_two_straight_flushes_share_equally() -> None:
    community = "9h Th"
    one = seat(1, "6h 7h 8h", pair_plus=1000, progressive=500)  # 6-T hearts
    two = seat(5, "Jh Qh Kh", pair_plus=1000, progressive=500)  # 9-K hearts
    near = seat(6, "Jc Qc 2c", pair_plus=1000, progressive=500)  # 9-T-J-Q + 2: no straight flush
    s = run(rnd(MEGA, one, two, near, community=community))
    assert s.seat(6).wager("progressive").outcome is Outcome.LOSE
    total = POOL // 10 + RESET // 10
    share = total // 2
    for n in (1, 5):
        prog = s.seat(n).wager("progressive")
        assert prog.paid == share and "3.18.1" in prog.rules
    assert s.jackpot is not None
    assert s.jackpot.pool_after == POOL - POOL // 10 + (total - 2 * share)
    assert [m.kind for m in s.jackpot.movements] == ["seed", "payout", "payout"]


def test_megalink_royal_paid_after_the_straight_flush() -> None:
    # 3.18.2: the Royal Flush takes the pool as it stands after the lower hands.
    s = run(rnd(MEGA, seat(1, "As Ks Qs", pair_plus=1000, progressive=500),
                seat(2, "9s 8s 7s", pair_plus=1000, progressive=500), community="Js Ts"))
    sf = s.seat(2).wager("progressive")
    royal = s.seat(1).wager("progressive")
    assert sf.paid == POOL // 10
    assert royal.paid == POOL - POOL // 10 and "3.18.2" in royal.rules
    assert s.jackpot is not None and s.jackpot.pool_after == RESET
    assert [(m.kind, m.seat) for m in s.jackpot.movements] == [("payout", 2), ("payout", 1), ("reset", None)]


def test_megalink_pool_percentage_floors_to_the_minor_unit() -> None:
    data = rnd(MEGA, seat(1, "9h 8h 7h", pair_plus=1000, progressive=500), community="6h 5h",
               jackpot={"pool": 1_234_567, "reset": 500_000})
    s = run(data)
    assert s.seat(1).wager("progressive").paid == 123_456  # floor(10% of 1,234,567)
    assert s.jackpot is not None and s.jackpot.pool_after == 1_234_567 - 123_456


def test_megalink_declined_comparison_loses_the_progressive() -> None:
    # Megalink 3.10.2
    declined = seat(1, "As Ks Qs", ante=1000, play=1000, progressive=500) | {"declined_comparison": True}
    s = run(rnd(MEGA, declined, community="Js Ts"))
    assert s.seat(1).wager("progressive").outcome is Outcome.LOSE
    assert "3.10.2" in s.seat(1).wager("ante").rules
    assert s.jackpot is not None and s.jackpot.pool_after == POOL


def test_megalink_community_card_count_voids() -> None:
    data = rnd(MEGA, seat(1, "9c 5d 2h", ante=1000, play=1000), community="Js",
               irregularities=[{"kind": "community_card_count"}])
    s = run(data)
    assert s.void is not None and s.void[0] == ("5.3",)


def test_megalink_wrong_community_count_without_irregularity_is_refused() -> None:
    with pytest.raises(RoundError) as err:
        parse_round(rnd(MEGA, seat(1, "9c 5d 2h", ante=1000, play=1000), community="Js Ts 4c"))
    assert err.value.field == "community"


# --- Xtreme 4.5: Six Card Bonus ----------------------------------------------------------------

@pytest.mark.parametrize(
    ("cards", "dealer", "odds"),
    [
        ("As Ks Qs", "Js Ts 2d", 500),  # Royal Flush
        ("9s 8s 7s", "6s 5s 2d", 100),  # Straight Flush
        ("9s 9d 9c", "9h 5s 2d", 50),  # Four of a Kind
        ("9s 9d 9c", "5h 5s 2d", 20),  # Full House
        ("As 8s 7s", "Js 3s 2d", 15),  # Flush
        ("As 2d 3c", "4h 5s Jd", 10),  # Straight (the wheel)
        ("9s 9d 9c", "Kh 5s 2d", 7),  # Three of a Kind
        ("9s 9d 5c", "Kh 5s 2d", None),  # two pair pays nothing
    ],
)
def test_six_card_bonus_every_line(cards: str, dealer: str, odds: int | None) -> None:
    s = run(rnd(XTREME, seat(1, cards, six_card_bonus=500), community="Ac Kc", dealer=dealer))
    outcome, paid, net = amounts(s, 1)["six_card_bonus"]
    assert (outcome, net) == (("win", odds * 500) if odds else ("lose", -500))
    rules = s.seat(1).wager("six_card_bonus").rules
    assert "3.10.1" in rules and "4.5" in rules


def test_six_card_bonus_paid_whether_or_not_the_dealer_qualifies() -> None:
    # 3.11.5: 8-high dealer does not qualify; the six cards still make a straight.
    s = run(rnd(XTREME, seat(1, "4c 5d 6h", ante=1000, play=1000, six_card_bonus=500), community="Ac Kc",
                dealer="7s 8d 2c"))
    got = amounts(s, 1)
    assert got["six_card_bonus"] == ("win", 5500, 5000)
    assert "3.11.5" in s.seat(1).wager("six_card_bonus").rules
    assert got["play"] == ("push", 1000, 0)


def test_fold_keeps_six_card_bonus_and_pair_plus() -> None:
    # 3.9.1.1, 3.9.1.2
    s = run(rnd(XTREME, seat(1, "2c 3h 6d", ante=1000, six_card_bonus=500, pair_plus=1000), community="9s Ts",
                dealer="4s 5s Kd"))
    got = amounts(s, 1)
    assert got["ante"] == ("lose", 0, -1000)
    assert got["six_card_bonus"] == ("win", 5500, 5000)
    assert "3.9.1.2" in s.seat(1).wager("six_card_bonus").rules
    assert got["pair_plus"][0] == "lose" and "3.9.1.1" in s.seat(1).wager("pair_plus").rules


def test_declined_comparison_has_no_six_card_combination() -> None:
    # 3.10.3
    declined = seat(1, "9s 8s 7s", ante=1000, play=1000, six_card_bonus=500) | {"declined_comparison": True}
    s = run(rnd(XTREME, declined, community="Ac Kc", dealer="6s 5s Kd"))
    assert amounts(s, 1)["six_card_bonus"] == ("lose", 0, -500)
    assert "3.10.3" in s.seat(1).wager("six_card_bonus").rules


# --- Xtreme 3.5.3/3.5.4: progressive at 1 to 5 times the minimum ---------------------------------

@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize(
    ("cards", "community", "odds"),
    [
        ("9c 9d 9h", "9s 2c", 400),  # Four of a Kind 400 for 1
        ("9c 9d 9h", "2s 2c", 80),  # Full House 80 for 1
        ("Kd 9d 4d", "2d 7d", 40),  # Flush 40 for 1
        ("9c Td Jh", "Qs Kc", 20),  # Straight 20 for 1
    ],
)
def test_xtreme_fixed_odds_are_multiplied(k: int, cards: str, community: str, odds: int) -> None:
    s = run(rnd(XTREME, seat(1, cards, pair_plus=1000, progressive=100 * k), community=community))
    prog = s.seat(1).wager("progressive")
    assert prog.paid == odds * 100 * k  # "for 1": the stake is part of the payment
    assert prog.net == (odds - 1) * 100 * k
    if k > 1:
        assert "3.5.4" in prog.rules


@pytest.mark.parametrize("k", [1, 5])
def test_xtreme_percentages_are_not_multiplied(k: int) -> None:
    s = run(rnd(XTREME, seat(1, "9h 8h 7h", pair_plus=1000, progressive=100 * k), community="6h 5h"))
    assert s.seat(1).wager("progressive").paid == POOL // 10
    assert "3.5.4" in s.seat(1).wager("progressive").rules


def test_xtreme_six_times_the_minimum_is_refused() -> None:
    with pytest.raises(RoundError) as err:
        parse_round(rnd(XTREME, seat(1, "9h 8h 7h", pair_plus=1000, progressive=600), community="6h 5h"))
    assert err.value.field == "seats[0].wagers.progressive"


def test_xtreme_progressive_needs_a_base_wager() -> None:
    # 5.12.2; a Six Card Bonus alone is a base wager (3.5, 5.12).
    s = run(rnd(XTREME, seat(1, "9h 8h 7h", progressive=100), seat(2, "Kc 2d 5s", six_card_bonus=500, progressive=100),
                community="6h 5h"))
    assert s.seat(1).wager("progressive").outcome is Outcome.RETURNED
    assert s.seat(1).wager("progressive").rules == ("5.12.2",)
    assert s.seat(2).wager("progressive").outcome is Outcome.LOSE


def test_xtreme_absent_returns_six_card_bonus_too() -> None:
    # 5.11 lists the Six Card Bonus
    absent = {"seat": 1, "wagers": {"ante": 1000, "six_card_bonus": 500, "progressive": 100},
              "cards": ["9s", "8s", "7s"], "absent": True}
    s = run(rnd(XTREME, absent, seat(2, "Kc 2d 5s", ante=1000, play=1000), community="6h 5h"))
    assert {w.wager: w.outcome for w in s.seat(1).wagers} == {
        "ante": Outcome.RETURNED, "six_card_bonus": Outcome.RETURNED, "progressive": Outcome.RETURNED}


def test_xtreme_method_c_security_card_is_audited_for_duplicates() -> None:
    data = rnd(XTREME, seat(1, "Kc 2d 5s", ante=1000, play=1000), community="6h 5h", dealing="C",
               out_of_play=[{"card": "Ad", "role": "security"}, {"card": "Kc", "role": "burn"}])
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "out_of_play[1].card"
    data["out_of_play"][1]["card"] = "Qd"
    assert run(data).void is None
