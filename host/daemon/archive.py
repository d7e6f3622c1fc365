"""Checkpoints of the table core: settled rounds stored once, thawed on first use (issue 15).

`CheckpointedState` is the part of `TableCore` that pickles it for a checkpoint
(`cardshoe.journal.checkpoint`) and restores it: a settled round is kept as its pickle
(`_Frozen`), made once, or as a reference to the earlier checkpoint that stores it whole
(`_Archived`), so a checkpoint and a start from it cost what the open rounds and shoes cost,
not the whole history. `FrozenBook` thaws them when first read.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any, Callable

from cardshoe import rounds
from cardshoe.shuffle.book import ShuffleBook

if TYPE_CHECKING:
    from cardshoe.daemon.core import TableCore
    from cardshoe.rounds import Round


class _Frozen:
    """A settled round kept as its pickle inside a checkpoint: thawed when first used."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _Archived:
    """A settled round (or its settlement) whose pickle is in an earlier checkpoint entry."""

    __slots__ = ("entry", "settlement")

    def __init__(self, entry: int, settlement: bool) -> None:
        self.entry, self.settlement = entry, settlement


#: Reads the stored core of a checkpoint entry (for `_Archived` values); set at restore.
ArchiveLoader = Callable[[int], "TableCore"]


class FrozenBook(dict[str, Any]):
    """Rounds or settlements of a core restored from a checkpoint: settled ones come back frozen
    (their pickle) and are thawed on first use, so a start costs the same whatever the history
    (issue 15). Reads through `get`, `[]`, `items` and `values` always see thawed values."""

    loader: ArchiveLoader | None = None

    def __getitem__(self, key: str) -> Any:
        value: Any = dict.__getitem__(self, key)
        if isinstance(value, _Archived):
            if self.loader is None:
                raise LookupError(f"{key}: kept in checkpoint {value.entry}, and no journal to read it from")
            old = self.loader(value.entry)
            book: dict[str, Any] = old.settlements if value.settlement else old.rounds
            value = dict.__getitem__(book, key)
        if isinstance(value, _Frozen):
            from cardshoe.journal.checkpoint import loads  # the same restricted unpickler as the core

            value = loads(value.data)
        elif isinstance(value, _Archived):
            raise LookupError(f"{key}: checkpoint {value.entry} points to another checkpoint for it")
        dict.__setitem__(self, key, value)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if dict.__contains__(self, key) else default

    def values(self) -> Any:
        return [self[key] for key in self]

    def items(self) -> Any:
        return [(key, self[key]) for key in self]


class CheckpointedState:
    """The checkpoint half of `TableCore`: what is pickled, and how a restored core is set up."""

    if TYPE_CHECKING:
        rounds: dict[str, Round]
        settlements: dict[str, dict[str, Any]]
        current: Round | None
        _frozen: dict[str, tuple[bytes, bytes]]
        _archived: dict[str, int]
        _pending_archive: list[str]

    def __getstate__(self) -> dict[str, Any]:
        """The state as pickled into a checkpoint: a settled round (with its settlement, not
        the current one) as its pickle, made once and kept, so a checkpoint and a start from
        it cost what the open rounds and shoes cost, not the whole history (issue 15)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_frozen", "_pending_archive")}
        book: dict[str, Any] = {}
        paid: dict[str, Any] = {}
        pending: list[str] = []
        for rid in self.rounds:
            value: Any = dict.__getitem__(self.rounds, rid)
            if isinstance(value, (_Frozen, _Archived)):
                where = self._archived.get(rid)
                if isinstance(value, _Frozen) and where is not None:  # stored whole where it came from
                    book[rid], paid[rid] = _Archived(where, False), _Archived(where, True)
                else:
                    book[rid], paid[rid] = value, dict.__getitem__(self.settlements, rid)
                continue
            if value is not self.current and value.status is rounds.RoundStatus.SETTLED and rid in self.settlements:
                where = self._archived.get(rid)
                if where is not None:  # already in an earlier checkpoint: referred to, not copied
                    book[rid], paid[rid] = _Archived(where, False), _Archived(where, True)
                    continue
                frozen = self._frozen.get(rid)
                if frozen is None:
                    frozen = self._frozen[rid] = (pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL),
                                                  pickle.dumps(self.settlements[rid], protocol=pickle.HIGHEST_PROTOCOL))
                book[rid], paid[rid] = _Frozen(frozen[0]), _Frozen(frozen[1])
                pending.append(rid)
            else:
                book[rid] = value
        # In the settlements' own order (the order is part of the state).
        paid = {rid: paid[rid] if rid in paid else dict.__getitem__(self.settlements, rid) for rid in self.settlements}
        state["rounds"], state["settlements"] = book, paid
        self._pending_archive = pending
        return state

    def checkpoint_written(self, entry: int) -> None:
        """The checkpoint last pickled is journaled as `entry`: the settled rounds it stored
        whole are referred to there from now on (each round is stored once in the journal)."""
        for rid in self._pending_archive:
            self._archived[rid] = entry
            self._frozen.pop(rid, None)
        self._pending_archive = []

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.rounds = FrozenBook(state["rounds"])
        self.settlements = FrozenBook(state["settlements"])
        self.__dict__.setdefault("shuffle", ShuffleBook())  # a checkpoint from before the shuffle alarm
        self._frozen = {}
        self._pending_archive = []

    def loaded_from(self, entry: int) -> None:
        """This core was loaded from checkpoint `entry`: the rounds it stores whole are referred
        to there by later checkpoints, not copied into each."""
        for rid in self.rounds:
            if isinstance(dict.__getitem__(self.rounds, rid), _Frozen):
                self._archived[rid] = entry

    def set_archive(self, loader: ArchiveLoader | None) -> None:
        """Where rounds kept in earlier checkpoints are read from (the journal), once restored."""
        for book in (self.rounds, self.settlements):
            if isinstance(book, FrozenBook):
                book.loader = loader

    def canonical_state(self) -> dict[str, Any]:
        """The state for comparing two cores (the checkpoint audit): every round thawed, no caches."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_frozen", "_pending_archive", "_archived")}
        state["rounds"] = {rid: self.rounds[rid] for rid in self.rounds}
        state["settlements"] = {rid: self.settlements[rid] for rid in self.settlements}
        return state

