"""`cardshoe bench daemon` runs and prints its figures (it asserts no speed; nor does this)."""

from __future__ import annotations

import pytest

from cardshoe.benchmarks import daemon as bench


def test_the_daemon_benchmark_prints_latency_and_cpu_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "24 cards in 1 rounds" in out
    assert "p50" in out and "p99" in out and "CPU per dealt card" in out
