"""The table API in-process (TestClient): auth, 4xx naming the field, wagers closed at
"no more bets" (5.5-5.6) without losing what was accepted, the SSE stream, the OpenAPI."""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any

from daemon_harness import TOKEN, Table, wait_for

from cardshoe.cards import parse_card
from cardshoe.journal import JournalReader
from cardshoe.journal.replay import replay
from cardshoe.settlement import parse_round, settle

TCP = "three-card-poker"


def c(text: str) -> int:
    return parse_card(text)


def test_every_endpoint_needs_the_tables_token(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    bare = table.client
    for headers in ({"Authorization": ""}, {"Authorization": "Bearer wrong-token-wrong-token"}):
        assert bare.post("/rounds", headers=headers).status_code == 401
        assert bare.get("/status", headers=headers).status_code == 401
        r = bare.get("/events?after=0&limit=1", headers=headers)
        assert r.status_code == 401
        assert r.json()["detail"]["field"] == "Authorization"
    with JournalReader(table.config.journal) as j:
        assert j.count("input") == 1  # only the daemon's own table setup: nothing got in


def test_bad_input_is_a_4xx_naming_the_field_and_loses_nothing(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": "ante", "amount": 2500})
    cases: list[tuple[dict[str, Any], str]] = [
        ({"seat": 9, "wager": "ante", "amount": 100}, "seat"),
        ({"seat": 2, "wager": "ante", "amount": 10.5}, "amount"),
        ({"seat": 2, "wager": "ante", "amount": "100"}, "amount"),
        ({"seat": 2, "wager": "ante"}, "amount"),
        ({"seat": 2, "wager": "six_card_bonus", "amount": 100}, "wager"),
    ]
    for body, field in cases:
        r = table.client.post(f"/rounds/{rid}/wagers", json=body)
        assert 400 <= r.status_code < 500, (body, r.text)
        detail = r.json()["detail"]
        named = detail["field"] if isinstance(detail, dict) else ".".join(str(x) for x in detail[0]["loc"])
        assert field in named, (body, detail)
    r = table.client.post("/rounds/NOPE/wagers", json={"seat": 1, "wager": "ante", "amount": 100})
    assert r.status_code == 404 and r.json()["detail"]["field"] == "round_id"  # no such round
    r = table.client.post(f"/rounds/{rid}/progressive", json={"magic_card": "10d"})
    assert r.status_code == 422 and r.json()["detail"]["field"] == "magic_card"
    assert table.round(rid)["wagers"] == {"3": {"ante": 2500}}


def test_wagers_close_at_no_more_bets(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    table.ok("PUT", f"/rounds/{rid}/wagers/1/ante", json={"amount": 2000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    for method, url, body in (
        ("PUT", f"/rounds/{rid}/wagers/1/ante", {"amount": 5000}),        # increase (5.5)
        ("PUT", f"/rounds/{rid}/wagers/1/ante", {"amount": 0}),           # withdraw (5.6)
        ("POST", f"/rounds/{rid}/wagers", {"seat": 2, "wager": "ante", "amount": 100}),  # place (5.5)
    ):
        r = table.client.request(method, url, json=body)
        assert r.status_code == 409, r.text
        assert r.json()["detail"]["field"] == "wager"
        assert r.json()["detail"]["rule"] == "5.5-5.6"
    assert table.round(rid)["wagers"] == {"1": {"ante": 2000}}
    with JournalReader(table.config.journal) as j:
        refused = [e.data() for e in j.entries(("event",)) if e.data()["type"] == "input_refused"]
        assert len(refused) == 3 and all(r["error"] == "WagersClosedError" for r in refused)


def _sse(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "data" in fields:
            out.append({"id": fields.get("id"), "event": fields["event"], "data": json.loads(fields["data"])})
    return out


def test_the_event_stream_shows_cards_as_placed_live_and_from_the_journal(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 6, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    live: list[dict[str, Any]] = []
    connected = threading.Event()

    def listen() -> None:
        with table.client.stream("GET", "/events?limit=6") as r:
            assert r.status_code == 200
            buf = ""
            for chunk in r.iter_text():
                buf += chunk
                if ": connected" in buf:
                    connected.set()
            live.extend(_sse(buf))

    t = threading.Thread(target=listen)
    t.start()
    assert connected.wait(5)
    table.deal([c(x) for x in ["2c", "3c", "4c", "5d", "6d"]])
    t.join(10)
    placed = [e for e in live if e["event"] == "card_placed"]
    assert [e["data"]["data"]["card"] for e in placed] == ["2c", "3c", "4c", "5d", "6d"][: len(placed)]
    assert placed and placed[0]["data"]["round_id"] == rid
    # The same events again from the journal, after reconnecting with Last-Event-ID.
    first_id = int(live[0]["id"]) - 1
    r = table.client.get("/events?limit=6", headers={"Last-Event-ID": str(first_id)})
    again = _sse(r.text)
    assert [e["id"] for e in again] == [e["id"] for e in live]
    assert [e["data"] for e in again] == [e["data"] for e in live]


def test_openapi_describes_the_api(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    spec = table.client.get("/openapi.json").json()
    for path in ("/rounds", "/rounds/{round_id}/wagers", "/rounds/{round_id}/no-more-bets", "/rounds/{round_id}/settle",
                 "/rounds/{round_id}/exposures", "/rounds/{round_id}/confirmations", "/jackpot", "/events"):
        assert path in spec["paths"], path
    assert "HTTPBearer" in json.dumps(spec["components"]["securitySchemes"])


def test_status_shows_the_link_and_counters(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    status = table.ok("GET", "/status", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status["link_up"] is True and status["epoch"] > 1_700_000_000 and status["shoe"] is not None
    wait_for(lambda: table.ok("GET", "/status")["link"]["acks_sent"] > 0, what="acks")


def test_the_jackpot_pool_set_at_the_table_is_the_one_settled_against(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7, jackpot_reset=1_000_000, limits=(("progressive", 100, 100),))
    table.power_on_and_load()
    r = table.client.put("/jackpot", json={"amount": -5})
    assert r.status_code == 422 and "amount" in json.dumps(r.json())
    table.ok("PUT", "/jackpot", json={"amount": 12_345_600})
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "progressive", "amount": 100})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([c(x) for x in ["Ah", "Kh", "Qh", "2c", "7d", "9s"]])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 1, "choice": "play"})
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    assert settlement["jackpot"]["pool_before"] == 12_345_600


def test_a_supervisors_clear_reaches_the_shoe(make_table) -> None:  # type: ignore[no-untyped-def]
    import struct

    import wire

    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    r = table.client.post("/shoe/clear", json={"integrity_mask": 0x1F, "fault_mask": 1 << 2})
    assert r.status_code == 202
    (payload,) = table.shoe.wait_command(wire.CLEAR)
    assert struct.unpack("<HH", payload) == (0x1F, 4)
    r = table.client.post("/shoe/clear", json={"integrity_mask": 70000, "fault_mask": 0})
    assert r.status_code == 422


def test_a_jackpot_pool_on_a_table_with_no_reset_is_refused_at_once(make_table) -> None:  # type: ignore[no-untyped-def]
    """No [jackpot] reset: the pool could never be settled, so PUT /jackpot answers 409 naming
    the setting, and the table's rounds settle as before (issue 12 item 5)."""
    table: Table = make_table(TCP, 7)  # no jackpot reset configured
    table.power_on_and_load()
    r = table.client.put("/jackpot", json={"amount": 12_345_600})
    assert r.status_code == 409, r.text
    assert r.json()["detail"]["field"] == "jackpot.reset" and "[jackpot] reset" in r.json()["detail"]["message"]
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    r = table.client.post(f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "progressive", "amount": 100})
    assert r.status_code == 409 and r.json()["detail"]["field"] == "jackpot.reset"
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([c(x) for x in ["Ah", "Kh", "Qh", "2c", "7d", "9s"]])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 1, "choice": "play"})
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    assert settlement["jackpot"] is None and settlement["seats"][0]["net"] > 0


def test_a_round_the_settlement_engine_refuses_stays_in_play_and_settles_once_the_pool_is_given(make_table) -> None:  # type: ignore[no-untyped-def]
    """A progressive's settlement needs the pool (MTCP/TCP 4.4 pay shares of it): without one
    the settle is refused naming `jackpot.pool`, and the round is not closed, so it can still
    be settled with the pool as displayed (or voided)."""
    table: Table = make_table(TCP, 7, jackpot_reset=1_000_000)  # but no pool given yet
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "progressive", "amount": 100})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([c(x) for x in ["Ah", "Kh", "Qh", "2c", "7d", "9s"]])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 1, "choice": "play"})
    r = table.client.post(f"/rounds/{rid}/settle", json={})
    assert r.status_code == 409 and r.json()["detail"]["field"] == "jackpot.pool", r.text
    assert table.round(rid)["status"] != "settled"  # still in play: nothing was closed
    # The daemon restarts (the round is rebuilt from the journal) and the supervisor settles
    # it with the pool as displayed.
    table.kill_daemon()
    table.start_daemon()
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={"jackpot_pool": 2_000_000})["settlement"]
    assert settlement["seats"][0]["net"] > 0
    exported = table.ok("GET", f"/rounds/{rid}/export")
    assert settle(parse_round(exported)).to_json() == settlement
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def test_the_stream_carries_hands_flags_settlements_and_link_events(make_table) -> None:  # type: ignore[no-untyped-def]
    from cardshoe.daemon.bus import streamable

    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    for seat in (2, 5):
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([c(x) for x in ["Ah", "Kh", "Qh", "2c", "7d", "9s", "Qs", "Js", "4d"]])
    table.ok("POST", f"/rounds/{rid}/exposures", json={"shoe_index": 4})  # one exposure: referred (6.1)
    table.plug.unplug()
    wait_for(lambda: not table.daemon.link_up, what="link lost")
    table.plug.replug()
    wait_for(lambda: table.daemon.link_up, what="link back")
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 5, "choice": "fold"})
    flag = next(f for f in table.round(rid)["irregularities"] if f["kind"] == "exposure")
    if flag["decision"] == "referred":
        table.ok("POST", f"/rounds/{rid}/confirmations", json={"flag": flag["id"], "confirmed": True,
                                                                 "supervisor": "SM-2"})
    table.ok("POST", f"/rounds/{rid}/settle", json={})
    with JournalReader(table.config.journal) as j:
        n = sum(1 for e in j.entries() if streamable(e.kind, e.data()))
    events = _sse(table.client.get(f"/events?after=0&limit={n}").text)
    types = [e["event"] for e in events]
    for wanted in ("round_opened", "card_placed", "hand_complete", "flagged", "link_lost", "link_up",
                   "settlement", "daemon_started"):
        assert wanted in types, wanted
    assert types.index("link_lost") < types.index("link_up", types.index("link_lost"))
    lost = next(e for e in events if e["event"] == "link_lost")
    assert lost["data"]["data"]["at_ns"] > 0


def test_status_codes_are_as_the_docs_say(make_table) -> None:  # type: ignore[no-untyped-def]
    """docs/api.md, "Errors": 422 only for a request the OpenAPI description does not allow;
    a well-formed request the table refuses is 409 naming the error type; an unknown round 404."""
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    # A wager Three Card Poker does not have (a Let It Ride wager): well-formed, refused by the game.
    r = table.client.post(f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "dollar", "amount": 1000})
    assert r.status_code == 409 and r.json()["detail"]["error"] == "UnknownWagerError", r.text
    # A wager no game has: not in the description's enum.
    r = table.client.post(f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "lottery", "amount": 1000})
    assert r.status_code == 422 and r.json()["detail"]["error"] == "ValidationError"
    assert r.json()["detail"]["field"] == "wager" and r.json()["detail"]["errors"][0]["loc"] == ["body", "wager"]
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([c(x) for x in ["Ah", "Kh", "Qh", "2c", "7d", "9s"]])
    # Settling before the player decided (TCP 3.9: the ante player plays or folds first).
    r = table.client.post(f"/rounds/{rid}/settle", json={})
    assert r.status_code == 409 and r.json()["detail"]["error"] == "DecisionError", r.text
    # A decision the game does not take (Singapore Stud's `bet`), and a seat with no hand.
    r = table.client.post(f"/rounds/{rid}/decisions", json={"seat": 1, "choice": "bet"})
    assert r.status_code == 409 and r.json()["detail"]["error"] == "DecisionError", r.text
    r = table.client.post(f"/rounds/{rid}/decisions", json={"seat": 4, "choice": "play"})
    assert r.status_code == 409 and r.json()["detail"]["error"] == "BadSeatError", r.text
    # Unknown round and flag: 404.
    assert table.client.get("/rounds/T1-999999").status_code == 404
    r = table.client.post(f"/rounds/{rid}/confirmations", json={"flag": 9, "confirmed": True, "supervisor": "SM"})
    assert r.status_code == 404 and r.json()["detail"]["field"] == "flag"
    # A query parameter the endpoint does not take is refused, not ignored.
    r = table.client.get(f"/rounds/{rid}?veiw=pit")
    assert r.status_code == 422 and r.json()["detail"]["field"] == "veiw"
    # Whole numbers sent as 1000.0 are integers (JSON Schema); 10.5 and "1000" are not.
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 1.0, "choice": "play"})
    settled = table.ok("POST", f"/rounds/{rid}/settle", json={})
    assert settled["settlement"]["seats"][0]["seat"] == 1  # the settlement itself, not nested
    assert table.round(rid)["settlement"] == settled["settlement"]
    # The stream from the start, as the bench's client asks for it (`after=-1`: nothing seen yet).
    first = _sse(table.client.get("/events?after=-1&limit=1").text)
    assert [e["event"] for e in first] == ["daemon_started"]
    # An unknown path answers in the same error form.
    r = table.client.get("/no-such-thing")
    assert r.status_code == 404 and r.json()["detail"]["error"] == "NotFound"


def test_cards_are_text_in_rounds_answers_and_the_stream(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 4, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    deal = ["Td", "As", "2c", "Kh", "Qh", "Jh"]  # TCP 3.7: three to seat 4, then three to the dealer
    table.deal([c(x) for x in deal])
    table.ok("POST", f"/rounds/{rid}/exposures", json={"shoe_index": 2})  # referred (6.1), with evidence
    snap = table.round(rid)
    assert snap["hands"] == {"seat 4": deal[:3], "dealer": deal[3:]}
    assert [snap["cards"][str(i)]["card"] for i in range(1, 7)] == deal
    assert all("code" not in card for card in snap["cards"].values())
    flag = snap["irregularities"][0]
    assert [(e["index"], e["card"]) for e in flag["evidence"]] == [(2, "As")]
    with JournalReader(table.config.journal) as j:
        n = sum(1 for e in j.entries(("event", "settlement", "link", "daemon")))
    events = _sse(table.client.get(f"/events?after=0&limit={n}").text)
    placed = [e["data"]["data"]["card"] for e in events if e["event"] == "card_placed"]
    hands = [e["data"]["data"]["cards"] for e in events if e["event"] == "hand_complete"]
    flagged = [e["data"]["data"]["irregularity"]["evidence"][0]["card"] for e in events if e["event"] == "flagged"]
    assert placed == deal and hands == [deal[:3], deal[3:]] and flagged == ["As"]
    # The journal itself keeps the codes (replay compares it byte for byte).
    with JournalReader(table.config.journal) as j:
        journaled = [e.data()["card"] for e in j.entries(("event",)) if e.data()["type"] == "card_placed"]
    assert journaled == [c(x) for x in deal]


def test_the_wager_and_choice_enums_are_the_engines() -> None:
    from cardshoe import rounds
    from cardshoe.api import models
    from cardshoe.rounds.procedures import GAME_IDS, WAGERS

    assert {w.value for w in models.Wager} == set().union(*WAGERS.values())
    assert [ch.value for ch in models.Choice] == [ch.value for ch in rounds.Choice]
    assert [g.value for g in models.Game] == list(GAME_IDS)
    assert [k.value for k in models.PlaceKind] == [k.value for k in rounds.PlaceKind]
    assert [d.value for d in models.Decision] == [d.value for d in rounds.DecisionKind]
