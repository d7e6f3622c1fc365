"""A hot standby for surveillance and failover without loss (issue 24 items 3 and 4), on real
PostgreSQL clusters (`cardshoe.floor.pgserver.PgPair`: a primary and its synchronous standby),
a real `cardshoe floor serve` process, real table daemons (pty, firmware codec, journal) and
real HTTP: the primary killed mid-shift with rounds waiting for the pool, `pg promote`, the
floor moving to the new primary, every entry and assignment on it once, the pool equal to
the recomputation from the journals, the old primary fenced and, unfenced, still refused as
a writer; a read-only floor on the standby serving the search and refusing every write.

Figures (the failover window, the settlement's cost with and without the synchronous
standby) are printed, never asserted: `pytest -s tests/floor/test_floor_failover.py`."""

from __future__ import annotations

import io
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Iterator

import httpx
import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "daemon"))

from cardshoe import cli  # noqa: E402
from cardshoe.floor.audit import audit, audit_store, rounds_of_journal  # noqa: E402
from cardshoe.floor.pgserver import FENCE, PgCluster, PgPair, PgStartRefused  # noqa: E402
from cardshoe.floor.progressive import LinkSettings  # noqa: E402
from cardshoe.floor.settle import FloorSettler  # noqa: E402
from cardshoe.floor.store import FloorStore, StoreRefused  # noqa: E402
from cardshoe.journal import JournalReader  # noqa: E402
from daemon_harness import Table, started_port, wait_for  # noqa: E402
from floor_journal import MiniTable  # noqa: E402
from floor_server import FLOOR_PUBKEY, SIGNER, TOKENS, keys_for, settler, write_config  # noqa: E402

MTCP = "megalink-three-card-poker"
RESET = 1_000_000
START = 3_000_000
RATE = 50_000  # 5%: 25 per 500 staked
LINK = LinkSettings("mega", RESET, RATE, START)
LINKS = f"[links.mega]\nreset = {RESET}\nrate_ppm = {RATE}\nstart = {START}\n"


@pytest.fixture(scope="module")
def pair() -> Iterator[PgPair]:
    made = PgPair.create(tcp=False)
    try:
        yield made
    finally:
        made.destroy()


def new_database(pair: PgPair) -> str:
    """A fresh database on the pair (made on the primary, replicated to the standby): the
    writer's DSN to it and the reader's."""
    import secrets

    name = "t_" + secrets.token_hex(5)
    with psycopg.connect(pair.primary.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pair.writer_dsn.replace("dbname=floor", f"dbname={name}"), \
        pair.reader_dsn.replace("dbname=floor", f"dbname={name}")


class FloorProcess:
    """`cardshoe floor serve --config` in a process of its own, on a port it binds itself."""

    def __init__(self, directory: Path, store_line: str, *, extra: str = "") -> None:
        self.config = write_config(directory, links=LINKS, store=f'{store_line}\nlisten = "127.0.0.1:0"\n{extra}')
        port_file = directory / "floor.port"
        port_file.unlink(missing_ok=True)
        self.log = directory / "floor.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config", str(self.config),
             "--port-file", str(port_file)], env={k: v for k, v in os.environ.items() if k != "CARDSHOE_FLOOR_TOKEN"},
            stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        self.url = f"http://127.0.0.1:{started_port(port_file, self.proc, self.log, 90)}"

    def call(self, method: str, path: str, who: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.url + path, headers={"Authorization": f"Bearer {TOKENS[who]}"},
                             timeout=60, **kwargs)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# -- the pair from the command line ---------------------------------------------------------------

def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_pg_start_standby_status_crash_restart_promote_fence_and_rebuild_from_the_command_line() -> None:
    import tempfile

    parent = Path(tempfile.mkdtemp(prefix="cardshoe-pair-cli-"))  # under /tmp: the postgres user must reach it
    parent.chmod(0o755)
    directory = parent / "pg"
    try:
        code, out, err = run_cli("floor", "pg", "start", str(directory), "--standby")
        assert code == 0, err
        started = json.loads(out)
        assert started["done"] == "created" and "target_session_attrs=read-write" in started["writer_dsn"]
        assert f"host={directory / 'a'},{directory / 'b'}" in started["writer_dsn"]
        assert started["reader_dsn"].startswith(f"host={directory / 'b'} ")
        status = json.loads(run_cli("floor", "pg", "status", str(directory))[1])
        assert status["primary"] == "a" and status["nodes"]["a"]["in_recovery"] is False
        assert status["nodes"]["b"]["in_recovery"] is True and status["nodes"]["b"]["receiver"] == "streaming"
        (rep,) = status["nodes"]["a"]["replication"]
        assert rep["state"] == "streaming" and rep["sync_state"] == "sync"
        # A commit on the writer DSN is on the standby when it returns (synchronous).
        with psycopg.connect(started["writer_dsn"], autocommit=True) as conn:
            conn.execute("CREATE TABLE seen (n INT)")
            conn.execute("INSERT INTO seen VALUES (7)")
        with psycopg.connect(started["reader_dsn"], autocommit=True) as conn:
            assert conn.execute("SELECT n FROM seen").fetchall() == [(7,)]
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                conn.execute("INSERT INTO seen VALUES (8)")

        # Both servers killed (a power cut): `pg start --standby` starts the pair again.
        pair = PgPair.open(directory)
        for node in (pair.standby, pair.primary):
            assert node is not None
            os.kill(node.server_state()[1] or 0, signal.SIGKILL)
            wait_for(lambda n=node: n.server_state()[0] == "stale" and not n.answers(1), 30, "the server gone")
        code, out, err = run_cli("floor", "pg", "start", str(directory), "--standby")
        assert code == 0, err
        assert json.loads(out)["done"] == {"a": "started after a crash", "b": "started after a crash"}
        wait_for(lambda: [r["sync_state"] for r in PgPair.open(directory).status()["nodes"]["a"]["replication"]]
                 == ["sync"], 60, "the standby synchronous again")

        code, out, err = run_cli("floor", "pg", "promote", str(directory))
        assert code == 0, err
        promoted = json.loads(out)
        assert (promoted["primary"], promoted["fenced"], promoted["generation"]) == ("b", "a", 2)
        with psycopg.connect(started["writer_dsn"], autocommit=True) as conn:  # lands on b
            conn.execute("INSERT INTO seen VALUES (9)")
            assert conn.execute("SELECT value FROM floor_meta WHERE key = 'generation'").fetchone() == ("2",)
        # The old primary is fenced: `pg start` of the pair leaves it down; started alone, refused in one line.
        code, out, err = run_cli("floor", "pg", "start", str(directory), "--standby")
        assert code == 0 and json.loads(out)["done"] == {"b": "running", "a": "fenced"}, (out, err)
        with pytest.raises(PgStartRefused, match="fenced"):
            PgCluster(directory / "a", port=5432, tcp=False).ensure_started()
        code, out, err = run_cli("floor", "pg", "start", str(directory / "a"))  # a node addressed alone
        assert code == 1 and err.count("\n") == 1 and f"pg start {directory} --standby" in err, err
        code, out, err = run_cli("floor", "pg", "promote", str(directory))
        assert code == 1 and err.count("\n") == 1 and "no standby" in err, err

        # The old primary made the new one's standby again; its old data kept beside it.
        code, out, err = run_cli("floor", "pg", "standby", str(directory))
        assert code == 0, err
        rebuilt = json.loads(out)
        assert rebuilt["standby"] == "a" and Path(rebuilt["old_data_kept"]).is_dir()
        with psycopg.connect(rebuilt["reader_dsn"], autocommit=True) as conn:
            assert sorted(conn.execute("SELECT n FROM seen").fetchall()) == [(7,), (9,)]
        status = json.loads(run_cli("floor", "pg", "status", str(directory))[1])
        assert status["primary"] == "b" and [r["sync_state"] for r in status["nodes"]["b"]["replication"]] == ["sync"]
        assert run_cli("floor", "pg", "stop", str(directory))[0] == 0
        assert all(not n.answers(1) for n in PgPair.open(directory).nodes.values())
    finally:
        if PgPair.exists(directory):
            PgPair.open(directory).destroy()
        import shutil

        shutil.rmtree(parent, ignore_errors=True)


# -- a read-only floor on the standby (item 3) ----------------------------------------------------

def test_a_read_only_floor_on_the_standby_serves_the_search_and_refuses_every_write(
        pair: PgPair, tmp_path: Path) -> None:
    writer_dsn, reader_dsn = new_database(pair)
    store = FloorStore.postgres(writer_dsn)
    store.configure_link(LINK)
    table = MiniTable(tmp_path / "T1.sqlite")
    try:
        rid = table.play("As Ks Qs", "Kd 6c 2h", "Js Ts")  # a Royal Flush (Megalink 4.4)
        entry = table.send(rid)
        made = settler(store).settle("mega", table.stream, rid, entry, table.entries(), head=table.head())
        table.settle_with(rid, {**made.to_json(), "signed": made.signed()})
        store.ingest(table.stream, table.entries(after=store.high_water(table.stream)), head=table.head())
        held = len(table.entries())
    finally:
        table.close()
    before = store.pool("mega")
    store.close()

    floor = FloorProcess(tmp_path / "ro", f'postgres = "{reader_dsn}"', extra="read_only = true")
    try:
        # Reads: the search finds the round by its cards (synchronous: the standby had it on commit).
        found = floor.call("GET", "/rounds?cards=As%20Ks%20Qs", "surveillance")
        assert found.status_code == 200 and [r["round_id"] for r in found.json()] == [rid], found.text
        assert floor.call("GET", "/links/mega", "pit").json()["pool"] == before["pool"] == RESET
        assert [h["round_id"] for h in floor.call("GET", "/hits", "pit").json()] == [rid]
        assert len(floor.call("GET", f"/tables/{table.stream}/entries", "surveillance").json()) == held
        assert floor.call("GET", "/floor", "pit").status_code == 200
        # Writes: every one 503 FloorReadOnly, naming where writes go; nothing reaches the standby.
        writes = [("POST", f"/tables/{table.stream}/entries", "T1", {"entries": []}),
                  ("POST", f"/tables/{table.stream}/fork", "T1", {"parent": table.stream, "at": 0, "chain": "0" * 64}),
                  ("POST", "/links/mega/settle", "T1", {"table": table.stream, "round_id": rid, "entry": entry}),
                  ("POST", "/links/mega/withdraw", "supervisor", {"table": table.stream, "round_id": rid}),
                  ("PUT", "/links/mega", "supervisor", {"reset": 5, "rate_ppm": 5}),
                  ("POST", f"/tables/{table.stream}/alarms/1/clear", "supervisor", {"by": "me"})]
        for method, path, who, body in writes:
            r = floor.call(method, path, who, json=body)
            assert r.status_code == 503 and r.json()["detail"]["error"] == "FloorReadOnly", (path, r.text)
            assert "primary" in r.json()["detail"]["message"]
        assert floor.call("GET", "/links/mega", "pit").json()["reset"] == RESET
    finally:
        floor.close()
    assert "(read-only)" in floor.log.read_text()

    # A floor that writes, pointed at the standby, refuses to start, naming it, in one line.
    config = write_config(tmp_path / "rw", links=LINKS, store=f'postgres = "{reader_dsn}"\nlisten = "127.0.0.1:0"')
    done = subprocess.run([sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config", str(config)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "standby in recovery" in done.stderr and "pg_is_in_recovery" in done.stderr
    assert str(pair.standby.directory if pair.standby else "") in done.stderr
    # And read_only needs a standby's DSN, not a file of its own.
    bad = write_config(tmp_path / "bad", links=LINKS, store='sqlite = "f.sqlite"\nread_only = true')
    code, _, err = run_cli("floor", "serve", "--config", str(bad))
    assert code == 2 and "floor.read_only" in err and err.count("\n") == 1


# -- the cost of the synchronous standby on a settlement (printed) --------------------------------

def test_settlement_cost_with_and_without_the_synchronous_standby(
        pair: PgPair, pg_cluster: PgCluster, tmp_path: Path) -> None:
    from floor_stores import fresh_database

    n = int(os.environ.get("CARDSHOE_STANDBY_ROUNDS", "40"))
    figures = {}
    for label, dsn in (("with the synchronous standby", new_database(pair)[0]),
                       ("without a standby", fresh_database(pg_cluster))):
        store = FloorStore.postgres(dsn)
        store.configure_link(LINK)
        table = MiniTable(tmp_path / f"{len(figures)}.sqlite")
        floor = settler(store)
        times = []
        try:
            for _ in range(n):
                rid = table.play("4c 7d Jh", "Kd 6c 2h", "3s 8c")
                entry = table.send(rid)
                tail = table.entries(after=store.high_water(table.stream))
                t0 = time.perf_counter()
                made = floor.settle("mega", table.stream, rid, entry, tail, head=table.head())
                times.append((time.perf_counter() - t0) * 1000)
                table.settle_with(rid, {**made.to_json(), "signed": made.signed()})
            assert store.pool("mega")["pool"] == START + 25 * n  # 5% of each 500, no hit
        finally:
            table.close()
            store.close()
        figures[label] = times
    for label, times in figures.items():
        print(f"\nsettlement (tail ingest + rebuild + pool transaction), {label}: {len(times)} rounds, "
              f"p50 {statistics.median(times):.1f} ms, p99 {pct(times, 0.99):.1f} ms, max {max(times):.1f} ms")


# -- failover without loss, end to end (item 4) ---------------------------------------------------

def play(table: Table, seat2: str, dealer: str, community: str, burn: str = "4d") -> str:
    """One Megalink round to the decision: seat 2 ante 1000 and progressive 500, plays."""
    from cardshoe.cards import parse_card

    rid = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "progressive", "amount": 500})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(t) for t in f"{seat2} {dealer} {community} {burn}".split()])
    table.shoe.key_press(2)  # DEAL_COMPLETE
    table.shoe.wait_acked()
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    return rid


def journal(table: Table) -> list[Any]:
    with JournalReader(table.config.journal) as reader:
        return list(reader.entries())


def test_the_primary_killed_mid_shift_the_standby_promoted_nothing_lost_or_doubled_and_the_old_primary_refused(
        pair: PgPair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CARDSHOE_FLOOR_TOKEN", raising=False)
    floor = FloorProcess(tmp_path / "floor", f'postgres = "{pair.writer_dsn}"')
    tables: list[Table] = []
    try:
        for name in ("T1", "T2"):
            tables.append(Table(tmp_path / name, MTCP, 7, name=name, floor_url=floor.url, floor_link="mega",
                                jackpot_reset=RESET, limits=(("progressive", 500, 500),),
                                floor_token_file=floor.config.parent / f"{name}.token",
                                floor_public_key=FLOOR_PUBKEY.hex()))
        for t in tables:
            t.power_on_and_load()
        for t in tables:
            wait_for(lambda t=t: t.daemon.floor is not None and t.daemon.floor.online, 30, "the floor online")

        settled: dict[str, list[str]] = {"T1": [], "T2": []}
        with_standby: list[float] = []
        hands = [("4c 7d Jh", "Kd 6c 2h", "3s 8c"), ("9h 8h 7h", "Kd 6c 2c", "6h 5h"),  # a Straight Flush
                 ("2c 2d 2h", "Kd 6c 3h", "2s 9c")]
        for hand in hands:
            for t in tables:
                rid = play(t, *hand)
                t0 = time.perf_counter()
                t.settle_linked(rid)
                with_standby.append((time.perf_counter() - t0) * 1000)
                settled[t.config.name].append(rid)

        # Rounds waiting for the pool when the primary dies: dealt to the decision, not settled.
        waiting = {t.config.name: play(t, "As Ks Qs", "Kd 6c 2h", "Js Ts") for t in tables}  # Royal Flushes
        killed_at = time.monotonic()
        pair.kill_primary()
        r = tables[0].client.post(f"/rounds/{waiting['T1']}/settle", json={})
        assert r.status_code == 503 and r.json()["detail"]["error"] in ("FloorUnreachable", "FloorWaiting"), r.text
        done_at: dict[str, float] = {}
        answers: dict[str, Any] = {}
        errors: list[BaseException] = []

        def settle_waiting(t: Table) -> None:
            try:
                answers[t.config.name] = t.settle_linked(waiting[t.config.name], timeout=180)
                done_at[t.config.name] = time.monotonic()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=settle_waiting, args=(t,)) for t in tables]
        for th in threads:
            th.start()
        code, out, err = run_cli("floor", "pg", "promote", str(pair.directory))
        assert code == 0, err
        promoted_at = time.monotonic()
        assert json.loads(out)["generation"] == 2
        pair = PgPair.open(pair.directory)
        for th in threads:
            th.join(240)
        assert not errors, errors
        for t in tables:
            settled[t.config.name].append(waiting[t.config.name])
        # Both Royal Flushes paid in the order the floor took them: 100% of the pool each.
        paid = sorted((a["settlement"]["jackpot"]["pool_before"], a["settlement"]["jackpot"]["pool_after"])
                      for a in answers.values())
        assert [p[1] for p in paid] == [RESET, RESET] and paid[0][0] == RESET + 25

        without_standby: list[float] = []
        for hand in hands[:2]:
            for t in tables:
                rid = play(t, *hand)
                t0 = time.perf_counter()
                t.settle_linked(rid)
                without_standby.append((time.perf_counter() - t0) * 1000)
                settled[t.config.name].append(rid)

        # Everything shipped: every journal entry on the new primary exactly once, same chain values.
        store = FloorStore.postgres(pair.writer_dsn)  # this process sees generation 2
        try:
            for t in tables:
                key = t.daemon.floor.table  # type: ignore[union-attr]
                wait_for(lambda t=t, key=key: store.high_water(key) == journal(t)[-1].id, 60, "the journal shipped")
                held = store.entries(key, limit=100_000)
                assert [(e.id, e.chain) for e in held] == [(e.id, e.chain) for e in journal(t)]
                assert store.count_entries(key) == len(held)
            # Every assignment once: one per round settled, in seq order 1..n with no gap.
            history = store.history("mega", 10_000)
            assert sorted((h["table"].split(".")[0], h["round_id"]) for h in history) == \
                sorted((name, rid) for name, rids in settled.items() for rid in rids)
            assert [h["seq"] for h in history] == list(range(1, len(history) + 1))
            # The pool recomputed from the tables' journals alone equals the floor's ...
            rounds: list[Any] = []
            for t in tables:
                with JournalReader(t.config.journal) as reader:
                    rounds += rounds_of_journal(t.daemon.floor.table,  # type: ignore[union-attr]
                                                ((e.kind, e.round_id, e.body) for e in
                                                 reader.entries(("input", "settlement"))), "mega")
            report = audit(LINK, rounds)
            assert report.problems == []
            pool = store.pool("mega")
            assert (report.pool, report.carry, report.rounds) == (pool["pool"], pool["carry"], len(history))
            # ... and every assignment and hit recomputed from the floor's own entries.
            assert audit_store(store, [LINK], keys_for=keys_for, public_key=FLOOR_PUBKEY).problems == []

            # The old primary: fenced, `pg start` refuses it.
            old = pair.nodes["a"]
            with pytest.raises(PgStartRefused, match="fenced"):
                old.ensure_started()
            # Unfenced and started by hand (and made to wait for no standby: the worst case, a
            # second server that takes writes), a floor process that saw generation 2 refuses it.
            (old.data / FENCE).unlink()
            deadline = time.monotonic() + 60
            while True:  # the killed postmaster's last backends may hold its shared memory a moment
                try:
                    old.start()
                    break
                except RuntimeError:
                    assert time.monotonic() < deadline, (old.directory / "server.log").read_text()[-2000:]
                    time.sleep(0.2)
            with psycopg.connect(old.dsn, autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
                conn.execute("SELECT pg_reload_conf()")
                assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (False,)
                old_rows = conn.execute("SELECT COUNT(*) FROM entries").fetchone()
            with pytest.raises(StoreRefused, match="generation 1, below generation 2"):
                FloorStore.postgres(old.dsn)
            # The floor process moves only to a server of the newest generation: with the new
            # primary down, it answers 503 rather than write to the old one, which it lands on
            # first in its writer DSN.
            pair.nodes["b"].stop("immediate")
            def refused(method: str, path: str, who: str, **kw: Any) -> bool:
                r = floor.call(method, path, who, **kw)
                assert r.status_code == 503 and r.json()["detail"]["error"] == "StoreUnavailable", r.text
                return "below generation 2" in r.json()["detail"]["message"]
            # (A pooled connection to the stopped server fails first, then every reconnect is refused.)
            wait_for(lambda: refused("POST", "/links/mega/withdraw", "supervisor",
                                     json={"table": "T9.x", "round_id": "r"}), 60, "the old primary refused")
            wait_for(lambda: refused("GET", "/links", "pit"), 60, "the old primary refused")
            with psycopg.connect(old.dsn, autocommit=True) as conn:
                assert conn.execute("SELECT COUNT(*) FROM entries").fetchone() == old_rows
        finally:
            store.close()
        print(f"\nfailover: primary SIGKILLed -> promoted {promoted_at - killed_at:.2f} s; kill -> first "
              f"settlement on the new primary {min(done_at.values()) - killed_at:.2f} s, -> last "
              f"{max(done_at.values()) - killed_at:.2f} s")
        print(f"a table's settlement round trip, with the synchronous standby: {len(with_standby)} rounds, p50 "
              f"{statistics.median(with_standby):.0f} ms, max {max(with_standby):.0f} ms; after the failover "
              f"(no standby): {len(without_standby)} rounds, p50 {statistics.median(without_standby):.0f} ms, "
              f"max {max(without_standby):.0f} ms")
    finally:
        for t in tables:
            t.close()
        floor.close()


def test_a_commit_the_standby_never_had_is_dropped_from_the_floors_cache_when_the_server_changes(
        tmp_path: Path) -> None:
    # A commit made on the primary alone (the standby away, the session's synchronous_commit
    # local) is visible to the floor's other sessions and fed to the Rebuilder's cached core;
    # the primary then dies and the standby, which never had it, is promoted. The core must
    # not keep a round the new primary does not hold.
    from cardshoe.floor.rebuild import Rebuilder

    pair = PgPair.create(tcp=False)
    table = MiniTable(tmp_path / "T1.sqlite")
    try:
        store = FloorStore.postgres(pair.writer_dsn)
        store.configure_link(LINK)
        rebuilder = Rebuilder(store, keys_for)
        floor = FloorSettler(store, rebuilder, SIGNER)
        r1 = table.play("4c 7d Jh", "Kd 6c 2h", "3s 8c")
        made = floor.settle("mega", table.stream, r1, table.send(r1), table.entries(), head=table.head())
        table.settle_with(r1, {**made.to_json(), "signed": made.signed()})
        store.ingest(table.stream, table.entries(after=store.high_water(table.stream)), head=table.head())
        kept = store.high_water(table.stream)
        assert pair.standby is not None
        pair.standby.stop("fast")
        primary_only = FloorStore.postgres(pair.primary.dsn + " options='-c synchronous_commit=local'")
        r2 = table.play("9h 8h 7h", "Kd 6c 2c", "6h 5h")
        primary_only.ingest(table.stream, table.entries(after=kept), head=table.head())
        primary_only.close()
        lost = store.high_water(table.stream)
        rebuilder.advance(table.stream, lost)
        state = rebuilder.state(table.stream, lost)
        state.lock.release()
        assert lost > kept and r2 in state.core.rounds

        pair.kill_primary()
        assert pair.promote() == 2
        wait_for(lambda: _answers(store), 60, "the floor's store on the new primary")
        assert store.high_water(table.stream) == kept  # the commit the standby never had is gone
        state = rebuilder.state(table.stream, kept, r1)
        try:
            assert r1 in state.core.rounds and r2 not in state.core.rounds and state.upto == kept
        finally:
            state.lock.release()
        # The table ships it again (its journal holds it): settled on the new primary.
        store.ingest(table.stream, table.entries(after=kept), head=table.head())
        entry = table.send(r2)
        made = floor.settle("mega", table.stream, r2, entry, table.entries(after=lost), head=table.head())
        # Megalink 4.4: a Straight Flush takes 10% of the pool, which holds both rounds' 25.
        assert [h.amount for h in made.hits] == [(START + 50) // 10] and made.pool_before == START + 25
        store.close()
    finally:
        table.close()
        pair.destroy()


def _answers(store: FloorStore) -> bool:
    from cardshoe.floor.store import StoreUnavailable

    try:
        store.links()
        return True
    except StoreUnavailable:
        return False
