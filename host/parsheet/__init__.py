"""Par sheets: exact probabilities and house edges of every wager of the five games.

`compute(game)` enumerates hands exhaustively with the evaluator of
:mod:`cardshoe.poker` and the games' versioned pay tables (host/games/paytables), and
returns a :class:`ParSheet` whose values are exact ``fractions.Fraction``. The
command-line front end is :mod:`cardshoe.parsheet.cli` (``cardshoe parsheet GAME``).

Methods (details in each module and in specs/parsheets.md):

* 3-card wagers: all 22,100 hands; ante/play against all 18,424 dealer hands per player
  hand by inclusion-exclusion (three_card).
* 5-card lines (progressives): all 2,598,960 hands; Six Card Bonus: all 20,358,520
  six-card hands by rank multiset plus every flush hand (distributions).
* Let It Ride: every ordered deal of the two community cards for each of the 1,755
  suit-isomorphism classes of 3-card hands (let_it_ride).
* Singapore Stud ante/bet: the exact optimum with the dealer's up card, from all
  disjoint (player, dealer) pairs by inclusion-exclusion over shared cards (stud) and
  each (player hand, up card) situation the optimum folds (stud_upcard).
"""

from __future__ import annotations

import time

from .model import GAMES, Line, ParSheet, ParSheetError, Progress, WagerSheet, load_game

__all__ = ["GAMES", "compute", "ParSheet", "WagerSheet", "Line", "ParSheetError"]


def compute(game: str, *, progress: Progress | None = None,
            progressive_stake: int | None = None, rank_only: bool = False,
            workers: int = 1) -> ParSheet:
    """The par sheet of every wager of ``game`` (one of GAMES).

    ``progressive_stake`` is the minimum progressive wager in minor units; fixed-amount
    progressive lines (TCP 4.4, Megalink TCP 4.4) need it to give a house edge.
    Singapore Stud's ante/bet is the exact optimum with the dealer's up card (about a
    minute of CPU, in ``workers`` processes); ``rank_only`` gives instead the best strategy
    on the player's hand alone (seconds).
    """
    t0 = time.perf_counter()
    spec = load_game(game)
    wagers: list[WagerSheet] = []
    if game in ("three-card-poker", "megalink-three-card-poker", "megalink-three-card-poker-xtreme"):
        from . import three_card

        wagers.append(three_card.ante_play_sheet(spec, progress))
        wagers.append(three_card.pair_plus_sheet(spec))
        if "six_card_bonus" in spec.tables:
            wagers.append(three_card.six_card_bonus_sheet(spec))
        wagers.append(three_card.progressive_sheet(spec, progressive_stake))
        envy = three_card.envy_sheet(spec)
        if envy is not None:
            wagers.append(envy)
    elif game == "megalink-let-it-ride":
        from . import let_it_ride

        wagers.append(let_it_ride.base_sheet(spec, progress))
        wagers.extend(let_it_ride.progressive_sheets(spec, progressive_stake))
    elif game == "megalink-singapore-stud-poker":
        from . import stud

        if rank_only:
            wagers.append(stud.ante_bet_sheet(spec, progress))
        else:
            wagers.append(stud.ante_bet_upcard_sheet(spec, progress, workers))
        wagers.extend(stud.progressive_sheets(spec, progressive_stake))
    else:  # pragma: no cover - load_paytables refuses unknown games
        raise ParSheetError(f"unknown game {game!r}")
    return ParSheet(
        game=game,
        title=spec.title,
        rules_version=spec.rules_version,
        revision=spec.revision,
        wagers=tuple(wagers),
        seconds=time.perf_counter() - t0,
    )
