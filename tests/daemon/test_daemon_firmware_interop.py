"""The daemon against the real firmware (firmware/main.py under MicroPython) on a pty:
a shoe loaded, a round dealt by barcode and placed by seat, a power cut mid-round
reconciled from the firmware's own card log."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from daemon_fwshoe import FirmwareShoe
from daemon_harness import DECK_ID, KEY, SERIAL, Table, wait_for

from cardshoe.cards import parse_card
from cardshoe.journal import JournalReader

CARDS = ["Ah", "Kh", "Qh", "2c", "7d", "9s", "Jc", "Jd", "4s"]


def _cards_journaled(table: Table) -> list[int]:
    with JournalReader(table.config.journal) as j:
        return [e.data()["index"] for e in j.entries(("frame",)) if e.data()["type"] == "CARD"]


def test_the_real_firmware_deals_a_round_to_the_daemon(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    with tempfile.TemporaryDirectory(prefix="fw", dir="/tmp") as tmp:  # short path: UNIX socket
        shoe = FirmwareShoe(Path(tmp), table.plug, SERIAL, KEY)
        try:
            boot = shoe.power_on()
            wait_for(lambda: table.daemon.shoe_serial == SERIAL, 10, "the firmware's HELLO")
            r = table.client.post("/shoe/load", json={"deck_id": DECK_ID})
            assert r.status_code == 202, r.text
            shoe_no = r.json()["shoe_no"]
            wait_for(lambda: table.daemon.status()["shoes"].get(str(SERIAL), {}).get("shoe_no") == shoe_no, 10,
                     "the firmware to store the shoe")
            rid = table.ok("POST", "/rounds")["round_id"]
            table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
            table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 5, "wager": "ante", "amount": 1000})
            table.ok("POST", f"/rounds/{rid}/no-more-bets")
            for card in CARDS[:5]:
                shoe.deal(DECK_ID, parse_card(card))
            wait_for(lambda: len(_cards_journaled(table)) == 5, 10, "five cards journaled")
            # Power cut, then the rest of the round after the reboot.
            shoe.power_cut()
            boot2 = shoe.power_on()
            assert boot2 == boot + 1
            for card in CARDS[5:]:
                shoe.deal(DECK_ID, parse_card(card))
            shoe.send("key deal_complete")
            wait_for(lambda: len(_cards_journaled(table)) == 9, 10, "nine cards journaled")
            time.sleep(0.2)
            snap = table.round(rid)
        finally:
            shoe.close()
    assert snap["hands"]["seat 2"] == list(CARDS[0:3])
    assert snap["hands"]["seat 5"] == list(CARDS[3:6])
    assert snap["hands"]["dealer"] == list(CARDS[6:9])
    assert _cards_journaled(table) == list(range(1, 10))


def test_a_supervisors_maintenance_request_is_journaled_and_takes_the_shoe_to_the_repl(make_table) -> None:  # type: ignore[no-untyped-def]
    """Issue 9, item 1: the way back to the REPL through the daemon that holds the shoe.
    The request is journaled with who asked and why, the shoe answers OK and leaves its
    loop for the REPL (main.py returns: the unix port's process ends)."""
    table: Table = make_table("three-card-poker", 7)
    with tempfile.TemporaryDirectory(prefix="fw", dir="/tmp") as tmp:
        shoe = FirmwareShoe(Path(tmp), table.plug, SERIAL, KEY)
        try:
            shoe.power_on()
            wait_for(lambda: table.daemon.shoe_serial == SERIAL, 10, "the firmware's HELLO")
            bad = table.client.post("/shoe/maintenance", json={"supervisor": "", "reason": "reflash"})
            assert bad.status_code == 422, bad.text  # who asks is required
            r = table.client.post("/shoe/maintenance", json={"supervisor": "S. Pit", "reason": "firmware 0.2.0"})
            assert r.status_code == 202, r.text
            assert r.json()["shoe"] == SERIAL
            assert shoe.proc is not None
            wait_for(lambda: shoe.proc is not None and shoe.proc.poll() is not None, 15, "the shoe to leave its loop")
            assert shoe.proc.returncode == 0
            wait_for(lambda: any(e.data().get("command") == "MAINTENANCE" for e in _commands(table)), 10,
                     "the REPLY journaled")
        finally:
            shoe.close()
    entries = [e.data() for e in _commands(table)]
    asked = [e for e in entries if e.get("type") == "maintenance_requested"]
    assert asked == [{"type": "maintenance_requested", "supervisor": "S. Pit", "reason": "firmware 0.2.0"}]
    replies = [e for e in entries if e.get("command") == "MAINTENANCE"]
    assert replies and replies[-1]["type"] == "command_reply" and replies[-1]["status"] == 0
    assert entries.index(asked[0]) < entries.index(replies[-1])  # journaled before it was sent


def _commands(table: Table) -> list:  # type: ignore[type-arg]
    with JournalReader(table.config.journal) as j:
        return list(j.entries(("command",)))
