"""The bench's round checks (`cardshoe.hil.runner.check_round`) fed failing rounds, one fault
each (issue 16, the rows about hil/runner.py): a lost shoe index, an invented one, a wrong
code, a settlement that differs from `cardshoe settle`, a card in a place the rules do not
give it, a position the expectation does not list, a settled round changed by a later card.
Expectations come from the docs (docs/bench.md "Always checked") and the rules, not from
the daemon. No board: the rounds are data."""

from __future__ import annotations

import copy
from typing import Any

from cardshoe.cards import parse_card
from cardshoe.hil.bench import TableSpec
from cardshoe.hil.runner import RoundOutcome, check_round
from cardshoe.hil.scenario import parse_scenario

CARDS = ["Ah", "Kh", "Qh", "2c", "7d", "9s", "Jc", "Jd", "4s"]
TCP = TableSpec("three-card-poker")
SETTLEMENT = {"seats": [{"seat": 2, "net": 2000, "wagers": []}, {"seat": 5, "net": -1000, "wagers": []}],
              "void": None}


def _spec(**expect: Any) -> Any:
    raw: dict[str, Any] = {"wagers": {"2": {"ante": 1000}, "5": {"ante": 1000}}, "deal": CARDS,
                           "decisions": [[2, "play"], [5, "fold"]],
                           "expect": {"void": False, "flags": [], **expect}}
    return parse_scenario({"name": "x", "game": "three-card-poker", "round": [raw]}).rounds[0]


def _good() -> RoundOutcome:
    codes = [parse_card(c) for c in CARDS]
    places = [("seat", 2)] * 3 + [("seat", 5)] * 3 + [("dealer", 0)] * 3
    snap = {  # as GET /rounds/{id} shows it: cards as text
        "cards": {str(i + 1): {"card": c} for i, c in enumerate(CARDS)},
        "placements": {str(i + 1): {"kind": k, "seat": s, "number": 1} for i, (k, s) in enumerate(places)},
        "hands": {"seat 2": CARDS[:3], "seat 5": CARDS[3:6], "dealer": CARDS[6:]},
        "irregularities": [], "void": None, "void_seats": {},
    }
    out = RoundOutcome("r1", dealt={i + 1: ("card", c) for i, c in enumerate(codes)}, snapshot=snap,
                       settlement=copy.deepcopy(SETTLEMENT), offline=copy.deepcopy(SETTLEMENT))
    return out


def test_a_good_round_passes_every_check() -> None:
    assert check_round(_spec(), _good(), TCP) == []


def test_a_lost_shoe_index_is_reported() -> None:
    out = _good()
    del out.snapshot["cards"]["4"]
    problems = check_round(_spec(), out, TCP)
    assert any("lost [4]" in p for p in problems), problems


def test_an_index_the_bench_never_dealt_is_reported() -> None:
    out = _good()
    out.snapshot["cards"]["10"] = {"card": "5c"}
    problems = check_round(_spec(), out, TCP)
    assert any("not dealt by the bench [10]" in p for p in problems), problems


def test_a_wrong_code_is_reported() -> None:
    out = _good()
    out.snapshot["cards"]["7"] = {"card": "5c"}
    problems = check_round(_spec(), out, TCP)
    assert any("shoe index 7: the bench dealt Jc (card), the daemon has 5c" in p for p in problems), problems


def test_a_settlement_that_differs_from_cardshoe_settle_is_reported() -> None:
    out = _good()
    assert out.offline is not None
    out.offline["seats"][1]["net"] = -500
    problems = check_round(_spec(), out, TCP)
    assert any("differs from `cardshoe settle`" in p for p in problems), problems
    none = _good()
    none.settlement = None
    assert any("the daemon gave no settlement" in p for p in check_round(_spec(), none, TCP))


def test_a_card_placed_where_the_rules_do_not_put_it_is_reported() -> None:
    # TCP 3.7: seat 2's three, then seat 5's; the daemon shows shoe card 3 at seat 5.
    out = _good()
    out.snapshot["placements"]["3"] = {"kind": "seat", "seat": 5, "number": 1}
    problems = check_round(_spec(), out, TCP)
    assert any("misplaced" in p and "the rules put it at seat 2, the daemon at seat 5" in p for p in problems), problems
    # Without the table the model is not applied (a scenario file's own expectations still are).
    assert check_round(_spec(), out) == []


def test_a_position_the_expectation_does_not_list_must_be_empty() -> None:
    out = _good()
    spec = _spec(hands={"seat 2": CARDS[:3], "dealer": CARDS[6:]})
    problems = check_round(spec, out, TCP)
    assert any("hand seat 5: not in the expectation, so it must be empty" in p for p in problems), problems


def test_a_card_after_the_settlement_must_not_change_the_settled_round() -> None:
    out = _good()
    out.after_settle = {10: ("card", parse_card("5c"))}
    out.snapshot_later = copy.deepcopy(out.snapshot)
    assert check_round(_spec(), out, TCP) == []
    out.snapshot_later["cards"]["10"] = {"card": "5c"}
    problems = check_round(_spec(), out, TCP)
    assert any("changed the settled round" in p for p in problems), problems
    assert any("shoe indices [10], dealt after the settlement, are in the settled round" in p for p in problems)
