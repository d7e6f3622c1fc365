"""The floor's HTTP API (`cardshoe floor serve`): tables ship to it, pools are settled by it,
the pit and surveillance read it (docs/api.md, "The floor").

Every request names its caller by a bearer token (`cardshoe.floor.auth`): a table's own
credential ships, settles and withdraws for that table alone; `pit` and `surveillance` read;
the floor `supervisor` configures links, withdraws any table's round and clears alarms. A
round is settled by its id from the journal the floor holds (`cardshoe.floor.settle`), never
from a file a table sends. A store that cannot be reached answers 503, which the tables take as
"floor unreachable" (they retry, and refuse progressive wagers meanwhile); a refusal answers
4xx with `{"detail": {"field", "message", "error"}}`. Every answer names the process that made it
(`X-Floor-Worker: <pid>`; `cardshoe floor serve --workers N` runs N on one socket).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path as FilePath
from typing import Annotated, Any, Callable

from fastapi import Depends, FastAPI, HTTPException, Path, Query, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from cardshoe.api.limits import BodyLimits
from cardshoe.strictjson import Limits

from .auth import READER_ROLES, Credential, FloorGuard
from .progressive import FloorRefusal, LinkSettings
from .settle import FloorSettler
from .store import FloorStore, JournalRefused, ShippedEntry, StoreUnavailable

__all__ = ["create_floor_app", "FLOOR_BODY"]

#: A shipped batch: up to 1,000 entries of a few KB each (a settlement's body is the largest).
FLOOR_BODY = Limits(max_bytes=16 << 20, max_depth=24, max_string=1 << 20, max_digits=20, max_items=1000)

_STRICT = ConfigDict(extra="forbid")
_NAME = r"^[A-Za-z0-9_.-]{1,96}$"
_HEX64 = r"^[0-9a-f]{64}$"
_BEARER = HTTPBearer(auto_error=False, description="a floor token: a table's credential or a role's")
_STATIC = FilePath(__file__).parent / "static"

_404 = ("UnknownLink", "UnknownTable")
_409 = ("AssignmentConflict", "RoundWithdrawn", "JournalRefused", "RoundIncomplete", "FramesUnverified",
        "StreamAlarmed", "RoundMismatch", "RoundNotSettleable", "DayArchived", "ArchiveUnavailable", "DaysRefused")


class Head(BaseModel):
    model_config = _STRICT
    id: int = Field(ge=0)
    chain: str | None = Field(None, pattern=_HEX64)


class ShipIn(BaseModel):
    model_config = _STRICT
    link: str | None = Field(None, pattern=_NAME)
    game: str | None = Field(None, max_length=64)
    head: Head | None = None
    entries: list[dict[str, Any]] = Field(max_length=1000)


class WithdrawIn(BaseModel):
    model_config = _STRICT
    table: str = Field(pattern=_NAME)
    round_id: str = Field(min_length=1, max_length=80)


class SettleIn(BaseModel):
    model_config = _STRICT
    table: str = Field(pattern=_NAME)
    round_id: str = Field(min_length=1, max_length=80)
    entry: int = Field(ge=1, description="the id of the table's settle_sent entry of the round")
    entries: list[dict[str, Any]] = Field(default_factory=list, max_length=1000,
                                          description="the journal's tail up to `entry` not shipped yet")


class ForkIn(BaseModel):
    model_config = _STRICT
    parent: str = Field(pattern=_NAME)
    at: int = Field(ge=0)
    chain: str = Field(pattern=_HEX64)


class LinkIn(BaseModel):
    model_config = _STRICT
    reset: int = Field(ge=0)
    rate_ppm: int = Field(ge=0, le=1_000_000)
    start: int | None = Field(None, ge=0)


class ClearIn(BaseModel):
    model_config = _STRICT
    by: str = Field(min_length=1, max_length=64)


TableName = Annotated[str, Path(pattern=_NAME, description="the table stream: NAME.JOURNAL_ID")]
LinkName = Annotated[str, Path(pattern=_NAME, description="the link's name")]


def _entries(raw: list[dict[str, Any]]) -> list[ShippedEntry]:
    try:
        return [ShippedEntry.from_json(e) for e in raw]
    except ValueError as exc:
        raise HTTPException(422, {"field": str(exc).split(":")[0], "message": str(exc), "error": "BadEntry"}) from None


class WorkerHeader:
    """ASGI middleware: every answer carries `X-Floor-Worker: <pid>`, the process that made it
    (`cardshoe floor serve --workers N` runs N; the tests and the bench see which answered)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        pid = str(os.getpid()).encode()  # read per request: a fork's child is another process

        async def send_with_pid(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"x-floor-worker", pid)]}
            await send(message)

        await self.app(scope, receive, send_with_pid)


def create_floor_app(store: FloorStore, guard: FloorGuard, settler: FloorSettler, *,
                     link_of: Callable[[str], str | None] = lambda _t: None,
                     public_key: bytes | None = None, read_only: str | None = None) -> FastAPI:
    """The floor API over `store`, its callers known by `guard`, its rounds settled by `settler`
    (on threads and database connections of their own, so a dealer waiting for a round's pool
    never queues behind the tables' shipping). `link_of(table)` is the link a table may settle on.
    `read_only`: a floor on a hot standby (issue 24 item 3), serving reads; every write
    endpoint answers 503 `FloorReadOnly` with this text (where writes go)."""
    settle_threads = ThreadPoolExecutor(max_workers=8, thread_name_prefix="floor-settle")
    # The tables' rounds are rebuilt as their entries arrive (one thread, off every request's
    # path), so a settlement feeds the table's core only the few entries shipped since.
    rebuild_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="floor-rebuild")
    queued: set[str] = set()
    queued_lock = threading.Lock()

    def advance(stream: str, upto: int) -> None:
        with queued_lock:
            queued.discard(stream)
        try:
            settler.rebuilder.advance(stream, upto)
        except Exception:  # noqa: BLE001 - an optimisation: the settlement rebuilds what it needs itself
            pass

    def schedule_advance(stream: str, upto: int) -> None:
        with queued_lock:
            if stream in queued:
                return
            queued.add(stream)
        rebuild_thread.submit(advance, stream, upto)
    app = FastAPI(title="cardshoe floor API", version="2", docs_url=None, redoc_url=None,
                  description="Every table's journal, the linked progressives' pools, their hits, and a search "
                              "over all rounds.")
    app.add_middleware(BodyLimits, token=secrets.token_hex(32), limits=FLOOR_BODY,
                       authorised=guard.authorised_headers)
    if read_only is not None:
        # Every write of the API is a POST or a PUT and every read a GET: a standby's floor
        # answers the writes before any handler (or the database) sees them.
        refusal = {"detail": {"field": "floor", "message": read_only, "error": "FloorReadOnly"}}

        @app.middleware("http")
        async def refuse_writes(request: Request, call_next: Callable[[Request], Any]) -> Any:
            if request.method not in ("GET", "HEAD", "OPTIONS"):
                return JSONResponse(refusal, status_code=503)
            return await call_next(request)
    app.add_middleware(WorkerHeader)  # outside BodyLimits: its refusals name the worker too

    def need(*roles: str) -> Callable[..., Credential]:
        wanted = frozenset(roles)

        def dependency(request: Request,
                       _creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]) -> Credential:
            return guard.check(request, wanted)
        return dependency

    # Dependencies (as defaults: the annotations are strings under `from __future__ import
    # annotations`, which FastAPI resolves in the module's namespace, not this function's).
    table_only = Depends(need("table"))
    table_or_reader = Depends(need("table", *READER_ROLES))
    table_or_watcher = Depends(need("table", "surveillance", "supervisor"))
    table_or_supervisor = Depends(need("table", "supervisor"))
    reader = Depends(need(*READER_ROLES))
    surveillance = Depends(need("surveillance"))
    supervisor = Depends(need("supervisor"))
    readers = frozenset(READER_ROLES)

    @app.exception_handler(StoreUnavailable)
    async def unavailable(_: Request, exc: StoreUnavailable) -> JSONResponse:
        return JSONResponse({"detail": {"field": "store", "message": str(exc), "error": "StoreUnavailable"}},
                            status_code=503)

    @app.exception_handler(FloorRefusal)
    async def refused(_: Request, exc: FloorRefusal) -> JSONResponse:
        name = type(exc).__name__
        status = 404 if name in _404 else 409 if name in _409 else 422
        detail: dict[str, Any] = {"field": exc.field, "message": exc.message, "error": name}
        if isinstance(exc, JournalRefused):
            detail["alarm"] = exc.kind
            detail["at_id"] = exc.at_id
        return JSONResponse({"detail": detail}, status_code=status)

    @app.get("/public-key", tags=["floor"])
    def public_key_() -> dict[str, Any]:
        """The floor's Ed25519 public key, which signs every assignment (hex; null: none)."""
        return {"algorithm": "Ed25519", "public_key": None if public_key is None else public_key.hex()}

    # -- shipping (a table's own credential) --------------------------------------------------
    @app.get("/tables/{table}/high-water", tags=["shipping"])
    def high_water(table: TableName, request: Request, cred: Credential = table_or_reader) -> dict[str, Any]:
        """What the floor holds of the table stream: the highest entry id (its shipper resumes
        after it) and its chain value, whether the floor knows the stream, its open alarms."""
        guard.own(request, cred, table, also=readers)
        info = store.stream(table)
        return {"table": table, "high_water": 0 if info is None else info["high_water"],
                "chain": None if info is None else info["chain"], "known": info is not None,
                "parent": None if info is None else info["parent"],
                "alarms": store.alarms(table, open_only=True)}

    @app.get("/tables/{table}/chain", tags=["shipping"])
    def chain_at(table: TableName, request: Request, cred: Credential = table_or_watcher,
                 at: int = Query(ge=0)) -> dict[str, Any]:
        """The chain value of the stream's entry `at` as the floor holds it (null: not held)."""
        guard.own(request, cred, table, also=frozenset({"surveillance", "supervisor"}))
        return {"table": table, "at": at, "chain": store.chain_at(table, at)}

    @app.post("/tables/{table}/entries", tags=["shipping"])
    def ship(table: TableName, body: ShipIn, request: Request, cred: Credential = table_only) -> dict[str, Any]:
        """A batch of the table's journal entries in id order (each stored once, however often
        sent, and only if it continues the floor's copy: docs/floor.md, "Tamper-evident
        journals"); answers the new high-water mark and the table's link pool as displayed."""
        guard.own(request, cred, table)
        entries = _entries(body.entries)
        link = link_of(cred.table or "") or body.link
        head = None if body.head is None else (body.head.id, body.head.chain)
        hwm = store.ingest(table, entries, link=link, game=body.game, head=head)
        if entries and link is not None:
            schedule_advance(table, hwm)
        out: dict[str, Any] = {"table": table, "high_water": hwm, "alarms": store.alarms(table, open_only=True)}
        if link is not None:
            try:
                out["pool"] = store.pool(link)["pool"]
            except FloorRefusal:
                out["pool"] = None
        return out

    @app.post("/tables/{table}/fork", tags=["shipping"])
    def fork(table: TableName, body: ForkIn, request: Request, cred: Credential = table_only) -> dict[str, Any]:
        """A journal restored from a backup opens its new stream: it continues `parent` (a
        journal of the same table) from entry `at`, whose chain value it gives."""
        guard.own(request, cred, table)
        guard.own(request, cred, body.parent)
        return store.fork(table, body.parent, body.at, body.chain, link=link_of(cred.table or ""))

    # -- the linked progressive ----------------------------------------------------------------
    @app.post("/links/{link}/settle", tags=["progressive"])
    async def settle(link: LinkName, body: SettleIn, request: Request,
                     cred: Credential = table_only) -> dict[str, Any]:
        """Assign a round its pool, rebuilt from the table's journal as the floor holds it up to
        its `settle_sent` entry: the round's contribution, then its hits by the game's rules,
        serialized with every other table's round of the link; the assignment signed by the
        floor (docs/floor.md, "Settling from the journal")."""
        guard.own(request, cred, body.table)
        allowed = link_of(cred.table or "")
        if allowed != link:
            raise guard.refuse(request, 403, "link", f"{cred} settles on link {allowed!r}, not {link!r}",
                               "Forbidden", cred)
        entries = _entries(body.entries)
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        made = await loop.run_in_executor(settle_threads, settler.settle, link, body.table, body.round_id,
                                          body.entry, entries)
        # The floor's own share of the round trip (a thread, the rebuild, the link's lock, the commit).
        return {**made.to_json(), "signed": made.signed(), "server_ms": round((time.perf_counter() - t0) * 1000, 3)}

    @app.post("/links/{link}/withdraw", tags=["progressive"])
    async def withdraw(link: LinkName, body: WithdrawIn, request: Request,
                       cred: Credential = table_or_supervisor) -> dict[str, Any]:
        """A table about to void a round it sent for settlement without hearing the answer (or a
        floor supervisor for it): `assigned` with the assignment (the table settles it with
        that), or `withdrawn` (never assigned, and never will be: the table may void it).
        Serialized with the settlements."""
        guard.own(request, cred, body.table, also=frozenset({"supervisor"}))
        loop = asyncio.get_running_loop()
        made = await loop.run_in_executor(settle_threads, settler.store.withdraw, link, body.table, body.round_id)
        return {"table": body.table, "round_id": body.round_id, "status": "withdrawn" if made is None else "assigned",
                "assignment": None if made is None else {**made.to_json(), "signed": made.signed()}}

    @app.put("/links/{link}", tags=["progressive"])
    def configure(link: LinkName, body: LinkIn, _cred: Credential = supervisor) -> dict[str, Any]:
        """A floor supervisor creates a link or changes its reset and rate (the pool stays)."""
        store.configure_link(LinkSettings(link, body.reset, body.rate_ppm, body.start))
        return store.pool(link)

    # -- reading -------------------------------------------------------------------------------
    @app.get("/links", tags=["progressive"])
    def links(_cred: Credential = reader) -> list[dict[str, Any]]:
        """Every link's pool as it stands."""
        return store.links()

    @app.get("/links/{link}", tags=["progressive"])
    def link_detail(link: LinkName, _cred: Credential = reader,
                    limit: int = Query(1000, ge=1, le=100_000)) -> dict[str, Any]:
        """One link's pool with its history: every round settled against it, oldest first."""
        return {**store.pool(link), "history": store.history(link, limit)}

    @app.get("/hits", tags=["progressive"])
    def hits(_cred: Credential = reader, link: str | None = Query(None, pattern=_NAME)) -> list[dict[str, Any]]:
        """Every jackpot hit in the order the floor paid them (its round's entries: /tables/{t}/entries)."""
        return store.hits(link)

    @app.get("/tables", tags=["tables"])
    def tables(_cred: Credential = reader) -> list[dict[str, Any]]:
        """Every table stream: its link, game, shoe, current round, open flags, what the floor
        holds of it, the stream it continues and its open alarms."""
        return store.tables()

    @app.get("/alarms", tags=["tables"])
    def alarms(_cred: Credential = reader, table: str | None = Query(None, pattern=_NAME),
               open_only: bool = Query(False, alias="open")) -> list[dict[str, Any]]:
        """The tables' journal alarms (a gap, a break, a journal changed or restored), oldest first."""
        return store.alarms(table, open_only=open_only)

    @app.post("/tables/{table}/alarms/{n}/clear", tags=["tables"])
    def clear(table: TableName, n: int, body: ClearIn, _cred: Credential = supervisor) -> dict[str, Any]:
        """A floor supervisor clears an alarm after looking at it (named in the record)."""
        if not store.clear_alarm(table, n, body.by):
            raise HTTPException(404, {"field": "n", "message": f"no open alarm {n} of {table}", "error": "NotFound"})
        return {"table": table, "n": n, "cleared_by": body.by}

    @app.get("/tables/{table}/entries", tags=["tables"])
    def table_entries(table: TableName, _cred: Credential = surveillance, after_id: int = Query(0, ge=0),
                      limit: int = Query(1000, ge=1, le=10_000),
                      round_id: str | None = Query(None, max_length=80)) -> list[dict[str, Any]]:
        """The table's journal as the floor holds it (a round's, with `round_id`): surveillance's."""
        return [e.to_json() for e in store.entries(table, after_id=after_id, limit=limit, round_id=round_id)]

    @app.get("/rounds", tags=["tables"])
    def rounds(cred: Credential = reader, table: str | None = Query(None, pattern=_NAME),
               since_ns: int | None = Query(None, ge=0), until_ns: int | None = Query(None, ge=0),
               rule: str | None = Query(None, max_length=16, description='a rule flagged, e.g. "5.3"'),
               cards: str | None = Query(None, max_length=160, description='cards dealt in this order, e.g. "Ah Kh"'),
               limit: int = Query(200, ge=1, le=10_000)) -> list[dict[str, Any]]:
        """Search every round of every table, newest first. Only surveillance sees the cards of
        a round still in play, or finds it by them."""
        return store.search_rounds(table=table, since_ns=since_ns, until_ns=until_ns, rule=rule, cards=cards,
                                   limit=limit, live_cards=cred.role == "surveillance")

    # The report's readers, one per table, kept between calls: each call reads only the entries
    # shipped since the last (a floor page refreshes every 30 s; re-reading every journal would not).
    report_readers: dict[str, Any] = {}
    report_figures: dict[tuple[Any, ...], Any] = {}
    report_lock = threading.RLock()
    report_epoch = [store.server_epoch]

    def report_tables(names: list[str] | None) -> list[Any]:
        from cardshoe.report.shift import TableReader

        out = []
        with report_lock:
            if report_epoch[0] != store.server_epoch:
                # The server changed (a failover): what the readers read may not be on it.
                report_readers.clear()
                report_figures.clear()
                report_epoch[0] = store.server_epoch
            for t in store.tables():
                key = str(t["table"])
                if names and key not in names and str(t.get("name")) not in names:
                    continue
                reader, last = report_readers.get(key, (TableReader(f"floor:{key}"), 0))
                while True:
                    page = store.entries(key, after_id=last, limit=10_000)
                    for e in page:
                        reader.feed(e)
                    if page:
                        last = page[-1].id
                    if len(page) < 10_000:
                        break
                report_readers[key] = (reader, last)
                out.append(reader.shift())
        return out

    @app.get("/report", dependencies=[reader], tags=["report"])
    def shift_report(since_ns: int | None = Query(None, ge=0, description="default: the current shift's start"),
                     until_ns: int | None = Query(None, ge=0),
                     table: list[str] | None = Query(None, description="only these tables (a name finds all its journals)"),
                     z: float = Query(3.0, gt=0, le=40, description="the alarm's family-wise z"),
                     min_rounds: int = Query(100, ge=1, le=100_000)) -> dict[str, Any]:
        """The shift's figures over every table the floor holds (docs/report.md): pace, hold against
        the exact theoretical, ratings, flags, and the hold alarms corrected for every table watched."""
        from cardshoe.report.alarm import AlarmPolicy, evaluate
        from cardshoe.report.figures import Figures, Options
        from cardshoe.report.live import shift_start_ns

        since = since_ns if since_ns is not None else shift_start_ns(time.time_ns(), Options().shift_starts)
        key = (since, until_ns, tuple(sorted(table or ())))
        with report_lock:
            tables = report_tables(table)
            # The figures of a window are kept between calls: each call counts only the rounds
            # settled since the last (a new shift, another window: new figures; a few kept).
            fig = report_figures.pop(key, None) or Figures(Options(since_ns=since, until_ns=until_ns))
            report_figures[key] = fig
            while len(report_figures) > 4:
                report_figures.pop(next(iter(report_figures)))
            fig.update(tables)
            report = fig.report()
            report["alarms"] = evaluate(fig, AlarmPolicy(z=z, min_rounds=min_rounds))
        report.pop("series", None)
        return report

    @app.get("/floor/report.js", include_in_schema=False)
    def report_panel() -> FileResponse:
        """The floor page's shift panel (its own file: the page keeps one hook)."""
        return FileResponse(_STATIC / "report.js", media_type="text/javascript")

    @app.get("/floor", include_in_schema=False)
    def page() -> FileResponse:
        """The floor page (reads the API with a token the user types; nothing from a CDN)."""
        return FileResponse(_STATIC / "floor.html", media_type="text/html")

    return app
