"""A daemon killed mid-round (SIGKILL, the real `cardshoe run` in a child process, with
the shoe's key in a real key store) and restarted: no card lost, none repeated, and the
settlement equals that of the same round dealt without the kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from daemon_harness import DECK_ID, KEY, SERIAL, TOKEN, Table, started_port, wait_for
from link_ptys import PluggablePty
from daemon_wireshoe import WireShoe

from cardshoe.cards import parse_card
from cardshoe.journal import JournalReader
from cardshoe.journal.replay import replay
from cardshoe.settlement import parse_round, settle

GAME = "megalink-three-card-poker"
DEAL = ["Ah", "Kh", "Qh", "2c", "7d", "9s", "8h", "8d", "4c", "Jc", "Jd", "3s", "Tc", "Td", "5s"]
# seats 2, 4, 6 (3 x 3), dealer (3), community 2 + burn


class DaemonProcess:
    def __init__(self, tmp: Path, tty: Path) -> None:
        self.journal = tmp / "journal.sqlite"
        self.port_file = tmp / "api.port"
        self.tty = tty
        self.log = tmp / "daemon.log"
        self.keys = tmp / "keys"
        self.keys.mkdir(mode=0o700)
        fd = os.open(self.keys / f"{SERIAL}.key", os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, KEY.hex().encode() + b"\n")
        os.close(fd)
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> None:
        env = dict(os.environ, CARDSHOE_TOKEN=TOKEN)
        args = [sys.executable, "-m", "cardshoe.cli", "run", "--port", str(self.tty), "--game", GAME,
                "--seats", "7", "--name", "T9", "--journal", str(self.journal), "--keys", str(self.keys),
                "--listen", "127.0.0.1:0", "--port-file", str(self.port_file)]
        # Each start binds a port of its own and says which: the killed daemon's file is
        # removed first so the old port is never read. What must survive the restart is the
        # journal and the shoe's link, not the URL (a client reconnects to the new one).
        self.port_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen(args, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{started_port(self.port_file, self.proc, self.log)}"
        client = httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if client.get("/status").json()["link_up"]:
                    self.client = client
                    return
            except (httpx.HTTPError, KeyError):
                pass
            assert self.proc.poll() is None, self.log.read_text()
            time.sleep(0.05)
        raise TimeoutError(self.log.read_text())

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.client.close()

    def stop(self) -> int | None:
        """SIGTERM, as systemd stops it: a graceful stop; returns the exit status."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            return self.proc.wait(10)
        return None

    def ok(self, method: str, url: str, **kw: Any) -> dict[str, Any]:
        r = self.client.request(method, url, **kw)
        assert r.status_code < 300, f"{method} {url}: {r.status_code} {r.text}"
        data: dict[str, Any] = r.json()
        return data


def _play(ok: Any, deal: Any, rid: str, *, between: Any = None) -> dict[str, Any]:
    for seat in (2, 4, 6):
        ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": "ante", "amount": 1000})
        ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": "pair_plus", "amount": 500})
    ok("POST", f"/rounds/{rid}/no-more-bets")
    deal(DEAL[:7], DEAL[7:])
    for seat, choice in ((2, "play"), (4, "play"), (6, "fold")):
        ok("POST", f"/rounds/{rid}/decisions", json={"seat": seat, "choice": choice})
    result: dict[str, Any] = ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    return result


def test_a_daemon_killed_mid_round_loses_and_repeats_no_card(tmp_path: Path, make_table) -> None:  # type: ignore[no-untyped-def]
    # The reference: the same round at a daemon that is never killed.
    ref: Table = make_table(GAME, 7)
    ref.power_on_and_load()
    ref_rid = ref.ok("POST", "/rounds")["round_id"]

    def ref_deal(first: list[str], rest: list[str]) -> None:
        ref.deal([parse_card(c) for c in first + rest])

    reference = _play(ref.ok, ref_deal, ref_rid)

    plug = PluggablePty(tmp_path / "tty")
    daemon = DaemonProcess(tmp_path, plug.path)
    shoe = WireShoe(plug, SERIAL, KEY)
    try:
        daemon.start()
        shoe.power_on()
        shoe.wait_acked()
        shoe_no = daemon.ok("POST", "/shoe/load", json={"deck_id": DECK_ID})["shoe_no"]
        wait_for(lambda: shoe.state.shoe_no == shoe_no, what="NEW_SHOE")
        shoe.wait_acked()
        wait_for(lambda: daemon.ok("GET", "/status")["shoes"].get(str(SERIAL), {}).get("shoe_no") == shoe_no,
                 what="shoe loaded")
        rid = daemon.ok("POST", "/rounds")["round_id"]

        def deal(first: list[str], rest: list[str]) -> None:
            for card in first:
                shoe.deal(parse_card(card))
            shoe.wait_acked()
            # Two cards in flight as the daemon dies; the rest dealt while it is down.
            shoe.deal(parse_card(rest[0]))
            shoe.deal(parse_card(rest[1]))
            daemon.kill()
            for card in rest[2:]:
                shoe.deal(parse_card(card))
            time.sleep(0.3)  # the shoe resends into the void meanwhile
            daemon.start()
            shoe.wait_acked(10)

        settlement = _play(daemon.ok, deal, rid)
        export = daemon.ok("GET", f"/rounds/{rid}/export")
        snap = daemon.ok("GET", f"/rounds/{rid}")
        assert daemon.stop() == 0, daemon.log.read_text()
    finally:
        daemon.stop()
        shoe.power_off()
        plug.close()

    assert snap["hands"]["seat 2"] == list(DEAL[0:3])
    assert snap["hands"]["seat 6"] == list(DEAL[6:9])
    assert snap["hands"]["community"] == list(DEAL[12:14])
    with JournalReader(daemon.journal) as j:
        indices = [e.data()["index"] for e in j.entries(("frame",)) if e.data()["type"] == "CARD"]
        starts = [e.data() for e in j.entries(("daemon",)) if e.data()["type"] == "daemon_started"]
        stops = [e.data() for e in j.entries(("daemon",)) if e.data()["type"] == "daemon_stopped"]
    assert indices == list(range(1, len(DEAL) + 1))  # none lost, none journaled twice
    assert len(starts) == 2 and starts[1]["epoch"] > starts[0]["epoch"]
    assert len(stops) == 1  # the killed run left none; the SIGTERM stop drained and recorded it
    assert starts[1]["restored_inputs"] > 0 and starts[1]["rebuild_mismatches"] == 0
    # Same settlement as the uninterrupted reference (round ids and table names aside).
    ref_s, got_s = dict(reference), dict(settlement)
    ref_s.pop("round_id"), got_s.pop("round_id")
    assert got_s == ref_s
    assert settle(parse_round(export)).to_json() == settlement
    report, _ = replay(daemon.journal)
    assert report.ok, report.mismatches
