"""The table core's rules between rounds and at settlement, driven through `TableCore` itself.

`TableCore` is the pure state machine the daemon and `cardshoe replay` both run, so these
feed it journal-shaped inputs and shoe frames directly: no pty, no journal, no clock.
"""

from __future__ import annotations

from typing import Any

from cardshoe.cards import parse_card
from cardshoe.daemon.core import Applied, TableCore, TableSetup
from cardshoe.rounds import Choice, Decision, PlaceWager, VoidRound, operation_to_json

TCP = "three-card-poker"
LIMITS = (("ante", 100, 100_000), ("pair_plus", 100, 100_000), ("play", 100, 100_000), ("progressive", 100, 100))
T0 = 1_700_000_000_000_000_000  # host time of the first input (ns)


class Feeder:
    """One table core fed inputs and CARD frames of shoe 1, session 1, with rising host times."""

    def __init__(self, setup: TableSetup) -> None:
        self.core = TableCore(setup)
        self.t = T0
        self.index = 0
        # This journal's session 1 of shoe 1 (the core places only the session it started).
        self.input({"action": "shoe_loaded", "shoe": 1, "shoe_no": 1, "deck_id": 7})

    def _tick(self) -> int:
        self.t += 1_000_000
        return self.t

    def input(self, body: dict[str, Any]) -> Applied:
        return self.core.apply_input(body, self._tick())

    def op(self, rid: str, op: Any) -> Applied:
        done = self.input({"action": "op", "round_id": rid, "op": operation_to_json(op)})
        assert done.refused is None, done.refused
        return done

    def card(self, text: str) -> Applied:
        self.index += 1
        msg = {"type": "CARD", "shoe_no": 1, "index": self.index, "code": parse_card(text), "raw": f"{self.index:08x}",
               "t_ms": 1000 * self.index, "card_deck": 7, "method": 1, "flags": 0}
        return self.core.apply_frame(1, msg, self._tick())

    def play_round(self, seat1: list[str], dealer: list[str], community: tuple[str, ...] = ()) -> str:
        """Seat 1 ante 1000, dealt by 3.7 (the seat's three, the dealer's, then any community
        cards with the burn), played and settled."""
        opened = self.input({"action": "open_round"})
        rid = str(opened.round_id)
        self.op(rid, PlaceWager(seat=1, wager="ante", amount=1000))
        for text in seat1 + dealer + list(community):
            self.card(text)
        self.op(rid, Decision(seat=1, choice=Choice.PLAY))
        settled = self.input({"action": "settle", "round_id": rid})
        assert [d.kind for d in settled.derived][-1] == "settlement", settled.derived
        return rid


SEAT_A, DEALER_A = ["Ah", "Kh", "Qh"], ["2c", "7d", "9s"]
SEAT_B, DEALER_B = ["Jc", "Jd", "4s"], ["Qs", "8d", "3h"]


def test_a_card_dealt_after_settlement_is_flagged_with_the_card_and_the_next_round_is_unaffected() -> None:
    """6.1: a card out of the shoe after the round was settled belongs to no round; it is
    referred to the shift manager with the card as evidence, and the next round deals from
    the following card as if it had not happened."""
    table = Feeder(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
    first = table.play_round(SEAT_A, DEALER_A)
    stray = table.card("5d")
    (event,) = stray.derived
    assert stray.refused is None
    assert event.kind == "event" and event.body["type"] == "card_outside_round", event.body
    assert event.body["rule"] == "6.1" and event.body["rules"] == ["6.1"]
    assert event.body["decision"] == "referred" and event.body["after_round"] == first
    assert event.round_id is None  # it belongs to no round
    (evidence,) = event.body["evidence"]
    assert (evidence["index"], evidence["code"], evidence["reader_id"]) == (7, parse_card("5d"), "00000007")
    assert evidence["shoe_ms"] == 7000 and evidence["time_ms"] == table.t // 1_000_000
    # The settled round is untouched by it.
    assert 7 not in table.core.rounds[first].cards and table.core.rounds[first].irregularities == ()

    second = table.play_round(SEAT_B, DEALER_B)
    rnd = table.core.rounds[second]
    assert sorted(rnd.cards) == [8, 9, 10, 11, 12, 13]
    assert rnd.irregularities == () and rnd.void is None

    # The same two rounds without the stray card settle the second round identically.
    clean = Feeder(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
    clean.play_round(SEAT_A, DEALER_A)
    assert clean.play_round(SEAT_B, DEALER_B) == second
    assert table.core.settlements[second] == clean.core.settlements[second]
    assert rnd.hands() == clean.core.rounds[second].hands()


# --- a progressive pool needs the amount it resets to (issue 12 item 5) --------------------

MEGALINK = "megalink-three-card-poker"
NO_RESET = TableSetup(name="M", game=MEGALINK, seats=7, limits=LIMITS)  # no [jackpot] reset
COMMUNITY = ("Tc", "3d", "6h")  # MTCP 3.7: two community cards, the third (top) one burned


def _refused_for_the_reset(done: Applied) -> None:
    assert done.refused is not None, done.derived
    (event,) = done.derived
    assert event.body["type"] == "input_refused" and event.body["field"] == "jackpot.reset", event.body
    assert "[jackpot] reset" in event.body["message"]


def test_a_jackpot_pool_is_refused_at_once_on_a_table_with_no_reset_and_rounds_still_settle() -> None:
    """The settlement of a progressive needs the pool and the amount it resets to (MTCP 4.4);
    on a table with no `[jackpot] reset` the pool is refused when it is given, with a message,
    and later rounds settle as if it had never been offered."""
    table = Feeder(NO_RESET)
    _refused_for_the_reset(table.input({"action": "jackpot_pool", "amount": 10_000_000}))
    assert table.core.jackpot_pool is None
    rid = table.play_round(SEAT_A, DEALER_A, COMMUNITY)
    assert table.core.settlements[rid]["settlement"]["jackpot"] is None


def test_a_pool_given_at_settlement_is_refused_at_once_and_the_round_is_not_stranded() -> None:
    table = Feeder(NO_RESET)
    rid = str(table.input({"action": "open_round"}).round_id)
    table.op(rid, PlaceWager(seat=1, wager="ante", amount=1000))
    for text in SEAT_A + DEALER_A + list(COMMUNITY):
        table.card(text)
    table.op(rid, Decision(seat=1, choice=Choice.PLAY))
    _refused_for_the_reset(table.input({"action": "settle", "round_id": rid, "jackpot_pool": 10_000_000}))
    # Nothing was closed: the round settles without the pool (or could still be voided).
    done = table.input({"action": "settle", "round_id": rid})
    assert [d.kind for d in done.derived][-1] == "settlement", done.derived


def test_a_progressive_wager_is_refused_at_once_on_a_table_with_no_reset() -> None:
    """A progressive wager could never be settled there: refused when placed, not at settlement."""
    table = Feeder(NO_RESET)
    rid = str(table.input({"action": "open_round"}).round_id)
    table.op(rid, PlaceWager(seat=1, wager="ante", amount=1000))
    done = table.input({"action": "op", "round_id": rid,
                        "op": operation_to_json(PlaceWager(seat=1, wager="progressive", amount=100))})
    _refused_for_the_reset(done)
    assert table.core.rounds[rid].wagers == {1: {"ante": 1000}}


def test_a_pool_set_under_an_earlier_reset_does_not_strand_later_rounds() -> None:
    """The pool was set while the table had a reset; the table restarts without one. Later
    rounds with no progressive wager settle; the pool is not offered to a settlement that
    could not use it."""
    table = Feeder(TableSetup(name="M", game=MEGALINK, seats=7, limits=LIMITS, jackpot_reset=2_000_000))
    assert table.input({"action": "jackpot_pool", "amount": 10_000_000}).refused is None
    restart = dict(NO_RESET.to_json(), action="setup")
    assert table.input(restart).refused is None
    rid = table.play_round(SEAT_A, DEALER_A, COMMUNITY)
    assert rid in table.core.settlements


# --- shoe keys and deck faults while no round has a card out (rule 6.1) -----------------------

def _key(table: Feeder, key: int) -> Applied:
    return table.core.apply_frame(1, {"type": "KEY", "key": key, "arg": 0, "t_ms": 99_000 + key}, table._tick())


def _deck_status(table: Feeder, integrity: int, never_dealt: list[str]) -> Applied:
    """DECK_STATUS as the shoe sends it at the end of a shoe (SPEC 5, reason 3): the cards never
    dealt in `missing_map` (bit i of byte i // 8 for card code i)."""
    bitmap = bytearray(7)
    for text in never_dealt:
        code = parse_card(text)
        bitmap[code // 8] |= 1 << (code % 8)
    msg = {"type": "DECK_STATUS", "shoe_no": 1, "deck_id": 7, "reason": 3, "dealt": table.index,
           "remaining": 52 - table.index, "integrity": integrity, "duplicates": 0, "foreign": 0, "unread": 0,
           "missing": len(never_dealt), "missing_map": bytes(bitmap).hex()}
    return table.core.apply_frame(1, msg, table._tick())


def _types(done: Applied) -> list[str]:
    return [str(d.body.get("type")) for d in done.derived]


def _second_round_as_if_nothing_happened(table: Feeder, rid: str) -> None:
    """The next round is not affected: the same two rounds without the stray input settle the
    second one identically, with the same hands and no irregularity."""
    clean = Feeder(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
    clean.play_round(SEAT_A, DEALER_A)
    assert clean.play_round(SEAT_B, DEALER_B) == rid
    rnd = table.core.rounds[rid]
    assert rnd.irregularities == () and rnd.void is None and rnd.exposures == []
    assert rnd.hands() == clean.core.rounds[rid].hands()
    assert table.core.settlements[rid] == clean.core.settlements[rid]


def test_an_exposure_or_deal_complete_key_after_settlement_is_referred_not_refused() -> None:
    """5.4 speaks of cards exposed during the deal and a deal-complete key counts a deal: with
    no round in play neither applies, so each press is referred to the shift manager (6.1) with
    its evidence, never refused, and the settled round and the next round are untouched."""
    table = Feeder(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
    first = table.play_round(SEAT_A, DEALER_A)
    before = table.core.rounds[first].snapshot()
    for key, name in ((3, "exposure"), (2, "deal_complete")):
        done = _key(table, key)
        assert done.refused is None and _types(done) == ["shoe_key", "key_outside_round"], _types(done)
        event = done.derived[1]
        assert event.round_id is None  # it belongs to no round
        body = event.body
        assert body["key_name"] == name and body["rule"] == "6.1" and body["rules"] == ["6.1"]
        assert body["decision"] == "referred" and body["after_round"] == first and body["round_open"] is None
        (evidence,) = body["evidence"]
        assert evidence["shoe_ms"] == 99_000 + key and evidence["time_ms"] == table.t // 1_000_000
        assert evidence["next_index"] == 7  # six cards were dealt: an exposed card may be the seventh
    assert table.core.rounds[first].snapshot() == before
    second = table.play_round(SEAT_B, DEALER_B)
    _second_round_as_if_nothing_happened(table, second)


def test_an_exposure_key_while_the_next_round_takes_bets_leaves_that_round_alone() -> None:
    table = Feeder(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
    first = table.play_round(SEAT_A, DEALER_A)
    rid = str(table.input({"action": "open_round"}).round_id)
    done = _key(table, 3)
    assert done.refused is None and _types(done) == ["shoe_key", "key_outside_round"]
    body = done.derived[1].body
    assert body["after_round"] == first and body["round_open"] == rid and "taking bets" in body["detail"]
    # Then the round is played as usual.
    table.op(rid, PlaceWager(seat=1, wager="ante", amount=1000))
    for text in SEAT_B + DEALER_B:
        table.card(text)
    table.op(rid, Decision(seat=1, choice=Choice.PLAY))
    assert _types(table.input({"action": "settle", "round_id": rid}))[-1] == "settlement"
    _second_round_as_if_nothing_happened(table, rid)


def test_a_key_before_any_round_is_referred_too() -> None:
    table = Feeder(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
    done = _key(table, 3)
    assert _types(done) == ["shoe_key", "key_outside_round"]
    assert done.derived[1].body["after_round"] is None and "before any round" in done.derived[1].body["detail"]


def test_missing_cards_reported_after_settlement_are_referred_with_the_cards_never_dealt() -> None:
    """5.1/5.8: extra or missing cards void the round in play, earlier rounds stand (5.1.2). With
    none in play (the shoe ended after the last settlement) there is nothing to void: referred to
    the shift manager (6.1) with the shoe's counts and the cards never dealt, for a hand count."""
    table = Feeder(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS))
    first = table.play_round(SEAT_A, DEALER_A)
    done = _deck_status(table, 8, ["Ks", "2h"])
    assert done.refused is None and _types(done) == ["deck_status", "deck_fault_outside_round"], _types(done)
    event = done.derived[1]
    assert event.round_id is None
    body = event.body
    assert body["faults"] == ["missing"] and body["rules"] == ["5.1", "5.8", "6.1"] and body["rule"] == "6.1"
    assert body["decision"] == "referred" and body["after_round"] == first
    (evidence,) = body["evidence"]
    assert sorted(evidence["never_dealt"]) == sorted([parse_card("Ks"), parse_card("2h")])
    assert evidence["dealt"] == 6 and evidence["journal_holds"] == 6 and evidence["integrity"] == 8
    # More than 52 cards out (EXTRA) is the same referral.
    extra = _deck_status(table, 16, [])
    assert extra.derived[1].body["faults"] == ["extra"] and extra.derived[1].body["evidence"][0]["never_dealt"] == []
    assert table.core.rounds[first].void is None and table.core.rounds[first].irregularities == ()
    second = table.play_round(SEAT_B, DEALER_B)
    _second_round_as_if_nothing_happened(table, second)


def test_let_it_ride_deck_fault_outside_a_round_cites_its_own_deck_rule() -> None:
    table = Feeder(TableSetup(name="L", game="megalink-let-it-ride", seats=7, limits=LIMITS))
    done = _deck_status(table, 8 | 16, ["As"])
    body = done.derived[1].body
    assert body["rules"] == ["5.2", "6.1"] and body["faults"] == ["missing", "extra"]  # LIR 5.2


def test_a_round_the_settlement_engine_refuses_stays_in_play_and_can_be_voided() -> None:
    """MTCP 4.4 pays shares of the progressive pool, so its settlement needs the pool: a settle
    without one is refused naming `jackpot.pool`, the round is not closed, and a supervisor's
    void then settles it with every wager returned (no round is ever closed unsettled)."""
    table = Feeder(TableSetup(name="M", game=MEGALINK, seats=7, limits=LIMITS, jackpot_reset=1_000_000))
    rid = str(table.input({"action": "open_round"}).round_id)
    table.op(rid, PlaceWager(seat=1, wager="ante", amount=1000))
    table.op(rid, PlaceWager(seat=1, wager="progressive", amount=100))
    for text in SEAT_A + DEALER_A + list(COMMUNITY):
        table.card(text)
    table.op(rid, Decision(seat=1, choice=Choice.PLAY))
    refused = table.input({"action": "settle", "round_id": rid})
    assert refused.refused is not None and getattr(refused.refused, "field", None) == "jackpot.pool"
    assert _types(refused) == ["input_refused"] and "settlement_failed" not in _types(refused)
    rnd = table.core.rounds[rid]
    assert rnd.status.value != "settled" and rid not in table.core.settlements
    table.op(rid, VoidRound(rule="6.1", reason="progressive pool display failed", by="SM-1"))
    done = table.input({"action": "settle", "round_id": rid})
    assert _types(done)[-1] == "settlement", _types(done)
    settled = table.core.settlements[rid]["settlement"]
    assert settled["void"] is not None and [s["net"] for s in settled["seats"]] == [0]
