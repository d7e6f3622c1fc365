"""The operations of a round: typed, frozen, recorded in order, replayable.

Every input to a round is one of these: from the shoe (cards, the dealer's keys, deck status)
or from the table interface (wagers, decisions, a person's reports and confirmations). The
round records each accepted operation in ``Round.operations``; replaying them rebuilds it.
``time_ms`` is the host's wall clock (Unix ms) when the daemon received the input; it is
evidence, never used to decide order (the order of operations is the order of the list).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Union

from .places import Place, Position
from .procedures import Device, XtremeMethod

__all__ = [
    "Source",
    "Choice",
    "DeckFault",
    "OpenRound",
    "PlaceWager",
    "ChangeWager",
    "ProgressiveSelection",
    "NoMoreBets",
    "ShoeCard",
    "DealComplete",
    "ExposureDeclared",
    "Decision",
    "PlayerAbsent",
    "HandCountReported",
    "WagerWithdrawn",
    "DeckIrregularity",
    "SupervisorConfirmation",
    "VoidRound",
    "Settle",
    "Operation",
    "OPERATION_TYPES",
    "operation_to_json",
    "operation_from_json",
]


class Source(StrEnum):
    """Who reported an input that only a person can see."""

    SHOE_KEY = "shoe_key"
    TABLE = "table"


class Choice(StrEnum):
    """A player's decision after the deal."""

    PLAY = "play"  # TCP family 3.9.2
    FOLD = "fold"  # TCP family 3.9.1, stud 3.9.1
    BET = "bet"  # stud 3.9.2
    PULL_1 = "pull_1"  # Let It Ride 3.8/3.10
    RIDE_1 = "ride_1"  # Let It Ride 3.9
    PULL_2 = "pull_2"  # Let It Ride 3.12/3.14
    RIDE_2 = "ride_2"  # Let It Ride 3.13
    DECLINE_COMPARISON = "decline_comparison"  # TCP 3.10.1, Megalink/Xtreme 3.10.2-3, stud 3.10.1


class DeckFault(StrEnum):
    """A deck irregularity reported by the shoe (DECK_STATUS integrity, or a flagged card)."""

    EXTRA = "extra"
    MISSING = "missing"
    FOREIGN = "foreign"
    DUPLICATE = "duplicate"
    UNREAD = "unread"


@dataclass(frozen=True, kw_only=True)
class OpenRound:
    """Open a round ("Place your bets, please", 3.1). The first operation of every round."""

    OP: ClassVar[str] = "open_round"
    round_id: str
    game: str
    device: Device
    method: XtremeMethod | None = None
    positions: int = 7
    """Playing positions on this table's layout (1..7)."""
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class PlaceWager:
    """A new wager on a seat, in minor units, before "no more bets"."""

    OP: ClassVar[str] = "place_wager"
    seat: int
    wager: str
    amount: int
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class ChangeWager:
    """Change an existing wager before "no more bets"; ``amount`` 0 withdraws it."""

    OP: ClassVar[str] = "change_wager"
    seat: int
    wager: str
    amount: int
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class ProgressiveSelection:
    """Let It Ride's Magic Card and Lucky Player (4.3-4.4), chosen by the progressive system
    and recorded before the first card is dealt."""

    OP: ClassVar[str] = "progressive_selection"
    magic_card: int | None
    lucky_seat: int | None
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class NoMoreBets:
    """"No more bets" (3.2): wagers close and the active seats, hence the procedure, are fixed."""

    OP: ClassVar[str] = "no_more_bets"
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class ShoeCard:
    """One card that left the shoe (a CARD or UNREAD frame).

    ``index`` is its 1-based position in shoe session ``shoe_no``; ``code`` 0..51, or None when
    the card left unread or its ID maps to no card; ``reader_id`` the raw reader ID as hex;
    ``shoe_ms`` the shoe's clock when the exit sensor fired. ``duplicate``/``foreign`` are the
    shoe's flags for this card. ``after_void``: the card came for a round already void, and is
    recorded in it as a card after the void, dealt into no hand (the table's rules of issue 20;
    a card without it is dealt as before, so rounds recorded earlier replay as they were).
    """

    OP: ClassVar[str] = "shoe_card"
    shoe_no: int
    index: int
    code: int | None
    reader_id: str = ""
    shoe_ms: int = 0
    deck_id: int = 0
    read_method: int = 1
    """1 RFID, 2 barcode (SPEC §5 CARD ``method``)."""
    duplicate: bool = False
    foreign: bool = False
    time_ms: int = 0
    after_void: bool = False


@dataclass(frozen=True, kw_only=True)
class DealComplete:
    """The dealer's "deal complete" key (from the shoe or the table interface): a count point."""

    OP: ClassVar[str] = "deal_complete"
    source: Source = Source.SHOE_KEY
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class ExposureDeclared:
    """A person saw a card exposed; ``place`` or ``shoe_index`` say which, when known."""

    OP: ClassVar[str] = "exposure_declared"
    source: Source
    place: Place | None = None
    shoe_index: int | None = None
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A player's decision on a seat's hand."""

    OP: ClassVar[str] = "decision"
    seat: int
    choice: Choice
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class PlayerAbsent:
    """The player of a seat is not present to decide (5.11)."""

    OP: ClassVar[str] = "player_absent"
    seat: int
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class HandCountReported:
    """A person's count of the cards at a position, for an open count irregularity ``flag``.

    The count is of the cards the position received from the shoe in that phase: a Megalink
    community unit includes its burn card, Xtreme method C's dealer unit its security card,
    and an unwagered seat that was dealt to in error is reported with the cards it holds.
    ``Position.DISCARD`` reports cards that went straight to the discard holder in error.
    """

    OP: ClassVar[str] = "hand_count_reported"
    flag: int
    position: Position
    count: int
    reporter: str
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class WagerWithdrawn:
    """Rule 5.7.1: after another hand's wrong count (flag ``flag``, decided VOID_SEAT), a player
    dealt the correct number of cards is permitted to withdraw; every wager of ``seat`` returns."""

    OP: ClassVar[str] = "wager_withdrawn"
    flag: int
    seat: int
    permitted_by: str
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class DeckIrregularity:
    """A deck irregularity from the shoe's deck status (extra, missing, foreign, duplicate or
    unread cards): the round in play is void, earlier rounds stand (5.1, 5.8; LIR 5.1-5.2)."""

    OP: ClassVar[str] = "deck_irregularity"
    fault: DeckFault
    detail: str = ""
    shoe_index: int | None = None
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class ShoePowerFailure:
    """The shoe rebooted (its power went) while the round's cards were being dealt: a card
    that was leaving may not have been counted, so the cards on the table may not be the
    cards recorded (5.16; 6.1 where the game has no 5.16). ``shoe_dealt`` is the count in
    the shoe's HELLO, ``host_count`` the cards of the session the host holds."""

    OP: ClassVar[str] = "shoe_power_failure"
    shoe: int
    boot: int
    reset_cause: int
    shoe_dealt: int
    host_count: int
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class SupervisorConfirmation:
    """A supervisor's answer to an irregularity awaiting one: ``confirmed`` applies a proposed
    reconstruction or lets a referred round stand; otherwise the fallback decision applies.

    ``candidate`` names which of a PLACEMENT_PROPOSED flag's candidates (1-based) the
    supervisor established; it may be left out when the flag has only one."""

    OP: ClassVar[str] = "supervisor_confirmation"
    flag: int
    confirmed: bool
    supervisor: str
    time_ms: int = 0
    candidate: int | None = None


@dataclass(frozen=True, kw_only=True)
class VoidRound:
    """A supervisor voids the round (every wager returned), citing a rule."""

    OP: ClassVar[str] = "void_round"
    rule: str
    reason: str
    by: str
    time_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class Settle:
    """Close the round for settlement. Also a count point: an open phase is checked first."""

    OP: ClassVar[str] = "settle"
    jackpot_pool: int | None = None
    time_ms: int = 0


Operation = Union[
    OpenRound,
    PlaceWager,
    ChangeWager,
    ProgressiveSelection,
    NoMoreBets,
    ShoeCard,
    DealComplete,
    ExposureDeclared,
    Decision,
    PlayerAbsent,
    HandCountReported,
    WagerWithdrawn,
    DeckIrregularity,
    ShoePowerFailure,
    SupervisorConfirmation,
    VoidRound,
    Settle,
]

OPERATION_TYPES: dict[str, type[Any]] = {
    cls.OP: cls
    for cls in (
        OpenRound,
        PlaceWager,
        ChangeWager,
        ProgressiveSelection,
        NoMoreBets,
        ShoeCard,
        DealComplete,
        ExposureDeclared,
        Decision,
        PlayerAbsent,
        HandCountReported,
        WagerWithdrawn,
        DeckIrregularity,
        ShoePowerFailure,
        SupervisorConfirmation,
        VoidRound,
        Settle,
    )
}

_ENUM_FIELDS: dict[str, type[StrEnum]] = {  # field names unique across operations
    "device": Device,
    "method": XtremeMethod,
    "source": Source,
    "choice": Choice,
    "fault": DeckFault,
}


def operation_to_json(op: Operation) -> dict[str, Any]:
    """A JSON-able dict of ``op`` with its ``"op"`` name; :func:`operation_from_json` inverts it."""
    out: dict[str, Any] = {"op": op.OP}
    for f in dataclasses.fields(op):
        value = getattr(op, f.name)
        if isinstance(value, (Place, Position)):
            value = value.to_json()
        elif isinstance(value, StrEnum):
            value = value.value
        out[f.name] = value
    return out


def operation_from_json(data: dict[str, Any]) -> Operation:
    """Rebuild an operation from :func:`operation_to_json`'s dict; ValueError names a bad field."""
    name = data.get("op")
    cls = OPERATION_TYPES.get(str(name))
    if cls is None:
        raise ValueError(f"unknown operation {name!r}")
    kwargs: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(cls)}
    for key, value in data.items():
        if key == "op":
            continue
        if key not in names:
            raise ValueError(f"operation {name!r} has no field {key!r}")
        if key == "place" and value is not None:
            value = Place.from_json(value)
        elif key == "position":
            value = Position.from_json(value)
        elif key in _ENUM_FIELDS and value is not None:
            try:
                value = _ENUM_FIELDS[key](value)
            except ValueError:
                raise ValueError(f"operation {name!r} field {key!r}: bad value {value!r}") from None
        kwargs[key] = value
    try:
        op: Operation = cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"operation {name!r}: {exc}") from None
    return op
