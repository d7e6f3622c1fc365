"""Builders of round files for the settlement tests (docs/round-format.md)."""

from __future__ import annotations

import copy
from itertools import combinations
from typing import Any

from cardshoe.cards import parse_card
from cardshoe.games import get_game
from cardshoe.settlement import Settlement, parse_round, settle

# Table limits used unless a test says otherwise (minor units, SGD cents).
LIMITS: dict[str, dict[str, dict[str, int]]] = {
    "three-card-poker": {
        "ante": {"min": 1000, "max": 500000},
        "pair_plus": {"min": 1000, "max": 100000},
        "progressive": {"min": 500, "max": 500},
    },
    "megalink-three-card-poker": {
        "ante": {"min": 1000, "max": 500000},
        "pair_plus": {"min": 1000, "max": 100000},
        "progressive": {"min": 500, "max": 500},
    },
    "megalink-three-card-poker-xtreme": {
        "ante": {"min": 1000, "max": 500000},
        "pair_plus": {"min": 1000, "max": 100000},
        "six_card_bonus": {"min": 500, "max": 50000},
        "progressive": {"min": 100, "max": 500},
    },
    "megalink-let-it-ride": {
        "one": {"min": 1000, "max": 500000},
        "progressive": {"min": 100, "max": 500},
    },
    "megalink-singapore-stud-poker": {
        "ante": {"min": 1000, "max": 250000},
        "progressive": {"min": 100, "max": 500},
    },
}

POOL = 10_000_000
RESET = 2_500_000


def make_round(game: str, seats: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A round file with the game's defaults; ``fields`` override top-level entries."""
    g = get_game(game)
    data: dict[str, Any] = {
        "format": "cardshoe.round/1",
        "round_id": "test",
        "game": game,
        "rules_version": g.rules_version,
        "currency": g.currency,
        "limits": copy.deepcopy(LIMITS[game]),
        "seats": seats,
        "community": [],
        "exposures": [],
        "irregularities": [],
        "power_failure": None,
        "jackpot": {"pool": POOL, "reset": RESET},
    }
    if g.dealer_cards:
        data["dealer"] = {"cards": []}
    if game == "megalink-let-it-ride":
        data["jackpot"].update({"magic_card": None, "lucky_player": None})
    data.update(fields)
    if game == "megalink-let-it-ride" and data.get("jackpot") is not None:
        jp = data["jackpot"]
        used = {c for s in seats for c in s.get("cards", [])} | set(data.get("community", []))
        if jp.get("magic_card") is None:
            jp["magic_card"] = next(c for c in ("2c", "2d", "3c", "3d", "4c") if c not in used)
        if jp.get("lucky_player") is None:
            jp["lucky_player"] = 7
    return data


def dealer_cards(used: list[str], size: int = 3, *, qualifying: bool = True) -> list[str]:
    """A dealer's hand of unpaired, unsuited, non-straight cards avoiding ``used``.

    Qualifying: King high (size 3) or Ace-King high (size 5); else 8 high / Q high.
    """
    taken = {parse_card(c) for c in used}
    if size == 3:
        tops = ["Kd", "Kc", "Kh", "Ks"] if qualifying else ["8d", "8c", "8h", "8s"]
        lows = ["2c", "2d", "2h", "2s", "4c", "4d", "4h", "4s", "6c", "6d", "6h", "6s"]
    else:
        tops = ["Ad", "Ac", "Ah", "As"] if qualifying else ["Qd", "Qc", "Qh", "Qs"]
        lows = [r + s for r in ("K", "9", "7", "4", "2") for s in "cdhs"] if qualifying else [
            r + s for r in ("J", "9", "7", "4", "2") for s in "cdhs"
        ]
    for top in tops:
        if parse_card(top) in taken:
            continue
        for rest in combinations(lows, size - 1):
            ranks = [c[0] for c in rest]
            suits = {c[1] for c in (top, *rest)}
            if len(set(ranks)) != len(ranks) or len(suits) < 2:
                continue
            if size == 5 and qualifying and "K" not in ranks:
                continue
            if any(parse_card(c) in taken for c in rest):
                continue
            return [top, *rest]
    raise AssertionError("no dealer hand available")


def run(data: dict[str, Any]) -> Settlement:
    """Parse and settle."""
    return settle(parse_round(data))


def amounts(settlement: Settlement, seat: int) -> dict[str, tuple[str, int, int]]:
    """Per wager of ``seat``: (outcome, paid, net)."""
    return {w.wager: (w.outcome.value, w.paid, w.net) for w in settlement.seat(seat).wagers}
