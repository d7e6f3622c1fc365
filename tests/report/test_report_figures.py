"""The report's hold counts a wager from the moment bets close (docs/report.md, "Returned wagers")."""

from __future__ import annotations

import json

import pytest

from cardshoe.hil.shiftsim import SimTable
from cardshoe.report.figures import Options, build
from cardshoe.report.shift import read_table

# TCP v5 house edges per unit, as docs/parsheets.md publishes them (Wizard of Odds: 3.37%).
ANTE_PLAY_EDGE = 0.033730
PAIR_PLUS_EDGE = 0.055747


def test_a_returned_wager_keeps_its_theoretical_and_wins_the_house_nothing() -> None:
    """Seat 5 keyed absent every round (5.11: ante and pair plus returned): its handle and
    theoretical are the stakes' and stake x edge, its actual win 0, all of it returned."""
    table = SimTable(name="T1", seed=3)
    table.dealer_keys = lambda seat, hand, dealer: seat == 5
    antes = pairs = 0
    for _ in range(12):
        wagers = table.random_wagers(seats=(2, 3))
        wagers[5] = {"ante": 1000, "pair_plus": 500}
        antes += 1000
        pairs += 500
        table.deal_round(wagers)
    report = build([read_table(table.entries, "sim")], Options())
    seat5 = report["groups"]["seat"]["T1 seat 5"]["hold"]
    for row, stake, edge in (("ante_play", antes, ANTE_PLAY_EDGE), ("pair_plus", pairs, PAIR_PLUS_EDGE)):
        cell = seat5[row]
        assert cell["handle"] == stake and cell["returned"] == stake and cell["actual"] == 0, (row, cell)
        assert cell["theoretical"] == pytest.approx(stake * edge, abs=0.05), (row, cell)
        assert cell["sd"] > 0
    # Every settlement returned seat 5's wagers (the report took them from there).
    settled = [json.loads(e.body)["settlement"] for e in table.entries if e.kind == "settlement"]
    outcomes = {w["outcome"] for s in settled for seat in s["seats"] if seat["seat"] == 5 for w in seat["wagers"]}
    assert outcomes == {"returned"}
