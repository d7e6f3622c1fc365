"""What the table controller can do, as service calls: the API's handlers call these.

Each method builds one journaled input (a `cardshoe.rounds` operation stamped with the
time it is journaled at) and hands it to the `TableService`. A refused input is journaled
too (as a refusal event, so replay reproduces it) and raised as `Refused`, which the API
turns into a 4xx naming the field. Nothing accepted before a refusal is touched.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Callable

from cardshoe import rounds
from cardshoe.daemon.core import Applied, InputError, SettlementRefused
from cardshoe.daemon.service import TableService
from cardshoe.journal import canonical_json

# Which request field a refusal of each kind is about, for the 4xx body.
_FIELD_OF: dict[type[Exception], str] = {
    rounds.WagersClosedError: "wager",
    rounds.UnknownWagerError: "wager",
    rounds.BadSeatError: "seat",
    rounds.BadAmountError: "amount",
    rounds.DecisionError: "choice",
    rounds.UnknownFlagError: "flag",
    rounds.WrongStateError: "round",
    rounds.DuplicateShoeIndexError: "shoe_index",
    rounds.ProcedureError: "round",
}


class Refused(Exception):
    """An input the table refused; `status` is the HTTP status, `field` the field at fault."""

    def __init__(self, status: int, field: str, message: str, error: str, rule: str | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.status = status
        self.field = field
        self.message = message
        self.error = error
        self.rule = rule

    def to_json(self) -> dict[str, Any]:
        """The 4xx body's `detail`."""
        out: dict[str, Any] = {"field": self.field, "message": self.message, "error": self.error}
        if self.rule is not None:
            out["rule"] = self.rule
        return out


def _refused(error: Exception) -> Refused:
    if isinstance(error, SettlementRefused):
        # 409: the round cannot be settled as it stands; it stays in play (give what is
        # missing, or a supervisor voids it).
        return Refused(409, error.field, str(error), type(error).__name__)
    if isinstance(error, InputError):
        # 409: valid, but not at this table now (an unknown round, a setting the table lacks).
        return Refused(422 if error.field not in ("round", "round_id", "jackpot.reset") else 409, error.field, str(error),
                       type(error).__name__)
    named = getattr(error, "field", None)  # an error that names its own field (MissingInputError)
    field = named if isinstance(named, str) else next((f for cls, f in _FIELD_OF.items() if isinstance(error, cls)),
                                                      "operation")
    status = 409 if isinstance(error, rounds.WrongStateError) else 422
    if isinstance(error, rounds.UnknownFlagError):
        status = 404
    rule = "5.5-5.6" if isinstance(error, rounds.WagersClosedError) else None
    return Refused(status, field, str(error), type(error).__name__, rule)


@dataclass(frozen=True)
class Done:
    """An accepted input: its round and the derived events' bodies."""

    round_id: str | None
    events: list[dict[str, Any]]
    settlement: dict[str, Any] | None = None


class TableControl:
    """The table controller's actions on one table."""

    def __init__(self, service: TableService, *, draw_magic: bool = False,
                 randbelow: Callable[[int], int] = secrets.randbelow) -> None:
        self.service = service
        self.draw_magic = draw_magic
        self._randbelow = randbelow

    def _submit(self, body: dict[str, Any]) -> Done:
        # The time the op carries equals the time the journal entry carries.
        t_ns = self.service.now()
        if body.get("action") == "op":
            op = body["op"]
            body = {**body, "op": {**op, "time_ms": t_ns // 1_000_000}}
        applied: Applied = self.service.submit_input(body, t_ns=t_ns)
        if applied.refused is not None:
            raise _refused(applied.refused)
        settlement = next((d.body for d in applied.derived if d.kind == "settlement"), None)
        events = [d.body for d in applied.derived if d.kind == "event"]
        for event in events:
            if event.get("type") in ("internal_error", "settlement_failed"):
                # Accepted and journaled, but the daemon could not finish it: say so, loudly.
                raise Refused(500, str(event.get("field", event["type"])), str(event.get("message")),
                              str(event.get("error")), "6.1")
        return Done(applied.round_id, events, settlement)

    def _op(self, round_id: str, op: Any) -> Done:
        return self._submit({"action": "op", "round_id": round_id, "op": rounds.operation_to_json(op)})

    # -- the round -------------------------------------------------------------------
    def open_round(self) -> Done:
        """"Place your bets, please" (3.1): open the next round at this table.

        At a Let It Ride table configured to draw the Magic Card and Lucky Player, they are
        drawn and journaled now, so they are on record before any card can be dealt."""
        done = self._submit({"action": "open_round"})
        if self.draw_magic and done.round_id is not None and self.service.core.setup.game == "megalink-let-it-ride":
            drawn = self.draw_progressive(done.round_id, self.service.core.setup.seats)
            done = Done(done.round_id, done.events + drawn.events)
        return done

    def place_wager(self, round_id: str, seat: int, wager: str, amount: int) -> Done:
        """A new wager on a seat, before "no more bets"."""
        return self._op(round_id, rounds.PlaceWager(seat=seat, wager=wager, amount=amount))

    def change_wager(self, round_id: str, seat: int, wager: str, amount: int) -> Done:
        """Change (0 withdraws) a wager before "no more bets"; refused after it (5.5-5.6)."""
        return self._op(round_id, rounds.ChangeWager(seat=seat, wager=wager, amount=amount))

    def progressive_selection(self, round_id: str, magic_card: int | None, lucky_seat: int | None) -> Done:
        """Let It Ride's Magic Card and Lucky Player as the progressive system chose them."""
        return self._op(round_id, rounds.ProgressiveSelection(magic_card=magic_card, lucky_seat=lucky_seat))

    def draw_progressive(self, round_id: str, seats: int) -> Done:
        """Draw the Magic Card and Lucky Player with a cryptographic source (`secrets`)."""
        if not self.draw_magic:
            raise Refused(409, "draw", "drawing is not configured (let_it_ride.draw_magic)", "NotConfigured")
        magic: int | None = self._randbelow(52)
        lucky: int | None = 1 + self._randbelow(seats)
        with self.service.lock:
            round_ = self.service.core.rounds.get(round_id)
            if round_ is not None and round_.cards:
                # After the first card a recorded value stands (reading 70): draw only what is missing.
                magic = magic if round_.magic_card is None else None
                lucky = lucky if round_.lucky_seat is None else None
        return self.progressive_selection(round_id, magic, lucky)

    def no_more_bets(self, round_id: str) -> Done:
        """"No more bets" (3.2): wagers close; the active seats fix the dealing procedure."""
        return self._op(round_id, rounds.NoMoreBets())

    def deal_complete(self, round_id: str) -> Done:
        """The deal-complete count point, entered at the table instead of the shoe's key."""
        return self._op(round_id, rounds.DealComplete(source=rounds.Source.TABLE))

    def decision(self, round_id: str, seat: int, choice: str) -> Done:
        """A player's decision."""
        try:
            parsed = rounds.Choice(choice)
        except ValueError:
            raise Refused(422, "choice", f"{choice!r} is not one of {[c.value for c in rounds.Choice]}",
                          "ValueError") from None
        return self._op(round_id, rounds.Decision(seat=seat, choice=parsed))

    def player_absent(self, round_id: str, seat: int) -> Done:
        """The player of `seat` is absent for the decision (5.11)."""
        return self._op(round_id, rounds.PlayerAbsent(seat=seat))

    def exposure(self, round_id: str, place: rounds.Place | None, shoe_index: int | None) -> Done:
        """An exposed card declared at the table."""
        return self._op(round_id, rounds.ExposureDeclared(source=rounds.Source.TABLE, place=place,
                                                          shoe_index=shoe_index))

    def hand_count(self, round_id: str, flag: int, position: rounds.Position, count: int, reporter: str) -> Done:
        """A person's count of a position's cards, for an open count irregularity."""
        return self._op(round_id, rounds.HandCountReported(flag=flag, position=position, count=count,
                                                           reporter=reporter))

    def confirm(self, round_id: str, flag: int, confirmed: bool, supervisor: str,
                candidate: int | None = None) -> Done:
        """A supervisor's confirmation (or rejection) of a proposal or referral.

        ``candidate`` picks one of a proposed placement's candidates (1-based).
        """
        return self._op(round_id, rounds.SupervisorConfirmation(flag=flag, confirmed=confirmed,
                                                                supervisor=supervisor, candidate=candidate))

    def void(self, round_id: str, rule: str, reason: str, by: str) -> Done:
        """A supervisor voids the round."""
        return self._op(round_id, rounds.VoidRound(rule=rule, reason=reason, by=by))

    def settle(self, round_id: str, jackpot_pool: int | None) -> Done:
        """Close the round and settle every wager."""
        body: dict[str, Any] = {"action": "settle", "round_id": round_id}
        if jackpot_pool is not None:
            body["jackpot_pool"] = jackpot_pool
        return self._submit(body)

    def set_jackpot_pool(self, amount: int) -> Done:
        """The progressive pool as the jackpot system displays it (minor units)."""
        return self._submit({"action": "jackpot_pool", "amount": amount})

    # -- reading -----------------------------------------------------------------------
    def round_snapshot(self, round_id: str) -> dict[str, Any]:
        """The round's state as the rounds engine shows it."""
        with self.service.lock:
            round_ = self.service.core.rounds.get(round_id)
            if round_ is None:
                raise Refused(404, "round_id", f"no round {round_id!r} in memory", "NotFound")
            snap: dict[str, Any] = round_.snapshot()
            settlement = self.service.core.settlements.get(round_id)
        # Round-trip through canonical JSON so the API shows exactly what is journaled.
        import json

        out: dict[str, Any] = json.loads(canonical_json(snap))
        if settlement is not None:
            out["settlement"] = settlement
        return out

    def round_list(self, limit: int) -> list[dict[str, Any]]:
        """The rounds in memory, newest first (at most `limit`): id, status, void or not."""
        with self.service.lock:
            rounds_ = list(self.service.core.rounds.values())[-limit:]
            out = [{"round_id": r.round_id, "status": r.status.value, "void": r.void is not None} for r in rounds_]
        out.reverse()
        return out

    def round_export(self, round_id: str) -> dict[str, Any]:
        """The round in the round-file format (docs/round-format.md) for `cardshoe settle`."""
        with self.service.lock:
            round_ = self.service.core.rounds.get(round_id)
            if round_ is None:
                raise Refused(404, "round_id", f"no round {round_id!r} in memory", "NotFound")
            try:
                data: dict[str, Any] = self.service.core.export(round_)
            except ValueError as exc:
                raise Refused(409, "round_id", str(exc), type(exc).__name__) from None
        return data
