"""`cardshoe bench poker` runs and prints each row with its ratio (figures are not asserted)."""

from __future__ import annotations

import pytest

from cardshoe.benchmarks import poker


def test_bench_poker_prints_rows_and_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert poker.main(["--hands", "300", "--slice", "100", "--repeat", "1", "--api-hands", "200",
                       "--no-pokerkit"]) == 0
    out = capsys.readouterr().out
    for row in ("cardshoe strength5 call", "cardshoe strength7 call", "evaluate5 -> Hand",
                "best5 -> Hand"):
        assert row in out
    assert "x strength5" in out and "x strength7" in out
    # eval7 is in the bench extra: the peer of the best-of-7 row
    assert "eval7 evaluate call" in out and "x eval7" in out


def test_alternate_takes_turns() -> None:
    seen: list[tuple[str, int]] = []

    def runner(name: str) -> poker.Runner:
        return lambda lo, hi: seen.append((name, lo))

    poker.alternate([("a", runner("a")), ("b", runner("b"))], count=30, size=10, repeat=1)
    assert sorted(seen) == [("a", 0), ("a", 10), ("a", 20), ("b", 0), ("b", 10), ("b", 20)]
    # each slice is run by both before the next slice starts
    assert [lo for _, lo in seen] == [0, 0, 10, 10, 20, 20]


def test_bad_arguments() -> None:
    with pytest.raises(SystemExit):
        poker.main(["--slice", "0"])


def test_rows_and_clock_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert poker.main(["--hands", "200", "--slice", "100", "--repeat", "1", "--rows", "7",
                       "--clock", "wall"]) == 0
    out = capsys.readouterr().out
    assert "best of 7" in out and "wall time" in out
    assert "5 cards" not in out and "Hand" not in out and "pokerkit" not in out
    with pytest.raises(SystemExit):
        poker.main(["--rows", "8"])
    with pytest.raises(SystemExit):
        poker.main(["--clock", "sundial"])


def test_alternate_times_with_the_clock_given() -> None:
    ticks = iter(range(100))
    totals = poker.alternate([("a", lambda lo, hi: None), ("b", lambda lo, hi: None)],
                             count=20, size=10, repeat=1, clock=lambda: float(next(ticks)))
    assert totals == [2.0, 2.0]  # each slice read the clock before and after: 1 tick each
