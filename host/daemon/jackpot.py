"""The table's jackpot pool and the progressive's settings (the table core's part for them).

A progressive wager or a pool is refused at once on a table with no `[jackpot] reset`:
settling a progressive needs the pool and the amount it resets to, so accepting either would
only fail the round's settlement later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from cardshoe.daemon.outcome import Applied, InputError, event

if TYPE_CHECKING:
    from cardshoe.daemon.outcome import TableSetup


class JackpotInputs:
    """The table core's jackpot pool, set by the controller (or the floor's assignment)."""

    if TYPE_CHECKING:
        setup: TableSetup
        jackpot_pool: int | None

        def _round_id(self) -> str | None: ...

    def _need_jackpot_reset(self, what: str) -> None:
        """Refuse `what` at once on a table with no jackpot reset: settling a progressive needs
        the pool and the amount it resets to (the round file's `jackpot`), so accepting it would
        only fail the round's settlement later, where no void could undo it."""
        if self.setup.jackpot_reset is None:
            raise InputError("jackpot.reset", f"{what} is refused: this table has no [jackpot] reset configured "
                             "(the amount the progressive resets to), so no progressive can be settled; "
                             "set it in the table file and restart the daemon")

    def _jackpot_pool_input(self, body: Mapping[str, Any]) -> Applied:
        """The controller's `jackpot_pool` input: the pool the next progressive settles against."""
        amount = body.get("amount")
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
            raise InputError("amount", "the jackpot pool is a non-negative integer in minor units")
        self._need_jackpot_reset("a jackpot pool")
        self.jackpot_pool = amount
        return Applied((event(self._round_id(), "jackpot_pool", amount=amount),))
