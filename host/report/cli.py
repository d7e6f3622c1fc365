"""`cardshoe report`: the shift report from journals or the floor (docs/report.md).

    cardshoe report --journal T07-day.sqlite [--journal T08-day.sqlite ...] [--from 2026-11-27T06:00]
        [--to 2026-11-28T06:00] --out shift.html|shift.pdf|shift.json
    cardshoe report --floor-sqlite floor.sqlite | --floor-postgres DSN [--table T07] --out ...
    cardshoe report --refresh-theory [GAME ...]

Several journals are read as several sources (a table's gaming days, or many tables); each
round counts in the window when it opened in it.

A gaming-day cut (issue 25): `--day 2026-11-27 [--day-ends 06:00] [--zone UTC]` is the window
from that day's start (06:00 local on the 27th) to the next day's; `--days-dir DIR` reads the
day files the daemon wrote there (`[journal] dir`, every table's), with `--day` only that day's
(a round is played in one day's file: one in play at the hour finishes there, and no round
opens in a day after its hour).
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from cardshoe.report.alarm import AlarmPolicy, evaluate
from cardshoe.report.figures import Figures, Options
from cardshoe.report.shift import TableShift, read_table

__all__ = ["main", "from_journals", "from_floor"]

#: The entry kinds the report reads.
KINDS = ("event", "settlement")


def _time(text: str) -> int:
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a time as YYYY-MM-DDTHH:MM[:SS][+HH:MM]") from None
    if dt.tzinfo is None:
        dt = dt.astimezone()
    return int(dt.timestamp() * 1e9)


def _day(text: str) -> Any:
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a gaming day as YYYY-MM-DD") from None


def day_bounds(day: Any, ends: str, zone: str | None) -> tuple[int, int]:
    """The gaming day `day`'s window (unix ns): from its `ends` hour to the next day's."""
    from datetime import datetime as dt, timedelta

    from cardshoe.daemon.gamingday import parse_day_ends, zone_of

    minutes = parse_day_ends(ends)
    tz = zone_of(zone)
    start = dt(day.year, day.month, day.day) + timedelta(minutes=minutes)
    end = start + timedelta(days=1)
    if tz is None:
        a, b = start.astimezone(), end.astimezone()
    else:
        a, b = start.replace(tzinfo=tz), end.replace(tzinfo=tz)
    return int(a.timestamp() * 1e9), int(b.timestamp() * 1e9)


def day_files(directory: Path, day: Any | None) -> list[Path]:
    """The day files in `directory` (`NAME.YYYY-MM-DD.sqlite`), of `day` when given."""
    import re

    pattern = re.compile(r"^.+\.(\d{4}-\d{2}-\d{2})\.sqlite$")
    out = []
    for path in sorted(directory.iterdir()):
        m = pattern.match(path.name)
        if m is not None and (day is None or m[1] == day.isoformat()):
            out.append(path)
    return out


def from_journals(paths: Iterable[Path]) -> list[TableShift]:
    """Each journal read (read-only: nothing is created beside it)."""
    from cardshoe.journal import JournalReader

    out = []
    for path in paths:
        with JournalReader(path) as reader:
            out.append(read_table(reader.entries(KINDS), str(path)))
    return out


def from_floor(store: Any, tables: list[str] | None = None) -> list[TableShift]:
    """Every table the floor holds (or those named: a name finds all its journals), from its copy of the journals."""
    out = []
    for t in store.tables():
        key = str(t["table"])
        if tables and key not in tables and str(t.get("name")) not in tables:
            continue
        out.append(read_table(_floor_entries(store, key), f"floor:{key}"))
    return out


def _floor_entries(store: Any, table: str) -> Iterable[Any]:
    after = 0
    while True:
        page = store.entries(table, after_id=after, limit=10_000)
        for e in page:
            if e.kind in KINDS:
                yield e
        if len(page) < 10_000:
            return
        after = page[-1].id


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardshoe report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--journal", type=Path, action="append", default=[], help="a table's journal (repeat)")
    p.add_argument("--floor-sqlite", type=Path, help="the floor's SQLite store")
    p.add_argument("--floor-postgres", metavar="DSN", help="the floor's PostgreSQL store")
    p.add_argument("--table", action="append", default=[], help="with the floor: only this table (repeat)")
    p.add_argument("--from", dest="since", type=_time, help="rounds opened at or after this time")
    p.add_argument("--to", dest="until", type=_time, help="rounds opened before this time")
    p.add_argument("--day", type=_day, help="a gaming day (YYYY-MM-DD): --from and --to are its bounds")
    p.add_argument("--day-ends", default="06:00", help="the hour the gaming day ends (HH:MM, default 06:00)")
    p.add_argument("--zone", help="the zone of that hour (an IANA name or UTC; default the host's)")
    p.add_argument("--days-dir", type=Path, help="the day files' folder ([journal] dir): its journals are read")
    p.add_argument("--out", type=Path, help="FILE.html, FILE.pdf or FILE.json")
    p.add_argument("--band-z", type=float, default=2.0, help="the band drawn: theoretical +- this many sd")
    p.add_argument("--alarm-z", type=float, default=3.0, help="the alarm's family-wise z (docs/report.md)")
    p.add_argument("--min-rounds", type=int, default=100, help="the alarm's minimum rounds per group")
    p.add_argument("--sides", choices=("both", "low"), default="both")
    p.add_argument("--looks", choices=("one", "every"), default="one",
                   help="one: the report is read once, z at that look (default); every: the sequential "
                        "boundary the live alarm uses, a rate per shift (docs/report.md)")
    p.add_argument("--shifts", default="6,14,22", help="local hours at which shifts begin (default 6,14,22)")
    p.add_argument("--refresh-theory", nargs="*", metavar="GAME",
                   help="recompute the moments from the par sheets (all games if none named) and exit")
    return p


def main(argv: list[str]) -> int:
    """`cardshoe report ...`; exit 0 written, 1 with alarms, 2 bad input."""
    args = _parser().parse_args(argv)
    if args.refresh_theory is not None:
        from cardshoe.report.theory import refresh

        refresh(args.refresh_theory or None, log=lambda m: print(m, file=sys.stderr))
        return 0
    if args.out is None:
        print("cardshoe report: --out FILE.html|.pdf|.json is required", file=sys.stderr)
        return 2
    if args.out.suffix.lower() not in (".json", ".html", ".pdf"):
        print(f"cardshoe report: --out: {args.out.name}: the suffix must be .json, .html or .pdf", file=sys.stderr)
        return 2
    try:
        shifts = tuple(int(h) for h in args.shifts.split(",") if h.strip())
        if not shifts or any(not 0 <= h < 24 for h in shifts):
            raise ValueError
    except ValueError:
        print(f"cardshoe report: --shifts: {args.shifts!r}: hours 0-23 separated by commas", file=sys.stderr)
        return 2
    if not args.journal and args.floor_sqlite is None and args.floor_postgres is None and args.days_dir is None:
        print("cardshoe report: name --journal J (repeat) or the floor (--floor-sqlite / --floor-postgres)",
              file=sys.stderr)
        return 2
    if args.day is not None:
        if args.since is not None or args.until is not None:
            print("cardshoe report: --day is a window of its own: not with --from/--to", file=sys.stderr)
            return 2
        try:
            args.since, args.until = day_bounds(args.day, args.day_ends, args.zone)
        except ValueError as exc:
            print(f"cardshoe report: {exc}", file=sys.stderr)
            return 2
    if args.days_dir is not None:
        if not args.days_dir.is_dir():
            print(f"cardshoe report: --days-dir: {args.days_dir} is not a folder", file=sys.stderr)
            return 2
        args.journal = list(args.journal) + day_files(args.days_dir, args.day)
        if not args.journal:
            print(f"cardshoe report: --days-dir: no day files{' of ' + str(args.day) if args.day else ''} in "
                  f"{args.days_dir}", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    try:
        tables = from_journals(args.journal)
        if args.floor_sqlite is not None or args.floor_postgres is not None:
            from cardshoe.floor.store import FloorStore

            store = FloorStore.sqlite(args.floor_sqlite) if args.floor_sqlite is not None \
                else FloorStore.postgres(args.floor_postgres)
            try:
                tables += from_floor(store, args.table)
            finally:
                store.close()
    except Exception as exc:  # noqa: BLE001 - one line naming the source, never a traceback
        print(f"cardshoe report: {type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    read_s = time.perf_counter() - t0
    opts = Options(since_ns=args.since, until_ns=args.until, band_z=args.band_z, shift_starts=shifts)
    figures = Figures(opts).update(tables)
    report = figures.report()
    policy = AlarmPolicy(z=args.alarm_z, min_rounds=args.min_rounds, sides=args.sides, looks=args.looks)
    alarms = evaluate(figures, policy)
    from cardshoe.report.render import write

    write(report, alarms, args.out)
    total = time.perf_counter() - t0
    rounds = sum(g.get("pace", {}).get("rounds", 0) for g in report["groups"]["table"].values())
    print(f"cardshoe report: {len(tables)} journal(s), {rounds} rounds, {len(alarms)} alarm(s): {args.out} "
          f"(read {read_s:.2f} s, total {total:.2f} s)")
    for a in alarms:
        print(f"ALARM {a['message']}")
    return 1 if alarms else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
