"""Three Card Poker (MBS, version 5): every pay line, decision and irregularity path.

Rule numbers are those of the Three Card Poker v5 document.
"""

from __future__ import annotations

from typing import Any

import pytest

from cardshoe.settlement import Outcome, RoundError, parse_round
from settlement_helpers import POOL, RESET, amounts, dealer_cards, make_round, run

GAME = "three-card-poker"


def seat(n: int, cards: str, **wagers: int) -> dict[str, Any]:
    s: dict[str, Any] = {"seat": n, "wagers": wagers, "cards": cards.split()}
    if "ante" in wagers:
        s["decisions"] = {"ante": "play" if "play" in wagers else "fold"}
    return s


def tcp(*seats: dict[str, Any], dealer: str | None = None, **fields: Any) -> dict[str, Any]:
    used = [c for s in seats for c in s["cards"]]
    cards = dealer.split() if dealer else dealer_cards(used)
    return make_round(GAME, list(seats), dealer={"cards": cards}, **fields)


# --- 4.3 Pair Plus, every line; 3.12.5 paid irrespective of the dealer's hand -----------------

@pytest.mark.parametrize(
    ("cards", "odds"),
    [
        ("As Ks Qs", 40),  # Royal Flush/Straight Flush 40 to 1
        ("8h 7h 6h", 40),
        ("Th Ts Tc", 30),  # Three of a Kind
        ("8d 7c 6h", 5),  # Straight
        ("Th 4h 2h", 4),  # Flush
        ("Ac Ah 8d", 1),  # Pair
        ("Qc Th 6d", None),  # three odd cards lose
    ],
)
def test_pair_plus_every_line(cards: str, odds: int | None) -> None:
    s = run(tcp(seat(1, cards, pair_plus=1000)))
    outcome, paid, net = amounts(s, 1)["pair_plus"]
    if odds is None:
        assert (outcome, paid, net) == ("lose", 0, -1000)
    else:
        assert (outcome, paid, net) == ("win", 1000 + odds * 1000, odds * 1000)
    assert "4.3" in s.seat(1).wager("pair_plus").rules


# --- 4.2 Ante Bonus, every line; 3.12.4 ------------------------------------------------------

@pytest.mark.parametrize(
    ("cards", "odds"),
    [
        ("As Ks Qs", 5),
        ("9c 8c 7c", 5),
        ("5c 5d 5h", 4),
        ("Ac 2d 3h", 1),  # A-2-3 is a straight (3.3.1.2)
        ("Jh 8h 3h", None),  # a flush has no Ante Bonus
        ("Ac Ad 8d", None),
    ],
)
def test_ante_bonus_every_line(cards: str, odds: int | None) -> None:
    s = run(tcp(seat(1, cards, ante=2000, play=2000), dealer="Qd 7s 2c"))
    got = amounts(s, 1)
    if odds is None:
        assert "ante_bonus" not in got
    else:
        assert got["ante_bonus"] == ("win", odds * 2000, odds * 2000)
        assert s.seat(1).wager("ante_bonus").stake == 0
        assert s.seat(1).wager("ante_bonus").rules == ("3.12.4", "4.2")


def test_ante_bonus_paid_even_when_the_ante_loses() -> None:
    # 3.12.4 "irrespective of the Dealer's hand": straight loses to the dealer's trips.
    s = run(tcp(seat(1, "6c 7d 8h", ante=1000, play=1000), dealer="Kd Kc Ks"))
    got = amounts(s, 1)
    assert got["ante"] == ("lose", 0, -1000) and got["play"] == ("lose", 0, -1000)
    assert got["ante_bonus"] == ("win", 1000, 1000)


# --- 4.4 Progressive, every line ----------------------------------------------------------------

@pytest.mark.parametrize(
    ("cards", "expected_paid"),
    [
        ("As Ks Qs", POOL),  # 100% of the Progressive Jackpot
        ("Ah Kh Qh", 125000),  # $1,250; 3.20.2 not also $175 as a Straight Flush
        ("Ad Kd Qd", 125000),
        ("Ac Kc Qc", 125000),
        ("Js Ts 9s", 17500),
        ("4c 4d 4h", 15000),
        ("Jc Td 9h", 1500),
        ("Kh 8h 2h", 0),  # flush: no line
        ("Kh Kd 2h", 0),
    ],
)
def test_progressive_every_line(cards: str, expected_paid: int) -> None:
    # Pair Plus only as the base wager, so no Envy Bonus is involved (3.15).
    s = run(tcp(seat(2, cards, pair_plus=1000, progressive=500)))
    prog = s.seat(2).wager("progressive")
    assert prog.paid == expected_paid and prog.net == expected_paid - 500
    assert prog.outcome is (Outcome.WIN if expected_paid else Outcome.LOSE)
    assert s.jackpot is not None
    if expected_paid == POOL:
        assert s.jackpot.pool_after == RESET
        assert [(m.kind, m.amount) for m in s.jackpot.movements] == [("payout", POOL), ("reset", RESET)]
    else:
        assert s.jackpot.pool_after == POOL  # fixed amounts are paid by the table


def test_royal_of_spades_paid_after_lower_hands() -> None:
    # 3.20.1: the Royal Flush of spades is paid after the qualified lower hands.
    s = run(tcp(seat(1, "Js Ts 9s", pair_plus=1000, progressive=500), seat(2, "As Ks Qs", pair_plus=1000, progressive=500)))
    royal = s.seat(2).wager("progressive")
    assert "3.20.1" in royal.rules and royal.paid == POOL
    assert s.seat(1).wager("progressive").paid == 17500


# --- 3.14 / 3.15 Envy Bonus ---------------------------------------------------------------------

def test_envy_bonus_to_every_other_progressive_wager() -> None:
    s = run(tcp(
        seat(1, "Ah Kh Qh", ante=1000, play=1000, progressive=500),
        seat(3, "2c 5d 9s", ante=1000, progressive=500),  # folded, still gets it
        seat(5, "7c 7d Jh", pair_plus=1000, progressive=500),
        seat(6, "3c 8d Td", ante=1000, play=1000),  # no progressive wager: no Envy Bonus
    ))
    assert s.seat(1).wager("progressive").paid == 125000  # its own hand, no Envy on itself
    assert s.seat(3).wager("progressive").paid == 5000  # $50 Envy for a non-spades royal
    assert s.seat(3).wager("progressive").rules[-1] == "3.14"
    assert s.seat(5).wager("progressive").paid == 5000
    assert "progressive" not in amounts(s, 6)


@pytest.mark.parametrize("cards", ["Ah Kh Qh", "As Ks Qs"])
def test_a_top_hand_with_no_progressive_wager_at_the_table_settles_without_a_progressive_limit(cards: str) -> None:
    """3.14 pays the Envy Bonus only on progressive wagers; with none at the table there is
    nothing to pay it on, and the round format requires limits only for the wagers placed."""
    data = tcp(seat(1, cards, ante=1000, play=1000), seat(4, "2c 5d 9c", ante=1000, play=1000),
               jackpot=None)
    del data["limits"]["progressive"]
    s = run(data)
    assert s.seat(1).wager("ante").outcome is Outcome.WIN
    assert all(w.wager != "progressive" for n in (1, 4) for w in s.seat(n).wagers)


def test_two_royals_each_pay_envy_to_the_other() -> None:
    s = run(tcp(
        seat(1, "As Ks Qs", ante=1000, play=1000, progressive=500),
        seat(2, "Ah Kh Qh", ante=1000, play=1000, progressive=500),
        seat(4, "2c 5d 9c", ante=1000, progressive=500),
    ))
    assert s.seat(1).wager("progressive").paid == POOL + 5000
    assert s.seat(2).wager("progressive").paid == 125000 + 25000
    assert s.seat(4).wager("progressive").paid == 25000 + 5000


def test_envy_exclusion_for_pair_plus_only_hand() -> None:
    # 3.15: a Pair-Plus-only hand making a top-two hand gives the others no Envy Bonus.
    s = run(tcp(
        seat(1, "As Ks Qs", pair_plus=1000, progressive=500),
        seat(2, "2c 5d 9c", ante=1000, progressive=500),
    ))
    assert s.seat(1).wager("progressive").paid == POOL
    assert s.seat(2).wager("progressive").outcome is Outcome.LOSE
    assert any("3.15" in note for note in s.notes)


def test_no_envy_between_seats_of_the_same_player() -> None:
    # 1.1.4: the Envy Bonus is paid on *another* Player's hand; blind betting on two seats.
    one = seat(1, "Ah Kh Qh", ante=1000, play=1000, progressive=500) | {"player": "P"}
    two = seat(2, "2c 5d 9c", ante=1000, progressive=500) | {"player": "P", "viewed": False}
    other = seat(3, "3c 6d Tc", ante=1000, progressive=500)
    s = run(tcp(one, two, other))
    assert s.seat(2).wager("progressive").outcome is Outcome.LOSE
    assert s.seat(3).wager("progressive").paid == 5000


def test_envy_needs_the_hitting_hand_exposed() -> None:
    # 3.10.1: a declined hand has no winning progressive combination, so it triggers nothing.
    s = run(tcp(
        seat(1, "Ah Kh Qh", ante=1000, play=1000, progressive=500) | {"declined_comparison": True},
        seat(2, "2c 5d 9c", ante=1000, progressive=500),
    ))
    assert s.seat(1).wager("progressive").outcome is Outcome.LOSE
    assert s.seat(2).wager("progressive").outcome is Outcome.LOSE


# --- 3.10-3.12, 3.16-3.17: comparison, qualifier, ties and kickers ------------------------------

@pytest.mark.parametrize(
    ("player", "dealer", "outcome"),
    [
        ("Qc Jd 9h", "Qd Js 8c", "win"),  # 3.17: third card decides
        ("8c 8d Kh", "8h 8s Qc", "win"),  # 3.17.2: pair, then the odd card
        ("8c 8d Qh", "8h 8s Kc", "lose"),
        ("Kd 7c 2h", "Kc 7d 2s", "push"),  # 3.17.1: same ranks, stand-off
        ("Ac 2d 3h", "2c 3d 4s", "lose"),  # 3.17.3: A-2-3 is the lowest straight
        ("Ac Kd Qh", "Jc Td 9s", "win"),
        ("4c 5d 6h", "Kc 9c 2c", "win"),  # 3.16: straight above flush
        ("8c 9c Tc", "8d 9d Td", "push"),  # 3.17.4
        ("Ac Kc Qc", "2d 3d 4d", "win"),
        ("2c 2d 2h", "Ac Kc Qc", "lose"),  # v5 royal flush above three of a kind (3.16.1)
    ],
)
def test_comparison(player: str, dealer: str, outcome: str) -> None:
    s = run(tcp(seat(1, player, ante=1000, play=1000), dealer=dealer))
    got = amounts(s, 1)
    net = {"win": 1000, "lose": -1000, "push": 0}[outcome]
    assert got["ante"][0] == outcome and got["ante"][2] == net
    assert got["play"][0] == outcome and got["play"][2] == net


def test_dealer_not_qualifying_pays_ante_and_pushes_play() -> None:
    # 3.11: Jack high does not qualify; 3.11.1 no payment on Play, 3.11.2 Ante paid.
    s = run(tcp(seat(1, "9c 5d 2h", ante=1000, play=1000, pair_plus=1000), dealer="Jc 8d 4s"))
    got = amounts(s, 1)
    assert got["ante"] == ("win", 2000, 1000) and got["play"] == ("push", 1000, 0)
    assert got["pair_plus"] == ("lose", 0, -1000)
    assert s.seat(1).wager("ante").rules == ("3.11", "3.11.2", "4.1")
    assert s.dealer is not None and not s.dealer.qualifies


def test_fold_loses_ante_keeps_pair_plus_and_progressive() -> None:
    # 3.9.1, 3.9.1.1
    s = run(tcp(seat(1, "8h 8d 2c", ante=1000, pair_plus=1000, progressive=500)))
    got = amounts(s, 1)
    assert got["ante"] == ("lose", 0, -1000)
    assert got["pair_plus"] == ("win", 2000, 1000)
    assert "3.9.1.1" in s.seat(1).wager("pair_plus").rules
    assert got["progressive"] == ("lose", 0, -500)
    assert "3.9.1" in s.seat(1).wager("progressive").rules


def test_folded_hand_still_wins_the_progressive() -> None:
    s = run(tcp(seat(1, "Jc Td 9h", ante=1000, progressive=500)))
    assert amounts(s, 1)["progressive"] == ("win", 1500, 1000)


def test_declined_comparison() -> None:
    # 3.10.1: deemed lower than the dealer, no winning progressive combination.
    declined = seat(1, "Js Ts 9s", ante=1000, play=1000, pair_plus=1000, progressive=500) | {"declined_comparison": True}
    s = run(tcp(declined, dealer="Kd 7c 2h"))
    got = amounts(s, 1)
    assert got["ante"] == ("lose", 0, -1000) and got["play"] == ("lose", 0, -1000)
    assert got["pair_plus"][0] == "lose" and got["progressive"][0] == "lose"
    assert "ante_bonus" not in got
    assert "3.10.1" in s.seat(1).wager("ante").rules


def test_declined_comparison_against_a_dealer_who_does_not_qualify() -> None:
    # 3.11 applies: there is no comparison to decline, the ante is paid and play returned.
    declined = seat(1, "9c 5d 2h", ante=1000, play=1000) | {"declined_comparison": True}
    s = run(tcp(declined, dealer="Jc 8d 4s"))
    assert amounts(s, 1)["ante"] == ("win", 2000, 1000)
    assert amounts(s, 1)["play"] == ("push", 1000, 0)


# --- 5.x irregularities -------------------------------------------------------------------------

def test_absent_player_hand_invalid_all_wagers_returned() -> None:
    # 5.11
    absent = {"seat": 2, "wagers": {"ante": 1000, "pair_plus": 1000, "progressive": 500},
              "cards": ["As", "Ks", "Qs"], "absent": True}
    s = run(tcp(absent, seat(3, "9c 5d 2h", ante=1000, play=1000)))
    for w in s.seat(2).wagers:
        assert (w.outcome, w.paid, w.rules) == (Outcome.RETURNED, w.stake, ("5.11",))
    assert s.jackpot is not None and s.jackpot.pool_after == POOL


def test_progressive_without_a_base_wager_is_returned() -> None:
    # 5.12.2
    s = run(tcp(seat(1, "As Ks Qs", progressive=500), seat(2, "9c 5d 2h", pair_plus=1000)))
    prog = s.seat(1).wager("progressive")
    assert (prog.outcome, prog.paid, prog.rules) == (Outcome.RETURNED, 500, ("5.12.2",))
    assert s.jackpot is not None and s.jackpot.pool_after == POOL


def test_over_the_maximum_paid_and_collected_to_the_maximum() -> None:
    # 5.14, ante max 500000: win pays on 500000; the 100000 excess goes back.
    s = run(tcp(seat(1, "As Kd 3h", ante=600000, play=600000), dealer="Kc 9d 2s"))
    ante = s.seat(1).wager("ante")
    assert (ante.outcome, ante.paid, ante.net) == (Outcome.WIN, 600000 + 500000, 500000)
    assert ante.limit is not None and ante.limit.rule == "5.14" and ante.limit.excess_returned == 100000
    s = run(tcp(seat(1, "Qs Jd 3h", ante=600000, play=600000), dealer="Kc 9d 2s"))
    ante = s.seat(1).wager("ante")
    assert (ante.outcome, ante.paid, ante.net) == (Outcome.LOSE, 100000, -500000)


def test_over_the_maximum_pair_plus_pays_odds_on_the_maximum() -> None:
    s = run(tcp(seat(1, "Th Ts Tc", pair_plus=150000)))  # max 100000
    pp = s.seat(1).wager("pair_plus")
    assert pp.paid == 150000 + 30 * 100000 and pp.net == 30 * 100000


def test_under_the_minimum_settled_once_then_returned() -> None:
    # 5.13: ante min 1000.
    s = run(tcp(seat(1, "As Kd 3h", ante=500, play=500), dealer="Kc 9d 2s"))
    ante = s.seat(1).wager("ante")
    assert (ante.outcome, ante.net) == (Outcome.WIN, 500)
    assert ante.limit is not None and ante.limit.under_minimum and ante.limit.rule == "5.13"
    again = seat(1, "As Kd 3h", ante=500, play=500) | {"under_minimum_settled_before": True}
    s = run(tcp(again, dealer="Kc 9d 2s"))
    assert [(w.wager, w.outcome, w.paid) for w in s.seat(1).wagers] == [
        ("ante", Outcome.RETURNED, 500), ("play", Outcome.RETURNED, 500)]


@pytest.mark.parametrize(
    ("kind", "rule"),
    [
        ("foreign_card", "5.1"),
        ("extra_or_missing_cards", "5.1"),
        ("unshuffled_cards", "5.1"),
        ("misdeal", "5.2"),
        ("dealer_card_count", "5.3"),
        ("exposed_cards", "5.4"),
        ("card_count", "5.8"),
    ],
)
def test_void_round_returns_every_wager(kind: str, rule: str) -> None:
    data = tcp(seat(1, "As Ks Qs", ante=1000, play=1000, progressive=500), seat(4, "9c 5d 2h", pair_plus=1000),
               irregularities=[{"kind": kind}])
    s = run(data)
    assert s.void is not None and s.void[0] == (rule,)
    for sr in s.seats:
        for w in sr.wagers:
            assert (w.outcome, w.paid, w.net) == (Outcome.VOID, w.stake, 0)
    assert s.jackpot is not None and s.jackpot.pool_after == POOL and not s.jackpot.movements


def test_void_round_may_have_wrong_counts_and_duplicates() -> None:
    data = make_round(GAME, [seat(1, "As Ks Qs Jd", ante=1000)], dealer={"cards": ["As", "2c"]},
                      irregularities=[{"kind": "foreign_card", "note": "second ace of spades"}])
    s = run(data)
    assert s.void is not None and "second ace of spades" in s.void[1]


def test_two_exposed_cards_void_one_does_not() -> None:
    one = [{"card": "Kd", "position": "dealer"}]
    s = run(tcp(seat(1, "9c 5d 2h", ante=1000, play=1000), exposures=one))
    assert s.void is None and any("5.4" in n for n in s.notes)
    two = one + [{"card": None, "position": "seat 1"}]
    s = run(tcp(seat(1, "9c 5d 2h", ante=1000, play=1000), exposures=two))
    assert s.void is not None and s.void[0] == ("5.4",)
    assert s.seat(1).wager("ante").outcome is Outcome.VOID


def test_wrong_number_of_cards_to_a_player() -> None:
    # 5.7: that hand removed, wagers returned; 5.7.1: another player withdraws.
    short = {"seat": 2, "wagers": {"ante": 1000}, "cards": ["9c", "5d"]}
    data = tcp(short, seat(3, "Qc Jd 5h", ante=1000, play=1000), seat(5, "7c 8d 9h", ante=1000, play=1000),
               irregularities=[{"kind": "player_card_count", "seats": [2], "withdrawn_seats": [3]}])
    s = run(data)
    assert s.seat(2).wager("ante").outcome is Outcome.RETURNED and s.seat(2).wager("ante").rules == ("5.7",)
    assert s.seat(3).wager("play").outcome is Outcome.RETURNED and s.seat(3).wager("play").rules == ("5.7.1",)
    assert s.seat(5).wager("ante").outcome is Outcome.WIN


def test_confidentiality_and_manager_decision_return_wagers() -> None:
    data = tcp(seat(1, "9c 5d 2h", ante=1000, play=1000), seat(2, "Qc Jd 5h", pair_plus=1000),
               irregularities=[{"kind": "confidentiality", "seats": [1]},
                               {"kind": "manager_decision", "effect": "return_wagers", "seats": [2],
                                "note": "dispute over a misplaced wager"}])
    s = run(data)
    assert s.seat(1).wager("ante").rules == ("5.9",)
    assert s.seat(2).wager("pair_plus").rules == ("6.1",)
    assert s.seat(2).wager("pair_plus").notes == ("dispute over a misplaced wager",)


def test_multiple_hands_in_error_viewed_hand_plays() -> None:
    # 5.10.1
    a = seat(2, "9c 5d 2h", ante=1000, play=1000) | {"player": "P", "viewed": False}
    b = seat(4, "Qc Jd 5h", ante=1000, play=1000) | {"player": "P", "viewed": True}
    s = run(tcp(a, b, irregularities=[{"kind": "multiple_hands", "seats": [2, 4]}]))
    assert s.seat(2).wager("ante").outcome is Outcome.RETURNED and s.seat(2).wager("ante").rules == ("5.10.1",)
    assert s.seat(4).wager("ante").outcome is not Outcome.RETURNED


def test_multiple_hands_in_error_none_viewed_first_dealt_plays() -> None:
    # 5.10.2
    a = seat(2, "9c 5d 2h", ante=1000, play=1000) | {"player": "P", "viewed": False}
    b = seat(4, "Qc Jd 5h", ante=1000, play=1000) | {"player": "P", "viewed": False}
    s = run(tcp(a, b, irregularities=[{"kind": "multiple_hands", "seats": [2, 4]}]))
    assert s.seat(2).wager("ante").outcome is not Outcome.RETURNED
    assert s.seat(4).wager("ante").rules == ("5.10.2",)


def test_power_failure_before_an_outcome_lets_players_withdraw() -> None:
    # 5.16.1: the withdrawing player withdraws all wagers; the others play on.
    data = tcp(seat(1, "9c 5d 2h", ante=1000, play=1000, pair_plus=1000), seat(3, "Qc Jd 5h", ante=1000, play=1000),
               power_failure={"outcome_established": False, "withdrawn_seats": [1]})
    s = run(data)
    assert all(w.outcome is Outcome.RETURNED and w.rules == ("5.16.1",) for w in s.seat(1).wagers)
    assert s.seat(3).wager("ante").outcome in (Outcome.WIN, Outcome.LOSE, Outcome.PUSH)


def test_power_failure_after_an_outcome_allows_no_withdrawal() -> None:
    # 5.16.2
    data = tcp(seat(1, "9c 5d 2h", ante=1000, play=1000),
               power_failure={"outcome_established": True, "withdrawn_seats": [1]})
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "power_failure.withdrawn_seats" and "5.16.2" in str(err.value)
    data["power_failure"]["withdrawn_seats"] = []
    assert any("5.16.2" in n for n in run(data).notes)


def test_void_before_the_decisions_needs_no_decisions() -> None:
    # 5.4 during the deal: nobody has decided yet.
    undecided = {"seat": 1, "wagers": {"ante": 1000, "progressive": 500}, "cards": ["9c", "5d", "2h"]}
    data = tcp(undecided, irregularities=[{"kind": "exposed_cards"}])
    assert run(data).seat(1).wager("ante").outcome is Outcome.VOID
    data["irregularities"] = []
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "seats[0].decisions.ante"


def test_blind_betting_settles_every_hand() -> None:
    # 1.1.3 / 3.4.1: one player, two seats, one viewed; both hands play to conclusion.
    viewed = seat(1, "As Kd 3h", ante=1000, play=1000) | {"player": "P"}
    blind = seat(2, "Qs Jd 3c", ante=1000, play=1000) | {"player": "P", "viewed": False}
    s = run(tcp(viewed, blind, dealer="Kc 9d 2s"))
    assert amounts(s, 1)["ante"] == ("win", 2000, 1000)
    assert amounts(s, 2)["ante"] == ("lose", 0, -1000)


def test_cards_exposed_after_the_deal_do_not_void() -> None:
    # 5.4 covers cards exposed *during the deal*.
    late = [{"card": "Kd", "position": "dealer", "during": "play"}, {"card": "9c", "position": "seat 1", "during": "play"}]
    s = run(tcp(seat(1, "9c 5d 2h", ante=1000, play=1000), dealer="Kd 7c 2s", exposures=late))
    assert s.void is None and s.seat(1).wager("ante").outcome is Outcome.LOSE
