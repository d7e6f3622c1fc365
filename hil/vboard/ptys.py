"""Pseudo-terminal pairs: the interpreter's console and the host's serial device."""

from __future__ import annotations

import os
import tty
from pathlib import Path


def open_raw_pty() -> tuple[int, int, str]:
    """A new pty pair with a raw (binary-clean) slave: (master, slave, slave path).

    Raw means no echo, no line editing, no signals from ^C/^Z/^\\ and no `\\n` ->
    `\\r\\n`, so every byte passes unchanged both ways, as over USB CDC.
    """
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    return master, slave, os.ttyname(slave)


class HostPort:
    """The serial device the host opens: one pty pair, published by a stable symlink.

    The relay keeps only the master; the slave is closed here so that the master reports
    POLLHUP while no host has the device open (the way a board's USB stack sees DTR
    low). Closing the master makes the device vanish: the host's reads return EOF, the
    /dev/pts/N node disappears, and so does the symlink.
    """

    def __init__(self, link: Path) -> None:
        self.link = link
        self.master, slave, self.device = open_raw_pty()
        os.close(slave)
        tmp = link.with_name(link.name + ".new")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(self.device, tmp)
        os.replace(tmp, link)  # atomic: a host never sees a half-made link

    def close(self) -> None:
        """Remove the device (the host sees it vanish)."""
        try:
            if os.readlink(self.link) == self.device:
                self.link.unlink()
        except OSError:
            pass
        os.close(self.master)
