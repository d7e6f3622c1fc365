"""`cardshoe bench daemon`: card-to-event latency and the daemon's CPU time per dealt card.

A real `Daemon` (journal on disk in WAL mode with synchronous=FULL, the link on a real
pseudo-terminal) serves one Three Card Poker table. A scripted shoe on the pty's master
side (the host codec playing the shoe) deals rounds of 7 seats + dealer; a subscriber on
the event bus (the mechanism behind the SSE stream) stamps each `card_placed` event.

- latency: from the shoe writing a CARD frame to the pty until the subscriber holds its
  `card_placed` event (decode, checks, journal commit, event published), p50/p90/p99/max;
- CPU: the process's CPU time during the dealing, minus the shoe's and the subscriber's own
  threads (measured with `time.thread_time`), per card.

Each card is dealt after the previous one's event arrived (a dealer's pace is far slower),
so latency is not queueing behind earlier cards. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any

from cardshoe.daemon.config import TableConfig
from cardshoe.daemon.daemon import Daemon
from cardshoe.protocol.frames import Frame, Receiver, encode_frame
from cardshoe.protocol.messages import Ack, Card, Hello, Message, Reply
from cardshoe.protocol.spec import Direction

SERIAL = 0xBE7C4
KEY = bytes(range(100, 132))


class BenchShoe:
    """The shoe side: sends frames, answers commands, tracks ACKs."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.boot = 1
        self.seq = 0
        self.rx = Receiver(lambda s: KEY if s == SERIAL else None, direction=Direction.HOST_TO_SHOE, auto_accept=True)
        self.acked = 0
        self.cv = threading.Condition()
        self.stop = threading.Event()
        self.cpu = 0.0
        self.thread = threading.Thread(target=self._read, daemon=True)

    def send(self, message: Message) -> int:
        with self.cv:
            self.seq += 1
            data = encode_frame(message, key=KEY, shoe=SERIAL, boot=self.boot, seq=self.seq)
            os.write(self.master, data)
            return self.seq

    def _read(self) -> None:
        t0 = time.thread_time()
        while not self.stop.is_set():
            try:
                data = os.read(self.master, 4096)
            except OSError:
                break
            for item in self.rx.feed(data):
                if isinstance(item, Frame):
                    self._host(item)
        self.cpu = time.thread_time() - t0

    def _host(self, frame: Frame) -> None:
        msg = frame.message
        if isinstance(msg, Ack):
            with self.cv:
                self.acked = max(self.acked, msg.seq)
                self.cv.notify_all()
        elif not isinstance(msg, Reply):
            if frame.type >= 0x83:
                # oldest: every frame up to the last ACK has left the outbox (SPEC 3.4 item 6).
                self.send(Reply(frame.boot, frame.seq, 0, 0, self.acked + 1))

    def wait_acked(self, seq: int, timeout: float = 10) -> None:
        with self.cv:
            if not self.cv.wait_for(lambda: self.acked >= seq, timeout):
                raise TimeoutError(f"frame {seq} not acknowledged")


class BareCommit:
    """The floor under the card-to-event latency with durability unchanged: one SQLite
    transaction (WAL, the daemon's synchronous mode) holding what a card frame's holds (a
    frame entry with its raw bytes, the shoe's window, a derived event), and nothing else:
    no decode, no rules, no threads. Timed after each card's event, in the same process."""

    def __init__(self, path: Path, synchronous: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={synchronous}")
        self.conn.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, t_ns INTEGER, kind TEXT, "
                          "round_id TEXT, body TEXT, raw BLOB)")
        self.conn.execute("CREATE INDEX entries_kind ON entries(kind, id)")
        self.conn.execute("CREATE INDEX entries_round ON entries(round_id, id)")
        self.conn.execute("CREATE TABLE windows (shoe INTEGER PRIMARY KEY, boot INTEGER, seq INTEGER)")

    def commit(self, index: int) -> float:
        """One card's transaction; seconds."""
        t0 = time.perf_counter()
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        c.execute("INSERT INTO entries (t_ns, kind, round_id, body, raw) VALUES (?, 'frame', 'r', ?, ?)",
                  (time.time_ns(), '{"type":"CARD","index":%d,"pad":"%s"}' % (index, "x" * 160), bytes(60)))
        c.execute("INSERT OR REPLACE INTO windows VALUES (1, 1, ?)", (index,))
        c.execute("INSERT INTO entries (t_ns, kind, round_id, body) VALUES (?, 'event', 'r', ?)",
                  (time.time_ns(), '{"type":"card_placed","index":%d,"pad":"%s"}' % (index, "x" * 120)))
        c.execute("COMMIT")
        return time.perf_counter() - t0

    def close(self) -> None:
        """Close the side database."""
        self.conn.close()


def run(rounds: int, journal_dir: Path, synchronous: str = "FULL") -> dict[str, Any]:
    """Deal `rounds` rounds of 7 seats and return the figures."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    port = os.ttyname(slave)
    config = TableConfig(port=port, game="three-card-poker", seats=7, name="BENCH",
                         journal=journal_dir / "bench.sqlite")
    daemon = Daemon(config, keys={SERIAL: KEY}.get, synchronous=synchronous)
    daemon.start()
    shoe = BenchShoe(master)
    shoe.thread.start()

    loop = asyncio.new_event_loop()
    placed: dict[int, float] = {}
    got = threading.Condition()
    consumer_cpu = [0.0]

    async def consume(sub: Any) -> None:
        import json

        t0 = time.thread_time()
        while True:
            item = await sub.queue.get()
            if item.type == "card_placed":
                now = time.perf_counter()
                index = json.loads(item.body)["index"]
                with got:
                    placed[index] = now
                    got.notify_all()
            elif item.type == "stop":
                break
            consumer_cpu[0] = time.thread_time() - t0

    sub = daemon.bus.subscribe(loop)
    consumer = threading.Thread(target=loop.run_until_complete, args=(consume(sub),), daemon=True)
    consumer.start()
    try:
        shoe_no = bring_up(daemon, shoe, 0xDECC)
        control = daemon.control
        assert control is not None
        latencies: list[float] = []
        floor: list[float] = []
        floor_db = BareCommit(journal_dir / "floor.sqlite", synchronous)
        index = 0
        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        for r in range(rounds):
            rid = control.open_round().round_id
            assert rid is not None
            for seat in range(1, 8):
                control.place_wager(rid, seat, "ante", 1000)
            control.no_more_bets(rid)
            for k in range(24):
                index += 1
                code = (r * 24 + k) % 52
                card = Card(shoe_no, index, 0xDECC, code, 2, 0, 0, index, b"CS0000DECC")
                t_send = time.perf_counter()
                shoe.send(card)
                with got:
                    if not got.wait_for(lambda: index in placed, 10):
                        raise TimeoutError(f"no event for card {index}")
                latencies.append(placed[index] - t_send)
                floor.append(floor_db.commit(index))
            for seat in range(1, 8):
                control.decision(rid, seat, "play" if seat % 2 else "fold")
            control.settle(rid, None)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
    finally:
        shoe.stop.set()
        loop.call_soon_threadsafe(sub.queue.put_nowait, _stop_item())
        consumer.join(5)
        daemon.stop()
        os.close(master)
        os.close(slave)
        shoe.thread.join(2)
    cards = len(latencies)
    daemon_cpu = cpu - shoe.cpu - consumer_cpu[0]
    floor_db.close()
    return {**percentiles(latencies), "cards": cards, "rounds": rounds, "latencies": latencies,
            "floor": floor, **{"floor_" + k: v for k, v in percentiles(floor).items()},
            "cpu_ms_per_card": daemon_cpu * 1000 / cards, "process_cpu_ms_per_card": cpu * 1000 / cards,
            "wall_s": wall}


def percentiles(latencies: list[float]) -> dict[str, float]:
    """p50, p90, p99 and max of latencies in seconds, in ms."""
    lat_ms = sorted(x * 1000 for x in latencies)
    q = statistics.quantiles(lat_ms, n=100, method="inclusive")
    return {"p50_ms": q[49], "p90_ms": q[89], "p99_ms": q[98], "max_ms": lat_ms[-1]}


def bring_up(daemon: Daemon, shoe: BenchShoe, deck_id: int) -> int:
    """Introduce the scripted shoe to a started daemon and load a shoe of `deck_id`; its number."""
    # pyserial flushes the port's input when it opens it: send only once it is open
    # (a real shoe just resends; this scripted one does not).
    deadline = time.monotonic() + 10
    while not daemon.link_up and time.monotonic() < deadline:
        time.sleep(0.01)
    shoe.wait_acked(shoe.send(Hello(1, 0, 0, bytes(32), 1, 2, 0, 0, 0, 0, 0)))
    deadline = time.monotonic() + 10
    while daemon.shoe_serial != SERIAL and time.monotonic() < deadline:
        time.sleep(0.01)
    shoe_no = daemon.load_shoe(deck_id, None, SERIAL, wait_s=10)
    time.sleep(0.2)
    return shoe_no


def _stop_item() -> Any:
    from cardshoe.daemon.bus import Published

    return Published(-2, 0, "stop", "stop", None, "{}")


def main(argv: list[str]) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench daemon", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=60, help="rounds of 7 seats + dealer (24 cards each)")
    parser.add_argument("--synchronous", default="FULL", choices=("FULL", "NORMAL"),
                        help="SQLite synchronous mode of the journal (the daemon uses FULL)")
    parser.add_argument("--dir", type=Path, help="where to put the journal (default: a temporary directory)")
    parser.add_argument("--noise", action="store_true",
                        help="only the noise bursts: journal growth and a genuine card's delay behind "
                             "20,000 one-byte frames and 1,000 bad-tag guesses")
    parser.add_argument("--no-noise", action="store_true", help="only the card-to-event latency")
    parser.add_argument("--load", type=int, default=0,
                        help="processes keeping a core busy each (`while True: pass`) while the cards are dealt")
    parser.add_argument("--e2e", action="store_true",
                        help="only the end-to-end latency: real firmware on the virtual board, `cardshoe run`, "
                             "card_placed read from the HTTP event stream")
    parser.add_argument("--start", action="store_true",
                        help="only the start time against the journal's size (from zero, from a checkpoint) "
                             "and the first event of /events?after=0&limit=1 on the biggest journal")
    parser.add_argument("--cards", default="1000,10000,50000",
                        help="journal sizes in cards for --start, comma-separated (default 1000,10000,50000)")
    args, _ = parser.parse_known_args(argv)
    if args.start:
        from cardshoe.benchmarks import daemon_start

        try:
            sizes = [int(x) for x in args.cards.split(",") if x.strip()]
        except ValueError:
            parser.error(f"--cards: {args.cards!r} is not comma-separated whole numbers")
        return daemon_start.main(sizes, journal_dir=args.dir)
    if args.e2e:
        from cardshoe.benchmarks import daemon_e2e

        return daemon_e2e.main(args.rounds if args.rounds != 60 else 20, args.load, args.dir)
    if args.noise:
        from cardshoe.benchmarks import daemon_noise

        return daemon_noise.main(journal_dir=args.dir)
    from cardshoe.benchmarks.daemon_e2e import burners

    busy = burners(args.load)
    try:
        load_before = os.getloadavg()[0]
        _latency(args, load_before)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    if not args.no_noise:
        from cardshoe.benchmarks import daemon_noise

        return daemon_noise.main(journal_dir=args.dir)
    return 0


def _latency(args: argparse.Namespace, load_before: float) -> None:
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        figures = run(args.rounds, args.dir, args.synchronous)
        where = str(args.dir)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            figures = run(args.rounds, Path(tmp), args.synchronous)
            where = tmp
    print(f"daemon: {figures['cards']} cards in {figures['rounds']} rounds over a pty, journal in {where} "
          f"(WAL, synchronous={args.synchronous}); {args.load} core-burning process(es) beside, "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"  card-to-event latency: p50 {figures['p50_ms']:.2f} ms, p90 {figures['p90_ms']:.2f} ms, "
          f"p99 {figures['p99_ms']:.2f} ms, max {figures['max_ms']:.2f} ms")
    print(f"  the floor, a bare fsync'd SQLite transaction of the same rows after each card: "
          f"p50 {figures['floor_p50_ms']:.2f} ms, p99 {figures['floor_p99_ms']:.2f} ms, "
          f"max {figures['floor_max_ms']:.2f} ms (p99 ratio {figures['p99_ms'] / figures['floor_p99_ms']:.1f}x)")
    print(f"  daemon CPU per dealt card: {figures['cpu_ms_per_card']:.2f} ms "
          f"(whole process incl. the scripted shoe: {figures['process_cpu_ms_per_card']:.2f} ms; "
          f"per card this includes its share of wagers, decisions and settlement)")
