"""The table page's Shift panel (issue 23) in a real browser: a supervisor signs a dealer on
from the panel (journaled: the API then names him), the panel shows who is on and the shift's
figures of a settled round from `GET /shift`."""

from __future__ import annotations

from typing import Any

from browser_harness import SHOTS, SUPERVISOR, Served
from daemon_harness import HANDS, open_two_seat_round, wait_for
from selenium.webdriver.common.by import By
from test_table_page import WAIT, sign_in

from cardshoe.cards import parse_card

TCP = "three-card-poker"


def test_the_shift_panel_signs_a_dealer_on_and_shows_the_shifts_figures(served: Any, browser: Any) -> None:
    s: Served = served(TCP, 7)
    table = s.table
    table.power_on_and_load()
    rid = open_two_seat_round(table)
    table.deal([parse_card(c) for c in HANDS])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{rid}/settle")
    sign_in(browser, s, SUPERVISOR)
    wait_for(lambda: browser.execute_script("return !!document.getElementById('shift-sign-on')"), WAIT, "the panel")
    browser.find_element(By.ID, "shift-staff-id").send_keys("D-ANNA")
    browser.find_element(By.ID, "shift-sign-on").click()
    wait_for(lambda: table.ok("GET", "/staff")["dealer"] == "D-ANNA", WAIT, "the dealer signed on from the page")
    wait_for(lambda: "dealer D-ANNA" in browser.find_element(By.ID, "shift-staff").text, WAIT, "the panel's staff line")
    figures = browser.find_element(By.ID, "shift-figures").text
    assert "Pace: T1" in figures and "Hold: T1" in figures and "overall" in figures
    panel = browser.find_element(By.ID, "shift-panel")
    browser.execute_script("arguments[0].scrollIntoView()", panel)
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(str(SHOTS / "shift-panel.png"))
