"""Where a card can land: the places of a dealing procedure and the positions that hold hands."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

__all__ = ["PlaceKind", "Place", "Position", "MAX_SEATS"]

MAX_SEATS = 7
"""Playing positions are numbered 1..7 from the dealer's left, clockwise (every layout's appendix)."""


class PlaceKind(StrEnum):
    """The kind of place a card from the shoe is assigned to."""

    SEAT = "seat"
    DEALER = "dealer"
    COMMUNITY = "community"
    BURN = "burn"
    SECURITY = "security"
    DISCARD = "discard"
    """Out of play by a person's report or a confirmed reconstruction (not a procedure burn)."""


_HAND_KINDS = (PlaceKind.SEAT, PlaceKind.DEALER, PlaceKind.COMMUNITY, PlaceKind.DISCARD)


@dataclass(frozen=True, order=True)
class Position:
    """A position that holds cards: a seat (1..7), the dealer, the community area or the discard.

    ``seat`` is the playing position for seats and 0 otherwise. Count reports and hands use it.
    """

    kind: PlaceKind
    seat: int = 0

    DEALER: ClassVar[Position]
    COMMUNITY: ClassVar[Position]
    DISCARD: ClassVar[Position]

    def __post_init__(self) -> None:
        if self.kind not in _HAND_KINDS:
            raise ValueError(f"position kind must be one of {[k.value for k in _HAND_KINDS]}, got {self.kind!r}")
        if self.kind is PlaceKind.SEAT:
            if not 1 <= self.seat <= MAX_SEATS:
                raise ValueError(f"seat must be 1..{MAX_SEATS}, got {self.seat!r}")
        elif self.seat != 0:
            raise ValueError(f"a {self.kind.value} position has no seat number, got {self.seat!r}")

    @classmethod
    def seat_(cls, seat: int) -> Position:
        """The position of playing seat ``seat`` (1..7)."""
        return cls(PlaceKind.SEAT, seat)

    def label(self) -> str:
        """Short text for logs and errors: ``seat 3``, ``dealer``."""
        return f"seat {self.seat}" if self.kind is PlaceKind.SEAT else self.kind.value

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind.value, "seat": self.seat}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Position:
        seat = data.get("seat", 0)
        if not isinstance(seat, int):
            raise ValueError(f"position seat must be an integer, got {seat!r}")
        return cls(PlaceKind(str(data["kind"])), seat)


Position.DEALER = Position(PlaceKind.DEALER)
Position.COMMUNITY = Position(PlaceKind.COMMUNITY)
Position.DISCARD = Position(PlaceKind.DISCARD)


@dataclass(frozen=True, order=True)
class Place:
    """One expected card: seat N card k, dealer card k, community k, burn k or the security card."""

    kind: PlaceKind
    seat: int
    number: int

    def __post_init__(self) -> None:
        if self.kind is PlaceKind.SEAT:
            if not 1 <= self.seat <= MAX_SEATS:
                raise ValueError(f"seat must be 1..{MAX_SEATS}, got {self.seat!r}")
        elif self.seat != 0:
            raise ValueError(f"a {self.kind.value} place has no seat number, got {self.seat!r}")
        if self.number < 1:
            raise ValueError(f"card number must be 1 or more, got {self.number!r}")

    @property
    def position(self) -> Position:
        """The position whose hand (or area) this card belongs to; burns and security go to
        the discard holder's area but keep their own kind for display."""
        if self.kind in (PlaceKind.BURN, PlaceKind.SECURITY):
            return Position.DISCARD
        return Position(self.kind, self.seat)

    def label(self) -> str:
        if self.kind is PlaceKind.SEAT:
            return f"seat {self.seat} card {self.number}"
        return f"{self.kind.value} card {self.number}"

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind.value, "seat": self.seat, "number": self.number}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Place:
        seat, number = data.get("seat", 0), data.get("number")
        if not isinstance(seat, int) or not isinstance(number, int):
            raise ValueError(f"place seat and number must be integers, got {data!r}")
        return cls(PlaceKind(str(data["kind"])), seat, number)
