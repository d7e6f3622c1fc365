"""The host's store of shoe keys: one 32-byte HMAC key per shoe serial.

Layout (INTERFACES.md): `<dir>/<serial>.key` holds 64 hex characters, mode 0600, in a
directory of mode 0700. The default directory is `$CARDSHOE_KEYS`, else
`~/.local/share/cardshoe/keys`. A key is made by `cardshoe flash` and goes only into
this store and onto the shoe's flash; it never crosses the wire and is never printed.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

KEY_SIZE = 32


class KeyStoreError(Exception):
    """The key store or one of its key files is unusable (named in the message)."""


def default_dir() -> Path:
    """`$CARDSHOE_KEYS`, or `~/.local/share/cardshoe/keys`."""
    env = os.environ.get("CARDSHOE_KEYS")
    if env:
        return Path(env)
    return Path.home() / ".local" / "share" / "cardshoe" / "keys"


class KeyStore:
    """Keys by shoe serial in one directory."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.dir = Path(directory) if directory is not None else default_dir()

    def path(self, serial: int) -> Path:
        """The key file of shoe `serial`."""
        if not 0 < serial < 2**32:
            raise KeyStoreError(f"shoe serial {serial} is not in 1..4294967295")
        return self.dir / f"{serial}.key"

    def load(self, serial: int) -> bytes | None:
        """The key of shoe `serial`, or None when the store has none.

        Raises KeyStoreError when the file exists but is not 64 hex characters, or is
        readable by anyone but its owner (a leaked key must not be used silently).
        """
        path = self.path(serial)
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyStoreError(f"{path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); chmod 600 it")
        text = path.read_text(encoding="ascii", errors="replace").strip()
        try:
            key = bytes.fromhex(text)
        except ValueError:
            raise KeyStoreError(f"{path} does not hold 64 hex characters") from None
        if len(key) != KEY_SIZE:
            raise KeyStoreError(f"{path} holds {len(key)} bytes, not {KEY_SIZE}")
        return key

    def create(self, serial: int) -> bytes:
        """Make a new random key for shoe `serial`, store it (0600), and return it.

        An existing key of that shoe is replaced atomically (the shoe gets the new key
        from the same `cardshoe flash`).
        """
        path = self.path(serial)
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.dir, 0o700)
        key = secrets.token_bytes(KEY_SIZE)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (key.hex() + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return key

    def lookup(self, serial: int) -> bytes | None:
        """`load` that answers None for a serial out of range (a receiver's key lookup)."""
        try:
            return self.load(serial)
        except KeyStoreError:
            return None
