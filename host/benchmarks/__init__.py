"""`cardshoe bench [NAME ...]`: run benchmark scripts that print figures.

Benchmarks measure and print; they never assert a speed. Each module in this package
named in BENCHMARKS exposes `main(argv) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Sequence

BENCHMARKS: dict[str, str] = {
    "protocol": "host decode-and-verify frames/s and firmware encode time per card frame",
    "firmware": "firmware peak heap over a full shoe and time per card, read to frame written",
    "poker": "hand evaluations per second beside an established evaluator",
    "daemon": "card-to-event latency over a pseudo-terminal with the journal on, CPU per card",
    "floor": ("N tables in several processes into one floor on PostgreSQL, with a restart or failover and a cut: "
              "ingest rate, pool-update p50/p99, search latency, memory"),
    "shuffle": "the shuffle alarm: false alarms over 7-riffle decks, detection of 0, 1 and 2 riffles",
    "report": "the shift report: a gaming day of one table, and 100 tables from the floor store",
    "floordays": "the floor's gaming-day archive: time to archive a day, search on its partition vs its file",
    "gamingday": "the gaming day's rollover: how long the table's lock is held, by the day's size",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the named benchmarks (all when none is named) and print their figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench", description=__doc__)
    parser.add_argument("names", nargs="*", help="benchmarks to run")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args, rest = parser.parse_known_args(list(argv or []))
    if args.list:
        for name, text in BENCHMARKS.items():
            print(f"{name:<9} {text}")
        return 0
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})")
    status = 0
    for name in args.names or list(BENCHMARKS):
        print(f"== {name}: {BENCHMARKS[name]}", flush=True)
        module = importlib.import_module(f"cardshoe.benchmarks.{name}")
        status |= int(module.main(rest) or 0)
    return status
