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

import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PgNotInstalled", "PgStartRefused", "PgCluster", "PgPair", "FENCE", "find_bindir"]


class PgNotInstalled(RuntimeError):
    """No PostgreSQL server programs on this machine (run scripts/postgres-deps)."""


class PgStartRefused(RuntimeError):
    """The cluster cannot be started as things stand; the message says what to do, in one line."""


#: A file in a cluster's data directory that forbids starting it: written by `PgPair.promote`
#: in the old primary's, so it cannot come back as a second writer (docs/floor.md, "Failover").
FENCE = "cardshoe-fenced"


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

    def fenced(self) -> str | None:
        """Why this cluster may not be started (its fence file's text), or None."""
        try:
            return (self.data / FENCE).read_text(encoding="utf-8", errors="replace").strip() or "fenced"
        except FileNotFoundError:
            return None

    def start(self) -> None:
        """Start the server (with TCP: on a new free port if it has none yet, or that one is taken).
        Raises PgStartRefused when the cluster is fenced (an old primary after a failover)."""
        why = self.fenced()
        if why is not None:
            raise PgStartRefused(f"{self.data} is fenced ({self.data / FENCE}): {why}")
        import time

        log_file = self.directory / "server.log"
        crashed_until = time.monotonic() + 30
        tries = 0
        while tries < 5:
            tries += 1
            since = log_file.stat().st_size if log_file.exists() else 0
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
            with open(log_file, "rb") as f:
                f.seek(since)
                log = f.read().decode(errors="replace")[-2000:]
            if "could not bind" in log or "Address already in use" in log:
                self.port = 0  # someone took the port between our look and the server's bind
                continue
            if ("pre-existing shared memory block" in log or 'lock file "postmaster.pid" already exists' in log) \
                    and time.monotonic() < crashed_until:
                # A killed postmaster's backends end when they notice it gone (until then they
                # hold its shared memory), and its own PID stays taken until it is reaped:
                # PostgreSQL refuses to start over either, for a moment.
                tries -= 1
                time.sleep(0.3)
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
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return "stale", pid  # killed and not yet reaped (a container's init may never reap it)
        except (OSError, IndexError):
            pass
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

        why = self.fenced()
        if why is not None:
            raise PgStartRefused(f"{self.data} is fenced ({self.data / FENCE}): {why}")
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


# -- a primary and its hot standby (issue 24 items 3 and 4) ------------------------------------

#: The floor_meta key of the failover generation: bumped on the new primary by every promotion;
#: a floor process refuses as a writer a server whose generation is below one it has seen.
GENERATION_KEY = "generation"

_PAIR_STATE = "cardshoe-pair.json"


def _connect(dsn: str, timeout_s: int = 5) -> Any:
    import psycopg

    return psycopg.connect(dsn, autocommit=True, connect_timeout=timeout_s)


@dataclass
class PgPair:
    """Two clusters of this machine in `directory`: `a` and `b`, one the primary, the other
    (while there is one) its hot standby, fed by streaming replication through a replication
    slot and synchronous (`synchronous_standby_names = '*'`: a commit returns once the standby
    has it on disk). After a promotion the old primary is fenced and there is no standby until
    `rebuild_standby` makes one of it again."""

    directory: Path
    nodes: dict[str, PgCluster]
    primary_name: str = "a"
    standby_name: str | None = "b"
    generation: int = 1

    # -- making, opening, saving -------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path | None = None, *, tcp: bool = False) -> PgPair:
        """initdb the primary in `directory/a`, start it, make `directory/b` its synchronous
        standby (`pg_basebackup -R` through a replication slot) and start that."""
        if directory is None:
            directory = Path(tempfile.mkdtemp(prefix="cardshoe-pair-"))  # /tmp: the postgres user reaches it
        directory.mkdir(parents=True, exist_ok=True)
        PgCluster(directory)._chown(directory)
        a = PgCluster.create(directory / "a", tcp=tcp)
        pair = cls(directory, {"a": a, "b": PgCluster(directory / "b", tcp=tcp)}, "a", None, 1)
        pair._save()
        pair._make_standby("b")
        return pair

    @classmethod
    def open(cls, directory: Path) -> PgPair:
        """The pair `create` made in `directory` (its state file), as it was left."""
        try:
            state = json.loads((directory / _PAIR_STATE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PgStartRefused(f"{directory} holds no pair ({directory / _PAIR_STATE} missing): "
                                 f"cardshoe floor pg start {directory} --standby makes one") from None
        nodes = {name: PgCluster(directory / name, port=int(port), tcp=bool(state.get("tcp", False)))
                 for name, port in state["ports"].items()}
        return cls(directory, nodes, state["primary"], state["standby"], int(state["generation"]))

    @staticmethod
    def exists(directory: Path) -> bool:
        """Whether `directory` holds a pair."""
        return (directory / _PAIR_STATE).exists()

    def _save(self) -> None:
        state = {"primary": self.primary_name, "standby": self.standby_name, "generation": self.generation,
                 "ports": {n: c.port for n, c in self.nodes.items()},
                 "tcp": any(c.tcp for c in self.nodes.values())}
        tmp = self.directory / (_PAIR_STATE + ".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        os.replace(tmp, self.directory / _PAIR_STATE)

    # -- who is who --------------------------------------------------------------------------
    @property
    def primary(self) -> PgCluster:
        """The cluster that takes writes."""
        return self.nodes[self.primary_name]

    @property
    def standby(self) -> PgCluster | None:
        """The hot standby (None after a promotion, until `rebuild_standby`)."""
        return None if self.standby_name is None else self.nodes[self.standby_name]

    @property
    def writer_dsn(self) -> str:
        """libpq's multi-host DSN that lands on whichever node takes writes now
        (`target_session_attrs=read-write`): the floor's writers use it, before and after a failover."""
        a, b = self.nodes["a"], self.nodes["b"]
        return (f"host={a.directory},{b.directory} port={a.port},{b.port} user={a.user} dbname={a.database} "
                "target_session_attrs=read-write")

    @property
    def reader_dsn(self) -> str:
        """The standby's DSN, for a read-only floor (surveillance); the primary's when there is none."""
        return (self.standby or self.primary).dsn

    # -- running -----------------------------------------------------------------------------
    def ensure_started(self) -> dict[str, str]:
        """Start the primary, then the standby, unless they run, however they last ended (a fenced
        node is left down); what was done, by node."""
        done = {self.primary_name: self.primary.ensure_started()}
        if self.standby is not None:
            done[self.standby_name or ""] = self.standby.ensure_started()
        for name, node in self.nodes.items():
            if name not in done:
                done[name] = "fenced" if node.fenced() else "down"
        return done

    def stop(self, mode: str = "fast") -> None:
        """Stop both servers (the standby first, so the primary's last WAL is not waited for)."""
        for node in sorted(self.nodes.values(), key=lambda c: c is self.primary):
            if node.server_state()[0] == "running":
                node.stop(mode)

    def destroy(self) -> None:
        """Stop both servers and remove the pair's directory."""
        for node in self.nodes.values():
            node.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)

    def kill_primary(self) -> int:
        """SIGKILL the primary's postmaster (a crash); returns its PID once it takes no connection."""
        import signal
        import time

        state, pid = self.primary.server_state()
        if state != "running" or pid is None:
            raise RuntimeError(f"the primary {self.primary.data} does not run ({state})")
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while self.primary.server_state()[0] in ("running", "foreign") or self.primary.answers(1):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the primary (PID {pid}) still answers 30 s after SIGKILL")
            time.sleep(0.05)
        return pid

    # -- the standby -------------------------------------------------------------------------
    def _make_standby(self, name: str) -> None:
        """`name`'s data directory made a copy of the primary's (pg_basebackup -R through a
        slot of its own), started, and made the primary's synchronous standby."""
        import time

        primary, node = self.primary, self.nodes[name]
        node.directory.mkdir(parents=True, exist_ok=True)
        node._chown(node.directory)
        slot = f"cardshoe_{name}"
        with _connect(primary.dsn) as conn:
            if not conn.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,)).fetchall():
                conn.execute("SELECT pg_create_physical_replication_slot(%s)", (slot,))
        primary._run(["pg_basebackup", "-h", str(primary.directory), "-p", str(primary.port), "-U", primary.user,
                      "-D", str(node.data), "-X", "stream", "-S", slot, "-R", "-c", "fast"])
        # -R wrote standby.signal and primary_conninfo; ours names the standby (pg_stat_replication
        # shows it) and its slot, so the primary keeps every WAL segment it has not taken.
        with open(node.data / "postgresql.auto.conf", "a", encoding="utf-8") as conf:
            conf.write(f"primary_conninfo = 'host={primary.directory} port={primary.port} user={primary.user} "
                       f"application_name={slot}'\nprimary_slot_name = '{slot}'\nhot_standby = on\n"
                       "synchronous_standby_names = ''\n")
        (node.data / FENCE).unlink(missing_ok=True)  # a copy of a fenced node's is not this node's fence
        node.start()
        deadline = time.monotonic() + 60
        with _connect(primary.dsn) as conn:
            while not conn.execute("SELECT 1 FROM pg_stat_replication WHERE application_name = %s AND state = "
                                   "'streaming'", (slot,)).fetchall():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the standby {node.data} did not stream within 60 s: see "
                                       f"{node.directory / 'server.log'}")
                time.sleep(0.1)
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            conn.execute("SELECT pg_reload_conf()")
            while not conn.execute("SELECT 1 FROM pg_stat_replication WHERE application_name = %s AND "
                                   "sync_state = 'sync'", (slot,)).fetchall():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the standby {node.data} did not become synchronous within 60 s")
                time.sleep(0.1)
        self.standby_name = name
        self._save()

    def rebuild_standby(self) -> str:
        """After a promotion: make the fenced old primary the new primary's standby again. Its
        data directory is kept beside it (`data.fenced-TIME`: it may hold transactions the new
        primary never received, evidence for whoever looks), and a fresh copy is taken."""
        import time

        if self.standby_name is not None:
            raise PgStartRefused(f"the pair in {self.directory} has a standby ({self.standby_name}) already")
        name = next(n for n in self.nodes if n != self.primary_name)
        node = self.nodes[name]
        if node.server_state()[0] == "running":
            node.stop("fast")
        kept = node.directory / f"data.fenced-{time.strftime('%Y%m%dT%H%M%S')}"
        if node.data.exists():
            os.replace(node.data, kept)
        self._make_standby(name)
        return str(kept)

    def promote(self) -> int:
        """Fail over: the old primary is stopped if it still runs and fenced (a file in its data
        directory that `PgCluster.start` refuses); the standby is promoted (`pg_ctl promote`),
        made to wait for no standby, and the floor's generation is bumped on it (floor_meta).
        Returns the new generation once the new primary has taken that write."""
        import time

        if self.standby_name is None or self.standby is None:
            raise PgStartRefused(f"the pair in {self.directory} has no standby to promote (promoted already: "
                                 f"{self.primary_name} is the primary)")
        old, new = self.primary, self.standby
        if old.server_state()[0] == "running":
            old.stop("immediate")  # never two writers, even for a moment
        (old.data / FENCE).write_text(
            f"fenced at {time.strftime('%Y-%m-%d %H:%M:%S %Z')}: the standby {new.data} was promoted in its place "
            f"(generation {self.generation + 1}); this old primary may hold transactions the new one never "
            f"received. Do not start it: make it the new primary's standby (cardshoe floor pg standby "
            f"{self.directory})\n", encoding="utf-8")
        if new.server_state()[0] != "running":
            new.ensure_started()
        new._run(["pg_ctl", "-D", str(new.data), "-w", "-t", "60", "promote"])
        deadline = time.monotonic() + 60
        while True:
            try:
                with _connect(new.dsn) as conn:
                    if not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                        conn.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
                        conn.execute("SELECT pg_reload_conf()")
                        generation = bump_generation(conn)
                        break
            except Exception:  # noqa: BLE001 - still in recovery, or not taking connections yet
                if time.monotonic() > deadline:
                    raise
            if time.monotonic() > deadline:
                raise RuntimeError(f"{new.data} did not leave recovery within 60 s of pg_ctl promote")
            time.sleep(0.1)
        self.primary_name, self.standby_name, self.generation = self.standby_name, None, generation
        self._save()
        return generation

    def status(self) -> dict[str, Any]:
        """Which node is primary, each node's state, the replication's state and lag (bytes of
        WAL the standby has not replayed, and seconds) and whether it is synchronous."""
        out: dict[str, Any] = {"directory": str(self.directory), "primary": self.primary_name,
                               "standby": self.standby_name, "generation": self.generation,
                               "writer_dsn": self.writer_dsn, "reader_dsn": self.reader_dsn, "nodes": {}}
        for name, node in self.nodes.items():
            info: dict[str, Any] = {"data": str(node.data), "dsn": node.dsn, "server": node.server_state()[0],
                                    "fenced": node.fenced()}
            if info["server"] == "running":
                try:
                    with _connect(node.dsn, 3) as conn:
                        info["in_recovery"] = bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])
                        if info["in_recovery"]:
                            row = conn.execute("SELECT status, EXTRACT(EPOCH FROM now() - "
                                               "pg_last_xact_replay_timestamp()) FROM pg_stat_wal_receiver").fetchone()
                            info["receiver"] = None if row is None else row[0]
                            info["replay_delay_s"] = None if row is None or row[1] is None else float(row[1])
                        else:
                            info["replication"] = [
                                {"standby": r[0], "state": r[1], "sync_state": r[2], "lag_bytes": int(r[3] or 0),
                                 "replay_lag_s": None if r[4] is None else float(r[4])}
                                for r in conn.execute(
                                    "SELECT application_name, state, sync_state, pg_wal_lsn_diff(pg_current_wal_lsn(),"
                                    " replay_lsn), EXTRACT(EPOCH FROM replay_lag) FROM pg_stat_replication"
                                    " ORDER BY application_name").fetchall()]
                            info["synchronous_standby_names"] = conn.execute(
                                "SHOW synchronous_standby_names").fetchone()[0]
                except Exception as exc:  # noqa: BLE001 - status reports what it sees
                    info["error"] = " ".join(str(exc).split())
            out["nodes"][name] = info
        return out


def bump_generation(conn: Any) -> int:
    """Raise the floor's failover generation (floor_meta) on the server of `conn` by one; the new value."""
    conn.execute("CREATE TABLE IF NOT EXISTS floor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    row = conn.execute("SELECT value FROM floor_meta WHERE key = %s", (GENERATION_KEY,)).fetchone()
    generation = (int(row[0]) if row else 1) + 1
    conn.execute("INSERT INTO floor_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
                 "EXCLUDED.value", (GENERATION_KEY, str(generation)))
    return generation
