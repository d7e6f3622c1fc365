"""Floor stores for the tests: a fresh database on the session's PostgreSQL, or an SQLite file."""

from __future__ import annotations

import secrets

from cardshoe.floor.pgserver import PgCluster
from cardshoe.floor.store import FloorStore


def fresh_database(cluster: PgCluster) -> str:
    """A new empty database on the cluster; its connection string."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"host={cluster.directory} port={cluster.port} user={cluster.user} dbname={name}"


def open_store(target: tuple[str, str]) -> FloorStore:
    """The store of (kind, target)."""
    kind, where = target
    return FloorStore.sqlite(where) if kind == "sqlite" else FloorStore.postgres(where)
