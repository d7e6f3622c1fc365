"""Builds the lookup tables for 3-, 5-, 6- and 7-card evaluation (the reference builder).

The evaluator does not run this at import: ``scripts/gen-poker-tables`` runs it once and
writes the result to the package data file ``tables.bin``, which :mod:`.tables` loads in a
few milliseconds (a daemon's first settlement must not wait for a build). The tests
rebuild the tables here and check the shipped file against them, lookup by lookup, and
its sha256 against a golden digest.

How a hand is looked up (the fast path, no sorting and no branching on ranks):

* Each rank has a key from a set of 13 integers whose sums over any multiset of up to
  7 ranks (at most 4 of a rank) are all distinct (the set used by SKPokerEval). So the
  sum of the rank keys of a hand identifies its rank multiset exactly; the build checks
  this and fails loudly if it did not hold.
* Each card's integer adds a per-suit counter field beside the rank bits. The field
  weights are chosen so that a bit of the field is set exactly when the hand has a flush
  in that suit (5 of 5 cards: weight 13 in a 7-bit field, since 5*13 = 65 is the only
  multiple up to 5 that reaches 64; 3 of 3 cards: weight 3 in a 4-bit field; 5 or more of
  6 or 7 cards: weight 7 in a 6-bit field, since 4*7 = 28 < 32 <= 5*7 and 7*7 < 64).
  For 6 and 7 cards the suit fields sit below the rank sum (tables.py).
* A 5-card (or 3-card) hand is then one dictionary lookup of ``sum & mask``: the mask
  keeps the rank sum and the flush bits, and drops the suit counts that do not matter.
* For 6 and 7 cards the non-flush value of every rank multiset is precomputed (best
  5 of the multiset); a flush (rare) is looked up from the bit set of the flush suit's
  ranks. The shipped form of these tables is an array indexed by a two-level perfect
  hash of the rank-key sum (:func:`perfect_hash`), not a dict: 49,205 dict entries
  keyed by multi-digit ints cost several cache misses per lookup when the table is
  cold, an array of 16-bit strengths a single one.

Strengths are dense integers: 5-card strengths run 1 (7-5-4-3-2 offsuit) to 7462
(royal flush), the same scale for evaluate5/best5/strength5/6/7, so a best-of-7 hand
compares directly with a 5-card hand. 3-card strengths run from 1 upward in the order
of the Three Card Poker rules (3.16/3.14), with a separate table when the v5 royal
flush is ranked above other straight flushes.
"""

from __future__ import annotations

import json
import sys
from array import array
from itertools import combinations
from pathlib import Path
from typing import Iterator

# Rank keys (index 0 = deuce ... 12 = ace). Distinct sums for multisets of up to 7 ranks
# with at most 4 of each (from SKPokerEval, K. Shackleton); the builder re-checks it.
RANK_KEYS: tuple[int, ...] = (
    0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181,
)
RANK_BITS = 24  # 7 * 1479181 < 2**24
RANK_MASK = (1 << RANK_BITS) - 1

# Hand classes in strength order, 5-card (rules: Stud 3.11, Let It Ride 3.21).
C5_HIGH, C5_PAIR, C5_TWO_PAIR, C5_TRIPS, C5_STRAIGHT = 0, 1, 2, 3, 4
C5_FLUSH, C5_FULL_HOUSE, C5_QUADS, C5_STRAIGHT_FLUSH, C5_ROYAL = 5, 6, 7, 8, 9
# 3-card classes: straight above flush (TCP 3.16, Megalink 3.14, Xtreme 3.14).
C3_HIGH, C3_PAIR, C3_FLUSH, C3_STRAIGHT, C3_TRIPS, C3_STRAIGHT_FLUSH, C3_ROYAL = range(7)

# Straights as rank-index sets; the wheel (A-2-3-4-5) and A-2-3 count the ace low
# (Stud 3.3.1.2/3.12.4, TCP 3.3.1.2/3.17.3), so their "top" is the 5 or the 3.
_STRAIGHTS5: dict[frozenset[int], int] = {
    frozenset(range(low, low + 5)): low + 4 for low in range(0, 9)
}
_STRAIGHTS5[frozenset({12, 0, 1, 2, 3})] = 3
_STRAIGHTS3: dict[frozenset[int], int] = {
    frozenset(range(low, low + 3)): low + 2 for low in range(0, 11)
}
_STRAIGHTS3[frozenset({12, 0, 1})] = 1


def multisets(n: int, max_each: int = 4) -> Iterator[tuple[int, ...]]:
    """Every count vector over the 13 ranks with total n and each count <= max_each."""
    counts = [0] * 13

    def rec(rank: int, left: int) -> Iterator[tuple[int, ...]]:
        if rank == 12:
            if left <= max_each:
                counts[12] = left
                yield tuple(counts)
                counts[12] = 0
            return
        for k in range(min(max_each, left), -1, -1):
            counts[rank] = k
            yield from rec(rank + 1, left - k)
        counts[rank] = 0

    return rec(0, n)


def rank_sum(counts: tuple[int, ...]) -> int:
    """The rank-key sum of a count vector."""
    return sum(k * RANK_KEYS[r] for r, k in enumerate(counts) if k)


def _classify_ranks5(counts: tuple[int, ...], flush: bool) -> tuple[int, tuple[int, ...]]:
    """(class, tie-break ranks) of 5 cards given their rank counts and whether suited."""
    present = frozenset(r for r in range(13) if counts[r])
    if len(present) == 5:
        top = _STRAIGHTS5.get(present)
        if top is not None:
            cls = (C5_ROYAL if top == 12 else C5_STRAIGHT_FLUSH) if flush else C5_STRAIGHT
            return cls, (top,)
        desc = tuple(sorted(present, reverse=True))
        return (C5_FLUSH if flush else C5_HIGH), desc
    # Groups ordered by size then rank: the tie-break order of Stud 3.12.2-3.12.5.
    groups = sorted(((counts[r], r) for r in present), reverse=True)
    shape = tuple(g[0] for g in groups)
    ranks = tuple(g[1] for g in groups)
    cls = {
        (4, 1): C5_QUADS,
        (3, 2): C5_FULL_HOUSE,
        (3, 1, 1): C5_TRIPS,
        (2, 2, 1): C5_TWO_PAIR,
        (2, 1, 1, 1): C5_PAIR,
    }[shape]
    return cls, ranks


def _classify_ranks3(
    counts: tuple[int, ...], flush: bool, royal: bool
) -> tuple[int, tuple[int, ...]]:
    """(class, tie-break ranks) of 3 cards (TCP 3.16/3.17, Xtreme/Megalink 3.14/3.15)."""
    present = frozenset(r for r in range(13) if counts[r])
    if len(present) == 3:
        top = _STRAIGHTS3.get(present)
        if top is not None:
            if flush:
                if royal and top == 12:
                    return C3_ROYAL, (top,)
                return C3_STRAIGHT_FLUSH, (top,)
            return C3_STRAIGHT, (top,)
        desc = tuple(sorted(present, reverse=True))
        return (C3_FLUSH if flush else C3_HIGH), desc
    groups = sorted(((counts[r], r) for r in present), reverse=True)
    ranks = tuple(g[1] for g in groups)
    return (C3_TRIPS if groups[0][0] == 3 else C3_PAIR), ranks


# Card integer: rank key, plus per-suit counter fields above RANK_BITS.
FIELD5 = 7
FLUSH_BITS5 = sum(64 << (RANK_BITS + FIELD5 * s) for s in range(4))
FIELD3 = 4
FLUSH_BITS3 = sum(8 << (RANK_BITS + FIELD3 * s) for s in range(4))


class Tables5:
    """Tables for 5-card hands, and lazily for best-of-6 and best-of-7."""

    def __init__(self) -> None:
        self.card5: list[int] = [
            RANK_KEYS[c >> 2] | (13 << (RANK_BITS + FIELD5 * (c & 3))) for c in range(52)
        ]
        self.mask5 = RANK_MASK | FLUSH_BITS5
        # All (class, tiebreak) values, then dense strengths 1..N in order.
        nonflush: dict[int, tuple[int, tuple[int, ...]]] = {}
        for counts in multisets(5):
            key = rank_sum(counts)
            if key in nonflush:
                raise RuntimeError("rank keys are not unique for 5-card multisets")
            nonflush[key] = _classify_ranks5(counts, False)
        flush_sets: dict[int, tuple[int, tuple[int, ...]]] = {}
        for ranks in combinations(range(13), 5):
            counts = tuple(1 if r in ranks else 0 for r in range(13))
            bits = sum(1 << r for r in ranks)
            flush_sets[bits] = _classify_ranks5(counts, True)
        values = sorted(set(nonflush.values()) | set(flush_sets.values()))
        dense = {v: i + 1 for i, v in enumerate(values)}
        self.n_strengths = len(values)
        # First strength of each class, for strength -> class by comparison.
        self.class_floor: list[int] = [0] * 10
        for v in reversed(values):
            self.class_floor[v[0]] = dense[v]
        self.class_of: list[int] = [0] * (len(values) + 1)
        self.value_of: list[tuple[int, tuple[int, ...]]] = [(-1, ())] * (len(values) + 1)
        for v, s in dense.items():
            self.class_of[s] = v[0]
            self.value_of[s] = v
        self.table5: dict[int, int] = {}
        self.nonflush5: dict[int, int] = {}
        for key, v in nonflush.items():
            self.table5[key] = dense[v]
            self.nonflush5[key] = dense[v]
        self.flush_by_bits = [0] * 8192
        for bits, v in flush_sets.items():
            self.flush_by_bits[bits] = dense[v]
            key = sum(RANK_KEYS[r] for r in range(13) if bits >> r & 1)
            for s in range(4):
                self.table5[key | (64 << (RANK_BITS + FIELD5 * s))] = dense[v]
        # Best flush among 6 or 7 suited ranks: the best 5-subset.
        for n in (6, 7):
            for suited in combinations(range(13), n):
                bits = sum(1 << r for r in suited)
                self.flush_by_bits[bits] = max(
                    self.flush_by_bits[sum(1 << r for r in sub)] for sub in combinations(suited, 5)
                )
        self._built67 = False
        self.table6: dict[int, int] = {}
        self.table7: dict[int, int] = {}

    def build67(self) -> None:
        """Build the best-of-6 and best-of-7 non-flush tables (about a second, once)."""
        if self._built67:
            return
        prev = self.nonflush5
        for n, table in ((6, self.table6), (7, self.table7)):
            for counts in multisets(n):
                key = rank_sum(counts)
                if key in table:
                    raise RuntimeError(f"rank keys are not unique for {n}-card multisets")
                best = 0
                for r in range(13):
                    if counts[r]:
                        value = prev[key - RANK_KEYS[r]]
                        if value > best:
                            best = value
                table[key] = best
            prev = table
        self._built67 = True


class Tables3:
    """Tables for 3-card hands, with and without the TCP v5 royal flush."""

    def __init__(self) -> None:
        self.card3: list[int] = [
            RANK_KEYS[c >> 2] | (3 << (RANK_BITS + FIELD3 * (c & 3))) for c in range(52)
        ]
        self.mask3 = RANK_MASK | FLUSH_BITS3
        self.table: dict[int, int] = {}
        self.table_royal: dict[int, int] = {}
        self.class_of: list[int] = []
        self.class_of_royal: list[int] = []
        for royal, table, class_of in (
            (False, self.table, self.class_of),
            (True, self.table_royal, self.class_of_royal),
        ):
            entries: dict[int, tuple[int, tuple[int, ...]]] = {}
            for counts in multisets(3, 3):
                key = rank_sum(counts)
                entries[key] = _classify_ranks3(counts, False, royal)
                if max(counts) == 1:
                    for s in range(4):
                        entries[key | (8 << (RANK_BITS + FIELD3 * s))] = _classify_ranks3(
                            counts, True, royal
                        )
            values = sorted(set(entries.values()))
            dense = {v: i + 1 for i, v in enumerate(values)}
            class_of.extend([0] * (len(values) + 1))
            for v, s in dense.items():
                class_of[s] = v[0]
            for key, v in entries.items():
                table[key] = dense[v]


# ---------------------------------------------------------------- shipped form

# Perfect hash of a rank-key sum r: bucket r >> PH_SHIFT, then slot offset[bucket] + the low
# PH_SHIFT bits. 2**11-wide buckets keep the offset list small (3,822 entries for 7 cards)
# while the array stays at about 2.7 slots per key; see tables.py for the lookup.
PH_SHIFT = 11


def perfect_hash(values: dict[int, int], shift: int = PH_SHIFT) -> tuple[list[int], list[int]]:
    """(offsets, slots): ``slots[offsets[k >> shift] + (k & (2**shift - 1))] == values[k]``
    for every key, unused slots 0. Buckets are placed largest first at the first offset
    where none of their low parts collide (first-fit decreasing)."""
    low_mask = (1 << shift) - 1
    buckets: dict[int, list[int]] = {}
    for key in sorted(values):
        buckets.setdefault(key >> shift, []).append(key & low_mask)
    offsets = [0] * ((max(values) >> shift) + 1)
    used = bytearray(len(values) * 4 + (2 << shift))
    first_free = 0
    for b in sorted(buckets, key=lambda b: (-len(buckets[b]), b)):
        lows = buckets[b]
        while used[first_free]:
            first_free += 1
        o = max(0, first_free - lows[0])
        while any(used[o + low] for low in lows):
            o += 1
        for low in lows:
            used[o + low] = 1
        offsets[b] = o
    size = max(offsets[key >> shift] + (key & low_mask) for key in values) + 1
    slots = [0] * size
    for key, value in values.items():
        slots[offsets[key >> shift] + (key & low_mask)] = value
    return offsets, slots


def build_arrays() -> dict[str, array]:  # type: ignore[type-arg]
    """Every table the evaluator loads, as typed arrays (the content of tables.bin)."""
    t5 = Tables5()
    t5.build67()
    t3 = Tables3()
    out: dict[str, array] = {}  # type: ignore[type-arg]
    keys5 = sorted(t5.table5)
    out["keys5"] = array("Q", keys5)
    out["vals5"] = array("H", [t5.table5[k] for k in keys5])
    out["class5"] = array("B", t5.class_of)
    ranks = []
    for cls, tie in t5.value_of:
        ranks.extend((list(tie) + [255] * 5)[:5])
    out["ranks5"] = array("B", ranks)
    out["flush_by_bits"] = array("H", t5.flush_by_bits)
    for n, table in ((6, t5.table6), (7, t5.table7)):
        offsets, slots = perfect_hash(table)
        out[f"off{n}"] = array("I", offsets)
        out[f"slots{n}"] = array("H", slots)
    keys3 = sorted(t3.table)
    out["keys3"] = array("Q", keys3)
    out["vals3"] = array("H", [t3.table[k] for k in keys3])
    out["vals3royal"] = array("H", [t3.table_royal[k] for k in keys3])
    out["class3"] = array("B", t3.class_of)
    out["class3royal"] = array("B", t3.class_of_royal)
    return out


def encode(arrays: dict[str, array]) -> bytes:  # type: ignore[type-arg]
    """tables.bin: one JSON header line (format, shift, each array's name, type code and
    length), then the arrays' items little-endian, in header order."""
    header = {"format": "cardshoe-poker-tables", "version": 1, "ph_shift": PH_SHIFT,
              "arrays": [[name, a.typecode, len(a)] for name, a in arrays.items()]}
    parts = [json.dumps(header, separators=(",", ":")).encode() + b"\n"]
    for a in arrays.values():
        if sys.byteorder != "little":  # pragma: no cover - the build hosts are little-endian
            a = array(a.typecode, a)
            a.byteswap()
        parts.append(a.tobytes())
    return b"".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Write tables.bin (``--check``: only compare with the shipped file)."""
    import hashlib

    args = sys.argv[1:] if argv is None else argv
    data = encode(build_arrays())
    path = Path(__file__).with_name("tables.bin")
    if "--check" in args:
        same = path.exists() and path.read_bytes() == data
        print(f"{path}: {'up to date' if same else 'DIFFERS from a fresh build'}")
        return 0 if same else 1
    path.write_bytes(data)
    print(f"wrote {path} ({len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
