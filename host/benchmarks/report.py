"""`cardshoe bench report`: the shift report's time for a gaming day of one table and for many
tables from the floor store; with --false-alarms, the hold alarm's false-alarm rate over honest
shifts.

    cardshoe bench report [--rounds 1000] [--tables 100] [--pdf] [--floor-calls 3]
    cardshoe bench report --false-alarms SHIFTS [--rounds 300] [--z 3] [--min-rounds 100]
        [--sides both|low] [--looks every|one]

--false-alarms deals SHIFTS honest shifts of --rounds rounds on the simulated table, each looked
at after every round as the daemon looks (`LiveShift`), and prints the share of shifts that
raised an alarm with its exact (Clopper-Pearson) 95% interval, beside the rate the alarm
promises (docs/report.md, "The alarm"). `--looks one` looks with the one-look threshold instead
(what the live alarm did before the sequential boundary).

A gaming day is dealt by the bench's simulated table (`cardshoe.hil.shiftsim`: the daemon's own
table core, a seeded shoe, a dealer's pace) and written as a journal; `cardshoe report`'s code
then reads it and writes the HTML (and PDF). For the floor, the same day is shipped to an SQLite
floor store as `--tables` tables (`FloorStore.ingest`, as the tables' shippers do), and the report
reads them all back from the store. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path
from typing import Any

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
    p.add_argument("--z", type=float, default=3.0, help="with --false-alarms: the alarm's family-wise z")
    p.add_argument("--min-rounds", type=positive_int, default=100, help="with --false-alarms: the alarm's minimum")
    p.add_argument("--sides", choices=("both", "low"), default="both")
    p.add_argument("--looks", choices=("every", "one"), default="every",
                   help="with --false-alarms: the sequential boundary (every) or the one-look threshold")
    p.add_argument("--floor-calls", type=positive_int, default=3,
                   help="GET /report's figures this many times as the floor answers them (the first reads all)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    from cardshoe.floor.store import FloorStore, ShippedEntry
    from cardshoe.hil.shiftsim import write_journal
    from cardshoe.journal.chain import entry_hash, genesis
    from cardshoe.report.alarm import AlarmPolicy, evaluate
    from cardshoe.report.cli import from_floor, from_journals
    from cardshoe.report.figures import Figures, Options
    from cardshoe.report.render import to_html, to_pdf

    if args.false_alarms:
        policy = AlarmPolicy(z=args.z, min_rounds=args.min_rounds, sides=args.sides, looks=args.looks)
        return _false_alarms(args.false_alarms, args.rounds, args.seed, policy)
    t0 = time.perf_counter()
    dealt = _day(args.rounds + args.floor_calls - 1, args.seed)
    ends = [e.id for e in dealt if e.kind == "settlement"]
    entries = [e for e in dealt if e.id <= ends[args.rounds - 1]]
    later = [[e for e in dealt if ends[args.rounds + k - 1] < e.id <= ends[args.rounds + k]]
             for k in range(args.floor_calls - 1)]
    print(f"dealt a gaming day of {args.rounds} rounds ({len(entries)} journal entries read by the report) in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    one_look = AlarmPolicy(looks="one")  # a printed report is read once
    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-report-") as tmp:
        journal = Path(tmp) / "T1.sqlite"
        write_journal(entries, journal)
        t1 = time.perf_counter()
        tables = from_journals([journal])
        t2 = time.perf_counter()
        figures = Figures(Options()).update(tables)
        report = figures.report()
        alarms = evaluate(figures, one_look)
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
            # Shipped as a daemon ships them: hash-chained from the journal's genesis (every
            # table's stream is "T<n>.bench", journal id "bench": one chain serves them all).
            prev = [genesis("bench")]

            def shipped(part: list[Any]) -> list[ShippedEntry]:
                out = []
                for e in part:
                    prev[0] = entry_hash(prev[0], e.id, e.t_ns, e.kind, None, None, None, None, e.round_id, e.body,
                                         None)
                    out.append(ShippedEntry(e.id, e.t_ns, e.kind, None, None, None, None, e.round_id, e.body, None,
                                            prev[0]))
                return out

            day = shipped(entries)
            more = [shipped(part) for part in later]
            t5 = time.perf_counter()
            for n in range(args.tables):
                for k in range(0, len(day), 1000):
                    store.ingest(f"T{n + 1:03d}.bench", day[k:k + 1000], game="three-card-poker")
            t6 = time.perf_counter()
            print(f"shipped it as {args.tables} tables to an SQLite floor store in {t6 - t5:.1f} s", flush=True)
            tables = from_floor(store)
            t7 = time.perf_counter()
            figures = Figures(Options()).update(tables)
            report = figures.report()
            alarms = evaluate(figures, one_look)
            t8 = time.perf_counter()
            html = to_html(report, alarms)
            t9 = time.perf_counter()
            print(f"{args.tables} tables from the floor store ({args.tables * args.rounds} rounds): read "
                  f"{t7 - t6:.2f} s, figures and alarm {t8 - t7:.2f} s, HTML {t9 - t8:.2f} s; total {t9 - t6:.2f} s",
                  flush=True)
            _floor_calls(store, args.tables, args.floor_calls, more)
        finally:
            store.close()
    return 0


def _floor_calls(store: Any, tables: int, calls: int, more: list[list[Any]]) -> None:
    """The floor's GET /report as the floor page calls it (the whole day's window, every
    table's sequential alarm): the first call reads every journal; before each later call
    every table ships one more round, which is all the call reads and counts."""
    from fastapi.testclient import TestClient

    from cardshoe.floor.api import create_floor_app
    from cardshoe.floor.auth import Credential, FloorGuard
    from cardshoe.floor.rebuild import Rebuilder
    from cardshoe.floor.settle import FloorSettler

    token = "bench-floor-report-pit-token-0123456789"
    # The pit's credential reads the report; no table settles here (no shoe keys, no signer).
    app = create_floor_app(store, FloorGuard([(token, Credential("pit"))]),
                           FloorSettler(store, Rebuilder(store, lambda _t: None), None))
    client = TestClient(app, headers={"Authorization": f"Bearer {token}"})
    for call in range(calls):
        if call:
            for n in range(tables):
                store.ingest(f"T{n + 1:03d}.bench", more[call - 1], game="three-card-poker")
        t = time.perf_counter()
        r = client.get("/report", params={"since_ns": 0})
        took = time.perf_counter() - t
        rounds = sum(g["pace"]["rounds"] for g in r.json()["groups"]["table"].values())
        print(f"floor GET /report, call {call + 1} ({'every journal read' if not call else 'one more round a table'}"
              f"): {took:.2f} s, {rounds} rounds, HTTP {r.status_code}", flush=True)


def binomial_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial rate from k successes in n trials."""
    tail = (1 - confidence) / 2

    def upper_tail(p: float) -> float:  # P(X >= k)
        return 1.0 - sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k))

    def lower_tail(p: float) -> float:  # P(X <= k)
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))

    def solve(f: Any, goal: float, rising: bool) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if (f(mid) < goal) == rising:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(upper_tail, tail, True)
    high = 1.0 if k == n else solve(lower_tail, tail, False)
    return low, high


def _false_alarms(shifts: int, rounds: int, seed: int, policy: Any) -> int:
    """Honest shifts, each looked at after every round as the daemon does: how many raise an alarm."""
    from datetime import datetime

    from cardshoe.hil.shiftsim import SimTable
    from cardshoe.report.alarm import family_alpha
    from cardshoe.report.live import LiveShift

    start = int(datetime(2027, 1, 15, 6, 5).astimezone().timestamp() * 1e9)
    fired = 0
    t0 = time.perf_counter()
    for s in range(shifts):
        table = SimTable(name="T1", seed=seed + s, start_ns=start)
        raised: list[Any] = []
        live = LiveShift("sim", policy=policy, clock=lambda: table.t,
                         on_alarm=lambda kind, a: raised.append(a) if kind == "hold_alarm" else None)
        seen = 0
        for r in range(rounds):
            if r % 60 == 0:
                table.sign_on(f"D{r // 60:03d}")
            table.deal_round(table.random_wagers())
            for e in table.entries[seen:]:
                live.feed(e)
            seen = len(table.entries)
            live.look()
        fired += bool(raised)
        first = raised[0] if raised else None
        print(f"shift {s + 1}: {len(raised)} alarm(s)" + (f"; first: {first['message']}" if first else ""),
              flush=True)
    low, high = binomial_interval(fired, shifts)
    promise = family_alpha(policy)
    look = "the sequential boundary" if policy.looks == "every" else "the one-look threshold"
    print(f"honest shifts of {rounds} rounds, looked at after every round with {look} (z {policy.z}, sides "
          f"{policy.sides}, min {policy.min_rounds} rounds): {fired} of {shifts} raised an alarm: "
          f"{fired / shifts:.2%} (95% interval {low:.2%} - {high:.2%}); promised: at most {promise:.2%} per "
          f"{'shift' if policy.looks == 'every' else 'look'} ({time.perf_counter() - t0:.0f} s)")
    return 0
