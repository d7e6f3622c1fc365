"""The floor served for real in a test or the benchmark: uvicorn on a socket of port 0 in a thread, and a TCP
relay in front of it whose connections the test can cut and restore (the table-to-floor
network), so the table's client speaks real HTTP over real sockets."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


class FloorServer:
    """`app` served on 127.0.0.1, on a port of the kernel's choosing."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the floor server did not start")
            time.sleep(0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


class Relay:
    """A TCP relay from a port of its own to `port`; `cut()` drops every connection and
    refuses new ones until `restore()`."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1024)
        self.port = int(self.listener.getsockname()[1])
        self.up = True
        # While set, the floor's answers are thrown away (the requests still reach it): the cut
        # that falls after the floor acted and before its answer reached the table.
        self.answers_lost = False
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                if self.closed:
                    return
                time.sleep(0.05)  # e.g. out of descriptors for a moment: the relay goes on
                continue
            if not self.up:
                client.close()  # the cable is out: the connection is dropped at once
                continue
            # The floor is dialled on a thread of the connection's own, so a slow answer to one
            # connect never holds up the next table's (hundreds of tables share one relay).
            threading.Thread(target=self._open, args=(client,), daemon=True).start()

    def _open(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(("127.0.0.1", self.target))
        except OSError:
            client.close()
            return
        with self.lock:
            if not self.up:  # cut while dialling
                client.close()
                server.close()
                return
            self.conns += [client, server]
        ended: list[bool] = []
        for a, b, answers in ((client, server, False), (server, client, True)):
            threading.Thread(target=self._pump, args=(a, b, answers, ended), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, answers: bool = False,
              ended: list[bool] | None = None) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if answers and self.answers_lost:
                    continue
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with self.lock:
            if ended is None:
                return
            ended.append(answers)
            if len(ended) == 2:  # both directions done: the connection's descriptors are given back
                for s in (src, dst):
                    if s in self.conns:
                        self.conns.remove(s)
                    s.close()

    def cut(self) -> None:
        self.up = False
        with self.lock:
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.conns.clear()

    def restore(self) -> None:
        self.up = True
        self.answers_lost = False

    def close(self) -> None:
        self.closed = True
        self.cut()
        self.listener.close()
