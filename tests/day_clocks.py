"""A daemon's injected clocks for the gaming-day tests on the virtual board (issue 25): real
time's flow plus the hours a test moves, so a rollover happens without waiting for it."""

from __future__ import annotations

import threading
import time
from datetime import datetime


class Clocks:
    """The daemon's wall and monotonic clocks: real time's flow plus what the test moves."""

    def __init__(self, start: datetime) -> None:
        self._lock = threading.Lock()
        self._off = int(start.timestamp() * 1e9) - time.time_ns()
        self._mono = 0

    def wall(self) -> int:
        with self._lock:
            return time.time_ns() + self._off

    def mono(self) -> int:
        with self._lock:
            return time.monotonic_ns() + self._mono

    def advance(self, ns: int) -> None:
        """Time passes, on both clocks."""
        with self._lock:
            self._off += ns
            self._mono += ns
