"""The table's local HTTP API (FastAPI; OpenAPI at /openapi.json, docs at /docs).

The table controller opens rounds, takes wagers until "no more bets", enters decisions,
exposures, counts and supervisor confirmations, sets the jackpot pool, and follows the
table on a server-sent event stream. Every request and the stream need the table's
bearer token: the stream carries card values that are secret until exposed.

Handlers only translate HTTP to calls of `TableControl` / `Daemon` and back; they never
touch the serial port or write to SQLite. A refused input answers 4xx with
`{"detail": {"field", "message", "error", "rule"?}}`; nothing accepted before is lost.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Annotated, Any, AsyncIterator, Callable, Iterable, Literal, Mapping

from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from cardshoe import rounds
from cardshoe.cards import CardError, parse_card
from cardshoe.daemon.bus import Published, sse_format, streamable
from cardshoe.daemon.control import Done, Refused, TableControl
from cardshoe.daemon.daemon import Daemon
from cardshoe.daemon.service import ServiceFailed
from cardshoe.journal import JournalReader
from cardshoe.journal.store import canonical_json
from cardshoe.protocol.messages import ManifestEntry

from .auth import Guard, Principal
from .limits import BodyLimits
from .page import mount_page
from .pitview import hand_classes, hidden_texts_of, public_of, scrub

# -- request bodies -------------------------------------------------------------------
_STRICT = ConfigDict(extra="forbid", strict=True)


class WagerIn(BaseModel):
    model_config = _STRICT
    seat: int = Field(ge=1, le=7, description="playing position, 1..7 from the dealer's left")
    wager: str = Field(max_length=40,
                       description="wager name: ante, play, pair_plus, six_card_bonus, progressive, bet, one, two, dollar")
    amount: int = Field(ge=0, description="minor units; 0 withdraws (change only)")


class AmountIn(BaseModel):
    model_config = _STRICT
    amount: int = Field(ge=0, description="minor units; 0 withdraws")


class ProgressiveIn(BaseModel):
    model_config = _STRICT
    magic_card: str | None = Field(None, max_length=8, description='Let It Ride Magic Card, e.g. "As"')
    lucky_seat: int | None = Field(None, ge=1, le=7)
    draw: bool = Field(False, description="draw both with a cryptographic source (when configured)")


class DecisionIn(BaseModel):
    model_config = _STRICT
    seat: int = Field(ge=1, le=7)
    choice: str = Field(max_length=40,
                        description="play, fold, bet, pull_1, ride_1, pull_2, ride_2, decline_comparison")


class SeatIn(BaseModel):
    model_config = _STRICT
    seat: int = Field(ge=1, le=7)


class PlaceIn(BaseModel):
    model_config = _STRICT
    kind: Literal["seat", "dealer", "community", "burn", "security", "discard"]
    seat: int = Field(0, ge=0, le=7)
    number: int = Field(ge=1)


class ExposureIn(BaseModel):
    model_config = _STRICT
    place: PlaceIn | None = None
    shoe_index: int | None = Field(None, ge=1)


class PositionIn(BaseModel):
    model_config = _STRICT
    kind: Literal["seat", "dealer", "community", "discard"]
    seat: int = Field(0, ge=0, le=7)


class CountIn(BaseModel):
    model_config = _STRICT
    flag: int = Field(ge=1)
    position: PositionIn
    count: int = Field(ge=0, le=60)
    reporter: str = Field(min_length=1, max_length=80)


class ConfirmIn(BaseModel):
    model_config = _STRICT
    flag: int = Field(ge=1)
    confirmed: bool
    supervisor: str = Field(min_length=1, max_length=80)
    # Which of a proposed placement's candidates (1-based) the supervisor confirms; required
    # when the flag offers more than one (a manual-device slip, 5.7/5.2).
    candidate: int | None = Field(default=None, ge=1)


class VoidIn(BaseModel):
    model_config = _STRICT
    rule: str = Field(min_length=1, max_length=20)
    reason: str = Field(min_length=1, max_length=200)
    by: str = Field(min_length=1, max_length=80)


class SettleIn(BaseModel):
    model_config = _STRICT
    jackpot_pool: int | None = Field(None, ge=0, description="minor units; default: the pool last set")


class ManifestCardIn(BaseModel):
    model_config = _STRICT
    card: str = Field(max_length=8, description='card text, e.g. "Td"')
    uid: str = Field(pattern=r"^([0-9a-fA-F]{8}|[0-9a-fA-F]{14}|[0-9a-fA-F]{20})$", description="tag UID, hex")


class LoadShoeIn(BaseModel):
    model_config = _STRICT
    deck_id: int = Field(ge=0, le=0xFFFFFFFF)
    shoe: int | None = Field(None, ge=0, le=0xFFFFFFFF, description="shoe serial; default the shoe on the link")
    manifest: list[ManifestCardIn] | None = Field(None, max_length=52, description="RFID decks: 52 cards and UIDs; omit for barcode decks")


class ClearIn(BaseModel):
    model_config = _STRICT
    integrity_mask: int = Field(ge=0, le=0xFFFF)
    fault_mask: int = Field(ge=0, le=0xFFFF)
    shoe: int | None = Field(None, ge=0, le=0xFFFFFFFF)


class MaintenanceIn(BaseModel):
    model_config = _STRICT
    supervisor: str = Field(min_length=1, max_length=80)
    reason: str = Field(min_length=1, max_length=200)
    shoe: int | None = Field(None, ge=0, le=0xFFFFFFFF, description="shoe serial; default the shoe on the link")


# Path parameters are bounded too: a refused request's round id and wager name are journaled.
RoundId = Annotated[str, Path(max_length=64)]
WagerName = Annotated[str, Path(max_length=40)]


_BEARER = HTTPBearer(auto_error=False, description="the table's token")


def _done(done: Done) -> dict[str, Any]:
    out: dict[str, Any] = {"round_id": done.round_id, "events": done.events}
    if done.settlement is not None:
        out["settlement"] = done.settlement
    return out


def _journal_refusal(daemon: Daemon, body: Mapping[str, object]) -> None:
    """Journal an API refusal (a `reject` entry, reason `api_refused`); never the token."""
    if daemon.service is not None:
        daemon.service.record("reject", dict(body))


def create_app(daemon: Daemon, token: str, *, role_tokens: Mapping[str, Iterable[str]] | None = None,
               stopping: Callable[[], bool] = lambda: False) -> FastAPI:
    """The API app for a started `daemon`, guarded by `token` (all roles) and `role_tokens`
    (token -> roles: controller, supervisor, surveillance; see `cardshoe.api.auth`).

    `stopping()` turns true when the server is shutting down; open event streams then end
    within a second, so a graceful stop does not wait on them."""
    if len(token) < 16:
        raise ValueError("token: at least 16 characters")
    app = FastAPI(
        title="cardshoe table API",
        version="1",
        # /docs is served from the installed fastapi-offline package's files, not a CDN (page.py).
        docs_url=None, redoc_url=None,
        description="The table controller's interface to the cardshoe daemon: rounds, wagers, decisions, "
                    "irregularities, settlement, and the event stream. Every call needs the table's bearer token.",
    )
    guard = Guard.from_tokens(token, role_tokens, journal_refusal=lambda body: _journal_refusal(daemon, body))

    def need(role: str | None, *, face_down: bool = False) -> Callable[..., Principal]:
        # The bearer scheme stays a declared dependency so the OpenAPI description shows it.
        def dependency(request: Request,
                       _creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]) -> Principal:
            who = guard.check(request, role)
            if face_down and not who.sees_face_down:
                raise guard.refuse(request, 403, "role", "this shows face-down cards: controller or surveillance",
                                   "Forbidden", who)
            return who
        return dependency

    controller = [Depends(need("controller"))]
    supervisor = [Depends(need("supervisor"))]
    reader = [Depends(need(None))]
    sees_all = [Depends(need(None, face_down=True))]
    # (Defaults, not Annotated aliases: these annotations are strings resolved in the
    # module's globals, where names local to create_app are not.)
    read_dep = Depends(need(None))
    view_q = Query(None, description="pit: only what is public at the table (a supervisor always gets it)")

    def _pit(who: Principal, view: str | None) -> bool:
        return view == "pit" or not who.sees_face_down

    def face_up_places(round_id: str) -> set[tuple[str, int, int]]:
        svc = control().service
        with svc.lock:
            rnd = svc.core.rounds.get(round_id)
            procedure = None if rnd is None else rnd.procedure
            if procedure is None:
                return set()
            return {(p.kind.value, p.seat, p.number) for p in procedure.public_places}

    def pit_round(snapshot: dict[str, Any]) -> dict[str, Any]:
        public = public_of(snapshot, face_up_places(str(snapshot["round_id"])))
        out: dict[str, Any] = scrub(snapshot, public, hidden_texts=hidden_texts_of(snapshot, public))
        out["view"] = "pit"
        return out

    def pit_event(item: Published) -> Published:
        """The event as the pit may see it: face-down card values of its round removed."""
        if item.kind not in ("event", "settlement") or item.round_id is None:
            return item
        try:
            snapshot = control().round_snapshot(item.round_id)
        except Refused:
            return item if item.kind == "settlement" else replace(item, body=canonical_json({"type": item.type}))
        public = public_of(snapshot, face_up_places(item.round_id))
        if public.all:
            return item
        body = scrub(json.loads(item.body), public, hidden_texts=hidden_texts_of(snapshot, public))
        return replace(item, body=canonical_json(body))

    # Body size and strict JSON (duplicate keys, NaN, Infinity, 1e999, lengths) before FastAPI
    # reads a body: a 413 or 422 naming the field, never a 500 (docs/api.md, "Limits").
    app.add_middleware(BodyLimits, token=token, authorised=guard.authorised_headers)
    mount_page(app, guard)

    def control() -> TableControl:
        if daemon.control is None:
            raise HTTPException(503, {"field": "daemon", "message": "not started", "error": "NotReady"})
        return daemon.control

    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        return JSONResponse({"detail": exc.to_json()}, status_code=exc.status)

    @app.exception_handler(ServiceFailed)
    async def failed(_: Request, exc: ServiceFailed) -> JSONResponse:
        return JSONResponse({"detail": {"field": "journal", "message": str(exc), "error": "ServiceFailed"}},
                            status_code=503)

    @app.get("/status", dependencies=reader, tags=["table"])
    def status() -> dict[str, Any]:
        """The daemon: link state, counters (rejected frames by reason), round in play."""
        result: dict[str, Any] = daemon.status()
        return result

    @app.post("/rounds", dependencies=controller, tags=["round"], status_code=201)
    def open_round() -> dict[str, Any]:
        """Open the next round ("Place your bets, please")."""
        return _done(control().open_round())

    @app.get("/rounds", tags=["round"])
    def list_rounds(limit: int = 200, who: Principal = read_dep) -> dict[str, Any]:
        """The rounds in memory, newest first (at most `limit`): id, status, void."""
        return {"rounds": control().round_list(max(1, min(limit, 1000)))}

    @app.get("/rounds/{round_id}", tags=["round"])
    def get_round(round_id: RoundId, who: Principal = read_dep,
                  view: Literal["pit", "all"] | None = view_q,
                  classes: bool = Query(False, description="add `hand_classes`: each complete hand's class "
                                                           "(as far as its cards are shown to this reader)")
                  ) -> dict[str, Any]:
        """The round's state: wagers, cards by place, hands, flags, decisions, settlement.

        The pit view (a supervisor's token or session, or `?view=pit`) leaves out the value
        of every card still face down (docs/api.md, "Roles")."""
        snapshot: dict[str, Any] = control().round_snapshot(round_id)
        if _pit(who, view):
            snapshot = pit_round(snapshot)
        if classes:
            snapshot["hand_classes"] = hand_classes(snapshot)
        return snapshot

    @app.get("/rounds/{round_id}/export", dependencies=sees_all, tags=["round"])
    def export_round(round_id: RoundId) -> dict[str, Any]:
        """The round in the round-file format of `cardshoe settle` (docs/round-format.md)."""
        exported: dict[str, Any] = control().round_export(round_id)
        return exported

    @app.get("/rounds/{round_id}/evidence", tags=["round"])
    def round_evidence(round_id: RoundId, request: Request, who: Principal = read_dep) -> dict[str, Any]:
        """The round's evidence file, signed by the table (docs/api.md, "Evidence"): for the
        supervisor and surveillance; made on request and journaled (`evidence_exported`)."""
        from cardshoe.evidence import EvidenceError
        from cardshoe.keys import KeyStoreError

        if not who.roles & {"supervisor", "surveillance"}:
            raise guard.refuse(request, 403, "role", "evidence is for the supervisor or surveillance", "Forbidden", who)
        try:
            doc = daemon.make_evidence(round_id, "request")
        except EvidenceError as exc:
            status = 404 if "no round" in str(exc) else 409
            raise Refused(status, "round_id", str(exc).removeprefix("round: "), "EvidenceError") from None
        except KeyStoreError as exc:
            raise Refused(500, "evidence.key", str(exc), "KeyStoreError") from None
        if daemon.service is not None:
            daemon.service.record("daemon", {"type": "evidence_exported", "round_id": round_id,
                                             "roles": sorted(who.roles), "via": who.via})
        return doc

    @app.get("/evidence/public-key", dependencies=reader, tags=["table"])
    def evidence_public_key() -> dict[str, Any]:
        """The table's Ed25519 public key, which its evidence files are signed with."""
        from cardshoe.keys import KeyStoreError

        try:
            key = daemon.table_public_key()
        except KeyStoreError as exc:
            raise Refused(500, "evidence.key", str(exc), "KeyStoreError") from None
        return {"algorithm": "Ed25519", "public_key": key.hex(), "table": daemon.config.name}

    @app.post("/rounds/{round_id}/wagers", dependencies=controller, tags=["round"])
    def place_wager(round_id: RoundId, body: WagerIn) -> dict[str, Any]:
        """Place a wager before "no more bets"."""
        return _done(control().place_wager(round_id, body.seat, body.wager, body.amount))

    @app.put("/rounds/{round_id}/wagers/{seat}/{wager}", dependencies=controller, tags=["round"])
    def change_wager(round_id: RoundId, seat: int, wager: WagerName, body: AmountIn) -> dict[str, Any]:
        """Change (0 withdraws) a wager; refused after "no more bets" (rules 5.5-5.6)."""
        return _done(control().change_wager(round_id, seat, wager, body.amount))

    @app.post("/rounds/{round_id}/progressive", dependencies=controller, tags=["round"])
    def progressive(round_id: RoundId, body: ProgressiveIn) -> dict[str, Any]:
        """Let It Ride Magic Card and Lucky Player, given or drawn; journaled before the first card."""
        ctl = control()
        if body.draw:
            if body.magic_card is not None or body.lucky_seat is not None:
                raise Refused(422, "draw", "either draw or give magic_card/lucky_seat, not both", "ValueError")
            return _done(ctl.draw_progressive(round_id, daemon.config.seats))
        magic = None
        if body.magic_card is not None:
            try:
                magic = parse_card(body.magic_card)
            except CardError as exc:
                raise Refused(422, "magic_card", str(exc), "CardError") from None
        return _done(ctl.progressive_selection(round_id, magic, body.lucky_seat))

    @app.post("/rounds/{round_id}/no-more-bets", dependencies=controller, tags=["round"])
    def no_more_bets(round_id: RoundId) -> dict[str, Any]:
        """"No more bets": wagers close, the active seats fix the dealing procedure."""
        return _done(control().no_more_bets(round_id))

    @app.post("/rounds/{round_id}/deal-complete", dependencies=controller, tags=["round"])
    def deal_complete(round_id: RoundId) -> dict[str, Any]:
        """The deal-complete count point from the table (instead of the shoe's key)."""
        return _done(control().deal_complete(round_id))

    @app.post("/rounds/{round_id}/decisions", dependencies=controller, tags=["round"])
    def decision(round_id: RoundId, body: DecisionIn) -> dict[str, Any]:
        """A player's decision."""
        return _done(control().decision(round_id, body.seat, body.choice))

    @app.post("/rounds/{round_id}/absent", dependencies=controller, tags=["round"])
    def absent(round_id: RoundId, body: SeatIn) -> dict[str, Any]:
        """The player of a seat is absent for the decision (rule 5.11)."""
        return _done(control().player_absent(round_id, body.seat))

    @app.post("/rounds/{round_id}/exposures", dependencies=controller, tags=["irregularities"])
    def exposure(round_id: RoundId, body: ExposureIn) -> dict[str, Any]:
        """An exposed card seen at the table (5.4: two or more in the deal void the round; one: 6.1)."""
        place = None
        if body.place is not None:
            try:
                place = rounds.Place(rounds.PlaceKind(body.place.kind), body.place.seat, body.place.number)
            except ValueError as exc:
                raise Refused(422, "place", str(exc), "ValueError") from None
        return _done(control().exposure(round_id, place, body.shoe_index))

    @app.post("/rounds/{round_id}/counts", dependencies=controller, tags=["irregularities"])
    def count(round_id: RoundId, body: CountIn) -> dict[str, Any]:
        """A person's count of a position's cards for an open count flag (5.2, 5.3, 5.7)."""
        try:
            position = rounds.Position(rounds.PlaceKind(body.position.kind), body.position.seat)
        except ValueError as exc:
            raise Refused(422, "position", str(exc), "ValueError") from None
        return _done(control().hand_count(round_id, body.flag, position, body.count, body.reporter))

    @app.post("/rounds/{round_id}/confirmations", dependencies=supervisor, tags=["irregularities"])
    def confirm(round_id: RoundId, body: ConfirmIn) -> dict[str, Any]:
        """A supervisor confirms (or rejects) a proposed reconstruction or a referral."""
        return _done(control().confirm(round_id, body.flag, body.confirmed, body.supervisor, body.candidate))

    @app.post("/rounds/{round_id}/void", dependencies=supervisor, tags=["irregularities"])
    def void(round_id: RoundId, body: VoidIn) -> dict[str, Any]:
        """A supervisor voids the round, citing the rule."""
        return _done(control().void(round_id, body.rule, body.reason, body.by))

    @app.post("/rounds/{round_id}/settle", dependencies=controller, tags=["round"])
    def settle(round_id: RoundId, body: SettleIn | None = None) -> dict[str, Any]:
        """Close the round and settle every wager; the settlement cites the rule of each payment."""
        return _done(control().settle(round_id, None if body is None else body.jackpot_pool))

    @app.put("/jackpot", dependencies=controller, tags=["table"])
    def jackpot(body: AmountIn) -> dict[str, Any]:
        """The progressive pool as displayed (minor units), used by the next settlements."""
        return _done(control().set_jackpot_pool(body.amount))

    @app.post("/shoe/load", dependencies=controller, tags=["shoe"], status_code=202)
    def load_shoe(body: LoadShoeIn) -> dict[str, Any]:
        """Start a new shoe session on the shoe (NEW_SHOE; an RFID manifest is sent in parts)."""
        manifest = None
        if body.manifest is not None:
            manifest = []
            for i, item in enumerate(body.manifest):
                try:
                    manifest.append(ManifestEntry(parse_card(item.card), bytes.fromhex(item.uid)))
                except CardError as exc:
                    raise Refused(422, f"manifest[{i}].card", str(exc), "CardError") from None
            if len(manifest) != 52 or len({m.code for m in manifest}) != 52 or len({m.uid for m in manifest}) != 52:
                raise Refused(422, "manifest", "an RFID manifest lists 52 different cards with 52 different UIDs",
                              "ValueError")
        try:
            shoe_no = daemon.load_shoe(body.deck_id, manifest, body.shoe)
        except LookupError as exc:
            raise Refused(409, "shoe", str(exc), "LookupError") from None
        return {"shoe_no": shoe_no}

    @app.post("/shoe/clear", dependencies=supervisor, tags=["shoe"], status_code=202)
    def clear(body: ClearIn) -> dict[str, Any]:
        """A supervisor clears integrity bits and faults on the shoe (CLEAR)."""
        try:
            daemon.clear(body.integrity_mask, body.fault_mask, body.shoe)
        except LookupError as exc:
            raise Refused(409, "shoe", str(exc), "LookupError") from None
        return {"sent": True}

    @app.post("/shoe/maintenance", dependencies=supervisor, tags=["shoe"], status_code=202)
    def maintenance(body: MaintenanceIn) -> dict[str, Any]:
        """A supervisor puts the shoe into maintenance (MAINTENANCE, journaled with who and
        why): it stops streaming and waits at the REPL for `cardshoe flash`."""
        try:
            serial, seq = daemon.maintenance(body.supervisor, body.reason, body.shoe)
        except LookupError as exc:
            raise Refused(409, "shoe", str(exc), "LookupError") from None
        return {"sent": True, "shoe": serial, "seq": seq}

    @app.get("/events", tags=["events"], response_class=StreamingResponse)
    async def events(
        request: Request,
        who: Principal = read_dep,
        view: Literal["pit", "all"] | None = view_q,
        last_event_id: Annotated[int | None, Header(alias="Last-Event-ID")] = None,
        after: int | None = None,
        limit: int | None = None,
    ) -> StreamingResponse:
        """Server-sent events: cards as placed, hands complete, flags, settlements, link losses.

        Reconnect with `Last-Event-ID` (or `?after=ID`) to get what was missed from the journal
        first. `?limit=N` ends the stream after N events (for scripts and tests)."""
        start = last_event_id if last_event_id is not None else after
        pit = _pit(who, view)
        loop = asyncio.get_running_loop()
        sub = daemon.bus.subscribe(loop)

        async def stream() -> AsyncIterator[str]:
            sent = 0
            last = start if start is not None else -1
            try:
                if start is not None:
                    reader = JournalReader(daemon.config.journal)
                    try:
                        # Paged from the journal as sent (never the whole backlog first):
                        # the first event comes at once whatever the backlog (issue 15).
                        for entry in reader.entries(("event", "settlement", "link", "daemon", "reject", "command"),
                                                    after_id=start):
                            if not streamable(entry.kind, entry.data()):
                                continue
                            item = Published.from_entry(entry)
                            yield sse_format(pit_event(item) if pit else item)
                            last = item.id
                            sent += 1
                            if limit is not None and sent >= limit:
                                return
                    finally:
                        reader.close()
                yield ": connected\n\n"
                idle = 0
                while True:
                    if stopping() or await request.is_disconnected():
                        return
                    try:
                        item = await asyncio.wait_for(sub.queue.get(), timeout=1)
                    except asyncio.TimeoutError:
                        idle += 1
                        if idle >= 15:
                            idle = 0
                            yield ": keep-alive\n\n"
                        continue
                    idle = 0
                    if item.kind == "overflow":
                        yield sse_format(item)
                        return
                    if item.id <= last:
                        continue  # already sent from the journal backlog
                    last = item.id
                    yield sse_format(pit_event(item) if pit else item)
                    sent += 1
                    if limit is not None and sent >= limit:
                        return
            finally:
                sub.close()

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return app
