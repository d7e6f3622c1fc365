"""`cardshoe parsheet GAME [--json] [--plot FILE]`: exact par sheet of a game's wagers.

Prints a readable table (with a progress bar on stderr while it computes) or, with
--json, the exact values as fractions. GAME may be ``all``. --plot FILE also draws each
wager's outcome distribution and house edge into FILE (PNG or SVG by its suffix).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Sequence, TextIO

from . import GAMES, ParSheet, ParSheetError, compute

__all__ = ["main", "render"]


class ProgressBar:
    """A one-line progress bar on a stream (stderr), redrawn when the percentage moves."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        # Redraw in place on a terminal; elsewhere (a log) write each stage once, when done.
        self.tty = stream.isatty()
        self.last: tuple[str, int] | None = None
        self.active = False

    def __call__(self, stage: str, done: float) -> None:
        pct = int(done * 100)
        if self.last == (stage, pct):
            return
        self.last = (stage, pct)
        if not self.tty:
            if pct == 100:
                self.stream.write(f"{stage}: done\n")
            return
        filled = int(done * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{stage:<32} [{bar}] {pct:3d}%")
        self.stream.flush()
        self.active = True

    def close(self) -> None:
        if self.active:
            self.stream.write("\n")
            self.stream.flush()
            self.active = False


def _pct(value: Fraction | None) -> str:
    return "-" if value is None else f"{float(value) * 100:.4f}%"


def _prob(value: Fraction) -> str:
    if value == 0:
        return "0"
    if value >= Fraction(1, 1000):
        return f"{float(value):.6f}"
    return f"{float(value):.4e}"


def render(sheet: ParSheet) -> str:
    """The par sheet as a readable text table."""
    out = [f"{sheet.title} -- rules version {sheet.rules_version}, pay tables revision {sheet.revision}",
           f"computed in {sheet.seconds:.1f} s", ""]
    for w in sheet.wagers:
        head = f"== {w.wager} (rule {w.rule})"
        if not w.exact:
            head += "  [ESTIMATE]"
        out.append(head)
        if w.lines:
            out.append(f"  {'outcome':<74} {'pays':<26} {'probability':>12} {'return':>10}")
            for line in w.lines:
                contrib = line.contribution
                out.append(
                    f"  {line.label[:74]:<74} {line.pays[:26]:<26} {_prob(line.probability):>12} "
                    f"{'-' if contrib is None else f'{float(contrib):+.6f}':>10}"
                )
        out.append(f"  house edge: {_pct(w.house_edge)} {w.edge_basis}")
        for name, value in w.figures:
            if any(word in name for word in ("edge", "probability", "risk", "qualifies", "return")):
                shown = _pct(value)
            elif abs(value) < Fraction(1, 100):
                shown = f"{float(value):.6e}"
            else:
                shown = f"{float(value):,.4f}"
            out.append(f"  {name}: {shown}")
        for step in w.strategy:
            out.append(f"  strategy: {step}")
        for note in w.notes:
            out.append(f"  note: {note}")
        out.append(f"  ({w.seconds:.2f} s)")
        out.append("")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Compute and print par sheets; returns the exit code."""
    parser = argparse.ArgumentParser(prog="cardshoe parsheet", description=__doc__)
    parser.add_argument("game", choices=[*GAMES, "all"], help="game id, or all")
    parser.add_argument("--json", action="store_true", help="exact fractions as JSON on stdout")
    parser.add_argument("--progressive-stake", type=int, default=None, metavar="MINOR",
                        help="minimum progressive wager in minor units (gives fixed-amount "
                             "progressive lines a house edge)")
    parser.add_argument("--rank-only", action="store_true",
                        help="Singapore Stud: the best strategy on the player's hand alone "
                             "(seconds) instead of the exact up-card optimum (the default)")
    parser.add_argument("--upcard", action="store_true",
                        help="Singapore Stud: the exact up-card optimum (the default; kept for "
                             "scripts that ask for it)")
    parser.add_argument("--workers", type=int, default=2,
                        help="processes for Singapore Stud's up-card optimum (default 2)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--plot", type=Path, default=None, metavar="FILE",
                        help="also draw each wager's outcome distribution and house edge into FILE "
                             "(.png or .svg)")
    args = parser.parse_args(list(argv or []))
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.upcard and args.rank_only:
        parser.error("--upcard and --rank-only exclude each other")
    if args.plot is not None:
        from .plot import PlotError, check_plot_path

        try:
            check_plot_path(args.plot)  # before the sheet: a bad name must not wait for it
        except PlotError as exc:
            print(f"cardshoe parsheet: {exc}", file=sys.stderr)
            return 2
    games = list(GAMES) if args.game == "all" else [args.game]
    bar = None if args.no_progress else ProgressBar(sys.stderr)
    sheets = []
    t0 = time.perf_counter()
    try:
        for game in games:
            sheets.append(compute(game, progress=bar, progressive_stake=args.progressive_stake,
                                  rank_only=args.rank_only, workers=args.workers))
            if bar is not None:
                bar.close()
    except ParSheetError as exc:
        if bar is not None:
            bar.close()
        print(f"cardshoe parsheet: {exc}", file=sys.stderr)
        return 2
    if args.plot is not None:
        from .plot import PlotError, plot

        try:
            plot(sheets, args.plot)
        except PlotError as exc:
            print(f"cardshoe parsheet: {exc}", file=sys.stderr)
            return 2
        print(f"cardshoe parsheet: plot written to {args.plot}", file=sys.stderr)
    if args.json:
        payload = [s.to_json() for s in sheets]
        json.dump(payload[0] if len(payload) == 1 else payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for sheet in sheets:
            print(render(sheet))
        if len(sheets) > 1:
            print(f"total time {time.perf_counter() - t0:.1f} s")
    return 0
