"""Let It Ride's Magic Card and Lucky Player (4.3-4.5) and a round that must always be
completable: a round with a progressive wager in play cannot be settled until the system's
selection is on record (4.3, 4.4: "the system-selected Magic Card ... for that round of play";
"selected by the system as the Lucky Player for that round of play"), so settling without it is
refused naming what is missing, and the round stays in play: the selection can still be recorded
(late, kept on the record: reading 70) and the round settled, or a supervisor can void it."""

from __future__ import annotations

import pytest

from cardshoe.cards import parse_card
from cardshoe.rounds import (
    Choice,
    Decision,
    DecisionKind,
    IrregularityKind,
    MissingInputError,
    NoMoreBets,
    PlaceWager,
    ProgressiveSelection,
    Round,
    RoundOperationError,
    RoundStatus,
    Settle,
    VoidRound,
    WrongStateError,
)
from cardshoe.settlement import parse_round, settle

from rounds_helpers import cards, deal, open_round

LIR = "megalink-let-it-ride"
STAKE = 2500  # each of the 1, 2 and $ (3.4)
PROGRESSIVE = 100
LIMITS = {w: {"min": 100, "max": 100_000} for w in ("one", "two", "dollar")} | {"progressive": {"min": 100, "max": 500}}
# Seat 1's three cards, then the two community cards (3.6, 3.7): K-7-2 / 9-4, five odd cards,
# no pair of tens or better (3.3: every wager in play loses), no progressive hand (4.2).
SEAT_1, COMMUNITY = "Kh 7c 2d", "9s 4h"


def _dealt(*, progressive: bool = True, seats: tuple[int, ...] = (1,)) -> Round:
    """Seat 1 (and any other seats) with the 1, 2 and $, seat 1's progressive, dealt and decided
    (both wagers let ride, 3.9 and 3.13); no Magic Card or Lucky Player recorded."""
    rnd = open_round(LIR, seats=seats, amount=STAKE, close=False)
    if progressive:
        rnd.do(PlaceWager(seat=1, wager="progressive", amount=PROGRESSIVE, time_ms=1001))
    rnd.do(NoMoreBets(time_ms=1002))
    extra = " ".join(["3c 5d 8s", "Jc Qd 6s"][: len(seats) - 1])
    deal(rnd, cards(" ".join(x for x in (SEAT_1, extra, COMMUNITY) if x)))
    for seat in seats:
        rnd.do(Decision(seat=seat, choice=Choice.RIDE_1, time_ms=3_000_000))
        rnd.do(Decision(seat=seat, choice=Choice.RIDE_2, time_ms=3_000_001))
    return rnd


def _net(rnd: Round, seat: int) -> int:
    data = rnd.to_round_json(limits=LIMITS, jackpot_reset=500_000)
    result = settle(parse_round(data)).to_json()
    return int(next(s["net"] for s in result["seats"] if s["seat"] == seat))


def test_settling_without_the_selection_is_refused_naming_both_and_changes_nothing() -> None:
    rnd = _dealt()
    before, ops = rnd.snapshot(), len(rnd.operations)
    rnd_settle = Settle(jackpot_pool=1_000_000, time_ms=4_000_000)
    with pytest.raises(MissingInputError) as refused:
        rnd.do(rnd_settle)
    assert refused.value.field == "magic_card, lucky_seat"
    assert "Magic Card" in str(refused.value) and "Lucky Player" in str(refused.value)
    assert "4.3" in str(refused.value) and "4.4" in str(refused.value)
    assert isinstance(refused.value, WrongStateError)  # a state the round is in, not bad input
    # The round is still in play, exactly as it was: nothing closed it.
    assert rnd.snapshot() == before and len(rnd.operations) == ops
    assert rnd.status is not RoundStatus.SETTLED


def test_the_missing_selection_recorded_late_settles_and_pays_the_magic_card_4_3() -> None:
    rnd = _dealt()
    # The system's Magic Card was the king of hearts (in seat 1's three cards: 4.3), its
    # Lucky Player seat 4 (not seat 1: 4.4 pays nothing here).
    events = rnd.do(ProgressiveSelection(magic_card=parse_card("Kh"), lucky_seat=None, time_ms=4_000_000))
    (flag,) = rnd.irregularities
    assert [e.kind for e in events] == ["flagged"]
    assert flag.kind is IrregularityKind.NOT_COVERED and flag.rules == ("4.3", "4.4")
    assert flag.decision is DecisionKind.ACKNOWLEDGED and not flag.open  # on record, blocks nothing
    assert "Kh" in flag.detail and "after the first card" in flag.detail and "5 card(s)" in flag.detail
    # Only the Lucky Player is missing now, and the refusal says so.
    with pytest.raises(MissingInputError) as refused:
        rnd.do(Settle(jackpot_pool=1_000_000))
    assert refused.value.field == "lucky_seat"
    rnd.do(ProgressiveSelection(magic_card=None, lucky_seat=4, time_ms=4_000_001))
    assert (rnd.magic_card, rnd.lucky_seat) == (parse_card("Kh"), 4)
    assert len(rnd.irregularities) == 2 and "Lucky Player seat 4" in rnd.irregularities[1].detail
    rnd.do(Settle(jackpot_pool=1_000_000, time_ms=4_000_002))
    assert rnd.status is RoundStatus.SETTLED and rnd.void is None
    # 3.3: no pair of tens or better, the 1, 2 and $ (all let ride) lose; 4.3/4.5: the Magic
    # Card in the player's three cards pays the progressive wager 5 to 1.
    assert _net(rnd, 1) == -3 * STAKE + 5 * PROGRESSIVE
    # The late record replays to the same round (the journal's operations rebuild it).
    assert Round.replay(rnd.operations).snapshot() == rnd.snapshot()


def test_a_supervisor_can_void_the_round_instead_and_every_wager_is_returned() -> None:
    rnd = _dealt()
    with pytest.raises(MissingInputError):
        rnd.do(Settle())
    rnd.do(VoidRound(rule="6.1", reason="Magic Card not recorded by the progressive system", by="SM-4"))
    rnd.do(Settle())
    assert rnd.status is RoundStatus.SETTLED and rnd.void is not None
    data = rnd.to_round_json(limits=LIMITS, jackpot_reset=500_000)
    result = settle(parse_round(data)).to_json()
    assert result["void"] is not None and {s["net"] for s in result["seats"]} == {0}


def test_after_the_first_card_a_recorded_selection_cannot_be_changed() -> None:
    rnd = open_round(LIR, seats=(1,), amount=STAKE, close=False)
    rnd.do(PlaceWager(seat=1, wager="progressive", amount=PROGRESSIVE))
    rnd.do(ProgressiveSelection(magic_card=parse_card("2s"), lucky_seat=None))
    rnd.do(ProgressiveSelection(magic_card=parse_card("3s"), lucky_seat=None))  # before the deal: free
    rnd.do(NoMoreBets())
    deal(rnd, cards(SEAT_1 + " " + COMMUNITY))
    with pytest.raises(WrongStateError, match="cannot be changed"):
        rnd.do(ProgressiveSelection(magic_card=parse_card("Kh"), lucky_seat=2))
    with pytest.raises(WrongStateError, match="nothing new"):
        rnd.do(ProgressiveSelection(magic_card=parse_card("3s"), lucky_seat=None))
    assert rnd.magic_card == parse_card("3s") and rnd.lucky_seat is None and rnd.irregularities == ()
    # Repeating the recorded card while giving the missing seat records the seat only.
    rnd.do(ProgressiveSelection(magic_card=parse_card("3s"), lucky_seat=2))
    assert (rnd.magic_card, rnd.lucky_seat) == (parse_card("3s"), 2)
    (flag,) = rnd.irregularities
    assert "Lucky Player seat 2" in flag.detail and "Magic Card" not in flag.detail


def test_a_bad_late_selection_is_refused_by_type() -> None:
    rnd = _dealt()
    with pytest.raises(RoundOperationError, match="magic_card"):
        rnd.do(ProgressiveSelection(magic_card=52, lucky_seat=None))
    with pytest.raises(RoundOperationError, match="seat"):
        rnd.do(ProgressiveSelection(magic_card=None, lucky_seat=9))
    assert rnd.irregularities == () and rnd.magic_card is None


def test_no_progressive_wager_needs_no_selection() -> None:
    """4.3-4.4 qualify only players with a progressive wager: without one, nothing is missing."""
    rnd = _dealt(progressive=False)
    rnd.do(Settle())
    assert rnd.status is RoundStatus.SETTLED and _net(rnd, 1) == -3 * STAKE


def test_a_settle_the_check_after_it_refuses_is_undone_whole() -> None:
    """`do_then`: an operation that stands only if a check after it passes (the daemon's
    settlement engine) leaves the round exactly as it was when the check raises."""
    rnd = _dealt()
    rnd.do(ProgressiveSelection(magic_card=parse_card("Ac"), lucky_seat=3))
    before, ops, events = rnd.snapshot(), rnd.operations, rnd.events

    def refuse(r: Round) -> None:
        assert r.status is RoundStatus.SETTLED  # the check sees the closed round
        raise ValueError("jackpot.pool: missing")

    with pytest.raises(ValueError, match="jackpot.pool"):
        rnd.do_then(Settle(), refuse)
    assert rnd.snapshot() == before and rnd.operations == ops and rnd.events == events
    done, value = rnd.do_then(Settle(jackpot_pool=1), lambda r: r.status)
    assert value is RoundStatus.SETTLED and [e.kind for e in done] == ["round_settled"]
