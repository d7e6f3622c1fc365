"""The floor's file (`cardshoe floor serve --config floor.toml`): store, links, keys, credentials.

```toml
[floor]
listen = "0.0.0.0:8700"                       # HOST:PORT (port 0: the kernel picks one)
pg_dir = "/var/lib/cardshoe/floor-pg"         # or: postgres = "DSN", or: sqlite = "FILE" (default)
# read_only = true                            # a hot standby's floor (postgres = the standby's DSN):
                                              # reads only, every write answered 503 FloorReadOnly
signing_key = "/etc/cardshoe/floor/signing.key"   # the floor's Ed25519 key (made 0600 if absent)
day_ends = "06:00"                            # the local hour the gaming day ends (the tables' [journal] day_ends)
zone = "Asia/Singapore"                       # its time zone (default: the floor host's local time)
days_ahead = 7                                # PostgreSQL: gaming-day partitions made ahead at start
workers = 2                                   # API processes on the one socket (PostgreSQL only; default 1)

[links.megalink-tcp]                          # one section per linked progressive
reset = 5000000                               # minor units
rate_ppm = 50000                              # parts per million of each progressive stake in action
start = 5000000                               # the opening pool (default: reset)

[roles]                                       # readers and the floor supervisor: token files (0600)
pit = "/etc/cardshoe/floor/pit.token"         # a file, or a list of files
surveillance = ["/etc/cardshoe/floor/surv-1.token", "/etc/cardshoe/floor/surv-2.token"]
supervisor = "/etc/cardshoe/floor/supervisor.token"

[tables.TCP-07]                               # one section per table, by the name in its [table] name
token_file = "/etc/cardshoe/floor/TCP-07.token"   # its shipping credential (the same token in the
                                                  # table's [floor] token_file)
link = "megalink-tcp"                         # the link it may settle on (omit: it only ships)
shoe_keys = "/var/lib/cardshoe/floor-keys/TCP-07" # a key store of its shoes' keys (cardshoe.keys)
shoes = [12648430]                            # optional: the shoe serials it deals with
```

Relative paths are taken from the file's folder. Every setting is checked before the floor
starts; a wrong one is a `ConfigError` naming it (`tables.TCP-07.link`). `cardshoe floor serve
--link`, `--listen` and the store options override the file's.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .auth import Credential
from .progressive import FloorRefusal, LinkSettings

__all__ = ["ConfigError", "FloorConfig", "TableEntry", "load_floor_config", "MAX_WORKERS"]

#: The most API processes `workers` may ask for (each holds up to 12 database connections).
MAX_WORKERS = 32


class ConfigError(ValueError):
    """A setting of the floor's file is missing or wrong; the message names it."""


@dataclass(frozen=True)
class TableEntry:
    """One table of the floor: its credential, link and shoes."""

    name: str
    token_file: Path
    link: str | None = None
    shoe_keys: Path | None = None
    shoes: tuple[int, ...] | None = None


@dataclass
class FloorConfig:
    """Everything `cardshoe floor serve` needs."""

    listen: str = "127.0.0.1:8700"
    sqlite: Path | None = None
    postgres: str | None = None
    pg_dir: Path | None = None
    signing_key: Path = Path("floor.signing-key")
    day_ends: str | None = None
    """`[floor] day_ends`: None keeps the store's (06:00 for a new store)."""
    zone: str | None = None
    days_ahead: int = 7
    read_only: bool = False
    """Serve reads from a hot standby (`postgres` its DSN) and refuse every write (issue 24 item 3)."""
    workers: int = 1
    links: list[LinkSettings] = field(default_factory=list)
    roles: dict[str, list[Path]] = field(default_factory=dict)
    tables: dict[str, TableEntry] = field(default_factory=dict)

    def tokens(self, read: Callable[[Path, str], str]) -> list[tuple[str, Credential]]:
        """(token, credential) of every role and table, read by `read(path, setting)`."""
        out = [(read(path, f"roles.{role}"), Credential(role)) for role, paths in sorted(self.roles.items())
               for path in paths]
        out += [(read(t.token_file, f"tables.{t.name}.token_file"), Credential("table", t.name))
                for t in self.tables.values()]
        return out

    def key_lookup(self, table: str) -> Callable[[int], bytes | None] | None:
        """The shoe keys registered for `table` (None: none registered)."""
        from cardshoe.keys import KeyStore

        entry = self.tables.get(table)
        if entry is None or entry.shoe_keys is None:
            return None
        store = KeyStore(entry.shoe_keys)
        allowed = entry.shoes

        def lookup(serial: int) -> bytes | None:
            if allowed is not None and serial not in allowed:
                return None
            return store.lookup(serial)

        return lookup

    def link_of(self, table: str) -> str | None:
        """The link `table` may settle on."""
        entry = self.tables.get(table)
        return None if entry is None else entry.link


_FLOOR_KEYS = ("listen", "sqlite", "postgres", "pg_dir", "signing_key", "day_ends", "zone", "days_ahead",
               "read_only", "workers")


def _get(section: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = section.get(key)
    if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
        raise ConfigError(f"{where}.{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _path(base: Path, text: str) -> Path:
    p = Path(text)
    return p if p.is_absolute() else base / p


def load_floor_config(path: Path) -> FloorConfig:
    """The floor's file at `path`, checked (raises ConfigError naming the setting)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--config: cannot read {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--config: {path} is not valid TOML: {exc}") from exc
    base = path.resolve().parent
    known = {"floor", "links", "roles", "tables"}
    for section in data:
        if section not in known:
            raise ConfigError(f"{section}: unknown section in {path} (known: {', '.join(sorted(known))})")
    cfg = FloorConfig()
    floor = data.get("floor", {})
    for key in floor:
        if key not in _FLOOR_KEYS:
            raise ConfigError(f"floor.{key}: unknown setting (known: {', '.join(_FLOOR_KEYS)})")
    if (listen := _get(floor, "listen", str, "floor")) is not None:
        cfg.listen = listen
    if (workers := _get(floor, "workers", int, "floor")) is not None:
        if not 1 <= workers <= MAX_WORKERS:
            raise ConfigError(f"floor.workers: API processes, 1..{MAX_WORKERS}, got {workers}")
        cfg.workers = workers
    stores = [k for k in ("sqlite", "postgres", "pg_dir") if k in floor]
    if len(stores) > 1:
        raise ConfigError(f"floor.{stores[1]}: give one store (sqlite, postgres or pg_dir), not {' and '.join(stores)}")
    if (v := _get(floor, "sqlite", str, "floor")) is not None:
        cfg.sqlite = _path(base, v)
    if (v := _get(floor, "postgres", str, "floor")) is not None:
        cfg.postgres = v
    if (v := _get(floor, "pg_dir", str, "floor")) is not None:
        cfg.pg_dir = _path(base, v)
    cfg.signing_key = _path(base, _get(floor, "signing_key", str, "floor") or "floor.signing-key")
    cfg.day_ends = _get(floor, "day_ends", str, "floor")
    cfg.zone = _get(floor, "zone", str, "floor")
    if cfg.day_ends is not None or cfg.zone is not None:
        from .days import DayRule

        try:
            DayRule(cfg.day_ends or "06:00", cfg.zone).checked()
        except FloorRefusal as exc:
            raise ConfigError(f"floor.{exc.field}: {exc.message}") from None
    if (ahead := _get(floor, "days_ahead", int, "floor")) is not None:
        if not 1 <= ahead <= 366:
            raise ConfigError(f"floor.days_ahead: {ahead}: 1 to 366 days")
        cfg.days_ahead = ahead
    cfg.read_only = bool(_get(floor, "read_only", bool, "floor"))
    if cfg.read_only and cfg.postgres is None:
        raise ConfigError("floor.read_only: a read-only floor reads a hot standby: give floor.postgres = the "
                          "standby's DSN (cardshoe floor pg start DIR --standby prints it)")
    for name, link in data.get("links", {}).items():
        if not isinstance(link, dict):
            raise ConfigError(f"links.{name}: expected a section (reset, rate_ppm, start)")
        for key in link:
            if key not in ("reset", "rate_ppm", "start"):
                raise ConfigError(f"links.{name}.{key}: unknown setting (known: reset, rate_ppm, start)")
        reset, rate = _get(link, "reset", int, f"links.{name}"), _get(link, "rate_ppm", int, f"links.{name}")
        if reset is None or rate is None:
            raise ConfigError(f"links.{name}: reset and rate_ppm are required")
        try:
            cfg.links.append(LinkSettings(str(name), reset, rate, _get(link, "start", int, f"links.{name}")).checked())
        except FloorRefusal as exc:
            raise ConfigError(f"links.{name}.{exc.field}: {exc.message}") from None
    for role, value in data.get("roles", {}).items():
        if role not in ("pit", "surveillance", "supervisor"):
            raise ConfigError(f"roles.{role}: unknown role (known: pit, surveillance, supervisor; a table's "
                              "credential is in its [tables.NAME] section)")
        files = [value] if isinstance(value, str) else value
        if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
            raise ConfigError(f"roles.{role}: a token file, or a list of token files")
        cfg.roles[role] = [_path(base, f) for f in files]
    link_names = {link.name for link in cfg.links}
    for name, table in data.get("tables", {}).items():
        where = f"tables.{name}"
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: expected a section (token_file, link, shoe_keys, shoes)")
        for key in table:
            if key not in ("token_file", "link", "shoe_keys", "shoes"):
                raise ConfigError(f"{where}.{key}: unknown setting (known: token_file, link, shoe_keys, shoes)")
        token_file = _get(table, "token_file", str, where)
        if token_file is None:
            raise ConfigError(f"{where}.token_file: required (the table's shipping credential)")
        link = _get(table, "link", str, where)
        if link is not None and link_names and link not in link_names:
            raise ConfigError(f"{where}.link: {link!r} is not a link of this floor (links: "
                              f"{', '.join(sorted(link_names))})")
        keys = _get(table, "shoe_keys", str, where)
        shoes = table.get("shoes")
        if shoes is not None and (not isinstance(shoes, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                                                         and 0 < s < 2**32 for s in shoes)):
            raise ConfigError(f"{where}.shoes: a list of shoe serials (1..4294967295)")
        cfg.tables[str(name)] = TableEntry(str(name), _path(base, token_file), link,
                                           None if keys is None else _path(base, keys),
                                           None if shoes is None else tuple(shoes))
    return cfg
