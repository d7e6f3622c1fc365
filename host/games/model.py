"""The games as values: wagers, decisions, dealer qualifier, pay tables, rule numbers.

Everything here is loaded from the versioned pay-table files (``paytables/<game>.json``) by
:mod:`cardshoe.games.loader`; nothing in this module knows a particular game. A pay line
says *how* it pays in one of three ways, kept apart because they settle differently:

* odds, with a basis: ``"to"`` (N to 1: the stake comes back on top of N times it) or
  ``"for"`` (N for 1: N times the stake in all, the stake being part of it);
* ``fixed``: an amount in minor units per *minimum* progressive wager (TCP 4.4, Megalink 4.4);
* ``pool_percent``: a percentage of the progressive jackpot pool as displayed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

__all__ = [
    "Basis",
    "HandOf",
    "PayLine",
    "PayTable",
    "Decision",
    "ProgressiveRules",
    "Game",
    "GameError",
    "UnknownGameError",
    "PayTableError",
]


class GameError(ValueError):
    """Base of the errors about games and their pay tables."""


class UnknownGameError(GameError):
    """A game id that is not one of the five games."""

    def __init__(self, game_id: object, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown game {game_id!r}; known games: {', '.join(known)}")
        self.game_id = game_id


class PayTableError(GameError):
    """A pay-table file that does not describe a game consistently."""


class Basis(str, Enum):
    """How odds are quoted: "to 1" returns the stake on top, "for 1" includes it."""

    TO = "to"
    FOR = "for"


class HandOf(str, Enum):
    """Which cards a pay table is settled on."""

    COMPARISON = "comparison"  # the player's hand against the dealer's (ante, play)
    PLAYER3 = "player3"  # the player's three cards
    PLAYER3_COMMUNITY2 = "player3+community2"  # the three cards plus the two community cards
    PLAYER3_DEALER3 = "player3+dealer3"  # best five of the player's and the dealer's three
    PLAYER5 = "player5"  # the player's five cards (stud)
    NONE = "none"  # does not depend on a hand (Magic Card, Lucky Player)


@dataclass(frozen=True)
class PayLine:
    """One line of a pay table; exactly one of odds/fixed/pool_percent is set."""

    label: str
    hand: str  # a Hand3/Hand5 member name, or "ANY"
    odds: int | None = None
    basis: Basis | None = None
    fixed: int | None = None
    pool_percent: int | None = None
    suits: frozenset[int] | None = None  # the hand's cards must all be of these suits
    min_pair_rank: int | None = None  # a PAIR line paying only pairs of this rank or higher
    envy: int | None = None  # Envy Bonus (TCP 3.14) this hand pays every other progressive wager

    @property
    def pays_text(self) -> str:
        """The payment as the rule document prints it, e.g. "40 to 1", "10% of the pool"."""
        if self.odds is not None and self.basis is not None:
            return f"{self.odds} {self.basis.value} 1"
        if self.fixed is not None:
            return f"{self.fixed} per minimum wager"
        return f"{self.pool_percent}% of the pool"


@dataclass(frozen=True)
class PayTable:
    """A pay table of one bet, lines from the highest hand down; only the best line pays."""

    name: str
    rule: str
    hand_of: HandOf
    lines: tuple[PayLine, ...]


@dataclass(frozen=True)
class Decision:
    """The one continue-or-fold decision of the Three Card Poker games and Stud."""

    on: str  # the wager decided about ("ante")
    continue_choice: str  # "play" / "bet"
    fold_choice: str  # "fold"
    wager: str  # the wager placed to continue ("play" / "bet")
    multiple: int  # that wager is this many times the ante (1; stud 2)


@dataclass(frozen=True)
class ProgressiveRules:
    """How the progressive wager is staked and how its pool is shared."""

    multiples: tuple[int, ...] | None  # legal stakes in minimum wagers; None: any whole number
    envy: bool
    sharing: dict[str, str] = field(default_factory=dict)  # hand name -> sharing rule
    top_hand_last: str | None = None  # rule paying the Royal Flush after lower hands


@dataclass(frozen=True)
class Game:
    """One game as its rules document defines it, with the pay tables of one rules version."""

    id: str
    title: str
    rules_version: str
    rules_effective: str | None
    revision: int
    currency: str
    minor_per_major: int
    positions_min: int
    positions_max: int
    player_cards: int
    dealer_cards: int
    community_cards: int
    dealing_methods: tuple[str, ...]
    wagers: tuple[str, ...]
    base_wagers: tuple[str, ...]
    decision: Decision | None
    pull_backs: dict[str, str]  # Let It Ride: wager -> rule returning it when withdrawn
    dealer_qualifier: str | None
    three_card_royal: bool
    tables: dict[str, PayTable]
    progressive: ProgressiveRules
    rules: dict[str, str]

    def rule(self, key: str) -> str:
        """The rule number (or reading) this game's document gives for ``key``."""
        try:
            return self.rules[key]
        except KeyError:
            raise GameError(f"{self.id}: no rule recorded for {key!r}") from None

    def table(self, name: str) -> PayTable:
        """The pay table named ``name`` (``pair_plus``, ``progressive``, ``hand``...)."""
        try:
            return self.tables[name]
        except KeyError:
            raise GameError(f"{self.id}: no pay table {name!r}") from None

    @property
    def progressive_table(self) -> PayTable:
        """The progressive jackpot pay table."""
        return self.table("progressive")
