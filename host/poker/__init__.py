"""Poker hand evaluation for the five games: 3-card, 5-card and best 5 of 6 or 7.

Public API (see docs of each function):

* :func:`evaluate3` -- 3-card hands ranked as Three Card Poker ranks them (straight above
  flush, A-2-3 the lowest straight; ``royal=True`` for TCP v5's royal flush, rule 3.16.1).
* :func:`evaluate5` -- 5-card hands (Stud 3.11/3.12, Let It Ride 3.21); the wheel is the
  lowest straight.
* :func:`best5` -- the best 5-card hand from 5, 6 or 7 cards (Six Card Bonus, a player's
  3 cards plus 2 community cards).
* :class:`Hand` -- kind (:class:`Hand3` or :class:`Hand5`), comparable ``strength`` and the
  ``cards`` that make the hand in display order.

Fast paths for enumeration and settlement of many hands: :func:`strength3`,
:func:`strength5`, :func:`strength6`, :func:`strength7` take card ints and return the
strength alone, and :func:`strengths5` evaluates a batch of 5-card hands. Strengths of
evaluate5/best5/strength5/6/7 share one scale (1..7462).

Cards are ints 0..51 as in :mod:`cardshoe.cards`.
"""

from __future__ import annotations

from enum import IntEnum
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from ..cards import CardError, DuplicateCardError, check_card
from . import tables as _t

__all__ = [
    "Hand",
    "Hand3",
    "Hand5",
    "evaluate3",
    "evaluate5",
    "best5",
    "strength3",
    "strength5",
    "strength6",
    "strength7",
    "strengths5",
    "kind5",
    "kind3",
    "tiebreak5",
    "strength3_royal",
    "STRENGTH5_MAX",
]


class Hand3(IntEnum):
    """3-card hand classes, lowest first (TCP 3.16, Megalink and Xtreme 3.14)."""

    HIGH_CARD = _t.C3_HIGH
    PAIR = _t.C3_PAIR
    FLUSH = _t.C3_FLUSH
    STRAIGHT = _t.C3_STRAIGHT
    THREE_OF_A_KIND = _t.C3_TRIPS
    STRAIGHT_FLUSH = _t.C3_STRAIGHT_FLUSH
    ROYAL_FLUSH = _t.C3_ROYAL


class Hand5(IntEnum):
    """5-card hand classes, lowest first (Stud 3.11, Let It Ride 3.21)."""

    HIGH_CARD = _t.C5_HIGH
    PAIR = _t.C5_PAIR
    TWO_PAIR = _t.C5_TWO_PAIR
    THREE_OF_A_KIND = _t.C5_TRIPS
    STRAIGHT = _t.C5_STRAIGHT
    FLUSH = _t.C5_FLUSH
    FULL_HOUSE = _t.C5_FULL_HOUSE
    FOUR_OF_A_KIND = _t.C5_QUADS
    STRAIGHT_FLUSH = _t.C5_STRAIGHT_FLUSH
    ROYAL_FLUSH = _t.C5_ROYAL


_NAMES = {
    "HIGH_CARD": "High Card",
    "PAIR": "Pair",
    "TWO_PAIR": "Two Pair",
    "THREE_OF_A_KIND": "Three of a Kind",
    "STRAIGHT": "Straight",
    "FLUSH": "Flush",
    "FULL_HOUSE": "Full House",
    "FOUR_OF_A_KIND": "Four of a Kind",
    "STRAIGHT_FLUSH": "Straight Flush",
    "ROYAL_FLUSH": "Royal Flush",
}


class Hand(tuple):  # type: ignore[type-arg]
    """An evaluated hand.

    ``strength`` is higher for the better hand and equal for a stand-off; it compares
    between hands of the same evaluator (3-card with the same ``royal`` option, or
    5-card/best-of). ``cards`` are the cards that make the hand, in display order:
    groups by size then rank (the pair first, then kickers high to low), straights
    from the top card down with a low ace last.

    Immutable; equal when kind, strength and cards are equal (hashable alike); hands are
    not ordered (compare ``strength``). ``Hand(kind, strength, cards)`` makes one.

    Why a tuple underneath (issue 15): ``evaluate5``/``best5`` are settlement's path and
    must stay within a few times the raw ``strength5``/``strength7``. A tuple subclass is
    built in one C call (a dataclass instance took a third of the time), and ``cards`` is
    worked out from the strength and the cards evaluated when it is read (sorting and, for
    6 or 7 cards, choosing the five cost as much as the evaluation itself). The tuple is an
    implementation detail: read a Hand by its attributes, never by index or iteration.
    """

    __slots__ = ()

    # items: kind, strength, the cards, and how to show them (None: the cards are
    # already the hand in display order; else a function of (strength, cards) giving it)
    if TYPE_CHECKING:
        kind: Hand3 | Hand5
        strength: int
    else:
        kind = property(itemgetter(0), doc="The hand class (Hand3 or Hand5).")
        strength = property(itemgetter(1), doc="Comparable strength (higher is better).")

    def __new__(cls, kind: Hand3 | Hand5, strength: int, cards: Iterable[int]) -> Hand:
        return _tnew(cls, (kind, strength, tuple(cards), None))

    @property
    def cards(self) -> tuple[int, ...]:
        """The cards that make the hand, in display order (see the class docstring)."""
        strength, cards, shown = _items(self)
        return cards if shown is None else shown(strength, cards)  # type: ignore[no-any-return]

    @property
    def name(self) -> str:
        """The class name as the rules print it, e.g. ``"Straight Flush"``."""
        return _NAMES[self.kind.name]

    @property
    def ranks(self) -> tuple[int, ...]:
        """Ranks (2..14) of ``cards`` in display order; a low ace shows as 14."""
        return tuple((c >> 2) + 2 for c in self.cards)

    def _fields(self) -> tuple[Hand3 | Hand5, int, tuple[int, ...]]:
        return self.kind, self.strength, self.cards

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hand):
            # never equal to a plain tuple (whose reflected == would compare the items)
            return False if isinstance(other, tuple) else NotImplemented
        return self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Hand):
            return True if isinstance(other, tuple) else NotImplemented
        return self._fields() != other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    # not ordered (as the frozen dataclass it replaces): strengths of different
    # evaluators do not compare, so ``<`` on hands is a TypeError
    def __lt__(self, other: object) -> bool:
        return NotImplemented

    __le__ = __gt__ = __ge__ = __lt__

    def __repr__(self) -> str:
        return f"Hand(kind={self.kind!r}, strength={self.strength!r}, cards={self.cards!r})"

    def __getnewargs__(self) -> tuple[Hand3 | Hand5, int, tuple[int, ...]]:
        return self._fields()  # pickle and copy rebuild it with Hand(kind, strength, cards)

    # Not a sequence (as the dataclass was not): iterating, unpacking, len() and ``in``
    # would see the items above, so they are refused rather than half-working.
    def __iter__(self) -> Iterator[Any]:
        raise TypeError("a Hand is not a sequence: read .kind, .strength and .cards")

    def __len__(self) -> int:
        raise TypeError("a Hand is not a sequence: read .kind, .strength and .cards")

    def __contains__(self, item: object) -> bool:
        raise TypeError("a Hand is not a sequence: use `card in hand.cards`")

    def __bool__(self) -> bool:
        return True


_tnew = tuple.__new__
_items = itemgetter(1, 2, 3)


_T5 = _T3 = _t.load()  # both sizes come from the one shipped file (tables.bin)

STRENGTH5_MAX: int = _T5.n_strengths
"""The strength of a royal flush, the top of the 5-card scale (7462)."""


def _make_strength5() -> Callable[[int, int, int, int, int], int]:
    card, table, mask = _T5.card5, _T5.table5, _T5.mask5

    def strength5(a: int, b: int, c: int, d: int, e: int) -> int:
        """Strength (1..7462) of five distinct card ints; no validation (fast path)."""
        return table[(card[a] + card[b] + card[c] + card[d] + card[e]) & mask]

    return strength5


strength5 = _make_strength5()


def strengths5(hands: Iterable[Sequence[int]]) -> list[int]:
    """Strengths of many 5-card hands (each a sequence of 5 distinct card ints)."""
    card, table, mask = _T5.card5, _T5.table5, _T5.mask5
    return [table[(card[a] + card[b] + card[c] + card[d] + card[e]) & mask] for a, b, c, d, e in hands]


def _make_strength67() -> tuple[
    Callable[[int, int, int, int, int, int], int],
    Callable[[int, int, int, int, int, int, int], int],
]:
    card, fbits, low = _T5.card67, _T5.flush_bits67, _t.SUIT_BITS67
    high = low + _T5.ph_shift
    off6, slots6, off7, slots7 = _T5.off6, _T5.slots6, _T5.off7, _T5.slots7
    # A flush (about 3% of 7-card hands): each card's rank bit in its suit's 13-bit lane;
    # the flush suit's lane is the bit set of its ranks.
    lane = [1 << ((c >> 2) + 13 * (c & 3)) for c in range(52)]
    shift_of = {bit: 13 * s for bit, s in _T5.suit_of_flush.items()}
    flush = _T5.flush_by_bits

    def strength6(a: int, b: int, c: int, d: int, e: int, f: int) -> int:
        """Strength of the best 5 of six distinct card ints; no validation (fast path)."""
        k = card[a] + card[b] + card[c] + card[d] + card[e] + card[f]
        if k & fbits:
            m = lane[a] + lane[b] + lane[c] + lane[d] + lane[e] + lane[f]
            return flush[(m >> shift_of[k & fbits]) & 8191]
        return slots6[(off6[k >> high] + k) >> low]  # type: ignore[no-any-return]

    def strength7(a: int, b: int, c: int, d: int, e: int, f: int, g: int) -> int:
        """Strength of the best 5 of seven distinct card ints; no validation (fast path)."""
        k = card[a] + card[b] + card[c] + card[d] + card[e] + card[f] + card[g]
        if k & fbits:
            m = lane[a] + lane[b] + lane[c] + lane[d] + lane[e] + lane[f] + lane[g]
            return flush[(m >> shift_of[k & fbits]) & 8191]
        return slots7[(off7[k >> high] + k) >> low]  # type: ignore[no-any-return]

    return strength6, strength7


strength6, strength7 = _make_strength67()


def _make_strength3() -> tuple[Callable[[int, int, int], int], Callable[[int, int, int], int]]:
    card, mask, plain, royal = _T3.card3, _T3.mask3, _T3.table3, _T3.table3_royal

    def strength3(a: int, b: int, c: int) -> int:
        """3-card strength, no royal class (Megalink/Xtreme 3.14); no validation."""
        return plain[(card[a] + card[b] + card[c]) & mask]

    def strength3_royal(a: int, b: int, c: int) -> int:
        """3-card strength with the TCP v5 royal flush (3.16.1); no validation."""
        return royal[(card[a] + card[b] + card[c]) & mask]

    return strength3, strength3_royal


strength3, strength3_royal = _make_strength3()

def kind5(strength: int) -> Hand5:
    """The class of a 5-card strength."""
    return Hand5(_T5.class_of[strength])


def tiebreak5(strength: int) -> tuple[int, ...]:
    """The ranks (2..14) that decide between hands of one class, in order.

    Groups first by size then rank (a pair's rank first, then the kickers), a straight by
    its top card (5 for the wheel). E.g. Let It Ride's "pair of 10's or better" (4.1.1) is
    ``kind5(s) is Hand5.PAIR and tiebreak5(s)[0] >= 10``.
    """
    if not 1 <= strength <= STRENGTH5_MAX:
        raise ValueError(f"not a 5-card strength: {strength!r}")
    return tuple(r + 2 for r in _T5.tiebreak(strength))


def kind3(strength: int, *, royal: bool = False) -> Hand3:
    """The class of a 3-card strength (from the table with or without the royal)."""
    return Hand3((_T3.class3_royal if royal else _T3.class3)[strength])


def _checked(cards: Iterable[int], sizes: tuple[int, ...]) -> tuple[int, ...]:
    out = tuple(check_card(c) for c in cards)
    if len(out) not in sizes:
        want = " or ".join(str(n) for n in sizes)
        raise CardError(f"expected {want} cards, got {len(out)}")
    if len(set(out)) != len(out):
        raise DuplicateCardError(f"a card appears more than once in {out!r}")
    return out


def _display_order(cards: Sequence[int], straight: bool) -> tuple[int, ...]:
    """Cards grouped by rank count then rank (high first); a straight with a low ace
    puts the ace last."""
    counts: dict[int, int] = {}
    for c in cards:
        counts[c >> 2] = counts.get(c >> 2, 0) + 1
    ordered = sorted(cards, key=lambda c: (counts[c >> 2], c >> 2, c & 3), reverse=True)
    if straight and ordered[0] >> 2 == 12 and ordered[1] >> 2 != 11:
        ordered = ordered[1:] + ordered[:1]
    return tuple(ordered)


_STRAIGHT_KINDS = {
    Hand5.STRAIGHT, Hand5.STRAIGHT_FLUSH, Hand5.ROYAL_FLUSH,
    Hand3.STRAIGHT, Hand3.STRAIGHT_FLUSH, Hand3.ROYAL_FLUSH,
}


def evaluate3(cards: Iterable[int], *, royal: bool = False) -> Hand:
    """Evaluate a 3-card hand as the Three Card Poker rules rank it.

    Straight above flush and A-2-3 the lowest straight (TCP 3.16/3.17.3, Megalink and
    Xtreme 3.14/3.15.3). With ``royal=True`` (Three Card Poker v5 only) A-K-Q suited is
    a Royal Flush above every other straight flush (TCP 3.16.1); otherwise it is the top
    straight flush. Raises CardError/DuplicateCardError on bad input.
    """
    a, b, c = _checked(cards, (3,))
    strength = (strength3_royal if royal else strength3)(a, b, c)
    kind = kind3(strength, royal=royal)
    return Hand(kind, strength, _display_order((a, b, c), kind in _STRAIGHT_KINDS))


_BY_CLASS5 = {kind.value: kind for kind in Hand5}
_KIND5: list[Hand5] = [Hand5.HIGH_CARD] + [_BY_CLASS5[c] for c in _T5.class_of[1:]]

# The fast paths' validation of a plain int 0..51: ``c is _CARDS[c]``. CPython keeps one
# object per small int, so this holds for exactly those; True (== 1), 1.0 and negative
# ints (indexing from the end) fail it, other types fail the indexing. Anything failing
# it goes through check_card (which gives the error), so an interpreter without the
# small-int cache is only slower, never wrong.
_CARDS: list[int] = list(range(52))
# 5 cards: the evaluator's card int, plus bit 52 + c so that the sum has 5 bits set above
# bit 52 exactly when the cards are distinct (a repeated bit carries into the next)
_CARD5_BITS: list[int] = [_T5.card5[c] | (1 << (52 + c)) for c in range(52)]
_FAST_FAILS = (ValueError, TypeError, IndexError)  # wrong count, not an int, >= 52


def _order_weights(strength: int) -> list[int]:
    """Per rank index, its place in display order, 5 first to 1 last (0: not in the hand):
    groups by size then rank; a wheel's ace last (Stud 3.3.1.2/3.12.4)."""
    cls = _T5.class_of[strength]
    ranks = _T5.tiebreak(strength)
    weights = [0] * 13
    if cls in (_t.C5_STRAIGHT, _t.C5_STRAIGHT_FLUSH, _t.C5_ROYAL):
        top = ranks[0]
        for i in range(5):
            weights[top - i if top - i >= 0 else 12] = 5 - i  # the wheel's ace: 1, last
        return weights
    # tiebreak order is the display order of the groups
    for pos, r in enumerate(ranks):
        weights[r] = 5 - pos
    return weights


# Per strength, lazily: each card's sort key, its rank's place * 4 + its suit, as 52 bytes
# (small ints: a sort reads them without touching int objects all over the heap).
_KEYS: list[bytes | None] = [None] * (STRENGTH5_MAX + 1)


def _card_keys(strength: int) -> bytes:
    keys = _KEYS[strength]
    if keys is None:
        w = _order_weights(strength)
        keys = _KEYS[strength] = bytes((w[c >> 2] << 2) | (c & 3) for c in range(52))
    return keys


def _display_keys(strength: int, hand: Sequence[int]) -> tuple[int, ...]:
    keys = _KEYS[strength] or _card_keys(strength)
    return tuple(sorted(hand, key=keys.__getitem__, reverse=True))


# Per strength, lazily: display order as a function of the five cards sorted high to low.
# The hand's ranks (with their multiplicities) are fixed by its strength, so the place of
# each rank group in code order, and so the permutation to display order, is the same for
# every hand of that strength (cards of one rank are suit-descending in both orders).
_PERM5: list[Callable[[list[int]], tuple[int, ...]] | None] = [None] * (STRENGTH5_MAX + 1)


def _perm5(strength: int, ordered: list[int]) -> Callable[[list[int]], tuple[int, ...]]:
    shown = _display_keys(strength, ordered)
    where = tuple(ordered.index(c) for c in shown)
    perm: Callable[[list[int]], tuple[int, ...]]
    perm = tuple if where == (0, 1, 2, 3, 4) else itemgetter(*where)
    _PERM5[strength] = perm
    return perm


def _display5(strength: int, hand: Sequence[int]) -> tuple[int, ...]:
    """The 5 cards of ``hand`` (of that strength) in display order."""
    ordered = sorted(hand, reverse=True)
    return (_PERM5[strength] or _perm5(strength, ordered))(ordered)


# Per strength, lazily: 52 bytes, 1 for a card whose rank the hand uses (6 and 7 cards).
_USES: list[bytes | None] = [None] * (STRENGTH5_MAX + 1)


def _uses(strength: int) -> bytes:
    need = _NEEDS[strength] or _needs(strength)
    _USES[strength] = found = bytes(1 if need[c >> 2] else 0 for c in range(52))
    return found


def _shown_best(best: int, hand: Sequence[int]) -> tuple[int, ...]:
    """The 5 of ``hand`` (6 or 7 cards, best-of strength ``best``) that make the hand,
    in display order. The best hand's ranks (with their multiplicities) are known from
    its strength; take the highest-coded cards of those ranks, which is best5's tie rule.
    A flush class takes them from the one suit holding 5+ cards."""
    ordered = sorted(hand, reverse=True)
    if _T5.class_of[best] in (_t.C5_FLUSH, _t.C5_STRAIGHT_FLUSH, _t.C5_ROYAL):
        counts = [0, 0, 0, 0]
        for c in hand:
            counts[c & 3] += 1
        suit = counts.index(max(counts))
        ranks = _T5.tiebreak(best)
        if len(ranks) == 1:  # a straight flush: its five ranks down from the top card
            top = ranks[0]
            ranks = tuple(top - i if top - i >= 0 else 12 for i in range(5))
        chosen = [c for c in ordered if c & 3 == suit and c >> 2 in ranks]
    else:
        uses = _USES[best] or _uses(best)
        chosen = [c for c in ordered if uses[c]]
        if len(chosen) > 5:  # more cards of a used rank than the hand takes (the lower go)
            need = bytearray(_NEEDS[best] or _needs(best))
            chosen = []
            for c in ordered:
                r = c >> 2
                if need[r]:
                    need[r] -= 1
                    chosen.append(c)
    return (_PERM5[best] or _perm5(best, chosen))(chosen)


def _make_evaluate5() -> Callable[[Iterable[int]], Hand]:
    bits, table, mask = _CARD5_BITS, _T5.table5, _T5.mask5
    ids, kinds, new, fails, shown = _CARDS, _KIND5, _tnew, _FAST_FAILS, _display5

    def evaluate5(cards: Iterable[int]) -> Hand:
        """Evaluate exactly 5 cards (Stud 3.11/3.12, Let It Ride 3.21); wheel lowest straight.

        Raises CardError/DuplicateCardError on bad input."""
        # Everything inline (one Python call): this is settlement's path, and the
        # benchmark holds it against the raw strength5. The cards' display order is
        # worked out when Hand.cards is read.
        hand = cards if type(cards) is tuple else tuple(cards)
        try:
            a, b, c, d, e = hand
            if a is ids[a] and b is ids[b] and c is ids[c] and d is ids[d] and e is ids[e]:
                k = bits[a] + bits[b] + bits[c] + bits[d] + bits[e]
                if (k >> 52).bit_count() == 5:
                    s = table[k & mask]
                    return new(Hand, (kinds[s], s, hand, shown))
        except fails:
            pass
        return _evaluate5_checked(hand)

    return evaluate5


def _evaluate5_checked(cards: Iterable[int]) -> Hand:
    """evaluate5 by the slow path: every card through check_card (the errors' wording)."""
    hand = tuple(int(c) for c in _checked(cards, (5,)))
    s = strength5(*hand)
    return _tnew(Hand, (_KIND5[s], s, hand, _display5))


evaluate5 = _make_evaluate5()


def _make_best5() -> Callable[[Iterable[int]], Hand]:
    ids, kinds, new, fails, shown = _CARDS, _KIND5, _tnew, _FAST_FAILS, _shown_best
    s6, s7 = strength6, strength7

    def best5(cards: Iterable[int]) -> Hand:
        """The best 5-card hand from 5, 6 or 7 cards, with the 5 cards that make it.

        When several 5-card subsets tie for best (e.g. two equal kickers) the one of the
        higher card codes is shown; the strength is the same either way. Raises
        CardError/DuplicateCardError on bad input.
        """
        hand = cards if type(cards) is tuple else tuple(cards)
        try:
            if len(hand) == 7:
                a, b, c, d, e, f, g = hand
                if (a is ids[a] and b is ids[b] and c is ids[c] and d is ids[d]
                        and e is ids[e] and f is ids[f] and g is ids[g]
                        and len({a, b, c, d, e, f, g}) == 7):
                    s = s7(a, b, c, d, e, f, g)
                    return new(Hand, (kinds[s], s, hand, shown))
            elif len(hand) == 6:
                a, b, c, d, e, f = hand
                if (a is ids[a] and b is ids[b] and c is ids[c] and d is ids[d]
                        and e is ids[e] and f is ids[f] and len({a, b, c, d, e, f}) == 6):
                    s = s6(a, b, c, d, e, f)
                    return new(Hand, (kinds[s], s, hand, shown))
            elif len(hand) == 5:
                return evaluate5(hand)
        except fails:
            pass
        return _best5_checked(hand)

    return best5


def _best5_checked(cards: Iterable[int]) -> Hand:
    """best5 by the slow path: every card through check_card (the errors' wording)."""
    hand = tuple(int(c) for c in _checked(cards, (5, 6, 7)))
    if len(hand) == 5:
        return _evaluate5_checked(hand)
    s = strength6(*hand) if len(hand) == 6 else strength7(*hand)
    return _tnew(Hand, (_KIND5[s], s, hand, _shown_best))


best5 = _make_best5()


# Per strength, lazily: how many cards of each rank its 5 cards hold (13 bytes).
_NEEDS: list[bytes | None] = [None] * (STRENGTH5_MAX + 1)


def _needs(strength: int) -> bytes:
    need = bytearray(13)
    for r, k in _GROUP_COUNTS[_T5.class_of[strength]](_T5.tiebreak(strength)):
        need[r] = k
    _NEEDS[strength] = found = bytes(need)
    return found


def _straight_counts(ranks: tuple[int, ...]) -> list[tuple[int, int]]:
    top = ranks[0]
    return [((top - i) if top - i >= 0 else 12, 1) for i in range(5)]


_GROUP_COUNTS: dict[int, Callable[[tuple[int, ...]], list[tuple[int, int]]]] = {
    _t.C5_HIGH: lambda r: [(x, 1) for x in r],
    _t.C5_PAIR: lambda r: [(r[0], 2)] + [(x, 1) for x in r[1:]],
    _t.C5_TWO_PAIR: lambda r: [(r[0], 2), (r[1], 2), (r[2], 1)],
    _t.C5_TRIPS: lambda r: [(r[0], 3), (r[1], 1), (r[2], 1)],
    _t.C5_STRAIGHT: _straight_counts,
    _t.C5_FULL_HOUSE: lambda r: [(r[0], 3), (r[1], 2)],
    _t.C5_QUADS: lambda r: [(r[0], 4), (r[1], 1)],
}
