"""Playing cards as small integers, with a strict parser for the edges.

A card is an ``int`` 0..51: ``code = (rank - 2) * 4 + suit`` with rank 2..14
(T=10, J=11, Q=12, K=13, A=14) and suit 0 clubs, 1 diamonds, 2 hearts, 3 spades.
This is the code the shoe sends on the wire (protocol SPEC section 6), so a card
read by the shoe needs no translation before it is evaluated.

Text form is two characters, rank then suit: ``"Td"``, ``"As"``, ``"2c"``. The rank
letter may be upper or lower case; the suit letter is lower case. Anything else
("10d", "", "Xx", "AS") is refused with a :class:`CardError` naming the text, because
a card mistyped by a supervisor must never turn silently into a different card.
"""

from __future__ import annotations

from typing import Iterable

__all__ = [
    "CardError",
    "DuplicateCardError",
    "RANKS",
    "SUITS",
    "DECK",
    "parse_card",
    "parse_cards",
    "card_text",
    "cards_text",
    "rank_of",
    "suit_of",
    "make_card",
    "check_card",
]

RANKS = "23456789TJQKA"
"""Rank letters from deuce (rank 2) to ace (rank 14)."""

SUITS = "cdhs"
"""Suit letters in code order: clubs 0, diamonds 1, hearts 2, spades 3."""

DECK: tuple[int, ...] = tuple(range(52))
"""The 52 card codes of one deck, in code order."""

_RANK_BY_LETTER = {letter: i + 2 for i, letter in enumerate(RANKS)}
_RANK_BY_LETTER.update({letter.lower(): i + 2 for i, letter in enumerate(RANKS)})
_SUIT_BY_LETTER = {letter: i for i, letter in enumerate(SUITS)}
_TEXT = tuple(RANKS[code >> 2] + SUITS[code & 3] for code in DECK)


class CardError(ValueError):
    """A card's text or code is not a card of the 52-card deck."""


class DuplicateCardError(CardError):
    """The same card appears more than once where each card may appear once."""


def parse_card(text: str) -> int:
    """Parse one card such as ``"Td"`` into its code 0..51; raise CardError otherwise."""
    if not isinstance(text, str):
        raise CardError(f"card must be text like 'Td', got {text!r}")
    if len(text) != 2:
        raise CardError(f"bad card {text!r}: expected rank then suit, like 'Td' or 'As'")
    rank = _RANK_BY_LETTER.get(text[0])
    suit = _SUIT_BY_LETTER.get(text[1])
    if rank is None:
        raise CardError(f"bad card {text!r}: rank {text[0]!r} is not one of {RANKS}")
    if suit is None:
        raise CardError(f"bad card {text!r}: suit {text[1]!r} is not one of {SUITS}")
    return (rank - 2) * 4 + suit


def parse_cards(texts: str | Iterable[str]) -> tuple[int, ...]:
    """Parse several cards; a string is split on whitespace and commas.

    Raises CardError on any bad card and DuplicateCardError on a card given twice.
    """
    if isinstance(texts, str):
        items = texts.replace(",", " ").split()
    else:
        items = list(texts)
    cards: list[int] = []
    seen: set[int] = set()
    for text in items:
        card = parse_card(text)
        if card in seen:
            raise DuplicateCardError(f"card {text!r} appears more than once")
        seen.add(card)
        cards.append(card)
    return tuple(cards)


def check_card(card: int) -> int:
    """Return ``card`` if it is a valid code 0..51, else raise CardError."""
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 52:
        raise CardError(f"bad card code {card!r}: expected an int 0..51")
    return card


def make_card(rank: int, suit: int) -> int:
    """Build a card code from rank 2..14 and suit 0..3."""
    if not 2 <= rank <= 14 or not 0 <= suit <= 3:
        raise CardError(f"bad rank/suit {rank!r}/{suit!r}")
    return (rank - 2) * 4 + suit


def card_text(card: int) -> str:
    """The two-character text of a card code, e.g. 33 -> ``"Td"``."""
    return _TEXT[check_card(card)]


def cards_text(cards: Iterable[int]) -> str:
    """Cards as space-separated text, e.g. ``"As Kd 5c"``."""
    return " ".join(card_text(c) for c in cards)


def rank_of(card: int) -> int:
    """Rank 2..14 of a card code (14 is the ace)."""
    return (check_card(card) >> 2) + 2


def suit_of(card: int) -> int:
    """Suit 0..3 of a card code (0 clubs, 1 diamonds, 2 hearts, 3 spades)."""
    return check_card(card) & 3
