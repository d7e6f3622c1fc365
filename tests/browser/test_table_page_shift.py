"""A shift at the table from the live page (issue 22): headless Chromium at a pit podium's
1440x900 on the whole table from real parts: the shoe's firmware on the virtual board (cards
dealt through its barcode reader and exit sensor, keys pressed on it, its power cut),
`cardshoe run` in its own process with a token per role, restarted on a new journal.

What is asserted is what a person sees: text in the right place, nothing of the table behind
the sign-in form, no face-down value in the DOM in the pit view at any moment, an action
taken on the page that reaches the journal. Expectations come from the rules and the test's
own ledger of what it dealt: hands by the dealing procedure (TCP 3.7: three cards to each
active seat in turn, then the dealer), the play wager equal to the ante (3.9.2), a duplicate
card voiding the round (5.1), totals summed here from the API's wager lines.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from browser_harness import SUPERVISOR, SURVEILLANCE, BoardTable
from daemon_harness import wait_for
from page_helpers import (WAIT, card_texts_in_dom, click, codes, open_round, page_cards, rects, shot, sign_in,
                          stop_watching, text_of, texts_of, type_into, visible, watch_for_card_texts)
from selenium.webdriver.common.by import By

from cardshoe.hil.table import ApiError
from cardshoe.journal import JournalReader

TCP = "three-card-poker"
DECK_HEX = "00C0FFEE"  # the bench's deck id as printed on its cards' barcodes

# One shoe, each card dealt once (but the deliberate duplicate of round 2).
ROUND1 = {2: ["7c", "7d", "2s"], 5: ["Kc", "Qd", "4h"], 6: ["9h", "9c", "9s"], "dealer": ["Ac", "5d", "3s"]}
ROUND2 = ["2h", "3h", "4c", "2h", "6h", "6c", "8h", "8c", "8d"]  # card 4 repeats card 1: a duplicate (5.1)
ROUND2_EXTRA = "Tc"  # dealt after the round is void: no place is due for it
ROUND3 = ["Jc", "Jd", "Jh"]
ROUND4 = ["5c", "5h", "5s", "Td", "Th", "Ts", "Qc", "Qh", "Qs"]


def body_text(browser: Any) -> str:
    """What a person can read on the page now (hidden elements have no innerText)."""
    return str(browser.execute_script("return document.body.innerText"))


def journal_entries(table: BoardTable, kind: str) -> list[dict[str, Any]]:
    with JournalReader(table.bench.journal) as reader:
        return [e.data() for e in reader.entries((kind,))]


def wait_text(browser: Any, css: str, wanted: str, what: str) -> str:
    return str(wait_for(lambda: (t := text_of(browser, css)) and wanted in t and t, WAIT, what))


def test_a_shift_at_the_table(board_table: Any, browser: Any) -> None:
    table: BoardTable = board_table(TCP, 7)
    table.power_on_and_load()

    # -- item 6: nothing of the table behind the sign-in form, nor after a wrong token --------
    browser.get(table.url + "/table")
    wait_for(lambda: visible(browser, "sign-in-form"), WAIT, "the sign-in form")
    for _attempt in ("before", "after a wrong token"):
        text = body_text(browser)
        assert not visible(browser, "live"), _attempt
        for word in ("Alarms", "Seat", "Shoe", "Settlement", "Waiting for a person", "browser"):
            assert word not in text, (_attempt, word, text)
        if _attempt == "before":
            browser.find_element(By.ID, "token").send_keys("not-a-token-of-this-table")
            browser.find_element(By.CSS_SELECTOR, "#sign-in-form button").click()
            wait_text(browser, "#sign-in-error", "Not a token", "the wrong token refused")

    # -- item 4: the jackpot pool on open; item 7: the layout before the first round ----------
    table.ok("PUT", "/jackpot", json={"amount": 1_234_567})
    sign_in(browser, table, SUPERVISOR)
    wait_text(browser, "#jackpot", "SGD 12,345.67", "the jackpot pool shown on open")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#seats .seat")) == 7
    for n in range(1, 8):  # three places per seat (TCP 3.7), drawn empty before any card
        assert len(browser.find_elements(By.CSS_SELECTOR, f"#seat-{n} .slot")) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "#area-dealer .slot")) == 3
    assert browser.find_elements(By.CSS_SELECTOR, "#area-community") == []  # no community cards in TCP
    assert DECK_HEX in text_of(browser, "#dealt")
    assert "No round yet" in text_of(browser, "#round-state")
    # The panels a supervisor acts from are on the first screen, which holds the live table whole
    # (the shift panel, issue 23, is below it).
    fold = browser.execute_script("""
        const r = {}; for (const id of ['waiting-panel', 'flags-panel', 'settlement-panel', 'round-panel'])
            r[id] = document.getElementById(id).getBoundingClientRect().top;
        r.inner = innerHeight; r.screen = document.getElementById('screen').getBoundingClientRect().bottom; return r;""")
    assert all(fold[k] < fold["inner"] - 100 for k in ("waiting-panel", "flags-panel", "settlement-panel")), fold
    assert fold["screen"] <= fold["inner"] + 1, fold
    shot(browser, "shift-1-before-first-round.png")

    # -- item 1: the round seat by seat -------------------------------------------------------
    rid1 = open_round(table, wagers={2: {"ante": 1000, "pair_plus": 500, "progressive": 100},
                                     5: {"ante": 250_000}, 6: {"ante": 1000}})
    wait_text(browser, "#seat-5 .wagers", "SGD 2,500.00", "seat 5's ante, with the currency and separators")
    seat2 = text_of(browser, "#seat-2 .wagers")
    assert "Ante" in seat2 and "SGD 10.00" in seat2 and "Pair Plus" in seat2 and "SGD 5.00" in seat2
    assert "Prog." in seat2 and "SGD 1.00" in seat2
    before = rects(browser, "#layout .area, #round-panel, #bottom > .panel")
    deal_order = [*ROUND1[2], *ROUND1[5], *ROUND1[6], *ROUND1["dealer"]]  # TCP 3.7
    table.deal(codes(deal_order[:1]))
    wait_for(lambda: text_of(browser, "#seat-2 .hand") == "1 card", WAIT, "one card, in the singular")
    table.deal(codes(deal_order[1:]))
    wait_for(lambda: len(page_cards(browser)) == 12, WAIT, "every card of round 1 on the page")
    # Nothing moved as the cards came in: every area of the layout and the panels under it
    # where they were (the right-hand column grows and shrinks with what waits for a person).
    assert rects(browser, "#layout .area, #round-panel, #bottom > .panel") == before
    table.deal_complete()
    wait_text(browser, "#round-state", "seat 2, seat 5, seat 6", "the seats that still have to decide")
    table.ok("POST", f"/rounds/{rid1}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{rid1}/decisions", json={"seat": 5, "choice": "fold"})
    wait_for(lambda: text_of(browser, "#seat-5 .chip") == "folded", WAIT, "seat 5 folded")
    play = text_of(browser, "#seat-2 .wagers li[data-wager='play']")
    assert "Play" in play and "SGD 10.00" in play, play  # the play wager equals the ante (3.9.2)
    assert text_of(browser, "#seat-2 .chip") == "played"
    assert text_of(browser, "#seat-6 .chip") == "to decide"
    assert "folded" in (browser.find_element(By.ID, "seat-5").get_attribute("class") or "")
    # A settle refused says so on the round, with its reason, rather than reading "deciding".
    with pytest.raises(ApiError) as refusal:
        table.ok("POST", f"/rounds/{rid1}/settle")
    assert refusal.value.status == 409
    reason = json.loads(refusal.value.body)["detail"]["message"]
    state_line = wait_text(browser, "#round-state", "REFUSED", "the refused settle on the round")
    assert reason in state_line, (reason, state_line)
    assert reason in text_of(browser, "#waiting li.refusal")
    shot(browser, "shift-2-deciding-refused.png")

    table.ok("POST", f"/rounds/{rid1}/decisions", json={"seat": 6, "choice": "play"})
    settled = table.ok("POST", f"/rounds/{rid1}/settle")["settlement"]
    wait_for(lambda: text_of(browser, "#round-status") == "settled", WAIT, "round 1 settled on the page")
    for seat in settled["seats"]:  # totals per seat and for the table, summed here from each wager
        net = sum(w["net"] for w in seat["wagers"])
        got = browser.execute_script(
            "const td = document.querySelector(`#settlement tr.seat-total[data-seat='${arguments[0]}'] td[data-minor]`);"
            "return td ? Number(td.getAttribute('data-minor')) : null;", seat["seat"])
        assert got == net, (seat["seat"], got, net)
        shown = text_of(browser, f"#seat-{seat['seat']} .net")
        sign = "+" if net > 0 else "-" if net < 0 else ""
        assert shown == f"{sign}SGD {abs(net) // 100:,}.{abs(net) % 100:02d}", shown
    table_net = sum(w["net"] for seat in settled["seats"] for w in seat["wagers"])
    assert int(browser.execute_script(
        "return document.querySelector('#settlement tfoot tr.table-total td[data-minor]').getAttribute('data-minor')")) \
        == table_net
    for seat, expected in ((2, "Pair"), (6, "Three of a Kind")):  # one name per hand (TCP 3.16)
        assert text_of(browser, f"#seat-{seat} .hand") == expected
    shot(browser, "shift-3-settled.png")

    # -- item 2: a referral outside a round; acknowledged from the page, journaled ------------
    table.bench.key("exposure")  # the exposure key with no round dealing: referred (6.1, reading 71)
    item = wait_text(browser, "#waiting li.referral", "key_outside_round", "the referral on the page")
    assert "6.1" in item
    shot(browser, "shift-4-referral.png")
    type_into(browser, "supervisor-name", "PS-17")
    click(browser, "#waiting li.referral button.ack")
    wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, "#waiting li.referral"), WAIT,
             "the acknowledged referral to leave the list")
    acks = [d for d in journal_entries(table, "daemon") if d.get("type") == "referral_acknowledged"]
    assert [(a["referral"], a["by"]) for a in acks] == [("key_outside_round", "PS-17")]

    # -- item 2: a duplicate card: the shoe's integrity bit, the card highlighted, cards after
    # the void drawn outside the procedure; item 3: a void round's flags offer nothing ------
    rid2 = open_round(table)
    table.deal(codes(ROUND2))
    snap2 = table.round(rid2)
    assert snap2["void"] is not None, "a duplicate card voids the round (5.1)"
    duplicate_index = 12 + 4  # the fourth card of round 2 in this shoe
    wait_for(lambda: "flagged" in (browser.execute_script(
        "const c = document.querySelector(`.card[data-index='${arguments[0]}']`); return c ? c.className : '';",
        duplicate_index) or ""), WAIT, "the duplicate card highlighted on the layout")
    wait_text(browser, "#waiting li.integrity", "duplicate", "the shoe's integrity bit")
    assert text_of(browser, "#integrity").startswith("duplicate")
    table.deal(codes([ROUND2_EXTRA]))
    wait_for(lambda: (page_cards(browser).get(22) or ("", ""))[0] == "area-outside", WAIT,
             "the card after the void, drawn outside the procedure")
    assert text_of(browser, "#round-status") == "VOID"
    assert browser.find_elements(By.CSS_SELECTOR, "#flags button") == []  # a void round: nothing to decide
    assert not visible(browser, "void-box")
    shot(browser, "shift-5-void-duplicate.png")
    click(browser, "#waiting li.integrity button.clear")  # the supervisor clears the bit on the shoe
    wait_for(lambda: text_of(browser, "#integrity") == "ok" and
             not browser.find_elements(By.CSS_SELECTOR, "#waiting li.integrity"), WAIT, "the shoe's integrity cleared")

    # -- item 3: a supervisor voids a round from the page, with the API's checks --------------
    rid3 = open_round(table)
    table.deal(codes(ROUND3))
    wait_for(lambda: len(page_cards(browser)) == 3 and text_of(browser, "#round-id") == rid3, WAIT, "round 3")
    click(browser, "#void-box summary")
    type_into(browser, "void-rule", "6.1")
    type_into(browser, "void-reason", "")
    click(browser, "#void-form button")
    wait_text(browser, "#void-error", "reason", "the page's own check: a reason is needed")
    assert table.round(rid3)["void"] is None  # nothing was sent
    type_into(browser, "void-reason", "deck dropped on the layout")
    click(browser, "#void-form button")
    wait_for(lambda: table.round(rid3)["void"] is not None, WAIT, "the page's void to reach the daemon")
    ops = [d["op"] for d in journal_entries(table, "input") if d.get("round_id") == rid3 and "op" in d]
    assert [(o.get("rule"), o.get("reason"), o.get("by")) for o in ops if "by" in o] == \
        [("6.1", "deck dropped on the layout", "PS-17")]
    wait_text(browser, "#round-state", "VOID (rules 6.1)", "the void on the page")
    assert not visible(browser, "void-box")
    shot(browser, "shift-6-voided-by-supervisor.png")

    # -- item 5: surveillance ticks "pit view": no face-down value anywhere, events included ---
    sign_in(browser, table, SURVEILLANCE)
    assert not visible(browser, "supervisor-box") and not visible(browser, "void-box")
    rid4 = open_round(table)
    table.deal(codes(ROUND4))
    wait_for(lambda: sorted(t for _, t in page_cards(browser).values()) == sorted(ROUND4), WAIT,
             "surveillance to see every card of round 4")
    wait_for(lambda: any("(Qs)" in t for t in texts_of(browser, "#log li")), WAIT, "the event list with the values")
    shot(browser, "shift-7-surveillance.png")
    face_down = set(ROUND4)
    watch_for_card_texts(browser, face_down)
    click(browser, "#pit-only")
    assert card_texts_in_dom(browser, face_down) == set(), "a face-down value left on the page after the tick"
    wait_for(lambda: len([t for _, t in page_cards(browser).values() if t == ""]) == 9, WAIT,
             "round 4 read again in the pit view: every card face down")
    wait_for(lambda: any("(face down)" in t for t in texts_of(browser, "#log li")), WAIT,
             "the event list read again in the pit view")
    assert "PIT VIEW" in text_of(browser, "#view-badge")
    changes, leaks = stop_watching(browser)
    assert changes > 9 and leaks == [], leaks
    assert card_texts_in_dom(browser, face_down) == set()
    shot(browser, "shift-8-pit-view-ticked.png")
    click(browser, "#pit-only")
    wait_for(lambda: sorted(t for _, t in page_cards(browser).values()) == sorted(ROUND4), WAIT,
             "every card again without the pit view")
    assert rid4 == text_of(browser, "#round-id")
    for seat in (2, 5):
        table.ok("POST", f"/rounds/{rid4}/decisions", json={"seat": seat, "choice": "play"})
    table.ok("POST", f"/rounds/{rid4}/settle")

    # -- item 2: an alarm, with its name and text, while the shoe is silent -------------------
    table.bench.power_cut(then_on=False)
    alarms = wait_for(lambda: table.ok("GET", "/status")["alarms"], WAIT, "the daemon's alarm for the shoe")

    def shown() -> bool:  # each alarm with its name and its message, whatever its type
        items = texts_of(browser, "#waiting li.alarm")
        return all(any(a["type"] in t and a["message"] in t for t in items) for a in alarms)
    wait_for(shown, WAIT, f"the alarms {[a['type'] for a in alarms]} on the page")
    shot(browser, "shift-9-alarm.png")
    after = table.bench.client.last_event_id
    table.bench.power_on()
    table.bench.wait_reconciled(after)
    wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, "#waiting li.alarm"), WAIT, "the alarm cleared")

    # -- item 4: a new gaming day: the daemon restarted on a new journal, followed without a
    # reload; rounds keyed by their journal (ids may repeat across journals) --------------------
    click(browser, f"#history a[data-round='{rid2}']")  # looking at an earlier round when it happens
    wait_for(lambda: visible(browser, "history-note"), WAIT, "the earlier round opened")
    old_journal = table.ok("GET", "/status")["journal"]["id"]
    browser.execute_script("window.__same_page = true")
    table.bench.journal = table.bench.workdir / "journal-day-2.sqlite"
    table.restart_daemon()
    new_journal = table.ok("GET", "/status")["journal"]["id"]
    assert new_journal != old_journal
    wait_for(lambda: browser.find_element(By.ID, "day").get_attribute("data-journal") == new_journal, WAIT,
             "the page on the new journal")
    assert "journal-day-2.sqlite" in text_of(browser, "#day")
    assert browser.execute_script("return window.__same_page === true"), "the page was reloaded"
    assert not visible(browser, "history-note")  # following the live table again
    wait_for(lambda: text_of(browser, "#round-id") == "-", WAIT, "no round of the old journal shown")
    assert browser.find_elements(By.CSS_SELECTOR, "#history li") == []
    rid5 = open_round(table)
    wait_for(lambda: text_of(browser, "#round-id") == rid5, WAIT, "the new journal's first round")
    assert [e.get_attribute("data-journal") for e in browser.find_elements(By.CSS_SELECTOR, "#history li")] \
        in ([], [new_journal])
    assert "a new journal" in text_of(browser, "#log")
    shot(browser, "shift-10-new-journal.png")


STUD = "megalink-singapore-stud-poker"
# Singapore Stud 3.7: five cards to each active seat in turn, then the dealer's five, the last
# of which is dealt face up (public: the pit sees it before settlement).
STUD_ROUND = {1: ["2c", "3c", "4c", "5c", "6c"], 7: ["2d", "2h", "2s", "9c", "9d"],
              "dealer": ["Ac", "Kd", "Qh", "Js", "7h"]}


def test_each_game_draws_only_its_positions(board_table: Any, served: Any, browser: Any) -> None:
    """Item 7: boxes only for the game's positions, a slot for each card it holds, fixed
    before the first round; Stud's dealer up card shown to the pit, the rest face down."""
    stud: BoardTable = board_table(STUD, 7)
    stud.power_on_and_load()
    sign_in(browser, stud, SUPERVISOR)
    assert [len(browser.find_elements(By.CSS_SELECTOR, f"#seat-{n} .slot")) for n in range(1, 8)] == [5] * 7
    assert len(browser.find_elements(By.CSS_SELECTOR, "#area-dealer .slot")) == 5
    assert browser.find_elements(By.CSS_SELECTOR, "#area-community") == []  # Stud has no community cards
    rid = open_round(stud, wagers={1: {"ante": 2000}, 7: {"ante": 500_000}})
    wait_text(browser, "#seat-7 .wagers", "SGD 5,000.00", "the round's wagers on the page")
    before = rects(browser, "#layout .area, #round-panel, #bottom > .panel")
    stud.deal(codes([*STUD_ROUND[1], *STUD_ROUND[7], *STUD_ROUND["dealer"]]))
    drawn = wait_for(lambda: (c := page_cards(browser)) and len(c) == 15 and c, WAIT, "the Stud round on the page")
    assert rects(browser, "#layout .area, #round-panel, #bottom > .panel") == before
    placements = stud.round(rid)["placements"]
    up = [int(i) for i, p in placements.items() if p == {"kind": "dealer", "seat": 0, "number": 5}]
    assert [drawn[i] for i in up] == [("area-dealer", STUD_ROUND["dealer"][4])]
    assert all(text == "" for i, (_, text) in drawn.items() if i not in up)  # the rest face down
    fold = browser.execute_script("return [document.getElementById('screen').getBoundingClientRect().bottom, innerHeight]")
    assert fold[0] <= fold[1] + 1, fold
    shot(browser, "stud-pit.png")

    for game, settings, want in (
        ("megalink-let-it-ride", {}, {"area-dealer": None, "area-community": 2, "area-burn": 0}),
        ("megalink-three-card-poker-xtreme", {"method": "C"}, {"area-dealer": 3, "area-community": 2, "area-burn": 2}),
    ):
        page = served(game, 7, **settings)
        sign_in(browser, page, SUPERVISOR)
        for area, slots in want.items():
            found = browser.find_elements(By.CSS_SELECTOR, f"#{area} .slot")
            if slots is None:
                assert browser.find_elements(By.ID, area) == [], (game, area)
            else:
                assert len(found) == slots, (game, area, len(found))
        assert [len(browser.find_elements(By.CSS_SELECTOR, f"#seat-{n} .slot")) for n in range(1, 8)] == [3] * 7
        if game == "megalink-let-it-ride":
            assert "Community" in text_of(browser, "#area-community h3")
        else:  # Xtreme C: the security card beneath the dealer's three, the burn (3.7.3.1)
            assert text_of(browser, "#area-burn h3").startswith("Security card, Burn")
