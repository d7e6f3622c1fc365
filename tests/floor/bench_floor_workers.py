"""Settle throughput and latency of `cardshoe floor serve --workers N` (issue 24 item 1).

    .venv/bin/python tests/floor/bench_floor_workers.py [--tables 8] [--rounds 30] [--workers 1,2]

A PostgreSQL of this machine is started for the run (`cardshoe.floor.pgserver`). First each
table's journal is dealt (the real table core and service, CARD frames tagged with the shoe's
key: tests/floor/floor_journal.py), every round with a progressive wager sent for settlement
and settled against a throwaway in-process floor, so that the journals hold real rounds and
settlements. Then, per worker count, a fresh database and the real `cardshoe floor serve
--workers N` as a process: one thread per table sends its rounds' settle requests in order
(each with the journal's tail since the last, as a linked table does when its shipper is
behind), over HTTP, all tables at once, each on a connection of its own. Printed: settles per
second over the run, the settle call's latency p50/p99 as the table sees it and the floor's
own share (`server_ms`), and how many settles each worker answered. Figures, never asserted.
Run it on a quiet machine for figures worth quoting: the tables' threads share its cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402

from cardshoe.floor.pgserver import PgCluster  # noqa: E402
from cardshoe.floor.progressive import LinkSettings  # noqa: E402
from cardshoe.floor.rebuild import Rebuilder  # noqa: E402
from cardshoe.floor.settle import FloorSettler  # noqa: E402
from cardshoe.floor.store import FloorStore  # noqa: E402
from floor_journal import RESET, MiniTable, wire  # noqa: E402
from floor_server import KEY, SERIAL, SIGNER, TOKENS, write_config  # noqa: E402
from floor_stores import fresh_database  # noqa: E402

HANDS = [("4c 7d Jh", "Kd 6c 2h", "3s 8c"), ("2c 5d 9h", "Kd 6c Qh", "3s 8c"), ("9h 8h 7h", "Kd 6c 2h", "6h 5h")]


def deal(directory: Path, tables: int, rounds: int) -> dict[str, list[dict[str, Any]]]:
    """Each table's settle requests, in order, from journals dealt and settled in-process."""
    store = FloorStore.sqlite(directory / "throwaway.sqlite")
    store.configure_link(LinkSettings("mega", RESET, 50_000, 3_000_000))
    settler = FloorSettler(store, Rebuilder(store, lambda _t: lambda s: KEY if s == SERIAL else None), SIGNER)
    out: dict[str, list[dict[str, Any]]] = {}
    names = [f"T{n}" for n in range(1, tables + 1)]
    for name in names:
        TOKENS.setdefault(name, f"floor-table-{name}-token-0123456789")
        table = MiniTable(directory / f"{name}.journal", name)
        sent = 0
        out[name] = []
        for k in range(rounds):
            rid = table.play(*HANDS[k % len(HANDS)])
            entry = table.send(rid)
            body = {"table": table.stream, "round_id": rid, "entry": entry,
                    "entries": wire(table.entries(after=sent, upto=entry))}
            made = settler.settle("mega", table.stream, rid, entry, table.entries(after=sent, upto=entry))
            table.settle_with(rid, {**made.to_json(), "signed": made.signed()})
            out[name].append(body)
            sent = entry
        table.close()
    store.close()
    return out


def run(cluster: PgCluster, directory: Path, workers: int, requests: dict[str, list[dict[str, Any]]]) -> None:
    dsn = fresh_database(cluster)
    config = write_config(Path(tempfile.mkdtemp(prefix=f"floor-{workers}-", dir=directory)), tables=tuple(requests),
                          links=f"[links.mega]\nreset = {RESET}\nrate_ppm = 50000\nstart = 3000000\n",
                          store=f'postgres = "{dsn}"\nlisten = "127.0.0.1:0"')
    port_file = config.parent / "floor.port"
    proc = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config", str(config),
                             "--workers", str(workers), "--port-file", str(port_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not port_file.exists():
            if proc.poll() is not None:
                raise SystemExit(f"the floor ended: {proc.returncode}")
            time.sleep(0.05)
        base = f"http://127.0.0.1:{int(port_file.read_text())}"
        # Each table's connection made before the clock starts and spread over the workers
        # (table i on worker i mod N): a burst of new connections is accepted by whichever
        # worker wakes first, so new connections are made until each lands where it should.
        clients: dict[str, httpx.Client] = {}
        pids: list[str] = []
        spare: list[httpx.Client] = []
        for i, name in enumerate(requests):
            for _ in range(500):
                c = httpx.Client(base_url=base, timeout=120, headers={"Authorization": f"Bearer {TOKENS[name]}"})
                pid = c.get("/public-key").headers["x-floor-worker"]
                if pid not in pids and len(pids) < workers:
                    pids.append(pid)
                if pid == pids[i % len(pids)] and (len(pids) == workers or i < len(pids)):
                    clients[name] = c
                    break
                spare.append(c)
            else:
                raise SystemExit(f"cannot reach {workers} workers")
        for c in spare:
            c.close()
        lat: list[float] = []
        server: list[float] = []
        by_worker: Counter[str] = Counter()
        lock = threading.Lock()
        barrier = threading.Barrier(len(requests) + 1)

        def table(name: str) -> None:
            c = clients[name]
            try:
                barrier.wait(300)
                for body in requests[name]:
                    t0 = time.perf_counter()
                    r = c.post("/links/mega/settle", json=body)
                    took = (time.perf_counter() - t0) * 1000
                    assert r.status_code == 200, r.text
                    with lock:
                        lat.append(took)
                        server.append(float(r.json()["server_ms"]))
                        by_worker[r.headers["x-floor-worker"]] += 1
            finally:
                c.close()

        threads = [threading.Thread(target=table, args=(n,)) for n in requests]
        for t in threads:
            t.start()
        barrier.wait(300)
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKENS['pit']}"}) as c:
            link = c.get("/links/mega").json()
        n = len(lat)
        q = statistics.quantiles(lat, n=100)
        qs = statistics.quantiles(server, n=100)
        print(f"workers {workers}: {n} settles of {len(requests)} tables in {wall:.2f} s = {n / wall:.1f}/s; "
              f"latency p50 {q[49]:.1f} ms p99 {q[98]:.1f} ms; floor's share p50 {qs[49]:.1f} ms p99 {qs[98]:.1f} ms; "
              f"answered per worker {sorted(by_worker.values(), reverse=True)}; link rounds {link['rounds']}",
              flush=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=30, help="rounds per table")
    parser.add_argument("--workers", default="1,2", help="worker counts to run, comma-separated")
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="cardshoe-bench-workers-"))
    directory.chmod(0o755)
    cluster = PgCluster.create(directory / "pg", tcp=False)
    try:
        t0 = time.perf_counter()
        requests = deal(directory / "journals", args.tables, args.rounds)
        print(f"dealt {args.tables} tables x {args.rounds} rounds in {time.perf_counter() - t0:.1f} s "
              f"(cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f})", flush=True)
        for w in (int(x) for x in args.workers.split(",")):
            print(f"load average {os.getloadavg()[0]:.1f}: ", end="", flush=True)
            run(cluster, directory, w, requests)
    finally:
        cluster.destroy()
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
