"""`cardshoe bench daemon --start`: the daemon's start time against the journal's size, and
the first event of `GET /events?after=0&limit=1` on the biggest journal (issue 15). A second
journal of each size is built as a running daemon leaves it after a crash (the periodic
checkpoints only), and one start from it is timed.

For each size, a journal is built with the real table service (`daemon_journal`: real core,
real SQLite journal, Three Card Poker rounds of 24 cards) without a checkpoint, as a daemon
before checkpoints left it. Then a real `Daemon` (its serial port absent: the journal is what
a start costs) is started and stopped three times:

- `from zero`: no checkpoint yet, the whole journal is replayed (what every start did before);
  this start journals a checkpoint (the journal had no recent one), and its stop another;
- `checkpoint`: the next two starts, from the stop's checkpoint (the better one is printed),
  and the time one checkpoint takes to write (the service's lock is held meanwhile).

`/events`: the real API app (`create_app`) serves the daemon; the time from the request to the
first event's `data:` line, beside the time to build the whole backlog in memory first (what
the handler did before, measured in the same process); then the whole backlog streamed, as
surveillance reads it and in the pit view (its filter's cost). Prints figures; asserts nothing.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from cardshoe.benchmarks import daemon_journal

TOKEN = "bench-token-" + "x" * 24


def _config(path: Path, tmp: Path) -> Any:
    from cardshoe.daemon.config import TableConfig

    s = daemon_journal.SETUP
    return TableConfig(port=str(tmp / "no-such-tty"), game=s.game, seats=s.seats, name=s.name, journal=path,
                       limits=s.limits)


def _no_key(_serial: int) -> bytes | None:
    return None  # no shoe: the start's cost is the journal's


def _start_stop(config: Any) -> tuple[float, int, Any]:
    from cardshoe.daemon.daemon import Daemon

    daemon = Daemon(config, keys=_no_key)
    t0 = time.perf_counter()
    daemon.start()
    took = time.perf_counter() - t0
    assert daemon.restored is not None
    inputs = daemon.restored.inputs
    return took, inputs, daemon


def start_times(cards: int, tmp: Path) -> dict[str, Any]:
    """Build a journal of about `cards` cards; time a start from zero and from a checkpoint."""
    path = tmp / f"journal-{cards}.sqlite"
    t0 = time.perf_counter()
    rounds = daemon_journal.build(path, cards)
    built = time.perf_counter() - t0
    config = _config(path, tmp)
    zero, zero_inputs, daemon = _start_stop(config)
    daemon.stop()
    best: tuple[float, int] | None = None
    writes: list[float] = []
    for _ in range(2):
        took, inputs, daemon = _start_stop(config)
        t1 = time.perf_counter()
        daemon._svc().checkpoint()  # what a periodic checkpoint holds the service's lock for
        writes.append(time.perf_counter() - t1)
        daemon.stop()
        if best is None or took < best[0]:
            best = (took, inputs)
    assert best is not None
    # After a crash: the journal as a running daemon leaves it (periodic checkpoints, none at
    # a stop); the start replays what followed the last one.
    crashed = tmp / f"journal-{cards}-crashed.sqlite"
    from cardshoe.daemon.service import CHECKPOINT_EVERY

    daemon_journal.build(crashed, cards, checkpoint_every=CHECKPOINT_EVERY)
    crash_s, crash_inputs, daemon = _start_stop(_config(crashed, tmp))
    daemon.stop()
    return {"crash_s": crash_s, "crash_inputs": crash_inputs, "cards": rounds * daemon_journal.CARDS_PER_ROUND, "rounds": rounds, "build_s": built,
            "zero_s": zero, "zero_inputs": zero_inputs, "ck_s": best[0], "ck_inputs": best[1],
            "size_mb": path.stat().st_size / 1e6, "path": path, "write_s": min(writes)}


def first_event(path: Path, tmp: Path) -> dict[str, float]:
    """The first event of `/events?after=0&limit=1` from a running daemon's API, and the old
    way's cost (the whole backlog built first) for comparison."""
    from fastapi.testclient import TestClient

    from cardshoe.api.app import create_app
    from cardshoe.daemon.bus import Published, streamable
    from cardshoe.journal import JournalReader

    _, _, daemon = _start_stop(_config(path, tmp))
    try:
        client = TestClient(create_app(daemon, TOKEN))
        firsts = []
        for _ in range(3):
            t0 = time.perf_counter()
            with client.stream("GET", "/events", params={"after": 0, "limit": 1},
                               headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        firsts.append(time.perf_counter() - t0)
                        break
        t0 = time.perf_counter()
        with JournalReader(path) as reader:
            backlog = [Published.from_entry(e) for e in
                       reader.entries(("event", "settlement", "link", "daemon", "reject", "command"))
                       if streamable(e.kind, e.data())]
        whole = time.perf_counter() - t0
        # The whole backlog streamed as surveillance reads it and in the pit view (every event
        # through the pit view's filter, issue 20 item 5): the filter's cost per event.
        streamed: dict[str, float] = {}
        for name, view in (("all", {}), ("pit", {"view": "pit"})):
            t0 = time.perf_counter()
            with client.stream("GET", "/events", params={"after": 0, "limit": len(backlog), **view},
                               headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                got = sum(1 for line in response.iter_lines() if line.startswith("data:"))
            streamed[name] = time.perf_counter() - t0
            streamed[name + "_n"] = got
    finally:
        daemon.stop()
    return {"first_ms": min(firsts) * 1000, "whole_backlog_ms": whole * 1000, "backlog": float(len(backlog)),
            "all_s": streamed["all"], "pit_s": streamed["pit"], "all_n": streamed["all_n"], "pit_n": streamed["pit_n"]}


def page_reads(path: Path, tmp: Path) -> dict[str, float]:
    """What the table page reads at each refresh, on a running daemon's API: `GET /status`
    (its first call reads the journal's last entries for integrity and referrals, up to
    `cardshoe.api.watch.WINDOW`; later ones only what was appended) and `GET /rounds/{id}` of
    the last round with its seat state and refusals (docs/api.md, "The live table page")."""
    import statistics

    from fastapi.testclient import TestClient

    from cardshoe.api.app import create_app

    _, _, daemon = _start_stop(_config(path, tmp))
    try:
        client = TestClient(create_app(daemon, TOKEN), headers={"Authorization": f"Bearer {TOKEN}"})
        t0 = time.perf_counter()
        status = client.get("/status").json()
        first = time.perf_counter() - t0
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            status = client.get("/status").json()
            times.append(time.perf_counter() - t0)
        rid = status["current_round"]
        rounds = []
        for _ in range(20):
            t0 = time.perf_counter()
            client.get(f"/rounds/{rid}?view=pit&classes=true").raise_for_status()
            rounds.append(time.perf_counter() - t0)
    finally:
        daemon.stop()
    return {"first_ms": first * 1000, "status_ms": statistics.median(times) * 1000,
            "round_ms": statistics.median(rounds) * 1000}


def main(sizes: list[int], journal_dir: Path | None = None) -> int:
    """Run and print the figures."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = journal_dir if journal_dir is not None else Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        print("daemon start (a real Daemon on a journal built by the real table service; port absent):")
        last: dict[str, Any] | None = None
        for cards in sizes:
            f = start_times(cards, tmp)
            last = f
            print(f"  {f['cards']:>6} cards ({f['rounds']} rounds, journal {f['size_mb']:.1f} MB): "
                  f"from zero {f['zero_s'] * 1000:8.1f} ms ({f['zero_inputs']} inputs replayed), "
                  f"from checkpoint {f['ck_s'] * 1000:7.1f} ms ({f['ck_inputs']} inputs replayed); "
                  f"ratio {f['zero_s'] / f['ck_s']:.1f}x; a checkpoint written in {f['write_s'] * 1000:.1f} ms")
            print(f"         after a crash (periodic checkpoints only): {f['crash_s'] * 1000:.1f} ms "
                  f"({f['crash_inputs']} inputs replayed)")
        if last is not None:
            e = first_event(last["path"], tmp)
            print(f"GET /events?after=0&limit=1 on the {last['cards']}-card journal: first event in "
                  f"{e['first_ms']:.1f} ms (best of 3); the whole backlog built first "
                  f"({int(e['backlog'])} events, the handler before) {e['whole_backlog_ms']:.1f} ms")
            print(f"GET /events?after=0 streamed whole: every card {int(e['all_n'])} events in "
                  f"{e['all_s'] * 1000:.0f} ms ({e['all_n'] / e['all_s']:.0f} events/s), the pit view "
                  f"{int(e['pit_n'])} events in {e['pit_s'] * 1000:.0f} ms ({e['pit_n'] / e['pit_s']:.0f} events/s)")
            p = page_reads(last["path"], tmp)
            print(f"the table page's reads on the {last['cards']}-card journal: first GET /status "
                  f"{p['first_ms']:.1f} ms (reads the journal's last entries), then {p['status_ms']:.1f} ms "
                  f"(median of 20); GET /rounds/{{id}}?view=pit&classes=true {p['round_ms']:.1f} ms (median of 20)")
    return 0
