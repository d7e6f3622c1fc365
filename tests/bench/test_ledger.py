"""The bench's own ledger: its dealing model (written here again from the rule documents, by
rule number), and its card-by-card comparison with the daemon, fed rounds that are wrong in
one way each (issue 11 item 1; issue 16's bench rows). No board: pure data."""

from __future__ import annotations

from typing import Any

import pytest

from cardshoe.cards import card_text, parse_card
from cardshoe.hil.ledger import (Dealt, LedgerError, RoundLedger, compare, dealing_order, dealt_seats, money,
                                 round_file)
from cardshoe.settlement import parse_round, settle


def _labels(slots: list[Any]) -> list[str]:
    return [s.label() for s in slots]


S2, S5, D, C, B = "seat 2", "seat 5", "dealer", "community", "burn"


@pytest.mark.parametrize("game, dealing, method, deal, after", [
    # TCP 3.7: three to each wagered position from the dealer's left, then three to the dealer.
    ("three-card-poker", "automated", None, [S2, S2, S2, S5, S5, S5, D, D, D], []),
    # TCP 3.8: one card to each position and the dealer, three times round.
    ("three-card-poker", "manual", None, [S2, S5, D, S2, S5, D, S2, S5, D], []),
    # MTCP 3.7: as TCP, then three community cards, the third (top) burned.
    ("megalink-three-card-poker", "automated", None, [S2, S2, S2, S5, S5, S5, D, D, D, C, C, B], []),
    # MTCP 3.8: the passes, then two community cards.
    ("megalink-three-card-poker", "manual", None, [S2, S5, D, S2, S5, D, S2, S5, D, C, C], []),
    # XT 3.7.1.1 method A: as MTCP automated.
    ("megalink-three-card-poker-xtreme", "automated", "A", [S2, S2, S2, S5, S5, S5, D, D, D, C, C, B], []),
    # XT 3.7.2.1 method B: seats, community with the burn; the dealer's three after the decisions.
    ("megalink-three-card-poker-xtreme", "automated", "B", [S2, S2, S2, S5, S5, S5, C, C, B], [D, D, D]),
    # XT 3.7.3.1 method C: the security card first (the bottom of the dealer's pile), the dealer's
    # three, the seats, the community with the burn.
    ("megalink-three-card-poker-xtreme", "automated", "C",
     ["security", D, D, D, S2, S2, S2, S5, S5, S5, C, C, B], []),
    # XT 3.8: passes, two community cards.
    ("megalink-three-card-poker-xtreme", "manual", None, [S2, S5, D, S2, S5, D, S2, S5, D, C, C], []),
    # LIR 3.6-3.7: three to each betting area, no dealer's hand, two community cards.
    ("megalink-let-it-ride", "automated", None, [S2, S2, S2, S5, S5, S5, C, C], []),
    # LIR has no manual-device rule: 3.6 applies to any device.
    ("megalink-let-it-ride", "manual", None, [S2, S2, S2, S5, S5, S5, C, C], []),
    # SSP 3.7: five to each position, five to the dealer; 3.8: five passes.
    ("megalink-singapore-stud-poker", "automated", None, [S2] * 5 + [S5] * 5 + [D] * 5, []),
    ("megalink-singapore-stud-poker", "manual", None, [S2, S5, D] * 5, []),
])
def test_the_dealing_model_follows_the_rules(game: str, dealing: str, method: str | None, deal: list[str],
                                             after: list[str]) -> None:
    got_deal, got_after = dealing_order(game, dealing, method, [5, 2])
    assert (_labels(got_deal), _labels(got_after)) == (deal, after)


def test_only_seats_with_a_base_wager_are_dealt_to() -> None:
    # 3.7 "each playing position containing a wager": a progressive alone is not one (5.12.2).
    assert dealt_seats("three-card-poker", {1: {"progressive": 100}, 3: {"pair_plus": 500}, 6: {"ante": 100}}) == [3, 6]
    assert dealt_seats("megalink-let-it-ride", {2: {"one": 100, "two": 100, "dollar": 100}, 4: {"progressive": 1}}) == [2]
    with pytest.raises(LedgerError, match="method"):
        dealing_order("megalink-three-card-poker-xtreme", "automated", None, [1])
    with pytest.raises(LedgerError, match="blackjack"):
        dealing_order("blackjack", "automated", None, [1])


# --- the comparison, fed rounds that are wrong in one way each -------------------------------

CARDS = [parse_card(c) for c in ("Ah", "Kh", "Qh", "2c", "7d", "9s", "Jc", "Jd", "4s")]
PLACES = [{"kind": "seat", "seat": 2}] * 3 + [{"kind": "seat", "seat": 5}] * 3 + [{"kind": "dealer", "seat": 0}] * 3


def _ledger(during: str = "") -> RoundLedger:
    led = RoundLedger("r1", "three-card-poker", "automated", None, {2: {"ante": 1000}, 5: {"ante": 1000}})
    led.cards = [Dealt(order=i + 1, code=c, during=during) for i, c in enumerate(CARDS)]
    return led


def _snapshot(codes: list[int | None], places: list[dict[str, Any]] | None = None, *, first: int = 1,
              flags: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    places = places if places is not None else PLACES
    return {
        # As GET /rounds/{id} shows them: cards as text ("As"), null when unread.
        "cards": {str(first + i): {"card": None if c is None else card_text(c)} for i, c in enumerate(codes)},
        "placements": {str(first + i): {**p, "number": 1} for i, p in enumerate(places[:len(codes)])},
        "irregularities": flags or [], "void": None,
    }


def _journal(snapshot: dict[str, Any]) -> list[tuple[int, int | None, dict[str, Any]]]:
    return [(int(k), None if v["card"] is None else parse_card(v["card"]), snapshot["placements"].get(k, {"kind": "not_due"}))
            for k, v in sorted(snapshot["cards"].items(), key=lambda kv: int(kv[0]))]


def _kinds(found: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in found:
        out[f.kind] = out.get(f.kind, 0) + 1
    return out


def test_a_round_the_daemon_got_right_has_no_findings() -> None:
    snap = _snapshot(CARDS)
    assert compare(_ledger(), snap, _journal(snap)) == []


def test_a_lost_card_is_counted_once() -> None:
    # The shoe lost the 4th card: the daemon's later cards shift down one index.
    codes = CARDS[:3] + CARDS[4:]
    snap = _snapshot(codes, PLACES[:3] + PLACES[3:8])
    assert _kinds(compare(_ledger(), snap, _journal(snap))) == {"lost": 1}


def test_a_card_lost_in_a_power_cut_is_excused_only_when_the_daemon_flags_the_round() -> None:
    codes = CARDS[:8]
    unflagged = _snapshot(codes)
    assert _kinds(compare(_ledger("power_cut"), unflagged, _journal(unflagged))) == {"lost": 1}
    flagged = _snapshot(codes, flags=[{"kind": "not_covered", "rules": ["5.16", "6.1"]}])
    assert _kinds(compare(_ledger("power_cut"), flagged, _journal(flagged))) == {"lost_flagged": 1}
    # A flag does not excuse a card lost without a power cut.
    assert _kinds(compare(_ledger(), flagged, _journal(flagged))) == {"lost": 1}
    # The bench's own supervisor voiding the round afterwards (6.1) is not the daemon's flag.
    voided_by_bench = dict(unflagged, void={"rules": ["6.1"], "reason": "the bench's supervisor"},
                           irregularities=[{"kind": "not_covered", "rules": ["6.1"]}])
    assert _kinds(compare(_ledger("power_cut"), voided_by_bench, _journal(unflagged), flags_from=unflagged)) == \
        {"lost": 1}


def test_a_card_journaled_twice_is_a_repeat_the_duplicate_check_can_fail() -> None:
    snap = _snapshot(CARDS)
    journal = _journal(snap)
    journal.insert(5, journal[4])  # the same shoe index journaled again
    assert _kinds(compare(_ledger(), snap, journal)) == {"repeated": 1}


def test_a_card_shown_twice_under_two_indices_is_a_repeat_not_an_invention() -> None:
    codes = CARDS[:5] + [CARDS[4]] + CARDS[5:]
    snap = _snapshot(codes, PLACES + [{"kind": "not_due"}])
    assert _kinds(compare(_ledger(), snap, _journal(snap))) == {"repeated": 1}


def test_a_card_the_bench_never_dealt_is_invented() -> None:
    codes = CARDS + [parse_card("5c")]
    snap = _snapshot(codes, PLACES + [{"kind": "not_due"}])
    assert _kinds(compare(_ledger(), snap, _journal(snap))) == {"extra": 1}


def test_a_wrong_code_is_a_wrong_read() -> None:
    codes = list(CARDS)
    codes[6] = parse_card("5c")
    snap = _snapshot(codes)
    found = compare(_ledger(), snap, _journal(snap))
    assert _kinds(found) == {"wrong_read": 1}
    assert "the bench dealt Jc" in found[0].detail and "5c" in found[0].detail


def test_a_card_in_the_wrong_place_is_misplaced() -> None:
    places = list(PLACES)
    places[2], places[3] = places[3], places[2]  # seat 2's third card shown at seat 5, and back
    snap = _snapshot(CARDS, places)
    assert _kinds(compare(_ledger(), snap, _journal(snap))) == {"misplaced": 2}


def test_the_journal_and_the_api_must_agree() -> None:
    snap = _snapshot(CARDS)
    journal = _journal(snap)[:-1]  # the API shows a card the journal never recorded
    assert _kinds(compare(_ledger(), snap, journal)) == {"lost": 1}


def test_the_benchs_own_round_settles_and_money_compares_the_amounts() -> None:
    led = _ledger()
    led.decisions = {2: "play", 5: "fold"}
    limits = {w: {"min": 100, "max": 100000} for w in ("ante", "play", "progressive")}
    data = round_file(led, rules_version="5", currency="SGD", limits=limits)
    assert data["seats"][0]["cards"] == ["Ah", "Kh", "Qh"] and data["dealer"]["cards"] == ["Jc", "Jd", "4s"]
    offline = settle(parse_round(data)).to_json()
    mine = money(offline)
    assert mine["seats"][5]["net"] == -1000 and mine["seats"][2]["net"] > 0
    changed = dict(offline, seats=[dict(s, net=s["net"] + 1) if s["seat"] == 5 else s for s in offline["seats"]])
    assert money(changed) != mine


def test_a_supervisors_decision_goes_into_the_benchs_own_round() -> None:
    # 6.1: the shift manager's decision on a card lost in a power cut; the bench's round says so.
    limits = {w: {"min": 100, "max": 100000} for w in ("ante", "play", "progressive")}
    led = _ledger()
    led.decisions = {2: "play", 5: "fold"}
    led.supervisor_returns = (5,)
    seats = {s["seat"]: s for s in settle(parse_round(round_file(led, rules_version="5", currency="SGD",
                                                                 limits=limits))).to_json()["seats"]}
    assert seats[5]["net"] == 0 and seats[2]["net"] > 0
    led.supervisor_void = "6.1"
    voided = settle(parse_round(round_file(led, rules_version="5", currency="SGD", limits=limits))).to_json()
    assert voided["void"] is not None and all(s["net"] == 0 for s in voided["seats"])


def test_the_ledger_and_the_soak_never_import_the_daemons_dealing_code() -> None:
    # Issue 11 item 1: the bench's model is its own, written from the rules, not cardshoe.rounds.
    import ast
    import importlib

    for name in ("cardshoe.hil.ledger", "cardshoe.hil.soak"):
        module = importlib.import_module(name)
        assert module.__file__ is not None
        tree = ast.parse(open(module.__file__, encoding="utf-8").read())
        imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not {m for m in imported if m.startswith(("cardshoe.rounds", "cardshoe.daemon"))}, (name, imported)
