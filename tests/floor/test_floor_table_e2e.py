"""A real table daemon (pty, firmware codec, journal) linked to a real floor over HTTP, on
SQLite and on PostgreSQL: the journal shipped exactly once across a cut of the table-to-floor
connection, base games dealt meanwhile, progressive wagers refused and never settled against
a stale pool, and the pool recomputed from the journal alone (cardshoe.floor.audit)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "daemon"))

from cardshoe.cards import parse_card  # noqa: E402
from cardshoe.floor.audit import audit, rounds_of_journal  # noqa: E402
from cardshoe.floor.progressive import LinkSettings  # noqa: E402
from cardshoe.floor.store import FloorStore  # noqa: E402
from cardshoe.journal import JournalReader  # noqa: E402
from floor_server import FLOOR_PUBKEY, TOKENS  # noqa: E402
from floor_server import app as floor_app  # noqa: E402
from floor_stores import open_store  # noqa: E402
from daemon_harness import Table, wait_for  # noqa: E402
from cardshoe.floor.testnet import FloorServer, Relay  # noqa: E402

FLOOR_TOKEN = TOKENS["T1"]  # table T1's own credential on the floor
MTCP = "megalink-three-card-poker"
RESET = 1_000_000
START = 3_000_000
RATE = 50_000  # 5%: 25 per 500 staked


@pytest.fixture
def floor(store_target: tuple[str, str]) -> Iterator[tuple[FloorStore, Relay]]:
    store = open_store(store_target)
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    server = FloorServer(floor_app(store))
    relay = Relay(server.port)
    yield store, relay
    relay.close()
    server.close()
    store.close()


@pytest.fixture
def make_table(tmp_path: Path) -> Iterator[Any]:
    tables: list[Table] = []

    def make(game: str, seats: int = 7, **kwargs: Any) -> Table:
        table = Table(tmp_path / f"t{len(tables)}", game, seats, **kwargs)
        tables.append(table)
        return table

    yield make
    for table in tables:
        table.close()


def codes(texts: str) -> list[int]:
    return [parse_card(t) for t in texts.split()]


def play(table: Table, seat2: str, dealer: str, community: str, burn: str, *, progressive: bool) -> dict[str, Any]:
    """One Megalink round (3.7: the seats' three, the dealer's three, then three community
    cards of which the third is burned): seat 2 ante 1000 (+ progressive 500), plays."""
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    if progressive:
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "progressive", "amount": 500})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal(codes(f"{seat2} {dealer} {community} {burn}"))
    table.shoe.key_press(2)  # DEAL_COMPLETE
    table.shoe.wait_acked()
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    return {"rid": rid}


def journal_ids(table: Table) -> list[int]:
    with JournalReader(table.config.journal) as reader:
        return [e.id for e in reader.entries()]


def stream(table: Table) -> str:
    """The table's name on the floor: its name and its journal's id."""
    assert table.daemon.floor is not None
    return table.daemon.floor.table


def shipped(store: FloorStore, table: Table) -> bool:
    ids = journal_ids(table)
    return store.high_water(stream(table)) == ids[-1]


def test_a_linked_table_ships_settles_against_the_floor_and_survives_a_cut(
        make_table: Any, floor: tuple[FloorStore, Relay], monkeypatch: pytest.MonkeyPatch) -> None:
    store, relay = floor
    monkeypatch.setenv("CARDSHOE_FLOOR_TOKEN", FLOOR_TOKEN)
    table: Table = make_table(MTCP, 7, floor_url=relay.url, floor_link="mega", jackpot_reset=RESET,
                              limits=(("progressive", 500, 500),), floor_public_key=FLOOR_PUBKEY.hex())
    table.power_on_and_load()
    wait_for(lambda: table.daemon.floor is not None and table.daemon.floor.online, 15, "the floor online")

    # A Royal Flush (Megalink 4.4: seat's three + two community cards) takes 100% of the
    # floor's pool, which holds the round's own 5% contribution.
    r1 = play(table, "As Ks Qs", "Kd 6c 2h", "Js Ts", "4d", progressive=True)
    done = table.settle_linked(r1["rid"])
    settlement = done["settlement"]
    prog = next(w for s in settlement["seats"] if s["seat"] == 2 for w in s["wagers"] if w["wager"] == "progressive")
    assert prog["paid"] == START + 25
    assert settlement["jackpot"]["pool_before"] == START + 25 and settlement["jackpot"]["pool_after"] == RESET
    assert store.pool("mega")["pool"] == RESET
    # The table may not set the pool itself.
    r = table.client.put("/jackpot", json={"amount": 5})
    assert r.status_code == 409

    # A progressive wager placed while the floor answers, then the cable is cut: the round is
    # not settled against a stale pool; base games go on; new progressive wagers are refused.
    r2 = play(table, "9h 8h 7h", "Kd 6c 2c", "6h 5h", "4d", progressive=True)  # a Straight Flush
    relay.cut()
    wait_for(lambda: not table.daemon.floor.online, 20, "the table to see the floor gone")  # type: ignore[union-attr]
    r = table.client.post(f"/rounds/{r2['rid']}/settle", json={})
    assert r.status_code == 503 and "stale pool" in r.json()["detail"]["message"], r.text
    status = table.ok("GET", "/status")["floor"]
    assert status["online"] is False and "refused" in status["message"]
    relay.restore()
    wait_for(lambda: table.daemon.floor.online, 20, "the floor back")  # type: ignore[union-attr]
    done2 = table.settle_linked(r2["rid"])
    assert [w["paid"] for s in done2["settlement"]["seats"] for w in s["wagers"]
            if w["wager"] == "progressive"] == [(RESET + 25) // 10]

    # Cut again: a base game deals and settles; a progressive wager is refused with a message.
    relay.cut()
    wait_for(lambda: not table.daemon.floor.online, 20, "the table to see the floor gone")  # type: ignore[union-attr]
    rid = table.ok("POST", "/rounds")["round_id"]
    r = table.client.post(f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "progressive", "amount": 500})
    assert r.status_code == 503 and "unreachable" in r.json()["detail"]["message"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal(codes("Ah Kh Qh Jc Jd 4s 3h 8c 5s"))
    table.shoe.key_press(2)
    table.shoe.wait_acked()
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    base_done = table.ok("POST", f"/rounds/{rid}/settle", json={})
    assert base_done["settlement"]["void"] is None
    relay.restore()

    # Caught up: every journal entry on the floor exactly once.
    wait_for(lambda: shipped(store, table), 30, "the backlog shipped")
    ids = journal_ids(table)
    key = stream(table)
    with JournalReader(table.config.journal) as reader:
        assert key == f"T1.{reader.meta('journal_id')}"
    assert [e.id for e in store.entries(key, limit=100_000)] == ids
    assert store.count_entries(key) == len(ids)

    # The pool recomputed from the table's journal alone equals the floor's.
    with JournalReader(table.config.journal) as reader:
        rounds = rounds_of_journal(key, ((e.kind, e.round_id, e.body) for e in reader.entries(("input", "settlement"))),
                                   "mega")
    report = audit(LinkSettings("mega", RESET, RATE, START), rounds)
    assert report.problems == []
    floor_pool = store.pool("mega")
    assert (report.pool, report.carry, report.rounds) == (floor_pool["pool"], floor_pool["carry"], 2)
    assert report.pool == RESET + 25 - (RESET + 25) // 10
    # The floor's view: the table, its rounds by card sequence, the hits.
    (row,) = store.tables()
    assert row["link"] == "mega" and row["game"] == MTCP and row["current_round"] == rid and row["name"] == "T1"
    assert [r["round_id"] for r in store.search_rounds(table="T1", cards="As Ks Qs")] == [r1["rid"]]
    assert [(h["round_id"], h["amount"]) for h in store.hits("mega")] == [(r1["rid"], START + 25),
                                                                         (r2["rid"], (RESET + 25) // 10)]
    # Each hit with its evidence: the signed file the table wrote for the round (issue 14 item 5),
    # written by a thread of the table after the settlement, then shipped.
    wait_for(lambda: all(h["evidence"] for h in store.hits("mega")), 30, "the evidence entries shipped")
    with JournalReader(table.config.journal) as reader:
        written = {e.data()["round_id"]: e.data()["sha256"] for e in reader.entries(("daemon",))
                   if e.data().get("type") == "evidence_written"}
    assert [h["evidence"]["sha256"] for h in store.hits("mega")] == [written[r1["rid"]], written[r2["rid"]]]

    # `cardshoe replay` rebuilds every settlement from the journal, the floor's pools included.
    import io
    import json
    from contextlib import redirect_stdout

    from cardshoe.journal import replay as replay_cli

    table.kill_daemon()
    out = io.StringIO()
    with redirect_stdout(out):
        status_code = replay_cli.main([str(table.config.journal), "--json"])
    replayed = json.loads(out.getvalue())
    assert status_code == 0 and replayed["ok"], replayed["mismatches"]
    assert replayed["settlements"][r1["rid"]]["settlement"] == done["settlement"]
    table.start_daemon()


def test_a_new_journal_of_the_same_table_is_a_stream_of_its_own(
        make_table: Any, floor: tuple[FloorStore, Relay], monkeypatch: pytest.MonkeyPatch) -> None:
    # A new gaming day's journal starts its entry ids at 1 again: the floor keeps it apart (the
    # journal's id in the table's key), so nothing of it is taken for entries the floor holds,
    # and its first round, numbered 000001 again under the journal's own scope (issue 20), is
    # assigned a pool of its own.
    store, relay = floor
    monkeypatch.setenv("CARDSHOE_FLOOR_TOKEN", FLOOR_TOKEN)
    keys = []
    rids: list[str] = []
    for day in range(2):
        table: Table = make_table(MTCP, 7, floor_url=relay.url, floor_link="mega", jackpot_reset=RESET,
                                  limits=(("progressive", 500, 500),))
        table.power_on_and_load()
        wait_for(lambda: table.daemon.floor is not None and table.daemon.floor.online, 15, "the floor online")
        r = play(table, "4c 7d Jh", "Kd 6c 2h", "3s 8c", "4d", progressive=True)
        assert r["rid"].startswith("T1-") and r["rid"].endswith("-000001")
        rids.append(r["rid"])
        table.settle_linked(r["rid"])
        wait_for(lambda: shipped(store, table), 30, "the journal shipped")
        keys.append(stream(table))
        assert [e.id for e in store.entries(keys[-1], limit=100_000)] == journal_ids(table)
    assert keys[0] != keys[1] and all(k.startswith("T1.") for k in keys)
    assert rids[0] != rids[1]  # one id, one round, across the table's journals
    assert [h["table"] for h in store.history("mega")] == keys  # 25 contributed by each
    assert store.pool("mega")["pool"] == START + 50
    assert len(store.search_rounds(table="T1")) == 2
