"""What the table core remembers of each deck's earlier shoes, and the check it runs.

Kept inside `TableCore` (so a checkpoint carries it and a replay derives the same alarms):
for each deck id, the last `HISTORY` shoes' orders as dealt and as collected (reading 60),
and for the shoes in play the collected order of their settled rounds so far. A shoe is
checked once each of its rounds has been dealt (the round leaves `dealing`), against the
new-deck order and those earlier shoes; it raises at most one alarm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from cardshoe.cards import DECK, card_text
from cardshoe.shuffle.detector import ALPHA, Reference, Verdict, check

#: Earlier shoes of one deck kept as references (each adds two tests, both directions).
HISTORY = 3
#: Decks remembered; the one unused longest is dropped past this (a table uses a handful).
MAX_DECKS = 64


@dataclass(frozen=True)
class ShoeOrder:
    """One finished shoe of a deck: the cards it read, as dealt and as collected."""

    shoe_no: int
    dealt: tuple[int, ...]
    collected: tuple[int, ...]


def references(history: Sequence[ShoeOrder]) -> list[Reference]:
    """The orders a new shoe of the deck is compared with: the new-deck order (code order,
    `cardshoe.cards.DECK`), then each earlier shoe as dealt and as collected."""
    refs = [Reference("new-deck order", DECK)]
    for shoe in history[-HISTORY:]:
        refs.append(Reference(f"shoe {shoe.shoe_no} as dealt", shoe.dealt))
        if shoe.collected:
            refs.append(Reference(f"shoe {shoe.shoe_no} as collected", shoe.collected))
    return refs


@dataclass
class ShuffleBook:
    """The shuffle alarm's memory, per deck and per shoe in play."""

    history: dict[int, list[ShoeOrder]] = field(default_factory=dict)
    collecting: dict[int, list[int]] = field(default_factory=dict)
    """shoe_no -> the collected order of its settled rounds so far."""
    alarmed: dict[int, dict[str, Any]] = field(default_factory=dict)
    """shoe_no -> the alarm raised for it (shoes in play only)."""
    checked: dict[int, str] = field(default_factory=dict)
    """shoe_no -> the last round whose deal it was checked after."""

    def round_collected(self, shoe_no: int, cards: Sequence[int]) -> None:
        """A settled round's cards, in collected order, go onto its shoe's pile."""
        self.collecting.setdefault(shoe_no, []).extend(cards)

    def shoe_finished(self, deck_id: int, shoe_no: int, dealt: Sequence[int]) -> None:
        """A shoe of `deck_id` ended (another was loaded): it becomes a reference."""
        collected = tuple(self.collecting.pop(shoe_no, ()))
        self.alarmed.pop(shoe_no, None)
        self.checked.pop(shoe_no, None)
        if not dealt:
            return
        kept = self.history.pop(deck_id, [])  # re-inserted last: the deck used most recently
        kept.append(ShoeOrder(shoe_no, tuple(dealt), collected))
        self.history[deck_id] = kept[-HISTORY:]
        while len(self.history) > MAX_DECKS:
            del self.history[next(iter(self.history))]

    def check(self, deck_id: int, shoe_no: int, dealt: Sequence[int | None], round_id: str,
              alpha: float = ALPHA) -> Verdict | None:
        """Check shoe `shoe_no` after round `round_id` was dealt; the verdict when it is a new
        alarm, None otherwise (no alarm, checked already, or alarmed already)."""
        if shoe_no in self.alarmed or self.checked.get(shoe_no) == round_id:
            return None
        self.checked[shoe_no] = round_id
        verdict = check(dealt, references(self.history.get(deck_id, [])), alpha=alpha)
        return verdict if verdict.alarm else None


def alarm_body(verdict: Verdict, *, shoe: int, shoe_no: int, deck_id: int, round_id: str,
               dealt: Sequence[int | None], history: Sequence[ShoeOrder]) -> dict[str, Any]:
    """The `shuffle_alarm` event's fields: the finding and its evidence (both orders as cards)."""
    worst = verdict.worst
    assert worst is not None
    ref = next(r for r in references(history) if r.name == worst.reference)
    order = tuple(reversed(ref.cards)) if worst.reversed else ref.cards
    direction = " reversed" if worst.reversed else ""
    return {
        "shoe": shoe, "shoe_no": shoe_no, "deck_id": deck_id, "round_id": round_id,
        "rule": "5.1", "rules": ["5.1"], "decision": "referred",
        "detail": (f"shoe {shoe_no} (deck {deck_id}): {worst.compared} cards fall into {worst.rising} rising "
                   f"sequences of the {worst.reference}{direction}; a shuffled deck does so with probability "
                   f"{worst.p_value:.2e} (alarm below {verdict.threshold:.2e}): unshuffled cards? (5.1) "
                   "referred to the shift manager"),
        "cards": verdict.cards, "threshold": float(f"{verdict.threshold:.3e}"),
        "finding": worst.to_json(), "findings": [f.to_json() for f in verdict.findings],
        "evidence": {"dealt": [None if c is None else card_text(c) for c in dealt],
                     "reference": [card_text(c) for c in order]},
    }
