"""`cardshoe floor`: the floor server, a local PostgreSQL for one machine, the audit, the key.

    cardshoe floor serve --config floor.toml [--link NAME:RESET:RATE_PPM[:START]] [--listen HOST:PORT]
                         [--postgres DSN | --pg-dir DIR | --sqlite FILE] [--port-file PATH] [--workers N]
    cardshoe floor pg start DIR [--standby]   # initdb (first time) and start a PostgreSQL of this machine
                                              # in DIR; --standby: a primary and its synchronous hot standby
    cardshoe floor pg stop DIR
    cardshoe floor pg status DIR     # a pair: which is primary, replication state, lag, sync
    cardshoe floor pg promote DIR    # a pair: fail over to the standby, fence the old primary
    cardshoe floor pg standby DIR    # a pair after a promotion: the old primary made the new one's standby
    cardshoe floor audit --link NAME:RESET:RATE_PPM[:START] [--config floor.toml]
                         [--postgres DSN | --pg-dir DIR | --sqlite FILE] [TABLE=JOURNAL ...]
    cardshoe floor key --config floor.toml   # print the floor's Ed25519 public key
    cardshoe floor days ahead [--days N] [--config floor.toml] [store]   # gaming-day partitions ahead
    cardshoe floor days archive --day YYYY-MM-DD --to FILE [--include-open] [--config floor.toml] [store]
    cardshoe floor days list [--config floor.toml] [store]

The floor's file (`cardshoe.floor.config`, docs/floor.md "The floor's file") names the store,
the links, the floor's signing key, a token file per reader role and, per table, its shipping
credential, its link and its shoes' keys. Options given here override the file's. With no
store named, the store is SQLite (`floor.sqlite`): a small room needs no server. `--link` is
NAME:RESET:RATE_PPM[:START] (minor units; the rate in parts per million of each progressive
stake in action; START the opening pool, default RESET); give it once per link. `--workers N`
(or `[floor] workers`) serves the API in N processes on the one socket, PostgreSQL only
(`cardshoe.floor.workers`; docs/floor.md, "Several API processes").

`audit` recomputes every assignment and hit from the entries the floor holds (hands from the
cards, payouts by the rules) and names every row that differs; with TABLE=JOURNAL it also
recomputes the pool from those journals alone and compares. Exit 0: nothing differs; 1: a
difference (each printed); 2: a usage error.

`days` (PostgreSQL; docs/floor.md "Gaming-day partitions and retention"): `ahead` makes the
partitions of today's gaming day and the N-1 after it (default `[floor] days_ahead`, 7);
`archive` detaches a day while the floor runs, writes it to FILE (SQLite, with FILE.sha256),
checks it, records it and drops the rows (the search reads the day back from FILE); `list`
shows the partitions, the archived days and any day detached but not archived. Exit 0: done;
1: refused (one line saying why).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .progressive import FloorRefusal, LinkSettings

__all__ = ["main", "parse_link"]


def parse_link(text: str) -> LinkSettings:
    """NAME:RESET:RATE_PPM[:START] -> LinkSettings (argparse type; raises ArgumentTypeError)."""
    parts = text.split(":")
    if len(parts) not in (3, 4) or not all(p.isdigit() for p in parts[1:]):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME:RESET:RATE_PPM[:START] (integers, minor units)")
    try:
        return LinkSettings(parts[0], int(parts[1]), int(parts[2]),
                            None if len(parts) == 3 else int(parts[3])).checked()
    except FloorRefusal as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _worker_count(text: str) -> int:
    """--workers N: 1..MAX_WORKERS (argparse type; raises ArgumentTypeError)."""
    from .config import MAX_WORKERS

    if not text.isdigit() or not 1 <= int(text) <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of worker processes, 1..{MAX_WORKERS}")
    return int(text)


def _config(args: argparse.Namespace) -> Any:
    from .config import ConfigError, FloorConfig, load_floor_config

    cfg = FloorConfig() if getattr(args, "config", None) is None else load_floor_config(args.config)
    if getattr(args, "postgres", None):
        cfg.postgres, cfg.pg_dir, cfg.sqlite = args.postgres, None, None
    elif getattr(args, "pg_dir", None):
        cfg.postgres, cfg.pg_dir, cfg.sqlite = None, Path(args.pg_dir), None
    elif getattr(args, "sqlite", None):
        cfg.postgres, cfg.pg_dir, cfg.sqlite = None, None, Path(args.sqlite)
    given = {link.name for link in getattr(args, "link", None) or []}
    cfg.links = [link for link in cfg.links if link.name not in given] + list(getattr(args, "link", None) or [])
    if getattr(args, "listen", None):
        cfg.listen = args.listen
    for name, table in cfg.tables.items():
        names = {link.name for link in cfg.links}
        if table.link is not None and names and table.link not in names:
            raise ConfigError(f"tables.{name}.link: {table.link!r} is not a link of this floor")
    return cfg


def _store(cfg: Any) -> Any:
    from .days import DayRule
    from .store import FloorStore

    rule = None
    if getattr(cfg, "day_ends", None) is not None or getattr(cfg, "zone", None) is not None:
        rule = DayRule(cfg.day_ends or "06:00", cfg.zone)
    if cfg.postgres:
        return FloorStore.postgres(cfg.postgres, day_rule=rule, read_only=bool(getattr(cfg, "read_only", False)))
    if cfg.pg_dir is not None:
        from .pgserver import PgPair

        if PgPair.exists(Path(cfg.pg_dir)):  # a primary and its standby: write through the pair's writer DSN
            pair = PgPair.open(Path(cfg.pg_dir))
            pair.ensure_started()
            return FloorStore.postgres(pair.writer_dsn, day_rule=rule)
        return FloorStore.postgres(_pg_start(Path(cfg.pg_dir))[0].dsn, day_rule=rule)
    return FloorStore.sqlite(cfg.sqlite if cfg.sqlite is not None else "floor.sqlite", day_rule=rule)


def _pg_start(directory: Path) -> tuple[Any, str]:
    """This machine's cluster in `directory`, running: (cluster, what was done). Raises
    PgStartRefused with what to do rather than report a server that is not there."""
    from .pgserver import PgCluster

    state = directory / "cardshoe-pg.json"
    if not state.exists() and (directory / "data" / "PG_VERSION").exists():
        from .pgserver import PgStartRefused

        pair = directory.parent
        hint = (f"it is a node of the pair in {pair}: cardshoe floor pg start {pair} --standby"
                if (pair / "cardshoe-pair.json").exists() else "start it with pg_ctl, or give a new directory")
        raise PgStartRefused(f"{directory / 'data'} holds a cluster this command did not make here (no {state.name}): "
                             + hint)
    if state.exists():
        cluster = PgCluster(directory, port=int(json.loads(state.read_text())["port"]))
        done = cluster.ensure_started()
    else:
        cluster = PgCluster.create(directory)
        done = "created"
    state.write_text(json.dumps({"port": cluster.port}))
    return cluster, done


def _pg(args: argparse.Namespace) -> int:
    """`cardshoe floor pg ACTION DIR`: one cluster, or a primary and its hot standby (a pair)."""
    from .pgserver import PgCluster, PgPair, PgStartRefused

    directory: Path = args.directory
    pair = PgPair.exists(directory)
    if args.action == "start" and (args.standby or pair):
        if pair:
            made = PgPair.open(directory)
            done: Any = made.ensure_started()
        else:
            if (directory / "cardshoe-pg.json").exists():
                raise PgStartRefused(f"{directory} holds a single cluster: --standby makes a pair in a new directory")
            made, done = PgPair.create(directory, tcp=False), "created"
        print(json.dumps({"writer_dsn": made.writer_dsn, "reader_dsn": made.reader_dsn, "primary": made.primary_name,
                          "standby": made.standby_name, "generation": made.generation, "done": done}))
        return 0
    if args.action == "start":
        cluster, done = _pg_start(directory)
        print(json.dumps({"dsn": cluster.dsn, "tcp_dsn": cluster.tcp_dsn, "done": done}))
        return 0
    if args.action == "stop":
        if pair:
            PgPair.open(directory).stop()
        else:
            PgCluster(directory).stop()
        return 0
    if not pair:
        raise PgStartRefused(f"{directory} holds no primary and standby: pg {args.action} is for a pair "
                             f"(cardshoe floor pg start {directory} --standby)")
    made = PgPair.open(directory)
    if args.action == "status":
        print(json.dumps(made.status(), indent=2))
    elif args.action == "promote":
        old = made.primary_name
        generation = made.promote()
        print(json.dumps({"primary": made.primary_name, "fenced": old, "generation": generation,
                          "writer_dsn": made.writer_dsn, "done": "promoted"}))
    else:
        kept = made.rebuild_standby()
        print(json.dumps({"primary": made.primary_name, "standby": made.standby_name, "old_data_kept": kept,
                          "reader_dsn": made.reader_dsn, "done": "standby rebuilt"}))
    return 0


def main(argv: list[str]) -> int:
    """Entry point of `cardshoe floor`."""
    parser = argparse.ArgumentParser(prog="cardshoe floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def store_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--postgres", metavar="DSN", help="a PostgreSQL connection string or URL")
        p.add_argument("--pg-dir", metavar="DIR", help="start (or reuse) this machine's PostgreSQL in DIR")
        p.add_argument("--sqlite", metavar="FILE", help="the embedded store (default floor.sqlite)")

    serve = sub.add_parser("serve", help="run the floor API")
    serve.add_argument("--config", type=Path, required=True, help="the floor's file (docs/floor.md)")
    store_args(serve)
    serve.add_argument("--link", type=parse_link, action="append", default=[], metavar="NAME:RESET:RATE_PPM[:START]")
    serve.add_argument("--listen", metavar="HOST:PORT",
                       help="the floor API's address (default 127.0.0.1:8700; PORT 0: a free port the kernel picks)")
    serve.add_argument("--read-only", action="store_true",
                       help="serve reads from a hot standby (--postgres its DSN), refuse every write (503)")
    serve.add_argument("--port-file", type=Path, metavar="PATH",
                       help="once the API listens, write its port number to PATH (a temp file renamed over it)")
    serve.add_argument("--workers", type=_worker_count, metavar="N",
                       help="serve the API in N processes on the one socket (PostgreSQL only; default: the "
                            "file's [floor] workers, else 1)")
    pg = sub.add_parser("pg", help="this machine's PostgreSQL for the floor (Debian's package)")
    pg.add_argument("action", choices=("start", "stop", "status", "promote", "standby"))
    pg.add_argument("directory", type=Path)
    pg.add_argument("--standby", action="store_true",
                    help="start: a primary (DIR/a) and its synchronous hot standby (DIR/b) (docs/floor.md)")
    aud = sub.add_parser("audit", help="recompute every assignment, hit and pool from the floor's entries")
    aud.add_argument("--config", type=Path, help="the floor's file (its store, links and the tables' shoe keys)")
    store_args(aud)
    aud.add_argument("--link", type=parse_link, action="append", default=[], metavar="NAME:RESET:RATE_PPM[:START]")
    aud.add_argument("journals", nargs="*", metavar="TABLE=JOURNAL")
    key = sub.add_parser("key", help="print the floor's Ed25519 public key (made at first use)")
    key.add_argument("--config", type=Path, required=True, help="the floor's file (its signing_key)")
    days = sub.add_parser("days", help="gaming-day partitions (PostgreSQL): make ahead, archive a day, list")
    days.add_argument("action", choices=("ahead", "archive", "list"))
    days.add_argument("--config", type=Path, help="the floor's file (its store, day_ends, zone, days_ahead)")
    store_args(days)
    days.add_argument("--days", type=int, metavar="N", help="ahead: today's gaming day and the N-1 after it")
    days.add_argument("--day", metavar="YYYY-MM-DD", help="archive: the gaming day (named by the date it began on)")
    days.add_argument("--to", type=Path, metavar="FILE", help="archive: the new file to write the day to")
    days.add_argument("--include-open", action="store_true",
                      help="archive: even with streams whose journal has not closed the day (later entries refused)")
    args = parser.parse_args(argv)

    from .config import ConfigError
    from .pgserver import PgStartRefused

    try:
        if args.command == "pg":
            return _pg(args)
        if args.command == "audit":
            return _audit(args)
        if args.command == "days":
            return _days(args)
        if args.command == "key":
            from .signing import FloorSigner

            print(FloorSigner.from_file(_config(args).signing_key).public_key.hex())
            return 0
        return _serve(args)
    except (ConfigError, PgStartRefused) as exc:
        print(f"cardshoe floor {args.command}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2 if isinstance(exc, ConfigError) else 1
    except RuntimeError as exc:  # PostgreSQL's programs failed (initdb, pg_ctl): their words, one line
        if args.command != "pg":
            raise
        print(f"cardshoe floor pg {args.action}: {' '.join(str(exc).split())[:600]}", file=sys.stderr)
        return 1


def _days(args: argparse.Namespace) -> int:
    from .days import archive_day, days_ahead, list_days
    from .store import StoreUnavailable

    cfg = _config(args)
    if args.action == "archive" and (args.day is None or args.to is None):
        raise SystemExit("cardshoe floor days archive: give --day YYYY-MM-DD and --to FILE")
    store = _store(cfg)
    try:
        if args.action == "ahead":
            n = args.days if args.days is not None else cfg.days_ahead
            made = days_ahead(store, n)
            print(json.dumps({"store": store.kind, "made": made, "days": n,
                              **({} if store.kind == "postgres" else
                                 {"note": "the embedded SQLite store is not partitioned: nothing to make"})}))
        elif args.action == "archive":
            print(json.dumps(archive_day(store, args.day, args.to, include_open=args.include_open), indent=2))
        else:
            print(json.dumps(list_days(store), indent=2))
    except FloorRefusal as exc:
        print(f"cardshoe floor days {args.action}: {exc.field}: {exc.message}", file=sys.stderr)
        return 1
    except StoreUnavailable as exc:
        print(f"cardshoe floor days {args.action}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def _primary_of(store: Any) -> str:
    """ (the server the standby streams from), as the standby reports it; "" when it cannot say."""
    try:
        with store._tx() as tx:  # noqa: SLF001 - one read of the standby's own view
            row = tx.q("SELECT sender_host, sender_port FROM pg_stat_wal_receiver")
    except Exception:  # noqa: BLE001 - only a hint in a message
        return ""
    return f" (the server at {row[0][0]}:{row[0][1]})" if row and row[0][0] else ""


def _audit(args: argparse.Namespace) -> int:
    from cardshoe.journal import JournalReader

    from .audit import audit, audit_store, rounds_of_journal

    cfg = _config(args)
    links = {link.name: link for link in cfg.links}
    if not links:
        raise SystemExit("cardshoe floor audit: give --link NAME:RESET:RATE_PPM[:START] (or [links] in --config)")
    store = _store(cfg)
    problems: list[str] = []
    out: dict[str, Any] = {}
    try:
        floor_report = audit_store(store, list(links.values()), keys_for=cfg.key_lookup)
        problems += floor_report.problems
        out["floor"] = floor_report.to_json()
        first = next(iter(links.values()))
        if args.journals:
            rounds = []
            for item in args.journals:
                table, sep, path = item.partition("=")
                if not sep:
                    raise SystemExit(f"cardshoe floor audit: {item!r} is not TABLE=JOURNAL")
                with JournalReader(Path(path)) as reader:
                    rounds += rounds_of_journal(table, ((e.kind, e.round_id, e.body)
                                                        for e in reader.entries(("input", "settlement"))), first.name)
                    top = reader.top()
                held = store.chain_at(table, top.id) if top is not None else None
                if top is not None and top.chain is not None and held is not None and held != top.chain:
                    problems.append(f"{table}: the journal's entry {top.id} differs from the floor's copy")
            report = audit(first, rounds)
            problems += report.problems
            out.update(report.to_json())
        pool = store.pool(first.name)
        out["floor_pool"], out["floor_carry"] = pool["pool"], pool["carry"]
        if args.journals and (pool["pool"], pool["carry"], pool["rounds"]) != (out["pool"], out["carry"],
                                                                             out["rounds"]):
            problems.append(f"the floor holds pool {pool['pool']} carry {pool['carry']} after {pool['rounds']} "
                            f"rounds; the journals say {out['pool']} {out['carry']} after {out['rounds']}")
    finally:
        store.close()
    out["problems"] = problems
    print(json.dumps(out, indent=2))
    return 1 if problems else 0


def _serve(args: argparse.Namespace) -> int:
    from cardshoe.daemon.config import ConfigError as TableConfigError
    from cardshoe.daemon.config import parse_listen, read_token_file
    from cardshoe.daemon.listen import ListenError, bind_api, bound_port, url_of, write_port_file

    from .auth import FloorGuard
    from .config import ConfigError
    from .signing import FloorSigner
    from .store import FloorStore, StoreRefused

    cfg = _config(args)
    if getattr(args, "read_only", False):
        cfg.read_only = True
    if cfg.read_only and not cfg.postgres:
        raise ConfigError("--read-only: a read-only floor reads a hot standby: give --postgres (or floor.postgres) "
                          "the standby's DSN")
    workers = cfg.workers if args.workers is None else args.workers
    if workers > 1 and not (cfg.postgres or cfg.pg_dir is not None):
        raise ConfigError(f"--workers {workers} (or [floor] workers): several API processes need the PostgreSQL "
                          "store, whose locks order every link's settlements; the SQLite store is one file with "
                          "one writer. Give postgres or pg_dir (--postgres DSN, --pg-dir DIR), or --workers 1")
    try:
        guard = FloorGuard(cfg.tokens(read_token_file))
    except (TableConfigError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if not cfg.tables:
        print("cardshoe floor: no [tables.NAME] in the floor's file: no table can ship or settle", file=sys.stderr)
    # Loaded (made, the first time) here, once, before any worker exists: every worker signs
    # with this key, and no two of them race to create the file.
    signer = FloorSigner.from_file(cfg.signing_key)
    try:
        host, port = parse_listen(cfg.listen)
    except TableConfigError as exc:
        raise ConfigError(f"floor.listen: {exc}") from None
    # Bound here, not by uvicorn, so that port 0 works and the port a parent reads (the line
    # below, --port-file) is the one this process holds: see cardshoe.daemon.listen. Workers
    # inherit this one socket.
    try:
        sock = bind_api(host, port, "--listen")
    except ListenError as exc:
        raise SystemExit(f"cardshoe floor: {exc}") from None
    try:
        store = _store(cfg)
    except StoreRefused as exc:  # a standby named as a writer's store: one line naming it
        raise SystemExit(f"cardshoe floor: {exc}") from None
    read_only: str | None = None
    if cfg.read_only:
        # A standby is never written: no link configured, no table created, no settlement.
        read_only = ("this floor is read-only: it serves a hot standby's copy (surveillance's reads); "
                     f"writes go to the floor on the primary{_primary_of(store)}")
    else:
        for link in cfg.links:
            store.configure_link(link)
        if store.kind == "postgres":
            from .days import days_ahead

            days_ahead(store, cfg.days_ahead)  # the gaming days' partitions, made before any table ships
    kind, target = store.kind, store.target
    links = ", ".join(l["link"] for l in store.links()) or "none"
    if workers > 1:
        store.close()  # no connection crosses the fork: each worker opens its own
    if args.port_file is not None:
        try:
            write_port_file(args.port_file, bound_port(sock))
        except ListenError as exc:
            raise SystemExit(f"cardshoe floor: {exc}") from None
    said = (f"cardshoe floor: {kind} store{' (read-only)' if read_only else ''}, links {links}, {len(cfg.tables)} tables, "
            f"key {signer.public_key.hex()}, {url_of(sock)}/floor")
    if workers == 1:
        print(said, file=sys.stderr, flush=True)
        return _serve_app(sock, cfg, guard, signer, store, read_only)

    from .workers import supervise

    def say(line: str) -> None:
        print(f"cardshoe floor: {line}", file=sys.stderr, flush=True)

    def work(_slot: int) -> int:
        return _serve_app(sock, cfg, guard, signer, FloorStore.postgres(target, read_only=read_only is not None),
                          read_only)

    return supervise(workers, work, say=say,
                     started=lambda pids: say(f"{said[len('cardshoe floor: '):]}, {workers} workers "
                                              f"(pids {', '.join(map(str, pids))})"))


def _serve_app(sock: Any, cfg: Any, guard: Any, signer: Any, store: Any, read_only: str | None = None) -> int:
    """Serve the floor API on `sock` over `store` in this process until SIGTERM or SIGINT (a
    worker of `--workers N` runs this after the fork: its connections, rebuilder and settler
    are its own)."""
    import uvicorn

    from .api import create_floor_app
    from .rebuild import Rebuilder
    from .settle import FloorSettler
    from .store import FloorStore

    # Settlements get connections of their own (PostgreSQL); SQLite has one connection for all.
    settle_store = FloorStore.postgres(store.target, pool_size=4) \
        if store.kind == "postgres" and read_only is None else store
    settler = FloorSettler(settle_store, Rebuilder(settle_store, cfg.key_lookup), signer)
    app = create_floor_app(store, guard, settler, link_of=cfg.link_of, public_key=signer.public_key,
                           read_only=read_only)
    try:
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    finally:
        if settle_store is not store:
            settle_store.close()
        store.close()
    return 0
