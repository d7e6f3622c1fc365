"""Megalink Singapore Stud Poker (version 9): bet table, qualifier, kickers, progressive sharing."""

from __future__ import annotations

from typing import Any

import pytest

from cardshoe.settlement import Outcome, RoundError, parse_round
from settlement_helpers import POOL, RESET, amounts, dealer_cards, make_round, run

GAME = "megalink-singapore-stud-poker"


def seat(n: int, cards: str, ante: int = 1000, bet: bool = True, progressive: int = 0) -> dict[str, Any]:
    wagers = {"ante": ante}
    if bet:
        wagers["bet"] = 2 * ante
    if progressive:
        wagers["progressive"] = progressive
    return {"seat": n, "wagers": wagers, "decisions": {"ante": "bet" if bet else "fold"}, "cards": cards.split()}


def stud(*seats: dict[str, Any], dealer: str | None = None, qualifying: bool = True, **fields: Any) -> dict[str, Any]:
    used = [c for s in seats for c in s["cards"]]
    cards = dealer.split() if dealer else dealer_cards(used, 5, qualifying=qualifying)
    return make_round(GAME, list(seats), dealer={"cards": cards}, **fields)


@pytest.mark.parametrize(
    ("cards", "odds"),
    [
        ("As Ks Qs Js Ts", 250),
        ("9h 8h 7h 6h 5h", 50),
        ("9c 9d 9h 9s 2c", 20),
        ("9c 9d 9h 3s 3c", 7),
        ("Kd 9d 8d 3d 2d", 5),
        ("Ac 2d 3h 4s 5c", 4),  # the wheel (3.3.1.2)
        ("9c 9d 9h Js 3c", 3),
        ("9c 9d 3h 3s Jc", 2),
        ("2c 2d 5h 7s 8c", 1),  # One Pair or Lower
        ("Ac Kh Qd 6c 3h", 1),  # high card beating A-K-J-9-x
    ],
)
def test_bet_every_line_when_the_player_wins(cards: str, odds: int) -> None:
    s = run(stud(seat(1, cards), dealer=None if cards != "Ac Kh Qd 6c 3h" else "As Kd Jh 9c 4s"))
    got = amounts(s, 1)
    assert got["ante"] == ("win", 2000, 1000)  # 4.1.1 1 to 1
    assert got["bet"] == ("win", 2000 + odds * 2000, odds * 2000)  # 4.1.2 on the bet, twice the ante
    assert s.seat(1).wager("bet").rules == ("3.10.3", "3.10.3.1", "4.1.2")


def test_dealer_with_no_hand() -> None:
    # 3.10.2: A-Q high is "No hand": bets returned, antes paid, progressive still paid (3.10.2.3).
    s = run(stud(seat(1, "9c 9d 9h 3s 3c", progressive=100), seat(2, "5c 6d 8h Js 2c"), dealer="As Qd 7h 4c 3d"))
    for n in (1, 2):
        got = amounts(s, n)
        assert got["ante"] == ("win", 2000, 1000) and got["bet"] == ("returned", 2000, 0)
        assert s.seat(n).wager("bet").rules == ("3.10.2", "3.10.2.1")
    prog = s.seat(1).wager("progressive")
    assert prog.paid == 80 * 100 and "3.10.2.3" in prog.rules


@pytest.mark.parametrize(
    ("player", "dealer", "outcome"),
    [
        ("Qc Qd 5h 5s 9c", "Qh Qs 4h 4s Kc", "win"),  # 3.12.2: second pair decides
        ("Qc Qd 5h 5s 9c", "Qh Qs 5d 5c Kc", "lose"),  # then the odd card
        ("Qc Qd 5h 5s 9c", "Qh Qs 5d 5c 9d", "push"),
        ("8c 8d Ah 7s 5c", "8h 8s Ad 7c 4h", "win"),  # 3.12.3: the third kicker
        ("8c 8d Ah 7s 4c", "8h 8s Ad 7c 4h", "push"),
        ("6c 5d 4h 3s 2c", "Ac 2d 3h 4s 5h", "win"),  # 3.12.4: the wheel is the lowest straight
        ("Tc Td Th 2s 2c", "9c 9d 9h As Ac", "win"),  # 3.12.5: full houses by the three of a kind
        ("As Kd 7h 4c 2s", "Ah Kc 7d 4s 2h", "push"),  # 3.12.1
        ("As Kd 7h 4c 2s", "Ah Kc 8d 4s 2h", "lose"),
    ],
)
def test_comparison_and_kickers(player: str, dealer: str, outcome: str) -> None:
    s = run(stud(seat(1, player), dealer=dealer))
    got = amounts(s, 1)
    assert got["ante"][0] == outcome and got["bet"][0] == outcome
    if outcome == "lose":
        assert got["ante"][2] == -1000 and got["bet"][2] == -2000
    if outcome == "push":
        assert s.seat(1).wager("bet").rules == ("3.10.3", "3.10.4", "3.12.1")


def test_fold_loses_the_ante_and_keeps_the_progressive() -> None:
    # 3.9.1
    s = run(stud(seat(1, "9c 9d 9h 3s 3c", bet=False, progressive=300)))
    got = amounts(s, 1)
    assert got["ante"] == ("lose", 0, -1000) and "bet" not in got
    assert got["progressive"] == ("win", 80 * 300, 79 * 300)  # 80 for 1, 3x multiplied (3.5.3.1)


def test_declined_comparison() -> None:
    # 3.10.1
    declined = seat(1, "9c 9d 9h 3s 3c", progressive=100) | {"declined_comparison": True}
    s = run(stud(declined))
    got = amounts(s, 1)
    assert got["ante"][0] == "lose" and got["bet"][0] == "lose" and got["progressive"][0] == "lose"


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize(
    ("cards", "odds"),
    [("9c 9d 9h 9s 2c", 400), ("9c 9d 9h 3s 3c", 80), ("Kd 9d 8d 3d 2d", 40), ("6c 7d 8h 9s Tc", 20),
     ("9c 9d 9h Js 3c", 0)],
)
def test_progressive_fixed_odds_multiplied(k: int, cards: str, odds: int) -> None:
    s = run(stud(seat(1, cards, progressive=100 * k)))
    assert s.seat(1).wager("progressive").paid == odds * 100 * k


def test_two_royal_flushes_share_pool_and_reset() -> None:
    # 3.15.1: the displayed jackpot and one reset amount added and divided equally.
    s = run(stud(seat(1, "As Ks Qs Js Ts", progressive=100), seat(2, "Ah Kh Qh Jh Th", progressive=500),
                 dealer="Ad Kd 9c 7c 2c"))
    share = (POOL + RESET) // 2
    assert s.seat(1).wager("progressive").paid == share
    assert s.seat(2).wager("progressive").paid == share  # not multiplied by 5 (3.5.3.1)
    assert "3.15.1" in s.seat(1).wager("progressive").rules
    assert s.jackpot is not None and s.jackpot.pool_after == RESET + (POOL + RESET - 2 * share)
    assert [m.kind for m in s.jackpot.movements] == ["seed", "payout", "payout", "reset"]


def test_three_royals_share_with_remainder_left_in_the_pool() -> None:
    data = stud(seat(1, "As Ks Qs Js Ts", progressive=100), seat(2, "Ah Kh Qh Jh Th", progressive=100),
                seat(3, "Ad Kd Qd Jd Td", progressive=100), dealer="Ac Kc 9c 7c 2h",
                jackpot={"pool": 1_000_001, "reset": 500_000})
    s = run(data)
    total = 1_000_001 + 2 * 500_000
    share = total // 3
    assert all(s.seat(n).wager("progressive").paid == share for n in (1, 2, 3))
    assert s.jackpot is not None and s.jackpot.pool_after == 500_000 + total - 3 * share


def test_straight_flushes_share_and_royal_is_paid_last() -> None:
    # 3.15.2 then 3.15.3
    s = run(stud(seat(1, "9h 8h 7h 6h 5h", progressive=100), seat(2, "9c 8c 7c 6c 5c", progressive=100),
                 seat(3, "As Ks Qs Js Ts", progressive=100), dealer="Ad Kd 9s 7s 2d"))
    sf_total = POOL // 10 + RESET // 10
    assert s.seat(1).wager("progressive").paid == sf_total // 2
    assert "3.15.2" in s.seat(1).wager("progressive").rules
    royal = s.seat(3).wager("progressive")
    assert royal.paid == POOL - POOL // 10 and "3.15.3" in royal.rules
    assert s.jackpot is not None and s.jackpot.pool_after == RESET


def test_bet_must_be_twice_the_ante() -> None:
    data = stud(seat(1, "9c 9d 9h 3s 3c"))
    data["seats"][0]["wagers"]["bet"] = 1000
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "seats[0].wagers.bet" and "2 x the ante" in str(err.value)


def test_absent_player_returns_ante_and_progressive() -> None:
    # 5.11
    absent = {"seat": 1, "wagers": {"ante": 1000, "progressive": 100}, "cards": [], "absent": True}
    s = run(stud(absent, seat(2, "9c 9d 9h 3s 3c")))
    assert [(w.wager, w.outcome, w.rules) for w in s.seat(1).wagers] == [
        ("ante", Outcome.RETURNED, ("5.11",)), ("progressive", Outcome.RETURNED, ("5.11",))]


def test_over_maximum_bet_paid_to_the_maximum() -> None:
    # 5.14: ante max 250000, so the bet's max is 500000 (twice, docs/round-format.md).
    s = run(stud(seat(1, "9c 9d 9h 3s 3c", ante=300000)))
    bet = s.seat(1).wager("bet")
    assert bet.net == 7 * 500000 and bet.paid == 600000 + 7 * 500000
    assert bet.limit is not None and bet.limit.excess_returned == 100000
