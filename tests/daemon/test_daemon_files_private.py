"""Files the daemon creates are its user's alone, whatever the umask (issue 20 item 6; SPEC 3.6),
and the token's edge (issue 20 item 8).

Real files, real processes: `cardshoe run` and `cardshoe floor serve` started under umask 022
(the usual one) and 000 (the loosest), and the library's own writers under the same umasks
in-process. The expectation is the issue's and SPEC 3.6's, not the code's: 0600 for a file,
0700 for a directory made for one, so no other user can read a card, a token or a key.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from daemon_harness import started_port

from cardshoe.daemon.cli import ensure_role_tokens, ensure_token
from cardshoe.daemon.config import TableConfig
from cardshoe.daemon.listen import write_port_file
from cardshoe.evidence import store as evidence_store
from cardshoe.journal import Journal
from cardshoe.keys import KeyStore, create_table_key

TOKEN = "files-token-0123456789abcdef"
UMASKS = [pytest.param(0o022, id="umask-022"), pytest.param(0o000, id="umask-000")]


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def modes(paths: list[Path]) -> dict[str, str]:
    return {p.name: f"{mode(p):o}" for p in paths}


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process umask set to the parameter for the test (restored after)."""
    wanted = int(request.param)
    saved = os.umask(wanted)
    try:
        yield wanted
    finally:
        os.umask(saved)


def _child_umask(value: int) -> None:
    os.umask(value)


@pytest.mark.parametrize("value", UMASKS)
def test_cardshoe_run_makes_every_file_its_users_alone(tmp_path: Path, value: int) -> None:
    # Every file and folder below is made by `cardshoe run` itself: none exists before.
    etc, var = tmp_path / "etc" / "cardshoe", tmp_path / "var" / "lib" / "cardshoe"
    table_file = tmp_path / "table.toml"
    table_file.write_text(f'[roles]\nsupervisor = "{etc / "pit" / "T9.supervisor.token"}"\n', encoding="utf-8")
    journal, port_file = var / "T9.sqlite", tmp_path / "run" / "T9.port"
    port_file.parent.mkdir()
    (tmp_path / "keys").mkdir(mode=0o700)
    argv = [sys.executable, "-m", "cardshoe.cli", "run", "--config", str(table_file), "--port",
            str(tmp_path / "no-shoe-here"), "--game", "three-card-poker", "--seats", "7", "--name", "T9",
            "--journal", str(journal), "--keys", str(tmp_path / "keys"), "--token-file", str(etc / "T9.token"),
            "--listen", "127.0.0.1:0", "--port-file", str(port_file)]
    env = {k: v for k, v in os.environ.items() if k != "CARDSHOE_TOKEN"}
    proc = subprocess.Popen(argv, env=env, preexec_fn=lambda: _child_umask(value),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = started_port(port_file, proc)
        token = (etc / "T9.token").read_text(encoding="ascii").strip()
        assert httpx.get(f"http://127.0.0.1:{port}/status", headers={"Authorization": f"Bearer {token}"},
                         timeout=30).status_code == 200
        # While it runs: the journal, SQLite's files beside it, its lock, the port file.
        running = modes([journal, Path(f"{journal}-wal"), Path(f"{journal}-shm"), Path(f"{journal}.lock"), port_file])
        proc.send_signal(signal.SIGTERM)  # a clean stop writes a checkpoint into the journal
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, stderr
    assert running == {"T9.sqlite": "600", "T9.sqlite-wal": "600", "T9.sqlite-shm": "600", "T9.sqlite.lock": "600",
                       "T9.port": "600"}
    made = [etc / "T9.token", etc / "pit" / "T9.supervisor.token", journal, Path(f"{journal}.lock")]
    assert set(modes(made).values()) == {"600"}, modes(made)
    folders = [tmp_path / "etc", etc, etc / "pit", tmp_path / "var", tmp_path / "var" / "lib", var]
    assert {f"{mode(d):o}" for d in folders} == {"700"}, {str(d): f"{mode(d):o}" for d in folders}


@pytest.mark.parametrize("umask", UMASKS, indirect=True)
def test_the_daemons_writers_make_private_files_in_process(tmp_path: Path, umask: int) -> None:
    # The same promise for a library user (the bench, the tests, a service wrapper) that never
    # went through `cardshoe`'s umask: each writer sets the mode itself.
    journal = Journal(tmp_path / "new" / "j.sqlite")
    try:
        journal.write(lambda conn: conn.execute("INSERT INTO meta (key, value) VALUES ('x', 'y')"))
        files = [tmp_path / "new" / "j.sqlite", tmp_path / "new" / "j.sqlite-wal", tmp_path / "new" / "j.sqlite-shm",
                 tmp_path / "new" / "j.sqlite.lock"]
        assert set(modes(files).values()) == {"600"}, modes(files)
    finally:
        journal.close()
    assert mode(tmp_path / "new") == 0o700
    write_port_file(tmp_path / "api.port", 8600)
    path, _ = evidence_store.write(tmp_path / "evidence" / "T1", "T1-000001.request.json", {"evidence": {}})
    assert (mode(path), mode(path.parent), mode(path.parent.parent)) == (0o600, 0o700, 0o700)
    assert mode(tmp_path / "api.port") == 0o600
    KeyStore(tmp_path / "keys" / "shoes").create(12)
    create_table_key(tmp_path / "tk" / "T1.table-key")
    assert [f"{mode(p):o}" for p in (tmp_path / "keys", tmp_path / "keys" / "shoes", tmp_path / "keys" / "shoes" / "12.key",
                                     tmp_path / "tk", tmp_path / "tk" / "T1.table-key")] == ["700", "700", "600",
                                                                                             "700", "600"]
    cfg = TableConfig(port="x", game="three-card-poker", seats=7, token_file=tmp_path / "tok" / "a" / "T1.token",
                      role_token_files=(("supervisor", tmp_path / "tok" / "b" / "T1.pit.token"),))
    saved = os.environ.pop("CARDSHOE_TOKEN", None)
    try:
        ensure_token(cfg)
        ensure_role_tokens(cfg)
    finally:
        if saved is not None:
            os.environ["CARDSHOE_TOKEN"] = saved
    tokens = [tmp_path / "tok", tmp_path / "tok" / "a", tmp_path / "tok" / "a" / "T1.token", tmp_path / "tok" / "b",
              tmp_path / "tok" / "b" / "T1.pit.token"]
    assert [f"{mode(p):o}" for p in tokens] == ["700", "700", "600", "700", "600"]


def test_a_journal_left_readable_by_an_earlier_version_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    Journal(path).close()
    for p in (path, Path(f"{path}.lock")):
        os.chmod(p, 0o644)
    journal = Journal(path)
    try:
        assert (mode(path), mode(Path(f"{path}.lock"))) == (0o600, 0o600)
    finally:
        journal.close()


@pytest.mark.parametrize("value", UMASKS)
def test_the_floors_store_made_by_cardshoe_floor_is_private(tmp_path: Path, value: int) -> None:
    # The floor's file (docs/floor.md): its tokens are ours (0600, as required); the store and
    # the signing key are made by `cardshoe floor serve` at its first start.
    store, port_file = tmp_path / "floor" / "f.sqlite", tmp_path / "floor.port"
    store.parent.mkdir()
    for name in ("pit", "T1"):
        token = tmp_path / f"{name}.token"
        token.write_text(f"{name}-token-0123456789abcdef\n")
        os.chmod(token, 0o600)
    config = tmp_path / "floor.toml"
    config.write_text(f'[floor]\nsigning_key = "floor/signing.key"\nsqlite = "{store}"\nlisten = "127.0.0.1:0"\n'
                      '[links.mega]\nreset = 5000000\nrate_ppm = 50000\n[roles]\npit = "pit.token"\n'
                      '[tables.T1]\ntoken_file = "T1.token"\nlink = "mega"\n')
    proc = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config", str(config),
                             "--port-file", str(port_file)],
                            env={k: v for k, v in os.environ.items() if k != "CARDSHOE_FLOOR_TOKEN"},
                            preexec_fn=lambda: _child_umask(value), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        started_port(port_file, proc)
        made = (store, Path(f"{store}-wal"), Path(f"{store}-shm"), port_file, store.parent / "signing.key")
        found = modes([p for p in made if p.exists()])
    finally:
        proc.kill()
        proc.wait(10)
    assert "f.sqlite" in found and "signing.key" in found and set(found.values()) == {"600"}, found


# -- issue 20 item 8: a token too short for the API -----------------------------------------

def test_a_short_cardshoe_token_is_one_line_and_exit_2_before_the_journal(tmp_path: Path) -> None:
    (tmp_path / "keys").mkdir(mode=0o700)
    done = subprocess.run([sys.executable, "-m", "cardshoe.cli", "run", "--port", str(tmp_path / "no-shoe"),
                           "--game", "three-card-poker", "--seats", "7", "--journal", str(tmp_path / "j.sqlite"),
                           "--keys", str(tmp_path / "keys"), "--listen", "127.0.0.1:0"],
                          env=dict(os.environ, CARDSHOE_TOKEN="fifteen-chars-x"), capture_output=True, text=True,
                          timeout=120)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2, done.stderr
    assert lines == ["cardshoe run: CARDSHOE_TOKEN: the token is shorter than 16 characters (15); the API needs "
                     "at least 16"], done.stderr
    assert not (tmp_path / "j.sqlite").exists()  # refused before anything was opened
