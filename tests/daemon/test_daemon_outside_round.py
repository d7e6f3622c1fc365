"""Shoe keys and deck faults that arrive while no round has a card out (after the round was
settled, before the next one's first card) are information the pit needs: each is journaled
as a referral to the shift manager (6.1) with its evidence, never refused, and the next round
is dealt and settled as if it had not happened. Over real pseudo-terminals: the scripted shoe
(the firmware's codec) and the real firmware under MicroPython; `cardshoe replay` agrees.

The rules: 5.4 (LIR 5.5) covers cards exposed *during the deal*, and the deal-complete key is
a count point of a deal, so neither covers a key pressed between rounds; 5.1/5.8 (LIR 5.2)
void the round in play for extra or missing cards and let earlier rounds stand (5.1.2), so
with no round in play there is none to void. Not covered: referred (6.1)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from daemon_fwshoe import FirmwareShoe
from daemon_harness import DECK_ID, HANDS, KEY, SERIAL, Table, check_hands, journal, open_two_seat_round, wait_for

from cardshoe.cards import parse_card
from cardshoe.journal.replay import replay

TCP = "three-card-poker"


def _events(table: Table, *types: str) -> list[dict[str, Any]]:
    with journal(table) as j:
        return [e.data() for e in j.entries(("event",)) if e.data()["type"] in types]


def _play(table: Table, rid: str) -> dict[str, Any]:
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    settlement: dict[str, Any] = table.ok("POST", f"/rounds/{rid}/settle", json={})["settlement"]
    return settlement


def _nets(settlement: dict[str, Any]) -> dict[int, int]:
    return {s["seat"]: s["net"] for s in settlement["seats"]}


# HANDS: seat 2 A-K-Q of hearts (ante 1000), seat 5 2-2-9 (pair plus 500), dealer J-8-4. The
# dealer qualifies with queen high or better (TCP 3.11): jack high does not, so the ante pays
# 1 to 1 and the play stands (3.11.1), and the mini royal pays the ante bonus 5 to 1 (4.2);
# seat 5's pair pays pair plus 1 to 1 (4.3).
EXPECTED_NETS = {2: 1000 + 5 * 1000, 5: 500}
# The next round's cards: the same ranks in other suits, each hand keeping its kind (a mini
# royal, a pair, jack high), so the same payouts by the same rules.
NEXT = ["As", "Ks", "Qs", "3c", "3d", "9h", "Jd", "8c", "4h"]


def test_keys_and_a_deck_fault_between_rounds_are_referred_and_the_next_round_is_unaffected(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    first = open_two_seat_round(table)
    table.deal([parse_card(c) for c in HANDS])
    assert _nets(_play(table, first)) == EXPECTED_NETS

    table.shoe.key_press(3)  # EXPOSURE, after the settlement
    table.shoe.key_press(2)  # DEAL_COMPLETE, after the settlement
    table.shoe.deck_status(2, 16)  # integrity changed: EXTRA, after the settlement
    table.shoe.wait_acked()
    keys = _events(table, "key_outside_round")
    assert [k["key_name"] for k in keys] == ["exposure", "deal_complete"]
    for k in keys:
        assert k["rule"] == "6.1" and k["rules"] == ["6.1"] and k["decision"] == "referred"
        assert k["after_round"] == first and k["shoe"] == SERIAL
        (evidence,) = k["evidence"]
        assert evidence["next_index"] == len(HANDS) + 1 and evidence["shoe_ms"] > 0
    (fault,) = _events(table, "deck_fault_outside_round")
    assert fault["faults"] == ["extra"] and fault["rules"] == ["5.1", "5.8", "6.1"]
    assert fault["decision"] == "referred" and fault["after_round"] == first
    assert fault["evidence"][0]["dealt"] == len(HANDS) and fault["evidence"][0]["integrity"] == 16
    assert _events(table, "shoe_input_refused") == []  # never refused
    snap = table.round(first)
    assert snap["status"] == "settled" and snap["irregularities"] == [] and snap["void"] is None

    # The next round: an exposure key while it takes bets is referred too, and leaves it alone.
    second = str(table.ok("POST", "/rounds")["round_id"])
    table.shoe.key_press(3)
    table.shoe.wait_acked()
    wait_for(lambda: len(_events(table, "key_outside_round")) == 3, what="the third referral")
    assert _events(table, "key_outside_round")[-1]["round_open"] == second
    for seat, wager, amount in ((2, "ante", 1000), (5, "pair_plus", 500)):
        table.ok("POST", f"/rounds/{second}/wagers", json={"seat": seat, "wager": wager, "amount": amount})
    table.ok("POST", f"/rounds/{second}/no-more-bets")
    table.deal([parse_card(c) for c in NEXT])
    snap = table.round(second)
    assert snap["irregularities"] == [] and snap["exposures"] == [] and snap["void"] is None
    assert sorted(int(i) for i in snap["placements"]) == list(range(len(HANDS) + 1, 2 * len(HANDS) + 1))
    assert _nets(_play(table, second)) == EXPECTED_NETS
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def test_the_real_firmware_exposure_and_end_of_shoe_after_settlement(make_table) -> None:  # type: ignore[no-untyped-def]
    """The firmware's own frames: the exposure key, then the end-of-shoe key, whose DECK_STATUS
    reports MISSING with the map of the cards never dealt; both after the settlement. The pit
    gets the 43 cards never dealt as evidence to count by hand (5.8)."""
    table: Table = make_table(TCP, 7)
    with tempfile.TemporaryDirectory(prefix="fw", dir="/tmp") as tmp:  # short path: UNIX socket
        shoe = FirmwareShoe(Path(tmp), table.plug, SERIAL, KEY)
        try:
            shoe.power_on()
            wait_for(lambda: table.daemon.shoe_serial == SERIAL, 10, "the firmware's HELLO")
            loaded = _load(table)
            first = open_two_seat_round(table)
            for card in HANDS:
                shoe.deal(DECK_ID, parse_card(card))
            shoe.send("key deal_complete")
            wait_for(lambda: len(table.round(first)["placements"]) == len(HANDS), 10, "the round dealt")
            wait_for(lambda: _events(table, "count_checked"), 10, "the deal-complete count point")
            check_hands(table, first)
            assert _nets(_play(table, first)) == EXPECTED_NETS

            shoe.send("key exposure")
            wait_for(lambda: _events(table, "key_outside_round"), 10, "the exposure referral")
            shoe.send("key end_shoe")
            wait_for(lambda: _events(table, "deck_fault_outside_round"), 10, "the end-of-shoe referral")

            # The next round, from a new shoe session, is dealt and settled as usual.
            assert _load(table) != loaded
            second = open_two_seat_round(table)
            for card in NEXT:
                shoe.deal(DECK_ID, parse_card(card))
            wait_for(lambda: len(table.round(second)["placements"]) == len(HANDS), 10, "the second round dealt")
            snap = table.round(second)
            assert snap["irregularities"] == [] and snap["void"] is None
            assert _nets(_play(table, second)) == EXPECTED_NETS
        finally:
            shoe.close()
    (key,) = _events(table, "key_outside_round")
    assert key["key_name"] == "exposure" and key["after_round"] == first and key["rules"] == ["6.1"]
    (fault,) = _events(table, "deck_fault_outside_round")
    assert fault["faults"] == ["missing"] and fault["rules"] == ["5.1", "5.8", "6.1"]
    assert fault["after_round"] == first and fault["decision"] == "referred"
    (evidence,) = fault["evidence"]
    dealt = {parse_card(c) for c in HANDS}
    assert sorted(evidence["never_dealt"]) == sorted(set(range(52)) - dealt)  # the rest of the deck
    assert evidence["missing"] == 52 - len(HANDS) and evidence["reason"] == 3  # SPEC 5: end of shoe
    assert _events(table, "shoe_input_refused") == []
    assert table.round(first)["irregularities"] == []
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def _load(table: Table) -> int:
    r = table.client.post("/shoe/load", json={"deck_id": DECK_ID})
    assert r.status_code == 202, r.text
    shoe_no = int(r.json()["shoe_no"])
    wait_for(lambda: table.daemon.status()["shoes"].get(str(SERIAL), {}).get("shoe_no") == shoe_no, 10,
             "the firmware to store the shoe")
    return shoe_no
