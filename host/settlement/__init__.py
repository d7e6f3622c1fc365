"""Settlement of a round of any of the five games, citing the rule that decided each wager.

Pure: :func:`parse_round` checks a round (docs/round-format.md) and raises
:class:`RoundError` naming the field; :func:`settle` returns a :class:`Settlement` whose
``to_json()`` is what ``cardshoe settle ROUND.json`` prints. Amounts are integers in
minor units: per wager the ``stake``, what is ``paid`` back (stake included) and the
``net`` change to the player, with the rule numbers and the jackpot pool ledger.
"""

from __future__ import annotations

from typing import Any

from .errors import RoundError
from .result import (
    DealerResult,
    HandShown,
    JackpotResult,
    LimitApplied,
    Line,
    Movement,
    Outcome,
    SeatResult,
    Settlement,
    WagerResult,
)
from .round import (
    Exposure,
    Irregularity,
    IrregularityKind,
    Jackpot,
    Limit,
    PowerFailure,
    Round,
    Seat,
    check_stake,
    limit_of,
    parse_round,
)
from .settle import settle

__all__ = [
    "DealerResult",
    "Exposure",
    "HandShown",
    "Irregularity",
    "IrregularityKind",
    "Jackpot",
    "JackpotResult",
    "Limit",
    "LimitApplied",
    "Line",
    "Movement",
    "Outcome",
    "PowerFailure",
    "Round",
    "RoundError",
    "Seat",
    "SeatResult",
    "Settlement",
    "WagerResult",
    "check_stake",
    "limit_of",
    "parse_round",
    "settle",
    "settle_json",
]


def settle_json(data: Any, *, strict_void: bool = False) -> dict[str, Any]:
    """Parse, settle and return the settlement as JSON-ready data (``strict_void``: see parse_round)."""
    return settle(parse_round(data, strict_void=strict_void)).to_json()
