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
import threading
from dataclasses import replace
from typing import Annotated, Any, AsyncIterator, Callable, Iterable, Literal, Mapping

from fastapi import Body, Depends, FastAPI, Header, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from cardshoe import rounds
from cardshoe.cards import parse_card
from cardshoe.daemon.bus import Published, sse_format, streamable
from cardshoe.daemon.control import Done, Refused, TableControl
from cardshoe.daemon.daemon import Daemon
from cardshoe.daemon.service import ServiceFailed
from cardshoe.journal import JournalReader
from cardshoe.journal.store import canonical_json
from cardshoe.protocol.messages import ManifestEntry

from . import models as m
from .auth import Guard, Principal
from .cardtext import CARD_EVENTS, event_text, round_text, settlement_of
from .limits import BodyLimits
from .page import mount_page
from . import pitview
from .pitview import NOTHING, Public, hand_classes, pit_body, public_of, scrub
from .tableview import currency_of, layout_of, seat_state
from .watch import JournalWatch

# Path parameters are bounded too: a refused request's round id and wager name are journaled.
RoundId = Annotated[str, Path(min_length=1, max_length=64, description='the round, e.g. "T07-3f9c0a1b-000001"',
                              examples=["T07-3f9c0a1b-000001"])]
SeatPath = Annotated[int, Path(ge=1, le=7, description="playing position, 1..7 from the dealer's left")]
WagerPath = Annotated[m.Wager, Path(description="the wager")]

_STATUS_TEXT = {
    401: "no token, or not a token of this table (field `Authorization`)",
    403: "the token lacks the role (`Forbidden`, field `role`), or a cross-site write from a browser "
         "(`CrossSite`)",
    404: "no such round (field `round_id`) or flag (field `flag`)",
    409: "well-formed, but the table refuses it now: the round's state, the game's or the table's rules "
         "or settings; `error` names the refusal and `rule` the rule",
    413: "the body is over 64 KiB (field `body`)",
    422: "the request does not match this description: `ValidationError` (with `errors`) or "
         "`JSONInputError` (a duplicate key, NaN, a number or string over the limits)",
    500: "accepted and journaled, but the daemon could not finish it (`rule` 6.1): refer to the shift manager",
    503: "the journal has failed (`ServiceFailed`) or the daemon is not started (`NotReady`)",
}


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI `responses` of an endpoint's error answers, all in the form `ErrorBody`."""
    return {code: {"model": m.ErrorBody, "description": _STATUS_TEXT[code]} for code in codes}


#: The error answers by kind of endpoint. Every endpoint may answer 422 (a query parameter it
#: does not take) and every write 413 (the body limits come before the endpoint).
_READ = (401, 403, 422, 503)
_READ_ROUND = (401, 403, 404, 422, 503)
_WRITE = (401, 403, 409, 413, 422, 500, 503)
_WRITE_ROUND = (401, 403, 404, 409, 413, 422, 500, 503)


class EventStream(StreamingResponse):
    """The server-sent event stream's response (declared `text/event-stream`)."""

    media_type = "text/event-stream"


_BEARER = HTTPBearer(auto_error=False, description="the table's token")


def _done(done: Done) -> dict[str, Any]:
    """An accepted input's answer: events and settlement with cards as text, the settlement itself
    (not its journal entry) at `settlement`."""
    out: dict[str, Any] = {"round_id": done.round_id, "events": [event_text(e) for e in done.events]}
    if done.settlement is not None:
        out["settlement"] = settlement_of(done.settlement)
    return out


#: The error type of Starlette's own answers (an unknown path, a method the path lacks).
_HTTP_ERROR = {404: "NotFound", 405: "MethodNotAllowed"}


def _query_params(dependant: Any) -> list[Any]:
    """Every query parameter an endpoint takes, its dependencies' included."""
    out = list(dependant.query_params)
    for sub in dependant.dependencies:
        out += _query_params(sub)
    return out


def _field_of(loc: Iterable[Any]) -> str:
    """The field a schema error is about: its location without `body`/`query`/`path`/`header`."""
    # A union body's errors name the member model ("ProgressiveGivenIn"): not a field.
    parts = [str(p) for p in loc if not str(p)[:1].isupper()]
    if len(parts) > 1 and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts) or "body"


def _unnamed(item: Published) -> str:
    """A server-sent event without its `event:` line: delivered to `onmessage` whatever its type."""
    return "".join(line for line in sse_format(item).splitlines(keepends=True) if not line.startswith("event: "))


def _pit_referral(referral: dict[str, Any]) -> dict[str, Any]:
    """A referral as the pit sees it (reading 79): through the pit view's one filter with
    nothing public (a card out of the shoe between rounds or after a void may lie face down;
    the cards a deck fault names as never dealt may be in a hand), its entry id and time kept."""
    out = pit_body({k: v for k, v in referral.items() if k not in ("id", "t_ns")}, NOTHING)
    out.update({k: referral[k] for k in ("id", "t_ns") if k in referral})
    return out


def _journal_refusal(daemon: Daemon, body: Mapping[str, object]) -> None:
    """Journal an API refusal (a `reject` entry, reason `api_refused`); never the token."""
    if daemon.service is not None:
        daemon.service.record("reject", dict(body))


def create_app(daemon: Daemon, token: str | None, *, role_tokens: Mapping[str, Iterable[str]] | None = None,
               stopping: Callable[[], bool] = lambda: False) -> FastAPI:
    """The API app for a started `daemon`, guarded by `token` (all roles; None for a table with
    per-role tokens only) and `role_tokens` (token -> roles: controller, supervisor,
    surveillance; see `cardshoe.api.auth`).

    `stopping()` turns true when the server is shutting down; open event streams then end
    within a second, so a graceful stop does not wait on them."""
    if token is not None and len(token) < 16:
        raise ValueError("token: at least 16 characters")
    app = FastAPI(
        title="cardshoe table API",
        version="1",
        # /docs is served from the installed fastapi-offline package's files, not a CDN, and it
        # and /openapi.json need a token like every endpoint (page.py; docs/api.md).
        docs_url=None, redoc_url=None, openapi_url=None,
        description="The table controller's interface to the cardshoe daemon: rounds, wagers, decisions, "
                    "irregularities, settlement, and the event stream. Every call needs the table's bearer token.",
    )
    def no_unknown_query(request: Request) -> None:
        # A query parameter the endpoint does not take is refused, not ignored: `?veiw=pit`
        # would otherwise quietly show what the caller did not ask for.
        route = request.scope.get("route")
        dependant = getattr(route, "dependant", None)
        if dependant is None or not request.query_params:
            return
        known = {p.alias for p in _query_params(dependant)}
        for name in request.query_params:
            if name not in known:
                raise Refused(422, name[:40], f"unknown query parameter (this endpoint takes: "
                              f"{', '.join(sorted(known)) or 'none'})", "ValidationError")

    app.router.dependencies.append(Depends(no_unknown_query))
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
            found = svc.find_round(round_id)
            procedure = None if found is None else found[1].procedure
            if procedure is None:
                return set()
            return {(p.kind.value, p.seat, p.number) for p in procedure.public_places}

    def pit_round(snapshot: dict[str, Any]) -> dict[str, Any]:
        public = public_of(snapshot, face_up_places(str(snapshot["round_id"])))
        out = pitview.pit_round(snapshot, public)
        out["view"] = "pit"
        return out

    def public_now(round_id: str | None) -> Public:
        """What of round `round_id` is public now (nothing of no round, or of one no longer
        in memory)."""
        if round_id is None:
            return NOTHING
        try:
            snapshot = control().round_snapshot(round_id)
        except Refused:
            return NOTHING
        return public_of(snapshot, face_up_places(round_id))

    def pit_event(item: Published, publics: dict[str | None, tuple[int, Public]]) -> Published:
        """The event as the pit may see it: every kind, every field through the pit view's
        one filter (`cardshoe.api.pitview.pit_body`): nothing face down, whatever the kind.

        `publics` is the stream's memo of what each round shows, kept while nothing new has
        been published (a round changes only with events; a memo a little old shows less,
        never more: what is public only grows)."""
        if item.kind == "overflow":
            return item
        body = json.loads(item.body)
        if not isinstance(body, dict):
            return replace(item, body=canonical_json({"type": item.type, pitview.WITHHELD: ["body"]}))
        version = daemon.bus.published
        memo = publics.get(item.round_id)
        if memo is None or memo[0] != version:
            memo = publics[item.round_id] = (version, public_now(item.round_id))
        return replace(item, body=canonical_json(pit_body(body, memo[1])))

    def shown(item: Published, pit: dict[str | None, tuple[int, Public]] | None) -> Published:
        """The event as this reader sees it: face-down cards left out (`pit`: the pit view,
        with its memo), cards as text. Only events that carry cards are re-encoded; the rest
        go out as journaled."""
        if pit is not None:
            item = pit_event(item, pit)
        if item.type not in CARD_EVENTS:
            return item
        return replace(item, body=canonical_json(event_text(json.loads(item.body))))

    # Body size and strict JSON (duplicate keys, NaN, Infinity, 1e999, lengths) before FastAPI
    # reads a body: a 413 or 422 naming the field, never a 500 (docs/api.md, "Limits").
    app.add_middleware(BodyLimits, token=token, authorised=guard.authorised_headers)
    mount_page(app, guard)

    def control() -> TableControl:
        if daemon.control is None:
            raise HTTPException(503, {"field": "daemon", "message": "not started", "error": "NotReady"})
        return daemon.control

    watches: dict[str, JournalWatch] = {}
    ack_lock = threading.Lock()

    def close_watches() -> None:
        for w in watches.values():
            w.close()
        watches.clear()

    app.router.on_shutdown.append(close_watches)

    def watch() -> JournalWatch:
        """The journal's integrity reports, open referrals and refusals (cardshoe.api.watch)."""
        control()  # the daemon is started: its journal exists
        key = str(daemon.config.journal)
        if key not in watches:
            for old in watches.values():
                old.close()
            watches.clear()
            watches[key] = JournalWatch(daemon.config.journal)
        return watches[key]

    cfg = daemon.config
    layout = layout_of(cfg.game, cfg.dealing, cfg.method, cfg.seats)
    currency = currency_of(cfg.game)

    def table_extras(status: dict[str, Any], pit: bool) -> dict[str, Any]:
        """What the table page reads beside the daemon's status (docs/api.md, `GET /status`)."""
        w = watch()
        referrals = w.open_referrals()
        integrity = w.shoe_integrity()
        svc = control().service
        with svc.lock:
            pool, reset = svc.core.jackpot_pool, svc.core.setup.jackpot_reset
        for serial, shoe in (status.get("shoes") or {}).items():
            shoe["integrity"] = integrity.get(int(serial))
        if pit:
            referrals = [_pit_referral(r) for r in referrals]
        return {"journal": {"id": w.journal_id, "file": daemon.config.journal.name, "last_entry": w.last_id},
                "jackpot": {"pool": pool, "reset": reset}, "currency": currency, "layout": layout,
                "referrals": referrals}

    def round_extras(round_id: str) -> dict[str, Any]:
        """A round's seats as they stand, who owes a decision, and its refused inputs."""
        svc = control().service
        with svc.lock:
            found = svc.find_round(round_id)
            if found is None:
                return {}
            rnd = found[1]
            out: dict[str, Any] = {"seat_state": seat_state(rnd), "owing": rnd.owing_decisions()}
        out["refusals"] = watch().round_refusals(round_id)
        return out

    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        return JSONResponse({"detail": exc.to_json()}, status_code=exc.status)

    @app.exception_handler(ServiceFailed)
    async def failed(_: Request, exc: ServiceFailed) -> JSONResponse:
        return JSONResponse({"detail": {"field": "journal", "message": str(exc), "error": "ServiceFailed"}},
                            status_code=503)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        # One error form for every answer (ErrorBody), FastAPI's list kept in `errors`.
        errors = [{"loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())],
                   "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))} for e in exc.errors()]
        first = errors[0] if errors else {"loc": ["body"], "msg": "invalid request", "type": ""}
        return JSONResponse({"detail": {"field": _field_of(first["loc"]), "message": str(first["msg"]),
                                        "error": "ValidationError", "errors": errors}}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail: Any = exc.detail
        if not isinstance(detail, dict):  # Starlette's own 404/405: a string
            detail = {"field": "path", "message": str(detail), "error": _HTTP_ERROR.get(exc.status_code, "HTTPError")}
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)

    @app.get("/status", tags=["table"], response_model=m.Status, responses=_errors(*_READ))
    def status(who: Principal = read_dep, view: Literal["pit", "all"] | None = view_q) -> dict[str, Any]:
        """The daemon: link state, counters (rejected frames by reason), round in play, alarms;
        for the table page the journal, the jackpot pool, the currency, the layout of the
        game's positions, each shoe's integrity and the referrals outside a round still open."""
        result: dict[str, Any] = daemon.status()
        pit = _pit(who, view)
        result.update(table_extras(result, pit))
        if pit:  # referrals went through the pit view's filter in table_extras
            public = public_now(result.get("current_round"))
            alarms = [pit_body(a, public) for a in result.get("alarms") or []]
            referrals = result.get("referrals") or []
            # The page's table facts (journal, pool, currency, layout) hold no card: not walked
            # (the walk would take the currency's `code` for a card's).
            plain: dict[str, Any] = {k: result[k] for k in ("journal", "jackpot", "currency", "layout") if k in result}
            result = scrub({k: v for k, v in result.items() if k not in ("alarms", "referrals", *plain)}, public)
            result.update(plain, alarms=alarms, referrals=referrals)
        return result

    @app.post("/referrals/{entry_id}/acknowledge", dependencies=supervisor, tags=["irregularities"],
              response_model=m.ReferralAcknowledged, responses=_errors(401, 403, 404, 409, 413, 422, 503))
    def acknowledge_referral(body: m.AcknowledgeIn,
                             entry_id: int = Path(ge=1, le=m.MAX_COUNTER * 1000,
                                                  description="the referral's journal entry (its event id)")
                             ) -> dict[str, Any]:
        """A supervisor has seen a referral outside a round (a key pressed or a deck fault
        reported with no round in play, a card out of the shoe between rounds; rule 6.1) and
        referred it to the shift manager: journaled (`referral_acknowledged`, with who), and
        it leaves `/status` `referrals`. Nothing else changes."""
        svc = control().service
        with ack_lock:
            w = watch()
            referral = w.referral(entry_id)
            if referral is None:
                raise Refused(404, "entry_id", f"entry {entry_id} is not a referral outside a round", "NotFound")
            done = w.acknowledged.get(entry_id)
            if done is not None:
                raise Refused(409, "entry_id", f"referral {entry_id} was already acknowledged by {done['by']}",
                              "AlreadyAcknowledged")
            svc.record("daemon", {"type": "referral_acknowledged", "entry": entry_id,
                                  "referral": referral.get("type"), "rules": referral.get("rules"),
                                  "by": body.by, "note": body.note}, publish=True)
            if svc.failed is not None:
                raise ServiceFailed(str(svc.failed))
            w.scan()
        return {"acknowledged": entry_id, "by": body.by}

    @app.post("/rounds", dependencies=controller, tags=["round"], status_code=201, response_model=m.Opened,
              responses=_errors(401, 403, 409, 413, 422, 500, 503))
    def open_round() -> dict[str, Any]:
        """Open the next round ("Place your bets, please"). 409 while a round is still in play."""
        return _done(control().open_round())

    @app.get("/rounds", tags=["round"], response_model=m.RoundList, responses=_errors(401, 403, 422, 503))
    def list_rounds(limit: int = Query(200, ge=1, le=1000, description="at most this many, newest first"),
                    who: Principal = read_dep, view: Literal["pit", "all"] | None = view_q) -> dict[str, Any]:
        """The rounds in memory, newest first (at most `limit`): id, status, void."""
        rounds_ = control().round_list(limit)
        return {"rounds": scrub(rounds_, NOTHING) if _pit(who, view) else rounds_}

    @app.get("/rounds/{round_id}", tags=["round"], response_model=m.Round,
            response_model_exclude_unset=True, responses=_errors(*_READ_ROUND))
    def get_round(round_id: RoundId, who: Principal = read_dep,
                  view: Literal["pit", "all"] | None = view_q,
                  classes: bool = Query(False, description="add `hand_classes`: each complete hand's class "
                                                           "(as far as its cards are shown to this reader)")
                  ) -> dict[str, Any]:
        """The round's state: wagers, cards by place, hands, flags, decisions, settlement.

        Cards are text ("As"). The pit view (a supervisor's token or session, or `?view=pit`)
        leaves out the value of every card still face down: `null` (docs/api.md, "Roles")."""
        snapshot: dict[str, Any] = control().round_snapshot(round_id)
        snapshot.update(round_extras(round_id))
        if _pit(who, view):
            snapshot = pit_round(snapshot)
        if classes:
            snapshot["hand_classes"] = hand_classes(snapshot)
        return round_text(snapshot)

    @app.get("/rounds/{round_id}/export", dependencies=sees_all, tags=["round"],
             responses=_errors(401, 403, 404, 409, 422, 503))
    def export_round(round_id: RoundId) -> dict[str, Any]:
        """The round in the round-file format of `cardshoe settle` (docs/round-format.md).
        409 while an irregularity waits for a person."""
        exported: dict[str, Any] = control().round_export(round_id)
        return exported

    @app.get("/rounds/{round_id}/evidence", tags=["round"], responses=_errors(401, 403, 404, 409, 422, 500, 503))
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
        if not who.sees_face_down:
            # A signed file cannot be shown in part: the pit gets it only if it holds no card
            # that is face down in the pit view (a burn, a void round's cards, a shoe's claim).
            hidden = pitview.evidence_face_down(doc, public_now(round_id))
            if hidden:
                raise guard.refuse(request, 403, "role", f"this round's evidence holds cards never shown at the "
                                   f"table ({', '.join(hidden[:5])}{', ...' if len(hidden) > 5 else ''}): "
                                   "for surveillance", "Forbidden", who)
        if daemon.service is not None:
            daemon.service.record("daemon", {"type": "evidence_exported", "round_id": round_id,
                                             "roles": sorted(who.roles), "via": who.via})
        return doc

    @app.get("/evidence/public-key", dependencies=reader, tags=["table"], responses=_errors(401, 403, 422, 500))
    def evidence_public_key() -> dict[str, Any]:
        """The table's Ed25519 public key, which its evidence files are signed with."""
        from cardshoe.keys import KeyStoreError

        try:
            key = daemon.table_public_key()
        except KeyStoreError as exc:
            raise Refused(500, "evidence.key", str(exc), "KeyStoreError") from None
        return {"algorithm": "Ed25519", "public_key": key.hex(), "table": daemon.config.name}

    @app.post("/rounds/{round_id}/wagers", dependencies=controller, tags=["round"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def place_wager(round_id: RoundId, body: m.WagerIn) -> dict[str, Any]:
        """Place a wager before "no more bets" (after it: 409 `WagersClosedError`, rules 5.5-5.6)."""
        return _done(control().place_wager(round_id, body.seat, body.wager.value, body.amount))

    @app.put("/rounds/{round_id}/wagers/{seat}/{wager}", dependencies=controller, tags=["round"],
             response_model=m.Done, response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def change_wager(round_id: RoundId, seat: SeatPath, wager: WagerPath, body: m.AmountIn) -> dict[str, Any]:
        """Change (0 withdraws) a wager; refused after "no more bets" (409, rules 5.5-5.6)."""
        return _done(control().change_wager(round_id, seat, wager.value, body.amount))

    @app.post("/rounds/{round_id}/progressive", dependencies=controller, tags=["round"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def progressive(round_id: RoundId,
                    body: Annotated[m.ProgressiveGivenIn | m.ProgressiveDrawIn, Body()]) -> dict[str, Any]:
        """Let It Ride Magic Card and Lucky Player, given (`{magic_card, lucky_seat}`) or drawn
        (`{draw: true}`); journaled before the first card."""
        ctl = control()
        if isinstance(body, m.ProgressiveDrawIn):
            return _done(ctl.draw_progressive(round_id, daemon.config.seats))
        magic = None if body.magic_card is None else parse_card(body.magic_card)  # the schema's pattern
        return _done(ctl.progressive_selection(round_id, magic, body.lucky_seat))

    @app.post("/rounds/{round_id}/no-more-bets", dependencies=controller, tags=["round"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def no_more_bets(round_id: RoundId) -> dict[str, Any]:
        """"No more bets": wagers close, the active seats fix the dealing procedure."""
        return _done(control().no_more_bets(round_id))

    @app.post("/rounds/{round_id}/deal-complete", dependencies=controller, tags=["round"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def deal_complete(round_id: RoundId) -> dict[str, Any]:
        """The deal-complete count point from the table (instead of the shoe's key)."""
        return _done(control().deal_complete(round_id))

    @app.post("/rounds/{round_id}/decisions", dependencies=controller, tags=["round"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def decision(round_id: RoundId, body: m.DecisionIn) -> dict[str, Any]:
        """A player's decision (409 `DecisionError` when the game or the seat's turn does not allow it)."""
        return _done(control().decision(round_id, body.seat, body.choice.value))

    @app.post("/rounds/{round_id}/absent", dependencies=controller, tags=["round"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def absent(round_id: RoundId, body: m.SeatIn) -> dict[str, Any]:
        """The player of a seat is absent for the decision (rule 5.11)."""
        return _done(control().player_absent(round_id, body.seat))

    @app.post("/rounds/{round_id}/exposures", dependencies=controller, tags=["irregularities"],
              response_model=m.Done, response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def exposure(round_id: RoundId, body: m.ExposureIn) -> dict[str, Any]:
        """An exposed card seen at the table (5.4: two or more in the deal void the round; one: 6.1)."""
        place = None
        if body.place is not None:
            place = rounds.Place(rounds.PlaceKind(body.place.kind), body.place.seat, body.place.number)
        return _done(control().exposure(round_id, place, body.shoe_index))

    @app.post("/rounds/{round_id}/counts", dependencies=controller, tags=["irregularities"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def count(round_id: RoundId, body: m.CountIn) -> dict[str, Any]:
        """A person's count of a position's cards for an open count flag (5.2, 5.3, 5.7)."""
        position = rounds.Position(rounds.PlaceKind(body.position.kind), body.position.seat)
        return _done(control().hand_count(round_id, body.flag, position, body.count, body.reporter))

    @app.post("/rounds/{round_id}/confirmations", dependencies=supervisor, tags=["irregularities"],
              response_model=m.Done, response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def confirm(round_id: RoundId, body: m.ConfirmIn) -> dict[str, Any]:
        """A supervisor confirms (or rejects) a proposed reconstruction or a referral."""
        return _done(control().confirm(round_id, body.flag, body.confirmed, body.supervisor, body.candidate))

    @app.post("/rounds/{round_id}/void", dependencies=supervisor, tags=["irregularities"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def void(round_id: RoundId, body: m.VoidIn) -> dict[str, Any]:
        """A supervisor voids the round, citing the rule."""
        return _done(control().void(round_id, body.rule, body.reason, body.by))

    @app.post("/rounds/{round_id}/settle", dependencies=controller, tags=["round"], response_model=m.Done,
              response_model_exclude_unset=True, responses=_errors(*_WRITE_ROUND))
    def settle(round_id: RoundId, body: m.SettleIn | None = None) -> dict[str, Any]:
        """Close the round and settle every wager; `settlement` cites the rule of each payment.
        409 before every decision is in, while a flag waits for a person, or before the deal."""
        return _done(control().settle(round_id, None if body is None else body.jackpot_pool))

    # -- who deals, who plays (issue 23 item 1; docs/api.md, "Staff and players") ------------
    #: Who may sign whom on: the dealer's own controller or the pit signs a dealer on or off
    #: (a relief is often entered from the podium); only the pit signs a supervisor.
    sign_roles = {"dealer": frozenset({"controller", "supervisor"}), "supervisor": frozenset({"supervisor"})}

    def may(request: Request, who: Principal, allowed: frozenset[str], what: str) -> None:
        if not who.roles & allowed:
            raise guard.refuse(request, 403, "role", f"{what} needs the {' or '.join(sorted(allowed))} role (you "
                               f"have: {', '.join(sorted(who.roles)) or 'none'})", "Forbidden", who)

    @app.get("/shift", dependencies=reader, tags=["report"], responses=_errors(*_READ))
    def shift() -> dict[str, Any]:
        """The shift's live figures (docs/report.md): pace, hold against the exact theoretical with
        z and band by wager, dealer, seat and player, flags by rule, and the hold alarms standing."""
        if daemon.live is None:
            raise HTTPException(503, {"field": "daemon", "message": "not started", "error": "NotReady"})
        figures: dict[str, Any] = daemon.live.figures()
        figures.pop("series", None)  # per round: for the printed report's charts, not a page refreshed live
        figures["staff"] = control().staff_on()
        return figures

    @app.get("/staff", dependencies=reader, tags=["staff"], response_model=m.StaffOn, responses=_errors(*_READ))
    def staff() -> dict[str, Any]:
        """Who is on at the table: the dealer, the supervisor and the player id of each seat."""
        return control().staff_on()

    @app.post("/staff/sign-on", tags=["staff"], response_model=m.Done, response_model_exclude_unset=True,
              responses=_errors(*_WRITE))
    def sign_on(body: m.SignOnIn, request: Request, who: Principal = read_dep) -> dict[str, Any]:
        """A dealer (controller or supervisor role) or a supervisor (supervisor role) signs on; journaled.
        Rounds are attributed to the dealer on when their bets close."""
        may(request, who, sign_roles[body.role], f"signing a {body.role} on")
        return _done(control().sign_on(body.role, body.staff_id))

    @app.post("/staff/sign-off", tags=["staff"], response_model=m.Done, response_model_exclude_unset=True,
              responses=_errors(*_WRITE))
    def sign_off(body: m.SignOffIn, request: Request, who: Principal = read_dep) -> dict[str, Any]:
        """The dealer or supervisor on signs off (409 when nobody, or somebody else, is on)."""
        may(request, who, sign_roles[body.role], f"signing a {body.role} off")
        return _done(control().sign_off(body.role, body.staff_id))

    @app.put("/seats/{seat}/player", tags=["staff"], response_model=m.Done, response_model_exclude_unset=True,
             responses=_errors(*_WRITE))
    def seat_player(seat: SeatPath, body: m.PlayerIn, request: Request, who: Principal = read_dep) -> dict[str, Any]:
        """The player id (rating card) at a seat (controller or supervisor); the ratings are built from it."""
        may(request, who, sign_roles["dealer"], "a player id")
        return _done(control().seat_player(seat, body.player_id))

    @app.delete("/seats/{seat}/player", tags=["staff"], response_model=m.Done, response_model_exclude_unset=True,
                responses=_errors(*_WRITE))
    def seat_left(seat: SeatPath, request: Request, who: Principal = read_dep) -> dict[str, Any]:
        """The rated player of a seat left (409 when the seat has no player id)."""
        may(request, who, sign_roles["dealer"], "a player id")
        return _done(control().seat_player(seat, None))

    @app.put("/jackpot", dependencies=controller, tags=["table"], response_model=m.Done,
             response_model_exclude_unset=True, responses=_errors(*_WRITE))
    def jackpot(body: m.AmountIn) -> dict[str, Any]:
        """The progressive pool as displayed (minor units), used by the next settlements."""
        return _done(control().set_jackpot_pool(body.amount))

    @app.post("/shoe/load", dependencies=controller, tags=["shoe"], status_code=202, response_model=m.ShoeLoaded,
              responses=_errors(*_WRITE))
    def load_shoe(body: m.LoadShoeIn) -> dict[str, Any]:
        """Start a new shoe session on the shoe (NEW_SHOE; an RFID manifest is sent in parts)."""
        manifest = None
        if body.manifest is not None:
            manifest = [ManifestEntry(parse_card(item.card), bytes.fromhex(item.uid)) for item in body.manifest]
            if len({e.code for e in manifest}) != 52 or len({e.uid for e in manifest}) != 52:
                raise Refused(409, "manifest", "an RFID manifest lists 52 different cards with 52 different UIDs",
                              "ManifestError")
        try:
            shoe_no = daemon.load_shoe(body.deck_id, manifest, body.shoe)
        except LookupError as exc:
            raise Refused(409, "shoe", str(exc), "LookupError") from None
        return {"shoe_no": shoe_no}

    @app.post("/shoe/clear", dependencies=supervisor, tags=["shoe"], status_code=202, response_model=m.Sent,
              responses=_errors(*_WRITE))
    def clear(body: m.ClearIn) -> dict[str, Any]:
        """A supervisor clears integrity bits and faults on the shoe (CLEAR)."""
        try:
            daemon.clear(body.integrity_mask, body.fault_mask, body.shoe)
        except LookupError as exc:
            raise Refused(409, "shoe", str(exc), "LookupError") from None
        return {"sent": True}

    @app.post("/shoe/maintenance", dependencies=supervisor, tags=["shoe"], status_code=202,
              response_model=m.MaintenanceSent, responses=_errors(*_WRITE))
    def maintenance(body: m.MaintenanceIn) -> dict[str, Any]:
        """A supervisor puts the shoe into maintenance (MAINTENANCE, journaled with who and
        why): it stops streaming and waits at the REPL for `cardshoe flash`."""
        try:
            serial, seq = daemon.maintenance(body.supervisor, body.reason, body.shoe)
        except LookupError as exc:
            raise Refused(409, "shoe", str(exc), "LookupError") from None
        return {"sent": True, "shoe": serial, "seq": seq}

    @app.get("/events", tags=["events"], response_class=EventStream, responses={
        200: {"description": "server-sent events: `id:` the journal entry, `event:` its type, `data:` one line "
                             "of JSON `{id, t_ns, kind, round_id, data}` (docs/api.md, \"The event stream\")",
              "content": {"text/event-stream": {"schema": {"type": "string"}}}},
        # Its errors are JSON, not the stream's media type (FastAPI would file a `model` under it).
        **{code: {"description": _STATUS_TEXT[code],
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
           for code in (401, 403, 422)}})
    async def events(
        request: Request,
        who: Principal = read_dep,
        view: Literal["pit", "all"] | None = view_q,
        last_event_id: Annotated[int | None, Header(alias="Last-Event-ID", ge=0, le=m.MAX_COUNTER * 1000,
                                                    description="the last event id received")] = None,
        after: int | None = Query(None, ge=-1, le=m.MAX_COUNTER * 1000,
                                  description="start after this event id (as Last-Event-ID), from the journal; "
                                              "0 or -1: from the first"),
        limit: int | None = Query(None, ge=1, le=1_000_000, description="end the stream after this many events"),
        names: bool = Query(True, description="false: no `event:` line, so every event reaches a browser's "
                                              "`EventSource.onmessage` whatever its type (the type is in the data)"),
    ) -> StreamingResponse:
        """Server-sent events: cards as placed (as text, "As"), hands complete, flags, settlements,
        link losses.

        Reconnect with `Last-Event-ID` (or `?after=ID`) to get what was missed from the journal
        first. `?limit=N` ends the stream after N events (for scripts and tests)."""
        start = last_event_id if last_event_id is not None else after
        pit: dict[str | None, tuple[int, Public]] | None = {} if _pit(who, view) else None
        sse = sse_format if names else _unnamed
        loop = asyncio.get_running_loop()
        sub = daemon.bus.subscribe(loop)

        async def stream() -> AsyncIterator[str]:
            sent = 0
            begin = start
            last = begin if begin is not None else -1
            try:
                if begin is not None:
                    reader = JournalReader(daemon.config.journal)
                    if begin > reader.last_id():
                        # An id beyond this journal's end is of an earlier gaming day's (issue 25):
                        # this day's journal is sent from its first entry.
                        begin = last = 0
                    try:
                        # Paged from the journal as sent (never the whole backlog first):
                        # the first event comes at once whatever the backlog (issue 15).
                        for entry in reader.entries(("event", "settlement", "link", "daemon", "reject", "command"),
                                                    after_id=begin):
                            if not streamable(entry.kind, entry.data()):
                                continue
                            item = Published.from_entry(entry)
                            yield sse(shown(item, pit))
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
                        yield sse(item)
                        return
                    if item.kind == "daemon" and item.type == "day_opened":
                        last = item.id - 1  # a new gaming day's journal: its entry ids start again (issue 25)
                    if item.id <= last:
                        continue  # already sent from the journal backlog
                    last = item.id
                    yield sse(shown(item, pit))
                    sent += 1
                    if limit is not None and sent >= limit:
                        return
            finally:
                sub.close()

        return EventStream(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return app
