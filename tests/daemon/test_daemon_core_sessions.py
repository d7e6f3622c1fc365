"""A journal acts only on the shoe session it started (issue 20 item 3), in the pure core.

Each test feeds the table core journaled inputs as the daemon would: `shoe_loading` when a
NEW_SHOE goes out, `shoe_loaded` when the shoe's REPLY takes it, and the shoe's frames. What is
expected comes from the issue's rule, not from the code: a card, key or deck report of a session
this journal did not start is placed in no round and referred (6.1); this journal's own
session starts at the first frame naming it."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from cardshoe.cards import parse_card
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.daemon.shoes import ShoeSession
from cardshoe.rounds import NoMoreBets, PlaceWager, RoundStatus, operation_to_json

TCP = "three-card-poker"
T0 = 1_700_000_000_000_000_000
SHOE = 1
DECK = 7
HANDS = ["Ah", "Kh", "Qh", "2c", "7d", "9s"]  # seat 1, then the dealer (3.7)
LIMITS = (("ante", 100, 100_000), ("pair_plus", 100, 100_000), ("play", 100, 100_000))
LIMITS_JSON = {w: {"min": lo, "max": hi} for w, lo, hi in LIMITS}


class Feeder:
    def __init__(self, scope: str | None = None) -> None:
        scoped = {} if scope is None else {"round_scope": scope}
        self.core = TableCore(TableSetup(name="T", game=TCP, seats=7, limits=LIMITS, **scoped))
        self.t = T0

    def tick(self) -> int:
        self.t += 1_000_000
        return self.t

    def input(self, body: dict[str, Any]) -> Any:
        return self.core.apply_input(body, self.tick())

    def frame(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        return [d.body for d in self.core.apply_frame(SHOE, msg, self.tick()).derived]

    def hello(self, shoe_no: int, dealt: int, boot: int = 1) -> list[dict[str, Any]]:
        return self.frame({"type": "HELLO", "boot": boot, "fw_major": 0, "fw_minor": 1, "fw_patch": 0,
                           "fw_hash": "00" * 32, "reset_cause": 1, "readers": 2, "shoe_no": shoe_no,
                           "deck_id": DECK, "dealt": dealt, "integrity": 0, "faults": 0})

    def card(self, shoe_no: int, index: int, text: str) -> list[dict[str, Any]]:
        return self.frame({"type": "CARD", "shoe_no": shoe_no, "index": index, "code": parse_card(text),
                           "raw": f"r{index}", "t_ms": 1000 * index, "card_deck": DECK, "method": 2, "flags": 0})

    def key(self, key: int) -> list[dict[str, Any]]:
        return self.frame({"type": "KEY", "key": key, "arg": 0, "t_ms": 77})

    def deck_status(self, shoe_no: int, reason: int, integrity: int = 0) -> list[dict[str, Any]]:
        return self.frame({"type": "DECK_STATUS", "shoe_no": shoe_no, "deck_id": DECK, "reason": reason,
                           "dealt": 0, "remaining": 52, "integrity": integrity, "duplicates": 0, "foreign": 0,
                           "unread": 0, "missing": 52 if integrity & 8 else 0, "missing_map": "ff" * 7})

    def dealing_round(self) -> str:
        rid = str(self.input({"action": "open_round"}).round_id)
        done = self.input({"action": "op", "round_id": rid,
                           "op": operation_to_json(PlaceWager(seat=1, wager="ante", amount=1000))})
        assert done.refused is None
        done = self.input({"action": "op", "round_id": rid, "op": operation_to_json(NoMoreBets())})
        assert done.refused is None and self.core.rounds[rid].status is RoundStatus.DEALING
        return rid


def types(events: list[dict[str, Any]]) -> list[str]:
    return [str(e["type"]) for e in events]


def test_a_journal_with_no_session_places_no_card_of_the_shoes_session_and_refers_it() -> None:
    """The ACK-suppression replay's core: a new journal meets the shoe in another journal's
    session (its cards released by an attacker, or a shoe never reloaded)."""
    t = Feeder()
    rid = t.dealing_round()
    first = t.card(41, 9, HANDS[0])
    assert types(first) == ["shoe_session_foreign", "card_from_foreign_session"]
    referral, card = first
    assert referral["shoe_no"] == 41 and referral["rule"] == "6.1" and referral["decision"] == "referred"
    assert "load a new shoe" in referral["detail"] and referral["journal_shoe_no"] is None
    assert referral["round_open"] == rid or referral["after_round"] is None
    assert card["index"] == 9 and card["decision"] == "referred" and card["rules"] == ["6.1"]
    assert card["evidence"][0]["code"] == parse_card(HANDS[0]) and card["evidence"][0]["reader_id"] == "r9"
    # The next cards of it: one referral each, the session's referral once.
    for i, text in enumerate(HANDS[1:], 10):
        assert types(t.card(41, i, text)) == ["card_from_foreign_session"]
    assert t.core.rounds[rid].placements == {}
    assert t.core.shoes[SHOE].foreign == 41 and t.core.shoes[SHOE].shoe_no == 0


def test_keys_and_deck_reports_of_another_session_touch_no_round() -> None:
    t = Feeder()
    t.input({"action": "shoe_loaded", "shoe": SHOE, "shoe_no": 5, "deck_id": DECK})
    rid = t.dealing_round()
    t.card(5, 1, HANDS[0])
    assert list(t.core.rounds[rid].placements) == [1]
    assert types(t.hello(41, 20, boot=2)) == ["shoe_hello", "shoe_session_foreign"]
    # The deal-complete key of that session would close this round's deal on one card.
    assert types(t.key(2)) == ["shoe_key", "key_from_foreign_session"]
    # Its end-of-shoe report of missing cards would void this round (5.1, 5.8).
    assert types(t.deck_status(41, 3, integrity=8)) == ["deck_status"]
    round_ = t.core.rounds[rid]
    assert round_.void is None and not round_.irregularities and list(round_.placements) == [1]


def test_a_key_before_the_journals_first_session_is_referred_not_applied() -> None:
    t = Feeder()
    rid = t.dealing_round()
    out = t.key(3)  # an exposure key: would be an exposure of this round (5.4)
    assert types(out) == ["shoe_key", "key_from_foreign_session"]
    assert out[1]["shoe_no"] is None and out[1]["decision"] == "referred"
    assert not t.core.rounds[rid].exposures


@pytest.mark.parametrize("first", ["reply", "deck_status", "card"])
def test_the_journals_own_session_starts_at_the_first_frame_naming_it(first: str) -> None:
    t = Feeder()
    rid = t.dealing_round()
    t.input({"action": "shoe_loading", "shoe": SHOE, "shoe_no": 77, "deck_id": DECK})
    if first == "reply":
        out = [d.body for d in t.input({"action": "shoe_loaded", "shoe": SHOE, "shoe_no": 77,
                                         "deck_id": DECK}).derived]
    elif first == "deck_status":
        out = t.deck_status(77, 1)
    else:
        out = t.card(77, 1, HANDS[0])
    assert "shoe_loaded" in types(out) and "shoe_session_foreign" not in types(out)
    for i, text in enumerate(HANDS, 1):
        if not (first == "card" and i == 1):
            t.card(77, i, text)
    snap = t.core.rounds[rid]
    assert sorted(snap.placements) == [1, 2, 3, 4, 5, 6]
    assert t.core.shoes[SHOE].loading == (0, 0) and t.core.shoes[SHOE].foreign == 0


def test_a_hello_naming_the_session_being_loaded_starts_it_and_asks_for_its_cards() -> None:
    """SPEC 4: the NEW_SHOE ran, its REPLY was lost across a shoe reboot; the HELLO names it."""
    t = Feeder()
    t.input({"action": "shoe_loading", "shoe": SHOE, "shoe_no": 77, "deck_id": DECK})
    out = t.hello(77, 3, boot=4)
    assert types(out) == ["shoe_hello", "shoe_loaded", "cards_requested"]
    assert out[1]["reconciled"] == "hello" and out[1]["shoe_no"] == 77
    assert out[2]["from_index"] == 1 and out[2]["shoe_no"] == 77 and out[2]["dealt"] == 3
    # Another deck under that number is not the load this journal sent: not its session.
    t2 = Feeder()
    t2.input({"action": "shoe_loading", "shoe": SHOE, "shoe_no": 77, "deck_id": DECK + 1})
    assert types(t2.hello(77, 3)) == ["shoe_hello", "shoe_session_foreign"]


def test_loading_the_journals_own_shoe_clears_the_foreign_session() -> None:
    t = Feeder()
    rid = t.dealing_round()
    t.card(41, 9, HANDS[0])
    t.input({"action": "shoe_loading", "shoe": SHOE, "shoe_no": 78, "deck_id": DECK})
    t.input({"action": "shoe_loaded", "shoe": SHOE, "shoe_no": 78, "deck_id": DECK})
    assert t.core.shoes[SHOE].foreign == 0 and t.core.shoes[SHOE].ours()
    for i, text in enumerate(HANDS, 1):
        assert "card_from_foreign_session" not in types(t.card(78, i, text))
    assert sorted(t.core.rounds[rid].placements) == [1, 2, 3, 4, 5, 6]
    # A card of the old foreign session now (a very late frame) is still placed nowhere.
    assert "card_from_foreign_session" in types(t.card(41, 15, "3s"))


def test_a_core_checkpointed_before_sessions_were_owned_keeps_its_session() -> None:
    """A table upgraded mid-shoe starts from a checkpoint whose ShoeSession has no `loading` or
    `foreign`: the session it holds is its own (it was loaded, or adopted, by that journal)."""
    session = ShoeSession(shoe_no=3, deck_id=DECK, next_index=5)
    del session.__dict__["loading"], session.__dict__["foreign"]
    old = pickle.loads(pickle.dumps(session))
    assert old.loading == (0, 0) and old.foreign == 0 and old.ours()


def test_round_ids_carry_the_journals_scope_and_an_old_journal_keeps_its_ids() -> None:
    scoped = Feeder(scope="1a2b3c4d")
    assert scoped.input({"action": "open_round"}).round_id == "T-1a2b3c4d-000001"
    old = Feeder()
    assert old.input({"action": "open_round"}).round_id == "T-000001"
    # The scope comes with the journal's setup input, replayed as journaled.
    t = Feeder()
    done = t.input({"action": "setup", "name": "T9", "game": TCP, "seats": 7, "dealing": "automated",
                    "method": None, "limits": {}, "jackpot_reset": None, "round_scope": "20250301"})
    assert done.refused is None and done.derived[0].body["round_scope"] == "20250301"
    assert t.input({"action": "open_round"}).round_id == "T9-20250301-000001"
    legacy = t.input({"action": "setup", "name": "T9", "game": TCP, "seats": 7, "dealing": "automated",
                      "method": None, "limits": {}, "jackpot_reset": None})
    assert "round_scope" not in legacy.derived[0].body  # an old journal's setup event, byte for byte
    for bad in ("", "a/b", "x" * 17, "a-b", 12):
        refused = t.input({"action": "setup", "name": "T9", "game": TCP, "seats": 7, "dealing": "automated",
                           "method": None, "limits": {}, "jackpot_reset": None, "round_scope": bad})
        assert refused.refused is not None and "round_scope" in str(refused.refused), bad


@pytest.mark.parametrize("version", [1, 2])
def test_a_journal_written_before_sessions_were_owned_replays_its_adoption_as_written(version: int) -> None:
    """A setup of `core_version` below 3 (journaled by an older daemon) is played by the rules
    of that time: a session met in a HELLO or a card was adopted, so its replay reproduces what
    that daemon journaled (docs/api.md, "The journal and replay")."""
    t = Feeder()
    done = t.input({"action": "setup", "name": "T", "game": TCP, "seats": 7, "dealing": "automated", "method": None,
                    "limits": LIMITS_JSON, "jackpot_reset": None,
                    **({"core_version": version} if version > 1 else {})})
    assert done.refused is None and not t.core.setup.owns_sessions
    rid = t.dealing_round()
    assert types(t.hello(41, 2)) == ["shoe_hello", "shoe_session_adopted"]
    assert "card_placed" in types(t.card(41, 3, HANDS[0]))
    assert types(t.card(42, 1, HANDS[1])) == ["card_from_other_session"]
    assert list(t.core.rounds[rid].placements) == [3]
    # The next start journals a setup of this version: from there on, sessions are owned.
    t.input({"action": "setup", "name": "T", "game": TCP, "seats": 7, "dealing": "automated", "method": None,
             "limits": LIMITS_JSON, "jackpot_reset": None, "core_version": 3})
    assert types(t.hello(43, 0, boot=2)) == ["shoe_hello", "shoe_session_foreign"]
