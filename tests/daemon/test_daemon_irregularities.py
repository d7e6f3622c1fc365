"""Irregularities as the daemon surfaces them, each with its rule: wrong counts (5.2, 5.3,
5.7), exposed cards (5.4, 6.1), deck irregularities from the shoe (5.1, 5.8). Each path goes
through the real link and the API and ends in a settlement that `cardshoe replay` reproduces."""

from __future__ import annotations

from typing import Any

from daemon_harness import Table

from cardshoe.cards import parse_card
from cardshoe.journal import JournalReader
from cardshoe.journal.replay import replay

TCP = "three-card-poker"


def codes(texts: list[str]) -> list[int]:
    return [parse_card(t) for t in texts]


def _round(table: Table, seats: tuple[int, ...] = (2, 5)) -> str:
    rid = str(table.ok("POST", "/rounds")["round_id"])
    for seat in seats:
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    return rid


def _flags(table: Table, rid: str) -> list[dict[str, Any]]:
    return list(table.round(rid)["irregularities"])


def _nets(settlement: dict[str, Any]) -> dict[int, int]:
    return {s["seat"]: s["net"] for s in settlement["seats"]}


def _replays_identically(table: Table) -> None:
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def _flag_events(table: Table) -> list[dict[str, Any]]:
    with JournalReader(table.config.journal) as j:
        return [e.data() for e in j.entries(("event",)) if e.data()["type"] in ("flagged", "flag_resolved")]


def test_too_few_cards_to_a_seat_voids_that_seat_only_5_7(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = _round(table)
    table.deal(codes(["Ah", "Kh", "2c", "7d", "9s", "Qs", "Js", "4d"]))  # seat 2 got two cards
    table.shoe.key_press(2)
    table.shoe.wait_acked()
    [flag] = _flags(table, rid)
    assert flag["kind"] == "too_few_cards" and flag["decision"] == "pending"
    assert [e["index"] for e in flag["evidence"]] == list(range(1, 9))
    table.ok("POST", f"/rounds/{rid}/counts",
             json={"flag": flag["id"], "position": {"kind": "seat", "seat": 2}, "count": 2, "reporter": "dealer"})
    [flag] = _flags(table, rid)
    assert flag["decision"] == "void_seat" and "5.7" in flag["rules"]
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 5, "choice": "play"})
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    nets = _nets(settlement)
    assert nets[2] == 0  # returned
    assert nets[5] == -2000  # 2c 7d 9s against the dealer's queen high: ante and play lost
    _replays_identically(table)


def test_a_wrong_count_at_the_dealer_voids_the_round_5_3(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = _round(table)
    table.deal(codes(["Ah", "Kh", "Qh", "2c", "7d", "9s", "Qs", "Js", "4d", "5c"]))  # one card too many
    events = [e for e in _flag_events(table) if e["type"] == "flagged"]
    assert events and events[0]["irregularity"]["kind"] == "card_not_due"
    [flag] = _flags(table, rid)
    table.ok("POST", f"/rounds/{rid}/counts",
             json={"flag": flag["id"], "position": {"kind": "dealer", "seat": 0}, "count": 4, "reporter": "dealer"})
    snap = table.round(rid)
    assert snap["void"] is not None and "5.3" in snap["void"]["rules"]
    _round_after_void(table, rid)
    _replays_identically(table)


def test_complete_hands_moved_one_position_are_reconstructed_on_confirmation_5_2(make_table) -> None:  # type: ignore[no-untyped-def]
    # Reading of 5.2 (the rounds engine's): complete hands are moved so that each position
    # holds the hand a correct deal would have given it; the surplus hand goes to the discard.
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = _round(table)
    # The dealer also dealt a complete hand to seat 3, which has no wager: three cards too many.
    table.deal(codes(["Ah", "Kh", "Qh", "3c", "3d", "3s", "2c", "7d", "9s", "Qs", "Js", "4d"]))
    table.shoe.key_press(2)
    table.shoe.wait_acked()
    [flag] = _flags(table, rid)
    table.ok("POST", f"/rounds/{rid}/counts",
             json={"flag": flag["id"], "position": {"kind": "seat", "seat": 3}, "count": 3, "reporter": "dealer"})
    [flag] = _flags(table, rid)
    assert flag["decision"] == "reconstruction_proposed" and "5.2" in flag["rules"]
    table.ok("POST", f"/rounds/{rid}/confirmations", json={"flag": flag["id"], "confirmed": True, "supervisor": "PS-17"})
    snap = table.round(rid)
    assert snap["void"] is None
    assert snap["hands"]["seat 2"] == ["Ah", "Kh", "Qh"]
    assert snap["hands"]["seat 5"] == ["3c", "3d", "3s"]
    assert snap["hands"]["dealer"] == ["2c", "7d", "9s"]
    assert [snap["placements"][str(i)]["kind"] for i in (10, 11, 12)] == ["discard"] * 3
    _replays_identically(table)


def test_two_exposures_during_the_deal_void_the_round_5_4(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = _round(table)
    table.deal(codes(["Ah", "Kh", "Qh", "2c"]))
    table.shoe.key_press(3)  # EXPOSURE from the shoe's key
    table.shoe.wait_acked()
    table.ok("POST", f"/rounds/{rid}/exposures", json={"shoe_index": 2})
    snap = table.round(rid)
    assert snap["void"] is not None and "5.4" in snap["void"]["rules"]
    table.deal(codes(["7d", "9s", "Qs", "Js", "4d"]))
    assert table.round(rid)["void"] is not None  # cards after the void change nothing
    # Opening the next round closes the void one with its settlement: every wager returned.
    table.ok("POST", "/rounds")
    settlement = table.round(rid)["settlement"]
    assert settlement["void"] is not None and set(_nets(settlement).values()) == {0}
    _replays_identically(table)


def test_one_exposure_is_referred_to_the_shift_manager_6_1(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = _round(table)
    table.deal(codes(["Ah", "Kh", "Qh", "2c", "7d", "9s", "Qs", "Js", "4d"]))
    table.ok("POST", f"/rounds/{rid}/exposures", json={"place": {"kind": "seat", "seat": 5, "number": 1}})
    flags = _flags(table, rid)
    assert len(flags) == 1 and flags[0]["kind"] == "exposure" and "6.1" in flags[0]["rules"]
    assert table.round(rid)["void"] is None


def test_a_foreign_card_voids_the_round_and_earlier_rounds_stand_5_1(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    first = _round(table)
    table.deal(codes(["Ah", "Kh", "Qh", "2c", "7d", "9s", "Qs", "Js", "4d"]))
    table.shoe.key_press(2)
    table.ok("POST", f"/rounds/{first}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{first}/decisions", json={"seat": 5, "choice": "fold"})
    first_settlement = table.ok("POST", f"/rounds/{first}/settle", json={})["settlement"]
    second = _round(table)
    table.shoe.deal(parse_card("8h"))
    table.shoe.deal(0xFF, raw=b"CS99999999XX", deck_id=0, flags=2)  # a card of no known deck
    table.shoe.wait_acked()
    snap = table.round(second)
    assert snap["void"] is not None and "5.1" in snap["void"]["rules"]
    flag = next(f for f in snap["irregularities"] if f["kind"] == "deck")
    assert [e["index"] for e in flag["evidence"]] == [11] and flag["evidence"][0]["reader_id"] == b"CS99999999XX".hex()
    _round_after_void(table, second)
    # The earlier round stands (5.1.2): its settlement is unchanged.
    assert table.round(first)["settlement"] == first_settlement
    _replays_identically(table)


def test_an_unread_card_or_an_extra_card_at_the_shoe_voids_the_round_5_8(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = _round(table)
    table.shoe.deal(parse_card("Ah"))
    table.shoe.unread()
    table.shoe.wait_acked()
    snap = table.round(rid)
    assert snap["void"] is not None
    assert any(f["kind"] == "deck" for f in snap["irregularities"])
    rid2 = _round_after_void(table, rid)
    table.shoe.deal(parse_card("Kd"))
    table.shoe.deck_status(2, 16)  # integrity changed: EXTRA
    table.shoe.wait_acked()
    snap = table.round(rid2)
    assert snap["void"] is not None and any(f["kind"] == "deck" for f in snap["irregularities"])
    _round_after_void(table, rid2)
    _replays_identically(table)


def _round_after_void(table: Table, rid: str) -> str:
    # A void round is closed by settling it: every wager returned.
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    assert settlement["void"] is not None and set(_nets(settlement).values()) == {0}
    return _round(table)


def test_a_void_round_settles_with_every_wager_returned(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = _round(table)
    table.deal(codes(["Ah", "Kh", "Qh", "2c"]))
    table.shoe.key_press(3)
    table.shoe.wait_acked()
    table.ok("POST", f"/rounds/{rid}/exposures", json={"shoe_index": 2})
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    assert settlement["void"] is not None and set(_nets(settlement).values()) == {0}
    _replays_identically(table)


def test_a_manual_deal_slip_waits_for_the_supervisor_to_pick_a_placement_5_7(make_table) -> None:  # type: ignore[no-untyped-def]
    # TCP 3.8: one card at a time round seats 2, 5 and the dealer, three passes (9 cards). Seat 5
    # missed one pass: the shoe's order cannot say which, so the supervisor picks the candidate.
    table: Table = make_table(TCP, 7, dealing="manual")
    table.power_on_and_load()
    rid = _round(table)
    table.deal(codes(["Ah", "3c", "2c", "Kh", "3d", "7d", "Qh", "9s"]))
    table.shoe.key_press(2)
    table.shoe.wait_acked()
    [flag] = _flags(table, rid)
    table.ok("POST", f"/rounds/{rid}/counts",
             json={"flag": flag["id"], "position": {"kind": "seat", "seat": 5}, "count": 2, "reporter": "dealer"})
    [flag] = _flags(table, rid)
    assert flag["decision"] == "placement_proposed" and "5.7" in flag["rules"]
    assert len(flag["candidates"]) == 3  # seat 5 may have missed any of the three passes
    last_pass = next(c["number"] for c in flag["candidates"] if c["slip_pass"] == 3)
    # Several candidates: a confirmation must name one.
    refused = table.client.post(f"/rounds/{rid}/confirmations",
                                json={"flag": flag["id"], "confirmed": True, "supervisor": "PS-17"})
    assert 400 <= refused.status_code < 500
    table.ok("POST", f"/rounds/{rid}/confirmations",
             json={"flag": flag["id"], "confirmed": True, "supervisor": "PS-17", "candidate": last_pass})
    snap = table.round(rid)
    assert snap["void"] is None
    assert snap["hands"]["seat 2"] == ["Ah", "Kh", "Qh"]
    assert snap["hands"]["dealer"] == ["2c", "7d", "9s"]
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    nets = _nets(settlement)
    assert nets[5] == 0  # seat 5's hand removed from play, wagers returned (5.7)
    # Dealer 9 high does not qualify (3.11): ante 1 to 1 (+1000), play stands (0), and the royal
    # A-K-Q of hearts takes the ante bonus 5 to 1 (4.2: +5000).
    assert nets[2] == 6000
    _replays_identically(table)
