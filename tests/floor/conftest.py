"""Fixtures for the floor tests: the same tests on the embedded SQLite store and on a real
PostgreSQL server (this machine's, scripts/postgres-deps), started for the session in a
directory of its own on a free port (`cardshoe.floor.pgserver`), a fresh database per test."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

from cardshoe.floor.pgserver import PgCluster
from cardshoe.floor.store import FloorStore

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_stores import fresh_database, open_store  # noqa: E402


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    cluster = PgCluster.create(tcp=False)
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(kind, target) of an empty floor store of each kind."""
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "floor.sqlite")
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    return "postgres", fresh_database(cluster)


@pytest.fixture
def store(store_target: tuple[str, str]) -> Iterator[FloorStore]:
    s = open_store(store_target)
    yield s
    s.close()
