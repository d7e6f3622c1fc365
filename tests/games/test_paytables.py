"""Every pay table line of the five games, checked against the rule documents' tables.

The expected tables below are a second, independent transcription of the documents
(section 4 of each), so a typo in a pay-table file fails here.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest

from cardshoe.games import (
    GAME_IDS,
    Basis,
    HandOf,
    PayTableError,
    UnknownGameError,
    get_game,
    parse_game,
)

TO, FOR = "to", "for"

# (hand, pays) with pays = ("to"|"for", odds) | ("fixed", minor units) | ("pool", percent)
EXPECTED: dict[str, dict[str, tuple[str, list[tuple[str, tuple[str, int]]]]]] = {
    "three-card-poker": {
        "ante": ("4.1", [("ANY", (TO, 1))]),
        "play": ("4.1", [("ANY", (TO, 1))]),
        "ante_bonus": ("4.2", [
            ("ROYAL_FLUSH", (TO, 5)), ("STRAIGHT_FLUSH", (TO, 5)),
            ("THREE_OF_A_KIND", (TO, 4)), ("STRAIGHT", (TO, 1)),
        ]),
        "pair_plus": ("4.3", [
            ("ROYAL_FLUSH", (TO, 40)), ("STRAIGHT_FLUSH", (TO, 40)), ("THREE_OF_A_KIND", (TO, 30)),
            ("STRAIGHT", (TO, 5)), ("FLUSH", (TO, 4)), ("PAIR", (TO, 1)),
        ]),
        "progressive": ("4.4", [
            ("ROYAL_FLUSH", ("pool", 100)),  # spades only
            ("ROYAL_FLUSH", ("fixed", 125000)),  # hearts/diamonds/clubs, $1,250
            ("STRAIGHT_FLUSH", ("fixed", 17500)),
            ("THREE_OF_A_KIND", ("fixed", 15000)),
            ("STRAIGHT", ("fixed", 1500)),
        ]),
    },
    "megalink-three-card-poker": {
        "ante": ("4.1", [("ANY", (TO, 1))]),
        "play": ("4.1", [("ANY", (TO, 1))]),
        "ante_bonus": ("4.2", [("STRAIGHT_FLUSH", (TO, 5)), ("THREE_OF_A_KIND", (TO, 4)), ("STRAIGHT", (TO, 1))]),
        "pair_plus": ("4.3", [
            ("STRAIGHT_FLUSH", (TO, 40)), ("THREE_OF_A_KIND", (TO, 30)), ("STRAIGHT", (TO, 5)),
            ("FLUSH", (TO, 4)), ("PAIR", (TO, 1)),
        ]),
        "progressive": ("4.4", [
            ("ROYAL_FLUSH", ("pool", 100)), ("STRAIGHT_FLUSH", ("pool", 10)),
            ("FOUR_OF_A_KIND", ("fixed", 200000)), ("FULL_HOUSE", ("fixed", 20000)), ("FLUSH", ("fixed", 10000)),
        ]),
    },
    "megalink-three-card-poker-xtreme": {
        "ante": ("4.1", [("ANY", (TO, 1))]),
        "play": ("4.1", [("ANY", (TO, 1))]),
        "ante_bonus": ("4.2", [("STRAIGHT_FLUSH", (TO, 5)), ("THREE_OF_A_KIND", (TO, 4)), ("STRAIGHT", (TO, 1))]),
        "pair_plus": ("4.3", [
            ("STRAIGHT_FLUSH", (TO, 40)), ("THREE_OF_A_KIND", (TO, 30)), ("STRAIGHT", (TO, 5)),
            ("FLUSH", (TO, 4)), ("PAIR", (TO, 1)),
        ]),
        "progressive": ("4.4", [
            ("ROYAL_FLUSH", ("pool", 100)), ("STRAIGHT_FLUSH", ("pool", 10)),
            ("FOUR_OF_A_KIND", (FOR, 400)), ("FULL_HOUSE", (FOR, 80)), ("FLUSH", (FOR, 40)), ("STRAIGHT", (FOR, 20)),
        ]),
        "six_card_bonus": ("4.5", [
            ("ROYAL_FLUSH", (TO, 500)), ("STRAIGHT_FLUSH", (TO, 100)), ("FOUR_OF_A_KIND", (TO, 50)),
            ("FULL_HOUSE", (TO, 20)), ("FLUSH", (TO, 15)), ("STRAIGHT", (TO, 10)), ("THREE_OF_A_KIND", (TO, 7)),
        ]),
    },
    "megalink-let-it-ride": {
        "hand": ("4.1.1", [
            ("ROYAL_FLUSH", (TO, 1000)), ("STRAIGHT_FLUSH", (TO, 200)), ("FOUR_OF_A_KIND", (TO, 50)),
            ("FULL_HOUSE", (TO, 11)), ("FLUSH", (TO, 8)), ("STRAIGHT", (TO, 5)), ("THREE_OF_A_KIND", (TO, 3)),
            ("TWO_PAIR", (TO, 2)), ("PAIR", (TO, 1)),
        ]),
        "progressive": ("4.2", [
            ("ROYAL_FLUSH", ("pool", 100)), ("STRAIGHT_FLUSH", ("pool", 10)),
            ("FOUR_OF_A_KIND", (TO, 500)), ("FULL_HOUSE", (TO, 100)), ("FLUSH", (TO, 50)),
        ]),
        "magic_card": ("4.5", [("ANY", (TO, 5))]),
        "lucky_player": ("4.5", [("ANY", (TO, 5))]),
    },
    "megalink-singapore-stud-poker": {
        "ante": ("4.1.1", [("ANY", (TO, 1))]),
        "bet": ("4.1.2", [
            ("ROYAL_FLUSH", (TO, 250)), ("STRAIGHT_FLUSH", (TO, 50)), ("FOUR_OF_A_KIND", (TO, 20)),
            ("FULL_HOUSE", (TO, 7)), ("FLUSH", (TO, 5)), ("STRAIGHT", (TO, 4)), ("THREE_OF_A_KIND", (TO, 3)),
            ("TWO_PAIR", (TO, 2)), ("PAIR", (TO, 1)), ("HIGH_CARD", (TO, 1)),
        ]),
        "progressive": ("4.2", [
            ("ROYAL_FLUSH", ("pool", 100)), ("STRAIGHT_FLUSH", ("pool", 10)),
            ("FOUR_OF_A_KIND", (FOR, 400)), ("FULL_HOUSE", (FOR, 80)), ("FLUSH", (FOR, 40)), ("STRAIGHT", (FOR, 20)),
        ]),
    },
}

VERSIONS = {
    "three-card-poker": ("5", "2019-08-02"),
    "megalink-three-card-poker": ("unnumbered", None),
    "megalink-three-card-poker-xtreme": ("2023-05-22", "2023-05-22"),
    "megalink-let-it-ride": ("2", "2013-05-09"),
    "megalink-singapore-stud-poker": ("9", "2023-07-04"),
}


def _pays(line: Any) -> tuple[str, int]:
    if line.odds is not None:
        return (line.basis.value, line.odds)
    if line.fixed is not None:
        return ("fixed", line.fixed)
    return ("pool", line.pool_percent)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_pay_table_line_matches_the_document(game_id: str) -> None:
    game = get_game(game_id)
    assert set(game.tables) == set(EXPECTED[game_id])
    for name, (rule, lines) in EXPECTED[game_id].items():
        table = game.table(name)
        assert table.rule == rule, name
        assert [(line.hand, _pays(line)) for line in table.lines] == lines, name


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_rules_version_and_currency(game_id: str) -> None:
    game = get_game(game_id)
    assert (game.rules_version, game.rules_effective) == VERSIONS[game_id]
    assert game.currency == "SGD" and game.minor_per_major == 100
    assert game.revision >= 1


def test_to_and_for_are_kept_apart() -> None:
    # Xtreme 4.4 and Stud 4.2 print "for 1"; Let It Ride 4.2 prints "to 1" for the same hands.
    for game_id in ("megalink-three-card-poker-xtreme", "megalink-singapore-stud-poker"):
        quads = get_game(game_id).progressive_table.lines[2]
        assert (quads.odds, quads.basis, quads.pays_text) == (400, Basis.FOR, "400 for 1")
    lir = get_game("megalink-let-it-ride").progressive_table.lines[2]
    assert (lir.odds, lir.basis, lir.pays_text) == (500, Basis.TO, "500 to 1")


def test_tcp_royal_lines_tell_spades_from_other_suits() -> None:
    # TCP 4.4: Royal Flush (Spades only) 100% of the jackpot + $250 Envy; other suits $1,250 + $50 Envy.
    spades, others = get_game("three-card-poker").progressive_table.lines[:2]
    assert spades.suits == frozenset({3}) and spades.pool_percent == 100 and spades.envy == 25000
    assert others.suits == frozenset({0, 1, 2}) and others.fixed == 125000 and others.envy == 5000
    assert all(line.envy is None for line in get_game("three-card-poker").progressive_table.lines[2:])


def test_let_it_ride_pair_threshold_is_tens() -> None:
    pair = get_game("megalink-let-it-ride").table("hand").lines[-1]
    assert pair.hand == "PAIR" and pair.min_pair_rank == 10  # 3.18, 4.1.1


def test_progressive_multiples_and_sharing() -> None:
    assert get_game("three-card-poker").progressive.multiples == (1,)
    assert get_game("megalink-three-card-poker-xtreme").progressive.multiples == (1, 2, 3, 4, 5)  # 3.5.3
    assert get_game("megalink-singapore-stud-poker").progressive.multiples == (1, 2, 3, 4, 5)  # 3.5.3
    assert get_game("megalink-let-it-ride").progressive.multiples is None  # 3.5 "one or more credits"
    assert get_game("megalink-three-card-poker-xtreme").progressive.sharing == {"STRAIGHT_FLUSH": "3.18.1"}
    assert get_game("megalink-singapore-stud-poker").progressive.sharing == {
        "ROYAL_FLUSH": "3.15.1", "STRAIGHT_FLUSH": "3.15.2"}
    assert get_game("three-card-poker").progressive.top_hand_last == "3.20.1"
    assert get_game("megalink-three-card-poker").progressive.top_hand_last == "3.18.2"
    assert get_game("megalink-singapore-stud-poker").progressive.top_hand_last == "3.15.3"
    assert get_game("three-card-poker").progressive.envy is True
    assert not any(get_game(g).progressive.envy for g in GAME_IDS if g != "three-card-poker")


def test_wagers_decisions_and_qualifiers() -> None:
    tcp = get_game("three-card-poker")
    assert tcp.wagers == ("ante", "play", "pair_plus", "progressive")
    assert tcp.decision is not None and (tcp.decision.wager, tcp.decision.multiple) == ("play", 1)  # 1.1.7
    assert tcp.dealer_qualifier == "queen_high" and tcp.three_card_royal
    stud = get_game("megalink-singapore-stud-poker")
    assert stud.decision is not None and (stud.decision.wager, stud.decision.multiple) == ("bet", 2)  # 1.1.2
    assert stud.dealer_qualifier == "ace_king" and (stud.player_cards, stud.dealer_cards) == (5, 5)
    xtreme = get_game("megalink-three-card-poker-xtreme")
    assert "six_card_bonus" in xtreme.base_wagers  # 3.4, 5.12
    assert xtreme.table("six_card_bonus").hand_of is HandOf.PLAYER3_DEALER3  # 3.10.1
    assert xtreme.dealing_methods == ("A", "B", "C", "manual")  # 3.7, 3.8
    lir = get_game("megalink-let-it-ride")
    assert lir.decision is None and lir.pull_backs == {"one": "3.10", "two": "3.14"}
    assert (lir.dealer_cards, lir.community_cards) == (0, 2)
    assert lir.table("progressive").hand_of is HandOf.PLAYER3_COMMUNITY2  # 4.2.1


def test_unknown_game_is_refused() -> None:
    with pytest.raises(UnknownGameError, match="baccarat"):
        get_game("baccarat")


def _raw(game_id: str) -> dict[str, Any]:
    text = resources.files("cardshoe.games").joinpath("paytables", f"{game_id}.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def test_raw_file_parses_to_the_same_game() -> None:
    assert parse_game(_raw("megalink-let-it-ride")) == get_game("megalink-let-it-ride")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["tables"]["pair_plus"]["lines"][0].update(fixed=5), "exactly one way"),
        (lambda d: d["tables"]["pair_plus"]["lines"][0].update(basis="from"), "basis"),
        (lambda d: d["tables"]["pair_plus"]["lines"][0].update(hand="FIVE_ACES"), "unknown hand"),
        (lambda d: d["tables"]["pair_plus"]["lines"][0].update(odds=1.5), "integer"),
        (lambda d: d["tables"]["progressive"]["lines"][0].update(pool_percent=150), "over 100"),
        (lambda d: d["tables"]["progressive"]["lines"][0].update(suits=["x"]), "suit"),
        (lambda d: d["tables"]["progressive"]["lines"][2].update(fixed="17500"), "integer"),
        (lambda d: d.update(wagers=["ante", "side_bet"]), "unknown wager"),
        (lambda d: d.update(schema="other"), "schema"),
        (lambda d: d["progressive"].update(fixed_paid_from="pool"), "fixed_paid_from"),
        (lambda d: d.update(dealer_qualifier="jack_high"), "qualifier"),
        (lambda d: d["tables"].pop("progressive"), "progressive table"),
        (lambda d: d.pop("rules_version"), "rules_version: missing"),
    ],
)
def test_bad_pay_table_is_refused_naming_the_field(mutate: Any, message: str) -> None:
    data = copy.deepcopy(_raw("three-card-poker"))
    mutate(data)
    with pytest.raises(PayTableError, match=message):
        parse_game(data, "test.json")
