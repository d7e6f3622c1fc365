"""Evidence files on disk: written whole or not at all, named by round and reason."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Mapping

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def dumps(doc: Mapping[str, Any]) -> bytes:
    """The file's bytes: indented JSON (the signature covers the canonical form, not these bytes)."""
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write(folder: Path, name: str, doc: Mapping[str, Any]) -> tuple[Path, str]:
    """Write `doc` as `folder/name` (temp file, fsync, rename); its path and SHA-256 hex."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o750)
    data = dumps(doc)
    path = folder / _SAFE.sub("_", name)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path, hashlib.sha256(data).hexdigest()
