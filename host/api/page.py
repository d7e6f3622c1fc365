"""The live table page and the browser's sign-in, served by `cardshoe run`.

- ``GET /table`` (and ``/``): the page for the pit and surveillance (static HTML, CSS and
  JavaScript from ``cardshoe/api/static``; no framework, nothing from the internet).
- ``POST /session`` ``{"token": ...}``: exchange a token for a session cookie (HttpOnly,
  SameSite=Strict, expiring); the answer carries the roles and the CSRF token the page sends
  with its writes. ``GET /session`` tells the page whether it is signed in; ``DELETE``
  signs out. The token travels in the body only, never in a URL, and is never logged.
- ``GET /docs``: Swagger UI from the installed ``fastapi-offline`` package's files (FastAPI's
  default loads it from a public CDN, which a table network cannot reach), and ``GET
  /openapi.json``: both need a token or a session, as every endpoint does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from .auth import COOKIE, SESSION_SECONDS, Guard

STATIC = Path(__file__).resolve().parent / "static"
OPENAPI_URL = "/openapi.json"

#: The page loads only its own files: a script injected into a flag's text cannot run.
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


class SessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    token: str = Field(min_length=1, max_length=200, description="a table token (sent in the body, never a URL)")


class SessionOut(BaseModel):
    """Whether this browser is signed in; with which roles and its CSRF token."""

    signed_in: bool
    roles: list[Literal["controller", "supervisor", "surveillance"]] | None = None
    csrf: str | None = Field(None, description="send it as X-CSRF-Token with every write from the page")
    expires_in: int | None = Field(None, description="seconds (sign-in only)")


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    from .models import ErrorBody

    return {code: {"model": ErrorBody, "description": {401: "not a token of this table", 403: "a cross-site request",
                                                       413: "the body is over 64 KiB",
                                                       422: "the body does not match this description"}[code]}
            for code in codes}


def _swagger_dir() -> Path:
    # Only the files of the installed fastapi-offline package (Swagger UI 5, which reads
    # OpenAPI 3.1; swagger-ui-bundle's 4.x cannot): its app wrapper is not used.
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"


def mount_page(app: FastAPI, guard: Guard) -> None:
    """Add the page, the sign-in endpoints, local /docs and their static files to `app`."""
    app.mount("/static/page", StaticFiles(directory=STATIC), name="page-static")
    app.mount("/static/swagger", StaticFiles(directory=_swagger_dir()), name="swagger-static")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/table", status_code=307)

    @app.get("/table", include_in_schema=False)
    def table_page() -> FileResponse:
        return FileResponse(STATIC / "table.html", media_type="text/html",
                            headers={"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-store",
                                     "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})

    # The description and its page need a token (or a signed-in session: sign in at /table
    # first) like every endpoint: only the sign-in page, its files and Swagger UI's files are
    # served without one (docs/api.md, "Authentication and roles").
    @app.get(OPENAPI_URL, include_in_schema=False)
    def openapi(request: Request) -> JSONResponse:
        guard.check(request, None)
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        guard.check(request, None)
        return get_swagger_ui_html(openapi_url=OPENAPI_URL, title=f"{app.title} - docs",
                                   swagger_js_url="/static/swagger/swagger-ui-bundle.js",
                                   swagger_css_url="/static/swagger/swagger-ui.css",
                                   swagger_favicon_url="data:,",
                                   # Swagger UI would ask validator.swagger.io to check the spec.
                                   swagger_ui_parameters={"validatorUrl": None})

    @app.post("/session", tags=["session"], response_model=SessionOut, response_model_exclude_unset=True,
              responses=_errors(401, 403, 413, 422))
    def sign_in(request: Request, body: SessionIn) -> Response:
        """Exchange a token for a session cookie (browsers: `EventSource` cannot send a
        bearer header). Answers the roles and the CSRF token for `X-CSRF-Token`."""
        origin = request.headers.get("origin")
        host = request.headers.get("host", "")
        if origin is not None and origin not in (f"http://{host}", f"https://{host}"):
            raise guard.refuse(request, 403, "Origin", "sign-in from another site is refused", "CrossSite", None)
        roles = guard.roles_of_token(body.token)
        if roles is None:
            raise guard.refuse(request, 401, "token", "not a token of this table", "Unauthorized", None)
        sid, csrf = guard.open_session(roles)
        out = JSONResponse({"signed_in": True, "roles": sorted(roles), "csrf": csrf,
                            "expires_in": SESSION_SECONDS})
        out.set_cookie(COOKIE, sid, max_age=SESSION_SECONDS, httponly=True, samesite="strict", path="/",
                       secure=request.url.scheme == "https")
        out.headers["Cache-Control"] = "no-store"
        return out

    @app.get("/session", tags=["session"], response_model=SessionOut, response_model_exclude_unset=True,
             responses=_errors(422))
    def session(request: Request) -> dict[str, Any]:
        """Whether this browser is signed in, with which roles (and its CSRF token)."""
        who = guard.principal(request)
        if who is None or who.via != "cookie":
            return {"signed_in": False}
        return {"signed_in": True, "roles": sorted(who.roles), "csrf": who.csrf}

    @app.delete("/session", tags=["session"], response_model=SessionOut, response_model_exclude_unset=True,
                responses=_errors(401, 403, 413, 422))
    def sign_out(request: Request) -> Response:
        """Sign out: the session cookie stops working."""
        guard.check(request, None)
        sid = request.cookies.get(COOKIE)
        if sid:
            guard.close_session(sid)
        out = JSONResponse({"signed_in": False})
        out.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return out


__all__ = ["PAGE_CSP", "mount_page"]
