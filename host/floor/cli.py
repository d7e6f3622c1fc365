"""`cardshoe floor`: the floor server, a local PostgreSQL for one machine, and the audit.

    cardshoe floor serve --link megalink-tcp:5000000:50000 [--postgres DSN | --pg-dir DIR | --sqlite FILE]
    cardshoe floor pg start DIR      # initdb (first time) and start a PostgreSQL of this machine in DIR
    cardshoe floor pg stop DIR
    cardshoe floor audit --link NAME:RESET:RATE_PPM[:START] TABLE=JOURNAL ... [--postgres DSN | --sqlite FILE]

With neither --postgres nor --pg-dir, the store is SQLite (`--sqlite`, default floor.sqlite):
a small room needs no server. `--link` is NAME:RESET:RATE_PPM[:START] (minor units; the rate
in parts per million of each progressive stake in action; START the opening pool, default
RESET); give it once per link. The token is $CARDSHOE_FLOOR_TOKEN or --token-file (0600).
"""

from __future__ import annotations

import argparse
import json
import os
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


def _store(args: argparse.Namespace) -> Any:
    from .store import FloorStore

    if args.postgres:
        return FloorStore.postgres(args.postgres)
    if getattr(args, "pg_dir", None):
        from .pgserver import PgCluster

        directory = Path(args.pg_dir)
        cluster = _pg_start(directory)
        return FloorStore.postgres(cluster.dsn)
    return FloorStore.sqlite(args.sqlite)


def _pg_start(directory: Path) -> Any:
    from .pgserver import PgCluster

    state = directory / "cardshoe-pg.json"
    if state.exists():
        cluster = PgCluster(directory, port=int(json.loads(state.read_text())["port"]))
        if not (directory / "data" / "postmaster.pid").exists():
            cluster.start()
    else:
        cluster = PgCluster.create(directory)
    state.write_text(json.dumps({"port": cluster.port}))
    return cluster


def main(argv: list[str]) -> int:
    """Entry point of `cardshoe floor`."""
    parser = argparse.ArgumentParser(prog="cardshoe floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def store_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--postgres", metavar="DSN", help="a PostgreSQL connection string or URL")
        p.add_argument("--pg-dir", metavar="DIR", help="start (or reuse) this machine's PostgreSQL in DIR")
        p.add_argument("--sqlite", metavar="FILE", default="floor.sqlite", help="the embedded store (default)")

    serve = sub.add_parser("serve", help="run the floor API")
    store_args(serve)
    serve.add_argument("--link", type=parse_link, action="append", default=[], metavar="NAME:RESET:RATE_PPM[:START]")
    serve.add_argument("--listen", default="127.0.0.1:8700", metavar="HOST:PORT",
                       help="the floor API's address (default 127.0.0.1:8700; PORT 0: a free port the kernel picks)")
    serve.add_argument("--port-file", type=Path, metavar="PATH",
                       help="once the API listens, write its port number to PATH (a temp file renamed over it)")
    serve.add_argument("--token-file", type=Path, help="the all-roles token (else $CARDSHOE_FLOOR_TOKEN)")
    pg = sub.add_parser("pg", help="this machine's PostgreSQL for the floor (Debian's package)")
    pg.add_argument("action", choices=("start", "stop"))
    pg.add_argument("directory", type=Path)
    aud = sub.add_parser("audit", help="recompute a link's pool from the tables' journals")
    store_args(aud)
    aud.add_argument("--link", type=parse_link, required=True, metavar="NAME:RESET:RATE_PPM[:START]")
    aud.add_argument("journals", nargs="+", metavar="TABLE=JOURNAL")
    args = parser.parse_args(argv)

    if args.command == "pg":
        from .pgserver import PgCluster

        if args.action == "start":
            cluster = _pg_start(args.directory)
            print(json.dumps({"dsn": cluster.dsn, "tcp_dsn": cluster.tcp_dsn}))
        else:
            PgCluster(args.directory).stop()
        return 0
    if args.command == "audit":
        return _audit(args)
    return _serve(args)


def _audit(args: argparse.Namespace) -> int:
    from cardshoe.journal import JournalReader

    from .audit import audit, rounds_of_journal

    rounds = []
    for item in args.journals:
        table, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"{item!r} is not TABLE=JOURNAL")
        with JournalReader(Path(path)) as reader:
            rounds += rounds_of_journal(table, ((e.kind, e.round_id, e.body)
                                                for e in reader.entries(("input", "settlement"))), args.link.name)
    report = audit(args.link, rounds)
    out = report.to_json()
    if args.postgres or args.pg_dir or os.path.exists(args.sqlite):
        store = _store(args)
        floor = store.pool(args.link.name)
        out["floor_pool"], out["floor_carry"] = floor["pool"], floor["carry"]
        if (floor["pool"], floor["carry"], floor["rounds"]) != (report.pool, report.carry, report.rounds):
            report.problems.append(f"the floor holds pool {floor['pool']} carry {floor['carry']} after "
                                   f"{floor['rounds']} rounds; the journals say {report.pool} {report.carry} after "
                                   f"{report.rounds}")
            out["problems"] = report.problems
        store.close()
    print(json.dumps(out, indent=2))
    return 1 if report.problems else 0


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from cardshoe.daemon.config import parse_listen, read_token_file
    from cardshoe.daemon.listen import ListenError, bind_api, bound_port, url_of, write_port_file

    from .api import create_floor_app
    from .store import FloorStore

    token = os.environ.get("CARDSHOE_FLOOR_TOKEN", "").strip()
    if not token:
        if args.token_file is None:
            raise SystemExit("a token is needed: --token-file FILE (0600) or $CARDSHOE_FLOOR_TOKEN")
        token = read_token_file(args.token_file, "--token-file")
    host, port = parse_listen(args.listen)
    # Bound here, not by uvicorn, so that port 0 works and the port a parent reads (the line
    # below, --port-file) is the one this process holds: see cardshoe.daemon.listen.
    try:
        sock = bind_api(host, port, "--listen")
    except ListenError as exc:
        raise SystemExit(f"cardshoe floor: {exc}") from None
    store = _store(args)
    for link in args.link:
        store.configure_link(link)
    if args.port_file is not None:
        try:
            write_port_file(args.port_file, bound_port(sock))
        except ListenError as exc:
            raise SystemExit(f"cardshoe floor: {exc}") from None
    print(f"cardshoe floor: {store.kind} store, links {', '.join(l['link'] for l in store.links()) or 'none'}, "
          f"{url_of(sock)}/floor", file=sys.stderr, flush=True)
    # Settlements get connections of their own (PostgreSQL); SQLite has one connection for all.
    settle_store = FloorStore.postgres(store.target, pool_size=4) if store.kind == "postgres" else store
    uvicorn.Server(uvicorn.Config(create_floor_app(store, token, settle_store=settle_store),
                                  log_level="warning")).run(sockets=[sock])
    if settle_store is not store:
        settle_store.close()
    store.close()
    return 0
