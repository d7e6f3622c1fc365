"""`cardshoe bench daemon --e2e`: a card leaving the shoe to its `card_placed` on the HTTP stream.

The whole product from real parts, as `cardshoe demo` puts it together (`cardshoe.hil.bench`):
the real firmware on the virtual board (MicroPython unix port, littlefs flash image, the sim
channel for the reader and the exit sensor), the real daemon (`cardshoe run` in its own
process, journal in WAL mode with synchronous=FULL, one transaction per frame) and its HTTP
API. A reader of `GET /events` on a plain socket (the server-sent event stream a table
controller follows) stamps each `card_placed`.

Latency per card: from the sim channel's `exit` (the exit sensor sees the card leave; its
barcode was read just before) to the `card_placed` event read from the HTTP stream. It
includes the firmware (the card appended to its flash log and framed), the pty, the daemon
(decode, checks, the fsync'd commit, the event) and HTTP. Rounds of Three Card Poker with 7
seats (24 cards each), one card at a time, the next once the last one's event is in.

Before dealing, the firmware's idle loop: how often its thread's sleep ended over 10 s (its
voluntary context switches, from /proc), with the daemon attached and the shoe loaded.

`--load N` runs N processes that each keep a core busy (`while True: pass`) during the
dealing: "under load" in docs/bench.md. The machine's load average is printed before and
after, as other work on the machine loads it too. Prints figures; asserts nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from cardshoe.hil.bench import Bench, TableSpec


class StreamStamps:
    """Reads `GET /events` over a plain socket and stamps every `card_placed` by shoe index."""

    def __init__(self, port: int, token: str, after: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall((f"GET /events?after={after} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n").encode())
        self.placed: dict[int, float] = {}
        self.wall: dict[int, tuple[int, int]] = {}  # index -> (the event's t_ns, when read: time_ns)
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, name="bench-sse", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        pending = b""
        etype = b""
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            now = time.perf_counter()
            wall = time.time_ns()
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.startswith(b"event:"):
                    etype = line[6:].strip()
                elif line.startswith(b"data:") and etype == b"card_placed":
                    event = json.loads(line[5:])
                    index = int(event["data"]["index"])
                    with self.cond:
                        self.placed[index] = now
                        self.wall[index] = (int(event["t_ns"]), wall)
                        self.cond.notify_all()

    def wait(self, index: int, timeout: float = 10.0) -> float:
        """When the `card_placed` of shoe index `index` was read."""
        with self.cond:
            if not self.cond.wait_for(lambda: index in self.placed, timeout):
                raise TimeoutError(f"no card_placed for shoe card {index} on the stream")
            return self.placed[index]

    def close(self) -> None:
        """Close the stream."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(2)


def burners(n: int) -> list[subprocess.Popen[bytes]]:
    """`n` processes that each keep a core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _thread_counts(pid: int) -> tuple[int, int]:
    """(voluntary context switches, utime + stime in clock ticks) of `pid`'s main thread."""
    with open(f"/proc/{pid}/task/{pid}/status") as f:
        switches = next(int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches"))
    with open(f"/proc/{pid}/task/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return switches, int(fields[11]) + int(fields[12])


def idle_wakeups(pid: int | None, seconds: float) -> tuple[float, float] | None:
    """The firmware's loop idle, the daemon attached and nothing dealt: its thread's sleeps
    that ended a second (voluntary context switches of the interpreter's main thread: each
    wait() that returned) and its CPU in %, over `seconds`; None without a process or /proc."""
    if pid is None or seconds <= 0:
        return None
    try:
        a = _thread_counts(pid)
        start = time.monotonic()
        time.sleep(seconds)
        b = _thread_counts(pid)
    except OSError:
        return None
    elapsed = time.monotonic() - start
    return (b[0] - a[0]) / elapsed, 100 * (b[1] - a[1]) / os.sysconf("SC_CLK_TCK") / elapsed


def run(rounds: int, workdir: Path, load: int, idle_s: float = 10.0) -> dict[str, Any]:
    """Deal `rounds` rounds through the whole product and return the figures."""
    bench = Bench(workdir, TableSpec("three-card-poker", seats=7, name="BENCH"))
    busy: list[subprocess.Popen[bytes]] = []
    stream: StreamStamps | None = None
    try:
        bench.flash(offline=True)  # the image written directly: how is not what is measured here
        bench.start_daemon()
        bench.load_shoe()
        api = bench.client
        stream = StreamStamps(bench.api_port, bench.token, api.last_event_id)
        latencies: list[float] = []
        shoe_part: list[float] = []  # exit -> the daemon takes the frame (firmware, board, pty, decode)
        host_part: list[float] = []  # the daemon takes it -> the event read (commit, publish, HTTP)
        index = 0
        idle = idle_wakeups(bench.board.interpreter_pid, idle_s)
        load_before = os.getloadavg()
        busy = burners(load)
        for r in range(rounds):
            rid = str(api.request("POST", "/rounds")["round_id"])
            for seat in range(1, 8):
                api.request("POST", f"/rounds/{rid}/wagers", {"seat": seat, "wager": "ante", "amount": 1000})
            api.request("POST", f"/rounds/{rid}/no-more-bets")
            for k in range(24):
                index += 1
                bench.board.sim.present_barcode(bench.barcode((r * 24 + k) % 52))
                t_exit = time.perf_counter()
                wall_exit = time.time_ns()
                bench.board.sim.exit_sensor()
                latencies.append(stream.wait(index) - t_exit)
                t_ns, read_ns = stream.wall[index]
                shoe_part.append((t_ns - wall_exit) / 1e9)
                host_part.append((read_ns - t_ns) / 1e9)
            for seat in range(1, 8):
                api.request("POST", f"/rounds/{rid}/decisions", {"seat": seat, "choice": "play" if seat % 2 else "fold"})
            api.request("POST", f"/rounds/{rid}/settle", {})
            if r % 2 == 1 and r + 1 < rounds:  # a fresh deck every 48 cards: no card twice in a shoe
                bench.load_shoe()
                index = 0
                with stream.cond:
                    stream.placed.clear()
        load_after = os.getloadavg()
    finally:
        for p in busy:
            p.kill()
            p.wait()
        if stream is not None:
            stream.close()
        bench.close()
    from cardshoe.benchmarks.daemon import percentiles

    return {**percentiles(latencies), "cards": len(latencies), "rounds": rounds,
            "shoe": percentiles(shoe_part), "host": percentiles(host_part), "idle": idle,
            "load_before": load_before[0], "load_after": load_after[0]}


def main(rounds: int, load: int, workdir: Path | None) -> int:
    """Run the end-to-end benchmark and print its figures."""
    if workdir is not None:
        figures = run(rounds, workdir, load)
    else:
        with tempfile.TemporaryDirectory(prefix="cardshoe-bench-e2e-") as tmp:
            figures = run(rounds, Path(tmp), load)
    print(f"end to end (real firmware on the virtual board, `cardshoe run`, HTTP event stream): "
          f"{figures['cards']} cards in {figures['rounds']} rounds, {load} core-burning process(es) "
          f"beside (load average {figures['load_before']:.1f} before, {figures['load_after']:.1f} after)")
    print(f"  card leaves the shoe -> card_placed read from GET /events: p50 {figures['p50_ms']:.2f} ms, "
          f"p90 {figures['p90_ms']:.2f} ms, p99 {figures['p99_ms']:.2f} ms, max {figures['max_ms']:.2f} ms")
    if figures["idle"] is not None:
        wakeups, cpu = figures["idle"]
        print(f"  idle before dealing, the daemon attached: the firmware's loop woke {wakeups:.1f} times a second "
              f"(its thread's voluntary context switches), {cpu:.2f} % CPU")
    for key, what in (("shoe", "exit -> the daemon takes the frame (firmware, virtual board, pty, decode)"),
                      ("host", "the daemon takes it -> the event read (journal commit, publish, HTTP)")):
        f = figures[key]
        print(f"    {what}: p50 {f['p50_ms']:.2f} ms, p99 {f['p99_ms']:.2f} ms, max {f['max_ms']:.2f} ms")
    return 0
