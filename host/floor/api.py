"""The floor's HTTP API (`cardshoe floor serve`): tables ship to it, pools are settled by it,
the pit and surveillance read it (docs/api.md, "The floor").

The same roles as a table (`cardshoe.api.auth`): a table's shipper and settlements use a
`controller` token; every read takes any role. A store that cannot be reached answers 503,
which the tables take as "floor unreachable" (they retry, and refuse progressive wagers
meanwhile); a refusal answers 4xx with `{"detail": {"field", "message", "error"}}`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path as FilePath
from typing import Annotated, Any, Callable, Iterable, Mapping

from fastapi import Depends, FastAPI, HTTPException, Path, Query, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from cardshoe.api.auth import Guard, Principal
from cardshoe.api.limits import BodyLimits
from cardshoe.strictjson import Limits

from .progressive import FloorRefusal
from .store import FloorStore, ShippedEntry, StoreUnavailable

__all__ = ["create_floor_app", "FLOOR_BODY"]

#: A shipped batch: up to 1,000 entries of a few KB each (a settlement's body is the largest).
FLOOR_BODY = Limits(max_bytes=16 << 20, max_depth=24, max_string=1 << 20, max_digits=20, max_items=1000)

_STRICT = ConfigDict(extra="forbid")
_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
_BEARER = HTTPBearer(auto_error=False, description="a floor token")
_STATIC = FilePath(__file__).parent / "static"


class ShipIn(BaseModel):
    model_config = _STRICT
    link: str | None = Field(None, pattern=_NAME)
    game: str | None = Field(None, max_length=64)
    entries: list[dict[str, Any]] = Field(max_length=1000)


class WithdrawIn(BaseModel):
    model_config = _STRICT
    table: str = Field(pattern=_NAME)
    round_id: str = Field(min_length=1, max_length=80)


class SettleIn(BaseModel):
    model_config = _STRICT
    table: str = Field(pattern=_NAME)
    round: dict[str, Any]


TableName = Annotated[str, Path(pattern=_NAME, description="the table's name")]
LinkName = Annotated[str, Path(pattern=_NAME, description="the link's name")]


def create_floor_app(store: FloorStore, token: str, *, role_tokens: Mapping[str, Iterable[str]] | None = None,
                     settle_store: FloorStore | None = None) -> FastAPI:
    """The floor API over `store`, guarded by `token` (all roles) and `role_tokens`.

    Settlements run on threads of their own and on `settle_store`'s connections (another
    store object on the same database; default `store`), so a dealer waiting for a round's
    pool never queues behind the tables' shipping."""
    settler = store if settle_store is None else settle_store
    settle_threads = ThreadPoolExecutor(max_workers=8, thread_name_prefix="floor-settle")
    if len(token) < 16:
        raise ValueError("token: at least 16 characters")
    app = FastAPI(title="cardshoe floor API", version="1", docs_url=None, redoc_url=None,
                  description="Every table's journal, the linked progressives' pools, their hits, and a search "
                              "over all rounds.")
    guard = Guard.from_tokens(token, role_tokens)
    app.add_middleware(BodyLimits, token=token, limits=FLOOR_BODY, authorised=guard.authorised_headers)

    def need(role: str | None) -> Callable[..., Principal]:
        def dependency(request: Request,
                       _creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]) -> Principal:
            return guard.check(request, role)
        return dependency

    writer = [Depends(need("controller"))]
    reader = [Depends(need(None))]

    @app.exception_handler(StoreUnavailable)
    async def unavailable(_: Request, exc: StoreUnavailable) -> JSONResponse:
        return JSONResponse({"detail": {"field": "store", "message": str(exc), "error": "StoreUnavailable"}},
                            status_code=503)

    @app.exception_handler(FloorRefusal)
    async def refused(_: Request, exc: FloorRefusal) -> JSONResponse:
        status = 404 if type(exc).__name__ == "UnknownLink" else 409 if type(exc).__name__ in ("AssignmentConflict", "RoundWithdrawn") \
            else 422
        return JSONResponse({"detail": {"field": exc.field, "message": exc.message, "error": type(exc).__name__}},
                            status_code=status)

    @app.get("/tables/{table}/high-water", dependencies=writer, tags=["shipping"])
    def high_water(table: TableName) -> dict[str, Any]:
        """The highest entry id of the table the floor holds: its shipper resumes after it."""
        return {"table": table, "high_water": store.high_water(table)}

    @app.post("/tables/{table}/entries", dependencies=writer, tags=["shipping"])
    def ship(table: TableName, body: ShipIn) -> dict[str, Any]:
        """A batch of the table's journal entries in id order (each stored once, however often
        sent); answers the new high-water mark and the table's link pool as displayed."""
        try:
            entries = [ShippedEntry.from_json(e) for e in body.entries]
        except ValueError as exc:
            raise HTTPException(422, {"field": str(exc).split(":")[0], "message": str(exc),
                                      "error": "BadEntry"}) from None
        hwm = store.ingest(table, entries, link=body.link, game=body.game)
        out: dict[str, Any] = {"table": table, "high_water": hwm}
        if body.link is not None:
            try:
                out["pool"] = store.pool(body.link)["pool"]
            except FloorRefusal:
                out["pool"] = None
        return out

    @app.post("/links/{link}/settle", dependencies=writer, tags=["progressive"])
    async def settle(link: LinkName, body: SettleIn) -> dict[str, Any]:
        """Assign a round its pool: the round's contribution, then its hits by the game's rules,
        serialized with every other table's round of the link (docs/floor.md, "Serialization of a
        link's pool")."""
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        made = await loop.run_in_executor(settle_threads, settler.settle, link, body.table, body.round)
        # The floor's own share of the round trip (waiting for a thread, the link's lock, the commit).
        return {**made.to_json(), "server_ms": round((time.perf_counter() - t0) * 1000, 3)}

    @app.post("/links/{link}/withdraw", dependencies=writer, tags=["progressive"])
    async def withdraw(link: LinkName, body: WithdrawIn) -> dict[str, Any]:
        """A table about to void a round it sent for settlement without hearing the answer:
        `assigned` with the assignment (the table settles it with that), or `withdrawn` (never
        assigned, and never will be: the table may void it). Serialized with the settlements."""
        loop = asyncio.get_running_loop()
        made = await loop.run_in_executor(settle_threads, settler.withdraw, link, body.table, body.round_id)
        return {"table": body.table, "round_id": body.round_id, "status": "withdrawn" if made is None else "assigned",
                "assignment": None if made is None else made.to_json()}

    @app.get("/links", dependencies=reader, tags=["progressive"])
    def links() -> list[dict[str, Any]]:
        """Every link's pool as it stands."""
        return store.links()

    @app.get("/links/{link}", dependencies=reader, tags=["progressive"])
    def link_detail(link: LinkName, limit: int = Query(1000, ge=1, le=100_000)) -> dict[str, Any]:
        """One link's pool with its history: every round settled against it, oldest first."""
        return {**store.pool(link), "history": store.history(link, limit)}

    @app.get("/hits", dependencies=reader, tags=["progressive"])
    def hits(link: str | None = Query(None, pattern=_NAME)) -> list[dict[str, Any]]:
        """Every jackpot hit in the order the floor paid them (its round's entries: /tables/{t}/entries)."""
        return store.hits(link)

    @app.get("/tables", dependencies=reader, tags=["tables"])
    def tables() -> list[dict[str, Any]]:
        """Every table: its link, game, shoe, current round, open flags, what the floor holds of it."""
        return store.tables()

    @app.get("/tables/{table}/entries", dependencies=reader, tags=["tables"])
    def table_entries(table: TableName, after_id: int = Query(0, ge=0), limit: int = Query(1000, ge=1, le=10_000),
                      round_id: str | None = Query(None, max_length=80)) -> list[dict[str, Any]]:
        """The table's journal as the floor holds it (a round's, with `round_id`)."""
        return [e.to_json() for e in store.entries(table, after_id=after_id, limit=limit, round_id=round_id)]

    @app.get("/rounds", dependencies=reader, tags=["tables"])
    def rounds(table: str | None = Query(None, pattern=_NAME), since_ns: int | None = Query(None, ge=0),
               until_ns: int | None = Query(None, ge=0),
               rule: str | None = Query(None, max_length=16, description='a rule flagged, e.g. "5.3"'),
               cards: str | None = Query(None, max_length=160, description='cards dealt in this order, e.g. "Ah Kh"'),
               limit: int = Query(200, ge=1, le=10_000)) -> list[dict[str, Any]]:
        """Search every round of every table, newest first."""
        return store.search_rounds(table=table, since_ns=since_ns, until_ns=until_ns, rule=rule, cards=cards,
                                   limit=limit)

    # The report's readers, one per table, kept between calls: each call reads only the entries
    # shipped since the last (a floor page refreshes every 30 s; re-reading every journal would not).
    report_readers: dict[str, Any] = {}
    report_lock = threading.Lock()

    def report_tables(names: list[str] | None) -> list[Any]:
        from cardshoe.report.shift import TableReader

        out = []
        with report_lock:
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

    @app.get("/report", dependencies=reader, tags=["report"])
    def shift_report(since_ns: int | None = Query(None, ge=0, description="default: the current shift's start"),
                     until_ns: int | None = Query(None, ge=0),
                     table: list[str] | None = Query(None, description="only these tables (a name finds all its journals)"),
                     z: float = Query(3.0, gt=0, le=40, description="the alarm's family-wise z"),
                     min_rounds: int = Query(100, ge=1, le=100_000)) -> dict[str, Any]:
        """The shift's figures over every table the floor holds (docs/report.md): pace, hold against
        the exact theoretical, ratings, flags, and the hold alarms corrected for every table watched."""
        from cardshoe.report.alarm import AlarmPolicy, evaluate
        from cardshoe.report.figures import Options, build
        from cardshoe.report.live import shift_start_ns

        since = since_ns if since_ns is not None else shift_start_ns(time.time_ns(), Options().shift_starts)
        report = build(report_tables(table), Options(since_ns=since, until_ns=until_ns))
        report.pop("series", None)
        report["alarms"] = evaluate(report, AlarmPolicy(z=z, min_rounds=min_rounds))
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
