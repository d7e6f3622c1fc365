"""The shared irregularity rules (section 5) in every game, citing each document's numbers."""

from __future__ import annotations

from typing import Any

import pytest

from cardshoe.games import get_game
from cardshoe.settlement import Outcome
from settlement_helpers import dealer_cards, make_round, run

LIR = "megalink-let-it-ride"
ANALOGY = "not in these rules; by analogy with Megalink Three Card Poker "

# game -> the seat used, and the rule numbers each irregularity cites in that document.
GAMES: dict[str, dict[str, str]] = {
    "three-card-poker": {"foreign_card": "5.1", "misdeal": "5.2", "exposed_cards": "5.4", "card_count": "5.8",
                         "player_card_count": "5.7", "confidentiality": "5.9", "power": "5.16.1",
                         "no_base": "5.12.2"},
    "megalink-three-card-poker": {"foreign_card": "5.1", "misdeal": "5.2", "exposed_cards": "5.4",
                                  "card_count": "5.8", "player_card_count": "5.7", "confidentiality": "5.9",
                                  "power": "5.16.1", "no_base": "5.12.2"},
    "megalink-three-card-poker-xtreme": {"foreign_card": "5.1", "misdeal": "5.2", "exposed_cards": "5.4",
                                         "card_count": "5.8", "player_card_count": "5.7", "confidentiality": "5.9",
                                         "power": "5.16.1", "no_base": "5.12.2"},
    "megalink-singapore-stud-poker": {"foreign_card": "5.1", "misdeal": "5.2", "exposed_cards": "5.4",
                                      "card_count": "5.8", "player_card_count": "5.7", "confidentiality": "5.9",
                                      "power": "5.16.1", "no_base": "5.12.2"},
    LIR: {"foreign_card": "5.1", "misdeal": "5.3", "exposed_cards": "5.5", "card_count": "5.2",
          "player_card_count": ANALOGY + "5.7", "confidentiality": ANALOGY + "5.9", "power": ANALOGY + "5.16.1",
          "no_base": ANALOGY + "5.12.2"},
}

HANDS = ["Qs Jd 3c 8h 5c", "As Kd 3h 7c 9d", "2d 6s 9h Tc 4d"]


def base_round(game_id: str, **fields: Any) -> dict[str, Any]:
    game = get_game(game_id)
    seats = []
    for i, n in enumerate((1, 3, 5)):
        cards = HANDS[i].split()[: game.player_cards]
        if game_id == LIR:
            wagers = {"one": 1000, "two": 1000, "dollar": 1000, "progressive": 100}
            decisions = {"one": "ride", "two": "ride"}
        else:
            assert game.decision is not None
            wagers = {"ante": 1000, game.decision.wager: 1000 * game.decision.multiple}
            wagers["progressive"] = 500 if game_id in ("three-card-poker", "megalink-three-card-poker") else 100
            decisions = {"ante": game.decision.continue_choice}
        seats.append({"seat": n, "wagers": wagers, "decisions": decisions, "cards": cards})
    used = [c for s in seats for c in s["cards"]]
    community = ["Jh", "Th"][: game.community_cards]
    extra: dict[str, Any] = {"community": community}
    if game.dealer_cards:
        extra["dealer"] = {"cards": dealer_cards(used + community, game.dealer_cards)}
    extra.update(fields)
    return make_round(game_id, seats, **extra)


@pytest.mark.parametrize("game_id", list(GAMES))
@pytest.mark.parametrize("kind", ["foreign_card", "misdeal", "exposed_cards", "card_count"])
def test_void_rounds(game_id: str, kind: str) -> None:
    s = run(base_round(game_id, irregularities=[{"kind": kind}]))
    assert s.void is not None and s.void[0] == (GAMES[game_id][kind],)
    assert all(w.outcome is Outcome.VOID and w.paid == w.stake for seat in s.seats for w in seat.wagers)


@pytest.mark.parametrize("game_id", [g for g in GAMES if g != LIR])
def test_hand_removed_and_withdrawals(game_id: str) -> None:
    data = base_round(game_id, irregularities=[
        {"kind": "player_card_count", "seats": [1]},
        {"kind": "confidentiality", "seats": [3]},
    ])
    data["seats"][0]["cards"] = data["seats"][0]["cards"][:-1]  # one card short
    s = run(data)
    assert {w.rules for w in s.seat(1).wagers} == {(GAMES[game_id]["player_card_count"],)}
    assert {w.rules for w in s.seat(3).wagers} == {(GAMES[game_id]["confidentiality"],)}
    assert all(w.outcome is Outcome.RETURNED for n in (1, 3) for w in s.seat(n).wagers)
    assert all(w.outcome is not Outcome.RETURNED or w.wager in ("one", "two") for w in s.seat(5).wagers)


def test_lir_wrong_count_at_one_area_is_refused_as_a_player_count() -> None:
    """Readings 35/42: LIR has no per-player count rule; 5.3 voids a deal dealt incorrectly,
    so a player_card_count is refused (naming the field) and a misdeal voids the round."""
    from cardshoe.settlement import RoundError

    data = base_round(LIR, irregularities=[{"kind": "player_card_count", "seats": [1]}])
    data["seats"][0]["cards"] = data["seats"][0]["cards"][:-1]
    with pytest.raises(RoundError) as info:
        run(data)
    assert info.value.field == "irregularities[0].kind" and "5.3" in str(info.value)
    data["irregularities"] = [{"kind": "misdeal"}]
    s = run(data)
    assert s.void is not None and s.void[0] == ("5.3",)
    assert all(w.outcome is Outcome.VOID and w.paid == w.stake for seat in s.seats for w in seat.wagers)


@pytest.mark.parametrize("game_id", list(GAMES))
def test_power_failure_withdrawal(game_id: str) -> None:
    s = run(base_round(game_id, power_failure={"outcome_established": False, "withdrawn_seats": [5]}))
    assert {(w.outcome, w.rules) for w in s.seat(5).wagers} == {(Outcome.RETURNED, (GAMES[game_id]["power"],))}


@pytest.mark.parametrize("game_id", list(GAMES))
def test_progressive_without_base_wager(game_id: str) -> None:
    data = base_round(game_id)
    data["seats"][2]["wagers"] = {"progressive": data["seats"][2]["wagers"]["progressive"]}
    data["seats"][2]["decisions"] = {}
    s = run(data)
    prog = s.seat(5).wager("progressive")
    assert (prog.outcome, prog.rules) == (Outcome.RETURNED, (GAMES[game_id]["no_base"],))
