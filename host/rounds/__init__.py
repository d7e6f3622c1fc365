"""Rounds rebuilt by seat from the order cards leave the shoe, with irregularities flagged.

Pure code, no I/O. The daemon feeds a :class:`Round` typed, frozen *operations* (from the
shoe's frames, the dealer's keys and the table interface), journals each one, and streams
the *events* the round returns. Replaying the same operations into a new round gives the
same state and the same events (``Round.replay``), which is how ``cardshoe replay`` rebuilds
a journal.

What the shoe can know is the order of the cards that leave it, not where they land. So
each card is placed by the game's *dealing procedure* (data, see :mod:`.procedures`), and a
wrong number of cards shows up only at the procedure's *count points* (the "deal complete"
key, the first decision, the dealer's hand, settlement) or as a card drawn when none is due.
Which position holds the wrong count, and whether a card was exposed, only a person can see:
those come in as operations from the table interface and are recorded as such.

Public API (stable; everything below is importable from ``cardshoe.rounds``)
------------------------------------------------------------------------------

Places (``places.py``)
    ``PlaceKind`` (StrEnum): ``seat``, ``dealer``, ``community``, ``burn``, ``security``,
    ``discard`` (out of play by a person's report or a confirmed reconstruction).
    ``Place(kind, seat, number)`` frozen: ``seat`` 1..7 for seat places, 0 otherwise; ``number``
    1-based card number within that seat/dealer/community/burn/security/discard. ``.label()``
    gives ``"seat 3 card 2"``; ``.to_json()``/``Place.from_json``.
    ``Position(kind, seat)`` frozen: where a hand lies (``seat``/``dealer``/``community``/
    ``discard``). ``Position.seat_(n)``, ``Position.DEALER``, ``Position.COMMUNITY``,
    ``Position.DISCARD``.

Dealing procedures (``procedures.py``)
    ``Device`` (StrEnum): ``automated``, ``manual``. ``XtremeMethod`` (StrEnum): ``A``, ``B``, ``C``.
    ``build_procedure(game, device, seats, method=None) -> DealingProcedure``: ``seats`` are the
    active seats (those with a base wager), dealt from the dealer's left, i.e. ascending.
    ``DealingProcedure``: ``game``, ``device``, ``method``, ``seats``, ``hand_size``, ``phases``,
    ``places`` (all places in shoe order), ``public_places`` (stud's dealer up card),
    ``expected(position)``, ``to_json()``.
    ``Phase(name, groups, opens_after, closes_at)``: ``name`` ``"deal"``, or ``"dealer"`` for
    Xtreme method B's dealer hand dealt after all decisions; ``places`` in shoe order;
    ``closes_at`` its count points (``CountPoint``: ``deal_complete``, ``decision``, ``settle``).
    ``GAME_IDS``, ``WAGERS``/``BASE_WAGERS`` per game, ``game_rules(game) -> GameRules`` (the
    rule numbers each irregularity cites in that game's document).
    Order the shoe emits: automated = packets seat by seat, then dealer, then community 1, 2
    and the burn (Megalink/Xtreme A); Xtreme B = seats, community 1, 2, burn | after decisions:
    dealer 1-3; Xtreme C = security, dealer 1-3, seats, community 1, 2, burn; manual = one card
    per position per pass (dealer last in each pass), then community 1, 2 (no burn); Let It
    Ride on either device = packets of three seat by seat (3.6, its only dealing rule), then
    community 1, 2 (no dealer); stud = 5-card hands, dealer card 5 public.

Operations (``operations.py``), frozen keyword-only dataclasses, each with ``time_ms`` (host
wall clock, Unix ms, evidence only):
    ``OpenRound(round_id, game, device, method=None, positions=7)`` (via ``Round.open``)
    ``PlaceWager(seat, wager, amount)`` / ``ChangeWager(seat, wager, amount)`` (0 withdraws).
    Let It Ride 3.4: a 1/2/$ wager unequal to one the seat already holds is refused
    (``UnequalWagersError``); changing or withdrawing one of them changes all three the seat
    holds (one ``WagerAccepted`` each); ``NoMoreBets`` is refused while a seat holds some but
    not all three; if the first card closes betting instead, such partial wagers are returned
    (``WagerAccepted`` with amount 0, a ``not_covered`` flag citing 3.4) and the seat is not dealt.
    ``ProgressiveSelection(magic_card, lucky_seat)`` (Let It Ride: freely before the first card;
    after it only a value not yet recorded, never a change, flagged ``not_covered`` and
    acknowledged, reading 70). ``Settle`` of a Let It Ride round with a progressive wager in
    play is refused (``MissingInputError``, ``field`` ``magic_card``/``lucky_seat``) until both
    are recorded; the round stays in play (record them, or void it).
    ``NoMoreBets()`` (also implied by the first card out of the shoe, 3.4)
    ``ShoeCard(shoe_no, index, code, reader_id="", shoe_ms=0, deck_id=0, read_method=1,
    duplicate=False, foreign=False)``: a CARD frame (or UNREAD with ``code=None``);
    ``reader_id`` the raw reader ID as hex.
    ``DealComplete(source=Source.SHOE_KEY)``; ``Source``: ``shoe_key``, ``table``.
    ``ExposureDeclared(source, place=None, shoe_index=None)``
    ``Decision(seat, choice)``; ``Choice``: ``play``, ``fold``, ``bet``, ``pull_1``, ``ride_1``,
    ``pull_2``, ``ride_2``, ``decline_comparison``.
    ``PlayerAbsent(seat)`` (5.11; refused for Let It Ride, which has no such rule)
    ``HandCountReported(flag, position, count, reporter)``: a person's count for open count flag
    ``flag``, of the cards the position received from the shoe in that phase (a Megalink
    community unit includes its burn, Xtreme C's dealer unit its security card; report an
    unwagered seat dealt to in error with its count, ``Position.DISCARD`` for cards drawn
    straight to the discard holder).
    ``WagerWithdrawn(flag, seat, permitted_by)``: 5.7.1, a player with a correct hand withdraws
    after flag ``flag`` voided another hand for its count.
    ``DeckIrregularity(fault, detail="", shoe_index=None)``; ``DeckFault``: ``extra``,
    ``missing``, ``foreign``, ``duplicate``, ``unread``.
    ``SupervisorConfirmation(flag, confirmed, supervisor, candidate=None)``: confirmed applies a
    proposed reconstruction or lets a referred round stand; refused applies the fallback (void).
    For a ``placement_proposed`` flag, ``candidate`` (1-based) names the placement confirmed
    (required when the flag offers more than one); refused, the round is void (5.2; LIR 5.3).
    ``VoidRound(rule, reason, by)``; ``Settle(jackpot_pool=None)``.
    ``Operation`` is their union; ``operation_to_json(op)`` / ``operation_from_json(d)``
    round-trip them through JSON for the journal.
    From the wire (SPEC §5): CARD -> ShoeCard (flags bit 0 duplicate, bit 1 foreign); UNREAD ->
    ShoeCard(code=None); KEY DEAL_COMPLETE -> DealComplete; KEY EXPOSURE ->
    ExposureDeclared(source=shoe_key); DECK_STATUS integrity bits newly set -> DeckIrregularity;
    KEY NEW_ROUND -> the daemon opens the next Round.

The round (``round.py``, the state machine; its state in ``state.py``; one module per phase,
each with the ``verify_``/``do_`` pair of its operations: ``wagers.py``, ``deal.py``,
``decisions.py``, ``counts.py``, ``irregularities.py``, ``settlement.py``; ``export.py``
writes the round format and imports only the state, not the machine)
    ``Round.open(op: OpenRound) -> Round``; ``Round.replay(ops) -> Round``.
    ``round.verify(op)`` raises a ``RoundOperationError`` subclass naming what is wrong;
    ``round.can(op) -> bool``; ``round.do(op) -> tuple[Event, ...]`` verifies, applies, appends
    ``op`` to ``round.operations`` and returns the events (also in ``round.events``). A refused
    operation leaves the round exactly as it was. ``round.do_then(op, check) -> (events,
    check's result)``: ``do`` and then ``check(round)``, undone whole if ``check`` raises (the
    daemon closes a round only if the settlement engine settles it).
    State: ``status`` (``RoundStatus``: ``betting``, ``dealing``, ``deciding``, ``dealer``,
    ``complete``, ``settled``), ``void`` (``VoidMark | None``), ``void_seats`` (seat ->
    VoidMark), ``wagers``, ``active_seats()``, ``procedure``, ``placements`` (shoe index ->
    Place), ``cards`` (shoe index -> ShoeCard), ``not_due`` (shoe indices), ``hand(position)``,
    ``hands()``, ``burns``, ``security``, ``decisions``, ``absent``, ``exposures`` (``Exposure``),
    ``irregularities``, ``pending_flags`` (waiting for a person; they block Settle),
    ``magic_card``, ``lucky_seat``, ``jackpot_pool``, ``snapshot() -> dict`` (JSON-able).
    ``round.to_round_json(*, limits, jackpot_reset=None, rules_version=None, currency=None)``:
    the round in docs/round-format.md's format (limits from the table's configuration;
    rules version and currency default to the game's pay table).

Events (``events.py``), frozen dataclasses with ``kind`` and ``to_json()``:
    ``WagerAccepted``, ``BetsClosed(seats, expected_cards)``, ``CardPlaced(index, place, card,
    public, reader_id, shoe_ms)``, ``CardNotDue``, ``CardAfterVoid`` (a ``ShoeCard`` with
    ``after_void``: a card for a round already void, kept among its ``not_due`` cards, dealt into
    no place, referred under 6.1), ``HandComplete(position, cards)``,
    ``CountChecked(phase, point, expected, dealt)``, ``Flagged(irregularity)`` (new or updated),
    ``FlagResolved(irregularity)``, ``HandsRebuilt(flag, placements)``, ``SeatVoided``,
    ``RoundVoided``, ``DecisionRecorded``, ``ExposureRecorded``, ``RoundSettled``.
    ``Irregularity(id, kind, rules, detail, decision, source, phase, evidence, reports,
    proposal, fallback, void_seats, withdrawn_seats, fault, wrong, resolved_by, time_ms,
    candidates)``; ``IrregularityKind``
    (``card_not_due``, ``too_few_cards``, ``exposures_during_deal``, ``exposure``, ``deck``,
    ``not_covered``); ``DecisionKind`` (``pending``, ``void_round``, ``void_seat``,
    ``reconstruction_proposed``, ``reconstructed``, ``referred``, ``acknowledged``,
    ``placement_proposed``: a manual deal's position one card short or long, where the shoe's
    order cannot show which pass slipped, so ``candidates`` (``PlacementCandidate(number,
    position, slip_pass, placements, hands, description)``) wait for a supervisor; until then
    the round's placements stay the procedure's own);
    ``CardEvidence(index, code, reader_id, shoe_ms, time_ms)``; ``CountReport(position, count,
    reporter, time_ms)``.

Errors (``errors.py``): ``RoundOperationError`` (ValueError) and subclasses
    ``WrongStateError``, ``WagersClosedError`` (5.5-5.6), ``UnknownWagerError``,
    ``BadSeatError``, ``BadAmountError``, ``DuplicateShoeIndexError``, ``DecisionError``,
    ``UnknownFlagError``, ``ProcedureError``; ``ExposureMismatchError`` (an exposure whose
    ``shoe_index`` and ``place`` name different cards); ``UnequalWagersError`` (a
    ``BadAmountError``: Let It Ride's 1, 2 and $ unequal or incomplete, 3.4); ``CandidateError``
    (a confirmation naming no candidate of a PLACEMENT_PROPOSED flag, or none of several);
    ``MissingInputError`` (a ``WrongStateError`` with ``field``: an input the round lacks);
    ``RoundVoidError`` (a ``WrongStateError`` with ``rule``: play on a void round, refused by
    the table before it reaches the round).
"""

from .errors import (
    BadAmountError,
    BadSeatError,
    CandidateError,
    DecisionError,
    DuplicateShoeIndexError,
    ExposureMismatchError,
    MissingInputError,
    ProcedureError,
    RoundOperationError,
    RoundVoidError,
    UnequalWagersError,
    UnknownFlagError,
    UnknownWagerError,
    WagersClosedError,
    WrongStateError,
)
from .events import (
    BetsClosed,
    CardAfterVoid,
    CardEvidence,
    CardNotDue,
    CardPlaced,
    CountChecked,
    CountReport,
    DecisionKind,
    DecisionRecorded,
    Event,
    ExposureRecorded,
    FlagResolved,
    Flagged,
    HandComplete,
    HandsRebuilt,
    Irregularity,
    IrregularityKind,
    PlacementCandidate,
    RoundSettled,
    RoundVoided,
    SeatVoided,
    VoidMark,
    WagerAccepted,
)
from .operations import (
    ChangeWager,
    Choice,
    DealComplete,
    Decision,
    DeckFault,
    DeckIrregularity,
    ExposureDeclared,
    HandCountReported,
    NoMoreBets,
    OpenRound,
    Operation,
    PlaceWager,
    PlayerAbsent,
    ProgressiveSelection,
    Settle,
    ShoeCard,
    ShoePowerFailure,
    Source,
    SupervisorConfirmation,
    VoidRound,
    WagerWithdrawn,
    operation_from_json,
    operation_to_json,
)
from .places import MAX_SEATS, Place, PlaceKind, Position
from .procedures import (
    BASE_WAGERS,
    GAME_IDS,
    WAGERS,
    CountPoint,
    DealingProcedure,
    Device,
    GameRules,
    Phase,
    XtremeMethod,
    build_procedure,
    game_rules,
)
from .round import Exposure, Round, RoundStatus

__all__ = [
    "BadAmountError", "BadSeatError", "DecisionError", "DuplicateShoeIndexError", "ExposureMismatchError", "ProcedureError",
    "UnequalWagersError", "CandidateError", "MissingInputError", "PlacementCandidate",
    "RoundOperationError", "RoundVoidError", "UnknownFlagError", "UnknownWagerError", "WagersClosedError", "WrongStateError",
    "BetsClosed", "CardAfterVoid", "CardEvidence", "CardNotDue", "CardPlaced", "CountChecked", "CountReport",
    "DecisionKind",
    "DecisionRecorded", "Event", "ExposureRecorded", "FlagResolved", "Flagged", "HandComplete", "HandsRebuilt",
    "Irregularity", "IrregularityKind", "RoundSettled", "RoundVoided", "SeatVoided", "VoidMark", "WagerAccepted",
    "ChangeWager", "Choice", "DealComplete", "Decision", "DeckFault", "DeckIrregularity", "ExposureDeclared",
    "HandCountReported", "NoMoreBets", "OpenRound", "Operation", "PlaceWager", "PlayerAbsent",
    "ProgressiveSelection", "Settle", "ShoeCard", "ShoePowerFailure", "Source", "SupervisorConfirmation", "VoidRound", "WagerWithdrawn",
    "operation_from_json", "operation_to_json",
    "MAX_SEATS", "Place", "PlaceKind", "Position",
    "BASE_WAGERS", "GAME_IDS", "WAGERS", "CountPoint", "DealingProcedure", "Device", "GameRules", "Phase",
    "XtremeMethod", "build_procedure", "game_rules",
    "Exposure", "Round", "RoundStatus",
]
