"""`cardshoe floor serve --workers N` (issue 24 item 1): the floor API in N processes on one
socket, on a real PostgreSQL, run as the real command, spoken to over real HTTP.

Two tables' hits on the same link reach two different workers at the same moment; the
database (the link row's lock) orders them, and the pool is checked against a recomputation
from the rules in the order of the assignments' seq: Megalink Three Card Poker 4.4 pays a
Royal Flush 100% and a Straight Flush 10% of the pool as displayed, which already holds the
round's own contribution (reading 58: 5% of the 500 staked, 25), a percentage floored to the
minor unit (reading 15); after a Royal Flush the pool starts again from the reset amount."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from cardshoe import cli
from cardshoe.floor.pgserver import PgCluster
from floor_journal import RESET, MiniTable, wire
from floor_server import TOKENS, write_config
from floor_stores import fresh_database

START = 3_000_000
RATE = 50_000  # 5% of each progressive stake in action
STAKE = 500
ROYAL = ("As Ks Qs", "Kd 6c 2h", "Js Ts")     # 4.4: Royal Flush, 100% of the pool
SF = ("9h 8h 7h", "Kd 6c 2h", "6h 5h")        # 4.4: Straight Flush, 10% of the pool
LINKS = f"[links.mega]\nreset = {RESET}\nrate_ppm = {RATE}\nstart = {START}\n"
DEADLINE = 120.0


def pay(pool: int, hand: str) -> tuple[int, int]:
    """(hit, pool after) of one round with one progressive wager of `hand`, from the rules."""
    pool += STAKE * RATE // 1_000_000  # its contribution first (reading 58)
    if hand == "royal":
        return pool, RESET  # 4.4: 100% of the pool; the pool starts again from the reset
    hit = pool * 10 // 100  # 4.4: 10% of the pool, floored (reading 15)
    return hit, pool - hit


def children_of(pid: int) -> set[int]:
    """The live processes whose parent is `pid` (from /proc: nobody's word but the kernel's)."""
    out = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(name))
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


def wait_for(what: str, check: Any, timeout: float = DEADLINE) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Floor:
    """`cardshoe floor serve` as a subprocess: its port, its workers, its stderr."""

    def __init__(self, directory: Path, store: str, workers: int) -> None:
        self.config = write_config(directory, links=LINKS, store=f'{store}\nlisten = "127.0.0.1:0"')
        port_file = directory / "floor.port"
        self.log = directory / "floor.log"
        self._log = self.log.open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config",
                                      str(self.config), "--workers", str(workers), "--port-file", str(port_file)],
                                     stdout=subprocess.DEVNULL, stderr=self._log, text=True)
        wait_for("the port file", lambda: port_file.exists() or self.proc.poll() is not None)
        assert self.proc.poll() is None, self.log.read_text()
        self.base = f"http://127.0.0.1:{int(port_file.read_text())}"
        self.workers = wait_for(f"{workers} workers", lambda: len(children_of(self.proc.pid)) == workers
                                and children_of(self.proc.pid))

    def client(self, who: str) -> httpx.Client:
        """A client on a connection of its own (kept alive: the same worker answers it)."""
        return httpx.Client(base_url=self.base, timeout=DEADLINE, limits=httpx.Limits(max_connections=1),
                            headers={"Authorization": f"Bearer {TOKENS[who]}"})

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        return self.log.read_text()


@pytest.fixture(scope="module")
def cluster(pg_cluster: PgCluster) -> PgCluster:
    return pg_cluster


@pytest.fixture
def floor(cluster: PgCluster, tmp_path: Path) -> Iterator[Floor]:
    f = Floor(tmp_path / "floor", f'postgres = "{fresh_database(cluster)}"', 2)
    try:
        yield f
    finally:
        leftover = f.workers
        f.stop()
        for pid in leftover:  # never leave a worker behind, whatever the test did
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def together(calls: list[Any]) -> list[Any]:
    """Each call on a thread of its own, all released at once by a barrier; their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def clients_on_two_workers(floor: Floor, who: tuple[str, str]) -> tuple[httpx.Client, httpx.Client]:
    """One kept-alive connection per table, answered by two different workers (new
    connections are made until the kernel has handed them to two)."""
    spare: list[httpx.Client] = []
    first = floor.client(who[0])
    pid_a = first.get("/public-key").headers["x-floor-worker"]
    for _ in range(200):
        c = floor.client(who[1])
        if c.get("/public-key").headers["x-floor-worker"] != pid_a:
            for s in spare:
                s.close()
            return first, c
        spare.append(c)  # kept open so the next connection is a new one
    raise AssertionError(f"200 connections all answered by worker {pid_a}")


def test_hits_of_two_tables_at_two_workers_at_once_are_serialized_by_the_database(floor: Floor,
                                                                                   tmp_path: Path) -> None:
    tables = {"T1": MiniTable(tmp_path / "T1.journal", "T1"), "T2": MiniTable(tmp_path / "T2.journal", "T2")}
    hands = {"T1": ("royal", ROYAL), "T2": ("sf", SF)}
    shipped = {"T1": 0, "T2": 0}
    pool, seen_pairs = START, []
    try:
        for turn in range(4):
            # Each table deals its round and journals settle_sent; the tail goes with the request.
            bodies = {}
            for name, table in tables.items():
                rid = table.play(*hands[name][1])
                entry = table.send(rid)
                bodies[name] = {"table": table.stream, "round_id": rid, "entry": entry,
                                "entries": wire(table.entries(after=shipped[name], upto=entry))}
            c1, c2 = clients_on_two_workers(floor, ("T1", "T2"))
            answers = dict(zip(("T1", "T2"), together([
                lambda: c1.post("/links/mega/settle", json=bodies["T1"]),
                lambda: c2.post("/links/mega/settle", json=bodies["T2"])])))
            c1.close()
            c2.close()
            for name in tables:
                assert answers[name].status_code == 200, answers[name].text
            workers = {answers[n].headers["x-floor-worker"] for n in tables}
            assert len(workers) == 2, f"turn {turn}: both settled by worker {workers}"
            assert {int(w) for w in workers} <= floor.workers
            seen_pairs.append(workers)
            # The pool recomputed from the rules in the order the database gave (seq).
            ordered = sorted(tables, key=lambda n: answers[n].json()["seq"])
            assert [answers[n].json()["seq"] for n in ordered] == [2 * turn + 1, 2 * turn + 2]
            for name in ordered:
                got = answers[name].json()
                hit, after = pay(pool, hands[name][0])
                assert got["pool_before"] == pool, (turn, name, got)
                assert [h["amount"] for h in got["hits"]] == [hit], (turn, name, got)
                assert got["pool_after"] == after, (turn, name, got)
                pool = after
                tables[name].settle_with(bodies[name]["round_id"], got)
                shipped[name] = bodies[name]["entry"]
        with floor.client("pit") as pit:
            link = pit.get("/links/mega").json()
            hits = pit.get("/hits", params={"link": "mega"}).json()
        # Nothing doubled, nothing lost: one assignment per round, one hit per round, the pool
        # as the recomputation leaves it.
        assert link["pool"] == pool and link["rounds"] == 8
        assert [a["seq"] for a in link["history"]] == list(range(1, 9))
        assert len(hits) == 8 and len({(h["table"], h["round_id"]) for h in hits}) == 8
    finally:
        for table in tables.values():
            table.close()


def same_post_at_two_workers(floor: Floor, who: str, path: str, body: Any) -> list[httpx.Response]:
    """The same request sent by `who` to two different workers, released together; both answers,
    each checked to come from its own worker."""
    c1, c2 = clients_on_two_workers(floor, (who, who))
    answers = together([lambda: c1.post(path, json=body), lambda: c2.post(path, json=body)])
    c1.close()
    c2.close()
    assert [r.status_code for r in answers] == [200, 200], [r.text for r in answers]
    assert len({r.headers["x-floor-worker"] for r in answers}) == 2
    return answers


def test_a_new_tables_first_batch_at_two_workers_at_once_is_stored_once(floor: Floor, tmp_path: Path) -> None:
    # A new stream's first entries may reach two workers together (the shipper's batch and a
    # settlement's tail); neither may fail on the table's row the other is inserting.
    for n in range(4):
        table = MiniTable(tmp_path / f"T1-{n}.journal", "T1")
        try:
            table.play(*ROYAL)
            body = {"entries": wire(table.entries()), "head": dict(zip(("id", "chain"), table.head()))}
            answers = same_post_at_two_workers(floor, "T1", f"/tables/{table.stream}/entries", body)
            assert {r.json()["high_water"] for r in answers} == {table.head()[0]}
            with floor.client("surveillance") as surv:
                held = surv.get(f"/tables/{table.stream}/entries", params={"limit": 10_000}).json()
            assert [e["id"] for e in held] == [e.id for e in table.entries()]
        finally:
            table.close()


def test_a_restored_journals_fork_at_two_workers_at_once_opens_its_stream_once(floor: Floor) -> None:
    # A restored journal whose parent stream the floor never held (entry 0) locks no parent
    # row: the same fork asked of two workers at once must open the stream once, answer both
    # alike, and leave no half-made row (the first-insert race the ingest had).
    from cardshoe.floor.store import stream_genesis

    for n in range(4):
        parent, child = f"T1.{n:02d}aaaaaaaaaa", f"T1.{n:02d}bbbbbbbbbb"
        body = {"parent": parent, "at": 0, "chain": stream_genesis(parent)}
        answers = same_post_at_two_workers(floor, "T1", f"/tables/{child}/fork", body)
        assert [r.json() for r in answers] == [{"table": child, "parent": parent, "base_id": 0, "high_water": 0}] * 2
        with floor.client("pit") as pit:
            rows = [t for t in pit.get("/tables").json() if t["table"] == child]
        assert len(rows) == 1, rows


def test_a_worker_killed_is_replaced_and_the_floor_keeps_answering(floor: Floor) -> None:
    victim = min(floor.workers)
    os.kill(victim, signal.SIGKILL)
    wait_for("the killed worker reaped", lambda: not alive(victim))
    now = wait_for("a replacement worker", lambda: len(children_of(floor.proc.pid) - {victim}) == 2
                   and children_of(floor.proc.pid))
    new = now - floor.workers
    assert len(new) == 1 and victim not in now
    floor.workers = now
    # The floor answers, and the replacement serves too (new connections until it is met).
    answered: set[str] = set()

    def met_new() -> bool:
        with floor.client("pit") as pit:
            r = pit.get("/links")
        assert r.status_code == 200 and r.json()[0]["link"] == "mega"
        answered.add(r.headers["x-floor-worker"])
        return str(next(iter(new))) in answered

    wait_for("an answer from the new worker", met_new)
    assert str(victim) not in answered
    log = floor.stop()
    assert f"worker {victim} killed by SIGKILL" in log and f"worker {next(iter(new))} started" in log, log


def test_several_workers_need_postgresql(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, links=LINKS, store=f'sqlite = "{tmp_path / "f.sqlite"}"')
    assert cli.main(["floor", "serve", "--config", str(config), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--workers 2" in err and "PostgreSQL" in err, err
    # The file's setting is refused alike, and nothing was bound or created.
    config.write_text(config.read_text().replace("[floor]\n", "[floor]\nworkers = 3\n", 1))
    assert cli.main(["floor", "serve", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "--workers 3" in err and "workers" in err, err
    assert not (tmp_path / "f.sqlite").exists()
    assert cli.main(["floor", "serve", "--config", str(config), "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_sigterm_stops_the_parent_and_every_worker(floor: Floor) -> None:
    workers = set(floor.workers)
    assert len(workers) == 2 and all(alive(p) for p in workers)
    with floor.client("pit") as pit:
        assert pit.get("/links").status_code == 200
    floor.proc.send_signal(signal.SIGTERM)
    assert floor.proc.wait(60) == 0
    wait_for("every worker gone", lambda: not any(alive(p) for p in workers), timeout=60)
    with pytest.raises(httpx.TransportError):
        httpx.get(floor.base + "/public-key", timeout=10)
    assert "SIGTERM: stopping 2 workers" in floor.stop()


def test_workers_do_not_outlive_a_parent_killed_outright(floor: Floor) -> None:
    # SIGKILL gives the parent no chance to stop them: Linux's parent-death signal does.
    workers = set(floor.workers)
    os.kill(floor.proc.pid, signal.SIGKILL)
    floor.proc.wait(60)
    wait_for("every worker gone", lambda: not any(alive(p) for p in workers), timeout=60)
