"""Jackpot ledger, Envy Bonus exclusions and limit edge cases, black box, amounts by hand."""

from __future__ import annotations

from typing import Any

from blackbox_helpers import LIR, MTCP, SSP, TCP, XT, check, make_round, seat, settle_dict, wager

JP = {"pool": 1_000_000, "reset": 500_000}


def check_ledger(r: dict[str, Any]) -> None:
    """Each movement's balance follows from the previous one; the last is pool_after."""
    jp = r["jackpot"]
    balance = jp["pool_before"]
    for m in jp["movements"]:
        assert m["amount"] >= 0, m
        balance += -m["amount"] if m["kind"] == "payout" else m["amount"]
        assert m["balance"] == balance, (m, balance)
    assert balance == jp["pool_after"]


def check_totals(r: dict[str, Any]) -> None:
    """Seat and round totals are the sums of the wager results (round-format: net = paid - stake)."""
    ts = tp = 0
    for s in r["seats"]:
        stake = sum(w["stake"] for w in s["wagers"])
        paid = sum(w["paid"] for w in s["wagers"])
        assert (s["stake"], s["paid"], s["net"]) == (stake, paid, paid - stake), s
        ts += stake
        tp += paid
    assert r["totals"] == {"stake": ts, "paid": tp, "net": tp - ts}


def sseat(cards: list[str], n: int, prog: int = 100) -> dict[str, Any]:
    return seat(n, cards, {"ante": 1000, "bet": 2000, "progressive": prog}, {"ante": "bet"})


def tseat(cards: list[str], n: int, **extra: Any) -> dict[str, Any]:
    return seat(n, cards, {"ante": 1000, "play": 1000, "progressive": 100}, {"ante": "play"}, **extra)


# --- sharing, ordering and rounding ------------------------------------------------------------


def test_ssp_3_15_2_and_3_15_3_royal_after_two_shared_straight_flushes() -> None:
    # Two SFs share (10% of 1,000,000 + 10% of 500,000) / 2 = 75,000 each (3.15.2); the pool is
    # charged its 100,000 (reading 18) -> 900,000; the royal is then paid the 900,000 (3.15.3);
    # the pool resets to 500,000.
    seats = [sseat(["Ah", "Kh", "Qh", "Jh", "Th"], 1), sseat(["9c", "8c", "7c", "6c", "5c"], 2), sseat(["9d", "8d", "7d", "6d", "5d"], 3)]
    r = settle_dict(make_round(SSP, seats, dealer=["As", "Kd", "7h", "4c", "2s"], jackpot=JP))
    check(r, 2, "progressive", 100, 75_000)
    check(r, 3, "progressive", 100, 75_000)
    check(r, 1, "progressive", 100, 900_000)
    assert r["jackpot"]["pool_after"] == 500_000
    check_ledger(r)
    check_totals(r)


def test_ssp_3_15_1_two_royals_odd_total_reading_19() -> None:
    # (1,000,001 + 500,000) / 2 = 750,000 each, floored; the 1 left over stays: pool resets to
    # 500,000 + 1 (reading 15, 19).
    seats = [sseat(["Ah", "Kh", "Qh", "Jh", "Th"], 1), sseat(["As", "Ks", "Qs", "Js", "Ts"], 3)]
    r = settle_dict(make_round(SSP, seats, dealer=["Ad", "Kc", "7h", "4c", "2s"], jackpot={"pool": 1_000_001, "reset": 500_000}))
    check(r, 1, "progressive", 100, 750_000)
    check(r, 3, "progressive", 100, 750_000)
    assert r["jackpot"]["pool_after"] == 500_001
    check_ledger(r)


def test_ssp_3_15_2_three_way_share_remainder_stays_reading_15() -> None:
    # 10% of 1,000,001 = 100,000 (floored) + 2 x 50,000 = 200,000 / 3 = 66,666 each; 2 left over
    # stays in the pool: 1,000,001 - 100,000 + 2 = 900,003.
    seats = [sseat(["9c", "8c", "7c", "6c", "5c"], 1), sseat(["9d", "8d", "7d", "6d", "5d"], 3), sseat(["Ts", "9s", "8s", "7s", "6s"], 5)]
    r = settle_dict(make_round(SSP, seats, dealer=["Ah", "Kh", "4h", "3h", "2c"], jackpot={"pool": 1_000_001, "reset": 500_000}))
    for n in (1, 3, 5):
        check(r, n, "progressive", 100, 66_666)
    assert r["jackpot"]["pool_after"] == 900_003
    check_ledger(r)


def test_xt_4_4_percentage_floored_reading_15() -> None:
    # 10% of 1,000,009 = 100,000.9 -> 100,000; pool 900,009.
    r = settle_dict(
        make_round(XT, [tseat(["9h", "8h", "7h"], 1)], dealer=["Kd", "7c", "4d"], community=["Jh", "Th"], jackpot={"pool": 1_000_009, "reset": 1}, dealing="A")
    )
    check(r, 1, "progressive", 100, 100_000)
    assert r["jackpot"]["pool_after"] == 900_009
    check_ledger(r)


def test_lir_royal_paid_after_straight_flush_by_analogy_mtcp_3_18_2() -> None:
    # LIR has no ordering clause; by analogy with MTCP 3.18.2 the SF (seat 3) is paid first:
    # 10% of 1,000,000 = 100,000; then the royal (seat 1) takes 900,000; the pool resets.
    # Base wagers: royal 1,000 to 1 -> 1,001,000; SF 200 to 1 -> 201,000.
    def lseat(c: list[str], n: int) -> dict[str, Any]:
        return seat(n, c, {"one": 1000, "two": 1000, "dollar": 1000, "progressive": 100}, {"one": "ride", "two": "ride"})

    jp = dict(JP, magic_card="2c", lucky_player=7)
    r = settle_dict(make_round(LIR, [lseat(["Ah", "Kh", "Qh"], 1), lseat(["9h", "8h", "7h"], 3)], community=["Jh", "Th"], jackpot=jp))
    check(r, 3, "progressive", 100, 100_000)
    check(r, 1, "progressive", 100, 900_000)
    check(r, 1, "dollar", 1000, 1_001_000)
    check(r, 3, "dollar", 1000, 201_000)
    assert r["jackpot"]["pool_after"] == 500_000
    check_ledger(r)


def test_lir_percentage_plus_magic_card_stake_returned_once() -> None:
    # SF 10% = 100,000 (stake not returned for a share) + Magic Card 9h 5 to 1 = 500 + Lucky
    # Player 5 to 1 = 500 + the 100 stake once for the "to 1" lines: 101,100.
    s = seat(1, ["9h", "8h", "7h"], {"one": 1000, "two": 1000, "dollar": 1000, "progressive": 100}, {"one": "ride", "two": "ride"})
    r = settle_dict(make_round(LIR, [s], community=["Jh", "Th"], jackpot=dict(JP, magic_card="9h", lucky_player=1)))
    check(r, 1, "progressive", 100, 101_100)


# --- Envy Bonus only where 3.14 puts it -------------------------------------------------------------


def test_mtcp_and_xt_have_no_envy_bonus() -> None:
    # A royal in MTCP/XT pays the pool to its holder; other progressive wagers get nothing
    # (the Envy Bonus is TCP 3.14 only).
    for game in (MTCP, XT):
        seats = [tseat(["Ah", "Kh", "Qh"], 1), tseat(["2c", "5d", "9s"], 3)]
        extra: dict[str, Any] = {"dealing": "A"} if game == XT else {}
        r = settle_dict(make_round(game, seats, dealer=["Kd", "7c", "4d"], community=["Jh", "Th"], jackpot=JP, **extra))
        check(r, 1, "progressive", 100, 1_000_000)
        check(r, 3, "progressive", 100, 0)


def test_tcp_3_14_no_envy_to_returned_progressives() -> None:
    # Seat 1 ante royal of spades. Seat 2 progressive only (5.12.2 returned), seat 4 absent
    # (5.11 returned), seat 6 withdrawn at a power failure (5.16.1 returned): none of them
    # receives an Envy Bonus (reading 21: only wagers in action). Seat 7 gets SGD 250.
    seats = [
        tseat(["As", "Ks", "Qs"], 1),
        seat(2, ["9h", "6h", "2c"], {"progressive": 100}),
        seat(4, ["9d", "6d", "3c"], {"ante": 1000, "progressive": 100}, absent=True),
        tseat(["8c", "7d", "2s"], 6),
        tseat(["8d", "5h", "3s"], 7),
    ]
    pf = {"outcome_established": False, "withdrawn_seats": [6]}
    r = settle_dict(make_round(TCP, seats, dealer=["Kd", "7c", "4d"], jackpot={"pool": 1_000_000, "reset": 250_000}, power_failure=pf))
    check(r, 2, "progressive", 100, 100)
    check(r, 4, "progressive", 100, 100)
    check(r, 6, "progressive", 100, 100)
    check(r, 7, "progressive", 100, 25_000)
    check_totals(r)


def test_tcp_3_14_invalid_trigger_gives_no_envy() -> None:
    # 5.10.1: P1's unviewed royal at seat 1 is invalidated (returned), so it is not paid the
    # pool and triggers no Envy: seat 4's progressive loses; the pool is unchanged.
    seats = [tseat(["As", "Ks", "Qs"], 1, player="P1", viewed=False), tseat(["9h", "6h", "2c"], 2, player="P1"), tseat(["9d", "5d", "3c"], 4)]
    r = settle_dict(make_round(TCP, seats, dealer=["Kd", "7c", "4d"], jackpot=JP, irregularities=[{"kind": "multiple_hands", "seats": [1, 2]}]))
    check(r, 1, "progressive", 100, 100)
    check(r, 4, "progressive", 100, 0)
    assert r["jackpot"]["pool_after"] == 1_000_000


# --- limits at the edges ------------------------------------------------------------------------------


def test_ssp_5_14_over_maximum_dealer_no_hand() -> None:
    # Dealer "No hand": ante 6000 over max 5000 paid 1 to 1 on 5000 + 6000 back = 11000;
    # the bet is returned in full (3.10.2.1), 12000.
    s = seat(1, ["Kh", "Js", "9d", "5d", "3d"], {"ante": 6000, "bet": 12000}, {"ante": "bet"})
    r = settle_dict(make_round(SSP, [s], dealer=["Ac", "Qd", "Jh", "7s", "6c"], limits={"ante": {"min": 100, "max": 5000}}))
    check(r, 1, "ante", 6000, 11_000)
    check(r, 1, "bet", 12000, 12_000)
    assert wager(r, 1, "bet")["outcome"] == "returned"


def test_xt_5_14_six_card_bonus_over_maximum() -> None:
    # Six card bonus 1500, max 1000: straight 4-8 10 to 1 on 1000 = 10000 + 1500 back = 11500.
    lim = {"ante": {"min": 100, "max": 5000}, "six_card_bonus": {"min": 100, "max": 1000}}
    s = seat(1, ["4c", "5d", "6h"], {"six_card_bonus": 1500})
    r = settle_dict(make_round(XT, [s], dealer=["7s", "8c", "Kd"], community=["2c", "2d"], limits=lim, dealing="A"))
    check(r, 1, "six_card_bonus", 1500, 11_500)


def test_5_14_fold_over_maximum_collects_maximum_only() -> None:
    # Folded ante 8000 over max 5000: 5000 collected, 3000 handed back.
    s = seat(1, ["8s", "7h", "3c"], {"ante": 8000}, {"ante": "fold"})
    r = settle_dict(make_round(TCP, [s], dealer=["Kd", "9c", "4h"], limits={"ante": {"min": 100, "max": 5000}}))
    check(r, 1, "ante", 8000, 3000)


def test_lir_withdrawn_over_maximum_returned_in_full() -> None:
    # "1" withdrawn (3.10): all 3000 back, no limit applied; "2" and "$" ride on max 2000:
    # pair of jacks 1 to 1 -> 2000 + 3000 = 5000.
    s = seat(1, ["Jc", "Jd", "4s"], {"one": 3000, "two": 3000, "dollar": 3000}, {"one": "withdraw", "two": "ride"})
    r = settle_dict(make_round(LIR, [s], community=["8h", "2c"], limits={"one": {"min": 100, "max": 2000}}))
    check(r, 1, "one", 3000, 3000)
    check(r, 1, "two", 3000, 5000)
    check(r, 1, "dollar", 3000, 5000)


# --- dealer qualifying at the edges ----------------------------------------------------------------


def test_ssp_3_10_3_dealer_wheel_and_flush_qualify_reading_3() -> None:
    # A straight or a flush (no A-K needed) is better than A-K: the dealer qualifies and beats
    # K-J-9-5-3: ante and bet collected.
    for dealer in (["Ac", "2d", "3h", "4s", "5c"], ["Jc", "9c", "7c", "4c", "2c"]):
        s = seat(1, ["Kh", "Js", "9d", "5d", "3d"], {"ante": 1000, "bet": 2000}, {"ante": "bet"})
        r = settle_dict(make_round(SSP, [s], dealer=dealer))
        assert r["dealer"]["qualifies"] is True
        check(r, 1, "ante", 1000, 0)
        check(r, 1, "bet", 2000, 0)


def test_ssp_3_9_1_fold_progressive_paid_when_dealer_has_no_hand() -> None:
    # Folded four 9s: ante lost; dealer "No hand"; progressive 400 for 1 -> 40000 (3.9.1,
    # 3.10.2.3). The other seat's bet is returned and its ante paid.
    seats = [
        seat(1, ["9s", "9h", "9d", "9c", "3d"], {"ante": 1000, "progressive": 100}, {"ante": "fold"}),
        seat(2, ["Kh", "Js", "8d", "5c", "3h"], {"ante": 1000, "bet": 2000}, {"ante": "bet"}),
    ]
    r = settle_dict(make_round(SSP, seats, dealer=["Ac", "Qd", "Jh", "7s", "6c"], jackpot=JP))
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "progressive", 100, 40_000)
    check(r, 2, "ante", 1000, 2000)
    check(r, 2, "bet", 2000, 2000)
    check_totals(r)


def test_xt_4_5_royal_from_dealers_three_cards() -> None:
    # Player A-K of spades + dealer Q-J-T of spades: Royal in the six cards, 500 to 1 on 500 ->
    # 250,500, while the dealer's Q-J-T straight flush beats the player's A-K-2 (ante, play lost).
    s = seat(1, ["As", "Ks", "2d"], {"ante": 1000, "play": 1000, "six_card_bonus": 500}, {"ante": "play"})
    r = settle_dict(make_round(XT, [s], dealer=["Qs", "Js", "Ts"], community=["3c", "4c"], dealing="A"))
    check(r, 1, "six_card_bonus", 500, 250_500)
    check(r, 1, "ante", 1000, 0)
    check(r, 1, "play", 1000, 0)
