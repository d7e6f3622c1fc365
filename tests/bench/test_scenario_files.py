"""The shipped scenario files: they parse, and together they cover every game, every dealing
procedure and every irregularity rule the daemon applies (checked from the files, by rule number)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
                 ("exposure", "6.1")]:
        assert want in flags, want
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
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="bad.toml"):
        load_scenario(bad)
