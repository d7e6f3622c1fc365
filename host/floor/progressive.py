"""The linked progressive: contributions and a round's hits against the floor's pool (pure).

One pool per link. A round of a linked table that has progressive wagers is settled against
the pool the floor assigns it, inside the floor store's serialized transaction
(`cardshoe.floor.store`); this module computes what that transaction writes, from the round
file (docs/round-format.md) the table sends and the link's state, with the same settlement
engine the table runs (`cardshoe.settlement`), so the table settling with the assigned pool
reaches the same amounts to the minor unit.

Readings (docs/rule-readings.md, "The linked progressive"):

* **Contributions.** Each progressive wager *in action* (settled win or lose: not returned,
  not void, 5.12.2) feeds the pool `rate_ppm` parts per million of its stake. A round's stakes
  are added up, multiplied by the rate and floored to the minor unit; what the floor drops is
  kept in the link's `carry` (millionths of a minor unit, always below one unit) and added to
  the next round's, so no fraction is ever lost or created: over any run,
  ``pool credited + carry / 1e6 == rate * stakes / 1e6`` exactly.
* **Contributions first.** A round's own contribution is credited before its hits are paid:
  the wager was placed before the hand was known, so the pool "as displayed" when the hand is
  paid already holds it.
* **Across tables, in commit order.** Hits of different tables are paid one round at a time in
  the order the floor store serializes their rounds (the link row's lock); a round's hits are
  settled by the game's own rules (lower hands first, 3.18.2 / 3.15.3; sharing within the
  table, 3.18.1 / 3.15.1-3.15.2; seat order where there is no sharing clause) against the pool
  as that round finds it. The second of two simultaneous Royal Flushes gets the pool as the
  first left it (reset plus any contributions since), never a share of the first's.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping

from cardshoe import settlement
from cardshoe.settlement import Outcome

__all__ = ["PPM", "ASSIGNMENT_FORMAT", "LinkSettings", "PoolState", "Hit", "Assignment", "FloorRefusal", "Prepared",
           "contribution",
           "prepare", "assign", "round_digest"]

#: The contribution rate's denominator: the rate is parts per million of the stake.
PPM = 1_000_000

#: The format of the assignment the floor signs (`Assignment.signed_body`).
ASSIGNMENT_FORMAT = "cardshoe.floor.assignment/1"


class FloorRefusal(ValueError):
    """A round the floor cannot settle against its pool; names the field at fault."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class LinkSettings:
    """One link's configuration: its reset amount, contribution rate, and starting pool."""

    name: str
    reset: int
    rate_ppm: int
    start: int | None = None
    """The pool when the link is first created (default: the reset amount)."""

    def checked(self) -> LinkSettings:
        """Raises FloorRefusal for a setting out of range."""
        if not self.name or len(self.name) > 64:
            raise FloorRefusal("link", "a name of 1 to 64 characters")
        if self.reset < 0:
            raise FloorRefusal("reset", f"must not be negative, got {self.reset}")
        if not 0 <= self.rate_ppm <= PPM:
            raise FloorRefusal("rate_ppm", f"parts per million of the stake, 0..{PPM}, got {self.rate_ppm}")
        if self.start is not None and self.start < 0:
            raise FloorRefusal("start", f"must not be negative, got {self.start}")
        return self

    @property
    def opening_pool(self) -> int:
        """The pool the link starts with."""
        return self.reset if self.start is None else self.start


@dataclass(frozen=True)
class PoolState:
    """A link's pool as the floor store holds it."""

    pool: int
    carry: int
    """Millionths of a minor unit contributed but not yet credited (0 <= carry < PPM)."""
    seq: int
    """How many rounds the link has settled: the next one gets seq + 1."""


@dataclass(frozen=True)
class Hit:
    """One payment from the pool (a share of it), as the round's ledger says."""

    seat: int
    line: str
    amount: int
    rule: str


@dataclass(frozen=True)
class Assignment:
    """What the floor assigns one round: the pool it settles against and what it leaves."""

    link: str
    table: str
    round_id: str
    seq: int
    stakes: int
    """The progressive stakes in action in the round."""
    contribution: int
    carry_before: int
    carry_after: int
    pool_before: int
    """The pool as the round found it, before its contribution."""
    pool: int
    """The pool assigned to the round ("as displayed" when it is paid): pool_before + contribution."""
    pool_after: int
    movements: tuple[dict[str, Any], ...]
    hits: tuple[Hit, ...]
    digest: str
    """SHA-256 of the round file the floor rebuilt (`round_digest`), so the same round sent again
    is told from a different one under the same id."""
    reset: int | None = None
    """The link's reset amount the round was settled with."""
    rate_ppm: int | None = None
    """The link's contribution rate the round was settled with."""
    entry: int | None = None
    """The table's journal entry the round was rebuilt up to (its `settle_sent`)."""
    chain: str | None = None
    """That entry's hash chain value: the assignment is of the journal as it stood there."""
    signature: dict[str, Any] | None = None
    """The floor's Ed25519 signature of `signed_body()` (`cardshoe.floor.signing`)."""

    def to_json(self) -> dict[str, Any]:
        """As the floor answers the table and journals it."""
        return {"link": self.link, "table": self.table, "round_id": self.round_id, "seq": self.seq,
                "stakes": self.stakes, "contribution": self.contribution, "carry_before": self.carry_before,
                "carry_after": self.carry_after, "pool_before": self.pool_before, "pool": self.pool,
                "pool_after": self.pool_after, "movements": list(self.movements),
                "hits": [{"seat": h.seat, "line": h.line, "amount": h.amount, "rule": h.rule} for h in self.hits],
                "digest": self.digest, "reset": self.reset, "rate_ppm": self.rate_ppm, "entry": self.entry,
                "chain": self.chain}

    def signed_body(self) -> dict[str, Any]:
        """What the floor signs: the assignment with its format (`ASSIGNMENT_FORMAT`)."""
        return {"format": ASSIGNMENT_FORMAT, **self.to_json()}

    def signed(self) -> dict[str, Any] | None:
        """The signed assignment as the table journals it and evidence carries it, or None."""
        return None if self.signature is None else {"assignment": self.signed_body(), "signature": self.signature}


def round_digest(round_json: Mapping[str, Any]) -> str:
    """SHA-256 of the round file's canonical JSON (its jackpot pool left out: the floor sets it)."""
    data = dict(round_json)
    jackpot = data.get("jackpot")
    if isinstance(jackpot, dict):
        data["jackpot"] = {k: v for k, v in jackpot.items() if k != "pool"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def contribution(carry: int, stakes: int, rate_ppm: int) -> tuple[int, int]:
    """(minor units credited, new carry) for `stakes` at `rate_ppm` with `carry` millionths
    held over: floored to the minor unit, the remainder carried (never lost, never created)."""
    total = carry + stakes * rate_ppm
    return total // PPM, total % PPM


def _with_pool(round_json: Mapping[str, Any], pool: int, reset: int) -> dict[str, Any]:
    data = copy.deepcopy(dict(round_json))
    jackpot = data.get("jackpot")
    data["jackpot"] = {**(jackpot if isinstance(jackpot, dict) else {}), "pool": pool, "reset": reset}
    return data


def _settle(round_json: Mapping[str, Any]) -> settlement.Settlement:
    try:
        return settlement.settle(settlement.parse_round(dict(round_json)))
    except settlement.RoundError as exc:
        raise FloorRefusal(f"round.{exc.field}" if getattr(exc, "field", None) else "round", str(exc)) from None


def stakes_in_action(result: settlement.Settlement) -> int:
    """The progressive stakes the settlement played (won or lost), returned and void ones not."""
    return sum(w.stake for s in result.seats for w in s.wagers
               if w.wager == "progressive" and w.outcome in (Outcome.WIN, Outcome.LOSE))


@dataclass(frozen=True)
class Prepared:
    """What a round's assignment needs that does not depend on the pool's size."""

    reset: int
    stakes: int
    touches_pool: bool
    """Whether the round pays from the pool (a percentage line): only then is it settled again
    against the pool as it stands, under the link's lock."""
    digest: str


def prepare(link: LinkSettings, round_json: Mapping[str, Any]) -> Prepared:
    """Settle the round once at a placeholder pool: its stakes in action and whether it pays
    from the pool do not depend on the pool's size, so this runs outside the link's lock."""
    _check(link, round_json)
    first = _settle(_with_pool(round_json, link.reset, link.reset))
    ledger = first.jackpot
    return Prepared(link.reset, stakes_in_action(first), ledger is not None and bool(ledger.movements),
                    round_digest(round_json))


def _check(link: LinkSettings, round_json: Mapping[str, Any]) -> str:
    rid = round_json.get("round_id")
    if not isinstance(rid, str) or not rid:
        raise FloorRefusal("round.round_id", "the round file needs its round id")
    jackpot = round_json.get("jackpot")
    if isinstance(jackpot, dict) and jackpot.get("reset") is not None and jackpot.get("reset") != link.reset:
        raise FloorRefusal("round.jackpot.reset", f"the table's reset amount {jackpot.get('reset')} is not link "
                                                  f"{link.name}'s {link.reset}: set the table's [jackpot] reset")
    return rid


def assign(link: LinkSettings, state: PoolState, table: str, round_json: Mapping[str, Any],
           prepared: Prepared | None = None) -> Assignment:
    """The assignment of one round against the link's pool as it stands (pure). With
    `prepared` (made by `prepare` for this link's reset), a round that does not pay from the
    pool costs only arithmetic here: the part run under the link's lock stays short.

    Raises FloorRefusal when the round cannot be settled (its field named) or the table's
    reset amount is not the link's (the table would settle differently from the floor)."""
    rid = _check(link, round_json)
    if prepared is not None and prepared.reset == link.reset and not prepared.touches_pool:
        amount, carry = contribution(state.carry, prepared.stakes, link.rate_ppm)
        pool = state.pool + amount
        return Assignment(link=link.name, table=table, round_id=rid, seq=state.seq + 1, stakes=prepared.stakes,
                          contribution=amount, carry_before=state.carry, carry_after=carry, pool_before=state.pool,
                          pool=pool, pool_after=pool, movements=(), hits=(), digest=prepared.digest,
                          reset=link.reset, rate_ppm=link.rate_ppm)
    return _assign_settled(link, state, table, rid, round_json)


def _assign_settled(link: LinkSettings, state: PoolState, table: str, rid: str,
                    round_json: Mapping[str, Any]) -> Assignment:
    # Which progressive wagers are in action does not depend on the pool's size.
    first = _settle(_with_pool(round_json, state.pool, link.reset))
    stakes = stakes_in_action(first)
    amount, carry = contribution(state.carry, stakes, link.rate_ppm)
    pool = state.pool + amount
    result = first if amount == 0 else _settle(_with_pool(round_json, pool, link.reset))
    ledger = result.jackpot
    pool_after = pool if ledger is None else ledger.pool_after
    movements = () if ledger is None else tuple(m.to_json() for m in ledger.movements)
    hits = () if ledger is None else tuple(Hit(int(m.seat or 0), str(m.line), m.amount, m.rule)
                                            for m in ledger.movements if m.kind == "payout")
    return Assignment(link=link.name, table=table, round_id=rid, seq=state.seq + 1, stakes=stakes,
                      contribution=amount, carry_before=state.carry, carry_after=carry, pool_before=state.pool,
                      pool=pool, pool_after=pool_after, movements=movements, hits=hits,
                      digest=round_digest(round_json), reset=link.reset, rate_ppm=link.rate_ppm)
