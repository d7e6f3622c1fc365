"""Journals written before issue 20 replay identically, and a table stranded by one opens again.

`data/journals-before-issue-20.json` holds every entry of two journals the table core and
journal of cardshoe wrote before issue 20 (commit cf005b8; `data/make_journals_before_issue_20.py`
made them, each ending with a checkpoint of the older core): `stranded`, the issue's first defect (a progressive of 5 x the minimum accepted, the
settle refused, the supervisor's void accepted, then every `open_round` refused), and
`void_plays_on`, its second (a round voided by the end of the old shoe keeps taking wagers, a
deal and keys; an empty round voided strands the table). A journal's setup without
`core_version` is played by the rules of that time (docs/api.md, "The journal and replay"), so
`cardshoe replay` reproduces every event and refusal the older daemon journaled. A daemon started
on such a journal journals its own setup (`core_version` 3) and from then on plays by the new
rules: the stranded void round is closed with every wager returned and the next round opens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import Table, journal

from cardshoe.daemon.outcome import CORE_VERSION
from cardshoe.journal import JournalReader
from cardshoe.journal.replay import replay
from cardshoe.journal.store import Journal, append

FIXTURE = Path(__file__).resolve().parent / "data" / "journals-before-issue-20.json"
TCP = "three-card-poker"


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    """A journal holding exactly `entries` (ids, times, bodies and bytes as journaled)."""
    with Journal(path) as j:
        def write(conn: Any) -> None:
            # A journal of cf005b8 had no round scope in its meta (made at creation since, so
            # the new file has one): as written then, its round ids go on as TABLE-NNNNNN.
            conn.execute("DELETE FROM meta WHERE key = 'round_scope'")
            for e in entries:
                eid = append(conn, e["kind"], e["body"], t_ns=e["t_ns"], shoe=e["shoe"], boot=e["boot"],
                             seq=e["seq"], type=e["type"], round_id=e["round_id"],
                             raw=None if e["raw"] is None else bytes.fromhex(e["raw"]))
                assert eid == e["id"]
        j.write(write)


def _fixture(name: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(FIXTURE.read_text())[name]
    return entries


@pytest.mark.parametrize("name", ["stranded", "void_plays_on"])
def test_a_journal_written_before_issue_20_replays_identically(tmp_path: Path, name: str) -> None:
    path = tmp_path / "old.sqlite"
    _write(path, _fixture(name))
    report, core = replay(path)
    assert report.ok, report.mismatches
    assert report.derived == sum(1 for e in _fixture(name) if e["kind"] in ("event", "settlement"))
    assert core.setup.core_version == 1
    # The older daemon's checkpoint (its core pickled without `core_version`) is the state rebuilt.
    assert report.checkpoints == 1


def test_the_stranded_table_opens_its_next_round_once_the_daemon_is_upgraded(make_table, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    entries = _fixture("stranded")
    refused = [json.loads(e["body"]) for e in entries if e["kind"] == "event"
               and json.loads(e["body"])["type"] == "input_refused"]
    assert [r["field"] for r in refused] == ["seats[1].wagers.progressive"] * 4  # as the old daemon said
    folder = tmp_path / "t0"
    folder.mkdir()
    _write(folder / "journal.sqlite", entries)
    table: Table = make_table(TCP, 7, jackpot_reset=1_000_000)
    assert table.config.journal == folder / "journal.sqlite"
    assert table.daemon.restored.started_from is not None  # from the older daemon's checkpoint
    rid = "T1-000001"
    assert table.round(rid)["void"] is not None and table.round(rid)["status"] != "settled"
    r = table.client.post("/rounds")
    assert r.status_code == 201, r.text
    assert r.json()["round_id"] == "T1-000002"
    settlement = table.round(rid)["settlement"]
    returned = {(s["seat"], w["wager"]): (w["outcome"], w["paid"]) for s in settlement["seats"] for w in s["wagers"]}
    # The void round returns every wager as staked, the progressive of 5 x the minimum included.
    assert returned == {(1, "ante"): ("void", 1000), (1, "play"): ("void", 1000), (3, "ante"): ("void", 1000),
                        (3, "play"): ("void", 1000), (3, "progressive"): ("void", 500)}
    with journal(table) as j:
        setups = [e.data() for e in j.entries(("input",)) if e.data().get("action") == "setup"]
    assert "core_version" not in setups[0] and setups[-1]["core_version"] == CORE_VERSION == 3
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches
    with JournalReader(table.config.journal) as j:
        assert j.count("input") > len([e for e in entries if e["kind"] == "input"])
