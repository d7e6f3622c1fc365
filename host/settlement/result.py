"""The settlement of a round: per seat and wager, what happened and what moves.

Amounts are integers in minor units. For every wager result:

* ``stake`` is what the player put on it (0 for a bonus paid on another wager);
* ``paid`` is what the table hands back when it is settled, the returned stake included;
* ``net`` is ``paid - stake``, the change in the player's money.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from cardshoe.cards import card_text

__all__ = [
    "Outcome",
    "Line",
    "LimitApplied",
    "WagerResult",
    "HandShown",
    "SeatResult",
    "DealerResult",
    "Movement",
    "JackpotResult",
    "Settlement",
    "SETTLEMENT_FORMAT",
]

SETTLEMENT_FORMAT = "cardshoe.settlement/1"


class Outcome(str, Enum):
    """How a wager ended."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"  # a stand-off: neither won nor lost
    VOID = "void"  # the round is void; the wager goes back
    RETURNED = "returned"  # a rule gave the wager back (absent, withdrawn, invalid...)


@dataclass(frozen=True)
class Line:
    """One paying line on a wager; ``amount`` excludes any returned stake."""

    label: str
    pays: str
    amount: int
    rule: str

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "pays": self.pays, "amount": self.amount, "rule": self.rule}


@dataclass(frozen=True)
class LimitApplied:
    """A table limit that changed how a wager settled (5.13, 5.14)."""

    rule: str
    settled_on: int
    excess_returned: int = 0
    under_minimum: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule, "settled_on": self.settled_on}
        if self.excess_returned:
            out["excess_returned"] = self.excess_returned
        if self.under_minimum:
            out["under_minimum"] = True
        return out


@dataclass(frozen=True)
class WagerResult:
    """The settlement of one wager (or of a bonus paid on one)."""

    wager: str
    stake: int
    outcome: Outcome
    paid: int
    rules: tuple[str, ...]
    lines: tuple[Line, ...] = ()
    notes: tuple[str, ...] = ()
    limit: LimitApplied | None = None
    on: str | None = None  # for a bonus: the wager it is paid on

    @property
    def net(self) -> int:
        """The change in the player's money: ``paid - stake``."""
        return self.paid - self.stake

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "wager": self.wager,
            "stake": self.stake,
            "outcome": self.outcome.value,
            "paid": self.paid,
            "net": self.net,
            "rules": list(self.rules),
            "lines": [line.to_json() for line in self.lines],
            "notes": list(self.notes),
        }
        if self.on is not None:
            out["on"] = self.on
        if self.limit is not None:
            out["limit"] = self.limit.to_json()
        return out


@dataclass(frozen=True)
class HandShown:
    """An evaluated hand as dealers and supervisors need to see it."""

    name: str
    cards: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"hand": self.name, "cards": [card_text(c) for c in self.cards]}


@dataclass(frozen=True)
class SeatResult:
    """Every wager of one seat."""

    seat: int
    player: str
    wagers: tuple[WagerResult, ...]
    hands: dict[str, HandShown] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def stake(self) -> int:
        return sum(w.stake for w in self.wagers)

    @property
    def paid(self) -> int:
        return sum(w.paid for w in self.wagers)

    @property
    def net(self) -> int:
        return self.paid - self.stake

    def wager(self, name: str) -> WagerResult:
        """The result of the wager (or bonus) named ``name``."""
        for w in self.wagers:
            if w.wager == name:
                return w
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "player": self.player,
            "hands": {k: v.to_json() for k, v in self.hands.items()},
            "wagers": [w.to_json() for w in self.wagers],
            "notes": list(self.notes),
            "stake": self.stake,
            "paid": self.paid,
            "net": self.net,
        }


@dataclass(frozen=True)
class DealerResult:
    """The dealer's hand and whether it qualified."""

    cards: tuple[int, ...]
    hand: HandShown
    qualifies: bool
    rules: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "cards": [card_text(c) for c in self.cards],
            "hand": self.hand.name,
            "hand_cards": [card_text(c) for c in self.hand.cards],
            "qualifies": self.qualifies,
            "rules": list(self.rules),
        }


@dataclass(frozen=True)
class Movement:
    """One entry of the jackpot pool ledger; ``balance`` is the pool after it."""

    kind: str  # "payout", "seed", "reset"
    amount: int
    rule: str
    balance: int
    seat: int | None = None
    line: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "amount": self.amount, "rule": self.rule, "balance": self.balance}
        if self.seat is not None:
            out["seat"] = self.seat
        if self.line is not None:
            out["line"] = self.line
        return out


@dataclass(frozen=True)
class JackpotResult:
    """The progressive pool before and after the round, with the ledger between."""

    pool_before: int
    pool_after: int
    reset: int
    movements: tuple[Movement, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "pool_before": self.pool_before,
            "pool_after": self.pool_after,
            "reset": self.reset,
            "movements": [m.to_json() for m in self.movements],
        }


@dataclass(frozen=True)
class Settlement:
    """The settlement of one round."""

    game: str
    rules_version: str
    paytable_revision: int
    currency: str
    round_id: str | None
    void: tuple[tuple[str, ...], str] | None  # (rules, reason)
    dealer: DealerResult | None
    community: tuple[int, ...]
    seats: tuple[SeatResult, ...]
    jackpot: JackpotResult | None
    notes: tuple[str, ...] = ()

    def seat(self, number: int) -> SeatResult:
        """The result of seat ``number``."""
        for s in self.seats:
            if s.seat == number:
                return s
        raise KeyError(number)

    @property
    def stake(self) -> int:
        return sum(s.stake for s in self.seats)

    @property
    def paid(self) -> int:
        return sum(s.paid for s in self.seats)

    @property
    def net(self) -> int:
        return self.paid - self.stake

    def to_json(self) -> dict[str, Any]:
        """The settlement as JSON-ready data (docs/round-format.md, "Settlement output")."""
        return {
            "format": SETTLEMENT_FORMAT,
            "round_id": self.round_id,
            "game": self.game,
            "rules_version": self.rules_version,
            "paytable_revision": self.paytable_revision,
            "currency": self.currency,
            "void": None if self.void is None else {"rules": list(self.void[0]), "reason": self.void[1]},
            "dealer": None if self.dealer is None else self.dealer.to_json(),
            "community": [card_text(c) for c in self.community],
            "seats": [s.to_json() for s in self.seats],
            "jackpot": None if self.jackpot is None else self.jackpot.to_json(),
            "notes": list(self.notes),
            "totals": {"stake": self.stake, "paid": self.paid, "net": self.net},
        }
