"""Round files (docs/round-format.md) of Megalink Three Card Poker for the floor tests, built
from the rules: the progressive pays on the player's three cards and the two community cards
(Megalink 4.4: Royal Flush 100% of the Progressive Jackpot, Straight Flush 10%, Four of a
Kind $2,000, Full House $200, Flush $100), the progressive minimum 500 (the fixed amounts'
unit)."""

from __future__ import annotations

from typing import Any

from cardshoe.games import get_game

MEGA = "megalink-three-card-poker"
RESET = 1_000_000
LIMITS = {"ante": {"min": 1000, "max": 500000}, "pair_plus": {"min": 1000, "max": 100000},
          "play": {"min": 1000, "max": 500000}, "progressive": {"min": 500, "max": 500}}
# A dealer hand that qualifies (King high) and makes nothing with the community cards used below.
DEALER = ["Kd", "6c", "2h"]


def seat(n: int, cards: str, progressive: int = 500) -> dict[str, Any]:
    """Seat `n`: pair plus 1000 and a progressive wager (0: none)."""
    wagers = {"pair_plus": 1000}
    if progressive:
        wagers["progressive"] = progressive
    return {"seat": n, "wagers": wagers, "cards": cards.split()}


def round_file(rid: str, *seats: dict[str, Any], community: str, reset: int = RESET) -> dict[str, Any]:
    """A Megalink round with these seats; the pool is left for the floor to give."""
    g = get_game(MEGA)
    return {"format": "cardshoe.round/1", "round_id": rid, "game": MEGA, "rules_version": g.rules_version,
            "currency": g.currency, "limits": LIMITS, "seats": list(seats), "dealer": {"cards": DEALER},
            "community": community.split(), "exposures": [], "irregularities": [], "power_failure": None,
            "jackpot": {"pool": None, "reset": reset}}


ROYAL = ("As Ks Qs", "Js Ts")      # 4.4: Royal Flush
SF = ("9h 8h 7h", "6h 5h")         # 4.4: Straight Flush
QUADS = ("9c 9d 9h", "9s 3c")      # 4.4: Four of a Kind, $2,000 (fixed, paid by the table)
NOTHING = ("4c 7d Jh", "3s 8c")    # no progressive line
