"""A pluggable pseudo-terminal: the test's stand-in for a USB serial cable.

The daemon opens `path`, a stable symlink (as a udev rule gives a real shoe) to the
slave side of a real pty pair; the test holds the master. `unplug()` closes the pair and
removes the symlink, so the daemon's reads fail and its reopening finds no device, as when a
USB shoe is pulled out; `replug()` makes a new pair and points the symlink at it.
"""

from __future__ import annotations

import os
import select
import time
import tty
from pathlib import Path


class PluggablePty:
    """One end of a real pty pair for the test, the other reachable at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.master = -1
        self._slave = -1
        self.replug()

    @property
    def plugged(self) -> bool:
        return self.master >= 0

    def replug(self) -> None:
        if self.plugged:
            raise RuntimeError("already plugged")
        master, slave = os.openpty()
        # Raw from the start: a default pty echoes, which would bounce frames back at the sender.
        tty.setraw(slave)
        tty.setraw(master)
        os.set_blocking(master, False)
        self.master, self._slave = master, slave
        tmp = self.path.with_suffix(".new")
        if tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(os.ttyname(slave))
        os.replace(tmp, self.path)

    def unplug(self) -> None:
        if not self.plugged:
            return
        # The symlink goes with the device, as udev removes a pulled shoe's: left in place it
        # names a /dev/pts number the kernel hands to the next pty opened on the machine (another
        # test's, under load), which a reconnecting daemon would open and sit on, hearing nothing.
        if self.path.is_symlink():
            self.path.unlink()
        os.close(self.master)
        os.close(self._slave)
        self.master = self._slave = -1

    def write(self, data: bytes) -> None:
        """Write all of `data` towards the daemon (no-op while unplugged, as on a pulled cable)."""
        view = memoryview(data)
        while view and self.plugged:
            try:
                n = os.write(self.master, view)
            except BlockingIOError:
                select.select([], [self.master], [], 0.1)
                continue
            except OSError:  # unplugged under us: the bytes are lost, as on a pulled cable
                return
            view = view[n:]

    def read(self, timeout: float) -> bytes:
        """Bytes from the daemon within `timeout` seconds (b"" if none or unplugged)."""
        fd = self.master
        if fd < 0:
            time.sleep(timeout)
            return b""
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
            return os.read(fd, 4096) if ready else b""
        except (OSError, ValueError):  # unplugged under us
            return b""

    def close(self) -> None:
        self.unplug()
        if self.path.is_symlink():
            self.path.unlink()
