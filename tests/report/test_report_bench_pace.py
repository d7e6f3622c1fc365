"""End to end: a soak on the virtual board at a known dealer's pace, through the real daemon,
and the shift report's pace from its journal (issue 23 item 2).

The bench deals at 2.5 cards a second by its own clock and keeps what it did (the first and
last card of each round); the report's dealing pace, from the daemon's journal times alone,
must be that pace, and its counts the bench's.
"""

from __future__ import annotations

from pathlib import Path

from cardshoe.hil.relay import LineFaults
from cardshoe.hil.soak import soak
from cardshoe.report.cli import from_journals
from cardshoe.report.figures import Options, build


def test_the_reports_pace_is_the_pace_the_bench_dealt(tmp_path: Path) -> None:
    totals = soak(tmp_path / "soak", game="three-card-poker", cards=60, line=LineFaults(), seed=9,
                  power_cut_every=0, restart_every=0, unplug_every=0, pace=2.5, progress_every=0.0,
                  log=lambda _line: None)
    assert totals.stopped is None and not totals.failed(), totals.problems
    bench_rate = 60 * totals.deal_intervals / totals.deal_seconds  # cards a minute, the bench's clock
    assert bench_rate <= 150.0  # 2.5 a second at most: the bench waits 0.4 s after each card
    report = build(from_journals([tmp_path / "soak" / "journal.sqlite"]), Options())
    (pace,) = [g["pace"] for g in report["groups"]["table"].values()]
    assert pace["rounds"] == totals.rounds
    assert pace["cards"] == totals.cards_dealt
    assert abs(pace["dealing_cards_per_minute"] - bench_rate) <= 0.05 * bench_rate, (pace, bench_rate)
    phases = pace["phase_seconds"]
    # A round's dealing takes its cards at that pace: (cards - 1) / rate, and betting, decisions
    # and settling are the API calls between.
    assert phases["dealing"] > 0 and phases["betting"] >= 0 and phases["settling"] >= 0
    assert pace["shoes"] == totals.shoes
