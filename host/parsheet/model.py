"""Par-sheet values, and the games whose pay tables they are computed from.

The games and pay tables come from :func:`cardshoe.games.get_game` (the versioned data
in host/games/paytables, loaded and checked by the games package), the same objects
settlement reads, so a par sheet and a settlement cannot disagree about a price.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from ..games import Game, GameError, get_game

__all__ = [
    "GAMES",
    "Line",
    "WagerSheet",
    "ParSheet",
    "Progress",
    "ParSheetError",
    "load_game",
    "frac_json",
]

GAMES = (
    "three-card-poker",
    "megalink-three-card-poker",
    "megalink-three-card-poker-xtreme",
    "megalink-let-it-ride",
    "megalink-singapore-stud-poker",
)

Progress = Callable[[str, float], None]
"""Called with a stage name and the fraction done (0..1) of that stage."""


class ParSheetError(ValueError):
    """The game or its pay table cannot be turned into a par sheet."""


def load_game(game: str) -> Game:
    """The game and its pay tables, from the games task's loader (the same data and
    checks settlement uses)."""
    if game not in GAMES:
        raise ParSheetError(f"unknown game {game!r}; known: {', '.join(GAMES)}")
    try:
        return get_game(game)
    except GameError as exc:
        raise ParSheetError(str(exc)) from exc


@dataclass(frozen=True)
class Line:
    """One outcome line of a par sheet.

    ``probability`` is exact. ``net`` is the net win per unit staked on that outcome
    (-1 for a loss, 0 for a stand-off or a returned wager) or None when the payment is a
    share of the progressive pool or a fixed amount with no stake to divide it by.
    """

    label: str
    probability: Fraction
    pays: str
    net: Fraction | None
    count: int | None = None
    total: int | None = None

    @property
    def contribution(self) -> Fraction | None:
        """probability * net, this line's part of the wager's expected net win."""
        return None if self.net is None else self.probability * self.net


@dataclass(frozen=True)
class WagerSheet:
    """The par sheet of one wager (or of a wager group such as ante/play)."""

    wager: str
    rule: str
    lines: tuple[Line, ...]
    house_edge: Fraction | None
    edge_basis: str
    exact: bool = True
    notes: tuple[str, ...] = ()
    strategy: tuple[str, ...] = ()
    figures: tuple[tuple[str, Fraction], ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class ParSheet:
    """Every wager of one game."""

    game: str
    title: str
    rules_version: str
    revision: int
    wagers: tuple[WagerSheet, ...]
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """Exact values as ``"p/q"`` strings beside a float for reading."""
        return {
            "game": self.game,
            "title": self.title,
            "rules_version": self.rules_version,
            "paytable_revision": self.revision,
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
            "wagers": [
                {
                    "wager": w.wager,
                    "rule": w.rule,
                    "exact": w.exact,
                    "house_edge": frac_json(w.house_edge),
                    "edge_basis": w.edge_basis,
                    "figures": {k: frac_json(v) for k, v in w.figures},
                    "strategy": list(w.strategy),
                    "notes": list(w.notes),
                    "seconds": round(w.seconds, 3),
                    "lines": [
                        {
                            "label": line.label,
                            "pays": line.pays,
                            "count": line.count,
                            "of": line.total,
                            "probability": frac_json(line.probability),
                            "net": frac_json(line.net),
                            "contribution": frac_json(line.contribution),
                        }
                        for line in w.lines
                    ],
                }
                for w in self.wagers
            ],
        }


def frac_json(value: Fraction | None) -> dict[str, Any] | None:
    """A Fraction as ``{"exact": "p/q", "value": float}``; None stays None."""
    if value is None:
        return None
    return {"exact": f"{value.numerator}/{value.denominator}", "value": float(value)}
