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
    Hello, Card, Unread, DeckStatus, Fault, Key, Heartbeat, Reply,
    Ack, ResendFrom, NewShoe, Config, Time, Ping, Maintenance, Clear, CardsFrom,
]
"""Any message of SPEC section 5."""

MESSAGE_CLASSES: dict[MessageType, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        Hello, Card, Unread, DeckStatus, Fault, Key, Heartbeat, Reply,
        Ack, ResendFrom, NewShoe, Config, Time, Ping, Maintenance, Clear, CardsFrom,
    )
}


def _plain(value: Any) -> Any:
    """Parsed construct values as plain Python: Enum names back to ints, no Containers."""
    if isinstance(value, str):  # construct's EnumIntegerString: a name with __int__
        return as_int(value)
    return value


def build_payload(message: Message) -> bytes:
    """The payload bytes of `message`; raises PayloadError if a field is out of range."""
    data = {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}
    if isinstance(message, NewShoe):
        data["entries"] = [{"code": e.code, "uid": e.uid} for e in message.entries]
    try:
        return bytes(PAYLOADS[message.TYPE].build(data))
    except (ConstructError, ValueError, TypeError, OverflowError) as exc:
        raise PayloadError(f"{message.TYPE.name}: {exc}") from exc


def parse_payload(mtype: int, payload: bytes) -> Message:
    """The message of type `mtype` in `payload`; raises PayloadError naming what is wrong."""
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
