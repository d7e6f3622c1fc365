"""The table API's types as the OpenAPI description shows them: requests, answers, errors.

A controller developer reads `/openapi.json` (or `/docs`) instead of the code, so every body
is a model here: request bodies are strict (an unknown key, a float amount or a card that is
not text like "As" answers 422), answers are typed down to each card, and every error answer
has one form, `ErrorBody`. Answer models allow extra keys: a field the daemon adds later
reaches the controller rather than being dropped on the way out.

Wagers, choices, games, places, round states and flag decisions are enums; `Wager` and
`Choice` are checked against the rounds engine's own tables by tests/daemon/test_api_openapi.py.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, Union

from annotated_types import Ge, Le
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from .cardtext import CARD_INPUT_PATTERN, CARD_PATTERN

# -- bounds ---------------------------------------------------------------------------
#: Amounts in minor units, at most 10^15: exact as a JavaScript number (2^53 > 9 * 10^15),
#: and inside the body limits' 19-digit integers (docs/api.md, "Limits").
MAX_AMOUNT = 10**15
#: Shoe indices, flag numbers and event ids are counters; bounded well inside 19 digits.
MAX_COUNTER = 10**12
MAX_U32 = 0xFFFFFFFF


class Wager(StrEnum):
    """A wager's name; each game takes some of them (docs/api.md, "Wagers and choices")."""

    ANTE = "ante"
    PLAY = "play"
    PAIR_PLUS = "pair_plus"
    SIX_CARD_BONUS = "six_card_bonus"
    PROGRESSIVE = "progressive"
    BET = "bet"
    ONE = "one"
    TWO = "two"
    DOLLAR = "dollar"


class Choice(StrEnum):
    """A player's decision (the rounds engine's `Choice`)."""

    PLAY = "play"
    FOLD = "fold"
    BET = "bet"
    PULL_1 = "pull_1"
    RIDE_1 = "ride_1"
    PULL_2 = "pull_2"
    RIDE_2 = "ride_2"
    DECLINE_COMPARISON = "decline_comparison"


class Game(StrEnum):
    """The games a table deals."""

    THREE_CARD_POKER = "three-card-poker"
    MEGALINK_THREE_CARD_POKER = "megalink-three-card-poker"
    MEGALINK_THREE_CARD_POKER_XTREME = "megalink-three-card-poker-xtreme"
    MEGALINK_LET_IT_RIDE = "megalink-let-it-ride"
    MEGALINK_SINGAPORE_STUD_POKER = "megalink-singapore-stud-poker"


class PlaceKind(StrEnum):
    """Where a card lies: a seat's hand, the dealer's, the community cards, out of play."""

    SEAT = "seat"
    DEALER = "dealer"
    COMMUNITY = "community"
    BURN = "burn"
    SECURITY = "security"
    DISCARD = "discard"


class RoundStatus(StrEnum):
    """A round's state, in order of play."""

    BETTING = "betting"
    DEALING = "dealing"
    DECIDING = "deciding"
    DEALER = "dealer"
    COMPLETE = "complete"
    SETTLED = "settled"


class Decision(StrEnum):
    """A flag's decision: taken, or awaited (pending, *_proposed, referred)."""

    PENDING = "pending"
    VOID_ROUND = "void_round"
    VOID_SEAT = "void_seat"
    RECONSTRUCTION_PROPOSED = "reconstruction_proposed"
    RECONSTRUCTED = "reconstructed"
    REFERRED = "referred"
    ACKNOWLEDGED = "acknowledged"
    PLACEMENT_PROPOSED = "placement_proposed"


Card = Annotated[str, Field(pattern=CARD_PATTERN, description='a card as text: rank then suit, e.g. "As", "Td"',
                            examples=["As"])]
#: A card, or null: face down in the pit view, unread by the shoe, or of no deck.
CardOrNull = Annotated[Card | None, Field(description='a card as text ("As"); null when face down in the pit '
                                                      "view, unread, or of no deck")]
CardIn = Annotated[str, Field(pattern=CARD_INPUT_PATTERN, max_length=2, description='a card as text, e.g. "As"',
                              examples=["As"])]
def _whole(value: Any) -> Any:
    """A JSON number with no fraction (1000.0) is an integer (JSON Schema says so, and a
    JavaScript controller may send one); 10.5 and "100" stay refused."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: An integer of a request body: strict (no strings, no fractions), whole floats taken.
Int = Annotated[int, BeforeValidator(_whole)]
Zero = Annotated[Literal[0], BeforeValidator(_whole)]

# Bounds before the validator that takes whole floats: bounds given after it (or as a field's
# Field(ge=...)) reach the JSON schema as `ge`/`le`, not minimum/maximum.
_W = BeforeValidator(_whole)
Seat = Annotated[int, Ge(1), Le(7), _W, Field(description="playing position, 1..7 from the dealer's left")]
Amount = Annotated[int, Ge(0), Le(MAX_AMOUNT), _W]
CardNumber = Annotated[int, Ge(1), Le(60), _W]
CardCount = Annotated[int, Ge(0), Le(60), _W]
Counter = Annotated[int, Ge(1), Le(MAX_COUNTER), _W]
U32 = Annotated[int, Ge(0), Le(MAX_U32), _W]
Mask16 = Annotated[int, Ge(0), Le(0xFFFF), _W]
# Enums in a strict model: a JSON string is the enum's value (strict mode wants instances).
WagerField = Annotated[Wager, Field(strict=False)]
ChoiceField = Annotated[Choice, Field(strict=False)]

# -- request bodies -------------------------------------------------------------------
_STRICT = ConfigDict(extra="forbid", strict=True)


class WagerIn(BaseModel):
    model_config = _STRICT
    seat: Seat
    wager: WagerField = Field(description="the wager; the round's game must have it (else 409)")
    amount: Amount = Field(description="minor units; within the table's limits (else 409)")


class AmountIn(BaseModel):
    model_config = _STRICT
    amount: Amount = Field(description="minor units; 0 withdraws a wager")


class ProgressiveGivenIn(BaseModel):
    """The Magic Card and Lucky Player as the progressive system chose them."""

    model_config = _STRICT
    magic_card: CardIn | None = Field(None, description='Let It Ride Magic Card, e.g. "As"')
    lucky_seat: Seat | None = None
    draw: Literal[False] = Field(False, description="false: the card and seat are given")


class ProgressiveDrawIn(BaseModel):
    """Draw both with a cryptographic source (`[let_it_ride] draw_magic`)."""

    model_config = _STRICT
    draw: Literal[True]


class DecisionIn(BaseModel):
    model_config = _STRICT
    seat: Seat
    choice: ChoiceField = Field(description="the decision; the game and the seat's turn must allow it (else 409)")


class SeatIn(BaseModel):
    model_config = _STRICT
    seat: Seat


class SeatPlaceIn(BaseModel):
    """A card of a seat's hand."""

    model_config = _STRICT
    kind: Literal["seat"]
    seat: Seat
    number: CardNumber = Field(description="the card's number in the hand, from 1")


class OtherPlaceIn(BaseModel):
    """A card of the dealer, the community cards, a burn, the security card or a discard."""

    model_config = _STRICT
    kind: Literal["dealer", "community", "burn", "security", "discard"]
    seat: Zero = 0
    number: CardNumber = Field(description="the card's number at that place, from 1")


PlaceIn = Annotated[Union[SeatPlaceIn, OtherPlaceIn], Field(discriminator="kind")]


class ExposureIn(BaseModel):
    model_config = _STRICT
    place: PlaceIn | None = None
    shoe_index: Counter | None = Field(None, description="the card's index in the shoe session")


class SeatPositionIn(BaseModel):
    model_config = _STRICT
    kind: Literal["seat"]
    seat: Seat


class OtherPositionIn(BaseModel):
    model_config = _STRICT
    kind: Literal["dealer", "community", "discard"]
    seat: Zero = 0


PositionIn = Annotated[Union[SeatPositionIn, OtherPositionIn], Field(discriminator="kind")]


class CountIn(BaseModel):
    model_config = _STRICT
    flag: Counter = Field(description="the count flag's id")
    position: PositionIn
    count: CardCount
    reporter: str = Field(min_length=1, max_length=80)


class ConfirmIn(BaseModel):
    model_config = _STRICT
    flag: Counter
    confirmed: bool
    supervisor: str = Field(min_length=1, max_length=80)
    # Which of a proposed placement's candidates (1-based) the supervisor confirms; required
    # when the flag offers more than one (a manual-device slip, 5.7/5.2).
    candidate: Counter | None = None


class VoidIn(BaseModel):
    model_config = _STRICT
    rule: str = Field(min_length=1, max_length=20, description='the rule cited, e.g. "5.4"')
    reason: str = Field(min_length=1, max_length=200)
    by: str = Field(min_length=1, max_length=80)


class AcknowledgeIn(BaseModel):
    model_config = _STRICT
    by: str = Field(min_length=1, max_length=80, description="the supervisor who saw it and referred it")
    note: str | None = Field(None, max_length=200)


_ID_PATTERN = r"^\S(.*\S)?$"


class SignOnIn(BaseModel):
    """A dealer or supervisor signing on at the table (a badge's id)."""

    model_config = _STRICT
    role: Literal["dealer", "supervisor"]
    staff_id: str = Field(min_length=1, max_length=64, pattern=_ID_PATTERN, description="the badge's id")


class SignOffIn(BaseModel):
    model_config = _STRICT
    role: Literal["dealer", "supervisor"]
    staff_id: str | None = Field(None, min_length=1, max_length=64, pattern=_ID_PATTERN,
                                 description="when given, must be the one signed on")


class PlayerIn(BaseModel):
    model_config = _STRICT
    player_id: str = Field(min_length=1, max_length=64, pattern=_ID_PATTERN, description="the rating card's id")


class SettleIn(BaseModel):
    model_config = _STRICT
    jackpot_pool: Amount | None = Field(None, description="minor units; default: the pool last set")


class ManifestCardIn(BaseModel):
    model_config = _STRICT
    card: CardIn
    uid: str = Field(pattern=r"^([0-9a-fA-F]{8}|[0-9a-fA-F]{14}|[0-9a-fA-F]{20})$", description="tag UID, hex")


class LoadShoeIn(BaseModel):
    model_config = _STRICT
    deck_id: U32
    shoe: U32 | None = Field(None, description="shoe serial; default the shoe on the link")
    manifest: list[ManifestCardIn] | None = Field(
        None, min_length=52, max_length=52,
        description="RFID decks: the 52 different cards with 52 different UIDs (else 409); omit for barcode decks")


class ClearIn(BaseModel):
    model_config = _STRICT
    integrity_mask: Mask16
    fault_mask: Mask16
    shoe: U32 | None = None


class MaintenanceIn(BaseModel):
    model_config = _STRICT
    supervisor: str = Field(min_length=1, max_length=80)
    reason: str = Field(min_length=1, max_length=200)
    shoe: U32 | None = Field(None, description="shoe serial; default the shoe on the link")


# -- answers --------------------------------------------------------------------------
class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Place(_Out):
    kind: PlaceKind
    seat: int = Field(description="1..7 for a seat, 0 elsewhere")
    number: int


class Position(_Out):
    kind: PlaceKind
    seat: int


class CardRecord(_Out):
    """One card out of the shoe, as the round holds it."""

    index: int = Field(description="its index in the shoe session")
    card: CardOrNull
    shoe_no: int
    reader_id: str | None = Field(None, description="the reader's ID as hex; absent in the pit view while face down")
    shoe_ms: int = 0
    deck_id: int = 0
    read_method: int = 1
    duplicate: bool = False
    foreign: bool = False
    time_ms: int = 0


class Evidence(_Out):
    """A shoe card as a flag's evidence."""

    index: int
    card: CardOrNull
    reader_id: str | None = None
    shoe_ms: int = 0
    time_ms: int = 0


class CountReport(_Out):
    position: Position
    count: int
    reporter: str
    time_ms: int


class Candidate(_Out):
    """One possible placement of a manual deal's cards (confirm it by `number`)."""

    number: int
    position: Position
    slip_pass: int
    placements: list[tuple[int, Place]] = Field(description="[shoe index, place] for every card of the phase")
    hands: list[tuple[Position, list[int]]] = Field(description="[position, shoe indices] it then holds")
    description: str


class Flag(_Out):
    """An irregularity: its rules, evidence and the decision taken or awaited."""

    id: int
    kind: str = Field(description="card_not_due, too_few_cards, exposures_during_deal, exposure, deck, "
                                  "power_failure, not_covered")
    rules: list[str]
    detail: str
    decision: Decision
    source: str = Field(description="shoe, host or table")
    phase: str | None = None
    evidence: list[Evidence] = []
    reports: list[CountReport] = []
    proposal: list[tuple[int, Place]] = Field([], description="a proposed reconstruction: [shoe index, place]")
    fallback: Decision | None = None
    void_seats: list[int] = []
    withdrawn_seats: list[int] = []
    fault: str | None = None
    wrong: list[Position] = []
    resolved_by: str | None = None
    time_ms: int = 0
    candidates: list[Candidate] = []


class Exposure(_Out):
    source: str
    place: Place | None
    shoe_index: int | None
    during_deal: bool
    counted: bool
    time_ms: int


class VoidMark(_Out):
    rules: list[str]
    reason: str
    flag: int | None = None


class Phase(_Out):
    name: str
    places: list[Place]
    closes_at: list[str]


class Procedure(_Out):
    """How the round is dealt: its phases and the places of each card, in order."""

    game: Game
    device: str
    method: str | None
    seats: list[int]
    phases: list[Phase]


class Line(_Out):
    label: str
    pays: str
    amount: int
    rule: str


class WagerResult(_Out):
    wager: str = Field(description="the wager, or a bonus paid on one (`on`)")
    stake: int
    outcome: Literal["win", "lose", "push", "void", "returned"]
    paid: int
    net: int
    rules: list[str]
    lines: list[Line]
    notes: list[str]
    on: str | None = None
    limit: dict[str, Any] | None = None


class HandShown(_Out):
    hand: str
    cards: list[Card]


class SeatResult(_Out):
    seat: int
    player: str
    hands: dict[str, HandShown]
    wagers: list[WagerResult]
    notes: list[str]
    stake: int
    paid: int
    net: int


class DealerResult(_Out):
    cards: list[Card]
    hand: str
    hand_cards: list[Card]
    qualifies: bool
    rules: list[str]


class Movement(_Out):
    kind: str
    amount: int
    rule: str
    balance: int
    seat: int | None = None
    line: str | None = None


class JackpotResult(_Out):
    pool_before: int
    pool_after: int
    reset: int
    movements: list[Movement]


class Totals(_Out):
    stake: int
    paid: int
    net: int


class SettlementVoid(_Out):
    rules: list[str]
    reason: str


class Settlement(_Out):
    """Every wager settled, with the rule of each payment (docs/round-format.md, "Settlement output")."""

    format: str
    round_id: str | None
    game: str
    rules_version: str
    paytable_revision: int
    currency: str
    void: SettlementVoid | None
    dealer: DealerResult | None
    community: list[Card]
    seats: list[SeatResult]
    jackpot: JackpotResult | None
    notes: list[str]
    totals: Totals


class SeatState(_Out):
    """One seat as the round stands (for the table page)."""

    wagers: dict[str, int] = Field(description="wager -> amount as it stands: those placed, and a play (TCP 3.9.2: "
                                               "the ante) or a bet (Stud 1.1.2: twice the ante) once made")
    decisions: list[ChoiceField] = Field(description="the player's decisions in order")
    decided: dict[str, str] = Field(description="by wager, as in the round format: ante play/bet/fold, "
                                                "one/two withdraw/ride")
    owes_decision: bool
    folded: bool
    declined_comparison: bool
    absent: bool = Field(description="absent for the decision (5.11)")
    void: VoidMark | None


class Refusal(_Out):
    """An input the table refused (or could not finish) for a round, as journaled."""

    id: int = Field(description="its journal entry (event id)")
    t_ns: int
    type: Literal["input_refused", "settlement_failed", "internal_error"]
    op: str | None = Field(None, description="the round operation refused, e.g. Settle")
    action: str | None = None
    error: str | None = None
    field: str | None = None
    message: str | None = None
    rule: str | None = None
    after: int = Field(description="the round's last accepted event before it")
    latest: bool = Field(description="nothing was accepted for the round since")


class Round(_Out):
    """A round as the table holds it. In the pit view (`view: "pit"`) a card still face down
    is `null` and carries no `reader_id`."""

    round_id: str
    game: Game
    device: str
    method: str | None
    status: RoundStatus
    wagers: dict[str, dict[str, int]] = Field(description="seat -> wager -> amount (minor units)")
    magic_card: CardOrNull
    lucky_seat: int | None
    procedure: Procedure | None
    placements: dict[str, Place] = Field(description="shoe index -> place")
    cards: dict[str, CardRecord] = Field(description="shoe index -> the card")
    not_due: list[int] = Field(description="shoe indices of cards no place was due for")
    hands: dict[str, list[CardOrNull]] = Field(description='position ("seat 3", "dealer", "community") -> cards')
    burns: list[CardOrNull]
    security: list[CardOrNull]
    exposures: list[Exposure]
    decisions: dict[str, list[ChoiceField]] = Field(description="seat -> decisions in order")
    absent: list[int]
    irregularities: list[Flag]
    void: VoidMark | None
    void_seats: dict[str, VoidMark]
    jackpot_pool: int | None
    settlement: Settlement | None = Field(None, description="once settled")
    view: Literal["pit"] | None = Field(None, description='"pit" when face-down cards are left out')
    hand_classes: dict[str, str] | None = Field(None, description="with ?classes=true: each complete hand's class")
    seat_state: dict[str, SeatState] | None = Field(None, description="seat -> its wagers as they stand, decisions, "
                                                                       "whether it owes one, folded, absent or void")
    owing: list[int] | None = Field(None, description="the seats that still owe a decision")
    refusals: list[Refusal] | None = Field(None, description="the round's refused inputs, oldest first (at most 20)")


class ReferralAcknowledged(_Out):
    acknowledged: int = Field(description="the referral's journal entry")
    by: str


class RoundListItem(_Out):
    round_id: str
    status: RoundStatus
    void: bool


class RoundList(_Out):
    rounds: list[RoundListItem]


class Event(_Out):
    """An event as journaled (cards as text): `type` names it; docs/api.md lists each type."""

    type: str


class Done(_Out):
    """An accepted input: its round, the events it caused and, for a settlement, the settlement."""

    round_id: str | None
    events: list[Event]
    settlement: Settlement | None = None


class Opened(Done):
    round_id: str


class ShoeLoaded(_Out):
    shoe_no: int = Field(description="the new shoe session's number")


class Sent(_Out):
    sent: bool


class MaintenanceSent(Sent):
    shoe: int
    seq: int


class JournalInfo(_Out):
    id: str | None = Field(description="the journal's id (a new journal, a new gaming day, has a new one)")
    file: str
    last_entry: int = Field(description="the latest event or daemon entry seen (to resume the stream near it)")


class JackpotInfo(_Out):
    pool: int | None = Field(description="the progressive pool as last set (minor units); null before")
    reset: int | None = Field(description="what the pool resets to ([jackpot] reset); null: no progressive")


class CurrencyInfo(_Out):
    code: str
    minor_per_major: int


class Layout(_Out):
    """The game's positions when every seat plays: card counts, face-up places, wagers."""

    hand_size: int
    dealer: int
    community: int
    burn: int
    security: int
    public: list[Place]
    wagers: list[str]


class Status(_Out):
    """The daemon: link, alarms, shoes, counters, the round in play (docs/api.md, "Endpoints")."""

    table: str
    game: Game
    seats: int
    epoch: int
    port: str
    link_up: bool
    link_changed_ns: int | None
    current_round: str | None
    alarms: list[dict[str, Any]]
    journal_failed: str | None
    shoe: int | None
    shoes: dict[str, dict[str, Any]]
    counters: dict[str, int]
    version_mismatch: dict[str, dict[str, Any]]
    link: dict[str, Any] | None
    subscribers: int
    journal: JournalInfo | None = None
    jackpot: JackpotInfo | None = None
    currency: CurrencyInfo | None = None
    layout: Layout | None = None
    referrals: list[dict[str, Any]] = Field([], description="referrals outside a round not yet acknowledged "
                                                             "(key_outside_round, deck_fault_outside_round, "
                                                             "card_outside_round events with their journal `id`), "
                                                             "newest first")


# -- errors ---------------------------------------------------------------------------
class SchemaError(BaseModel):
    """One way the request broke the OpenAPI description (pydantic's error)."""

    loc: list[str | int]
    msg: str
    type: str


class Problem(BaseModel):
    """What was refused and why."""

    field: str = Field(description='the field at fault, e.g. "amount", "round_id", "Authorization"')
    message: str
    error: str = Field(description="the error's type, e.g. WagersClosedError, DecisionError, ValidationError")
    rule: str | None = Field(None, description='the rule that refused it, e.g. "5.5-5.6"')
    errors: list[SchemaError] | None = Field(None, description="422 ValidationError: every schema error")


class ErrorBody(BaseModel):
    """Every error answer (4xx, 5xx) of the API."""

    detail: Problem


class StaffOn(_Out):
    """Who is on at the table now."""

    dealer: str | None
    supervisor: str | None
    players: dict[str, str] = Field(description="seat -> player id")
