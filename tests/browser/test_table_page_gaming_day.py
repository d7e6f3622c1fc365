"""Issue 25 item 3 as a person at the pit sees it: the table page continues across a gaming
day's rollover. Headless Chromium on the table from real parts: the real firmware on the
virtual board (cards dealt through its barcode reader and exit sensor), the daemon on day files
(`[journal] dir`, `day_ends`) rolling the day over by itself at the hour, with no round in play.

`cardshoe run` (the `BoardTable` of the other browser tests) runs on the host's clock, so here
the same `Daemon` runs in the test's process with an injected clock (time flows, and the test
moves it by an hour: no hour is waited for; as tests/hil/test_vboard_gaming_day.py does), served
over real HTTP (uvicorn) with a token per role. Neither the daemon nor the link is restarted:
the page must notice the new day from `/status` alone.

Expectations come from the docs, not from the page's code: a new journal is a new gaming day
(docs/api.md, `journal.id`), each card drawn where the API placed it (by TCP 3.7; the placing
itself is tested against the rules elsewhere), and the pit view's reading in
docs/rule-readings.md (no face-down card value reaches the pit's browser before settlement).
Shown failing: with the page's journal check disabled (table.js `refreshOnce`) both cases time
out waiting for the new journal's marker; with the page dropping the chosen pit view when it
follows a new journal, the surveillance case finds day 2's card values.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest
from browser_harness import ROLE_TOKENS, SUPERVISOR, SURVEILLANCE, BoardTable
from daemon_harness import wait_for
from page_helpers import (WAIT, area_of, click, codes, open_round, page_cards, shot, sign_in, stop_watching, text_of,
                          watch_for_card_texts)
from selenium.webdriver.common.by import By

from day_clocks import Clocks

from cardshoe.hil.bench import JACKPOT_RESET, Bench, TableSpec

TCP = "three-card-poker"
HOUR = 3600 * 10**9
DAY_1 = ["Ah", "Kh", "Qh", "3c", "3d", "3s", "2c", "7d", "9s"]   # seats 2 and 5, then the dealer (TCP 3.7)
DAY_2 = ["2h", "2d", "8c", "Th", "Jd", "Qc", "6s", "7s", "Kc"]


class DayBench(Bench):
    """The bench with the daemon in this process (the test's clock) on day files, a token per role."""

    def __init__(self, workdir: Path, clocks: Clocks) -> None:
        super().__init__(workdir, TableSpec(TCP, seats=7, name="browser"), seed=25)
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
            create_app(self.inproc, self.token, role_tokens=ROLE_TOKENS, stopping=lambda: server.should_exit),
            log_level="warning", access_log=False, timeout_graceful_shutdown=2))
        self._server = server
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [self._api_sock.dup()]}, daemon=True)
        self._thread.start()
        wait_for(lambda: server.started, WAIT, "uvicorn to start")
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


class DayTable(BoardTable):
    """`BoardTable` (the calls the page tests make of a table) on a `DayBench`."""

    def __init__(self, workdir: Path, clocks: Clocks) -> None:  # not BoardTable's: its own bench
        self.clocks = clocks
        self.bench = DayBench(workdir / "bench", clocks)

    def status(self) -> dict[str, Any]:
        return self.ok("GET", "/status")


@pytest.fixture
def day_table(tmp_path: Path) -> Iterator[DayTable]:
    # 05:30 on the 27th with the day ending at 06:00: the gaming day of the 26th.
    table = DayTable(tmp_path / "day", Clocks(datetime(2026, 11, 27, 5, 30, tzinfo=timezone.utc)))
    try:
        yield table
    finally:
        table.close()


def _watch_alarms(browser: Any) -> None:
    """Record in the page every text the Alarms line takes, so one shown and cleared is caught."""
    browser.execute_script("""
        const a = document.getElementById('alarms');
        window.__alarms = [a.innerText];
        window.__alarmWatch = new MutationObserver(() => window.__alarms.push(a.innerText));
        window.__alarmWatch.observe(a, {subtree: true, childList: true, characterData: true});""")


def _cards_at_places(browser: Any, table: DayTable, rid: str, n: int) -> dict[int, tuple[str, str]]:
    placements = table.round(rid)["placements"]
    assert len(placements) == n, placements

    def drawn() -> dict[int, tuple[str, str]] | None:
        cards = page_cards(browser)
        if len(cards) != n or text_of(browser, "#round-id") != rid:
            return None
        return cards if all(area == area_of(placements[str(i)]) for i, (area, _) in cards.items()) else None
    try:
        return wait_for(drawn, WAIT, f"round {rid}'s {n} cards on the page at their places")
    except TimeoutError:
        got = page_cards(browser)
        raise AssertionError(f"round {rid} on the page: round-id {text_of(browser, '#round-id')!r}, "
                             f"cards {got}, placements {placements}") from None


@pytest.mark.parametrize("who", ["supervisor", "surveillance-pit-view"])
def test_the_page_follows_the_gaming_day_rollover_without_a_restart(day_table: DayTable, browser: Any,
                                                                    who: str) -> None:
    """A supervisor's page (the pit view by role, enforced by the API) and a surveillance
    officer's page with the pit view chosen (enforced by the page: it must keep the choice
    when it follows the new journal)."""
    table = day_table
    table.power_on_and_load()
    status = table.status()
    assert status["gaming_day"]["day"] == "2026-11-26", status["gaming_day"]
    day1_journal, day1_file = status["journal"]["id"], status["journal"]["file"]
    assert "2026-11-26" in day1_file

    if who == "supervisor":
        sign_in(browser, table, SUPERVISOR)
    else:
        sign_in(browser, table, SURVEILLANCE)
        assert "SURVEILLANCE" in text_of(browser, "#view-badge")
        click(browser, "#pit-only")
        wait_for(lambda: "PIT VIEW" in text_of(browser, "#view-badge"), WAIT, "the pit view chosen")
    assert "PIT VIEW" in text_of(browser, "#view-badge")
    wait_for(lambda: browser.find_element(By.ID, "day").get_attribute("data-journal") == day1_journal, WAIT,
             "the day's journal on the page")
    assert day1_file in text_of(browser, "#day")
    wait_for(lambda: text_of(browser, "#alarms") == "none", WAIT, "no alarm")
    _watch_alarms(browser)
    watch_for_card_texts(browser)  # every DOM change from here to the end: the pit never sees a face-down value

    # Day 1: a round dealt through the firmware and settled; its cards at their seats, face down
    # until settled.
    rid1 = open_round(table)
    table.deal(codes(DAY_1))
    for index, (_, text) in _cards_at_places(browser, table, rid1, len(DAY_1)).items():
        assert text == "", f"card {index} shows {text!r} in the pit view before settlement"
    # Not only at the end: no DOM change while the cards came in showed a face-down value.
    changes, leaks = stop_watching(browser)
    assert changes > len(DAY_1) and leaks == [], leaks
    for seat in (2, 5):
        table.ok("POST", f"/rounds/{rid1}/decisions", json={"seat": seat, "choice": "play"})
    table.ok("POST", f"/rounds/{rid1}/settle")
    # Settled, its hands are turned (the pit sees them now) and its settlement is shown.
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#settlement tbody tr[data-wager]") and
             all(t for _, t in page_cards(browser).values()), WAIT, "day 1's settlement on the page")

    # The hour passes with no round in play: the daemon rolls the day over by itself, neither it
    # nor the shoe's link restarted.
    daemon, epoch, link_changed = table.bench.inproc, status["epoch"], status["link_changed_ns"]
    table.clocks.advance(HOUR)                                       # 06:30 on the 27th
    wait_for(lambda: table.status()["gaming_day"]["day"] == "2026-11-27", WAIT, "the rollover to the 27th")
    status = table.status()
    day2_journal, day2_file = status["journal"]["id"], status["journal"]["file"]
    assert day2_journal != day1_journal and "2026-11-27" in day2_file, (day1_file, day2_file)
    assert table.bench.inproc is daemon and status["epoch"] == epoch    # the same daemon
    assert status["link_up"] and status["link_changed_ns"] == link_changed  # the link never dropped

    # The page shows the new day: its journal, and a marker in its event log.
    wait_for(lambda: browser.find_element(By.ID, "day").get_attribute("data-journal") == day2_journal, WAIT,
             "the new day's journal on the page")
    assert day2_file in text_of(browser, "#day")
    wait_for(lambda: f"journal {day2_journal}" in text_of(browser, "#log"), WAIT, "the new journal's marker in the log")
    assert "a new journal, the page follows it" in text_of(browser, "#log")
    # Day 1's round belongs to the old journal: nothing of it is held on the page.
    wait_for(lambda: page_cards(browser) == {} and
             not browser.find_elements(By.CSS_SELECTOR, "#settlement tbody tr[data-wager]"), WAIT,
             "day 1's round cleared from the page")
    assert text_of(browser, "#stream") == "live"
    watch_for_card_texts(browser)  # from the moment day 1's turned cards are gone

    # Day 2: a round opened and dealt appears at its places, under its round id, face down.
    rid2 = open_round(table)
    assert rid2 != rid1
    table.deal(codes(DAY_2))
    for index, (_, text) in _cards_at_places(browser, table, rid2, len(DAY_2)).items():
        assert text == "", f"card {index} shows {text!r} in the pit view before settlement"
    assert text_of(browser, "#round-id") == rid2
    assert browser.find_elements(By.CSS_SELECTOR, f"#history li[data-round='{rid1}'][data-journal='{day1_journal}']") == []
    # The event stream carries day 2's events to the page's log.
    wait_for(lambda: "round_opened" in text_of(browser, "#log") or rid2 in text_of(browser, "#log"), WAIT,
             "day 2's events in the log")
    assert "PIT VIEW" in text_of(browser, "#view-badge")
    shot(browser, f"table-page-new-day-{who}.png")

    changes, leaks = stop_watching(browser)
    assert changes > len(DAY_2) and leaks == [], leaks
    alarms = browser.execute_script("window.__alarmWatch.disconnect(); return window.__alarms")
    assert set(alarms) == {"none"}, alarms
    assert text_of(browser, "#alarms") == "none"
