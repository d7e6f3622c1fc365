"""Matching evaluated hands to pay lines, and the dealers' qualifying hands.

The hands themselves come from :mod:`cardshoe.poker` (``evaluate3``, ``evaluate5``,
``best5``); this module only reads a ``Hand``'s ``kind`` name and ``cards``.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol, Sequence

from cardshoe.cards import rank_of, suit_of

from .model import GameError, PayLine, PayTable

__all__ = ["HandLike", "line_matches", "best_line", "queen_high", "ace_king", "dealer_qualifies", "pair_rank"]

_QUEEN, _KING, _ACE = 12, 13, 14


class HandLike(Protocol):
    """What settlement needs of an evaluated hand (``cardshoe.poker.Hand`` has it)."""

    @property
    def kind(self) -> object: ...

    @property
    def strength(self) -> int: ...

    @property
    def cards(self) -> tuple[int, ...]: ...


def kind_name(hand: HandLike) -> str:
    """The hand class's member name, e.g. ``"STRAIGHT_FLUSH"``."""
    name = getattr(hand.kind, "name", None)
    if not isinstance(name, str):
        raise GameError(f"hand kind {hand.kind!r} has no name")
    return name


def pair_rank(cards: Sequence[int]) -> int | None:
    """The rank of the highest rank held exactly twice, or None."""
    pairs = [rank for rank, n in Counter(rank_of(c) for c in cards).items() if n == 2]
    return max(pairs) if pairs else None


def line_matches(line: PayLine, hand: HandLike | None) -> bool:
    """Whether ``hand`` is the hand this line pays (its class, suit and pair conditions)."""
    if line.hand == "ANY":
        return True
    if hand is None or kind_name(hand) != line.hand:
        return False
    if line.suits is not None and not all(suit_of(c) in line.suits for c in hand.cards):
        return False
    if line.min_pair_rank is not None:
        rank = pair_rank(hand.cards)
        if rank is None or rank < line.min_pair_rank:
            return False
    return True


def best_line(table: PayTable, hand: HandLike | None) -> PayLine | None:
    """The highest line of ``table`` that ``hand`` makes; only that one pays.

    Lines are listed from the highest hand down, so the first match is the best: a hand
    pays once, on its best line (TCP 3.20.2: A-K-Q suited other than spades is paid the
    Royal Flush amount only, not also as a Straight Flush; Xtreme 1.1.11).
    """
    for line in table.lines:
        if line_matches(line, hand):
            return line
    return None


def queen_high(hand: HandLike) -> bool:
    """Three Card Poker games 3.11/3.12: Queen high or better qualifies the dealer."""
    if kind_name(hand) != "HIGH_CARD":
        return True
    return bool(max(rank_of(c) for c in hand.cards) >= _QUEEN)


def ace_king(hand: HandLike) -> bool:
    """Singapore Stud 3.10.2/3.10.3: Ace and King or better qualifies the dealer."""
    if kind_name(hand) != "HIGH_CARD":
        return True
    ranks = {rank_of(c) for c in hand.cards}
    return bool(_ACE in ranks and _KING in ranks)


def dealer_qualifies(qualifier: str, hand: HandLike) -> bool:
    """Apply the named qualifier of a game (``queen_high`` or ``ace_king``)."""
    if qualifier == "queen_high":
        return queen_high(hand)
    if qualifier == "ace_king":
        return ace_king(hand)
    raise GameError(f"unknown dealer qualifier {qualifier!r}")
