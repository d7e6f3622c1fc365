"""Shared fixtures: the real MicroPython runner for firmware code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from micropython_runner import MicroPythonResult, run_micropython  # noqa: E402


@pytest.fixture
def micropython():  # type: ignore[no-untyped-def]
    """Return `run_micropython`; fails the test with MicroPython's output on error."""

    def run(code: str, **kwargs) -> MicroPythonResult:  # type: ignore[no-untyped-def]
        result = run_micropython(code, **kwargs)
        if result.returncode != 0:
            pytest.fail(f"micropython exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        return result

    return run
