"""The floor store fixtures (both backends, as tests/floor/conftest.py) for the report's floor test."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

from cardshoe.floor.pgserver import PgCluster
from cardshoe.floor.store import FloorStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "floor"))

from floor_stores import fresh_database, open_store  # noqa: E402


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    cluster = PgCluster.create(tcp=False)
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FloorStore]:
    if request.param == "sqlite":
        target = ("sqlite", str(tmp_path / "floor.sqlite"))
    else:
        target = ("postgres", fresh_database(request.getfixturevalue("pg_cluster")))
    s = open_store(target)
    yield s
    s.close()
