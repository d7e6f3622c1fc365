"""The report's hold counts a wager from the moment bets close (docs/report.md, "Returned wagers")."""

from __future__ import annotations

import json

import pytest

from cardshoe.hil.shiftsim import SimTable
from cardshoe.report.figures import Figures, Options, build
from cardshoe.report.shift import TableReader, read_table

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


def _comparable(report: dict[str, object]) -> dict[str, object]:
    """The figures a reader sees (the per-round series is ordered by arrival: compared as a set)."""
    out = dict(report)
    series = out.pop("series")
    assert isinstance(series, list)
    out["series"] = sorted(json.dumps(s, sort_keys=True) for s in series)
    return json.loads(json.dumps(out, sort_keys=True, default=str))  # type: ignore[no-any-return]


def test_figures_kept_round_by_round_equal_the_figures_counted_at_once() -> None:
    """The floor and the table keep their figures up to date (`Figures.update`: only the rounds
    settled since the last call are counted). Looked at after every entry, as a floor reading
    whatever was shipped since its last call would, the figures at the end equal those of
    one reading of the whole journal: hold, pace (its gaps between rounds and shoe loads
    included), ratings, flags. A round that arrives out of order is not lost (all recounted)."""
    table = SimTable(name="T1", seed=9)
    table.sign_on("D-ANNA")
    table.seat_player(3, "P-9")
    for r in range(70):  # two shoes at least, a relief dealer, a player leaving
        if r == 30:
            table.sign_on("D-BEN")
        if r == 50:
            table.seat_player(3, None)
        table.deal_round(table.random_wagers())
        table.advance(40.0 if r % 9 else 1200.0)  # now and then a long break (a closed table past 15 min)
    entries = table.entries
    whole = build([read_table(entries, "sim")], Options())
    assert whole["groups"]["table"]["T1"]["pace"]["shoes"] >= 2
    reader = TableReader("sim")
    figures = Figures(Options())
    for e in entries:
        reader.feed(e)
        if e.kind == "settlement" or e.id % 7 == 0:
            figures.update([reader.shift()])
    assert _comparable(figures.report()) == _comparable(whole)
    # Rounds read out of their order (a second journal merged late): recounted, nothing lost.
    late = Figures(Options())
    half = len(entries) // 2
    late.update([read_table(entries[half:], "sim")])
    late.update([read_table(entries, "sim")])
    assert _comparable(late.report()) == _comparable(whole)
