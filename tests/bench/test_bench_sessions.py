"""Shoe sessions across journals and the ACK path, with the real firmware on the virtual board,
`cardshoe run` in a child process and an attacker on the fault relay (issue 20 items 3 and 4).

The attacker reads each frame's type from its clear header (SPEC 2) and drops every ACK and
RESEND_FROM the daemon sends to the shoe, or holds the shoe's frames back and releases them
later (`cardshoe.hil.relay.FrameAttack`). Nothing here needs the shoe's key."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from cardshoe.cards import parse_card
from cardshoe.hil.bench import Bench, TableSpec
from cardshoe.hil.relay import FrameAttack, LineFaults
from cardshoe.hil.runner import FlashedImage
from cardshoe.hil.table import Event, wait_for
from cardshoe.journal import JournalReader

ACK, RESEND_FROM = 0x81, 0x82
NO_ACKS = FrameAttack(drop_to_shoe=frozenset({ACK, RESEND_FROM}))
#: Seat 1 three nines (pair plus and ante bonus both pay), the dealer not qualifying (TCP 3.7).
SEAT = ["9h", "9d", "9c"]
DEALER = ["2c", "7d", "4s"]
WAGERS = {"ante": 1000, "pair_plus": 1000}
#: The bench's link timing: heartbeat, resend, resend max (ms).
TIMING = (1000, 60, 480)


@pytest.fixture
def bench(tmp_path: Path, flashed_image: FlashedImage) -> Iterator[Bench]:
    b = Bench(tmp_path / "bench", TableSpec("three-card-poker"), link_timing=TIMING)
    try:
        b.adopt_image(flashed_image.image, flashed_image.keys, flashed_image.flashed_with, flashed_image.romfs)
        b.start_line(LineFaults())
        b.start_daemon()
        yield b
    finally:
        b.close()


def _open_round(bench: Bench) -> str:
    api = bench.client
    rid = str(api.request("POST", "/rounds")["round_id"])
    for wager, amount in WAGERS.items():
        api.request("POST", f"/rounds/{rid}/wagers", {"seat": 1, "wager": wager, "amount": amount})
    api.request("POST", f"/rounds/{rid}/no-more-bets")
    return rid


def _settle(bench: Bench, rid: str) -> int:
    api = bench.client
    api.request("POST", f"/rounds/{rid}/decisions", {"seat": 1, "choice": "play"})
    done = api.request("POST", f"/rounds/{rid}/settle", {})
    return int(done["settlement"]["totals"]["paid"])


def _alarm(bench: Bench, kind: str) -> dict[str, Any] | None:
    for alarm in (bench.client.try_status() or {}).get("alarms") or []:
        if alarm.get("type") == kind:
            return dict(alarm)
    return None


def test_an_attacker_who_drops_acks_cannot_have_a_settled_round_dealt_again_into_the_next_journal(bench: Bench) -> None:
    """Issue 20: "An attacker who drops ACKs can have a settled round dealt again into the next
    journal". Journal H deals and settles a round while every ACK and RESEND_FROM is dropped, so
    the shoe still holds the round's frames; the table moves to journal I; the attacker holds the
    shoe's frames until I's first round has closed its bets and lets them go. I must not place
    H's cards (a session it did not start: an event and a referral, 6.1), and a new shoe loads."""
    h_shoe_no = bench.load_shoe()
    h_round = _open_round(bench)
    bench.relay.set_attack(NO_ACKS)  # type: ignore[union-attr]
    for text in SEAT + DEALER:
        bench.deal(parse_card(text))  # journaled by H (its next index moves), never acknowledged
    h_paid = _settle(bench, h_round)
    assert h_paid > 0
    # The broken ACK path is an alarm on H (item 4): the shoe keeps resending journaled frames.
    wait_for(lambda: _alarm(bench, "ack_path"), 30.0, "H's ack_path alarm")

    bench.relay.set_attack(FrameAttack(drop_to_shoe=NO_ACKS.drop_to_shoe, hold_to_host=True))
    bench.new_journal("journal-I.sqlite")
    bench.start_daemon(wait_shoe=False)
    i_round = _open_round(bench)
    assert i_round != h_round  # round ids unique across journals
    bench.relay.set_attack(FrameAttack())
    released = bench.relay.release_held()  # type: ignore[union-attr]
    assert released > 0

    def h_cards_in_i() -> int:  # H's card frames, as journal I accepted them
        with JournalReader(bench.journal) as j:
            return sum(1 for e in j.entries(("frame",)) if e.data().get("type") == "CARD"
                       and e.data().get("shoe_no") == h_shoe_no)

    wait_for(lambda: h_cards_in_i() >= 6, 60.0, "journal I to journal the six held cards of H's round")
    snap = bench.client.round(i_round)
    if snap["placements"]:
        i_paid = _settle(bench, i_round)
        pytest.fail(f"H's round {h_round} (paid {h_paid}) was dealt again into journal I's round {i_round}: "
                    f"hands {snap['hands']}, settled it paid {i_paid}")
    foreign = bench.client.wait_event(lambda e: e.type == "shoe_session_foreign", -1, 20.0,
                                      "the foreign session's referral on the stream")
    assert foreign.data["shoe_no"] == h_shoe_no and foreign.data["rule"] == "6.1"
    assert foreign.data["decision"] == "referred"
    alarm = wait_for(lambda: _alarm(bench, "shoe_session"), 10.0, "the foreign session's alarm")
    assert str(h_shoe_no) in alarm["message"] and "load a new shoe" in alarm["message"]
    wait_for(lambda: len(bench.client.events(type="card_from_foreign_session")) >= 6, 20.0,
             "the six cards of H's session referred on the stream")
    refused = bench.client.events(type="card_from_foreign_session")
    assert sorted(int(e.data["index"]) for e in refused) == [1, 2, 3, 4, 5, 6]

    # The dealer loads a new shoe: I's own session, whatever the shoe's previous one; dealt to.
    i_shoe_no = bench.load_shoe(bench.deck_id + 1)
    assert i_shoe_no != h_shoe_no
    wait_for(lambda: _alarm(bench, "shoe_session") is None, 10.0, "the foreign session's alarm to clear")
    for text in ["Jh", "Jd", "4c", "Qs", "8d", "3h"]:
        bench.deal(parse_card(text))
    snap = bench.client.round(i_round)
    assert snap["hands"]["seat 1"] == ["Jh", "Jd", "4c"] and snap["hands"]["dealer"] == ["Qs", "8d", "3h"]


def test_a_new_journal_loads_the_shoe_whatever_its_previous_session(bench: Bench) -> None:
    """Issue 20: "A new journal cannot load a shoe, and says it did". The shoe's session of the
    last journal has cards dealt; a new journal's NEW_SHOE must start a session of its own (a
    number no other journal gave), not be refused as the same session with cards dealt."""
    first = bench.load_shoe()
    for text in ["2d", "3d", "4d"]:
        bench.deal(parse_card(text))  # no round: cards outside any round, referred
    bench.new_journal("journal-2.sqlite")
    bench.start_daemon()
    after = bench.client.last_event_id
    answered = int(bench.client.request("POST", "/shoe/load", {"deck_id": bench.deck_id + 1})["shoe_no"])

    def loaded_or_alarm() -> str | None:
        status = bench.client.try_status() or {}
        shoe = (status.get("shoes") or {}).get(str(bench.serial)) or {}
        if shoe.get("shoe_no") == answered:
            return "loaded"
        alarms = [a for a in status.get("alarms") or [] if a.get("type") == "shoe_load"]
        return "alarm" if alarms else None

    try:
        outcome = wait_for(loaded_or_alarm, 30.0, "the new journal's load to succeed or be shown failed")
    except TimeoutError:
        with JournalReader(bench.journal) as j:
            refusals = sum(1 for e in j.entries(("command",)) if e.data().get("command") == "NEW_SHOE"
                           and e.data().get("status") == 1)
        pytest.fail(f"POST /shoe/load answered 202 {{'shoe_no': {answered}}} (the last journal's session was "
                    f"{first}); after 30 s the shoe is not loaded, it refused the NEW_SHOE {refusals} times, and "
                    f"/status shows alarms {(bench.client.try_status() or {}).get('alarms')}")
    assert outcome == "loaded" and answered != first
    assert bench.client.wait_event(lambda e: e.type == "shoe_loaded" and e.data.get("shoe_no") == answered,
                                   after, 10.0, "shoe_loaded")


def test_a_broken_ack_path_is_an_alarm_that_clears_once_the_outbox_drains(bench: Bench) -> None:
    """Issue 20 item 4: every ACK and RESEND_FROM to the shoe dropped at the relay; the shoe
    resends frames the daemon journaled and acknowledged; after the bound (SPEC 3.6) /status
    raises `ack_path`, journaled and on the stream; once the ACKs pass again and the shoe's
    outbox drains, it clears."""
    bench.load_shoe()
    after = bench.client.last_event_id
    bench.relay.set_attack(NO_ACKS)  # type: ignore[union-attr]
    bench.deal(parse_card("5c"))  # journaled by the daemon, its ACK never reaches the shoe
    alarm = wait_for(lambda: _alarm(bench, "ack_path"), 30.0, "the ack_path alarm")
    assert alarm["shoe"] == bench.serial and "ACK" in alarm["message"]
    raised: Event = bench.client.wait_event(lambda e: e.type == "ack_path", after, 10.0, "ack_path on the stream")
    dropped = bench.relay.counts.attacker_dropped  # type: ignore[union-attr]
    assert dropped > 0
    bench.relay.set_attack(FrameAttack())
    wait_for(lambda: _alarm(bench, "ack_path") is None, 30.0, "the ack_path alarm to clear")
    cleared = bench.client.wait_event(lambda e: e.type == "ack_path_cleared", raised.id, 10.0,
                                      "ack_path_cleared on the stream")
    assert cleared.data["shoe"] == bench.serial
    with JournalReader(bench.journal) as j:
        kinds = [e.data()["type"] for e in j.entries(("link",))]
    assert kinds.count("ack_path") == 1 and kinds.count("ack_path_cleared") == 1
    # A healthy line raises nothing: a card dealt now is acknowledged at once.
    bench.deal(parse_card("6c"))
    assert _alarm(bench, "ack_path") is None
