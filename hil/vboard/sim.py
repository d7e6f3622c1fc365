"""The sim channel: the bench's side of the virtual reader, exit sensor, keys and faults.

INTERFACES.md is the contract. The bench listens on a UNIX stream socket; the firmware's
unix board connects at each boot. ASCII lines ended by `\\n` both ways:
bench -> firmware `rfid <HEX>`, `barcode <TEXT>`, `exit`, `key <name>`, `jam <on|off>`,
`lid <open|closed>`, `reader <ok|fail>`; firmware -> bench `ready <boot counter>`,
`led <off|on|blink>`.

One thread owns the listening socket and the current connection. A new connection
replaces the old one (the firmware that made the old one has been restarted), so events
always reach the running firmware or raise `SimNotConnected`: an event is never queued
for a board that is not listening, as a real reader's tag would not be.
"""

from __future__ import annotations

import collections
import os
import select
import socket
import threading
from pathlib import Path

from .errors import BoardStateError, SimNotConnected, SimProtocolError, SimTimeout

KEYS = ("new_round", "deal_complete", "exposure", "end_shoe")
LED_STATES = ("off", "on", "blink")
_MAX_LINE = 4096
_HISTORY = 10_000
_SEND_TIMEOUT_S = 5.0


class Sim:
    """The bench end of the sim channel, listening on `path`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if self.path.exists() or self.path.is_symlink():
            self.path.unlink()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.path))
        self._listener.listen(4)
        self._cond = threading.Condition()
        self._send_lock = threading.Lock()
        self._conn: socket.socket | None = None
        self._connections = 0
        # Every firmware -> bench line with the number of the connection it came on.
        self._lines: collections.deque[tuple[int, str]] = collections.deque(maxlen=_HISTORY)
        self._first_live_connection = 1  # `ready` on an older connection is stale
        self._led: str | None = None
        self._closed = False
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name=f"vboard-sim-{self.path.name}", daemon=True)
        self._thread.start()

    # --- bench -> firmware -------------------------------------------------------------

    def present_rfid(self, uid: bytes) -> None:
        """The RFID reader sees the tag `uid` now (call twice for a double read)."""
        if not 1 <= len(uid) <= 10:
            raise ValueError(f"an RFID UID is 1 to 10 bytes, not {len(uid)}")
        self.send("rfid " + uid.hex().upper())

    def present_barcode(self, text: str) -> None:
        """The barcode module emits `text` (may be garbage, but one ASCII line)."""
        self.send("barcode " + text)

    def exit_sensor(self) -> None:
        """The exit sensor sees a card leave the shoe."""
        self.send("exit")

    def key(self, name: str) -> None:
        """A dealer key press: one of KEYS."""
        if name not in KEYS:
            raise ValueError(f"unknown dealer key {name!r}; expected one of {', '.join(KEYS)}")
        self.send("key " + name)

    def jam(self, on: bool) -> None:
        """A card jams in the shoe's throat (on) or is cleared (off)."""
        self.send("jam " + ("on" if on else "off"))

    def lid(self, open: bool) -> None:  # noqa: A002 - the name the interface uses
        """The shoe's lid is opened or closed."""
        self.send("lid " + ("open" if open else "closed"))

    def reader(self, ok: bool) -> None:
        """The reader works again (ok) or fails."""
        self.send("reader " + ("ok" if ok else "fail"))

    def send(self, line: str) -> None:
        """Send one raw line (without its `\\n`) to the connected firmware."""
        if "\n" in line or "\r" in line:
            raise ValueError(f"a sim line cannot contain a line break: {line!r}")
        try:
            data = (line + "\n").encode("ascii")
        except UnicodeEncodeError as exc:
            raise ValueError(f"a sim line is ASCII: {line!r}") from exc
        with self._cond:
            conn = self._conn
        if conn is None:
            raise SimNotConnected(f"no firmware connected to {self.path} (sending {line!r})")
        # Not under _cond: a firmware that stops reading must not stall the reader thread.
        with self._send_lock:
            try:
                conn.sendall(data)
            except OSError as exc:  # includes the send timeout
                raise SimNotConnected(f"the firmware's sim connection failed (sending {line!r}): {exc}") from exc

    # --- firmware -> bench -------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """True while a firmware is connected."""
        with self._cond:
            return self._conn is not None

    @property
    def connections(self) -> int:
        """How many times a firmware has connected since the board was built."""
        with self._cond:
            return self._connections

    @property
    def led(self) -> str | None:
        """The LED state the firmware last reported (None before any report)."""
        with self._cond:
            return self._led

    def wait_connected(self, timeout: float) -> None:
        """Wait until a firmware is connected; SimTimeout otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._conn is not None or self._closed, timeout):
                raise SimTimeout(f"no firmware connected to {self.path} within {timeout} s")
            self._check_open()

    def wait_ready(self, timeout: float) -> int:
        """Wait for `ready N` from the current boot's connection and return N.

        Lines before it (on any connection) are consumed; `led` reports among them still
        update `led`. A `ready` from a connection older than the last forget_boot() (or
        than the current connection) does not count.
        """

        def find() -> int:
            for i, (conn_no, line) in enumerate(self._lines):
                if conn_no >= self._first_live_connection and line.split(" ", 1)[0] == "ready":
                    return i
            return -1

        with self._cond:
            if not self._cond.wait_for(lambda: find() >= 0 or self._closed, timeout):
                raise SimTimeout(f"the firmware did not say `ready` within {timeout} s")
            self._check_open()
            for _ in range(find()):
                self._lines.popleft()
            _, line = self._lines.popleft()
        arg = line.partition(" ")[2]
        if not arg.isdigit():
            raise SimProtocolError(f"malformed ready line {line!r}; expected `ready <boot counter>`")
        return int(arg)

    def read_line(self, timeout: float) -> str:
        """The next firmware -> bench line (any kind, `ready` included), oldest first."""
        with self._cond:
            if not self._cond.wait_for(lambda: bool(self._lines) or self._closed, timeout):
                raise SimTimeout(f"no line from the firmware within {timeout} s")
            self._check_open()
            return self._lines.popleft()[1]

    def forget_boot(self) -> None:
        """The next wait_ready() waits for `ready` on a connection made after this call."""
        with self._cond:
            self._first_live_connection = self._connections + 1

    def close(self) -> None:
        """Stop listening and drop the connection. Safe to call twice."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=5)
        os.close(self._wake_r)
        os.close(self._wake_w)
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def _check_open(self) -> None:
        if self._closed:
            raise BoardStateError("the sim channel is closed")

    # --- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        conn: socket.socket | None = None
        pending = bytearray()
        try:
            while True:
                rlist: list[int] = [self._wake_r, self._listener.fileno()]
                if conn is not None:
                    rlist.append(conn.fileno())
                ready, _, _ = select.select(rlist, [], [])
                if self._wake_r in ready:
                    break
                if self._listener.fileno() in ready:
                    new, _ = self._listener.accept()
                    new.settimeout(_SEND_TIMEOUT_S)  # bounds sendall(); recv follows select
                    if conn is not None:
                        self._drop(conn)
                    conn, pending = new, bytearray()
                    with self._cond:
                        self._conn = new
                        self._connections += 1
                        self._first_live_connection = self._connections
                        self._cond.notify_all()
                    continue
                if conn is not None and conn.fileno() in ready:
                    try:
                        data = conn.recv(4096)
                    except OSError:
                        data = b""
                    if not data:
                        self._drop(conn)
                        conn = None
                        continue
                    pending += data
                    self._take_lines(pending)
                    if len(pending) > _MAX_LINE:
                        # A line this long is not a sim line; keep the channel usable.
                        self._store(pending[:_MAX_LINE].decode("ascii", "replace"))
                        del pending[:]
        finally:
            if conn is not None:
                self._drop(conn)
            self._listener.close()

    def _drop(self, conn: socket.socket) -> None:
        with self._cond:
            if self._conn is conn:
                self._conn = None
            self._cond.notify_all()
        conn.close()

    def _take_lines(self, pending: bytearray) -> None:
        while True:
            end = pending.find(b"\n")
            if end < 0:
                return
            line = pending[:end].rstrip(b"\r").decode("ascii", "replace")
            del pending[: end + 1]
            self._store(line)

    def _store(self, line: str) -> None:
        with self._cond:
            self._lines.append((self._connections, line))
            word, _, arg = line.partition(" ")
            if word == "led" and arg in LED_STATES:
                self._led = arg
            self._cond.notify_all()

