"""`cardshoe settle` on hostile round files (issue 12 items 6 and 7).

Each case is run as the user runs it, in a subprocess: one line on standard error naming
the field, no traceback, and the exit status docs/round-format.md states (2: the file
cannot be read, or is not JSON within the round file's bounds; 1: the round is invalid).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from settlement_helpers import make_round

from cardshoe.strictjson import API_BODY, ROUND_FILE, JSONInputError, Limits, loads


def good() -> dict[str, Any]:
    return make_round(
        "three-card-poker",
        [
            {"seat": 1, "wagers": {"ante": 1000, "play": 1000}, "decisions": {"ante": "play"},
             "cards": ["As", "Kd", "3h"]},
            {"seat": 3, "wagers": {"pair_plus": 1000}, "cards": ["9c", "9d", "2h"]},
        ],
        dealer={"cards": ["Kc", "7d", "2s"]},
    )


def settle(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cardshoe.cli", "settle", str(path)], capture_output=True,
                          text=True, check=False, timeout=120)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert done.stdout == ""
    return lines[0]


def test_the_good_round_settles(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_text(json.dumps(good()))
    done = settle(path)
    assert done.returncode == 0, done.stderr


def test_a_duplicate_key_is_refused_naming_it(tmp_path: Path) -> None:
    # Issue 12 item 6: pair_plus 1000 then 100000 was paid on 100000.
    text = json.dumps(good())
    assert text.count('"pair_plus": 1000}') == 1
    text = text.replace('"pair_plus": 1000}', '"pair_plus": 1000, "pair_plus": 100000}')
    path = tmp_path / "round.json"
    path.write_text(text)
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2
    assert "seats[1].wagers.pair_plus" in line and "duplicate key" in line


def test_a_duplicate_top_level_key_is_refused(tmp_path: Path) -> None:
    text = json.dumps(good())
    text = text.replace('"game": "three-card-poker"', '"game": "three-card-poker", "game": "three-card-poker"')
    path = tmp_path / "round.json"
    path.write_text(text)
    done = settle(path)
    assert done.returncode == 2 and "game: a duplicate key" in one_line(done)


def test_bytes_that_are_not_utf8_name_the_field(tmp_path: Path) -> None:
    raw = json.dumps({**good(), "round_id": "R-1"}).encode().replace(b'"R-1"', b'"R-\xff1"')
    path = tmp_path / "round.json"
    path.write_bytes(raw)
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2
    assert "round_id" in line and "not UTF-8" in line and "0xff" in line


def test_nesting_100000_deep_is_refused(tmp_path: Path) -> None:
    data = good()
    text = json.dumps(data).replace('"community": []', '"community": ' + "[" * 100_000 + "]" * 100_000)
    path = tmp_path / "round.json"
    path.write_text(text)
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2
    assert "community[0]" in line and "nested deeper than 16" in line


def test_a_5000_digit_integer_is_refused(tmp_path: Path) -> None:
    text = json.dumps(good()).replace('"ante": 1000, "play"', '"ante": ' + "9" * 5000 + ', "play"')
    path = tmp_path / "round.json"
    path.write_text(text)
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2
    assert "seats[0].wagers.ante" in line and "5000 digits" in line


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_that_is_not_finite_is_refused(tmp_path: Path, value: str) -> None:
    text = json.dumps(good()).replace('"ante": 1000, "play"', f'"ante": {value}, "play"')
    path = tmp_path / "round.json"
    path.write_text(text)
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2 and "seats[0].wagers.ante" in line and "not a finite number" in line


def test_200000_seat_entries_are_refused_by_the_size_bound(tmp_path: Path) -> None:
    data = good()
    data["seats"] = [data["seats"][0]] * 200_000
    path = tmp_path / "round.json"
    path.write_text(json.dumps(data))
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2 and "over the limit of 1048576 bytes" in line


def test_200000_small_seat_entries_are_refused_by_the_entry_bound(tmp_path: Path) -> None:
    data = good()
    data["seats"] = [{}] * 200_000
    path = tmp_path / "round.json"
    path.write_text(json.dumps(data, separators=(",", ":")))
    assert path.stat().st_size < 1 << 20
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2 and "seats: 200000 entries, over the limit of 1000" in line


def test_eight_seats_are_refused_before_any_is_parsed(tmp_path: Path) -> None:
    data = good()
    data["seats"] = [{"seat": "not even a number"}] * 8
    path = tmp_path / "round.json"
    path.write_text(json.dumps(data))
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 1 and "seats: 8 seats listed; a table has at most 7" in line


@pytest.mark.parametrize("card", ["as", "kd", "tc"])
def test_a_lower_case_rank_is_refused(tmp_path: Path, card: str) -> None:
    # docs/round-format.md: ranks 23456789TJQKA.
    data = good()
    data["seats"][0]["cards"][0] = card
    if card == "kd":
        data["seats"][0]["cards"][1] = "Qd"
    path = tmp_path / "round.json"
    path.write_text(json.dumps(data))
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 1 and "seats[0].cards[0]" in line and "23456789TJQKA" in line


def test_a_long_string_is_refused(tmp_path: Path) -> None:
    data = good()
    data["seats"][0]["player"] = "P" * 5000
    path = tmp_path / "round.json"
    path.write_text(json.dumps(data))
    done = settle(path)
    line = one_line(done)
    assert done.returncode == 2 and "seats[0].player" in line and "5000 characters" in line


def test_standard_input_is_read_with_the_same_bounds() -> None:
    text = json.dumps(good()).replace('"pair_plus": 1000}', '"pair_plus": 1000, "pair_plus": 100000}')
    done = subprocess.run([sys.executable, "-m", "cardshoe.cli", "settle", "-"], input=text, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 2 and "seats[1].wagers.pair_plus" in one_line(done)


def _community_nested(levels: int) -> str:
    """The good round with `community` holding arrays so that the file is `levels` deep
    (the round object is level 1, `community` level 2)."""
    text = json.dumps(good())
    assert text.count('"community": []') == 1
    return text.replace('"community": []', '"community": ' + "[" * (levels - 1) + "]" * (levels - 1))


def test_the_depth_limit_itself_refuses_a_round_file_one_level_over_16(tmp_path: Path) -> None:
    # Issue 20 item 7: at 17 levels the parser has no recursion error to raise: the round
    # file's own limit (docs/round-format.md: 16 levels) refuses it, with its message and the
    # path of the first array over it. At 16 the limit passes it, and the round's own check
    # refuses what `community` holds (exit 1, not 2).
    path = tmp_path / "round.json"
    path.write_text(_community_nested(17))
    done = settle(path)
    assert done.returncode == 2, done.stderr
    assert one_line(done).endswith("community" + "[0]" * 15 + ": nested deeper than 16 levels"), done.stderr
    path.write_text(_community_nested(16))
    done = settle(path)
    assert done.returncode == 1, done.stderr
    assert "nested deeper" not in one_line(done)


@pytest.mark.parametrize(("limits", "name"), [(ROUND_FILE, "round file"), (API_BODY, "API body")])
def test_strict_json_takes_its_depth_limit_and_refuses_one_more(limits: Limits, name: str) -> None:
    depth = limits.max_depth
    for opener, closer in (("[", "]"), ('{"k": ', "}")):
        at_limit = opener * depth + "0" + closer * depth
        assert loads(at_limit, limits) is not None, name
        with pytest.raises(JSONInputError) as over:
            loads(opener + at_limit + closer, limits)
        assert over.value.message == f"nested deeper than {depth} levels", name
        assert over.value.field == ("[0]" * depth if opener == "[" else ".".join(["k"] * depth)), over.value.field
