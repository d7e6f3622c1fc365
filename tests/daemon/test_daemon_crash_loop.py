"""No crash loop (issue 26 item 4): a command that crashes the shoe is not resent for ever.

The real firmware (tests/daemon/daemon_fwshoe.py: the unix port on a Pico's C stack, a
`machine.reset()` after which it boots again) with a fault put in (tests/firmware_faults.py:
NEW_SHOE raises, as the recursion in `store._collect` made it raise on a Pico), and the real
daemon. Each crash is written down by the shoe and reported in the CRASH frame after its
next HELLO (SPEC 5); the daemon sends the command once more after the first, and gives it
up after the second (cardshoe.daemon.crashloop, CRASH_LOOP_BOUND): `command_abandoned`
journaled, the `shoe_crash_loop` alarm journaled, on the event stream and in /status. The
shoe boots, is sent the command no more, and serves the cards it holds. On main at 60da493
the shoe sat at the REPL until its watchdog reset it, and the daemon resent NEW_SHOE after
every reboot, for ever (a boot loop: five resets a minute on the emulated Pico).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from daemon_fwshoe import FirmwareShoe
from daemon_harness import DECK_ID, KEY, SERIAL, Table, wait_for
from firmware_faults import crashing_commands

from cardshoe.cards import parse_card
from cardshoe.daemon.crashloop import CRASH_LOOP_BOUND
from cardshoe.journal import JournalReader


def _entries(table: Table, kind: str) -> list[dict]:  # type: ignore[type-arg]
    with JournalReader(table.config.journal) as j:
        return [e.data() for e in j.entries((kind,))]


def _cards(table: Table) -> list[int]:
    return [int(f["index"]) for f in _entries(table, "frame") if f["type"] == "CARD"]


def test_a_command_that_crashes_the_shoe_is_given_up_after_the_bound_and_the_shoe_deals_on(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    with tempfile.TemporaryDirectory(prefix="fw", dir="/tmp") as tmp:  # short path: UNIX socket
        shoe = FirmwareShoe(Path(tmp), table.plug, SERIAL, KEY)
        try:
            # A shoe loaded and three cards dealt, with the firmware as it is.
            shoe.power_on()
            wait_for(lambda: table.daemon.shoe_serial == SERIAL, 10, "the firmware's HELLO")
            r = table.client.post("/shoe/load", json={"deck_id": DECK_ID})
            assert r.status_code == 202, r.text
            first = r.json()["shoe_no"]
            wait_for(lambda: table.daemon.status()["shoes"].get(str(SERIAL), {}).get("shoe_no") == first, 10,
                     "the shoe loaded")
            for card in ("Ah", "Kd", "2c"):
                shoe.deal(DECK_ID, parse_card(card))
            wait_for(lambda: len(_cards(table)) == 3, 10, "three cards journaled")
            # A firmware whose NEW_SHOE raises; the next NEW_SHOE crashes the shoe.
            shoe.power_cut()
            (shoe.flash / "app" / "commands.py").write_text(crashing_commands("NEW_SHOE", "RuntimeError"))
            shoe.power_on()
            r = table.client.post("/shoe/load", json={"deck_id": DECK_ID + 1})
            assert r.status_code == 202, r.text
            key = f"shoe_crash_loop:{SERIAL}:NEW_SHOE"
            wait_for(lambda: any(a["type"] == "shoe_crash_loop" for a in table.daemon.status()["alarms"]), 30,
                     "the crash-loop alarm")
            alarm = next(a for a in table.daemon.status()["alarms"] if a["type"] == "shoe_crash_loop")
            assert key in table.daemon.alarms
            assert (alarm["shoe"], alarm["command"], alarm["crashes"], alarm["error"], alarm["where"]) == (
                SERIAL, "NEW_SHOE", CRASH_LOOP_BOUND, "RuntimeError", "streaming")
            assert alarm["text"].startswith("RuntimeError commands:"), alarm
            assert "NEW_SHOE" in alarm["message"] and "given up" in alarm["message"]
            # Given up: no more resends, so no more crashes; the shoe is up and dealing. (One
            # resend may already be on its way when the second crash is learnt of, from the CRASH
            # after the next boot's HELLO: at most one crash more, never a loop.)
            wait_for(lambda: table.daemon.link is not None and table.daemon.link.pending_commands() == 0
                     and shoe.conn is not None, 15, "the shoe up, nothing pending")
            resets = shoe.resets
            time.sleep(2.0)  # five times the link's longest resend wait (400 ms here): a resend would show
            assert shoe.resets == resets and CRASH_LOOP_BOUND <= resets <= CRASH_LOOP_BOUND + 1, resets
            shoe.deal(DECK_ID, parse_card("9s"))
            wait_for(lambda: len(_cards(table)) == 4, 10, "the fourth card journaled")
            assert table.daemon.status()["shoes"][str(SERIAL)]["shoe_no"] == first
        finally:
            shoe.close()
    crashes = [e for e in _entries(table, "event") if e.get("type") == "shoe_crash"]
    assert len(crashes) == resets and [c["count"] for c in crashes] == list(range(1, resets + 1))
    assert all(c["command"] == "NEW_SHOE" and c["where"] == "streaming" for c in crashes)
    abandoned = [c for c in _entries(table, "command") if c.get("type") == "command_abandoned"]
    assert [(c["command"], c["reason"], c["crashes"]) for c in abandoned] == [("NEW_SHOE", "shoe_crash_loop", 2)]
    assert any(e.get("type") == "shoe_crash_loop" for e in _entries(table, "link"))


def test_a_command_the_daemon_sends_at_every_hello_is_withheld_once_it_crashed_the_shoe(make_table) -> None:  # type: ignore[no-untyped-def]
    """CONFIG goes out anew after every HELLO: counted per command it would never reach the
    bound, and the shoe would crash at every boot. Counted per type, it is given up, and not
    sent at the HELLOs after (`command_withheld`); the shoe streams."""
    table: Table = make_table("three-card-poker", 7)
    with tempfile.TemporaryDirectory(prefix="fw", dir="/tmp") as tmp:
        shoe = FirmwareShoe(Path(tmp), table.plug, SERIAL, KEY, commands=crashing_commands("CONFIG", "OSError"))
        try:
            shoe.power_on()
            wait_for(lambda: any(a["type"] == "shoe_crash_loop" for a in table.daemon.status()["alarms"]), 30,
                     "the crash-loop alarm")
            alarm = next(a for a in table.daemon.status()["alarms"] if a["type"] == "shoe_crash_loop")
            assert (alarm["command"], alarm["error"]) == ("CONFIG", "OSError")
            wait_for(lambda: table.daemon.link is not None and table.daemon.link.pending_commands() == 0
                     and shoe.conn is not None, 15, "the shoe up, nothing pending")
            resets = shoe.resets
            # A boot more (a power cut): its HELLO gets TIME, and no CONFIG.
            shoe.power_cut()
            shoe.power_on()
            wait_for(lambda: any(c.get("type") == "command_withheld" for c in _entries(table, "command")), 15,
                     "CONFIG withheld at the next HELLO")
            time.sleep(2.0)
            assert shoe.resets == resets <= CRASH_LOOP_BOUND + 1
            r = table.client.post("/shoe/load", json={"deck_id": DECK_ID})  # and the shoe works on
            assert r.status_code == 202, r.text
            shoe_no = r.json()["shoe_no"]
            wait_for(lambda: table.daemon.status()["shoes"].get(str(SERIAL), {}).get("shoe_no") == shoe_no, 10,
                     "the shoe loaded")
        finally:
            shoe.close()
    withheld = [c for c in _entries(table, "command") if c.get("type") == "command_withheld"]
    assert {(c["command"], c["reason"]) for c in withheld} == {("CONFIG", "shoe_crash_loop")}
