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

from cardshoe.private import private_dirs

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
        return _read_key_file(self.path(serial))

    def create(self, serial: int) -> bytes:
        """Make a new random key for shoe `serial`, store it (0600), and return it.

        An existing key of that shoe is replaced atomically (the shoe gets the new key
        from the same `cardshoe flash`).
        """
        path = self.path(serial)
        private_dirs(self.dir)
        os.chmod(self.dir, 0o700)
        key = secrets.token_bytes(KEY_SIZE)
        tmp = path.with_name(path.name + ".tmp")
        _write_key_file(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), key)
        os.replace(tmp, path)
        return key

    def lookup(self, serial: int) -> bytes | None:
        """`load` that answers None for a serial out of range (a receiver's key lookup)."""
        try:
            return self.load(serial)
        except KeyStoreError:
            return None


def _read_key_file(path: Path) -> bytes | None:
    """The KEY_SIZE bytes held as hex in `path` (a shoe key or a table seed), None when absent.

    Raises KeyStoreError when the file is readable by anyone but its owner (a leaked key must
    not be used silently) or does not hold 64 hex characters."""
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

def _write_key_file(fd: int, key: bytes) -> None:
    """Write `key` as hex to the open file `fd` (made 0600 whatever the umask), flush it to disk, close it."""
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (key.hex() + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)



# -- the table's signing key (issue 14 item 5) -------------------------------------------
#
# One Ed25519 key per table signs its evidence files (`cardshoe.evidence`). Its file holds the
# 32-byte private seed as 64 hex characters, mode 0600, as a shoe key's does; the daemon makes
# it at the first evidence file (or `cardshoe evidence key --create`), and its public half is
# what a surveillance office checks evidence with (`cardshoe evidence key` prints it).


def load_table_key(path: str | os.PathLike[str]) -> bytes | None:
    """The table's 32-byte Ed25519 private seed from `path`, or None when there is no file.

    Raises KeyStoreError when the file is readable by others or is not 64 hex characters."""
    return _read_key_file(Path(path))


def create_table_key(path: str | os.PathLike[str]) -> bytes:
    """Make a new table signing key at `path` (0600, its folder 0700 if made) and return its seed.

    Never replaces an existing key: evidence already signed names the old one."""
    file = Path(path)
    private_dirs(file.parent)
    seed = secrets.token_bytes(KEY_SIZE)
    _write_key_file(os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), seed)
    return seed


def table_key(path: str | os.PathLike[str], *, create: bool = True) -> bytes:
    """The table's signing seed at `path`, made there first when absent and `create`."""
    seed = load_table_key(path)
    if seed is not None:
        return seed
    if not create:
        raise KeyStoreError(f"{path}: no table signing key (make one with `cardshoe evidence key --create`)")
    try:
        return create_table_key(path)
    except FileExistsError:  # made by another process meanwhile: use that one
        found = load_table_key(path)
        assert found is not None
        return found
