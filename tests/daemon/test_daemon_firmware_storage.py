"""A shoe whose flash refuses, end to end (issue 9 item 6): the real firmware (under
MicroPython, its flash a folder) and the daemon with its API.

The flash is made to refuse the card log: the log's folder is replaced by a plain file, so
every new log segment the firmware opens fails (as a worn or failing flash refuses a write;
GPIO and flash faults cannot be made here otherwise, and the test runs as root, for whom
permissions refuse nothing). Before: after four refused records the stream stopped (cards
5-12 neither logged nor sent) and the daemon showed nothing. Expected (SPEC 5): every card
arrives and is placed, those not in the shoe's flash marked NOT_DURABLE (CARD flags bit 2);
FAULT STORAGE (code 7) is raised; the daemon shows both on the event stream and in /status.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from daemon_fwshoe import FirmwareShoe
from daemon_harness import DECK_ID, KEY, SERIAL, Table, wait_for

from cardshoe.cards import parse_card
from cardshoe.journal import JournalReader

CARDS = ["Ah", "Kh", "Qh", "2c", "7d", "9s", "Jc", "Jd", "4s", "5c", "6c", "8c"]


def _events(table: Table) -> list[dict[str, Any]]:
    """The derived events as journaled (what the event stream shows, in order)."""
    with JournalReader(table.config.journal) as j:
        return [e.data() for e in j.entries(("event",))]


def test_a_refusing_flash_is_a_visible_storage_fault_and_every_card_still_arrives(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    with tempfile.TemporaryDirectory(prefix="fw", dir="/tmp") as tmp:  # short path: UNIX socket
        shoe = FirmwareShoe(Path(tmp), table.plug, SERIAL, KEY)
        try:
            shoe.power_on()
            wait_for(lambda: table.daemon.shoe_serial == SERIAL, 10, "the firmware's HELLO")
            r = table.client.post("/shoe/load", json={"deck_id": DECK_ID})
            assert r.status_code == 202, r.text
            shoe_no = r.json()["shoe_no"]
            wait_for(lambda: table.daemon.status()["shoes"].get(str(SERIAL), {}).get("shoe_no") == shoe_no, 10,
                     "the firmware to store the shoe")
            # The flash refuses the card log from here on.
            log = shoe.flash / "data" / "log"
            shutil.rmtree(log)
            log.write_bytes(b"")
            rid = table.ok("POST", "/rounds")["round_id"]
            for seat in (2, 5, 6):
                table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": "ante", "amount": 1000})
            table.ok("POST", f"/rounds/{rid}/no-more-bets")
            for card in CARDS:
                shoe.deal(DECK_ID, parse_card(card))
            wait_for(lambda: len(table.round(rid)["placements"]) == len(CARDS), 20, "all twelve cards placed")
            wait_for(lambda: table.daemon.status()["shoes"][str(SERIAL)]["storage_fault"], 10, "STORAGE in /status")
            status = table.ok("GET", "/status")["shoes"][str(SERIAL)]
            events = _events(table)
        finally:
            shoe.close()
    snap_cards = table.round(rid)["placements"]
    assert sorted(int(k) for k in snap_cards) == list(range(1, 13))
    assert status["faults"] == ["storage"] and status["storage_fault"] is True
    # The segment open at the time took the first record(s) of the round; every card after
    # arrived from the shoe's RAM, marked so.
    not_durable = [e["index"] for e in events if e.get("type") == "card_not_durable"]
    assert status["cards_not_durable"] == len(not_durable) >= 7, (status, not_durable)
    assert not_durable == list(range(13 - len(not_durable), 13))
    storage = [e for e in events if e.get("type") == "shoe_fault" and e.get("code") == 7]
    assert storage and storage[0]["active"] is True and storage[0]["name"] == "storage"
