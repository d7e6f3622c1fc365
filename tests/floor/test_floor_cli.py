"""`cardshoe floor`: one-line errors, and the audit of journals against the floor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardshoe import cli
from cardshoe.floor.progressive import LinkSettings
from cardshoe.floor.store import FloorStore
from cardshoe.journal import Journal


def test_a_bad_link_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["floor", "serve", "--link", "mega:1000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NAME:RESET:RATE_PPM" in err


def test_serve_without_a_token_is_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.delenv("CARDSHOE_FLOOR_TOKEN", raising=False)
    assert cli.main(["floor", "serve", "--sqlite", str(tmp_path / "f.sqlite")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "token" in err


def test_audit_compares_the_journals_with_the_floor(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # A journal with no linked round and a floor whose link settled one: they differ (exit 1).
    path = tmp_path / "T1.sqlite"
    Journal(path).close()
    floor = tmp_path / "floor.sqlite"
    store = FloorStore.sqlite(floor)
    store.configure_link(LinkSettings("mega", 1000, 0))
    store.close()
    link = "mega:1000:0"
    assert cli.main(["floor", "audit", "--link", link, "--sqlite", str(floor), f"T1={path}"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["rounds"], report["pool"], report["floor_pool"], report["problems"]) == (0, 1000, 1000, [])
    store = FloorStore.sqlite(floor)
    from floor_rounds import NOTHING, round_file, seat

    store.configure_link(LinkSettings("mega", 1_000_000, 0))
    store.settle("mega", "T1", round_file("T1-1", seat(1, NOTHING[0]), community=NOTHING[1]))
    store.close()
    assert cli.main(["floor", "audit", "--link", "mega:1000000:0:1000", "--sqlite", str(floor), f"T1={path}"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] and "after 1 rounds" in report["problems"][0]


def test_serve_on_port_0_writes_the_port_it_bound_once_it_listens(tmp_path: Path) -> None:
    # A parent handing a port number on could lose it to another process before the server's
    # bind; with port 0 the server binds and says which port (issue 11 item 7).
    import os
    import signal
    import subprocess
    import sys
    import time

    import httpx

    port_file = tmp_path / "floor.port"
    proc = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--sqlite",
                             str(tmp_path / "f.sqlite"), "--link", "mega:5000000:50000", "--listen", "127.0.0.1:0",
                             "--port-file", str(port_file)],
                            env={**os.environ, "CARDSHOE_FLOOR_TOKEN": "floor-token-0123456789"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():  # renamed into place: whole when it exists
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        text = port_file.read_text(encoding="ascii")
        assert text.endswith("\n") and int(text) > 0
        r = httpx.get(f"http://127.0.0.1:{int(text)}/links", timeout=60,
                      headers={"Authorization": "Bearer floor-token-0123456789"})
        assert r.status_code == 200 and "mega" in r.text
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert f"http://127.0.0.1:{int(text)}/floor" in stderr
