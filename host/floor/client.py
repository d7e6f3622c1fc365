"""The table's end of the floor: an HTTP client of `cardshoe floor`, and whether it answers.

Standard library only (`urllib`), with a short timeout, so a floor that does not answer
costs the table a bounded wait and never a hung thread. `FloorClient.online` is what the
table's controls ask before taking a progressive wager: the floor answered within the last
`offline_after_s` seconds and its last exchange did not fail.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .store import ShippedEntry

__all__ = ["FloorUnreachable", "FloorRefused", "FloorClient", "FloorState"]


class FloorUnreachable(ConnectionError):
    """The floor did not answer (network, timeout, the floor's store down: HTTP 503)."""


class FloorRefused(ValueError):
    """The floor answered with a refusal (4xx); `field` and `message` say why, `error` its type."""

    def __init__(self, status: int, field_name: str, message: str, error: str = "") -> None:
        super().__init__(f"{field_name}: {message}")
        self.status = status
        self.field = field_name
        self.message = message
        self.error = error


#: Refusals that are an alarm of this table's journal on the floor (shown at the table).
JOURNAL_ALARMS = ("JournalRefused", "StreamAlarmed", "FramesUnverified")


@dataclass
class FloorState:
    """What the table knows of the floor, for its status and page."""

    online: bool = False
    last_ok_ns: int = 0
    last_error: str | None = "not contacted yet"
    pool: int | None = None
    """The link's pool as the floor last said ("as displayed")."""
    pool_at_ns: int = 0
    high_water: int = 0
    """The highest entry id the floor holds of this table."""
    alarm: str | None = None
    """The floor refuses this table's journal (a gap, a break, a journal restored or changed,
    a frame that does not verify): what it said, until an exchange succeeds again."""


class FloorClient:
    """One table's client of the floor API at `url` (e.g. http://floor:8700), as table `table`
    of link `link` (None: a table with no linked progressive, that only ships its journal)."""

    def __init__(self, url: str, token: str, table: str, link: str | None, game: str | None = None, *,
                 timeout_s: float = 3.0, offline_after_s: float = 6.0, journal_id: str | None = None,
                 public_key: bytes | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.name = table
        # The floor's Ed25519 public key ([floor] public_key): every assignment must carry its
        # signature before the table settles with it (None: the signature is journaled unchecked).
        self.public_key = public_key
        # The table's name on the floor: with its journal's id, so a table's next journal (a new
        # gaming day: entry ids and round ids from 1 again) is a stream of its own, never taken
        # for what the floor already holds.
        self.table = table if journal_id is None else f"{table}.{journal_id}"
        self.link = link
        self.game = game
        self.timeout_s = timeout_s
        self.offline_after_s = offline_after_s
        self.state = FloorState()
        self._lock = threading.Lock()

    def for_journal(self, journal_id: str) -> FloorClient:
        """The same table's client for its journal `journal_id` (the next gaming day's, issue 25):
        its own stream on the floor, the same url, token, link and key."""
        return FloorClient(self.url, self.token, self.name, self.link, self.game, timeout_s=self.timeout_s,
                           offline_after_s=self.offline_after_s, journal_id=journal_id, public_key=self.public_key)

    # -- transport ---------------------------------------------------------------------
    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {self.token}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                answer = json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode(errors="replace")
            if exc.code >= 500 or exc.code == 429:
                self._failed(f"floor answered {exc.code}: {text[:200]}")
                raise FloorUnreachable(f"floor answered {exc.code}: {text[:200]}") from None
            self._ok()
            try:
                detail = json.loads(text).get("detail", {})
            except ValueError:
                detail = {}
            if not isinstance(detail, dict):
                detail = {"message": str(detail)}
            refusal = FloorRefused(exc.code, str(detail.get("field", "floor")), str(detail.get("message", text[:200])),
                                   str(detail.get("error", "")))
            if refusal.error in JOURNAL_ALARMS:
                with self._lock:
                    self.state.alarm = refusal.message
            raise refusal from None
        except (OSError, ValueError) as exc:  # URLError, timeouts, resets, a garbled answer
            self._failed(f"floor unreachable: {exc}")
            raise FloorUnreachable(f"floor unreachable at {self.url}: {exc}") from None
        self._ok()
        return answer

    def _ok(self) -> None:
        with self._lock:
            self.state.online = True
            self.state.last_ok_ns = time.monotonic_ns()
            self.state.last_error = None

    def _failed(self, message: str) -> None:
        with self._lock:
            self.state.online = False
            self.state.last_error = message

    @property
    def online(self) -> bool:
        """The floor answered lately and its last exchange did not fail."""
        with self._lock:
            fresh = time.monotonic_ns() - self.state.last_ok_ns < int(self.offline_after_s * 1e9)
            return self.state.online and fresh

    def status(self) -> dict[str, Any]:
        """The floor as the table's status shows it."""
        online = self.online
        with self._lock:
            s = self.state
            message = None
            if not online:
                message = ("the floor is unreachable: progressive wagers are refused and none is settled until it "
                           f"returns ({s.last_error or 'no answer lately'}); base games go on")
            return {"url": self.url, "link": self.link, "online": online, "pool": s.pool if online else None,
                    "last_pool": s.pool, "high_water": s.high_water, "last_error": s.last_error,
                    "message": message, "alarm": s.alarm, "table": self.table}

    # -- calls -------------------------------------------------------------------------
    def stream_info(self, stream: str | None = None) -> dict[str, Any]:
        """What the floor holds of this table's stream (or another of its journals): high_water,
        chain, known, parent, alarms."""
        answer: dict[str, Any] = self._call("GET", f"/tables/{stream or self.table}/high-water")
        if stream is None:
            with self._lock:
                self.state.high_water = int(answer["high_water"])
                self.state.alarm = _alarm_text(answer.get("alarms"))
        return answer

    def high_water(self) -> int:
        """The highest entry id of this table the floor holds."""
        return int(self.stream_info()["high_water"])

    def chain_at(self, stream: str, at: int) -> str | None:
        """The chain value of entry `at` of one of this table's streams as the floor holds it."""
        answer = self._call("GET", f"/tables/{stream}/chain?at={int(at)}")
        value = answer.get("chain")
        return value if isinstance(value, str) else None

    def fork(self, parent: str, at: int, chain: str) -> dict[str, Any]:
        """Open this journal's stream as continuing `parent` from entry `at` (a restored journal)."""
        answer: dict[str, Any] = self._call("POST", f"/tables/{self.table}/fork",
                                            {"parent": parent, "at": at, "chain": chain})
        return answer

    def ship(self, entries: Sequence[ShippedEntry], head: tuple[int, str | None] | None = None) -> int:
        """Send entries (in id order) with the journal's head (its last id and chain value);
        returns the floor's high-water mark after them. Also brings back the link's pool as
        displayed."""
        body: dict[str, Any] = {"link": self.link, "game": self.game, "entries": [e.to_json() for e in entries]}
        if head is not None:
            body["head"] = {"id": head[0], "chain": head[1]}
        answer = self._call("POST", f"/tables/{self.table}/entries", body)
        hwm = int(answer["high_water"])
        with self._lock:
            self.state.high_water = hwm
            self.state.alarm = _alarm_text(answer.get("alarms"))
            pool = answer.get("pool")
            if isinstance(pool, int):
                self.state.pool = pool
                self.state.pool_at_ns = time.monotonic_ns()
        return hwm

    def settle(self, round_id: str, entry: int, entries: Sequence[ShippedEntry] = ()) -> dict[str, Any]:
        """Ask the floor to assign round `round_id` its pool, as the journal holds it up to
        `entry` (its `settle_sent`); `entries` the journal's tail up to it not shipped yet.
        With the floor's public key, the answer must be signed by it (else FloorRefused)."""
        if self.link is None:
            raise FloorRefused(409, "link", "this table is on no link")
        answer: dict[str, Any] = self._call("POST", f"/links/{self.link}/settle",
                                            {"table": self.table, "round_id": round_id, "entry": entry,
                                             "entries": [e.to_json() for e in entries]})
        self.check_signed(answer, round_id)
        with self._lock:
            self.state.pool = int(answer["pool_after"])
            self.state.pool_at_ns = time.monotonic_ns()
            if entries:
                self.state.high_water = max(self.state.high_water, entries[-1].id)
        return answer

    def check_signed(self, answer: Mapping[str, Any], round_id: str) -> None:
        """Refuse an assignment that is not the floor's signed one for this table's round."""
        if self.public_key is None:
            return
        from .signing import verify_signed

        signed = answer.get("signed")
        problem = verify_signed(signed, self.public_key)
        if problem is None:
            said = dict(signed["assignment"])  # type: ignore[index]
            fields = ("link", "table", "round_id", "seq", "pool", "pool_after", "entry", "chain")
            if said.get("table") != self.table or said.get("round_id") != round_id or \
                    any(said.get(k) != answer.get(k) for k in fields):
                problem = "the signed assignment is not the answer's, or not of this table's round"
        if problem is not None:
            raise FloorRefused(502, "signed", f"the floor's answer is refused: {problem} ([floor] public_key)",
                               "FloorSignature")

    def withdraw(self, round_id: str) -> dict[str, Any] | None:
        """Before voiding a round sent for settlement with no answer heard: the floor's
        assignment of it (settle it with that), or None (the floor never assigned it and now
        never will: it may be voided)."""
        if self.link is None:
            raise FloorRefused(409, "link", "this table is on no link")
        answer: dict[str, Any] = self._call("POST", f"/links/{self.link}/withdraw",
                                            {"table": self.table, "round_id": round_id})
        assignment = answer.get("assignment")
        return assignment if answer.get("status") == "assigned" and isinstance(assignment, dict) else None


def _alarm_text(alarms: Any) -> str | None:
    """The first open alarm of the table's journal on the floor, as its message (None: none)."""
    if isinstance(alarms, list) and alarms and isinstance(alarms[0], dict):
        return f"the floor holds an alarm of this table's journal: {alarms[0].get('message')}"
    return None
