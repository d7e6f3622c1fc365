"""The browser test's harness: a harness `Table` served over real HTTP (uvicorn)."""

from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for _p in (ROOT / "tests" / "daemon", ROOT / "tests" / "browser"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from daemon_harness import TOKEN, Table, wait_for  # noqa: E402

from cardshoe.api import create_app  # noqa: E402

SUPERVISOR = "supervisor-token-0123456789abcdef"
SURVEILLANCE = "surveillance-token-0123456789abcd"
CONTROLLER = "controller-token-0123456789abcdef"
ROLE_TOKENS = {SUPERVISOR: ["supervisor"], SURVEILLANCE: ["surveillance"], CONTROLLER: ["controller"]}
SHOTS = ROOT / "var" / "browser"


class Served:
    """`cardshoe run`'s HTTP side for a harness `Table`: uvicorn on a free local port."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.port = 0
        self._sock: socket.socket | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        import uvicorn

        if self._sock is None:
            # Bound once and kept until close(): a restart serves the same socket again, so the
            # page's EventSource resumes on its URL and no other process can take the port
            # while the server is down (re-binding the number after a stop could lose it).
            self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._sock.bind(("127.0.0.1", 0))
            self._sock.listen(128)
            self.port = self._sock.getsockname()[1]
        sock = self._sock.dup()  # uvicorn closes the sockets it served at shutdown: a duplicate
        server = uvicorn.Server(uvicorn.Config(
            create_app(self.table.daemon, TOKEN, role_tokens=ROLE_TOKENS, stopping=lambda: server.should_exit),
            log_level="warning", access_log=False, timeout_graceful_shutdown=2))
        self._server = server
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        wait_for(lambda: server.started, timeout=20, what="uvicorn to start")

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            assert self._thread is not None
            self._thread.join(20)
            self._server = None

    def close(self) -> None:
        """Stop serving and give the port back."""
        self.stop()
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def restart_daemon(self) -> None:
        """Stop the HTTP server and the daemon, start both again on the same socket (same port)."""
        self.stop()
        self.table.restart_daemon()
        self.start()




class BoardTable:
    """The whole table from real parts for the browser: the real firmware on the virtual board
    (deployed with `cardshoe flash`), `cardshoe run` in its own process with a token file per
    role, cards dealt through the board's barcode reader and exit sensor (`cardshoe.hil.bench`).
    It offers the calls the test makes of the pty `Table` (ok, round, deal, ...)."""

    def __init__(self, workdir: Path, game: str, seats: int = 7) -> None:
        from cardshoe.hil.bench import Bench, TableSpec

        workdir.mkdir(parents=True, exist_ok=True)
        roles = []
        for role, token in (("supervisor", SUPERVISOR), ("surveillance", SURVEILLANCE), ("controller", CONTROLLER)):
            path = workdir / f"{role}.token"
            path.write_text(token + "\n")
            path.chmod(0o600)
            roles.append(f'{role} = "{path}"')
        self.bench = Bench(workdir / "bench", TableSpec(game, seats=seats, name="browser"),
                           extra_config="[roles]\n" + "\n".join(roles) + "\n")

    @property
    def url(self) -> str:
        return self.bench.client.base_url

    def power_on_and_load(self) -> None:
        """Deploy the firmware, start the daemon, load a barcode shoe (NEW_SHOE to the firmware)."""
        self.bench.flash()
        self.bench.start_daemon()
        self.bench.load_shoe()

    def ok(self, method: str, url: str, json: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.bench.client.request(method, url, json)

    def round(self, round_id: str) -> dict[str, Any]:
        return self.bench.client.round(round_id)

    def deal(self, codes: list[int]) -> None:
        """Each card's barcode to the reader, then the exit sensor; waits until the daemon journaled it."""
        for code in codes:
            self.bench.deal(code)

    def deal_complete(self) -> None:
        """The dealer's deal-complete key on the shoe (a count point); waits for its event."""
        self.bench.key("deal_complete")

    def restart_daemon(self) -> None:
        """SIGKILL the daemon and start it again (a crashed table PC); the shoe keeps running."""
        self.bench.restart_daemon()

    def close(self) -> None:
        self.bench.close()
