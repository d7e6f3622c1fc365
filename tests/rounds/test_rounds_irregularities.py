"""Irregularities: cards not due, too few cards at a count point, reconstructions, exposures,
deck faults, with the rule each one cites (TCP/Megalink/Xtreme/stud 5.x, LIR 5.x, 6.1)."""

from __future__ import annotations

import pytest

from cardshoe.rounds import (
    CardNotDue,
    ChangeWager,
    Choice,
    DealComplete,
    Decision,
    DecisionKind,
    DeckFault,
    DeckIrregularity,
    DecisionError,
    ExposureDeclared,
    HandCountReported,
    IrregularityKind,
    Place,
    PlaceKind,
    PlaceWager,
    PlayerAbsent,
    Position,
    RoundStatus,
    Settle,
    SeatVoided,
    Source,
    SupervisorConfirmation,
    VoidRound,
    WagersClosedError,
    WrongStateError,
)

from rounds_helpers import deal, open_round, shoe_card

TCP = "three-card-poker"
MTCP = "megalink-three-card-poker"
XT = "megalink-three-card-poker-xtreme"
LIR = "megalink-let-it-ride"
STUD = "megalink-singapore-stud-poker"


def report(rnd, flag, position, count, who="dealer D. Tan"):
    return rnd.do(HandCountReported(flag=flag, position=position, count=count, reporter=who, time_ms=9_000))


# ---- wagers ------------------------------------------------------------------------------


def test_wagers_change_freely_before_no_more_bets() -> None:
    rnd = open_round(TCP, seats=(1, 3), close=False)
    rnd.do(ChangeWager(seat=1, wager="ante", amount=5000))
    rnd.do(PlaceWager(seat=3, wager="pair_plus", amount=1000))
    rnd.do(ChangeWager(seat=3, wager="ante", amount=0))  # withdrawn before no more bets
    assert rnd.wagers == {1: {"ante": 5000}, 3: {"pair_plus": 1000}}
    assert rnd.active_seats() == (1, 3)


@pytest.mark.parametrize(
    "game,rules", [(TCP, "5.5, 5.6"), (STUD, "5.5, 5.6"), (LIR, "5.6, 5.7")]
)
def test_wager_changes_after_no_more_bets_are_refused(game, rules) -> None:
    rnd = open_round(game, seats=(2,))
    base = "one" if game == LIR else "ante"
    before = rnd.snapshot()
    ops = len(rnd.operations)
    for op in (
        PlaceWager(seat=4, wager=base, amount=2500),  # placed late (5.5)
        ChangeWager(seat=2, wager=base, amount=5000),  # increased (5.5)
        ChangeWager(seat=2, wager=base, amount=0),  # withdrawn (5.6)
    ):
        assert not rnd.can(op)
        with pytest.raises(WagersClosedError, match=rules):
            rnd.do(op)
    assert rnd.snapshot() == before
    assert len(rnd.operations) == ops


def test_first_card_closes_betting_when_no_more_bets_was_not_announced(deck) -> None:
    """3.4: wagers are placed before the first card is dealt."""
    rnd = open_round(TCP, seats=(2,), close=False)
    deal(rnd, deck[:1])
    assert rnd.status is RoundStatus.DEALING
    with pytest.raises(WagersClosedError):
        rnd.do(PlaceWager(seat=5, wager="ante", amount=2500))


def test_progressive_alone_does_not_get_the_seat_dealt() -> None:
    """5.12.2: a progressive without a base wager is invalid after no more bets."""
    rnd = open_round(TCP, seats=(2,), close=False)
    rnd.do(PlaceWager(seat=4, wager="progressive", amount=500))
    assert rnd.active_seats() == (2,)


# ---- cards not due and too few cards -----------------------------------------------------


def test_card_not_due_then_a_seat_reported_long_voids_that_seat(deck) -> None:
    """TCP 5.7: a seat with the wrong number of cards is removed and its wager returned."""
    rnd = open_round(TCP, seats=(1, 3))
    events = deal(rnd, deck[:10])
    assert isinstance(events[-1], CardNotDue) or any(isinstance(e, CardNotDue) for e in events)
    (flag,) = rnd.irregularities
    assert flag.kind is IrregularityKind.CARD_NOT_DUE and flag.decision is DecisionKind.PENDING
    assert flag.evidence[0].index == 10 and flag.evidence[0].reader_id and flag.evidence[0].shoe_ms
    with pytest.raises(WrongStateError, match="wait"):
        rnd.do(Settle())
    events = report(rnd, flag.id, Position.seat_(3), 4)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.VOID_SEAT and flag.rules == ("5.7",) and flag.void_seats == (3,)
    assert flag.reports[0].reporter == "dealer D. Tan"
    assert any(isinstance(e, SeatVoided) and e.seat == 3 for e in events)
    assert list(rnd.hand(Position.seat_(1))) == deck[0:3]
    assert list(rnd.hand(Position.seat_(3))) == deck[3:7]
    assert list(rnd.hand(Position.DEALER)) == deck[7:10]
    assert rnd.void is None and 3 in rnd.void_seats
    rnd.do(DealComplete())
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    with pytest.raises(Exception, match="void"):
        rnd.do(Decision(seat=3, choice=Choice.PLAY))
    rnd.do(Settle())
    assert rnd.status is RoundStatus.SETTLED


def test_too_few_cards_at_deal_complete_dealer_short_voids_round(deck) -> None:
    """TCP 5.3: an incorrect number of cards to the dealer voids the round."""
    rnd = open_round(TCP, seats=(1, 3))
    deal(rnd, deck[:8])
    rnd.do(DealComplete())
    (flag,) = rnd.irregularities
    assert flag.kind is IrregularityKind.TOO_FEW_CARDS and flag.decision is DecisionKind.PENDING
    assert [e.index for e in flag.evidence] == list(range(1, 9))
    report(rnd, flag.id, Position.seat_(1), 3)  # a correct count alone does not account for the cards
    assert rnd.irregularities[0].decision is DecisionKind.PENDING
    report(rnd, flag.id, Position.DEALER, 2)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.VOID_ROUND and "5.3" in flag.rules
    assert rnd.void is not None and "5.3" in rnd.void.rules
    rnd.do(Settle())
    assert rnd.status is RoundStatus.SETTLED


def test_too_few_cards_seat_short_voids_seat_and_rebuilds_the_others(deck) -> None:
    rnd = open_round(STUD, seats=(2, 5))
    deal(rnd, deck[:14])
    rnd.do(Decision(seat=2, choice=Choice.BET))  # the first decision is a count point too
    (flag,) = rnd.irregularities
    assert flag.kind is IrregularityKind.TOO_FEW_CARDS
    report(rnd, flag.id, Position.seat_(2), 4)
    assert rnd.irregularities[0].decision is DecisionKind.VOID_SEAT
    assert rnd.void_seats[2].rules == ("5.7",)
    assert list(rnd.hand(Position.seat_(5))) == deck[4:9]
    assert list(rnd.hand(Position.DEALER)) == deck[9:14]


def test_megalink_community_count_voids_round(deck) -> None:
    """Megalink 5.3: an incorrect number of community cards voids the round."""
    rnd = open_round(MTCP, seats=(2,))
    deal(rnd, deck[:8])
    rnd.do(DealComplete())
    flag = rnd.irregularities[0]
    report(rnd, flag.id, Position.COMMUNITY, 2)  # community 1, 2 and no burn
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.VOID_ROUND and "5.3" in flag.rules
    assert flag.wrong == (Position.COMMUNITY,)


def test_let_it_ride_wrong_count_at_a_seat_voids_the_round(deck) -> None:
    """LIR has no player-count rule: 5.3 voids the round unless it can be reconstructed."""
    rnd = open_round(LIR, seats=(1, 4))
    deal(rnd, deck[:7])
    rnd.do(DealComplete())
    flag = rnd.irregularities[0]
    report(rnd, flag.id, Position.seat_(4), 2)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.VOID_ROUND and flag.rules == ("5.3",)


def test_let_it_ride_community_count(deck) -> None:
    rnd = open_round(LIR, seats=(1,))
    deal(rnd, deck[:4])
    rnd.do(DealComplete())
    report(rnd, 1, Position.COMMUNITY, 1)
    assert rnd.irregularities[0].rules == ("5.3", "5.4")


def test_count_point_came_early_and_the_rest_arrived(deck) -> None:
    """The key pressed before the last card: the person's count shows every hand right."""
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:5])
    rnd.do(DealComplete())
    deal(rnd, deck[5:6], start=6)
    report(rnd, 1, Position.DEALER, 3)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.ACKNOWLEDGED
    assert list(rnd.hand(Position.DEALER)) == deck[3:6]
    assert rnd.not_due == []


def test_card_drawn_in_error_to_the_discard_is_referred(deck) -> None:
    """Every hand right and one card straight to the discard holder: not covered (6.1)."""
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:7])
    report(rnd, 1, Position.DISCARD, 1)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.REFERRED and flag.rules == ("6.1",)
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="SM Lim"))
    assert rnd.irregularities[0].decision is DecisionKind.ACKNOWLEDGED and rnd.void is None
    assert rnd.hand(Position.DISCARD) == (deck[6],)


# ---- reconstruction (5.2) ----------------------------------------------------------------


def _extra_hand_round(device, deck):
    rnd = open_round(TCP, device, None, (1, 3))
    deal(rnd, deck[:12])  # a hand was dealt to seat 2, which holds no wager
    assert rnd.not_due == [10, 11, 12]
    flag = rnd.irregularities[0]
    report(rnd, flag.id, Position.seat_(2), 3)
    return rnd


def test_reconstruction_proposed_then_confirmed_automated(deck) -> None:
    """5.2: complete hands moved in dealing order rebuild the deal; the spare hand is discarded."""
    rnd = _extra_hand_round("automated", deck)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.RECONSTRUCTION_PROPOSED and flag.rules == ("5.2",)
    assert flag.fallback is DecisionKind.VOID_ROUND
    # until confirmed, the hands are where the person says they are
    assert list(rnd.hand(Position.seat_(2))) == deck[3:6]
    assert list(rnd.hand(Position.seat_(3))) == deck[6:9]
    with pytest.raises(WrongStateError):
        rnd.do(Settle())
    rnd.do(SupervisorConfirmation(flag=flag.id, confirmed=True, supervisor="PS Wong"))
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.RECONSTRUCTED and flag.resolved_by == "PS Wong"
    assert list(rnd.hand(Position.seat_(1))) == deck[0:3]
    assert list(rnd.hand(Position.seat_(3))) == deck[3:6]
    assert list(rnd.hand(Position.DEALER)) == deck[6:9]
    assert rnd.hand(Position.seat_(2)) == ()
    assert rnd.hand(Position.DISCARD) == tuple(deck[9:12])
    assert rnd.void is None and rnd.void_seats == {}


def test_reconstruction_manual_device_moves_interleaved_hands(deck) -> None:
    rnd = _extra_hand_round("manual", deck)
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="PS Wong"))
    # passes over seats 1, 2, 3 and the dealer: seat 2's hand moves to seat 3, seat 3's to the dealer
    assert list(rnd.hand(Position.seat_(1))) == [deck[0], deck[4], deck[8]]
    assert list(rnd.hand(Position.seat_(3))) == [deck[1], deck[5], deck[9]]
    assert list(rnd.hand(Position.DEALER)) == [deck[2], deck[6], deck[10]]
    assert set(rnd.hand(Position.DISCARD)) == {deck[3], deck[7], deck[11]}


def test_reconstruction_refused_voids_round(deck) -> None:
    rnd = _extra_hand_round("automated", deck)
    rnd.do(SupervisorConfirmation(flag=1, confirmed=False, supervisor="PS Wong"))
    assert rnd.irregularities[0].decision is DecisionKind.VOID_ROUND
    assert rnd.void is not None and rnd.void.rules == ("5.2",)


def test_skipped_seat_and_spare_hands_reconstructed(deck) -> None:
    """Seat 3 (wagered) skipped, seats 2 and 4 (no wager) dealt: complete hands move in order."""
    rnd = open_round(TCP, seats=(1, 3))
    deal(rnd, deck[:12])
    report(rnd, 1, Position.seat_(2), 3)
    report(rnd, 1, Position.seat_(3), 0)
    assert rnd.irregularities[0].decision is DecisionKind.PENDING  # 15 cards accounted for, 12 dealt
    report(rnd, 1, Position.seat_(4), 3)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.RECONSTRUCTION_PROPOSED
    assert list(rnd.hand(Position.seat_(4))) == deck[6:9] and rnd.hand(Position.seat_(3)) == ()
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="PS Wong"))
    assert list(rnd.hand(Position.seat_(3))) == deck[3:6]
    assert list(rnd.hand(Position.DEALER)) == deck[6:9]
    assert rnd.hand(Position.DISCARD) == tuple(deck[9:12])


def test_incomplete_hand_at_an_unwagered_seat_cannot_be_reconstructed(deck) -> None:
    """5.2: two cards to a seat without a wager cannot be put right by moving complete hands."""
    rnd = open_round(TCP, seats=(1, 3))
    deal(rnd, deck[:11])
    report(rnd, 1, Position.seat_(2), 2)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.VOID_ROUND and flag.rules == ("5.2",)


def test_xtreme_c_dealer_unit_counts_its_security_card(deck) -> None:
    """Xtreme 3.7.3.1: the dealer's packet is four cards with the security card; short is 5.3."""
    rnd = open_round(XT, "automated", "C", (2,))
    deal(rnd, deck[:9])
    rnd.do(DealComplete())
    report(rnd, 1, Position.DEALER, 3)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.VOID_ROUND and "5.3" in flag.rules
    assert rnd.security == (deck[0],)
    assert list(rnd.hand(Position.DEALER)) == deck[1:3]
    assert list(rnd.hand(Position.seat_(2))) == deck[3:6]


# ---- exposures ---------------------------------------------------------------------------


def test_single_exposure_during_deal_is_referred(deck) -> None:
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:2])
    rnd.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))
    flag = rnd.irregularities[0]
    assert flag.kind is IrregularityKind.EXPOSURE and flag.decision is DecisionKind.REFERRED
    assert flag.rules == ("6.1",) and flag.evidence[0].index == 2
    deal(rnd, deck[2:6], start=3)
    rnd.do(DealComplete())
    rnd.do(Decision(seat=1, choice=Choice.FOLD))
    with pytest.raises(WrongStateError):
        rnd.do(Settle())
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="SM Lim"))
    rnd.do(Settle())
    assert rnd.void is None


@pytest.mark.parametrize("game,rule", [(TCP, "5.4"), (XT, "5.4"), (STUD, "5.4"), (LIR, "5.5")])
def test_two_exposures_during_deal_void_round(game, rule, deck) -> None:
    rnd = open_round(game, "manual", None, (1, 2))
    deal(rnd, deck[:3])
    rnd.do(ExposureDeclared(source=Source.TABLE, place=Place(PlaceKind.SEAT, 1, 1)))
    rnd.do(ExposureDeclared(source=Source.SHOE_KEY))
    kinds = [(f.kind, f.decision) for f in rnd.irregularities]
    assert (IrregularityKind.EXPOSURES_DURING_DEAL, DecisionKind.VOID_ROUND) in kinds
    assert all(not f.open for f in rnd.irregularities)
    assert rnd.void is not None and rnd.void.rules == (rule,)


def test_same_card_declared_twice_counts_once(deck) -> None:
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:3])
    rnd.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=3))
    rnd.do(ExposureDeclared(source=Source.TABLE, place=Place(PlaceKind.SEAT, 1, 3)))
    assert [e.counted for e in rnd.exposures] == [True, False]
    assert rnd.void is None and len(rnd.irregularities) == 1


def test_exposure_after_the_deal_is_referred_not_counted_toward_void(deck) -> None:
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:3])
    rnd.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=1))
    deal(rnd, deck[3:6], start=4)
    rnd.do(DealComplete())
    rnd.do(ExposureDeclared(source=Source.TABLE, shoe_index=4))
    assert rnd.void is None
    assert [f.decision for f in rnd.irregularities] == [DecisionKind.REFERRED, DecisionKind.REFERRED]
    assert [e.during_deal for e in rnd.exposures] == [True, False]


def test_stud_dealer_up_card_is_not_an_exposure(deck) -> None:
    """Stud 3.7: the dealer's last card is exposed by the procedure."""
    rnd = open_round(STUD, seats=(3,))
    deal(rnd, deck[:10])
    rnd.do(ExposureDeclared(source=Source.TABLE, place=Place(PlaceKind.DEALER, 0, 5)))
    rnd.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=2))
    assert [e.counted for e in rnd.exposures] == [False, True]
    assert rnd.void is None


def test_let_it_ride_single_exposure_cites_its_own_rule(deck) -> None:
    rnd = open_round(LIR, seats=(3,))
    deal(rnd, deck[:2])
    rnd.do(ExposureDeclared(source=Source.TABLE, shoe_index=1))
    assert rnd.irregularities[0].rules == ("5.5",)


# ---- deck irregularities -----------------------------------------------------------------


@pytest.mark.parametrize(
    "kw,rules",
    [
        ({"foreign": True}, ("5.1",)),
        ({"duplicate": True}, ("5.1",)),
    ],
)
def test_flagged_card_from_the_shoe_voids_round(kw, rules, deck) -> None:
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:2])
    rnd.do(shoe_card(3, deck[2], **kw))
    flag = rnd.irregularities[0]
    assert flag.kind is IrregularityKind.DECK and flag.decision is DecisionKind.VOID_ROUND
    assert flag.rules == rules and flag.evidence[0].index == 3
    assert rnd.void is not None
    deal(rnd, deck[3:6], start=4)  # nothing that follows is lost
    assert len(rnd.cards) == 6 and len(rnd.hand(Position.DEALER)) == 3


def test_unread_card_voids_round(deck) -> None:
    rnd = open_round(STUD, seats=(1,))
    deal(rnd, [deck[0], None])
    assert rnd.irregularities[0].rules == ("5.1", "5.8")
    assert rnd.hand(Position.seat_(1)) == (deck[0], None)


def test_host_sees_a_card_twice_even_if_the_shoe_did_not(deck) -> None:
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, [deck[0], deck[1], deck[0]])
    assert rnd.irregularities[0].kind is IrregularityKind.DECK
    assert rnd.void is not None


@pytest.mark.parametrize("game,fault,rules", [(TCP, DeckFault.MISSING, ("5.1", "5.8")), (LIR, DeckFault.EXTRA, ("5.2",)), (LIR, DeckFault.FOREIGN, ("5.1",))])
def test_deck_status_irregularity_voids_the_round_in_play(game, fault, rules, deck) -> None:
    earlier = open_round(game, seats=(1,), round_id="R0")
    deal(earlier, deck[:5])
    rnd = open_round(game, seats=(1,), round_id="R1")
    deal(rnd, deck[5:8], start=6)
    rnd.do(DeckIrregularity(fault=fault, detail="end of shoe: 51 cards", time_ms=5))
    assert rnd.void is not None and rnd.void.rules == rules
    assert earlier.void is None  # 5.1.2: earlier rounds stand


def test_card_from_another_shoe_session(deck) -> None:
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:2])
    rnd.do(shoe_card(1, deck[2], shoe_no=2))
    assert rnd.void is not None and rnd.irregularities[0].kind is IrregularityKind.DECK
    assert len(rnd.other_shoe_cards) == 1


# ---- decisions and absent players --------------------------------------------------------


def test_player_absent_voids_seat_5_11(deck) -> None:
    rnd = open_round(TCP, seats=(1, 2))
    deal(rnd, deck[:9])
    rnd.do(DealComplete())
    rnd.do(PlayerAbsent(seat=2))
    assert rnd.void_seats[2].rules == ("5.11",)
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    rnd.do(Settle())


def test_let_it_ride_has_no_absent_rule(deck) -> None:
    rnd = open_round(LIR, seats=(1,))
    deal(rnd, deck[:5])
    with pytest.raises(DecisionError, match="no absent-player rule"):
        rnd.do(PlayerAbsent(seat=1))


def test_decisions_follow_the_game(deck) -> None:
    rnd = open_round(LIR, seats=(1, 2))
    deal(rnd, deck[:8])
    rnd.do(Decision(seat=1, choice=Choice.PULL_1))
    with pytest.raises(DecisionError, match="pull_2"):
        rnd.do(Decision(seat=1, choice=Choice.PULL_2))  # 3.11: after every seat's first decision
    rnd.do(Decision(seat=2, choice=Choice.RIDE_1))
    rnd.do(Decision(seat=1, choice=Choice.PULL_2))
    with pytest.raises(DecisionError):
        rnd.do(Decision(seat=1, choice=Choice.RIDE_2))
    with pytest.raises(DecisionError, match="seat\\(s\\) 2"):
        rnd.do(Settle())
    tcp = open_round(TCP, seats=(1,))
    deal(tcp, deck[:6])
    with pytest.raises(DecisionError):
        tcp.do(Decision(seat=1, choice=Choice.BET))
    with pytest.raises(Exception, match="seat 4"):
        tcp.do(Decision(seat=4, choice=Choice.PLAY))


def test_xtreme_b_card_before_decisions_is_not_due(deck) -> None:
    rnd = open_round(XT, "automated", "B", (1, 2))
    deal(rnd, deck[:9])
    rnd.do(DealComplete())
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    deal(rnd, deck[9:10], start=10)  # seat 2 has not decided: the dealer's cards are not due
    assert rnd.not_due == [10]
    assert rnd.irregularities[0].kind is IrregularityKind.CARD_NOT_DUE


def test_xtreme_b_dealer_short_at_settle(deck) -> None:
    rnd = open_round(XT, "automated", "B", (1,))
    deal(rnd, deck[:6])
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    deal(rnd, deck[6:8], start=7)
    rnd.do(Settle())  # the dealer's hand is checked at settlement: two cards
    assert rnd.status is not RoundStatus.SETTLED
    flag = rnd.irregularities[0]
    assert flag.phase == "dealer" and flag.kind is IrregularityKind.TOO_FEW_CARDS
    report(rnd, flag.id, Position.DEALER, 2)
    assert rnd.void is not None and "5.3" in rnd.void.rules
    rnd.do(Settle())
    assert rnd.status is RoundStatus.SETTLED


def test_supervisor_voids_round(deck) -> None:
    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:3])
    rnd.do(VoidRound(rule="5.16.1", reason="power failure, players withdrew", by="SM Lim"))
    assert rnd.void is not None and rnd.void.rules == ("5.16.1",)
    rnd.do(Settle())


def test_refused_operations_change_nothing(deck) -> None:
    rnd = open_round(TCP, seats=(1, 3))
    deal(rnd, deck[:10])
    before, ops, events = rnd.snapshot(), rnd.operations, rnd.events
    bad = [
        shoe_card(3, deck[20]),  # an index already dealt
        shoe_card(11, 52),
        HandCountReported(flag=7, position=Position.DEALER, count=3, reporter="x"),
        HandCountReported(flag=1, position=Position.COMMUNITY, count=2, reporter="x"),
        HandCountReported(flag=1, position=Position.DEALER, count=3, reporter=""),
        SupervisorConfirmation(flag=1, confirmed=True, supervisor="PS"),
        Decision(seat=2, choice=Choice.PLAY),
        Settle(),
        PlaceWager(seat=1, wager="pair_plus", amount=100),
        ExposureDeclared(source=Source.TABLE, shoe_index=99),
    ]
    for op in bad:
        assert not rnd.can(op), op
        with pytest.raises(ValueError):
            rnd.do(op)
        assert rnd.snapshot() == before
    assert rnd.operations == ops and rnd.events == events


def test_second_count_problem_in_a_phase_starts_from_earlier_counts(deck) -> None:
    rnd = open_round(TCP, seats=(1, 3))
    deal(rnd, deck[:10])
    report(rnd, 1, Position.seat_(3), 4)
    assert rnd.void_seats[3].rules == ("5.7",)
    deal(rnd, deck[10:11], start=11)
    second = rnd.irregularities[1]
    assert second.decision is DecisionKind.PENDING
    assert [(r.position, r.count) for r in second.reports] == [(Position.seat_(3), 4)]
    report(rnd, 2, Position.DEALER, 4)
    assert rnd.irregularities[1].decision is DecisionKind.VOID_ROUND
    assert list(rnd.hand(Position.DEALER)) == deck[7:11]


def test_a_failure_half_way_through_an_operation_is_undone(deck, monkeypatch) -> None:
    """Nothing half-applied survives: the round is restored if applying raises."""
    from cardshoe.rounds import deal as deal_phase

    rnd = open_round(TCP, seats=(1,))
    deal(rnd, deck[:2])
    before, ops = rnd.snapshot(), rnd.operations

    def boom(rnd, position, events):
        raise RuntimeError("disk on fire")

    # A card's placement is applied before the hand-complete check, so raising there fails half way.
    monkeypatch.setattr(deal_phase, "_hand_complete", boom)
    with pytest.raises(RuntimeError):
        rnd.do(shoe_card(3, deck[2]))
    assert rnd.snapshot() == before and rnd.operations == ops
    monkeypatch.undo()
    rnd.do(shoe_card(3, deck[2]))
    assert list(rnd.hand(Position.seat_(1))) == deck[:3]


def test_no_reconstruction_once_a_player_has_decided(deck) -> None:
    """5.2 applies only while no player has handled their cards."""
    rnd = open_round(TCP, seats=(1, 3))
    deal(rnd, deck[:9])
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    deal(rnd, deck[9:12], start=10)
    report(rnd, 1, Position.seat_(2), 3)
    flag = rnd.irregularities[0]
    assert flag.decision is DecisionKind.VOID_ROUND and flag.proposal == ()


def test_unmapped_reader_id_is_foreign_not_unread(deck) -> None:
    """SPEC: code 0xFF with the foreign flag is an ID of no card of this deck (5.1)."""
    rnd = open_round(TCP, seats=(1,))
    rnd.do(shoe_card(1, None, foreign=True))
    flag = rnd.irregularities[0]
    assert flag.fault == "foreign" and flag.rules == ("5.1",)
