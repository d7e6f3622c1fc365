"""`cardshoe bench poker`: hand evaluations per second, ours beside established evaluators.

How it measures (issue 15): every row compares evaluators in this one process on the same
random hands, alternating: the hands are cut into slices (``--slice``, 10,000 by default)
and each slice is run by every evaluator of the row in turn before the next slice. So a
burst of load from other processes falls on every side alike, and no evaluator keeps its
tables hot over a long run while the others wait: each slice starts with the caches
holding the previous evaluator's data (the "cold-cache" use of a settlement or par-sheet
loop that does other work between hands). The ratio printed is ours against the peer
named in the row (``x eval7``: above 1 means faster than eval7).

* hands are drawn before timing, as tuples of card ints (ours, phevaluator) or the other
  library's own card objects/ints (eval7, treys, pokerkit), so conversion is not timed;
* "call" rows time a Python ``for`` loop that unpacks each hand and calls the evaluator
  once per hand: loop and call overhead are included, as a caller pays them;
* "batch" times one ``strengths5`` call per slice (how the par-sheet enumerations use it);
* "Hand" rows time the public API (validation, strength, class, a Hand) against the raw
  strength path on the same hands; a Hand works out its cards' display order (and for 6
  or 7 cards which five) when ``cards`` is read, which the ".cards read" rows add.

Each slice is timed by this process's CPU time (``--clock cpu``, the default): on a machine
shared with other work, a slice's wall time would also count whatever else ran on the core
meanwhile, and a slice lasts about one scheduler time slice, so that noise fell on one
evaluator or another at random (``--clock wall`` measures wall time). Figures are totals
over ``--repeat`` passes, and the header prints the load average. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from typing import Any, Callable, Sequence

from ..poker import best5, evaluate5, strength5, strength6, strength7, strengths5

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}

# A runner evaluates hands[lo:hi] of its own prepared form.
Runner = Callable[[int, int], None]

_TEXT = ["23456789TJQKA"[c >> 2] + "cdhs"[c & 3] for c in range(52)]


def _ours(hands: list[tuple[int, ...]], n: int) -> Runner:
    if n == 5:
        def run5(lo: int, hi: int) -> None:
            f = strength5
            for a, b, c, d, e in hands[lo:hi]:
                f(a, b, c, d, e)
        return run5
    if n == 6:
        def run6(lo: int, hi: int) -> None:
            f = strength6
            for a, b, c, d, e, g in hands[lo:hi]:
                f(a, b, c, d, e, g)
        return run6

    def run7(lo: int, hi: int) -> None:
        f = strength7
        for a, b, c, d, e, g, h in hands[lo:hi]:
            f(a, b, c, d, e, g, h)
    return run7


def _batch(hands: list[tuple[int, ...]]) -> Runner:
    def run(lo: int, hi: int) -> None:
        strengths5(hands[lo:hi])
    return run


def _hand_api(hands: list[tuple[int, ...]], n: int, read_cards: bool = False) -> Runner:
    f = evaluate5 if n == 5 else best5
    if read_cards:
        def run_cards(lo: int, hi: int) -> None:
            for h in hands[lo:hi]:
                f(h).cards
        return run_cards

    def run(lo: int, hi: int) -> None:
        for h in hands[lo:hi]:
            f(h)
    return run


def _eval7(hands: list[tuple[int, ...]]) -> Runner | None:
    try:
        import eval7
    except ImportError:
        return None
    cards = [eval7.Card(t) for t in _TEXT]
    conv = [[cards[c] for c in h] for h in hands]

    def run(lo: int, hi: int) -> None:
        f = eval7.evaluate
        for h in conv[lo:hi]:
            f(h)
    return run


def _treys(hands: list[tuple[int, ...]]) -> Runner | None:
    try:
        import treys
    except ImportError:
        return None
    ev = treys.Evaluator()
    tc = [treys.Card.new(t) for t in _TEXT]
    conv = [([tc[h[0]], tc[h[1]]], [tc[c] for c in h[2:]]) for h in hands]

    def run(lo: int, hi: int) -> None:
        f = ev.evaluate
        for hole, board in conv[lo:hi]:
            f(hole, board)
    return run


def _phevaluator(hands: list[tuple[int, ...]]) -> Runner | None:
    try:
        from phevaluator import evaluate_cards
    except ImportError:
        return None

    # phevaluator's card ids are rank*4+suit with the same suit order as ours.
    def run(lo: int, hi: int) -> None:
        f = evaluate_cards
        for h in hands[lo:hi]:
            f(*h)
    return run


def _pokerkit(hands: list[tuple[int, ...]]) -> Runner | None:
    try:
        import pokerkit
    except ImportError:
        return None
    objs: list[Any] = [
        (list(pokerkit.Card.parse("".join(_TEXT[c] for c in h[:2]))),
         list(pokerkit.Card.parse("".join(_TEXT[c] for c in h[2:]))))
        for h in hands
    ]

    def run(lo: int, hi: int) -> None:
        f = pokerkit.StandardHighHand.from_game
        for hole, board in objs[lo:hi]:
            f(hole, board)
    return run


def alternate(runners: Sequence[tuple[str, Runner]], count: int, size: int,
              repeat: int, clock: Callable[[], float] = time.process_time) -> list[float]:
    """Total seconds of each runner over ``repeat`` passes of ``count`` hands, the
    runners taking turns on each slice of ``size`` hands (the order rotating per slice).

    ``clock`` is this process's CPU time by default: on a machine shared with other
    work a slice's wall time also counts the time the core ran something else, which
    falls on whichever evaluator happened to be running (a 10,000-hand slice lasts a few
    milliseconds, about one scheduler time slice). Caches disturbed by the other work
    still count, for every evaluator alike."""
    totals = [0.0] * len(runners)
    turn = 0
    for _ in range(repeat):
        for lo in range(0, count, size):
            hi = min(count, lo + size)
            for j in range(len(runners)):
                i = (turn + j) % len(runners)
                t0 = clock()
                runners[i][1](lo, hi)
                totals[i] += clock() - t0
            turn += 1
    return totals


def _rows(hands: dict[int, list[tuple[int, ...]]], args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    n_hands, size, repeat = args.hands, args.slice, args.repeat

    def table(title: str, runners: list[tuple[str, Runner | None]], count: int,
              base: str) -> None:
        short = base.split()[1] if base.startswith("cardshoe") else base.split()[0]
        present = [(name, r) for name, r in runners if r is not None]
        missing = [name for name, r in runners if r is None]
        totals = alternate(present, count, size, repeat, CLOCKS[args.clock])
        rate = {name: count * repeat / t for (name, _), t in zip(present, totals)}
        out.append(f"-- {title} ({count:,} hands x {repeat}, slices of {size:,}, alternating)")
        for name, _ in present:
            ratio = f"{rate[name] / rate[base]:6.2f}x {short}" if base in rate else ""
            out.append(f"   {name:<40} {rate[name]:>12,.0f}/s  {ratio}")
        for name in missing:
            out.append(f"   {name:<40} {'not installed':>12}")

    for n in (5, 6, 7):
        if str(n) not in args.rows:
            continue
        label = "5 cards" if n == 5 else f"best of {n}"
        runners: list[tuple[str, Runner | None]] = [
            (f"cardshoe strength{n} call", _ours(hands[n], n)),
        ]
        if n == 5:
            runners.append(("cardshoe strengths5 batch", _batch(hands[5])))
        runners += [
            ("eval7 evaluate call", _eval7(hands[n])),
            ("treys evaluate call", _treys(hands[n])),
            ("phevaluator evaluate_cards call", _phevaluator(hands[n])),
        ]
        table(label, runners, n_hands, "eval7 evaluate call")
    few = min(n_hands, args.api_hands)
    if "api" in args.rows:
        _api_rows(table, hands, few)
    if "pokerkit" in args.rows and not args.no_pokerkit:
        slow = min(n_hands, 5000)
        for n in (5, 7):
            table(f"pokerkit, {'5 cards' if n == 5 else 'best of 7'} (far slower: {slow:,} hands)",
                  [(f"cardshoe strength{n} call", _ours(hands[n], n)),
                   ("pokerkit StandardHighHand.from_game", _pokerkit(hands[n]))],
                  slow, "pokerkit StandardHighHand.from_game")
    return out


def _api_rows(table: Callable[..., None], hands: dict[int, list[tuple[int, ...]]],
              few: int) -> None:
    table("public API returning a Hand, against the raw strength path on the same hands",
          [("cardshoe strength5 call", _ours(hands[5], 5)),
           ("cardshoe evaluate5 -> Hand (5 cards)", _hand_api(hands[5], 5)),
           ("cardshoe evaluate5 -> Hand, .cards read", _hand_api(hands[5], 5, True))],
          few, "cardshoe strength5 call")
    table("public API returning a Hand, best of 7",
          [("cardshoe strength7 call", _ours(hands[7], 7)),
           ("cardshoe best5 -> Hand (7 cards)", _hand_api(hands[7], 7)),
           ("cardshoe best5 -> Hand, .cards read", _hand_api(hands[7], 7, True))],
          few, "cardshoe strength7 call")


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on Linux
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Print evaluations per second and ratios for cardshoe.poker beside the installed
    reference evaluators (eval7, treys, phevaluator, pokerkit)."""
    parser = argparse.ArgumentParser(prog="cardshoe bench poker", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=200_000, help="random hands per size")
    parser.add_argument("--slice", type=int, default=10_000,
                        help="hands per turn before the next evaluator runs (default 10,000)")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the hands")
    parser.add_argument("--api-hands", type=int, default=50_000,
                        help="hands for the public-API rows (default 50,000)")
    parser.add_argument("--no-pokerkit", action="store_true", help="leave pokerkit out")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="time each slice by this process's CPU time (default) or by "
                             "wall time (perf_counter)")
    parser.add_argument("--rows", default="5,6,7,api,pokerkit",
                        help="which tables, comma-separated from 5, 6, 7, api, pokerkit "
                             "(default: all)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(list(argv or []))
    for name in ("hands", "slice", "repeat", "api_hands"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    args.rows = args.rows.split(",")
    unknown = sorted(set(args.rows) - {"5", "6", "7", "api", "pokerkit"})
    if unknown:
        parser.error(f"--rows: unknown table {', '.join(unknown)} (5, 6, 7, api, pokerkit)")
    rng = random.Random(args.seed)
    deck = list(range(52))
    hands = {n: [tuple(rng.sample(deck, n)) for _ in range(args.hands)] for n in (5, 6, 7)}
    print(f"python {platform.python_implementation()} {platform.python_version()}, "
          f"{args.hands:,} random hands per size, seed {args.seed}, {args.clock} time, "
          f"load average {_load()}")
    for line in _rows(hands, args):
        print(line)
    return 0
