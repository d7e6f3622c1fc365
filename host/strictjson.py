"""Strict JSON reading for what arrives from outside: round files and API bodies.

The standard `json` module accepts things a money system must not: an object with the same
key twice (the last value silently wins, so `pair_plus` 1000 then 100000 would be settled
on 100000), `NaN`, `Infinity` and `1e999` (which no JSON writer can send back), integers
of any length, and nesting until the interpreter's stack runs out. :func:`loads` refuses
each of these, and anything over the :class:`Limits` it is given, with a
:class:`JSONInputError` whose ``field`` is the JSON path of the problem (``seats[0].wagers``;
empty for the document as a whole), so the caller can say in one line what was wrong.

The bounds are the caller's: the round file's are in docs/round-format.md, the API's in
docs/api.md.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["JSONInputError", "Limits", "loads", "ROUND_FILE", "API_BODY"]


class JSONInputError(ValueError):
    """JSON input that is refused; ``field`` is the JSON path at fault ("" for the document)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field or 'the document'}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Limits:
    """Bounds on one JSON document."""

    max_bytes: int
    """Size of the document in bytes (UTF-8)."""
    max_depth: int
    """Nesting of arrays and objects; the document's top-level value is depth 1."""
    max_string: int
    """Characters of any string, keys included."""
    max_digits: int
    """Digits of an integer literal (19 hold any signed 64-bit integer)."""
    max_items: int
    """Entries of any one array or object."""


ROUND_FILE = Limits(max_bytes=1 << 20, max_depth=16, max_string=1000, max_digits=19, max_items=1000)
"""The bounds of a round file (`cardshoe settle`, docs/round-format.md)."""

API_BODY = Limits(max_bytes=64 << 10, max_depth=8, max_string=256, max_digits=19, max_items=100)
"""The bounds of an HTTP API request body (docs/api.md)."""


# -- markers the decoder hooks leave for the walk, which knows the path --------------------
class _DuplicateKeys(dict[str, Any]):
    """An object that had ``key`` more than once."""

    def __init__(self, pairs: list[tuple[str, Any]], key: str) -> None:
        super().__init__(pairs)
        self.key = key


@dataclass(frozen=True)
class _LongInteger:
    digits: int


@dataclass(frozen=True)
class _NonFinite:
    text: str


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return _DuplicateKeys(pairs, key)
        seen.add(key)
    return dict(pairs)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _key_path(path: str, key: str) -> str:
    key = _short(key)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def loads(data: bytes | str, limits: Limits) -> Any:
    """Parse one JSON document within `limits`; raise JSONInputError naming the field.

    Refused: more than `max_bytes`, bytes that are not UTF-8, text that is not JSON, an
    object with a duplicate key, `NaN`/`Infinity`/`-Infinity` or a number too large for a
    double (`1e999`), an integer of more than `max_digits` digits, a string over
    `max_string` characters, an array or object over `max_items` entries, nesting deeper
    than `max_depth`.
    """
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if size > limits.max_bytes:
        raise JSONInputError("", f"{size} bytes, over the limit of {limits.max_bytes}")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_utf8(data, exc, limits) from None
    else:
        text = data

    def integer(digits: str) -> int | _LongInteger:
        n = len(digits) - digits.startswith("-")
        if n > limits.max_digits:
            return _LongInteger(n)
        return int(digits)

    def number(digits: str) -> float | _NonFinite:
        value = float(digits)
        return value if math.isfinite(value) else _NonFinite(_short(digits, 20))

    try:
        value = json.loads(text, object_pairs_hook=_object, parse_int=integer, parse_float=number,
                           parse_constant=_NonFinite)
    except RecursionError:
        raise JSONInputError(_deep_path(text, limits.max_depth),
                             f"nested deeper than {limits.max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise JSONInputError("", f"not JSON: {exc.msg} (line {exc.lineno} column {exc.colno})") from None
    _check(value, limits)
    return value


def _check(value: Any, limits: Limits) -> None:
    """Walk the parsed document in order; raise at the first value over a bound."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limits.max_depth:
                raise JSONInputError(path, f"nested deeper than {limits.max_depth} levels")
            if len(item) > limits.max_items:
                kind = "keys" if isinstance(item, dict) else "entries"
                raise JSONInputError(path, f"{len(item)} {kind}, over the limit of {limits.max_items}")
        if isinstance(item, _DuplicateKeys):
            raise JSONInputError(_key_path(path, item.key),
                                 "a duplicate key: given twice in one object, where each key may appear once")
        if isinstance(item, dict):
            children: list[tuple[Any, str, int]] = []
            for key, child in item.items():
                if len(key) > limits.max_string:
                    raise JSONInputError(_key_path(path, key),
                                         f"a key of {len(key)} characters, over the limit of {limits.max_string}")
                children.append((child, _key_path(path, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(reversed([(child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item)]))
        elif isinstance(item, str):
            if len(item) > limits.max_string:
                raise JSONInputError(path, f"a string of {len(item)} characters, over the limit of {limits.max_string}")
        elif isinstance(item, _LongInteger):
            raise JSONInputError(path, f"an integer of {item.digits} digits, over the limit of {limits.max_digits}")
        elif isinstance(item, _NonFinite):
            raise JSONInputError(path, f"{item.text} is not a finite number")


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def _deep_path(text: str, max_depth: int) -> str:
    """The JSON path where nesting first goes deeper than `max_depth` (for the message)."""
    # (path, expecting a key) per open container; only reached for a document too deep
    # to parse, so a token scan is affordable.
    stack: list[list[Any]] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            if len(stack) >= max_depth:
                break
            stack.append(["[" if token == "[" else "{", 0 if token == "[" else None, token == "{"])
        elif token in "]}":
            if stack:
                stack.pop()
        elif token == ",":
            if stack and stack[-1][0] == "[":
                stack[-1][1] += 1
            elif stack:
                stack[-1][2] = True
        elif token == ":":
            if stack:
                stack[-1][2] = False
        elif stack and stack[-1][0] == "{" and stack[-1][2]:
            try:
                stack[-1][1] = json.loads(token)
            except json.JSONDecodeError:
                stack[-1][1] = token
    path = ""
    for kind, key, _ in stack:
        if kind == "[":
            path = f"{path}[{key}]"
        elif key is not None:
            path = _key_path(path, str(key))
    return path


def _not_utf8(data: bytes, exc: UnicodeDecodeError, limits: Limits) -> JSONInputError:
    """Name the field holding the first byte that is not UTF-8, when the rest parses."""
    message = f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}"
    text = data.decode("utf-8", "surrogateescape")
    try:
        value = json.loads(text, object_pairs_hook=dict)
    except (RecursionError, json.JSONDecodeError):
        return JSONInputError("", message)
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if depth > limits.max_depth:
            break
        if isinstance(item, dict):
            children = []
            for key, child in item.items():
                if _escaped(key):
                    return JSONInputError(_key_path(path, key.encode("utf-8", "replace").decode()), message)
                children.append((child, _key_path(path, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(reversed([(child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item)]))
        elif isinstance(item, str) and _escaped(item):
            return JSONInputError(path, message)
    return JSONInputError("", message)


def _escaped(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)
