"""Errors of settlement input: each names the field that was wrong."""

from __future__ import annotations

__all__ = ["RoundError"]


class RoundError(ValueError):
    """A round that cannot be settled as given; ``field`` is the JSON path of the problem.

    Examples of ``field``: ``game``, ``seats[2].wagers.play``, ``dealer.cards``. ``rule`` is
    the rule of the game's document that refuses it, where one does (a progressive stake:
    ``3.5.3``), else None.
    """

    def __init__(self, field: str, message: str, *, rule: str | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.rule = rule
