"""A Let It Ride round with a progressive wager and no Magic Card or Lucky Player on record is
never stranded (through the API, the shoe on a real pty, the journal replayed): 4.3 and 4.4
qualify a progressive wager for payouts that depend on the system's selection "for that round
of play", so settling without it is refused with a 409 naming what is missing, the round stays
in play, and then either the selection is recorded (late, on the record: reading 70) and the
round settles, or a supervisor voids it and every wager is returned."""

from __future__ import annotations

from typing import Any

from daemon_harness import Table, journal

from cardshoe.cards import parse_card
from cardshoe.journal.replay import replay
from cardshoe.settlement import parse_round, settle

LIR = "megalink-let-it-ride"
STAKE, PROGRESSIVE = 500, 100
# Seat 3's three cards, then the two community cards (3.6, 3.7): five odd cards, no pair of tens
# or better (3.3: every wager in play loses) and no progressive hand (4.2).
DEAL = ["Kh", "7c", "2d", "9s", "4h"]


def _dealt_round(table: Table) -> str:
    rid = str(table.ok("POST", "/rounds")["round_id"])
    for wager in ("one", "two", "dollar"):
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": wager, "amount": STAKE})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": "progressive", "amount": PROGRESSIVE})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in DEAL])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 3, "choice": "ride_1"})
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 3, "choice": "ride_2"})
    return rid


def _table(make_table: Any) -> Table:
    table: Table = make_table(LIR, 7, jackpot_reset=500_000)
    table.power_on_and_load()
    table.ok("PUT", "/jackpot", json={"amount": 1_000_000})
    return table


def _refused_for_the_selection(table: Table, rid: str, field: str) -> None:
    r = table.client.post(f"/rounds/{rid}/settle", json={})
    assert r.status_code == 409, r.text
    detail = r.json()["detail"]
    assert detail["field"] == field and detail["error"] == "MissingInputError", detail
    assert "4.3" in detail["message"] and "4.4" in detail["message"]
    assert table.round(rid)["status"] != "settled"  # still in play


def _replays(table: Table) -> None:
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def test_settling_without_the_selection_asks_for_it_and_recording_it_then_settles(make_table) -> None:  # type: ignore[no-untyped-def]
    table = _table(make_table)
    rid = _dealt_round(table)
    _refused_for_the_selection(table, rid, "magic_card, lucky_seat")
    # A restart rebuilds the round from the journal: still in play, still asking.
    table.restart_daemon()
    _refused_for_the_selection(table, rid, "magic_card, lucky_seat")
    # The progressive system had selected the king of hearts (in seat 3's three cards: 4.3) and
    # seat 4 as the Lucky Player (not seat 3: 4.4 pays nothing here).
    done = table.ok("POST", f"/rounds/{rid}/progressive", json={"magic_card": "Kh", "lucky_seat": 4})
    types = [e["type"] for e in done["events"]]
    assert types == ["flagged", "progressive_selected"], types
    flag = done["events"][0]["irregularity"]
    assert flag["kind"] == "not_covered" and flag["rules"] == ["4.3", "4.4"] and flag["decision"] == "acknowledged"
    assert done["events"][1]["magic_card"] == "Kh" and done["events"][1]["lucky_seat"] == 4
    # A value on record cannot be changed now the cards are out.
    changed = table.client.post(f"/rounds/{rid}/progressive", json={"magic_card": "2d", "lucky_seat": 4})
    assert changed.status_code == 409, changed.text
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    (seat,) = settlement["seats"]
    # 3.3: the 1, 2 and $ let ride all lose; 4.3/4.5: the Magic Card pays the progressive 5 to 1.
    assert seat["net"] == -3 * STAKE + 5 * PROGRESSIVE
    assert settle(parse_round(table.ok("GET", f"/rounds/{rid}/export"))).to_json() == settlement
    _replays(table)


def test_a_supervisor_can_void_the_round_instead_and_the_next_round_opens(make_table) -> None:  # type: ignore[no-untyped-def]
    table = _table(make_table)
    rid = _dealt_round(table)
    _refused_for_the_selection(table, rid, "magic_card, lucky_seat")
    voided = table.ok("POST", f"/rounds/{rid}/void",
                      json={"rule": "6.1", "reason": "the progressive system's selection was lost", "by": "SM-4"})
    assert "round_voided" in [e["type"] for e in voided["events"]]
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    # A void round returns every wager, the progressive one included.
    assert settlement["void"] is not None and [s["net"] for s in settlement["seats"]] == [0]
    nxt = table.ok("POST", "/rounds")["round_id"]
    assert nxt != rid and table.round(nxt)["status"] == "betting"
    with journal(table) as j:
        failed = [e.data() for e in j.entries(("event",)) if e.data()["type"] == "settlement_failed"]
    assert failed == []  # never closed without a settlement
    _replays(table)


def test_a_missing_lucky_player_alone_is_named(make_table) -> None:  # type: ignore[no-untyped-def]
    table = _table(make_table)
    rid = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{rid}/progressive", json={"magic_card": "Ac"})  # before the deal
    for wager in ("one", "two", "dollar"):
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": wager, "amount": STAKE})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": "progressive", "amount": PROGRESSIVE})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in DEAL])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 3, "choice": "pull_1"})
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 3, "choice": "pull_2"})
    _refused_for_the_selection(table, rid, "lucky_seat")
    table.ok("POST", f"/rounds/{rid}/progressive", json={"lucky_seat": 3})
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    # 3.10/3.14: the 1 and 2 withdrawn and returned; 3.3 the $ loses; 4.4/4.5: seat 3 is the
    # Lucky Player with a progressive wager, 5 to 1.
    assert settlement["seats"][0]["net"] == -STAKE + 5 * PROGRESSIVE
    _replays(table)
