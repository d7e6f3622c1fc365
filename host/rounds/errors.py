"""Errors raised for operations a round refuses. Each names what was wrong; none changes state."""

from __future__ import annotations

__all__ = [
    "RoundOperationError",
    "WrongStateError",
    "WagersClosedError",
    "UnknownWagerError",
    "BadSeatError",
    "BadAmountError",
    "DuplicateShoeIndexError",
    "DecisionError",
    "UnknownFlagError",
    "ProcedureError",
    "ExposureMismatchError",
    "UnequalWagersError",
    "CandidateError",
    "MissingInputError",
    "RoundVoidError",
]


class RoundOperationError(ValueError):
    """An operation the round refuses; the round is left exactly as it was."""


class WrongStateError(RoundOperationError):
    """The operation is not allowed in the round's current status."""


class WagersClosedError(WrongStateError):
    """A wager placed, changed or withdrawn after "no more bets" (rules 5.5-5.6; Let It Ride 5.6-5.7)."""


class UnknownWagerError(RoundOperationError):
    """A wager name the game does not have."""


class BadSeatError(RoundOperationError):
    """A seat outside the table's positions, or one that is not in play for this operation."""


class BadAmountError(RoundOperationError):
    """A wager amount that is not a positive integer in minor units (or 0 to withdraw)."""


class DuplicateShoeIndexError(RoundOperationError):
    """A shoe card whose (shoe, index) this round already holds; the daemon should drop resends."""


class DecisionError(RoundOperationError):
    """A player decision the game, the seat's wagers or the order of play does not allow."""


class UnknownFlagError(RoundOperationError):
    """A confirmation or report that names no open irregularity."""


class ProcedureError(RoundOperationError):
    """A dealing procedure that cannot be built (unknown game, method for the wrong game, no seats)."""


class ExposureMismatchError(RoundOperationError):
    """An exposure declaration whose shoe index and place name different cards."""


class UnequalWagersError(BadAmountError):
    """Let It Ride 3.4: the 1, 2 and $ wagers are three equal wagers placed together."""


class CandidateError(RoundOperationError):
    """A supervisor confirmation that names no candidate placement of the flag, or none when
    the flag offers several."""


class MissingInputError(WrongStateError):
    """An operation that needs an input the round has not recorded (Let It Ride's Magic Card
    or Lucky Player before settlement, 4.3-4.4). ``field`` names the missing input(s) as the
    operation that supplies them does (``magic_card``, ``lucky_seat``); supplying it is the
    way forward, and the round is left in play so a supervisor may void it instead."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class RoundVoidError(WrongStateError):
    """An operation of play on a round that is void (5.1-5.4, 5.8; Let It Ride 5.1-5.5; a
    supervisor's void, 6.1): every wager of it is returned, so nothing more is played in it.
    ``rule`` names the rules that voided it. Raised by the table (cardshoe.daemon) before the
    operation reaches the round, so rounds recorded before issue 20 still replay."""

    def __init__(self, message: str, rule: str) -> None:
        super().__init__(message)
        self.rule = rule
