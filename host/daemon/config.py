"""The table's configuration: command-line options over a TOML file (`tomllib`).

A table PC runs one daemon per table. Everything can be given on the command line
(`cardshoe run --port PORT --game GAME --seats N`); a TOML file (`--config table.toml`)
holds the same settings and more, and command-line options override it. Example::

    [table]
    name = "TCP-07"                     # shown in events and logs
    game = "three-card-poker"           # a game id (docs/round-format.md)
    seats = 7                           # playing positions on the layout, 1..7
    dealing = "automated"               # "automated" or "manual" (rules 3.7 / 3.8)
    method = "A"                        # Xtreme only: dealing method A, B or C (rule 3.7)
    token_file = "/etc/cardshoe/TCP-07.token"   # an all-roles token (controllers of earlier versions;
                                        # may be left out when [roles] gives every role its own)

    [roles]                             # a token file per role (created 0600 if absent; docs/api.md, "Roles")
    controller = "/etc/cardshoe/TCP-07.controller.token"
    supervisor = "/etc/cardshoe/TCP-07.supervisor.token"
    surveillance = "/etc/cardshoe/TCP-07.surveillance.token"

    [shoe]
    port = "/dev/serial/by-id/usb-cardshoe_shoe_0001-if00"
    keys = "/var/lib/cardshoe/keys"     # the key files `cardshoe flash` wrote

    [journal]
    path = "/var/lib/cardshoe/TCP-07.sqlite"   # one journal; or, a file per gaming day (issue 25):
    # dir = "/var/lib/cardshoe/days"           # TCP-07.2026-11-27.sqlite, ... (read-only once closed)
    # day_ends = "06:00"                       # the local hour the gaming day rolls over at
    # zone = "America/Los_Angeles"             # the zone of that hour (default: the host's)

    [api]
    listen = "127.0.0.1:8600"           # port 0: one the kernel picks (see `cardshoe run --help`)

    [let_it_ride]
    draw_magic = false                  # true: draw Magic Card and Lucky Player with `secrets`

    [alarm]                             # the hold alarm (docs/report.md, "The alarm")
    z = 3.0                             # family-wise z: all tests watched, at one look
    min_rounds = 100                    # a group is tested from this many rounds
    sides = "both"                      # or "low": only the house winning too little

    [limits]                            # table minimum and maximum per wager, minor units
    ante = { min = 2500, max = 250000 }
    pair_plus = { min = 2500, max = 100000 }
    progressive = { min = 500, max = 500 }   # min is the unit of the fixed jackpot amounts

    [jackpot]
    reset = 5000000                     # what the progressive resets to after a royal;
                                        # without it progressive wagers and PUT /jackpot are refused

    [floor]                             # optional: ship the journal to `cardshoe floor`
    url = "http://floor.example:8700"   # the floor API
    link = "megalink-tcp"               # the linked progressive this table feeds (omit: none)
    token_file = "/etc/cardshoe/TCP-07.floor.token"   # this table's own credential on the floor, 0600
    public_key = "/etc/cardshoe/floor.pub"   # the floor's Ed25519 public key (64 hex, or a file of them):
                                             # every assignment must be signed by it
    [evidence]                          # jackpot evidence (cardshoe.evidence; docs/api.md, "Evidence")
    dir = "/var/lib/cardshoe/TCP-07.evidence"   # default: beside the journal, <journal stem>.evidence
    key = "/var/lib/cardshoe/TCP-07.table-key"  # the table's Ed25519 signing key (made 0600 if absent);
                                                # default: beside the journal, <journal stem>.table-key

    [link]                              # sent to the shoe as CONFIG (SPEC 5)
    heartbeat_ms = 2000
    resend_ms = 300
    resend_max_ms = 5000
    debounce_ms = 20
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from cardshoe.daemon.core import TableSetup

#: The API's roles (cardshoe.api.auth; docs/api.md, "Roles").
ROLES = ("controller", "supervisor", "surveillance")
#: The shortest token the API takes (a guessable token would show every face-down card).
MIN_TOKEN = 16

GAMES = (
    "three-card-poker",
    "megalink-three-card-poker",
    "megalink-three-card-poker-xtreme",
    "megalink-let-it-ride",
    "megalink-singapore-stud-poker",
)


DEFAULT_LIMITS = (100, 10_000_000)


class ConfigError(ValueError):
    """A configuration value is missing or wrong; the message names the setting."""


@dataclass(frozen=True)
class LinkTiming:
    """The link timers sent to the shoe in CONFIG (milliseconds)."""

    heartbeat_ms: int = 2000
    resend_ms: int = 300
    resend_max_ms: int = 5000
    debounce_ms: int = 20


@dataclass(frozen=True)
class TableConfig:
    """Everything `cardshoe run` needs to serve one table."""

    port: str
    game: str
    seats: int
    name: str = "table"
    dealing: str = "automated"
    method: str | None = None
    journal: Path = Path("cardshoe-journal.sqlite")
    keys: Path | None = None
    listen_host: str = "127.0.0.1"
    listen_port: int = 8600
    token_file: Path | None = None
    role_token_files: tuple[tuple[str, Path], ...] = ()
    draw_magic: bool = False
    link: LinkTiming = field(default_factory=LinkTiming)
    limits: tuple[tuple[str, int, int], ...] = ()
    jackpot_reset: int | None = None
    floor_url: str | None = None
    """The floor API (`cardshoe floor serve`); None: the table is on its own."""
    floor_link: str | None = None
    """The linked progressive this table's progressive wagers feed and settle against."""
    floor_token_file: Path | None = None
    floor_public_key: str | None = None
    """The floor's Ed25519 public key: 64 hex characters, or a file holding them."""
    evidence_dir: Path | None = None
    table_key: Path | None = None
    alarm_z: float = 3.0
    alarm_min_rounds: int = 100
    alarm_sides: str = "both"
    journal_dir: Path | None = None
    """`[journal] dir`: the day files' folder (issue 25); with `day_ends`, the journal is the
    gaming day's file there (`cardshoe.daemon.gamingday`), and `journal` follows the day."""
    day_ends: str | None = None
    """`[journal] day_ends = "06:00"`: the local hour the gaming day ends at (None: one journal)."""
    day_zone: str | None = None
    """`[journal] zone`: the IANA time zone of `day_ends` (None: the host's local time)."""

    def evidence_folder(self) -> Path:
        """Where evidence files are written: `[evidence] dir`, else `<journal stem>.evidence` beside the journal."""
        if self.evidence_dir is not None:
            return self.evidence_dir
        if self.journal_dir is not None:  # one folder for every gaming day's evidence
            return self.journal_dir / f"{self.name}.evidence"
        return self.journal.with_name(self.journal.stem + ".evidence")

    def table_key_file(self) -> Path:
        """The table's signing key: `[evidence] key`, else `<journal stem>.table-key` beside the journal."""
        if self.table_key is not None:
            return self.table_key
        if self.journal_dir is not None:  # the table's one key, whatever the day
            return self.journal_dir / f"{self.name}.table-key"
        return self.journal.with_name(self.journal.stem + ".table-key")

    def setup(self) -> TableSetup:
        """The settings the table's state machine needs (journaled at every start).

        Wagers without configured limits get `DEFAULT_LIMITS` (min 100, max 10,000,000
        minor units), so a table started from the command line alone can play."""
        configured = {w for w, _, _ in self.limits}
        from cardshoe.rounds import WAGERS

        defaults = tuple((w, *DEFAULT_LIMITS) for w in sorted(WAGERS[self.game]) if w not in configured)
        return TableSetup(self.name, self.game, self.seats, self.dealing, self.method,
                          tuple(sorted(self.limits + defaults)), self.jackpot_reset)

    def checked(self) -> TableConfig:
        """Return self, or raise `ConfigError` naming the first wrong setting."""
        if not self.port:
            raise ConfigError("shoe.port: a serial port (or pyserial URL) is required")
        if self.game not in GAMES:
            raise ConfigError(f"table.game: {self.game!r} is not one of {', '.join(GAMES)}")
        if not 1 <= self.seats <= 7:
            raise ConfigError(f"table.seats: {self.seats} is not 1..7")
        if self.dealing not in ("automated", "manual"):
            raise ConfigError(f"table.dealing: {self.dealing!r} is not 'automated' or 'manual'")
        if self.method is not None and self.method not in ("A", "B", "C"):
            raise ConfigError(f"table.method: {self.method!r} is not A, B or C")
        if self.method is not None and self.game != "megalink-three-card-poker-xtreme":
            raise ConfigError("table.method: dealing methods A/B/C are for megalink-three-card-poker-xtreme only")
        if self.method is None and self.game == "megalink-three-card-poker-xtreme" and self.dealing == "automated":
            # Without it no round could be opened (Xtreme 3.7.1-3.7.3 deal by one of the three).
            raise ConfigError("table.method: megalink-three-card-poker-xtreme on an automated device needs a "
                              "dealing method, A, B or C (3.7); without one no round can be opened")
        if not 0 <= self.listen_port < 65536:  # 0: any free port, reported once bound (cardshoe.daemon.listen)
            raise ConfigError(f"api.listen: port {self.listen_port} is out of range")
        for wager, lo, hi in self.limits:
            if not 0 < lo <= hi:
                raise ConfigError(f"limits.{wager}: min {lo} and max {hi} must satisfy 0 < min <= max")
        if self.jackpot_reset is not None and self.jackpot_reset < 0:
            raise ConfigError("jackpot.reset: must not be negative")
        if self.floor_link is not None and self.floor_url is None:
            raise ConfigError("floor.link: a link needs the floor's url (floor.url)")
        if self.floor_link is not None and self.jackpot_reset is None:
            raise ConfigError("floor.link: a linked table needs jackpot.reset (the link's reset amount)")
        if self.floor_url is not None and not self.floor_url.startswith(("http://", "https://")):
            raise ConfigError(f"floor.url: {self.floor_url!r} is not an http:// or https:// URL")
        if self.day_ends is not None or self.journal_dir is not None:
            from cardshoe.daemon.gamingday import DayPolicyError, policy_of

            if self.journal != Path("cardshoe-journal.sqlite"):
                raise ConfigError("journal.path and journal.dir: one journal or a file per gaming day, not both")

            try:
                policy_of(self)
            except DayPolicyError as exc:
                raise ConfigError(str(exc)) from None
        for name in ("heartbeat_ms", "resend_ms", "resend_max_ms", "debounce_ms"):
            value = getattr(self.link, name)
            if not 0 <= value <= 0xFFFF:
                raise ConfigError(f"link.{name}: {value} does not fit 0..65535")
        return self


def parse_listen(text: str) -> tuple[str, int]:
    """`HOST:PORT` -> (host, port); raises `ConfigError` naming `listen`."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"api.listen: {text!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def _get(section: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = section.get(key)
    if value is None:
        return None
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise ConfigError(f"{where}.{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def load_toml(path: Path) -> dict[str, Any]:
    """The settings of a table TOML file, flattened to `TableConfig` field names."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--config: cannot read {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--config: {path} is not valid TOML: {exc}") from exc
    known = {"table", "shoe", "journal", "api", "let_it_ride", "link", "limits", "jackpot", "roles", "evidence",
             "floor", "alarm"}
    for section in data:
        if section not in known:
            raise ConfigError(f"{section}: unknown section in {path} (known: {', '.join(sorted(known))})")
    out: dict[str, Any] = {}
    table = data.get("table", {})
    for key, kind in (("name", str), ("game", str), ("seats", int), ("dealing", str), ("method", str)):
        value = _get(table, key, kind, "table")
        if value is not None:
            out[key] = value
    if (tf := _get(table, "token_file", str, "table")) is not None:
        out["token_file"] = Path(tf)
    role_files = []
    for role in data.get("roles", {}):
        if role not in ROLES:
            raise ConfigError(f"roles.{role}: unknown role (known: {', '.join(ROLES)})")
        role_files.append((role, Path(_get(data["roles"], role, str, "roles"))))
    if role_files:
        out["role_token_files"] = tuple(sorted(role_files))
    shoe = data.get("shoe", {})
    if (port := _get(shoe, "port", str, "shoe")) is not None:
        out["port"] = port
    if (keys := _get(shoe, "keys", str, "shoe")) is not None:
        out["keys"] = Path(keys)
    jsec = data.get("journal", {})
    for key in jsec:
        if key not in ("path", "dir", "day_ends", "zone"):
            raise ConfigError(f"journal.{key}: unknown setting (known: path, dir, day_ends, zone)")
    if (jp := _get(jsec, "path", str, "journal")) is not None:
        out["journal"] = Path(jp)
    if (jd := _get(jsec, "dir", str, "journal")) is not None:
        out["journal_dir"] = Path(jd)
    if (de := _get(jsec, "day_ends", str, "journal")) is not None:
        out["day_ends"] = de
    if (zone := _get(jsec, "zone", str, "journal")) is not None:
        out["day_zone"] = zone
    if (listen := _get(data.get("api", {}), "listen", str, "api")) is not None:
        out["listen_host"], out["listen_port"] = parse_listen(listen)
    if (draw := _get(data.get("let_it_ride", {}), "draw_magic", bool, "let_it_ride")) is not None:
        out["draw_magic"] = draw
    alarm = data.get("alarm", {})
    for key in alarm:
        if key not in ("z", "min_rounds", "sides"):
            raise ConfigError(f"alarm.{key}: unknown key (known: z, min_rounds, sides)")
    z = alarm.get("z")
    if z is not None:
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not 0 < z < 40:
            raise ConfigError("alarm.z: a number above 0 (3.0: about 3 false alarms in 1,000 looks at everything)")
        out["alarm_z"] = float(z)
    if (mr := _get(alarm, "min_rounds", int, "alarm")) is not None:
        if mr < 1:
            raise ConfigError("alarm.min_rounds: at least 1")
        out["alarm_min_rounds"] = mr
    if (sides := _get(alarm, "sides", str, "alarm")) is not None:
        if sides not in ("both", "low"):
            raise ConfigError("alarm.sides: \"both\" or \"low\"")
        out["alarm_sides"] = sides
    limits = []
    for wager, value in data.get("limits", {}).items():
        if not isinstance(value, dict):
            raise ConfigError(f"limits.{wager}: expected {{ min = N, max = N }}")
        lo, hi = _get(value, "min", int, f"limits.{wager}"), _get(value, "max", int, f"limits.{wager}")
        if lo is None or hi is None:
            raise ConfigError(f"limits.{wager}: both min and max are required")
        limits.append((str(wager), lo, hi))
    if limits:
        out["limits"] = tuple(sorted(limits))
    if (reset := _get(data.get("jackpot", {}), "reset", int, "jackpot")) is not None:
        out["jackpot_reset"] = reset
    floor = data.get("floor", {})
    for key, field_name in (("url", "floor_url"), ("link", "floor_link")):
        if (value := _get(floor, key, str, "floor")) is not None:
            out[field_name] = value
    if (ftf := _get(floor, "token_file", str, "floor")) is not None:
        out["floor_token_file"] = Path(ftf)
    if (fpk := _get(floor, "public_key", str, "floor")) is not None:
        out["floor_public_key"] = fpk
    for key in floor:
        if key not in ("url", "link", "token_file", "public_key"):
            raise ConfigError(f"floor.{key}: unknown setting (known: url, link, token_file, public_key)")
    evidence = data.get("evidence", {})
    if (folder := _get(evidence, "dir", str, "evidence")) is not None:
        out["evidence_dir"] = Path(folder)
    if (key := _get(evidence, "key", str, "evidence")) is not None:
        out["table_key"] = Path(key)
    link = data.get("link", {})
    timing = {k: v for k in LinkTiming.__dataclass_fields__ if (v := _get(link, k, int, "link")) is not None}
    if timing:
        out["link"] = replace(LinkTiming(), **timing)
    return out


def build_config(file_settings: Mapping[str, Any], overrides: Mapping[str, Any]) -> TableConfig:
    """Merge file settings with command-line overrides (None = not given) and check them."""
    merged = dict(file_settings)
    merged.update({k: v for k, v in overrides.items() if v is not None})
    for required in ("port", "game", "seats"):
        if required not in merged:
            raise ConfigError(f"{required}: required (give --{required} or set it in the config file)")
    return TableConfig(**merged).checked()


def read_token(config: TableConfig) -> str:
    """The table's all-roles bearer token: $CARDSHOE_TOKEN, else the token file.

    Refuses a token file readable by group or others: the token lets its holder see
    unexposed cards."""
    env = os.environ.get("CARDSHOE_TOKEN")
    if env:
        token = env.strip()
        if len(token) < MIN_TOKEN:
            raise ConfigError(f"CARDSHOE_TOKEN: the token is shorter than {MIN_TOKEN} characters "
                              f"({len(token)}); the API needs at least {MIN_TOKEN}")
        return token
    if config.token_file is None:
        raise ConfigError("table.token_file: set it (or $CARDSHOE_TOKEN, or give each role a token file in "
                          "[roles]); the API needs a token")
    return read_token_file(config.token_file, "table.token_file")


def read_token_file(path: Path, where: str) -> str:
    """A token from a file readable by its owner only, at least 16 characters."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="ascii").strip()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {path}: {exc}") from exc
    if mode & 0o077:
        raise ConfigError(f"{where}: {path} must be readable by its owner only (chmod 600)")
    if len(text) < MIN_TOKEN:
        raise ConfigError(f"{where}: the token in {path} is shorter than {MIN_TOKEN} characters")
    return text


def read_floor_token(config: TableConfig) -> str:
    """This table's own credential on the floor: $CARDSHOE_FLOOR_TOKEN, else floor.token_file."""
    env = os.environ.get("CARDSHOE_FLOOR_TOKEN")
    if env:
        return env.strip()
    if config.floor_token_file is None:
        raise ConfigError("floor.token_file: set it (or $CARDSHOE_FLOOR_TOKEN): this table's own token on the floor "
                          "([tables.NAME] token_file in the floor's file)")
    return read_token_file(config.floor_token_file, "floor.token_file")


def read_floor_public_key(config: TableConfig) -> bytes | None:
    """The floor's public key of `[floor] public_key` (64 hex characters, or a file of them)."""
    text = config.floor_public_key
    if text is None:
        return None
    if not all(c in "0123456789abcdefABCDEF" for c in text.strip()) or len(text.strip()) != 64:
        try:
            text = Path(text).read_text(encoding="ascii").strip()
        except OSError as exc:
            raise ConfigError(f"floor.public_key: neither 64 hex characters nor a readable file: {exc}") from exc
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise ConfigError("floor.public_key: not hex") from None
    if len(key) != 32:
        raise ConfigError(f"floor.public_key: {len(key)} bytes, not 32")
    return key


def read_role_tokens(config: TableConfig) -> dict[str, list[str]]:
    """The per-role tokens of the table file's [roles] section: token -> roles."""
    out: dict[str, list[str]] = {}
    for role, path in config.role_token_files:
        out.setdefault(read_token_file(path, f"roles.{role}"), []).append(role)
    return out
