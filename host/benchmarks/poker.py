"""`cardshoe bench poker`: hand evaluations per second, ours beside established evaluators.

What is measured (all in this one process, same random hands for every evaluator):

* the hands are drawn before timing, as tuples of card ints (ours, phevaluator) or of
  the other library's own card objects/ints (treys, pokerkit), so card conversion is
  not timed for anyone;
* "call" rows time a Python ``for`` loop that unpacks each hand and calls the
  evaluator once per hand: loop and call overhead are included, as a caller pays them;
* "batch" rows time one call over the whole list (our ``strengths5``), which is how
  the par-sheet enumerations use it;
* "Hand" rows time the full public API (validation, class, cards in display order).

Figures are the best of ``--repeat`` runs. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any, Callable, Sequence

from ..poker import best5, evaluate5, strength5, strength6, strength7, strengths5

Row = tuple[str, str, int, float]


def _rate(fn: Callable[[], object], n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n / best


def _ours(hands: dict[int, list[tuple[int, ...]]], repeat: int) -> list[Row]:
    rows: list[Row] = []
    h5, h6, h7 = hands[5], hands[6], hands[7]

    def loop5() -> None:
        f = strength5
        for a, b, c, d, e in h5:
            f(a, b, c, d, e)

    def loop6() -> None:
        f = strength6
        for a, b, c, d, e, g in h6:
            f(a, b, c, d, e, g)

    def loop7() -> None:
        f = strength7
        for a, b, c, d, e, g, h in h7:
            f(a, b, c, d, e, g, h)

    rows.append(("cardshoe", "5 cards, strength5 call", len(h5), _rate(loop5, len(h5), repeat)))
    rows.append(("cardshoe", "5 cards, strengths5 batch", len(h5), _rate(lambda: strengths5(h5), len(h5), repeat)))
    rows.append(("cardshoe", "best of 6, strength6 call", len(h6), _rate(loop6, len(h6), repeat)))
    rows.append(("cardshoe", "best of 7, strength7 call", len(h7), _rate(loop7, len(h7), repeat)))
    few = 20000
    rows.append(("cardshoe", "5 cards, evaluate5 -> Hand", few,
                 _rate(lambda: [evaluate5(h) for h in h5[:few]], few, repeat)))
    rows.append(("cardshoe", "best of 7, best5 -> Hand", few,
                 _rate(lambda: [best5(h) for h in h7[:few]], few, repeat)))
    return rows


def _treys(hands: dict[int, list[tuple[int, ...]]], repeat: int) -> list[Row]:
    try:
        import treys
    except ImportError:
        return [("treys", "not installed", 0, 0.0)]
    ev = treys.Evaluator()
    tc = [treys.Card.new("23456789TJQKA"[c >> 2] + "cdhs"[c & 3]) for c in range(52)]
    rows: list[Row] = []
    for n in (5, 6, 7):
        conv = [([tc[h[0]], tc[h[1]]], [tc[c] for c in h[2:]]) for h in hands[n]]

        def loop(conv: list[tuple[list[int], list[int]]] = conv) -> None:
            f = ev.evaluate
            for hole, board in conv:
                f(hole, board)

        label = "5 cards" if n == 5 else f"best of {n}"
        rows.append((f"treys {getattr(treys, '__version__', '')}".strip(), f"{label}, evaluate call",
                     len(conv), _rate(loop, len(conv), repeat)))
    return rows


def _phevaluator(hands: dict[int, list[tuple[int, ...]]], repeat: int) -> list[Row]:
    try:
        from phevaluator import evaluate_cards
    except ImportError:
        return [("phevaluator", "not installed", 0, 0.0)]
    rows: list[Row] = []
    for n in (5, 6, 7):
        # phevaluator's card ids are rank*4+suit with the same suit order as ours.
        hs = hands[n]

        def loop(hs: list[tuple[int, ...]] = hs) -> None:
            f = evaluate_cards
            for h in hs:
                f(*h)

        label = "5 cards" if n == 5 else f"best of {n}"
        rows.append(("phevaluator", f"{label}, evaluate_cards call", len(hs), _rate(loop, len(hs), repeat)))
    return rows


def _pokerkit(hands: dict[int, list[tuple[int, ...]]], repeat: int) -> list[Row]:
    try:
        import pokerkit
    except ImportError:
        return [("pokerkit", "not installed", 0, 0.0)]
    texts = ["23456789TJQKA"[c >> 2] + "cdhs"[c & 3] for c in range(52)]
    rows: list[Row] = []
    few = 5000  # pokerkit is far slower; fewer hands keep the run short
    for n in (5, 7):
        objs: list[Any] = [
            (list(pokerkit.Card.parse("".join(texts[c] for c in h[:2]))),
             list(pokerkit.Card.parse("".join(texts[c] for c in h[2:]))))
            for h in hands[n][:few]
        ]

        def loop(objs: list[Any] = objs) -> None:
            f = pokerkit.StandardHighHand.from_game
            for hole, board in objs:
                f(hole, board)

        label = "5 cards" if n == 5 else f"best of {n}"
        rows.append(("pokerkit", f"{label}, StandardHighHand.from_game", few, _rate(loop, few, repeat)))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Print evaluations per second for cardshoe.poker and the installed reference evaluators."""
    parser = argparse.ArgumentParser(prog="cardshoe bench poker", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=300_000, help="random hands per size")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is shown)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(list(argv or []))
    rng = random.Random(args.seed)
    deck = list(range(52))
    hands = {n: [tuple(rng.sample(deck, n)) for _ in range(args.hands)] for n in (5, 6, 7)}
    import platform
    print(f"python {platform.python_implementation()} {platform.python_version()}, "
          f"{args.hands} random hands per size, best of {args.repeat}")
    rows = _ours(hands, args.repeat)
    rows += _treys(hands, args.repeat)
    rows += _phevaluator(hands, args.repeat)
    rows += _pokerkit(hands, args.repeat)
    print(f"{'evaluator':<14} {'what':<36} {'hands':>8} {'evals/s':>12}")
    for who, what, n, rate in rows:
        print(f"{who:<14} {what:<36} {n:>8} {rate:>12,.0f}")
    return 0
