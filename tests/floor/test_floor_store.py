"""The floor store and the linked progressive, on SQLite and on PostgreSQL (the same tests).

Expectations come from the rules (Megalink Three Card Poker 4.4's pay table, 3.17 for hits
on separate tables, 3.18.1-3.18.2 within a table) and from the contribution reading of
docs/rule-readings.md (rate in parts per million, floored, remainder carried), worked by
hand here, never from the code under test."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cardshoe.cards import parse_card
from cardshoe.floor.progressive import FloorRefusal, LinkSettings
from cardshoe.floor.store import AssignmentConflict, FloorStore, ShippedEntry, UnknownLink
from floor_chain import chained
from floor_rounds import NOTHING, QUADS, RESET, ROYAL, SF, round_file, seat

LINK = "mega"


def configure(store: FloorStore, rate_ppm: int = 50_000, start: int = 3_000_000) -> None:
    store.configure_link(LinkSettings(LINK, RESET, rate_ppm, start))


def test_a_link_starts_at_its_opening_pool_and_keeps_it_when_reconfigured(store: FloorStore) -> None:
    configure(store)
    assert store.pool(LINK)["pool"] == 3_000_000
    store.configure_link(LinkSettings(LINK, RESET, 60_000, 9))  # a new rate; the pool is not reset
    got = store.pool(LINK)
    assert (got["pool"], got["rate_ppm"]) == (3_000_000, 60_000)
    with pytest.raises(UnknownLink):
        store.pool("nope")


def test_contributions_are_floored_and_the_remainder_carried_exactly(store: FloorStore) -> None:
    # 33,333 ppm of 500 = 16.6665 units: 16 credited, 0.6665 carried (666,500 millionths);
    # the next round: 666,500 + 16,666,500 = 17,333,000 -> 17 credited, 333,000 carried.
    configure(store, rate_ppm=33_333)
    a = store.settle(LINK, "T1", round_file("T1-1", seat(1, *NOTHING[:1]), community=NOTHING[1]))
    assert (a.stakes, a.contribution, a.carry_after, a.pool, a.pool_after) == (500, 16, 666_500, 3_000_016, 3_000_016)
    b = store.settle(LINK, "T2", round_file("T2-1", seat(1, *NOTHING[:1]), community=NOTHING[1]))
    assert (b.contribution, b.carry_before, b.carry_after, b.pool_after) == (17, 666_500, 333_000, 3_000_033)
    # Nothing lost, nothing made: credited units + carry == rate x stakes, in millionths.
    assert (16 + 17) * 1_000_000 + 333_000 == 33_333 * 1000
    assert [h["seq"] for h in store.history(LINK)] == [1, 2]


def test_a_returned_progressive_contributes_nothing(store: FloorStore) -> None:
    # 5.12.2: a progressive wager without a base wager is not in action and is returned.
    configure(store)
    lone = {"seat": 2, "wagers": {"progressive": 500}, "cards": []}
    a = store.settle(LINK, "T1", round_file("T1-1", seat(1, *NOTHING[:1], progressive=0), lone,
                                             community=NOTHING[1]))
    assert (a.stakes, a.contribution, a.pool_after) == (0, 0, 3_000_000)


def test_a_royal_flush_takes_the_whole_pool_with_its_own_contribution_and_resets(store: FloorStore) -> None:
    configure(store)  # 5%: 25 per 500
    a = store.settle(LINK, "T1", round_file("T1-1", seat(3, ROYAL[0]), community=ROYAL[1]))
    assert a.pool == 3_000_025
    assert [(h.seat, h.amount) for h in a.hits] == [(3, 3_000_025)]  # 4.4: 100% of the pool
    assert a.pool_after == RESET
    assert store.pool(LINK)["pool"] == RESET
    (hit,) = store.hits(LINK)
    assert (hit["table"], hit["round_id"], hit["amount"], hit["seat"]) == ("T1", "T1-1", 3_000_025, 3)


def test_a_straight_flush_takes_ten_percent_floored_and_a_fixed_line_leaves_the_pool(store: FloorStore) -> None:
    configure(store, start=1_234_555)
    a = store.settle(LINK, "T1", round_file("T1-1", seat(1, SF[0]), community=SF[1]))
    # (1,234,555 + 25) x 10% = 123,458 (floored); the rest stays.
    assert [h.amount for h in a.hits] == [123_458]
    assert a.pool_after == 1_234_580 - 123_458
    b = store.settle(LINK, "T1", round_file("T1-2", seat(1, QUADS[0]), community=QUADS[1]))
    # Four of a Kind: $2,000 paid by the table; the pool only gains the contribution.
    assert b.hits == () and b.pool_after == a.pool_after + 25


def test_two_straight_flushes_at_one_table_share_with_a_reset_amount(store: FloorStore) -> None:
    # 3.18.1: 10% of the pool as displayed plus 10% of one reset amount, divided equally.
    configure(store, start=2_000_000)
    a = store.settle(LINK, "T1", round_file("T1-1", seat(1, "6h 7h 8h"), seat(5, "Jh Qh Kh"), community="9h Th"))
    pool = 2_000_000 + 50
    total = pool // 10 + RESET // 10
    assert [h.amount for h in a.hits] == [total // 2, total // 2]
    assert a.pool_after == pool - pool // 10 + total % 2


def one_royal(store: FloorStore, table: str) -> Any:
    return store.settle(LINK, table, round_file(f"{table}-1", seat(3, ROYAL[0]), community=ROYAL[1]))


@pytest.mark.parametrize("first", ["T1", "T2"])
def test_royal_flushes_on_two_tables_are_paid_in_the_order_entered(store: FloorStore, first: str) -> None:
    # 3.17: hands on separate tables: the one first entered into the system is paid first.
    # The first takes the whole pool with its contribution; the second the reset amount with its own.
    configure(store)
    second = "T2" if first == "T1" else "T1"
    a, b = one_royal(store, first), one_royal(store, second)
    assert (a.seq, a.hits[0].amount) == (1, 3_000_025)
    assert (b.seq, b.hits[0].amount) == (2, RESET + 25)
    assert store.pool(LINK)["pool"] == RESET
    assert [(h["table"], h["amount"]) for h in store.hits(LINK)] == [(first, 3_000_025), (second, RESET + 25)]


def test_royal_flushes_at_the_same_moment_are_serialized_by_the_database(store: FloorStore,
                                                                        store_target: tuple[str, str]) -> None:
    # Two connections, released together: whichever transaction takes the link first is paid
    # the pool, the other the reset; never both the pool, never a lost contribution.
    from floor_stores import open_store

    configure(store)
    other = open_store(store_target)
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def go(s: FloorStore, table: str) -> None:
        barrier.wait()
        results[table] = one_royal(s, table)

    threads = [threading.Thread(target=go, args=(store, "T1")), threading.Thread(target=go, args=(other, "T2"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    other.close()
    ordered = sorted(results.values(), key=lambda a: a.seq)
    assert [a.seq for a in ordered] == [1, 2]
    assert [a.hits[0].amount for a in ordered] == [3_000_025, RESET + 25]
    assert store.pool(LINK)["pool"] == RESET


def test_a_round_sent_again_gets_its_first_assignment_and_a_changed_one_is_refused(store: FloorStore) -> None:
    configure(store)
    data = round_file("T1-1", seat(3, ROYAL[0]), community=ROYAL[1])
    a = store.settle(LINK, "T1", data)
    again = store.settle(LINK, "T1", data)
    assert again == a and store.pool(LINK)["pool"] == RESET and len(store.hits(LINK)) == 1
    with pytest.raises(AssignmentConflict):
        store.settle(LINK, "T1", round_file("T1-1", seat(3, NOTHING[0]), community=NOTHING[1]))


def test_a_table_with_another_reset_amount_is_refused(store: FloorStore) -> None:
    configure(store)
    with pytest.raises(FloorRefusal) as err:
        store.settle(LINK, "T1", round_file("T1-1", seat(3, ROYAL[0]), community=ROYAL[1], reset=5))
    assert err.value.field == "round.jackpot.reset"
    assert store.pool(LINK)["rounds"] == 0


def entry(i: int, kind: str = "frame", rid: str | None = None, body: str = "{}") -> ShippedEntry:
    return ShippedEntry(i, 1_000 + i, kind, 7, 1, i, 2, rid, body, bytes([i % 256]))


def test_ingest_stores_each_entry_once_however_often_it_is_sent(store: FloorStore) -> None:
    assert store.high_water("T1") == 0
    t1 = chained("T1", [entry(i) for i in range(1, 9)])
    assert store.ingest("T1", t1[:5]) == 5
    # Resent (a lost answer), overlapping, and out of order: each entry once.
    assert store.ingest("T1", t1[2:][::-1]) == 8
    assert store.ingest("T1", t1) == 8
    assert store.count_entries("T1") == 8 and store.high_water("T1") == 8
    got = store.entries("T1")
    assert [e.id for e in got] == list(range(1, 9)) and got[2] == t1[2]
    store.ingest("T2", chained("T2", [entry(1)]))
    assert store.count_entries() == 9


def test_rounds_are_indexed_for_search_by_table_rule_and_card_sequence(store: FloorStore) -> None:
    import json

    def ev(i: int, rid: str, **body: Any) -> ShippedEntry:
        return ShippedEntry(i, 10_000 * i, "event", None, None, None, None, rid, json.dumps(body), None)

    cards = [parse_card(c) for c in ("As", "Ks", "Qs")]
    t1_entries = chained("T1", [ev(1, "T1-000001", type="round_opened", game="megalink-three-card-poker")]
                 + [ev(2 + k, "T1-000001", type="card_placed", card=c) for k, c in enumerate(cards)]
                 + [ev(5, "T1-000001", type="flagged", irregularity={"id": 1, "rules": ["5.3"], "decision": "pending"})]
                 + [ShippedEntry(6, 60_000, "settlement", None, None, None, None, "T1-000001", "{}", None)])
    store.ingest("T1", t1_entries[:5])
    store.ingest("T2", chained("T2", [ev(1, "T2-000001", type="round_opened", game="megalink-three-card-poker"),
                                      ev(2, "T2-000001", type="card_placed", card=0)]))
    # The same batch again (its answer lost): the round's cards and flags are indexed once.
    store.ingest("T1", t1_entries[:4])
    (only,) = store.search_rounds(table="T1")
    assert only["cards"] == ["As", "Ks", "Qs"] and only["rules_flagged"] == ["5.3"]
    (t1,) = store.tables()[:1]
    assert t1["current_round"] == "T1-000001" and t1["open_flags"] == {"T1-000001#1": ["5.3"]}
    from cardshoe.cards import card_text

    seq = " ".join(card_text(c) for c in cards)
    assert [r["round_id"] for r in store.search_rounds(cards=seq)] == ["T1-000001"]
    assert [r["round_id"] for r in store.search_rounds(cards=" ".join(seq.split()[1:]))] == ["T1-000001"]
    assert store.search_rounds(cards=" ".join(reversed(seq.split()))) == []
    assert [r["round_id"] for r in store.search_rounds(rule="5.3")] == ["T1-000001"]
    assert store.search_rounds(rule="5.") == []  # a rule, not a prefix
    assert [r["round_id"] for r in store.search_rounds(table="T2")] == ["T2-000001"]
    assert [r["round_id"] for r in store.search_rounds(since_ns=15_000)] == []
    assert len(store.search_rounds(until_ns=15_000)) == 2
    store.ingest("T1", t1_entries[5:])
    assert store.tables()[0]["open_flags"] == {}


def test_the_short_path_under_the_lock_equals_settling_against_the_pool() -> None:
    # `prepare` outside the lock, arithmetic under it: for every kind of round and any pool
    # state, the same assignment as settling the round against the pool in full.
    from cardshoe.floor.progressive import PoolState, assign, prepare

    link = LinkSettings(LINK, RESET, 33_333)
    rounds = [round_file("T1-1", seat(1, NOTHING[0]), community=NOTHING[1]),
              round_file("T1-2", seat(1, QUADS[0]), community=QUADS[1]),
              round_file("T1-3", seat(1, SF[0]), community=SF[1]),
              round_file("T1-4", seat(3, ROYAL[0]), community=ROYAL[1]),
              round_file("T1-5", seat(1, NOTHING[0], progressive=0), community=NOTHING[1])]
    for data in rounds:
        for state in (PoolState(0, 0, 0), PoolState(1_234_567, 999_999, 41), PoolState(RESET, 1, 7)):
            assert assign(link, state, "T1", data, prepare(link, data)) == assign(link, state, "T1", data)


def test_a_withdrawn_round_is_never_assigned_and_an_assigned_one_is_not_withdrawn(store: FloorStore) -> None:
    # Reading 73: a table voids a round it sent without hearing the answer only once the floor
    # says it never assigned it; the floor then refuses any settlement of it still on its way.
    from cardshoe.floor.store import RoundWithdrawn

    configure(store)  # 5%: 25 per 500
    sf = round_file("T1-1", seat(1, SF[0]), community=SF[1])
    assigned = store.settle(LINK, "T1", sf)
    again = store.withdraw(LINK, "T1", "T1-1")
    assert again is not None and again == assigned  # assigned: the table must settle with it
    assert store.pool(LINK)["pool"] == 3_000_025 - 300_002  # 10% of 3,000,025 (4.4), floored
    assert store.withdraw(LINK, "T1", "T1-2") is None  # never seen: withdrawn
    assert store.withdraw(LINK, "T1", "T1-2") is None  # asked again, the same answer
    with pytest.raises(RoundWithdrawn):
        store.settle(LINK, "T1", round_file("T1-2", seat(1, *NOTHING[:1]), community=NOTHING[1]))
    # Nothing moved for it: one round on the link, the pool as the first left it.
    assert [h["round_id"] for h in store.history(LINK)] == ["T1-1"]
    assert store.pool(LINK)["pool"] == 3_000_025 - 300_002
    # Another table's round of the same id is its own.
    assert store.settle(LINK, "T2", round_file("T1-2", seat(1, *NOTHING[:1]), community=NOTHING[1])).seq == 2
    with pytest.raises(UnknownLink):
        store.withdraw("nope", "T1", "T1-3")
