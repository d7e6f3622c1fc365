"""The shuffle alarm at a real table (issue 14 item 6): a deck dealt in its new-deck order is
journaled as a `shuffle_alarm` event citing 5.1 with both orders as evidence, shown in
/status `alarms` until another shoe is loaded (reading 61: referred, never voided by the daemon)."""

from __future__ import annotations

import json

from daemon_harness import Table, journal, open_two_seat_round, wait_for  # type: ignore[import-not-found]

from cardshoe.cards import DECK, card_text

TCP = "three-card-poker"


def test_a_deck_in_new_deck_order_raises_the_alarm_until_the_next_shoe(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    shoe_no = table.power_on_and_load()
    rid = open_two_seat_round(table)
    dealt = list(DECK[:9])  # two seats and the dealer (TCP 3.7): nine cards straight from a new deck
    table.deal(dealt)
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    with journal(table) as reader:
        events = [json.loads(e.body) for e in reader.entries(("event",))]
    (alarm,) = [e for e in events if e["type"] == "shuffle_alarm"]
    assert alarm["rule"] == "5.1" and alarm["decision"] == "referred" and alarm["shoe_no"] == shoe_no
    assert alarm["finding"]["reference"] == "new-deck order" and alarm["finding"]["rising"] == 1
    assert alarm["evidence"]["dealt"] == [card_text(c) for c in dealt]
    (shown,) = [a for a in table.ok("GET", "/status")["alarms"] if a["type"] == "shuffle"]
    assert shown["shoe_no"] == shoe_no and shown["rule"] == "5.1" and "5.1" in shown["message"]
    assert table.round(rid)["void"] is None  # referred to a person, not voided
    table.ok("POST", f"/rounds/{rid}/settle")
    table.power_on_and_load()  # another shoe: the alarm was about the one before
    wait_for(lambda: not [a for a in table.ok("GET", "/status")["alarms"] if a["type"] == "shuffle"],
             what="the shuffle alarm to clear with the next shoe")
