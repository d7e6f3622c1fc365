"""`cardshoe bench floor` at a small scale: it runs its faults (a PostgreSQL restart, a cut of
the table-to-floor connection) and its checks pass (every entry once, the pool equal to the
journals' recomputation). Its figures are printed, never asserted."""

from __future__ import annotations

import pytest

from cardshoe.benchmarks import floor


def test_bench_floor_runs_its_faults_and_finds_everything_exact(capsys: pytest.CaptureFixture[str]) -> None:
    assert floor.main(["--tables", "2", "--seconds", "6", "--card-ms", "50", "--cut-s", "1"]) == 0
    out = capsys.readouterr().out
    assert "missing 0, doubled 0" in out and "EXACT" in out
    assert "PostgreSQL restarted" in out and "connection cut" in out
