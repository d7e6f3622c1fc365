"""Hand ranking as the rule documents define it, ties and kickers, and exhaustive counts.

Rule numbers: Three Card Poker v5 (TCP) 3.16/3.17; Megalink Three Card Poker and
Xtreme 3.14/3.15; Singapore Stud (Stud) 3.11/3.12; Let It Ride (LIR) 3.21.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from itertools import combinations

import pytest

from cardshoe.cards import CardError, DuplicateCardError, parse_cards
from cardshoe.poker import (
    STRENGTH5_MAX,
    Hand3,
    Hand5,
    best5,
    evaluate3,
    evaluate5,
    kind3,
    kind5,
    strength3,
    strength5,
    strength6,
    strength7,
    strengths5,
)


def e3(text: str, royal: bool = False) -> int:
    return int(evaluate3(parse_cards(text), royal=royal).strength)


def e5(text: str) -> int:
    return int(evaluate5(parse_cards(text)).strength)


# ---------------------------------------------------------------- 3-card ranking


@pytest.mark.parametrize(
    "text, kind",
    [
        ("8h 7h 6h", Hand3.STRAIGHT_FLUSH),  # TCP 3.16.2 example
        ("Ts Th Tc", Hand3.THREE_OF_A_KIND),  # 3.16.3
        ("8d 7c 6h", Hand3.STRAIGHT),  # 3.16.4
        ("Th 4h 2h", Hand3.FLUSH),  # 3.16.5
        ("Ac Ah 8d", Hand3.PAIR),  # 3.16.6
        ("Qc Th 6d", Hand3.HIGH_CARD),  # 3.16.7
        ("As 2d 3c", Hand3.STRAIGHT),  # ace low, 3.3.1.2
        ("As Ks Qs", Hand3.STRAIGHT_FLUSH),  # no royal class outside TCP v5
        ("Qs Ks 2s", Hand3.FLUSH),  # no wrap-around straight
    ],
)
def test_3card_classes(text: str, kind: Hand3) -> None:
    assert evaluate3(parse_cards(text)).kind is kind


def test_3card_order_straight_above_flush() -> None:
    # TCP 3.16 / Megalink and Xtreme 3.14: ... Three of a Kind > Straight > Flush > Pair
    order = ["Qc Th 6d", "2c 2d 3h", "Th 4h 2h", "As 2d 3c", "2s 2h 2c", "As 2s 3s"]
    strengths = [e3(t) for t in order]
    assert strengths == sorted(strengths) and len(set(strengths)) == len(strengths)
    assert e3("4d 3c 2h") > e3("Ah Kh Jh")  # lowest straight beats the best flush


def test_3card_a23_lowest_straight() -> None:
    # TCP 3.17.3 / Xtreme 3.15.3: straights containing a 4 or higher beat A-2-3
    assert e3("4d 3c 2h") > e3("As 2d 3c")
    assert e3("Ad Kc Qh") > e3("Kd Qc Jh") > e3("4d 3c 2h")
    assert e3("4s 3s 2s") > e3("As 2s 3s")  # also for straight flushes
    hand = evaluate3(parse_cards("As 2d 3c"))
    assert hand.ranks == (3, 2, 14)  # shown 3-2-A


def test_3card_royal_option() -> None:
    # TCP v5 3.16.1: A-K-Q suited is a Royal Flush above the other straight flushes
    royal = evaluate3(parse_cards("As Ks Qs"), royal=True)
    assert royal.kind is Hand3.ROYAL_FLUSH and royal.name == "Royal Flush"
    assert royal.strength > e3("Ks Qs Js", royal=True)
    assert e3("Ah Kh Qh", royal=True) == e3("As Ks Qs", royal=True)  # suits have no value
    assert evaluate3(parse_cards("As Ks Qd"), royal=True).kind is Hand3.STRAIGHT


def test_3card_ties_and_kickers() -> None:
    # 3.17.2: higher pair wins; equal pairs by the third card; equal third card stand-off
    assert e3("Kc Kd 2h") > e3("Qc Qd Ah")
    assert e3("Kc Kd 9h") > e3("Ks Kh 8c")
    assert e3("Kc Kd 9h") == e3("Ks Kh 9c")
    # 3.17 / 3.17.1: same order, ranked card by card; same ranks is a stand-off
    assert e3("Ac 7d 3h") > e3("Ac 6d 5h")
    assert e3("Ac 7d 4h") > e3("Ad 7c 3h")
    assert e3("Ac 7d 3h") == e3("Ad 7c 3s")
    assert e3("Ah 9h 3h") > e3("Kd Qd Td")
    # 3.17.4: equal straights stand off
    assert e3("8s 9d Tc") == e3("8h 9h Tc")
    # 3.3.1.3: suits have no value
    assert e3("5s 6s 7s") == e3("5c 6c 7c")


def _counts3(royal: bool) -> Counter[Hand3]:
    return Counter(kind3(s, royal=royal) for s in (
        evaluate3(h, royal=royal).strength for h in combinations(range(52), 3)))


def test_all_22100_3card_hands() -> None:
    plain = _counts3(False)
    assert sum(plain.values()) == 22100
    assert plain == {
        Hand3.STRAIGHT_FLUSH: 48,
        Hand3.THREE_OF_A_KIND: 52,
        Hand3.STRAIGHT: 720,
        Hand3.FLUSH: 1096,
        Hand3.PAIR: 3744,
        Hand3.HIGH_CARD: 16440,
    }
    royal = _counts3(True)
    assert royal[Hand3.ROYAL_FLUSH] == 4 and royal[Hand3.STRAIGHT_FLUSH] == 44
    assert {k: v for k, v in royal.items() if k not in (Hand3.ROYAL_FLUSH, Hand3.STRAIGHT_FLUSH)} == {
        k: v for k, v in plain.items() if k is not Hand3.STRAIGHT_FLUSH
    }
    # distinct strengths: 12 SF + 13 trips + 12 straights + (286-12) flush ranks
    # + 13*12 pairs + (286-12) high cards
    assert len({strength3(*h) for h in combinations(range(52), 3)}) == 12 + 13 + 12 + 274 + 156 + 274


# ---------------------------------------------------------------- 5-card ranking


@pytest.mark.parametrize(
    "text, kind",
    [
        ("Ad Kd Qd Jd Td", Hand5.ROYAL_FLUSH),  # Stud 3.11.1 / LIR 3.21.1
        ("Jc Tc 9c 8c 7c", Hand5.STRAIGHT_FLUSH),  # 3.11.2
        ("Ac Ah Ad As Jh", Hand5.FOUR_OF_A_KIND),  # 3.11.3
        ("Kc Kh Kd As Ah", Hand5.FULL_HOUSE),  # 3.11.4
        ("Jh 8h 6h 5h 2h", Hand5.FLUSH),  # 3.11.5
        ("9c 8d 7c 6h 5s", Hand5.STRAIGHT),  # 3.11.6
        ("Ts Th Tc 6h 3d", Hand5.THREE_OF_A_KIND),  # 3.11.7
        ("Qs Qh 6c 6h 3d", Hand5.TWO_PAIR),  # 3.11.8
        ("Ac Ah 8d 6h 5s", Hand5.PAIR),  # 3.11.9
        ("Qc Th 6d 5s 2h", Hand5.HIGH_CARD),  # 3.11.10
        ("Ac 2d 3h 4s 5c", Hand5.STRAIGHT),  # wheel, 3.3.1.2
        ("Ah 2h 3h 4h 5h", Hand5.STRAIGHT_FLUSH),
        ("Qd Kd Ad 2d 3d", Hand5.FLUSH),  # no wrap-around straight
        ("Qc Kd Ah 2s 3c", Hand5.HIGH_CARD),
    ],
)
def test_5card_classes(text: str, kind: Hand5) -> None:
    hand = evaluate5(parse_cards(text))
    assert hand.kind is kind
    assert hand.name == {
        Hand5.ROYAL_FLUSH: "Royal Flush", Hand5.STRAIGHT_FLUSH: "Straight Flush",
        Hand5.FOUR_OF_A_KIND: "Four of a Kind", Hand5.FULL_HOUSE: "Full House",
        Hand5.FLUSH: "Flush", Hand5.STRAIGHT: "Straight", Hand5.THREE_OF_A_KIND: "Three of a Kind",
        Hand5.TWO_PAIR: "Two Pair", Hand5.PAIR: "Pair", Hand5.HIGH_CARD: "High Card",
    }[kind]


def test_5card_ties_and_kickers() -> None:
    # Stud 3.12.2: two pairs -- highest pair, then second pair, then the odd card
    assert e5("Qs Qh 3c 3h 2d") > e5("Js Jh Tc Th Ad")
    assert e5("Qs Qh 6c 6h 2d") > e5("Qc Qd 5c 5h Ad")
    assert e5("Qs Qh 6c 6h 9d") > e5("Qc Qd 6s 6d 8d")
    assert e5("Qs Qh 6c 6h 9d") == e5("Qc Qd 6s 6d 9c")
    # 3.12.3: one pair -- the pair, then the three odd cards high to low
    assert e5("9s 9h Ac 3h 2d") > e5("8s 8h Ac Kh Qd")
    assert e5("9s 9h Ac 5h 2d") > e5("9c 9d Ac 4h 3d")
    assert e5("9s 9h Ac 5h 3d") > e5("9c 9d Ac 5s 2d")
    assert e5("9s 9h Ac 5h 3d") == e5("9c 9d Ad 5s 3c")
    # 3.12.4: wheel is the lowest straight (and straight flush)
    assert e5("6c 2d 3h 4s 5c") > e5("Ac 2d 3h 4s 5c")
    assert e5("Ac 2d 3h 4s 5c") > e5("Ac Ad Ah Ks Qc")
    assert e5("6c 2c 3c 4c 5c") > e5("Ac 2c 3c 4c 5c") > e5("Kc Kd Kh Ks Ac")
    # 3.12.5: full houses by the three of a kind
    assert e5("3c 3d 3h 2s 2c") > e5("2c 2d 2h As Ac")
    # 3.12.6 / 3.12.1: same ranks stand off, suits have no value
    assert e5("8c 9d Th Js Qc") == e5("8h 9h Tc Jd Qs")
    assert e5("Jh 8h 6h 5h 2h") == e5("Js 8s 6s 5s 2s")
    # flush ranked card by card
    assert e5("Jh 8h 6h 5h 3h") > e5("Js 8s 6s 5s 2s")
    # high card
    assert e5("Ac Kd Qh Js 9c") > e5("Ac Kd Qh Js 8c")


def test_display_order() -> None:
    assert best5(parse_cards("2c 9d 9h Ac 5s")).ranks == (9, 9, 14, 5, 2)
    assert evaluate5(parse_cards("3c 3d 3h 2s 2c")).ranks == (3, 3, 3, 2, 2)
    assert evaluate5(parse_cards("5c 4d Ah 3s 2c")).ranks == (5, 4, 3, 2, 14)
    assert evaluate5(parse_cards("Tc Jd Ah Qs Kc")).ranks == (14, 13, 12, 11, 10)


def test_best5_of_6_and_7() -> None:
    # Six Card Bonus (Xtreme 3.10.1): best 5 of player's 3 + dealer's 3
    hand = best5(parse_cards("Ah Kh Qh Jh Th 2c"))
    assert hand.kind is Hand5.ROYAL_FLUSH
    assert set(hand.cards) == set(parse_cards("Ah Kh Qh Jh Th"))
    hand = best5(parse_cards("7s 7d 7c 2h 2d 9s 9c"))  # two full houses available
    assert hand.kind is Hand5.FULL_HOUSE and hand.ranks == (7, 7, 7, 9, 9)
    hand = best5(parse_cards("2h 5h 9h Jh Kh Ks Kd"))  # flush beats trips
    assert hand.kind is Hand5.FLUSH and hand.ranks == (13, 11, 9, 5, 2)
    hand = best5(parse_cards("Ah 2d 3c 4s 5h 6d Kc"))
    assert hand.kind is Hand5.STRAIGHT and hand.ranks == (6, 5, 4, 3, 2)
    assert best5(parse_cards("Ah 2h 3h 4h 5h 6h")).kind is Hand5.STRAIGHT_FLUSH
    assert best5(parse_cards("Ah 2h 3h 4h 5h 6h")).ranks == (6, 5, 4, 3, 2)


def test_best_of_matches_brute_force() -> None:
    rng = random.Random(4)
    for n, fast in ((6, strength6), (7, strength7)):
        for _ in range(3000):
            cards = rng.sample(range(52), n)
            want = max(strength5(*s) for s in combinations(cards, 5))
            assert fast(*cards) == want
            assert best5(cards).strength == want
        # flush-heavy hands exercise the flush path
        for _ in range(1000):
            suit = rng.randrange(4)
            suited = rng.sample([r * 4 + suit for r in range(13)], rng.choice((5, 6, n)))
            rest = rng.sample([c for c in range(52) if c not in suited], n - len(suited))
            cards = suited + rest
            assert fast(*cards) == max(strength5(*s) for s in combinations(cards, 5))


def test_bad_input() -> None:
    with pytest.raises(CardError):
        evaluate5([1, 2, 3, 4])
    with pytest.raises(DuplicateCardError):
        evaluate5([1, 2, 3, 4, 4])
    with pytest.raises(CardError):
        evaluate3([1, 2, 52])
    with pytest.raises(CardError):
        best5(list(range(8)))
    with pytest.raises(DuplicateCardError):
        best5([1, 2, 3, 4, 5, 1])


# ---------------------------------------------------------------- exhaustive 5-card

# sha256 of "strength:count" lines (ascending strength) over all 2,598,960 hands. It was
# first checked equal to treys' ranks (7463 - treys rank) for every hand, which the test
# below repeats when treys is installed.
GOLDEN_HISTOGRAM_SHA256 = "096821af6b309e6b0daa41bdde0b564071209c92b00c40e0a0932d6377f90b92"

FREQUENCIES5 = {
    Hand5.ROYAL_FLUSH: 4,
    Hand5.STRAIGHT_FLUSH: 36,
    Hand5.FOUR_OF_A_KIND: 624,
    Hand5.FULL_HOUSE: 3744,
    Hand5.FLUSH: 5108,
    Hand5.STRAIGHT: 10200,
    Hand5.THREE_OF_A_KIND: 54912,
    Hand5.TWO_PAIR: 123552,
    Hand5.PAIR: 1098240,
    Hand5.HIGH_CARD: 1302540,
}


@pytest.fixture(scope="module")
def all_strengths5() -> list[int]:
    return list(strengths5(combinations(range(52), 5)))


def test_all_2598960_5card_hands(all_strengths5: list[int]) -> None:
    assert len(all_strengths5) == 2598960
    histogram = Counter(all_strengths5)
    assert len(histogram) == 7462 == STRENGTH5_MAX
    by_kind: Counter[Hand5] = Counter()
    for s, n in histogram.items():
        by_kind[kind5(s)] += n
    assert by_kind == FREQUENCIES5
    text = "\n".join(f"{s}:{histogram[s]}" for s in sorted(histogram))
    assert hashlib.sha256(text.encode()).hexdigest() == GOLDEN_HISTOGRAM_SHA256


def test_against_treys_every_hand(all_strengths5: list[int]) -> None:
    treys = pytest.importorskip("treys")
    evaluator = treys.Evaluator()
    tc = [treys.Card.new("23456789TJQKA"[c >> 2] + "cdhs"[c & 3]) for c in range(52)]
    lookup = evaluator.evaluate
    mismatches = 0
    for h, s in zip(combinations(tc, 5), all_strengths5):
        if 7463 - lookup(h[:2], h[2:]) != s:
            mismatches += 1
    assert mismatches == 0


# ---------------------------------------------------------------- Hand cards, by brute force

def _reference_display(cards: tuple[int, ...]) -> tuple[int, ...]:
    """Display order as Hand documents it: groups by size then rank, high first (suit
    code breaks ties), a straight's low ace (wheel, Stud 3.3.1.2) last."""
    count = Counter(c >> 2 for c in cards)
    out = sorted(cards, key=lambda c: (count[c >> 2], c >> 2, c & 3), reverse=True)
    ranks = sorted({c >> 2 for c in cards})
    if ranks == [0, 1, 2, 3, 12]:
        out = out[1:] + out[:1]
    return tuple(out)


def _reference_best(cards: list[int]) -> tuple[int, tuple[int, ...]]:
    """The best 5 by trying all subsets; among equals, the higher card codes (Hand's rule)."""
    best = max(strength5(*s) for s in combinations(cards, 5))
    for sub in combinations(sorted(cards, reverse=True), 5):
        if strength5(*sub) == best:
            return best, _reference_display(sub)
    raise AssertionError


def test_hand_cards_match_brute_force() -> None:
    """evaluate5/best5 pick and order the cards without trying subsets (issue 15): the
    same cards as the exhaustive choice, including flush-heavy and paired hands."""
    rng = random.Random(15)
    for n in (5, 6, 7):
        for i in range(3000):
            if i % 3 == 0:  # five or more of one suit
                suit = rng.randrange(4)
                cards = rng.sample([r * 4 + suit for r in range(13)], rng.randint(5, n))
                cards += rng.sample([c for c in range(52) if c not in cards], n - len(cards))
            elif i % 3 == 1:  # few ranks: pairs, trips, full houses, quads
                ranks = rng.sample(range(13), 3)
                pool = [r * 4 + s for r in ranks for s in range(4)]
                cards = rng.sample(pool, min(n, len(pool)))
            else:
                cards = rng.sample(range(52), n)
            strength, shown = _reference_best(cards)
            hand = best5(cards) if n > 5 else evaluate5(cards)
            assert (hand.strength, hand.cards) == (strength, shown), cards
            assert hand.kind is kind5(strength)


def test_bad_cards_still_refused_on_the_fast_path() -> None:
    with pytest.raises(CardError):
        evaluate5([True, 2, 3, 4, 5])
    with pytest.raises(CardError):
        best5([1.0, 2, 3, 4, 5, 6])  # type: ignore[list-item]
    with pytest.raises(CardError):
        evaluate5((0, 1, 2, 3, 52))
    with pytest.raises(DuplicateCardError):
        best5((0, 1, 2, 3, 4, 5, 5))


# ---------------------------------------------------------------- Hand as a value (issue 15)

def test_hand_is_an_immutable_value() -> None:
    """A Hand compares by kind, strength and the cards shown, whatever order the cards
    were given in; it is hashable, not ordered, immutable, and survives pickle/copy."""
    import copy
    import pickle

    from cardshoe.poker import Hand

    a = evaluate5(parse_cards("Kd Ks 2c 9h Kh"))
    b = evaluate5(parse_cards("9h Kh 2c Ks Kd"))
    assert a == b and hash(a) == hash(b) and not (a != b)
    assert a.cards == tuple(parse_cards("Ks Kh Kd 9h 2c"))  # the trips first (Stud 3.12.4)
    assert a == Hand(Hand5.THREE_OF_A_KIND, a.strength, parse_cards("Ks Kh Kd 9h 2c"))
    assert a != evaluate5(parse_cards("Kd Ks 3c 9h Kh"))
    assert len({a, b, best5(parse_cards("Kd Ks 2c 9h Kh"))}) == 1
    for other in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert other == a and other.cards == a.cards and other.kind is a.kind
    with pytest.raises(TypeError):
        assert a < b  # type: ignore[operator]
    with pytest.raises(AttributeError):
        a.strength = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        a.extra = 1  # type: ignore[attr-defined]
    assert repr(a).startswith("Hand(kind=<Hand5.THREE_OF_A_KIND")
    assert a != (a.kind, a.strength, a.cards)  # not a plain tuple
    assert a  # true, as any object
    for not_a_sequence in (lambda: len(a), lambda: list(a), lambda: 51 in a):
        with pytest.raises(TypeError):
            not_a_sequence()
    with pytest.raises(TypeError):
        kind, strength, cards = a  # type: ignore[misc]


def test_hand_of_seven_shows_the_five_that_make_it() -> None:
    hand = best5(parse_cards("2s 3s 4s 5s 6s 6h 6d"))  # straight flush beats trips (3.11)
    assert hand.kind is Hand5.STRAIGHT_FLUSH
    assert hand.cards == tuple(parse_cards("6s 5s 4s 3s 2s"))
    hand = best5(parse_cards("Ah Ad Ac Kh Kd Ks 2c"))  # two trips: aces full of kings
    assert hand.kind is Hand5.FULL_HOUSE and hand.ranks == (14, 14, 14, 13, 13)
    assert hand.cards[3:] == tuple(parse_cards("Ks Kh"))  # the higher-coded kings (best5's rule)


@pytest.mark.parametrize("bad", [
    [True, 2, 3, 4, 5],       # a bool is not a card code
    [0, 1, 2, 3, -1],         # a negative int would index from the end
    [0, 1, 2, 3, -52],
    [0, 1, 2, 3, 52],
    [0, 1, 2, 3, 4.0],
    [0, 1, 2, 3, "4"],
    [0, 1, 2, 3],
    [0, 1, 2, 3, 4, 5, 6, 7],
])
def test_fast_paths_refuse_what_check_card_refuses(bad: list[object]) -> None:
    for evaluate in (evaluate5, best5):
        with pytest.raises(CardError):
            evaluate(bad)  # type: ignore[arg-type]
        with pytest.raises(CardError):
            evaluate(tuple(bad))  # type: ignore[arg-type]
    seven = bad + [40, 41] if len(bad) == 5 else None
    if seven is not None:
        with pytest.raises(CardError):
            best5(seven)  # type: ignore[arg-type]
        with pytest.raises(CardError):
            best5(seven[:6])  # type: ignore[arg-type]


def test_duplicates_refused_at_every_size() -> None:
    for cards in ([7, 7, 1, 2, 3], [1, 2, 3, 4, 5, 5], [9, 1, 2, 3, 4, 5, 9]):
        with pytest.raises(DuplicateCardError):
            best5(cards)
    with pytest.raises(DuplicateCardError):
        evaluate5(iter([51, 0, 1, 2, 51]))


def test_int_subclasses_and_iterables_are_cards() -> None:
    """check_card takes any int 0..51 but a bool; the fast path must agree (an IntEnum
    card, a generator, a list give the same hand as a tuple of plain ints)."""
    from enum import IntEnum

    class Code(IntEnum):
        AS = 51
        KS = 47

    plain = evaluate5((51, 47, 43, 39, 35))
    assert evaluate5([Code.AS, Code.KS, 43, 39, 35]) == plain
    assert evaluate5(c for c in (51, 47, 43, 39, 35)) == plain
    assert best5([Code.AS, Code.KS, 43, 39, 35, 0, 1]) == plain
    assert all(type(c) is int for c in evaluate5([Code.AS, Code.KS, 43, 39, 35]).cards)
