"""Hands rebuilt by seat, checked against the tester's own reading of each dealing rule.

Derivations are in rbb_helpers.expected_order (one comment per rule). Every game and device,
Xtreme methods A/B/C, with 1, 3 (gapped: 2, 5, 7) and 7 active seats.
"""

from __future__ import annotations

import pytest

from cardshoe.rounds import (
    BetsClosed,
    CardPlaced,
    CountChecked,
    DealComplete,
    Device,
    HandComplete,
    NoMoreBets,
    Place,
    PlaceKind,
    PlaceWager,
    Position,
    Round,
    RoundStatus,
    Settle,
    build_procedure,
)

from rbb_helpers import (
    LIR,
    MTCP,
    SEAT_SETS,
    SSP,
    TCP,
    XT,
    B,
    C,
    D,
    S,
    X,
    bet,
    code_for,
    combos,
    deal,
    decide_all,
    expected_order,
    flags_of,
    open_round,
)

CASES = [(g, d, m, seats) for (g, d, m) in combos() for seats in SEAT_SETS]
IDS = [f"{g}-{d}{'-' + m if m else ''}-seats{''.join(map(str, s))}" for g, d, m, s in CASES]


def _place(slot: tuple[PlaceKind, int, int]) -> Place:
    return Place(slot[0], slot[1], slot[2])


@pytest.mark.parametrize(("game", "device", "method", "seats"), CASES, ids=IDS)
def test_procedure_places_follow_the_rule(game: str, device: str, method: str | None, seats: tuple[int, ...]) -> None:
    exp = expected_order(game, device, seats, method)
    proc = build_procedure(game, device, list(reversed(seats)), method)  # given in any order
    assert proc.seats == tuple(sorted(seats))
    assert list(proc.places) == [_place(s) for s in exp.deal + exp.after_decisions]
    assert {(p.kind, p.seat, p.number) for p in proc.public_places} == set(exp.public)
    n = 5 if game == SSP else 3
    for s in range(1, 8):
        assert proc.expected(Position.seat_(s)) == (n if s in seats else 0)
    assert proc.expected(Position.DEALER) == (0 if game == LIR else n)
    assert proc.expected(Position.COMMUNITY) == (2 if game in (MTCP, XT, LIR) else 0)


@pytest.mark.parametrize(("game", "device", "method", "seats"), CASES, ids=IDS)
def test_cards_placed_by_seat_as_they_arrive(game: str, device: str, method: str | None, seats: tuple[int, ...]) -> None:
    exp = expected_order(game, device, seats, method)
    r = open_round(game, device, method)
    bet(r, game, seats)
    closed = r.do(NoMoreBets(time_ms=3))
    bc = [e for e in closed if isinstance(e, BetsClosed)]
    assert len(bc) == 1 and bc[0].seats == tuple(sorted(seats))
    assert bc[0].expected_cards == len(exp.deal) + len(exp.after_decisions)

    events = deal(r, 1, len(exp.deal))
    placed = [e for e in events if isinstance(e, CardPlaced)]
    # The event stream shows each card at its place, in shoe order, as it arrives.
    assert [(e.index, e.place) for e in placed] == [(i + 1, _place(s)) for i, s in enumerate(exp.deal)]
    assert [e.card for e in placed] == [code_for(i + 1) for i in range(len(exp.deal))]
    assert [e.reader_id for e in placed] == [f"{i + 1:08x}" for i in range(len(exp.deal))]
    for e in placed:
        assert e.public == ((e.place.kind, e.place.seat, e.place.number) in exp.public)
    assert not flags_of(events)

    after = r.do(DealComplete(time_ms=9000))
    cc = [e for e in after if isinstance(e, CountChecked)]
    assert cc and cc[0].expected == cc[0].dealt == len(exp.deal)
    assert not flags_of(list(after))

    if exp.after_decisions:
        # XT 3.7.2.1: the dealer's hand is not on the table before every player decided.
        assert r.hand(Position.DEALER) == ()
        decide_all(r, game, seats)
        events2 = deal(r, len(exp.deal) + 1, len(exp.after_decisions))
        placed2 = [e for e in events2 if isinstance(e, CardPlaced)]
        assert [(e.index, e.place) for e in placed2] == [
            (len(exp.deal) + i + 1, _place(s)) for i, s in enumerate(exp.after_decisions)
        ]
        assert not flags_of(events2)
    else:
        decide_all(r, game, seats)

    # Hands, by the tester's derivation.
    order = list(exp.deal + exp.after_decisions)
    want: dict[tuple[PlaceKind, int], list[int]] = {}
    for i, (k, seat, num) in enumerate(order):
        want.setdefault((k, seat), []).append(code_for(i + 1))
    for s in range(1, 8):
        assert r.hand(Position.seat_(s)) == tuple(want.get((S, s), []))
    assert r.hand(Position.DEALER) == tuple(want.get((D, 0), []))
    assert r.hand(Position.COMMUNITY) == tuple(want.get((C, 0), []))
    assert tuple(r.burns) == tuple(want.get((B, 0), []))
    assert tuple(r.security) == tuple(want.get((X, 0), []))
    assert {i: p for i, p in r.placements.items()} == {i + 1: _place(s) for i, s in enumerate(order)}
    # hands() holds every seat/dealer/community hand with cards, and nothing else.
    hands = r.hands()
    assert {p: h for p, h in hands.items()} == {
        **{Position.seat_(s): tuple(want[(S, s)]) for s in seats},
        **({Position.DEALER: tuple(want[(D, 0)])} if (D, 0) in want else {}),
        **({Position.COMMUNITY: tuple(want[(C, 0)])} if (C, 0) in want else {}),
    }
    settled = r.do(Settle(jackpot_pool=100000, time_ms=20000))
    assert r.status == RoundStatus.SETTLED
    assert not flags_of(list(settled)) and not r.pending_flags and r.void is None


@pytest.mark.parametrize("device", ["automated", "manual"])
def test_stud_dealer_up_card_is_card_five(device: str) -> None:
    """SSP 3.7/3.8: the dealer's last card is exposed; only it is public."""
    seats = (2, 5, 7)
    exp = expected_order(SSP, device, seats)
    r = open_round(SSP, device)
    bet(r, SSP, seats)
    r.do(NoMoreBets())
    events = deal(r, 1, len(exp.deal))
    public = [e for e in events if isinstance(e, CardPlaced) and e.public]
    assert [e.place for e in public] == [Place(PlaceKind.DEALER, 0, 5)]
    # automated: the last of the 20 seat cards + 5 dealer = index 20; manual: last pass, last card.
    assert public[0].index == len(exp.deal)


def test_hand_complete_events_per_position() -> None:
    """A HandComplete per seat when its third card lands (TCP 3.7, packets)."""
    r = open_round(TCP, "automated")
    bet(r, TCP, (2, 5, 7))
    r.do(NoMoreBets())
    events = deal(r, 1, 12)
    hc = [(e.position, e.cards) for e in events if isinstance(e, HandComplete)]
    assert hc == [
        (Position.seat_(2), tuple(code_for(i) for i in (1, 2, 3))),
        (Position.seat_(5), tuple(code_for(i) for i in (4, 5, 6))),
        (Position.seat_(7), tuple(code_for(i) for i in (7, 8, 9))),
        (Position.DEALER, tuple(code_for(i) for i in (10, 11, 12))),
    ]


@pytest.mark.parametrize(
    ("game", "wagers", "active"),
    [
        # TCP 3.4 / 3.7: "Ante and/or Pair Plus": a Pair Plus seat is dealt to.
        (TCP, {1: {"pair_plus": 1000}, 3: {"ante": 2500}, 6: {"progressive": 500}}, (1, 3)),
        # XT 3.4: Ante, Pair Plus and/or Six Card Bonus; a progressive alone (5.12) is not a hand.
        (XT, {2: {"six_card_bonus": 500}, 4: {"progressive": 100}, 7: {"pair_plus": 1000}}, (2, 7)),
        # SSP 3.4: Ante only.
        (SSP, {1: {"ante": 2500}, 5: {"progressive": 100}}, (1,)),
    ],
)
def test_active_seats_are_those_with_a_base_wager(game: str, wagers: dict[int, dict[str, int]], active: tuple[int, ...]) -> None:
    r = open_round(game, "manual")
    for seat, ws in wagers.items():
        for w, a in ws.items():
            r.do(PlaceWager(seat=seat, wager=w, amount=a))
    ev = r.do(NoMoreBets())
    assert r.active_seats() == active
    assert [e.seats for e in ev if isinstance(e, BetsClosed)] == [active]
    assert r.procedure.seats == active


def test_first_card_implies_no_more_bets() -> None:
    """TCP 3.4: wagers are placed before the first card; the API says the first card closes bets."""
    r = open_round(TCP, "automated")
    bet(r, TCP, (3,))
    ev = r.do(__import__("rbb_helpers").card(1))
    assert any(isinstance(e, BetsClosed) for e in ev)
    assert any(isinstance(e, CardPlaced) and e.place == Place(PlaceKind.SEAT, 3, 1) for e in ev)


def test_replay_gives_same_hands() -> None:
    r = open_round(XT, "automated", "C")
    bet(r, XT, (1, 4, 6))
    r.do(NoMoreBets())
    deal(r, 1, 4 + 9 + 3)
    r.do(DealComplete())
    again = Round.replay(r.operations)
    assert again.snapshot() == r.snapshot()
    assert again.events == r.events
    assert Device(again.snapshot()["device"]) == Device.AUTOMATED
