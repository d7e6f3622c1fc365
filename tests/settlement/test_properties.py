"""Properties of every settlement, over random deals of every game (hypothesis).

Whatever the cards and decisions: amounts are integers, a push or returned wager gives the
stake back, a loss never pays more than an excess over the maximum, the pool never goes
negative and its ledger adds up, and settling the same round twice gives the same result.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cardshoe.cards import card_text
from cardshoe.games import GAME_IDS, get_game
from cardshoe.settlement import Outcome, parse_round, settle
from settlement_helpers import LIMITS, make_round


@st.composite
def rounds(draw: Any) -> dict[str, Any]:
    game_id = draw(st.sampled_from(GAME_IDS))
    game = get_game(game_id)
    deck = draw(st.permutations(range(52)))
    seat_numbers = sorted(draw(st.sets(st.integers(1, 7), min_size=1, max_size=5)))
    unit = LIMITS[game_id]["progressive"]["min"]
    multiples = game.progressive.multiples or (1, 2, 3, 4, 5)
    pos = 0

    def deal(n: int) -> list[str]:
        nonlocal pos
        out = [card_text(c) for c in deck[pos:pos + n]]
        pos += n
        return out

    seats = []
    for n in seat_numbers:
        amount = draw(st.sampled_from([500, 1000, 2500, 600000]))  # under min, normal, over max
        wagers: dict[str, int] = {}
        decisions: dict[str, str] = {}
        if game_id == "megalink-let-it-ride":
            wagers.update(one=amount, two=amount, dollar=amount)
            decisions = {"one": draw(st.sampled_from(["ride", "withdraw"])),
                         "two": draw(st.sampled_from(["ride", "withdraw"]))}
        else:
            assert game.decision is not None
            if draw(st.booleans()) or "pair_plus" not in game.wagers:
                wagers["ante"] = amount
                if draw(st.booleans()):
                    wagers[game.decision.wager] = amount * game.decision.multiple
                    decisions["ante"] = game.decision.continue_choice
                else:
                    decisions["ante"] = "fold"
            for side in ("pair_plus", "six_card_bonus"):
                if side in game.wagers and draw(st.booleans()):
                    wagers[side] = 1000
        if not wagers:
            assert game.decision is not None
            wagers["ante"] = amount
            decisions["ante"] = "fold"
        if draw(st.booleans()):
            wagers["progressive"] = unit * draw(st.sampled_from(multiples))
        if "progressive" in wagers and draw(st.integers(0, 9)) == 0:
            wagers = {"progressive": wagers["progressive"]}  # no base wager (5.12.2)
            decisions = {}
        seat: dict[str, Any] = {"seat": n, "wagers": wagers, "decisions": decisions, "cards": deal(game.player_cards)}
        if game.decision is not None and "ante" in wagers and draw(st.integers(0, 9)) == 0:
            seat["declined_comparison"] = True
        seats.append(seat)
    fields: dict[str, Any] = {"community": deal(game.community_cards)}
    if game.dealer_cards:
        fields["dealer"] = {"cards": deal(game.dealer_cards)}
    pool = draw(st.integers(0, 10**8))
    jackpot: dict[str, Any] = {"pool": pool, "reset": draw(st.integers(0, 10**7))}
    if game_id == "megalink-let-it-ride":
        jackpot.update(magic_card=card_text(draw(st.sampled_from(deck))), lucky_player=draw(st.integers(1, 7)))
    fields["jackpot"] = jackpot
    if draw(st.integers(0, 9)) == 0:
        fields["irregularities"] = [{"kind": "misdeal"}]
    return make_round(game_id, seats, **fields)


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_settlement_invariants(data: dict[str, Any]) -> None:
    parsed = parse_round(data)
    result = settle(parsed)
    assert result.to_json() == settle(parse_round(data)).to_json()  # pure
    for seat in result.seats:
        placed = dict(parsed.seat(seat.seat).wagers)
        assert {w.wager for w in seat.wagers} - {"ante_bonus"} == set(placed)
        for w in seat.wagers:
            assert isinstance(w.paid, int) and isinstance(w.stake, int) and w.paid >= 0
            if w.wager != "ante_bonus":
                assert w.stake == placed[w.wager]
            if w.outcome in (Outcome.PUSH, Outcome.RETURNED, Outcome.VOID):
                assert w.paid == w.stake
            elif w.outcome is Outcome.LOSE:
                excess = w.limit.excess_returned if w.limit else 0
                assert w.paid == excess
            else:
                assert w.net > 0 or w.wager == "progressive"  # a progressive win may be below its stake
        if result.void is not None:
            assert all(w.outcome is Outcome.VOID for w in seat.wagers)
    if result.jackpot is not None:
        jp = result.jackpot
        balance = jp.pool_before
        for m in jp.movements:
            balance += -m.amount if m.kind == "payout" else m.amount
            assert m.balance == balance and balance >= 0
        assert balance == jp.pool_after
        paid_from_pool = sum(m.amount for m in jp.movements if m.kind == "payout")
        pool_lines = sum(
            line.amount for s in result.seats for w in s.wagers if w.wager == "progressive"
            for line in w.lines if line.pays.endswith("% of the pool")
        )
        assert paid_from_pool == pool_lines
