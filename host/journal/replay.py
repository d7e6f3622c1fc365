"""`cardshoe replay JOURNAL`: rebuild every round from a journal alone and check it.

The journal's inputs (accepted shoe frames and table-controller inputs) are fed, in
journal order, to a fresh `TableCore` (the same code the daemon runs). Every event and
settlement it derives must equal, byte for byte as canonical JSON, the one the daemon
journaled at the time. An audit never touches what it audits: the journal is opened
read-only and nothing is created beside it (no `-wal`, no `-shm`; see `JournalReader`),
and SQLite's integrity check runs before anything is replayed.

Exit status 0 when all agree, 1 on any difference (each printed), 2 when the journal
cannot be read or is corrupt. The first line printed is always the verdict in one line
(`identical: ...`, `DIFFERENT: ...`, or on stderr `cardshoe replay: ...` for exit 2);
never a traceback.

`--export ROUND_ID` prints that round, rebuilt, in the round-file format of
`cardshoe settle` (docs/round-format.md) instead.

Several files (a table's gaming days in order, issue 25: `cardshoe replay DIR/T07.2026-11-2*.sqlite`)
are each replayed alone, one verdict line each (`DAY FILE: identical: ...`), and then checked as a
chain (`cardshoe.journal.days.check_chain`): each closed day sealed by its closing entry, the next
day opening from that entry, the shoe handed over as it was handed out. The last line is the
chain's verdict (`chain of N days: linked` or `chain of N days: BROKEN: ...`); exit 1 if any file
differs or the chain is broken.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import sqlite3

from cardshoe.journal import chain
from cardshoe.journal.store import Entry, JournalError, JournalReader, JournalUnreadable, canonical_json


@dataclass
class ReplayReport:
    """What a replay found."""

    inputs: int = 0
    derived: int = 0
    rounds: list[str] = field(default_factory=list)
    settlements: dict[str, str] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    rejects: dict[str, int] = field(default_factory=dict)
    link_events: int = 0
    checkpoints: int = 0
    """Checkpoints checked against the rebuilt state (all agreeing when `ok`)."""
    started_from: int | None = None
    """The checkpoint entry the rebuild started from (None: from zero)."""
    chained: int = 0
    """Entries whose hash chain was checked (`cardshoe.journal.chain`); breaks are mismatches."""
    chain_note: str | None = None
    """What the chain check could not cover (a schema 1 journal; entries sealed at an upgrade)."""

    @property
    def ok(self) -> bool:
        """True when every derived entry was reproduced exactly."""
        return not self.mismatches


def replay(path: Path, core: Any = None, *, check: bool = False, after_id: int = 0) -> tuple[ReplayReport, Any]:
    """Rebuild the table from the journal at `path` into `core` (a new `TableCore` when
    None); returns the report and the rebuilt core. A starting daemon does the same
    (from its latest checkpoint: `core` is then the checkpoint's, `after_id` what it covers).

    Every checkpoint met on the way is checked against the state rebuilt at that point.
    With `check`, SQLite's integrity check runs first. A journal that cannot be read, or
    is corrupt, raises `JournalUnreadable` (never a bare SQLite or JSON error)."""
    try:
        return _replay(path, core, check, after_id)
    except sqlite3.Error as exc:
        raise JournalUnreadable(f"journal {path} cannot be read: {exc}") from exc
    except ValueError as exc:  # json.JSONDecodeError: an entry's body is not JSON
        raise JournalUnreadable(f"journal {path}: an entry cannot be read: {exc}") from exc


def _replay(path: Path, core: Any, check: bool, after_id: int = 0) -> tuple[ReplayReport, Any]:
    from cardshoe.daemon.core import TableCore, TableSetup
    from cardshoe.daemon.service import feed

    report = ReplayReport()
    if core is None:
        # The journal's first input is the table's setup, which replaces this one.
        core = TableCore(TableSetup(name="table", game="three-card-poker", seats=7))
    expected: list[Entry] = []
    produced: list[tuple[int, str, str | None, str]] = []  # (input entry id, kind, round, body)
    with JournalReader(path) as reader:
        if check:
            problems = reader.integrity_check()
            if problems:
                raise JournalUnreadable(f"journal {path} is corrupt (integrity check): {'; '.join(problems)}")
        links = _ChainCheck(reader, after_id, report)
        for entry in reader.entries(after_id=after_id):
            links.add(entry)
            if entry.kind in ("event", "settlement"):
                expected.append(entry)
            elif entry.kind in ("frame", "input"):
                applied = feed(core, entry)
                report.inputs += 1
                if applied is not None:
                    for d in applied.derived:
                        produced.append((entry.id, d.kind, d.round_id, canonical_json(d.body)))
            elif entry.kind == "reject":
                data = entry.data()
                if data.get("type") == "rejections_summary":
                    # Counted rejections beyond the samples journaled (see `RejectionLimiter`).
                    for reason, n in dict(data.get("unsampled", {})).items():
                        report.rejects[str(reason)] = report.rejects.get(str(reason), 0) + int(n)
                else:
                    reason = str(data.get("reason", "?"))
                    report.rejects[reason] = report.rejects.get(reason, 0) + 1
            elif entry.kind == "link":
                report.link_events += 1
            elif entry.kind == "checkpoint":
                report.checkpoints += 1
                problem = _check_checkpoint(path, entry, core)
                if problem is not None:
                    report.mismatches.append(problem)
        links.finish()
    for want, (source, kind, rid, body) in zip(expected, produced):
        if want.kind != kind or want.round_id != rid or want.body != body:
            report.mismatches.append(
                f"entry {want.id} (from input {source}): journal {want.kind} {want.body} != replay {kind} {body}")
    if len(expected) != len(produced):
        report.mismatches.append(f"the journal holds {len(expected)} derived entries; replay derived {len(produced)}")
    report.derived = len(produced)
    report.rounds = list(dict.fromkeys(rid for _, _, rid, _ in produced if rid is not None))
    for _, kind, rid, body in produced:
        if kind == "settlement" and rid is not None:
            report.settlements[rid] = body
    return report, core


class _ChainCheck:
    """The hash chain of the entries replayed, checked as they are read (breaks are mismatches)."""

    def __init__(self, reader: JournalReader, after_id: int, report: ReplayReport) -> None:
        self.report = report
        self.on = reader.chained
        self.prev_id = after_id
        self.prev: str | None = None
        if not self.on:
            report.chain_note = "a schema 1 journal, written before the hash chain: not checked (a daemon " \
                                "that opens it upgrades it)"
            return
        if after_id == 0:
            self.prev = reader.genesis()
        else:
            before = reader.entry(after_id)
            self.prev = None if before is None else before.chain
        sealed = reader.meta("chain_sealed_to")
        if sealed is not None and int(sealed) > 0:
            report.chain_note = (f"entries 1..{sealed} were written before the hash chain and sealed as they stood "
                                 "when the journal was upgraded")
        self.batch: list[chain.ChainLink] = []

    def add(self, entry: Entry) -> None:
        if not self.on:
            return
        self.batch.append(chain.ChainLink(entry.id, entry.t_ns, entry.kind, entry.shoe, entry.boot, entry.seq,
                                          entry.type, entry.round_id, entry.body, chain.raw_sha256(entry.raw),
                                          entry.chain))
        if len(self.batch) >= 500:
            self.finish()

    def finish(self) -> None:
        if not self.on or not self.batch:
            return
        if self.prev is None:
            self.report.mismatches.append(f"entry {self.prev_id}: has no chain value to check the entries after it")
            self.prev = self.batch[0].chain or ""
            self.prev_id = self.batch[0].id - 1
        problems, self.prev, self.prev_id = chain.breaks(self.batch, self.prev, self.prev_id)
        self.report.mismatches += [f"chain: {p}" for p in problems]
        self.report.chained += len(self.batch)
        self.batch = []


def _check_checkpoint(path: Path, entry: Entry, core: Any) -> str | None:
    """What is wrong with a checkpoint against the state rebuilt up to it, or None: its
    stored state is loaded and walked canonically beside the rebuilt one."""
    from cardshoe.journal import checkpoint

    try:
        stored = checkpoint.load(entry.id, entry.data(), entry.raw)
        stored.set_archive(checkpoint.ArchiveLoader(path))
        want, have = checkpoint.state_digest(stored), checkpoint.state_digest(core)
    except (checkpoint.CheckpointInvalid, LookupError, ValueError, TypeError) as exc:
        return f"checkpoint {entry.id}: {exc}" if not str(exc).startswith("checkpoint ") else str(exc)
    if want != have:
        return (f"checkpoint {entry.id}: its stored state (digest {want[:16]}) is not the state replay rebuilt "
                f"up to it (digest {have[:16]})")
    return None


def restore(path: Path, fresh: Any) -> tuple[ReplayReport, Any, str | None]:
    """Rebuild the table for a starting daemon: from the latest checkpoint, replaying only
    the entries after it; from zero (into `fresh`) when there is none, or when it is damaged
    or mismatching (the third value then says why, for a WARNING)."""
    from cardshoe.journal import checkpoint

    warning: str | None = None
    try:
        with JournalReader(path) as reader:
            latest = reader.last("checkpoint")
        if latest is not None:
            body = latest.data()
            core = checkpoint.load(latest.id, body, latest.raw)
            core.set_archive(checkpoint.ArchiveLoader(path))
            report, core = replay(path, core, after_id=latest.id)
            report.started_from = latest.id
            return report, core, None
    except (checkpoint.CheckpointInvalid, ValueError) as exc:
        warning = f"{exc}; replaying the whole journal"
    report, core = replay(path, fresh)
    return report, core, warning


def verdict(report: ReplayReport) -> str:
    """The report in one line."""
    if report.ok:
        return (f"identical: {report.inputs} inputs rebuild all {report.derived} derived entries "
                f"({len(report.rounds)} rounds, {len(report.settlements)} settled)")
    return f"DIFFERENT: {len(report.mismatches)} differences; first: {report.mismatches[0]}"


def _print_report(report: ReplayReport, out: TextIO) -> None:
    print(verdict(report), file=out)
    print(f"inputs replayed: {report.inputs}", file=out)
    print(f"derived entries: {report.derived} ({'identical' if report.ok else 'DIFFERENT'})", file=out)
    print(f"rounds: {len(report.rounds)}, settled: {len(report.settlements)}", file=out)
    if report.rejects:
        print("rejected frames: " + ", ".join(f"{k} {v}" for k, v in sorted(report.rejects.items())), file=out)
    print(f"link losses and returns: {report.link_events}", file=out)
    print(f"checkpoints checked: {report.checkpoints}", file=out)
    print(f"hash chain: {report.chained} entries checked" + (f" ({report.chain_note})" if report.chain_note else ""),
          file=out)
    for problem in report.mismatches:
        print(f"MISMATCH {problem}", file=out)


def main(argv: list[str]) -> int:
    """`cardshoe replay JOURNAL [--export ROUND_ID] [--json]`."""
    parser = argparse.ArgumentParser(prog="cardshoe replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("journal", type=Path, nargs="+",
                        help="the daemon's journal (SQLite); several: a table's day files, in day order")
    parser.add_argument("--export", metavar="ROUND_ID", help="print this round in the round-file format")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if len(args.journal) > 1:
        if args.export is not None or args.json:
            print("cardshoe replay: --export and --json take one journal", file=sys.stderr)
            return 2
        return _days(args.journal)
    args.journal = args.journal[0]
    try:
        report, core = replay(args.journal, check=True)
    except JournalError as exc:
        print(f"cardshoe replay: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - an audit tool answers in one line, never a traceback
        print(f"cardshoe replay: journal {args.journal} cannot be replayed: {type(exc).__name__}: "
              f"{_one_line(str(exc))}", file=sys.stderr)
        return 2
    if args.export is not None:
        round_ = core.rounds.get(args.export)
        if round_ is None:
            known = ", ".join(report.rounds[-5:]) or "none"
            print(f"cardshoe replay: --export: no round {args.export!r} in {args.journal} (last: {known})",
                  file=sys.stderr)
            return 2
        try:
            exported = core.export(round_)
        except ValueError as exc:
            print(f"cardshoe replay: --export: round {args.export} cannot be exported yet: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(exported, indent=2, sort_keys=True))
        if not report.ok:
            print(f"cardshoe replay: {verdict(report)}", file=sys.stderr)
        return 0 if report.ok else 1
    if args.json:
        print(json.dumps({"inputs": report.inputs, "derived": report.derived, "rounds": report.rounds,
                          "settlements": {k: json.loads(v) for k, v in report.settlements.items()},
                          "rejects": report.rejects, "link_events": report.link_events,
                          "checkpoints": report.checkpoints, "chained": report.chained,
                          "chain_note": report.chain_note,
                          "mismatches": report.mismatches, "ok": report.ok, "verdict": verdict(report)},
                         indent=2, sort_keys=True))
    else:
        _print_report(report, sys.stdout)
    return 0 if report.ok else 1


def _days(paths: list[Path]) -> int:
    """Each day file alone, then the chain of days (see the module docstring)."""
    from cardshoe.journal.days import check_chain

    worst = 0
    for path in paths:
        try:
            report, _core = replay(path, check=True)
        except JournalError as exc:
            print(f"{path.name}: cardshoe replay: {_one_line(str(exc))}")
            worst = 2
            continue
        print(f"{path.name}: {verdict(report)}")
        for problem in report.mismatches:
            print(f"{path.name}: MISMATCH {problem}")
        if not report.ok:
            worst = max(worst, 1)
    if worst == 2:
        print(f"chain of {len(paths)} days: not checked (a file cannot be read)")
        return 2
    try:
        problems = check_chain(paths)
    except JournalError as exc:
        print(f"chain of {len(paths)} days: cannot be checked: {_one_line(str(exc))}")
        return 2
    if problems:
        print(f"chain of {len(paths)} days: BROKEN: {len(problems)} problems; first: {problems[0]}")
        for problem in problems[1:]:
            print(f"chain: {problem}")
        return 1
    print(f"chain of {len(paths)} days: linked (each day sealed by its closing entry, the next opened from it, "
          "the shoe handed over as handed out)")
    return worst


def _one_line(text: str) -> str:
    return " ".join(text.split())
