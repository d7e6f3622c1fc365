"""Cards and the shoe's other round events are applied in shoe order across a shoe reboot
(issue 11, defect B).

After a power cut the shoe's new boot sends its HELLO, the cards dealt since and the
dealer's DEAL_COMPLETE key; the cards its log holds that the host never got come only
later, re-sent under new sequence numbers when the host's CARDS_FROM arrives (SPEC 4). The
key was pressed after every one of those cards, so it must be applied after them: applied
on arrival it closed the deal on a short count and the late cards landed as "not due".

Expectations come from the rules and the SPEC, not from the daemon: Three Card Poker 3.7
(automated device: three cards to each playing position with a wager, clockwise from the
dealer's left, then three to the dealer), so with seats 2 and 5 the shoe's cards 1-3 are
seat 2's, 4-6 seat 5's, 7-9 the dealer's; SPEC 4 (a card is placed by its (shoe_no,
index); CARDS_FROM re-sends the log); SPEC 5 (HELLO `dealt`; KEY 2 DEAL_COMPLETE).

Three levels: the table core with journal-shaped frames (also a shoe whose log lost the
awaited cards), the daemon over a real pty with the scripted shoe (whose CARDS_FROM answer
is held back so the order is certain), and the real firmware under MicroPython with a
power cut while its cable is out.
"""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path
from typing import Any

import wire
from daemon_fwshoe import FirmwareShoe
from daemon_harness import DECK_ID, HANDS, KEY, SERIAL, Table, check_hands, journal, open_two_seat_round, wait_for

from cardshoe.cards import parse_card
from cardshoe.protocol.barcode import make_barcode
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.rounds import PlaceWager, operation_to_json

TCP = "three-card-poker"
T0 = 1_700_000_000_000_000_000
DEAL_COMPLETE = 2  # SPEC 5 KEY


def c(text: str) -> int:
    return parse_card(text)


# -- the table core --------------------------------------------------------------------------
class Core:
    """A table core fed frames as the journal would hold them (shoe 1, session 1, deck 7)."""

    def __init__(self) -> None:
        self.core = TableCore(TableSetup(name="T", game=TCP, seats=7, limits=(("ante", 100, 100_000),
                                                                              ("pair_plus", 100, 100_000))))
        self.t = T0
        self.events: list[dict[str, Any]] = []

    def _tick(self) -> int:
        self.t += 1_000_000
        return self.t

    def input(self, body: dict[str, Any]) -> Any:
        done = self.core.apply_input(body, self._tick())
        assert done.refused is None, done.refused
        self.events += [d.body for d in done.derived]
        return done

    def frame(self, msg: dict[str, Any]) -> None:
        self.events += [d.body for d in self.core.apply_frame(1, msg, self._tick()).derived]

    def hello(self, boot: int, dealt: int) -> None:
        self.frame({"type": "HELLO", "boot": boot, "fw_major": 0, "fw_minor": 1, "fw_patch": 0, "fw_hash": "00" * 32,
                    "reset_cause": 1, "readers": 2, "shoe_no": 1, "deck_id": 7, "dealt": dealt, "integrity": 0,
                    "faults": 0})

    def card(self, index: int) -> None:
        self.frame({"type": "CARD", "shoe_no": 1, "index": index, "code": c(HANDS[index - 1]), "raw": f"r{index}",
                    "t_ms": index, "card_deck": 7, "method": 2, "flags": 0})

    def key(self, key: int) -> None:
        self.frame({"type": "KEY", "key": key, "arg": 0, "t_ms": 99})

    def open_round(self) -> str:
        self.input({"action": "shoe_loaded", "shoe": 1, "shoe_no": 1, "deck_id": 7})
        rid = str(self.input({"action": "open_round"}).round_id)
        for seat, wager in ((2, "ante"), (5, "pair_plus")):
            self.input({"action": "op", "round_id": rid,
                        "op": operation_to_json(PlaceWager(seat=seat, wager=wager, amount=1000))})
        self.input({"action": "op", "round_id": rid, "op": {"op": "no_more_bets"}})
        return rid

    def hands(self, rid: str) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self.core.rounds[rid].snapshot()["hands"].items() if v}

    def types(self) -> list[str]:
        return [str(e.get("type")) for e in self.events]


TCP_HANDS = {"seat 2": [c(x) for x in HANDS[0:3]], "seat 5": [c(x) for x in HANDS[3:6]],
             "dealer": [c(x) for x in HANDS[6:9]]}  # TCP 3.7


def test_a_key_of_the_new_boot_waits_for_the_cards_the_shoe_logged_before_it() -> None:
    t = Core()
    t.hello(boot=1, dealt=0)
    rid = t.open_round()
    for i in (1, 2, 3, 4):
        t.card(i)
    # Cards 5 and 6 are in the shoe's log but never reached the host: the power went.
    t.hello(boot=2, dealt=6)
    assert {"type": "cards_requested", "from_index": 5} .items() <= t.events[-1].items()
    for i in (7, 8, 9):  # the new boot's cards, then the dealer's key, before CARDS_FROM's answer
        t.card(i)
    before = len(t.events)
    t.key(DEAL_COMPLETE)
    assert [e["type"] for e in t.events[before:]] == ["shoe_frame_held"]  # not applied yet
    held = t.events[-1]
    assert (held["after_index"], held["waiting_for"], held["frame"], held["key"]) == (9, 5, "KEY", DEAL_COMPLETE)
    # A checkpoint taken now keeps the waiting key (a daemon restart resumes from it).
    t.core = pickle.loads(pickle.dumps(t.core))
    for i in (5, 6, 7, 8, 9):  # CARDS_FROM(5): the log from 5, under new seqs; 7-9 again
        t.card(i)
    assert "card_not_due" not in t.types()
    assert t.hands(rid) == TCP_HANDS
    placed = [i for i, e in enumerate(t.events) if e["type"] == "card_placed"]
    key_at = t.types().index("shoe_key")
    assert len(placed) == 9 and key_at > placed[-1]  # the key after the ninth card, as pressed
    (count,) = [e for e in t.events if e["type"] == "count_checked"]
    assert (count["dealt"], count["expected"]) == (9, 9)
    # The reboot mid-deal still flags the round (5.16); no other flag, no short count.
    assert [f.kind.value for f in t.core.rounds[rid].irregularities] == ["power_failure"]


def test_a_key_with_no_card_missing_is_applied_at_once() -> None:
    t = Core()
    t.hello(boot=1, dealt=0)
    rid = t.open_round()
    for i in range(1, 10):
        t.card(i)
    t.key(DEAL_COMPLETE)
    assert "shoe_frame_held" not in t.types() and "shoe_key" in t.types()
    assert t.hands(rid) == TCP_HANDS


def test_a_shoe_whose_log_lost_the_awaited_cards_ends_the_wait_and_is_flagged() -> None:
    t = Core()
    t.hello(boot=1, dealt=0)
    rid = t.open_round()
    for i in (1, 2, 3, 4):
        t.card(i)
    t.hello(boot=2, dealt=6)  # the shoe counts 6 cards; 5 and 6 are asked for
    t.key(DEAL_COMPLETE)
    assert t.types()[-1] == "shoe_frame_held"
    # It reboots again, and its log now holds only 4: cards 5 and 6 will never come.
    t.hello(boot=3, dealt=4)
    lost = next(e for e in t.events if e["type"] == "shoe_cards_unrecoverable")
    assert (lost["announced"], lost["hello_dealt"], lost["missing_indices"]) == (6, 4, [5, 6])
    released = next(e for e in t.events if e["type"] == "held_frames_released")
    assert released["frames"] == ["KEY"]
    assert "shoe_key" in t.types()  # applied: the dealer's key is never dropped
    # Cards dealt and in no record: a deck irregularity under TCP 5.1/5.8 that voids the round.
    deck = [f for f in t.core.rounds[rid].irregularities if f.kind.value == "deck"]
    assert [(tuple(f.rules), f.decision.value) for f in deck] == [(("5.1", "5.8"), "void_round")]
    assert t.core.shoes[1].missing_from() is None


# -- the daemon over a pty, the scripted shoe ---------------------------------------------------
def _event_types(table: Table) -> list[dict[str, Any]]:
    with journal(table) as j:
        return [e.data() for e in j.entries(("event",))]


def test_the_daemon_applies_the_new_boots_deal_complete_after_the_cards_cards_from_brings(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    shoe_no = table.power_on_and_load()
    rid = open_two_seat_round(table)
    table.deal([c(x) for x in HANDS[:4]])
    # Cards 5 and 6 are written to the shoe's log, then the power goes before they are framed.
    table.shoe.deal(c(HANDS[4]), send=False)
    table.shoe.deal(c(HANDS[5]), send=False)
    table.shoe.defer_cards_from = True
    table.shoe.reboot()
    assert table.shoe.wait_command(wire.CARDS_FROM) == (shoe_no, 5)
    # The dealer deals on and presses DEAL COMPLETE before the shoe's log is re-sent.
    table.deal([c(x) for x in HANDS[6:]])
    table.shoe.key_press(DEAL_COMPLETE)
    table.shoe.wait_acked()  # journaled: the key is in the daemon's hands now
    shoe = table.daemon.status()["shoes"][str(SERIAL)]
    assert (shoe["missing_from"], shoe["frames_waiting"]) == (5, 1)
    assert "count_checked" not in [e["type"] for e in _event_types(table)]
    table.shoe.send_deferred()
    table.shoe.wait_acked()
    check_hands(table, rid)
    events = _event_types(table)
    types = [e["type"] for e in events]
    assert "card_not_due" not in types
    assert types.index("shoe_key") > max(i for i, t in enumerate(types) if t == "card_placed")
    (count,) = [e for e in events if e["type"] == "count_checked"]
    assert (count["dealt"], count["expected"]) == (9, 9)
    shoe = table.daemon.status()["shoes"][str(SERIAL)]
    assert (shoe["missing_from"], shoe["frames_waiting"]) == (None, 0)


# -- the real firmware -------------------------------------------------------------------------
def _cards_journaled(table: Table) -> list[int]:
    with journal(table) as j:
        return [e.data()["index"] for e in j.entries(("frame",)) if e.data()["type"] == "CARD"]


def test_the_real_firmware_cut_off_then_powered_down_gets_its_cards_placed_before_its_key(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
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
            rid = open_two_seat_round(table)
            for card in HANDS[:4]:
                shoe.deal(DECK_ID, c(card))
            wait_for(lambda: len(_cards_journaled(table)) == 4, 10, "four cards journaled")
            # The cable is out: cards 5 and 6 reach the shoe's log, not the daemon; then the power goes.
            table.plug.unplug()
            for card in HANDS[4:6]:
                shoe.deal(DECK_ID, c(card))
            wait_for(lambda: shoe.cards_sent_unplugged()[:2] == [5, 6], 10, "cards 5 and 6 logged and framed")
            shoe.power_cut()
            table.plug.replug()
            shoe.power_on()
            # The new boot: three more cards and DEAL COMPLETE, back to back, as a dealer in a
            # hurry: the firmware frames them before the daemon, which sends CARDS_FROM only
            # after the HELLO's TIME and CONFIG are answered (one command at a time, SPEC 4),
            # gets cards 5 and 6 again, so the key comes ahead of them.
            for card in HANDS[6:]:
                shoe.send(f"barcode {make_barcode(DECK_ID, c(card))}")
                shoe.send("exit")
            shoe.send("key deal_complete")
            wait_for(lambda: "count_checked" in [e["type"] for e in _event_types(table)], 20,
                     "the deal to be completed")
        finally:
            shoe.close()
    check_hands(table, rid)
    types = [e["type"] for e in _event_types(table)]
    assert "card_not_due" not in types
    assert types.index("shoe_key") > max(i for i, t in enumerate(types) if t == "card_placed")



def test_a_late_shoe_loaded_status_of_the_session_in_use_does_not_start_it_again() -> None:
    """The firmware frames the "shoe loaded" DECK_STATUS (reason 1) after the cards waiting
    in its log, so a NEW_SHOE run again before the first card (SPEC 4: the same state)
    can have it arrive after cards of the session. Taken as a new load, it set the session
    back to index 1: the next card waited, the daemon asked for the whole shoe again, and
    the shoe's earlier cards were placed a second time, in the round in play (issue 11
    soak, seed 1: 21 cards "invented")."""
    t = Core()
    t.hello(boot=1, dealt=0)
    rid = t.open_round()
    for i in (1, 2, 3, 4):
        t.card(i)
    t.frame({"type": "DECK_STATUS", "shoe_no": 1, "deck_id": 7, "reason": 1, "dealt": 4, "remaining": 48,
             "integrity": 0, "duplicates": 0, "foreign": 0, "unread": 0, "missing": 0})
    for i in (5, 6, 7, 8, 9):
        t.card(i)
    assert "cards_requested" not in t.types()
    assert t.hands(rid) == TCP_HANDS
    assert t.core.shoes[1].next_index == 10


def test_a_waiting_key_is_the_same_state_live_and_replayed() -> None:
    """The live daemon keeps a frame as decoded, a replay as read back from the journal
    (canonical JSON, keys sorted); a checkpoint taken while a key waits must digest the
    same either way, or `cardshoe replay` calls the checkpoint different (issue 11 soak)."""
    from cardshoe.journal.checkpoint import state_digest

    def run(order: Any) -> str:
        t = Core()
        t.hello(boot=1, dealt=0)
        t.open_round()
        for i in (1, 2, 3, 4):
            t.card(i)
        t.hello(boot=2, dealt=6)
        t.card(7)  # ahead of 5 and 6: waits too
        t.frame(order({"type": "KEY", "key": DEAL_COMPLETE, "arg": 0, "t_ms": 99}))
        assert t.types()[-1] == "shoe_frame_held"
        return state_digest(t.core)

    assert run(lambda m: m) == run(lambda m: dict(sorted(m.items())))
