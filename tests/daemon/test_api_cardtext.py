"""Cards as text at the API's edge (cardshoe.api.cardtext): every card-bearing field, and
nothing else. Card texts are the standard rank-then-suit notation (docs/api.md, "Cards");
codes come from `parse_card`, the journal's own mapping."""

from __future__ import annotations

from cardshoe.api.cardtext import card_of, event_text, round_text
from cardshoe.cards import parse_card as c


def test_every_card_field_of_the_events_becomes_text() -> None:
    assert event_text({"type": "card_placed", "card": c("As"), "index": 3})["card"] == "As"
    assert event_text({"type": "card_not_due", "card": None})["card"] is None
    assert event_text({"type": "hand_complete", "cards": [c("Td"), None, c("2c")]})["cards"] == ["Td", None, "2c"]
    flag = {"type": "flagged", "irregularity": {"id": 1, "evidence": [{"index": 4, "code": c("Kh"), "reader_id": "x"}]}}
    assert event_text(flag)["irregularity"]["evidence"] == [{"index": 4, "card": "Kh", "reader_id": "x"}]
    assert event_text({"type": "card_outside_round", "evidence": [{"index": 1, "code": c("2d")}]})["evidence"] == [
        {"index": 1, "card": "2d"}]
    conflict = event_text({"type": "shoe_card_conflict", "held": {"type": "CARD", "code": c("Kh")},
                           "reported": {"type": "CARD", "code": 0xFF}})
    assert conflict["held"]["card"] == "Kh" and conflict["reported"]["card"] is None  # 0xFF: no card of a deck
    assert event_text({"type": "card_deck_mismatch", "code": c("9s")})["card"] == "9s"
    fault = event_text({"type": "deck_fault_outside_round", "evidence": [{"missing": 2, "never_dealt": [c("2c"), c("As")]}]})
    assert fault["evidence"] == [{"missing": 2, "never_dealt": ["2c", "As"]}]
    assert event_text({"type": "progressive_selected", "magic_card": c("Qc")})["magic_card"] == "Qc"


def test_fields_that_are_not_cards_are_left_alone() -> None:
    fault = {"type": "shoe_fault", "code": 3, "name": "tamper"}  # a fault code, not a card
    assert event_text(fault) == fault
    assert event_text({"type": "wager_accepted", "seat": 2, "amount": 51}) == {"type": "wager_accepted", "seat": 2,
                                                                               "amount": 51}
    assert card_of(True) is None and card_of(52) is None and card_of(-1) is None


def test_a_round_has_text_cards_and_its_settlement_unnested() -> None:
    settlement = {"format": "cardshoe.settlement/1", "seats": []}
    snap = {"cards": {"1": {"index": 1, "code": c("Ah"), "reader_id": "r"}}, "hands": {"seat 1": [c("Ah"), None]},
            "burns": [c("2c")], "security": [], "magic_card": c("7h"),
            "irregularities": [{"evidence": [{"index": 1, "code": None}]}], "not_due": [5],
            "settlement": {"type": "settlement", "round_id": "T-1", "settlement": settlement}}
    out = round_text(snap)
    assert out["cards"] == {"1": {"index": 1, "card": "Ah", "reader_id": "r"}}
    assert out["hands"] == {"seat 1": ["Ah", None]} and out["burns"] == ["2c"] and out["magic_card"] == "7h"
    assert out["irregularities"][0]["evidence"] == [{"index": 1, "card": None}]
    assert out["not_due"] == [5]  # shoe indices, not cards
    assert out["settlement"] == settlement
    assert snap["cards"]["1"]["code"] == c("Ah")  # the input is not changed
