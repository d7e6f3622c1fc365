"""The table core's rules between rounds and at settlement, driven through `TableCore` itself.

`TableCore` is the pure state machine the daemon and `cardshoe replay` both run, so these
feed it journal-shaped inputs and shoe frames directly: no pty, no journal, no clock.
"""

from __future__ import annotations

from typing import Any

from cardshoe.cards import parse_card
from cardshoe.daemon.core import Applied, TableCore, TableSetup
from cardshoe.rounds import Choice, Decision, PlaceWager, operation_to_json

TCP = "three-card-poker"
LIMITS = (("ante", 100, 100_000), ("pair_plus", 100, 100_000), ("play", 100, 100_000), ("progressive", 100, 100))
T0 = 1_700_000_000_000_000_000  # host time of the first input (ns)


class Feeder:
    """One table core fed inputs and CARD frames of shoe 1, session 1, with rising host times."""

    def __init__(self, setup: TableSetup) -> None:
        self.core = TableCore(setup)
        self.t = T0
        self.index = 0

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
