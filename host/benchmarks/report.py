"""`cardshoe bench report`: the shift report's time for a gaming day of one table and for many
tables from the floor store; with --false-alarms, the hold alarm's false-alarm rate over honest
shifts.

    cardshoe bench report [--rounds 1000] [--tables 100] [--pdf] [--false-alarms SHIFTS]

A gaming day is dealt by the bench's simulated table (`cardshoe.hil.shiftsim`: the daemon's own
table core, a seeded shoe, a dealer's pace) and written as a journal; `cardshoe report`'s code
then reads it and writes the HTML (and PDF). For the floor, the same day is shipped to an SQLite
floor store as `--tables` tables (`FloorStore.ingest`, as the tables' shippers do), and the report
reads them all back from the store. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from cardshoe.argtypes import positive_int


def _day(rounds: int, seed: int) -> list:  # type: ignore[type-arg]
    from cardshoe.hil.shiftsim import SimTable

    table = SimTable(name="T1", seed=seed)
    for r in range(rounds):
        if r % 60 == 0:
            table.sign_on(f"D{r // 60:03d}")
        if r % 25 == 0:
            table.seat_player(1 + (r // 25) % 7, f"P{r // 25:04d}")
        table.deal_round(table.random_wagers())
    return table.entries


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="cardshoe bench report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=positive_int, default=1000, help="rounds in the table's gaming day")
    p.add_argument("--tables", type=positive_int, default=100, help="tables in the floor store")
    p.add_argument("--pdf", action="store_true", help="also time the PDF")
    p.add_argument("--false-alarms", type=int, default=0, metavar="SHIFTS",
                   help="deal this many honest shifts of --rounds rounds and count the alarms raised")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    from cardshoe.floor.store import FloorStore, ShippedEntry
    from cardshoe.hil.shiftsim import write_journal
    from cardshoe.report.alarm import AlarmPolicy, evaluate
    from cardshoe.report.cli import from_floor, from_journals
    from cardshoe.report.figures import Options, build
    from cardshoe.report.render import to_html, to_pdf

    if args.false_alarms:
        return _false_alarms(args.false_alarms, args.rounds, args.seed)
    t0 = time.perf_counter()
    entries = _day(args.rounds, args.seed)
    print(f"dealt a gaming day of {args.rounds} rounds ({len(entries)} journal entries read by the report) in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-report-") as tmp:
        journal = Path(tmp) / "T1.sqlite"
        write_journal(entries, journal)
        t1 = time.perf_counter()
        tables = from_journals([journal])
        t2 = time.perf_counter()
        report = build(tables, Options())
        alarms = evaluate(report, AlarmPolicy())
        t3 = time.perf_counter()
        html = to_html(report, alarms)
        t4 = time.perf_counter()
        print(f"one table, one gaming day ({args.rounds} rounds): read {t2 - t1:.2f} s, figures and alarm "
              f"{t3 - t2:.2f} s, HTML {t4 - t3:.2f} s ({len(html) // 1024} KB); total {t4 - t1:.2f} s", flush=True)
        if args.pdf:
            to_pdf(report, alarms, Path(tmp) / "r.pdf")
            print(f"  PDF {time.perf_counter() - t4:.2f} s", flush=True)
        store = FloorStore.sqlite(Path(tmp) / "floor.sqlite")
        try:
            shipped = [ShippedEntry(e.id, e.t_ns, e.kind, None, None, None, None, e.round_id, e.body, None)
                       for e in entries]
            t5 = time.perf_counter()
            for n in range(args.tables):
                for k in range(0, len(shipped), 1000):
                    store.ingest(f"T{n + 1:03d}.bench", shipped[k:k + 1000], game="three-card-poker")
            t6 = time.perf_counter()
            print(f"shipped it as {args.tables} tables to an SQLite floor store in {t6 - t5:.1f} s", flush=True)
            tables = from_floor(store)
            t7 = time.perf_counter()
            report = build(tables, Options())
            alarms = evaluate(report, AlarmPolicy())
            t8 = time.perf_counter()
            html = to_html(report, alarms)
            t9 = time.perf_counter()
        finally:
            store.close()
        print(f"{args.tables} tables from the floor store ({args.tables * args.rounds} rounds): read {t7 - t6:.2f} s, "
              f"figures and alarm {t8 - t7:.2f} s, HTML {t9 - t8:.2f} s; total {t9 - t6:.2f} s", flush=True)
    return 0


def _false_alarms(shifts: int, rounds: int, seed: int) -> int:
    """Honest shifts, each looked at after every 5 rounds as the daemon does: how many raise an alarm."""
    from datetime import datetime

    from cardshoe.hil.shiftsim import SimTable
    from cardshoe.report.live import LiveShift

    start = int(datetime(2027, 1, 15, 6, 5).astimezone().timestamp() * 1e9)
    fired = 0
    t0 = time.perf_counter()
    for s in range(shifts):
        table = SimTable(name="T1", seed=seed + s, start_ns=start)
        raised: list[object] = []
        live = LiveShift("sim", clock=lambda: table.t,
                         on_alarm=lambda kind, a: raised.append(a) if kind == "hold_alarm" else None)
        seen = 0
        for r in range(rounds):
            if r % 60 == 0:
                table.sign_on(f"D{r // 60:03d}")
            table.deal_round(table.random_wagers())
            if (r + 1) % 5 == 0:
                for e in table.entries[seen:]:
                    live.feed(e)
                seen = len(table.entries)
                live.look()
        fired += bool(raised)
        print(f"shift {s + 1}: {len(raised)} alarm(s)", flush=True)
    print(f"honest shifts of {rounds} rounds, looked at every 5 rounds (z 3.0, min 100 rounds): {fired} of {shifts} "
          f"raised an alarm ({time.perf_counter() - t0:.0f} s)")
    return 0
