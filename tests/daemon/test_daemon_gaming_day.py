"""Issue 25: the gaming day rolls over by itself, through the daemon over a real pty.

The daemon's wall clock and monotonic clock are injected (`DayTime`): time runs as it does,
and a test moves both by hours (the hour passes) or the wall clock alone (someone steps the
clock). Nothing waits for an hour and nothing is timed: each step waits on a condition.
The card ledger is the test's own list of what it dealt (never the daemon's word).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import DECK_ID, SERIAL, Table, wait_for

from cardshoe.cards import parse_card
from cardshoe.journal import JournalReader
from cardshoe.journal.days import check_chain
from cardshoe.journal.replay import main as replay_main
from cardshoe.journal.replay import replay

TCP = "three-card-poker"
HOUR = 3600 * 10**9
#: The deck dealt in order, round after round (each round takes 9 cards from it).
DECK = [f"{r}{s}" for s in "shdc" for r in "23456789TJQKA"]


class DayTime:
    """The daemon's clocks: real time's flow, plus offsets a test moves."""

    def __init__(self, start: datetime) -> None:
        self._lock = threading.Lock()
        self._t0 = time.monotonic_ns()
        self._wall0 = int(start.timestamp() * 1e9)
        self._wall_off = 0
        self._mono_off = 0

    def wall(self) -> int:
        with self._lock:
            return self._wall0 + (time.monotonic_ns() - self._t0) + self._wall_off

    def mono(self) -> int:
        with self._lock:
            return time.monotonic_ns() + self._mono_off

    def advance(self, ns: int) -> None:
        """Time passes (both clocks)."""
        with self._lock:
            self._wall_off += ns
            self._mono_off += ns

    def step(self, ns: int) -> None:
        """Someone sets the wall clock (the monotonic clock does not move)."""
        with self._lock:
            self._wall_off += ns


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


@pytest.fixture
def make_day_table(make_table: Any, tmp_path: Path) -> Any:
    def make(clock: DayTime) -> Table:
        # The harness makes its table folder; the day files go into one of their own.
        from cardshoe.daemon.config import LinkTiming

        return make_table(TCP, 7, journal_dir=tmp_path / "days", day_ends="06:00", day_zone="UTC",
                          link=LinkTiming(heartbeat_ms=2000, resend_ms=100, resend_max_ms=400),
                          daemon_kwargs={"clock": clock.wall, "monotonic": clock.mono})
    return make


class Dealer:
    """Deals rounds at the table, keeping its own ledger of every card it dealt."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.ok = table.ok  # the API of the daemon in play (another process's: `DayDaemonProcess.ok`)
        self.next = 0
        self.ledger: list[tuple[int, int, int]] = []  # (shoe_no, index, code) as the shoe dealt them
        self.shoe_no = 0
        self.index = 0
        self.round_start = 0
        # Each round as the bench dealt it and as the API showed it right after its settlement:
        # (round id, the codes dealt in it, GET /rounds/{id}).
        self.rounds: list[tuple[str, list[int], dict[str, Any]]] = []

    def load(self) -> int:
        self.shoe_no = self.table.power_on_and_load()
        self.index = 0
        return self.shoe_no

    def card(self, n: int = 1, *, acked: bool = True) -> None:
        for _ in range(n):
            code = parse_card(DECK[self.next % 52])
            self.next += 1
            self.index += 1
            self.table.shoe.deal(code)
            self.ledger.append((self.shoe_no, self.index, code))
        if acked:
            self.table.shoe.wait_acked(10)

    def open(self) -> str:
        self.round_start = len(self.ledger)
        rid = str(self.ok("POST", "/rounds")["round_id"])
        self.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
        self.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 5, "wager": "pair_plus", "amount": 500})
        self.ok("POST", f"/rounds/{rid}/no-more-bets")
        return rid

    def finish(self, rid: str, dealt: int = 0) -> dict[str, Any]:
        """Deal the rest of the round's 9 cards (TCP 3.7), decide and settle it."""
        self.card(9 - dealt)
        wait_for(lambda: len(self.ok("GET", f"/rounds/{rid}")["placements"]) == 9, 10, f"round {rid} dealt")
        self.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
        return self.settled(rid)

    def settled(self, rid: str) -> dict[str, Any]:
        done = self.ok("POST", f"/rounds/{rid}/settle", json={})
        # Read at once: the day may roll over now, and the closed day's rounds stay readable.
        self.rounds.append((rid, [c for _, _, c in self.ledger[self.round_start:]], self.ok("GET", f"/rounds/{rid}")))
        return done

    def check_with_the_bench_ledger(self, days: list[Path]) -> None:
        """Each round against the bench's own ledger and dealing model (hil/ledger.py, from the
        rules, TCP 3.7): no card lost, repeated, invented, misread or misplaced, in the API's
        round and in the journal of the day file that holds it (exactly one)."""
        from cardshoe.hil.ledger import Dealt, RoundLedger, compare, journal_cards

        for rid, codes, snapshot in self.rounds:
            holding = [p for p in days if journal_cards(p, rid)]
            assert len(holding) == 1, (rid, holding)
            ledger = RoundLedger(rid, TCP, "automated", None, {2: {"ante": 1000}, 5: {"pair_plus": 500}})
            ledger.cards = [Dealt(order=n + 1, code=c) for n, c in enumerate(codes)]
            assert compare(ledger, snapshot, journal_cards(holding[0], rid)) == [], rid


def _placed(path: Path) -> list[tuple[int, int]]:
    """(index, code) of every card a day file placed into a round (its `card_placed` events)."""
    with JournalReader(path) as j:
        return [(int(d["index"]), int(d["card"])) for d in (e.data() for e in j.entries(("event",)))
                if d.get("type") == "card_placed"]


def _frames(path: Path) -> list[tuple[int, int, int]]:
    with JournalReader(path) as j:
        return [(int(d["shoe_no"]), int(d["index"]), int(d["code"])) for d in
                (e.data() for e in j.entries(("frame",))) if d["type"] == "CARD"]


def _days(table: Table) -> list[Path]:
    assert table.config.journal_dir is not None
    return sorted(table.config.journal_dir.glob("T1.*.sqlite"))


def _rolled_to(table: Table, day: str) -> None:
    wait_for(lambda: (table.daemon.status()["gaming_day"] or {}).get("day") == day, 10, f"the rollover to {day}")


def test_the_day_rolls_over_after_the_round_in_play_and_the_shoe_carries_on(make_day_table: Any) -> None:
    clock = DayTime(_at("2026-11-27T05:58:00"))  # gaming day 2026-11-26 until 06:00
    table: Table = make_day_table(clock)
    assert table.daemon.status()["gaming_day"]["day"] == "2026-11-26"
    dealer = Dealer(table)
    shoe_no = dealer.load()
    first = dealer.open()
    dealer.finish(first)
    link = table.daemon.link
    reconnects = table.daemon.status()["link"]["reconnects"]

    # A round in play at the hour: it finishes in the old day (the rollover waits for it).
    rid = dealer.open()
    dealer.card(4)
    clock.advance(3 * 60 * 10**9)  # 06:01
    wait_for(lambda: table.daemon.status()["gaming_day"]["waiting"] is not None, 10, "the rollover to wait")
    assert table.daemon.status()["gaming_day"]["day"] == "2026-11-26"
    dealer.finish(rid, dealt=4)
    # The next round, opened as soon as that one settled: in the new day (the rollover comes first).
    third = dealer.open()
    _rolled_to(table, "2026-11-27")
    old, new = _days(table)
    assert (old.name, new.name) == ("T1.2026-11-26.sqlite", "T1.2026-11-27.sqlite")
    assert table.config.journal_dir is not None and table.daemon.config.journal == new
    assert not os.stat(old).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)  # kept read-only
    # The same link throughout: never reopened, the shoe never lost.
    assert table.daemon.link is link and table.daemon.status()["link"]["reconnects"] == reconnects

    # The same shoe session deals on in the new day: its next card is the next index.
    assert third.split("-")[1] != rid.split("-")[1]  # round ids unique across days (the journal's scope)
    dealer.finish(third)
    assert table.daemon.status()["shoes"][str(SERIAL)]["shoe_no"] == shoe_no
    assert table.daemon.status()["shoes"][str(SERIAL)]["next_index"] == 28
    snap = table.round(third)
    assert sorted(int(k) for k in snap["placements"]) == list(range(19, 28))

    # Every card the dealer dealt, exactly once across the day files, where it was dealt.
    placed = _placed(old) + _placed(new)
    assert sorted(placed) == sorted((i, c) for _, i, c in dealer.ledger)
    assert [i for i, _ in _placed(old)] == list(range(1, 19)) and [i for i, _ in _placed(new)] == list(range(19, 28))
    dealer.check_with_the_bench_ledger([old, new])
    assert table.round(rid)["status"] == "settled"  # the closed day's rounds stay readable

    # Each day replays alone, and the two link as a chain.
    for path in (old, new):
        report, _ = replay(path)
        assert report.ok, report.mismatches
    assert check_chain([old, new]) == []
    with JournalReader(old) as j:
        top = j.top()
        assert top is not None and top.data()["type"] == "day_closed"
        closing = top.data()
        assert closing["head"]["id"] == top.id - 1 and closing["next_file"] == new.name
        assert j.last("checkpoint") is not None and j.last("checkpoint").id == top.id - 1  # type: ignore[union-attr]


# -- the real firmware on the virtual board: several days at a dealer's pace -----------------
class FirmwareDealer(Dealer):
    """The dealer at a shoe running the real firmware (tests/daemon/daemon_fwshoe.py)."""

    def __init__(self, table: Table, shoe: Any) -> None:
        super().__init__(table)
        self.shoe = shoe

    def load(self) -> int:
        wait_for(lambda: self.table.daemon.shoe_serial == SERIAL, 10, "the firmware's HELLO")
        r = self.table.client.post("/shoe/load", json={"deck_id": DECK_ID})
        assert r.status_code == 202, r.text
        self.shoe_no = int(r.json()["shoe_no"])
        wait_for(lambda: self._session().get("shoe_no") == self.shoe_no, 10, "the firmware to store the shoe")
        self.index = 0
        return self.shoe_no

    def _session(self) -> dict[str, Any]:
        try:
            return dict(self.table.daemon.status()["shoes"].get(str(SERIAL), {}))
        except RuntimeError:  # the daemon is down
            return {}

    def card(self, n: int = 1, *, journaled: bool = True) -> None:
        for _ in range(n):
            code = parse_card(DECK[self.next % 52])
            self.next += 1
            self.index += 1
            self.shoe.deal(DECK_ID, code)
            self.ledger.append((self.shoe_no, self.index, code))
        if journaled:
            self.journaled()

    def journaled(self) -> None:
        want = self.index + 1
        wait_for(lambda: self._session().get("next_index") == want, 15, f"card {self.index} journaled")

    def finish(self, rid: str, dealt: int = 0) -> dict[str, Any]:
        self.card(9 - dealt)
        t = self.table
        wait_for(lambda: len(t.round(rid)["placements"]) == 9, 10, f"round {rid} dealt")
        for flag in t.round(rid)["irregularities"]:
            if flag["decision"] in ("pending", "referred"):  # the power failure (5.16): a person checks the table
                t.ok("POST", f"/rounds/{rid}/confirmations",
                     json={"flag": flag["id"], "confirmed": True, "supervisor": "S. Pit"})
        t.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
        return self.settled(rid)


def test_days_roll_over_at_a_dealers_pace_with_the_real_firmware_a_power_cut_and_a_daemon_stop_across_the_hour(
        make_day_table: Any, capsys: Any) -> None:
    import tempfile

    from daemon_fwshoe import FirmwareShoe
    from daemon_harness import KEY

    clock = DayTime(_at("2026-11-27T05:50:00"))
    table: Table = make_day_table(clock)
    with tempfile.TemporaryDirectory(prefix="fw", dir="/tmp") as tmp:  # short path: UNIX socket
        shoe = FirmwareShoe(Path(tmp), table.plug, SERIAL, KEY)
        try:
            shoe.power_on()
            dealer = FirmwareDealer(table, shoe)
            shoe_no = dealer.load()
            dealer.finish(dealer.open())                      # day 26

            # The hour comes with a round being dealt, and the shoe's power is cut across it (5.16).
            rid = dealer.open()
            dealer.card(4)
            clock.advance(15 * 60 * 10**9)                    # 06:05 on the 27th
            wait_for(lambda: table.daemon.status()["gaming_day"]["waiting"] is not None, 10, "the rollover to wait")
            shoe.power_cut()
            shoe.power_on()
            dealer.card(0)
            flags = wait_for(lambda: [f for f in table.round(rid)["irregularities"] if f["kind"] == "power_failure"],
                             10, "the power failure flagged")
            assert flags[0]["rules"] == ["5.16"]
            dealer.finish(rid, dealt=4)                       # finishes in day 26
            _rolled_to(table, "2026-11-27")
            assert table.daemon.status()["link_up"]

            dealer.finish(dealer.open())                      # day 27
            clock.advance(24 * HOUR)                          # 06:05 on the 28th, the table idle
            _rolled_to(table, "2026-11-28")

            # The daemon stops mid-round; the hour passes while it is down; cards go on leaving the shoe.
            rid = dealer.open()
            dealer.card(3)
            table.kill_daemon()
            clock.advance(24 * HOUR)                          # 06:05 on the 29th
            dealer.card(2, journaled=False)
            table.start_daemon()
            # The day of the 28th was not closed: it is reopened, and its round finishes in it.
            assert table.daemon.status()["gaming_day"]["day"] == "2026-11-28"
            dealer.journaled()
            dealer.finish(rid, dealt=5)
            _rolled_to(table, "2026-11-29")
            dealer.finish(dealer.open())                      # day 29
            assert table.daemon.status()["shoes"][str(SERIAL)]["shoe_no"] == shoe_no  # one session throughout
        finally:
            shoe.close()

    days = _days(table)
    assert [p.name for p in days] == [f"T1.2026-11-{d}.sqlite" for d in (26, 27, 28, 29)]
    # The bench's own ledger: every card it dealt is in exactly one day file, journaled once and
    # placed once, in the day its round was played.
    frames = [f for path in days for f in sorted(set(_frames(path)))]
    assert sorted(frames) == sorted(dealer.ledger) and len(set(frames)) == len(frames)
    placed = [p for path in days for p in _placed(path)]
    assert sorted(placed) == sorted((i, c) for _, i, c in dealer.ledger)
    per_day = [[i for i, _ in _placed(path)] for path in days]
    assert per_day == [list(range(1, 19)), list(range(19, 28)), list(range(28, 37)), list(range(37, 46))]
    dealer.check_with_the_bench_ledger(days)
    assert len(dealer.rounds) == 5

    # `cardshoe replay` audits each day alone and the chain of days.
    assert replay_main([str(p) for p in days]) == 0
    out = capsys.readouterr().out.splitlines()
    assert all(": identical:" in line for line in out[:4]), out
    assert out[-1].startswith("chain of 4 days: linked"), out
    for path in days:
        capsys.readouterr()
        assert replay_main([str(path)]) == 0


def test_the_api_and_a_live_event_stream_follow_the_day_across_the_rollover(make_day_table: Any) -> None:
    clock = DayTime(_at("2026-11-27T05:59:00"))
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    dealer.load()
    before = table.ok("GET", "/status")["journal"]
    seen: list[dict[str, Any]] = []
    connected = threading.Event()

    import httpx

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))
    from browser_harness import Served
    from daemon_harness import TOKEN

    served = Served(table)  # real HTTP (uvicorn): the stream as a client reads it, live

    def listen() -> None:
        with httpx.stream("GET", f"{served.url}/events?view=pit", headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=30) as r:
            for line in r.iter_lines():
                if line.startswith(": connected"):
                    connected.set()
                if line.startswith("data:"):
                    seen.append(json.loads(line[5:]))
                    if seen[-1]["data"].get("type") == "settlement" and any(
                            s["data"].get("type") == "day_opened" for s in seen):
                        return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    wait_for(connected.is_set, 10, "the stream to connect")
    clock.advance(2 * 60 * 10**9)
    _rolled_to(table, "2026-11-27")
    dealer.finish(rid := dealer.open())
    listener.join(15)
    served.close()
    assert not listener.is_alive(), [s["data"].get("type") for s in seen]
    types = [s["data"].get("type") for s in seen]
    # The old day's closing, then the new day's entries from id 1, with its round's cards and settlement.
    assert types.index("day_closed") < types.index("day_opened") < types.index("settlement")
    opened = seen[types.index("day_opened")]
    assert opened["id"] == 1 and opened["data"]["previous"]["file"] == "T1.2026-11-26.sqlite"
    assert sum(1 for s in seen if s["data"].get("type") == "card_placed" and s["round_id"] == rid) == 9
    # The pit view (this stream) knows every field of the rollover's events: none is withheld.
    day_kinds = {"day_closed", "day_opened", "shoe_handed_over", "shoe_taken_over", "day_handover"}
    assert day_kinds <= set(types)
    assert [s["data"] for s in seen if s["data"].get("type") in day_kinds and "withheld" in s["data"]] == []
    after = table.ok("GET", "/status")
    assert after["journal"]["id"] != before["id"] and after["journal"]["file"] == "T1.2026-11-27.sqlite"
    assert after["gaming_day"]["day"] == "2026-11-27" and after["gaming_day"]["rollovers"] == 1
    # A client reconnecting with an id of the old day (beyond this day's end) reads this day from its start.
    r = table.client.get(f"/events?after={before['last_entry'] + 500}&limit=1")
    first = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:")]
    assert first[0]["id"] == 1 and first[0]["data"]["type"] == "day_opened"


def test_a_clock_stepped_by_hours_is_not_followed_and_raises_an_alarm(make_day_table: Any) -> None:
    clock = DayTime(_at("2026-11-27T05:00:00"))
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    dealer.load()
    clock.step(3 * HOUR)  # someone sets the clock to 08:00: no second day starts
    alarm = wait_for(lambda: [a for a in table.daemon.status()["alarms"] if a["type"] == "clock_stepped"], 10,
                     "the clock_stepped alarm")
    assert "forward by 3.00 h" in alarm[0]["message"]
    pit = [a for a in table.ok("GET", "/status?view=pit")["alarms"] if a["type"] == "clock_stepped"]
    assert pit and "withheld" not in pit[0]
    dealer.finish(dealer.open())
    status = table.daemon.status()["gaming_day"]
    assert status["day"] == "2026-11-26" and status["rollovers"] == 0 and status["due"] == "2026-11-26"
    assert len(_days(table)) == 1
    # Time passes (both clocks): the day ends at 06:00 by the day's clock, not by the stepped one.
    clock.advance(HOUR + 60 * 10**9)
    _rolled_to(table, "2026-11-27")
    clock.step(-3 * HOUR)  # the clock set right again: the alarm clears, the day stays
    wait_for(lambda: not [a for a in table.daemon.status()["alarms"] if a["type"] == "clock_stepped"], 10,
             "the alarm to clear")
    assert table.daemon.status()["gaming_day"]["day"] == "2026-11-27"
    with JournalReader(_days(table)[0]) as j:
        assert [e.data()["type"] for e in j.entries(("daemon",)) if "clock" in e.data()["type"]] == ["clock_stepped"]
    with JournalReader(_days(table)[1]) as j:
        assert [e.data()["type"] for e in j.entries(("daemon",)) if "clock" in e.data()["type"]] == [
            "clock_stepped_cleared"]


def test_a_restart_mid_day_opens_that_days_file_and_a_clock_behind_the_newest_day_is_refused(
        make_day_table: Any) -> None:
    from cardshoe.daemon.gamingday import DayClockBehind

    clock = DayTime(_at("2026-11-27T12:00:00"))
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    dealer.load()
    dealer.finish(dealer.open())
    table.restart_daemon()
    assert table.daemon.config.journal.name == "T1.2026-11-27.sqlite" and len(_days(table)) == 1
    dealer.finish(dealer.open())  # the same session, placed on in the same file
    assert [i for i, _ in _placed(_days(table)[0])] == list(range(1, 19))
    table.kill_daemon()
    clock.step(-2 * 24 * HOUR)  # the PC starts with its clock two days behind
    with pytest.raises(DayClockBehind, match="clock is behind"):
        table.start_daemon()
    clock.step(2 * 24 * HOUR)
    table.start_daemon()
    assert table.daemon.status()["gaming_day"]["day"] == "2026-11-27"


def test_a_daemon_killed_across_the_hour_finishes_the_old_day_then_rolls_over(make_day_table: Any,
                                                                               tmp_path: Path) -> None:
    """SIGKILL of the real `cardshoe run` (a child process, on the host's own clock) with a round
    of the day before in play: the restarted daemon reopens that day (it was not closed), the
    round finishes in it, and the day rolls over to today's file; no card lost or placed twice."""
    from test_daemon_restart import DaemonProcess

    now = datetime.now(timezone.utc)
    clock = DayTime(now - timedelta(days=1))  # the day before, in-process: its round is left in play
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    dealer.load()
    dealer.finish(dealer.open())
    rid = dealer.open()
    dealer.card(4)
    yesterday = table.daemon.status()["gaming_day"]["day"]
    table.kill_daemon()

    days = tmp_path / "days"
    config = tmp_path / "table.toml"
    config.write_text(f'[journal]\ndir = "{days}"\nday_ends = "06:00"\nzone = "UTC"\n')

    class DayDaemonProcess(DaemonProcess):
        def start(self) -> None:
            import httpx
            from daemon_harness import TOKEN, started_port

            env = dict(os.environ, CARDSHOE_TOKEN=TOKEN)
            args = [sys.executable, "-m", "cardshoe.cli", "run", "--config", str(config), "--port", str(self.tty),
                    "--game", TCP, "--seats", "7", "--name", "T1", "--keys", str(self.keys),
                    "--listen", "127.0.0.1:0", "--port-file", str(self.port_file)]
            self.port_file.unlink(missing_ok=True)
            self.proc = subprocess.Popen(args, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
            self.url = f"http://127.0.0.1:{started_port(self.port_file, self.proc, self.log)}"
            self.client = httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
            wait_for(lambda: self.client.get("/status").status_code == 200, 20, "the daemon's API")

    (tmp_path / "proc").mkdir()
    proc = DayDaemonProcess(tmp_path / "proc", table.plug.path)
    dealer.ok = proc.ok
    try:
        proc.start()
        status = proc.ok("GET", "/status")
        assert status["gaming_day"]["day"] == yesterday and status["journal"]["file"] == f"T1.{yesterday}.sqlite"
        assert status["gaming_day"]["due"] > yesterday and status["gaming_day"]["waiting"]  # its round is in play
        dealer.card(2, acked=False)
        proc.kill()                                        # SIGKILL, cards in flight
        dealer.card(1, acked=False)                        # one more leaves the shoe while it is down
        proc.start()
        table.shoe.wait_acked(15)
        dealer.finish(rid, dealt=7)
        wait_for(lambda: proc.ok("GET", "/status")["gaming_day"]["day"] > yesterday, 15, "the rollover")
        rid2 = dealer.open()
        dealer.finish(rid2)
        assert proc.stop() == 0
    finally:
        if proc.proc is not None and proc.proc.poll() is None:
            proc.kill()
    files = sorted(days.glob("T1.*.sqlite"))
    assert [p.name for p in files][0] == f"T1.{yesterday}.sqlite" and len(files) == 2
    frames = [f for path in files for f in sorted(set(_frames(path)))]
    assert sorted(frames) == sorted(dealer.ledger) and len(set(frames)) == len(frames)
    assert [[i for i, _ in _placed(p)] for p in files] == [list(range(1, 19)), list(range(19, 28))]
    dealer.check_with_the_bench_ledger(files)
    assert check_chain(files) == []
    for path in files:
        report, _ = replay(path)
        assert report.ok, report.mismatches


def test_the_shift_report_cuts_by_gaming_day(make_day_table: Any, tmp_path: Path) -> None:
    from cardshoe.report.cli import main as report_main

    clock = DayTime(_at("2026-11-27T05:50:00"))
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    dealer.load()
    dealer.finish(dealer.open())
    dealer.finish(dealer.open())
    clock.advance(20 * 60 * 10**9)
    dealer.finish(dealer.open())  # opens in the 27th's day (the rollover comes first)
    _rolled_to(table, "2026-11-27")
    days_dir = table.config.journal_dir
    assert days_dir is not None

    def rounds(day: str) -> int:
        out = tmp_path / f"{day}.json"
        if report_main(["--days-dir", str(days_dir), "--day", day, "--zone", "UTC", "--out", str(out)]) == 2:
            return -1  # no day file of that day: said so, nothing written
        report = json.loads(out.read_text())
        return sum(int(g.get("pace", {}).get("rounds", 0)) for g in report["groups"]["table"].values())

    assert (rounds("2026-11-26"), rounds("2026-11-27"), rounds("2026-11-28")) == (2, 1, -1)
    # The same cut over every day file by time: the window alone decides.
    out = tmp_path / "window.json"
    files = [str(p) for p in _days(table)]
    report_main(["--from", "2026-11-27T06:00+00:00", "--to", "2026-11-28T06:00+00:00", "--out", str(out),
                 *sum((["--journal", f] for f in files), [])])
    report = json.loads(out.read_text())
    assert sum(int(g.get("pace", {}).get("rounds", 0)) for g in report["groups"]["table"].values()) == 1


def test_closed_days_are_archived_by_the_documented_command_and_the_open_day_never(
        make_day_table: Any, tmp_path: Path, capsys: Any) -> None:
    from cardshoe.cli import main as cli

    clock = DayTime(_at("2026-11-27T05:50:00"))
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    dealer.load()
    for day in ("2026-11-27", "2026-11-28"):
        dealer.finish(dealer.open())
        clock.advance(24 * HOUR)
        _rolled_to(table, day)
    dealer.finish(dealer.open())
    days_dir = table.config.journal_dir
    assert days_dir is not None
    assert cli(["days", "list", str(days_dir)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[2:4] for line in listed] == [["closed", "read-only"]] * 2 + [["OPEN", "read-write"]]

    archive = tmp_path / "archive"
    assert cli(["days", "archive", str(days_dir), "--to", str(archive), "--keep-days", "1", "--remove"]) == 0
    out = capsys.readouterr().out
    assert out.count("archived to") == 2, out
    kept = _days(table)
    assert [p.name for p in kept] == ["T1.2026-11-28.sqlite"]  # the open day stays, written on
    copies = sorted(archive.glob("T1.*.sqlite"))
    assert [p.name for p in copies] == ["T1.2026-11-26.sqlite", "T1.2026-11-27.sqlite"]
    assert all(not os.stat(p).st_mode & 0o222 for p in copies)
    assert len((archive / "SHA256SUMS").read_text().splitlines()) == 2
    dealer.finish(dealer.open())
    assert check_chain([*copies, kept[0]]) == []
    # Keeping none is refused (the open day is never archived); the open day is never touched.
    assert cli(["days", "archive", str(days_dir), "--to", str(archive), "--keep-days", "0"]) == 2


def test_a_rollover_that_cannot_be_made_is_an_alarm_and_is_tried_again(make_day_table: Any) -> None:
    clock = DayTime(_at("2026-11-27T05:59:00"))
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    dealer.load()
    days_dir = table.config.journal_dir
    assert days_dir is not None
    blocker = days_dir / "T1.2026-11-27.sqlite"
    blocker.mkdir()  # the next day's file cannot be made (a folder in its place)
    clock.advance(2 * 60 * 10**9)
    alarm = wait_for(lambda: [a for a in table.ok("GET", "/status?view=pit")["alarms"] if a["type"] == "gaming_day"],
                     10, "the gaming_day alarm")
    assert "did not roll over to 2026-11-27" in alarm[0]["message"] and "withheld" not in alarm[0]
    dealer.finish(dealer.open())  # the table plays on in its day
    assert table.daemon.status()["gaming_day"]["day"] == "2026-11-26"
    blocker.rmdir()
    clock.advance(11 * 10**9)  # tried again after 10 s
    _rolled_to(table, "2026-11-27")
    assert not [a for a in table.daemon.status()["alarms"] if a["type"] == "gaming_day"]
    old, new = _days(table)
    with JournalReader(old) as j:
        assert [e.data()["type"] for e in j.entries(("daemon",)) if e.data()["type"] == "day_rollover_failed"]
    assert check_chain([old, new]) == []
    dealer.finish(dealer.open())
    assert [i for i, _ in _placed(new)] == list(range(10, 19))


def test_day_file_settings_are_checked_and_named() -> None:
    from cardshoe.daemon.cli import EXIT_CLOCK_BEHIND, config_from_args, exit_status
    from cardshoe.daemon.config import ConfigError
    from cardshoe.daemon.gamingday import DayClockBehind, DayPolicy, parse_day_ends

    base = ["--port", "/dev/null", "--game", TCP, "--seats", "7", "--name", "T07"]
    cfg = config_from_args(base + ["--journal-dir", "/var/lib/cardshoe/days", "--day-ends", "06:00",
                                   "--day-zone", "UTC"])
    assert (cfg.journal_dir, cfg.day_ends, cfg.day_zone) == (Path("/var/lib/cardshoe/days"), "06:00", "UTC")
    assert cfg.table_key_file() == Path("/var/lib/cardshoe/days/T07.table-key")  # one key whatever the day
    for bad, message in ((["--day-ends", "6am", "--journal-dir", "/d"], "not a time of day as HH:MM"),
                         (["--day-ends", "06:00"], "needs journal.dir"),
                         (["--journal-dir", "/d"], "need journal.day_ends"),
                         (["--journal-dir", "/d", "--day-ends", "06:00", "--journal", "/j.sqlite"], "not both"),
                         (["--journal-dir", "/d", "--day-ends", "06:00", "--day-zone", "Mars/Olympus"],
                          "not a time zone")):
        with pytest.raises(ConfigError, match=message):
            config_from_args(base + bad)
    assert parse_day_ends("23:59") == 23 * 60 + 59
    policy = DayPolicy(Path("/d"), 360, "06:00", timezone.utc)
    # 05:59:59 on the 27th is the 26th's day; 06:00 starts the 27th's.
    assert policy.day_of(int(_at("2026-11-27T05:59:59").timestamp() * 1e9)).isoformat() == "2026-11-26"
    assert policy.day_of(int(_at("2026-11-27T06:00:00").timestamp() * 1e9)).isoformat() == "2026-11-27"
    assert policy.file("T07", policy.day_of(int(_at("2026-11-28T03:00").timestamp() * 1e9))).name == \
        "T07.2026-11-27.sqlite"
    assert exit_status(DayClockBehind("behind")) == EXIT_CLOCK_BEHIND == 8


def test_the_new_day_refuses_what_the_old_day_placed_and_the_old_day_places_nothing_after_the_handover() -> None:
    """In the pure core (the same inputs the daemon journals): the handover out leaves the old
    day with no session (a frame of it there is another journal's, 6.1); the handover in
    continues it in the new day from the next index, a card the old day placed is a resend (the
    same card: nothing) or a conflict (another card at its index: flagged, not placed), and the
    next card is placed."""
    from test_daemon_core_sessions import Feeder

    old = Feeder(scope="day1")
    old.input({"action": "shoe_loaded", "shoe": 1, "shoe_no": 500, "deck_id": 7})
    for i, text in enumerate(["Ah", "Kh", "Qh"], start=1):
        old.card(500, i, text)  # outside a round: referred, but the session's cards all the same
    carried = old.core.handover_state()
    assert [s["next_index"] for s in carried["sessions"]] == [4]
    body = {"action": "shoe_handover", "carried": carried, "windows": [[1, 1, 9]], "from_day": "2026-11-26",
            "to_day": "2026-11-27", "from_journal": "a", "to_journal": "b", "from_file": "x", "to_file": "y"}
    assert old.input({**body, "direction": "out"}).refused is None
    after = old.card(500, 4, "2c")
    assert [d["type"] for d in after][-1] == "card_from_foreign_session" and after[-1]["rule"] == "6.1"

    new = Feeder(scope="day2")
    assert new.input({**body, "direction": "in"}).refused is None
    assert new.card(500, 3, "Qh") == []  # a resend of the old day's card 3: nothing
    conflict = new.card(500, 2, "9s")    # another card at index 2, which the old day placed
    assert [d["type"] for d in conflict] == ["shoe_card_conflict"] and conflict[0]["index"] == 2
    rid = new.input({"action": "open_round"}).round_id
    new.input({"action": "op", "round_id": rid, "op": {"op": "place_wager", "seat": 1, "wager": "ante",
                                                          "amount": 1000}})
    new.input({"action": "op", "round_id": rid, "op": {"op": "no_more_bets"}})
    placed = [d for d in new.card(500, 4, "2c") if d["type"] == "card_placed"]
    assert [d["index"] for d in placed] == [4] and new.core.shoes[1].next_index == 5
    # A handover out is refused while a round is in play (a rollover waits for it).
    refused = new.input({**body, "direction": "out", "carried": new.core.handover_state()}).refused
    assert refused is not None and "in play" in str(refused)


def test_a_rollover_cut_short_after_the_old_day_closed_is_finished_at_the_next_start(make_day_table: Any) -> None:
    """The PC dies after the old day's closing entry and before the new day's file reached the
    disk: the next start opens the new day's file with the handover the old day gave out, and
    the shoe deals on from its next card."""
    clock = DayTime(_at("2026-11-27T05:59:00"))
    table: Table = make_day_table(clock)
    dealer = Dealer(table)
    shoe_no = dealer.load()
    dealer.finish(dealer.open())
    clock.advance(2 * 60 * 10**9)
    _rolled_to(table, "2026-11-27")
    table.kill_daemon()
    old, new = _days(table)
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{new}{suffix}").unlink(missing_ok=True)  # the new day's file never made it
    table.start_daemon()
    assert table.daemon.config.journal == new and table.daemon.status()["gaming_day"]["day"] == "2026-11-27"
    assert table.daemon.status()["shoes"][str(SERIAL)]["shoe_no"] == shoe_no
    dealer.finish(dealer.open())
    assert [i for i, _ in _placed(new)] == list(range(10, 19))
    assert check_chain([old, new]) == []
    for path in (old, new):
        report, _ = replay(path)
        assert report.ok, report.mismatches
