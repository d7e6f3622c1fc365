"""Who may do what on the table API: roles, tokens, browser sessions, refusals journaled.

Three roles (docs/api.md, "Roles"):

- ``controller``: the dealer's table controller: rounds, wagers, decisions, exposures,
  counts, settlement, the jackpot pool, loading a shoe; reads every card (it runs the game).
- ``supervisor``: the pit: confirmations, voids, clearing the shoe, maintenance. Reads the
  table as it is public (the *pit view*): a face-down card's value is not sent.
- ``surveillance``: reads everything, face-down cards included; changes nothing.

A token grants a set of roles. The table's single token of earlier versions (``token_file``
or ``$CARDSHOE_TOKEN``) still works and grants all three, so existing controllers keep
working; per-role tokens come from the table file's ``[roles]`` section.

Browsers cannot put a bearer header on an ``EventSource``, so the page exchanges a token
(in a POST body, never a URL) for a session cookie: HttpOnly, SameSite=Strict, Path=/,
expiring. A write made with the cookie must also carry the session's CSRF token in
``X-CSRF-Token`` and, when the browser sends one, an ``Origin`` of this host.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from fastapi import HTTPException, Request

ROLES = ("controller", "supervisor", "surveillance")
ALL_ROLES = frozenset(ROLES)
#: Roles whose reads show face-down cards (the controller deals the game; surveillance watches it).
SEES_FACE_DOWN = frozenset({"controller", "surveillance"})

COOKIE = "cardshoe_session"
CSRF_HEADER = "X-CSRF-Token"
SESSION_SECONDS = 8 * 3600  # one shift
MAX_SESSIONS = 256

#: Refusals journaled: at most this many per window, the rest only counted (a flood of bad
#: requests must not fill the journal).
REFUSALS_PER_WINDOW = 60
REFUSAL_WINDOW_S = 60.0


@dataclass(frozen=True)
class Principal:
    """Who a request comes from: their roles and how they proved it."""

    roles: frozenset[str]
    via: str  # "bearer" or "cookie"
    csrf: str | None = None

    @property
    def sees_face_down(self) -> bool:
        """Whether reads may carry face-down card values."""
        return bool(self.roles & SEES_FACE_DOWN)


@dataclass
class Guard:
    """Tokens and sessions; `need(role)` makes the FastAPI dependency for an endpoint."""

    tokens: tuple[tuple[bytes, frozenset[str]], ...]
    journal_refusal: Callable[[Mapping[str, object]], None] = lambda _body: None
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    _revoked: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _window: list[float] = field(default_factory=list)
    unjournaled: int = 0

    @classmethod
    def from_tokens(cls, all_roles_token: str | None, role_tokens: Mapping[str, Iterable[str]] | None = None,
                    **kwargs: object) -> Guard:
        """A guard for the table's all-roles `all_roles_token` (None: a table with per-role
        tokens only) and per-role tokens (`role_tokens`: token -> roles). Raises ValueError for
        a short token, an unknown role, or no token at all."""
        pairs: list[tuple[bytes, frozenset[str]]] = []
        if all_roles_token is not None:
            if len(all_roles_token) < 16:
                raise ValueError("token: at least 16 characters")
            pairs.append((all_roles_token.encode(), ALL_ROLES))
        for tok, roles in (role_tokens or {}).items():
            rs = frozenset(roles)
            if len(tok) < 16:
                raise ValueError("role token: at least 16 characters")
            if not rs <= ALL_ROLES:
                raise ValueError(f"roles: {sorted(rs - ALL_ROLES)} unknown (known: {', '.join(ROLES)})")
            pairs.append((tok.encode(), rs))
        if not pairs:
            raise ValueError("no token: the table needs an all-roles token or [roles] tokens")
        return cls(tuple(pairs), **kwargs)  # type: ignore[arg-type]

    # -- credentials ---------------------------------------------------------------------
    def roles_of_token(self, token: str) -> frozenset[str] | None:
        """The roles a token grants, or None. Compares every token in constant time."""
        found: frozenset[str] | None = None
        given = token.encode()
        for tok, roles in self.tokens:
            if hmac.compare_digest(given, tok):
                found = roles if found is None else found | roles
        return found

    def _key(self) -> bytes:
        # Sessions are signed with a key derived from the table's tokens, so they survive a
        # daemon restart (the page's event stream resumes) and die when the tokens change.
        return hashlib.sha256(b"cardshoe-session\0" + b"\0".join(t for t, _ in self.tokens)).digest()

    def _sign(self, text: str) -> str:
        return hmac.new(self._key(), text.encode(), hashlib.sha256).hexdigest()

    def open_session(self, roles: frozenset[str]) -> tuple[str, str]:
        """A new browser session: (session value for the cookie, CSRF token for the page)."""
        expires = int(self.wall() + SESSION_SECONDS)
        body = f"{','.join(sorted(roles))}.{expires}.{secrets.token_urlsafe(12)}"
        sid = f"{body}.{self._sign(body)}"
        return sid, self._sign("csrf\0" + sid)[:32]

    def close_session(self, sid: str) -> None:
        """Sign out: the session stops working at once (a restart forgets sign-outs; the
        session then ends at its expiry)."""
        with self._lock:
            now = self.wall()
            for k in [k for k, exp in self._revoked.items() if exp <= now]:
                del self._revoked[k]
            if len(self._revoked) < 10 * MAX_SESSIONS:
                self._revoked[sid] = now + SESSION_SECONDS

    def session_roles(self, sid: str) -> frozenset[str] | None:
        """The roles of a valid, unexpired, not revoked session value; else None."""
        body, _, mac = sid.rpartition(".")
        if not body or not hmac.compare_digest(mac.encode(), self._sign(body).encode()):
            return None
        roles_text, _, rest = body.partition(".")
        expires_text, _, _nonce = rest.partition(".")
        if not expires_text.isdigit() or int(expires_text) <= self.wall():
            return None
        with self._lock:
            if sid in self._revoked:
                return None
        roles = frozenset(r for r in roles_text.split(",") if r)
        return roles if roles <= ALL_ROLES else None

    def principal(self, request: Request) -> Principal | None:
        """The caller of `request` by bearer header, else by session cookie; None if neither."""
        header = request.headers.get("authorization", "")
        scheme, _, cred = header.partition(" ")
        if scheme.lower() == "bearer" and cred.strip():
            roles = self.roles_of_token(cred.strip())
            return None if roles is None else Principal(roles, "bearer")
        sid = request.cookies.get(COOKIE)
        if sid:
            roles = self.session_roles(sid)
            if roles is not None:
                return Principal(roles, "cookie", self._sign("csrf\0" + sid)[:32])
        return None

    def authorised_headers(self, headers: Mapping[bytes, bytes]) -> bool:
        """Whether raw ASGI headers carry a valid token or session (for the body limits)."""
        scheme, _, cred = headers.get(b"authorization", b"").partition(b" ")
        if scheme.lower() == b"bearer" and cred.strip():
            return self.roles_of_token(cred.strip().decode("latin-1")) is not None
        for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                return self.session_roles(value) is not None
        return False

    # -- refusals ------------------------------------------------------------------------
    def refuse(self, request: Request, status: int, field_name: str, message: str, error: str,
               principal: Principal | None) -> HTTPException:
        """Journal the refusal (bounded) and return the exception to raise. Never the token."""
        body = {"reason": "api_refused", "status": status, "method": request.method,
                "path": request.url.path[:120], "error": error, "field": field_name,
                "roles": sorted(principal.roles) if principal else [],
                "via": principal.via if principal else None}
        now = self.clock()
        with self._lock:
            self._window[:] = [t for t in self._window if t > now - REFUSAL_WINDOW_S]
            journal = len(self._window) < REFUSALS_PER_WINDOW
            if journal:
                self._window.append(now)
            else:
                self.unjournaled += 1
        if journal:
            self.journal_refusal(body)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return HTTPException(status, {"field": field_name, "message": message, "error": error}, headers=headers)

    def check(self, request: Request, role: str | None) -> Principal:
        """The caller, if they hold `role` (None: any role); raises 401/403 (journaled)."""
        p = self.principal(request)
        if p is None:
            raise self.refuse(request, 401, "Authorization", "the table's bearer token (or a signed-in session) "
                              "is required", "Unauthorized", None)
        if p.via == "cookie" and request.method not in ("GET", "HEAD", "OPTIONS"):
            origin = request.headers.get("origin")
            host = request.headers.get("host", "")
            if origin is not None and origin not in (f"http://{host}", f"https://{host}"):
                raise self.refuse(request, 403, "Origin", "a write from another site is refused", "CrossSite", p)
            given = request.headers.get(CSRF_HEADER, "")
            if p.csrf is None or not hmac.compare_digest(given.encode(), p.csrf.encode()):
                raise self.refuse(request, 403, CSRF_HEADER, "a write from the page needs the session's CSRF token",
                                  "CrossSite", p)
        if role is not None and role not in p.roles:
            raise self.refuse(request, 403, "role", f"this needs the {role} role (you have: "
                              f"{', '.join(sorted(p.roles)) or 'none'})", "Forbidden", p)
        return p

    def need(self, role: str | None) -> Callable[[Request], Principal]:
        """A FastAPI dependency: the caller, who must hold `role` (None: any role)."""
        if role is not None and role not in ALL_ROLES:
            raise ValueError(role)

        def dependency(request: Request) -> Principal:
            return self.check(request, role)
        return dependency


__all__ = ["ALL_ROLES", "COOKIE", "CSRF_HEADER", "Guard", "Principal", "ROLES", "SESSION_SECONDS"]
