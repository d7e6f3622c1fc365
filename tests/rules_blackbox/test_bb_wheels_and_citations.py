"""Wheel straight flushes in every five-card pay table, cross-game three-card ranking, and the
rule numbers the settlement cites for voids and returns."""

from __future__ import annotations

import random
from typing import Any

import pytest

from blackbox_helpers import LIR, MTCP, SSP, TCP, XT, check, make_round, seat, settle_dict, wager
from test_bb_irregularities import sample_round
from test_bb_oracles import DECK, rank_value, three_card_key

JP = {"pool": 1_000_000, "reset": 500_000}


def tseat(cards: list[str]) -> dict[str, Any]:
    return seat(1, cards, {"ante": 1000, "play": 1000, "progressive": 100}, {"ante": "play"})


@pytest.mark.parametrize("game", [MTCP, XT])
def test_mtcp_xt_4_4_1_2_wheel_straight_flush(game: str) -> None:
    # A-2-3 + 4-5 of hearts: A-5 straight flush (Ace low) -> 10% of 1,000,000 = 100,000.
    # Its three cards A-2-3 of hearts are a straight flush too: ante bonus 5 to 1 -> 5000.
    extra: dict[str, Any] = {"dealing": "A"} if game == XT else {}
    r = settle_dict(make_round(game, [tseat(["Ah", "2h", "3h"])], dealer=["Kd", "7c", "4d"], community=["4h", "5h"], jackpot=JP, **extra))
    check(r, 1, "progressive", 100, 100_000)
    assert sum(w["paid"] for w in r["seats"][0]["wagers"] if w["wager"] == "ante_bonus") == 5000


def test_lir_3_21_2_wheel_straight_flush() -> None:
    # 200 to 1 on each 1000 -> 201,000; progressive 10% -> 100,000.
    s = seat(1, ["Ah", "2h", "3h"], {"one": 1000, "two": 1000, "dollar": 1000, "progressive": 100}, {"one": "ride", "two": "ride"})
    r = settle_dict(make_round(LIR, [s], community=["4h", "5h"], jackpot=dict(JP, magic_card="2c", lucky_player=7)))
    for name in ("one", "two", "dollar"):
        check(r, 1, name, 1000, 201_000)
    check(r, 1, "progressive", 100, 100_000)


def test_ssp_3_3_1_2_wheel_straight_flush() -> None:
    # Beats the dealer's A-K: bet 50 to 1 on 2000 -> 102,000; progressive 10% -> 100,000.
    s = seat(1, ["Ah", "2h", "3h", "4h", "5h"], {"ante": 1000, "bet": 2000, "progressive": 100}, {"ante": "bet"})
    r = settle_dict(make_round(SSP, [s], dealer=["As", "Kd", "7c", "4c", "2s"], jackpot=JP))
    check(r, 1, "bet", 2000, 102_000)
    check(r, 1, "progressive", 100, 100_000)


def test_xt_4_5_wheel_straight_flush_six_card() -> None:
    # A-2-3 hearts + dealer 4-5 hearts: straight flush 100 to 1 on 500 -> 50,500.
    s = seat(1, ["Ah", "2h", "3h"], {"six_card_bonus": 500})
    r = settle_dict(make_round(XT, [s], dealer=["4h", "5h", "Kd"], community=["2c", "3c"], dealing="A"))
    check(r, 1, "six_card_bonus", 500, 50_500)


@pytest.mark.parametrize("game", [MTCP, XT])
def test_mtcp_xt_3_11_3_12_3_15_random_player_vs_dealer(game: str) -> None:
    # The Megalink games share TCP's three-card ranking (MTCP/XT 3.14-3.15) and qualifier
    # (3.11-3.12); checked against the ranking written in test_bb_oracles.
    rng = random.Random(1415)
    for _ in range(1000):
        cards = rng.sample(DECK, 8)
        player, dealer, community = cards[:3], cards[3:6], cards[6:]
        pk, dk = three_card_key(player), three_card_key(dealer)
        qualifies = dk[0] > 0 or max(rank_value(c) for c in dealer) >= 12
        extra: dict[str, Any] = {"dealing": "A"} if game == XT else {}
        s = seat(1, player, {"ante": 100, "play": 100, "pair_plus": 100}, {"ante": "play"})
        r = settle_dict(make_round(game, [s], dealer=dealer, community=community, **extra))
        if not qualifies:
            exp = (200, 100)
        elif pk > dk:
            exp = (200, 200)
        elif pk == dk:
            exp = (100, 100)
        else:
            exp = (0, 0)
        assert (wager(r, 1, "ante")["paid"], wager(r, 1, "play")["paid"]) == exp, (player, dealer)
        pp = {5: 40, 4: 30, 3: 5, 2: 4, 1: 1}.get(pk[0])
        assert wager(r, 1, "pair_plus")["paid"] == (0 if pp is None else 100 + pp * 100), player


# --- the rule each void cites ---------------------------------------------------------------------

VOID_RULES = {
    # kind: (TCP, MTCP, XT, SSP, LIR)
    "foreign_card": ("5.1", "5.1", "5.1", "5.1", "5.1"),
    "extra_or_missing_cards": ("5.1", "5.1", "5.1", "5.1", "5.2"),
    "misdeal": ("5.2", "5.2", "5.2", "5.2", "5.3"),
    "dealer_card_count": ("5.3", "5.3", "5.3", "5.3", None),
    "community_card_count": (None, "5.3", "5.3", None, "5.4"),
    "exposed_cards": ("5.4", "5.4", "5.4", "5.4", "5.5"),
    "card_count": ("5.8", "5.8", "5.8", "5.8", "5.2"),
}


@pytest.mark.parametrize("kind", sorted(VOID_RULES))
@pytest.mark.parametrize("index", range(5))
def test_5_x_void_cites_the_rule(kind: str, index: int) -> None:
    game = [TCP, MTCP, XT, SSP, LIR][index]
    rule = VOID_RULES[kind][index]
    if rule is None:
        # The game has no such hand (no community cards in TCP/SSP, no dealer hand in LIR).
        from blackbox_helpers import parse_error

        assert parse_error(sample_round(game, irregularities=[{"kind": kind}])).field.startswith("irregularities[0]")
        return
    r = settle_dict(sample_round(game, irregularities=[{"kind": kind}]))
    assert rule in r["void"]["rules"]


def test_returns_cite_their_rule() -> None:
    # 5.11 absent, 5.12.2 progressive without base, 5.7 card count, 5.9 confidentiality.
    seats = [
        seat(1, ["9d", "6d", "3c"], {"ante": 1000, "progressive": 100}, absent=True),
        seat(2, ["9h", "6h", "2c"], {"progressive": 100}),
        seat(3, ["8c", "7d", "2s", "4s"], {"ante": 1000, "play": 1000}, {"ante": "play"}),
        seat(4, ["8d", "5h", "3s"], {"pair_plus": 500}),
    ]
    irr = [{"kind": "player_card_count", "seats": [3]}, {"kind": "confidentiality", "seats": [4]}]
    r = settle_dict(make_round(TCP, seats, dealer=["Kd", "7c", "4d"], jackpot=JP, irregularities=irr))
    assert "5.11" in wager(r, 1, "ante")["rules"]
    assert "5.12.2" in wager(r, 2, "progressive")["rules"]
    assert "5.7" in wager(r, 3, "ante")["rules"]
    assert "5.9" in wager(r, 4, "pair_plus")["rules"]
    for n, name in [(1, "ante"), (2, "progressive"), (3, "ante"), (3, "play"), (4, "pair_plus")]:
        w = wager(r, n, name)
        assert (w["outcome"], w["paid"]) == ("returned", w["stake"])


def test_lir_analogies_are_marked_for_the_shift_manager_reading_35() -> None:
    # LIR has no 5.12: the return of a progressive without base wagers cites the MTCP rule
    # "by analogy" so a supervisor can confirm it.
    s = seat(4, ["9h", "8h", "7h"], {"progressive": 100})
    r = settle_dict(make_round(LIR, [s], community=["Th", "Jh"], jackpot=dict(JP, magic_card="2c", lucky_player=7)))
    rules = " ".join(wager(r, 4, "progressive")["rules"])
    assert "analogy" in rules and "5.12" in rules


# --- power failure --------------------------------------------------------------------------------


def test_5_16_2_a_fold_is_an_established_outcome() -> None:
    # Seat 1 folded (3.9.1: the ante is lost), so an outcome is established and nobody may
    # withdraw (5.16.2); a round claiming otherwise should be refused naming power_failure
    # (reading 33: a withdrawal after an outcome is invalid input).
    from blackbox_helpers import parse_error

    seats = [
        seat(1, ["5s", "8d", "3h"], {"ante": 1000}, {"ante": "fold"}),
        seat(2, ["6c", "9d", "Kh"], {"ante": 1000, "play": 1000}, {"ante": "play"}),
    ]
    r = make_round(TCP, seats, dealer=["Qd", "7c", "2s"], power_failure={"outcome_established": False, "withdrawn_seats": [2]})
    assert parse_error(r).field.startswith("power_failure")
