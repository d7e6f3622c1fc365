"""First light: a shoe on a pty, a round opened through the API, cards placed by seat."""

from __future__ import annotations

from cardshoe.cards import parse_card

from daemon_harness import Table


def c(text: str) -> int:
    return parse_card(text)


def test_cards_are_placed_by_seat_over_a_real_pty(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 4, "wager": "ante", "amount": 500})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    cards = ["As", "Ks", "Qs", "2c", "7d", "9h", "Jc", "Jd", "4s"]
    table.deal([c(x) for x in cards])
    snap = table.round(rid)
    assert snap["hands"]["seat 1"] == ["As", "Ks", "Qs"]
    assert snap["hands"]["seat 4"] == ["2c", "7d", "9h"]
    assert snap["hands"]["dealer"] == ["Jc", "Jd", "4s"]
