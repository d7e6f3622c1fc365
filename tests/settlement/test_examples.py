"""The examples of docs/round-format.md settle to the amounts worked out by hand there.

Each expected amount is computed in the comment beside it from the pay tables of the
rule documents (section 4), so the doc and the code cannot drift apart.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cardshoe.settlement import parse_round, settle
from cardshoe.settlement.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "round-format.md"


def examples() -> dict[str, dict[str, Any]]:
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- example: ([a-z-]+) -->\n```json\n(.*?)```", text, re.S)
    return {name: json.loads(body) for name, body in found}


def nets(game: str) -> tuple[dict[int, dict[str, tuple[str, int]]], Any]:
    s = settle(parse_round(examples()[game]))
    return {seat.seat: {w.wager: (w.outcome.value, w.net) for w in seat.wagers} for seat in s.seats}, s


def test_every_game_has_an_example() -> None:
    assert sorted(examples()) == sorted(
        [
            "three-card-poker",
            "megalink-three-card-poker",
            "megalink-three-card-poker-xtreme",
            "megalink-let-it-ride",
            "megalink-singapore-stud-poker",
        ]
    )


def test_three_card_poker_example() -> None:
    got, s = nets("three-card-poker")
    envy = 25000  # 4.4 Envy Bonus for a Royal Flush of spades: $250
    assert got[1] == {
        "ante": ("win", 5000),  # 4.1 1 to 1
        "ante_bonus": ("win", 5 * 5000),  # 4.2 Royal Flush 5 to 1
        "play": ("win", 5000),
        "pair_plus": ("win", 40 * 1000),  # 4.3 40 to 1
        "progressive": ("win", 10_000_000 - 500),  # 100% of the pool; the 500 stake is kept
    }
    assert got[3] == {"ante": ("lose", -2500), "progressive": ("win", envy - 500)}  # 3.9.1 fold, 3.14
    assert got[4] == {"pair_plus": ("win", 1000), "progressive": ("win", envy - 500)}
    assert got[6] == {"ante": ("lose", -2500), "play": ("lose", -2500), "progressive": ("win", envy - 500)}
    assert s.jackpot.pool_before == 10_000_000 and s.jackpot.pool_after == 2_500_000
    assert [m.kind for m in s.jackpot.movements] == ["payout", "reset"]


def test_megalink_three_card_poker_example() -> None:
    got, s = nets("megalink-three-card-poker")
    assert got[2] == {
        "ante": ("win", 2500), "ante_bonus": ("win", 5 * 2500), "play": ("win", 2500),
        "pair_plus": ("win", 40 * 1000),
        "progressive": ("win", 5_000_000 // 10 - 500),  # 4.4 Straight Flush 10% of the pool
    }
    assert got[5] == {"ante": ("win", 2500), "play": ("win", 2500), "progressive": ("lose", -500)}
    assert got[7] == {"pair_plus": ("win", 30 * 1000), "progressive": ("win", 200000 - 500)}  # $2,000
    assert s.jackpot.pool_after == 4_500_000


def test_xtreme_example() -> None:
    got, s = nets("megalink-three-card-poker-xtreme")
    share = (2_000_000 // 10 + 1_000_000 // 10) // 2  # 3.18.1: 150,000 each
    assert got[1] == {
        "ante": ("win", 1000), "ante_bonus": ("win", 5 * 1000), "play": ("win", 1000),
        "six_card_bonus": ("win", 100 * 500),  # 4.5 Straight Flush 100 to 1
        "progressive": ("win", share - 300),  # not multiplied by the 3x wager (3.5.4)
    }
    assert got[4] == {"pair_plus": ("win", 40 * 1000), "progressive": ("win", share - 100)}
    assert got[6] == {"ante": ("lose", -1000), "six_card_bonus": ("win", 10 * 500), "progressive": ("lose", -500)}
    assert got[7] == {
        "ante": ("win", 1000), "ante_bonus": ("win", 5 * 1000), "play": ("win", 1000),
        "progressive": ("win", 40 * 200 - 200),  # Flush 40 for 1 on 2 x 100
    }
    assert s.jackpot.pool_after == 2_000_000 - 200_000


def test_let_it_ride_example() -> None:
    got, s = nets("megalink-let-it-ride")
    assert got[1] == {
        "one": ("win", 3 * 2500), "two": ("win", 3 * 2500), "dollar": ("win", 3 * 2500),  # 4.1.1 3 to 1
        "progressive": ("win", 5 * 100),  # Magic Card in the community cards (4.3.1), 5 to 1
    }
    assert got[3] == {"one": ("returned", 0), "two": ("returned", 0), "dollar": ("lose", -2500)}
    assert got[5] == {
        "one": ("win", 2500), "two": ("returned", 0), "dollar": ("win", 2500),
        "progressive": ("win", 5 * 200 + 5 * 200),  # Magic Card + Lucky Player, stake back once
    }
    assert s.seat(5).wager("progressive").paid == 2200
    assert s.jackpot.pool_after == s.jackpot.pool_before


def test_singapore_stud_example() -> None:
    got, s = nets("megalink-singapore-stud-poker")
    assert got[1] == {"ante": ("win", 2500), "bet": ("win", 7 * 5000), "progressive": ("win", 80 * 100 - 100)}
    assert got[2] == {"ante": ("lose", -2500), "progressive": ("lose", -300)}
    assert got[4] == {"ante": ("win", 5000), "bet": ("win", 10000)}
    assert got[6] == {"ante": ("push", 0), "bet": ("push", 0)}
    assert s.dealer is not None and s.dealer.qualifies


@pytest.mark.parametrize("game", sorted(examples()))
def test_cli_prints_the_settlement_of_each_example(game: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "round.json"
    path.write_text(json.dumps(examples()[game]))
    assert main([str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == settle(parse_round(examples()[game])).to_json()
    assert out["format"] == "cardshoe.settlement/1" and out["game"] == game
    total = sum(w["net"] for seat in out["seats"] for w in seat["wagers"])
    assert out["totals"]["net"] == total
