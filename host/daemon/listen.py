"""The API's listening socket: bound by `cardshoe run` itself (so port 0 works) or inherited.

Why the daemon binds the socket rather than letting uvicorn do it: a parent process (a test,
the bench, a supervisor) that wants a free port used to bind port 0, read the number, close
the socket and hand the number on; between that close and the daemon's bind any other
process on the machine could take the port (and two test suites at once on one PC do). Now
the parent passes `--listen HOST:0`, the kernel picks the port at the daemon's own bind, and
the daemon tells the parent which one it got (`announce`, `write_port_file`) once the socket
listens, so a connection made on reading it is queued, never refused.

A parent that restarts the daemon and needs the same URL afterwards (an open page's
EventSource resumes on the URL it had) can do better still: bind the socket once, keep it,
and pass it to each `cardshoe run` it starts (`--listen-fd`). The port is then never free
between a kill and the restart, so nobody can take it, and connections made while the
daemon is down wait in the kernel's backlog for the new one.

A fixed port (`--listen 127.0.0.1:8600`, the default) is bound with SO_REUSEADDR, as uvicorn
did, so a daemon restarted at once after a crash can bind the port its predecessor's
connections still linger on (TIME_WAIT); Linux still refuses it while another socket
listens there.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from cardshoe.private import write_private

#: Connections the kernel queues before the daemon accepts them (uvicorn's default).
BACKLOG = 2048


class ListenError(Exception):
    """The API's listening socket cannot be had: the address is in use, not this PC's, or
    the inherited descriptor is not a bound TCP socket. The message is one line."""


def bind_api(host: str, port: int, setting: str = "api.listen") -> socket.socket:
    """A TCP socket bound to HOST:PORT and listening (PORT 0: the kernel picks a free one).

    `setting` names the option or table-file key the address came from, for the error."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"{setting}: {host!r} is not an address of this PC: {exc.strerror}") from exc
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise ListenError(f"{setting}: cannot listen on {_hostport(host, port)}: {exc.strerror}") from exc
    sock.set_inheritable(False)
    return sock


def inherited_api_socket(fd: int) -> socket.socket:
    """The bound TCP socket a parent passed as descriptor `fd`, listening."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise ListenError(f"--listen-fd: descriptor {fd} is not a socket: {exc.strerror}") from exc
    if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
        sock.detach()
        raise ListenError(f"--listen-fd: descriptor {fd} is not a TCP socket")
    if bound_port(sock) == 0:
        sock.detach()
        raise ListenError(f"--listen-fd: the socket of descriptor {fd} is not bound to an address")
    try:
        sock.listen(BACKLOG)  # harmless when the parent already listens; needed when it only bound
    except OSError as exc:
        sock.detach()
        raise ListenError(f"--listen-fd: cannot listen on descriptor {fd}: {exc.strerror}") from exc
    sock.set_inheritable(False)
    return sock


def bound_port(sock: socket.socket) -> int:
    """The port `sock` is bound to (0: not bound)."""
    return int(sock.getsockname()[1])


def url_of(sock: socket.socket) -> str:
    """`http://HOST:PORT` of the bound socket (IPv6 hosts in brackets)."""
    host = str(sock.getsockname()[0])
    return f"http://{_hostport(host, bound_port(sock))}"


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def announce(sock: socket.socket) -> None:
    """Tell a parent process where the API is: one line on stderr, whatever the log level.

    Printed only once the socket listens, so a parent may connect as soon as it reads it."""
    print(f"cardshoe run: listening on {url_of(sock)}", file=sys.stderr, flush=True)


def write_port_file(path: Path, port: int) -> None:
    """Write `PORT` and a newline to `path` atomically: a temp file beside it, renamed over it.

    A reader polling for the file therefore sees no file or the whole number, never a part."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write_private(tmp, f"{port}\n".encode("ascii"))  # 0600 like every file the daemon makes
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ListenError(f"--port-file: cannot write {path}: {exc.strerror}") from exc


def read_port_file(path: Path) -> int | None:
    """The port in a file `write_port_file` wrote, or None while it is not there yet."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    return int(text)
