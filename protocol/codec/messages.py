"""Typed values for the messages of SPEC section 5, built and parsed by `spec.PAYLOADS`.

Each message is a frozen dataclass whose fields have the names of the SPEC's table
(derived fields such as CARD's `raw_len` and NEW_SHOE's `count` are not stored: they
follow from `raw` and `entries`). `TYPE` names its message type.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from construct import ConstructError

from .errors import PayloadError
from .layout import PAYLOAD_LAYOUTS, build_fast, parse_fast
from .spec import MAINTENANCE_MAGIC, PAYLOADS, MessageType, as_int


@dataclass(frozen=True)
class Hello:
    """HELLO: the first frame of every boot of the shoe."""

    TYPE: ClassVar[MessageType] = MessageType.HELLO
    fw_major: int
    fw_minor: int
    fw_patch: int
    fw_hash: bytes
    reset_cause: int
    readers: int
    shoe_no: int
    deck_id: int
    dealt: int
    integrity: int
    faults: int


@dataclass(frozen=True)
class Card:
    """CARD: a card left the shoe with an ID."""

    TYPE: ClassVar[MessageType] = MessageType.CARD
    shoe_no: int
    index: int
    card_deck: int
    code: int
    method: int
    retries: int
    flags: int
    t_ms: int
    raw: bytes


@dataclass(frozen=True)
class Unread:
    """UNREAD: a card left the shoe and no ID was read."""

    TYPE: ClassVar[MessageType] = MessageType.UNREAD
    shoe_no: int
    index: int
    t_ms: int


@dataclass(frozen=True)
class DeckStatus:
    """DECK_STATUS: counts and integrity of the loaded deck."""

    TYPE: ClassVar[MessageType] = MessageType.DECK_STATUS
    shoe_no: int
    deck_id: int
    reason: int
    dealt: int
    remaining: int
    integrity: int
    duplicates: int
    foreign: int
    unread: int
    missing: int
    missing_map: bytes


@dataclass(frozen=True)
class Fault:
    """FAULT: a fault raised (active=1) or cleared (active=0)."""

    TYPE: ClassVar[MessageType] = MessageType.FAULT
    code: int
    active: int
    detail: int
    t_ms: int


@dataclass(frozen=True)
class Key:
    """KEY: a dealer key press (NEW_ROUND, DEAL_COMPLETE, EXPOSURE, END_SHOE)."""

    TYPE: ClassVar[MessageType] = MessageType.KEY
    key: int
    arg: int
    t_ms: int


@dataclass(frozen=True)
class Heartbeat:
    """HEARTBEAT: the shoe is alive and has nothing unacknowledged to resend."""

    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT
    t_ms: int
    dealt: int
    outbox: int


@dataclass(frozen=True)
class Reply:
    """REPLY: the shoe's answer to the host command (epoch, seq).

    `oldest` is the first seq of the shoe's current boot that its outbox still held when
    it made this REPLY (this REPLY's own seq when it held nothing older): every frame of
    that boot before it was acknowledged and has left the shoe (SPEC 3.4 item 6).
    """

    TYPE: ClassVar[MessageType] = MessageType.REPLY
    epoch: int
    seq: int
    status: int
    detail: int
    oldest: int


@dataclass(frozen=True)
class Crash:
    """CRASH: why the shoe's last boot reset (an exception escaped its boot or main loop).

    Sent once, right after the HELLO of the boot that follows (whose `reset_cause` is 6).
    `cmd_type`, `cmd_epoch` and `cmd_seq` name the host command the shoe was executing
    (type 0: none); `count` is the crashes in a row; `text` the exception's class and
    where it was raised, ASCII padded with NULs (SPEC 5)."""

    TYPE: ClassVar[MessageType] = MessageType.CRASH
    boot: int
    where: int
    error: int
    count: int
    cmd_type: int
    cmd_epoch: int
    cmd_seq: int
    text: bytes


@dataclass(frozen=True)
class Ack:
    """ACK: every shoe frame of `boot` up to and including `seq` is journaled."""

    TYPE: ClassVar[MessageType] = MessageType.ACK
    boot: int
    seq: int


@dataclass(frozen=True)
class ResendFrom:
    """RESEND_FROM: the host saw a gap; resend from (boot, seq)."""

    TYPE: ClassVar[MessageType] = MessageType.RESEND_FROM
    boot: int
    seq: int


@dataclass(frozen=True)
class ManifestEntry:
    """One card of an RFID deck manifest: its code and its tag's UID."""

    code: int
    uid: bytes


@dataclass(frozen=True)
class NewShoe:
    """NEW_SHOE: load a deck and start a shoe session (one part of the manifest)."""

    TYPE: ClassVar[MessageType] = MessageType.NEW_SHOE
    shoe_no: int
    deck_id: int
    scheme: int
    part: int
    parts: int
    entries: tuple[ManifestEntry, ...] = ()


@dataclass(frozen=True)
class Config:
    """CONFIG: the shoe's timings."""

    TYPE: ClassVar[MessageType] = MessageType.CONFIG
    heartbeat_ms: int
    resend_ms: int
    resend_max_ms: int
    debounce_ms: int


@dataclass(frozen=True)
class Time:
    """TIME: wall time, so the shoe can relate t_ms to it."""

    TYPE: ClassVar[MessageType] = MessageType.TIME
    unix_ms: int


@dataclass(frozen=True)
class Ping:
    """PING: answered by REPLY."""

    TYPE: ClassVar[MessageType] = MessageType.PING
    nonce: int


@dataclass(frozen=True)
class Maintenance:
    """MAINTENANCE: stop streaming and return to the REPL."""

    TYPE: ClassVar[MessageType] = MessageType.MAINTENANCE
    magic: int = MAINTENANCE_MAGIC


@dataclass(frozen=True)
class Clear:
    """CLEAR: a supervisor clears integrity bits and faults."""

    TYPE: ClassVar[MessageType] = MessageType.CLEAR
    integrity_mask: int
    fault_mask: int


@dataclass(frozen=True)
class CardsFrom:
    """CARDS_FROM: resend the logged cards of shoe session `shoe_no` from `index`."""

    TYPE: ClassVar[MessageType] = MessageType.CARDS_FROM
    shoe_no: int
    index: int


Message = Union[
    Hello, Card, Unread, DeckStatus, Fault, Key, Heartbeat, Reply, Crash,
    Ack, ResendFrom, NewShoe, Config, Time, Ping, Maintenance, Clear, CardsFrom,
]
"""Any message of SPEC section 5."""

MESSAGE_CLASSES: dict[MessageType, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        Hello, Card, Unread, DeckStatus, Fault, Key, Heartbeat, Reply, Crash,
        Ack, ResendFrom, NewShoe, Config, Time, Ping, Maintenance, Clear, CardsFrom,
    )
}


def _plain(value: Any) -> Any:
    """Parsed construct values as plain Python: Enum names back to ints, no Containers."""
    if isinstance(value, str):  # construct's EnumIntegerString: a name with __int__
        return as_int(value)
    return value


def build_payload(message: Message) -> bytes:
    """The payload bytes of `message`; raises PayloadError if a field is out of range.

    Types with a derived `struct` layout (all but NEW_SHOE) are packed by it, with the
    declaration's checks; anything it does not accept as is goes to construct
    (`build_payload_reference`), which builds it or raises the error that names the field.
    """
    layout = PAYLOAD_LAYOUTS.get(message.TYPE)
    if layout is not None:
        data = build_fast(layout, dict(message.__dict__))
        if data is not None:
            return data
    return build_payload_reference(message)


def build_payload_reference(message: Message) -> bytes:
    """build_payload by the construct declaration alone (the reference)."""
    data = {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}
    if isinstance(message, NewShoe):
        data["entries"] = [{"code": e.code, "uid": e.uid} for e in message.entries]
    try:
        return bytes(PAYLOADS[message.TYPE].build(data))
    except (ConstructError, ValueError, TypeError, OverflowError) as exc:
        raise PayloadError(f"{message.TYPE.name}: {exc}") from exc


def plain_dataclass(cls: type[Any]) -> None:
    """Refuse (at import) a class that the fast path may not make without its __init__:
    one with a __post_init__, __slots__ or a __new__ of its own would differ."""
    if (not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") or "__slots__" in vars(cls)
            or cls.__new__ is not object.__new__):
        raise AssertionError(f"{cls.__name__} cannot be made without its __init__")


def _fast_fields() -> dict[int, tuple[type[Message], tuple[str, ...]]]:
    """Per type with a layout: its message class and the layout fields it does not store;
    every field the class stores must be one the layout parses."""
    out: dict[int, tuple[type[Message], tuple[str, ...]]] = {}
    for mtype, layout in PAYLOAD_LAYOUTS.items():
        cls = MESSAGE_CLASSES[MessageType(mtype)]
        plain_dataclass(cls)
        stored = [f.name for f in dataclasses.fields(cls)]
        parsed = list(layout.names) + ([layout.tail] if layout.tail else [])
        if not set(stored) <= set(parsed):
            raise AssertionError(f"{cls.__name__}: fields {stored} not all in the layout {parsed}")
        out[mtype] = (cls, tuple(name for name in parsed if name not in stored))
    return out


_FIELDS = _fast_fields()
FAST_PAYLOADS: dict[int, tuple[Any, type[Message], tuple[str, ...]]] = {
    mtype: (PAYLOAD_LAYOUTS[mtype], cls, derived) for mtype, (cls, derived) in _FIELDS.items()
}
"""Type -> the arguments of `layout.parse_fast` but the payload, for the receiver's hot path."""


def make(cls: type[Any], values: dict[str, Any]) -> Any:
    """A frozen dataclass instance with exactly `values` as its fields, without its
    generated __init__ (whose object.__setattr__ per field costs more than the parse).
    Only for values already checked: the fast path's, compared with construct's in tests,
    and only for classes whose __init__ does nothing more (see `plain_dataclass`)."""
    obj: Any = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def parse_payload(mtype: int, payload: bytes) -> Message:
    """The message of type `mtype` in `payload`; raises PayloadError naming what is wrong.

    Types with a derived `struct` layout are unpacked by it and checked by the
    declaration's own Check functions; a payload it does not accept goes to construct
    (`parse_payload_reference`), which names the rule it breaks.
    """
    layout = PAYLOAD_LAYOUTS.get(mtype)
    if layout is not None:
        cls, derived = _FIELDS[mtype]
        message = parse_fast(layout, cls, derived, payload)
        if message is not None:
            return message  # type: ignore[no-any-return]
    return parse_payload_reference(mtype, payload)


def parse_payload_reference(mtype: int, payload: bytes) -> Message:
    """parse_payload by the construct declaration alone (the reference)."""
    try:
        kind = MessageType(mtype)
    except ValueError:
        raise PayloadError(f"unknown message type 0x{mtype:02X}") from None
    try:
        parsed = PAYLOADS[kind].parse(payload)
    except ConstructError as exc:
        raise PayloadError(f"{kind.name}: {' '.join(str(exc).split())}") from exc
    cls = MESSAGE_CLASSES[kind]
    values = {f.name: _plain(parsed[f.name]) for f in dataclasses.fields(cls)}
    if kind is MessageType.NEW_SHOE:
        values["entries"] = tuple(ManifestEntry(int(e.code), bytes(e.uid)) for e in parsed.entries)
    return cls(**values)


def message_fields(message: Message) -> dict[str, Any]:
    """The message's fields as JSON-ready values (bytes as lower-case hex)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(message):
        value = getattr(message, f.name)
        if isinstance(value, bytes):
            out[f.name] = value.hex()
        elif isinstance(message, NewShoe) and f.name == "entries":
            out[f.name] = [{"code": e.code, "uid": e.uid.hex()} for e in value]
        else:
            out[f.name] = int(value)
    return out
