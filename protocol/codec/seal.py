"""Card values sealed on the wire (SPEC 3.5): AES-128 in counter mode, by the `cryptography` package.

The card key is HMAC-SHA256(shoe key, b"cardshoe v2 card values")[0:16]. The sealed bytes
of a payload run from `SEALED_FROM[type]` to its end (CARD from `card_deck`, DECK_STATUS
its `missing_map`, NEW_SHOE its manifest entries); they are XORed with the AES-CTR
keystream whose initial counter block is `<IIB` (boot, seq, type), three zero bytes, and
a 32-bit big-endian block counter from 0. (type, boot, seq) never repeats for a key with
a different payload, so neither does the keystream. Sealing happens before the tag is
computed and opening after it is checked (encrypt-then-MAC).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import struct
import threading
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from .spec import MessageType

CARD_KEY_LABEL = b"cardshoe v2 card values"
"""HMAC message that derives the card key from the shoe key."""

SEALED_FROM: dict[int, int] = {
    MessageType.CARD: 6,
    MessageType.DECK_STATUS: 19,
    MessageType.NEW_SHOE: 12,
}
"""Offset in the payload where each type's sealed card values start; other types seal nothing."""


@functools.lru_cache(maxsize=64)
def card_key(key: bytes) -> bytes:
    """The 16-byte AES key of a shoe's card values, derived from its 32-byte shoe key."""
    return hmac.new(key, CARD_KEY_LABEL, hashlib.sha256).digest()[:16]


def initial_counter(mtype: int, boot: int, seq: int) -> bytes:
    """The first AES-CTR counter block of frame (type, boot, seq)."""
    return struct.pack("<IIB3xI", boot, seq, mtype, 0)


_NONCE = struct.Struct("<IIB3x")
"""The first 12 bytes of every counter block: boot, seq, type, three zero bytes."""
_BLOCK_NO = tuple(i.to_bytes(4, "big") for i in range(16))
"""The big-endian block counter of blocks 0-15 (a payload needs at most 14)."""


_ECB: dict[bytes, tuple[Any, threading.Lock]] = {}


def _ecb(key: bytes) -> tuple[Any, threading.Lock]:
    """One AES-128-ECB encryptor per shoe key, reused for every frame (making a CTR cipher
    object per frame costs more than the rest of the decode), with the lock that keeps two
    threads from interleaving its calls. A plain dict: an lru_cache lookup costs more."""
    found = _ECB.get(key)
    if found is None:
        if len(_ECB) >= 256:
            _ECB.clear()
        found = _ECB[key] = (Cipher(algorithms.AES(card_key(key)), modes.ECB()).encryptor(), threading.Lock())
    return found


def seal_payload(key: bytes, mtype: int, boot: int, seq: int, payload: bytes) -> bytes:
    """The payload with its card values sealed (or, given a sealed one, opened): the two
    are the same XOR. `key` is the shoe key; a type with no card values is returned as is.

    The keystream is the counter mode's, block by block (SPEC 3.5): AES-ECB over the
    counter blocks `<IIB3x` (boot, seq, type) + big-endian block number.
    `seal_payload_reference` is the same by the `cryptography` package's CTR mode.
    """
    start = SEALED_FROM.get(mtype)
    if start is None or len(payload) <= start:
        return bytes(payload)
    n = len(payload) - start
    prefix = _NONCE.pack(boot, seq, mtype)
    count = (n + 15) // 16
    if count == 1:
        blocks = prefix + _BLOCK_NO[0]
    else:
        blocks = b"".join([prefix + (_BLOCK_NO[i] if i < 16 else i.to_bytes(4, "big")) for i in range(count)])
    found = _ECB.get(key) if type(key) is bytes else None
    enc, lock = found if found is not None else _ecb(bytes(key))
    with lock:
        stream = enc.update(blocks)
    plain = int.from_bytes(payload[start:], "little") ^ int.from_bytes(stream[:n], "little")
    return bytes(payload[:start]) + plain.to_bytes(n, "little")


def seal_payload_reference(key: bytes, mtype: int, boot: int, seq: int, payload: bytes) -> bytes:
    """seal_payload by the `cryptography` package's own CTR mode (the reference)."""
    start = SEALED_FROM.get(mtype)
    if start is None or len(payload) <= start:
        return bytes(payload)
    enc = Cipher(algorithms.AES(card_key(key)), modes.CTR(initial_counter(mtype, boot, seq))).encryptor()
    return bytes(payload[:start]) + enc.update(bytes(payload[start:])) + enc.finalize()


open_payload = seal_payload
"""Opening is sealing again (CTR)."""
