"""The offline recomputation of a link's pool: from the entries the floor holds (`audit_store`,
issue 21 item 5), and from the tables' journals alone (`audit`).

`audit_store` takes nothing the floor stored about money at its word. For every table stream
it checks the hash chain of the entries held; for every link it walks the assignments in seq
order and rebuilds each round from the table's entries up to the `settle_sent` the floor
settled it from (`cardshoe.floor.rebuild`: the replay core, every frame checked with its
shoe's key), recomputes the assignment against the pool as the walk has it (hands from the
cards, payouts by the game's rules: `cardshoe.floor.progressive.assign`), and compares every
field of the stored assignment row and body, each hit row, the floor's signature, and at the
end the link's pool, carry and round count: an edited row is a difference that names it.

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
from typing import Any, Callable, Iterable, Mapping

from .progressive import Assignment, FloorRefusal, LinkSettings, PoolState, assign, contribution, round_digest

__all__ = ["AuditReport", "audit", "audit_store", "rounds_of_journal"]


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


def _stream_chain_problems(store: Any, stream: dict[str, Any]) -> list[str]:
    """The hash chain of one stream's entries as held, and its row's mark and chain value."""
    from cardshoe.journal.chain import breaks

    name, base = str(stream["table"]), int(stream["base_id"] or 0)
    prev = store.base_chain(name)
    prev_id, out = base, []
    anchored = prev is not None
    while True:
        page = store.entries(name, after_id=prev_id, limit=2000)
        if not page:
            break
        links = [e.link() for e in page]
        if not anchored:
            # Entries held from before the chain (a schema 1 store): the first chained one anchors it.
            legacy = [l for l in links if l.chain is None]
            links = links[len(legacy):] if len(legacy) < len(links) else []
            if links:
                prev, prev_id, anchored = str(links[0].chain), links[0].id, True
                links = links[1:]
            else:
                prev_id = page[-1].id
                continue
        problems, prev, prev_id = breaks(links, str(prev), prev_id)
        out += [f"table {name}: {p}" for p in problems]
        prev_id = page[-1].id
    if prev_id != int(stream["high_water"]):
        out.append(f"table {name}: the floor's mark is entry {stream['high_water']}, its entries end at {prev_id}")
    return out


def audit_store(store: Any, links: Iterable[LinkSettings], *,
                keys_for: Callable[[str], Callable[[int], bytes | None] | None],
                public_key: bytes | None = None) -> AuditReport:
    """Recompute every assignment and hit of `links` from the entries `store` holds (see the
    module's docstring); `keys_for(table name)` gives a table's shoe keys, `public_key` the
    floor's (checked on every signed assignment; None: the key each names)."""
    from .rebuild import Rebuilder
    from .signing import verify_signed

    report = AuditReport(",".join(link.name for link in links))
    streams = store.tables()
    for stream in streams:
        report.problems += _stream_chain_problems(store, stream)
    rebuilder = Rebuilder(store, keys_for, cache_size=max(16, len(streams)))
    for link in links:
        row = store.pool(link.name)
        if row["opening"] != link.opening_pool:
            report.problems.append(f"link {link.name}: opening pool {row['opening']} in the store, "
                                   f"{link.opening_pool} given")
        pool, carry, seq = link.opening_pool, 0, 0
        hits_by_seq: dict[int, list[tuple[int, str, int, str]]] = {}
        for h in store.hits(link.name):
            hits_by_seq.setdefault(int(h["seq"]), []).append((h["seat"], h["line"], h["amount"], h["rule"]))
        for held in store.assignment_rows(link.name):
            seq += 1
            where = f"link {link.name} seq {held['seq']} ({held['table']} {held['round_id']})"
            if held["seq"] != seq:
                report.problems.append(f"{where}: seq {held['seq']}, expected {seq} (a round missing or doubled)")
            settings = LinkSettings(link.name, int(held.get("reset") or link.reset),
                                    int(held.get("rate_ppm") if held.get("rate_ppm") is not None else link.rate_ppm))
            made = _recompute(store, rebuilder, settings, PoolState(pool, carry, seq - 1), held, where, report)
            got_hits = hits_by_seq.pop(int(held["seq"]), [])
            if made is None:
                # Not rebuilt (named above): the walk goes on from what the row says.
                pool, carry = int(held["pool_after"]), int(held["carry_after"])
                continue
            for name in ("stakes", "contribution", "carry_before", "carry_after", "pool_before", "pool", "pool_after",
                         "digest"):
                body_value, recomputed = held.get(name), getattr(made, name)
                row_value = held["_row"].get(name, body_value)
                if row_value != recomputed:
                    report.problems.append(f"{where}: assignments.{name} is {row_value}, recomputed {recomputed}")
                elif body_value != recomputed:
                    report.problems.append(f"{where}: the assignment's body says {name} {body_value}, recomputed "
                                           f"{recomputed}")
            want_hits = [(h.seat, h.line, h.amount, h.rule) for h in made.hits]
            said = [(x.get("seat"), x.get("line"), x.get("amount"), x.get("rule")) for x in held.get("hits", [])]
            if said != want_hits:
                report.problems.append(f"{where}: the assignment's body says hits {said}, recomputed {want_hits}")
            if got_hits != want_hits:
                report.problems.append(f"{where}: hits rows {got_hits}, recomputed {want_hits}")
            signed = held.get("_signed")
            if signed is not None:
                problem = verify_signed(signed, public_key)
                if problem is not None:
                    report.problems.append(f"{where}: signature: {problem}")
            elif held.get("entry") is not None:
                report.problems.append(f"{where}: the assignment is not signed")
            report.paid += sum(h.amount for h in made.hits)
            report.contributed += made.contribution
            pool, carry = made.pool_after, made.carry_after
            report.rounds += 1
        for stray in sorted(hits_by_seq):
            report.problems.append(f"link {link.name}: hits rows of seq {stray}, which has no assignment")
        if (row["pool"], row["carry"], row["rounds"]) != (pool, carry, seq):
            report.problems.append(f"link {link.name}: the store holds pool {row['pool']} carry {row['carry']} after "
                                   f"{row['rounds']} rounds; recomputed {pool} {carry} after {seq}")
        report.pool, report.carry = pool, carry
    return report


def _recompute(store: Any, rebuilder: Any, settings: LinkSettings, state: PoolState, held: dict[str, Any],
               where: str, report: AuditReport) -> Assignment | None:
    """The assignment of `held`'s round recomputed from the table's entries, or None (named)."""
    entry, stream, rid = held.get("entry"), str(held["table"]), str(held["round_id"])
    if entry is None:
        report.problems.append(f"{where}: made before the floor rebuilt rounds (no journal entry named): not "
                               "recomputed")
        return None
    found = store.entries(stream, after_id=int(entry) - 1, upto=int(entry), lineage=True, limit=1)
    if not found or found[0].kind != "floor":
        report.problems.append(f"{where}: entry {entry} is not the table's settle_sent")
        return None
    if found[0].chain != held.get("chain"):
        report.problems.append(f"{where}: the assignment names chain value {str(held.get('chain'))[:16]}... of entry "
                               f"{entry}, the entry held has {str(found[0].chain)[:16]}...")
    try:
        round_json = rebuilder.round_file(stream, rid, int(entry), found[0].t_ns)
        made = assign(settings, state, stream, round_json)
    except FloorRefusal as exc:
        report.problems.append(f"{where}: cannot be rebuilt from the table's entries: {exc.message}")
        return None
    if made.digest != round_digest(round_json):
        report.problems.append(f"{where}: digest")
    return made
