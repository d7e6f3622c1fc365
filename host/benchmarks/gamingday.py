"""`cardshoe bench gamingday`: the gaming day's rollover (issue 25), by the size of the day.

For each size, a day file is built with the real table service (`daemon_journal`: Three Card
Poker rounds of 24 cards, a new 8-deck shoe when the one in play runs low), as a day of that
many rounds leaves it, with the shoe session in play holding cards; then a real `Daemon` (its
serial port absent) is started on it with day files (`[journal] dir`, `day_ends = "06:00"`) and
an injected clock, the clock is moved past the hour, and the rollover is timed: the time the
table's lock is held (what the shoe's frames and the API wait), with its parts: the handover out,
the final checkpoint, the closing entry, the file's closing and sealing, the new day's opening.
Printed with the handover input's size (the session's cards carried) and the files' sizes.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from cardshoe.benchmarks import daemon_journal


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.wall_off = int(start.timestamp() * 1e9) - time.time_ns()
        self.mono_off = 0

    def wall(self) -> int:
        return time.time_ns() + self.wall_off

    def mono(self) -> int:
        return time.monotonic_ns() + self.mono_off

    def advance(self, ns: int) -> None:
        """Time passes: both clocks (a wall clock alone moved would be a step, not followed)."""
        self.wall_off += ns
        self.mono_off += ns


def _no_key(_serial: int) -> bytes | None:
    return None


def one(rounds: int, directory: Path) -> dict[str, Any]:
    """Build a day of `rounds` rounds, roll it over, return the figures."""
    from cardshoe.daemon.config import TableConfig
    from cardshoe.daemon.daemon import Daemon
    from cardshoe.journal import JournalReader

    day_dir = directory / f"days-{rounds}"
    day_dir.mkdir()
    s = daemon_journal.SETUP
    path = day_dir / f"{s.name}.2026-11-26.sqlite"
    builder = daemon_journal.JournalBuilder(path, checkpoint_every=1000)
    for _ in range(rounds):
        builder.play_round()
    builder.service.checkpoint()
    builder.journal.close()
    clock = _Clock(datetime(2026, 11, 27, 5, 59, tzinfo=timezone.utc))
    config = TableConfig(port=str(directory / "no-such-tty"), game=s.game, seats=s.seats, name=s.name,
                         limits=s.limits, journal_dir=day_dir, day_ends="06:00", day_zone="UTC")
    daemon = Daemon(config, keys=_no_key, clock=clock.wall, monotonic=clock.mono, synchronous="FULL")
    daemon.start()
    try:
        days = daemon.days
        assert days is not None and daemon.service is not None
        with daemon.service.lock:
            session_cards = sum(len(x.cards) for x in daemon.service.core.shoes.values())
        with days._lock:  # as the watch's tick rolls over (which then finds nothing to do)
            clock.advance(2 * 60 * 10**9)
            t0 = time.perf_counter()
            rolled = days.roll(date(2026, 11, 27))
            held = time.perf_counter() - t0
        new = daemon.config.journal
    finally:
        daemon.stop()
    with JournalReader(path) as reader:
        entries = reader.last_id()
        handover = next(e for e in reader.entries(("input",)) if e.data().get("action") == "shoe_handover")
    return {"rounds": rounds, "entries": entries, "rolled": rolled, "held_ms": held * 1000,
            "session_cards": session_cards, "handover_bytes": len(handover.body.encode()),
            "old_bytes": path.stat().st_size, "new_bytes": new.stat().st_size}


def main(argv: list[str]) -> int:
    """`cardshoe bench gamingday [--rounds 0,200,2000]`."""
    p = argparse.ArgumentParser(prog="cardshoe bench gamingday")
    p.add_argument("--rounds", default="0,200,2000", help="the day's rounds, comma-separated")
    args, _ = p.parse_known_args(argv)
    sizes = [int(x) for x in args.rounds.split(",") if x.strip()]
    print("rollover of a gaming day: the table's lock held (frames and requests wait meanwhile)")
    print(f"{'rounds':>7} {'entries':>9} {'held ms':>9} {'session cards':>14} {'handover B':>11} "
          f"{'old file B':>12} {'new file B':>11}")
    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-day-") as tmp:
        for rounds in sizes:
            f = one(rounds, Path(tmp))
            print(f"{f['rounds']:>7} {f['entries']:>9} {f['held_ms']:>9.1f} {f['session_cards']:>14} "
                  f"{f['handover_bytes']:>11} {f['old_bytes']:>12} {f['new_bytes']:>11}"
                  + ("" if f["rolled"] else "  (NOT rolled over)"), flush=True)
    return 0
