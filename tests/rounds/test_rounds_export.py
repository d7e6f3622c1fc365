"""The round exported in docs/round-format.md's format settles with cardshoe.settlement, and
void rounds and seats reach settlement with the rule that decided them."""

from __future__ import annotations

import json

import pytest

from cardshoe.cards import card_text
from cardshoe.rounds import (
    Choice,
    DealComplete,
    Decision,
    DeckFault,
    DeckIrregularity,
    ExposureDeclared,
    HandCountReported,
    NoMoreBets,
    PlaceWager,
    PlayerAbsent,
    Position,
    ProgressiveSelection,
    Settle,
    Source,
    SupervisorConfirmation,
    VoidRound,
)
from cardshoe.settlement import parse_round, settle

from rounds_helpers import deal, open_round, shoe_card

LIMITS = {
    "ante": {"min": 100, "max": 100000},
    "pair_plus": {"min": 100, "max": 100000},
    "six_card_bonus": {"min": 100, "max": 100000},
    "one": {"min": 100, "max": 100000},
    "progressive": {"min": 100, "max": 500},
}

CASES = [
    ("three-card-poker", "automated", None),
    ("three-card-poker", "manual", None),
    ("megalink-three-card-poker", "automated", None),
    ("megalink-three-card-poker", "manual", None),
    ("megalink-three-card-poker-xtreme", "automated", "A"),
    ("megalink-three-card-poker-xtreme", "automated", "B"),
    ("megalink-three-card-poker-xtreme", "automated", "C"),
    ("megalink-three-card-poker-xtreme", "manual", None),
    ("megalink-let-it-ride", "automated", None),
    ("megalink-let-it-ride", "manual", None),
    ("megalink-singapore-stud-poker", "automated", None),
    ("megalink-singapore-stud-poker", "manual", None),
]


def settled(rnd) -> dict:
    data = json.loads(json.dumps(rnd.to_round_json(limits=LIMITS, jackpot_reset=500_000)))
    return settle(parse_round(data)).to_json()


def outcomes(result: dict) -> dict[int, dict[str, str]]:
    return {s["seat"]: {w["wager"]: w["outcome"] for w in s["wagers"]} for s in result["seats"]}


def play_out(rnd, deck, seats) -> None:
    proc = rnd.procedure
    n = len(proc.phases[0].places)
    deal(rnd, deck[:n])
    rnd.do(DealComplete())
    game = rnd.game
    for s in seats:
        choice = {"megalink-singapore-stud-poker": Choice.BET, "megalink-let-it-ride": Choice.RIDE_1}.get(game, Choice.PLAY)
        rnd.do(Decision(seat=s, choice=choice))
    if game == "megalink-let-it-ride":
        for s in seats:
            rnd.do(Decision(seat=s, choice=Choice.PULL_2))
    if len(proc.phases) > 1:
        deal(rnd, deck[n : n + 3], start=n + 1)
    rnd.do(Settle(jackpot_pool=1_000_000))


@pytest.mark.parametrize("game,device,method", CASES)
def test_exported_round_settles_with_the_dealt_hands(game, device, method, deck) -> None:
    seats = (2, 5, 7)
    rnd = open_round(game, device, method, seats, close=False)
    rnd.do(PlaceWager(seat=5, wager="progressive", amount=100))
    if game == "megalink-let-it-ride":
        rnd.do(ProgressiveSelection(magic_card=deck[40], lucky_seat=5))
    rnd.do(NoMoreBets())
    play_out(rnd, deck, seats)
    data = rnd.to_round_json(limits=LIMITS, jackpot_reset=500_000)
    assert data["format"] == "cardshoe.round/1"
    for seat in data["seats"]:
        assert seat["cards"] == [card_text(c) for c in rnd.hand(Position.seat_(seat["seat"]))]
    if game != "megalink-let-it-ride":
        assert data["dealer"]["cards"] == [card_text(c) for c in rnd.hand(Position.DEALER)]
    assert data["community"] == [card_text(c) for c in rnd.hand(Position.COMMUNITY)]
    roles = sorted(x["role"] for x in data["out_of_play"])
    assert roles == sorted(["burn"] * len(rnd.burns) + ["security"] * len(rnd.security))
    result = settled(rnd)
    assert result["void"] is None
    assert sorted(outcomes(result)) == [2, 5, 7]
    assert all(o in ("win", "lose", "push", "returned") for seat in outcomes(result).values() for o in seat.values())


def test_seat_void_for_wrong_count_is_returned_at_settlement(deck) -> None:
    rnd = open_round("three-card-poker", seats=(1, 3))
    deal(rnd, deck[:10])
    rnd.do(HandCountReported(flag=1, position=Position.seat_(1), count=4, reporter="D"))
    rnd.do(DealComplete())
    rnd.do(Decision(seat=3, choice=Choice.PLAY))
    rnd.do(Settle())
    data = rnd.to_round_json(limits=LIMITS)
    assert data["irregularities"][0]["kind"] == "player_card_count" and data["irregularities"][0]["seats"] == [1]
    assert "5.7" in data["irregularities"][0]["note"]
    result = settled(rnd)
    assert outcomes(result)[1] == {"ante": "returned"}
    assert outcomes(result)[3]["ante"] in ("win", "lose", "push")


@pytest.mark.parametrize(
    "scenario,kind",
    [
        ("dealer_short", "dealer_card_count"),
        ("community_short", "community_card_count"),
        ("foreign", "foreign_card"),
        ("duplicate", "foreign_card"),
        ("unread", "foreign_card"),
        ("missing", "extra_or_missing_cards"),
        ("two_exposures", "exposed_cards"),
        ("supervisor", "manager_decision"),
        ("single_exposure_refused", "manager_decision"),
    ],
)
def test_void_round_reaches_settlement(scenario, kind, deck) -> None:
    rnd = open_round("megalink-three-card-poker", seats=(2, 4))
    if scenario == "dealer_short":
        deal(rnd, deck[:11])
        rnd.do(DealComplete())
        rnd.do(HandCountReported(flag=1, position=Position.DEALER, count=2, reporter="D"))
    elif scenario == "community_short":
        deal(rnd, deck[:11])
        rnd.do(DealComplete())
        rnd.do(HandCountReported(flag=1, position=Position.COMMUNITY, count=2, reporter="D"))
    elif scenario in ("foreign", "duplicate"):
        deal(rnd, deck[:11])
        code = deck[12] if scenario == "foreign" else deck[0]
        rnd.do(shoe_card(12, code, **{scenario: True}))
    elif scenario == "unread":
        deal(rnd, deck[:11] + [None])
    elif scenario == "missing":
        deal(rnd, deck[:12])
        rnd.do(DeckIrregularity(fault=DeckFault.MISSING, detail="end of shoe: card 7h never dealt"))
    elif scenario == "two_exposures":
        deal(rnd, deck[:4])
        rnd.do(ExposureDeclared(source=Source.SHOE_KEY, shoe_index=1))
        rnd.do(ExposureDeclared(source=Source.TABLE, shoe_index=4))
        deal(rnd, deck[4:12], start=5)
    elif scenario == "supervisor":
        deal(rnd, deck[:12])
        rnd.do(VoidRound(rule="5.16.1", reason="power failure", by="SM Lim"))
    elif scenario == "single_exposure_refused":
        deal(rnd, deck[:12])
        rnd.do(ExposureDeclared(source=Source.TABLE, shoe_index=2))
        rnd.do(SupervisorConfirmation(flag=1, confirmed=False, supervisor="SM Lim"))
    rnd.do(Settle())
    data = rnd.to_round_json(limits=LIMITS)
    assert kind in [x["kind"] for x in data["irregularities"]]
    assert all("decisions" not in seat for seat in data["seats"])  # nobody decided in a void round
    result = settled(rnd)
    assert result["void"] is not None
    assert all(o == "void" for seat in outcomes(result).values() for o in seat.values())


def test_reconstructed_round_settles_on_the_rebuilt_hands(deck) -> None:
    rnd = open_round("three-card-poker", seats=(1, 3))
    deal(rnd, deck[:12])
    rnd.do(HandCountReported(flag=1, position=Position.seat_(2), count=3, reporter="D"))
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="PS"))
    rnd.do(DealComplete())
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    rnd.do(Decision(seat=3, choice=Choice.PLAY))
    rnd.do(Settle())
    data = rnd.to_round_json(limits=LIMITS)
    assert data["irregularities"] == []
    assert data["seats"][1]["cards"] == [card_text(c) for c in deck[3:6]]
    assert data["dealer"]["cards"] == [card_text(c) for c in deck[6:9]]
    assert settled(rnd)["void"] is None


def test_absent_player_is_returned(deck) -> None:
    rnd = open_round("megalink-singapore-stud-poker", seats=(1, 2))
    deal(rnd, deck[:15])
    rnd.do(PlayerAbsent(seat=1))
    rnd.do(Decision(seat=2, choice=Choice.FOLD))
    rnd.do(Settle())
    assert rnd.to_round_json(limits=LIMITS)["seats"][0]["absent"] is True
    result = settled(rnd)
    assert outcomes(result)[1] == {"ante": "returned"}
    assert outcomes(result)[2] == {"ante": "lose"}


def test_export_refused_while_a_flag_waits(deck) -> None:
    rnd = open_round("three-card-poker", seats=(1,))
    deal(rnd, deck[:7])
    with pytest.raises(ValueError, match="#1"):
        rnd.to_round_json(limits=LIMITS)


def test_void_round_exports_even_with_a_flag_still_open(deck) -> None:
    rnd = open_round("three-card-poker", seats=(1,))
    deal(rnd, deck[:7])  # a card not due: waiting for a count
    rnd.do(shoe_card(8, deck[8], foreign=True))  # then a foreign card voids the round (5.1)
    assert rnd.pending_flags and rnd.void is not None
    rnd.do(Settle())
    kinds = [x["kind"] for x in rnd.to_round_json(limits=LIMITS)["irregularities"]]
    assert kinds == ["foreign_card"]


def test_player_with_a_correct_hand_may_withdraw_5_7_1(deck) -> None:
    from cardshoe.rounds import WagerWithdrawn

    rnd = open_round("three-card-poker", seats=(1, 3, 5))
    deal(rnd, deck[:13])
    rnd.do(HandCountReported(flag=1, position=Position.seat_(1), count=4, reporter="D"))
    with pytest.raises(ValueError, match="void"):
        rnd.do(WagerWithdrawn(flag=1, seat=1, permitted_by="PS"))  # the voided hand itself
    rnd.do(WagerWithdrawn(flag=1, seat=3, permitted_by="PS Wong"))
    assert rnd.void_seats[3].rules == ("5.7.1",)
    rnd.do(DealComplete())
    rnd.do(Decision(seat=5, choice=Choice.PLAY))
    rnd.do(Settle())
    irr = rnd.to_round_json(limits=LIMITS)["irregularities"]
    assert irr[0]["seats"] == [1] and irr[0]["withdrawn_seats"] == [3]
    result = settled(rnd)
    assert outcomes(result)[1] == {"ante": "returned"} and outcomes(result)[3] == {"ante": "returned"}
    assert outcomes(result)[5]["ante"] in ("win", "lose", "push")
    assert Round_replays(rnd)


def Round_replays(rnd) -> bool:
    from cardshoe.rounds import Round

    return Round.replay(rnd.operations).snapshot() == rnd.snapshot()


def test_an_invalid_progressive_alone_exports_no_jackpot_and_settles_5_12_2(deck) -> None:
    # 5.12.2: seat 4 holds only a progressive: it is not dealt to, its wager is invalid, and the
    # round needs no jackpot pool (none is in action); seat 1 plays as usual.
    rnd = open_round("three-card-poker", seats=(1,), close=False)
    rnd.do(PlaceWager(seat=4, wager="progressive", amount=100, time_ms=1001))
    rnd.do(NoMoreBets(time_ms=1002))
    deal(rnd, deck[:6])
    rnd.do(DealComplete())
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    rnd.do(Settle(jackpot_pool=None))
    data = json.loads(json.dumps(rnd.to_round_json(limits=LIMITS, jackpot_reset=None)))
    assert data["jackpot"] is None
    result = settle(parse_round(data)).to_json()
    assert outcomes(result)[4] == {"progressive": "returned"}


@pytest.mark.parametrize("game,dealt,rule", [
    ("three-card-poker", 12, "5.2"),  # seats 1, 3 and the dealer, with a hand to seat 2 between
    ("megalink-singapore-stud-poker", 20, "5.2"),
    ("megalink-let-it-ride", 11, "5.3"),  # LIR numbers it 5.3; no dealer's hand
])
def test_a_refused_reconstruction_voids_the_settlement_by_the_rule_that_voided_the_round(game, dealt, rule, deck) -> None:
    """5.2 (LIR 5.3): dealt incorrectly, the round is void unless complete hands can be moved.
    A supervisor refusing the proposed move leaves the round void by that rule, and the
    settlement must say so, not refer it to the shift manager (6.1)."""
    rnd = open_round(game, seats=(1, 3))
    deal(rnd, deck[:dealt])  # a spare hand dealt to seat 2, which holds no wager
    size = 5 if "stud" in game else 3
    rnd.do(HandCountReported(flag=1, position=Position.seat_(2), count=size, reporter="D"))
    assert rnd.irregularities[0].decision.value == "reconstruction_proposed"
    rnd.do(SupervisorConfirmation(flag=1, confirmed=False, supervisor="PS Wong"))
    assert rnd.void is not None and rnd.void.rules == (rule,)
    rnd.do(Settle())
    (irregularity,) = rnd.to_round_json(limits=LIMITS)["irregularities"]
    assert irregularity["kind"] == "misdeal", irregularity
    result = settled(rnd)
    assert result["void"]["rules"] == [rule], result["void"]
    assert all(o == "void" for seat in outcomes(result).values() for o in seat.values())


def test_a_refused_manual_placement_voids_the_settlement_by_5_2(deck) -> None:
    """Manual device, one seat a card short (3.8, 5.7): refusing every candidate placement
    means the deal cannot be shown, so the round is void under 5.2, and so is the settlement."""
    rnd = open_round("three-card-poker", "manual", None, (2, 5, 7))
    assert rnd.procedure is not None
    deal(rnd, deck[: len(rnd.procedure.places) - 1])
    rnd.do(DealComplete())
    (flag,) = rnd.pending_flags
    rnd.do(HandCountReported(flag=flag.id, position=Position.seat_(7), count=2, reporter="D"))
    assert rnd.irregularities[flag.id - 1].decision.value == "placement_proposed"
    rnd.do(SupervisorConfirmation(flag=flag.id, confirmed=False, supervisor="SUP-1"))
    assert rnd.void is not None and rnd.void.rules == ("5.2",)
    rnd.do(Settle())
    assert [x["kind"] for x in rnd.to_round_json(limits=LIMITS)["irregularities"]] == ["misdeal"]
    assert settled(rnd)["void"]["rules"] == ["5.2"]


def test_a_supervisors_void_and_a_refused_referral_stay_manager_decisions(deck) -> None:
    """A round voided by hand, and a referral (6.1) the shift manager decides as void, are the
    manager's decisions: the settlement cites 6.1, as before."""
    rnd = open_round("three-card-poker", seats=(1, 3))
    deal(rnd, deck[:12])  # a spare hand at seat 2: its count flag is still waiting when voided
    rnd.do(VoidRound(rule="6.1", reason="table closed", by="SM Lim"))
    rnd.do(Settle())
    kinds = [x["kind"] for x in rnd.to_round_json(limits=LIMITS)["irregularities"]]
    assert kinds == ["manager_decision", "manager_decision"]
    assert settled(rnd)["void"]["rules"] == ["6.1"]
