"""Invalid rounds raise RoundError naming the field; `cardshoe settle` says so and exits non-zero."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from cardshoe.settlement import RoundError, parse_round
from cardshoe.settlement.cli import main
from settlement_helpers import make_round


def good() -> dict[str, Any]:
    return make_round(
        "three-card-poker",
        [
            {"seat": 1, "wagers": {"ante": 1000, "play": 1000, "progressive": 500}, "decisions": {"ante": "play"},
             "cards": ["As", "Kd", "3h"]},
            {"seat": 3, "wagers": {"pair_plus": 1000}, "cards": ["9c", "9d", "2h"]},
        ],
        dealer={"cards": ["Kc", "7d", "2s"]},
    )


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(data: dict[str, Any]) -> None:
        *keys, last = path.split("/")
        node: Any = data
        for key in keys:
            node = node[int(key)] if key.isdigit() else node[key]
        if value is _DELETE:
            del node[int(last) if last.isdigit() else last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return apply


_DELETE = object()

CASES: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("unknown game", _set("game", "baccarat"), "game", "unknown game"),
    ("game not text", _set("game", 7), "game", "game id"),
    ("wrong rules version", _set("rules_version", "4"), "rules_version", "pay table is for '5'"),
    ("wrong currency", _set("currency", "USD"), "currency", "SGD"),
    ("wrong format", _set("format", "round"), "format", "cardshoe.round/1"),
    ("unknown top field", _set("colour", "red"), "colour", "unknown field"),
    ("card twice", _set("seats/1/cards/0", "As"), "seats[1].cards[0]", "appears twice"),
    ("card twice with dealer", _set("dealer/cards/0", "Kd"), "dealer.cards[0]", "appears twice"),
    ("card twice in burns", _set("out_of_play", [{"card": "2s", "role": "burn"}]), "out_of_play[0].card", "twice"),
    ("10d is not a card", _set("seats/0/cards/2", "10d"), "seats[0].cards[2]", "10d"),
    ("upper-case suit", _set("seats/0/cards/2", "3H"), "seats[0].cards[2]", "suit"),
    ("wager the game lacks", _set("seats/1/wagers/six_card_bonus", 500), "seats[1].wagers.six_card_bonus",
     "has no wager"),
    ("play without ante", _set("seats/1/wagers", {"play": 1000}), "seats[1].wagers.play", "without an ante"),
    ("play not equal to ante", _set("seats/0/wagers/play", 2000), "seats[0].wagers.play", "must be 1 x the ante"),
    ("play chosen but not placed", _set("seats/0/wagers", {"ante": 1000}), "seats[0].wagers.play", "placed no play"),
    ("folded hand with play", _set("seats/0/decisions/ante", "fold"), "seats[0].wagers.play", "folded"),
    ("missing decision", _set("seats/0/decisions", {}), "seats[0].decisions.ante", "missing"),
    ("bad decision", _set("seats/0/decisions/ante", "raise"), "seats[0].decisions.ante", "expected 'play' or 'fold'"),
    ("decision the game lacks", _set("seats/1/decisions", {"one": "ride"}), "seats[1].decisions.one", "no decision"),
    ("too few player cards", _set("seats/0/cards", ["As", "Kd"]), "seats[0].cards", "has 2 cards"),
    ("too many dealer cards", _set("dealer/cards", ["Kc", "7d", "2s", "5c"]), "dealer.cards", "dealer has 4"),
    ("community in TCP", _set("community", ["5c", "6c"]), "community", "no community cards"),
    ("seat out of range", _set("seats/1/seat", 8), "seats[1].seat", "out of range 1..7"),
    ("seat zero", _set("seats/1/seat", 0), "seats[1].seat", "at least 1"),
    ("seat twice", _set("seats/1/seat", 1), "seats[1].seat", "listed twice"),
    ("no seats", _set("seats", []), "seats", "at least one seat"),
    ("float amount", _set("seats/1/wagers/pair_plus", 10.5), "seats[1].wagers.pair_plus", "integer"),
    ("string amount", _set("seats/1/wagers/pair_plus", "1000"), "seats[1].wagers.pair_plus", "integer"),
    ("bool amount", _set("seats/1/wagers/pair_plus", True), "seats[1].wagers.pair_plus", "integer"),
    ("zero amount", _set("seats/1/wagers/pair_plus", 0), "seats[1].wagers.pair_plus", "at least 1"),
    ("no wagers", _set("seats/1/wagers", {}), "seats[1].wagers", "at least one wager"),
    ("missing limits", _set("limits/pair_plus", _DELETE), "limits.pair_plus", "missing"),
    ("limits max below min", _set("limits/ante", {"min": 1000, "max": 500}), "limits.ante.max", "at least 1000"),
    ("progressive not a multiple", _set("seats/0/wagers/progressive", 700), "seats[0].wagers.progressive",
     "whole number"),
    ("progressive twice the minimum in TCP", _set("limits/progressive", {"min": 250, "max": 500}),
     "seats[0].wagers.progressive", "not allowed"),
    ("jackpot missing", _set("jackpot", None), "jackpot", "missing"),
    ("jackpot pool negative", _set("jackpot/pool", -1), "jackpot.pool", "at least 0"),
    ("magic card outside Let It Ride", _set("jackpot/magic_card", "2c"), "jackpot.magic_card", "no Magic Card"),
    ("unknown irregularity", _set("irregularities", [{"kind": "spilled_drink"}]), "irregularities[0].kind",
     "unknown irregularity"),
    ("irregularity without seats", _set("irregularities", [{"kind": "confidentiality"}]), "irregularities[0].seats",
     "names the seats"),
    ("irregularity on an empty seat", _set("irregularities", [{"kind": "confidentiality", "seats": [5]}]),
     "irregularities[0].seats[0]", "no wagers"),
    ("community count in TCP", _set("irregularities", [{"kind": "community_card_count"}]), "irregularities[0].kind",
     "has no"),
    ("manager without effect", _set("irregularities", [{"kind": "manager_decision"}]), "irregularities[0].effect",
     "expected one of"),
    ("bad exposure", _set("exposures", [{"card": "Zz"}]), "exposures[0].card", "Zz"),
    ("declined not a boolean", _set("seats/1/declined_comparison", "yes"),
     "seats[1].declined_comparison", "true or false"),
    ("bad dealing method", _set("dealing", "B"), "dealing", "expected one of"),
]


@pytest.mark.parametrize(("name", "mutate", "field", "message"), CASES, ids=[c[0] for c in CASES])
def test_invalid_round_names_the_field(name: str, mutate: Callable[[dict[str, Any]], None], field: str,
                                       message: str) -> None:
    data = good()
    parse_round(copy.deepcopy(data))  # the unmodified round is valid
    mutate(data)
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == field
    assert message in str(err.value)


def test_round_must_be_an_object() -> None:
    with pytest.raises(RoundError):
        parse_round([1, 2, 3])


def test_cli_invalid_round_exits_1_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = good()
    data["seats"][1]["wagers"] = {"play": 1000}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "seats[1].wagers.play" in err and "without an ante" in err


def test_cli_unreadable_and_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    path = tmp_path / "garbage.json"
    path.write_text("{not json")
    assert main([str(path)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main([]) == 2


def test_cardshoe_settle_command_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_text(json.dumps(good()))
    done = subprocess.run([sys.executable, "-m", "cardshoe.cli", "settle", str(path)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["seats"][0]["wagers"][0]["wager"] == "ante"
    data = good()
    data["game"] = "blackjack"
    path.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "cardshoe.cli", "settle", str(path)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 1 and "game" in done.stderr and "blackjack" in done.stderr


# --- found by the black-box review (tests/rules_blackbox) -----------------------------------


def test_an_absent_player_with_a_decision_is_refused_5_11() -> None:
    # 5.11: an absent player makes no Play decision; a round saying both contradicts itself.
    data = good()
    data["seats"][0]["absent"] = True
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "seats[0].decisions.ante"


def test_a_security_card_outside_xtreme_method_c_is_refused_3_7_3_1() -> None:
    data = good()
    data["out_of_play"] = [{"card": "5c", "role": "security"}]
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "out_of_play[0].role"


def test_a_discarded_card_is_accepted_for_audit_and_checked_for_duplicates() -> None:
    data = good()
    data["out_of_play"] = [{"card": "5c", "role": "discard"}]
    parse_round(data)
    data["out_of_play"] = [{"card": "As", "role": "discard"}]  # As is seat 1's card
    with pytest.raises(RoundError):
        parse_round(data)


def test_a_progressive_only_seat_is_not_dealt_to_and_its_wager_returned_5_12_2() -> None:
    # 3.7: only positions with a (base) wager are dealt to; the lone progressive is returned (5.12.2).
    from settlement_helpers import run

    data = good()
    data["seats"].append({"seat": 5, "wagers": {"progressive": 500}, "cards": []})
    settlement = run(data)
    (wager,) = settlement.seat(5).wagers
    assert (wager.wager, wager.outcome.value, wager.paid, wager.net) == ("progressive", "returned", 500, 0)
    assert "5.12.2" in wager.rules
    data["seats"][-1]["wagers"] = {"ante": 1000}  # a base wager with no cards is still an error
    data["seats"][-1]["decisions"] = {"ante": "fold"}
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "seats[2].cards"


def test_a_round_whose_only_progressive_is_invalid_needs_no_jackpot_5_12_2() -> None:
    # 5.12.2: a progressive without a base wager is not in action, so the pool is not needed.
    from settlement_helpers import run

    data = good()
    data["seats"] = [data["seats"][1], {"seat": 5, "wagers": {"progressive": 500}, "cards": []}]
    data["jackpot"] = None
    settlement = run(data)
    (wager,) = settlement.seat(5).wagers
    assert (wager.outcome.value, wager.paid) == ("returned", 500)
    data["seats"][0]["wagers"]["progressive"] = 500  # now one is in action: the pool is required
    with pytest.raises(RoundError) as err:
        parse_round(data)
    assert err.value.field == "jackpot"
