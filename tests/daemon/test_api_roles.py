"""Roles, the pit view and browser sessions on the API (issue 13 item 2-3; docs/api.md,
"Authentication and roles"), without a browser: the in-process client."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import TOKEN, Table
from fastapi.testclient import TestClient

from cardshoe.api import create_app
from cardshoe.cards import parse_card
from cardshoe.daemon.config import ConfigError, TableConfig, load_toml, read_role_tokens

TCP = "three-card-poker"
STUD = "megalink-singapore-stud-poker"
CTL, SUP, SURV = "controller-token-0123456789", "supervisor-token-0123456789", "surveillance-token-012345678"


def clients(table: Table) -> dict[str, TestClient]:
    app = create_app(table.daemon, TOKEN, role_tokens={CTL: ["controller"], SUP: ["supervisor"], SURV: ["surveillance"]})
    return {name: TestClient(app, headers={"Authorization": f"Bearer {tok}"})
            for name, tok in (("all", TOKEN), ("controller", CTL), ("supervisor", SUP), ("surveillance", SURV))}


def refusals(table: Table) -> list[dict[str, Any]]:
    with table.daemon.journal.reader() as reader:  # type: ignore[union-attr]
        return [e.data() for e in reader.entries(("reject",)) if e.data().get("reason") == "api_refused"]


def test_each_role_does_only_its_work_and_every_refusal_is_journaled(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    c = clients(table)
    # Supervisor and surveillance may not open a round (controller's work) ...
    assert c["supervisor"].post("/rounds").status_code == 403
    assert c["surveillance"].post("/rounds").status_code == 403
    rid = c["controller"].post("/rounds").json()["round_id"]
    # ... the controller may not void or confirm (supervisor's work); surveillance writes nothing.
    void = {"rule": "5.4", "reason": "test", "by": "PS-1"}
    r = c["controller"].post(f"/rounds/{rid}/void", json=void)
    assert r.status_code == 403 and r.json()["detail"]["field"] == "role"
    assert c["surveillance"].post(f"/rounds/{rid}/void", json=void).status_code == 403
    assert c["controller"].post("/shoe/clear", json={"integrity_mask": 0, "fault_mask": 0}).status_code == 403
    # Surveillance may read everything; the supervisor may not export (every card's value).
    assert c["surveillance"].get(f"/rounds/{rid}/export").status_code in (200, 409, 422)
    assert c["supervisor"].get(f"/rounds/{rid}/export").status_code == 403
    assert c["supervisor"].post(f"/rounds/{rid}/void", json=void).status_code == 200
    got = refusals(table)
    assert [(r["status"], r["path"], r["roles"]) for r in got] == [
        (403, "/rounds", ["supervisor"]), (403, "/rounds", ["surveillance"]),
        (403, f"/rounds/{rid}/void", ["controller"]), (403, f"/rounds/{rid}/void", ["surveillance"]),
        (403, "/shoe/clear", ["controller"]), (403, f"/rounds/{rid}/export", ["supervisor"])]
    assert all(tok.encode() not in table.config.journal.read_bytes() for tok in (TOKEN, CTL, SUP, SURV))


def test_refusal_journaling_is_bounded(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    bad = TestClient(create_app(table.daemon, TOKEN), headers={"Authorization": "Bearer not-a-token-of-this-table"})
    for _ in range(100):
        assert bad.get("/status").status_code == 401
    assert len(refusals(table)) == 60


def test_the_pit_view_has_no_face_down_card_until_settled(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    c = clients(table)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(x) for x in ["Ah", "Kh", "Qh", "2c", "7d", "9s"]])
    pit = c["supervisor"].get(f"/rounds/{rid}").json()
    assert pit["view"] == "pit"
    assert [card["card"] for card in pit["cards"].values()] == [None] * 6
    assert all("reader_id" not in card for card in pit["cards"].values())
    assert pit["hands"] == {"seat 2": [None] * 3, "dealer": [None] * 3}
    assert c["surveillance"].get(f"/rounds/{rid}?view=pit").json()["cards"]["1"]["card"] is None
    assert c["surveillance"].get(f"/rounds/{rid}").json()["cards"]["1"]["card"] == "Ah"
    # Hand classes (TCP 3.16.1: A-K-Q suited is a Royal Flush) only where the cards are shown.
    assert c["surveillance"].get(f"/rounds/{rid}?classes=true").json()["hand_classes"] == {
        "seat 2": "Royal Flush", "dealer": "High Card"}
    assert c["supervisor"].get(f"/rounds/{rid}?classes=true").json()["hand_classes"] == {}
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{rid}/settle")
    assert c["supervisor"].get(f"/rounds/{rid}").json()["hands"]["seat 2"] == ["Ah", "Kh", "Qh"]


def test_stud_up_card_is_public_in_the_pit_view(make_table) -> None:  # type: ignore[no-untyped-def]
    # Singapore Stud 3.7: the dealer's fifth card is dealt face up.
    table: Table = make_table(STUD, 7)
    c = clients(table)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal(list(range(10)))
    full = table.round(rid)
    up = [k for k, p in full["placements"].items() if p == {"kind": "dealer", "seat": 0, "number": 5}]
    assert len(up) == 1
    pit = c["supervisor"].get(f"/rounds/{rid}").json()
    shown = {k: v["card"] for k, v in pit["cards"].items() if v["card"] is not None}
    assert shown == {up[0]: full["cards"][up[0]]["card"]}


def test_pit_view_hides_burns_and_shows_exposed_cards() -> None:
    # A pure check of the pit view on a round as the engine's snapshot has it (codes; the
    # API turns them into text after the pit view): the burn card (a code in `burns`) stays
    # face down, settled or not (MTCP/XT 3.7: burned into the discard holder, never turned;
    # reading 77); the card exposed at the table (5.4/6.1) is public; once settled, the hands.
    from cardshoe.api.pitview import pit_round, public_of

    ah, kd, two = parse_card("Ah"), parse_card("Kd"), parse_card("2c")
    snap = {"status": "dealing", "void": None,
            "placements": {"1": {"kind": "burn", "seat": 0, "number": 1}, "2": {"kind": "seat", "seat": 1, "number": 1},
                           "3": {"kind": "seat", "seat": 1, "number": 2}},
            "cards": {"1": {"index": 1, "code": ah, "reader_id": "x"}, "2": {"index": 2, "code": kd, "reader_id": "y"},
                      "3": {"index": 3, "code": two, "reader_id": "z"}},
            "burns": [ah], "hands": {"seat 1": [kd, two]},
            "exposures": [{"place": {"kind": "seat", "seat": 1, "number": 2}, "shoe_index": None}],
            "irregularities": [{"detail": "Ah burned, Kd at seat 1, 2c exposed",
                                "evidence": [{"index": 1, "code": ah}]}]}
    pit = pit_round(snap, public_of(snap, set()))
    assert pit["burns"] == [None] and pit["hands"] == {"seat 1": [None, two]}
    assert [pit["cards"][k].get("code") for k in "123"] == [None, None, two]
    assert [pit["cards"][k].get("reader_id") for k in "123"] == [None, None, "z"]
    assert pit["irregularities"][0] == {"detail": "?? burned, ?? at seat 1, 2c exposed",
                                        "evidence": [{"index": 1, "code": None}]}
    snap["status"] = "settled"
    pit = pit_round(snap, public_of(snap, set()))
    assert pit["burns"] == [None] and pit["hands"] == {"seat 1": [kd, two]}
    assert pit["irregularities"][0]["detail"] == "?? burned, Kd at seat 1, 2c exposed"


def test_session_cookie_and_csrf(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    app = create_app(table.daemon, TOKEN, role_tokens={SUP: ["supervisor"]})
    browser = TestClient(app, base_url="http://table.local")
    assert browser.post("/session", json={"token": "wrong-token-wrong-token"}).status_code == 401
    assert browser.post("/session", json={"token": SUP}, headers={"Origin": "http://evil.example"}).status_code == 403
    r = browser.post("/session", json={"token": SUP})
    assert r.status_code == 200 and r.json()["roles"] == ["supervisor"]
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "max-age=" in cookie
    csrf = r.json()["csrf"]
    assert browser.get("/status").status_code == 200  # the cookie reads
    rid = table.ok("POST", "/rounds")["round_id"]
    void = {"rule": "5.4", "reason": "test", "by": "PS-1"}
    assert browser.post(f"/rounds/{rid}/void", json=void).status_code == 403  # no CSRF token
    assert browser.post(f"/rounds/{rid}/void", json=void,
                        headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"}).status_code == 403
    assert browser.post(f"/rounds/{rid}/void", json=void, headers={"X-CSRF-Token": csrf}).status_code == 200
    assert browser.delete("/session", headers={"X-CSRF-Token": csrf}).status_code == 200
    browser.cookies.clear()
    browser.cookies.set("cardshoe_session", r.cookies["cardshoe_session"], domain="table.local")
    assert browser.get("/status").status_code == 401  # signed out


def test_docs_and_page_load_nothing_from_the_internet(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    client = table.client
    docs = client.get("/docs").text
    assert "cdn" not in docs.lower() and "/static/swagger/swagger-ui-bundle.js" in docs
    assert re.findall(r"https?://", docs) == [] and '"validatorUrl": null' in docs
    assert client.get("/static/swagger/swagger-ui-bundle.js").status_code == 200
    page = client.get("/table")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    for asset in ("/static/page/table.js", "/static/page/table.css"):
        assert client.get(asset).status_code == 200
    assert "http" not in page.text.replace("http://www.w3.org", "")


def test_role_token_files_from_the_table_file(tmp_path: Path) -> None:
    ctl = tmp_path / "ctl.token"
    ctl.write_text("c" * 20 + "\n")
    ctl.chmod(0o600)
    toml = tmp_path / "t.toml"
    toml.write_text(f'[roles]\ncontroller = "{ctl}"\nsupervisor = "{ctl}"\n')
    cfg = TableConfig(port="x", game=TCP, seats=7, **load_toml(toml))
    assert read_role_tokens(cfg) == {"c" * 20: ["controller", "supervisor"]}
    ctl.chmod(0o644)
    with pytest.raises(ConfigError, match="roles.controller"):
        read_role_tokens(cfg)
    toml.write_text('[roles]\npitboss = "/x"\n')
    with pytest.raises(ConfigError, match="roles.pitboss"):
        load_toml(toml)


def test_a_table_with_role_tokens_only_runs_without_an_all_roles_token(tmp_path: Path) -> None:
    """Issue 22 item 9: `[roles]` without `[table] token_file` (nor $CARDSHOE_TOKEN) is a table
    whose per-role tokens are the only ones: `cardshoe run` starts (it exited 2), each role's
    token answers with its role, and no all-roles token exists."""
    import os
    import signal
    import subprocess
    import sys

    import httpx
    from daemon_harness import started_port

    toml = tmp_path / "table.toml"
    files = {role: tmp_path / f"{role}.token" for role in ("controller", "supervisor", "surveillance")}
    toml.write_text("[roles]\n" + "".join(f'{role} = "{path}"\n' for role, path in files.items()), encoding="utf-8")
    (tmp_path / "keys").mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if k != "CARDSHOE_TOKEN"}
    port_file = tmp_path / "api.port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardshoe.cli", "run", "--config", str(toml), "--port", str(tmp_path / "no-shoe"),
         "--game", TCP, "--seats", "7", "--journal", str(tmp_path / "j.sqlite"), "--keys", str(tmp_path / "keys"),
         "--listen", "127.0.0.1:0", "--port-file", str(port_file)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = started_port(port_file, proc)
        tokens = {role: path.read_text().strip() for role, path in files.items()}  # created 0600 at start
        assert all(path.stat().st_mode & 0o777 == 0o600 for path in files.values())
        for role, token in tokens.items():
            r = httpx.get(f"http://127.0.0.1:{port}/session", timeout=30)
            assert r.status_code == 200
            r = httpx.post(f"http://127.0.0.1:{port}/session", json={"token": token}, timeout=30)
            assert r.status_code == 200 and r.json()["roles"] == [role], r.text
        r = httpx.get(f"http://127.0.0.1:{port}/status", headers={"Authorization": "Bearer not-a-token-of-this-table"},
                      timeout=30)
        assert r.status_code == 401
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, stderr


def test_an_app_needs_some_token() -> None:
    from cardshoe.api.auth import Guard

    with pytest.raises(ValueError, match="no token"):
        Guard.from_tokens(None, {})
    assert Guard.from_tokens(None, {SUP: ["supervisor"]}).roles_of_token(SUP) == frozenset({"supervisor"})


def test_run_help_says_what_the_token_file_grants_and_names_roles(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22 item 9: `--token-file` grants every role, not the controller's alone; [roles]
    gives each role its own."""
    from cardshoe.daemon.cli import _parser

    text = " ".join(_parser().format_help().split())
    assert "table controller's bearer token" not in text
    assert "all-roles token (controller, supervisor and surveillance" in text
    assert "[roles]" in text


def test_only_the_sign_in_page_and_static_files_are_served_without_a_token(make_table) -> None:  # type: ignore[no-untyped-def]
    # Issue 20 item 8: the description and its page are the API's, and need a token (or a
    # signed-in session) like every endpoint (docs/api.md, "Authentication and roles").
    table: Table = make_table(TCP, 7)
    app = create_app(table.daemon, TOKEN, role_tokens={SUP: ["supervisor"]})
    anonymous = TestClient(app)
    for path in ("/openapi.json", "/docs", "/status", "/rounds", "/events"):
        r = anonymous.get(path)
        assert r.status_code == 401 and r.json()["detail"]["error"] == "Unauthorized", (path, r.status_code)
    for path in ("/table", "/static/page/table.js", "/static/page/table.css", "/static/swagger/swagger-ui.css",
                 "/session"):
        assert anonymous.get(path).status_code == 200, path
    assert anonymous.get("/", follow_redirects=False).headers["location"] == "/table"
    pit = TestClient(app, headers={"Authorization": f"Bearer {SUP}"})
    assert pit.get("/openapi.json").json()["info"]["title"] == "cardshoe table API"
    assert "swagger-ui-bundle.js" in pit.get("/docs").text
    browser = TestClient(app)  # a browser signed in at /table reads /docs with its cookie
    assert browser.post("/session", json={"token": SUP}).status_code == 200
    assert browser.get("/docs").status_code == 200 and browser.get("/openapi.json").status_code == 200
