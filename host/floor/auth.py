"""Who may do what on the floor (issue 21 item 1): a credential per table, and per reader role.

- `table`: one per table, named in the floor's file (`[tables.NAME] token_file`). It ships its
  own table's journal (every stream `NAME.JOURNAL_ID` of it), settles its own rounds on the
  link the file gives it, withdraws its own rounds (reading 73: a void at the table, by a
  supervisor there), and reads what it needs to ship (its high-water mark and chain values).
  Nothing of another table, nothing else.
- `pit` and `surveillance`: read-only. The pit reads the links, the hits, the tables, the
  alarms and the round search, where a round still in play shows no cards (a hole card is not
  the pit's to see before it is turned); surveillance reads everything, the tables' journal
  entries included.
- `supervisor` (the floor supervisor): the pit's reads, and the floor's changes that are no
  table's: configuring a link (`PUT /links/{link}`), withdrawing any table's round (a table
  that cannot ask itself), clearing an alarm after looking at it.

A token is at least 16 characters, compared in constant time against every token the floor
knows. Tokens come from files readable by their owner only (`cardshoe.daemon.config.
read_token_file`). No token grants every role: there is no all-roles token on the floor.
"""

from __future__ import annotations

import hmac
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from fastapi import HTTPException, Request

__all__ = ["Credential", "FloorGuard", "READER_ROLES", "ROLES", "stream_of_table"]

log = logging.getLogger("cardshoe.floor.auth")

ROLES = ("table", "pit", "surveillance", "supervisor")
READER_ROLES = frozenset({"pit", "surveillance", "supervisor"})

#: A table stream's key: the table's name, a dot, its journal's id (INTERFACES.md).
_JOURNAL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def stream_of_table(stream: str, table: str) -> bool:
    """Whether `stream` is a journal of table `table` (`TABLE.JOURNAL_ID`)."""
    return stream.startswith(table + ".") and _JOURNAL_ID.fullmatch(stream[len(table) + 1:]) is not None


@dataclass(frozen=True)
class Credential:
    """Who a request comes from: a role, and for `table` the table's name."""

    role: str
    table: str | None = None

    def owns(self, stream: str) -> bool:
        """Whether this is the credential of the table `stream` is a journal of."""
        return self.role == "table" and self.table is not None and stream_of_table(stream, self.table)

    def __str__(self) -> str:
        return f"table {self.table}" if self.role == "table" else self.role


class FloorGuard:
    """The floor's tokens: (token, credential) pairs; `check` makes the 401/403 refusals."""

    def __init__(self, tokens: Sequence[tuple[str, Credential]]) -> None:
        for token, cred in tokens:
            if len(token) < 16:
                raise ValueError(f"{cred}: a token of at least 16 characters")
            if cred.role not in ROLES:
                raise ValueError(f"role {cred.role!r} unknown (known: {', '.join(ROLES)})")
        seen: dict[str, Credential] = {}
        for token, cred in tokens:
            if token in seen and seen[token] != cred:
                raise ValueError(f"one token given to both {seen[token]} and {cred}: each needs its own")
            seen[token] = cred
        self._tokens = tuple((t.encode(), c) for t, c in tokens)
        self._lock = threading.Lock()
        self._refused_window: list[float] = []
        self.refused = 0

    @classmethod
    def from_mapping(cls, tokens: Mapping[str, Credential]) -> FloorGuard:
        """A guard from token -> credential."""
        return cls(list(tokens.items()))

    def credential(self, token: str) -> Credential | None:
        """The credential a token stands for, or None (every token compared, in constant time)."""
        found: Credential | None = None
        given = token.encode()
        for tok, cred in self._tokens:
            if hmac.compare_digest(given, tok):
                found = cred
        return found

    def of_headers(self, authorization: str) -> Credential | None:
        scheme, _, cred = authorization.partition(" ")
        if scheme.lower() != "bearer" or not cred.strip():
            return None
        return self.credential(cred.strip())

    def authorised_headers(self, headers: Mapping[bytes, bytes]) -> bool:
        """Whether raw ASGI headers carry a known token (for the body limits)."""
        return self.of_headers(headers.get(b"authorization", b"").decode("latin-1")) is not None

    def refuse(self, request: Request, status: int, field: str, message: str, error: str,
               cred: Credential | None) -> HTTPException:
        """Log the refusal (at most 60 a minute, the rest counted) and return it to raise."""
        now = time.monotonic()
        with self._lock:
            self.refused += 1
            self._refused_window[:] = [t for t in self._refused_window if t > now - 60]
            say = len(self._refused_window) < 60
            if say:
                self._refused_window.append(now)
        if say:
            log.warning("floor API refused %s %s (%s) to %s: %s", request.method, request.url.path[:120], status,
                        cred or "no credential", message)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return HTTPException(status, {"field": field, "message": message, "error": error}, headers=headers)

    def check(self, request: Request, roles: frozenset[str]) -> Credential:
        """The caller, if their credential's role is one of `roles`; raises 401/403."""
        cred = self.of_headers(request.headers.get("authorization", ""))
        if cred is None:
            raise self.refuse(request, 401, "Authorization", "a floor token is required (Authorization: Bearer)",
                              "Unauthorized", None)
        if cred.role not in roles:
            raise self.refuse(request, 403, "role", f"this needs the {' or '.join(sorted(roles))} role (you are "
                              f"{cred})", "Forbidden", cred)
        return cred

    def own(self, request: Request, cred: Credential, stream: str, also: frozenset[str] = frozenset()) -> None:
        """Refuse (403) a table credential acting on another table's stream; roles in `also`
        may act on any table's."""
        if cred.role in also or cred.owns(stream):
            return
        raise self.refuse(request, 403, "table", f"{stream} is not a journal of {cred}: a table's credential ships, "
                          "settles and withdraws for that table alone", "Forbidden", cred)
