"""Replay: a round rebuilt from its operations has the same state and events; and properties
of placement that must hold for any dealing order (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardshoe.rounds import (
    GAME_IDS,
    Choice,
    DealComplete,
    Decision,
    ExposureDeclared,
    HandCountReported,
    OpenRound,
    Place,
    PlaceKind,
    Position,
    Round,
    RoundOperationError,
    Settle,
    Source,
    SupervisorConfirmation,
    build_procedure,
    operation_from_json,
    operation_to_json,
)
from cardshoe.rounds.layout import layout_placements, physical_layout

from rounds_helpers import deal, open_round, shoe_card


def _json_roundtrip(rnd: Round) -> list:
    text = json.dumps([operation_to_json(op) for op in rnd.operations])
    return [operation_from_json(d) for d in json.loads(text)]


def _assert_replays(rnd: Round) -> None:
    again = Round.replay(rnd.operations)
    assert again.snapshot() == rnd.snapshot()
    assert again.events == rnd.events
    from_json = Round.replay(_json_roundtrip(rnd))
    assert from_json.snapshot() == rnd.snapshot()
    assert [e.to_json() for e in from_json.events] == [e.to_json() for e in rnd.events]
    json.dumps(rnd.snapshot())  # the snapshot is plain JSON
    json.dumps([e.to_json() for e in rnd.events])


def test_replay_of_a_round_with_a_reconstruction(deck) -> None:
    rnd = open_round("three-card-poker", "manual", None, (1, 3))
    deal(rnd, deck[:12])
    rnd.do(HandCountReported(flag=1, position=Position.seat_(2), count=3, reporter="D1", time_ms=7))
    rnd.do(SupervisorConfirmation(flag=1, confirmed=True, supervisor="PS", time_ms=8))
    rnd.do(ExposureDeclared(source=Source.TABLE, place=Place(PlaceKind.SEAT, 1, 2)))
    rnd.do(SupervisorConfirmation(flag=2, confirmed=True, supervisor="SM"))
    rnd.do(DealComplete())
    rnd.do(Decision(seat=1, choice=Choice.PLAY))
    rnd.do(Decision(seat=3, choice=Choice.FOLD))
    rnd.do(Settle(jackpot_pool=100))
    _assert_replays(rnd)


def test_replay_of_xtreme_b_and_voids(deck) -> None:
    rnd = open_round("megalink-three-card-poker-xtreme", "automated", "B", (2, 6))
    deal(rnd, deck[:9])
    rnd.do(Decision(seat=2, choice=Choice.PLAY))
    rnd.do(Decision(seat=6, choice=Choice.FOLD))
    deal(rnd, deck[9:11], start=10)
    rnd.do(DealComplete())
    rnd.do(HandCountReported(flag=1, position=Position.DEALER, count=2, reporter="D1"))
    rnd.do(Settle())
    _assert_replays(rnd)
    assert rnd.void is not None


GAMES_DEVICES = [
    (g, d, m)
    for g in GAME_IDS
    for d in ("automated", "manual")
    for m in ((["A", "B", "C"] if g.endswith("xtreme") and d == "automated" else [None]))
]


@st.composite
def dealing(draw):
    game, device, method = draw(st.sampled_from(GAMES_DEVICES))
    seats = draw(st.sets(st.integers(1, 7), min_size=1, max_size=7))
    order = draw(st.permutations(list(range(52))))
    return game, device, method, tuple(sorted(seats)), order


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dealing(), st.data())
def test_each_shoe_card_goes_to_exactly_one_place(case, data) -> None:
    game, device, method, seats, order = case
    rnd = open_round(game, device, method, seats)
    places = rnd.procedure.places
    n = data.draw(st.integers(0, min(52, len(places) + 4)))
    key_at = data.draw(st.integers(0, n))
    for k in range(n):
        if k == key_at and rnd.can(DealComplete()):
            rnd.do(DealComplete())
        rnd.do(shoe_card(k + 1, order[k]))
    indices = set(rnd.cards)
    placed = set(rnd.placements)
    assert placed.isdisjoint(rnd.not_due)
    assert placed | set(rnd.not_due) == indices == set(range(1, n + 1))
    assert len(set(rnd.placements.values())) == len(rnd.placements)  # no place twice
    # what was placed follows the procedure's order (per phase, since method B pauses)
    for k, index in enumerate(sorted(placed)):
        assert rnd.placements[index] in places
    assert all(p in places for p in rnd.placements.values())
    _assert_replays(rnd)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(GAMES_DEVICES), st.sets(st.integers(1, 7), min_size=1), st.data())
def test_physical_layout_places_every_card_once(gdm, seats, data) -> None:
    game, device, method = gdm
    proc = build_procedure(game, device, sorted(seats), method)
    phase = proc.phases[0]
    positions = [u.position for u in phase.units] + [Position.seat_(s) for s in range(1, 8) if s not in seats]
    reported = data.draw(st.dictionaries(st.sampled_from(positions + [Position.DISCARD]), st.integers(0, 6), max_size=4))
    layout = physical_layout(phase, reported)
    total = sum(u.count for u in layout)
    mapping = layout_placements(layout)
    assert sorted(mapping) == list(range(total))
    assert len(set(mapping.values())) == total
    for unit in layout:
        assert unit.count == reported.get(unit.position, len(unit.nominal.places) if unit.nominal else 0)


OPS = st.one_of(
    st.builds(lambda i, c: ("card", i, c), st.integers(1, 30), st.integers(0, 51)),
    st.just(("key",)),
    st.builds(lambda s, c: ("decide", s, c), st.integers(1, 7), st.sampled_from(list(Choice))),
    st.builds(lambda f, s, n: ("count", f, s, n), st.integers(1, 3), st.integers(0, 7), st.integers(0, 5)),
    st.builds(lambda f, ok: ("confirm", f, ok), st.integers(1, 3), st.booleans()),
    st.builds(lambda i: ("expose", i), st.integers(1, 30)),
    st.just(("settle",)),
)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(GAMES_DEVICES), st.sets(st.integers(1, 7), min_size=1, max_size=4), st.lists(OPS, max_size=40))
def test_random_operations_replay_exactly(gdm, seats, ops) -> None:
    """Whatever is accepted or refused, replaying the accepted operations rebuilds the round."""
    game, device, method = gdm
    rnd = open_round(game, device, method, sorted(seats))
    for op in ops:
        if op[0] == "card":
            o = shoe_card(op[1], op[2])
        elif op[0] == "key":
            o = DealComplete()
        elif op[0] == "decide":
            o = Decision(seat=op[1], choice=op[2])
        elif op[0] == "count":
            pos = Position.DEALER if op[2] == 0 else Position.seat_(op[2])
            o = HandCountReported(flag=op[1], position=pos, count=op[3], reporter="D")
        elif op[0] == "confirm":
            o = SupervisorConfirmation(flag=op[1], confirmed=op[2], supervisor="S")
        elif op[0] == "expose":
            o = ExposureDeclared(source=Source.TABLE, shoe_index=op[1])
        else:
            o = Settle()
        before = rnd.snapshot()
        try:
            rnd.do(o)
        except RoundOperationError:
            assert rnd.snapshot() == before
    _assert_replays(rnd)
    assert set(rnd.placements).isdisjoint(rnd.not_due)
    assert set(rnd.placements) | set(rnd.not_due) == set(rnd.cards)


def test_open_round_refuses_bad_configuration() -> None:
    import pytest

    from cardshoe.rounds import ProcedureError

    with pytest.raises(ProcedureError, match="method"):
        Round.open(OpenRound(round_id="x", game="megalink-three-card-poker-xtreme", device="automated"))
    with pytest.raises(ProcedureError, match="only to Xtreme"):
        Round.open(OpenRound(round_id="x", game="three-card-poker", device="automated", method="A"))
    with pytest.raises(ProcedureError, match="unknown game"):
        Round.open(OpenRound(round_id="x", game="baccarat", device="automated"))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(GAMES_DEVICES), st.sets(st.integers(1, 7), min_size=1, max_size=5), st.data())
def test_count_irregularity_flows_keep_every_card_placed_once(gdm, seats, data) -> None:
    """Too many or too few cards, then any sequence of people's counts and confirmations."""
    game, device, method = gdm
    rnd = open_round(game, device, method, sorted(seats))
    phase = rnd.procedure.phases[0]
    delta = data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
    n = max(0, len(phase.places) + delta)
    order = data.draw(st.permutations(list(range(52))))
    for k in range(n):
        rnd.do(shoe_card(k + 1, order[k]))
    if rnd.can(DealComplete()):
        rnd.do(DealComplete())
    positions = [u.position for u in phase.units] + [Position.seat_(s) for s in range(1, 8)] + [Position.DISCARD]
    for _ in range(data.draw(st.integers(0, 5))):
        pos = data.draw(st.sampled_from(positions))
        op = HandCountReported(flag=1, position=pos, count=data.draw(st.integers(0, 6)), reporter="D")
        if rnd.can(op):
            rnd.do(op)
    confirm = SupervisorConfirmation(flag=1, confirmed=data.draw(st.booleans()), supervisor="S")
    if rnd.can(confirm):
        rnd.do(confirm)
    flag = rnd.irregularities[0] if rnd.irregularities else None
    assert flag is not None or n == len(phase.places)
    assert set(rnd.placements).isdisjoint(rnd.not_due)
    assert set(rnd.placements) | set(rnd.not_due) == set(rnd.cards) == set(range(1, n + 1))
    assert len(set(rnd.placements.values())) == len(rnd.placements)
    if flag is not None and not flag.open and flag.decision.value != "void_round":
        # a decided count accounts for every card of the phase
        assert rnd.not_due == []
    _assert_replays(rnd)
