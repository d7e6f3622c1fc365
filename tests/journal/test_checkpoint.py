"""Journaled checkpoints (issue 15): a start from the latest checkpoint rebuilds the same table
as a replay from zero, and goes on to derive the same events and settlements; a damaged
checkpoint is not used (the whole journal is replayed, with a warning); `cardshoe replay`
checks every checkpoint against the state it rebuilt at that point.

Journals are written by the real `TableService` (real core, real SQLite journal), fed Three
Card Poker rounds by `cardshoe.benchmarks.daemon_journal`.
"""

from __future__ import annotations

import io
import logging
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from cardshoe.benchmarks.daemon_journal import SETUP, JournalBuilder
from cardshoe.daemon.core import TableCore
from cardshoe.rounds import Round
from cardshoe.journal import JournalReader, append, canonical_json, checkpoint
from cardshoe.journal import replay as replay_cli
from cardshoe.journal.replay import replay, restore


def _journal(tmp_path: Path, *, rounds: int = 3, every: int = 37, mid_round_cards: int = 5) -> Path:
    """Rounds played with a checkpoint every `every` inputs, then a round left mid-deal with a
    checkpoint in it (its cards half dealt), then more cards after that checkpoint."""
    path = tmp_path / "journal.sqlite"
    b = JournalBuilder(path, checkpoint_every=every)
    for _ in range(rounds):
        b.play_round()
    rid = str(b.service.submit_input({"action": "open_round"}).round_id)
    from cardshoe.rounds import PlaceWager
    for seat in (1, 2):
        b.op(rid, PlaceWager(seat=seat, wager="ante", amount=500))
    for text in ["Ah", "Kd", "Qs", "2c", "7d"][:mid_round_cards]:
        b.card(text)
    assert b.service.checkpoint() is not None
    for text in ["9s", "9h", "3c"]:
        b.card(text)
    b.close()
    return path


def _continue(core: TableCore) -> list[str]:
    """The same further inputs fed to a core: the rest of the round in play, settled, and a
    new round; what it derives, as canonical JSON."""
    from cardshoe.rounds import Choice, Decision, operation_to_json

    out: list[str] = []
    t = 1_800_000_000_000_000_000
    rid = core.current_round_id()
    index = max(s.next_index for s in core.shoes.values())
    for text in ["Jc"]:  # the ninth card: 3 for each of seats 1, 2 and the dealer
        t += 1_000_000
        msg: dict[str, Any] = {"type": "CARD", "shoe_no": core.shoes[1].shoe_no, "index": index, "code": _code(text), "raw": f"{index:08x}",
                               "t_ms": index, "card_deck": 7, "method": 1, "flags": 0}
        index += 1
        out += [canonical_json(d.body) for d in core.apply_frame(1, msg, t).derived]
    for seat in (1, 2):
        t += 1_000_000
        body = {"action": "op", "round_id": rid, "op": operation_to_json(Decision(seat=seat, choice=Choice.PLAY))}
        out += [canonical_json(d.body) for d in core.apply_input(body, t).derived]
    for body in ({"action": "settle", "round_id": rid}, {"action": "open_round"}):
        t += 1_000_000
        out += [canonical_json(d.body) for d in core.apply_input(body, t).derived]
    return out


def _code(text: str) -> int:
    from cardshoe.cards import parse_card

    return parse_card(text)


def test_a_start_from_the_checkpoint_rebuilds_the_table_a_replay_from_zero_does(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    with JournalReader(path) as reader:
        assert reader.count("checkpoint") >= 3  # periodic ones and the one mid-round
        total_inputs = reader.count("frame") + reader.count("input")
    started, from_ck, warning = restore(path, TableCore(SETUP))
    assert warning is None and started.started_from is not None and started.ok
    assert started.inputs == 3  # only the three cards after the latest checkpoint
    full, from_zero = replay(path)
    assert full.ok and full.inputs == total_inputs and full.started_from is None
    # Settled rounds come back from the checkpoint, readable as any round.
    # (`get` is how the API reads them, cardshoe.daemon.control.)
    for rid, rnd in from_zero.rounds.items():
        got = from_ck.rounds.get(rid)
        assert isinstance(got, Round), (rid, type(got))
        assert from_ck.export(got) == from_zero.export(rnd)
    assert checkpoint.state_digest(from_ck) == checkpoint.state_digest(from_zero)
    # ...and both go on alike: the same events, the same settlement of the round in play.
    later_ck, later_zero = _continue(from_ck), _continue(from_zero)
    assert any('"settlement"' in body for body in later_zero)
    assert later_ck == later_zero


def test_replay_checks_every_checkpoint_and_says_identical(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    report, _ = replay(path)
    with JournalReader(path) as reader:
        assert report.checkpoints == reader.count("checkpoint") >= 3
    assert report.ok, report.mismatches


def _latest_checkpoint(path: Path) -> tuple[int, dict[str, Any], bytes]:
    with JournalReader(path) as reader:
        entry = reader.last("checkpoint")
    assert entry is not None and entry.raw is not None
    return entry.id, entry.data(), entry.raw


def test_a_damaged_checkpoint_is_not_used_the_whole_journal_is_replayed_with_a_warning(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    eid, _, blob = _latest_checkpoint(path)
    damaged = bytearray(blob)
    damaged[len(damaged) // 2] ^= 0x40
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entries SET raw = ? WHERE id = ?", (bytes(damaged), eid))
    started, core, warning = restore(path, TableCore(SETUP))
    assert warning is not None and f"checkpoint {eid}" in warning and "damaged" in warning
    assert started.started_from is None
    _, from_zero = replay(path)
    assert checkpoint.state_digest(core) == checkpoint.state_digest(from_zero)
    # The audit reports the damaged checkpoint as a difference (exit 1).
    status, out = _run_replay(path)
    assert status == 1 and f"checkpoint {eid}" in out and "damaged" in out, out


def test_a_checkpoint_whose_state_disagrees_with_the_journal_is_a_difference_in_replay(tmp_path: Path) -> None:
    """An intact checkpoint of a state the journal does not lead to (here: a jackpot pool no
    input set) is found by the audit, which rebuilds from zero."""
    path = _journal(tmp_path)
    _, from_zero = replay(path)
    from_zero.jackpot_pool = 123_456
    with JournalReader(path) as reader:
        last_id = max(e.id for e in reader.entries())
    made = checkpoint.make(from_zero, covers=last_id)
    with sqlite3.connect(path) as conn:
        append(conn, "checkpoint", canonical_json(made.body), t_ns=1, raw=made.blob)
    status, out = _run_replay(path)
    assert status == 1, out
    assert "is not the state replay rebuilt" in out, out
    # Unchanged, the audit is identical: the difference is the forged state, nothing else.
    from_zero.jackpot_pool = None
    honest = tmp_path / "honest"
    honest.mkdir()
    path2 = _journal(honest)
    assert _run_replay(path2)[0] == 0


def _run_replay(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = replay_cli.main([str(path)])
    return status, out.getvalue() + err.getvalue()


def test_the_daemon_checkpoints_at_stop_starts_from_it_and_warns_on_a_damaged_one(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from cardshoe.daemon.config import TableConfig
    from cardshoe.daemon.daemon import Daemon

    path = _journal(tmp_path)
    config = TableConfig(port=str(tmp_path / "no-such-tty"), game=SETUP.game, seats=SETUP.seats, name=SETUP.name,
                         journal=path, limits=SETUP.limits)
    daemon = Daemon(config, keys={}.get)
    daemon.start()
    assert daemon.restored.started_from is not None
    daemon.stop()
    eid, _, blob = _latest_checkpoint(path)
    assert eid > daemon.restored.started_from  # the stop journaled a new one
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entries SET raw = ? WHERE id = ?", (blob[:-3], eid))
    caplog.set_level(logging.WARNING, logger="cardshoe.daemon.daemon")
    again = Daemon(config, keys={}.get)
    again.start()
    try:
        # Rebuilt from zero; the differences it reports are the damaged checkpoint itself, and the
        # hash chain broken at that entry (its raw bytes are sealed by the chain, issue 21 item 3).
        assert again.restored.started_from is None
        assert again.restored.mismatches[0] == f"checkpoint {eid}: its stored state is damaged (blob digest differs)"
        assert [m.split(":")[1].strip() for m in again.restored.mismatches[1:]] == [f"entry {eid}"]
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "checkpoint not used" in r.getMessage()]
        assert warnings and f"checkpoint {eid}" in warnings[0].getMessage(), caplog.text
    finally:
        again.stop()


def test_entries_are_read_in_pages_and_none_is_lost_or_repeated_across_pages(tmp_path: Path) -> None:
    """`JournalReader.entries` pages (the /events backlog and replay read through it): every
    entry once, in order, across page boundaries, with `after_id` and a kind filter."""
    from cardshoe.journal import Journal
    from cardshoe.journal.store import ENTRY_PAGE

    path = tmp_path / "pages.sqlite"
    n = 2 * ENTRY_PAGE + 7
    with Journal(path) as journal:
        def fill(conn: sqlite3.Connection) -> None:
            for i in range(n):
                append(conn, "link" if i % 3 else "event", {"type": "x", "i": i}, t_ns=i)
        journal.write(fill)
    with JournalReader(path) as reader:
        assert [e.data()["i"] for e in reader.entries()] == list(range(n))
        assert [e.data()["i"] for e in reader.entries(("link",))] == [i for i in range(n) if i % 3]
        assert [e.data()["i"] for e in reader.entries(after_id=ENTRY_PAGE + 1)] == list(range(ENTRY_PAGE + 1, n))


def test_a_settled_round_is_stored_whole_in_one_checkpoint_and_referred_to_after_a_restart(tmp_path: Path) -> None:
    """Checkpoints stay small: a round stored whole in one checkpoint is only referred to by
    the later ones, also those written after a start from it (else each would copy the history)."""
    import pickle
    import zlib

    from cardshoe.daemon.core import _Archived, _Frozen

    path = _journal(tmp_path)
    _, core, _ = restore(path, TableCore(SETUP))
    settled = [rid for rid in core.rounds if rid in core.settlements and rid != core.current_round_id()]
    assert len(settled) == 3
    again = pickle.loads(zlib.decompress(checkpoint.make(core, covers=1).blob))
    kinds = {rid: type(dict.__getitem__(again.rounds, rid)) for rid in settled}
    assert set(kinds.values()) == {_Archived}, kinds
    assert not any(isinstance(dict.__getitem__(again.settlements, rid), _Frozen) for rid in settled)


class _Shell:
    """A pickled payload that would run a shell command when unpickled."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        import os

        return (os.system, ("echo unpickled > /dev/null",))


def test_a_checkpoint_naming_anything_but_the_cores_classes_is_refused_not_run() -> None:
    """`cardshoe replay` audits journals it did not write: a checkpoint edited to carry a
    pickled call (with its digest recomputed, as anyone editing the file can) must be refused
    as invalid, never executed. Kills: plain `pickle.loads` in `checkpoint.load`."""
    import hashlib
    import pickle
    import zlib

    blob = zlib.compress(pickle.dumps(_Shell()))
    body = {"type": "checkpoint", "format": checkpoint.FORMAT, "covers": 1,
            "blob_sha256": hashlib.sha256(blob).hexdigest(), "blob_len": len(blob)}
    with pytest.raises(checkpoint.CheckpointInvalid, match="may not name"):
        checkpoint.load(5, body, blob)
