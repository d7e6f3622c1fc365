"""What the browser tests read of the live table page, each in one step in the page (the page
redraws its areas, so a held element reference can go stale), and how they drive it."""

from __future__ import annotations

import re
from typing import Any

from browser_harness import SHOTS, BoardTable, Served
from daemon_harness import Table, wait_for
from selenium.webdriver.common.by import By

from cardshoe.cards import parse_card

WAIT = 20.0  # generous: two shared cores, many engineers
CARD_RE = r"(?<![A-Za-z0-9])([2-9TJQKA][cdhs])(?![A-Za-z0-9])"


def codes(texts: list[str]) -> list[int]:
    return [parse_card(t) for t in texts]


def visible(browser: Any, element_id: str) -> bool:
    """Whether the element is displayed (in the page, in one step: a sign-out reloads it)."""
    return bool(browser.execute_script(
        "const e = document.getElementById(arguments[0]);"
        "return !!e && document.readyState === 'complete' && e.offsetParent !== null;", element_id))


def sign_in(browser: Any, served: Served | BoardTable, token: str) -> None:
    browser.get(served.url + "/table")
    wait_for(lambda: visible(browser, "sign-in-form") or visible(browser, "sign-out"), WAIT, "the page")
    if visible(browser, "sign-out"):
        browser.execute_script("document.getElementById('sign-out').click()")
        wait_for(lambda: visible(browser, "sign-in-form") and not visible(browser, "sign-out"), WAIT, "signed out")
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.CSS_SELECTOR, "#sign-in-form button").click()
    wait_for(lambda: visible(browser, "live"), WAIT, "the live table after sign-in")
    wait_for(lambda: text_of(browser, "#stream") == "live", WAIT, "the event stream")


def text_of(browser: Any, css: str) -> str:
    """The text of the element at `css` now ('' if absent)."""
    return str(browser.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", css))


def texts_of(browser: Any, css: str) -> list[str]:
    """The text of every element at `css` now."""
    return list(browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText);", css))


def page_cards(browser: Any) -> dict[int, tuple[str, str]]:
    """index -> (the seat/area element id holding it, its data-card text) as drawn."""
    out = browser.execute_script("""
        const r = {};
        for (const c of document.querySelectorAll('.card[data-index]')) {
            r[c.getAttribute('data-index')] = [c.closest('.area').id, c.getAttribute('data-card')];
        }
        return r;""")
    return {int(k): (v[0], v[1]) for k, v in out.items()}


def area_of(place: dict[str, Any]) -> str:
    if place["kind"] == "seat":
        return f"seat-{place['seat']}"
    return {"dealer": "area-dealer", "community": "area-community"}.get(place["kind"], "area-burn")


def card_texts_in_dom(browser: Any, only: set[str] | None = None) -> set[str]:
    """Every card text ("Ah") found anywhere in the DOM: text, attributes, labels (of `only`
    when given)."""
    html = browser.execute_script("return document.documentElement.outerHTML")
    found = set(re.findall(CARD_RE, html))
    return found if only is None else found & only


def watch_for_card_texts(browser: Any, only: set[str] | None = None) -> None:
    """Record in the page every card text ("Ah"; of `only` when given) that any DOM change
    brings in (added nodes, attributes, text), so a value drawn and then hidden again is
    caught too; read back `window.__leaks` (and `window.__changes`, the changes seen)."""
    pattern = ("[2-9TJQKA][cdhs]" if only is None else "(?:" + "|".join(sorted(only)) + ")")
    browser.execute_script("""
        window.__leaks = []; window.__changes = 0;
        const re = new RegExp('(?<![A-Za-z0-9])' + arguments[0] + '(?![A-Za-z0-9])');
        const check = (text, where) => { if (text && re.test(text)) window.__leaks.push(where + ': ' + text.slice(0, 200)); };
        window.__watch = new MutationObserver((records) => {
            for (const m of records) {
                window.__changes += 1;
                if (m.type === 'attributes') check(m.target.getAttribute(m.attributeName), '@' + m.attributeName);
                else if (m.type === 'characterData') check(m.target.data, '#text');
                else for (const n of m.addedNodes) check(n.nodeType === 1 ? n.outerHTML : n.textContent, 'node');
            }
        });
        window.__watch.observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});""",
        pattern)


def stop_watching(browser: Any) -> tuple[int, list[str]]:
    """(changes seen, leaks) since `watch_for_card_texts`."""
    changes, leaks = browser.execute_script("window.__watch.disconnect(); return [window.__changes, window.__leaks]")
    return int(changes), list(leaks)


def card_values(value: Any) -> list[Any]:
    """Every card value in a JSON value: a shoe card's `card` (text, "Ah"; null when face
    down)/`code`/`reader_id`, a hand's `cards` (a face-down card is null, a missing barcode absent)."""
    found: list[Any] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("card", "code") and isinstance(v, (int, str)) and not isinstance(v, bool):
                found.append(v)
            elif k == "reader_id":
                found.append(v)
            elif k == "cards" and isinstance(v, list):
                found.extend(c for c in v if isinstance(c, (int, str)))
            else:
                found.extend(card_values(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(card_values(v))
    return found


def open_round(table: Table | BoardTable, seats: tuple[int, ...] = (2, 5),
               wagers: dict[int, dict[str, int]] | None = None) -> str:
    """Open a round, place the wagers (default: an ante of 1000 on each of `seats`), no more bets."""
    rid = str(table.ok("POST", "/rounds")["round_id"])
    for seat, placed in (wagers or {s: {"ante": 1000} for s in seats}).items():
        for wager, amount in placed.items():
            table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": wager, "amount": amount})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    return rid


def shot(browser: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / name))


def click(browser: Any, css: str) -> None:
    """Click the element at `css` in the page (it is found at the moment of the click)."""
    assert browser.execute_script(
        "const e = document.querySelector(arguments[0]); if (!e) return false; e.click(); return true;", css), css


def type_into(browser: Any, element_id: str, text: str) -> None:
    """Replace the value of an input as a person would (select all, type)."""
    field = browser.find_element(By.ID, element_id)
    field.clear()
    if text:
        field.send_keys(text)


def rects(browser: Any, css: str) -> dict[str, list[float]]:
    """id -> [x, y, width, height] of every element at `css` (to see that nothing moved)."""
    out = browser.execute_script("""
        const r = {};
        for (const e of document.querySelectorAll(arguments[0])) {
            const b = e.getBoundingClientRect(); r[e.id] = [b.x, b.y, b.width, b.height];
        }
        return r;""", css)
    return {k: [round(float(x), 1) for x in v] for k, v in out.items()}
