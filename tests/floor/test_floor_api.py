"""The floor's HTTP API: the table roles (cardshoe.api.auth), shipping, the pool, the hits,
the search, and 503 (never a 500) when the store is away."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from cardshoe.floor.api import create_floor_app
from cardshoe.floor.progressive import LinkSettings
from cardshoe.floor.store import FloorStore, ShippedEntry
from floor_rounds import RESET, ROYAL, round_file, seat

ALL = "floor-all-roles-token-0123456789"
PIT = "floor-supervisor-token-0123456789"


def client(store: FloorStore, token: str = ALL) -> TestClient:
    app = create_floor_app(store, ALL, role_tokens={PIT: ["supervisor"]})
    return TestClient(app, headers={"Authorization": f"Bearer {token}"})


def test_tables_ship_and_settle_with_the_controller_role_and_the_pit_reads(store: FloorStore) -> None:
    store.configure_link(LinkSettings("mega", RESET, 50_000, 3_000_000))
    c = client(store)
    e = ShippedEntry(1, 5, "frame", 1, 1, 1, 2, None, "{}", b"\x01").to_json()
    r = c.post("/tables/T1/entries", json={"link": "mega", "game": "megalink-three-card-poker", "entries": [e, e]})
    assert r.status_code == 200 and r.json() == {"table": "T1", "high_water": 1, "pool": 3_000_000}
    assert c.get("/tables/T1/high-water").json()["high_water"] == 1
    r = c.post("/links/mega/settle", json={"table": "T1", "round": round_file("T1-1", seat(3, ROYAL[0]),
                                                                              community=ROYAL[1])})
    assert r.status_code == 200 and r.json()["hits"][0]["amount"] == 3_000_025
    pit = client(store, PIT)
    assert pit.get("/links/mega").json()["pool"] == RESET
    assert [h["amount"] for h in pit.get("/hits").json()] == [3_000_025]
    assert pit.get("/tables").json()[0]["table"] == "T1"
    assert pit.get("/rounds", params={"table": "T1"}).status_code == 200
    # The pit may read, not write.
    r = pit.post("/tables/T1/entries", json={"entries": []})
    assert r.status_code == 403 and r.json()["detail"]["field"] == "role"
    assert client(store, "wrong-token-0123456789abc").get("/links").status_code == 401
    page = c.get("/floor")
    assert page.status_code == 200 and "<title>cardshoe floor</title>" in page.text


def test_bad_input_is_a_4xx_naming_the_field(store: FloorStore) -> None:
    c = client(store)
    r = c.post("/tables/T1/entries", json={"entries": [{"id": 0, "t_ns": 1, "kind": "frame", "body": "{}"}]})
    assert r.status_code == 422 and r.json()["detail"]["field"] == "entries[].id"
    r = c.post("/links/none/settle", json={"table": "T1", "round": {"round_id": "x"}})
    assert r.status_code == 404 and r.json()["detail"]["field"] == "link"
    store.configure_link(LinkSettings("mega", RESET, 0))
    r = c.post("/links/mega/settle", json={"table": "T1", "round": {"round_id": "x", "game": "nope"}})
    assert r.status_code == 422 and r.json()["detail"]["field"].startswith("round.")
    assert c.get("/rounds", params={"cards": "A%"}).status_code == 422


def test_a_store_that_is_away_answers_503(pg_cluster: Any) -> None:
    # A PostgreSQL store whose server stops: the floor answers 503 (the tables retry), and
    # serves again once the server is back.
    from floor_stores import fresh_database

    store = FloorStore.postgres(fresh_database(pg_cluster))
    c = client(store)
    assert c.get("/links").status_code == 200
    pg_cluster.stop()
    try:
        r = c.get("/links")
        assert r.status_code == 503 and r.json()["detail"]["error"] == "StoreUnavailable"
    finally:
        pg_cluster.start()
    assert c.get("/links").status_code == 200
    store.close()


def test_withdraw_answers_assigned_or_withdrawn_and_a_withdrawn_round_is_refused_409(store: FloorStore) -> None:
    store.configure_link(LinkSettings("mega", RESET, 50_000, 3_000_000))
    c = client(store)
    royal = round_file("T1-1", seat(3, ROYAL[0]), community=ROYAL[1])
    assert c.post("/links/mega/settle", json={"table": "T1", "round": royal}).status_code == 200
    r = c.post("/links/mega/withdraw", json={"table": "T1", "round_id": "T1-1"})
    assert r.status_code == 200 and r.json()["status"] == "assigned"
    assert r.json()["assignment"]["hits"][0]["amount"] == 3_000_025
    r = c.post("/links/mega/withdraw", json={"table": "T1", "round_id": "T1-2"})
    assert r.status_code == 200 and r.json() == {"table": "T1", "round_id": "T1-2", "status": "withdrawn",
                                                 "assignment": None}
    r = c.post("/links/mega/settle", json={"table": "T1", "round": round_file("T1-2", seat(3, ROYAL[0]),
                                                                              community=ROYAL[1])})
    assert r.status_code == 409 and r.json()["detail"]["error"] == "RoundWithdrawn", r.text
    assert store.pool("mega")["pool"] == RESET  # the refused round moved nothing
    # The pit reads; withdrawing is the table's (controller) role.
    r = client(store, PIT).post("/links/mega/withdraw", json={"table": "T1", "round_id": "T1-3"})
    assert r.status_code == 403
    r = c.post("/links/none/withdraw", json={"table": "T1", "round_id": "T1-3"})
    assert r.status_code == 404 and r.json()["detail"]["field"] == "link"
