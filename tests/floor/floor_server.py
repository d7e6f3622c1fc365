"""A floor for the tests: its credentials (a token per table and per role), its signing key,
the shoe keys registered for its tables, and the app over a store (`cardshoe.floor.api`)."""

from __future__ import annotations

from typing import Any

from cardshoe.floor.api import create_floor_app
from cardshoe.floor.auth import Credential, FloorGuard
from cardshoe.floor.rebuild import Rebuilder
from cardshoe.floor.settle import FloorSettler
from cardshoe.floor.signing import FloorSigner
from cardshoe.floor.store import FloorStore

#: The daemon harness's shoe (tests/daemon/daemon_harness.py): serial and key.
SERIAL = 0x00C0FFEE
KEY = bytes(range(32))

TOKENS = {
    "T1": "floor-table-T1-token-0123456789",
    "T2": "floor-table-T2-token-0123456789",
    "pit": "floor-pit-token-0123456789abcd",
    "surveillance": "floor-surveillance-token-012345",
    "supervisor": "floor-supervisor-token-01234567",
}
FLOOR_SEED = bytes(range(100, 132))
SIGNER = FloorSigner(FLOOR_SEED)
FLOOR_PUBKEY = SIGNER.public_key


def guard() -> FloorGuard:
    return FloorGuard([(TOKENS[t], Credential("table", t)) for t in ("T1", "T2")]
                      + [(TOKENS[r], Credential(r)) for r in ("pit", "surveillance", "supervisor")])


def keys_for(table: str) -> Any:
    """Every test table deals with the harness's shoe."""
    return (lambda serial: KEY if serial == SERIAL else None) if table in ("T1", "T2") else None


def settler(store: FloorStore) -> FloorSettler:
    return FloorSettler(store, Rebuilder(store, keys_for), SIGNER)


def app(store: FloorStore, link: str = "mega") -> Any:
    """The floor API over `store`: tables T1 and T2 settle on `link`."""
    return create_floor_app(store, guard(), settler(store), link_of=lambda t: link if t in ("T1", "T2") else None,
                            public_key=FLOOR_PUBKEY)


def write_config(directory: Any, *, links: str = "", store: str = "", tables: tuple[str, ...] = ("T1", "T2"),
                 link: str = "mega") -> Any:
    """A floor's file in `directory` (docs/floor.md, "The floor's file"): the tokens above in
    files of mode 0600, a key store holding the harness shoe's key, the signing key."""
    import os
    from pathlib import Path

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    keys = d / "keys"
    keys.mkdir(mode=0o700, exist_ok=True)
    (keys / f"{SERIAL}.key").write_text(KEY.hex() + "\n")
    os.chmod(keys / f"{SERIAL}.key", 0o600)
    (d / "signing.key").write_text(FLOOR_SEED.hex() + "\n")
    os.chmod(d / "signing.key", 0o600)
    for name, token in TOKENS.items():
        (d / f"{name}.token").write_text(token + "\n")
        os.chmod(d / f"{name}.token", 0o600)
    text = f'[floor]\nsigning_key = "signing.key"\n{store}\n{links}\n[roles]\npit = "pit.token"\n' \
           'surveillance = "surveillance.token"\nsupervisor = "supervisor.token"\n'
    for t in tables:
        text += f'[tables.{t}]\ntoken_file = "{t}.token"\nlink = "{link}"\nshoe_keys = "keys"\n'
    path = d / "floor.toml"
    path.write_text(text)
    return path
