"""`cardshoe bench floor` at a small scale: it runs its faults (a PostgreSQL restart or a
failover, a cut of the table-to-floor connection, a table killed mid-deal) and its checks pass
(every card the table processes dealt in their journals, every entry once, the pool equal to
the journals' recomputation, every assignment recomputed from the floor's entries). Its figures
are printed, never asserted."""

from __future__ import annotations

import re

import pytest

from cardshoe.benchmarks import floor

# A dealer far faster than a real one and a small day, so the run is short.
FAST = ["--seconds", "6", "--card-ms", "50", "--round-pause-s", "0.2", "--cut-s", "1", "--day-rounds", "20",
        "--searches", "5", "--search-every-s", "0.5"]


def _exact(out: str) -> None:
    assert "missing 0, doubled 0" in out and "EXACT" in out
    assert "0 tables whose journal differs from what they dealt" in out
    assert "recomputed from the floor's entries" in out and "SKIPPED" not in out
    rounds = re.search(r"in \d+ processes: (\d+) rounds", out)
    assert rounds is not None and int(rounds.group(1)) >= 2  # the checks had rounds to check


def test_bench_floor_runs_its_faults_and_finds_everything_exact(capsys: pytest.CaptureFixture[str]) -> None:
    assert floor.main(["--tables", "2", *FAST]) == 0
    out = capsys.readouterr().out
    _exact(out)
    assert "tables    2 in 1 processes" in out  # the default: one process per 100 tables
    assert "PostgreSQL restarted" in out and "connection cut" in out


def test_bench_floor_tables_in_several_processes(capsys: pytest.CaptureFixture[str]) -> None:
    """Each of two processes runs one table and sends back its ledger; the parent checks them."""
    assert floor.main(["--tables", "2", "--table-procs", "2", *FAST]) == 0
    out = capsys.readouterr().out
    _exact(out)
    assert "tables    2 in 2 processes" in out
    assert "PostgreSQL restarted" in out and "connection cut" in out


def test_bench_floor_failover_mid_run_with_floor_workers(capsys: pytest.CaptureFixture[str]) -> None:
    """The pair's primary SIGKILLed mid-run and the standby promoted (`PgPair`), the floor in
    two API processes (`--workers 2` passed through): nothing lost or doubled, the window measured."""
    assert floor.main(["--tables", "2", "--table-procs", "2", "--failover", "--floor-workers", "2", *FAST]) == 0
    out = capsys.readouterr().out
    _exact(out)
    assert "PgPair: primary SIGKILLed, standby promoted" in out
    assert re.search(r"failover window \(kill to the first settlement after\) \d+\.\d+ s", out)
    assert "PostgreSQL restarted" not in out  # the failover is the store's fault in this run
    procs = re.search(r"peak memory: floor \d+ MB \((\d+) processes\)", out)
    assert procs is not None and int(procs.group(1)) >= 2  # the workers ran (and were measured)
