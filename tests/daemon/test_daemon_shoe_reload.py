"""A new shoe session refused by a busy shoe is loaded once the shoe is free (issue 11 soak).

The firmware refuses NEW_SHOE "bad state" while cards of its log are not yet framed
(after a reboot's CARDS_FROM, or with its outbox full; firmware/app/shoe.py `_new_shoe`),
so as not to lose them. The daemon used to take the refusal as final and the table waited
for ever for its new shoe. Now it sends the NEW_SHOE again when the shoe's HEARTBEAT says
its outbox is empty (SPEC 4: HEARTBEAT is sent only then), a bounded number of times.
"""

from __future__ import annotations

import wire
from daemon_harness import SERIAL, Table, journal, wait_for

from cardshoe.daemon.daemon import RELOAD_TRIES

TCP = "three-card-poker"


def _commands(table: Table) -> list[dict[str, object]]:
    with journal(table) as j:
        return [e.data() for e in j.entries(("command",))]


def _shoe_no(table: Table) -> object:
    return table.daemon.status()["shoes"].get(str(SERIAL), {}).get("shoe_no")


def test_a_new_shoe_refused_while_the_shoe_is_busy_is_sent_again_when_it_is_free(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    first = table.power_on_and_load()
    table.shoe.busy = True  # still framing cards of its log
    r = table.client.post("/shoe/load", json={"deck_id": 0x0BADCAFE})
    assert r.status_code == 202, r.text
    second = int(r.json()["shoe_no"])
    wait_for(lambda: any(c.get("command") == "NEW_SHOE" and c.get("status") == 1 for c in _commands(table)), 10,
             "the NEW_SHOE refused")
    assert _shoe_no(table) == first
    table.shoe.busy = False
    table.shoe.heartbeat_s = 0.2  # its outbox empty, the shoe sends HEARTBEATs
    wait_for(lambda: table.shoe.state.shoe_no == second, 10, "the NEW_SHOE sent again and run")
    wait_for(lambda: _shoe_no(table) == second, 10, "the daemon to record the new session")
    again = [c for c in _commands(table) if c.get("type") == "new_shoe_again"]
    assert len(again) == 1 and again[0]["shoe_no"] == second


def test_a_shoe_that_keeps_refusing_is_left_unloaded_and_says_so(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    first = table.power_on_and_load()
    table.shoe.busy = True
    table.shoe.heartbeat_s = 0.2
    r = table.client.post("/shoe/load", json={"deck_id": 0x0BADCAFE})
    assert r.status_code == 202, r.text
    wait_for(lambda: any(c.get("type") == "new_shoe_refused" for c in _commands(table)), 30,
             "the daemon to give up")
    refusals = [c for c in _commands(table) if c.get("command") == "NEW_SHOE" and c.get("status") == 1]
    assert len(refusals) == RELOAD_TRIES + 1  # the first send and each retry, then no more
    assert _shoe_no(table) == first
    assert sum(1 for kind, _a in table.shoe.commands if kind == wire.NEW_SHOE) >= RELOAD_TRIES + 1
