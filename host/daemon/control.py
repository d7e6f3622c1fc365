"""What the table controller can do, as service calls: the API's handlers call these.

Each method builds one journaled input (a `cardshoe.rounds` operation stamped with the
time it is journaled at) and hands it to the `TableService`. A refused input is journaled
too (as a refusal event, so replay reproduces it) and raised as `Refused`, which the API
turns into a 4xx naming the field. Nothing accepted before a refusal is touched.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass
from typing import Any, Callable

from cardshoe import rounds
from cardshoe.daemon.core import Applied, InputError, SettlementRefused, StakeRefused
from cardshoe.daemon.service import TableService
from cardshoe.floor.client import FloorClient, FloorRefused, FloorUnreachable
from cardshoe.floor.progressive import round_digest
from cardshoe.floor.shipper import shipped
from cardshoe.floor.store import ShippedEntry
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


#: The HTTP status of each refusal (docs/api.md, "Errors"). 422 is kept for a request that
#: breaks the OpenAPI description (FastAPI's schema check, the body limits): a bug in the
#: controller. Every refusal of a well-formed request by the round or the table is 409 (the
#: request is right, the table's state, its game's rules or its settings refuse it: show the
#: dealer the message), or 404 when the round or the flag it names does not exist.
_INPUT_STATUS = {"round_id": 404, "round": 409, "jackpot.reset": 409, "staff_id": 409, "player_id": 409, "seat": 409}


def _refused(error: Exception) -> Refused:
    """The `Refused` (status, field, message, error type, rule) of a refused input."""
    if isinstance(error, (SettlementRefused, StakeRefused)):
        # 409: the round cannot be settled as it stands; it stays in play (give what is
        # missing, or a supervisor voids it). A stake settlement would refuse is refused when
        # placed, naming the seat and the rule (issue 20).
        rule = getattr(error, "rule", None)
        return Refused(409, error.field, str(error), type(error).__name__, rule if isinstance(rule, str) else None)
    if isinstance(error, InputError):
        # 404: an unknown round; 409: valid, but not at this table now (a round still in play,
        # a setting the table lacks). An input the core cannot read at all is 422.
        return Refused(_INPUT_STATUS.get(error.field, 422), error.field, str(error), type(error).__name__)
    named = getattr(error, "field", None)  # an error that names its own field (MissingInputError)
    field = named if isinstance(named, str) else next((f for cls, f in _FIELD_OF.items() if isinstance(error, cls)),
                                                      "operation")
    status = 404 if isinstance(error, rounds.UnknownFlagError) else 409
    rule = "5.5-5.6" if isinstance(error, rounds.WagersClosedError) else getattr(error, "rule", None)
    return Refused(status, field, str(error), type(error).__name__, rule if isinstance(rule, str) else None)


def _sent_rounds(service: TableService) -> dict[str, tuple[int, str | None]]:
    """The rounds this journal sent to the floor for settlement and did not withdraw: round ->
    (its latest `settle_sent` entry, the round file's digest it named)."""
    sent: dict[str, tuple[int, str | None]] = {}
    with service.journal.reader() as reader:
        for entry in reader.entries(("floor",)):
            data = entry.data()
            rid = data.get("round_id") if isinstance(data, dict) else None
            if not isinstance(rid, str):
                continue
            if data.get("type") == "settle_sent":
                digest = data.get("digest")
                sent[rid] = (entry.id, digest if isinstance(digest, str) else None)
            elif data.get("type") == "settle_withdrawn":
                sent.pop(rid, None)
    return sent


#: A settle request carries the journal's unshipped tail only up to this many entries; past it
#: the floor answers that it has not all arrived and the table waits for its shipper.
TAIL_MAX = 500


@dataclass(frozen=True)
class Done:
    """An accepted input: its round and the derived events' bodies."""

    round_id: str | None
    events: list[dict[str, Any]]
    settlement: dict[str, Any] | None = None


class TableControl:
    """The table controller's actions on one table."""

    def __init__(self, service: TableService, *, draw_magic: bool = False,
                 randbelow: Callable[[int], int] = secrets.randbelow, floor: FloorClient | None = None) -> None:
        self.service = service
        # The floor's linked progressive, when the table is on a link (issue 14).
        self.floor = floor if floor is not None and floor.link is not None else None
        # Rounds sent to the floor for settlement (journaled `settle_sent` before sending): such
        # a round may have been assigned its pool though the answer never came back, so it is
        # voided only once the floor says it never assigned it (docs/floor.md, "A round sent
        # and not heard back"). Rebuilt from the journal, so a restart keeps the rule.
        self._sent: dict[str, tuple[int, str | None]] = {}
        if self.floor is not None:
            self._sent = _sent_rounds(service)
        self.draw_magic = draw_magic
        self._randbelow = randbelow

    def _submit(self, body: dict[str, Any], t_ns: int | None = None) -> Done:
        # The time the op carries equals the time the journal entry carries.
        if t_ns is None:
            t_ns = self.service.now()
        if body.get("action") == "op":
            op = body["op"]
            body = {**body, "op": {**op, "time_ms": t_ns // 1_000_000}}
        applied: Applied = self.service.submit_input(body, t_ns=t_ns)
        if applied.refused is not None:
            raise _refused(applied.refused)
        settlement = next((d.body for d in applied.derived if d.kind == "settlement"), None)
        events = [d.body for d in applied.derived if d.kind == "event"]
        for d in applied.derived:
            event = d.body
            failed = event.get("type") == "internal_error" or (
                # A void round closed by opening the next one that the engine still refused: the
                # new round is open (the answer says so, with the event); that one waits for a person.
                event.get("type") == "settlement_failed" and d.round_id == applied.round_id)
            if d.kind == "event" and failed:
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

    def _floor_check(self, round_id: str, wager: str, amount: int) -> None:
        # A progressive wager is taken only while the floor's controller answers: the table
        # could not settle it (never against a stale pool), so it is refused up front.
        floor = self.floor
        if floor is None or wager != "progressive" or amount <= 0 or floor.online:
            return
        message = (f"the floor's progressive controller (link {floor.link}) is unreachable: progressive wagers are "
                   "refused until it returns; base games go on")
        self.service.record("floor", {"type": "progressive_refused", "round_id": round_id, "message": message,
                                      "last_error": floor.state.last_error}, publish=True)
        raise Refused(503, "wager", message, "FloorUnreachable")

    def place_wager(self, round_id: str, seat: int, wager: str, amount: int) -> Done:
        """A new wager on a seat, before "no more bets"; a progressive one on a linked table
        only while the floor answers."""
        self._floor_check(round_id, wager, amount)
        return self._op(round_id, rounds.PlaceWager(seat=seat, wager=wager, amount=amount))

    def change_wager(self, round_id: str, seat: int, wager: str, amount: int) -> Done:
        """Change (0 withdraws) a wager before "no more bets"; refused after it (5.5-5.6)."""
        self._floor_check(round_id, wager, amount)
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
                          "ValidationError") from None
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
        """A supervisor voids the round. On a linked table, a round sent to the floor for its
        pool is voided only once the floor says it never assigned it (reading 73)."""
        op = rounds.VoidRound(rule=rule, reason=reason, by=by)
        if self.floor is not None and round_id in self._sent:
            self._void_sent(round_id, op)
        return self._op(round_id, op)

    def _void_sent(self, round_id: str, op: rounds.VoidRound) -> None:
        floor = self.floor
        assert floor is not None
        with self.service.lock:
            round_ = self.service.core.rounds.get(round_id)
            if round_ is None or round_.status is rounds.RoundStatus.SETTLED:
                return  # the core refuses the void itself, journaled
            try:
                copy.deepcopy(round_).do(op)
            except rounds.RoundOperationError:
                return  # likewise: a void the round refuses anyway is not asked of the floor
        try:
            assignment = floor.withdraw(round_id)
        except FloorUnreachable as exc:
            message = (f"round {round_id} was sent to the floor (link {floor.link}) for its progressive pool and the "
                       "floor's answer has not come back: it may have been assigned, so it is not voided; settle it "
                       "when the floor answers (if the floor never saw it, the void is then allowed)")
            self.service.record("floor", {"type": "void_refused", "round_id": round_id, "message": message,
                                          "error": str(exc)}, publish=True)
            raise Refused(409, "floor", message, "FloorAnswerPending") from None
        except FloorRefused as exc:
            self.service.record("floor", {"type": "void_refused", "round_id": round_id, "message": exc.message,
                                          "field": exc.field}, publish=True)
            raise Refused(409, f"floor.{exc.field}", exc.message, "FloorRefused") from None
        if assignment is not None:
            message = (f"the floor (link {floor.link}) assigned round {round_id} its progressive pool (seq "
                       f"{assignment.get('seq')}, pool {assignment.get('pool')}): the pool has moved, so the round is "
                       "not voided; settle it, and it settles with that assignment")
            self.service.record("floor", {"type": "void_refused", "round_id": round_id, "message": message,
                                          "seq": assignment.get("seq")}, publish=True)
            raise Refused(409, "floor", message, "FloorAssigned")
        # The floor never assigned it and has recorded it withdrawn (a settlement of it still on
        # its way is refused there): the void goes ahead.
        self.service.record("floor", {"type": "settle_withdrawn", "round_id": round_id, "link": floor.link},
                            publish=True)
        self._sent.pop(round_id, None)

    def settle(self, round_id: str, jackpot_pool: int | None) -> Done:
        """Close the round and settle every wager. On a linked table, a round with progressive
        wagers is settled against the pool the floor assigns it, or not at all."""
        body: dict[str, Any] = {"action": "settle", "round_id": round_id}
        if self.floor is not None:
            if jackpot_pool is not None:
                raise Refused(409, "jackpot_pool", f"this table's pool is the floor's (link {self.floor.link}): it "
                              "is not given at the table", "LinkedPool")
            return self._settle_linked(round_id, body)
        if jackpot_pool is not None:
            body["jackpot_pool"] = jackpot_pool
        return self._submit(body)

    def _settle_linked(self, round_id: str, body: dict[str, Any]) -> Done:
        floor = self.floor
        assert floor is not None
        t_ns = self.service.now()
        # The round as the Settle operation will leave it, tried on a copy, and the `settle_sent`
        # that marks the journal there, under the service lock: no input lands between them, so
        # the round the floor rebuilds from the journal up to that entry is the one tried here.
        # A round the table would refuse to close is not sent: the core refuses it, journaled.
        with self.service.lock:
            round_ = self.service.core.rounds.get(round_id)
            if round_ is None or round_.status is rounds.RoundStatus.SETTLED:
                return self._submit(body, t_ns)
            trial = copy.deepcopy(round_)
            try:
                trial.do(rounds.Settle(jackpot_pool=0, time_ms=t_ns // 1_000_000))
                export = self.service.core.export(trial)
            except (rounds.RoundOperationError, ValueError):
                return self._submit(body, t_ns)
            progressive = any(int(s.get("wagers", {}).get("progressive", 0) or 0) > 0
                              for s in export.get("seats", []))
            if not progressive:
                return self._submit(body, t_ns)
            digest = round_digest(export)
            sent = self._sent.get(round_id)
            if sent is None or sent[1] != digest:
                # Journaled before sending: from now on the floor may hold an assignment of the
                # round. Again only if the round changed since it was last sent.
                entry = self.service.record("floor", {"type": "settle_sent", "round_id": round_id,
                                                      "link": floor.link, "digest": digest})
                if entry is None:
                    raise Refused(503, "journal", f"the journal failed: round {round_id} was not sent to the floor",
                                  "ServiceFailed")
                self._sent[round_id] = sent = (entry, digest)
        try:
            assigned = floor.settle(round_id, sent[0], self._tail(floor.state.high_water, sent[0]))
        except FloorUnreachable as exc:
            message = (f"the floor's progressive controller (link {floor.link}) is unreachable: round {round_id} has "
                       "progressive wagers and is never settled against a stale pool; settle it again when the "
                       "floor returns")
            self.service.record("floor", {"type": "settle_refused", "round_id": round_id, "message": message,
                                          "error": str(exc)}, publish=True)
            raise Refused(503, "floor", message, "FloorUnreachable") from None
        except FloorRefused as exc:
            self.service.record("floor", {"type": "settle_refused", "round_id": round_id, "message": exc.message,
                                          "field": exc.field, "error": exc.error}, publish=True)
            if exc.error == "RoundIncomplete":
                # The floor settles from the journal it holds: it waits for the rest of it.
                raise Refused(503, "floor", f"the floor has not yet received this table's journal up to round "
                              f"{round_id}'s settlement ({exc.message}); settle it again shortly",
                              "FloorWaiting") from None
            raise Refused(409 if exc.status in (409, 502) else 422, f"floor.{exc.field}", exc.message,
                          exc.error or "FloorRefused") from None
        body["jackpot_pool"] = int(assigned["pool"])
        body["floor"] = {k: assigned[k] for k in ("link", "seq", "stakes", "contribution", "carry_before",
                                                   "carry_after", "pool_before", "pool", "pool_after", "digest")}
        body["floor"]["signed"] = assigned.get("signed")
        done = self._submit(body, t_ns)
        jackpot = (done.settlement or {}).get("settlement", {}).get("jackpot") or {}
        if jackpot.get("pool_after", assigned["pool_after"]) != assigned["pool_after"]:
            # The table and the floor settled the round differently: shown, journaled, for a person.
            self.service.record("floor", {"type": "floor_mismatch", "round_id": round_id, "rule": "6.1",
                                          "table_pool_after": jackpot.get("pool_after"),
                                          "floor_pool_after": assigned["pool_after"]}, publish=True)
        return done

    def _tail(self, after: int, upto: int) -> list[ShippedEntry]:
        """The journal's entries after `after` (what the floor was last known to hold) up to
        `upto`, sent with a settle request; none when more than TAIL_MAX (the shipper's)."""
        if upto - after > TAIL_MAX or upto <= after:
            return []
        out: list[ShippedEntry] = []
        with self.service.journal.reader() as reader:
            for e in reader.entries(after_id=after):
                if e.id > upto:
                    break
                out.append(shipped(e))
        return out

    # -- who deals, who plays (issue 23 item 1) ------------------------------------------
    def sign_on(self, role: str, staff_id: str) -> Done:
        """A dealer or supervisor signs on at the table (the one on before is replaced)."""
        return self._submit({"action": "staff", "role": role, "staff_id": staff_id, "on": True})

    def sign_off(self, role: str, staff_id: str | None) -> Done:
        """The dealer or supervisor on signs off (`staff_id`, when given, must be the one on)."""
        body: dict[str, Any] = {"action": "staff", "role": role, "on": False}
        if staff_id is not None:
            body["staff_id"] = staff_id
        return self._submit(body)

    def seat_player(self, seat: int, player_id: str | None) -> Done:
        """The player id (a rating card) of a seat; None: the player left."""
        return self._submit({"action": "player", "seat": seat, "player_id": player_id})

    def staff_on(self) -> dict[str, Any]:
        """Who is on now: dealer, supervisor, players by seat."""
        with self.service.lock:
            return self.service.core.staff_on()

    def set_jackpot_pool(self, amount: int) -> Done:
        """The progressive pool as the jackpot system displays it (minor units); on a linked
        table the pool is the floor's and this is refused."""
        if self.floor is not None:
            raise Refused(409, "amount", f"this table's pool is the floor's (link {self.floor.link})", "LinkedPool")
        return self._submit({"action": "jackpot_pool", "amount": amount})

    # -- reading -----------------------------------------------------------------------
    def round_snapshot(self, round_id: str) -> dict[str, Any]:
        """The round's state as the rounds engine shows it."""
        with self.service.lock:
            found = self.service.find_round(round_id)  # the day before's too, after a rollover
            if found is None:
                raise Refused(404, "round_id", f"no round {round_id!r} in memory", "NotFound")
            core, round_ = found
            snap: dict[str, Any] = round_.snapshot()
            settlement = core.settlements.get(round_id)
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
            found = self.service.find_round(round_id)
            if found is None:
                raise Refused(404, "round_id", f"no round {round_id!r} in memory", "NotFound")
            core, round_ = found
            try:
                data: dict[str, Any] = core.export(round_)
            except ValueError as exc:
                # Not exportable yet (an irregularity waits for a person): the round's state.
                raise Refused(409, "round_id", str(exc), "NotExportable") from None
        return data
