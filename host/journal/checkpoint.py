"""Checkpoints: the table core's state, journaled, so a daemon starts without replaying it all.

A checkpoint is itself a journal entry (kind `checkpoint`), written under the service lock in
its own transaction. Its body says what it is and how to check it:

- `covers`: the id of the last journal entry whose effect the state includes (every entry
  written before the checkpoint; the service lock means none is written in between);
- `blob_sha256` and `blob_len`: of the stored state (`raw`: the core, zlib-compressed pickle),
  checked before anything is unpickled.

A starting daemon loads the latest checkpoint and replays only the inputs after `covers`. A
checkpoint that is damaged (blob digest, unpickling, not a table core) is not used: the daemon replays the whole
journal and logs a WARNING. `cardshoe replay` replays from zero and checks every checkpoint
against the state it rebuilt at that point: both are walked canonically (`state_digest`, the
same whatever the process, hash seed or pickle protocol) and must be equal (a disagreement is a
difference, exit 1). The walk is linear in the state, so it is the audit's work, never on the
live path: the daemon only pickles (under its lock) and a start only unpickles.

The pickle is read only from the daemon's own journal, a file under the same protection as
the rest of the record (whoever can write it can rewrite the table's history anyway); its
digest is checked before it is unpickled, and the unpickler resolves only cardshoe's classes
and plain containers (`_CoreUnpickler`), so a journal edited to carry a pickled call, handed to
`cardshoe replay` for an audit, is refused as a damaged checkpoint instead of run.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import io
import json
import pickle
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 1


class CheckpointInvalid(ValueError):
    """A checkpoint that cannot be used; the message says what is wrong with it."""


def _canon(obj: Any) -> Any:
    """`obj` as plain JSON values, independent of hash seeds and set order."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return ["float", repr(obj)]
    if isinstance(obj, enum.Enum):
        return ["enum", type(obj).__qualname__, _canon(obj.value)]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return ["bytes", bytes(obj).hex()]
    if isinstance(obj, dict):
        # Insertion order is part of the state (rounds are listed in play order).
        return ["dict", [[_canon(k), _canon(obj[k])] for k in obj]]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [_canon(v) for v in obj]]
    if isinstance(obj, (set, frozenset)):
        items = [_canon(v) for v in obj]
        return ["set", sorted(items, key=lambda v: json.dumps(v, sort_keys=True))]
    canonical = getattr(obj, "canonical_state", None)
    if callable(canonical):
        return ["obj", type(obj).__qualname__, {k: _canon(v) for k, v in sorted(canonical().items())}]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return ["obj", type(obj).__qualname__,
                {f.name: _canon(getattr(obj, f.name)) for f in dataclasses.fields(obj)}]
    fields: dict[str, Any] = {}
    if hasattr(obj, "__dict__"):
        fields.update(vars(obj))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                fields[slot] = getattr(obj, slot)
    if not fields and not hasattr(obj, "__dict__"):
        raise TypeError(f"state: cannot checkpoint a {type(obj).__qualname__}")
    return ["obj", type(obj).__qualname__, {k: _canon(v) for k, v in sorted(fields.items())}]


def state_digest(core: Any) -> str:
    """SHA-256 of the table core's whole state, walked canonically."""
    text = json.dumps(_canon(core), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint as journaled: its body (JSON) and its blob (`raw`)."""

    body: dict[str, Any]
    blob: bytes


def make(core: Any, covers: int) -> Checkpoint:
    """A checkpoint of `core`, whose state includes every entry up to id `covers`."""
    blob = zlib.compress(pickle.dumps(core, protocol=pickle.HIGHEST_PROTOCOL), 1)
    body = {"type": "checkpoint", "format": FORMAT, "covers": covers,
            "blob_sha256": hashlib.sha256(blob).hexdigest(), "blob_len": len(blob)}
    return Checkpoint(body, blob)


def check_body(entry_id: int, body: Any) -> None:
    """Raise `CheckpointInvalid` when the body is not a well-formed checkpoint at `entry_id`."""
    if not isinstance(body, dict) or body.get("type") != "checkpoint":
        raise CheckpointInvalid(f"checkpoint {entry_id}: not a checkpoint body")
    if body.get("format") != FORMAT:
        raise CheckpointInvalid(f"checkpoint {entry_id}: format {body.get('format')!r}, expected {FORMAT}")
    covers = body.get("covers")
    if not isinstance(covers, int) or isinstance(covers, bool) or not 0 <= covers < entry_id:
        raise CheckpointInvalid(f"checkpoint {entry_id}: covers {covers!r} is not an earlier entry")
    if not isinstance(body.get("blob_sha256"), str):
        raise CheckpointInvalid(f"checkpoint {entry_id}: blob_sha256 missing")


#: Modules whose classes a stored core may name besides cardshoe's own. Only classes are ever
#: resolved (and copyreg's reconstructor, which only instantiates a class it is given), never a
#: function: an edited journal handed to `cardshoe replay` for an audit must not be able to
#: make the auditor's process call anything (pickle would call any importable callable).
_SAFE_MODULES = frozenset({"builtins", "collections", "fractions", "datetime", "enum", "types"})

#: Builtin classes whose construction does more than build a value.
_UNSAFE_BUILTIN_TYPES = frozenset({"type", "object", "super", "staticmethod", "classmethod", "property",
                                   "memoryview", "open"})


class _CoreUnpickler(pickle.Unpickler):
    """Unpickles a table core: cardshoe's classes and plain containers, nothing callable else."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("copyreg", "_reconstructor"):
            return super().find_class(module, name)
        if module == "cardshoe" or module.startswith("cardshoe.") or module in _SAFE_MODULES:
            found = super().find_class(module, name)
            if isinstance(found, type) and not (module == "builtins" and name in _UNSAFE_BUILTIN_TYPES):
                return found
        raise pickle.UnpicklingError(f"a checkpoint may not name {module}.{name}")


def loads(data: bytes) -> Any:
    """Unpickle a part of a stored core (a settled round kept frozen), as `load` does."""
    return _CoreUnpickler(io.BytesIO(data)).load()


def load(entry_id: int, body: Any, blob: bytes | None) -> Any:
    """The core stored in a checkpoint entry, checked; raises `CheckpointInvalid`."""
    from cardshoe.daemon.core import TableCore

    check_body(entry_id, body)
    if blob is None or hashlib.sha256(blob).hexdigest() != body["blob_sha256"]:
        raise CheckpointInvalid(f"checkpoint {entry_id}: its stored state is damaged (blob digest differs)")
    try:
        core = loads(zlib.decompress(blob))
    except Exception as exc:  # noqa: BLE001 - any failure to load means: do not use it
        raise CheckpointInvalid(f"checkpoint {entry_id}: its state cannot be loaded: "
                                f"{type(exc).__name__}: {exc}") from None
    if not isinstance(core, TableCore):
        raise CheckpointInvalid(f"checkpoint {entry_id}: its state is a {type(core).__qualname__}, not a table core")
    core.loaded_from(entry_id)
    return core


class ArchiveLoader:
    """Reads the stored core of an earlier checkpoint entry of the journal at `path`, checked
    as `load` checks, for the settled rounds a later checkpoint refers to rather than copies.
    Keeps the last one read (rounds are read in runs from the same checkpoint)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last: tuple[int, Any] | None = None

    def __call__(self, entry_id: int) -> Any:
        if self._last is not None and self._last[0] == entry_id:
            return self._last[1]
        from cardshoe.journal.store import JournalReader

        with JournalReader(self.path) as reader:
            entry = reader.entry(entry_id)
        if entry is None or entry.kind != "checkpoint":
            raise CheckpointInvalid(f"checkpoint {entry_id}: no such checkpoint in {self.path}")
        core = load(entry_id, entry.data(), entry.raw)
        self._last = (entry_id, core)
        return core
