"""The serial transport: open a port by URL, read it on a thread, reconnect with backoff.

pyserial's `serial_for_url` chooses the transport from the URL, so the same code runs on a
USB serial port (`/dev/ttyACM0`), a pseudo-terminal (`/dev/pts/5`, or a stable symlink to
one), `loop://` in tests and `spy://...` when debugging the traffic.

The reader thread hands every chunk of bytes to `on_bytes` (as pyserial's `ReaderThread`
hands them to its `Protocol`) and reports the link's state changes to `on_state`: a lost
port (unplugged USB, a closed pty master, an I/O error) is reported with its time, the
port is reopened with exponential backoff, and its return is reported too. A port that
cannot be opened (at start, or again after a loss) is reported once per spell, with the
reason, through `on_state` and a WARNING; the retries after it log at DEBUG. Nothing is
buffered here: the protocol layer above owns retransmission, so bytes written while the
port is gone are simply not sent (`write` returns False) and the shoe's or the host's
resend timer covers them.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable

import serial

log = logging.getLogger(__name__)

BAUDRATE = 115_200
BACKOFF_MIN_S = 0.05
BACKOFF_MAX_S = 2.0


@dataclass(frozen=True)
class LinkState:
    """A change of the port's state: `up` True when (re)opened, False when lost."""

    up: bool
    t_ns: int
    detail: str


class SerialTransport:
    """Owns one serial port: a reader thread, locked writes, reconnection with backoff."""

    def __init__(
        self,
        url: str,
        on_bytes: Callable[[bytes], None],
        on_state: Callable[[LinkState], None],
        *,
        baudrate: int = BAUDRATE,
        backoff_min_s: float = BACKOFF_MIN_S,
        backoff_max_s: float = BACKOFF_MAX_S,
    ) -> None:
        self.url = url
        self._on_bytes = on_bytes
        self._on_state = on_state
        self._baudrate = baudrate
        self._backoff_min = backoff_min_s
        self._backoff_max = backoff_max_s
        self._port: serial.SerialBase | None = None
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reconnects = 0

    @property
    def connected(self) -> bool:
        """True while the port is open."""
        return self._port is not None

    def start(self) -> None:
        """Start the reader thread; it opens the port (retrying until it can)."""
        if self._thread is not None:
            raise RuntimeError("transport already started")
        self._thread = threading.Thread(target=self._run, name=f"serial-{self.url}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the reader thread and close the port. Safe to call more than once."""
        self._stop.set()
        port = self._port
        if port is not None:
            try:
                port.cancel_read()
            except Exception:  # noqa: BLE001 - not every transport can cancel; the timeout ends the read
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        self._close()

    def write(self, data: bytes) -> bool:
        """Write `data` now; False if the port is down or the write failed (the reader reconnects)."""
        with self._write_lock:
            port = self._port
            if port is None:
                return False
            try:
                port.write(data)
                return True
            except (serial.SerialException, OSError) as exc:
                log.warning("write to %s failed: %s", self.url, exc)
                return False

    # -- reader thread ---------------------------------------------------------------
    def _open(self) -> serial.SerialBase:
        # A device path is locked (flock) so two daemons never share one shoe.
        extra = {"exclusive": True} if "://" not in self.url else {}
        # A bounded write: a shoe that stops reading must not hang the link (its lock, the ACKs).
        port: serial.SerialBase = serial.serial_for_url(self.url, baudrate=self._baudrate, timeout=0.2,
                                                        write_timeout=1.0, **extra)
        return port

    def _close(self) -> None:
        with self._write_lock:
            port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except Exception:  # noqa: BLE001 - closing a vanished device may fail; it is gone either way
                pass

    def _run(self) -> None:
        backoff = self._backoff_min
        ever_up = False
        # Whether this spell without a port has been reported (once per spell: a port that
        # cannot be opened is an alarm, not a log line per retry).
        reported_down = False
        while not self._stop.is_set():
            try:
                port = self._open()
            except (serial.SerialException, OSError, ValueError) as exc:
                if not reported_down:
                    reported_down = True
                    log.warning("cannot open %s: %s (retrying every %.0f s at most)", self.url, exc,
                                self._backoff_max)
                    self._on_state(LinkState(False, time.time_ns(), f"cannot open {self.url}: {exc}"))
                else:
                    log.debug("cannot open %s: %s (retry in %.2f s)", self.url, exc, backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self._backoff_max)
                continue
            backoff = self._backoff_min
            reported_down = False
            with self._write_lock:
                self._port = port
            if ever_up:
                self.reconnects += 1
            ever_up = True
            self._on_state(LinkState(True, time.time_ns(), f"opened {self.url}"))
            reason = self._read_until_lost(port)
            self._close()
            if self._stop.is_set():
                break
            self._on_state(LinkState(False, time.time_ns(), reason))
            reported_down = True

    def _read_until_lost(self, port: serial.SerialBase) -> str:
        while not self._stop.is_set():
            try:
                waiting = port.in_waiting
                data = port.read(waiting or 1)
            except (serial.SerialException, OSError, TypeError) as exc:
                # TypeError: pyserial's posix read can trip over a port closed under it.
                return f"lost {self.url}: {exc}"
            if data:
                try:
                    self._on_bytes(bytes(data))
                except Exception:  # noqa: BLE001 - a bug above must not kill the link; it is logged loudly
                    log.exception("link: error handling %d bytes from %s", len(data), self.url)
        return "stopped"
