"""A PostgreSQL server of the machine's own installation, started in a directory of ours.

The tests, the floor benchmark and `cardshoe floor pg start` run a throwaway cluster:
`initdb` in a fresh directory, then `pg_ctl start` with its socket in that directory, so two
runs at once never share a server or a file. The tests and the benchmark connect through that
socket only (`tcp=False`: no TCP at all, so no port any other process could take between our
choice of a number and the server's bind; the number then only names the socket file,
`.s.PGSQL.PORT`, in a directory of ours). `cardshoe floor pg start` also listens on TCP on a
free port of 127.0.0.1 for clients that need it (PostgreSQL cannot bind port 0 and report
it, so there a port taken in the gap is retried).
PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user
(created by Debian's `postgresql` package, which `scripts/postgres-deps` installs) and its
programs run through `runuser`. Nothing is fetched at run time.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PgNotInstalled", "PgStartRefused", "PgCluster", "find_bindir"]


class PgNotInstalled(RuntimeError):
    """No PostgreSQL server programs on this machine (run scripts/postgres-deps)."""


class PgStartRefused(RuntimeError):
    """The cluster cannot be started as things stand; the message says what to do, in one line."""


def find_bindir() -> Path:
    """The directory of `initdb`, `pg_ctl` and `postgres`: $CARDSHOE_PG_BINDIR, Debian's newest
    /usr/lib/postgresql/N/bin, or the PATH."""
    env = os.environ.get("CARDSHOE_PG_BINDIR")
    if env:
        return Path(env)
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name)
                    if p.parent.parent.name.isdigit() else 0)
    if debian:
        return debian[-1].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    raise PgNotInstalled("PostgreSQL's initdb is not installed: run scripts/postgres-deps "
                         "(Debian's postgresql package)")


#: The port number of a cluster without TCP: it names the socket file `.s.PGSQL.5432`, which
#: is in the cluster's own directory, so two clusters never clash over it.
_SOCKET_ONLY_PORT = 5432


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgCluster:
    """One cluster in `directory` (`data/` inside it, the socket beside it)."""

    directory: Path
    port: int = 0
    user: str = "cardshoe"
    database: str = "floor"
    tcp: bool = True
    """Also listen on TCP (127.0.0.1:port); False: the socket in `directory` only."""

    @classmethod
    def create(cls, directory: Path | None = None, *, tcp: bool = True) -> PgCluster:
        """initdb a new cluster (in a fresh temporary directory unless one is given) and start it."""
        if directory is None:
            # Under /tmp itself, not a test's tmp_path: the postgres user must reach it.
            directory = Path(tempfile.mkdtemp(prefix="cardshoe-pg-"))
        directory.mkdir(parents=True, exist_ok=True)
        cluster = cls(directory, tcp=tcp)
        cluster._chown(directory)
        cluster._run(["initdb", "-D", str(cluster.data), "-U", cluster.user, "--auth=trust", "-E", "UTF8",
                      "--no-instructions"])
        cluster.start()
        cluster._run(["createdb", "-h", str(cluster.directory), "-p", str(cluster.port), "-U", cluster.user,
                      cluster.database])
        return cluster

    @property
    def data(self) -> Path:
        """The cluster's data directory."""
        return self.directory / "data"

    @property
    def dsn(self) -> str:
        """A libpq connection string to the cluster's database over its socket."""
        return f"host={self.directory} port={self.port} user={self.user} dbname={self.database}"

    @property
    def tcp_dsn(self) -> str:
        """The same over TCP on 127.0.0.1 (a cluster started with `tcp=True`)."""
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname={self.database}"

    def _as_root(self) -> bool:
        return os.geteuid() == 0

    def _chown(self, path: Path) -> None:
        if self._as_root():
            pw = pwd.getpwnam("postgres")
            os.chown(path, pw.pw_uid, pw.pw_gid)
            os.chmod(path, 0o700)

    def _run(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        program = str(find_bindir() / argv[0])
        cmd = [program, *argv[1:]]
        if self._as_root():
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
        if check and done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
        return done

    def start(self) -> None:
        """Start the server (with TCP: on a new free port if it has none yet, or that one is taken)."""
        for _ in range(5):
            if not self.port:
                # Without TCP the number only names the socket file in our own directory.
                self.port = _free_port() if self.tcp else _SOCKET_ONLY_PORT
            listen = "127.0.0.1" if self.tcp else "''"
            options = (f"-c listen_addresses={listen} -c port={self.port} -c unix_socket_directories={self.directory}"
                       " -c fsync=on -c max_connections=200 -c shared_buffers=32MB")
            done = self._run(["pg_ctl", "-D", str(self.data), "-l", str(self.directory / "server.log"), "-w",
                              "-t", "60", "-o", options, "start"], check=False)
            if done.returncode == 0:
                return
            log = (self.directory / "server.log").read_text(errors="replace")[-2000:]
            if "could not bind" in log or "Address already in use" in log:
                self.port = 0  # someone took the port between our look and the server's bind
                continue
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()} {log}")
        raise RuntimeError("pg_ctl start: no free port after 5 tries")

    def server_state(self) -> tuple[str, int | None]:
        """What `data/postmaster.pid` says: ("stopped", None) without one; ("running", pid)
        when its process is this cluster's server; ("stale", pid) when no process has that id
        (the server died: a crash, a power cut, `kill -9`); ("foreign", pid) when a process
        of that id runs but is not this cluster's server (the id was reused)."""
        pidfile = self.data / "postmaster.pid"
        try:
            first = pidfile.read_text(encoding="ascii", errors="replace").splitlines()[:1]
        except FileNotFoundError:
            return "stopped", None
        if not first or not first[0].strip().lstrip("-").isdigit():
            return "stale", None
        pid = abs(int(first[0].strip()))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return "stale", pid
        except PermissionError:
            pass  # alive, another user's
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return "foreign", pid
        ours = any(Path(os.fsdecode(a)).name.startswith("postgres") for a in cmdline[:1]) \
            and os.fsencode(str(self.data)) in cmdline
        return ("running" if ours else "foreign"), pid

    def answers(self, timeout_s: float = 3.0) -> bool:
        """Whether the server takes a connection to the cluster's database now."""
        import psycopg

        try:
            with psycopg.connect(self.dsn, connect_timeout=max(1, int(timeout_s))) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def ensure_started(self, wait_s: float = 30.0) -> str:
        """Start the server unless it runs, however the last one ended; returns what was done
        ("running", "started", "started after a crash"). Never returns without a server that
        answers: raises PgStartRefused saying what to do."""
        import time

        state, pid = self.server_state()
        where = self.data / "postmaster.pid"
        if state == "foreign":
            raise PgStartRefused(f"{where} names PID {pid}, a process that is not this cluster's server (a stale "
                                 f"file whose PID was reused): check that no PostgreSQL runs on {self.data}, remove "
                                 "the file, and start again")
        if state == "running":
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if self.answers():
                    return "running"
                if self.server_state()[0] != "running":
                    break  # it went while we waited: start it below
                time.sleep(0.2)
            else:
                raise PgStartRefused(f"PostgreSQL (PID {pid}) holds {self.data} but does not answer: see "
                                     f"{self.directory / 'server.log'}, or stop it (cardshoe floor pg stop "
                                     f"{self.directory}) and start again")
        self.start()  # a stale postmaster.pid is the server's own to replace: its PID is gone
        if not self.answers(10):
            raise PgStartRefused(f"pg_ctl started PostgreSQL on {self.data} but it does not answer: see "
                                 f"{self.directory / 'server.log'}")
        return "started after a crash" if state == "stale" else "started"

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`fast`: sessions cut, a clean shutdown; `immediate`: as a crash)."""
        self._run(["pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop"], check=False)

    def restart(self, mode: str = "fast") -> None:
        """Stop and start the server on the same port."""
        self.stop(mode)
        self.start()

    def destroy(self) -> None:
        """Stop the server and remove its directory."""
        self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)
