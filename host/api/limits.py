"""Bounds on API request bodies, enforced before FastAPI parses them (docs/api.md, "Limits").

FastAPI reads a body with the standard `json` module: it takes a duplicate key's last
value, and it accepts `NaN`, `Infinity` and `1e999`, which then break the error response
itself (a 500). It also reads a body of any size. This ASGI middleware reads the body
first, at most `API_BODY.max_bytes` of it (else `413`), and for an authorised request
checks it with `cardshoe.strictjson` (else `422` naming the field); an unauthorised one
is left to the endpoint's `401`. The body is then handed on unchanged.
"""

from __future__ import annotations

import hmac
import json
from typing import Any, Awaitable, Callable, MutableMapping

from cardshoe.strictjson import API_BODY, JSONInputError, Limits
from cardshoe.strictjson import loads as strict_loads

__all__ = ["BodyLimits"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimits:
    """ASGI middleware: refuse a request body over the limits with a 4xx naming the field."""

    def __init__(self, app: ASGIApp, token: str | None, limits: Limits = API_BODY,
                 authorised: Callable[[dict[bytes, bytes]], bool] | None = None) -> None:
        self.app = app
        self._token = None if token is None else token.encode()
        self.limits = limits
        # Who counts as authorised (role tokens, session cookies); default: the one token.
        self._check = authorised

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH", "DELETE"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        limit = self.limits.max_bytes
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _answer(send, 413, "body", f"Content-Length {declared.decode('latin-1')[:20]} is over the "
                          f"limit of {limit} bytes", "PayloadTooLarge")
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before sending its body
            body += message.get("body", b"")
            if len(body) > limit:
                await _answer(send, 413, "body", f"over the limit of {limit} bytes", "PayloadTooLarge")
                return
            if not message.get("more_body", False):
                break
        if body.strip() and self._authorised(headers):
            try:
                strict_loads(bytes(body), self.limits)
            except JSONInputError as exc:
                await _answer(send, 422, exc.field or "body", exc.message, "JSONInputError")
                return
        handed = False

        async def replay() -> Message:
            nonlocal handed
            if not handed:
                handed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _authorised(self, headers: dict[bytes, bytes]) -> bool:
        if self._check is not None:
            return self._check(headers)
        scheme, _, credentials = headers.get(b"authorization", b"").partition(b" ")
        return (self._token is not None and scheme.lower() == b"bearer"
                and hmac.compare_digest(credentials.strip(), self._token))


async def _answer(send: Send, status: int, field: str, message: str, error: str) -> None:
    """A 4xx in the API's refusal form: {"detail": {"field", "message", "error"}}."""
    payload = json.dumps({"detail": {"field": field, "message": message, "error": error}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})
