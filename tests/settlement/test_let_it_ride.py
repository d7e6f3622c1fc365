"""Megalink Let It Ride (version 2): every pay line, the pull-backs, Magic Card, Lucky Player."""

from __future__ import annotations

from typing import Any

import pytest

from cardshoe.settlement import Outcome, RoundError, parse_round
from settlement_helpers import POOL, RESET, amounts, make_round, run

GAME = "megalink-let-it-ride"


def seat(n: int, cards: str, amount: int = 1000, one: str = "ride", two: str = "ride", progressive: int = 0) -> dict[str, Any]:
    wagers = {"one": amount, "two": amount, "dollar": amount}
    if progressive:
        wagers["progressive"] = progressive
    return {"seat": n, "wagers": wagers, "decisions": {"one": one, "two": two}, "cards": cards.split()}


def lir(*seats: dict[str, Any], community: str, magic: str | None = None, lucky: int | None = None,
        **fields: Any) -> dict[str, Any]:
    jackpot = {"pool": POOL, "reset": RESET, "magic_card": magic, "lucky_player": lucky}
    return make_round(GAME, list(seats), community=community.split(), jackpot=jackpot, **fields)


@pytest.mark.parametrize(
    ("cards", "community", "odds"),
    [
        ("As Ks Qs", "Js Ts", 1000),  # Royal Flush 1,000 to 1
        ("9h 8h 7h", "6h 5h", 200),  # Straight Flush
        ("9c 9d 9h", "9s 2c", 50),  # Four of a Kind
        ("9c 9d 9h", "2s 2c", 11),  # Full House
        ("Kd 9d 4d", "2d 7d", 8),  # Flush
        ("Ac 2d 3h", "4s 5c", 5),  # Straight, the wheel (3.21.6: ace low)
        ("9c 9d 9h", "Ks 2c", 3),  # Three of a Kind
        ("9c 9d 4h", "4s 2c", 2),  # Two Pairs
        ("Tc Td 4h", "8s 2c", 1),  # Pair of 10's
        ("Ac Ad 4h", "8s 2c", 1),  # Pair of Aces
        ("9c 9d 4h", "8s 2c", None),  # a pair of nines loses (3.18)
        ("Kc Qd 4h", "8s 2c", None),
    ],
)
def test_every_line_on_each_of_the_three_wagers(cards: str, community: str, odds: int | None) -> None:
    s = run(lir(seat(1, cards), community=community))
    for wager in ("one", "two", "dollar"):
        outcome, paid, net = amounts(s, 1)[wager]
        if odds is None:
            assert (outcome, paid, net) == ("lose", 0, -1000)
        else:
            assert (outcome, paid, net) == ("win", 1000 + odds * 1000, odds * 1000)
            assert "4.1.1" in s.seat(1).wager(wager).rules


@pytest.mark.parametrize(("one", "two"), [("ride", "ride"), ("withdraw", "ride"), ("ride", "withdraw"), ("withdraw", "withdraw")])
def test_pull_backs(one: str, two: str) -> None:
    # 3.8-3.10 the "1", 3.12-3.14 the "2"; 3.16 the "$" always plays.
    s = run(lir(seat(1, "Tc Td 4h", one=one, two=two), community="8s 2c"))
    got = amounts(s, 1)
    for wager, choice, rule in (("one", one, "3.10"), ("two", two, "3.14")):
        if choice == "withdraw":
            assert got[wager] == ("returned", 1000, 0)
            assert s.seat(1).wager(wager).rules == (rule,)
        else:
            assert got[wager] == ("win", 2000, 1000)
    assert got["dollar"] == ("win", 2000, 1000) and "3.16" in s.seat(1).wager("dollar").rules


@pytest.mark.parametrize(
    ("cards", "community", "paid"),
    [
        ("As Ks Qs", "Js Ts", POOL),  # 100% of the jackpot
        ("9h 8h 7h", "6h 5h", POOL // 10),  # 10%
        ("9c 9d 9h", "9s 2c", 500 * 100 + 100),  # Four of a Kind 500 to 1: the stake comes back
        ("9c 9d 9h", "2s 2c", 100 * 100 + 100),  # Full House 100 to 1
        ("Kd 9d 4d", "2d 7d", 50 * 100 + 100),  # Flush 50 to 1
        ("9c Td Jh", "Qs Kc", 0),  # no straight line in 4.2
    ],
)
def test_progressive_every_line(cards: str, community: str, paid: int) -> None:
    s = run(lir(seat(1, cards, progressive=100), community=community, magic="3c", lucky=7))
    prog = s.seat(1).wager("progressive")
    assert prog.paid == paid
    assert prog.outcome is (Outcome.WIN if paid else Outcome.LOSE)


def test_progressive_odds_scale_with_credits() -> None:
    # 3.5 "one or more credits": 3 credits of 100 on a Flush at 50 to 1.
    s = run(lir(seat(1, "Kd 9d 4d", progressive=300), community="2d 7d", magic="3c", lucky=7))
    assert s.seat(1).wager("progressive").paid == 50 * 300 + 300


def test_magic_card_in_the_players_three_cards() -> None:
    # 4.3: only the seat holding it; 4.5: 5 to 1
    s = run(lir(seat(1, "7h 8c 2d", progressive=100), seat(2, "3c 5d 9s", progressive=100),
                community="Kc Qd", magic="8c", lucky=7))
    assert amounts(s, 1)["progressive"] == ("win", 600, 500)
    assert "4.3" in s.seat(1).wager("progressive").rules
    assert amounts(s, 2)["progressive"] == ("lose", 0, -100)


def test_magic_card_in_the_community_cards_pays_every_progressive_wager() -> None:
    # 4.3.1; a seat without a progressive wager gets nothing
    s = run(lir(seat(1, "7h 8c 2d", progressive=100), seat(2, "3c 5d 9s", progressive=200), seat(3, "4c 6d Js"),
                community="Kc Qd", magic="Qd", lucky=7))
    assert amounts(s, 1)["progressive"] == ("win", 600, 500)
    assert amounts(s, 2)["progressive"] == ("win", 1200, 1000)
    assert "4.3.1" in s.seat(2).wager("progressive").rules
    assert "progressive" not in amounts(s, 3)


def test_lucky_player_needs_a_progressive_wager() -> None:
    # 4.4
    s = run(lir(seat(4, "7h 8c 2d", progressive=100), community="Kc Qd", magic="2s", lucky=4))
    assert amounts(s, 4)["progressive"] == ("win", 600, 500)
    s = run(lir(seat(4, "7h 8c 2d"), community="Kc Qd", magic="2s", lucky=4))
    assert "progressive" not in amounts(s, 4)


def test_hand_magic_and_lucky_add_up_with_the_stake_back_once() -> None:
    s = run(lir(seat(3, "9c 9d 9h", progressive=100), community="9s 2c", magic="9c", lucky=3))
    prog = s.seat(3).wager("progressive")
    assert prog.paid == 500 * 100 + 5 * 100 + 5 * 100 + 100
    assert [line.label for line in prog.lines] == ["Four of a Kind", "Magic Card 9c", "Lucky Player"]


def test_two_straight_flushes_paid_one_after_the_other() -> None:
    # No sharing clause in Let It Ride: each from the pool as it stands, in seat order.
    s = run(lir(seat(1, "6h 7h 8h", progressive=100), seat(5, "Jh Qh Kh", progressive=100),
                community="9h Th", magic="2c", lucky=7))
    first = POOL // 10
    second = (POOL - first) // 10
    assert s.seat(1).wager("progressive").paid == first
    assert s.seat(5).wager("progressive").paid == second
    assert s.jackpot is not None and s.jackpot.pool_after == POOL - first - second


def test_three_wagers_must_be_equal() -> None:
    data = lir(seat(1, "Tc Td 4h"), community="8s 2c")
    data["seats"][0]["wagers"]["dollar"] = 2000
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert "3.4" in str(err.value)


def test_decisions_are_required() -> None:
    data = lir(seat(1, "Tc Td 4h"), community="8s 2c")
    del data["seats"][0]["decisions"]["two"]
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "seats[0].decisions.two"


def test_absent_player_lets_it_ride() -> None:
    # Let It Ride has no absent-player rule; 1.1.4/3.16: a wager not taken back rides.
    absent = {"seat": 2, "wagers": {"one": 1000, "two": 1000, "dollar": 1000}, "cards": ["Tc", "Td", "4h"],
              "absent": True}
    s = run(lir(absent, community="8s 2c"))
    assert [w.outcome for w in s.seat(2).wagers] == [Outcome.WIN] * 3


def test_irregularities_cite_the_let_it_ride_numbers() -> None:
    for kind, rule in (("foreign_card", "5.1"), ("extra_or_missing_cards", "5.2"), ("misdeal", "5.3"),
                       ("community_card_count", "5.4"), ("exposed_cards", "5.5")):
        s = run(lir(seat(1, "Tc Td 4h"), community="8s 2c", irregularities=[{"kind": kind}]))
        assert s.void is not None and s.void[0] == (rule,)


def test_no_dealer_in_let_it_ride() -> None:
    data = lir(seat(1, "Tc Td 4h"), community="8s 2c", dealer={"cards": ["As", "Ks", "Qs"]})
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "dealer.cards"
    with pytest.raises(RoundError) as err:
        parse_round(lir(seat(1, "Tc Td 4h"), community="8s 2c", irregularities=[{"kind": "dealer_card_count"}]))
    assert err.value.field == "irregularities[0].kind"
