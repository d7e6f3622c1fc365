"""The daemon test harness: a real journal, a real pseudo-terminal, the firmware's codec.

`Table` starts a `Daemon` on a pluggable pty and drives it through the HTTP API in-process
(FastAPI's TestClient), with a `WireShoe` (firmware/lib/wire.py under CPython) on the pty's
other end.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
for _p in (ROOT / "firmware" / "lib", ROOT / "tests" / "cpython", ROOT / "tests" / "link", ROOT / "tests" / "daemon"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from fastapi.testclient import TestClient  # noqa: E402

from cardshoe.api import create_app  # noqa: E402
from cardshoe.cards import parse_card  # noqa: E402
from cardshoe.daemon.config import LinkTiming, TableConfig  # noqa: E402
from cardshoe.daemon.daemon import Daemon  # noqa: E402
from cardshoe.journal import JournalReader  # noqa: E402

from link_ptys import PluggablePty  # noqa: E402
from daemon_wireshoe import ShoeState, WireShoe  # noqa: E402

TOKEN = "test-table-token-0123456789"
SERIAL = 0x00C0FFEE
KEY = bytes(range(32))
DECK_ID = 0x1234ABCD


def wait_for(predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise TimeoutError(f"timed out waiting for {what}")


def started_port(port_file: Path, proc: Any, log: Path | None = None, timeout: float = 60.0) -> int:
    """The port a `cardshoe run --listen 127.0.0.1:0 --port-file PORT_FILE` child bound.

    The file appears (renamed into place, so whole) only once the API's socket listens, so
    the port is the daemon's own: nothing can take it between a look and a bind, as with a
    port picked here and handed on. Fails at once if the child exits first."""
    def ready() -> int | None:
        if proc.poll() is not None:
            raise AssertionError(f"cardshoe run exited {proc.returncode} before listening: "
                                 f"{log.read_text() if log is not None else ''}")
        try:
            text = port_file.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        assert text.endswith("\n") and text[:-1].isdigit(), repr(text)  # docs/api.md: PORT and a newline
        return int(text)
    port: int = wait_for(ready, timeout, f"cardshoe run to write {port_file}")
    return port


class Table:
    """One table: daemon + API client + scripted shoe on a pty."""

    def __init__(self, tmp_path: Path, game: str, seats: int = 7, *, dealing: str = "automated",
                 method: str | None = None, draw_magic: bool = False, **settings: Any) -> None:
        self.tmp_path = tmp_path
        tmp_path.mkdir(parents=True, exist_ok=True)
        # Given to every Daemon this table starts (e.g. an injected clock: tests/daemon/test_daemon_gaming_day.py).
        self.daemon_kwargs: dict[str, Any] = settings.pop("daemon_kwargs", {})
        self.plug = PluggablePty(tmp_path / "tty")
        self.config = TableConfig(port=str(self.plug.path), game=game, seats=seats,
                                  name=settings.pop("name", "T1"),
                                  dealing=dealing, method=method, journal=tmp_path / "journal.sqlite",
                                  draw_magic=draw_magic,
                                  link=settings.pop("link", LinkTiming(heartbeat_ms=2000, resend_ms=100,
                                                                       resend_max_ms=400)),
                                  **settings)
        self.keys = {SERIAL: KEY}
        self.daemon = self._start()
        self.client = self._client()
        self.shoe = WireShoe(self.plug, SERIAL, KEY)
        self.shoe_on = False

    def _start(self, **kwargs: Any) -> Daemon:
        daemon = Daemon(self.config, keys=self.keys.get, randbelow=lambda n: n - 1, **{**self.daemon_kwargs, **kwargs})
        daemon.start()
        wait_for(lambda: daemon.link_up, what="the daemon to open the pty")
        return daemon

    def _client(self) -> TestClient:
        return TestClient(create_app(self.daemon, TOKEN), headers={"Authorization": f"Bearer {TOKEN}"})

    def restart_daemon(self) -> None:
        """Stop the daemon (as a kill would: nothing in RAM survives) and start a new one."""
        self.client.close()
        self.daemon.stop()
        self.daemon = self._start()
        self.client = self._client()

    def kill_daemon(self) -> None:
        self.client.close()
        self.daemon.stop()

    def start_daemon(self, **kwargs: Any) -> None:
        self.daemon = self._start(**kwargs)
        self.client = self._client()

    def power_on_and_load(self, deck_id: int = DECK_ID) -> int:
        """Boot the shoe and start a barcode shoe session through the API."""
        self.shoe.power_on()
        self.shoe_on = True
        self.shoe.wait_acked()
        wait_for(lambda: self.daemon.shoe_serial == SERIAL, what="HELLO")
        r = self.client.post("/shoe/load", json={"deck_id": deck_id})
        assert r.status_code == 202, r.text
        shoe_no = int(r.json()["shoe_no"])
        wait_for(lambda: self.shoe.state.shoe_no == shoe_no, what="NEW_SHOE at the shoe")
        self.shoe.wait_acked()
        wait_for(lambda: self.daemon.status()["shoes"].get(str(SERIAL), {}).get("shoe_no") == shoe_no,
                 what="the daemon to record the shoe as loaded")
        return shoe_no

    def ok(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        r = self.client.request(method, url, **kwargs)
        assert r.status_code < 300, f"{method} {url}: {r.status_code} {r.text}"
        data: dict[str, Any] = r.json()
        return data

    def settle_linked(self, round_id: str, timeout: float = 60.0) -> dict[str, Any]:
        """Settle a round of a linked table as a dealer does (docs/api.md, the settle): a 503
        saying the floor did not answer in time or has not yet received the round
        (`FloorUnreachable`, `FloorWaiting`) means "settle it again shortly", so it is asked
        again until `timeout`; any other answer is final (a refusal fails the test)."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.client.post(f"/rounds/{round_id}/settle", json={})
            error = r.json().get("detail", {}).get("error") if r.status_code == 503 else None
            if error not in ("FloorUnreachable", "FloorWaiting") or time.monotonic() > deadline:
                assert r.status_code < 300, f"POST /rounds/{round_id}/settle: {r.status_code} {r.text}"
                data: dict[str, Any] = r.json()
                return data
            time.sleep(0.5)

    def deal(self, codes: list[int]) -> None:
        for code in codes:
            self.shoe.deal(code)
        self.shoe.wait_acked()

    def round(self, round_id: str) -> dict[str, Any]:
        return self.ok("GET", f"/rounds/{round_id}")

    def close(self) -> None:
        self.client.close()
        if self.shoe_on:
            self.shoe.power_off()
        self.daemon.stop()
        self.plug.close()


__all__ = ["DECK_ID", "KEY", "SERIAL", "TOKEN", "ShoeState", "Table", "WireShoe", "wait_for"]


# A two-seat Three Card Poker round, shared by the link-fault and freshness tests: seat 2
# ante, seat 5 pair plus, dealt HANDS in order (TCP 3.7: three to each seat, then the dealer).
HANDS = ["Ah", "Kh", "Qh", "2c", "2d", "9s", "Jc", "8d", "4s"]


def open_two_seat_round(table: Table) -> str:
    """Open a round with seat 2 (ante 1000) and seat 5 (pair plus 500); returns its id."""
    rid = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 5, "wager": "pair_plus", "amount": 500})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    return rid


def check_hands(table: Table, rid: str) -> None:
    """Assert the round holds HANDS by seat and every card was placed once."""
    snap = table.round(rid)
    assert snap["hands"]["seat 2"] == list(HANDS[0:3])
    assert snap["hands"]["seat 5"] == list(HANDS[3:6])
    assert snap["hands"]["dealer"] == list(HANDS[6:9])
    assert sorted(int(k) for k in snap["placements"]) == list(range(1, 10))


def journal(table: Table) -> JournalReader:
    """A reader of the table's journal."""
    return JournalReader(table.config.journal)
