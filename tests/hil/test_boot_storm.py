"""The boot storm (issue 9, item 3): power cuts at random points of boot, NEW_SHOE and
dealing on the virtual board, while the host writes a continuous stream of bytes that
includes 0x01-0x05 (^A raw REPL, ^B, ^C interrupt, ^D soft reset, ^E paste mode).

The board is the bench's `VirtualBoard`: the real firmware, flashed as a stock Pico has
it (.mpy files, no ROM partition), its ^C delivered as a Pico's USB stack does and a
watchdog that resets it when the firmware stops feeding it. The host side is this test's
own: it writes its frames whole, with noise between them all the time (also while the
board is off or booting), accepts the shoe's frames in order and acknowledges them as
the daemon does, and keeps its own ledger of the cards it dealt through the sim channel.

Pass (the bound is ours, stated here): every boot the test lets run says HELLO within
BOOT_BOUND_S of power-on (a boot takes well under a second on the virtual board; the
bound leaves room for one watchdog reset, 8 s, on a loaded machine); the board never
prints a traceback or a REPL banner; every card the host received is in the ledger at
its index, no index comes twice, and each finished shoe is the ledger's 52 cards in the
order they were dealt. A card whose exit the shoe had not recorded when the power went
(dealt but never framed) is for the shoe a card that never left: it is counted as lost
in the cut and dealt again, and it must not be a card the host had already received.
"""

from __future__ import annotations

import errno
import os
import random
import select
import threading
import time
import tty
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import cardshoe.protocol as P
from cardshoe.hil.provision import provision_offline
from cardshoe.hil.vboard import VirtualBoard
from cardshoe.protocol import Frame

SERIAL = 0x0B00_5701
BOOT_BOUND_S = 12.0
CTRL = bytes(range(1, 6))
REPL_SIGNS = (b"Traceback", b"KeyboardInterrupt", b'Type "help()"', b"raw REPL", b"MicroPython v")
FAST_CUTS = int(os.environ.get("CARDSHOE_STORM_CUTS", "15"))


def uid_of(code: int, shoe_no: int) -> bytes:
    """A 7-byte RFID UID for card `code` of shoe `shoe_no` (unique per shoe)."""
    return bytes((0x04, shoe_no & 0xFF, code, 0xA0, 0xB1, 0xC2, code ^ 0x5A))


class Line:
    """The host end of the shoe's serial device: frames whole, noise between them, always."""

    def __init__(self, path: Path, key: bytes, seed: int) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.fd)
        self.key = key
        self.rx = P.Receiver(keys=lambda s: key if s == SERIAL else None)
        self.seq = 0
        self.lock = threading.Lock()
        self.noise_bytes = 0
        self.ctrl_bytes = 0
        self.rejected: Counter[str] = Counter()
        self.raw_tail = b""
        self._stop = threading.Event()
        self._rng = random.Random(seed)
        self._thread = threading.Thread(target=self._noise, name="storm-noise", daemon=True)
        self._thread.start()

    def _noise(self) -> None:
        rng = self._rng
        while not self._stop.is_set():
            chunk = bytes(rng.choice(CTRL) if rng.random() < 0.5 else rng.randrange(256)
                          for _ in range(rng.randint(1, 24)))
            with self.lock:
                try:
                    n = os.write(self.fd, chunk)
                except BlockingIOError:
                    n = 0  # the board is not reading: the stream waits, as a USB host's does
                except OSError as e:
                    if e.errno != errno.EIO:
                        raise
                    n = 0
            self.noise_bytes += n
            self.ctrl_bytes += sum(1 for b in chunk[:n] if b in CTRL)
            time.sleep(0.003)

    def send(self, message: P.Message) -> int:
        """Write a host frame whole (never cut by noise); returns its seq."""
        self.seq += 1
        wire = P.encode_frame(message, key=self.key, shoe=SERIAL, boot=1, seq=self.seq)
        view = memoryview(wire)
        with self.lock:
            while view:
                try:
                    view = view[os.write(self.fd, view):]
                except BlockingIOError:
                    select.select([], [self.fd], [], 0.05)
        return self.seq

    def receive(self, timeout: float) -> list[Frame]:
        out: list[Frame] = []
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            r, _, _ = select.select([self.fd], [], [], max(left, 0))
            if not r:
                return out
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return out
            self.raw_tail = (self.raw_tail + data)[-600:]
            for item in self.rx.feed(data):
                if isinstance(item, Frame):
                    out.append(item)
                else:
                    self.rejected[str(item.reason)] += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        os.close(self.fd)


@dataclass
class Host:
    """In-order acceptance and cumulative ACK (as the daemon), and the test's own ledger."""

    line: Line
    boot: int = 0
    next: int = 1
    hello: P.Hello | None = None
    placed: dict[tuple[int, int], int] = field(default_factory=dict)
    replies: dict[int, P.Reply] = field(default_factory=dict)

    def pump(self, timeout: float) -> None:
        frames = self.line.receive(timeout)
        gap = False
        for f in frames:
            if f.boot < self.boot:
                continue
            if f.boot > self.boot:
                self.boot, self.next = f.boot, 1
            if f.seq < self.next:
                continue
            if f.seq > self.next:
                gap = True
                continue
            self.next += 1
            m = f.message
            if isinstance(m, P.Hello):
                self.hello = m
            elif isinstance(m, P.Card):
                key = (m.shoe_no, m.index)
                assert self.placed.get(key, m.code) == m.code, f"index {key} came back as another card"
                self.placed[key] = m.code
            elif isinstance(m, P.Unread):
                raise AssertionError(f"unread card {m}: every card dealt had its tag")
            elif isinstance(m, P.Reply):
                self.replies[m.seq] = m
        if frames and self.boot:
            if gap:
                self.line.send(P.ResendFrom(boot=self.boot, seq=self.next))
            if self.next > 1:
                self.line.send(P.Ack(boot=self.boot, seq=self.next - 1))

    def count(self, shoe_no: int) -> int:
        return sum(1 for (s, _) in self.placed if s == shoe_no)

    def until(self, what: str, pred: object, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while not pred():  # type: ignore[operator]
            assert time.monotonic() < end, f"{what}: not within {timeout}s (tail {self.line.raw_tail[-300:]!r})"
            self.pump(0.02)

    def command(self, message: P.Message) -> P.Reply:
        seq = self.line.send(message)
        self.until(f"REPLY to {type(message).__name__}", lambda: seq in self.replies)
        return self.replies[seq]


@dataclass
class Storm:
    cuts: int = 0
    boots: int = 0
    by_phase: Counter[str] = field(default_factory=Counter)
    cards: int = 0
    lost_in_cut: int = 0
    shoes_done: int = 0
    up_times: list[float] = field(default_factory=list)


def manifest_parts(shoe_no: int) -> list[P.NewShoe]:
    parts = 4
    return [P.NewShoe(shoe_no=shoe_no, deck_id=shoe_no, scheme=1, part=part, parts=parts,
                      entries=tuple(P.ManifestEntry(code=c, uid=uid_of(c, shoe_no)) for c in range(part * 13, part * 13 + 13)))
            for part in range(parts)]


def run_storm(workdir: Path, cuts: int, seed: int, progress: bool = False) -> tuple[Storm, int]:
    rng = random.Random(seed)
    board = VirtualBoard(workdir / "board", serial_follows_power=False, romfs_size=0)
    provision_offline(board, workdir / "keys", SERIAL, workdir / "build")
    key = bytes.fromhex((workdir / "keys" / f"{SERIAL}.key").read_text().strip())
    line = Line(board.tty_path, key, seed)
    host = Host(line)
    st = Storm()
    shoe_no = 0
    ledger: dict[int, list[int]] = {}  # shoe -> codes in the order the test dealt them
    order: list[int] = []
    boot_time = 0.5  # running estimate of power-on to HELLO, for where to cut a boot
    try:
        while st.cuts < cuts:
            mark = board.output_mark()
            host.hello = None
            t0 = time.monotonic()
            board.power_on()
            st.boots += 1
            phase = rng.choice(("boot", "new_shoe", "deal", "deal"))
            if phase == "boot":
                end = t0 + rng.uniform(0.0, 1.3 * boot_time)
                while time.monotonic() < end:
                    host.pump(0.005)
                board.power_cut()
                st.cuts += 1
                st.by_phase["boot"] += 1
                continue
            host.until("HELLO after power-on", lambda: host.hello is not None, BOOT_BOUND_S)
            up = time.monotonic() - t0
            board.sim.wait_ready(BOOT_BOUND_S)  # the sim channel is this boot's: cards can be dealt
            st.up_times.append(up)
            boot_time = 0.8 * boot_time + 0.2 * up
            transcript = board.transcript()
            for sign in REPL_SIGNS:
                assert sign not in transcript, f"the board printed {sign!r}: {transcript[-600:]!r}"
            hello = host.hello
            assert hello is not None and hello.faults == 0 and hello.integrity == 0, hello
            if shoe_no and hello.shoe_no == shoe_no:
                have = host.count(shoe_no)
                dealt = ledger[shoe_no]
                # What the host holds the shoe cannot have forgotten.
                assert hello.dealt >= have, (hello, have)
                if hello.dealt < len(dealt):
                    # Dealt, never recorded: the power went before the exit was logged.
                    assert hello.dealt >= have, "a card the host received is gone from the shoe"
                    st.lost_in_cut += len(dealt) - hello.dealt
                    del dealt[hello.dealt:]
                if hello.dealt > have:
                    assert host.command(P.CardsFrom(shoe_no=shoe_no, index=have + 1)).status == 0
                host.until("the cards the shoe logged", lambda: host.count(shoe_no) >= hello.dealt)
            elif shoe_no:
                # NEW_SHOE was cut before the shoe switched: the old shoe goes on as the shoe says.
                assert hello.shoe_no in ledger or hello.shoe_no == 0, hello
            if not shoe_no or hello.shoe_no != shoe_no or host.count(shoe_no) == 52:
                if shoe_no and host.count(shoe_no) == 52 and hello.shoe_no == shoe_no:
                    got = [host.placed[(shoe_no, i)] for i in range(1, 53)]
                    assert got == ledger[shoe_no] and sorted(got) == list(range(52))
                    st.shoes_done += 1
                if not shoe_no or hello.shoe_no == shoe_no:
                    shoe_no += 1
                    ledger[shoe_no] = []
                    order = list(range(52))
                    rng.shuffle(order)
                parts = manifest_parts(shoe_no)
                if phase == "new_shoe":
                    for part in parts:
                        line.send(part)
                    end = time.monotonic() + rng.uniform(0.0, 0.6)
                    while time.monotonic() < end:
                        host.pump(0.005)
                    board.power_cut()
                    st.cuts += 1
                    st.by_phase["new_shoe"] += 1
                    continue
                for part in parts:
                    reply = host.command(part)
                    assert reply.status == 0, reply
            # Deal a few cards of the shoe (the next the ledger has not), then cut at random.
            dealt = ledger[shoe_no]
            for _ in range(rng.randint(1, 6)):
                if len(dealt) == 52:
                    break
                code = order[len(dealt)]
                board.sim.present_rfid(uid_of(code, shoe_no))
                board.sim.exit_sensor()
                dealt.append(code)
                st.cards += 1
                end = time.monotonic() + rng.uniform(0.0, 0.08)
                while time.monotonic() < end:
                    host.pump(0.005)
            end = time.monotonic() + rng.uniform(0.0, 0.3)
            while time.monotonic() < end:
                host.pump(0.005)
            # Whatever the host received so far must be the ledger's, at its index.
            for (s, i), code in host.placed.items():
                assert ledger[s][i - 1] == code, (s, i, code)
            board.power_cut()
            st.cuts += 1
            st.by_phase[phase] += 1
            if progress and st.cuts % 100 < 1:
                print(f"  {st.cuts} cuts, {st.cards} cards, {st.shoes_done} shoes", flush=True)
    finally:
        line.close()
        watchdog = board.watchdog_resets
        board.close()
    return st, watchdog


def _report(st: Storm, watchdog: int, line_note: str = "") -> str:
    ups = sorted(st.up_times)
    return (f"{st.cuts} cuts ({dict(st.by_phase)}), {st.boots} boots, {st.cards} cards dealt, "
            f"{st.shoes_done} shoes finished, {st.lost_in_cut} lost in a cut (dealt again), "
            f"power-on to HELLO median {ups[len(ups) // 2]:.2f}s max {ups[-1]:.2f}s, "
            f"watchdog resets {watchdog}{line_note}")


def test_boot_storm_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    st, watchdog = run_storm(tmp_path, FAST_CUTS, seed=9)
    assert st.cuts == FAST_CUTS and st.up_times
    with capsys.disabled():
        print("\nboot storm:", _report(st, watchdog))


@pytest.mark.slow
def test_boot_storm_1000(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1,000 power cuts (tens of minutes on a shared machine): `pytest -m slow -k storm`."""
    with capsys.disabled():
        st, watchdog = run_storm(tmp_path, 1000, seed=21, progress=True)
    assert st.cuts == 1000 and st.shoes_done >= 1
    with capsys.disabled():
        print("\nboot storm:", _report(st, watchdog))
