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


def seal_payload(key: bytes, mtype: int, boot: int, seq: int, payload: bytes) -> bytes:
    """The payload with its card values sealed (or, given a sealed one, opened): the two
    are the same XOR. `key` is the shoe key; a type with no card values is returned as is."""
    start = SEALED_FROM.get(mtype)
    if start is None or len(payload) <= start:
        return bytes(payload)
    enc = Cipher(algorithms.AES(card_key(key)), modes.CTR(initial_counter(mtype, boot, seq))).encryptor()
    return bytes(payload[:start]) + enc.update(bytes(payload[start:])) + enc.finalize()


open_payload = seal_payload
"""Opening is sealing again (CTR)."""
