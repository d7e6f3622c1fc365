"""Invalid rounds give a RoundError naming the field (docs/round-format.md), and the CLI contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blackbox_helpers import LIR, SSP, TCP, XT, make_round, parse_error, seat

JP = {"pool": 1_000_000, "reset": 500_000}
CARDSHOE = Path(sys.executable).parent / "cardshoe"


def tcp_round(**extra: Any) -> dict[str, Any]:
    seats = [
        seat(1, ["8s", "8h", "3c"], {"ante": 1000, "play": 1000, "progressive": 100}, {"ante": "play"}),
        seat(3, ["7c", "4d", "2s"], {"ante": 1000, "play": 1000}, {"ante": "play"}),
    ]
    return make_round(TCP, seats, dealer=["Kd", "9c", "4h"], jackpot=JP, **extra)


def test_unknown_game_names_game() -> None:
    r = tcp_round()
    r["game"] = "caribbean-stud"
    assert parse_error(r).field == "game"


def test_rules_version_mismatch_names_rules_version() -> None:
    r = tcp_round()
    r["rules_version"] = "4"
    assert parse_error(r).field == "rules_version"


def test_5_1_card_twice_names_a_card_field() -> None:
    # 8s dealt to seat 1 and to the dealer: one deck cannot deal it twice (reading 34).
    r = tcp_round()
    r["dealer"]["cards"] = ["8s", "9c", "4h"]
    err = parse_error(r)
    assert "cards" in err.field
    assert "8s" in str(err) or "8s" in err.field or "twice" in str(err).lower() or "duplicate" in str(err).lower()


def test_card_twice_across_community_and_out_of_play() -> None:
    s = seat(1, ["8s", "8h", "3c"], {"ante": 1000, "play": 1000}, {"ante": "play"})
    r = make_round(XT, [s], dealer=["Kd", "9c", "4h"], community=["2d", "5d"], dealing="C",
                   out_of_play=[{"card": "5d", "role": "security"}])
    err = parse_error(r)
    assert "out_of_play" in err.field or "community" in err.field


def test_wager_the_game_lacks_names_the_wager() -> None:
    # Three Card Poker has no Six Card Bonus (2.2.1).
    r = tcp_round()
    r["seats"][0]["wagers"]["six_card_bonus"] = 500
    err = parse_error(r)
    assert err.field.endswith("wagers.six_card_bonus"), err.field
    assert err.field.startswith("seats[")


def test_stud_has_no_pair_plus() -> None:
    s = seat(1, ["2d", "2h", "9c", "8s", "6h"], {"ante": 1000, "bet": 2000, "pair_plus": 500}, {"ante": "bet"})
    err = parse_error(make_round(SSP, [s], dealer=["As", "Kd", "7h", "4c", "3s"]))
    assert err.field.endswith("wagers.pair_plus"), err.field


def test_3_9_2_play_without_ante_names_play() -> None:
    s = seat(1, ["8s", "8h", "3c"], {"pair_plus": 500, "play": 500})
    err = parse_error(make_round(TCP, [s], dealer=["Kd", "9c", "4h"]))
    assert err.field.endswith("wagers.play"), err.field
    assert err.field.startswith("seats[")


def test_3_9_2_play_must_equal_ante() -> None:
    r = tcp_round()
    r["seats"][0]["wagers"]["play"] = 2000
    assert parse_error(r).field.endswith("wagers.play")


def test_1_1_2_bet_must_be_twice_ante() -> None:
    s = seat(1, ["2d", "2h", "9c", "8s", "6h"], {"ante": 1000, "bet": 1000}, {"ante": "bet"})
    err = parse_error(make_round(SSP, [s], dealer=["As", "Kd", "7h", "4c", "3s"]))
    assert "bet" in err.field


def test_lir_3_4_wagers_must_be_equal() -> None:
    s = seat(1, ["Jc", "Jd", "4s"], {"one": 1000, "two": 1000, "dollar": 2000}, {"one": "ride", "two": "ride"})
    err = parse_error(make_round(LIR, [s], community=["8h", "2c"]))
    assert "wagers" in err.field


def test_fold_with_play_wager_is_an_error() -> None:
    r = tcp_round()
    r["seats"][0]["decisions"] = {"ante": "fold"}
    assert "seats[0]" in parse_error(r).field


def test_missing_decision_is_an_error() -> None:
    r = tcp_round()
    del r["seats"][0]["decisions"]
    assert parse_error(r).field.startswith("seats[0]")


@pytest.mark.parametrize("amount", [1000.0, "1000", True, 0, -1000])
def test_money_must_be_positive_integer(amount: Any) -> None:
    r = tcp_round()
    r["seats"][1]["wagers"]["ante"] = amount
    r["seats"][1]["wagers"]["play"] = amount
    assert parse_error(r).field.startswith("seats[1].wagers")


def test_card_text_10d_is_refused() -> None:
    r = tcp_round()
    r["seats"][1]["cards"] = ["7c", "4d", "10d"]
    assert "cards" in parse_error(r).field


def test_wrong_hand_size_is_an_error() -> None:
    r = tcp_round()
    r["seats"][1]["cards"] = ["7c", "4d"]
    assert parse_error(r).field.startswith("seats[1]")


@pytest.mark.parametrize(
    ("game", "stake"),
    [
        (TCP, 200),  # reading 13: exactly the minimum in TCP
        (XT, 600),  # 6x: beyond 3.5.3's 1-5x (and over max 500)
        (XT, 150),  # not a whole multiple of the minimum
    ],
)
def test_3_5_3_progressive_multiples(game: str, stake: int) -> None:
    limits = None
    if game == TCP:
        limits = {"ante": {"min": 100, "max": 10_000_000}, "progressive": {"min": 100, "max": 500}}
    s = seat(1, ["8s", "8h", "3c"], {"ante": 1000, "play": 1000, "progressive": stake}, {"ante": "play"})
    extra: dict[str, Any] = {"dealing": "A"} if game == XT else {}
    r = make_round(game, [s], dealer=["Kd", "9c", "4h"], community=["2c", "5d"] if game == XT else [], jackpot=JP, limits=limits, **extra)
    assert parse_error(r).field.endswith("wagers.progressive")


def test_progressive_without_jackpot_state_is_an_error() -> None:
    r = tcp_round()
    r["jackpot"] = None
    assert "jackpot" in parse_error(r).field


def test_5_16_2_withdrawal_after_outcome_refused() -> None:
    r = tcp_round(power_failure={"outcome_established": True, "withdrawn_seats": [3]})
    assert "power_failure" in parse_error(r).field


def test_seat_number_twice_is_an_error() -> None:
    r = tcp_round()
    r["seats"][1]["seat"] = 1
    assert "seat" in parse_error(r).field


# --- CLI ----------------------------------------------------------------------------------------


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CARDSHOE), "settle", *args], capture_output=True, text=True, input=stdin, timeout=60)


def test_cli_settles_a_round(tmp_path: Path) -> None:
    # Pair of 8s beats K-9-4: ante +1000, play +1000; seat 3 7-4-2 loses -2000; progressive -100.
    f = tmp_path / "round.json"
    f.write_text(json.dumps(tcp_round()))
    p = run_cli(str(f))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["totals"]["net"] == 2000 - 100 - 2000


def test_cli_reads_stdin() -> None:
    p = run_cli("-", stdin=json.dumps(tcp_round()))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["format"] == "cardshoe.settlement/1"


def test_cli_invalid_round_exit_1_names_field(tmp_path: Path) -> None:
    s = seat(1, ["8s", "8h", "3c"], {"pair_plus": 500, "play": 500})
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(make_round(TCP, [s], dealer=["Kd", "9c", "4h"])))
    p = run_cli(str(f))
    assert p.returncode == 1
    assert p.stdout == ""
    assert p.stderr.startswith(f"cardshoe settle: invalid round {f}: seats[0].wagers.play: "), p.stderr


def test_cli_not_json_exit_2(tmp_path: Path) -> None:
    f = tmp_path / "junk.json"
    f.write_text("{not json")
    assert run_cli(str(f)).returncode == 2
    assert run_cli(str(tmp_path / "missing.json")).returncode == 2
