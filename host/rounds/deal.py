"""The deal: each shoe card placed by the dealing procedure, and the count points that close a phase.

A card goes to the next place of the open phase; a card when none is due, or a count point
that finds too few, opens a count flag (:mod:`.counts`). A card's identity (foreign,
duplicate, unread) is checked as it comes (:mod:`.irregularities`).

Choices made where the rules are silent:

- The first card out of the shoe closes betting if "no more bets" was not announced: the rules
  take wagers "prior to the first card being dealt" (3.4), so a card is the latest point.
- Count points are the "deal complete" key, the first decision and settlement (the dealer's
  hand in Xtreme method B is checked by a second key press or at settlement).
"""

from __future__ import annotations

from .counts import count_flag
from .errors import DuplicateShoeIndexError, RoundOperationError, WrongStateError
from .events import (
    CardAfterVoid,
    CardEvidence,
    CardNotDue,
    CardPlaced,
    CountChecked,
    DecisionKind,
    Event,
    HandComplete,
    Irregularity,
    IrregularityKind,
)
from .irregularities import deck_flag
from .operations import DealComplete, DeckFault, ShoeCard
from .places import PlaceKind, Position
from .procedures import CountPoint
from .state import RoundState, RoundStatus
from .wagers import close_bets


def verify_shoe_card(rnd: RoundState, op: ShoeCard) -> None:
    """A card out of the shoe: a valid index and code, not already in this round."""
    if not isinstance(op.index, int) or op.index < 1:
        raise RoundOperationError(f"shoe index must be 1 or more, got {op.index!r}")
    if op.code is not None and (not isinstance(op.code, int) or not 0 <= op.code <= 51):
        raise RoundOperationError(f"card code must be 0..51 or None (unread), got {op.code!r}")
    if (rnd.shoe_no is None or op.shoe_no == rnd.shoe_no) and op.index in rnd.cards:
        raise DuplicateShoeIndexError(f"shoe {op.shoe_no} card {op.index} is already in round {rnd.round_id}")
    if any(c.shoe_no == op.shoe_no and c.index == op.index for c in rnd.other_shoe_cards):
        raise DuplicateShoeIndexError(f"shoe {op.shoe_no} card {op.index} is already in round {rnd.round_id}")
    if op.after_void and rnd.void is None:
        raise WrongStateError(f"round {rnd.round_id} is not void; shoe card {op.index} is dealt, not recorded after a void")


def do_shoe_card(rnd: RoundState, op: ShoeCard, events: list[Event]) -> None:
    if op.after_void:
        _after_void(rnd, op, events)
        return
    if rnd.shoe_no is not None and op.shoe_no != rnd.shoe_no:
        # A card of another shoe session in the same round: not of the deck in use (5.1).
        rnd.other_shoe_cards.append(op)
        ev = CardEvidence(op.index, op.code, op.reader_id, op.shoe_ms, op.time_ms)
        rnd.add_flag(deck_flag(rnd, DeckFault.FOREIGN, f"card from shoe session {op.shoe_no} while round dealt from {rnd.shoe_no}", (ev,), "shoe"), events)
        return
    rnd.shoe_no = op.shoe_no
    if rnd.status is RoundStatus.BETTING:
        close_bets(rnd, events)  # 3.4: wagers are placed before the first card is dealt
    rnd.cards[op.index] = op
    i = rnd.phase_index()
    if i is not None and rnd.procedure is not None:
        phase, state = rnd.procedure.phases[i], rnd.phase_states[i]
        if len(state.indices) < len(phase.places):
            place = phase.places[len(state.indices)]
            state.indices.append(op.index)
            rnd.placements[op.index] = place
            events.append(CardPlaced(op.index, place, op.code, place in rnd.procedure.public_places, op.reader_id, op.shoe_ms))
            _hand_complete(rnd, place.position, events)
        else:
            state.indices.append(op.index)
            _not_due(rnd, op, i, events)
    else:
        # No phase open: a card between phases (method B before all decisions) or after the last.
        last = max((k for k, ph in enumerate(rnd.phase_states) if ph.opened), default=None)
        if last is not None:
            rnd.phase_states[last].indices.append(op.index)
        _not_due(rnd, op, last, events)
    _check_card_identity(rnd, op, events)


def _after_void(rnd: RoundState, op: ShoeCard, events: list[Event]) -> None:
    """A card out of the shoe for the round already void: every wager of the round is returned
    (5.1.1; 6.1 for a supervisor's void), so no hand takes it and nothing is counted or flagged
    by it. It is kept in the round's cards among those not dealt into a place (an
    ``out_of_play`` discard of the round file) and referred to the shift manager: no rule says
    what a card drawn after a void is (reading 76; 6.1 for every game, as the table's other
    referrals, reading 47)."""
    assert rnd.void is not None
    if rnd.shoe_no is not None and op.shoe_no != rnd.shoe_no:
        rnd.other_shoe_cards.append(op)  # another session's index may repeat this one's
    else:
        rnd.shoe_no = op.shoe_no
        rnd.cards[op.index] = op
        rnd.not_due.append(op.index)
    evidence = CardEvidence(op.index, op.code, op.reader_id, op.shoe_ms, op.time_ms)
    rules = ", ".join(rnd.void.rules)
    events.append(CardAfterVoid(
        op.index, op.code, op.reader_id, op.shoe_ms, rnd.void.rules, "6.1", ("6.1",), DecisionKind.REFERRED.value,
        f"shoe card {op.index} left the shoe after round {rnd.round_id} was void ({rules}); it is dealt into no "
        "hand: referred to the shift manager", (evidence,)))


def _hand_complete(rnd: RoundState, position: Position, events: list[Event]) -> None:
    if rnd.procedure is None or position.kind not in (PlaceKind.SEAT, PlaceKind.DEALER, PlaceKind.COMMUNITY):
        return
    if len(rnd.hand(position)) == rnd.procedure.expected(position):
        events.append(HandComplete(position, rnd.hand(position)))


def _not_due(rnd: RoundState, op: ShoeCard, phase: int | None, events: list[Event]) -> None:
    rnd.not_due.append(op.index)
    events.append(CardNotDue(op.index, op.code, op.reader_id, op.shoe_ms))
    if rnd.void is not None:
        return  # the round is void already; the card is recorded as evidence only
    evidence = (rnd.card_evidence(op.index),)
    if phase is None or rnd.procedure is None:
        flag = Irregularity(
            0, IrregularityKind.CARD_NOT_DUE, rnd.rules.reconstruction, "a card left the shoe with no seat in play",
            DecisionKind.VOID_ROUND, "host", None, evidence, time_ms=op.time_ms,
        )
        rnd.add_flag(flag, events)
        return
    count_flag(rnd, phase, IrregularityKind.CARD_NOT_DUE, evidence, op.time_ms, events)


def _check_card_identity(rnd: RoundState, op: ShoeCard, events: list[Event]) -> None:
    ev = (CardEvidence(op.index, op.code, op.reader_id, op.shoe_ms, op.time_ms),)
    # Foreign first: an ID that maps to no card of the deck (code None, foreign flag) is a
    # foreign card, not an unread one.
    if op.foreign:
        fault, detail = DeckFault.FOREIGN, f"card {op.index} does not belong to the deck in use (deck {op.deck_id}, reader {op.reader_id or 'none'})"
    elif op.code is None:
        fault, detail = DeckFault.UNREAD, f"card {op.index} left the shoe unread"
    elif op.duplicate or any(c.code == op.code for i, c in rnd.cards.items() if i != op.index):
        fault, detail = DeckFault.DUPLICATE, f"card {op.index} repeats a card already dealt from this deck"
    else:
        return
    rnd.add_flag(deck_flag(rnd, fault, detail, ev, "shoe"), events)


# ---- count points ------------------------------------------------------------------------

def close_phase(rnd: RoundState, point: CountPoint, time_ms: int, events: list[Event]) -> None:
    """A count point: close the open phase and flag it if it holds too few cards."""
    i = rnd.phase_index()
    if i is None or rnd.procedure is None:
        return
    ph, state = rnd.procedure.phases[i], rnd.phase_states[i]
    state.closed = True
    expected = len(ph.places)
    dealt = len(state.indices)
    events.append(CountChecked(ph.name, point.value, expected, dealt))
    if dealt < expected and rnd.void is None:
        evidence = tuple(rnd.card_evidence(k) for k in state.indices)
        count_flag(rnd, i, IrregularityKind.TOO_FEW_CARDS, evidence, time_ms, events)
    rnd.status = RoundStatus.DECIDING if ph.name == "deal" else RoundStatus.COMPLETE
    rnd.maybe_open_dealer_phase(events)


def verify_deal_complete(rnd: RoundState, op: DealComplete) -> None:
    """The "deal complete" key (or the table's): a phase must be open."""
    if rnd.phase_index() is None:
        raise WrongStateError(f"no deal is in progress ({rnd.status.value}); 'deal complete' refused")


def do_deal_complete(rnd: RoundState, op: DealComplete, events: list[Event]) -> None:
    close_phase(rnd, CountPoint.DEAL_COMPLETE, op.time_ms, events)
