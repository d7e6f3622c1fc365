"""Rounds at the table: open, operate, settle, export (the table core's part for rounds).

`RoundPlay` opens each round with the table's settings, applies the controller's and the
shoe's operations to it (`cardshoe.rounds`), and settles it with the settlement engine
(`cardshoe.settlement`): a round closes only if it settles, so a refusal leaves it in play
to be completed or voided (docs/rule-readings.md 70-72).

Under the rules of issue 20 (`TableSetup.plays_out_voids`, docs/rule-readings.md 74-76) no
input is taken that the table cannot finish: a stake the settlement engine would refuse is
refused when the wager is placed or changed (`StakeRefused`, naming the seat and the rule);
a void round refuses play (`RoundVoidError`, naming the void's rules) and closes whatever its
stakes (the engine settles a void round on its stakes alone), so a void ends a round for good
and the next round opens.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping

from cardshoe import rounds, settlement  # loaded at start: the first settlement pays no import (issue 15)
from cardshoe.daemon.outcome import (
    Applied,
    Derived,
    InputError,
    SettlementRefused,
    StakeRefused,
    TableSetup,
    error_body,
    event,
)
from cardshoe.games import get_game
from cardshoe.rounds import Round, RoundOperationError
from cardshoe.rounds.state import LIR_TRIO
from cardshoe.shuffle.collect import collected_order

if TYPE_CHECKING:
    from cardshoe.shuffle.book import ShuffleBook

#: Rounds kept in memory for the API after they are settled (the journal keeps them all).
KEEP_ROUNDS = 1_000_000  # the API reads rounds from memory; a table plays a few hundred a shift

#: The controller's operations of play, refused on a void round (issue 20): every wager of it
#: is returned, so nothing more is played in it. A person's count, a supervisor's confirmation
#: and another void only complete its record, and are taken.
_PLAY = (rounds.PlaceWager, rounds.ChangeWager, rounds.WagerWithdrawn, rounds.ProgressiveSelection,
         rounds.NoMoreBets, rounds.DealComplete, rounds.Decision, rounds.PlayerAbsent, rounds.ExposureDeclared)
_SEAT_INDEX = re.compile(r"^seats\[(\d+)\]")


class RoundPlay:
    """The table core's rounds: the one in play, those settled, and their settlements."""

    if TYPE_CHECKING:
        setup: TableSetup
        rounds: dict[str, Round]
        current: Round | None
        rounds_opened: int
        jackpot_pool: int | None
        settlements: dict[str, dict[str, Any]]
        pool_given_late: dict[str, int]
        shuffle: ShuffleBook
        _frozen: dict[str, tuple[bytes, bytes]]

        def _need_jackpot_reset(self, what: str) -> None: ...

        def _shuffle_check(self, round_: Round) -> list[Derived]: ...

    def _round_for(self, body: Mapping[str, Any]) -> Round:
        rid = body.get("round_id")
        round_ = self.rounds.get(rid) if isinstance(rid, str) else None
        if round_ is None:
            raise InputError("round_id", f"no round {rid!r} at this table")
        return round_

    def _op(self, body: Mapping[str, Any]) -> Applied:
        """A `cardshoe.rounds` operation from the controller for the round `body` names."""
        round_ = self._round_for(body)
        try:
            op = rounds.operation_from_json(body["op"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError("op", str(exc)) from None
        if (self.setup.plays_out_voids and round_.void is not None and isinstance(op, _PLAY)
                and round_.status is not rounds.RoundStatus.SETTLED):  # a settled one says so itself
            raise void_refusal(round_, op.OP.replace("_", " "))
        if (isinstance(op, (rounds.PlaceWager, rounds.ChangeWager)) and op.wager == "progressive"
                and op.amount and round_.can(op)):  # a wager the round refuses anyway says why
            self._need_jackpot_reset("a progressive wager")
        if self.setup.plays_out_voids and round_.can(op):
            self._check_stakes(round_, op)
        done = self._do(round_, op, source="table")
        derived = done.derived
        if done.refused is None and isinstance(op, rounds.ProgressiveSelection):
            # The engine records it silently; the table's displays need to see it.
            # The round's selection as it now stands: after the first card an op only
            # fills in what was missing (reading 70).
            derived += (event(round_.round_id, "progressive_selected", magic_card=round_.magic_card,
                              lucky_seat=round_.lucky_seat, rules=["4.3", "4.4"]),)
        return Applied(derived, done.refused, done.round_id)

    def _check_stakes(self, round_: Round, op: Any) -> None:
        """Refuse now a stake settlement would refuse later (issue 20 item 1): each wager an
        operation places at its amount, checked by the settlement engine's own rule
        (`settlement.check_stake`) against the table's limits."""
        stakes: list[tuple[int, str, int]] = []
        if isinstance(op, (rounds.PlaceWager, rounds.ChangeWager)) and op.amount:
            names = [op.wager]
            if isinstance(op, rounds.ChangeWager) and op.wager in LIR_TRIO:
                names += [w for w in LIR_TRIO if w != op.wager and w in round_.wagers.get(op.seat, {})]
            stakes = [(op.seat, name, op.amount) for name in names]
        elif isinstance(op, rounds.Decision) and op.choice in (rounds.Choice.PLAY, rounds.Choice.BET):
            ante = round_.wagers.get(op.seat, {}).get("ante")
            if ante is not None:  # TCP 3.9.2 the play equals the ante; Stud 1.1.2 the bet is twice it
                wager, amount = ("play", ante) if op.choice is rounds.Choice.PLAY else ("bet", 2 * ante)
                stakes = [(op.seat, wager, amount)]
        if not stakes:
            return
        game = get_game(round_.game)
        limits = {w: settlement.Limit(lo, hi) for w, lo, hi in self.setup.limits}
        for seat, wager, amount in stakes:
            try:
                settlement.check_stake(game, limits, wager, amount)
            except settlement.RoundError as exc:
                field_name = exc.field if exc.field.startswith("limits.") else "amount"
                raise StakeRefused(field_name, f"seat {seat}: a {wager} wager of {amount} would not be settled: "
                                   f"{exc.message} ({game.title} {exc.rule or 'table settings'}); refused",
                                   exc.rule) from None

    def next_round_id(self) -> str:
        """The id the next `open_round` will give (deterministic, so replay agrees)."""
        scope = self.setup.round_scope
        if scope is None:  # a journal made before round scopes: its ids as they always were
            return f"{self.setup.name}-{self.rounds_opened + 1:06d}"
        return f"{self.setup.name}-{scope}-{self.rounds_opened + 1:06d}"

    def _open_round(self, time_ms: int) -> Applied:
        closing: tuple[Derived, ...] = ()
        previous = self.current
        if previous is not None and previous.status is not rounds.RoundStatus.SETTLED:
            if previous.void is None:
                raise InputError("round", f"round {previous.round_id} is still in play; settle or void it first")
            # A void round still gets its settlement (every wager returned) on the record.
            closed = self._settle(previous, None, time_ms)
            if closed.refused is not None:
                raise closed.refused
            closing = closed.derived
        rid = self.next_round_id()
        op = rounds.OpenRound(
            round_id=rid, game=self.setup.game, device=rounds.Device(self.setup.dealing),
            method=None if self.setup.method is None else rounds.XtremeMethod(self.setup.method),
            positions=self.setup.seats, time_ms=time_ms,
        )
        round_ = Round.open(op)
        self.rounds_opened += 1
        self.rounds[rid] = round_
        self.current = round_
        self._trim()
        opened = event(rid, "round_opened", round_id=rid, game=self.setup.game, dealing=self.setup.dealing,
                       method=self.setup.method, positions=self.setup.seats)
        return Applied(closing + (opened,) + tuple(self._events(rid, round_.events)), round_id=rid)

    def _trim(self) -> None:
        if len(self.rounds) > KEEP_ROUNDS:
            for rid in list(self.rounds)[: len(self.rounds) - KEEP_ROUNDS]:
                if self.rounds[rid] is not self.current:
                    del self.rounds[rid]

    def _settle(self, round_: Round, pool: Any, time_ms: int) -> Applied:
        if pool is None:
            # A pool set while the table had a reset is not offered once it has none: with no
            # reset no progressive can be settled, and a round without one needs no pool.
            pool = self.jackpot_pool if self.setup.jackpot_reset is not None else None
        elif not isinstance(pool, int) or isinstance(pool, bool) or pool < 0:
            raise InputError("jackpot_pool", "a non-negative integer in minor units")
        else:
            self._need_jackpot_reset("a jackpot pool")
        retry_pool: int | None = None
        if round_.status is rounds.RoundStatus.SETTLED and round_.round_id not in self.settlements:
            # Closed earlier, but the settlement engine refused it (settlement_failed), e.g.
            # for want of a setting since corrected: settle the closed round again, with the
            # jackpot pool given now if the one given at closing was missing.
            derived: list[Derived] = []
            retry_pool = pool if round_.jackpot_pool is None else None
        elif self.setup.plays_out_voids and round_.void is not None:
            # A void ends the round for good (issue 20): it is closed whatever the engine says
            # of it (the engine settles a void round on its stakes alone, every wager returned;
            # were it still to refuse, the round stays closed with `settlement_failed` for a
            # person, 6.1, and is settled again by the next settle), so the next round opens.
            op = rounds.Settle(jackpot_pool=pool, time_ms=time_ms)
            self._frozen.pop(round_.round_id, None)
            done = self._do(round_, op, source="table")
            if done.refused is not None:
                return done
            derived = list(done.derived)
            if round_.shoe_no is not None:
                self.shuffle.round_collected(round_.shoe_no, collected_order(round_.placements, round_.cards))
        else:
            op = rounds.Settle(jackpot_pool=pool, time_ms=time_ms)
            self._frozen.pop(round_.round_id, None)  # the round may change: its pickle is stale
            try:
                # The round closes only if the settlement engine settles it: a round it refuses
                # (an input missing, a setting wrong) stays in play, so the input can still be
                # given or a supervisor can void it; a closed round with no settlement could
                # be neither (the stranded round).
                events, made = round_.do_then(op, self._settles)
            except RoundOperationError as exc:
                refusal = event(round_.round_id, "input_refused", op=type(op).__name__, **error_body(exc))
                return Applied((refusal,), refused=exc, round_id=round_.round_id)
            except SettlementRefused as exc:
                refusal = event(round_.round_id, "input_refused", op=type(op).__name__, **error_body(exc))
                return Applied((refusal,), refused=exc, round_id=round_.round_id)
            derived = self._events(round_.round_id, events) + self._shuffle_check(round_)
            if round_.shoe_no is not None:  # its cards are collected onto the shoe's pile (reading 60)
                self.shuffle.round_collected(round_.shoe_no, collected_order(round_.placements, round_.cards))
            if made is not None:
                self.settlements[round_.round_id] = made
                derived.append(Derived("settlement", round_.round_id, made))
                return Applied(tuple(derived), round_id=round_.round_id)
            if self.setup.plays_out_voids and round_.status is not rounds.RoundStatus.SETTLED:
                # Settle's last count point found a problem that waits for a person (a flag on
                # the record, in the answer): the round is not closed, so there is nothing to
                # settle yet, and nothing failed.
                return Applied(tuple(derived), round_id=round_.round_id)
        try:
            settlement = self._settlement(round_, retry_pool)
        except Exception as exc:  # noqa: BLE001 - the round is closed; its settlement waits for a person
            # The round is closed (the Settle operation was applied), but the settlement engine
            # refused it: shown and journaled for the shift manager (6.1); replay agrees.
            refused = self._engine_error(round_, exc) if self.setup.plays_out_voids else error_body(exc)
            body = {"type": "settlement_failed", "round_id": round_.round_id, **refused, "rule": "6.1"}
            derived.append(event(round_.round_id, "settlement_failed", **{k: v for k, v in body.items()
                                                                           if k != "type"}))
            return Applied(tuple(derived), round_id=round_.round_id)
        self.settlements[round_.round_id] = settlement
        derived.append(Derived("settlement", round_.round_id, settlement))
        return Applied(tuple(derived), round_id=round_.round_id)

    def _settles(self, round_: Round) -> dict[str, Any] | None:
        """The settlement of `round_` just closed by Settle, or None when Settle did not close it
        (its last count point found a problem that waits for a person). Raises SettlementRefused
        naming the field when the settlement engine refuses the round."""
        if round_.status is not rounds.RoundStatus.SETTLED:
            return None
        try:
            return self._settlement(round_)
        except Exception as exc:  # noqa: BLE001 - any refusal keeps the round in play, named
            if self.setup.plays_out_voids:
                named = self._engine_error(round_, exc)
                raise SettlementRefused(named["field"], f"the settlement engine refused round {round_.round_id}: "
                                        f"{named['message']}; the round is still in play (give what is missing "
                                        "and settle again, or void it)", named.get("rule")) from None
            field_name = getattr(exc, "field", None)
            raise SettlementRefused(field_name if isinstance(field_name, str) else "settlement",
                                    f"the settlement engine refused round {round_.round_id}: "
                                    f"{getattr(exc, 'message', None) or exc}; the round is still in play "
                                    "(give what is missing and settle again, or void it)") from None

    def _engine_error(self, round_: Round, exc: Exception) -> dict[str, Any]:
        """A refusal of the settlement engine as the table names it: a seat by its number, not
        by its index in the round file (`seats[1].wagers.progressive` is `seat 3.wagers.progressive`),
        with the engine's message and rule."""
        body = error_body(exc)
        field_name = getattr(exc, "field", None)
        message = str(getattr(exc, "message", None) or exc)
        field_name = field_name if isinstance(field_name, str) else "settlement"
        match = _SEAT_INDEX.match(field_name)
        if match is not None:
            try:
                seats = self.export(round_)["seats"]
                number = int(seats[int(match.group(1))]["seat"])
            except (ValueError, IndexError, KeyError, TypeError):
                number = None
            if number is not None:
                field_name = f"seat {number}{field_name[match.end():]}"
                message = f"seat {number}: {message}"
        body.update(field=field_name, message=message)
        return body

    def _settlement(self, round_: Round, pool: int | None = None) -> dict[str, Any]:
        if pool is not None:
            self.pool_given_late[round_.round_id] = pool
        # Before issue 20 a void round was checked as any other (rule reading 74): its journals
        # replay so.
        parsed = settlement.parse_round(self.export(round_), strict_void=not self.setup.plays_out_voids)
        result: dict[str, Any] = settlement.settle(parsed).to_json()
        return {"type": "settlement", "round_id": round_.round_id, "settlement": result}

    def export(self, round_: Round) -> dict[str, Any]:
        """`round_` in the round-file format, with this table's limits and jackpot reset."""
        data: dict[str, Any] = round_.to_round_json(limits=self.setup.limits_json(),
                                                    jackpot_reset=self.setup.jackpot_reset)
        late = self.pool_given_late.get(round_.round_id)
        if late is not None and isinstance(data.get("jackpot"), dict):
            data["jackpot"]["pool"] = late
        return data

    def _events(self, rid: str, events: Any) -> list[Derived]:
        return [Derived("event", rid, {"type": ev.kind, **ev.to_json()}) for ev in events]

    def _do(self, round_: Round, op: Any, *, source: str) -> Applied:
        try:
            self._frozen.pop(round_.round_id, None)  # the round may change: its pickle is stale
            events = round_.do(op)
        except RoundOperationError as exc:
            refusal = event(round_.round_id, "input_refused" if source == "table" else "shoe_input_refused",
                            op=type(op).__name__, **error_body(exc))
            return Applied((refusal,), refused=exc, round_id=round_.round_id)
        derived = self._events(round_.round_id, events) + self._shuffle_check(round_)
        return Applied(tuple(derived), round_id=round_.round_id)


def void_refusal(round_: Round, what: str) -> rounds.RoundVoidError:
    """The refusal of `what` (an operation of play) on the void round `round_`."""
    void = round_.void
    assert void is not None
    rules = ", ".join(void.rules)
    return rounds.RoundVoidError(
        f"round {round_.round_id} is void ({rules}: {void.reason}); every wager of it is returned, so "
        f"{what} is refused: settle it (every wager returned) and open the next round", rules)
