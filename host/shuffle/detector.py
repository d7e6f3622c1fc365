"""The shuffle alarm's statistic: rising sequences of a shoe's order against earlier orders.

A riffle shuffle of a deck in a known order leaves it an interleaving of at most two
*rising sequences* of that order (runs of cards that keep their relative order, Bayer and
Diaconis 1992); k riffles leave at most 2**k, a cut leaves two, an unshuffled deck one. A
well-shuffled deck of m cards has (m + 1) / 2 of them on average. So the detector counts the
rising sequences of the cards a shoe dealt, relative to each *reference* order (the new-deck
order, and each earlier shoe of the same deck as dealt and as collected, each also
reversed: a pile turned over), and asks how likely so few would be if the deck had been
shuffled at random.

That probability is exact: the permutations of m cards with r rising sequences are counted
by the Eulerian number A(m, r - 1) (the inverse permutation has r - 1 descents), so the
lower tail is a sum of Eulerian numbers over m!. The alarm is raised when the smallest
tail, over all the references tested, is below `ALPHA` divided by the number of tests
(Bonferroni), so adding references does not add false alarms.

Only cards whose place in the reference is known are compared (a shoe reads only the cards
it dealt, so an earlier shoe's undealt stub has no known order); at least `MIN_COMPARED`
of them are needed for a verdict. Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

#: The family-wise false-alarm level per check: `cardshoe bench shuffle` measures the rate
#: the whole check gives over GSR-shuffled decks (docs/shuffle.md).
ALPHA = 1e-4
#: Fewer cards in common with a reference than this give no verdict against it: with m cards
#: even a perfect match has probability 1/m!, and 1/7! is above ALPHA.
MIN_COMPARED = 8


@dataclass(frozen=True)
class Reference:
    """An order the deck is known to have had: `cards` are card codes, first dealt first."""

    name: str
    cards: tuple[int, ...]


@dataclass(frozen=True)
class Finding:
    """One test: the dealt cards against one reference in one direction."""

    reference: str
    reversed: bool
    compared: int
    """Cards dealt that have a known place in the reference."""
    rising: int
    """Rising sequences of those cards relative to the reference."""
    p_value: float
    """P(at most `rising` rising sequences) for a uniformly shuffled deck of `compared` cards."""

    def to_json(self) -> dict[str, object]:
        """As journaled in a `shuffle_alarm` event."""
        return {"reference": self.reference, "reversed": self.reversed, "compared": self.compared,
                "rising": self.rising, "p_value": float(f"{self.p_value:.3e}")}


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: `alarm` when `worst`'s p-value is below `threshold`."""

    alarm: bool
    cards: int
    threshold: float
    findings: tuple[Finding, ...]
    worst: Finding | None


@lru_cache(maxsize=None)
def _eulerian_cdf(m: int) -> tuple[float, ...]:
    """cdf[r] = P(at most r rising sequences) for a uniform permutation of m cards (r = 0..m)."""
    row = [1]  # A(1, 0)
    for n in range(2, m + 1):
        # A(n, k) = (k + 1) A(n-1, k) + (n - k) A(n-1, k-1)
        row = [((k + 1) * (row[k] if k < len(row) else 0)) + ((n - k) * (row[k - 1] if k >= 1 else 0))
               for k in range(n)]
    total = sum(row)
    out = [0.0]
    running = 0
    for count in row:
        running += count
        out.append(running / total)
    return tuple(out)


def rising_tail(m: int, rising: int) -> float:
    """P(a uniformly shuffled deck of `m` cards shows at most `rising` rising sequences)."""
    if m <= 0:
        return 1.0
    cdf = _eulerian_cdf(m)
    return cdf[max(0, min(rising, m))]


def rising_sequences(dealt: Sequence[int], reference: Sequence[int]) -> tuple[int, int]:
    """(rising sequences, cards compared) of `dealt` relative to `reference`, over the cards
    both hold. A rising sequence is a maximal run of cards consecutive in the reference that
    the deal shows in the same relative order; the count is 1 + the number of cards whose
    reference successor (among the compared cards) was dealt before them."""
    place = {card: i for i, card in enumerate(reference)}
    common = [c for c in dealt if c in place]
    if not common:
        return 0, 0
    when = {card: i for i, card in enumerate(common)}
    by_reference = sorted(common, key=place.__getitem__)
    breaks = sum(1 for a, b in zip(by_reference, by_reference[1:]) if when[b] < when[a])
    return breaks + 1, len(common)


def check(dealt: Iterable[int | None], references: Iterable[Reference], *, alpha: float = ALPHA,
          min_compared: int = MIN_COMPARED) -> Verdict:
    """Test the cards a shoe dealt (codes in dealing order; None for an unread card, skipped)
    against each reference, forwards and reversed."""
    cards = [c for c in dealt if c is not None]
    findings: list[Finding] = []
    for ref in references:
        for backwards in (False, True):
            order = tuple(reversed(ref.cards)) if backwards else ref.cards
            rising, compared = rising_sequences(cards, order)
            if compared < min_compared:
                continue
            findings.append(Finding(ref.name, backwards, compared, rising, rising_tail(compared, rising)))
    if not findings:
        return Verdict(False, len(cards), alpha, (), None)
    threshold = alpha / len(findings)
    worst = min(findings, key=lambda f: (f.p_value, -f.compared))
    return Verdict(worst.p_value < threshold, len(cards), threshold, tuple(findings), worst)
