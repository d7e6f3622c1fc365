"""Fixes after the black-box review: a manual deal's slip left to a supervisor (3.8, 5.7, 5.2),
Let It Ride's three equal wagers (3.4), exposure declarations that contradict themselves,
and the 5.4 void's evidence and the record of the referral it supersedes."""

from __future__ import annotations

import pytest

from cardshoe.rounds import (
    CandidateError,
    ChangeWager,
    Choice,
    DealComplete,
    Decision,
    DecisionKind,
    ExposureDeclared,
    ExposureMismatchError,
    HandCountReported,
    NoMoreBets,
    Place,
    PlaceKind,
    PlaceWager,
    Position,
    Round,
    Settle,
    Source,
    SupervisorConfirmation,
    UnequalWagersError,
    operation_from_json,
    operation_to_json,
)

from rounds_helpers import deal, open_round

TCP = "three-card-poker"
LIR = "megalink-let-it-ride"
STUD = "megalink-singapore-stud-poker"
SEATS = (2, 5, 7)
LIMITS = {"ante": {"min": 100, "max": 100000}, "one": {"min": 100, "max": 100000}}


def _short_seat_7(deck: list[int], game: str = TCP) -> tuple[Round, int]:
    """Manual deal to seats 2, 5, 7 and the dealer, one card short; seat 7 counted one short."""
    rnd = open_round(game, "manual", None, SEATS)
    assert rnd.procedure is not None
    size = rnd.procedure.hand_size
    deal(rnd, deck[: len(rnd.procedure.places) - 1])
    rnd.do(DealComplete())
    (flag,) = rnd.pending_flags
    rnd.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=size - 1, reporter="dealer"))
    return rnd, flag.id


def test_manual_seat_short_offers_one_candidate_per_pass(deck) -> None:
    rnd, fid = _short_seat_7(deck)
    flag = rnd.irregularities[fid - 1]
    assert flag.decision is DecisionKind.PLACEMENT_PROPOSED and flag.open
    assert flag.rules == ("5.7", "5.2") and flag.fallback is DecisionKind.VOID_ROUND
    assert len(flag.evidence) == 11  # every card of the phase
    hands = {c.slip_pass: dict(c.hands) for c in flag.candidates}
    assert sorted(hands) == [1, 2, 3]
    # Missed in pass 1: 2, 5, D | 2, 5, 7, D | 2, 5, 7, D.
    assert hands[1][Position.seat_(2)] == (1, 4, 8) and hands[1][Position.DEALER] == (3, 7, 11)
    assert hands[1][Position.seat_(7)] == (6, 10)
    # Missed in pass 3 (the last): 2, 5, 7, D | 2, 5, 7, D | 2, 5, D.
    assert hands[3][Position.seat_(2)] == (1, 5, 9) and hands[3][Position.DEALER] == (4, 8, 11)
    assert hands[2][Position.DEALER] == (4, 7, 11)
    assert not rnd.void_seats and rnd.void is None  # nothing applied yet
    assert not rnd.can(Settle())


def test_manual_seat_short_confirmed_candidate_places_hands_and_voids_the_seat(deck) -> None:
    rnd, fid = _short_seat_7(deck)
    with pytest.raises(CandidateError) as info:
        rnd.do(SupervisorConfirmation(flag=fid, confirmed=True, supervisor="SUP-1"))
    assert "candidate" in str(info.value)
    with pytest.raises(CandidateError):
        rnd.do(SupervisorConfirmation(flag=fid, confirmed=True, supervisor="SUP-1", candidate=4))
    first = next(c for c in rnd.irregularities[fid - 1].candidates if c.slip_pass == 1)
    rnd.do(SupervisorConfirmation(flag=fid, confirmed=True, supervisor="SUP-1", candidate=first.number))
    flag = rnd.irregularities[fid - 1]
    assert flag.decision is DecisionKind.VOID_SEAT and flag.rules == ("5.7",) and flag.resolved_by == "SUP-1"
    assert set(rnd.void_seats) == {7} and rnd.void_seats[7].rules == ("5.7",)
    assert rnd.hand(Position.seat_(2)) == tuple(deck[i - 1] for i in (1, 4, 8))
    assert rnd.hand(Position.DEALER) == tuple(deck[i - 1] for i in (3, 7, 11))
    for seat in (2, 5):
        rnd.do(Decision(seat=seat, choice=Choice.PLAY))
    rnd.do(Settle())
    from cardshoe.settlement import parse_round, settle

    out = settle(parse_round(rnd.to_round_json(limits=LIMITS))).to_json()
    by_seat = {s["seat"]: {w["wager"]: w["outcome"] for w in s["wagers"]} for s in out["seats"]}
    assert by_seat[7] == {"ante": "returned"} and out["void"] is None
    # Replay (through the journal's JSON) gives the same round.
    again = Round.replay(operation_from_json(operation_to_json(op)) for op in rnd.operations)
    assert again.snapshot() == rnd.snapshot()


def test_manual_seat_short_refused_voids_the_round(deck) -> None:
    rnd, fid = _short_seat_7(deck, STUD)
    rnd.do(SupervisorConfirmation(flag=fid, confirmed=False, supervisor="SUP-1"))
    assert rnd.void is not None and rnd.void.rules == ("5.2",)
    assert not rnd.pending_flags
    rnd.do(Settle())
    from cardshoe.settlement import parse_round, settle

    out = settle(parse_round(rnd.to_round_json(limits=LIMITS))).to_json()
    assert out["void"] is not None and out["totals"]["net"] == 0


def test_manual_seat_long_offers_candidates_including_after_the_last_pass(deck) -> None:
    rnd = open_round(TCP, "manual", None, SEATS)
    deal(rnd, deck[:13])  # card 13 is not due
    (flag,) = rnd.pending_flags
    rnd.do(HandCountReported(flag=flag.id, position=Position.seat_(5), count=4, reporter="dealer"))
    flag = rnd.irregularities[flag.id - 1]
    assert flag.decision is DecisionKind.PLACEMENT_PROPOSED
    assert [c.slip_pass for c in flag.candidates] == [1, 2, 3, 4]
    hands = {c.slip_pass: dict(c.hands) for c in flag.candidates}
    assert hands[1][Position.seat_(5)] == (2, 3, 7, 11)  # two cards in pass 1
    assert hands[4][Position.seat_(5)] == (2, 6, 10, 13)  # after everyone's last card
    assert hands[4][Position.DEALER] == (4, 8, 12)


def test_slip_that_moves_no_other_hand_gives_one_candidate(deck) -> None:
    """A seat dealt alone one card per pass, then a separate packet: whichever pass it missed,
    every other card lies in the same place, so the only question is the 5.7 void of that seat."""
    from cardshoe.rounds.counts import slip_candidates
    from cardshoe.rounds.layout import slip_passes
    from cardshoe.rounds.procedures import CountPoint, Group, Phase, Unit

    seat = Position.seat_(3)
    phase = Phase(
        "deal",
        (
            Group((Unit(seat, tuple(Place(PlaceKind.SEAT, 3, n) for n in (1, 2, 3))),), True),
            Group((Unit(Position.COMMUNITY, (Place(PlaceKind.COMMUNITY, 0, 1), Place(PlaceKind.COMMUNITY, 0, 2))),), False),
        ),
        "no_more_bets",
        (CountPoint.DEAL_COMPLETE,),
    )
    passes = slip_passes(phase, seat, 2)
    assert passes == (1, 2, 3)
    (cand,) = slip_candidates(phase, [1, 2, 3, 4], {seat: 2}, seat, 2, passes)
    assert dict(cand.hands) == {seat: (1, 2), Position.COMMUNITY: (3, 4)}


def test_manual_two_seats_short_cannot_be_shown_round_void(deck) -> None:
    rnd = open_round(TCP, "manual", None, SEATS)
    deal(rnd, deck[:10])
    rnd.do(DealComplete())
    (flag,) = rnd.pending_flags
    rnd.do(HandCountReported(flag=flag.id, position=Position.seat_(5), count=2, reporter="dealer"))
    rnd.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=2, reporter="dealer"))
    assert rnd.void is not None and rnd.void.rules == ("5.7", "5.2")
    assert not rnd.pending_flags


def test_automated_seat_short_still_decided_at_once(deck) -> None:
    """Automated packets are contiguous: the layout is exact and 5.7 applies without a supervisor."""
    rnd = open_round(TCP, "automated", None, SEATS)
    deal(rnd, deck[:11])
    rnd.do(DealComplete())
    (flag,) = rnd.pending_flags
    rnd.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=2, reporter="dealer"))
    assert set(rnd.void_seats) == {7} and not rnd.pending_flags


# ---- Let It Ride 3.4 ---------------------------------------------------------------------


def test_lir_unequal_wager_refused_naming_it_and_3_4() -> None:
    rnd = open_round(LIR, seats=(), close=False)
    rnd.do(PlaceWager(seat=1, wager="one", amount=2500))
    snap = rnd.snapshot()
    with pytest.raises(UnequalWagersError) as info:
        rnd.do(PlaceWager(seat=1, wager="two", amount=1000))
    assert "'two'" in str(info.value) and "3.4" in str(info.value)
    assert rnd.snapshot() == snap


def test_lir_incomplete_wagers_refused_at_no_more_bets() -> None:
    rnd = open_round(LIR, seats=(), close=False)
    rnd.do(PlaceWager(seat=3, wager="one", amount=2500))
    rnd.do(PlaceWager(seat=3, wager="two", amount=2500))
    with pytest.raises(UnequalWagersError) as info:
        rnd.do(NoMoreBets())
    assert "'dollar'" in str(info.value) and "3.4" in str(info.value)


def test_lir_change_or_withdrawal_moves_all_three() -> None:
    rnd = open_round(LIR, seats=(1, 2), close=False)
    events = rnd.do(ChangeWager(seat=1, wager="two", amount=4000))
    assert rnd.wagers[1] == {"one": 4000, "two": 4000, "dollar": 4000}
    assert [e.wager for e in events] == ["two", "one", "dollar"]  # type: ignore[attr-defined]
    rnd.do(ChangeWager(seat=2, wager="one", amount=0))
    assert 2 not in rnd.wagers


# ---- exposures ---------------------------------------------------------------------------


def test_exposure_index_and_place_must_agree(deck) -> None:
    rnd = open_round(TCP, seats=SEATS)
    deal(rnd, deck[:5])
    snap = rnd.snapshot()
    with pytest.raises(ExposureMismatchError) as info:
        rnd.do(ExposureDeclared(source=Source.TABLE, shoe_index=1, place=Place(PlaceKind.SEAT, 5, 1)))
    assert "seat 2 card 1" in str(info.value) and "seat 5 card 1" in str(info.value)
    assert rnd.snapshot() == snap
    rnd.do(ExposureDeclared(source=Source.TABLE, shoe_index=1, place=Place(PlaceKind.SEAT, 2, 1)))  # agreeing: fine


def test_second_exposure_void_carries_both_cards_and_supersedes_the_referral(deck) -> None:
    rnd = open_round(TCP, seats=SEATS)
    deal(rnd, deck[:5])
    rnd.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))
    rnd.do(ExposureDeclared(source=Source.TABLE, shoe_index=4))
    first, void = rnd.irregularities
    assert [e.index for e in void.evidence] == [2, 4] and void.rules == ("5.4",)
    assert first.decision is DecisionKind.VOID_ROUND and "referred" not in first.detail
    assert f"#{void.id}" in first.detail and "5.4" in first.detail
    rnd.do(Settle())
    notes = [i["note"] for i in rnd.to_round_json(limits=LIMITS)["irregularities"]]
    assert notes and not any("referred" in n for n in notes)


# ---- export: discards, LIR wrong count ---------------------------------------------------


def _settled(rnd: Round) -> dict:  # type: ignore[type-arg]
    from cardshoe.settlement import parse_round, settle

    return settle(parse_round(rnd.to_round_json(limits=LIMITS))).to_json()


def test_export_lists_a_surplus_hand_as_discard_and_settles(deck) -> None:
    """5.2: the spare hand moved off the table is out of play with role "discard"."""
    from cardshoe.cards import card_text

    rnd = open_round(TCP, "automated", None, (1, 3))
    deal(rnd, deck[:12])  # a hand dealt to seat 2, which holds no wager
    rnd.do(HandCountReported(flag=1, position=Position.seat_(2), count=3, reporter="dealer"))
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="PS Wong"))
    for seat in (1, 3):
        rnd.do(Decision(seat=seat, choice=Choice.PLAY))
    rnd.do(Settle())
    data = rnd.to_round_json(limits=LIMITS)
    assert [o for o in data["out_of_play"] if o["role"] == "discard"] == [
        {"card": card_text(c), "role": "discard"} for c in deck[9:12]
    ]
    assert _settled(rnd)["void"] is None


def test_export_lists_a_card_drawn_in_error_as_discard(deck) -> None:
    from cardshoe.cards import card_text

    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:7])
    rnd.do(HandCountReported(flag=1, position=Position.DISCARD, count=1, reporter="dealer"))
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="SM Lim"))
    rnd.do(Decision(seat=1, choice=Choice.FOLD))
    rnd.do(Settle())
    data = rnd.to_round_json(limits=LIMITS)
    assert {"card": card_text(deck[6]), "role": "discard"} in data["out_of_play"]
    assert _settled(rnd)["void"] is None


def test_lir_wrong_count_at_one_area_voids_round_under_5_3_and_settles(deck) -> None:
    """Readings 35/42: rounds and settlement agree; exported as a misdeal, not a 5.7 hand."""
    rnd = open_round(LIR, "automated", None, (2, 5))
    deal(rnd, deck[:9])  # 3 + 3 + 2 community are due: card 9 is not
    rnd.do(HandCountReported(flag=1, position=Position.seat_(2), count=4, reporter="dealer"))
    assert rnd.void is not None and rnd.void.rules == ("5.3",)
    rnd.do(Settle())
    data = rnd.to_round_json(limits=LIMITS)
    assert [i["kind"] for i in data["irregularities"]] == ["misdeal"]
    out = _settled(rnd)
    assert out["void"] is not None and "5.3" in out["void"]["rules"] and out["totals"]["net"] == 0


def test_lir_first_card_with_a_partial_trio_returns_it_and_skips_the_seat(deck) -> None:
    """3.4: the first card closes betting (NoMoreBets would have refused); the partial wagers are
    returned, flagged, and the seat is not dealt to, so the exported round still settles."""
    rnd = open_round(LIR, seats=(2,), close=False)
    rnd.do(PlaceWager(seat=4, wager="one", amount=2500))
    rnd.do(PlaceWager(seat=4, wager="two", amount=2500))
    deal(rnd, deck[:5])
    assert rnd.active_seats() == (2,) and 4 not in rnd.wagers
    (flag,) = rnd.irregularities
    assert flag.rules == ("3.4",) and "seat 4" in flag.detail and not flag.open
    rnd.do(DealComplete())
    for choice in (Choice.RIDE_1, Choice.RIDE_2):
        rnd.do(Decision(seat=2, choice=choice))
    rnd.do(Settle())
    out = _settled(rnd)
    assert out["void"] is None and {s["seat"] for s in out["seats"]} == {2}
