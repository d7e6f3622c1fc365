"""The five games: wagers, decisions, dealer qualifier and pay tables, as versioned data.

``get_game(game_id) -> Game`` loads ``paytables/<game_id>.json`` (checked, cached). The pay
tables keep "to 1" (stake returned on top) apart from "for 1" (stake included), fixed jackpot
amounts (minor units per minimum progressive wager) apart from percentages of the pool.
The par-sheet tool and settlement both read them from here, so they cannot disagree.
"""

from __future__ import annotations

from .hands import ace_king, best_line, dealer_qualifies, line_matches, pair_rank, queen_high
from .loader import GAME_IDS, HAND_NAMES, get_game, load_game, parse_game
from .model import (
    Basis,
    Decision,
    Game,
    GameError,
    HandOf,
    PayLine,
    PayTable,
    PayTableError,
    ProgressiveRules,
    UnknownGameError,
)

__all__ = [
    "GAME_IDS",
    "HAND_NAMES",
    "Basis",
    "Decision",
    "Game",
    "GameError",
    "HandOf",
    "PayLine",
    "PayTable",
    "PayTableError",
    "ProgressiveRules",
    "UnknownGameError",
    "ace_king",
    "best_line",
    "dealer_qualifies",
    "get_game",
    "line_matches",
    "load_game",
    "pair_rank",
    "parse_game",
    "queen_high",
]
