"""Issue 20 items 3 and 4 through the daemon over a real pty: the shoe's numbers are the journal's
own, a failed load is an alarm, a broken ACK path is an alarm that clears, round ids are unique
across journals. (The same with the real firmware and an attacker on the relay:
tests/bench/test_bench_sessions.py.)"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import DECK_ID, HANDS, SERIAL, Table, check_hands, journal, open_two_seat_round, wait_for

from cardshoe.cards import parse_card
from cardshoe.daemon.config import LinkTiming
from cardshoe.daemon.core import TableCore
from cardshoe.daemon.daemon import SHOE_NO_HIGH, SHOE_NO_LOW
from cardshoe.journal.replay import replay

TCP = "three-card-poker"
#: A quick heartbeat, so the bounds of a few heartbeats are short: 3 x 300 ms (and at least
#: twice resend_max): 0.9 s.
FAST = LinkTiming(heartbeat_ms=300, resend_ms=100, resend_max_ms=400)


def c(text: str) -> int:
    return parse_card(text)


def _alarms(table: Table, kind: str) -> list[dict[str, Any]]:
    return [a for a in table.daemon.status()["alarms"] if a["type"] == kind]


def _stream(table: Table) -> list[dict[str, Any]]:
    """The event stream as a client catching up from the start reads it (`?limit=` ends it)."""
    from cardshoe.daemon.bus import streamable

    with journal(table) as j:
        count = sum(1 for e in j.entries() if streamable(e.kind, e.data()))
    r = table.client.get(f"/events?after=0&limit={count}")
    assert r.status_code == 200
    return [json.loads(line[5:])["data"] for line in r.text.splitlines() if line.startswith("data:")]


def _new_journal(table: Table, name: str) -> None:
    table.kill_daemon()
    table.config = dataclasses.replace(table.config, journal=table.tmp_path / name)
    table.start_daemon()


def test_a_new_journal_numbers_its_sessions_apart_and_never_as_the_shoes_current_one(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    first = table.power_on_and_load()
    second = table.power_on_and_load()
    assert SHOE_NO_LOW < first < SHOE_NO_HIGH + 2 and second == first + 1  # the journal's base, counted on
    with journal(table) as j:
        base = int(j.meta("shoe_no_base") or 0)
        loading = [e.data() for e in j.entries(("input",)) if e.data()["action"] == "shoe_loading"]
    assert first == base + 1 and [d["shoe_no"] for d in loading] == [first, second]
    table.deal([c(x) for x in HANDS[:3]])

    # A new journal: another base; its first NEW_SHOE is taken, whatever the shoe's session.
    _new_journal(table, "journal-2.sqlite")
    table.shoe.reboot()  # its HELLO names the last journal's session, 3 cards dealt
    table.shoe.wait_acked()
    third = table.power_on_and_load()
    assert third not in (first, second) and table.shoe.state.shoe_no == third
    assert not [a for a in table.daemon.status()["alarms"] if a["type"] in ("shoe_load", "shoe_session")]


def test_the_number_the_shoe_reports_is_skipped(tmp_path: Path) -> None:
    from cardshoe.journal import Journal

    with Journal(tmp_path / "j.sqlite") as j:
        one = j.shoe_no(SHOE_NO_LOW, SHOE_NO_HIGH)
        two = j.shoe_no(SHOE_NO_LOW, SHOE_NO_HIGH, frozenset({one + 1}))
        assert two == one + 2
        assert j.shoe_no(SHOE_NO_LOW, SHOE_NO_HIGH) == one + 3
    bases = set()
    for k in range(4):
        with Journal(tmp_path / f"k{k}.sqlite") as j:
            bases.add(j.shoe_no(SHOE_NO_LOW, SHOE_NO_HIGH))
    assert len(bases) == 4  # a random base per journal (a clash would be a 2^-32 chance)


def test_a_load_the_shoe_keeps_refusing_is_an_alarm_until_a_load_succeeds(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    first = table.power_on_and_load()
    table.shoe.busy = True  # still framing cards of its log: refuses NEW_SHOE "bad state"
    table.shoe.heartbeat_s = 0.2
    r = table.client.post("/shoe/load", json={"deck_id": 0x0BADCAFE})
    assert r.status_code == 202
    refused = int(r.json()["shoe_no"])
    (alarm,) = wait_for(lambda: _alarms(table, "shoe_load"), 30, what="the shoe_load alarm")
    assert alarm["shoe"] == SERIAL and alarm["shoe_no"] == refused and alarm["reason"] == "bad_state"
    assert "not loaded" in alarm["message"]
    assert table.daemon.status()["shoes"][str(SERIAL)]["shoe_no"] == first
    stream = _stream(table)
    assert [d for d in stream if d["type"] == "shoe_load_failed" and d["shoe_no"] == refused]
    assert [d for d in stream if d["type"] == "new_shoe_refused"]
    # The shoe is free again: the next load succeeds and the alarm clears.
    table.shoe.busy = False
    table.shoe.heartbeat_s = None
    assert table.power_on_and_load() not in (first, refused)
    assert _alarms(table, "shoe_load") == []


def test_a_load_refused_by_a_shoe_that_never_becomes_free_is_an_alarm(make_table) -> None:  # type: ignore[no-untyped-def]
    # Refused "bad state", the load waits for the shoe's HEARTBEAT (its outbox empty) to be sent
    # again; a shoe that never sends one is not waited for in silence.
    table: Table = make_table(TCP, 7, link=FAST)
    table.power_on_and_load()
    table.shoe.busy = True
    r = table.client.post("/shoe/load", json={"deck_id": DECK_ID + 1})
    assert r.status_code == 202
    (alarm,) = wait_for(lambda: _alarms(table, "shoe_load"), 30, what="the alarm")
    assert alarm["reason"] == "bad_state" and "not free" in alarm["message"]


def test_a_load_the_shoe_never_answers_is_an_alarm(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7, link=FAST)
    table.power_on_and_load()
    table.shoe.deaf_to_commands = True
    r = table.client.post("/shoe/load", json={"deck_id": DECK_ID + 1})
    assert r.status_code == 202
    (alarm,) = wait_for(lambda: _alarms(table, "shoe_load"), 30, what="the unanswered load's alarm")
    assert alarm["reason"] == "unanswered" and alarm["shoe_no"] == int(r.json()["shoe_no"])
    assert "not answered" in alarm["message"]


@pytest.mark.parametrize("answer,reason", [((1, 2), "bad_manifest"), ((1, 3), "storage_error"),
                                           ((2, 0), "unsupported")])
def test_a_load_the_shoe_refuses_is_an_alarm(make_table, answer: tuple[int, int], reason: str) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    first = table.power_on_and_load()
    table.shoe.new_shoe_answer = answer
    r = table.client.post("/shoe/load", json={"deck_id": DECK_ID + 1})
    assert r.status_code == 202
    (alarm,) = wait_for(lambda: _alarms(table, "shoe_load"), 10, what="the refused load's alarm")
    assert alarm["reason"] == reason and alarm["shoe_no"] == int(r.json()["shoe_no"])
    assert table.daemon.status()["shoes"][str(SERIAL)]["shoe_no"] == first


def test_a_shoe_that_never_gets_its_acks_raises_ack_path_and_it_clears_when_its_outbox_drains(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7, link=FAST)
    table.power_on_and_load()
    rid = open_two_seat_round(table)
    limit_s = table.daemon.stall_limit_ns() / 1e9
    before = table.daemon.status()["link"]["duplicates"]
    table.shoe.acks_lost = True
    table.shoe.deal(c(HANDS[0]))  # journaled and placed; the shoe resends it, the ACKs lost
    # A few resends, well within the bound (every 0.1 s; the bound is 0.9 s): no alarm yet. (The
    # link reports each resend on its own thread before it counts the next.)
    wait_for(lambda: table.daemon.status()["link"]["duplicates"] >= before + 4, what="the resends")
    assert _alarms(table, "ack_path") == []
    (alarm,) = wait_for(lambda: _alarms(table, "ack_path"), 10 + 3 * limit_s, what="the ack_path alarm")
    assert alarm["shoe"] == SERIAL and alarm["resends"] >= 2
    assert "not reaching" in alarm["message"]
    assert sorted(table.round(rid)["placements"]) == ["1"]  # placed once, however often resent
    table.shoe.acks_lost = False
    table.shoe.heartbeat_s = 0.2  # with its outbox empty, the shoe's HEARTBEAT says so
    wait_for(lambda: not _alarms(table, "ack_path"), 10, what="the alarm to clear")
    stream = _stream(table)
    raised = [d for d in stream if d["type"] == "ack_path"]
    cleared = [d for d in stream if d["type"] == "ack_path_cleared"]
    assert len(raised) == 1 and len(cleared) == 1 and cleared[0]["why"] == "heartbeat"
    table.shoe.heartbeat_s = None
    table.deal([c(x) for x in HANDS[1:]])
    check_hands(table, rid)
    assert _alarms(table, "ack_path") == []


def test_round_ids_are_unique_across_journals_and_replay_as_journaled(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    first = open_two_seat_round(table)
    with journal(table) as j:
        scope = j.meta("round_scope")
        journal_id = j.meta("journal_id")
    assert scope is not None and journal_id is not None and scope == journal_id[:8]
    assert first == f"T1-{scope}-000001"
    _new_journal(table, "journal-2.sqlite")
    second = open_two_seat_round(table)
    assert second.endswith("-000001") and second != first
    table.power_on_and_load()
    table.deal([c(x) for x in HANDS])
    check_hands(table, second)
    core = TableCore(table.config.setup())
    report, rebuilt = replay(table.config.journal, core)
    assert report.ok and list(rebuilt.rounds) == [second]


def test_a_journal_made_before_round_scopes_keeps_its_round_ids(make_table) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    table: Table = make_table(TCP, 7)
    table.kill_daemon()
    with sqlite3.connect(table.config.journal) as conn:  # as an older daemon made it
        conn.execute("DELETE FROM meta WHERE key = 'round_scope'")
        conn.execute("DELETE FROM entries")
    conn.close()
    table.start_daemon()
    rid = open_two_seat_round(table)
    assert rid == "T1-000001"
    table.restart_daemon()
    assert open_two_seat_round_after_void(table, rid) == "T1-000002"
    report, _ = replay(table.config.journal, TableCore(table.config.setup()))
    assert report.ok, report.mismatches


def open_two_seat_round_after_void(table: Table, rid: str) -> str:
    table.ok("POST", f"/rounds/{rid}/void", json={"rule": "6.1", "reason": "test", "by": "supervisor"})
    return open_two_seat_round(table)
