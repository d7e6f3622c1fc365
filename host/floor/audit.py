"""The offline recomputation of a link's pool from the tables' journals alone.

Each linked table journals, with every settlement against the floor's pool, the assignment
it was given (the `floor` field of its `settle` input: link, seq, stakes, contribution, the
carry before and after, the pool before, assigned and after) and then the settlement itself,
whose jackpot ledger starts from the assigned pool. `audit` walks the link's rounds in seq
order and recomputes every figure: the stakes in action from the settlement, the
contribution and carry from the rate (`cardshoe.floor.progressive.contribution`), the pool
chain from the opening pool; any difference is a problem naming the round. Pure: the
caller reads the journals.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .progressive import LinkSettings, contribution

__all__ = ["AuditReport", "audit", "rounds_of_journal"]


@dataclass
class AuditReport:
    """What the journals say the link's pool is, and every disagreement found."""

    link: str
    rounds: int = 0
    pool: int = 0
    carry: int = 0
    contributed: int = 0
    paid: int = 0
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"link": self.link, "rounds": self.rounds, "pool": self.pool, "carry": self.carry,
                "contributed": self.contributed, "paid": self.paid, "problems": list(self.problems)}


def rounds_of_journal(table: str, entries: Iterable[tuple[str, str | None, str]], link: str) -> list[dict[str, Any]]:
    """The linked rounds of one journal: (kind, round_id, body) entries in journal order ->
    [{table, round_id, floor, settlement}] for the rounds settled against `link`."""
    assigned: dict[str, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for kind, rid, body_text in entries:
        if kind == "input" and rid is not None:
            body = json.loads(body_text)
            floor = body.get("floor")
            if body.get("action") == "settle" and isinstance(floor, dict) and floor.get("link") == link:
                assigned[rid] = floor
        elif kind == "settlement" and rid is not None and rid in assigned:
            body = json.loads(body_text)
            out.append({"table": table, "round_id": rid, "floor": assigned.pop(rid),
                        "settlement": body.get("settlement", {})})
    return out


def _stakes(settlement: Mapping[str, Any]) -> int:
    return sum(int(w["stake"]) for s in settlement.get("seats", []) for w in s.get("wagers", [])
               if w.get("wager") == "progressive" and w.get("outcome") in ("win", "lose"))


def audit(link: LinkSettings, rounds: Iterable[Mapping[str, Any]]) -> AuditReport:
    """Recompute the link's pool from its rounds (any order: they are put in seq order)."""
    report = AuditReport(link.name, pool=link.opening_pool)
    ordered = sorted(rounds, key=lambda r: int(r["floor"]["seq"]))
    for expected_seq, r in enumerate(ordered, 1):
        f, s, where = r["floor"], r["settlement"], f"{r['table']} {r['round_id']}"
        if int(f["seq"]) != expected_seq:
            report.problems.append(f"{where}: seq {f['seq']}, expected {expected_seq} (a round missing or doubled)")
        stakes = _stakes(s)
        amount, carry = contribution(report.carry, stakes, link.rate_ppm)
        checks = [("stakes", f["stakes"], stakes), ("carry_before", f["carry_before"], report.carry),
                  ("pool_before", f["pool_before"], report.pool), ("contribution", f["contribution"], amount),
                  ("carry_after", f["carry_after"], carry), ("pool", f["pool"], report.pool + amount)]
        ledger = s.get("jackpot") or {}
        pool_after = int(ledger.get("pool_after", report.pool + amount))
        checks += [("settlement pool_before", ledger.get("pool_before", report.pool + amount), report.pool + amount),
                   ("pool_after", f["pool_after"], pool_after)]
        for name, journaled, recomputed in checks:
            if journaled != recomputed:
                report.problems.append(f"{where}: {name} is {journaled}, recomputed {recomputed}")
        report.paid += sum(int(m["amount"]) for m in ledger.get("movements", []) if m.get("kind") == "payout")
        report.contributed += amount
        report.pool, report.carry = pool_after, carry
        report.rounds += 1
    return report
