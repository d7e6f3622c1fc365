"""A table's gaming days as journal files (issue 25): what each day file says of its neighbours,
and the audit of a chain of days (`cardshoe replay DAY1 DAY2 ...`).

A day file written by `cardshoe.daemon.gamingday` holds, besides its own history:

- `daemon` `day_opened` (near its start): its gaming day and, under `previous`, the day before:
  its file, its `journal_id`, and the id and chain value of its closing entry;
- `input` `shoe_handover` `direction: "in"`: what it took over from the day before;
- when closed: `input` `shoe_handover` `direction: "out"`, a checkpoint, and as its last entry
  `daemon` `day_closed` with the head of its chain (`head`: the id and chain value of the entry
  before it), the next day and that day's file and journal id.

`check_chain` checks that consecutive files link: each closed day's closing entry is its last and
seals the entry before it, the next day names that closing entry, journal id and file, and the
two handover copies carry the same state. Pure reads: the files are opened read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cardshoe.journal.store import JournalReader


def day_closed(reader: JournalReader) -> dict[str, Any] | None:
    """The closing entry's body (with its `id` and `chain`), None if the day is open."""
    top = reader.top()
    if top is None or top.kind != "daemon":
        return None
    body = top.data()
    if body.get("type") != "day_closed":
        return None
    return {**body, "id": top.id, "chain": top.chain}


def handovers(reader: JournalReader) -> dict[str, dict[str, Any]]:
    """The `shoe_handover` inputs of a day file by direction (`in`, `out`)."""
    out: dict[str, dict[str, Any]] = {}
    for entry in reader.entries(("input",)):
        body = entry.data()
        if body.get("action") == "shoe_handover":
            out.setdefault(str(body.get("direction")), {**body, "entry": entry.id})
    return out


def day_opened(reader: JournalReader) -> dict[str, Any] | None:
    """The `day_opened` entry's body (with its `id`), None for a file that has none."""
    for entry in reader.entries(("daemon",)):
        body = entry.data()
        if body.get("type") == "day_opened":
            return {**body, "id": entry.id}
    return None


def _carried(body: dict[str, Any] | None) -> Any:
    if body is None:
        return None
    return {k: v for k, v in body.items() if k not in ("entry", "direction")}


def check_chain(paths: list[Path]) -> list[str]:
    """The problems of the chain of day files `paths` (in day order); [] when they link."""
    problems: list[str] = []
    facts = []
    for path in paths:
        with JournalReader(path) as reader:
            facts.append((path, reader.meta("journal_id"), day_closed(reader), day_opened(reader), handovers(reader)))
    for (path, _jid, closed, _opened, hand) in facts:
        if closed is None:
            continue
        before = None
        with JournalReader(path) as reader:
            entry = reader.entry(int(closed["id"]) - 1)
            before = None if entry is None else (entry.id, entry.chain)
        head = closed.get("head") or {}
        if before != (head.get("id"), head.get("chain")):
            problems.append(f"{path.name}: its closing entry {closed['id']} does not seal the entry before it "
                            f"(head {head} against {before})")
        if "out" not in hand:
            problems.append(f"{path.name}: closed without a shoe_handover out")
    for (a, b) in zip(facts, facts[1:]):
        path_a, jid_a, closed_a, _o, hand_a = a
        path_b, _jid_b, _c, opened_b, hand_b = b
        if closed_a is None:
            problems.append(f"{path_a.name}: not closed, yet {path_b.name} follows it")
            continue
        prev = (opened_b or {}).get("previous") or {}
        if opened_b is None:
            problems.append(f"{path_b.name}: has no day_opened entry")
        elif (prev.get("journal_id"), prev.get("file")) != (jid_a, path_a.name):
            problems.append(f"{path_b.name}: opens after {prev.get('file')} ({prev.get('journal_id')}), not "
                            f"{path_a.name} ({jid_a})")
        elif prev.get("closing") != {"id": closed_a["id"], "chain": closed_a["chain"]}:
            problems.append(f"{path_b.name}: names closing entry {prev.get('closing')} of {path_a.name}, whose "
                            f"closing entry is {closed_a['id']} ({closed_a['chain']})")
        if closed_a.get("next_file") != path_b.name:
            problems.append(f"{path_a.name}: closed into {closed_a.get('next_file')}, not {path_b.name}")
        if _carried(hand_a.get("out")) != _carried(hand_b.get("in")):
            problems.append(f"{path_b.name}: the shoe_handover it took in is not the one {path_a.name} gave out")
    return problems


__all__ = ["check_chain", "day_closed", "day_opened", "handovers"]
