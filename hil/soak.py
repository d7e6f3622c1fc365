"""`cardshoe hil soak`: shoe after shoe at a dealer's pace, with faults, every card checked.

    cardshoe hil soak --cards 10000 --corrupt 0.01 --drop 0.01 --power-cut-every 5 \\
        --restart-every 7 --unplug-every 11 --seed 1 [--pace 2.5 | --burst]

One virtual table (board, fault relay, daemon) deals shuffled shoes round after round
until `--cards` cards have left the shoe. Each round has 1-7 random seats with random
wagers. Line faults (`--corrupt`: per byte, a bit flipped; `--drop`: per frame, lost;
`--drop-bytes`: per byte, lost) apply all the time, both ways.

The bench deals like a dealer: cards leave at `--pace` cards a second (default 2.5), or
with `--burst` back to back, as fast as the shoe's exit sensor takes them, and it never
waits for the daemon to journal a card before the next, so several cards are in flight
when a fault hits. Every `--power-cut-every` rounds the shoe's power is cut 0-30 ms after
a random card of the deal (the shoe may not have logged it); every `--restart-every`
rounds the daemon is SIGKILLed after a random card and the dealer deals on until it is
back; every `--unplug-every` rounds the USB cable is pulled and the dealer deals on
until it is plugged back in. A card is dealt once: one the shoe lost in a power cut is on
the felt, and the daemon must flag the round for it (5.16, 6.1); the bench counts it
"lost" when the daemon does not.

The bench keeps its own ledger (`cardshoe.hil.ledger`): every card it pushed, in order,
and the hands its own model of the game's dealing order gives them. After each round it
compares, card by card, the ledger with the daemon's API and with the `card_placed`
entries of the daemon's journal (read as a list, so a card journaled twice is seen twice),
and counts each lost, repeated, invented, wrongly read or misplaced card once, by kind. It
settles its own hands offline (a round file built from the ledger, settled by the same
function as `cardshoe settle`) and compares the money with the daemon's settlement.

A progress line every `--progress` seconds. At the end, or when the run stops early (a
step timed out, the daemon died, Ctrl-C), the bench checks the journal's integrity
(SQLite `PRAGMA integrity_check`), runs `cardshoe replay` on it, and prints the totals by
kind, and where it stopped. Exit status 0 only when the run finished with nothing lost,
repeated, invented, wrongly read or misplaced, every settlement equal, and the journal
sound and replaying exactly.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from cardshoe.argtypes import non_negative_int, positive_int, probability
from cardshoe.cards import card_text
from cardshoe.hil.bench import FOREIGN_DECK, Bench, TableSpec, cardshoe_command
from cardshoe.hil.ledger import (FINDING_KINDS, Dealt, RoundLedger, compare, dealing_order, dealt_seats,
                                 journal_cards, money, round_file)
from cardshoe.hil.relay import LineFaults
from cardshoe.hil.table import ApiError, BenchTimeout, wait_for
from cardshoe.hil.workdir import WorkdirRefused, fresh_workdir
from cardshoe.poker import evaluate3

Log = Callable[[str], None]

_Q64 = (42, 17, 11)  # Qh 6d 4s: the bench's players play this or better
#: The soak's table limits, written into the table file, so the bench knows them itself.
LIMITS = {"ante": {"min": 100, "max": 1_000_000}, "play": {"min": 100, "max": 1_000_000},
          "pair_plus": {"min": 100, "max": 1_000_000}, "progressive": {"min": 100, "max": 1_000_000}}
_SUPERVISOR = "bench supervisor"
_SETTLE_WAIT = 20.0  # seconds the table waits for the daemon to show every card dealt
_FAILING = ("lost", "repeated", "extra", "wrong_read", "misplaced")


@dataclass
class SoakTotals:
    """What a soak did and found."""

    cards_dealt: int = 0
    cards_wanted: int = 0
    rounds: int = 0
    shoes: int = 0
    findings: dict[str, int] = field(default_factory=dict)
    rounds_void: dict[str, int] = field(default_factory=dict)
    rounds_voided_by_supervisor: int = 0
    waits_timed_out: int = 0  # rounds where the daemon never showed every card dealt
    # The dealer's own pace, by the bench's clock: seconds from each round's first card to its
    # last, and the card-to-card intervals in them (what the shift report's dealing pace measures).
    deal_seconds: float = 0.0
    deal_intervals: int = 0
    mismatches: int = 0
    problems: list[str] = field(default_factory=list)
    duplicates_dropped: int = 0
    gaps_resent: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    power_cuts: int = 0
    daemon_restarts: int = 0
    unplugs: int = 0
    card_faults: dict[str, int] = field(default_factory=dict)
    line: dict[str, int] = field(default_factory=dict)
    pace: str = ""
    seconds: float = 0.0
    stopped: str | None = None
    journal_integrity: str | None = None
    replay: str | None = None
    run_check: str | None = None
    time_budget: str | None = None  # set when --minutes ended the run before --cards
    run_mismatch: bool = False

    @property
    def lost(self) -> int:
        """Cards the bench dealt that the daemon does not have, and did not flag."""
        return self.findings.get("lost", 0)

    @property
    def repeated(self) -> int:
        """Cards the daemon holds twice."""
        return self.findings.get("repeated", 0)

    @property
    def misplaced(self) -> int:
        """Cards the daemon put in another place than the rules' dealing order."""
        return self.findings.get("misplaced", 0)

    def failed(self) -> bool:
        """Whether anything the soak checks went wrong (or the run stopped early)."""
        return bool(self.stopped or self.mismatches or self.run_mismatch or any(self.findings.get(k) for k in _FAILING)
                    or self.journal_integrity not in (None, "ok") or self.replay not in (None, "ok")
                    or self.problems and not self.findings and not self.mismatches)

    def to_json(self) -> dict[str, Any]:
        """The totals as plain JSON."""
        out = dict(self.__dict__)
        out["problems"] = self.problems[:200]
        return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardshoe hil soak", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return p


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0 or value == float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text} is not a finite number of 0 or more")
    return value


def _positive_float(text: str) -> float:
    value = _non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text} is not more than 0")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of `cardshoe hil soak`."""
    p.add_argument("--cards", type=positive_int, default=2000, help="deal at least this many cards (default 2000)")
    p.add_argument("--corrupt", type=probability, default=0.01, help="per byte: one bit flipped (default 0.01)")
    p.add_argument("--drop", type=probability, default=0.01, help="per frame: the whole frame lost (default 0.01)")
    p.add_argument("--drop-bytes", type=probability, default=0.0, help="per byte: lost (default 0)")
    p.add_argument("--power-cut-every", type=non_negative_int, default=5, metavar="K", help="cut the shoe's power every K rounds")
    p.add_argument("--restart-every", type=non_negative_int, default=7, metavar="K", help="kill and restart the daemon every K rounds")
    p.add_argument("--unplug-every", type=non_negative_int, default=0, metavar="K", help="pull the USB cable every K rounds")
    p.add_argument("--card-faults", type=probability, default=0.0, metavar="P",
                   help="per round: one foreign, duplicate or unread card among the deal (default 0)")
    p.add_argument("--game", default="three-card-poker", choices=("three-card-poker", "megalink-three-card-poker"))
    p.add_argument("--pace", type=_positive_float, default=2.5, metavar="CARDS_PER_S",
                   help="the dealer's pace in cards a second (default 2.5)")
    p.add_argument("--burst", action="store_true", help="deal back to back, as fast as the exit sensor takes cards")
    p.add_argument("--progress", type=_non_negative_float, default=15.0, metavar="S",
                   help="a progress line every S seconds (default 15)")
    p.add_argument("--minutes", type=_non_negative_float, default=0.0, metavar="M",
                   help="a time budget: start no new round after M minutes (0: none); reaching it ends the run "
                        "normally, with the cards dealt so far")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", type=Path, default=Path("var/soak"),
                   help="work directory: created and marked by the bench, emptied on the next run; "
                        "an existing folder the bench did not create is refused")
    p.add_argument("--json", action="store_true", help="print the totals as JSON too")


def main(argv: list[str]) -> int:
    """Run the soak; 0 when it finished and found nothing wrong."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """`cardshoe hil soak` with parsed arguments."""
    try:
        fresh_workdir(args.workdir, command="cardshoe hil soak")
    except WorkdirRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    line = LineFaults(corrupt=args.corrupt, drop_frames=args.drop, drop_bytes=args.drop_bytes)
    command = (f"cardshoe hil soak --cards {args.cards} --corrupt {args.corrupt} --drop {args.drop} "
               f"--drop-bytes {args.drop_bytes} --power-cut-every {args.power_cut_every} "
               f"--restart-every {args.restart_every} --unplug-every {args.unplug_every} "
               f"--card-faults {args.card_faults} --game {args.game} "
               + ("--burst " if args.burst else f"--pace {args.pace} ") + f"--seed {args.seed}"
               + (f" --minutes {args.minutes:g}" if args.minutes else ""))
    print(f"$ {command}", flush=True)
    totals = soak(args.workdir, game=args.game, cards=args.cards, line=line, seed=args.seed,
                  power_cut_every=args.power_cut_every, restart_every=args.restart_every,
                  unplug_every=args.unplug_every, card_faults=args.card_faults,
                  pace=None if args.burst else args.pace, progress_every=args.progress,
                  minutes=args.minutes, log=lambda m: print(m, flush=True))
    print(f"$ {command}")
    print_totals(totals)
    if args.json:
        print(json.dumps(totals.to_json(), indent=2, sort_keys=True))
    return 1 if totals.failed() else 0


def print_totals(t: SoakTotals) -> None:
    """The soak's totals, one per line."""
    void = ", ".join(f"{why}: {n}" for why, n in sorted(t.rounds_void.items())) or "none"
    rate = t.cards_dealt / t.seconds if t.seconds else 0.0
    print(f"cards dealt           {t.cards_dealt} of {t.cards_wanted} in {t.rounds} rounds, {t.shoes} shoes "
          f"({t.seconds:.0f} s, {rate:.2f} cards/s; pace {t.pace})")
    print(f"frames resent         {t.duplicates_dropped} duplicates dropped, {t.gaps_resent} gaps asked again "
          f"(RESEND_FROM)")
    print(f"frames rejected       {t.rejected or 'none'}")
    print(f"faults injected       line {t.line or 'none'}; power cuts {t.power_cuts}; daemon restarts "
          f"{t.daemon_restarts}; unplugs {t.unplugs}; cards {t.card_faults or 'none'}")
    print(f"rounds void           {void}; voided by the bench's supervisor (6.1): {t.rounds_voided_by_supervisor}; "
          f"rounds where the daemon never showed every card: {t.waits_timed_out}")
    for kind in FINDING_KINDS:
        label = {"lost_flagged": "lost, flagged (ok)", "extra": "invented", "wrong_read": "wrongly read"}.get(kind, kind)
        print(f"{label + ' cards':<21} {t.findings.get(kind, 0)}")
    print(f"settlement mismatches {t.mismatches} (daemon vs the bench's own hands, settled offline)")
    print(f"journal               integrity {t.journal_integrity or 'not checked'}; cardshoe replay "
          f"{t.replay or 'not run'}; {t.run_check or 'no rounds'}" + ("; DOES NOT ADD UP" if t.run_mismatch else ""))
    for p in t.problems[:30]:
        print(f"  problem: {p}")
    if len(t.problems) > 30:
        print(f"  ... and {len(t.problems) - 30} more problems")
    if t.time_budget:
        print(f"time budget           {t.time_budget}")
    if t.stopped:
        print(f"STOPPED EARLY: {t.stopped}")
    print("result                " + ("FAIL" if t.failed() else "PASS"))


@dataclass
class _Table:
    """The soak's running state: the bench, the shoe's remaining cards, the clock."""

    bench: Bench
    rng: random.Random
    totals: SoakTotals
    pace: float | None
    log: Log
    game: str
    shoe: list[int] = field(default_factory=list)
    order: int = 0  # cards of this shoe the bench pushed
    rounds: dict[str, tuple[int, int]] = field(default_factory=dict)  # round id -> (shoe, cards dealt)
    rules_version: str = ""
    currency: str = ""


def soak(workdir: Path, *, game: str, cards: int, line: LineFaults, seed: int, power_cut_every: int,
         restart_every: int, unplug_every: int = 0, card_faults: float = 0.0, pace: float | None = 2.5,
         progress_every: float = 15.0, minutes: float = 0.0, log: Log = print) -> SoakTotals:
    """Deal at least `cards` cards with faults (see the module doc); returns the totals, also
    when the run stops early (then `stopped` says where and why)."""
    from cardshoe.games import get_game  # the pay table's data: rules version and currency

    rng = random.Random(seed)
    totals = SoakTotals(cards_wanted=cards, pace="burst" if pace is None else f"{pace:g} cards/s")
    started = time.monotonic()
    workdir = Path(workdir)
    if not workdir.exists():
        fresh_workdir(workdir, command="cardshoe hil soak")
    bench = Bench(workdir, TableSpec(game, 7, name="soak"), line=line, seed=seed, log=log,
                  extra_config="[limits]\n" + "".join(f"{w} = {{ min = {v['min']}, max = {v['max']} }}\n"
                                                      for w, v in LIMITS.items()))
    paytable = get_game(game)
    table = _Table(bench, rng, totals, pace, log, game, rules_version=paytable.rules_version,
                   currency=paytable.currency)
    last_progress = time.monotonic()
    where = "setting up the table"
    try:
        bench.flash()
        bench.start_line(line)
        bench.start_daemon()
        while totals.cards_dealt < cards:
            if minutes and time.monotonic() - started >= minutes * 60:
                totals.time_budget = f"the time budget ({minutes:g} min) ended the run after {totals.cards_dealt} cards"
                break
            seats = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
            need = len(dealing_order(game, "automated", None, seats)[0]) + 1
            if len(table.shoe) < need:
                bench.load_shoe(bench.deck_id + 1 if totals.shoes else None)
                table.shoe = list(range(52))
                rng.shuffle(table.shoe)
                table.order = 0
                totals.shoes += 1
            totals.rounds += 1
            n = totals.rounds
            fault = None
            if power_cut_every and n % power_cut_every == 0:
                fault = "power_cut"
            elif restart_every and n % restart_every == 0:
                fault = "restart"
            elif unplug_every and n % unplug_every == 0:
                fault = "unplug"
            card_fault = rng.choice(("foreign", "duplicate", "unread")) if rng.random() < card_faults else None
            where = f"round {n} ({fault or 'no fault'}{', ' + card_fault + ' card' if card_fault else ''})"
            _soak_round(table, seats, fault, card_fault)
            if time.monotonic() - last_progress >= progress_every:
                last_progress = time.monotonic()
                log(progress_line(totals, bench, time.monotonic() - started))
    except KeyboardInterrupt:
        totals.stopped = f"interrupted in {where}, after {totals.cards_dealt} cards"
    except Exception as exc:  # noqa: BLE001 - a soak that cannot go on still reports what it saw
        try:
            diag = bench.diagnose()
        except Exception as dexc:  # noqa: BLE001
            diag = f"(no diagnosis: {dexc})"
        totals.stopped = f"{where}, after {totals.cards_dealt} cards: {type(exc).__name__}: {exc} [{diag}]"
    finally:
        try:
            # Also when the run stopped early: the running daemon's counters are in no other total.
            _collect_link(bench, totals)
        except Exception as exc:  # noqa: BLE001 - the totals are printed whatever this does
            totals.problems.append(f"collecting the link counters: {type(exc).__name__}: {exc}")
        _final_counts(bench, totals)
        try:
            bench.close()
        except Exception as exc:  # noqa: BLE001
            totals.problems.append(f"closing the bench: {type(exc).__name__}: {exc}")
        totals.seconds = time.monotonic() - started
    check_journal(bench.journal, totals)
    try:
        check_run(bench.journal, table.rounds, totals)
    except Exception as exc:  # noqa: BLE001 - the totals are printed whatever the last check does
        totals.problems.append(f"the run's check failed: {type(exc).__name__}: {exc}")
        totals.run_mismatch = True
    return totals


def check_run(journal: Path, rounds: dict[str, tuple[int, int]], totals: SoakTotals) -> None:
    """The whole run against the journal: no shoe index of any shoe journaled twice in any
    round, and as many cards journaled as the bench dealt, less the losses already counted."""
    if not journal.exists() or not rounds:
        return
    seen: dict[tuple[int, int], int] = {}
    held = 0
    try:
        for rid, (shoe, _dealt) in rounds.items():
            for index, _code, _place in journal_cards(journal, rid):
                seen[(shoe, index)] = seen.get((shoe, index), 0) + 1
                held += 1
    except (sqlite3.Error, ValueError) as exc:
        totals.problems.append(f"the run's check could not read the journal: {exc}")
        return
    for (shoe, index), n in sorted(seen.items()):
        if n > 1:
            totals.findings["repeated"] = totals.findings.get("repeated", 0) + 1
            totals.problems.append(f"run: shoe {shoe} index {index} journaled {n} times")
    dealt = sum(d for _s, d in rounds.values())
    accounted = dealt - totals.findings.get("lost", 0) - totals.findings.get("lost_flagged", 0) \
        + totals.findings.get("extra", 0) + totals.findings.get("repeated", 0)
    totals.run_check = f"the journal holds {held} cards of the bench's {len(rounds)} rounds; the bench dealt {dealt}"
    if held != accounted:
        totals.problems.append(f"run: the journal holds {held} cards, the bench dealt {dealt} and the rounds' "
                               f"findings account for {accounted}")
        totals.run_mismatch = True


def progress_line(t: SoakTotals, bench: Bench, seconds: float) -> str:
    """One line: cards, rounds, faults so far, findings, rate."""
    found = ", ".join(f"{k} {v}" for k, v in sorted(t.findings.items())) or "none"
    rate = t.cards_dealt / seconds if seconds else 0.0
    return (f"[soak {seconds:6.0f} s] {t.cards_dealt}/{t.cards_wanted} cards, {t.rounds} rounds, {t.shoes} shoes; "
            f"faults: {bench.counts.power_cuts} power cuts, {bench.counts.daemon_restarts} restarts, "
            f"{bench.counts.unplugs} unplugs; findings: {found}; {t.mismatches} settlement mismatches; "
            f"{rate:.2f} cards/s")


def _final_counts(bench: Bench, totals: SoakTotals) -> None:
    if bench.relay is not None:
        totals.line = {k: v for k, v in bench.relay.counts.to_json().items()
                       if k not in ("bytes_to_host", "bytes_to_shoe") and v}
    totals.power_cuts = bench.counts.power_cuts
    totals.daemon_restarts = bench.counts.daemon_restarts
    totals.unplugs = bench.counts.unplugs


def check_journal(journal: Path, totals: SoakTotals) -> None:
    """The journal's integrity (SQLite's own check, read-only) and `cardshoe replay` of it."""
    if not journal.exists():
        totals.journal_integrity = "no journal"
        return
    try:
        conn = sqlite3.connect(journal.resolve().as_uri() + "?mode=ro", uri=True, timeout=30)
        try:
            rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall()]
        finally:
            conn.close()
        totals.journal_integrity = "ok" if rows == ["ok"] else "; ".join(rows[:5])
    except sqlite3.Error as exc:
        totals.journal_integrity = f"unreadable: {exc}"
    try:
        proc = subprocess.run(cardshoe_command("replay", str(journal), "--json"), capture_output=True, timeout=1800)
    except subprocess.TimeoutExpired:
        totals.replay = "timed out"
        return
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {}
    if proc.returncode == 0 and report.get("ok"):
        totals.replay = "ok"
    else:
        err = proc.stderr.decode("utf-8", "replace").strip()[-300:]
        totals.replay = (f"exit {proc.returncode}: {len(report.get('mismatches', []))} mismatches "
                         f"{report.get('mismatches', [])[:3]} {err}").strip()


def _collect_link(bench: Bench, totals: SoakTotals) -> None:
    """Add the daemon's link counters (they restart with the daemon) to the totals."""
    status = bench.client.try_status() or {}
    link = status.get("link") or {}
    totals.duplicates_dropped += int(link.get("duplicates", 0))
    totals.gaps_resent += int(link.get("gaps", 0))
    for reason, count in (link.get("rejected") or {}).items():
        totals.rejected[reason] = totals.rejected.get(reason, 0) + int(count)


def _plays(codes: list[int | None]) -> bool:
    """The bench's players play Q-6-4 or better (a strategy, not a check)."""
    if len(codes) != 3 or any(c is None for c in codes):
        return False
    return bool(evaluate3([int(c) for c in codes if c is not None]).strength >= evaluate3(_Q64).strength)


class _Dealer:
    """The dealer's hands during one round's deal: push cards at the pace, run a fault's
    course (cards keep leaving while the daemon is down or the cable is out)."""

    def __init__(self, table: _Table, ledger: RoundLedger) -> None:
        self.t = table
        self.ledger = ledger
        self.pending: tuple[str, int] | None = None  # (restart | unplug, cards to deal before restoring)
        self.during = ""

    def push(self, code: int, kind: str) -> None:
        bench, t = self.t.bench, self.t
        sim = bench.board.sim
        if kind == "unread":
            pass  # the exit sensor alone
        elif kind == "foreign":
            sim.present_barcode(bench.barcode(code, FOREIGN_DECK))
        else:
            sim.present_barcode(bench.barcode(code))
        sim.exit_sensor()
        bench.counts.cards_dealt += 1
        t.order += 1
        t.totals.cards_dealt += 1
        self.ledger.cards.append(Dealt(order=t.order, code=None if kind == "unread" else code, kind=kind,
                                       t=time.monotonic(), during=self.during))
        if self.pending is not None:
            what, left = self.pending
            self.pending = (what, left - 1) if left > 1 else None
            if self.pending is None:
                self.restore(what)
        if t.pace is not None:
            time.sleep(1.0 / t.pace)

    def fault(self, what: str) -> None:
        """Hit the table with `what` right after the card just pushed (0-30 ms later)."""
        bench, rng = self.t.bench, self.t.rng
        time.sleep(rng.uniform(0.0, 0.03))
        if what == "power_cut":
            # Every card of the round so far may be unlogged when the power goes: mark them,
            # so a loss among them is expected to be flagged (5.16 / 6.1), not excused.
            self.ledger.cards[:] = [replace(c, during="power_cut") for c in self.ledger.cards]
            bench.board.power_cut()
            bench.counts.power_cuts += 1
            bench.power_on()  # the dealer waits for the shoe's light (its `ready`), not the daemon
        elif what == "restart":
            _collect_link(bench, self.t.totals)  # the daemon's link counters die with it
            bench.kill_daemon()
            bench.counts.daemon_restarts += 1
            self.pending = ("restart", rng.randint(1, 3))
            self.during = what  # the next cards leave while the daemon is down (never excused)
        elif what == "unplug":
            bench.board.unplug()
            bench.counts.unplugs += 1
            self.pending = ("unplug", rng.randint(1, 3))
            self.during = what

    def restore(self, what: str) -> None:
        bench = self.t.bench
        self.during = ""
        if what == "restart":
            bench.start_daemon()
        elif what == "unplug":
            bench.board.replug()

    def finish(self) -> None:
        """End a fault still in its course (the deal ended first)."""
        if self.pending is not None:
            what = self.pending[0]
            self.pending = None
            if what == "unplug":
                time.sleep(self.t.rng.uniform(0.1, 0.4))
            self.restore(what)


def _soak_round(table: _Table, seats: list[int], fault: str | None, card_fault: str | None) -> None:
    bench, rng, totals = table.bench, table.rng, table.totals
    api = bench.client
    wagers = {s: {"ante": rng.choice((500, 1000, 2500))} for s in seats}
    for s in seats:
        if rng.random() < 0.5:
            wagers[s]["pair_plus"] = rng.choice((500, 1000))
    rid = str(api.request("POST", "/rounds")["round_id"])
    ledger = RoundLedger(rid, table.game, "automated", None, wagers)
    for s, ws in wagers.items():
        for w, a in ws.items():
            api.request("POST", f"/rounds/{rid}/wagers", {"seat": s, "wager": w, "amount": a})
    api.request("POST", f"/rounds/{rid}/no-more-bets")
    due = ledger.due()  # the rules' count for these seats (the bench's model, not the daemon's)
    fault_at = rng.randrange(due) if fault else -1
    # A card fault takes one dealing slot: a foreign or duplicate card is an extra physical
    # card (the shoe's next card stays), an unread one is the next card, not read.
    bad_at = rng.choice([k for k in range(1, due) if k != fault_at]) if card_fault else -1
    dealer = _Dealer(table, ledger)
    for i in range(due):
        if i == bad_at:
            totals.card_faults[card_fault or ""] = totals.card_faults.get(card_fault or "", 0) + 1
            if card_fault == "duplicate":
                dealer.push(next(c.code for c in ledger.cards if c.code is not None), "duplicate")
            elif card_fault == "foreign":
                dealer.push(table.shoe[0], "foreign")
            else:
                dealer.push(table.shoe.pop(0), "unread")
        else:
            dealer.push(table.shoe.pop(0), "card")
        if i == fault_at:
            dealer.fault(fault or "")
    dealer.finish()
    if len(ledger.cards) > 1:
        totals.deal_seconds += ledger.cards[-1].t - ledger.cards[0].t
        totals.deal_intervals += len(ledger.cards) - 1
    bench.key("deal_complete")
    # The table's screen: wait (generously) until the daemon shows as many cards as the
    # dealer dealt; a card the shoe lost never comes, and the wait ends without it.
    try:
        # Polled gently: a whole round's JSON 50 times a second would slow the daemon it waits for.
        wait_for(lambda: len(api.round(rid).get("cards") or {}) >= len(ledger.cards), _SETTLE_WAIT,
                 f"round {rid}: the daemon to show the {len(ledger.cards)} cards dealt", interval=0.25)
    except BenchTimeout:
        totals.waits_timed_out += 1
    # Decisions from the bench's own hands (its model), never from the daemon's.
    hands = ledger.hands()
    void_expected = card_fault is not None
    if not void_expected and not api.round(rid).get("void"):
        for s in dealt_seats(table.game, wagers):
            if "ante" not in wagers[s]:
                continue
            choice = "play" if _plays(hands.get(f"seat {s}", [])) else "fold"
            ledger.decisions[s] = choice
            try:
                api.request("POST", f"/rounds/{rid}/decisions", {"seat": s, "choice": choice})
            except ApiError as exc:
                totals.problems.append(f"{rid}: decision refused: {exc}")
    before = api.round(rid)  # the daemon's own flags, before the bench's supervisor acts
    settlement = _settle(table, ledger)
    snapshot = api.round(rid)
    table.rounds[rid] = (totals.shoes, len(ledger.all_cards()))
    findings = compare(ledger, snapshot, journal_cards(bench.journal, rid), flags_from=before)
    for f in findings:
        totals.findings[f.kind] = totals.findings.get(f.kind, 0) + 1
        if f.kind != "lost_flagged":
            totals.problems.append(f"{rid}: {f.kind}: {f.detail}")
    if any(f.kind == "lost_flagged" for f in findings) and not ledger.supervisor_void:
        # The daemon flagged a card lost in a power cut (5.16, 6.1): the shift manager decides.
        # The bench's supervisor accepts the daemon's proposal (a void, or seats returned), so
        # the bench's own round carries the same decision, and the money is compared under it.
        if snapshot.get("void"):
            ledger.supervisor_void = "6.1, a card lost in a power cut"
        else:
            ledger.supervisor_returns = tuple(sorted(int(s) for s in snapshot.get("void_seats") or {}))
    _check_settlement(table, ledger, settlement, totals)
    void = snapshot.get("void")
    if void:
        if isinstance(void, dict):
            why = f"{'/'.join(void.get('rules', [])) or void.get('rule') or '?'} " \
                  f"{str(void.get('reason', '')).split(':')[0]}".strip()
        else:
            why = str(void)
        totals.rounds_void[why] = totals.rounds_void.get(why, 0) + 1


def _settle(table: _Table, ledger: RoundLedger) -> dict[str, Any] | None:
    """Have the daemon settle; a round it will not settle (an open flag: a referral, a count
    the bench cannot give) is voided by the bench's supervisor under 6.1 and settled."""
    api, rid = table.bench.client, ledger.round_id
    try:
        done = api.request("POST", f"/rounds/{rid}/settle", {})
    except ApiError as exc:
        if exc.status >= 500:
            raise
        api.request("POST", f"/rounds/{rid}/void", {"rule": "6.1", "by": _SUPERVISOR,
                                                    "reason": f"the bench's supervisor: the round cannot be "
                                                              f"settled as it stands ({exc.status})"})
        ledger.supervisor_void = "6.1"
        table.totals.rounds_voided_by_supervisor += 1
        done = api.request("POST", f"/rounds/{rid}/settle", {})
    result: dict[str, Any] | None = done.get("settlement")
    return result


def _check_settlement(table: _Table, ledger: RoundLedger, daemon: dict[str, Any] | None, totals: SoakTotals) -> None:
    """The daemon's money against an offline settlement of the bench's own round."""
    from cardshoe.settlement import RoundError, parse_round, settle  # what `cardshoe settle` runs

    data = round_file(ledger, rules_version=table.rules_version, currency=table.currency, limits=LIMITS)
    try:
        offline = settle(parse_round(data)).to_json()
    except RoundError as exc:
        totals.mismatches += 1
        totals.problems.append(f"{ledger.round_id}: the bench's own round does not settle: {exc} "
                               f"({json.dumps(data, sort_keys=True)[:300]})")
        return
    if money(daemon) != money(offline):
        totals.mismatches += 1
        totals.problems.append(f"{ledger.round_id}: settlement differs: daemon {json.dumps(money(daemon))[:300]}, "
                               f"the bench's hands {json.dumps(money(offline))[:300]}; bench hands "
                               + "; ".join(f"{k} {' '.join('?' if c is None else card_text(c) for c in v)}"
                                           for k, v in ledger.hands().items()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
