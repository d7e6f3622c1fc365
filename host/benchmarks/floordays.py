"""`cardshoe bench floordays`: archiving a gaming day of the floor (issue 24 item 2).

A PostgreSQL cluster of this machine is started for the run (`cardshoe.floor.pgserver`, socket
only) and the floor store made on it. A past gaming day of `--entries` journal entries is
shipped into it through `FloorStore.ingest` (the shipper's path: chain checked, rounds indexed),
as `--tables` streams of Three Card Poker-like rounds (opened, three cards, settled: 5 entries
a round), each closed by `day_closed`; one stream of today ships too. Then:

* the search on the day while it is a partition: `search_rounds` over the day's range, by a
  table's name, and by cards (a sequence no round holds: every round of the day is read), each
  the median of `--repeat` calls;
* `cardshoe floor days archive` of the day (`archive_day`), with its phases: the mark, the
  concurrent detach, writing the file, verifying it and dropping the rows;
* the same searches again, now read from the file: the first call (the file's SHA-256
  computed) and the median after (the file checked by its stat only).

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from cardshoe.cards import parse_card


def _stream(name: str, t0_ns: int, entries: int) -> list[Any]:
    from cardshoe.floor.store import ShippedEntry, stream_genesis

    out: list[Any] = []
    chain = stream_genesis(name)
    table = name.split(".")[0]
    cards = [parse_card(c) for c in ("Ah", "Kd", "7c")]
    while len(out) < entries - 1:
        rid = f"{table}-{len(out) // 5 + 1:06d}"
        for kind, body in (("event", {"type": "round_opened", "game": "three-card-poker"}),
                           *(("event", {"type": "card_placed", "card": c}) for c in cards),
                           ("settlement", {"round_id": rid})):
            if len(out) >= entries - 1:
                break
            e = ShippedEntry(len(out) + 1, t0_ns + len(out) * 700_000_000, kind, None, None, None, None, rid,
                             json.dumps(body), None)
            e = replace(e, chain=e.link().expected(chain))
            chain = str(e.chain)
            out.append(e)
    e = ShippedEntry(len(out) + 1, t0_ns + len(out) * 700_000_000, "daemon", None, None, None, None, None,
                     json.dumps({"type": "day_closed"}), None)
    out.append(replace(e, chain=e.link().expected(chain)))
    return out


def _median_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        n = len(fn())
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), n


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench floordays", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000, help="entries of the archived day (default 100000)")
    parser.add_argument("--tables", type=int, default=20, help="streams (tables) of the day (default 20)")
    parser.add_argument("--repeat", type=int, default=5, help="calls per search figure (default 5)")
    args = parser.parse_args(argv)

    from cardshoe.floor.days import DayRule, archive_day, days_ahead
    from cardshoe.floor.pgserver import PgCluster
    from cardshoe.floor.store import FloorStore

    cluster = PgCluster.create(tcp=False)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-floordays-") as tmp:
            store = FloorStore.postgres(cluster.dsn)
            store.set_day_rule(DayRule("06:00", "UTC"))
            days_ahead(store, 7)
            day = (datetime.now(timezone.utc) - timedelta(days=2)).date()
            t0 = int(datetime(day.year, day.month, day.day, 7, tzinfo=timezone.utc).timestamp()) * 1_000_000_000
            per = args.entries // args.tables
            t = time.perf_counter()
            for k in range(args.tables):
                name = f"B{k:03d}.{k:012x}"
                entries = _stream(name, t0 + k * 1_000_000, per)
                for i in range(0, len(entries), 500):
                    store.ingest(name, entries[i:i + 500])
            ingest_s = time.perf_counter() - t
            live = _stream("L001.aaaaaaaaaaaa", time.time_ns() - 3_600_000_000_000, 500)
            store.ingest("L001.aaaaaaaaaaaa", live)
            total = store.count_entries()
            print(f"day {day}: {total - len(live):,} entries in {args.tables} streams shipped in {ingest_s:.1f} s "
                  f"({(total - len(live)) / ingest_s:,.0f} entries/s through ingest)")
            since = t0 - 3_600_000_000_000
            until = since + 86_400_000_000_000
            searches: dict[str, Callable[[], Any]] = {
                "day range, newest 200": lambda: store.search_rounds(since_ns=since, until_ns=until),
                "one table, whole day": lambda: store.search_rounds(table="B001", since_ns=since, until_ns=until,
                                                                    limit=10_000),
                "cards no round holds": lambda: store.search_rounds(cards="2c 2d 2h", since_ns=since, until_ns=until),
            }
            before = {name: _median_ms(fn, args.repeat) for name, fn in searches.items()}
            out = Path(tmp) / f"floor-day-{day}.sqlite"
            done = archive_day(store, day.isoformat(), out)
            print(f"archive of {done['entries']:,} entries and {done['rounds']:,} rounds: {done['seconds']['total']:.2f} s"
                  f" (mark {done['seconds']['mark']:.2f}, detach concurrently {done['seconds']['detach']:.2f}, write "
                  f"{done['seconds']['write']:.2f}, verify+record+drop {done['seconds']['verify']:.2f}); file "
                  f"{out.stat().st_size / 1e6:.1f} MB")
            print(f"{'search':<24} {'partition ms':>13} {'archive 1st ms':>15} {'archive ms':>11}  rounds")
            from cardshoe.floor import days as days_module

            for name, fn in searches.items():
                days_module._verified.clear()  # the first read of the file: its SHA-256 computed
                t = time.perf_counter()
                n_first = len(fn())
                first = (time.perf_counter() - t) * 1000
                after = _median_ms(fn, args.repeat)
                print(f"{name:<24} {before[name][0]:>13.1f} {first:>15.1f} {after[0]:>11.1f}  "
                      f"{before[name][1]} / {n_first}")
            store.close()
    finally:
        cluster.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
