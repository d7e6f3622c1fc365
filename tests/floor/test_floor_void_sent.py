"""A round sent to the floor for its pool whose answer never reached the table (reading 73):
a real table daemon linked to a real floor over a relay that can lose the floor's answers or be
cut, on SQLite and on PostgreSQL.

The money rule the tests derive from: a round the floor assigned has moved the link's pool
(its contribution credited, its hits paid: MTCP 3.17 "entered into the Progressive Jackpot
computer system"), so it must be settled at the table with that assignment and can no longer
be voided; a round the floor never assigned moved nothing, so a supervisor may void it (MTCP
5.x) and the floor must then never assign it. Either way the link's pool recomputed from the
table's journal alone equals the floor's (`cardshoe floor audit`)."""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "daemon"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cardshoe.floor import cli as floor_cli  # noqa: E402
from cardshoe.floor.store import FloorStore  # noqa: E402
from cardshoe.floor.testnet import Relay  # noqa: E402
from daemon_harness import Table, wait_for  # noqa: E402
from floor_server import write_config  # noqa: E402
from test_floor_table_e2e import (FLOOR_TOKEN, MTCP, RATE, RESET, START, floor, make_table, play,  # noqa: E402,F401
                                  shipped, stream)

VOID = {"rule": "5.8", "reason": "a count irregularity found after the round", "by": "sup-1"}


def start(make_table: Any, relay: Relay, monkeypatch: pytest.MonkeyPatch) -> Table:
    monkeypatch.setenv("CARDSHOE_FLOOR_TOKEN", FLOOR_TOKEN)
    table: Table = make_table(MTCP, 7, floor_url=relay.url, floor_link="mega", jackpot_reset=RESET,
                              limits=(("progressive", 500, 500),))
    table.power_on_and_load()
    wait_for(lambda: table.daemon.floor is not None and table.daemon.floor.online, 15, "the floor online")
    return table


def cli_audit(store_target: tuple[str, str], table: Table) -> tuple[int, dict[str, Any]]:
    """`cardshoe floor audit` over the floor's store (with the tables' shoe keys from the
    floor's file) and the table's journal."""
    kind, where = store_target
    store_arg = ["--sqlite", where] if kind == "sqlite" else ["--postgres", where]
    config = write_config(table.tmp_path / "floor-audit")
    out = io.StringIO()
    with redirect_stdout(out):
        code = floor_cli.main(["audit", "--config", str(config), "--link", f"mega:{RESET}:{RATE}:{START}",
                               *store_arg, f"{stream(table)}={table.config.journal}"])
    return code, json.loads(out.getvalue())


def settle_answer_lost(table: Table, relay: Relay, store: FloorStore, rid: str) -> None:
    """Settle `rid` while the floor's answers are lost: the floor assigns, the table hears
    nothing (503), the round stays in play."""
    relay.answers_lost = True
    r = table.client.post(f"/rounds/{rid}/settle", json={})
    assert r.status_code == 503 and r.json()["detail"]["field"] == "floor", r.text
    wait_for(lambda: any(h["round_id"] == rid for h in store.history("mega")), 20, "the floor's assignment")
    relay.cut()
    wait_for(lambda: not table.daemon.floor.online, 20, "the table to see the floor gone")  # type: ignore[union-attr]


def test_a_round_the_floor_assigned_is_not_voided_and_settles_with_the_assignment(
        make_table: Any, floor: tuple[FloorStore, Relay], store_target: tuple[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, relay = floor
    table = start(make_table, relay, monkeypatch)
    # A Straight Flush (Megalink 4.4): 10% of the pool as displayed, which holds the round's own
    # 5% contribution of the 500 staked (reading 58): the floor moves the pool by both.
    rid = play(table, "9h 8h 7h", "Kd 6c 2c", "6h 5h", "4d", progressive=True)["rid"]
    settle_answer_lost(table, relay, store, rid)
    paid = (START + 25) // 10
    assert store.pool("mega")["pool"] == START + 25 - paid  # the floor has moved the pool

    # Cut: the floor's answer is unknown, so the round is neither voided nor settled.
    r = table.client.post(f"/rounds/{rid}/void", json=VOID)
    assert r.status_code == 409, r.text
    detail = r.json()["detail"]
    assert detail["field"] == "floor" and detail["error"] == "FloorAnswerPending"
    assert "settle it when the floor answers" in detail["message"]
    assert table.ok("GET", f"/rounds/{rid}")["void"] is None

    relay.restore()
    wait_for(lambda: table.daemon.floor.online, 20, "the floor back")  # type: ignore[union-attr]
    # The floor answers that it assigned the round: still no void; the round is settled.
    r = table.client.post(f"/rounds/{rid}/void", json=VOID)
    assert r.status_code == 409 and r.json()["detail"]["error"] == "FloorAssigned", r.text
    assert r.json()["detail"]["field"] == "floor"
    done = table.settle_linked(rid)
    prog = [w["paid"] for s in done["settlement"]["seats"] for w in s["wagers"] if w["wager"] == "progressive"]
    assert prog == [paid]
    assert done["settlement"]["jackpot"]["pool_before"] == START + 25
    assert done["settlement"]["jackpot"]["pool_after"] == START + 25 - paid
    history = store.history("mega")
    assert [(h["round_id"], h["seq"]) for h in history] == [(rid, 1)]  # assigned once, not twice

    # The journal alone and the floor agree.
    wait_for(lambda: shipped(store, table), 30, "the journal shipped")
    code, report = cli_audit(store_target, table)
    assert code == 0 and report["problems"] == [], report["problems"]
    assert (report["pool"], report["rounds"], report["floor_pool"]) == (START + 25 - paid, 1, START + 25 - paid)


def test_a_round_the_floor_never_saw_can_be_voided_and_is_never_assigned(
        make_table: Any, floor: tuple[FloorStore, Relay], store_target: tuple[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, relay = floor
    table = start(make_table, relay, monkeypatch)
    rid = play(table, "9h 8h 7h", "Kd 6c 2c", "6h 5h", "4d", progressive=True)["rid"]
    relay.cut()
    wait_for(lambda: not table.daemon.floor.online, 20, "the table to see the floor gone")  # type: ignore[union-attr]
    r = table.client.post(f"/rounds/{rid}/settle", json={})  # sent (journaled), never reached the floor
    assert r.status_code == 503, r.text
    r = table.client.post(f"/rounds/{rid}/void", json=VOID)
    assert r.status_code == 409 and r.json()["detail"]["error"] == "FloorAnswerPending", r.text

    relay.restore()
    wait_for(lambda: table.daemon.floor.online, 20, "the floor back")  # type: ignore[union-attr]
    voided = table.ok("POST", f"/rounds/{rid}/void", json=VOID)
    assert voided["round_id"] == rid
    assert table.ok("GET", f"/rounds/{rid}")["void"] is not None
    assert store.history("mega") == [] and store.pool("mega")["pool"] == START
    # A settlement of it still on its way is refused by the floor from now on.
    with pytest.raises(Exception) as refused:
        store.settle("mega", stream(table), table.ok("GET", f"/rounds/{rid}/export"))
    assert type(refused.value).__name__ == "RoundWithdrawn"

    # The next round (with its own progressive wager) is settled against the untouched pool.
    rid2 = play(table, "4c 7d Jh", "Kd 6c 2h", "3s 8c", "4d", progressive=True)["rid"]
    table.settle_linked(rid2)
    assert [(h["round_id"], h["seq"], h["pool_before"]) for h in store.history("mega")] == [(rid2, 1, START)]
    wait_for(lambda: shipped(store, table), 30, "the journal shipped")
    code, report = cli_audit(store_target, table)
    assert code == 0 and report["problems"] == [], report["problems"]
    assert (report["pool"], report["rounds"], report["floor_pool"]) == (START + 25, 1, START + 25)


def test_the_rule_survives_a_restart_of_the_table(
        make_table: Any, floor: tuple[FloorStore, Relay], monkeypatch: pytest.MonkeyPatch) -> None:
    # The round's having been sent is in the journal, not only in memory.
    store, relay = floor
    table = start(make_table, relay, monkeypatch)
    rid = play(table, "9h 8h 7h", "Kd 6c 2c", "6h 5h", "4d", progressive=True)["rid"]
    settle_answer_lost(table, relay, store, rid)
    table.kill_daemon()
    table.start_daemon()
    r = table.client.post(f"/rounds/{rid}/void", json=VOID)
    assert r.status_code == 409 and r.json()["detail"]["error"] == "FloorAnswerPending", r.text
