"""Irregularities (5.x) and table limits, black box, from the rules and docs/round-format.md."""

from __future__ import annotations

from typing import Any

import pytest

from blackbox_helpers import LIR, MTCP, SSP, TCP, XT, check, make_round, seat, settle_dict, wager

JP = {"pool": 1_000_000, "reset": 500_000}
LIR_JP = {"pool": 1_000_000, "reset": 500_000, "magic_card": "2c", "lucky_player": 7}


def sample_round(game: str, **extra: Any) -> dict[str, Any]:
    """A two-seat round of the game in which seat 1 would win big and seat 3 would lose."""
    if game in (TCP, MTCP):
        seats = [
            seat(1, ["As", "Ks", "Qs"], {"ante": 1000, "play": 1000, "pair_plus": 500, "progressive": 100}, {"ante": "play"}),
            seat(3, ["7c", "4d", "2s"], {"ante": 1000, "play": 1000, "progressive": 100}, {"ante": "play"}),
        ]
        comm = ["Js", "Ts"] if game == MTCP else []
        return make_round(game, seats, dealer=["Kd", "9c", "3h"], community=comm, jackpot=JP, **extra)
    if game == XT:
        w = {"ante": 1000, "play": 1000, "pair_plus": 500, "six_card_bonus": 500, "progressive": 300}
        seats = [
            seat(1, ["As", "Ks", "Qs"], w, {"ante": "play"}),
            seat(3, ["7c", "4d", "2s"], {"ante": 1000, "play": 1000}, {"ante": "play"}),
        ]
        return make_round(game, seats, dealer=["Kd", "9c", "3h"], community=["Js", "Ts"], jackpot=JP, dealing="A", **extra)
    if game == SSP:
        seats = [
            seat(1, ["As", "Ks", "Qs", "Js", "Ts"], {"ante": 1000, "bet": 2000, "progressive": 200}, {"ante": "bet"}),
            seat(3, ["7c", "5d", "4d", "3h", "2s"], {"ante": 1000, "bet": 2000}, {"ante": "bet"}),
        ]
        return make_round(game, seats, dealer=["Ad", "Kc", "9h", "6c", "3c"], jackpot=JP, **extra)
    seats = [
        seat(1, ["As", "Ks", "Qs"], {"one": 1000, "two": 1000, "dollar": 1000, "progressive": 100}, {"one": "ride", "two": "ride"}),
        seat(3, ["7c", "4d", "2s"], {"one": 1000, "two": 1000, "dollar": 1000}, {"one": "ride", "two": "ride"}),
    ]
    return make_round(LIR, seats, community=["Js", "Ts"], jackpot=LIR_JP, **extra)


ALL = [TCP, MTCP, XT, SSP, LIR]


def assert_everything_returned(r: dict[str, Any]) -> None:
    for s in r["seats"]:
        for w in s["wagers"]:
            if w["wager"] == "ante_bonus":
                assert w["paid"] == 0, w
                continue
            assert w["paid"] == w["stake"] and w["net"] == 0, w
    assert r["totals"]["net"] == 0
    assert r["totals"]["paid"] == r["totals"]["stake"]


@pytest.mark.parametrize("game", ALL)
@pytest.mark.parametrize("kind", ["foreign_card", "extra_or_missing_cards", "misdeal", "card_count"])
def test_5_1_5_2_5_8_void_round_returns_every_wager(game: str, kind: str) -> None:
    # 5.1 / 5.2 / 5.8 (LIR 5.1-5.3): the round is void, every wager returned, the royal unpaid.
    r = settle_dict(sample_round(game, irregularities=[{"kind": kind}]))
    assert r["void"] is not None
    assert_everything_returned(r)
    for s in r["seats"]:
        for w in s["wagers"]:
            if w["wager"] != "ante_bonus":
                assert w["outcome"] == "void"
    if r["jackpot"] is not None:
        assert r["jackpot"]["pool_after"] == 1_000_000


@pytest.mark.parametrize("game", ALL)
def test_5_4_two_cards_exposed_during_deal_voids(game: str) -> None:
    # TCP/MTCP/XT/SSP 5.4, LIR 5.5: two or more cards exposed during the deal: void.
    exp = [{"card": "As", "position": "seat 1", "during": "deal"}, {"card": "7c", "position": "seat 3", "during": "deal"}]
    r = settle_dict(sample_round(game, exposures=exp))
    assert r["void"] is not None
    assert set(r["void"]["rules"]) & {"5.4", "5.5"}
    assert_everything_returned(r)


def test_5_4_one_exposed_card_stands() -> None:
    # One card exposed: the round stands (5.4 needs two): royal of spades still pays the pool.
    exp = [{"card": "As", "position": "seat 1", "during": "deal"}]
    r = settle_dict(sample_round(TCP, exposures=exp))
    assert r["void"] is None
    check(r, 1, "progressive", 100, 1_000_000)


def test_5_4_exposures_during_play_do_not_void_reading_30() -> None:
    exp = [{"card": "As", "position": "seat 1", "during": "play"}, {"card": "7c", "position": "seat 3", "during": "play"}]
    r = settle_dict(sample_round(TCP, exposures=exp))
    assert r["void"] is None


def test_5_3_dealer_card_count_voids() -> None:
    r = settle_dict(sample_round(SSP, irregularities=[{"kind": "dealer_card_count"}]))
    assert r["void"] is not None and "5.3" in r["void"]["rules"]
    assert_everything_returned(r)


def test_mtcp_5_3_community_card_count_voids() -> None:
    r = settle_dict(sample_round(MTCP, irregularities=[{"kind": "community_card_count"}]))
    assert r["void"] is not None and "5.3" in r["void"]["rules"]
    assert_everything_returned(r)


def test_6_1_manager_decision_void_round() -> None:
    r = settle_dict(sample_round(XT, irregularities=[{"kind": "manager_decision", "effect": "void_round"}]))
    assert r["void"] is not None
    assert_everything_returned(r)


# --- 5.11 absent player ------------------------------------------------------------------------


def test_tcp_5_11_absent_player_returns_ante_pair_plus_progressive() -> None:
    # Seat 1 (ante, pair plus, progressive, royal of spades) is absent at the decision: hand
    # invalid, ante 1000, pair plus 500, progressive 100 returned; no pool, no Envy for seat 3.
    r = sample_round(TCP)
    s1 = r["seats"][0]
    s1["absent"] = True
    del s1["decisions"]
    del s1["wagers"]["play"]
    out = settle_dict(r)
    check(out, 1, "ante", 1000, 1000)
    check(out, 1, "pair_plus", 500, 500)
    check(out, 1, "progressive", 100, 100)
    for w in out["seats"][0]["wagers"]:
        assert w["outcome"] == "returned" or w["paid"] == 0
    check(out, 3, "progressive", 100, 0)  # no Envy Bonus from an invalid hand
    assert out["jackpot"]["pool_after"] == 1_000_000


def test_xt_5_11_absent_player_returns_six_card_bonus_too() -> None:
    r = sample_round(XT)
    s1 = r["seats"][0]
    s1["absent"] = True
    del s1["decisions"]
    del s1["wagers"]["play"]
    out = settle_dict(r)
    check(out, 1, "ante", 1000, 1000)
    check(out, 1, "pair_plus", 500, 500)
    check(out, 1, "six_card_bonus", 500, 500)
    check(out, 1, "progressive", 300, 300)


def test_ssp_5_11_absent_player_returns_ante_and_progressive() -> None:
    r = sample_round(SSP)
    s1 = r["seats"][0]
    s1["absent"] = True
    del s1["decisions"]
    del s1["wagers"]["bet"]
    out = settle_dict(r)
    check(out, 1, "ante", 1000, 1000)
    check(out, 1, "progressive", 200, 200)
    assert out["jackpot"]["pool_after"] == 1_000_000


def test_5_11_pair_plus_only_seat_has_no_decision_reading_25() -> None:
    # Reading 25: a pair-plus-only seat marked absent is settled normally: pair 1 to 1 -> 1000.
    s = seat(2, ["8s", "8h", "3c"], {"pair_plus": 500}, absent=True)
    out = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "3h"]))
    check(out, 2, "pair_plus", 500, 1000)


# --- 5.12 progressive without a base wager -------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "cards", "community", "dealer", "stake"),
    [
        # TCP: a straight would pay SGD 15; the wager is invalid and the 100 returned (5.12.2).
        (TCP, ["9c", "8d", "7h"], [], ["Kd", "5c", "2h"], 100),
        # MTCP: 7-8-9 hearts + T-J hearts would be a straight flush.
        (MTCP, ["9h", "8h", "7h"], ["Th", "Jh"], ["Kd", "5c", "2h"], 100),
        # XT: flush would pay 40 for 1.
        (XT, ["2h", "8h", "5h"], ["Th", "Jh"], ["Kd", "5c", "3d"], 300),
        # SSP: four 9s would pay 400 for 1.
        (SSP, ["9s", "9h", "9d", "9c", "3d"], [], ["As", "Kd", "7h", "4c", "2s"], 200),
    ],
)
def test_5_12_2_progressive_without_base_wager_returned(
    game: str, cards: list[str], community: list[str], dealer: list[str], stake: int
) -> None:
    s = seat(4, cards, {"progressive": stake})
    out = settle_dict(make_round(game, [s], dealer=dealer, community=community, jackpot=JP, dealing="A" if game == XT else "automated"))
    w = wager(out, 4, "progressive")
    assert (w["outcome"], w["paid"], w["net"]) == ("returned", stake, 0)
    assert out["jackpot"]["pool_after"] == 1_000_000


def test_lir_progressive_without_base_wager_returned_reading_26() -> None:
    s = seat(4, ["9h", "8h", "7h"], {"progressive": 100})
    out = settle_dict(make_round(LIR, [s], community=["Th", "Jh"], jackpot=LIR_JP))
    w = wager(out, 4, "progressive")
    assert (w["outcome"], w["paid"]) == ("returned", 100)


def test_xt_5_12_six_card_bonus_is_a_base_wager() -> None:
    # XT 3.5 / 5.12: a Six Card Bonus is a base for the progressive: flush 40 for 1 -> 4000.
    s = seat(4, ["2h", "8h", "5h"], {"six_card_bonus": 500, "progressive": 100})
    out = settle_dict(make_round(XT, [s], dealer=["Kd", "5c", "3d"], community=["Th", "Jh"], jackpot=JP, dealing="A"))
    check(out, 4, "progressive", 100, 4000)


# --- 5.13 / 5.14 table limits -----------------------------------------------------------------------


def tcp_limits(**over: dict[str, int]) -> dict[str, dict[str, int]]:
    lim = {"ante": {"min": 1000, "max": 5000}, "pair_plus": {"min": 500, "max": 1000}, "progressive": {"min": 100, "max": 100}}
    lim.update(over)
    return lim


def test_5_14_over_maximum_win_paid_to_maximum_only() -> None:
    # Ante/play 8000 with max 5000 (play defaults to ante's limits): settled on 5000, the 3000
    # excess handed back: paid 8000 + 5000 = 13000 each (net +5000). Player pair beats K-9-3.
    s = seat(1, ["8s", "8h", "3c"], {"ante": 8000, "play": 8000}, {"ante": "play"})
    out = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "4h"], limits=tcp_limits()))
    check(out, 1, "ante", 8000, 13_000)
    check(out, 1, "play", 8000, 13_000)
    lim = wager(out, 1, "ante")["limit"]
    assert lim["rule"] == "5.14" and lim["settled_on"] == 5000 and lim["excess_returned"] == 3000


def test_5_14_over_maximum_loss_collected_to_maximum_only() -> None:
    # Lose with 8000 over a 5000 max: 5000 collected, 3000 handed back (net -5000 each).
    s = seat(1, ["7s", "5h", "3c"], {"ante": 8000, "play": 8000}, {"ante": "play"})
    out = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "4h"], limits=tcp_limits()))
    check(out, 1, "ante", 8000, 3000)
    check(out, 1, "play", 8000, 3000)


def test_5_14_over_maximum_pair_plus() -> None:
    # Pair plus 1500 over max 1000, flush 4 to 1: win 4 x 1000 = 4000 + 1500 back = 5500.
    s = seat(1, ["Ks", "9s", "3s"], {"pair_plus": 1500})
    out = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "4h"], limits=tcp_limits()))
    check(out, 1, "pair_plus", 1500, 5500)


def test_5_14_ante_bonus_on_the_maximum() -> None:
    # The Ante Bonus is a payment to the ante (1.1.2); the ante wins only to the maximum, so
    # three of a kind 4 to 1 is on 5000 -> 20000 (not 32000 on 8000).
    s = seat(1, ["8s", "8h", "8c"], {"ante": 8000, "play": 8000}, {"ante": "play"})
    out = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "4h"], limits=tcp_limits()))
    ab = [w for w in out["seats"][0]["wagers"] if w["wager"] == "ante_bonus"]
    assert sum(w["paid"] for w in ab) == 20_000


def test_ssp_5_14_bet_limit_defaults_to_twice_ante() -> None:
    # Ante max 5000 -> bet max 10000. Ante 6000, bet 12000, player pair beats A-K dealer:
    # ante: 5000 win + 6000 back = 11000; bet 1 to 1 on 10000 + 12000 back = 22000.
    lim = {"ante": {"min": 1000, "max": 5000}}
    s = seat(1, ["2d", "2h", "9c", "8s", "6h"], {"ante": 6000, "bet": 12000}, {"ante": "bet"})
    out = settle_dict(make_round(SSP, [s], dealer=["As", "Kd", "7h", "4c", "3s"], limits=lim))
    check(out, 1, "ante", 6000, 11_000)
    check(out, 1, "bet", 12000, 22_000)


def test_lir_5_14_by_analogy_two_and_dollar_follow_one() -> None:
    # LIR limits: "2" and "$" default to "1"'s. 3000 each with max 2000, pair of jacks 1 to 1:
    # 2000 win + 3000 back = 5000 each.
    lim = {"one": {"min": 500, "max": 2000}}
    s = seat(1, ["Jc", "Jd", "4s"], {"one": 3000, "two": 3000, "dollar": 3000}, {"one": "ride", "two": "ride"})
    out = settle_dict(make_round(LIR, [s], community=["8h", "2c"], limits=lim))
    for name in ("one", "two", "dollar"):
        check(out, 1, name, 3000, 5000)


def test_5_13_under_minimum_first_time_settled_and_flagged() -> None:
    # Ante 500 under a 1000 minimum, first time: settled normally (pair wins: 1000 paid) and
    # marked under_minimum.
    s = seat(1, ["8s", "8h", "3c"], {"ante": 500, "play": 500}, {"ante": "play"})
    out = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "4h"], limits=tcp_limits()))
    check(out, 1, "ante", 500, 1000)
    check(out, 1, "play", 500, 1000)
    assert wager(out, 1, "ante").get("limit", {}).get("under_minimum") is True


def test_5_13_under_minimum_after_first_time_returned() -> None:
    # Same player, under-minimum settled before: all under-minimum wagers returned.
    s = seat(1, ["8s", "8h", "3c"], {"ante": 500, "play": 500}, {"ante": "play"}, under_minimum_settled_before=True)
    out = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "4h"], limits=tcp_limits()))
    for name in ("ante", "play"):
        w = wager(out, 1, name)
        assert (w["outcome"], w["paid"]) == ("returned", 500)


# --- 5.7, 5.9, 5.10, 5.16 -------------------------------------------------------------------------


def test_5_7_player_card_count_hand_removed_and_5_7_1_withdrawn() -> None:
    # Seat 1 got 4 cards: hand removed, wagers returned (5.7). Seat 3 withdrew (5.7.1): its
    # wagers returned too. Seat 5 plays on: pair beats K-9-3 -> ante 2000.
    seats = [
        seat(1, ["As", "Ks", "Qs", "2d"], {"ante": 1000, "play": 1000, "progressive": 100}, {"ante": "play"}),
        seat(3, ["7c", "4d", "2s"], {"ante": 1000, "play": 1000}, {"ante": "play"}),
        seat(5, ["8s", "8h", "5c"], {"ante": 1000, "play": 1000}, {"ante": "play"}),
    ]
    irr = [{"kind": "player_card_count", "seats": [1], "withdrawn_seats": [3]}]
    out = settle_dict(make_round(TCP, seats, dealer=["Kd", "9c", "3h"], jackpot=JP, irregularities=irr))
    for n, name, stake in [(1, "ante", 1000), (1, "play", 1000), (1, "progressive", 100), (3, "ante", 1000), (3, "play", 1000)]:
        w = wager(out, n, name)
        assert (w["outcome"], w["paid"]) == ("returned", stake)
    check(out, 5, "ante", 1000, 2000)
    assert out["jackpot"]["pool_after"] == 1_000_000


def test_5_9_confidentiality_returns_wagers() -> None:
    r = sample_round(SSP, irregularities=[{"kind": "confidentiality", "seats": [3]}])
    out = settle_dict(r)
    check(out, 3, "ante", 1000, 1000)
    check(out, 3, "bet", 2000, 2000)
    check(out, 1, "progressive", 200, 1_000_000)  # the other seat is unaffected


def test_5_10_1_multiple_hands_unviewed_invalidated() -> None:
    # Player P1 on seats 2 and 5 in error, seat 5 viewed: seat 5 plays (pair beats K-9-3 ->
    # 2000), seat 2 (unviewed) invalidated: 1000 back.
    seats = [
        seat(2, ["As", "Kc", "Qs"], {"ante": 1000, "play": 1000}, {"ante": "play"}, player="P1", viewed=False),
        seat(5, ["8s", "8h", "5c"], {"ante": 1000, "play": 1000}, {"ante": "play"}, player="P1"),
    ]
    irr = [{"kind": "multiple_hands", "seats": [2, 5]}]
    out = settle_dict(make_round(TCP, seats, dealer=["Kd", "9c", "3h"], irregularities=irr))
    check(out, 5, "ante", 1000, 2000)
    check(out, 2, "ante", 1000, 1000)


def test_5_10_2_multiple_hands_none_viewed_first_dealt_plays() -> None:
    # No hand viewed: the first dealt (seat 2, lowest seat, reading 32) plays: pair -> 2000;
    # seat 5 invalidated -> 1000 back.
    seats = [
        seat(2, ["8s", "8h", "5c"], {"ante": 1000, "play": 1000}, {"ante": "play"}, player="P1", viewed=False),
        seat(5, ["As", "Kc", "Qs"], {"ante": 1000, "play": 1000}, {"ante": "play"}, player="P1", viewed=False),
    ]
    irr = [{"kind": "multiple_hands", "seats": [2, 5]}]
    out = settle_dict(make_round(TCP, seats, dealer=["Kd", "9c", "3h"], irregularities=irr))
    check(out, 2, "ante", 1000, 2000)
    check(out, 5, "ante", 1000, 1000)


def test_5_16_1_power_failure_withdrawal() -> None:
    # Seat 3 withdraws at a power failure before any outcome: every wager returned; seat 1
    # still settled from its cards (royal of spades: pool).
    r = sample_round(TCP, power_failure={"outcome_established": False, "withdrawn_seats": [3]})
    out = settle_dict(r)
    check(out, 3, "ante", 1000, 1000)
    check(out, 3, "play", 1000, 1000)
    check(out, 3, "progressive", 100, 100)
    check(out, 1, "progressive", 100, 1_000_000)
