"""The host believes only a consistent shoe (issue 10 item 4): a HELLO count below the
journal's, a different card at an index the journal holds, and a card of another deck
each become an event with its evidence and a deck irregularity of the round in play,
decided by the game's deck rules (Three Card Poker 5.1: the round is void, earlier rounds
stand; 5.8 for a count in doubt), never a silent drop. Over a real pty, through the API;
`cardshoe replay` reproduces every one."""

from __future__ import annotations

from typing import Any

import payloads
import wire
from daemon_harness import DECK_ID, SERIAL, Table, journal, open_two_seat_round

from cardshoe.cards import parse_card
from cardshoe.journal.replay import replay

TCP = "three-card-poker"
c = parse_card


def _events(table: Table, etype: str) -> list[dict[str, Any]]:
    with journal(table) as j:
        return [e.data() for e in j.entries(("event",)) if e.data()["type"] == etype]


def _deck_flag(table: Table, rid: str) -> dict[str, Any]:
    snap = table.round(rid)
    flags = [f for f in snap["irregularities"] if f["kind"] == "deck"]
    assert len(flags) == 1, snap["irregularities"]
    assert snap["void"] is not None and "5.1" in snap["void"]["rules"]  # TCP 5.1.1: void
    return flags[0]


def _replays(table: Table) -> None:
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def test_a_card_of_another_deck_the_shoe_did_not_flag_is_a_foreign_card(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = open_two_seat_round(table)
    table.deal([c("8h")])
    # A card of deck 0x0BADDECC read as the ace of spades, and the shoe failed to flag it FOREIGN.
    table.shoe.deal(c("As"), deck_id=0x0BADDECC, raw=b"CS0BADDECC" + bytes([c("As")]), flags=0)
    table.shoe.wait_acked()
    flag = _deck_flag(table, rid)
    assert "foreign" in flag["detail"] and flag["rules"] == ["5.1"]
    assert [e["index"] for e in flag["evidence"]] == [2]
    # Taken exactly as a card the shoe flagged FOREIGN (5.1), not as a good ace of spades.
    assert flag["evidence"][0]["reader_id"] == (b"CS0BADDECC" + bytes([c("As")])).hex()
    [ev] = _events(table, "card_deck_mismatch")
    assert ev["card_deck"] == 0x0BADDECC and ev["loaded_deck"] == DECK_ID and ev["index"] == 2
    assert ev["shoe_flagged_foreign"] is False and ev["rules"] == ["5.1"]
    _replays(table)


def _send_card(table: Table, index: int, code: int, raw: bytes | None = None) -> None:
    shoe = table.shoe
    buf = bytearray(wire.MAX_PAYLOAD)
    rawid = raw if raw is not None else f"CS{DECK_ID:08X}{code}".encode()[:16]
    n = payloads.pack_card(buf, shoe.state.shoe_no, index, DECK_ID, code, 2, 0, 0, shoe.ms(), rawid)
    with shoe.lock:
        shoe._queue(wire.CARD, bytes(buf[:n]))  # a new seq, properly tagged: the shoe's own frame
    shoe.wait_acked()


def test_a_different_card_at_a_held_index_is_flagged_with_both_cards(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = open_two_seat_round(table)
    table.deal([c("Ah"), c("Kh"), c("Qh")])
    # An identical resend of card 2 (as after CARDS_FROM) is placed once and flags nothing.
    with table.shoe.lock:
        table.shoe._send_logged(table.shoe.state.log[1])
    table.shoe.wait_acked()
    assert table.round(rid)["irregularities"] == [] and not _events(table, "shoe_card_conflict")
    # Then the shoe says card 2 was the two of clubs.
    _send_card(table, 2, c("2c"))
    flag = _deck_flag(table, rid)
    assert flag["rules"] == ["5.1", "5.8"] and "extra" in flag["detail"]
    [ev] = _events(table, "shoe_card_conflict")
    assert ev["index"] == 2 and ev["held"]["code"] == c("Kh") and ev["reported"]["code"] == c("2c")
    assert ev["shoe"] == SERIAL and ev["rules"] == ["5.1", "5.8"]
    assert table.round(rid)["placements"]["2"] is not None  # the held card stays where it was placed
    _replays(table)


def test_a_hello_counting_fewer_cards_than_the_journal_holds_is_flagged(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = open_two_seat_round(table)
    table.deal([c("Ah"), c("Kh"), c("Qh"), c("2c")])
    # The shoe reboots with a log that lost its last two cards.
    table.shoe.power_off()
    table.shoe.state.dealt = 2
    del table.shoe.state.log[2:]
    table.shoe.power_on(reset_cause=2)
    table.shoe.wait_acked()
    flag = _deck_flag(table, rid)
    assert flag["rules"] == ["5.1", "5.8"] and "missing" in flag["detail"]
    [ev] = _events(table, "shoe_count_backwards")
    assert ev["hello_dealt"] == 2 and ev["journal_holds"] == 4 and ev["shoe"] == SERIAL
    _replays(table)
