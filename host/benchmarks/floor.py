"""`cardshoe bench floor`: N tables into one PostgreSQL, with the faults of issues 14 and 21.

Each table is the real table core and service (`TableCore`, `TableService`, its own SQLite
journal, `TableControl` linked to the floor) fed CARD frames by a simulated shoe at dealing
speed (a card every `--card-ms`), each frame encoded and tagged with the table's own shoe key
by the protocol codec, with its real shipper and floor client speaking HTTP, with the table's
own credential, to `cardshoe floor serve --config` (a process of its own, which holds the
shoes' keys and checks every tag) through a TCP relay that can be cut. The floor store is a
PostgreSQL of this machine started for the run (`cardshoe.floor.pgserver`). Each table deals
Megalink Three Card Poker rounds: three seats with ante and progressive. The floor settles
each round from the journal it holds, rebuilt with the replay core, and signs it.

During the run PostgreSQL is restarted (at 30 % of it), the table-to-floor connection is cut
for `--cut-s` seconds (from 45 %), and one table is killed mid-deal (at 60 %: its journal
closed with no checkpoint, its shipper gone) and started again from its journal (the same
restore a daemon runs), finishing the round it was dealing. Afterwards every table's journal
is compared with the floor entry by entry (each exactly once, with the same chain values),
the link's pool is recomputed from the journals alone (`cardshoe.floor.audit.audit`), and
every assignment and hit is recomputed from the floor's own entries
(`cardshoe.floor.audit.audit_store`).

Printed per table count: entries ingested per second (the floor's rows over the run), the
backlog's drain rate after the cut, and the pool-update latency (a round's settle call to
the floor: HTTP, the serialized transaction, the answer) p50/p99. Figures, never asserted.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["main"]

READER = "bench-floor-pit-token-0123456789abcdef"
RESET = 1_000_000
RATE_PPM = 50_000
GAME = "megalink-three-card-poker"


@dataclass
class TableRun:
    name: str
    journal: Path
    service: Any
    control: Any
    client: Any
    shipper: Any
    serial: int
    key: bytes
    setup: Any = None
    rounds: int = 0
    settle_ms: list[float] = field(default_factory=list)
    refused_progressive: int = 0
    settle_waits: int = 0
    kill_at_card: int | None = None
    """Kill the table (and start it again from its journal) after this many cards of its next round."""
    killed: list[str] = field(default_factory=list)
    journals: list[Any] = field(default_factory=list)


def _frame(t: TableRun, seq: int, code: int) -> Any:
    """A CARD frame of the table's shoe, encoded and tagged with its key as the shoe would."""
    from cardshoe.daemon.service import FrameInput
    from cardshoe.journal.frames import frame_message
    from cardshoe.protocol.frames import decode_frame, encode_frame
    from cardshoe.protocol.messages import Card

    msg = Card(shoe_no=1, index=seq, card_deck=7, code=code, method=1, retries=0, flags=0, t_ms=seq * 10,
               raw=f"{seq:08x}".encode())
    frame = decode_frame(encode_frame(msg, key=t.key, shoe=t.serial, boot=1, seq=seq), keys=lambda _s: t.key)
    return FrameInput(frame.shoe, frame.boot, frame.seq, int(frame.type), frame_message(frame), frame.raw)


def _kill_and_start(t: TableRun) -> None:
    """The table's process killed mid-deal and started again: its shipper gone, its journal
    closed with no checkpoint, then the table rebuilt from the journal as a daemon's start
    does (`cardshoe.journal.replay.restore`) with a new service, control, client and shipper."""
    from cardshoe.daemon.bus import EventBus
    from cardshoe.daemon.control import TableControl
    from cardshoe.daemon.core import TableCore
    from cardshoe.daemon.service import TableService
    from cardshoe.floor.client import FloorClient
    from cardshoe.floor.shipper import Shipper
    from cardshoe.journal import Journal
    from cardshoe.journal.replay import restore

    t0 = time.monotonic()
    t.shipper.stop()
    t.service.failed = RuntimeError("killed")  # nothing more is written by the old process
    t.journals[-1].close()
    journal = Journal(t.journal, synchronous="NORMAL", holder=f"bench {t.name} (restarted)")
    t.journals.append(journal)
    report, core, _ = restore(t.journal, TableCore(t.setup))
    service = TableService(core, journal, EventBus())
    old = t.client
    client = FloorClient(old.url, old.token, t.name, old.link, old.game, timeout_s=old.timeout_s,
                         journal_id=old.table.rsplit(".", 1)[1])
    client.high_water()
    client.settle = old.settle  # type: ignore[method-assign]  # the timing wrapper, calling the new client
    t.client, t.service, t.control = client, service, TableControl(service, floor=client)
    t.shipper = Shipper(t.journal, client)
    t.shipper.start()
    t.killed.append(f"{t.name} killed mid-deal and started again from its journal ({report.inputs} inputs "
                    f"replayed, {len(report.mismatches)} differences) in {time.monotonic() - t0:.2f} s")


def _deal_round(t: TableRun, rng: random.Random, card_s: float, stop: threading.Event, seq: list[int]) -> None:
    from cardshoe.daemon.control import Refused

    rid = str(t.control.open_round().round_id)
    for s in (1, 2, 3):
        t.control.place_wager(rid, s, "ante", 1000)
        try:
            t.control.place_wager(rid, s, "progressive", 500)
        except Refused:
            t.refused_progressive += 1  # the floor is away: base games go on
    t.control.no_more_bets(rid)
    deck = list(range(52))
    rng.shuffle(deck)
    # Megalink 3.7: three to each seat, three to the dealer, three community (the third burned).
    for k, code in enumerate(deck[:15]):
        if t.kill_at_card is not None and k == t.kill_at_card:
            t.kill_at_card = None
            _kill_and_start(t)
        seq[0] += 1
        t.service.submit_frame(_frame(t, seq[0], code))
        stop.wait(card_s)
    t.control.deal_complete(rid)
    for s in (1, 2, 3):
        t.control.decision(rid, s, "play")
    while True:
        try:
            t.control.settle(rid, None)
        except Refused as exc:
            if exc.status != 503:
                raise
            t.settle_waits += 1  # never settled against a stale pool: wait for the floor
            time.sleep(0.5)
            continue
        break
    t.rounds += 1


class _Retrying:
    """The benchmark's own reads of the store, retried across the restart it causes."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        from cardshoe.floor.store import StoreUnavailable

        method = getattr(self._store, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            for attempt in range(50):
                try:
                    return method(*args, **kwargs)
                except StoreUnavailable:
                    if attempt == 49:
                        raise
                    time.sleep(0.2)
            raise AssertionError("unreachable")
        return call


class _FloorProcess:
    """`cardshoe floor serve` on a port of 127.0.0.1 it binds itself, as a child process.

    `--listen 127.0.0.1:0 --port-file`: the server binds a port the kernel picks and writes it
    once it listens, so no other process (another suite, another bench) can take it between a
    choice made here and the server's bind."""

    def __init__(self, dsn: str, link: str, config: Path) -> None:
        import subprocess
        import sys
        import urllib.request

        self._dir = Path(tempfile.mkdtemp(prefix="cardshoe-floor-port-"))
        port_file = self._dir / "floor.port"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config", str(config), "--postgres", dsn,
             "--link", link, "--listen", "127.0.0.1:0", "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
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
        self.close()
        raise RuntimeError(f"cardshoe floor serve did not start (exit status {self.proc.returncode})")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except Exception:  # noqa: BLE001 - it did not stop: end it
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)  # made by __init__ above, holds only the port file


def _last_id(journal: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(f"{journal.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM entries").fetchone()[0])
    finally:
        conn.close()


def _time_settles(t: TableRun, out: list[float], server: list[float]) -> None:
    """Record the round trip of every successful settle call (the pool update) in ms, and the
    floor's own share of it (`server_ms` of the answer); the table's current client is called."""
    def timed(*args: Any) -> Any:
        t0 = time.perf_counter()
        answer = type(t.client).settle(t.client, *args)
        out.append((time.perf_counter() - t0) * 1000)
        server.append(float(answer.get("server_ms", "nan")))
        return answer

    t.client.settle = timed


def _write_config(workdir: Path, n_tables: int) -> tuple[Path, dict[str, tuple[str, int, bytes]]]:
    """The floor's file for the run: a credential, a shoe and its key per table, a reader token."""
    import os
    import secrets

    keys = workdir / "floor-keys"
    keys.mkdir(mode=0o700)
    tables: dict[str, tuple[str, int, bytes]] = {}
    text = '[floor]\nsigning_key = "floor.key"\n[roles]\npit = "pit.token"\n'
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
        text += (f'[tables.{name}]\ntoken_file = "{name}.token"\nlink = "mega"\nshoe_keys = "floor-keys"\n'
                 f"shoes = [{serial}]\n")
        tables[name] = (token, serial, key)
    path = workdir / "floor.toml"
    path.write_text(text)
    return path, tables


def run(n_tables: int, seconds: float, card_ms: float, cut_s: float, restart: bool, workdir: Path) -> dict[str, Any]:
    """One run with `n_tables` tables for about `seconds`; returns its figures."""
    from cardshoe.daemon.bus import EventBus
    from cardshoe.daemon.control import TableControl
    from cardshoe.daemon.core import TableCore, TableSetup
    from cardshoe.daemon.service import TableService
    from cardshoe.floor.audit import audit, audit_store, rounds_of_journal
    from cardshoe.floor.client import FloorClient
    from cardshoe.floor.pgserver import PgCluster
    from cardshoe.floor.progressive import LinkSettings
    from cardshoe.floor.shipper import Shipper
    from cardshoe.floor.store import FloorStore
    from cardshoe.floor.testnet import Relay
    from cardshoe.journal import Journal, JournalReader

    cluster = PgCluster.create(tcp=False)
    store = _Retrying(FloorStore.postgres(cluster.dsn, pool_size=4))  # the benchmark's own reads
    link = LinkSettings("mega", RESET, RATE_PPM, 3_000_000)
    store.configure_link(link)
    config, credentials = _write_config(workdir, n_tables)
    # The floor in a process of its own, as deployed (`cardshoe floor serve`), so the tables'
    # threads and the floor do not share one interpreter.
    server = _FloorProcess(cluster.dsn, f"mega:{RESET}:{RATE_PPM}:3000000", config)
    relay = Relay(server.port)
    limits = (("ante", 1000, 500_000), ("pair_plus", 1000, 100_000), ("play", 1000, 500_000),
              ("progressive", 500, 500))
    tables: list[TableRun] = []
    server_ms: list[float] = []
    try:
        for i in range(n_tables):
            name = f"T{i + 1:03d}"
            token, serial, key = credentials[name]
            path = workdir / f"{name}.sqlite"
            journal = Journal(path, synchronous="NORMAL", holder=f"bench {name}")
            setup = TableSetup(name, GAME, 7, limits=limits, jackpot_reset=RESET)
            service = TableService(TableCore(setup), journal, EventBus())
            service.submit_input({"action": "setup", **setup.to_json()})
            # The table's own shoe session (a journal places only the sessions it started).
            service.submit_input({"action": "shoe_loaded", "shoe": serial, "shoe_no": 1, "deck_id": 7})
            with JournalReader(path) as reader:
                journal_id = reader.meta("journal_id")
            client = FloorClient(relay.url, token, name, "mega", GAME, timeout_s=5.0, journal_id=journal_id)
            client.high_water()  # online before the first wager
            control = TableControl(service, floor=client)
            shipper = Shipper(path, client)
            shipper.start()
            t = TableRun(name, path, service, control, client, shipper, serial, key, setup, journals=[journal])
            _time_settles(t, t.settle_ms, server_ms)
            tables.append(t)
        stop = threading.Event()
        start = time.monotonic()
        errors: list[str] = []

        def dealer(t: TableRun, seed: int) -> None:
            rng = random.Random(seed)
            seq = [0]
            try:
                while time.monotonic() - start < seconds:
                    _deal_round(t, rng, card_ms / 1000, stop, seq)
            except Exception as exc:  # noqa: BLE001 - reported in the figures
                errors.append(f"{t.name}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=dealer, args=(t, k), daemon=True) for k, t in enumerate(tables)]
        for th in threads:
            th.start()
        events: list[str] = []
        if restart:
            time.sleep(max(0.0, start + seconds * 0.30 - time.monotonic()))
            t0 = time.monotonic()
            cluster.restart("fast")
            events.append(f"PostgreSQL restarted at {t0 - start:.1f} s ({time.monotonic() - t0:.2f} s down)")
        drain: tuple[int, float] = (0, float("nan"))
        killed = tables[-1]
        killed.kill_at_card = None
        kill_at = start + seconds * 0.60
        if cut_s > 0:
            time.sleep(max(0.0, start + seconds * 0.45 - time.monotonic()))
            cut_at = time.monotonic()
            relay.cut()
            time.sleep(cut_s)
            # The backlog the cut left: every table's journal beyond what the floor holds.
            targets = {t.client.table: _last_id(t.journal) for t in tables}
            backlog = sum(max(0, targets[t.client.table] - store.high_water(t.client.table)) for t in tables)
            relay.restore()
            cut_end = time.monotonic()
            events.append(f"table-floor connection cut {cut_at - start:.1f}-{cut_end - start:.1f} s")
            # The drain is timed from the first entry the floor takes after the restore (the
            # shippers' backoff before it is the reconnect delay, printed apart) to the last.
            held_at_restore = sum(r["high_water"] for r in store.tables())
            first = None
            while time.monotonic() - cut_end < 300:
                rows = {r["table"]: r["high_water"] for r in store.tables()}
                if first is None and sum(rows.values()) > held_at_restore:
                    first = time.monotonic()
                if all(rows.get(k, 0) >= v for k, v in targets.items()):
                    break
                time.sleep(0.05)
            done_at = time.monotonic()
            reconnect = (first if first is not None else done_at) - cut_end
            drain = (backlog, done_at - (first if first is not None else cut_end))
            events.append(f"the shippers reconnected {reconnect:.1f} s after the restore (backoff)")
        # A table killed mid-deal (after its next round's 7th card) and started from its journal.
        time.sleep(max(0.0, kill_at - time.monotonic()))
        killed.kill_at_card = 7
        for th in threads:
            th.join()
        events += killed.killed or [f"{killed.name} was not killed (dealing ended first)"]
        dealt_s = time.monotonic() - start
        backlog_at_end = sum(max(0, _last_id(t.journal) - store.high_water(t.client.table)) for t in tables)
        deadline = time.monotonic() + 300
        caught = time.monotonic()
        pending = list(tables)
        while pending and time.monotonic() < deadline:
            still = []
            for t in pending:
                if store.high_water(t.client.table) < _last_id(t.journal):
                    still.append(t)
            pending = still
            if pending:
                time.sleep(0.2)
        drain_s = time.monotonic() - caught
        total_s = time.monotonic() - start
        # Exactly once: every journal entry on the floor, once, with its chain value, and nothing else.
        missing = doubled = 0
        rounds_all: list[dict[str, Any]] = []
        journal_entries = 0
        for t in tables:
            with JournalReader(t.journal) as reader:
                ids = [(e.id, e.chain) for e in reader.entries()]
                rounds_all += rounds_of_journal(t.client.table, ((e.kind, e.round_id, e.body)
                                                                 for e in reader.entries(("input", "settlement"))),
                                                "mega")
            journal_entries += len(ids)
            held = [(e.id, e.chain) for e in store.entries(t.client.table, limit=10_000_000)]
            missing += len(set(ids) - set(held))
            doubled += len(held) - len(set(held)) + len(set(held) - set(ids))
        report = audit(link, rounds_all)
        # Every assignment and hit recomputed from the floor's own entries, frames checked.
        from cardshoe.floor.config import load_floor_config

        t0 = time.monotonic()
        floor_report = audit_store(store, [link], keys_for=load_floor_config(config).key_lookup)
        audit_store_s = time.monotonic() - t0
        floor_pool = store.pool("mega")
        lat = sorted(x for t in tables for x in t.settle_ms)

        def p(q: float) -> float:
            return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")

        return {
            "tables": n_tables, "rounds": sum(t.rounds for t in tables), "dealt_s": dealt_s, "total_s": total_s,
            "floor_entries": store.count_entries(), "journal_entries": journal_entries,
            "ingest_per_s": store.count_entries() / total_s, "backlog_at_end": backlog_at_end,
            "drain_s": drain_s, "cut_backlog": drain[0], "cut_drain_s": drain[1], "missing": missing, "doubled": doubled, "not_caught_up": len(pending),
            "settle_p50_ms": p(0.50), "settle_p99_ms": p(0.99), "settles": len(lat),
            "server_p50_ms": _pct(server_ms, 0.50), "server_p99_ms": _pct(server_ms, 0.99),
            "pool_floor": floor_pool["pool"], "pool_audit": report.pool, "carry_floor": floor_pool["carry"],
            "carry_audit": report.carry, "audit_problems": (report.problems + floor_report.problems)[:5],
            "audit_store_s": audit_store_s, "audit_store_rounds": floor_report.rounds,
            "refused_progressive": sum(t.refused_progressive for t in tables),
            "settle_waits": sum(t.settle_waits for t in tables), "events": events, "errors": errors[:5],
            "statistics_mean_ms": statistics.fmean(lat) if lat else float("nan"),
        }
    finally:
        for t in tables:
            t.shipper.stop()
            for j in t.journals:
                j.close()
        relay.close()
        server.close()
        store.close()
        cluster.destroy()


def _pct(values: list[float], q: float) -> float:
    got = sorted(values)
    return got[min(len(got) - 1, int(q * len(got)))] if got else float("nan")


def _drain(r: dict[str, Any]) -> str:
    # Under the 50 ms poll a drain is one exchange: no rate can be read from it.
    if r["cut_drain_s"] != r["cut_drain_s"]:
        return "(no cut)"
    if r["cut_drain_s"] < 0.1:
        return "in one exchange"
    return f"in {r['cut_drain_s']:.1f} s ({r['cut_backlog'] / r['cut_drain_s']:.0f}/s, dealing on)"


def main(argv: list[str] | None = None) -> int:
    """Run the floor benchmark for each table count and print the figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", default="1,10,100", help="table counts, comma-separated (default 1,10,100)")
    parser.add_argument("--seconds", type=float, default=120.0, help="dealing time per run (default 120)")
    parser.add_argument("--card-ms", type=float, default=1000.0, help="ms between cards at a table (default 1000)")
    parser.add_argument("--cut-s", type=float, default=60.0, help="table-floor cut, seconds (default 60; 0: none)")
    parser.add_argument("--no-restart", action="store_true", help="do not restart PostgreSQL mid-run")
    args = parser.parse_args(list(argv or []))
    status = 0
    summary: list[dict[str, Any]] = []
    for n in (int(x) for x in args.tables.split(",")):
        workdir = Path(tempfile.mkdtemp(prefix="cardshoe-bench-floor-"))
        try:
            r = run(n, args.seconds, args.card_ms, args.cut_s, not args.no_restart, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        exact = (r["missing"], r["doubled"], r["not_caught_up"]) == (0, 0, 0) and not r["audit_problems"] \
            and (r["pool_floor"], r["carry_floor"]) == (r["pool_audit"], r["carry_audit"])
        status |= 0 if exact and not r["errors"] else 1
        r["exact"] = exact
        print(f"tables {n:>4}: {r['rounds']} rounds, {r['floor_entries']} entries on the floor "
              f"({r['journal_entries']} in the journals) in {r['total_s']:.1f} s: ingest {r['ingest_per_s']:.0f} "
              f"entries/s while dealing; the cut's backlog {r['cut_backlog']} entries drained {_drain(r)}",
              flush=True)
        print(f"            pool update (settle round trip) p50 {r['settle_p50_ms']:.1f} ms, p99 "
              f"{r['settle_p99_ms']:.1f} ms over {r['settles']} settlements (of it in the floor: p50 "
              f"{r['server_p50_ms']:.1f} ms, p99 {r['server_p99_ms']:.1f} ms); progressive wagers refused while "
              f"cut {r['refused_progressive']}, settlements that waited for the floor {r['settle_waits']}")
        print(f"            exactly once: missing {r['missing']}, doubled {r['doubled']}; pool floor "
              f"{r['pool_floor']} (carry {r['carry_floor']}) vs journals {r['pool_audit']} (carry "
              f"{r['carry_audit']}): {'EXACT' if exact else 'DIFFERENT'}; every assignment recomputed from the "
              f"floor's entries ({r['audit_store_rounds']} rounds, {r['audit_store_s']:.1f} s); "
              f"{'; '.join(r['events'])}", flush=True)
        for problem in r["audit_problems"] + r["errors"]:
            print(f"            problem: {problem}")
        summary.append(r)
    # How the cost grows with the number of tables.
    print("tables  entries/s dealing  backlog drain/s  settle p50 ms  settle p99 ms  floor p50 ms  floor p99 ms  exact")
    for r in summary:
        drain = r["cut_backlog"] / r["cut_drain_s"] if r["cut_drain_s"] >= 0.1 else 0
        print(f"{r['tables']:>6}  {r['ingest_per_s']:>16.0f}  {drain:>15.0f}  {r['settle_p50_ms']:>13.1f}  "
              f"{r['settle_p99_ms']:>13.1f}  {r['server_p50_ms']:>12.1f}  {r['server_p99_ms']:>12.1f}  "
              f"{'yes' if r['exact'] else 'NO'}")
    return status
