"""Irregularities, each checked against the rule text (black box: no implementation read).

Rule numbers: TCP/MTCP/XT/SSP 5.1-5.8 and 6.1; LIR 5.1-5.7 (LIR numbers its rules one higher
from 5.2: shortage/excess 5.2, misdeal 5.3, community count 5.4, exposure 5.5, wagers 5.6-5.7,
and it has no 5.7-style seat-count rule and no 6.1).
"""

from __future__ import annotations

import pytest

from cardshoe.rounds import (
    CardNotDue,
    CardPlaced,
    ChangeWager,
    Choice,
    CountChecked,
    DealComplete,
    Decision,
    DecisionKind,
    DeckFault,
    DeckIrregularity,
    ExposureDeclared,
    ExposureRecorded,
    FlagResolved,
    HandCountReported,
    HandsRebuilt,
    IrregularityKind,
    NoMoreBets,
    Place,
    PlaceKind,
    PlaceWager,
    Position,
    Round,
    RoundStatus,
    RoundVoided,
    SeatVoided,
    Settle,
    Source,
    SupervisorConfirmation,
    WagersClosedError,
)

from rbb_helpers import (
    GAMES,
    LIR,
    MTCP,
    SSP,
    TCP,
    XT,
    C,
    D,
    S,
    base_wagers,
    bet,
    card,
    code_for,
    combos,
    deal,
    decide_all,
    dealt_round,
    expected_order,
    flags_of,
    hand_size,
    open_round,
)

SEATS = (2, 5, 7)


def misdeal_rule(game: str) -> str:
    # TCP/MTCP/XT/SSP 5.2, LIR 5.3: "dealt incorrectly ... void except if ... reconstructed".
    return "5.3" if game == LIR else "5.2"


def exposure_rule(game: str) -> str:
    # TCP/MTCP/XT/SSP 5.4, LIR 5.5: two or more exposed during the deal void the round.
    return "5.5" if game == LIR else "5.4"


def extra_missing_rule(game: str) -> str:
    # TCP/MTCP/XT/SSP 5.1 (extra or missing cards, foreign cards); LIR 5.2 (shortage/excess).
    return "5.2" if game == LIR else "5.1"


def closed_rules(game: str) -> tuple[str, str]:
    # TCP/MTCP/XT/SSP 5.5 (no wager placed or increased) and 5.6 (none withdrawn); LIR 5.6/5.7.
    return ("5.6", "5.7") if game == LIR else ("5.5", "5.6")


def all_flags_cite_rules(r: Round) -> None:
    for f in r.irregularities:
        assert f.rules, f"flag {f.id} ({f.kind}) carries no rule"
        assert all(isinstance(x, str) and x[0].isdigit() for x in f.rules), f.rules


def started(game: str, device: str = "automated", method: str | None = None, seats: tuple[int, ...] = SEATS) -> Round:
    r = open_round(game, device, method)
    bet(r, game, seats)
    r.do(NoMoreBets(time_ms=3))
    return r


def method_for(game: str) -> str | None:
    return "A" if game == XT else None


# --------------------------------------------------------------------------- not due


@pytest.mark.parametrize(("game", "device", "method"), combos())
def test_card_drawn_when_none_is_due(game: str, device: str, method: str | None) -> None:
    exp = expected_order(game, device, SEATS, method)
    r = started(game, device, method)
    n = len(exp.deal)
    deal(r, 1, n)
    before = dict(r.placements)
    ev = list(r.do(card(n + 1)))
    nd = [e for e in ev if isinstance(e, CardNotDue)]
    assert len(nd) == 1 and nd[0].index == n + 1 and nd[0].card == code_for(n + 1)
    assert nd[0].reader_id == f"{n + 1:08x}" and nd[0].shoe_ms == (n + 1) * 100
    assert not [e for e in ev if isinstance(e, CardPlaced)]  # not placed anywhere by guess
    assert n + 1 in r.not_due
    assert dict(r.placements) == before
    (flag,) = flags_of(ev)
    assert flag.kind == IrregularityKind.CARD_NOT_DUE
    # Too many cards: the deal was wrong (5.2 / LIR 5.3) until a person says where it went.
    assert misdeal_rule(game) in flag.rules
    assert flag.decision == DecisionKind.PENDING and flag.open
    assert [(e.index, e.reader_id, e.shoe_ms) for e in flag.evidence] == [(n + 1, f"{n + 1:08x}", (n + 1) * 100)]
    assert flag in r.pending_flags
    assert not r.can(Settle())  # a flag waiting for a person blocks settlement
    all_flags_cite_rules(r)


def test_xtreme_b_dealer_card_before_decisions_is_not_due() -> None:
    """XT 3.7.2.1: the dealer's three come only after every player has decided (3.9)."""
    r = started(XT, "automated", "B")
    deal(r, 1, 9 + 3)  # seats 2, 5, 7 + community 1, 2 + burn
    r.do(DealComplete())
    r.do(Decision(seat=2, choice=Choice.PLAY))
    ev = list(r.do(card(13)))
    assert [e.index for e in ev if isinstance(e, CardNotDue)] == [13]
    assert r.hand(Position.DEALER) == ()
    (flag,) = flags_of(ev)
    assert flag.kind == IrregularityKind.CARD_NOT_DUE and "5.2" in flag.rules


def test_xtreme_b_dealer_cards_due_after_all_decisions() -> None:
    r = started(XT, "automated", "B")
    deal(r, 1, 12)
    r.do(DealComplete())
    for s in SEATS:
        r.do(Decision(seat=s, choice=Choice.FOLD if s == 5 else Choice.PLAY))
    ev = deal(r, 13, 3)
    assert [(e.index, e.place) for e in ev if isinstance(e, CardPlaced)] == [
        (13 + k, Place(PlaceKind.DEALER, 0, k + 1)) for k in range(3)
    ]
    assert not flags_of(ev)


# --------------------------------------------------------------------------- too few


@pytest.mark.parametrize(("game", "device", "method"), combos())
def test_too_few_cards_at_deal_complete_is_flagged_pending(game: str, device: str, method: str | None) -> None:
    exp = expected_order(game, device, SEATS, method)
    n = len(exp.deal)
    r = started(game, device, method)
    deal(r, 1, n - 1)
    ev = list(r.do(DealComplete(time_ms=7000)))
    cc = [e for e in ev if isinstance(e, CountChecked)]
    assert cc and (cc[0].expected, cc[0].dealt) == (n, n - 1)
    (flag,) = flags_of(ev)
    assert flag.kind == IrregularityKind.TOO_FEW_CARDS
    # The shoe cannot tell which position is short: it waits for the table (pending), citing
    # the misdeal rule until a person's count names the position.
    assert flag.decision == DecisionKind.PENDING
    assert misdeal_rule(game) in flag.rules
    assert flag.time_ms == 7000  # the count point's time
    assert r.void is None and not r.void_seats
    assert not r.can(Settle())
    all_flags_cite_rules(r)


def _short_game_cases() -> list[tuple[str, str | None]]:
    return [(TCP, None), (MTCP, None), (XT, "A"), (XT, "B"), (XT, "C"), (SSP, None), (LIR, None)]


@pytest.mark.parametrize(("game", "method"), _short_game_cases())
def test_seat_short_one_card_voids_that_seat(game: str, method: str | None) -> None:
    """Automated device, seat 7 received one card too few of its packet.

    Derivation: the shoe's cards fill the procedure's places in order, skipping seat 7's
    last card, so every later position gets the next cards in turn. A 2-card hand cannot be
    reconstructed by moving complete hands (5.2), so 5.7 removes seat 7's hand and returns
    its wagers; the other hands play on. LIR has no 5.7: its 5.3 (dealt incorrectly, not
    reconstructable) voids the round. (docs/rule-readings.md 35 would apply MTCP 5.7 by
    analogy instead; see the report.)
    """
    exp = expected_order(game, "automated", SEATS, method)
    size = 5 if game == SSP else 3
    physical = [s for s in exp.deal if s != (S, 7, size)]
    r = started(game, "automated", method)
    deal(r, 1, len(physical))
    (flag,) = flags_of(list(r.do(DealComplete(time_ms=7000))))
    ev = list(r.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=size - 1, reporter="dealer D1", time_ms=7100)))
    assert any(isinstance(e, HandsRebuilt) for e in ev)
    want: dict[tuple[PlaceKind, int], list[int]] = {}
    for i, (k, seat, _num) in enumerate(physical):
        want.setdefault((k, seat), []).append(code_for(i + 1))
    for s in SEATS:
        assert r.hand(Position.seat_(s)) == tuple(want[(S, s)])
    assert r.hand(Position.DEALER) == tuple(want.get((D, 0), []))
    assert r.hand(Position.COMMUNITY) == tuple(want.get((C, 0), []))
    final = r.irregularities[-1] if r.irregularities[-1].id == flag.id else [f for f in r.irregularities if f.id == flag.id][0]
    assert not final.open
    assert Position.seat_(7) in final.wrong
    assert [rep.count for rep in final.reports] == [size - 1] and final.reports[0].reporter == "dealer D1"
    if game == LIR:
        assert r.void is not None and "5.3" in r.void.rules
        assert any(isinstance(e, RoundVoided) for e in ev)
    else:
        assert r.void is None
        assert set(r.void_seats) == {7} and r.void_seats[7].rules == ("5.7",)
        assert [(e.seat, e.rules) for e in ev if isinstance(e, SeatVoided)] == [(7, ("5.7",))]
        assert final.decision == DecisionKind.VOID_SEAT and final.void_seats == (7,)
    all_flags_cite_rules(r)


@pytest.mark.parametrize(("game", "method"), [(TCP, None), (MTCP, None), (XT, "A"), (XT, "C"), (SSP, None)])
def test_dealer_short_voids_round_5_3(game: str, method: str | None) -> None:
    exp = expected_order(game, "automated", SEATS, method)
    last_dealer = max(s for s in exp.deal if s[0] == D)
    physical = [s for s in exp.deal if s != last_dealer]
    r = started(game, "automated", method)
    deal(r, 1, len(physical))
    (flag,) = flags_of(list(r.do(DealComplete())))
    count = last_dealer[2] - 1 + (1 if method == "C" else 0)  # XT C's unit includes security
    ev = list(r.do(HandCountReported(flag=flag.id, position=Position.DEALER, count=count, reporter="d")))
    # TCP/MTCP/XT/SSP 5.3: a wrong count at the dealer voids the round.
    assert r.void is not None and "5.3" in r.void.rules
    assert [e for e in ev if isinstance(e, RoundVoided)]
    all_flags_cite_rules(r)


def test_xtreme_b_dealer_phase_short_voids_round() -> None:
    r = started(XT, "automated", "B")
    deal(r, 1, 12)
    r.do(DealComplete())
    decide_all(r, XT, SEATS)
    deal(r, 13, 2)
    (flag,) = flags_of(list(r.do(DealComplete())))
    assert flag.kind == IrregularityKind.TOO_FEW_CARDS and flag.phase == "dealer"
    r.do(HandCountReported(flag=flag.id, position=Position.DEALER, count=2, reporter="d"))
    assert r.void is not None and "5.3" in r.void.rules


@pytest.mark.parametrize(("game", "method", "unit", "rule"), [(MTCP, None, 2, "5.3"), (XT, "A", 2, "5.3"), (XT, "C", 2, "5.3"), (LIR, None, 1, "5.4")])
def test_community_short_voids_round(game: str, method: str | None, unit: int, rule: str) -> None:
    """MTCP/XT 5.3, LIR 5.4: an incorrect number of community cards voids the round.

    The Megalink unit is reported with its burn (API), so 2 instead of 3; LIR 1 instead of 2.
    """
    exp = expected_order(game, "automated", SEATS, method)
    r = started(game, "automated", method)
    deal(r, 1, len(exp.deal) - 1)
    (flag,) = flags_of(list(r.do(DealComplete())))
    r.do(HandCountReported(flag=flag.id, position=Position.COMMUNITY, count=unit, reporter="d"))
    assert r.void is not None and rule in r.void.rules
    all_flags_cite_rules(r)


# --------------------------------------------------------------------------- 5.2 reconstruction


def _extra_hand_round(game: str) -> tuple[Round, int, int]:
    """Automated, seats 2, 5, 7 wagered; the dealer also dealt a packet to empty seat 3.

    Shoe order as it really fell: seat 2 (packet 1), seat 3 in error (packet 2), seat 5
    (packet 3), seat 7 (packet 4), then the rest. The shoe only sees cards beyond the
    procedure (not due).
    """
    exp = expected_order(game, "automated", SEATS, method_for(game))
    r = started(game, "automated", method_for(game))
    total = len(exp.deal) + hand_size(game)
    deal(r, 1, total)
    r.do(DealComplete())
    (flag,) = r.pending_flags
    return r, flag.id, total


def _packet(k: int, size: int) -> tuple[int, ...]:
    return tuple(code_for(i) for i in range(k * size + 1, (k + 1) * size + 1))


@pytest.mark.parametrize("game", [TCP, MTCP, XT, SSP, LIR])
def test_reconstruction_proposed_then_applied_on_confirmation(game: str) -> None:
    size = hand_size(game)
    r, fid, total = _extra_hand_round(game)
    ev = list(r.do(HandCountReported(flag=fid, position=Position.seat_(3), count=size, reporter="dealer D1")))
    (prop,) = [f for f in flags_of(ev) if f.id == fid][-1:]
    # 5.2 (LIR 5.3): complete hands can be moved, so the deal is not void outright: the
    # daemon proposes and waits for a supervisor; the fallback if refused is a void round.
    assert prop.decision == DecisionKind.RECONSTRUCTION_PROPOSED
    assert misdeal_rule(game) in prop.rules
    assert prop.fallback == DecisionKind.VOID_ROUND
    assert prop.open and prop in r.pending_flags and not r.can(Settle())
    # Derivation of the reconstruction (5.2 "moving complete hands from one playing position
    # to another"): the hands go back into the procedure's sequence, so seat 3's hand
    # (packet 2) moves to seat 5, seat 5's to seat 7, seat 7's to the dealer (none in LIR),
    # and the last hand of the sequence, now surplus, goes out of play. The community unit
    # was dealt to its own area with the right count and is not a hand: it stays put.
    # (I first expected the community to be rebuilt from shoe order too, i.e. the dealer's
    # physical hand becoming community 1, 2 + burn; on re-reading, moving the dealer's hand
    # into the community area is not "moving complete hands between playing positions", so
    # the community staying is the better reading. Not in docs/rule-readings.md; see report.)
    exp = expected_order(game, "automated", SEATS, method_for(game))
    hands = [s for s in exp.deal if s[0] in (S, D)]
    unit = [s for s in exp.deal if s[0] not in (S, D)]
    want = {i + 1: Place(k, seat, num) for i, (k, seat, num) in enumerate(hands)}
    want.update({len(hands) + i + 1: Place(PlaceKind.DISCARD, 0, i + 1) for i in range(size)})
    want.update({len(hands) + size + i + 1: Place(k, seat, num) for i, (k, seat, num) in enumerate(unit)})
    assert len(want) == total
    assert dict(prop.proposal) == want
    # Proposed only: nothing applied before the supervisor confirms.
    assert r.hand(Position.seat_(5)) != _packet(1, size)
    with pytest.raises(Exception):
        r.do(Settle())
    ev2 = list(r.do(SupervisorConfirmation(flag=fid, confirmed=True, supervisor="SUP-9", time_ms=9000)))
    assert any(isinstance(e, HandsRebuilt) for e in ev2)
    assert r.hand(Position.seat_(2)) == _packet(0, size)
    assert r.hand(Position.seat_(5)) == _packet(1, size)
    assert r.hand(Position.seat_(7)) == _packet(2, size)
    assert r.hand(Position.seat_(3)) == ()
    if game != LIR:
        assert r.hand(Position.DEALER) == _packet(3, size)
    assert dict(r.placements) == want
    done = [f for f in r.irregularities if f.id == fid][0]
    assert done.decision == DecisionKind.RECONSTRUCTED and done.resolved_by == "SUP-9" and not done.open
    assert r.void is None and not r.pending_flags
    decide_all(r, game, SEATS)
    r.do(Settle(jackpot_pool=100000))
    assert r.status == RoundStatus.SETTLED
    # The journal replays to the same outcome, confirmation included.
    assert Round.replay(r.operations).snapshot() == r.snapshot()


@pytest.mark.parametrize("game", [TCP, LIR])
def test_reconstruction_refused_voids_round(game: str) -> None:
    r, fid, _ = _extra_hand_round(game)
    r.do(HandCountReported(flag=fid, position=Position.seat_(3), count=3, reporter="d"))
    before = dict(r.placements)
    ev = list(r.do(SupervisorConfirmation(flag=fid, confirmed=False, supervisor="SUP-9")))
    assert r.void is not None and misdeal_rule(game) in r.void.rules
    assert [e for e in ev if isinstance(e, RoundVoided)]
    assert not any(isinstance(e, HandsRebuilt) for e in ev) and dict(r.placements) == before


def test_supervisor_confirmation_needs_an_open_flag() -> None:
    r = dealt_round(TCP, "automated", SEATS)
    with pytest.raises(Exception):
        r.do(SupervisorConfirmation(flag=99, confirmed=True, supervisor="S"))


# --------------------------------------------------------------------------- exposures


@pytest.mark.parametrize("game", GAMES)
def test_single_exposure_flagged_for_shift_manager(game: str) -> None:
    r = started(game, "automated", method_for(game))
    deal(r, 1, 4)
    ev = list(r.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2, time_ms=4000)))
    rec = [e for e in ev if isinstance(e, ExposureRecorded)]
    assert rec and rec[0].during_deal and rec[0].counted and rec[0].shoe_index == 2
    (flag,) = flags_of(ev)
    assert flag.kind == IrregularityKind.EXPOSURE
    assert r.void is None
    # One exposure is not 5.4's "two or more": referred to the Gaming Shift Manager (6.1).
    if game != LIR:
        assert "6.1" in flag.rules
    else:
        assert flag.rules  # LIR has no 6.1; see the report
    assert [e.index for e in flag.evidence] == [2]
    assert flag.evidence[0].reader_id == "00000002" and flag.evidence[0].shoe_ms == 200
    assert flag.time_ms == 4000  # when it was declared
    assert flag.open and flag in r.pending_flags


@pytest.mark.parametrize("game", GAMES)
def test_two_exposures_during_deal_void_round(game: str) -> None:
    r = started(game, "automated", method_for(game))
    deal(r, 1, 5)
    r.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))
    ev = list(r.do(ExposureDeclared(source=Source.TABLE, place=Place(PlaceKind.SEAT, 5, 1) if game != SSP else Place(PlaceKind.SEAT, 2, 4))))
    assert r.void is not None and r.void.rules == (exposure_rule(game),)
    assert [e.rules for e in ev if isinstance(e, RoundVoided)] == [(exposure_rule(game),)]
    voiding = [f for f in r.irregularities if f.kind == IrregularityKind.EXPOSURES_DURING_DEAL]
    assert len(voiding) == 1 and voiding[0].decision == DecisionKind.VOID_ROUND
    assert voiding[0].rules == (exposure_rule(game),)
    assert not r.pending_flags  # the void decides; no referral left waiting
    all_flags_cite_rules(r)


def test_void_flag_for_two_exposures_carries_both_cards_as_evidence() -> None:
    """Issue 5: every flag carries its evidence; 5.4's decision rests on both exposed cards."""
    r = started(TCP)
    deal(r, 1, 5)
    r.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))
    r.do(ExposureDeclared(source=Source.TABLE, shoe_index=4))
    (voiding,) = [f for f in r.irregularities if f.kind == IrregularityKind.EXPOSURES_DURING_DEAL]
    assert sorted(e.index for e in voiding.evidence) == [2, 4]


def test_exposures_after_the_deal_do_not_void() -> None:
    """5.4 counts exposures *during the deal*; after deal complete they are recorded only."""
    r = dealt_round(TCP, "automated", SEATS)
    r.do(ExposureDeclared(source=Source.TABLE, shoe_index=1))
    ev = list(r.do(ExposureDeclared(source=Source.TABLE, shoe_index=4)))
    assert [e.during_deal for e in ev if isinstance(e, ExposureRecorded)] == [False]
    assert r.void is None


def test_one_exposure_during_and_one_after_deal_do_not_void() -> None:
    r = started(TCP)
    deal(r, 1, 6)
    r.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=3))
    deal(r, 7, 6)
    r.do(DealComplete())
    r.do(ExposureDeclared(source=Source.TABLE, shoe_index=8))
    assert r.void is None


def test_single_exposure_stands_on_manager_confirmation() -> None:
    r = started(TCP)
    deal(r, 1, 4)
    (flag,) = flags_of(list(r.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))))
    deal(r, 5, 8)
    r.do(DealComplete())
    decide_all(r, TCP, SEATS)
    assert not r.can(Settle())
    r.do(SupervisorConfirmation(flag=flag.id, confirmed=True, supervisor="GSM-1"))
    done = [f for f in r.irregularities if f.id == flag.id][0]
    assert not done.open and done.resolved_by == "GSM-1" and r.void is None
    r.do(Settle(jackpot_pool=1000))
    assert r.status == RoundStatus.SETTLED


@pytest.mark.parametrize("device", ["automated", "manual"])
def test_stud_dealer_up_card_is_not_an_exposure(device: str) -> None:
    """SSP 3.7/3.8: the dealer's last card is exposed by rule; declaring it counts for nothing."""
    exp = expected_order(SSP, device, SEATS)
    r = started(SSP, device)
    deal(r, 1, len(exp.deal))
    up_index = [i + 1 for i, s in enumerate(exp.deal) if s == (D, 0, 5)][0]
    ev = list(r.do(ExposureDeclared(source=Source.TABLE, shoe_index=up_index)))
    rec = [e for e in ev if isinstance(e, ExposureRecorded)]
    assert rec and rec[0].counted is False
    assert not flags_of(ev)
    # ... and with one real exposure beside it, 5.4's "two or more" is not reached.
    r.do(ExposureDeclared(source=Source.SHOE_KEY, place=Place(PlaceKind.SEAT, 2, 1)))
    r.do(ExposureDeclared(source=Source.TABLE, place=Place(PlaceKind.DEALER, 0, 5)))
    assert r.void is None
    assert [f.kind for f in r.irregularities] == [IrregularityKind.EXPOSURE]


# --------------------------------------------------------------------------- deck (5.1)


def _settled_round(game: str) -> Round:
    r = dealt_round(game, "automated", SEATS, method_for(game))
    decide_all(r, game, SEATS)
    r.do(Settle(jackpot_pool=100000))
    return r


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("flag_name", ["foreign", "duplicate"])
def test_foreign_or_duplicate_card_voids_round_earlier_rounds_stand(game: str, flag_name: str) -> None:
    first = _settled_round(game)
    snap = first.snapshot()
    r = open_round(game, "automated", method_for(game), rid="R2")
    bet(r, game, SEATS)
    r.do(NoMoreBets())
    deal(r, 1, 4)
    ev = list(r.do(card(5, **{flag_name: True})))
    # 5.1 (all five documents): a card not of the deck in use / extra cards: round void
    # (5.1.1), previous rounds stand (5.1.2).
    assert r.void is not None and "5.1" in r.void.rules
    assert [e for e in ev if isinstance(e, RoundVoided)]
    deck = [f for f in r.irregularities if f.kind == IrregularityKind.DECK]
    assert deck and "5.1" in deck[0].rules and deck[0].decision == DecisionKind.VOID_ROUND
    assert 5 in [e.index for e in deck[0].evidence]
    assert [e.reader_id for e in deck[0].evidence if e.index == 5] == ["00000005"]
    assert first.snapshot() == snap and first.void is None and first.status == RoundStatus.SETTLED
    all_flags_cite_rules(r)


@pytest.mark.parametrize("game", [TCP, LIR])
@pytest.mark.parametrize("fault", list(DeckFault))
def test_deck_status_irregularity_voids_round(game: str, fault: DeckFault) -> None:
    r = started(game, "automated")
    deal(r, 1, 3)
    r.do(DeckIrregularity(fault=fault, detail="deck status", shoe_index=3))
    assert r.void is not None
    want = {
        DeckFault.FOREIGN: "5.1",
        DeckFault.DUPLICATE: "5.1",
        DeckFault.EXTRA: extra_missing_rule(game),
        DeckFault.MISSING: extra_missing_rule(game),
        DeckFault.UNREAD: "5.1",
    }[fault]
    assert want in r.void.rules
    (deck,) = [f for f in r.irregularities if f.kind == IrregularityKind.DECK]
    assert deck.fault == fault.value or deck.fault == fault


# --------------------------------------------------------------------------- wagers (5.5-5.6)


@pytest.mark.parametrize("game", GAMES)
def test_wager_changes_after_no_more_bets_refused(game: str) -> None:
    r = open_round(game, "automated", method_for(game))
    bet(r, game, (2, 5))
    (w, amount) = next(iter(base_wagers(game).items()))
    # Before "no more bets" a wager may change and be withdrawn.
    r.do(ChangeWager(seat=5, wager=w, amount=amount * 2))
    if game == LIR:
        for other in ("one", "two", "dollar"):
            if other != w:
                r.do(ChangeWager(seat=5, wager=other, amount=amount * 2))
    r.do(NoMoreBets())
    snap = r.snapshot()
    n_ops = len(r.operations)
    increase, withdraw = closed_rules(game)
    for op, rule in [
        (PlaceWager(seat=3, wager=w, amount=amount), increase),  # a new wager (5.5)
        (ChangeWager(seat=2, wager=w, amount=amount * 2), increase),  # an increase (5.5)
        (ChangeWager(seat=2, wager=w, amount=amount // 2), withdraw),  # part withdrawn (5.6)
        (ChangeWager(seat=2, wager=w, amount=0), withdraw),  # withdrawn (5.6)
    ]:
        assert not r.can(op)
        with pytest.raises(WagersClosedError) as info:
            r.do(op)
        assert rule in str(info.value), str(info.value)
    assert r.snapshot() == snap and len(r.operations) == n_ops


def test_first_card_closes_wagers() -> None:
    r = open_round(TCP, "automated")
    bet(r, TCP, (4,))
    r.do(card(1))
    with pytest.raises(WagersClosedError):
        r.do(PlaceWager(seat=4, wager="pair_plus", amount=1000))


def test_withdrawn_before_no_more_bets_seat_not_dealt() -> None:
    r = open_round(TCP, "automated")
    bet(r, TCP, (2, 5, 7))
    r.do(ChangeWager(seat=5, wager="ante", amount=0))
    r.do(NoMoreBets())
    assert r.active_seats() == (2, 7)


# --------------------------------------------------------------------------- more counts


def test_seat_with_one_card_too_many_is_void_5_7_others_rebuilt() -> None:
    """TCP automated, seat 5 received four cards: physical order seat 2 (1-3), seat 5 (4-7),
    seat 7 (8-10), dealer (11-13). The shoe sees card 13 not due; the table reports seat 5
    holds 4. 5.7: seat 5's hand is removed and its wagers returned; the rest rebuilt."""
    r = started(TCP)
    deal(r, 1, 13)
    r.do(DealComplete())
    (flag,) = r.pending_flags
    r.do(HandCountReported(flag=flag.id, position=Position.seat_(5), count=4, reporter="d"))
    assert r.void is None and set(r.void_seats) == {5} and r.void_seats[5].rules == ("5.7",)
    assert r.hand(Position.seat_(2)) == tuple(code_for(i) for i in (1, 2, 3))
    assert r.hand(Position.seat_(7)) == tuple(code_for(i) for i in (8, 9, 10))
    assert r.hand(Position.DEALER) == tuple(code_for(i) for i in (11, 12, 13))
    assert not r.pending_flags
    all_flags_cite_rules(r)


def test_withdrawal_permitted_after_another_seat_voided_5_7_1() -> None:
    from cardshoe.rounds import WagerWithdrawn

    r = started(TCP)
    deal(r, 1, 11)
    (flag,) = flags_of(list(r.do(DealComplete())))
    r.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=2, reporter="d"))
    r.do(WagerWithdrawn(flag=flag.id, seat=2, permitted_by="SUP-1"))
    done = [f for f in r.irregularities if f.id == flag.id][0]
    assert 2 in done.withdrawn_seats and 7 not in done.withdrawn_seats
    assert r.void is None


def test_unread_card_is_placed_without_a_code() -> None:
    """An UNREAD frame is still a card out of the shoe: it takes its place in the order, so
    every later card still lands where the procedure says."""
    r = started(TCP, seats=(4,))
    deal(r, 1, 1)
    ev = list(r.do(card(2, code=None)))
    assert [(e.place, e.card) for e in ev if isinstance(e, CardPlaced)] == [(Place(PlaceKind.SEAT, 4, 2), None)]
    deal(r, 3, 1)
    assert r.hand(Position.seat_(4)) == (code_for(1), None, code_for(3))


# --------------------------------------------------------------------------- ambiguity, refusals


@pytest.mark.parametrize("game", [TCP, SSP])
def test_manual_seat_short_does_not_guess_which_pass(game: str) -> None:
    """TCP/SSP 3.8 deal one card per position per pass. With seats 2, 5, 7 and seat 7 one
    card short, the dealer may have skipped seat 7 in any pass: had it been pass 1, the shoe's
    cards land 2, 5, D, 2, 5, 7, D, ... and seat 2 holds indices 1, 4, 8 rather than 1, 5, 9.
    A count of 2 at seat 7 does not tell the host which pass, so it cannot know the other
    hands; 5.7 voids seat 7 but the rest must not be settled on a guess: the flag should stay
    with a person (supervisor / shift manager, 6.1) or the round be void (5.2)."""
    size = hand_size(game)
    exp = expected_order(game, "manual", SEATS)
    r = started(game, "manual")
    deal(r, 1, len(exp.deal) - 1)
    (flag,) = flags_of(list(r.do(DealComplete())))
    r.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=size - 1, reporter="d"))
    assert r.pending_flags or r.void is not None


def test_counts_that_do_not_explain_the_shortfall_keep_the_flag_open() -> None:
    r = started(TCP)
    deal(r, 1, 11)
    (flag,) = flags_of(list(r.do(DealComplete())))
    r.do(HandCountReported(flag=flag.id, position=Position.seat_(2), count=3, reporter="d"))
    assert [f.id for f in r.pending_flags] == [flag.id]
    assert r.void is None and not r.void_seats and not r.can(Settle())


def test_first_decision_is_a_count_point() -> None:
    """No deal-complete key pressed: the first decision closes the deal phase (API count point)."""
    r = started(TCP)
    deal(r, 1, 11)
    try:
        ev = list(r.do(Decision(seat=2, choice=Choice.PLAY)))
    except Exception:
        ev = []
    assert [f.kind for f in r.irregularities] == [IrregularityKind.TOO_FEW_CARDS]
    assert any(isinstance(e, CountChecked) and (e.expected, e.dealt) == (12, 11) for e in ev) or r.pending_flags


def test_xtreme_b_fourth_dealer_card_not_due() -> None:
    r = dealt_round(XT, "automated", (2,), "B")
    decide_all(r, XT, (2,))
    ev = deal(r, 7, 4)
    assert [e.index for e in ev if isinstance(e, CardNotDue)] == [10]
    (flag,) = flags_of(ev)
    assert flag.kind == IrregularityKind.CARD_NOT_DUE and flag.phase == "dealer" and "5.2" in flag.rules


def test_exposure_of_unknown_card_refused_and_round_unchanged() -> None:
    from cardshoe.rounds import RoundOperationError

    r = started(TCP)
    deal(r, 1, 3)
    snap = r.snapshot()
    with pytest.raises(RoundOperationError) as info:
        r.do(ExposureDeclared(source=Source.TABLE, shoe_index=99))
    assert "99" in str(info.value)
    assert r.snapshot() == snap


def test_same_shoe_index_twice_refused() -> None:
    from cardshoe.rounds import DuplicateShoeIndexError

    r = started(TCP)
    deal(r, 1, 3)
    snap = r.snapshot()
    with pytest.raises(DuplicateShoeIndexError):
        r.do(card(2))
    assert r.snapshot() == snap


def test_void_round_closes_as_void() -> None:
    """5.1.1: the round is void; it can still be closed so every wager goes back."""
    r = started(TCP)
    deal(r, 1, 2)
    r.do(card(3, foreign=True))
    deal(r, 4, 2)  # the dealer may not have stopped at once; cards are still recorded
    assert r.void is not None and r.void.rules == ("5.1",)
    ev = list(r.do(Settle()))
    assert r.status == RoundStatus.SETTLED
    assert [getattr(e, "void", None) for e in ev if type(e).__name__ == "RoundSettled"] == [True]


# --------------------------------------------------------------------------- round file export


LIMITS = {"ante": {"min": 100, "max": 100000}, "pair_plus": {"min": 100, "max": 100000}}


def _settle_export(r: Round) -> dict:  # type: ignore[type-arg]
    from cardshoe.settlement import parse_round, settle

    return settle(parse_round(r.to_round_json(limits=LIMITS))).to_json()


def test_export_seat_void_returns_its_wagers_only() -> None:
    r = started(TCP)
    deal(r, 1, 11)
    (flag,) = flags_of(list(r.do(DealComplete())))
    r.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=2, reporter="d"))
    decide_all(r, TCP, (2, 5))
    r.do(Settle())
    j = r.to_round_json(limits=LIMITS)
    assert [(i["kind"], i.get("seats")) for i in j["irregularities"]] == [("player_card_count", [7])]
    s = _settle_export(r)
    assert s["void"] is None
    by_seat = {x["seat"]: {w["wager"]: w["outcome"] for w in x["wagers"]} for x in s["seats"]}
    assert by_seat[7] == {"ante": "returned"}
    assert by_seat[2]["ante"] in ("win", "lose", "push") and by_seat[5]["ante"] in ("win", "lose", "push")


@pytest.mark.parametrize(
    ("how", "rule"),
    [("two_exposures", "5.4"), ("foreign", "5.1"), ("dealer_short", "5.3")],
)
def test_export_void_round_settles_void(how: str, rule: str) -> None:
    r = started(TCP)
    if how == "two_exposures":
        deal(r, 1, 5)
        r.do(ExposureDeclared(source=Source.TABLE, shoe_index=1))
        r.do(ExposureDeclared(source=Source.TABLE, shoe_index=2))
    elif how == "foreign":
        deal(r, 1, 4)
        r.do(card(5, foreign=True))
    else:
        deal(r, 1, 11)
        (flag,) = flags_of(list(r.do(DealComplete())))
        r.do(HandCountReported(flag=flag.id, position=Position.DEALER, count=2, reporter="d"))
    r.do(Settle())
    s = _settle_export(r)
    assert s["void"] is not None and rule in s["void"]["rules"]
    assert all(w["outcome"] == "void" for x in s["seats"] for w in x["wagers"])
    assert s["totals"]["net"] == 0


def test_same_card_declared_twice_is_one_exposure() -> None:
    """The shoe key and the table interface may both report one card: 5.4 counts cards."""
    r = started(TCP)
    deal(r, 1, 5)
    r.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))
    r.do(ExposureDeclared(source=Source.TABLE, shoe_index=2))
    r.do(ExposureDeclared(source=Source.TABLE, place=Place(PlaceKind.SEAT, 2, 2)))
    assert r.void is None
    assert [f.kind for f in r.irregularities] == [IrregularityKind.EXPOSURE]


@pytest.mark.parametrize(("index", "what"), [(1, "security card"), (10, "burn card")])
def test_xtreme_c_security_or_burn_exposed_counts(index: int, what: str) -> None:
    """A security or burn card seen face up is a card incorrectly exposed during the deal."""
    r = open_round(XT, "automated", "C")
    bet(r, XT, (2,))
    r.do(NoMoreBets())
    deal(r, 1, 10)
    ev = list(r.do(ExposureDeclared(source=Source.TABLE, shoe_index=index)))
    assert [e.counted for e in ev if isinstance(e, ExposureRecorded)] == [True], what
    r.do(ExposureDeclared(source=Source.TABLE, shoe_index=5))
    assert r.void is not None and r.void.rules == ("5.4",)


def test_exposure_with_contradicting_place_and_index_refused() -> None:
    """Bad input gets a clear error: shoe index 1 is seat 2 card 1, not seat 5 card 1."""
    from cardshoe.rounds import RoundOperationError

    r = started(TCP)
    deal(r, 1, 5)
    snap = r.snapshot()
    with pytest.raises(RoundOperationError):
        r.do(ExposureDeclared(source=Source.TABLE, shoe_index=1, place=Place(PlaceKind.SEAT, 5, 1)))
    assert r.snapshot() == snap


def test_superseded_exposure_flag_text_matches_its_decision() -> None:
    r = started(TCP)
    deal(r, 1, 5)
    r.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))
    r.do(ExposureDeclared(source=Source.TABLE, shoe_index=4))
    first = r.irregularities[0]
    assert first.decision == DecisionKind.VOID_ROUND
    assert "referred" not in first.detail


# --------------------------------------------------------------------------- wager input


def test_bad_wager_input_named_and_nothing_lost() -> None:
    from cardshoe.rounds import BadAmountError, BadSeatError, UnknownWagerError

    r = open_round(LIR, "automated")
    bet(r, LIR, (1,))
    snap = r.snapshot()
    for op, err, word in [
        (PlaceWager(seat=8, wager="one", amount=2500), BadSeatError, "8"),
        (PlaceWager(seat=2, wager="ante", amount=2500), UnknownWagerError, "ante"),  # LIR has 1/2/$
        (PlaceWager(seat=2, wager="one", amount=-5), BadAmountError, "-5"),
        (PlaceWager(seat=2, wager="one", amount=0), BadAmountError, "0"),
    ]:
        with pytest.raises(err) as info:
            r.do(op)
        assert word in str(info.value)
    assert r.snapshot() == snap


def test_pair_plus_only_seat_has_no_play_decision() -> None:
    """TCP 3.9.3: a Pair Plus seat without an Ante has no Play/Fold decision."""
    from cardshoe.rounds import DecisionError

    r = open_round(TCP, "automated")
    r.do(PlaceWager(seat=1, wager="pair_plus", amount=1000))
    r.do(NoMoreBets())
    deal(r, 1, 6)
    r.do(DealComplete())
    for c in (Choice.PLAY, Choice.FOLD):
        with pytest.raises(DecisionError):
            r.do(Decision(seat=1, choice=c))


def test_let_it_ride_unequal_wagers_do_not_reach_settlement_unchecked() -> None:
    """LIR 3.4: three *equal* wagers. The round must refuse the inequality before the deal
    (a wager or "no more bets" refused, naming 3.4), or else export a round the settler takes."""
    from cardshoe.rounds import RoundOperationError
    from cardshoe.settlement import parse_round

    r = open_round(LIR, "automated")
    try:
        for w, a in (("one", 2500), ("two", 1000), ("dollar", 2500)):
            r.do(PlaceWager(seat=1, wager=w, amount=a))
        r.do(NoMoreBets())
    except RoundOperationError as e:
        assert "3.4" in str(e)
        return
    deal(r, 1, 5)
    r.do(DealComplete())
    decide_all(r, LIR, (1,))
    r.do(Settle())
    parse_round(r.to_round_json(limits={"one": {"min": 100, "max": 100000}}))
