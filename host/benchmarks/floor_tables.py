"""The tables of `cardshoe bench floor`: one process's share of the floor's tables.

Each table is the real table core and service (`TableCore`, `TableService`, its own SQLite
journal, `TableControl` linked to the floor) fed CARD frames by a simulated shoe at a dealer's
pace (a card every `card_ms`, then a pause between rounds), each frame encoded and tagged with
the table's own shoe key by the protocol codec, with its real shipper and floor client
speaking HTTP, with the table's own credential, to the floor through this process's TCP relay
(which the parent cuts and restores).

The process keeps its own ledger of what it dealt (each card's shoe sequence number and code,
each round dealt and settled) and of each settlement's timing, and sends it to the parent,
which compares it with the journals and the journals with the floor. Commands from the parent
arrive on a pipe: `go` (start time), `cut`, `restore`, `kill` (the last table killed mid-deal
and started again from its journal), `stop`.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TableSpec", "table_process"]

GAME = "megalink-three-card-poker"
LINK = "mega"
RESET = 1_000_000
LIMITS = (("ante", 1000, 500_000), ("pair_plus", 1000, 100_000), ("play", 1000, 500_000),
          ("progressive", 500, 500))


@dataclass(frozen=True)
class TableSpec:
    """What a table process needs to run one table: its name, credential, shoe and journal."""

    name: str
    token: str
    serial: int
    key: bytes
    journal: Path


@dataclass
class TableRun:
    name: str
    journal: Path
    service: Any
    control: Any
    client: Any
    shipper: Any
    serial: int
    key: bytes
    setup: Any = None
    rounds: int = 0
    settles: list[tuple[float, float, float, float]] = field(default_factory=list)
    """(start, end: CLOCK_MONOTONIC, system-wide; round trip ms; the floor's server_ms) per settle call."""
    refused_progressive: int = 0
    settle_waits: int = 0
    kill_at_card: int | None = None
    """Kill the table (and start it again from its journal) after this many cards of its next round."""
    killed: list[str] = field(default_factory=list)
    journals: list[Any] = field(default_factory=list)
    dealt: list[tuple[int, int]] = field(default_factory=list)
    """The bench's own ledger: (shoe sequence number, card code) of every card it dealt, in order."""
    journal_id: str = ""


def _frame(t: TableRun, seq: int, code: int) -> Any:
    """A CARD frame of the table's shoe, encoded and tagged with its key as the shoe would."""
    from cardshoe.daemon.service import FrameInput
    from cardshoe.journal.frames import frame_message
    from cardshoe.protocol.frames import decode_frame, encode_frame
    from cardshoe.protocol.messages import Card

    msg = Card(shoe_no=1, index=seq, card_deck=7, code=code, method=1, retries=0, flags=0, t_ms=seq * 10,
               raw=f"{seq:08x}".encode())
    frame = decode_frame(encode_frame(msg, key=t.key, shoe=t.serial, boot=1, seq=seq), keys=lambda _s: t.key)
    return FrameInput(frame.shoe, frame.boot, frame.seq, int(frame.type), frame_message(frame), frame.raw)


def _time_settles(t: TableRun) -> None:
    """Record the round trip of every successful settle call (the pool update) and the floor's
    own share of it (`server_ms` of the answer); the table's current client is called."""
    def timed(*args: Any) -> Any:
        t0 = time.monotonic()
        answer = type(t.client).settle(t.client, *args)
        t1 = time.monotonic()
        t.settles.append((t0, t1, (t1 - t0) * 1000, float(answer.get("server_ms", "nan"))))
        return answer

    t.client.settle = timed


def _kill_and_start(t: TableRun) -> None:
    """The table's process killed mid-deal and started again: its shipper gone, its journal
    closed with no checkpoint, then the table rebuilt from the journal as a daemon's start
    does (`cardshoe.journal.replay.restore`) with a new service, control, client and shipper."""
    from cardshoe.daemon.bus import EventBus
    from cardshoe.daemon.control import TableControl
    from cardshoe.daemon.core import TableCore
    from cardshoe.daemon.service import TableService
    from cardshoe.floor.client import FloorClient
    from cardshoe.floor.shipper import Shipper
    from cardshoe.journal import Journal
    from cardshoe.journal.replay import restore

    t0 = time.monotonic()
    t.shipper.stop()
    t.service.failed = RuntimeError("killed")  # nothing more is written by the old process
    # The journal's lock is let go by closing it (a killed process's descriptors close with it);
    # bounded, so a close that hangs is reported rather than stalling the whole run.
    closing = threading.Thread(target=t.journals[-1].close, daemon=True)
    closing.start()
    closing.join(60)
    if closing.is_alive():
        raise RuntimeError(f"{t.name}: the killed table's journal did not close within 60 s (its writer did not "
                           f"stop; its shipper {'still runs' if t.shipper._thread and t.shipper._thread.is_alive() else 'stopped'})")
    journal = Journal(t.journal, synchronous="NORMAL", holder=f"bench {t.name} (restarted)")
    t.journals.append(journal)
    report, core, _ = restore(t.journal, TableCore(t.setup))
    service = TableService(core, journal, EventBus())
    old = t.client
    client = FloorClient(old.url, old.token, t.name, old.link, old.game, timeout_s=old.timeout_s,
                         journal_id=old.table.rsplit(".", 1)[1])
    client.high_water()
    client.settle = old.settle  # type: ignore[method-assign]  # the timing wrapper, calling the new client
    t.client, t.service, t.control = client, service, TableControl(service, floor=client)
    t.shipper = Shipper(t.journal, client)
    t.shipper.start()
    t.killed.append(f"{t.name} killed mid-deal and started again from its journal ({report.inputs} inputs "
                    f"replayed, {len(report.mismatches)} differences) in {time.monotonic() - t0:.2f} s")


def _deal_round(t: TableRun, rng: random.Random, card_s: float, stop: threading.Event, seq: list[int]) -> None:
    from cardshoe.daemon.control import Refused

    rid = str(t.control.open_round().round_id)
    for s in (1, 2, 3):
        t.control.place_wager(rid, s, "ante", 1000)
        try:
            t.control.place_wager(rid, s, "progressive", 500)
        except Refused:
            t.refused_progressive += 1  # the floor is away: base games go on
    t.control.no_more_bets(rid)
    deck = list(range(52))
    rng.shuffle(deck)
    # Megalink 3.7: three to each seat, three to the dealer, three community (the third burned).
    for k, code in enumerate(deck[:15]):
        if t.kill_at_card is not None and k == t.kill_at_card:
            t.kill_at_card = None
            _kill_and_start(t)
        seq[0] += 1
        t.service.submit_frame(_frame(t, seq[0], code))
        t.dealt.append((seq[0], code))
        stop.wait(card_s)
    t.control.deal_complete(rid)
    for s in (1, 2, 3):
        t.control.decision(rid, s, "play")
    while True:
        try:
            t.control.settle(rid, None)
        except Refused as exc:
            if exc.status != 503:
                raise
            t.settle_waits += 1  # never settled against a stale pool: wait for the floor
            stop.wait(0.5)
            continue
        break
    t.rounds += 1


def _open_table(spec: TableSpec, url: str) -> TableRun:
    from cardshoe.daemon.bus import EventBus
    from cardshoe.daemon.control import TableControl
    from cardshoe.daemon.core import TableCore, TableSetup
    from cardshoe.daemon.service import TableService
    from cardshoe.floor.client import FloorClient
    from cardshoe.floor.shipper import Shipper
    from cardshoe.journal import Journal, JournalReader

    journal = Journal(spec.journal, synchronous="NORMAL", holder=f"bench {spec.name}")
    setup = TableSetup(spec.name, GAME, 7, limits=LIMITS, jackpot_reset=RESET)
    service = TableService(TableCore(setup), journal, EventBus())
    service.submit_input({"action": "setup", **setup.to_json()})
    # The table's own shoe session (a journal places only the sessions it started).
    service.submit_input({"action": "shoe_loaded", "shoe": spec.serial, "shoe_no": 1, "deck_id": 7})
    with JournalReader(spec.journal) as reader:
        journal_id = str(reader.meta("journal_id"))
    client = FloorClient(url, spec.token, spec.name, LINK, GAME, timeout_s=5.0, journal_id=journal_id)
    for attempt in range(100):  # online before the first wager (the floor may be busy taking the others)
        try:
            client.high_water()
            break
        except Exception:  # noqa: BLE001 - the floor is slow to answer under the others' start: again
            if attempt == 99:
                raise
            time.sleep(0.2)
    control = TableControl(service, floor=client)
    shipper = Shipper(spec.journal, client)
    shipper.start()
    t = TableRun(spec.name, spec.journal, service, control, client, shipper, spec.serial, spec.key, setup,
                 journals=[journal], journal_id=journal_id)
    _time_settles(t)
    return t


def peak_rss_kb(pid: int | str = "self") -> int:
    """VmHWM (the process's peak resident set) from /proc, in kB; 0 if the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def table_process(specs: list[TableSpec], floor_port: int, card_ms: float, pause_s: float, seed: int,
                  profile: str | None, conn: Any) -> None:
    """The body of one table process (multiprocessing, spawned): open the tables, report
    `ready`, deal from the `go` time for the given seconds, report the ledger, keep shipping
    until `stop`, then close and report the process's peak RSS."""
    import logging

    from cardshoe.floor.testnet import Relay

    # The shippers' warnings (the floor away, retrying) are counted, not printed a thousand times.
    warned: list[str] = []

    class _Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warned.append(record.getMessage()[:160])

    shipper_log = logging.getLogger("cardshoe.floor.shipper")
    shipper_log.addHandler(_Count(logging.WARNING))
    shipper_log.propagate = False
    sampler = None
    if profile:
        from cardshoe.benchmarks.sampler import Sampler

        sampler = Sampler(profile)
        sampler.start()
    relay = Relay(floor_port)
    tables: list[TableRun] = []
    errors: list[str] = []
    try:
        # Opened a few at a time: each is a new journal (fsync'd) and a call to the floor.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=8) as pool:
            tables = list(pool.map(lambda s: _open_table(s, relay.url), specs))
        conn.send(("ready", len(tables)))
        msg = conn.recv()
        assert msg[0] == "go", msg
        start, seconds = float(msg[1]), float(msg[2])
        stop = threading.Event()
        rng0 = random.Random(seed)

        def dealer(t: TableRun, k: int) -> None:
            rng = random.Random(seed * 100_003 + k)
            seq = [0]
            # Tables do not start together: each begins somewhere in its first round's span.
            offset = rng0.random() * (15 * card_ms / 1000 + pause_s)
            stop.wait(max(0.0, start - time.monotonic()) + min(offset, seconds))  # never idle past the end
            try:
                while time.monotonic() - start < seconds and not stop.is_set():
                    _deal_round(t, rng, card_ms / 1000, stop, seq)
                    # The dealer collects the cards, pays, and the players bet: a pause, jittered,
                    # cut short by the end of the dealing time (a table does not idle past it).
                    stop.wait(min(pause_s * rng.uniform(0.8, 1.2), max(0.0, start + seconds - time.monotonic())))
            except Exception as exc:  # noqa: BLE001 - reported in the figures
                errors.append(f"{t.name}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=dealer, args=(t, k), daemon=True) for k, t in enumerate(tables)]
        for th in threads:
            th.start()

        def commands() -> None:
            while True:
                try:
                    cmd = conn.recv()
                except EOFError:
                    stop.set()
                    return
                if cmd[0] == "cut":
                    relay.cut()
                elif cmd[0] == "restore":
                    relay.restore()
                elif cmd[0] == "kill":
                    tables[-1].kill_at_card = 7
                elif cmd[0] == "stop":
                    done.set()
                    return

        done = threading.Event()
        threading.Thread(target=commands, daemon=True).start()
        for th in threads:
            th.join()
        conn.send(("dealt", {
            "tables": [{"name": t.name, "table": t.client.table, "journal": str(t.journal), "rounds": t.rounds,
                        "dealt": t.dealt, "settles": t.settles, "refused_progressive": t.refused_progressive,
                        "settle_waits": t.settle_waits, "killed": t.killed} for t in tables],
            "errors": errors, "shipper_warnings": len(warned), "first_warning": warned[:1]}))
        done.wait()  # the shippers go on until the parent has every entry on the floor
    except Exception as exc:  # noqa: BLE001 - the parent prints it
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        # Every shipper told to stop at once, then each joined: one by one, each waiting for its
        # exchange in flight, hundreds of them took minutes against a busy floor.
        stoppers = [threading.Thread(target=t.shipper.stop, daemon=True) for t in tables]
        for th in stoppers:
            th.start()
        for th in stoppers:
            th.join(30)
        for t in tables:
            for j in t.journals:
                j.close()
        relay.close()
        if sampler is not None:
            sampler.stop()
        conn.send(("closed", {"peak_rss_kb": peak_rss_kb()}))
        conn.close()
