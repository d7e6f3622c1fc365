"""The `/floor` page in headless Chromium (issue 21 item 7): the round search by the time a
round opened, with the API's `since_ns`/`until_ns`, and the journal alarms shown first.

Rounds are put on a real floor (SQLite store, served by uvicorn over HTTP) at times the
browser itself computes from the local times typed in, so the test holds in any time zone."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "floor"))

from cardshoe.floor.store import FloorStore, JournalRefused, ShippedEntry  # noqa: E402
from cardshoe.floor.testnet import FloorServer  # noqa: E402
from floor_chain import chained  # noqa: E402
from floor_server import TOKENS, app  # noqa: E402


def _rows(browser: Any, div: str) -> list[list[str]]:
    return browser.execute_script(
        f"return [...document.querySelectorAll('#{div} tr')].slice(1).map(r => [...r.cells].map(c => c.textContent))")


def test_the_floor_page_searches_rounds_by_the_time_they_opened(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    store = FloorStore.sqlite(tmp_path / "floor.sqlite")
    server = FloorServer(app(store))
    try:
        url = f"http://127.0.0.1:{server.port}"
        browser.get(url + "/floor")
        base_ms = int(browser.execute_script("return new Date('2024-03-01T10:00:00').getTime()"))
        hour = 3_600_000
        stream = "T1.0123456789ab"
        events = [ShippedEntry(k + 1, (base_ms + 2 * k * hour) * 1_000_000, "event", None, None, None, None,
                               f"T1-00000{k + 1}", json.dumps({"type": "round_opened", "game": "three-card-poker"}),
                               None) for k in range(3)]  # opened 10:00, 12:00, 14:00 local
        store.ingest(stream, chained(stream, events))
        try:  # and one table whose journal has a gap: an alarm the page shows first
            store.ingest("T2.0123456789ab", chained("T2.0123456789ab", events)[1:])
        except JournalRefused:
            pass
        browser.find_element(By.ID, "token").send_keys(TOKENS["pit"])
        browser.find_element(By.ID, "go").click()
        WebDriverWait(browser, 20).until(lambda b: _rows(b, "alarms"))
        (alarm,) = _rows(browser, "alarms")
        assert alarm[:3] == ["T2.0123456789ab", "gap", "1"]
        browser.execute_script("document.getElementById('s_since').value = '2024-03-01T11:00:00';"
                               "document.getElementById('s_until').value = '2024-03-01T13:00:00';")
        browser.find_element(By.ID, "search").click()
        WebDriverWait(browser, 20).until(lambda b: _rows(b, "rounds"))
        assert [r[1] for r in _rows(browser, "rounds")] == ["T1-000002"]
        browser.execute_script("document.getElementById('s_until').value = '';")
        browser.find_element(By.ID, "search").click()
        WebDriverWait(browser, 20).until(lambda b: len(_rows(b, "rounds")) == 2)
        assert [r[1] for r in _rows(browser, "rounds")] == ["T1-000003", "T1-000002"]  # newest first
        assert browser.find_element(By.ID, "err").text == ""
    finally:
        server.close()
        store.close()
