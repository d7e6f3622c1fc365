"""Fixtures for the daemon tests (see daemon_harness.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_harness import Table  # noqa: E402


@pytest.fixture
def make_table(tmp_path: Path) -> Iterator[Callable[..., Table]]:
    tables: list[Table] = []

    def make(game: str, seats: int = 7, **kwargs: Any) -> Table:
        table = Table(tmp_path / f"t{len(tables)}", game, seats, **kwargs)
        tables.append(table)
        return table

    yield make
    for table in tables:
        table.close()


