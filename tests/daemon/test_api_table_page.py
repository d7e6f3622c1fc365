"""What the table page reads from the API beyond the round (issue 22; docs/api.md,
`GET /status`, `GET /rounds/{id}`, `POST /referrals/{id}/acknowledge`), with the in-process
client and the firmware's wire codec as the shoe on a pseudo-terminal. Expectations come
from the rules (TCP 3.7 dealing, 3.9.2 the play wager equal to the ante, Stud 1.1.2 the bet
twice the ante) and the docs, not from the code under test."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from daemon_harness import TOKEN, Table
from fastapi.testclient import TestClient

from cardshoe.api import create_app
from cardshoe.cards import parse_card

TCP = "three-card-poker"
STUD = "megalink-singapore-stud-poker"
SUP, SURV = "supervisor-token-0123456789", "surveillance-token-012345678"


def roles(table: Table) -> dict[str, TestClient]:
    app = create_app(table.daemon, TOKEN, role_tokens={SUP: ["supervisor"], SURV: ["surveillance"]})
    return {name: TestClient(app, headers={"Authorization": f"Bearer {tok}"})
            for name, tok in (("all", TOKEN), ("supervisor", SUP), ("surveillance", SURV))}


@pytest.fixture
def tcp(tmp_path: Path) -> Iterator[Table]:
    table = Table(tmp_path, TCP, 7)
    yield table
    table.close()


def test_status_gives_the_journal_pool_currency_and_layout(tcp: Table, tmp_path: Path) -> None:
    tcp.power_on_and_load()
    status = tcp.ok("GET", "/status")
    assert status["journal"]["file"] == "journal.sqlite" and len(status["journal"]["id"]) == 12
    assert status["jackpot"] == {"pool": None, "reset": None}  # this table has no [jackpot] reset
    assert status["currency"] == {"code": "SGD", "minor_per_major": 100}
    # TCP 3.7: three cards to each seat and to the dealer; no community cards, no burn.
    layout = status["layout"]
    assert (layout["hand_size"], layout["dealer"], layout["community"], layout["burn"], layout["security"]) == \
        (3, 3, 0, 0, 0)
    assert layout["wagers"] == ["ante", "play", "pair_plus", "progressive"]
    integrity = status["shoes"][str(status["shoe"])]["integrity"]
    assert integrity["bits"] == 0 and integrity["names"] == []


def test_stud_layout_and_the_bet_made_at_the_decision(tmp_path: Path) -> None:
    table = Table(tmp_path, STUD, 7)
    try:
        table.power_on_and_load()
        layout = table.ok("GET", "/status")["layout"]
        # Stud 3.7: five cards each, the dealer's last one face up; no community cards.
        assert (layout["hand_size"], layout["dealer"], layout["community"]) == (5, 5, 0)
        assert layout["public"] == [{"kind": "dealer", "seat": 0, "number": 5}]
        rid = table.ok("POST", "/rounds")["round_id"]
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 4, "wager": "ante", "amount": 1500})
        table.ok("POST", f"/rounds/{rid}/no-more-bets")
        table.deal([parse_card(c) for c in "2c 3c 4c 5c 6c Ah Kd Qh Js 7h".split()])
        assert table.round(rid)["seat_state"]["4"]["owes_decision"] is True
        table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 4, "choice": "bet"})
        seat = table.round(rid)["seat_state"]["4"]
        assert seat["wagers"] == {"ante": 1500, "bet": 3000}  # 1.1.2: twice the ante
        assert seat["decided"] == {"ante": "bet"} and seat["owes_decision"] is False
    finally:
        table.close()


def test_a_round_shows_its_seats_who_owes_and_a_refused_settle(tcp: Table) -> None:
    tcp.power_on_and_load()
    rid = tcp.ok("POST", "/rounds")["round_id"]
    for seat, wager, amount in ((2, "ante", 1000), (2, "pair_plus", 500), (5, "ante", 2500), (6, "pair_plus", 700)):
        tcp.ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": wager, "amount": amount})
    tcp.ok("POST", f"/rounds/{rid}/no-more-bets")
    tcp.deal([parse_card(c) for c in "7c 7d 2s Kc Qd 4h 9h 9c 9s Ac 5d 3s".split()])
    tcp.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    snap = tcp.round(rid)
    # Seat 6 has a pair plus and no ante: no decision to make (3.9); seat 5 still owes one.
    assert snap["owing"] == [5]
    assert snap["seat_state"]["2"]["wagers"] == {"ante": 1000, "play": 1000, "pair_plus": 500}  # 3.9.2
    assert snap["seat_state"]["6"]["owes_decision"] is False
    r = tcp.client.post(f"/rounds/{rid}/settle")
    assert r.status_code == 409
    [refusal] = tcp.round(rid)["refusals"]
    assert refusal["type"] == "input_refused" and refusal["op"] == "Settle" and refusal["latest"] is True
    assert refusal["message"] == r.json()["detail"]["message"]
    tcp.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 5, "choice": "fold"})
    [refusal] = tcp.round(rid)["refusals"]
    assert refusal["latest"] is False  # something was accepted since: no longer what the round waits on
    assert tcp.round(rid)["seat_state"]["5"]["folded"] is True


def test_a_card_between_rounds_is_an_open_referral_until_a_supervisor_acknowledges_it(tcp: Table) -> None:
    tcp.power_on_and_load()
    clients = roles(tcp)
    tcp.deal([parse_card("Qs")])  # before any round: referred (6.1)
    surv = clients["surveillance"].get("/status").json()["referrals"]
    assert [(r["type"], r["rules"]) for r in surv] == [("card_outside_round", ["6.1"])]
    assert surv[0]["evidence"][0]["card"] == "Qs"
    pit = clients["supervisor"].get("/status").json()["referrals"]
    assert pit[0]["evidence"][0]["card"] is None and "reader_id" not in pit[0]["evidence"][0]
    assert clients["surveillance"].get("/status?view=pit").json()["referrals"][0]["evidence"][0]["card"] is None
    entry = surv[0]["id"]
    assert clients["surveillance"].post(f"/referrals/{entry}/acknowledge", json={"by": "S-1"}).status_code == 403
    assert clients["supervisor"].post(f"/referrals/{entry + 1000}/acknowledge", json={"by": "PS-1"}).status_code == 404
    assert clients["supervisor"].post("/referrals/1/acknowledge", json={"by": "PS-1"}).status_code == 404
    r = clients["supervisor"].post(f"/referrals/{entry}/acknowledge", json={"by": "PS-1", "note": "card was a burn"})
    assert r.status_code == 200 and r.json() == {"acknowledged": entry, "by": "PS-1"}
    assert clients["all"].get("/status").json()["referrals"] == []
    again = clients["supervisor"].post(f"/referrals/{entry}/acknowledge", json={"by": "PS-2"})
    assert again.status_code == 409 and "PS-1" in again.json()["detail"]["message"]
    with tcp.daemon.journal.reader() as reader:  # type: ignore[union-attr]
        acks = [e.data() for e in reader.entries(("daemon",)) if e.data().get("type") == "referral_acknowledged"]
    assert acks == [{"type": "referral_acknowledged", "entry": entry, "referral": "card_outside_round",
                     "rules": ["6.1"], "by": "PS-1", "note": "card was a burn"}]


def test_the_jackpot_pool_is_in_status_from_the_start(tmp_path: Path) -> None:
    table = Table(tmp_path, TCP, 7, jackpot_reset=5_000_000)
    try:
        table.ok("PUT", "/jackpot", json={"amount": 1_234_567})
        assert table.ok("GET", "/status")["jackpot"] == {"pool": 1_234_567, "reset": 5_000_000}
    finally:
        table.close()


def test_unnamed_events_reach_onmessage(tcp: Table) -> None:
    text = tcp.client.get("/events?after=0&limit=3&names=false").text
    blocks = [b for b in text.split("\n\n") if b.startswith("id:")]
    assert len(blocks) == 3 and not [b for b in blocks if "\nevent:" in b or b.startswith("event:")]
    named = tcp.client.get("/events?after=0&limit=3").text
    assert named.count("\nevent: ") == 3


def test_a_referral_in_the_pit_view_carries_no_card_value_even_in_its_text() -> None:
    from cardshoe.api.app import _pit_referral

    referral = {"id": 9, "type": "card_after_void", "card": "Qs", "reader_id": "CS00C0FFEEQS7",
                "detail": "shoe card 17 (Qs) left the shoe after the void; not Qsx",
                "evidence": [{"index": 17, "card": "Qs", "reader_id": "CS00C0FFEEQS7"}]}
    pit = _pit_referral(referral)
    assert pit["card"] is None and "reader_id" not in pit
    assert pit["evidence"] == [{"index": 17, "card": None}]
    assert pit["detail"] == "shoe card 17 (??) left the shoe after the void; not Qsx"
    assert referral["card"] == "Qs"  # the caller's copy is not changed
