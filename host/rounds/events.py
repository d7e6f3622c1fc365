"""What a round tells the world: events (streamed by the daemon) and irregularity flags.

Events are frozen values returned by ``Round.do`` and kept in ``Round.events``. Card values
are secret until exposed: ``CardPlaced.card`` carries the code for the journal and trusted
consumers, and ``public`` says whether the table may show it (stud's dealer up card).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Union

from .places import Place, Position

__all__ = [
    "IrregularityKind",
    "DecisionKind",
    "CardEvidence",
    "CountReport",
    "PlacementCandidate",
    "Irregularity",
    "VoidMark",
    "WagerAccepted",
    "BetsClosed",
    "CardPlaced",
    "CardNotDue",
    "CardAfterVoid",
    "HandComplete",
    "CountChecked",
    "Flagged",
    "FlagResolved",
    "HandsRebuilt",
    "SeatVoided",
    "RoundVoided",
    "DecisionRecorded",
    "ExposureRecorded",
    "RoundSettled",
    "Event",
    "to_jsonable",
]


class IrregularityKind(StrEnum):
    CARD_NOT_DUE = "card_not_due"
    """A card left the shoe when the procedure expected none (too many cards)."""
    TOO_FEW_CARDS = "too_few_cards"
    """A count point found fewer cards than the procedure deals."""
    EXPOSURES_DURING_DEAL = "exposures_during_deal"
    """Two or more cards exposed during the deal (5.4; LIR 5.5)."""
    EXPOSURE = "exposure"
    """A single exposed card, referred to the shift manager (6.1)."""
    DECK = "deck"
    """Extra, missing, foreign, duplicate or unread cards (5.1, 5.8; LIR 5.1-5.2)."""
    POWER_FAILURE = "power_failure"
    """The shoe lost power mid-deal: the cards on the table may differ from those recorded
    (5.16; 6.1, or MTCP 5.16 by analogy for LIR), referred to the shift manager."""
    NOT_COVERED = "not_covered"
    """Something the rules do not cover, referred to the shift manager (6.1)."""


class DecisionKind(StrEnum):
    PENDING = "pending"
    """Waiting for a person: which position holds the wrong count."""
    VOID_ROUND = "void_round"
    VOID_SEAT = "void_seat"
    RECONSTRUCTION_PROPOSED = "reconstruction_proposed"
    """Hands can be moved to rebuild the deal (5.2); waiting for a supervisor."""
    RECONSTRUCTED = "reconstructed"
    REFERRED = "referred"
    """Waiting for the shift manager (6.1)."""
    ACKNOWLEDGED = "acknowledged"
    """The shift manager let the round stand."""
    PLACEMENT_PROPOSED = "placement_proposed"
    """Manual device, a position one card short or long: the shoe's order cannot show in which
    pass it happened, so where the other hands' cards lie is not known. ``candidates`` are the
    possible placements; a supervisor confirms one (5.7 then voids the position's hand) or
    refuses them all (nothing can be shown: the round is void, 5.2; LIR 5.3)."""


@dataclass(frozen=True)
class CardEvidence:
    """The identity and timing of one shoe card, as evidence for a flag."""

    index: int
    code: int | None
    reader_id: str
    shoe_ms: int
    time_ms: int


@dataclass(frozen=True)
class CountReport:
    """A person's count of one position's cards (recorded as coming from a person)."""

    position: Position
    count: int
    reporter: str
    time_ms: int


@dataclass(frozen=True)
class PlacementCandidate:
    """One possible placement of a manual deal's cards after a slip at one position.

    ``number`` (1-based) is what ``SupervisorConfirmation.candidate`` names; ``slip_pass`` the
    pass in which ``position`` was missed (one card short) or given a second card (one long;
    one past its last pass means after everyone's last card); ``placements`` every card of the
    phase (shoe index -> place); ``hands`` the shoe indices each position then holds."""

    number: int
    position: Position
    slip_pass: int
    placements: tuple[tuple[int, Place], ...]
    hands: tuple[tuple[Position, tuple[int, ...]], ...]
    description: str


@dataclass(frozen=True)
class VoidMark:
    """Why a round or a seat is void: the rule and the irregularity that decided it."""

    rules: tuple[str, ...]
    reason: str
    flag: int | None = None


@dataclass(frozen=True)
class Irregularity:
    """One flag: its rule, its evidence and the decision taken (or awaited).

    ``proposal`` is a reconstruction (shoe index -> place) awaiting a supervisor;
    ``fallback`` the decision that applies if the supervisor refuses it; ``void_seats`` the
    seats a VOID_SEAT decision voids; ``resolved_by`` who decided.
    """

    id: int
    kind: IrregularityKind
    rules: tuple[str, ...]
    detail: str
    decision: DecisionKind
    source: str
    """``shoe`` (the shoe's frames), ``host`` (the host's count) or ``table`` (a person)."""
    phase: str | None = None
    evidence: tuple[CardEvidence, ...] = ()
    reports: tuple[CountReport, ...] = ()
    proposal: tuple[tuple[int, Place], ...] = ()
    fallback: DecisionKind | None = None
    void_seats: tuple[int, ...] = ()
    withdrawn_seats: tuple[int, ...] = ()
    """Seats whose players withdrew under 5.7.1 after this flag voided another hand."""
    fault: str | None = None
    """Deck flags: the DeckFault (``extra``, ``missing``, ``foreign``, ``duplicate``, ``unread``)."""
    wrong: tuple[Position, ...] = ()
    """Count flags: the positions a person's counts showed to be wrong."""
    resolved_by: str | None = None
    time_ms: int = 0
    candidates: tuple[PlacementCandidate, ...] = ()
    """PLACEMENT_PROPOSED: the possible placements of a manual deal, for a supervisor."""

    @property
    def open(self) -> bool:
        """Whether the flag still waits for a person."""
        return self.decision in (
            DecisionKind.PENDING, DecisionKind.RECONSTRUCTION_PROPOSED, DecisionKind.REFERRED, DecisionKind.PLACEMENT_PROPOSED,
        )


@dataclass(frozen=True)
class _Event:
    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict with the event's ``kind``."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            out[f.name] = to_jsonable(getattr(self, f.name))
        return out


@dataclass(frozen=True)
class WagerAccepted(_Event):
    kind: ClassVar[str] = "wager_accepted"
    seat: int
    wager: str
    amount: int


@dataclass(frozen=True)
class BetsClosed(_Event):
    kind: ClassVar[str] = "bets_closed"
    seats: tuple[int, ...]
    expected_cards: int


@dataclass(frozen=True)
class CardPlaced(_Event):
    kind: ClassVar[str] = "card_placed"
    index: int
    place: Place
    card: int | None
    public: bool
    reader_id: str
    shoe_ms: int


@dataclass(frozen=True)
class CardNotDue(_Event):
    kind: ClassVar[str] = "card_not_due"
    index: int
    card: int | None
    reader_id: str
    shoe_ms: int


@dataclass(frozen=True)
class CardAfterVoid(_Event):
    """A card that left the shoe for a round already void (issue 20): recorded in the round,
    dealt into no hand, and referred to the shift manager (``rules``: 6.1) with the card as
    ``evidence``; ``void_rules`` are the rules that voided the round."""

    kind: ClassVar[str] = "card_after_void"
    index: int
    card: int | None
    reader_id: str
    shoe_ms: int
    void_rules: tuple[str, ...]
    rule: str
    rules: tuple[str, ...]
    decision: str
    detail: str
    evidence: tuple[CardEvidence, ...]


@dataclass(frozen=True)
class HandComplete(_Event):
    kind: ClassVar[str] = "hand_complete"
    position: Position
    cards: tuple[int | None, ...]


@dataclass(frozen=True)
class CountChecked(_Event):
    """A count point passed: ``expected`` vs ``dealt`` cards in ``phase``."""

    kind: ClassVar[str] = "count_checked"
    phase: str
    point: str
    expected: int
    dealt: int


@dataclass(frozen=True)
class Flagged(_Event):
    kind: ClassVar[str] = "flagged"
    irregularity: Irregularity


@dataclass(frozen=True)
class FlagResolved(_Event):
    kind: ClassVar[str] = "flag_resolved"
    irregularity: Irregularity


@dataclass(frozen=True)
class HandsRebuilt(_Event):
    """Placements changed after a person's report or a confirmed reconstruction."""

    kind: ClassVar[str] = "hands_rebuilt"
    flag: int
    placements: tuple[tuple[int, Place], ...]


@dataclass(frozen=True)
class SeatVoided(_Event):
    kind: ClassVar[str] = "seat_voided"
    seat: int
    rules: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class RoundVoided(_Event):
    kind: ClassVar[str] = "round_voided"
    rules: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class DecisionRecorded(_Event):
    kind: ClassVar[str] = "decision_recorded"
    seat: int
    choice: str


@dataclass(frozen=True)
class ExposureRecorded(_Event):
    kind: ClassVar[str] = "exposure_recorded"
    source: str
    place: Place | None
    shoe_index: int | None
    during_deal: bool
    counted: bool


@dataclass(frozen=True)
class RoundSettled(_Event):
    kind: ClassVar[str] = "round_settled"
    void: bool


Event = Union[
    WagerAccepted,
    BetsClosed,
    CardPlaced,
    CardNotDue,
    CardAfterVoid,
    HandComplete,
    CountChecked,
    Flagged,
    FlagResolved,
    HandsRebuilt,
    SeatVoided,
    RoundVoided,
    DecisionRecorded,
    ExposureRecorded,
    RoundSettled,
]


def to_jsonable(value: Any) -> Any:
    """Convert places, positions, enums, dataclasses and tuples to plain JSON values."""
    if isinstance(value, (Place, Position)):
        return value.to_json()
    if isinstance(value, StrEnum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value

