"""Issue 25 item 5 on the bench: the virtual board (the real firmware under the MicroPython unix
port, a Pico's stack, littlefs flash, power cuts), the bench's own dealing and its own ledger
(hil/ledger.py, from the rules), and the daemon rolling the gaming day over by itself.

The bench runs `cardshoe run` as a child process on the host's clock; here the same `Daemon`
runs in the test's process with an injected clock (time flows, and the test moves it by hours:
no hour is waited for), served over real HTTP (uvicorn) on the bench's API socket, so the
bench's table client, its event follower and its dealing are the bench's own. Four gaming
days at a dealer's pace: a round in play at the hour with the shoe's power cut across it
(5.16), an idle hour, the daemon stopped with a round in play and the hour passing while it is
down (cards leave the shoe meanwhile). The bench's ledger then finds every card exactly once
across the day files, each round's cards in the places the rules give them.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from day_clocks import Clocks

from cardshoe.cards import parse_card
from cardshoe.hil.bench import JACKPOT_RESET, Bench, TableSpec
from cardshoe.hil.ledger import Dealt, RoundLedger, compare, journal_cards
from cardshoe.hil.table import wait_for
from cardshoe.journal import JournalReader
from cardshoe.journal.days import check_chain
from cardshoe.journal.replay import replay

HOUR = 3600 * 10**9
TCP = "three-card-poker"
WAGERS = {2: {"ante": 1000}, 5: {"pair_plus": 500}}
DECK = [f"{r}{s}" for s in "shdc" for r in "23456789TJQKA"]


class DayBench(Bench):
    """The bench with the daemon in this process (an injected clock), on day files."""

    def __init__(self, workdir: Path, clocks: Clocks) -> None:
        super().__init__(workdir, TableSpec(TCP), seed=25)
        self.clocks = clocks
        self.days = self.workdir / "days"
        self.inproc: Any = None
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start_daemon(self, *, wait_shoe: bool = True) -> None:
        import uvicorn

        from cardshoe.api import create_app
        from cardshoe.daemon.config import LinkTiming, TableConfig
        from cardshoe.daemon.daemon import Daemon, keystore_keys

        heartbeat, resend, resend_max = self.link_timing
        config = TableConfig(port=str(self.daemon_port), game=TCP, seats=7, name=self.table.name,
                             keys=self.keys_dir, jackpot_reset=JACKPOT_RESET,
                             link=LinkTiming(heartbeat_ms=heartbeat, resend_ms=resend, resend_max_ms=resend_max),
                             journal_dir=self.days, day_ends="06:00", day_zone="UTC")
        self.inproc = Daemon(config, keys=keystore_keys(self.keys_dir), clock=self.clocks.wall,
                             monotonic=self.clocks.mono)
        self.inproc.start()
        server = uvicorn.Server(uvicorn.Config(
            create_app(self.inproc, self.token, stopping=lambda: server.should_exit), log_level="warning",
            access_log=False, timeout_graceful_shutdown=2))
        self._server = server
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [self._api_sock.dup()]}, daemon=True)
        self._thread.start()
        wait_for(lambda: server.started, 20, "uvicorn to start")
        self.client.follow()
        if wait_shoe:
            wait_for(lambda: (self.client.try_status() or {}).get("shoe") == self.serial, 30,
                     "the shoe's HELLO at the daemon")

    def stop_daemon(self) -> int | None:
        if self._server is not None:
            self._server.should_exit = True
            assert self._thread is not None
            self._thread.join(20)
            self._server = None
        if self.inproc is not None:
            self.inproc.stop()
            self.inproc = None
        return 0

    def day(self) -> str:
        return str((self.client.try_status() or {}).get("gaming_day", {}).get("day"))


def _frames(path: Path) -> list[tuple[int, int]]:
    with JournalReader(path) as j:
        return [(int(d["shoe_no"]), int(d["index"])) for d in (e.data() for e in j.entries(("frame",)))
                if d["type"] == "CARD"]


def test_gaming_days_roll_over_on_the_bench_and_its_ledger_finds_every_card_once(tmp_path: Path) -> None:
    clocks = Clocks(datetime(2026, 11, 27, 5, 50, tzinfo=timezone.utc))
    bench = DayBench(tmp_path / "bench", clocks)
    played: list[tuple[str, list[int], dict[str, Any]]] = []  # the bench's rounds: id, codes, the API's round
    dealt: list[int] = []
    try:
        bench.flash(offline=True)
        bench.start_daemon()
        shoe_no = bench.load_shoe()

        def open_round() -> str:
            rid = str(bench.client.request("POST", "/rounds")["round_id"])
            for seat, wagers in WAGERS.items():
                for wager, amount in wagers.items():
                    bench.client.request("POST", f"/rounds/{rid}/wagers",
                                         {"seat": seat, "wager": wager, "amount": amount})
            bench.client.request("POST", f"/rounds/{rid}/no-more-bets")
            return rid

        def deal(n: int, *, wait: bool = True) -> list[int]:
            codes = []
            for _ in range(n):
                code = parse_card(DECK[len(dealt) % 52])
                dealt.append(code)
                codes.append(code)
                bench.deal(code, wait=wait)
            return codes

        def finish(rid: str, codes: list[int]) -> None:
            snap = bench.client.request("GET", f"/rounds/{rid}")
            for flag in snap["irregularities"]:
                if flag["decision"] in ("pending", "referred"):  # 5.16: a person checks the table
                    bench.client.request("POST", f"/rounds/{rid}/confirmations",
                                         {"flag": flag["id"], "confirmed": True, "supervisor": "S. Pit"})
            bench.client.request("POST", f"/rounds/{rid}/decisions", {"seat": 2, "choice": "play"})
            bench.client.request("POST", f"/rounds/{rid}/settle", {})
            played.append((rid, codes, bench.client.request("GET", f"/rounds/{rid}")))

        rid = open_round()
        finish(rid, deal(9))                                   # the 26th
        rid = open_round()
        codes = deal(4)
        clocks.advance(15 * 60 * 10**9)                        # 06:05 on the 27th, a round in play
        wait_for(lambda: (bench.client.try_status() or {})["gaming_day"]["waiting"], 10, "the rollover to wait")
        bench.power_cut()                                      # across the hour (5.16)
        codes += deal(5)
        finish(rid, codes)                                     # in the 26th
        wait_for(lambda: bench.day() == "2026-11-27", 10, "the rollover to the 27th")
        rid = open_round()
        finish(rid, deal(9))                                   # the 27th
        clocks.advance(24 * HOUR)                              # an idle hour
        wait_for(lambda: bench.day() == "2026-11-28", 10, "the rollover to the 28th")
        rid = open_round()
        codes = deal(3)
        bench.stop_daemon()                                    # down across the hour
        clocks.advance(24 * HOUR)
        codes += deal(2, wait=False)                           # cards leave the shoe meanwhile
        bench.start_daemon()
        assert bench.day() == "2026-11-28"                     # the day not closed is reopened
        bench.wait_card(bench.pushed)
        codes += deal(4)
        finish(rid, codes)                                     # in the 28th
        wait_for(lambda: bench.day() == "2026-11-29", 10, "the rollover to the 29th")
        rid = open_round()
        finish(rid, deal(9))                                   # the 29th
        assert (bench.client.try_status() or {})["shoes"][str(bench.serial)]["shoe_no"] == shoe_no
    finally:
        bench.close()

    days = sorted(bench.days.glob(f"{bench.table.name}.*.sqlite"))
    assert [p.name.split(".")[1] for p in days] == ["2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29"]
    # Every card the bench pushed is journaled once, in one day file, under the one session.
    frames = [f for p in days for f in sorted(set(_frames(p)))]
    assert frames == [(shoe_no, i) for i in range(1, len(dealt) + 1)] and bench.pushed == len(dealt) == 45
    # Each round against the bench's own ledger and dealing model (TCP 3.7): nothing lost,
    # repeated, invented, misread or misplaced, in the API's round and in its day's journal.
    assert len(played) == 5
    for rid, codes, snapshot in played:
        holding = [p for p in days if journal_cards(p, rid)]
        assert len(holding) == 1, (rid, holding)
        ledger = RoundLedger(rid, TCP, "automated", None, WAGERS)
        ledger.cards = [Dealt(order=n + 1, code=c) for n, c in enumerate(codes)]
        assert compare(ledger, snapshot, journal_cards(holding[0], rid)) == [], rid
    assert check_chain(days) == []
    for p in days:
        report, _ = replay(p)
        assert report.ok, (p.name, report.mismatches)
