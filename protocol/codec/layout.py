"""`struct` layouts derived at import from the construct declarations of `spec`.

The construct Structs of `spec` stay the one declaration of the format (and the reference
decoder, `Receiver(reference=True)`). Parsing every frame through them costs ~80% of the
host's decode time, so the hot path uses `struct` formats *derived from them here*, at
import: each declaration is walked field by field (FormatField, Enum, Const, Rebuild,
Bytes of a fixed size; Check and Terminated take no bytes) into a format string, and the
result is checked against construct's own `sizeof()`. The payload rules stay the
declarations' `Check` functions: the fast path evaluates those same functions on the
unpacked values. A declaration this walker does not understand (NEW_SHOE's Array of
manifest entries) gets no layout and is parsed and built by construct alone.

tests/protocol/test_protocol_fastpath.py compares the two paths on every golden vector and
on hypothesis-generated frames, valid and damaged. Parsing every frame through construct left
the host at ~0.06x a plain `struct` decoder, which is why this module exists;
`cardshoe bench protocol` prints both paths against a minimal struct decoder in one process.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable

from construct import (
    Bytes,
    Check,
    Const,
    Enum,
    FormatField,
    Rebuild,
    Renamed,
    Struct,
    Terminated,
    evaluate,
)

from .spec import CRC_SIZE, FRAME, HEADER, HEADER_FIELDS, HEADER_SIZE, PAYLOADS, MessageType


class Ctx(dict[str, Any]):
    """Values as construct's expressions read them (`ctx.name` or `ctx["name"]`), without
    building a construct Container (for building; parsing uses the message itself)."""

    __getattr__ = dict.__getitem__


class _Probe(dict[str, Any]):
    """Records which fields an expression reads; every field reads as 7."""

    def __missing__(self, name: str) -> int:
        self.setdefault("__read__", []).append(name)
        return 7

    __getattr__ = dict.__getitem__


def _length_field(expr: Any) -> str | None:
    """The field name when a length expression is exactly `this.<field>`, else None."""
    probe = _Probe()
    try:
        value = evaluate(expr, probe)
    except Exception:  # noqa: BLE001 - any other expression is evaluated the slow way
        return None
    read = probe.get("__read__", [])
    return read[0] if value == 7 and len(read) == 1 else None


@dataclass(frozen=True)
class Layout:
    """A declaration as `struct`: the fixed-size prefix, then at most one Bytes tail whose
    length is a prefix field. Its Check, Const and Rebuild parts are kept as declared, so
    the fast path applies the declaration's own rules."""

    fmt: struct.Struct
    """The fixed-size prefix, little-endian."""
    names: tuple[str, ...]
    """Field names of the prefix, in order."""
    checks: tuple[Callable[[Any], Any], ...]
    """The declaration's Check functions, in order (all of them follow the prefix fields
    they read, so evaluating them after unpacking the prefix is construct's order)."""
    consts: tuple[tuple[str, Any], ...]
    """(field, value) of the Const fields."""
    tail: str | None
    """Name of a trailing Bytes(this.<length field>) field, if any."""
    tail_length: Any
    """The tail's length expression (a construct `this` path), evaluated on the Ctx."""
    tail_field: str | None
    """The prefix field that is the tail's length, when the expression is `this.<field>`."""
    rebuilds: tuple[tuple[str, Any], ...]
    """(field, construct expression) of Rebuild fields: computed from the values when building."""
    terminated: bool
    """The declaration ends with Terminated: no byte may follow."""
    sized: tuple[tuple[str, int], ...]
    """(field, size) of the fixed-size Bytes fields of the prefix."""


def _unwrap(sub: Any) -> tuple[str | None, Any]:
    name = None
    while isinstance(sub, Renamed):
        name = name or sub.name
        sub = sub.subcon
    return name, sub


def _field_fmt(sub: Any) -> str | None:
    """The struct code of a fixed-size scalar construct, or None."""
    if isinstance(sub, FormatField):
        fmt: str = sub.fmtstr
        if fmt[0] != "<" or len(fmt) != 2:
            return None
        return fmt[1]
    if isinstance(sub, (Enum, Const, Rebuild)):
        return _field_fmt(sub.subcon)
    return None


def derive(decl: Any) -> Layout | None:
    """The Layout of a construct Struct, or None when it is not a fixed prefix plus an
    optional Bytes tail whose length is a field of the prefix."""
    if not isinstance(decl, Struct):
        return None
    fmt = "<"
    names: list[str] = []
    checks: list[Callable[[Any], Any]] = []
    consts: list[tuple[str, Any]] = []
    rebuilds: list[tuple[str, Any]] = []
    tail: str | None = None
    tail_length: Any = None
    terminated = False
    sized: list[tuple[str, int]] = []
    for raw_sub in decl.subcons:
        name, sub = _unwrap(raw_sub)
        if terminated or tail is not None and sub is not Terminated:
            return None
        if sub is Terminated:
            terminated = True
            continue
        if isinstance(sub, Check):
            if not callable(sub.func):
                return None
            checks.append(sub.func)
            continue
        if name is None:
            return None
        code = _field_fmt(sub)
        if code is not None:
            fmt += code
            names.append(name)
            if isinstance(sub, Const):
                consts.append((name, sub.value))
            if isinstance(sub, Rebuild):
                rebuilds.append((name, sub.func))
            continue
        if isinstance(sub, Bytes):
            if isinstance(sub.length, int):
                fmt += f"{sub.length}s"
                names.append(name)
                sized.append((name, sub.length))
                continue
            tail, tail_length = name, sub.length
            continue
        return None
    tail_field = _length_field(tail_length) if tail is not None else None
    if tail is not None and tail_field not in names:
        return None
    return Layout(struct.Struct(fmt), tuple(names), tuple(checks), tuple(consts), tail, tail_length,
                  tail_field, tuple(rebuilds), terminated, tuple(sized))


def _header_layout() -> struct.Struct:
    fields = derive(HEADER_FIELDS)
    checked = derive(HEADER)
    if fields is None or checked is None or fields.fmt.format != checked.fmt.format or fields.names != checked.names:
        raise AssertionError("HEADER and HEADER_FIELDS declare different layouts")
    if fields.fmt.size != HEADER_SIZE or HEADER.sizeof() != HEADER_SIZE or HEADER_FIELDS.sizeof() != HEADER_SIZE:
        raise AssertionError(f"header layout {fields.fmt.format} is not {HEADER_SIZE} bytes")
    if fields.names != ("version", "type", "flags", "shoe", "boot", "seq", "length"):
        raise AssertionError(f"header fields {fields.names} are not those of FrameHeader")
    return fields.fmt


HEADER_STRUCT = _header_layout()
"""`<BBBIIIH`, derived from spec.HEADER (SPEC section 2)."""

HEADER_VERSION: int = dict(derive(HEADER).consts)["version"]  # type: ignore[union-attr]
"""The Const of HEADER's version field: anything else is bad_version."""


def _crc_layout() -> struct.Struct:
    crc = next((s for s in FRAME.subcons if _unwrap(s)[0] == "crc"), None)
    fmt = _field_fmt(_unwrap(crc)[1].checksumfield) if crc is not None else None
    if fmt is None or struct.calcsize("<" + fmt) != CRC_SIZE:
        raise AssertionError("FRAME's crc is not a 4-byte integer")
    return struct.Struct("<" + fmt)


CRC_STRUCT = _crc_layout()
"""`<I`, the trailing CRC of FRAME."""


def _payload_layouts() -> dict[int, Layout]:
    out: dict[int, Layout] = {}
    for mtype, decl in PAYLOADS.items():
        layout = derive(decl)
        if layout is None:
            continue
        if layout.tail is None:
            # construct's own sizes (Terminated has none: it reads nothing).
            size = sum(sub.sizeof() for sub in decl.subcons if _unwrap(sub)[1] is not Terminated)
            if size != layout.fmt.size:
                raise AssertionError(f"{MessageType(mtype).name}: layout {layout.fmt.format} is not "
                                     f"construct's {size} bytes")
        out[int(mtype)] = layout
    return out


PAYLOAD_LAYOUTS: dict[int, Layout] = _payload_layouts()
"""Message type -> its payload Layout, for the types the walker understands."""


def parse_fast(layout: Layout, cls: type[Any], derived: tuple[str, ...], payload: bytes) -> Any:
    """An instance of `cls` holding the payload's values by `layout` as attributes, its
    declaration's Const and Check rules passed and nothing left over; None when the
    payload breaks any rule (the caller then asks construct, which names the rule).

    The instance is made without its __init__ (a frozen dataclass's sets each field through
    object.__setattr__, which costs more than the parse) and serves as the context the
    Check functions read; the `derived` fields (CARD's raw_len) are removed after them.
    Only for values checked here, held to construct's results by the tests.
    """
    size = layout.fmt.size
    n = len(payload)
    if n < size:
        return None
    obj: Any = object.__new__(cls)
    values: dict[str, Any] = obj.__dict__
    values.update(zip(layout.names, layout.fmt.unpack_from(payload)))
    for name, value in layout.consts:
        if values[name] != value:
            return None
    try:
        for check in layout.checks:
            if not check(obj):
                return None
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    tail = layout.tail
    if tail is not None:
        end = size + values[layout.tail_field]  # type: ignore[index]
        if n < end:
            return None
        values[tail] = payload[size:end]
        size = end
    if layout.terminated and n != size:
        return None
    for name in derived:
        del values[name]
    return obj


def build_fast(layout: Layout, values: dict[str, Any]) -> bytes | None:
    """The payload of `values` by `layout`; None when construct should decide (a value out
    of range or of another type, a check that fails): it raises the error that names it."""
    ctx = Ctx(values)
    if layout.tail is not None:
        tail = ctx.get(layout.tail)
        if type(tail) is not bytes:
            return None
    for name, func in layout.rebuilds:
        ctx[name] = evaluate(func, ctx)
    for name, value in layout.consts:
        if ctx.get(name, value) != value:
            return None
        ctx[name] = value
    try:
        for check in layout.checks:
            if not check(ctx):
                return None
        args = [ctx[name] for name in layout.names]
    except (KeyError, TypeError, ValueError):
        return None
    for name, size in layout.sized:
        value = ctx[name]
        if type(value) is not bytes or len(value) != size:
            return None  # struct would pad or cut it; construct refuses it
    try:
        data = layout.fmt.pack(*args)
    except struct.error:
        return None
    if layout.tail is not None:
        tail = ctx[layout.tail]
        if evaluate(layout.tail_length, ctx) != len(tail):
            return None
        data += tail
    return data
