"""A shoe that reboots mid-deal, and a shoe whose flash refuses, as the table core sees them
(issue 9 items 6 and 7). Driven through `TableCore` with journal-shaped inputs and frames.

Expectations come from the rule documents: 5.16 ("in the event of a power failure") in TCP,
Megalink TCP, Xtreme and Singapore Stud; Let It Ride has no such rule nor a 6.1, so the flag
cites Megalink TCP 5.16 by analogy (docs/rule-readings.md, readings 35 and 51); and from
SPEC 5 (FAULT code 7 STORAGE, CARD flags bit 2 NOT_DURABLE).
"""

from __future__ import annotations

from typing import Any

import pytest

from cardshoe.cards import parse_card
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.rounds import PlaceWager, SupervisorConfirmation, operation_to_json

T0 = 1_700_000_000_000_000_000
LIMITS = (("ante", 100, 100_000), ("pair_plus", 100, 100_000), ("play", 100, 100_000), ("dollar", 100, 100_000),
          ("one", 100, 100_000), ("two", 100, 100_000))


class Table:
    def __init__(self, game: str) -> None:
        self.core = TableCore(TableSetup(name="T", game=game, seats=7, limits=LIMITS))
        self.t = T0
        self.index = 0
        # This journal's session 1 of shoe 1 (the core places only the session it started).
        self.input({"action": "shoe_loaded", "shoe": 1, "shoe_no": 1, "deck_id": 7})

    def tick(self) -> int:
        self.t += 1_000_000
        return self.t

    def input(self, body: dict[str, Any]) -> Any:
        return self.core.apply_input(body, self.tick())

    def op(self, rid: str, op: Any) -> Any:
        done = self.input({"action": "op", "round_id": rid, "op": operation_to_json(op)})
        assert done.refused is None, done.refused
        return done

    def hello(self, boot: int, dealt: int, faults: int = 0, reset_cause: int = 1) -> list[dict[str, Any]]:
        msg = {"type": "HELLO", "boot": boot, "fw_major": 0, "fw_minor": 1, "fw_patch": 0, "fw_hash": "00" * 32,
               "reset_cause": reset_cause, "readers": 1, "shoe_no": 1, "deck_id": 7, "dealt": dealt, "integrity": 0,
               "faults": faults}
        return [d.body for d in self.core.apply_frame(1, msg, self.tick()).derived]

    def card(self, text: str, flags: int = 0) -> list[dict[str, Any]]:
        self.index += 1
        msg = {"type": "CARD", "shoe_no": 1, "index": self.index, "code": parse_card(text), "raw": f"{self.index:08x}",
               "t_ms": 1000 * self.index, "card_deck": 7, "method": 1, "flags": flags}
        return [d.body for d in self.core.apply_frame(1, msg, self.tick()).derived]

    def fault(self, code: int, active: bool) -> list[dict[str, Any]]:
        msg = {"type": "FAULT", "code": code, "active": int(active), "detail": 0, "t_ms": 5}
        return [d.body for d in self.core.apply_frame(1, msg, self.tick()).derived]

    def open_round(self) -> str:
        rid = str(self.input({"action": "open_round"}).round_id)
        if self.core.setup.game == "megalink-let-it-ride":
            for wager in ("dollar", "one", "two"):
                self.op(rid, PlaceWager(seat=1, wager=wager, amount=1000))
        else:
            self.op(rid, PlaceWager(seat=1, wager="ante", amount=1000))
        return rid

    def flags(self, rid: str) -> list[Any]:
        return list(self.core.rounds[rid].irregularities)


@pytest.mark.parametrize(("game", "rules"), [
    ("three-card-poker", ["5.16"]),
    ("megalink-three-card-poker", ["5.16"]),
    ("megalink-singapore-stud-poker", ["5.16"]),
    ("megalink-let-it-ride", ["Megalink Three Card Poker 5.16 (by analogy)"]),
])
def test_a_shoe_reboot_mid_deal_is_carried_by_the_round_under_the_power_failure_rule(game: str, rules: list[str]) -> None:
    table = Table(game)
    table.hello(boot=1, dealt=0)
    rid = table.open_round()
    table.input({"action": "op", "round_id": rid, "op": {"op": "no_more_bets"}})
    table.card("Ah")
    table.card("Kh")
    # The power goes as the third card leaves: the shoe never logged it; it comes back with 2.
    events = table.hello(boot=2, dealt=2)
    (flag,) = table.flags(rid)
    assert flag.kind.value == "power_failure" and list(flag.rules) == rules
    assert flag.decision.value == "referred" and flag.open  # blocks settlement until a supervisor answers
    assert "holds 2 cards" in flag.detail and "host 2" in flag.detail
    assert any(e.get("type") == "flagged" for e in events), events  # on the event stream too
    # The supervisor checks the cards on the table: the round stands.
    table.op(rid, SupervisorConfirmation(flag=flag.id, confirmed=True, supervisor="S"))
    assert not table.flags(rid)[0].open


def test_counts_that_disagree_are_named_in_the_flag() -> None:
    table = Table("three-card-poker")
    table.hello(boot=1, dealt=0)
    rid = table.open_round()
    table.input({"action": "op", "round_id": rid, "op": {"op": "no_more_bets"}})
    for text in ("Ah", "Kh", "Qh"):
        table.card(text, flags=4)  # not durable: the shoe's flash refused them
    table.hello(boot=2, dealt=0)  # they were only in the shoe's RAM
    (flag,) = table.flags(rid)
    assert "holds 0 cards" in flag.detail and "host 3" in flag.detail and "DISAGREE" in flag.detail


def test_no_flag_when_no_card_is_being_dealt_or_the_boot_is_the_same() -> None:
    table = Table("three-card-poker")
    table.hello(boot=1, dealt=0)
    rid = table.open_round()
    table.hello(boot=2, dealt=0)  # betting: no card leaves the shoe
    assert table.flags(rid) == []
    table.input({"action": "op", "round_id": rid, "op": {"op": "no_more_bets"}})
    table.card("Ah")
    table.hello(boot=2, dealt=1)  # the same boot again (a daemon that reconnects): not a power failure
    assert table.flags(rid) == []


def test_storage_fault_and_not_durable_cards_are_shown() -> None:
    table = Table("three-card-poker")
    table.hello(boot=1, dealt=0)
    rid = table.open_round()
    table.input({"action": "op", "round_id": rid, "op": {"op": "no_more_bets"}})
    (event,) = table.fault(7, True)
    assert event["type"] == "shoe_fault" and event["name"] == "storage" and event["active"]
    events = table.card("Ah", flags=4)
    assert {"type": "card_not_durable", "shoe": 1, "shoe_no": 1, "index": 1}.items() <= events[0].items(), events
    session = table.core.shoes[1]
    assert session.fault_names() == ["storage"] and session.not_durable == 1
    assert not any(e.get("type") == "card_not_durable" for e in table.card("Kh"))
    table.fault(7, False)
    assert table.core.shoes[1].fault_names() == []
    table.hello(boot=2, dealt=2, faults=1 << 7)  # HELLO says which faults are active at boot
    assert table.core.shoes[1].fault_names() == ["storage"]


def test_a_reboot_that_lost_a_durable_card_beside_not_durable_ones_is_a_count_backwards() -> None:
    """Only cards the shoe sent NOT_DURABLE (SPEC 5 CARD flags bit 2: in no flash log) may go
    missing from its count at a reboot without a flag of their own (docs/rule-readings.md 51).
    A card sent durable that the rebooted shoe no longer counts was lost from its log: the
    count went backwards (reading 52), even when NOT_DURABLE cards went with it."""
    table = Table("three-card-poker")
    table.hello(boot=1, dealt=0)
    rid = table.open_round()
    table.input({"action": "op", "round_id": rid, "op": {"op": "no_more_bets"}})
    table.card("Ah")
    table.card("Kh")  # durable: in the shoe's log
    table.card("Qh", flags=4)  # not durable: only in its RAM
    events = table.hello(boot=2, dealt=1)  # the log lost card 2 as well as card 3
    backwards = [e for e in events if e.get("type") == "shoe_count_backwards"]
    assert len(backwards) == 1, events
    assert backwards[0]["hello_dealt"] == 1 and backwards[0]["journal_holds"] == 3, backwards
