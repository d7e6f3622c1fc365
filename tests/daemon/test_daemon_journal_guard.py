"""One journal, one daemon; a journal that cannot be used is one line and a documented exit
status; a journal that fails while running ends the daemon so that systemd restarts it
(issue 10 item 6). The real `cardshoe run` in a child process, on real SQLite files.

Exit statuses (docs: `cardshoe run --help`, README): 3 locked, 4 unreadable, 5 read-only,
6 write failed (a cause that may pass: the unit restarts the daemon)."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest
from daemon_harness import started_port

from cardshoe.daemon.config import TableConfig
from cardshoe.daemon.daemon import Daemon
from cardshoe.journal import JournalLocked
from cardshoe.journal import replay as replay_cli

TOKEN = "guard-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]


def _args(journal: Path, tmp: Path) -> list[str]:
    # Port 0: the daemon binds a port the kernel picks and reports it (--port-file), so no
    # other process can take it between our choice and its bind.
    return [sys.executable, "-m", "cardshoe.cli", "run", "--port", str(tmp / "no-shoe-here"), "--game",
            "three-card-poker", "--seats", "7", "--name", "G1", "--journal", str(journal), "--keys",
            str(tmp / "keys"), "--listen", "127.0.0.1:0", "--port-file", str(tmp / "api.port")]


def _run_to_exit(journal: Path, tmp: Path, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    (tmp / "keys").mkdir(mode=0o700, exist_ok=True)
    return subprocess.run([*(prefix or []), *_args(journal, tmp)],
                          env=dict(os.environ, CARDSHOE_TOKEN=TOKEN), capture_output=True, text=True, timeout=120)


def _made_journal(tmp: Path) -> Path:
    path = tmp / "journal.sqlite"
    daemon = Daemon(TableConfig(port=str(tmp / "nothing"), game="three-card-poker", seats=7, name="G1",
                                journal=path), keys={}.get)
    daemon.start()
    daemon.stop()
    return path


def _one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]


def test_a_second_daemon_on_the_same_journal_exits_3_naming_the_holder(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    first = Daemon(TableConfig(port=str(tmp_path / "nothing"), game="three-card-poker", seats=7, name="G1",
                               journal=journal), keys={}.get)
    first.start()
    try:
        done = _run_to_exit(journal, tmp_path)
        assert done.returncode == 3, done.stderr
        line = _one_line(done.stderr)
        assert f"pid {os.getpid()}" in line and "in use" in line and "port" in line
        # In process too: the lock is the kernel's, not a check of a file's presence.
        with pytest.raises(JournalLocked):
            Daemon(first.config, keys={}.get).start()
    finally:
        first.stop()
    # The holder gone, the journal is free again, and nothing of the refused starts was written.
    again = Daemon(first.config, keys={}.get)
    again.start()
    again.stop()
    assert replay_cli.main([str(journal)]) == 0


@pytest.mark.parametrize("damage", ["text", "truncated", "corrupt"])
def test_a_journal_that_cannot_be_read_at_start_exits_4_with_one_line(tmp_path: Path, damage: str) -> None:
    journal = _made_journal(tmp_path)
    if damage == "text":
        journal.write_text("this is the pit boss's shopping list\n")
    elif damage == "truncated":
        data = journal.read_bytes()
        journal.write_bytes(data[: len(data) - 4096 - 100])
    else:
        conn = sqlite3.connect(journal)
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
        conn.close()
        with open(journal, "r+b") as f:
            f.seek((root - 1) * page + 8)
            f.write(b"\xa5" * 64)
    before = journal.read_bytes()
    done = _run_to_exit(journal, tmp_path)
    assert done.returncode == 4, done.stderr
    assert str(journal) in _one_line(done.stderr)
    assert journal.read_bytes() == before  # refused, not "repaired" or appended to


def test_a_read_only_journal_exits_5_with_one_line(tmp_path: Path) -> None:
    journal = _made_journal(tmp_path)
    before = journal.read_bytes()
    os.chmod(journal, 0o444)
    prefix: list[str] = []
    if os.geteuid() == 0:
        # root writes whatever the mode (CAP_DAC_OVERRIDE): the daemon runs without that
        # capability, so the file's mode binds it as it binds the `cardshoe` user.
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    done = _run_to_exit(journal, tmp_path, prefix)
    assert done.returncode == 5, done.stderr
    assert "read-only" in _one_line(done.stderr)
    assert journal.read_bytes() == before


def _limit_file_size(limit: int) -> Callable[[], None]:
    def preexec() -> None:
        # A full disk, for this process only: writes past `limit` bytes fail (EFBIG), and
        # SIGXFSZ is ignored so they fail as write errors rather than killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def test_a_journal_that_fills_up_while_running_ends_the_daemon_with_6_and_a_restart_recovers(
        tmp_path: Path) -> None:
    journal = _made_journal(tmp_path)
    (tmp_path / "keys").mkdir(mode=0o700, exist_ok=True)
    limit = 160_000
    proc = subprocess.Popen(_args(journal, tmp_path), env=dict(os.environ, CARDSHOE_TOKEN=TOKEN),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_limit_file_size(limit))
    statuses: list[int] = []
    try:
        port = started_port(tmp_path / "api.port", proc)
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {TOKEN}"},
                              timeout=10)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                statuses.append(client.post("/rounds").status_code)
            except httpx.HTTPError:
                time.sleep(0.05)
        assert proc.poll() is not None, "the daemon kept running on a journal it cannot write"
        stderr = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
    assert proc.returncode == 6, stderr
    assert 201 in statuses or 409 in statuses  # it was serving before the disk filled
    assert any("failed while running" in ln for ln in stderr.splitlines()), stderr
    # The cause gone (no limit), the restarted daemon rebuilds from the journal as written.
    done = subprocess.run([sys.executable, "-m", "cardshoe.cli", "replay", str(journal)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    again = Daemon(TableConfig(port=str(tmp_path / "nothing"), game="three-card-poker", seats=7, name="G1",
                               journal=journal), keys={}.get)
    again.start()
    try:
        assert again.restored is not None and not again.restored.mismatches
        assert again.service is not None
        setup = {"action": "setup", **again.config.setup().to_json()}
        assert again.service.submit_input(setup).refused is None  # a journaled input, written
        assert again.status()["journal_failed"] is None
    finally:
        again.stop()


def test_a_disk_full_at_start_exits_6_with_one_line_and_leaves_the_journal_readable(tmp_path: Path) -> None:
    journal = _made_journal(tmp_path)
    (tmp_path / "keys").mkdir(mode=0o700, exist_ok=True)
    done = subprocess.run(_args(journal, tmp_path), env=dict(os.environ, CARDSHOE_TOKEN=TOKEN),
                          capture_output=True, text=True, timeout=120, preexec_fn=_limit_file_size(1))
    assert done.returncode == 6, done.stderr
    assert str(journal) in _one_line(done.stderr)
    assert replay_cli.main([str(journal)]) == 0


def test_the_systemd_unit_restarts_on_6_and_not_on_what_needs_a_person() -> None:
    unit = (ROOT / "docs" / "systemd" / "cardshoe@.service").read_text()
    settings: dict[str, Any] = dict(line.split("=", 1) for line in unit.splitlines()
                                    if "=" in line and not line.startswith("#"))
    assert settings["Restart"] == "on-failure"
    prevented = set(settings["RestartPreventExitStatus"].split())
    assert prevented == {"2", "3", "4", "5"}  # 6 (write failed) is restarted
    assert settings["StartLimitIntervalSec"] == "0"
