"""`cardshoe run`: serve one table: the shoe on a serial port, the journal, the HTTP API.

    cardshoe run --port /dev/ttyACM0 --game three-card-poker --seats 7 \\
        --journal /var/lib/cardshoe/T07.sqlite --token-file /etc/cardshoe/T07.token

or with a table file (`--config table.toml`, see `cardshoe.daemon.config`); options given
on the command line override the file. The API listens on 127.0.0.1:8600 unless told
otherwise (`--listen HOST:0`: on a port the kernel picks; `--listen-fd FD`: on a bound TCP
socket the parent process passes). Once the socket listens the daemon prints
`cardshoe run: listening on http://HOST:PORT` on stderr and, with `--port-file PATH`, writes
PORT to PATH atomically (removed again at a clean stop). The all-roles bearer token (it grants
the controller's, the supervisor's and surveillance's roles) is read from $CARDSHOE_TOKEN or the
token file (created, mode 0600, when the file does not exist yet). The table file's [roles]
section gives each role its own token file (controller, supervisor, surveillance; each created
0600 if absent); with [roles], the all-roles token may be left out altogether.

Exit status (each failure is one line on stderr):
  0  stopped by SIGTERM or SIGINT
  2  bad options or configuration
  3  the journal is in use by another daemon (the line names the holder)
  4  the journal cannot be read as a journal (a text file, truncated, corrupt, another schema)
  5  the journal is read-only
  6  the journal could not be written (disk full, I/O error), at start or while running:
     a cause that may pass, so the systemd unit restarts the daemon
  7  the API's address cannot be listened on (in use, not this PC's) or the port file written:
     a cause that may pass (the port's holder goes), so the systemd unit restarts the daemon
  8  day files (--journal-dir): the host clock says a gaming day before the newest day file's:
     the clock is behind; the unit restarts the daemon (NTP may set the clock right)
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

from cardshoe.journal import JournalError, JournalLocked, JournalReadOnly, JournalUnreadable
from cardshoe.private import open_private, private_dirs
from cardshoe.daemon.listen import (ListenError, announce, bind_api, bound_port, inherited_api_socket, url_of,
                                    write_port_file)
from cardshoe.daemon.config import (GAMES, ConfigError, TableConfig, build_config, load_toml, parse_listen,
                                    read_role_tokens, read_token)

log = logging.getLogger("cardshoe.run")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardshoe run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", help="serial port or pyserial URL of the shoe (e.g. /dev/ttyACM0, spy:///dev/ttyACM0)")
    p.add_argument("--game", choices=GAMES, help="the game at this table")
    p.add_argument("--seats", type=int, help="playing positions on the layout, 1..7")
    p.add_argument("--dealing", choices=("automated", "manual"), help="dealing device (default automated)")
    p.add_argument("--method", choices=("A", "B", "C"), help="Xtreme dealing method (rule 3.7)")
    p.add_argument("--name", help="the table's name, used in round ids (default 'table')")
    p.add_argument("--journal", type=Path, help="the journal file (SQLite; default ./cardshoe-journal.sqlite)")
    p.add_argument("--journal-dir", type=Path,
                   help="a journal file per gaming day in this folder, NAME.YYYY-MM-DD.sqlite (with --day-ends)")
    p.add_argument("--day-ends", metavar="HH:MM", help="the local hour the gaming day ends and rolls over (06:00)")
    p.add_argument("--day-zone", metavar="ZONE", help="the time zone of --day-ends (default the host's)")
    p.add_argument("--keys", type=Path, help="directory of shoe key files (default $CARDSHOE_KEYS or "
                                             "~/.local/share/cardshoe/keys)")
    listen = p.add_mutually_exclusive_group()
    listen.add_argument("--listen", help="HOST:PORT of the HTTP API (default 127.0.0.1:8600; PORT 0: a free port "
                                         "the kernel picks, reported on stderr and in --port-file)")
    listen.add_argument("--listen-fd", type=int, metavar="FD",
                        help="serve the API on this inherited descriptor, a TCP socket the parent process bound "
                             "(it keeps the port across restarts of the daemon); instead of --listen")
    p.add_argument("--port-file", type=Path, metavar="PATH",
                   help="once the API listens, write its port number to PATH (a temp file renamed over it)")
    p.add_argument("--token-file", type=Path,
                   help="the table's all-roles token (controller, supervisor and surveillance; created 0600 if "
                        "absent); per-role tokens come from the table file's [roles] section, and with [roles] "
                        "this may be left out (docs/api.md, \"Authentication and roles\")")
    p.add_argument("--config", type=Path, help="a table TOML file")
    p.add_argument("--journal-restored", action="store_true",
                   help="the journal was restored from a backup or copied from another PC: each shoe is "
                        "taken up at the first frame of its proven current boot, not at the journal's window "
                        "(SPEC 3.4 item 6; every start proves each shoe live with a PING either way)")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    return p


def config_from_args(argv: list[str]) -> TableConfig:
    """The table configuration from command-line options over the config file."""
    args = _parser().parse_args(argv)
    file_settings: dict[str, Any] = load_toml(args.config) if args.config else {}
    overrides: dict[str, Any] = {
        "port": args.port, "game": args.game, "seats": args.seats, "dealing": args.dealing, "method": args.method,
        "name": args.name, "journal": args.journal, "keys": args.keys, "token_file": args.token_file,
        "journal_dir": args.journal_dir, "day_ends": args.day_ends, "day_zone": args.day_zone,
    }
    if args.listen:
        overrides["listen_host"], overrides["listen_port"] = parse_listen(args.listen)
    return build_config(file_settings, overrides)


def _create_token_file(path: Path, what: str) -> None:
    private_dirs(path.parent)
    fd = open_private(path, os.O_WRONLY | os.O_EXCL)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_urlsafe(32) + "\n")
    log.info("created the %s token in %s", what, path)


def ensure_token(config: TableConfig) -> str | None:
    """The all-roles API token; a configured token file that does not exist yet is created
    (0600). None for a table with `[roles]` and neither `token_file` nor $CARDSHOE_TOKEN:
    its per-role tokens are then the only ones (docs/api.md, "Tokens")."""
    env = os.environ.get("CARDSHOE_TOKEN")
    if not env and config.token_file is None and config.role_token_files:
        return None
    if not env and config.token_file is not None and not config.token_file.exists():
        _create_token_file(config.token_file, "table's API (all roles)")
    token: str = read_token(config)
    return token


def ensure_role_tokens(config: TableConfig) -> dict[str, list[str]]:
    """The per-role tokens ([roles]); a role's token file that does not exist yet is created."""
    for role, path in config.role_token_files:
        if not path.exists():
            _create_token_file(path, role)
    return read_role_tokens(config)


def main(argv: list[str]) -> int:
    """Run the daemon until SIGINT/SIGTERM; returns the exit status."""
    try:
        config = config_from_args(argv)
    except ConfigError as exc:
        print(f"cardshoe run: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=getattr(logging, _parser().parse_args(argv).log_level),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        token = ensure_token(config)
        role_tokens = ensure_role_tokens(config)
    except (ConfigError, OSError) as exc:
        print(f"cardshoe run: {exc}", file=sys.stderr)
        return 2

    import uvicorn

    from cardshoe.api import create_app
    from cardshoe.daemon.daemon import Daemon, keystore_keys

    args = _parser().parse_args(argv)
    # The socket is bound before the daemon starts: an address that cannot be had then
    # costs nothing (no journal entry, no shoe opened); and it is bound here, not by
    # uvicorn, so that port 0 works and the port is reported only once it listens.
    try:
        sock = (inherited_api_socket(args.listen_fd) if args.listen_fd is not None
                else bind_api(config.listen_host, config.listen_port))
    except ListenError as exc:
        print(f"cardshoe run: {exc}", file=sys.stderr)
        return EXIT_LISTEN_FAILED
    daemon = Daemon(config, keys=keystore_keys(config.keys), journal_restored=bool(args.journal_restored))
    try:
        daemon.start()
    except JournalError as exc:
        sock.close()
        print(f"cardshoe run: {' '.join(str(exc).split())}", file=sys.stderr)
        return exit_status(exc)
    try:
        # Only now, with the journal open: a parent reading the port may connect at once
        # (the connection waits in the backlog until uvicorn accepts it).
        if args.port_file is not None:
            write_port_file(args.port_file, bound_port(sock))
    except ListenError as exc:
        sock.close()
        daemon.stop()
        print(f"cardshoe run: {exc}", file=sys.stderr)
        return EXIT_LISTEN_FAILED
    announce(sock)
    if daemon.restored is not None and daemon.restored.mismatches:
        log.error("the journal does not rebuild to what it recorded (%d differences): see `cardshoe replay %s`",
                  len(daemon.restored.mismatches), daemon.config.journal)
    log.info("table %s: %s, %d seats, shoe on %s, journal %s, API on %s (epoch %d)",
             config.name, config.game, config.seats, config.port, daemon.config.journal, url_of(sock), daemon.epoch)
    servers: list[uvicorn.Server] = []
    app = create_app(daemon, token, role_tokens=role_tokens, stopping=lambda: bool(servers and servers[0].should_exit))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=5))
    servers.append(server)

    def journal_failed(exc: BaseException) -> None:
        # Runs on the thread whose write failed; uvicorn's main loop sees the flag and stops.
        server.should_exit = True

    daemon.on_fatal(journal_failed)
    # uvicorn stops gracefully on SIGTERM/SIGINT, then re-raises the signal to the handler
    # that was in place before it: this one, so the journal is drained and closed below
    # instead of the process dying by the signal.
    def stopped(signum: int, _frame: object) -> None:
        raise _Stopped(signum)

    previous = {sig: signal.signal(sig, stopped) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run(sockets=[sock])
    except _Stopped as exc:
        log.info("stopping on signal %d", exc.signum)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        daemon.stop()
        if args.port_file is not None:
            args.port_file.unlink(missing_ok=True)  # a parent polling for it must not read a dead daemon's port
        log.info("stopped; journal closed")
    if daemon.fatal is not None:
        print(f"cardshoe run: journal {daemon.config.journal} failed while running, stopping to be restarted: "
              f"{' '.join(str(daemon.fatal).split())}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    return 0


EXIT_LOCKED = 3
EXIT_UNREADABLE = 4
EXIT_READ_ONLY = 5
EXIT_WRITE_FAILED = 6
EXIT_LISTEN_FAILED = 7
EXIT_CLOCK_BEHIND = 8


def exit_status(exc: JournalError) -> int:
    """The documented exit status for a journal that cannot be used at start."""
    from cardshoe.daemon.gamingday import DayClockBehind

    if isinstance(exc, DayClockBehind):
        return EXIT_CLOCK_BEHIND
    if isinstance(exc, JournalLocked):
        return EXIT_LOCKED
    if isinstance(exc, JournalUnreadable):
        return EXIT_UNREADABLE
    if isinstance(exc, JournalReadOnly):
        return EXIT_READ_ONLY
    return EXIT_WRITE_FAILED


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
