"""`cardshoe bench daemon --noise`: what a burst of rejected frames costs the journal and a genuine card.

A real `Daemon` (journal on disk, WAL, synchronous=FULL) on a real pseudo-terminal, with a
scripted shoe (the host codec playing the shoe, `BenchShoe`) that has dealt into an open
round. Two bursts are written to the pty, each followed at once by one genuine CARD frame:

- **line noise**: 20,000 one-byte frames (`0x55 0x00`, 40 KB on the wire);
- **tag guessing**: 1,000 CARD frames of the shoe's serial and next seqs with a wrong tag.

For each it prints how many journal entries and bytes (body + raw) the burst added, the
WARNING lines logged, the rejection events published on the stream, and the genuine
card's delay: from the first byte of the burst written until the card's `card_placed`
event reached a stream subscriber (so it includes chewing through the whole burst), and
the same for the card alone with no burst before it. Prints figures; asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
import threading
import time
import tty
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cardshoe.benchmarks.daemon import KEY, SERIAL, BenchShoe, _stop_item, bring_up
from cardshoe.daemon.config import TableConfig
from cardshoe.daemon.daemon import Daemon
from cardshoe.journal import JournalReader
from cardshoe.protocol.frames import encode_frame
from cardshoe.protocol.messages import Card

WRONG_KEY = bytes(range(200, 232))
DECK = 0xDECC


@dataclass
class BurstFigures:
    """What one burst did."""

    name: str
    wire_bytes: int
    entries: int
    entry_bytes: int
    warnings: int
    stream_rejects: int
    card_delay_ms: float


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _journal_usage(path: Path) -> tuple[int, int]:
    with JournalReader(path) as reader:
        conn = reader._conn  # noqa: SLF001 - a benchmark reading totals
        row = conn.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(body) + COALESCE(LENGTH(raw), 0)), 0)"
                           " FROM entries").fetchone()
    return int(row[0]), int(row[1])


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def run(journal_dir: Path, noise_frames: int = 20_000, guesses: int = 1_000) -> list[BurstFigures]:
    """Deal a round's first cards, then time a genuine card behind each burst."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    config = TableConfig(port=os.ttyname(slave), game="three-card-poker", seats=7, name="NOISE",
                         journal=journal_dir / "noise.sqlite")
    daemon = Daemon(config, keys={SERIAL: KEY}.get)
    daemon.start()
    shoe = BenchShoe(master)
    shoe.thread.start()
    counter = _Counter()
    logging.getLogger("cardshoe").addHandler(counter)
    loop = asyncio.new_event_loop()
    placed: dict[int, float] = {}
    rejects = [0]
    got = threading.Condition()

    async def consume(sub: Any) -> None:
        while True:
            item = await sub.queue.get()
            if item.type == "card_placed":
                with got:
                    placed[json.loads(item.body)["index"]] = time.perf_counter()
                    got.notify_all()
            elif item.kind == "reject":
                rejects[0] += 1
            elif item.type == "stop":
                break

    sub = daemon.bus.subscribe(loop)
    consumer = threading.Thread(target=loop.run_until_complete, args=(consume(sub),), daemon=True)
    consumer.start()
    out: list[BurstFigures] = []
    try:
        shoe_no = bring_up(daemon, shoe, DECK)
        control = daemon.control
        assert control is not None
        rid = control.open_round().round_id
        assert rid is not None
        for seat in range(1, 8):
            control.place_wager(rid, seat, "ante", 1000)
        control.no_more_bets(rid)
        index = [0]

        def card_after(burst: Callable[[], bytes], name: str) -> BurstFigures:
            index[0] += 1
            i = index[0]
            data = burst()
            entries0, bytes0 = _journal_usage(config.journal)
            warnings0, rejects0 = counter.count, rejects[0]
            card = Card(shoe_no, i, DECK, i - 1, 2, 0, 0, i, b"CS0000DECC")
            t0 = time.perf_counter()
            if data:
                _write_all(master, data)
            shoe.send(card)
            with got:
                if not got.wait_for(lambda: i in placed, 600):
                    raise TimeoutError(f"no event for card {i} after {name}")
            delay = (placed[i] - t0) * 1000
            shoe.wait_acked(shoe.seq)
            daemon.flush_rejections()
            entries1, bytes1 = _journal_usage(config.journal)
            return BurstFigures(name, len(data), entries1 - entries0, bytes1 - bytes0,
                                counter.count - warnings0, rejects[0] - rejects0, delay)

        out.append(card_after(lambda: b"", "no burst"))
        out.append(card_after(lambda: b"\x55\x00" * noise_frames, f"{noise_frames:,} one-byte frames"))

        def guessing() -> bytes:
            base = shoe.seq + 1
            return b"".join(
                encode_frame(Card(shoe_no, 99, DECK, 0, 2, 0, 0, 0, b"CS0000DECC"), key=WRONG_KEY, shoe=SERIAL,
                             boot=shoe.boot, seq=base + k)
                for k in range(guesses))

        out.append(card_after(guessing, f"{guesses:,} bad-tag guesses"))
    finally:
        logging.getLogger("cardshoe").removeHandler(counter)
        shoe.stop.set()
        loop.call_soon_threadsafe(sub.queue.put_nowait, _stop_item())
        consumer.join(5)
        daemon.stop()
        os.close(master)
        os.close(slave)
        shoe.thread.join(2)
    return out


def main(noise_frames: int = 20_000, guesses: int = 1_000, journal_dir: Path | None = None) -> int:
    """Run both bursts and print their figures."""
    if journal_dir is not None:
        journal_dir.mkdir(parents=True, exist_ok=True)
        figures = run(journal_dir, noise_frames, guesses)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            figures = run(Path(tmp), noise_frames, guesses)
    print("daemon under noise: a genuine CARD frame written right behind each burst (pty, WAL, synchronous=FULL)")
    for f in figures:
        print(f"  {f.name}: {f.wire_bytes:,} bytes on the wire -> {f.entries:,} journal entries "
              f"({f.entry_bytes:,} bytes), {f.warnings:,} WARNING lines, {f.stream_rejects:,} rejection events "
              f"on the stream; the genuine card's event {f.card_delay_ms:,.1f} ms after the burst began")
    from cardshoe.daemon.daemon import REJECT_PER_REASON, REJECT_SAMPLES, SECURITY_KEYS
    from cardshoe.daemon.rejections import RejectionLimiter

    base = figures[0].card_delay_ms
    per_frame_us = [(f.card_delay_ms - base) * 1000 / n for f, n in zip(figures[1:], (noise_frames, guesses))]
    bound = RejectionLimiter(1.0, REJECT_SAMPLES, REJECT_PER_REASON, SECURITY_KEYS).bytes_per_interval_bound()
    print(f"  bound, journal: per second at most {REJECT_PER_REASON} rejected frames of each reason journaled "
          f"whole, {REJECT_SAMPLES} in all plus {REJECT_PER_REASON} of each of the {len(SECURITY_KEYS)} security "
          f"reasons, and one summary: <= {bound:,} bytes per second whatever arrives")
    print(f"  bound, delay: a genuine frame waits for the frames ahead of it to be decoded and counted "
          f"({per_frame_us[0]:.1f} us per noise frame, {per_frame_us[1]:.1f} us per bad-tag guess here) plus "
          f"at most {REJECT_SAMPLES + len(SECURITY_KEYS) * REJECT_PER_REASON} sample commits per second "
          f"(one commit ~ the no-burst figure, {base:.1f} ms)")
    return 0
