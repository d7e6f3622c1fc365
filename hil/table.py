"""The table controller's side of the daemon: its HTTP API and its event stream.

`TableClient` is what a table controller would be: it opens rounds, places wagers, sends
decisions and reads rounds through the daemon's API (docs/api.md), and follows the event
stream (`GET /events`) on a thread, reconnecting with `?after=` after a daemon restart so
no event is missed or repeated. The bench reads everything it reports from here.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import httpx


class ApiError(RuntimeError):
    """The daemon refused a request (4xx/5xx); the message names the field it named."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        super().__init__(f"{method} {path}: {status} {body}")
        self.status = status
        self.body = body


class BenchTimeout(TimeoutError):
    """Something the bench waited for did not happen in time."""


@dataclass(frozen=True)
class Event:
    """One event from the daemon's stream."""

    id: int
    type: str
    round_id: str | None
    data: dict[str, Any]


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.02) -> Any:
    """Poll `predicate` until it returns a true value (returned) or `timeout` s pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise BenchTimeout(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


class TableClient:
    """The daemon's API at `base_url`, with the table's bearer `token`."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self.token = token
        self._http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=15.0)
        self._cond = threading.Condition()
        self._events: list[Event] = []
        self._last_id = -1
        self._stop = False
        self._stream_thread: threading.Thread | None = None

    # --- requests ------------------------------------------------------------------------

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One API call; returns the JSON body or raises ApiError."""
        r = self._http.request(method, path, json=body)
        if r.status_code >= 300:
            raise ApiError(method, path, r.status_code, r.text)
        data: dict[str, Any] = r.json()
        return data

    def try_status(self) -> dict[str, Any] | None:
        """GET /status, or None while the daemon does not answer."""
        try:
            return self.request("GET", "/status")
        except (httpx.HTTPError, ApiError):
            return None

    def status(self) -> dict[str, Any]:
        """GET /status."""
        return self.request("GET", "/status")

    def round(self, round_id: str) -> dict[str, Any]:
        """GET /rounds/{id}: the round's state."""
        return self.request("GET", f"/rounds/{round_id}")

    def export(self, round_id: str) -> dict[str, Any]:
        """GET /rounds/{id}/export: the round in `cardshoe settle`'s format."""
        return self.request("GET", f"/rounds/{round_id}/export")

    # --- the event stream ----------------------------------------------------------------

    def follow(self) -> None:
        """Start following the event stream from its beginning (on a thread)."""
        if self._stream_thread is None:
            self._stream_thread = threading.Thread(target=self._follow, name="hil-events", daemon=True)
            self._stream_thread.start()

    @property
    def last_event_id(self) -> int:
        """The id of the last event received."""
        with self._cond:
            return self._last_id

    def events(self, after: int = -1, type: str | None = None) -> list[Event]:  # noqa: A002
        """Events received so far with id > `after` (of `type`, when given)."""
        with self._cond:
            return [e for e in self._events if e.id > after and (type is None or e.type == type)]

    def wait_event(self, match: Callable[[Event], bool], after: int, timeout: float, what: str) -> Event:
        """The first event after id `after` that `match`es; BenchTimeout otherwise."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for e in self._events:
                    if e.id > after and match(e):
                        return e
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BenchTimeout(f"timed out after {timeout:g} s waiting for the event: {what}")
                self._cond.wait(min(left, 0.2))

    def close(self) -> None:
        """Stop following and close the connection."""
        self._stop = True
        self._http.close()
        if self._stream_thread is not None:
            self._stream_thread.join(timeout=2)

    def _follow(self) -> None:
        while not self._stop:
            try:
                with httpx.Client(base_url=self.base_url, headers={"Authorization": f"Bearer {self.token}"},
                                  timeout=httpx.Timeout(5.0, read=30.0)) as client:
                    with client.stream("GET", "/events", params={"after": self.last_event_id}) as resp:
                        if resp.status_code != 200:
                            time.sleep(0.2)
                            continue
                        self._read(resp.iter_lines())
            except httpx.HTTPError:
                pass  # the daemon is down or restarting: come back with ?after=
            if not self._stop:
                time.sleep(0.1)

    def _read(self, lines: Any) -> None:
        etype = ""
        for line in lines:
            if self._stop:
                return
            if line.startswith("event:"):
                etype = line[6:].strip()
            elif line.startswith("data:"):
                payload = json.loads(line[5:])
                event = Event(id=int(payload["id"]), type=etype, round_id=payload.get("round_id"),
                              data=payload.get("data") or {})
                with self._cond:
                    if event.id > self._last_id or event.id < 0:
                        self._events.append(event)
                        self._last_id = max(self._last_id, event.id)
                        self._cond.notify_all()
