"""Evidence files on disk: written whole or not at all, named by round and reason."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Mapping

from cardshoe.private import open_private, private_dirs

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def dumps(doc: Mapping[str, Any]) -> bytes:
    """The file's bytes: indented JSON (the signature covers the canonical form, not these bytes)."""
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write(folder: Path, name: str, doc: Mapping[str, Any]) -> tuple[Path, str]:
    """Write `doc` as `folder/name` (temp file, fsync, rename); its path and SHA-256 hex."""
    # An evidence file names every card of its round: the daemon user's alone (0600, a folder
    # made for it 0700, whatever the umask; cardshoe.private), as the journal it comes from is.
    private_dirs(folder)
    data = dumps(doc)
    path = folder / _SAFE.sub("_", name)
    tmp = path.with_name(path.name + ".tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path, hashlib.sha256(data).hexdigest()
