"""The shipped scenario files: they parse, and together they cover every game, every dealing
procedure and every irregularity rule the daemon applies (checked from the files, by rule number)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardshoe.hil.runner import Refused, RoundOutcome, check_round
from cardshoe.hil.scenario import GAMES, ScenarioError, load_scenario, parse_scenario, parse_step, shipped_scenarios

SCENARIOS = [load_scenario(p) for p in shipped_scenarios()]


def test_every_shipped_scenario_parses_and_says_what_must_come_out() -> None:
    assert len(SCENARIOS) >= 30
    for s in SCENARIOS:
        assert s.about, s.name
        for r in s.rounds:
            e = r.expect
            assert e.void is not None and e.flags is not None, f"{s.name}: expectations for void and flags"
            assert e.net is not None or e.outcomes is not None, f"{s.name}: expected settlement"


def test_every_game_and_dealing_procedure_has_a_clean_round() -> None:
    clean = {(s.game, s.dealing, s.method) for s in SCENARIOS
             if all(r.expect.void is False and r.expect.flags == () for r in s.rounds)}
    for game in GAMES:
        assert (game, "automated", None) in clean or game == "megalink-three-card-poker-xtreme", game
    for proc in [("three-card-poker", "manual", None), ("megalink-three-card-poker", "manual", None),
                 ("megalink-three-card-poker-xtreme", "automated", "A"),
                 ("megalink-three-card-poker-xtreme", "automated", "B"),
                 ("megalink-three-card-poker-xtreme", "automated", "C"),
                 ("megalink-three-card-poker-xtreme", "manual", None),
                 ("megalink-singapore-stud-poker", "manual", None)]:
        assert proc in clean, proc


def test_every_irregularity_rule_and_fault_is_exercised() -> None:
    flags = {(f.kind, rule) for s in SCENARIOS for r in s.rounds for f in (r.expect.flags or ()) for rule in f.rules}
    # TCP family: 5.1 deck, 5.3 dealer/community count, 5.4 two exposures, 5.7 seat count, 6.1 referral;
    # Let It Ride: 5.3 seat count (no per-seat removal), 5.5 exposures.
    for want in [("deck", "5.1"), ("deck", "5.8"), ("too_few_cards", "5.3"), ("too_few_cards", "5.7"),
                 ("card_not_due", "5.7"), ("exposures_during_deal", "5.4"), ("exposures_during_deal", "5.5"),
                 ("exposure", "6.1"), ("card_not_due", "5.2")]:
        assert want in flags, want
    decided = {(f.kind, f.decision) for s in SCENARIOS for r in s.rounds for f in (r.expect.flags or ())}
    assert ("card_not_due", "reconstructed") in decided  # 5.2, confirmed by a supervisor
    rounds = [(s, r) for s in SCENARIOS for r in s.rounds]
    # 5.7 on a manual device: the supervisor picks one of several placements.
    assert any(s.dealing == "manual" and r.candidate is not None for s, r in rounds)
    # 5.11: an absent player's wagers returned.
    assert any(r.absent and all((r.expect.outcomes or {}).get(seat) for seat in r.absent) for _s, r in rounds)
    # 5.5-5.6: wagers placed, raised and withdrawn after no more bets, each refused naming the rule.
    late = [r for _s, r in rounds if r.late_wagers]
    assert late and any(w.change and w.amount == 0 for r in late for w in r.late_wagers)
    assert all(r.expect.refusals is not None and len(r.expect.refusals) == len(r.late_wagers)
               and all(x.rule == "5.5-5.6" for x in r.expect.refusals) for r in late)
    # 5.12.2: a seat with only a progressive wager, returned.
    assert any(set(w) == {"progressive"} and (r.expect.outcomes or {}).get(seat, {}).get("progressive") == "returned"
               for _s, r in rounds for seat, w in r.wagers.items())
    faults = {f.fault for s in SCENARIOS for r in s.rounds for f in (r.expect.flags or ()) if f.fault}
    assert {"foreign", "duplicate", "unread"} <= faults
    steps = {st.kind for s in SCENARIOS for r in s.rounds for st in r.deal}
    assert {"misread", "double", "unread", "foreign", "jam", "power_cut", "unplug", "restart", "garbage",
            "expose"} <= steps
    assert any(s.line is not None and s.line.corrupt > 0 and s.line.drop_frames > 0 for s in SCENARIOS)


@pytest.mark.parametrize("text, field", [
    ("10d", "deal"), ("!explode", "unknown bench step"), ("weird:Ah", "unknown card kind"), ("", "deal"),
])
def test_a_bad_deal_entry_names_what_is_wrong(text: str, field: str) -> None:
    with pytest.raises(ScenarioError, match=field):
        parse_step(text)


def test_a_bad_scenario_names_the_field(tmp_path: Path) -> None:
    base = {"name": "x", "game": "three-card-poker", "round": [{"wagers": {"2": {"ante": 100}}, "deal": ["Ah"]}]}
    with pytest.raises(ScenarioError, match="game"):
        parse_scenario({**base, "game": "blackjack"})
    with pytest.raises(ScenarioError, match=r"round\[0\].wagers.2.ante"):
        parse_scenario({**base, "round": [{"wagers": {"2": {"ante": 1.5}}}]})
    with pytest.raises(ScenarioError, match="method"):
        parse_scenario({**base, "method": "A"})
    with pytest.raises(ScenarioError, match=r"round\[0\].candidate"):
        parse_scenario({**base, "round": [{"confirm": True, "candidate": {"pass": 2}}]})
    with pytest.raises(ScenarioError, match=r"round\[0\].candidate: .*set confirm"):
        parse_scenario({**base, "round": [{"candidate": 2}]})
    with pytest.raises(ScenarioError, match=r"round\[0\].absent\[0\]"):
        parse_scenario({**base, "round": [{"absent": [9]}]})
    with pytest.raises(ScenarioError, match=r"round\[0\].late_wagers\[0\].amount"):
        parse_scenario({**base, "round": [{"late_wagers": [{"seat": 2, "wager": "ante", "amount": -5}]}]})
    with pytest.raises(ScenarioError, match=r"round\[0\].late_wagers\[0\]"):
        parse_scenario({**base, "round": [{"late_wagers": [{"seat": 2, "wager": "ante", "amount": 5, "when": 1}]}]})
    with pytest.raises(ScenarioError, match=r"round\[0\].expect.refusals\[0\]"):
        parse_scenario({**base, "round": [{"expect": {"refusals": [{"rule": "5.5-5.6"}]}}]})
    with pytest.raises(ScenarioError, match=r"round\[0\].jackpot_pool"):
        parse_scenario({**base, "round": [{"jackpot_pool": 1.5}]})
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="bad.toml"):
        load_scenario(bad)


def test_the_supervisor_and_table_keys_parse() -> None:
    scenario = parse_scenario({"name": "x", "game": "three-card-poker", "round": [{
        "wagers": {"2": {"ante": 100}}, "confirm": True, "candidate": {"slip_pass": 2}, "absent": [5],
        "late_wagers": [{"seat": 2, "wager": "ante", "amount": 500, "change": True}, {"seat": 3, "wager": "ante",
                                                                                   "amount": 100}],
        "jackpot_pool": 1000, "expect": {"refusals": [{"status": 409, "rule": "5.5-5.6"}, {"status": 409}]}}]})
    [r] = scenario.rounds
    assert r.candidate == {"slip_pass": 2} and r.absent == (5,) and r.jackpot_pool == 1000
    assert [(w.seat, w.amount, w.change) for w in r.late_wagers] == [(2, 500, True), (3, 100, False)]
    assert r.expect.refusals is not None
    assert [(x.status, x.rule) for x in r.expect.refusals] == [(409, "5.5-5.6"), (409, None)]


def test_refusals_are_checked_exactly_and_in_order() -> None:
    scenario = parse_scenario({"name": "x", "game": "three-card-poker", "round": [{
        "settle": False, "expect": {"refusals": [{"status": 409, "rule": "5.5-5.6", "error": "WagersClosedError"}]}}]})
    [spec] = scenario.rounds
    closed = Refused("PUT /rounds/r/wagers/2/ante", 409, "5.5-5.6", "WagersClosedError")
    assert check_round(spec, RoundOutcome("r", refused=[closed])) == []
    [missing] = check_round(spec, RoundOutcome("r", refused=[]))
    assert "refused only 0" in missing
    other = Refused("POST /rounds/r/wagers", 409, None, "WrongStateError")
    [wrong] = check_round(spec, RoundOutcome("r", refused=[other]))
    assert "expected 409 rule 5.5-5.6" in wrong and "WrongStateError" in wrong
    [extra] = check_round(spec, RoundOutcome("r", refused=[closed, other]))[-1:]
    assert extra.startswith("unexpected refusal POST /rounds/r/wagers: 409")


# --- scenario files that cannot lie (issue 11 item 5) -----------------------------------------

_BASE: dict[str, object] = {"name": "x", "game": "three-card-poker",
                            "round": [{"wagers": {"2": {"ante": 100}}, "deal": ["Ah"]}]}


def _round(**keys: object) -> dict[str, object]:
    return {**_BASE, "round": [{"wagers": {"2": {"ante": 100}}, "deal": ["Ah"], **keys}]}


@pytest.mark.parametrize("data, where", [
    ({**_BASE, "sead": 1}, r"^sead: unknown key"),
    ({**_BASE, "line": {"corupt": 0.1}}, r"^line.corupt: unknown key"),
    (_round(expected={"void": False}), r"^round\[0\].expected: unknown key"),
    (_round(desicions=[]), r"^round\[0\].desicions: unknown key"),
    (_round(expect={"hand": {}}), r"^round\[0\].expect.hand: unknown key"),
    (_round(expect={"flags": [{"kind": "deck", "rule": ["5.1"]}]}), r"^round\[0\].expect.flags\[0\].rule: unknown key"),
    (_round(exposures=[{"shoe_index": 2, "seat": 1}]), r"^round\[0\].exposures\[0\]"),
    (_round(counts=[{"position": "seat 2", "count": 2, "by": "x"}]), r"^round\[0\].counts\[0\]"),
    (_round(progressive={"magic": "2s"}), r"^round\[0\].progressive.magic: unknown key"),
])
def test_an_unknown_key_anywhere_is_an_error_naming_it(data: dict[str, object], where: str) -> None:
    with pytest.raises(ScenarioError, match=where):
        parse_scenario(data)


@pytest.mark.parametrize("label", ["Seat 1", "seat1", "Dealer", "seat 8", "seat 0", "seat 01", "player 2", " dealer"])
def test_a_position_name_the_daemon_does_not_use_is_refused(label: str) -> None:
    with pytest.raises(ScenarioError, match="is not a position"):
        parse_scenario(_round(expect={"hands": {label: ["Ah"]}}))
    with pytest.raises(ScenarioError, match="is not a position"):
        parse_scenario(_round(counts=[{"position": label, "count": 2}]))


def test_good_position_names_flag_kinds_and_the_new_steps_parse() -> None:
    s = parse_scenario(_round(new_shoe=True, after_settle=["5c"],
                              expect={"hands": {"seat 7": [], "dealer": [], "community": [], "discard": []},
                                      "flags": [{"kind": "not_covered", "rules": ["6.1"]}]}))
    [r] = s.rounds
    assert r.new_shoe is True and [st.text for st in r.after_settle] == ["5c"]
    with pytest.raises(ScenarioError, match=r"flags\[0\].kind"):
        parse_scenario(_round(expect={"flags": [{"kind": "decks", "rules": ["5.1"]}]}))
    with pytest.raises(ScenarioError, match=r"expect.void"):
        parse_scenario(_round(expect={"void": True}))
    with pytest.raises(ScenarioError, match=r"outcomes.2"):
        parse_scenario(_round(expect={"outcomes": {"2": {"ante": "won"}}}))
    with pytest.raises(ScenarioError, match=r"new_shoe"):
        parse_scenario(_round(new_shoe="yes"))
    with pytest.raises(ScenarioError, match=r"^name: "):
        parse_scenario({**_BASE, "name": "../etc"})


def test_two_scenarios_with_one_name_get_two_work_folders() -> None:
    from cardshoe.hil.runcmd import scenario_folders

    a = parse_scenario({**_BASE, "name": "tcp-jam"})
    b = parse_scenario({**_BASE, "name": "tcp-jam"})
    c = parse_scenario({**_BASE, "name": "_image"})
    assert scenario_folders([a, b, c, a]) == ["tcp-jam", "tcp-jam-2", "_image-2", "tcp-jam-3"]
