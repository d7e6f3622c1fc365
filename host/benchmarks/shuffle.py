"""`cardshoe bench shuffle`: the shuffle alarm's false-alarm and detection rates.

Decks are shuffled by simulated Gilbert-Shannon-Reeds riffles (`cardshoe.shuffle.simulate`)
from a known earlier order and checked by the same code the table core runs
(`cardshoe.shuffle.book.references` and `cardshoe.shuffle.detector.check`, at `ALPHA`):

- **whole deck**: the earlier order of all 52 cards is known and the new shoe deals all 52;
- **table**: Three Card Poker, 7 seats, automated dealing (TCP 3.7, `build_procedure`): the
  earlier shoe dealt 24 cards, collected as reading 60 says (the detector knows those 24,
  as dealt and as collected; the 28-card stub's order is unknown to it and goes under the
  pile), the pile is riffled, and the new shoe deals 24.

7 riffles give the false-alarm rate; 0, 1 and 2 riffles (and a single cut, a false shuffle
that keeps the order) the detection rate. Seeded: the same run prints the same figures.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Callable, Sequence

from cardshoe.rounds import Device, ShoeCard, build_procedure
from cardshoe.shuffle.book import ShoeOrder, references
from cardshoe.shuffle.collect import collected_order
from cardshoe.shuffle.detector import ALPHA, check
from cardshoe.shuffle.simulate import cut, riffles

Shuffle = Callable[[list[int], random.Random], list[int]]


def _riffled(times: int) -> Shuffle:
    return lambda deck, rng: riffles(deck, times, rng)


def _table_collected(dealt: Sequence[int]) -> tuple[int, ...]:
    """The collected order of a 7-seat automated Three Card Poker deal (reading 60)."""
    procedure = build_procedure("three-card-poker", Device.AUTOMATED, tuple(range(1, 8)))
    placements = {i + 1: place for i, place in enumerate(procedure.places)}
    cards = {i + 1: ShoeCard(shoe_no=1, index=i + 1, code=code) for i, code in enumerate(dealt)}
    return collected_order(placements, cards)


def run_whole_deck(shuffle: Shuffle, decks: int, seed: int, alpha: float) -> int:
    """Alarms over `decks` whole decks shuffled from a known random earlier order."""
    rng = random.Random(seed)
    alarms = 0
    for _ in range(decks):
        earlier = list(range(52))
        rng.shuffle(earlier)
        refs = references([ShoeOrder(1, tuple(earlier), ())])
        alarms += check(shuffle(earlier, rng), refs, alpha=alpha).alarm
    return alarms


def run_table(shuffle: Shuffle, decks: int, seed: int, alpha: float, dealt_n: int = 24) -> int:
    """Alarms over `decks` table shoes: 24 dealt, collected, riffled with the stub, 24 dealt."""
    rng = random.Random(seed)
    alarms = 0
    for _ in range(decks):
        earlier = list(range(52))
        rng.shuffle(earlier)
        dealt, stub = earlier[:dealt_n], earlier[dealt_n:]
        collected = _table_collected(dealt)
        pile = list(collected) + stub  # the stub's order is not known to the detector
        refs = references([ShoeOrder(1, tuple(dealt), collected)])
        alarms += check(shuffle(pile, rng)[:dealt_n], refs, alpha=alpha).alarm
    return alarms


def main(argv: Sequence[str] | None = None) -> int:
    """Print the alarm rate per scenario and shuffle."""
    parser = argparse.ArgumentParser(prog="cardshoe bench shuffle", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=10_000, help="decks per line (default 10000)")
    parser.add_argument("--seed", type=int, default=14, help="random seed (default 14)")
    parser.add_argument("--alpha", type=float, default=ALPHA, help=f"family-wise level per check (default {ALPHA})")
    args = parser.parse_args(list(argv or []))
    shuffles: list[tuple[str, Shuffle]] = [
        ("7 riffles (false alarms)", _riffled(7)),
        ("0 riffles (unshuffled)", _riffled(0)),
        ("one cut (false shuffle)", cut),
        ("1 riffle", _riffled(1)),
        ("2 riffles", _riffled(2)),
        ("3 riffles", _riffled(3)),
        ("4 riffles", _riffled(4)),
    ]
    print(f"alpha {args.alpha:g} per check (Bonferroni over its references), {args.decks} decks per line, "
          f"seed {args.seed}")
    print(f"{'scenario':<34} {'shuffle':<26} {'alarms':>8} {'rate':>9} {'s':>6}")
    for name, runner in (("whole deck (52 of 52 known)", run_whole_deck),
                         ("table (TCP 7 seats, 24 of 52)", run_table)):
        for label, shuffle in shuffles:
            start = time.perf_counter()
            alarms = runner(shuffle, args.decks, args.seed, args.alpha)
            took = time.perf_counter() - start
            print(f"{name:<34} {label:<26} {alarms:>8} {alarms / args.decks:>8.2%} {took:>6.1f}", flush=True)
    return 0
