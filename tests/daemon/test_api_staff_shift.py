"""Who deals and the live shift figures through the table API (issue 23 items 1, 4, 6).

Sign-on is role-checked and journaled as an input (a replay rebuilds it); every round is
attributed to the dealer on when its bets closed; `/shift` shows the figures; a hold alarm
reaches `/status` alarms and the journal (a `daemon` entry `hold_alarm`, on the event stream).
"""

from __future__ import annotations

from daemon_harness import HANDS, TOKEN, Table, open_two_seat_round, wait_for
from fastapi.testclient import TestClient

from cardshoe.api import create_app
from cardshoe.cards import parse_card
from cardshoe.journal.replay import replay

TCP = "three-card-poker"
CTL, SUP, SURV = "controller-token-0123456789", "supervisor-token-0123456789", "surveillance-token-012345678"


def clients(table: Table) -> dict[str, TestClient]:
    app = create_app(table.daemon, TOKEN, role_tokens={CTL: ["controller"], SUP: ["supervisor"], SURV: ["surveillance"]})
    return {name: TestClient(app, headers={"Authorization": f"Bearer {tok}"})
            for name, tok in (("controller", CTL), ("supervisor", SUP), ("surveillance", SURV))}


def test_sign_on_is_role_checked_journaled_and_attributes_each_round(make_table) -> None:  # type: ignore[no-untyped-def]
    table = make_table(TCP)
    c = clients(table)
    # A dealer: the table's controller or the pit; a supervisor: the pit only; surveillance: nobody.
    assert c["surveillance"].post("/staff/sign-on", json={"role": "dealer", "staff_id": "D7"}).status_code == 403
    assert c["controller"].post("/staff/sign-on", json={"role": "supervisor", "staff_id": "S1"}).status_code == 403
    assert c["controller"].post("/staff/sign-on", json={"role": "dealer", "staff_id": "D7"}).status_code == 200
    assert c["supervisor"].post("/staff/sign-on", json={"role": "supervisor", "staff_id": "S1"}).status_code == 200
    assert c["surveillance"].put("/seats/2/player", json={"player_id": "P-9"}).status_code == 403
    assert c["controller"].put("/seats/2/player", json={"player_id": "P-9"}).status_code == 200
    # Signing off somebody who is not on is refused, naming the one who is.
    wrong = c["supervisor"].post("/staff/sign-off", json={"role": "dealer", "staff_id": "D8"})
    assert wrong.status_code == 409 and "D7" in wrong.json()["detail"]["message"], wrong.text
    assert c["surveillance"].get("/staff").json() == {"dealer": "D7", "supervisor": "S1", "players": {"2": "P-9"}}
    rid = str(table.ok("POST", "/rounds")["round_id"])
    # A relief while the round still takes bets: the round is the new dealer's.
    assert c["supervisor"].post("/staff/sign-on", json={"role": "dealer", "staff_id": "D8"}).status_code == 200
    with table.daemon.journal.reader() as reader:  # type: ignore[union-attr]
        staff = [e.data() for e in reader.entries(("event",), round_id=rid) if e.data()["type"] == "round_staff"]
        inputs = [e.data() for e in reader.entries(("input",)) if e.data().get("action") in ("staff", "player")]
    assert staff[-1]["dealer"] == "D8" and staff[-1]["supervisor"] == "S1" and staff[-1]["players"] == {"2": "P-9"}
    assert [i.get("staff_id", i.get("player_id")) for i in inputs] == ["D7", "S1", "P-9", "D8", "D8"]
    # Journaled as inputs: a replay rebuilds who was on.
    report, core = replay(table.config.journal)
    assert report.ok, report.mismatches
    assert core.staff_on() == {"dealer": "D8", "supervisor": "S1", "players": {"2": "P-9"}}


def test_the_shift_figures_and_a_hold_alarm_at_the_table(make_table) -> None:  # type: ignore[no-untyped-def]
    """One round whose seat 2 holds a royal flush against a dealer who does not qualify, on a
    table whose alarm watches from one round with a loose z: the house's loss is beyond the
    band, the alarm stands in /status with its figures and is journaled for the stream."""
    table = make_table(TCP, alarm_z=0.05, alarm_min_rounds=1)
    table.power_on_and_load()
    table.ok("POST", "/staff/sign-on", json={"role": "dealer", "staff_id": "D7"})
    rid = open_two_seat_round(table)
    table.deal([parse_card(c) for c in HANDS])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{rid}/settle")
    shift = table.ok("GET", "/shift")
    t1 = shift["groups"]["table"]["T1"]
    assert t1["pace"]["rounds"] == 1 and t1["pace"]["cards"] == 9
    assert t1["hold"]["overall"]["actual"] == -6500  # ante 1000 + ante bonus 5000; pair plus 500
    assert "D7" in shift["groups"]["dealer"] and shift["staff"]["dealer"] == "D7"
    alarms = wait_for(lambda: [a for a in table.ok("GET", "/status")["alarms"] if a["type"] == "hold"], 10,
                      "the hold alarm in /status")
    assert any(a["group"] == "table" and a["direction"] == "low" and a["z"] < -a["threshold"] for a in alarms)
    with table.daemon.journal.reader() as reader:  # type: ignore[union-attr]
        journaled = [e.data() for e in reader.entries(("daemon",)) if e.data().get("type") == "hold_alarm"]
    # The ante/play row: ante 1000 paid 1 to 1 (the dealer does not qualify) and its bonus 5 to
    # 1, the play pushed. (The overall row, pair plus included, stays inside the sequential
    # boundary: pair plus's 40-to-1 tail widens it; docs/report.md, "The alarm".)
    table_alarm = next(a for a in journaled if a["group"] == "table" and a["row"] == "ante_play")
    assert table_alarm["actual"] == -6000 and table_alarm["rounds"] == 1 and table_alarm["tests"] >= 3
    assert table_alarm["looks"] == "every"  # the table looks after every round: the sequential boundary
