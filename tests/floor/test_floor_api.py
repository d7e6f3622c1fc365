"""The floor's HTTP API: a credential per table and per role (issue 21 item 1), a round settled
by its id from the journal the floor holds (item 2), the floor's signed assignments (item 4),
the search, and 503 (never a 500) when the store is away. On SQLite and on PostgreSQL.

Expectations from the rules: Megalink Three Card Poker 4.4 pays a Royal Flush (the seat's
three cards with the two community cards) 100% of the pool as displayed, which holds the
round's own contribution (reading 58: 5% of the 500 staked, 25)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from fastapi.testclient import TestClient

from cardshoe.floor.progressive import LinkSettings
from cardshoe.floor.signing import verify_signed
from cardshoe.floor.store import FloorStore
from floor_chain import genesis
from floor_journal import RESET, MiniTable, wire
from floor_server import FLOOR_PUBKEY, TOKENS
from floor_server import app as floor_app

START = 3_000_000
RATE = 50_000
ROYAL = ("As Ks Qs", "Kd 6c 2h", "Js Ts")
NOTHING = ("4c 7d Jh", "Kd 6c 2h", "3s 8c")


def client(store: FloorStore, who: str | None = "T1", app: Any = None) -> TestClient:
    headers = {} if who is None else {"Authorization": f"Bearer {TOKENS.get(who, who)}"}
    return TestClient(floor_app(store) if app is None else app, headers=headers)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[MiniTable]:
    t = MiniTable(tmp_path / "T1.sqlite")
    yield t
    t.close()


def ship(c: TestClient, table: MiniTable, upto: int | None = None) -> Any:
    return c.post(f"/tables/{table.stream}/entries", json={"entries": wire(table.entries(upto=upto)),
                                                           "head": dict(zip(("id", "chain"), table.head()))})


def test_the_floor_settles_a_round_by_its_id_from_the_journal_it_holds_and_signs_it(
        store: FloorStore, table: MiniTable) -> None:
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    c = client(store)
    rid = table.play(*ROYAL)
    entry = table.send(rid)
    r = ship(c, table)
    assert r.status_code == 200 and r.json()["high_water"] == entry and r.json()["pool"] == START, r.text
    r = c.post("/links/mega/settle", json={"table": table.stream, "round_id": rid, "entry": entry})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert [h["amount"] for h in answer["hits"]] == [START + 25]  # 4.4: 100% of the pool with its 25
    assert (answer["pool"], answer["pool_after"], answer["entry"]) == (START + 25, RESET, entry)
    # Signed by the floor, over the journal's chain value at the entry it settled from.
    assert verify_signed(answer["signed"], FLOOR_PUBKEY) is None
    sent = [e for e in table.entries() if e.id == entry][0]
    assert answer["signed"]["assignment"]["chain"] == sent.chain == answer["chain"]
    assert answer["signed"]["assignment"]["table"] == table.stream
    # Asked again (its answer lost): the same answer, nothing paid twice.
    again = c.post("/links/mega/settle", json={"table": table.stream, "round_id": rid, "entry": entry})
    assert again.status_code == 200 and again.json()["signed"] == answer["signed"]
    assert store.pool("mega")["pool"] == RESET and len(store.hits("mega")) == 1
    assert client(store, None).get("/public-key").json()["public_key"] == FLOOR_PUBKEY.hex()


def test_a_round_not_all_received_is_refused_until_it_is_and_its_tail_can_come_with_the_request(
        store: FloorStore, table: MiniTable) -> None:
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    c = client(store)
    rid = table.play(*NOTHING)
    entry = table.send(rid)
    assert ship(c, table, upto=entry - 3).status_code == 200
    body = {"table": table.stream, "round_id": rid, "entry": entry}
    r = c.post("/links/mega/settle", json=body)
    assert r.status_code == 409 and r.json()["detail"]["error"] == "RoundIncomplete", r.text
    assert store.pool("mega")["rounds"] == 0
    # The table sends the rest of its journal up to its settle_sent with the request.
    r = c.post("/links/mega/settle", json={**body, "entries": wire(table.entries(after=entry - 3, upto=entry))})
    assert r.status_code == 200 and r.json()["contribution"] == 25, r.text
    assert store.high_water(table.stream) == entry


def test_fabricated_settle_requests_are_never_paid(store: FloorStore, table: MiniTable, tmp_path: Path) -> None:
    # Each request below is one a holder of a table's credential (or of a reader's) could make
    # to be paid for a round no shoe dealt. None is paid; the pool and its history stay as the
    # one real round left them.
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    c = client(store)
    rid = table.play(*ROYAL)
    entry = table.send(rid)
    assert ship(c, table).status_code == 200
    assert c.post("/links/mega/settle", json={"table": table.stream, "round_id": rid,
                                              "entry": entry}).status_code == 200
    royal_file = table.control.round_export(rid)
    pool, rounds = store.pool("mega")["pool"], store.pool("mega")["rounds"]
    wrong_key = MiniTable(tmp_path / "wrong-key.sqlite")
    wrong_rid = str(wrong_key.control.open_round().round_id)
    wrong_key.control.place_wager(wrong_rid, 2, "ante", 1000)
    wrong_key.control.place_wager(wrong_rid, 2, "progressive", 500)
    wrong_key.control.no_more_bets(wrong_rid)
    for text in "As Ks Qs Kd 6c 2h Js Ts 4d".split():
        wrong_key.card(text, key=bytes(range(1, 33)))
    wrong_key.control.deal_complete(wrong_rid)
    wrong_key.control.decision(wrong_rid, 2, "play")
    wrong_entry = wrong_key.send(wrong_rid)
    assert ship(c, wrong_key).status_code == 200  # shipped: its chain is whole
    other = client(store, "T2")
    tries = [
        ("a round file re-sent under a new round id (the old API)", c,
         {"table": table.stream, "round": {**royal_file, "round_id": "T1-000777"}}),
        ("a table that never shipped anything", c, {"table": "NOSUCH.000000000000", "round_id": "NOSUCH-000001",
                                                     "entry": 1}),
        ("a round id the journal never opened", c, {"table": table.stream, "round_id": "T1-000777", "entry": entry}),
        ("an entry that is not a settle_sent", c, {"table": table.stream, "round_id": rid, "entry": entry - 1}),
        ("an entry the floor does not hold", c, {"table": table.stream, "round_id": rid, "entry": entry + 50}),
        ("the real round again under another table's credential", other,
         {"table": table.stream, "round_id": rid, "entry": entry}),
        ("a round dealt by frames not tagged with the shoe's key", c,
         {"table": wrong_key.stream, "round_id": wrong_rid, "entry": wrong_entry}),
        ("a pit token", client(store, "pit"), {"table": table.stream, "round_id": rid, "entry": entry}),
        ("a surveillance token", client(store, "surveillance"), {"table": table.stream, "round_id": rid,
                                                                 "entry": entry}),
        ("a supervisor token", client(store, "supervisor"), {"table": table.stream, "round_id": rid,
                                                             "entry": entry}),
        ("no token", client(store, None), {"table": table.stream, "round_id": rid, "entry": entry}),
    ]
    paid = []
    for what, who, body in tries:
        r = who.post("/links/mega/settle", json=body)
        if r.status_code == 200 and r.json().get("seq") != 1:
            paid.append(what)
        assert r.status_code in (401, 403, 404, 409, 422), (what, r.status_code, r.text)
    r = c.post("/links/other/settle", json={"table": table.stream, "round_id": rid, "entry": entry})
    assert r.status_code == 403  # a link that is not the table's
    assert paid == []
    assert (store.pool("mega")["pool"], store.pool("mega")["rounds"]) == (pool, rounds)
    assert [h["round_id"] for h in store.hits("mega")] == [rid]
    wrong_key.close()


def test_a_frame_that_does_not_verify_is_named_in_the_refusal(store: FloorStore, tmp_path: Path) -> None:
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    c = client(store)
    t = MiniTable(tmp_path / "t.sqlite")
    rid = str(t.control.open_round().round_id)
    t.control.place_wager(rid, 2, "ante", 1000)
    t.control.place_wager(rid, 2, "progressive", 500)
    t.control.no_more_bets(rid)
    for k, text in enumerate("As Ks Qs Kd 6c 2h Js Ts 4d".split()):
        t.card(text, key=bytes(range(1, 33)) if k == 1 else bytes(range(32)))
    t.control.deal_complete(rid)
    t.control.decision(rid, 2, "play")
    entry = t.send(rid)
    frames = [e.id for e in t.entries() if e.kind == "frame"]
    assert ship(c, t).status_code == 200
    r = c.post("/links/mega/settle", json={"table": t.stream, "round_id": rid, "entry": entry})
    detail = r.json()["detail"]
    assert r.status_code == 409 and detail["error"] == "FramesUnverified", r.text
    assert f"frame entry {frames[1]} " in detail["message"] and "bad_tag" in detail["message"]
    assert store.pool("mega")["rounds"] == 0
    t.close()


def test_the_store_away_answers_503(pg_cluster: Any) -> None:
    # A PostgreSQL store whose server stops: the floor answers 503 (the tables retry), and
    # serves again once the server is back.
    from floor_stores import fresh_database

    store = FloorStore.postgres(fresh_database(pg_cluster))
    c = client(store, "pit")
    assert c.get("/links").status_code == 200
    pg_cluster.stop()
    try:
        r = c.get("/links")
        assert r.status_code == 503 and r.json()["detail"]["error"] == "StoreUnavailable"
    finally:
        pg_cluster.start()
    assert c.get("/links").status_code == 200
    store.close()


def test_withdraw_is_the_tables_own_or_the_floor_supervisors(store: FloorStore, table: MiniTable) -> None:
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    c = client(store)
    rid = table.play(*ROYAL)
    entry = table.send(rid)
    ship(c, table)
    assert c.post("/links/mega/settle", json={"table": table.stream, "round_id": rid,
                                              "entry": entry}).status_code == 200
    r = c.post("/links/mega/withdraw", json={"table": table.stream, "round_id": rid})
    assert r.status_code == 200 and r.json()["status"] == "assigned"
    assert r.json()["assignment"]["hits"][0]["amount"] == START + 25
    assert verify_signed(r.json()["assignment"]["signed"], FLOOR_PUBKEY) is None
    r = client(store, "supervisor").post("/links/mega/withdraw", json={"table": table.stream, "round_id": "T1-000002"})
    assert r.status_code == 200 and r.json() == {"table": table.stream, "round_id": "T1-000002",
                                                 "status": "withdrawn", "assignment": None}
    r = client(store, "T2").post("/links/mega/withdraw", json={"table": table.stream, "round_id": "T1-000003"})
    assert r.status_code == 403
    r = c.post("/links/none/withdraw", json={"table": table.stream, "round_id": "T1-000003"})
    assert r.status_code == 404 and r.json()["detail"]["field"] == "link"


def test_the_floor_supervisor_configures_a_link_and_the_pool_stays(store: FloorStore) -> None:
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    r = client(store, "supervisor").put("/links/mega", json={"reset": RESET, "rate_ppm": 60_000})
    assert r.status_code == 200 and (r.json()["pool"], r.json()["rate_ppm"]) == (START, 60_000)
    r = client(store, "supervisor").put("/links/new", json={"reset": 5, "rate_ppm": 1, "start": 7})
    assert r.status_code == 200 and r.json()["pool"] == 7
    assert client(store, "pit").put("/links/mega", json={"reset": 1, "rate_ppm": 1}).status_code == 403


def test_the_pit_sees_no_card_of_a_round_in_play_and_surveillance_does(store: FloorStore, table: MiniTable) -> None:
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    table.play(*NOTHING)
    assert ship(client(store), table).status_code == 200
    pit = client(store, "pit").get("/rounds").json()
    surv = client(store, "surveillance").get("/rounds").json()
    assert pit[0]["cards"] == [] and surv[0]["cards"][:3] == ["4c", "7d", "Jh"]
    assert client(store, "pit").get("/rounds", params={"cards": "4c 7d"}).json() == []
    assert len(client(store, "surveillance").get("/rounds", params={"cards": "4c 7d"}).json()) == 1


def test_bad_input_is_a_4xx_naming_the_field(store: FloorStore, table: MiniTable) -> None:
    c = client(store)
    r = c.post(f"/tables/{table.stream}/entries", json={"entries": [{"id": 0, "t_ns": 1, "kind": "frame",
                                                                     "body": "{}"}]})
    assert r.status_code == 422 and r.json()["detail"]["field"] == "entries[].id"
    r = c.post(f"/tables/{table.stream}/entries", json={"entries": [{"id": 1, "t_ns": 1, "kind": "frame",
                                                                     "body": "{}", "chain": "xyz"}]})
    assert r.status_code == 422 and r.json()["detail"]["field"] == "entries[].chain"
    assert client(store, "pit").get("/rounds", params={"cards": "A%"}).status_code == 422
    dup = b'{"table": "%s", "round_id": "a", "round_id": "b", "entry": 1}' % table.stream.encode()
    r = c.post("/links/mega/settle", content=dup, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "duplicate" in r.json()["detail"]["message"]


# -- every role against every endpoint (issue 21 item 1) ----------------------------------------

WHO = ("T1", "T2", "pit", "surveillance", "supervisor", None, "not-a-token-0123456789abcdef")


def endpoints(stream: str, rid: str, entry: int) -> list[tuple[str, str, Any, set[str | None]]]:
    """(method, path, body, who may call it). Reading the table's own mark and chain is the
    table's (to ship) and the readers'; the journal's entries are surveillance's."""
    readers = {"pit", "surveillance", "supervisor"}
    child = stream.rsplit(".", 1)[0] + ".0123456789ab"
    return [
        ("GET", "/public-key", None, set(WHO)),
        ("GET", "/floor", None, set(WHO)),
        ("GET", f"/tables/{stream}/high-water", None, {"T1"} | readers),
        ("GET", f"/tables/{stream}/chain?at=1", None, {"T1", "surveillance", "supervisor"}),
        ("POST", f"/tables/{stream}/entries", {"entries": []}, {"T1"}),
        ("POST", f"/tables/{child}/fork", {"parent": stream, "at": 0, "chain": genesis(stream)}, {"T1"}),
        ("POST", "/links/mega/settle", {"table": stream, "round_id": rid, "entry": entry}, {"T1"}),
        ("POST", "/links/mega/withdraw", {"table": stream, "round_id": "T1-000099"}, {"T1", "supervisor"}),
        ("PUT", "/links/mega", {"reset": RESET, "rate_ppm": RATE}, {"supervisor"}),
        ("GET", "/links", None, readers),
        ("GET", "/links/mega", None, readers),
        ("GET", "/hits", None, readers),
        ("GET", "/tables", None, readers),
        ("GET", "/alarms", None, readers),
        ("GET", "/rounds", None, readers),
        ("GET", f"/tables/{stream}/entries", None, {"surveillance"}),
        ("POST", f"/tables/{stream}/alarms/1/clear", {"by": "sup-1"}, {"supervisor"}),
    ]


def test_every_role_against_every_endpoint(store: FloorStore, table: MiniTable) -> None:
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    rid = table.play(*NOTHING)
    entry = table.send(rid)
    assert ship(client(store), table).status_code == 200
    seen: dict[tuple[str, str, str | None], int] = {}
    app = floor_app(store)
    clients = {who: client(store, who, app) for who in WHO}
    for method, path, body, allowed in endpoints(table.stream, rid, entry):
        for who in WHO:
            c = clients[who]
            r = c.request(method, path, content=None if body is None else json.dumps(body),
                          headers={"Content-Type": "application/json"})
            seen[(method, path, who)] = r.status_code
            if who in allowed:
                assert r.status_code not in (401, 403) and r.status_code < 500, (method, path, who, r.text)
            elif who is None or who.startswith("not-a-token"):
                assert r.status_code == 401, (method, path, who, r.status_code)
            else:
                assert r.status_code == 403, (method, path, who, r.status_code)
    # What the allowed calls did: T1's round settled by T1, the pool configured by the supervisor.
    assert seen[("POST", "/links/mega/settle", "T1")] == 200
    assert store.pool("mega")["rounds"] == 1


def test_a_table_takes_no_assignment_not_signed_by_the_floors_key(store: FloorStore, table: MiniTable) -> None:
    # The table's client with [floor] public_key: an answer signed by another key is refused
    # before the table settles with it (a floor impersonated on the network, or a replaced key).
    from cardshoe.floor.client import FloorClient, FloorRefused
    from cardshoe.floor.testnet import FloorServer

    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    server = FloorServer(floor_app(store))
    try:
        url = f"http://127.0.0.1:{server.port}"
        name, journal_id = table.stream.split(".")
        rids = [table.play(*NOTHING) for _ in range(1)]
        entry = table.send(rids[0])
        wrong = FloorClient(url, TOKENS["T1"], name, "mega", journal_id=journal_id, public_key=bytes(32))
        with pytest.raises(FloorRefused) as err:
            wrong.settle(rids[0], entry, table.entries())
        assert err.value.error == "FloorSignature"
        right = FloorClient(url, TOKENS["T1"], name, "mega", journal_id=journal_id, public_key=FLOOR_PUBKEY)
        assert right.settle(rids[0], entry)["seq"] == 1  # the same assignment, from the floor's key
    finally:
        server.close()
