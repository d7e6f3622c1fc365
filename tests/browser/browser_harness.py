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
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
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

    def restart_daemon(self) -> None:
        """Stop the HTTP server and the daemon, start both again on the same port."""
        self.stop()
        self.table.restart_daemon()
        self.start()


