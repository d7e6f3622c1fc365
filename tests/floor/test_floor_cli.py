"""`cardshoe floor`: one-line errors, serving from the floor's file, `pg start` after a crash
(issue 21 item 6), and `floor audit` recomputing every assignment and hit from the entries the
floor holds, naming each edited row (item 5)."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from cardshoe import cli
from cardshoe.floor.pgserver import PgCluster
from cardshoe.floor.progressive import LinkSettings
from cardshoe.floor.store import FloorStore
from cardshoe.journal import Journal
from fastapi.testclient import TestClient
from floor_journal import RESET, MiniTable, wire
from floor_server import TOKENS, write_config
from floor_server import app as floor_app

START = 3_000_000
RATE = 50_000


def test_a_bad_link_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["floor", "serve", "--config", str(write_config(tmp_path)), "--link", "mega:1000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NAME:RESET:RATE_PPM" in err


def test_serve_needs_its_file_and_a_wrong_setting_is_one_line(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    assert cli.main(["floor", "serve", "--sqlite", str(tmp_path / "f.sqlite")]) == 2
    assert "--config" in capsys.readouterr().err
    path = write_config(tmp_path, links="[links.mega]\nreset = 1000\nrate_ppm = 0\n", link="other")
    assert cli.main(["floor", "serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tables.T1.link" in err, err
    path = write_config(tmp_path, links="[links.mega]\nreset = 1000\nrate_ppm = 0\n")
    os.chmod(tmp_path / "pit.token", 0o644)
    assert cli.main(["floor", "serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "roles.pit" in err and "chmod 600" in err, err


def test_serve_on_port_0_from_its_file_gives_each_credential_its_own_rights(tmp_path: Path) -> None:
    # A parent handing a port number on could lose it to another process before the server's
    # bind; with port 0 the server binds and says which port (issue 11 item 7).
    import httpx

    config = write_config(tmp_path, links="[links.mega]\nreset = 5000000\nrate_ppm = 50000\n",
                          store=f'sqlite = "{tmp_path / "f.sqlite"}"\nlisten = "127.0.0.1:0"')
    port_file = tmp_path / "floor.port"
    proc = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config", str(config),
                             "--port-file", str(port_file)],
                            env={k: v for k, v in os.environ.items() if k != "CARDSHOE_FLOOR_TOKEN"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():  # renamed into place: whole when it exists
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        text = port_file.read_text(encoding="ascii")
        assert text.endswith("\n") and int(text) > 0
        base = f"http://127.0.0.1:{int(text)}"

        def get(path: str, who: str) -> Any:
            return httpx.get(base + path, timeout=60, headers={"Authorization": f"Bearer {TOKENS[who]}"})

        assert get("/links", "pit").status_code == 200 and "mega" in get("/links", "pit").text
        assert get("/links", "T1").status_code == 403  # a table's credential reads nothing else
        assert get("/tables/T2.0123456789ab/high-water", "T1").status_code == 403
        assert get("/tables/T1.0123456789ab/high-water", "T1").status_code == 200
        key = httpx.get(base + "/public-key", timeout=60).json()["public_key"]
        out = io.StringIO()
        with redirect_stdout(out):
            assert cli.main(["floor", "key", "--config", str(config)]) == 0
        assert out.getvalue().strip() == key
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert f"{base}/floor" in stderr and "2 tables" in stderr


# -- `cardshoe floor pg start` after a crash (issue 21 item 6) ----------------------------------

def _pg_start(directory: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["floor", "pg", "start", str(directory)])
    got = capsys.readouterr()
    return code, got.out, got.err


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists():
        assert time.monotonic() < deadline, f"process {pid} did not end"
        time.sleep(0.05)


def test_pg_start_after_a_crash_starts_the_server_or_refuses_in_one_line(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]) -> None:
    import tempfile

    parent = Path(tempfile.mkdtemp(prefix="cardshoe-pg-crash-"))  # under /tmp: the postgres user must reach it
    parent.chmod(0o755)
    directory = parent / "pg"
    try:
        code, out, _ = _pg_start(directory, capsys)
        assert code == 0 and json.loads(out).get("done", "created") == "created"
        cluster = PgCluster(directory, port=int(json.loads((directory / "cardshoe-pg.json").read_text())["port"]))
        pidfile = cluster.data / "postmaster.pid"
        pid = int(pidfile.read_text().split()[0])
        # A crash: the postmaster killed, its postmaster.pid left behind.
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid)
        for child in [p for p in Path("/proc").iterdir() if p.name.isdigit()]:
            try:
                if f"{cluster.data}".encode() in (child / "cmdline").read_bytes():
                    _wait_gone(int(child.name))
            except OSError:
                pass
        assert pidfile.exists() and not cluster.answers()
        code, out, _ = _pg_start(directory, capsys)
        assert code == 0
        assert cluster.answers()  # a server that answers, never a success that started nothing
        assert json.loads(out)["done"] == "started after a crash"
        code, out, _ = _pg_start(directory, capsys)
        assert code == 0 and json.loads(out)["done"] == "running"
        # A stale postmaster.pid whose PID now belongs to another process: refused, in one line.
        cluster.stop()
        assert not pidfile.exists()
        pidfile.write_text(f"{os.getpid()}\n{cluster.data}\n")
        code, out, err = _pg_start(directory, capsys)
        assert code == 1 and out == "" and err.count("\n") == 1, err
        assert f"PID {os.getpid()}" in err and "remove the file" in err
        assert not cluster.answers()
        pidfile.unlink()
        code, out, _ = _pg_start(directory, capsys)
        assert code == 0 and json.loads(out)["done"] == "started" and cluster.answers()
    finally:
        PgCluster(directory).destroy()
        parent.rmdir()


# -- `cardshoe floor audit` (issue 21 item 5) ----------------------------------------------------

def _audit(tmp_path: Path, store_target: tuple[str, str], *journals: str) -> tuple[int, dict[str, Any]]:
    kind, where = store_target
    store_arg = ["--sqlite", where] if kind == "sqlite" else ["--postgres", where]
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["floor", "audit", "--config", str(write_config(tmp_path / "cfg")), "--link",
                         f"mega:{RESET}:{RATE}:{START}", *store_arg, *journals])
    return code, json.loads(out.getvalue())


@pytest.fixture
def settled(store: FloorStore, store_target: tuple[str, str], tmp_path: Path) -> Any:
    """Two tables' rounds settled through the API from their journals: T1 a Straight Flush
    (4.4: 10% of the pool) then nothing, T2 a Royal Flush (100%)."""
    store.configure_link(LinkSettings("mega", RESET, RATE, START))
    app = floor_app(store)
    made = []
    for name, deals in (("T1", [("9h 8h 7h", "Kd 6c 2c", "6h 5h"), ("4c 7d Jh", "Kd 6c 2h", "3s 8c")]),
                        ("T2", [("As Ks Qs", "Kd 6c 2h", "Js Ts")])):
        t = MiniTable(tmp_path / f"{name}.sqlite", name)
        c = TestClient(app, headers={"Authorization": f"Bearer {TOKENS[name]}"})
        for deal in deals:
            rid = t.play(*deal)
            entry = t.send(rid)
            r = c.post("/links/mega/settle", json={"table": t.stream, "round_id": rid, "entry": entry,
                                                   "entries": wire(t.entries(after=store.high_water(t.stream)))})
            assert r.status_code == 200, r.text
            t.settle_with(rid, r.json())
        c.post(f"/tables/{t.stream}/entries", json={"entries": wire(t.entries(after=store.high_water(t.stream)))})
        made.append(t)
    yield made
    for t in made:
        t.close()


def test_audit_recomputes_every_assignment_and_finds_nothing_wrong(
        settled: Any, store: FloorStore, store_target: tuple[str, str], tmp_path: Path) -> None:
    code, report = _audit(tmp_path, store_target, *(f"{t.stream}={t.path}" for t in settled))
    assert code == 0 and report["problems"] == [], report["problems"]
    # From the rules: 25 contributed per round; the Straight Flush takes 10% of 3,000,025
    # (300,002), the Royal Flush 100% of what is left with its 25 (4.4), then the reset.
    assert report["floor"]["rounds"] == 3 and report["floor"]["paid"] == 300_002 + (3_000_050 - 300_002 + 25)
    assert report["floor"]["pool"] == RESET == store.pool("mega")["pool"]


@pytest.mark.parametrize(("what", "sql", "named"), [
    ("a hit's amount", "UPDATE hits SET amount = amount + 777 WHERE seq = 1", "hits rows"),
    ("an assignment's pool_after", "UPDATE assignments SET pool_after = pool_after + 5 WHERE seq = 2",
     "assignments.pool_after is"),
    ("an assignment's body", "UPDATE assignments SET body = replace(body, '\"stakes\": 500', '\"stakes\": 900') "
                             "WHERE seq = 3", "the assignment's body says stakes 900"),
    ("an entry", "UPDATE entries SET body = replace(body, '\"amount\":500', '\"amount\":50000') "
                 "WHERE kind = 'input' AND body LIKE '%progressive%'", "its chain value does not follow"),
    ("the carry", "UPDATE links SET carry = carry + 1", "the store holds pool"),
    ("the pool", "UPDATE links SET pool = pool + 1000000", "the store holds pool"),
])
def test_audit_names_every_row_edited_in_the_store(settled: Any, store: FloorStore, store_target: tuple[str, str],
                                                    tmp_path: Path, what: str, sql: str, named: str) -> None:
    kind, where = store_target
    if kind == "sqlite":
        conn: Any = sqlite3.connect(where)
        conn.execute(sql)
        conn.commit()
        conn.close()
    else:
        import psycopg

        with psycopg.connect(where, autocommit=True) as pg:
            pg.execute(sql)
    code, report = _audit(tmp_path, store_target)
    assert code == 1, (what, report)
    assert any(named in p for p in report["problems"]), (what, report["problems"])


def test_audit_without_the_tables_shoe_keys_cannot_vouch_for_a_round(
        settled: Any, store_target: tuple[str, str], tmp_path: Path) -> None:
    kind, where = store_target
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["floor", "audit", "--link", f"mega:{RESET}:{RATE}:{START}",
                         "--sqlite" if kind == "sqlite" else "--postgres", where])
    report = json.loads(out.getvalue())
    assert code == 1 and all("no shoe keys registered" in p for p in report["problems"]), report["problems"]


def test_audit_of_a_journal_with_no_linked_round_against_a_floor_that_settled_one(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "T1.sqlite"
    Journal(path).close()
    floor = tmp_path / "floor.sqlite"
    store = FloorStore.sqlite(floor)
    store.configure_link(LinkSettings("mega", 1000, 0))
    store.close()
    config = write_config(tmp_path / "cfg")
    link = "mega:1000:0"
    assert cli.main(["floor", "audit", "--config", str(config), "--link", link, "--sqlite", str(floor),
                     f"T1.x={path}"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["rounds"], report["pool"], report["floor_pool"], report["problems"]) == (0, 1000, 1000, [])
