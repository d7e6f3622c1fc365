"""The other games' jackpot lines across tables, on both stores: Megalink Singapore Stud
Poker's sharing of a Royal Flush with a reset amount (3.15.1) followed by another table's
Royal Flush (3.14: first entered, first paid), and Megalink Let It Ride's 4.2 (Royal Flush
100% of the jackpot, Straight Flush 10%) across two tables. Expectations from the rules."""

from __future__ import annotations

from typing import Any

from cardshoe.floor.progressive import LinkSettings
from cardshoe.floor.store import FloorStore
from cardshoe.games import get_game

RESET = 1_000_000
START = 3_000_000
RATE = 50_000  # 5% of each stake in action


def base(game: str, rid: str, seats: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    g = get_game(game)
    return {"format": "cardshoe.round/1", "round_id": rid, "game": game, "rules_version": g.rules_version,
            "currency": g.currency, "seats": seats, "community": [], "exposures": [], "irregularities": [],
            "power_failure": None, **fields}


STUD = "megalink-singapore-stud-poker"
STUD_LIMITS = {"ante": {"min": 1000, "max": 250000}, "progressive": {"min": 100, "max": 500}}


def stud_seat(n: int, cards: str, progressive: int) -> dict[str, Any]:
    return {"seat": n, "wagers": {"ante": 1000, "bet": 2000, "progressive": progressive},
            "decisions": {"ante": "bet"}, "cards": cards.split()}


def stud(rid: str, *seats: dict[str, Any]) -> dict[str, Any]:
    return base(STUD, rid, list(seats), limits=STUD_LIMITS, dealer={"cards": "Ac Kc 9c 7c 2h".split()},
                jackpot={"pool": None, "reset": RESET})


def test_stud_royal_flushes_share_at_one_table_then_another_table_takes_what_is_left(store: FloorStore) -> None:
    store.configure_link(LinkSettings("stud", RESET, RATE, START))
    a = store.settle("stud", "S1", stud("S1-1", stud_seat(1, "As Ks Qs Js Ts", 100),
                                        stud_seat(2, "Ah Kh Qh Jh Th", 500)))
    pool = START + (100 + 500) * 5 // 100  # 30 contributed
    share = (pool + RESET) // 2  # 3.15.1: the pool as displayed and one reset amount, divided equally
    assert a.pool == pool and [h.amount for h in a.hits] == [share, share]
    assert a.pool_after == RESET + (pool + RESET - 2 * share)
    b = store.settle("stud", "S2", stud("S2-1", stud_seat(4, "Ad Kd Qd Jd Td", 100)))
    assert [h.amount for h in b.hits] == [a.pool_after + 5]  # 4.4: 100% of the pool as it then stands
    assert b.pool_after == RESET and store.pool("stud")["pool"] == RESET


LIR = "megalink-let-it-ride"
LIR_LIMITS = {"one": {"min": 1000, "max": 500000}, "progressive": {"min": 100, "max": 500}}


def lir(rid: str, cards: str, community: str) -> dict[str, Any]:
    seat = {"seat": 1, "wagers": {"one": 1000, "two": 1000, "dollar": 1000, "progressive": 100},
            "decisions": {"one": "ride", "two": "ride"}, "cards": cards.split()}
    return base(LIR, rid, [seat], limits=LIR_LIMITS, community=community.split(),
                jackpot={"pool": None, "reset": RESET, "magic_card": "3c", "lucky_player": 7})


def test_let_it_ride_straight_flush_then_royal_flush_on_another_table(store: FloorStore) -> None:
    store.configure_link(LinkSettings("lir", RESET, RATE, START))
    a = store.settle("lir", "L1", lir("L1-1", "9h 8h 7h", "6h 5h"))
    assert [h.amount for h in a.hits] == [(START + 5) // 10]  # 4.2: Straight Flush 10% of the jackpot
    b = store.settle("lir", "L2", lir("L2-1", "As Ks Qs", "Js Ts"))
    left = START + 5 - (START + 5) // 10
    assert [h.amount for h in b.hits] == [left + 5]  # 4.2: Royal Flush 100% of the jackpot
    assert b.pool_after == RESET
