"""Where `cardshoe run` listens, told to a parent without a race (issue 11 item 7).

A parent that picked a free port (bind port 0, read it, close) and handed the number on left
a gap in which any other process could take it; two test suites at once on one PC did. So
the daemon binds port 0 itself and reports the port once its socket listens (a line on
stderr, `--port-file`), or serves a socket the parent bound and keeps (`--listen-fd`), which
also keeps the port across a restart. The real `cardshoe run` in a child process, without a
shoe (the API serves all the same)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from daemon_harness import started_port

TOKEN = "listen-token-0123456789abcdef"


def _argv(tmp: Path, *listen: str) -> list[str]:
    (tmp / "keys").mkdir(mode=0o700, exist_ok=True)
    return [sys.executable, "-m", "cardshoe.cli", "run", "--port", str(tmp / "no-shoe-here"), "--game",
            "three-card-poker", "--seats", "7", "--name", "L1", "--journal", str(tmp / "journal.sqlite"),
            "--keys", str(tmp / "keys"), *listen]


def _env() -> dict[str, str]:
    return dict(os.environ, CARDSHOE_TOKEN=TOKEN)


def _status(port: int) -> int:
    r = httpx.get(f"http://127.0.0.1:{port}/status", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    return r.status_code


@pytest.mark.parametrize("where", ["option", "table file"])
def test_port_0_is_bound_by_the_daemon_and_reported_in_the_port_file_and_on_stderr(
        tmp_path: Path, where: str) -> None:
    port_file = tmp_path / "api.port"
    if where == "option":
        listen = ["--listen", "127.0.0.1:0"]
    else:
        (tmp_path / "table.toml").write_text('[api]\nlisten = "127.0.0.1:0"\n', encoding="utf-8")
        listen = ["--config", str(tmp_path / "table.toml")]
    proc = subprocess.Popen(_argv(tmp_path, *listen, "--port-file", str(port_file)), env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = started_port(port_file, proc)
        assert port != 0
        # Readable at once: the socket listened before the file was renamed into place.
        assert _status(port) == 200
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, stderr
    assert f"cardshoe run: listening on http://127.0.0.1:{port}" in stderr.splitlines()
    assert not port_file.exists()  # a clean stop takes it away: nobody reads a dead daemon's port


def test_the_listening_line_is_printed_whatever_the_log_level(tmp_path: Path) -> None:
    # A parent may read the port from stderr alone (no --port-file).
    proc = subprocess.Popen(_argv(tmp_path, "--listen", "127.0.0.1:0", "--log-level", "ERROR"), env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()  # blocks until the daemon says it; no polling
        found = re.fullmatch(r"cardshoe run: listening on http://127\.0\.0\.1:(\d+)\n", line)
        assert found, line
        assert _status(int(found.group(1))) == 200
    finally:
        proc.kill()
        proc.wait(10)


def test_a_socket_passed_with_listen_fd_keeps_its_port_across_a_kill_and_a_restart(tmp_path: Path) -> None:
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))
    held.listen(16)
    port = held.getsockname()[1]
    argv = _argv(tmp_path, "--listen-fd", str(held.fileno()), "--port-file", str(tmp_path / "api.port"))
    answers: list[int] = []
    first = subprocess.Popen(argv, env=_env(), pass_fds=(held.fileno(),), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    second: subprocess.Popen[bytes] | None = None
    try:
        assert started_port(tmp_path / "api.port", first) == port
        assert _status(port) == 200
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        # A request made while no daemon runs: the port is still held (here), so it is not
        # refused and cannot be taken by another process; it waits for the next daemon.
        asking = threading.Thread(target=lambda: answers.append(_status(port)))
        asking.start()
        (tmp_path / "api.port").unlink()  # the killed daemon could not remove it
        second = subprocess.Popen(argv, env=_env(), pass_fds=(held.fileno(),), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        assert started_port(tmp_path / "api.port", second) == port
        asking.join(60)
        assert answers == [200]
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        held.close()


def test_an_address_in_use_exits_7_with_one_line_and_touches_no_journal(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)  # held for the whole test: the port is certainly in use
        port = holder.getsockname()[1]
        done = subprocess.run(_argv(tmp_path, "--listen", f"127.0.0.1:{port}"), env=_env(),
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 7, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0] and "in use" in lines[0], done.stderr
    assert not (tmp_path / "journal.sqlite").exists()  # refused before the journal was opened


def test_a_listen_fd_that_is_not_a_socket_exits_7_and_one_with_listen_exits_2(tmp_path: Path) -> None:
    with open(tmp_path / "plain-file", "w") as f:
        fd = f.fileno()
        done = subprocess.run(_argv(tmp_path, "--listen-fd", str(fd)), env=_env(), pass_fds=(fd,),
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 7, done.stderr
    assert [ln for ln in done.stderr.splitlines() if ln.strip()] == [
        f"cardshoe run: --listen-fd: descriptor {fd} is not a socket: Socket operation on non-socket"]
    both = subprocess.run(_argv(tmp_path, "--listen-fd", "3", "--listen", "127.0.0.1:0"), env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr, both.stderr
