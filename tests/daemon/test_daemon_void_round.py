"""A void round refuses play (issue 20 item 2), through the table API with the scripted shoe on a
real pty, the journal replayed.

Once a round is void (a deck irregularity: 5.1, 5.8; a supervisor's void: 6.1), every wager
of it is returned (5.1.1 "the current round of play shall be void"). Nothing more is played in
it: wagers placed or changed, "no more bets", the deal-complete count point, decisions, an
absent player, an exposure and Let It Ride's progressive selection are refused (409, error
`RoundVoidError`, field `round`, naming the void and its rules). A card drawn for it is not
dealt into a hand: it is recorded as a card after a void (`card_after_void`, referred to the
shift manager under 6.1, with the card as evidence), as is a shoe key pressed for it
(`key_after_void`). The controller hears it in the answers and on the stream; the round is
settled (every wager returned) and the next round opens.
"""

from __future__ import annotations

import json
from typing import Any

from daemon_harness import Table, journal, wait_for

from cardshoe.cards import parse_card
from cardshoe.journal.replay import replay

TCP = "three-card-poker"
LIR = "megalink-let-it-ride"
# TCP 3.7: three cards to seat 2, three to seat 5, three to the dealer.
HANDS = ["Ah", "Kh", "Qh", "2c", "2d", "9s", "Jc", "8d", "4s"]
NEXT = ["As", "Ks", "Qs", "3c", "3d", "9h", "Jd", "8c", "4h"]
DECK_RULES = "5.1, 5.8"  # TCP 5.1 extra or missing cards, 5.8 the count proves too many or too few


def _events(table: Table, *types: str) -> list[dict[str, Any]]:
    with journal(table) as j:
        return [e.data() for e in j.entries(("event",)) if e.data()["type"] in types]


def _of_round(table: Table, rid: str, *types: str) -> list[dict[str, Any]]:
    with journal(table) as j:
        return [e.data() for e in j.entries(("event",)) if e.round_id == rid and e.data()["type"] in types]


def _last_id(table: Table) -> int:
    with journal(table) as j:
        return max((e.id for e in j.entries()), default=0)


def _sse(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "data" in fields:
            out.append({"event": fields["event"], "data": json.loads(fields["data"])})
    return out


def _stream(table: Table, after: int, n: int, view: str = "") -> list[dict[str, Any]]:
    """The next `n` events on the stream after entry `after`, as the controller gets them."""
    r = table.client.get(f"/events?after={after}&limit={n}" + (f"&view={view}" if view else ""))
    assert r.status_code == 200
    return _sse(r.text)


def _refused_void(table: Table, method: str, url: str, body: dict[str, Any] | None, rules: str) -> None:
    r = table.client.request(method, url, json=body if body is not None else {})
    assert r.status_code == 409, (method, url, r.status_code, r.text)
    detail = r.json()["detail"]
    assert detail["error"] == "RoundVoidError" and detail["field"] == "round", detail
    assert detail["rule"] == rules, detail
    assert "void" in detail["message"] and rules in detail["message"], detail


def _play_refused(table: Table, rid: str, rules: str) -> None:
    """Every play input of the controller for the void round `rid` is refused."""
    for method, url, body in (
        ("POST", f"/rounds/{rid}/wagers", {"seat": 5, "wager": "pair_plus", "amount": 500}),
        ("PUT", f"/rounds/{rid}/wagers/2/ante", {"amount": 2000}),
        ("POST", f"/rounds/{rid}/no-more-bets", None),
        ("POST", f"/rounds/{rid}/deal-complete", None),
        ("POST", f"/rounds/{rid}/decisions", {"seat": 2, "choice": "play"}),
        ("POST", f"/rounds/{rid}/absent", {"seat": 2}),
        ("POST", f"/rounds/{rid}/exposures", {"shoe_index": 1}),
    ):
        _refused_void(table, method, url, body, rules)


def _settles_void(table: Table, rid: str, rules: list[str], stakes: dict[tuple[int, str], int]) -> None:
    """Settled with every wager returned as staked, citing the void's rules; the next round opens."""
    settlement = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    assert settlement["void"] is not None and settlement["void"]["rules"] == rules, settlement["void"]
    paid = {(s["seat"], w["wager"]): (w["outcome"], w["paid"], w["rules"]) for s in settlement["seats"]
            for w in s["wagers"]}
    assert paid == {k: ("void", v, rules) for k, v in stakes.items()}, paid
    nxt = table.client.post("/rounds")
    assert nxt.status_code == 201, nxt.text
    assert nxt.json()["round_id"] != rid


def _replays(table: Table) -> None:
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def test_a_round_voided_by_the_end_of_the_old_shoe_refuses_play_and_its_cards_are_after_a_void(make_table) -> None:  # type: ignore[no-untyped-def]
    """Issue 20: a round opened while the shoe is still on its old session, then the dealer's
    end of shoe: the old shoe's missing-cards report voids the round taking bets (5.1, 5.8;
    reading 72). Wagers, "no more bets" and the deal are then refused or kept out of it."""
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    first = str(table.ok("POST", "/rounds")["round_id"])  # the shoe's last round, played out
    table.ok("POST", f"/rounds/{first}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{first}/no-more-bets")
    table.deal([parse_card(c) for c in HANDS[:3] + HANDS[6:]])
    table.ok("POST", f"/rounds/{first}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{first}/settle", json={})

    rid = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    before = _last_id(table)
    table.shoe.deck_status(3, 8, missing=52 - 6)  # end of shoe: MISSING, 46 cards never dealt
    table.shoe.wait_acked()
    wait_for(lambda: _events(table, "round_voided"), what="the round voided")
    (voided,) = _events(table, "round_voided")
    assert voided["rules"] == ["5.1", "5.8"]
    # The controller hears it on the stream: the deck status, the flag and the void.
    streamed = _stream(table, before, 3)
    assert [e["event"] for e in streamed] == ["deck_status", "flagged", "round_voided"], streamed
    assert streamed[-1]["data"]["round_id"] == rid
    assert {"round_id": rid, "status": "betting", "void": True} in table.ok("GET", "/rounds")["rounds"]

    _play_refused(table, rid, DECK_RULES)
    assert table.round(rid)["wagers"] == {"2": {"ante": 1000}}  # the wager held before the void

    # Cards drawn and keys pressed for the void round: on the record, not in its hands.
    before = _last_id(table)
    table.deal([parse_card(c) for c in NEXT[:3]])
    table.shoe.key_press(2)
    table.shoe.key_press(3)
    table.shoe.wait_acked()
    wait_for(lambda: len(_events(table, "key_after_void")) == 2, what="both keys recorded")
    cards = _events(table, "card_after_void")
    assert _of_round(table, rid, "card_after_void") == cards  # journaled against the void round
    assert [c["index"] for c in cards] == [7, 8, 9]
    for card, text in zip(cards, NEXT[:3]):
        assert card["rule"] == "6.1" and card["rules"] == ["6.1"]
        assert card["decision"] == "referred" and card["void_rules"] == ["5.1", "5.8"]
        (evidence,) = card["evidence"]
        assert evidence["code"] == parse_card(text) and evidence["index"] == card["index"]
    keys = _events(table, "key_after_void")
    assert _of_round(table, rid, "key_after_void") == keys
    assert [k["key_name"] for k in keys] == ["deal_complete", "exposure"]
    assert all(k["rules"] == ["6.1"] and k["decision"] == "referred" for k in keys)
    assert [k["evidence"][0]["next_index"] for k in keys] == [10, 10]  # an exposed card may be the next out
    assert _of_round(table, rid, "card_placed", "bets_closed", "exposure_recorded", "count_checked") == []
    snap = table.round(rid)
    assert snap["placements"] == {} and snap["hands"] == {} and snap["status"] == "betting"
    # On the round's record, among its cards dealt into no place (the round file's discards).
    assert sorted(int(i) for i in snap["cards"]) == [7, 8, 9] and snap["not_due"] == [7, 8, 9]
    assert [c["card"] for c in table.ok("GET", f"/rounds/{rid}/export")["out_of_play"]] == NEXT[:3]
    pit = _stream(table, before, 7, view="pit")  # face down to the pit, as the void round's cards are
    assert [e["data"]["data"]["evidence"][0]["card"] for e in pit[:3]] == [None] * 3
    assert all("card" not in e["data"]["data"] or e["data"]["data"]["card"] is None for e in pit[:3])
    streamed = _stream(table, before, 7)
    assert [e["event"] for e in streamed] == ["card_after_void"] * 3 + ["shoe_key", "key_after_void"] * 2, streamed
    assert [e["data"]["data"]["evidence"][0]["card"] for e in streamed[:3]] == NEXT[:3]  # cards as text
    assert [e["data"]["data"]["card"] for e in streamed[:3]] == NEXT[:3]

    # The round file reports it as extra_or_missing_cards, which TCP 5.1 voids (docs/round-format.md).
    _settles_void(table, rid, ["5.1"], {(2, "ante"): 1000})
    assert _events(table, "shoe_input_refused") == []
    _replays(table)


def test_a_supervisors_void_mid_deal_keeps_the_later_cards_out_of_the_hands(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 5, "wager": "pair_plus", "amount": 500})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in HANDS[:4]])
    done = table.ok("POST", f"/rounds/{rid}/void", json={"rule": "6.1", "reason": "a card fell", "by": "SM-4"})
    assert "round_voided" in [e["type"] for e in done["events"]]  # in the answer
    _play_refused(table, rid, "6.1")
    table.deal([parse_card(c) for c in HANDS[4:]])
    table.shoe.key_press(2)
    table.shoe.wait_acked()
    wait_for(lambda: _events(table, "key_after_void"), what="the key recorded")
    assert [c["index"] for c in _events(table, "card_after_void")] == [5, 6, 7, 8, 9]
    snap = table.round(rid)
    assert snap["hands"] == {"seat 2": HANDS[:3], "seat 5": HANDS[3:4]}  # dealt before the void
    assert sorted(int(i) for i in snap["placements"]) == [1, 2, 3, 4]
    assert snap["not_due"] == [5, 6, 7, 8, 9] and len(snap["cards"]) == 9
    assert _of_round(table, rid, "flagged") == [_of_round(table, rid, "flagged")[0]]  # the void's, no other
    _settles_void(table, rid, ["6.1"], {(2, "ante"): 1000, (5, "pair_plus"): 500})
    _replays(table)


def test_let_it_ride_records_no_selection_for_a_void_round(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(LIR, 7, jackpot_reset=500_000)
    rid = str(table.ok("POST", "/rounds")["round_id"])
    for wager in ("one", "two", "dollar"):
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": wager, "amount": 500})
    table.ok("POST", f"/rounds/{rid}/void", json={"rule": "6.1", "reason": "the table closed", "by": "SM-4"})
    _refused_void(table, "POST", f"/rounds/{rid}/progressive", {"magic_card": "Kh", "lucky_seat": 4}, "6.1")
    _refused_void(table, "PUT", f"/rounds/{rid}/wagers/3/one", {"amount": 1000}, "6.1")
    # The Let It Ride document has no 6.1: the void cites its reading (docs/rule-readings.md 35).
    _settles_void(table, rid, ["not in these rules; referred to the Gaming Shift Manager"],
                  {(3, "one"): 500, (3, "two"): 500, (3, "dollar"): 500})
    _replays(table)

