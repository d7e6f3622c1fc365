"""Files the daemon creates are its user's alone: 0600, directories 0700, whatever the umask.

The journal holds every card dealt, the tokens and keys let their holder see or forge them,
an evidence file names every card of a round (SPEC 3.6: "the daemon user's alone"). A file
created with the default mode is 0644 under the usual umask 022 and 0666 under 000, and a
systemd unit's `UMask=` protects only a daemon started by the unit, not `cardshoe run` by
hand; so every such file is created with its mode set explicitly, and `cardshoe` sets the
process umask to 077 for whatever a command creates besides (docs/api.md, "Files").

Only permission bits the creator chose are set: a file that exists already is tightened
(`tighten`) if it is the caller's, never loosened.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
#: The process umask `cardshoe` runs with: nothing it creates is readable by group or others.
UMASK = 0o077

log = logging.getLogger(__name__)

__all__ = ["DIR_MODE", "FILE_MODE", "UMASK", "open_private", "private_dirs", "tighten", "write_private"]


def private_dirs(path: Path) -> None:
    """Make directory `path` and its missing parents, each created 0700 (those that exist
    already are left as they are: a shared /var/lib is not this daemon's to change)."""
    missing: list[Path] = []
    here = Path(path)
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by someone else: not ours to change
        os.chmod(directory, DIR_MODE)  # mkdir's mode is filtered by the umask


def open_private(path: Path, flags: int) -> int:
    """`os.open(path, flags | O_CREAT)` with the file 0600 whatever the umask; a file that
    existed is tightened to 0600 (when it is the caller's). Returns the descriptor."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except PermissionError:
        log.warning("%s: not this user's file; its mode is left as it is", path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` (created 0600, or replaced in place), flushed to disk."""
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def tighten(path: Path, mode_wanted: int = FILE_MODE) -> None:
    """Make an existing file of the caller's 0600 (a directory: pass 0700) if group or others
    may use it (a journal made by an earlier version, under a loose umask). Missing files and
    others' are left."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    if not mode & 0o077:
        return
    try:
        os.chmod(path, mode_wanted)
    except PermissionError:
        log.warning("%s is readable by others (mode %o) and not this user's to change; chmod %o it", path, mode,
                    mode_wanted)
