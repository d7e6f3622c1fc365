"""Hands rebuilt by seat from the dealing order, card by card, for every game and procedure.

The expected hands are computed here from the rule text with index arithmetic (packets for
an automated device, passes round the table for a manual one), independently of the
procedure tables in cardshoe.rounds.procedures.
"""

from __future__ import annotations

import pytest

from cardshoe.rounds import (
    CardPlaced,
    Choice,
    DealComplete,
    Decision,
    HandComplete,
    PlaceKind,
    Position,
    RoundStatus,
    build_procedure,
)

from rounds_helpers import deal, open_round

SEAT_SETS = [(1,), (7,), (4,), (2, 5, 7), (1, 3, 6), (1, 2, 3, 4, 5, 6, 7), (2, 3), (1, 7)]

TCP = "three-card-poker"
MTCP = "megalink-three-card-poker"
XT = "megalink-three-card-poker-xtreme"
LIR = "megalink-let-it-ride"
STUD = "megalink-singapore-stud-poker"


def packets(d: list[int], seats: tuple[int, ...], h: int, start: int = 0) -> dict[int, list[int]]:
    """Automated device (3.7): ``h`` cards to each seat in turn from the dealer's left."""
    return {s: d[start + i * h : start + (i + 1) * h] for i, s in enumerate(sorted(seats))}


def passes(d: list[int], positions: int, i: int, h: int) -> list[int]:
    """Manual device (3.8): position ``i`` of ``positions`` gets one card per pass round the table."""
    return [d[i + positions * k] for k in range(h)]


def expected(game: str, device: str, method: str | None, seats: tuple[int, ...], d: list[int]):
    n = len(seats)
    h = 5 if game == STUD else 3
    dealer: list[int] = []
    community: list[int] = []
    burns: list[int] = []
    security: list[int] = []
    order = sorted(seats)
    if device == "manual" and game != LIR:  # LIR has no manual rule: 3.6 packets on either device
        m = n + 1
        hands = {s: passes(d, m, i, h) for i, s in enumerate(order)}
        dealer = passes(d, m, n, h)
        used = m * h
        if game in (MTCP, XT):
            community = d[used : used + 2]  # 3.8: two community cards, no burn
        return hands, dealer, community, burns, security
    if game == XT and method == "C":
        security = [d[0]]  # 3.7.3.1, security card under the dealer's three: first out
        dealer = d[1:4]
        hands = packets(d, seats, 3, 4)
        used = 4 + 3 * n
        community, burns = d[used : used + 2], [d[used + 2]]
        return hands, dealer, community, burns, security
    hands = packets(d, seats, h)
    used = h * n
    if game == XT and method == "B":
        community, burns = d[used : used + 2], [d[used + 2]]
        dealer = d[used + 3 : used + 6]  # 3.7.2.1: dealt after the decisions
        return hands, dealer, community, burns, security
    if game == LIR:
        return hands, dealer, d[used : used + 2], burns, security  # 3.6-3.7
    dealer = d[used : used + h]
    used += h
    if game in (MTCP, XT):
        community, burns = d[used : used + 2], [d[used + 2]]  # third (top) card burned
    return hands, dealer, community, burns, security


PROCEDURES = [
    (TCP, "automated", None),
    (TCP, "manual", None),
    (MTCP, "automated", None),
    (MTCP, "manual", None),
    (XT, "automated", "A"),
    (XT, "automated", "B"),
    (XT, "automated", "C"),
    (XT, "manual", None),
    (LIR, "automated", None),
    (LIR, "manual", None),
    (STUD, "automated", None),
    (STUD, "manual", None),
]


def decide_all(rnd, seats) -> None:
    for s in sorted(seats):
        if rnd.game == STUD:
            rnd.do(Decision(seat=s, choice=Choice.BET))
        elif rnd.game == LIR:
            rnd.do(Decision(seat=s, choice=Choice.RIDE_1))
        else:
            rnd.do(Decision(seat=s, choice=Choice.PLAY))
    if rnd.game == LIR:
        for s in sorted(seats):
            rnd.do(Decision(seat=s, choice=Choice.PULL_2))


@pytest.mark.parametrize("game,device,method", PROCEDURES)
@pytest.mark.parametrize("seats", SEAT_SETS, ids=lambda s: "seats" + "-".join(map(str, s)))
def test_hands_by_seat_card_by_card(game, device, method, seats, deck) -> None:
    rnd = open_round(game, device, method, seats)
    hands, dealer, community, burns, security = expected(game, device, method, seats, deck)
    proc = rnd.procedure
    first = len(proc.phases[0].places)
    events = deal(rnd, deck[:first])
    rnd.do(DealComplete())
    decide_all(rnd, seats)
    if len(proc.phases) > 1:  # Xtreme method B: the dealer's three after the decisions
        assert rnd.status is RoundStatus.DEALER
        events += deal(rnd, deck[first : first + 3], start=first + 1)
        rnd.do(DealComplete())
    for seat in seats:
        assert list(rnd.hand(Position.seat_(seat))) == hands[seat], f"seat {seat}"
    for seat in set(range(1, 8)) - set(seats):
        assert rnd.hand(Position.seat_(seat)) == ()
    assert list(rnd.hand(Position.DEALER)) == dealer
    assert list(rnd.hand(Position.COMMUNITY)) == community
    assert list(rnd.burns) == burns
    assert list(rnd.security) == security
    assert rnd.irregularities == ()
    assert rnd.not_due == []
    # every card was announced where it landed, in shoe order, each hand completed once
    placed = [e for e in events if isinstance(e, CardPlaced)]
    assert [e.index for e in placed] == list(range(1, len(placed) + 1))
    assert [e.card for e in placed] == deck[: len(placed)]
    completes = [e.position for e in events if isinstance(e, HandComplete)]
    assert sorted(completes) == sorted(set(completes))
    assert set(completes) == {Position.seat_(s) for s in seats} | ({Position.DEALER} if dealer else set()) | (
        {Position.COMMUNITY} if community else set()
    )


@pytest.mark.parametrize("device", ["automated", "manual"])
def test_stud_dealer_last_card_is_the_public_up_card(device, deck) -> None:
    """Stud 3.7/3.8: the dealer's last card is exposed by the procedure, and only that one."""
    rnd = open_round(STUD, device, None, (2, 6))
    events = [e for e in deal(rnd, deck[:15]) if isinstance(e, CardPlaced)]
    public = [e for e in events if e.public]
    assert len(public) == 1
    assert public[0].place.kind is PlaceKind.DEALER and public[0].place.number == 5
    assert public[0].card == rnd.hand(Position.DEALER)[4]


def test_golden_manual_three_card_poker_order() -> None:
    """TCP 3.8 with seats 2, 5 and 7: one card each round the table, dealer last, three passes."""
    proc = build_procedure(TCP, "manual", [7, 2, 5])
    labels = [p.label() for p in proc.places]
    assert labels == [
        "seat 2 card 1", "seat 5 card 1", "seat 7 card 1", "dealer card 1",
        "seat 2 card 2", "seat 5 card 2", "seat 7 card 2", "dealer card 2",
        "seat 2 card 3", "seat 5 card 3", "seat 7 card 3", "dealer card 3",
    ]


def test_let_it_ride_on_a_manual_device_deals_packets_of_three_by_3_6(deck) -> None:
    """LIR 3.6 "three cards face down to each betting area" is the document's only dealing rule
    (it has no one-card-at-a-time rule like the others' 3.8), so a manual device deals packets:
    seat 2's three, then seat 5's three, then the two community cards (3.7)."""
    proc = build_procedure(LIR, "manual", [5, 2])
    assert [p.label() for p in proc.places] == [
        "seat 2 card 1", "seat 2 card 2", "seat 2 card 3",
        "seat 5 card 1", "seat 5 card 2", "seat 5 card 3",
        "community card 1", "community card 2",
    ]
    rnd = open_round(LIR, "manual", None, (2, 5))
    deal(rnd, deck[:8])
    assert list(rnd.hand(Position.seat_(2))) == deck[0:3]
    assert list(rnd.hand(Position.seat_(5))) == deck[3:6]
    assert list(rnd.hand(Position.COMMUNITY)) == deck[6:8]
    assert rnd.irregularities == ()


def test_golden_xtreme_method_c_order() -> None:
    """Xtreme 3.7.3.1: security card and dealer first, then seats, then community with burn."""
    proc = build_procedure(XT, "automated", [3], "C")
    assert [p.label() for p in proc.places] == [
        "security card 1", "dealer card 1", "dealer card 2", "dealer card 3",
        "seat 3 card 1", "seat 3 card 2", "seat 3 card 3",
        "community card 1", "community card 2", "burn card 1",
    ]


@pytest.mark.parametrize("game", ["three-card-poker", MTCP, XT, LIR, STUD])
def test_procedures_agree_with_the_games_data(game) -> None:
    """The rounds' procedures and the games task's game data describe the same deal."""
    from cardshoe.games import get_game
    from cardshoe.rounds import BASE_WAGERS, WAGERS

    g = get_game(game)
    assert set(g.wagers) == set(WAGERS[game]) and set(g.base_wagers) == set(BASE_WAGERS[game])
    method = "A" if game == XT else None
    proc = build_procedure(game, "automated", [1, 4], method)
    assert proc.expected(Position.seat_(4)) == g.player_cards
    assert proc.expected(Position.DEALER) == g.dealer_cards
    assert proc.expected(Position.COMMUNITY) == g.community_cards
