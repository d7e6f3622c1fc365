"""The floor's signature on what it assigns (issue 21 item 4).

The floor signs every pool assignment with its own Ed25519 key: the link, the table stream,
the round id, the table's journal entry the round was rebuilt up to and its hash chain value,
the rebuilt round file's digest, the pool before and after, each hit's amount
(`Assignment.signed_body`, format `cardshoe.floor.assignment/1`). The table journals the
signed assignment with its settlement, evidence files carry it, and `cardshoe evidence verify
--floor-pubkey` checks it: a table that holds its own signing key still cannot make the floor
say it paid what it did not.

The key file holds the 32-byte private seed as 64 hex characters, mode 0600, made at the
floor's first start (`signing_key` in the floor's file; `cardshoe.keys` reads and writes it as
it does a table's key). Its public half is served at `GET /public-key` and printed by
`cardshoe floor key`; distribute it to whoever verifies evidence (a verifier must not fetch it
from the floor it is checking).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from cardshoe.journal.store import canonical_json

__all__ = ["ALGORITHM", "FloorSigner", "verify_signed", "public_key_of"]

ALGORITHM = "Ed25519"


def public_key_of(seed: bytes) -> bytes:
    """The 32-byte Ed25519 public key of a private seed."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


@dataclass
class FloorSigner:
    """Signs assignment bodies with the floor's key (a `cardshoe.floor.store.Signer`)."""

    seed: bytes

    def __post_init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self._key = Ed25519PrivateKey.from_private_bytes(self.seed)
        self.public_key = public_key_of(self.seed)

    def __call__(self, body: Mapping[str, Any]) -> dict[str, Any]:
        value = self._key.sign(canonical_json(dict(body)).encode("utf-8"))
        return {"algorithm": ALGORITHM, "public_key": self.public_key.hex(), "value": value.hex()}

    @classmethod
    def from_file(cls, path: Any, *, create: bool = True) -> FloorSigner:
        """The floor's key at `path` (made there, 0600, when absent and `create`)."""
        from cardshoe.keys import table_key

        return cls(table_key(path, create=create))


def verify_signed(signed: Any, public_key: bytes | None) -> str | None:
    """What is wrong with a signed assignment (`{"assignment", "signature"}`), or None when it
    is signed by `public_key` (None: by the key it names, which proves integrity, not whose key)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if not isinstance(signed, Mapping) or not isinstance(signed.get("assignment"), Mapping) \
            or not isinstance(signed.get("signature"), Mapping):
        return "not a signed assignment ({assignment, signature})"
    sig = signed["signature"]
    if sig.get("algorithm") != ALGORITHM:
        return f"algorithm {sig.get('algorithm')!r} is not {ALGORITHM}"
    try:
        named = bytes.fromhex(str(sig.get("public_key", "")))
        value = bytes.fromhex(str(sig.get("value", "")))
    except ValueError:
        return "public_key and value must be hex"
    if public_key is not None and named != public_key:
        return f"signed by key {named.hex()[:16]}..., not the floor's key {public_key.hex()[:16]}..."
    try:
        Ed25519PublicKey.from_public_bytes(public_key or named).verify(
            value, canonical_json(dict(signed["assignment"])).encode("utf-8"))
    except (InvalidSignature, ValueError):
        return "the floor's Ed25519 signature does not verify over the assignment"
    return None
