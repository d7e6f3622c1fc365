"""A silent shoe and a missing port are alarms that clear themselves (issue 10 item 3).

Over real pseudo-terminals: a port with nothing behind it, a shoe that stops talking, a
port path that does not exist, and one that vanishes. Each becomes a reason in `/status`
(`alarms`), a journaled and published link event, and a WARNING at the default level;
each clears when the shoe (or the port) is back. Conditions are waited on, never slept."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import SERIAL, Table, journal, wait_for
from link_ptys import PluggablePty

from cardshoe.daemon.config import LinkTiming, TableConfig
from cardshoe.daemon.daemon import Daemon

TCP = "three-card-poker"
HEARTBEAT_MS = 300  # silence after 450 ms without a valid frame


def _alarms(table_or_daemon: Any) -> dict[str, dict[str, Any]]:
    daemon = table_or_daemon.daemon if isinstance(table_or_daemon, Table) else table_or_daemon
    return {a["type"]: a for a in daemon.status()["alarms"]}


def _link_types(table: Table) -> list[str]:
    with journal(table) as j:
        return [str(e.data()["type"]) for e in j.entries(("link",))]


def test_a_silent_shoe_raises_shoe_silent_and_it_clears_when_the_shoe_talks_again(
        make_table, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO)
    table: Table = make_table(TCP, 7, link=LinkTiming(heartbeat_ms=HEARTBEAT_MS, resend_ms=100, resend_max_ms=400))
    # The pty is open, nothing is behind it: /status must not say all is well.
    silent = wait_for(lambda: _alarms(table).get("shoe_silent"), 10, "the silence alarm")
    assert silent["shoe"] is None and "no valid frame" in silent["message"]
    assert table.daemon.status()["link_up"] is True  # the port is fine; the shoe is not
    body = table.ok("GET", "/status")
    assert [a["type"] for a in body["alarms"]] == ["shoe_silent"]
    assert any(r.levelno == logging.WARNING and "shoe silent" in r.getMessage() for r in caplog.records)

    # The shoe powers on and heartbeats: the alarm clears by itself.
    table.shoe.heartbeat_s = 0.1
    table.shoe.power_on()
    table.shoe_on = True
    wait_for(lambda: "shoe_silent" not in _alarms(table), 10, "the alarm to clear")
    # It stops talking (the port stays open): the alarm is back, naming the shoe now.
    table.shoe.power_off()
    table.shoe_on = False
    again = wait_for(lambda: _alarms(table).get("shoe_silent"), 10, "the silence alarm again")
    assert again["shoe"] == SERIAL
    table.shoe.power_on()
    table.shoe_on = True
    wait_for(lambda: "shoe_silent" not in _alarms(table), 10, "the alarm to clear again")
    # Journaled and published as link events (the alarm leaves /status just before its entry commits).
    wait_for(lambda: _link_types(table).count("shoe_silent_cleared") >= 2, 10, "the clearings journaled")
    assert _link_types(table).count("shoe_silent") >= 2


def test_a_port_that_cannot_be_opened_is_a_warning_and_a_reason_until_it_appears(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    where = tmp_path / "ttyNOPE"
    config = TableConfig(port=str(where), game=TCP, seats=7, name="P1", journal=tmp_path / "j.sqlite",
                         link=LinkTiming(heartbeat_ms=2000, resend_ms=100, resend_max_ms=400))
    daemon = Daemon(config, keys={}.get)
    daemon.start()
    plug: PluggablePty | None = None
    try:
        port = wait_for(lambda: _alarms(daemon).get("port_unavailable"), 10, "the port alarm")
        assert "cannot open" in port["message"] and str(where) in port["message"]
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and "cannot open" in r.getMessage()]
        assert warnings and str(where) in warnings[0].getMessage()
        # Retries do not repeat the WARNING (once per spell without a port).
        n = len(warnings)
        plug = PluggablePty(where)  # the shoe is plugged in: the path appears
        wait_for(lambda: daemon.link_up and "port_unavailable" not in _alarms(daemon), 10, "the port to open")
        assert len([r for r in caplog.records if r.levelno >= logging.WARNING
                    and "cannot open" in r.getMessage()]) == n
        # It vanishes (USB pulled): a reason again, and it clears when it is back.
        plug.unplug()
        lost = wait_for(lambda: _alarms(daemon).get("port_unavailable"), 10, "the lost-port alarm")
        assert lost["port"] == str(where)
        plug.replug()
        wait_for(lambda: daemon.link_up and "port_unavailable" not in _alarms(daemon), 10, "the port back")
    finally:
        daemon.stop()
        if plug is not None:
            plug.close()
