"""End to end, for each of the five games and each dealing procedure: the firmware's codec
on a real pseudo-terminal, the daemon placing each card by the game's procedure, the table
API for wagers and decisions, and the settlement.

The expected places are written here from the rules' dealing text (cited per case), not
taken from the daemon's procedure tables, so a wrong procedure fails. The settlement must
equal `cardshoe settle` of the round exported from the journal (`cardshoe replay --export`),
and `cardshoe replay` must reproduce every event and settlement byte for byte.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from dataclasses import dataclass, field

import pytest
from daemon_harness import Table

from cardshoe.cards import parse_card
from cardshoe.journal import replay as replay_cli
from cardshoe.settlement import cli as settle_cli
from cardshoe.settlement import parse_round, settle

TCP, MTCP, XTREME = "three-card-poker", "megalink-three-card-poker", "megalink-three-card-poker-xtreme"
LIR, STUD = "megalink-let-it-ride", "megalink-singapore-stud-poker"

# Seat 2 holds a strong hand and plays; seat 5 a weak one and folds (or pulls back).
S2 = ["Ah", "Kh", "Qh"]
S5 = ["2c", "7d", "9s"]
DEALER = ["Jc", "Jd", "4s"]
COMM = ["3h", "8c"]
BURN = ["5s"]
SECURITY = ["6d"]


def rr(*hands: list[str]) -> list[str]:
    """Manual device: one card at a time round the table (rule 3.8)."""
    return [h[i] for i in range(len(hands[0])) for h in hands]


@dataclass
class Case:
    id: str
    game: str
    dealing: str
    method: str | None
    deal: list[str]                      # shoe order of the first phase
    expect: dict[str, list[str]]         # hands by position label
    wagers: dict[int, dict[str, int]]
    decisions: list[tuple[int, str]]
    after_decisions: list[str] = field(default_factory=list)  # Xtreme B: the dealer's hand
    out_of_play: dict[str, list[str]] = field(default_factory=dict)
    losing_seat_net: int = -1000


TCP_WAGERS = {2: {"ante": 1000, "pair_plus": 500}, 5: {"ante": 1000}}
TCP_DECISIONS = [(2, "play"), (5, "fold")]
S5_5 = ["2c", "7d", "9s", "3c", "5h"]
S2_5 = ["Ah", "Ad", "Kh", "Ks", "Qc"]
D_5 = ["Jc", "Jd", "4s", "8h", "Tc"]

CASES = [
    # TCP 3.7: three to each wagered position from the dealer's left, then three to the dealer.
    Case("tcp-automated", TCP, "automated", None, S2 + S5 + DEALER,
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER}, TCP_WAGERS, TCP_DECISIONS),
    # TCP 3.8: one card at a time round the table, the dealer last in each round.
    Case("tcp-manual", TCP, "manual", None, rr(S2, S5, DEALER),
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER}, TCP_WAGERS, TCP_DECISIONS),
    # Megalink TCP 3.7: seats, dealer, then three community cards, the third burned.
    Case("megalink-automated", MTCP, "automated", None, S2 + S5 + DEALER + COMM + BURN,
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER, "community": COMM}, TCP_WAGERS, TCP_DECISIONS,
         out_of_play={"burn": BURN}),
    # Megalink TCP 3.8: round the table three times, then two community cards (no burn).
    Case("megalink-manual", MTCP, "manual", None, rr(S2, S5, DEALER) + COMM,
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER, "community": COMM}, TCP_WAGERS, TCP_DECISIONS),
    # Xtreme 3.7.1 method A: seats, dealer, three community cards with the third burned.
    Case("xtreme-A", XTREME, "automated", "A", S2 + S5 + DEALER + COMM + BURN,
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER, "community": COMM}, TCP_WAGERS, TCP_DECISIONS,
         out_of_play={"burn": BURN}),
    # Xtreme 3.7.2 method B: seats, community (third burned); the dealer's hand after decisions.
    Case("xtreme-B", XTREME, "automated", "B", S2 + S5 + COMM + BURN,
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER, "community": COMM}, TCP_WAGERS, TCP_DECISIONS,
         after_decisions=DEALER, out_of_play={"burn": BURN}),
    # Xtreme 3.7.3 method C: the dealer's three with a security card under them first, then
    # the seats, then the community cards (third burned).
    Case("xtreme-C", XTREME, "automated", "C", SECURITY + DEALER + S2 + S5 + COMM + BURN,
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER, "community": COMM}, TCP_WAGERS, TCP_DECISIONS,
         out_of_play={"security": SECURITY, "burn": BURN}),
    # Xtreme 3.8 manual: round the table three times, then two community cards.
    Case("xtreme-manual", XTREME, "manual", None, rr(S2, S5, DEALER) + COMM,
         {"seat 2": S2, "seat 5": S5, "dealer": DEALER, "community": COMM}, TCP_WAGERS, TCP_DECISIONS),
    # Let It Ride 3.6-3.7: three to each wagered position, then two community cards; no dealer hand.
    Case("let-it-ride", LIR, "automated", None, S2 + S5 + ["Jh", "Th"],
         {"seat 2": S2, "seat 5": S5, "community": ["Jh", "Th"]},
         {2: {"one": 500, "two": 500, "dollar": 500}, 5: {"one": 500, "two": 500, "dollar": 500}},
         [(2, "ride_1"), (5, "pull_1"), (2, "ride_2"), (5, "pull_2")], losing_seat_net=-500),
    # Let It Ride on a manual device: 3.6 is the document's only dealing rule (no manual 3.8),
    # so three to each wagered position as on the automated device, then the two community cards.
    Case("let-it-ride-manual", LIR, "manual", None, S2 + S5 + ["Jh", "Th"],
         {"seat 2": S2, "seat 5": S5, "community": ["Jh", "Th"]},
         {2: {"one": 500, "two": 500, "dollar": 500}, 5: {"one": 500, "two": 500, "dollar": 500}},
         [(2, "ride_1"), (5, "pull_1"), (2, "ride_2"), (5, "pull_2")], losing_seat_net=-500),
    # Stud 3.7: five to each wagered position, then five to the dealer (the last one exposed).
    Case("stud-automated", STUD, "automated", None, S2_5 + S5_5 + D_5,
         {"seat 2": S2_5, "seat 5": S5_5, "dealer": D_5}, {2: {"ante": 1000}, 5: {"ante": 1000}},
         [(2, "bet"), (5, "fold")]),
    # Stud 3.8: one card at a time round the table, five times.
    Case("stud-manual", STUD, "manual", None, rr(S2_5, S5_5, D_5),
         {"seat 2": S2_5, "seat 5": S5_5, "dealer": D_5}, {2: {"ante": 1000}, 5: {"ante": 1000}},
         [(2, "bet"), (5, "fold")]),
]


def codes(texts: list[str]) -> list[int]:
    return [parse_card(t) for t in texts]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_round_is_dealt_placed_by_seat_and_settled(make_table, case: Case) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(case.game, 7, dealing=case.dealing, method=case.method)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    for seat, wagers in case.wagers.items():
        for wager, amount in wagers.items():
            table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": wager, "amount": amount})
    if case.game == LIR:
        table.ok("POST", f"/rounds/{rid}/progressive", json={"magic_card": "2s", "lucky_seat": 7})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal(codes(case.deal))
    table.shoe.key_press(2)  # DEAL_COMPLETE from the shoe's key
    table.shoe.wait_acked()
    for seat, choice in case.decisions:
        table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": seat, "choice": choice})
    if case.after_decisions:
        table.deal(codes(case.after_decisions))
    done = table.ok("POST", f"/rounds/{rid}/settle", json={})
    snap = table.round(rid)

    # Hands by position, exactly.
    for label, cards in case.expect.items():
        assert snap["hands"][label] == list(cards), label
    assert snap["burns"] == list(case.out_of_play.get("burn", []))
    assert snap["security"] == list(case.out_of_play.get("security", []))
    assert snap["status"] == "settled" and snap["void"] is None
    assert not snap["irregularities"]

    # The settlement: the daemon's equals `cardshoe settle` of the exported round.
    settlement = done["settlement"]
    exported = table.ok("GET", f"/rounds/{rid}/export")
    assert settle(parse_round(exported)).to_json() == settlement
    seats = {s["seat"]: s for s in settlement["seats"]}
    assert seats[5]["net"] == case.losing_seat_net
    assert seats[2]["net"] > 0
    assert settlement["void"] is None

    # The journal alone rebuilds the same round and settlement, byte for byte.
    table.kill_daemon()
    out = io.StringIO()
    with redirect_stdout(out):
        status = replay_cli.main([str(table.config.journal), "--json"])
    report = json.loads(out.getvalue())
    assert status == 0 and report["ok"], report["mismatches"]
    assert report["settlements"][rid]["settlement"] == done["settlement"]  # the journal's entry holds it
    out = io.StringIO()
    with redirect_stdout(out):
        assert replay_cli.main([str(table.config.journal), "--export", rid]) == 0
    assert json.loads(out.getvalue()) == exported
    # `cardshoe settle` of the round exported from the journal prints the daemon's settlement.
    round_file = table.tmp_path / "round.json"
    round_file.write_text(out.getvalue())
    settled = io.StringIO()
    with redirect_stdout(settled):
        assert settle_cli.main([str(round_file)]) == 0
    assert json.loads(settled.getvalue()) == settlement
    table.start_daemon()
