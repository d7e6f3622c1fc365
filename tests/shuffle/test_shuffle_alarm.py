"""The shuffle alarm (issue 14 item 6): the statistic, seeded decks, and the table core's alarm.

Expectations are derived here from definitions, not from the code under test: rising
sequences by following each card to its successor in the reference; the collected order
from reading 60 (docs/rule-readings.md) written out by hand; the dealing order from TCP 3.7.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from cardshoe.cards import card_text
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.rounds import Choice, Decision, PlaceWager, operation_to_json
from cardshoe.shuffle import Reference, check, rising_sequences, rising_tail
from cardshoe.shuffle.simulate import riffles

TCP = "three-card-poker"
LIMITS = (("ante", 100, 100_000), ("pair_plus", 100, 100_000), ("play", 100, 100_000), ("progressive", 100, 100))


def rising_by_definition(deal: list[int], reference: list[int]) -> int:
    """Rising sequences: start at the first card of the reference, take the cards that follow it
    in the reference while the deal shows them later; each restart is a new sequence."""
    common = [c for c in reference if c in deal]
    where = {c: deal.index(c) for c in common}
    count, last = 0, None
    for card in common:
        if last is None or where[card] < where[last]:
            count += 1
        last = card
    return count


def test_rising_sequences_count_by_their_definition() -> None:
    rng = random.Random(3)
    for _ in range(200):
        ref = rng.sample(range(52), rng.randint(5, 52))
        deal = rng.sample(range(52), rng.randint(5, 52))
        got, compared = rising_sequences(deal, ref)
        assert compared == len(set(deal) & set(ref))
        assert got == rising_by_definition(deal, ref)


def test_the_tail_is_the_exact_share_of_permutations() -> None:
    # Every permutation of m cards, counted: P(at most r rising sequences) exactly.
    for m in (3, 5, 6):
        counts = [0] * (m + 1)
        for perm in itertools.permutations(range(m)):
            counts[rising_by_definition(list(perm), list(range(m)))] += 1
        for r in range(1, m + 1):
            assert math.isclose(rising_tail(m, r), sum(counts[: r + 1]) / math.factorial(m), rel_tol=1e-12)
    assert rising_tail(3, 1) == 1 / 6  # only the deal in the reference's order


DECK = list(range(52))


def test_an_unshuffled_deck_alarms() -> None:
    earlier = random.Random(5).sample(DECK, 52)
    verdict = check(riffles(earlier, 0, random.Random(1))[:24], [Reference("earlier", tuple(earlier))])
    assert verdict.alarm and verdict.worst is not None and verdict.worst.rising == 1


def test_one_riffle_and_a_cut_alarm() -> None:
    earlier = random.Random(6).sample(DECK, 52)
    once = riffles(earlier, 1, random.Random(2))
    cut = earlier[20:] + earlier[:20]
    for deck in (once, cut):
        assert check(deck, [Reference("earlier", tuple(earlier))]).alarm


def test_a_seeded_well_shuffled_deck_does_not_alarm() -> None:
    earlier = random.Random(7).sample(DECK, 52)
    for seed in range(20):
        shuffled = riffles(earlier, 7, random.Random(100 + seed))
        refs = [Reference("new-deck order", tuple(DECK)), Reference("earlier", tuple(earlier))]
        assert not check(shuffled, refs).alarm, seed
        assert not check(shuffled[:24], refs).alarm, seed


def test_too_few_cards_give_no_verdict() -> None:
    assert not check(DECK[:7], [Reference("new-deck order", tuple(DECK))]).alarm


# --- in the table core ---------------------------------------------------------------------


class Table:
    """A TableCore fed a shoe (serial 1) and seven-seat rounds of Three Card Poker."""

    def __init__(self) -> None:
        self.core = TableCore(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
        self.t = 1_700_000_000_000_000_000
        self.shoe_no = 0
        self.index = 0

    def _tick(self) -> int:
        self.t += 1_000_000
        return self.t

    def input(self, body: dict[str, Any]) -> Any:
        return self.core.apply_input(body, self._tick())

    def load(self, deck_id: int = 7) -> None:
        self.shoe_no += 1
        self.index = 0
        self.input({"action": "shoe_loaded", "shoe": 1, "shoe_no": self.shoe_no, "deck_id": deck_id})

    def round(self, cards: list[int]) -> list[dict[str, Any]]:
        """Seven antes, the 24 cards dealt, every seat plays, settled; the events derived."""
        rid = str(self.input({"action": "open_round"}).round_id)
        events: list[dict[str, Any]] = []
        for seat in range(1, 8):
            self.input({"action": "op", "round_id": rid, "op": operation_to_json(
                PlaceWager(seat=seat, wager="ante", amount=1000))})
        for code in cards:
            self.index += 1
            msg = {"type": "CARD", "shoe_no": self.shoe_no, "index": self.index, "code": code,
                   "raw": f"{self.index:08x}", "t_ms": self.index, "card_deck": 7, "method": 1, "flags": 0}
            events += [d.body for d in self.core.apply_frame(1, msg, self._tick()).derived]
        for seat in range(1, 8):
            done = self.input({"action": "op", "round_id": rid,
                               "op": operation_to_json(Decision(seat=seat, choice=Choice.PLAY))})
            events += [d.body for d in done.derived]
        events += [d.body for d in self.input({"action": "settle", "round_id": rid}).derived]
        return events


def collected_by_reading_60(dealt: list[int]) -> list[int]:
    """TCP 3.7 dealt seat 1's three, seat 2's, ... seat 7's, then the dealer's three; reading 60
    picks up seat 7 first down to seat 1, each hand in dealt order, then the dealer's hand."""
    seats = [dealt[3 * i: 3 * i + 3] for i in range(7)]
    return [c for hand in reversed(seats) for c in hand] + dealt[21:24]


def alarms(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "shuffle_alarm"]


def test_a_deck_dealt_in_the_order_it_was_collected_alarms_at_the_table() -> None:
    table = Table()
    table.load()
    first = random.Random(11).sample(DECK, 24)
    assert alarms(table.round(first)) == []
    table.load()
    events = table.round(collected_by_reading_60(first))
    (alarm,) = alarms(events)
    assert alarm["rule"] == "5.1" and alarm["decision"] == "referred" and alarm["shoe_no"] == 2
    assert alarm["finding"]["reference"] == "shoe 1 as collected" and alarm["finding"]["rising"] == 1
    assert alarm["evidence"]["reference"] == [card_text(c) for c in collected_by_reading_60(first)]
    assert 2 in table.core.shuffle.alarmed
    table.load()  # the next shoe clears the alarm of the one that raised it
    assert 2 not in table.core.shuffle.alarmed


def test_a_new_deck_in_its_order_alarms_and_a_shuffled_one_does_not() -> None:
    table = Table()
    table.load()
    (alarm,) = alarms(table.round(DECK[:24]))
    assert alarm["finding"]["reference"] == "new-deck order"
    table.load()
    earlier = collected_by_reading_60(DECK[:24]) + DECK[24:]
    shuffled = riffles(earlier, 7, random.Random(2026))
    assert alarms(table.round(shuffled[:24])) == []
