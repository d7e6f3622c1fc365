"""Helpers for the black-box rule tests.

These tests are written from the five rule documents and docs/round-format.md only, without
reading the settlement code: every expected amount is computed by hand in the test from the
rules' pay tables. The helpers only build round JSON and look things up in the settlement JSON.
"""

from __future__ import annotations

import copy
from typing import Any

from cardshoe.settlement import RoundError, parse_round, settle

GAMES: dict[str, dict[str, Any]] = {
    "three-card-poker": {
        "rules_version": "5",
        "wagers": ["ante", "pair_plus"],
    },
    "megalink-three-card-poker": {
        "rules_version": "unnumbered",
        "wagers": ["ante", "pair_plus"],
    },
    "megalink-three-card-poker-xtreme": {
        "rules_version": "2023-05-22",
        "wagers": ["ante", "pair_plus", "six_card_bonus"],
    },
    "megalink-let-it-ride": {
        "rules_version": "2",
        "wagers": ["one"],
    },
    "megalink-singapore-stud-poker": {
        "rules_version": "9",
        "wagers": ["ante"],
    },
}

TCP = "three-card-poker"
MTCP = "megalink-three-card-poker"
XT = "megalink-three-card-poker-xtreme"
LIR = "megalink-let-it-ride"
SSP = "megalink-singapore-stud-poker"

# The minimum progressive wager used by every test: SGD 1.00 (100 cents). Fixed jackpot
# amounts are per minimum progressive wager, so with a 100 stake SGD 1,250 pays 125000.
PROG_MIN = 100


def default_limits(game: str) -> dict[str, dict[str, int]]:
    """Generous table limits (min 100, max 10,000,000) for every base wager of the game."""
    limits = {w: {"min": 100, "max": 10_000_000} for w in GAMES[game]["wagers"]}
    limits["progressive"] = {"min": PROG_MIN, "max": 5 * PROG_MIN}
    return limits


def seat(
    number: int,
    cards: list[str],
    wagers: dict[str, int],
    decisions: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One SEAT object of the round format."""
    s: dict[str, Any] = {"seat": number, "wagers": dict(wagers), "cards": list(cards)}
    if decisions is not None:
        s["decisions"] = dict(decisions)
    s.update(extra)
    return s


def make_round(
    game: str,
    seats: list[dict[str, Any]],
    dealer: list[str] | None = None,
    community: list[str] | None = None,
    jackpot: dict[str, Any] | None = None,
    limits: dict[str, dict[str, int]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A round file (cardshoe.round/1) for the game."""
    r: dict[str, Any] = {
        "format": "cardshoe.round/1",
        "round_id": "BB-1",
        "game": game,
        "rules_version": GAMES[game]["rules_version"],
        "currency": "SGD",
        "limits": copy.deepcopy(limits) if limits is not None else default_limits(game),
        "seats": copy.deepcopy(seats),
        "community": list(community or []),
        "exposures": [],
        "irregularities": [],
        "power_failure": None,
        "jackpot": copy.deepcopy(jackpot),
    }
    if dealer is not None:
        r["dealer"] = {"cards": list(dealer)}
    r.update(extra)
    return r


def settle_dict(round_dict: dict[str, Any]) -> dict[str, Any]:
    """Settle through the public API and return the settlement JSON."""
    out: dict[str, Any] = settle(parse_round(copy.deepcopy(round_dict))).to_json()
    return out


def parse_error(round_dict: dict[str, Any]) -> RoundError:
    """The RoundError raised when parsing (and settling) the round; fails if none is raised."""
    try:
        settle(parse_round(copy.deepcopy(round_dict)))
    except RoundError as exc:
        return exc
    raise AssertionError("the round was accepted, expected a RoundError")


def seat_result(result: dict[str, Any], number: int) -> dict[str, Any]:
    """The settlement of one seat."""
    found: list[dict[str, Any]] = [s for s in result["seats"] if s["seat"] == number]
    assert len(found) == 1, f"seat {number} not exactly once in {result['seats']}"
    return found[0]


def wager(result: dict[str, Any], number: int, name: str) -> dict[str, Any]:
    """The WAGER_RESULT of one wager of one seat."""
    found: list[dict[str, Any]] = [w for w in seat_result(result, number)["wagers"] if w["wager"] == name]
    assert len(found) == 1, f"wager {name} of seat {number}: {found}"
    return found[0]


def paid(result: dict[str, Any], number: int, name: str) -> int:
    """What the table hands back for the wager (0 when the item is absent, e.g. no ante bonus)."""
    found = [w for w in seat_result(result, number)["wagers"] if w["wager"] == name]
    return sum(int(w["paid"]) for w in found)


def check(result: dict[str, Any], number: int, name: str, stake: int, paid_: int) -> None:
    """Assert stake, paid and net (paid - stake) of one wager."""
    w = wager(result, number, name)
    assert (w["stake"], w["paid"], w["net"]) == (stake, paid_, paid_ - stake), w
