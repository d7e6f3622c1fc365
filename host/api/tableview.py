"""What the live table page reads beyond the round's own state: the layout of the game's
positions, each seat's wagers and decisions as they stand, the table's currency.

Pure functions over the rounds engine's state and the game's rules data; the API serves
them (`GET /status` `layout`, `currency`; `GET /rounds/{id}` `seat_state`, `owing`), so the
page draws from the rules, not from its own copy of them.
"""

from __future__ import annotations

from typing import Any

from cardshoe.rounds.export import seat_wagers
from cardshoe.rounds.operations import Choice
from cardshoe.rounds.places import PlaceKind
from cardshoe.rounds.procedures import WAGERS, build_procedure
from cardshoe.rounds.state import RoundState

#: The order a seat's wagers are listed in (the layout's order at the table).
WAGER_ORDER = ("ante", "play", "bet", "one", "two", "dollar", "pair_plus", "six_card_bonus", "progressive")


def layout_of(game: str, dealing: str, method: str | None, seats: int) -> dict[str, Any]:
    """The positions the game deals to and how many cards each holds when every seat plays:
    `hand_size` (a seat's cards), `dealer`, `community`, `burn` and `security` card counts
    (0 where the game has none: no community cards in Three Card Poker or Singapore Stud), the
    face-up places (Stud's dealer up card) and the game's wagers in the layout's order."""
    procedure = build_procedure(game, dealing, tuple(range(1, seats + 1)), method)
    counts = {kind: 0 for kind in ("dealer", "community", "burn", "security")}
    for place in procedure.places:
        if place.kind.value in counts:
            counts[place.kind.value] += 1
    return {
        "hand_size": procedure.hand_size,
        **counts,
        "public": sorted(({"kind": p.kind.value, "seat": p.seat, "number": p.number}
                          for p in procedure.public_places), key=lambda p: (p["kind"], p["seat"], p["number"])),
        "wagers": [w for w in WAGER_ORDER if w in WAGERS[game]],
    }


def currency_of(game: str) -> dict[str, Any]:
    """The game's currency as its pay table gives it: `{code, minor_per_major}`."""
    from cardshoe.games import get_game

    g = get_game(game)
    return {"code": g.currency, "minor_per_major": g.minor_per_major}


def seat_state(rnd: RoundState) -> dict[str, dict[str, Any]]:
    """Each seat of the layout with a wager or a hand: its wagers as they stand (a play or bet
    appears once made: TCP 3.9.2, Stud 1.1.2), its decisions in order and by wager, whether it
    still owes a decision, and whether it folded, was absent (5.11) or is void."""
    owing = set(rnd.owing_decisions())
    dealt_to = {p.seat for p in rnd.placements.values() if p.kind is PlaceKind.SEAT}
    out: dict[str, dict[str, Any]] = {}
    for seat in sorted(set(rnd.wagers) | set(rnd.active_seats()) | dealt_to):
        wagers, by_wager = seat_wagers(rnd, seat)
        made = [c.value for c in rnd.decisions.get(seat, [])]
        void = rnd.void_seats.get(seat)
        out[str(seat)] = {
            "wagers": {w: wagers[w] for w in sorted(wagers, key=_wager_key)},
            "decisions": made,
            "decided": by_wager,
            "owes_decision": seat in owing,
            "folded": Choice.FOLD.value in made,
            "declined_comparison": Choice.DECLINE_COMPARISON.value in made,
            "absent": seat in rnd.absent,
            "void": None if void is None else {"rules": list(void.rules), "reason": void.reason, "flag": void.flag},
        }
    return out


def _wager_key(name: str) -> tuple[int, str]:
    return (WAGER_ORDER.index(name) if name in WAGER_ORDER else len(WAGER_ORDER), name)


__all__ = ["WAGER_ORDER", "currency_of", "layout_of", "seat_state"]
