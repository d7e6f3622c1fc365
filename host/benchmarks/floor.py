"""`cardshoe bench floor`: N tables in several processes into one floor on PostgreSQL, with faults.

The tables run as `--table-procs` processes (default: one per 100 tables, at most twice the
machine's cores), each running its share (`cardshoe.benchmarks.floor_tables`): every table the
real table core and service (`TableCore`, `TableService`, its own SQLite journal, `TableControl`
linked to the floor), its real shipper and floor client with its own credential, fed CARD
frames (encoded and tagged with the table's own shoe key) by a simulated shoe at a dealer's
pace: a card every `--card-ms` (default 1000), 15 cards a Megalink Three Card Poker round with
three seats (ante and progressive), then `--round-pause-s` (default 30, jittered by 20 %) while
the dealer collects, pays and the players bet: about 80 rounds an hour, a busy real table. The
tables start spread over their first round. Each process reaches the floor through a TCP relay
of its own that the run cuts and restores.

The floor is `cardshoe floor serve --config` in a process of its own (with `--floor-workers N`:
`--workers N`, several API processes), holding every table's credential and shoe key, on a
PostgreSQL started for the run (`cardshoe.floor.pgserver`); with `--failover`, a primary and a
synchronous hot standby (`PgPair`) and the floor on the writer DSN that follows the primary.
Before dealing, the floor's search index holds a gaming day of `--day-rounds` rounds per table
(random cards, about one round in 100 flagged), so the searches run over a day of N tables.

Faults: PostgreSQL restarted at 30 % of the dealing (with `--failover`, instead: the primary
SIGKILLed at 50 % and the standby promoted), the table-to-floor connection cut for `--cut-s`
seconds (from 45 %; with `--failover` from 20 %), and the last table killed mid-deal (at 60 %;
70 % with `--failover`: its journal closed with no checkpoint, its shipper gone) and started
again from its journal, finishing its round.

Checks afterwards: every card the table processes say they dealt is in its table's journal, in
order (their own ledgers, sent to the parent); every journal entry on the floor exactly once
with the same chain value; the link's pool recomputed from the journals alone
(`cardshoe.floor.audit.audit`); every assignment and hit recomputed from the floor's own entries
(`cardshoe.floor.audit.audit_store`; `--skip-audit-store` skips it, and the figures say so).

Printed per table count: ingest (entries/s the tables journaled and the floor took while they
dealt), the pool update (a round's settle round trip, and the floor's own `server_ms` of it)
p50/p99, with `--failover` also outside the failover window (the kill to the first settlement
after it), the search (`GET /rounds` over the day with a few realistic filters) p50/p99 while
the tables deal and after, peak memory of the floor's, each table's and PostgreSQL's
processes, and the CPU each used. Figures, never asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardshoe.benchmarks.floor_tables import GAME, LINK, RESET, TableSpec, table_process
from cardshoe.benchmarks.floor_watch import ProcWatch, postmaster_pid, wait_until

__all__ = ["main"]

READER = "bench-floor-pit-token-0123456789abcdef"
RATE_PPM = 50_000
CAP = 3_000_000


class _Retrying:
    """The benchmark's own reads of the store, retried across the restart or failover it causes."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        from cardshoe.floor.store import StoreUnavailable

        method = getattr(self._store, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            for attempt in range(300):
                try:
                    return method(*args, **kwargs)
                except StoreUnavailable:
                    if attempt == 299:
                        raise
                    time.sleep(0.2)
            raise AssertionError("unreachable")
        return call


class _Database:
    """The run's PostgreSQL: one cluster, or with `failover` a `PgPair` (primary + synchronous
    hot standby; issue 24 item 3). Without `PgPair` in this tree, `--failover` crashes the one
    cluster (the postmaster and its backends SIGKILLed) and starts it again (crash recovery):
    said in the figures, never called a failover."""

    def __init__(self, failover: bool) -> None:
        from cardshoe.floor import pgserver

        self.pair: Any = None
        self.cluster: Any = None
        self.note = ""
        if failover and hasattr(pgserver, "PgPair"):
            directory = Path(tempfile.mkdtemp(prefix="cardshoe-pgpair-"))
            self.pair = pgserver.PgPair.create(directory, tcp=False)
            self.dsn = str(self.pair.writer_dsn)
        else:
            self.cluster = pgserver.PgCluster.create(tcp=False)
            self.dsn = self.cluster.dsn
            if failover:
                self.note = ("no PgPair in this tree (issue 24 item 3 not merged): the one cluster SIGKILLed and "
                             "started again (crash recovery), not a failover")

    def clusters(self) -> list[Any]:
        return list(self.pair.nodes.values()) if self.pair is not None else [self.cluster]

    def postmasters(self) -> list[int]:
        return [p for p in (postmaster_pid(c.data) for c in self.clusters()) if p]

    def restart(self) -> None:
        self.cluster.restart("fast")

    def kill_primary(self) -> None:
        if self.pair is not None:
            self.pair.kill_primary()
            return
        import signal

        from cardshoe.benchmarks.floor_watch import descendants

        pm = postmaster_pid(self.cluster.data)
        if pm is None:
            raise RuntimeError("no postmaster to kill")
        for pid in descendants([pm]):  # the whole server at once, as a power cut would
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_until(lambda: not Path(f"/proc/{pm}").exists(), 30)

    def promote(self) -> None:
        if self.pair is not None:
            self.pair.promote()
            return
        wait_until(lambda: not any(Path(f"/proc/{p}").exists() for p in self._old_backends()), 30)
        self.cluster.ensure_started()

    def _old_backends(self) -> list[int]:
        # Backends of a killed postmaster hold its shared memory until they notice it is gone.
        from cardshoe.benchmarks.floor_watch import _parents

        data = str(self.cluster.data).encode()
        out = []
        for pid in _parents():
            try:
                if data in Path(f"/proc/{pid}/cmdline").read_bytes():
                    out.append(pid)
            except OSError:
                pass
        return out

    def destroy(self) -> None:
        if self.pair is not None:
            self.pair.destroy()
        else:
            self.cluster.destroy()


class _FloorProcess:
    """`cardshoe floor serve` on a port of 127.0.0.1 it binds itself, as a child process.

    `--listen 127.0.0.1:0 --port-file`: the server binds a port the kernel picks and writes it
    once it listens, so no other process (another suite, another bench) can take it between a
    choice made here and the server's bind. `workers`: `--workers N` passed through (issue 24
    item 1). `profile`: the process runs under `cardshoe.benchmarks.sampler`, report to that file."""

    def __init__(self, dsn: str, link: str, config: Path, workers: int | None, profile: Path | None) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="cardshoe-floor-port-"))
        port_file = self._dir / "floor.port"
        self.log = self._dir / "floor.log"
        argv = ["floor", "serve", "--config", str(config), "--postgres", dsn, "--link", link,
                "--listen", "127.0.0.1:0", "--port-file", str(port_file)]
        if workers is not None:
            argv += ["--workers", str(workers)]
        head = [sys.executable, "-m", "cardshoe.cli"] if profile is None else \
            [sys.executable, "-m", "cardshoe.benchmarks.sampler", str(profile), "--"]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(head + argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                self.port = int(port_file.read_text(encoding="ascii"))  # renamed into place: whole
            except FileNotFoundError:
                time.sleep(0.05)
                continue
            # The socket listens already; the first request waits until the app serves it.
            req = urllib.request.Request(f"http://127.0.0.1:{self.port}/links",
                                         headers={"Authorization": f"Bearer {READER}"})
            with urllib.request.urlopen(req, timeout=60):
                return
        tail = self.log.read_text(errors="replace")[-800:]
        self.close()
        hint = " (--floor-workers needs `cardshoe floor serve --workers`, issue 24 item 1)" \
            if workers is not None and "--workers" in tail else ""
        raise RuntimeError(f"cardshoe floor serve did not start (exit status {self.proc.returncode}){hint}: {tail}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:  # it did not stop: end it
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)  # made by __init__ above: the port file and the log


def _last_id(journal: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(f"{journal.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM entries").fetchone()[0])
    finally:
        conn.close()


def _write_config(workdir: Path, n_tables: int) -> tuple[Path, list[TableSpec]]:
    """The floor's file for the run: a credential, a shoe and its key per table, a reader token."""
    import secrets

    keys = workdir / "floor-keys"
    keys.mkdir(mode=0o700)
    specs: list[TableSpec] = []
    lines = ['[floor]\nsigning_key = "floor.key"\n[roles]\npit = "pit.token"\n']
    for name, content in (("pit.token", READER), ("floor.key", secrets.token_hex(32))):
        (workdir / name).write_text(content + "\n")
        os.chmod(workdir / name, 0o600)
    for i in range(n_tables):
        name, serial, key = f"T{i + 1:03d}", 100 + i, secrets.token_bytes(32)
        token = secrets.token_hex(20)
        (workdir / f"{name}.token").write_text(token + "\n")
        os.chmod(workdir / f"{name}.token", 0o600)
        (keys / f"{serial}.key").write_text(key.hex() + "\n")
        os.chmod(keys / f"{serial}.key", 0o600)
        lines.append(f'[tables.{name}]\ntoken_file = "{name}.token"\nlink = "{LINK}"\nshoe_keys = "floor-keys"\n'
                     f"shoes = [{serial}]\n")
        specs.append(TableSpec(name, token, serial, key, workdir / f"{name}.sqlite"))
    path = workdir / "floor.toml"
    path.write_text("".join(lines))
    return path, specs


def _seed_day(store: Any, dsn: str, names: list[str], per_table: int, end_ns: int, seed: int) -> tuple[int, float, int]:
    """A gaming day in the floor's search index before the run: `per_table` rounds of each
    table from the start of the floor's current gaming day (or 20 hours back, before gaming-day
    partitions) to `end_ns` (a journal of its own, `NAME.0000seedday`), 15 cards of a shuffled
    deck each, about one in 100 flagged under rule 5.3. Only the search index (`rounds`): no
    entries or assignments, so the run's checks see none of it. Returns (rows, seconds, the
    day's first instant)."""
    import psycopg

    from cardshoe.cards import card_text

    texts = [card_text(c) for c in range(52)]
    rng = random.Random(seed)
    day: str | None = None
    rule = getattr(store, "day_rule", None)
    if rule is not None:  # gaming-day partitions (issue 24 item 2): the rows carry the day
        from cardshoe.floor.days import ensure_days

        day = str(rule.day_of(end_ns))
        ensure_days(store, [day])
        start_ns = int(rule.starts_ns(day))
    else:
        start_ns = end_ns - 20 * 3600 * 10**9
    span = max(1, end_ns - start_ns)
    t0 = time.monotonic()
    rows = 0
    columns = "table_name, round_id, game, opened_ns, settled_ns, cards, flags, void" + (", day" if day else "")
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        with cur.copy(f"COPY rounds ({columns}) FROM STDIN") as copy:
            for name in names:
                for k in range(per_table):
                    opened = start_ns + (k * span) // per_table + rng.randrange(span // per_table // 2 + 1)
                    cards = " " + " ".join(texts[c] for c in rng.sample(range(52), 15)) + " "
                    flags = " 5.3 " if rng.random() < 0.01 else " "
                    row: tuple[Any, ...] = (f"{name}.0000seedday", f"{name}-0000seed-{k + 1:06d}", GAME, opened,
                                            min(opened + 40 * 10**9, end_ns), cards, flags, 0)
                    copy.write_row(row + ((day,) if day else ()))
                    rows += 1
        conn.commit()
        cur.execute("ANALYZE rounds")
        conn.commit()
    return rows, time.monotonic() - t0, start_ns


class _Searcher:
    """Surveillance's searches of the day (`GET /rounds` as the pit role), timed: the newest
    rounds of the floor, a table's day, an hour of the day, the rounds flagged under a rule,
    and a sequence of cards anywhere in a round (the expensive one: no index can serve it)."""

    def __init__(self, port: int, names: list[str], day_start_ns: int, now_ns: int, seed: int) -> None:
        self.port = port
        self.names = names
        self.day_start_ns = day_start_ns
        self.hours = max(1, (now_ns - day_start_ns) // (3600 * 10**9))
        self.rng = random.Random(seed)
        self.k = 0
        self.times: dict[str, list[float]] = {}
        self.errors = 0

    def _query(self) -> tuple[str, dict[str, str]]:
        kinds = ("newest", "table", "hour", "rule", "cards")
        kind = kinds[self.k % len(kinds)]
        self.k += 1
        if kind == "newest":
            return kind, {"limit": "200"}
        if kind == "table":
            return kind, {"table": self.rng.choice(self.names), "limit": "200"}
        if kind == "hour":
            since = self.day_start_ns + self.rng.randrange(self.hours) * 3600 * 10**9
            return kind, {"since_ns": str(since), "until_ns": str(since + 3600 * 10**9), "limit": "200"}
        if kind == "rule":
            return kind, {"rule": "5.3", "limit": "200"}
        return kind, {"cards": "Ah Kh Qh", "limit": "200"}

    def one(self, phase: str) -> None:
        kind, params = self._query()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/rounds?{urllib.parse.urlencode(params)}",
                                     headers={"Authorization": f"Bearer {READER}"})
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                json.loads(resp.read())
        except Exception:  # noqa: BLE001 - counted: a search the floor did not answer (e.g. in the failover)
            self.errors += 1
            return
        self.times.setdefault(phase, []).append((time.perf_counter() - t0) * 1000)
        self.times.setdefault(f"{phase}:{kind}", []).append((time.perf_counter() - t0) * 1000)


def _progress(text: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _pct(values: list[float], q: float) -> float:
    got = sorted(values)
    return got[min(len(got) - 1, int(q * len(got)))] if got else float("nan")


@dataclass
class _Child:
    proc: Any
    conn: Any
    specs: list[TableSpec]
    dealt: dict[str, Any] = field(default_factory=dict)
    closed: dict[str, Any] = field(default_factory=dict)
    failure: str = ""


def _recv(child: _Child, want: str, timeout_s: float) -> Any:
    if not child.conn.poll(timeout_s):
        raise RuntimeError(f"table process {child.proc.pid}: no {want!r} in {timeout_s:.0f} s")
    kind, body = child.conn.recv()
    if kind == "failed":
        child.failure = str(body)
        raise RuntimeError(f"table process {child.proc.pid} failed: {body}")
    if kind != want:
        raise RuntimeError(f"table process {child.proc.pid}: {kind!r} where {want!r} was due")
    return body


def default_procs(n_tables: int) -> int:
    """One table process per 100 tables, at most twice the cores (at least 1)."""
    return max(1, min(math.ceil(n_tables / 100), 2 * (os.cpu_count() or 1)))


def run(n_tables: int, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One run with `n_tables` tables; returns its figures."""
    from cardshoe.floor.audit import audit, audit_store, rounds_of_journal
    from cardshoe.floor.config import load_floor_config
    from cardshoe.floor.progressive import LinkSettings
    from cardshoe.floor.store import FloorStore
    from cardshoe.journal import JournalReader

    procs = args.table_procs or default_procs(n_tables)
    procs = min(procs, n_tables)
    seconds, failover = args.seconds, args.failover
    db = _Database(failover)
    store = _Retrying(FloorStore.postgres(db.dsn, pool_size=4))  # the benchmark's own reads
    link = LinkSettings(LINK, RESET, RATE_PPM, CAP)
    store.configure_link(link)
    config, specs = _write_config(workdir, n_tables)
    names = [s.name for s in specs]
    events: list[str] = []
    if db.note:
        events.append(db.note)
    day_end = time.time_ns()
    seeded, seed_s, day_start = _seed_day(store._store, db.dsn, names, args.day_rounds, day_end, 7) \
        if args.day_rounds else (0, 0.0, day_end - 3600 * 10**9)
    _progress(f"{n_tables} tables: the search index holds a day of {seeded} rounds ({seed_s:.0f} s)")
    profile_dir = Path(args.profile) if args.profile else None
    if profile_dir is not None:
        profile_dir.mkdir(parents=True, exist_ok=True)
    server = _FloorProcess(db.dsn, f"{LINK}:{RESET}:{RATE_PPM}:{CAP}", config, args.floor_workers,
                           None if profile_dir is None else profile_dir / f"floor-{n_tables}.txt")
    children: list[_Child] = []
    ctx = multiprocessing.get_context("spawn")  # never fork a parent holding threads and connections
    watch = ProcWatch({"floor": lambda: [server.proc.pid], "postgres": db.postmasters,
                       "tables": lambda: [c.proc.pid for c in children]})
    watch.start()
    searcher = _Searcher(server.port, names, day_start, day_end, 11)
    try:
        share = [specs[k::procs] for k in range(procs)]
        t_setup = time.monotonic()
        for k, part in enumerate(share):
            parent_end, child_end = ctx.Pipe()
            prof = None if profile_dir is None or k else str(profile_dir / f"tables-{n_tables}-proc0.txt")
            p = ctx.Process(target=table_process, args=(part, server.port, args.card_ms, args.round_pause_s, k + 1,
                                                        prof, child_end), daemon=True)
            p.start()
            child_end.close()
            children.append(_Child(p, parent_end, part))
        for c in children:
            _recv(c, "ready", 1800)
        setup_s = time.monotonic() - t_setup
        _progress(f"{n_tables} tables open in {procs} processes in {setup_s:.0f} s; dealing for {seconds:.0f} s")
        start = time.monotonic() + 0.5
        for c in children:
            c.conn.send(("go", start, seconds))
        cpu0 = {g: watch.cpu_total_s(g) for g in watch.groups}
        stop_search = threading.Event()

        def searching() -> None:
            while not stop_search.wait(args.search_every_s):
                searcher.one("dealing")

        search_thread = threading.Thread(target=searching, daemon=True)
        search_thread.start()

        def broadcast(cmd: str) -> None:
            for c in children:
                c.conn.send((cmd,))

        def at(frac: float) -> None:
            time.sleep(max(0.0, start + seconds * frac - time.monotonic()))

        drain: tuple[int, float] = (0, float("nan"))
        failover_at: float | None = None
        promote_s = float("nan")

        def do_cut() -> None:
            nonlocal drain
            at(0.20 if failover else 0.45)
            cut_at = time.monotonic()
            broadcast("cut")
            time.sleep(args.cut_s)
            # The backlog the cut left: every table's journal beyond what the floor holds.
            targets = {s.name: _last_id(s.journal) for s in specs}
            marks = {r["table"].split(".")[0]: r["high_water"] for r in store.tables()}
            backlog = sum(max(0, v - marks.get(k, 0)) for k, v in targets.items())
            broadcast("restore")
            cut_end = time.monotonic()
            events.append(f"table-floor connection cut {cut_at - start:.1f}-{cut_end - start:.1f} s")
            # The drain is timed from the first entry the floor takes after the restore (the
            # shippers' backoff before it is the reconnect delay, printed apart) to the last.
            held_at_restore = sum(r["high_water"] for r in store.tables())
            first = None
            while time.monotonic() - cut_end < 300:
                rows = {r["table"].split(".")[0]: r["high_water"] for r in store.tables()}
                if first is None and sum(rows.values()) > held_at_restore:
                    first = time.monotonic()
                if all(rows.get(k, 0) >= v for k, v in targets.items()):
                    break
                time.sleep(0.05)
            done_at = time.monotonic()
            reconnect = (first if first is not None else done_at) - cut_end
            drain = (backlog, done_at - (first if first is not None else cut_end))
            events.append(f"the shippers reconnected {reconnect:.1f} s after the restore (backoff)")

        def do_store_fault() -> None:
            nonlocal failover_at, promote_s
            if failover:
                at(0.50)
                failover_at = time.monotonic()
                db.kill_primary()
                t1 = time.monotonic()
                db.promote()
                promote_s = time.monotonic() - t1
                what = "PgPair: primary SIGKILLed, standby promoted" if db.pair is not None else \
                    "the one cluster SIGKILLed and started again"
                events.append(f"{what} at {failover_at - start:.1f} s (promote() returned after {promote_s:.2f} s)")
            elif args.restart:
                at(0.30)
                t0 = time.monotonic()
                db.restart()
                events.append(f"PostgreSQL restarted at {t0 - start:.1f} s ({time.monotonic() - t0:.2f} s down)")

        def do_kill() -> None:
            at(0.70 if failover else 0.60)
            children[-1].conn.send(("kill",))

        plan: list[tuple[float, Callable[[], None]]] = [((0.50 if failover else 0.30), do_store_fault),
                                                         ((0.70 if failover else 0.60), do_kill)]
        if args.cut_s > 0:
            plan.append(((0.20 if failover else 0.45), do_cut))
        for _, action in sorted(plan, key=lambda x: x[0]):
            action()
        for c in children:
            c.dealt = _recv(c, "dealt", seconds + 900)
        dealt_s = time.monotonic() - start
        _progress(f"dealt for {dealt_s:.0f} s; waiting for the floor to hold every journal")
        stop_search.set()
        search_thread.join()
        cpu_deal = {g: watch.cpu_total_s(g) - cpu0[g] for g in watch.groups}
        floor_at_end = store.count_entries()
        journal_at_end = sum(_last_id(s.journal) for s in specs)
        caught = time.monotonic()
        pending = list(specs)
        tables_by_name: dict[str, str] = {}
        for c in children:
            for t in c.dealt["tables"]:
                tables_by_name[t["name"]] = t["table"]
        deadline = time.monotonic() + 600
        while pending and time.monotonic() < deadline:
            pending = [s for s in pending if store.high_water(tables_by_name[s.name]) < _last_id(s.journal)]
            if pending:
                time.sleep(0.2)
        catch_up_s = time.monotonic() - caught
        for c in children:
            c.conn.send(("stop",))
        close_errors: list[str] = []
        for c in children:
            try:
                c.closed = _recv(c, "closed", 600)
            except RuntimeError as exc:  # reported; its journals are checked all the same
                close_errors.append(str(exc))
                c.proc.terminate()
            c.proc.join(60)
        total_s = time.monotonic() - start
        _progress(f"caught up in {catch_up_s:.0f} s; searching, then checking")
        for _ in range(args.searches):
            searcher.one("after")
        watch.stop()
        # The ledgers: every card each process says it dealt is in its table's journal, in order.
        ledger_problems: list[str] = []
        rows_t: list[dict[str, Any]] = [t for c in children for t in c.dealt["tables"]]
        for t in rows_t:
            with JournalReader(Path(t["journal"])) as reader:
                frames = [(e.seq, json.loads(e.body).get("code")) for e in reader.entries(("frame",))]
            dealt = [tuple(x) for x in t["dealt"]]
            if frames != dealt:
                ledger_problems.append(f"{t['name']}: dealt {len(dealt)} cards, journal holds {len(frames)} "
                                       "frames, not the same")
        # Exactly once: every journal entry on the floor, once, with its chain value, and nothing else.
        missing = doubled = 0
        rounds_all: list[dict[str, Any]] = []
        journal_entries = 0
        for t in rows_t:
            with JournalReader(Path(t["journal"])) as reader:
                ids = [(e.id, e.chain) for e in reader.entries()]
                rounds_all += rounds_of_journal(t["table"], ((e.kind, e.round_id, e.body)
                                                            for e in reader.entries(("input", "settlement"))), LINK)
            journal_entries += len(ids)
            held = [(e.id, e.chain) for e in store.entries(t["table"], limit=10_000_000)]
            missing += len(set(ids) - set(held))
            doubled += len(held) - len(set(held)) + len(set(held) - set(ids))
        report = audit(link, rounds_all)
        audit_store_s = float("nan")
        floor_problems: list[str] = []
        audit_store_rounds = 0
        if not args.skip_audit_store:
            t0 = time.monotonic()
            floor_report = audit_store(store, [link], keys_for=load_floor_config(config).key_lookup)
            audit_store_s = time.monotonic() - t0
            floor_problems, audit_store_rounds = floor_report.problems, floor_report.rounds
        floor_pool = store.pool(LINK)
        settles = [tuple(x) for t in rows_t for x in t["settles"]]
        window = float("nan")
        outside = settles
        if failover_at is not None:
            after = [s for s in settles if s[1] > failover_at]
            first_after = min((s[1] for s in after), default=float("nan"))
            window = first_after - failover_at
            # A settlement whose call overlaps the window waited on the failover.
            outside = [s for s in settles if s[1] < failover_at or s[0] > first_after]
        ideal_round = 15 * args.card_ms / 1000 + args.round_pause_s
        return {
            "tables": n_tables, "procs": procs, "rounds": sum(t["rounds"] for t in rows_t), "dealt_s": dealt_s,
            "total_s": total_s, "setup_s": setup_s, "cards": sum(len(t["dealt"]) for t in rows_t),
            "pace_rounds": n_tables * seconds / ideal_round,
            "floor_entries": store.count_entries(), "journal_entries": journal_entries,
            "offered_per_s": journal_at_end / dealt_s, "ingest_per_s": floor_at_end / dealt_s,
            "backlog_at_end": journal_at_end - floor_at_end, "catch_up_s": catch_up_s,
            "cut_backlog": drain[0], "cut_drain_s": drain[1], "missing": missing, "doubled": doubled,
            "not_caught_up": len(pending), "ledger_problems": ledger_problems,
            "settle_p50_ms": _pct([s[2] for s in settles], 0.50), "settle_p99_ms": _pct([s[2] for s in settles], 0.99),
            "server_p50_ms": _pct([s[3] for s in settles], 0.50), "server_p99_ms": _pct([s[3] for s in settles], 0.99),
            "out_p50_ms": _pct([s[2] for s in outside], 0.50), "out_p99_ms": _pct([s[2] for s in outside], 0.99),
            "out_server_p99_ms": _pct([s[3] for s in outside], 0.99), "in_window": len(settles) - len(outside),
            "settles": len(settles), "failover_window_s": window, "promote_s": promote_s,
            "pool_floor": floor_pool["pool"], "pool_audit": report.pool, "carry_floor": floor_pool["carry"],
            "carry_audit": report.carry, "audit_problems": (report.problems + floor_problems)[:5],
            "audit_store_s": audit_store_s, "audit_store_rounds": audit_store_rounds,
            "refused_progressive": sum(t["refused_progressive"] for t in rows_t),
            "settle_waits": sum(t["settle_waits"] for t in rows_t),
            "events": events + [k for t in rows_t for k in t["killed"]],
            "errors": ([e for c in children for e in c.dealt.get("errors", [])] + close_errors)[:5],
            "search": {k: (len(v), _pct(v, 0.5), _pct(v, 0.99)) for k, v in searcher.times.items()},
            "shipper_warnings": sum(c.dealt.get("shipper_warnings", 0) for c in children),
            "first_warning": [w for c in children for w in c.dealt.get("first_warning", [])][:1],
            "search_errors": searcher.errors, "seeded": seeded, "seed_s": seed_s,
            "mem_floor_mb": sum(watch.hwm_kb["floor"].values()) / 1024,
            "mem_floor_procs": len(watch.hwm_kb["floor"]),
            "mem_tables_mb": [max(c.closed.get("peak_rss_kb", 0), watch.hwm_kb["tables"].get(c.proc.pid, 0)) / 1024
                              for c in children],
            "mem_pg_mb": (watch.private_peak_kb["postgres"] + watch.shmem_peak_kb["postgres"]) / 1024,
            "mem_pg_procs": len(watch.hwm_kb["postgres"]),
            "cpu_deal": cpu_deal, "mean_settle_ms": statistics.fmean([s[2] for s in settles]) if settles else math.nan,
        }
    finally:
        for c in children:
            if c.proc.is_alive():
                c.proc.terminate()
                c.proc.join(10)
        server.close()
        store.close()
        db.destroy()


def _drain(r: dict[str, Any]) -> str:
    # Under the 50 ms poll a drain is one exchange: no rate can be read from it.
    if r["cut_drain_s"] != r["cut_drain_s"]:
        return "(no cut)"
    if r["cut_drain_s"] < 0.1:
        return "in one exchange"
    return f"in {r['cut_drain_s']:.1f} s ({r['cut_backlog'] / r['cut_drain_s']:.0f}/s, dealing on)"


def _print_run(r: dict[str, Any], args: argparse.Namespace) -> None:
    n = r["tables"]
    print(f"tables {n:>4} in {r['procs']} processes: {r['rounds']} rounds ({r['pace_rounds']:.0f} at the pace asked), "
          f"{r['cards']} cards in {r['dealt_s']:.1f} s; {r['journal_entries']} journal entries, {r['floor_entries']} "
          f"on the floor; ingest while dealing: offered {r['offered_per_s']:.0f}/s, taken {r['ingest_per_s']:.0f}/s, "
          f"{r['backlog_at_end']} behind at the end, caught up {r['catch_up_s']:.1f} s later; the cut's backlog "
          f"{r['cut_backlog']} entries drained {_drain(r)}", flush=True)
    print(f"            pool update (settle round trip) p50 {r['settle_p50_ms']:.1f} ms, p99 "
          f"{r['settle_p99_ms']:.1f} ms over {r['settles']} settlements (of it in the floor: p50 "
          f"{r['server_p50_ms']:.1f} ms, p99 {r['server_p99_ms']:.1f} ms); progressive wagers refused while "
          f"away {r['refused_progressive']}, settlements that waited for the floor {r['settle_waits']}; the "
          f"shippers' warnings {r['shipper_warnings']}{(' (the first: ' + r['first_warning'][0] + ')') if r['first_warning'] else ''}")
    if args.failover:
        print(f"            failover window (kill to the first settlement after) {r['failover_window_s']:.2f} s; "
              f"outside it ({r['in_window']} settlements overlapping it left out): pool update p50 "
              f"{r['out_p50_ms']:.1f} ms, p99 {r['out_p99_ms']:.1f} ms (floor p99 {r['out_server_p99_ms']:.1f} ms)")
    s = r["search"]

    def sp(key: str) -> str:
        if key not in s:
            return "none"
        k, p50, p99 = s[key]
        return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms over {k}"
    kinds = ", ".join(f"{k}: {s[f'dealing:{k}'][1]:.0f}/{s[f'dealing:{k}'][2]:.0f}"
                      for k in ("newest", "table", "hour", "rule", "cards") if f"dealing:{k}" in s)
    print(f"            search (GET /rounds over a day of {r['seeded'] + r['rounds']} rounds, seeded in "
          f"{r['seed_s']:.1f} s): while dealing {sp('dealing')} ({kinds} ms p50/p99), after {sp('after')}; "
          f"{r['search_errors']} unanswered")
    tm = r["mem_tables_mb"]
    cpu = r["cpu_deal"]
    print(f"            peak memory: floor {r['mem_floor_mb']:.0f} MB ({r['mem_floor_procs']} processes), table "
          f"processes {max(tm):.0f} MB the largest, {sum(tm):.0f} MB together, PostgreSQL {r['mem_pg_mb']:.0f} MB "
          f"({r['mem_pg_procs']} processes); CPU while dealing ({r['dealt_s']:.0f} s): floor {cpu['floor']:.0f} s, "
          f"tables {cpu['tables']:.0f} s, PostgreSQL {cpu['postgres']:.0f} s "
          f"({(cpu['floor'] + cpu['tables'] + cpu['postgres']) / r['dealt_s']:.2f} cores)")
    exact = r["exact"]
    audit_text = "SKIPPED (--skip-audit-store)" if args.skip_audit_store else \
        f"recomputed from the floor's entries ({r['audit_store_rounds']} rounds, {r['audit_store_s']:.1f} s)"
    print(f"            ledgers: {len(r['ledger_problems'])} tables whose journal differs from what they dealt; "
          f"exactly once: missing {r['missing']}, doubled {r['doubled']}; pool floor "
          f"{r['pool_floor']} (carry {r['carry_floor']}) vs journals {r['pool_audit']} (carry "
          f"{r['carry_audit']}): {'EXACT' if exact else 'DIFFERENT'}; every assignment {audit_text}; "
          f"{'; '.join(r['events'])}", flush=True)
    for problem in r["ledger_problems"][:5] + r["audit_problems"] + r["errors"]:
        print(f"            problem: {problem}")


def main(argv: list[str] | None = None) -> int:
    """Run the floor benchmark for each table count and print the figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", default="1,10,100", help="table counts, comma-separated (default 1,10,100)")
    parser.add_argument("--table-procs", type=int, default=0,
                        help="table processes (default: one per 100 tables, at most twice the cores)")
    parser.add_argument("--floor-workers", type=int, default=None,
                        help="the floor's API processes (`cardshoe floor serve --workers N`; default: not passed)")
    parser.add_argument("--seconds", type=float, default=120.0, help="dealing time per run (default 120)")
    parser.add_argument("--card-ms", type=float, default=1000.0, help="ms between cards at a table (default 1000)")
    parser.add_argument("--round-pause-s", type=float, default=30.0,
                        help="the dealer's pause between rounds, s, jittered 20 %% (default 30)")
    parser.add_argument("--cut-s", type=float, default=60.0, help="table-floor cut, seconds (default 60; 0: none)")
    parser.add_argument("--no-restart", dest="restart", action="store_false",
                        help="do not restart PostgreSQL mid-run")
    parser.add_argument("--failover", action="store_true",
                        help="a primary + hot standby; the primary SIGKILLed mid-run and the standby promoted")
    parser.add_argument("--day-rounds", type=int, default=1000,
                        help="rounds per table of the gaming day in the search index before the run (default 1000)")
    parser.add_argument("--searches", type=int, default=50, help="searches after the dealing (default 50)")
    parser.add_argument("--search-every-s", type=float, default=2.0, help="a search every S s while dealing")
    parser.add_argument("--skip-audit-store", action="store_true",
                        help="skip recomputing every assignment from the floor's entries (printed in the figures)")
    parser.add_argument("--profile", default=None,
                        help="directory: a sampling profile of the floor process and of the first table process")
    args = parser.parse_args(list(argv or []))
    import signal

    # Stopped from outside (a background job ignores SIGINT): the runs' `finally` still ends
    # the table processes and the floor and removes the PostgreSQL made for the run.
    main_thread = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143)) if main_thread else None
    try:
        return _runs(args)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, before)


def _runs(args: argparse.Namespace) -> int:
    status = 0
    summary: list[dict[str, Any]] = []
    print(f"cardshoe bench floor: a card every {args.card_ms:.0f} ms, {args.round_pause_s:.1f} s between rounds; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    for n in (int(x) for x in args.tables.split(",")):
        workdir = Path(tempfile.mkdtemp(prefix="cardshoe-bench-floor-"))
        try:
            r = run(n, args, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        exact = (r["missing"], r["doubled"], r["not_caught_up"]) == (0, 0, 0) and not r["audit_problems"] \
            and not r["ledger_problems"] and (r["pool_floor"], r["carry_floor"]) == (r["pool_audit"], r["carry_audit"])
        status |= 0 if exact and not r["errors"] else 1
        r["exact"] = exact
        _print_run(r, args)
        summary.append(r)
    # How the cost grows with the number of tables.
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    head = "tables  procs  offered/s  taken/s  settle p50/p99 ms  floor p50/p99 ms"
    if args.failover:
        head += "  outside failover p99 ms  window s"
    head += "  search p50/p99 ms (dealing; after)  floor MB  table proc MB  PG MB  exact"
    print(head)
    for r in summary:
        s = r["search"]
        d, a = s.get("dealing", (0, math.nan, math.nan)), s.get("after", (0, math.nan, math.nan))
        line = (f"{r['tables']:>6}  {r['procs']:>5}  {r['offered_per_s']:>9.0f}  {r['ingest_per_s']:>7.0f}  "
                f"{r['settle_p50_ms']:>7.1f} / {r['settle_p99_ms']:>7.1f}  {r['server_p50_ms']:>6.1f} / "
                f"{r['server_p99_ms']:>7.1f}")
        if args.failover:
            line += f"  {r['out_p99_ms']:>23.1f}  {r['failover_window_s']:>8.2f}"
        line += (f"  {d[1]:>7.1f} / {d[2]:>7.1f}; {a[1]:>6.1f} / {a[2]:>6.1f}  {r['mem_floor_mb']:>8.0f}  "
                 f"{max(r['mem_tables_mb']):>13.0f}  {r['mem_pg_mb']:>5.0f}  {'yes' if r['exact'] else 'NO'}")
        print(line)
    return status
