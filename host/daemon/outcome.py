"""What the table core takes and gives: its settings, its errors, and the entries it derives.

Values shared by the core's parts (`cardshoe.daemon.core` and the modules it is made of):
the table's settings (`TableSetup`), the errors a refused input raises, an input's result
(`Applied`, a tuple of `Derived` entries), the SPEC 5 codes the core names, and the helpers
that make an event's body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from cardshoe.rounds import RoundOperationError


class InputError(ValueError):
    """A controller input the core cannot even read (missing or wrong field); names the field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


class SettlementRefused(InputError):
    """The settlement engine refused a round at settlement (`field` as the engine names it,
    e.g. `jackpot.pool`, a seat by its number: `seat 3.wagers.progressive`): the Settle is
    refused and the round stays in play. `rule` is the rule the engine cited, if any."""

    def __init__(self, field_name: str, message: str, rule: str | None = None) -> None:
        super().__init__(field_name, message)
        if rule is not None:
            self.rule = rule


class StakeRefused(InputError):
    """A wager whose stake the settlement engine would refuse (a progressive not a whole
    number of minimum wagers, not a multiple the game allows, over the maximum; no limits for
    the wager at this table), refused when it is placed or changed (issue 20): `field` is
    `amount` (or the missing `limits.<wager>`), `rule` the game's rule, the message names the
    seat by its number."""

    def __init__(self, field_name: str, message: str, rule: str | None) -> None:
        super().__init__(field_name, message)
        self.rule = rule


@dataclass(frozen=True)
class Derived:
    """One journal entry the core derived: an `event` or a `settlement`."""

    kind: str
    round_id: str | None
    body: dict[str, Any]


@dataclass(frozen=True)
class Applied:
    """What one input produced; `refused` is the error when the input was refused."""

    derived: tuple[Derived, ...]
    refused: RoundOperationError | InputError | None = None
    round_id: str | None = None


#: The table core's rules of play, journaled with the table's setup. 1: cardshoe before issue 20
#: (a setup journaled without `core_version`); 2: a wager is refused when placed if settlement
#: would refuse it, a void round refuses play and closes whatever its stakes (issue 20). A
#: journal replays each setup's inputs by the rules it was journaled under, so a journal written
#: before replays identically; a daemon starting on it journals its own setup, and from then on
#: the new rules apply (docs/api.md, "The journal and replay"). 3: the core acts only on the shoe
#: sessions its journal started, never adopting one (issue 20 item 3; `cardshoe.daemon.shoes`).
CORE_VERSION = 3


@dataclass(frozen=True)
class TableSetup:
    """The table's settings (from `TableConfig`), journaled at every daemon start."""

    name: str
    game: str
    seats: int
    dealing: str = "automated"
    method: str | None = None
    limits: tuple[tuple[str, int, int], ...] = ()
    """(wager, min, max) in minor units: the round file's `limits`."""
    jackpot_reset: int | None = None
    core_version: int = CORE_VERSION
    """The rules of play the core applies (`CORE_VERSION`); 1 for a setup journaled before."""
    round_scope: str | None = None
    """Fixed per journal at its creation (its meta `round_scope`; by default the first 8 hex
    digits of its `journal_id`): round ids are `{name}-{round_scope}-{n:06d}`, unique across
    the table's journals. None for a journal made before it: ids stay `{name}-{n:06d}`."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A setup pickled before `core_version` existed (a checkpoint of an older daemon) was
        # played by the rules of that time, whatever the class's default says now.
        self.__dict__.update({"core_version": 1, **state})

    @property
    def plays_out_voids(self) -> bool:
        """Issue 20's rules: stakes checked when placed, a void round refuses play and closes."""
        return self.core_version >= 2

    @property
    def owns_sessions(self) -> bool:
        """Issue 20 item 3: the core acts only on the shoe sessions its journal started; before
        (a setup journaled by an older daemon) it adopted the session a shoe was in."""
        return self.core_version >= 3

    def limits_json(self) -> dict[str, dict[str, int]]:
        """The limits as the round file writes them."""
        return {w: {"min": lo, "max": hi} for w, lo, hi in self.limits}

    def to_json(self) -> dict[str, Any]:
        """The setup as journaled in a `setup` input."""
        out: dict[str, Any] = {"name": self.name, "game": self.game, "seats": self.seats, "dealing": self.dealing,
                               "method": self.method, "limits": self.limits_json(),
                               "jackpot_reset": self.jackpot_reset}
        if self.core_version != 1:  # a setup of before keeps its journaled form (replay)
            out["core_version"] = self.core_version
        if self.round_scope is not None:  # absent, a journal made before it replays as it was
            out["round_scope"] = self.round_scope
        return out


#: SPEC 5 FAULT codes.
FAULT_NAMES = {1: "reader", 2: "jam", 3: "tamper", 4: "sensor", 5: "low_memory", 6: "outbox_full", 7: "storage",
               8: "manifest"}
#: SPEC 5 KEY codes the table acts on: the count point and an exposed card.
KEY_NAMES = {2: "deal_complete", 3: "exposure"}
#: CARD flags bit 2: framed from the shoe's RAM, not in its flash log (SPEC 5).
NOT_DURABLE = 4


def as_journaled(msg: Mapping[str, Any]) -> dict[str, Any]:
    """A frame kept in the state, with its keys in the order the journal's canonical JSON
    gives them: the live daemon keeps the frame as decoded, a replay as read back from the
    journal, and a checkpoint of either must be the same state (the audit walks dicts in
    order: a held KEY made `cardshoe replay` report a checkpoint as different)."""
    return {k: msg[k] for k in sorted(msg)}


def event(rid: str | None, etype: str, **fields: Any) -> Derived:
    """An `event` entry of round `rid` (None: the table's) of type `etype`."""
    return Derived("event", rid, {"type": etype, **fields})


def error_body(error: Exception) -> dict[str, Any]:
    """A refusal as events carry it: the error's type, message, and its field and rule if any."""
    body: dict[str, Any] = {"error": type(error).__name__, "message": str(error)}
    field_name = getattr(error, "field", None)
    if isinstance(field_name, str):
        body["field"] = field_name
    rule = getattr(error, "rule", None)
    if isinstance(rule, str):
        body["rule"] = rule
    return body
