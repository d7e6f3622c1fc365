"""`cardshoe bench daemon` runs and prints its figures (it asserts no speed; nor does this)."""

from __future__ import annotations

import pytest

from cardshoe.benchmarks import daemon as bench


def test_the_daemon_benchmark_prints_latency_and_cpu_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "24 cards in 1 rounds" in out
    assert "p50" in out and "p99" in out and "CPU per dealt card" in out


def test_the_start_benchmark_prints_start_times_and_the_first_event(capsys: pytest.CaptureFixture[str]) -> None:
    """Figures only: the start from zero replays the journal, the one from a checkpoint replays
    nothing after the stop's checkpoint (counts, not speed)."""
    assert bench.main(["--start", "--cards", "240"]) == 0
    out = capsys.readouterr().out
    assert "240 cards (10 rounds" in out, out
    assert "from checkpoint" in out and "(0 inputs replayed)" in out, out
    assert "GET /events?after=0&limit=1 on the 240-card journal: first event in" in out, out


def test_the_latency_benchmark_prints_the_bare_commit_floor_beside_a_busy_core(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: the card-to-event latency with a core-burning process beside, and the floor
    (a bare fsync'd transaction of the same rows) measured in the same run."""
    assert bench.main(["--rounds", "1", "--no-noise", "--load", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 core-burning process(es) beside" in out, out
    assert "the floor, a bare fsync'd SQLite transaction" in out and "p99 ratio" in out, out


def test_the_end_to_end_benchmark_reads_card_placed_from_the_http_stream(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: real firmware on the virtual board, `cardshoe run`, GET /events; every card
    dealt is stamped from the stream (a card whose event never came would time out)."""
    assert bench.main(["--e2e", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "24 cards in 1 rounds" in out, out
    assert "card leaves the shoe -> card_placed read from GET /events: p50" in out, out
    assert "exit -> the daemon takes the frame" in out and "the daemon takes it -> the event read" in out, out
