"""No input is accepted that the table cannot finish, and no round strands the table (issue 20
item 1), through the table API with the daemon's core, the shoe on a real pty where cards are
needed, the journal replayed after each.

Every refusal the settlement engine (`cardshoe.settlement.parse_round`/`settle`) can raise on a
round the daemon exports is driven here (the catalogue of every raise site, and why the others
cannot come from a daemon's export, is `test_every_refusal_of_the_engine_is_classified`):

- the stakes the engine refuses (a progressive not a whole number of minimum wagers, not an
  allowed multiple, over the maximum; rule reading 13: TCP/MTCP 3.5 exactly the minimum, XT/SSP
  3.5.3 one to five times it, LIR 3.5 any whole number of credits; 3.4 "within the minimum and
  maximum limits displayed at the table") are refused when the wager is placed or changed,
  409 naming the seat by its number and the rule;
- what only settlement can know (the jackpot pool, the Magic Card and Lucky Player, a table
  restarted with other limits or without its reset) is refused at the settle, the round stays
  in play, and a supervisor's void ends it for good;
- a void round is closed whatever its stakes: an empty round voided, a card drawn before any
  wager, a Let It Ride trio left incomplete; the next round opens.

Each case ends with the next round opening (`POST /rounds` 201) and taking a wager.
"""

from __future__ import annotations

import ast
import json
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import Table, journal

from cardshoe.cards import parse_card
from cardshoe.daemon.control import _refused as refusal_of
from cardshoe.daemon.core import Applied, StakeRefused, TableCore, TableSetup
from cardshoe.journal.replay import replay
from cardshoe.rounds import PlaceWager, VoidRound, operation_to_json

TCP = "three-card-poker"
MTCP = "megalink-three-card-poker"
XT = "megalink-three-card-poker-xtreme"
SSP = "megalink-singapore-stud-poker"
LIR = "megalink-let-it-ride"
RESET = 1_000_000
# `cardshoe run` gives every wager without configured limits min 100, max 10,000,000 (config).
DEFAULT_MIN = 100

# Seat 1 and seat 3 dealt by TCP 3.7 (three cards to each playing position from the dealer's
# left, then three to the dealer): seat 1 A-K-Q of hearts, seat 3 a pair of twos with a nine,
# the dealer jack high. The dealer does not qualify (3.11: Queen high or better), so the antes
# are paid 1 to 1 (3.11.2) and the plays stand (3.11.1); seat 1's A-K-Q of hearts pays the Ante
# Bonus 5 to 1 (4.2) and an Envy Bonus to every other progressive wager (3.14, 4.4).
TCP_DEAL = ["Ah", "Kh", "Qh", "2c", "2d", "9s", "Jc", "8d", "4s"]


def _ok(table: Table, method: str, url: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    return table.ok(method, url, json=body if body is not None else {})


def _refused(table: Table, method: str, url: str, body: dict[str, Any] | None, *, field: str, error: str,
             rule: str | None = None, says: tuple[str, ...] = ()) -> dict[str, Any]:
    """A 409 naming `field`, of type `error`, citing `rule`, whose message says each of `says`
    and names no seat by a list index."""
    r = table.client.request(method, url, json=body if body is not None else {})
    assert r.status_code == 409, (method, url, body, r.status_code, r.text)
    detail: dict[str, Any] = r.json()["detail"]
    assert detail["field"] == field, detail
    assert detail["error"] == error, detail
    if rule is not None:
        assert detail.get("rule") == rule, detail
    for text in says:
        assert text in detail["message"], (text, detail)
    assert "seats[" not in detail["message"] and "seats[" not in detail["field"], detail
    return detail


def _next_round_opens(table: Table, previous: str) -> str:
    """The table is not stranded: the next round opens and takes a wager."""
    r = table.client.post("/rounds")
    assert r.status_code == 201, r.text
    rid = str(r.json()["round_id"])
    assert rid != previous
    before = table.round(previous)
    assert before["status"] == "settled" and before.get("settlement") is not None, before
    assert _events(table, "settlement_failed") == []  # settled, not closed without a settlement
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 1, "wager": _base(table), "amount": 1000})
    return rid


def _base(table: Table) -> str:
    return "one" if table.config.game == LIR else "ante"


def _void(table: Table, rid: str, reason: str) -> dict[str, Any]:
    return _ok(table, "POST", f"/rounds/{rid}/void", {"rule": "6.1", "reason": reason, "by": "SM-4"})


def _replays(table: Table) -> None:
    report, _ = replay(table.config.journal)
    assert report.ok, report.mismatches


def _events(table: Table, etype: str) -> list[dict[str, Any]]:
    with journal(table) as j:
        return [e.data() for e in j.entries(("event",)) if e.data()["type"] == etype]


# --- the issue's table ------------------------------------------------------------------------

def test_the_issues_progressive_is_refused_when_placed_naming_seat_3_and_the_round_settles(make_table) -> None:  # type: ignore[no-untyped-def]
    """Issue 20: a table file with `[jackpot] reset` and no `[limits]` (so the progressive's
    minimum is 100), `PUT /jackpot`, seat 3 ante 1000 and progressive 500. TCP 3.5 and reading
    13: the progressive is exactly the minimum, so 500 (5 x 100) is refused when placed, naming
    seat 3 and the rule; the minimum is taken, the round is dealt and settles, the next opens."""
    table: Table = make_table(TCP, 7, jackpot_reset=RESET)
    table.power_on_and_load()
    _ok(table, "PUT", "/jackpot", {"amount": 5_000_000})
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 1, "wager": "ante", "amount": 1000})
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 3, "wager": "ante", "amount": 1000})
    _refused(table, "POST", f"/rounds/{rid}/wagers", {"seat": 3, "wager": "progressive", "amount": 500},
             field="amount", error="StakeRefused", rule="3.5",
             says=("seat 3", "progressive", "5 x the minimum", "allowed: 1"))
    assert table.round(rid)["wagers"] == {"1": {"ante": 1000}, "3": {"ante": 1000}}  # nothing lost
    (refusal,) = _events(table, "input_refused")
    assert refusal["error"] == "StakeRefused" and refusal["rule"] == "3.5"  # journaled as answered
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 3, "wager": "progressive", "amount": DEFAULT_MIN})
    _ok(table, "POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in TCP_DEAL])
    for seat in (1, 3):
        _ok(table, "POST", f"/rounds/{rid}/decisions", {"seat": seat, "choice": "play"})
    settlement = _ok(table, "POST", f"/rounds/{rid}/settle")["settlement"]
    nets = {s["seat"]: s["net"] for s in settlement["seats"]}
    # 3.11.2 ante 1 to 1, 3.11.1 play stands, 4.2 A-K-Q of hearts 5 to 1 on the ante; seat 3 the
    # same ante, no Ante Bonus for a pair (4.2), no 4.4 hand of its own, but seat 1's ante made
    # the Royal Flush (Hearts/Diamond/Clubs): 3.14 the Envy Bonus, $50 (5,000 cents) per minimum
    # progressive wager (4.4; reading 12: a fixed amount keeps the stake).
    assert nets == {1: 1000 + 5 * 1000, 3: 1000 + 5000 - DEFAULT_MIN}, json.dumps(settlement["seats"])
    _next_round_opens(table, rid)
    _replays(table)


# --- stakes the engine refuses, refused when placed or changed --------------------------------

@dataclasses.dataclass(frozen=True)
class Stake:
    """A progressive stake settlement would refuse; `legal` is one it takes on the same table."""

    game: str
    limits: tuple[tuple[str, int, int], ...]
    change_from: int | None  # place this first, then change it (PUT) to `amount`
    amount: int
    rule: str
    says: tuple[str, ...]
    legal: int


STAKES = {
    # TCP 3.5, reading 13: exactly the minimum.
    "tcp-5x-the-minimum": Stake(TCP, (), None, 5 * DEFAULT_MIN, "3.5", ("5 x the minimum", "allowed: 1"),
                                DEFAULT_MIN),
    # MTCP 3.5, reading 13: exactly the minimum; a change is checked as a placement is.
    "mtcp-changed-to-2x": Stake(MTCP, (), DEFAULT_MIN, 2 * DEFAULT_MIN, "3.5", ("2 x the minimum", "allowed: 1"),
                                DEFAULT_MIN),
    # XT 3.5.3: 1, 2, 3, 4 or 5 times the minimum.
    "xt-6x-the-minimum": Stake(XT, (), None, 6 * DEFAULT_MIN, "3.5.3", ("6 x the minimum", "allowed: 1, 2, 3, 4, 5"),
                               5 * DEFAULT_MIN),
    # SSP 3.5.3: whole multiples of the minimum only.
    "ssp-not-a-whole-number": Stake(SSP, (), None, 150, "3.5.3",
                                    ("150 is not a whole number of minimum wagers of 100",), 2 * DEFAULT_MIN),
    # XT 3.4: within the limits displayed at the table (4 x 100 is a multiple 3.5.3 allows).
    "xt-over-the-maximum": Stake(XT, (("progressive", 100, 300),), None, 400, "3.4",
                                 ("400 is over the progressive maximum 300",), 300),
    # LIR 3.5: any whole number of credits, and the table's maximum.
    "lir-over-the-maximum": Stake(LIR, (("progressive", 100, 1000),), None, 1100, "3.5",
                                  ("1100 is over the progressive maximum 1000",), 1000),
}


@pytest.mark.parametrize("case", list(STAKES))
def test_a_stake_settlement_would_refuse_is_refused_when_placed_naming_the_seat_and_rule(make_table, case: str) -> None:  # type: ignore[no-untyped-def]
    stake = STAKES[case]
    table: Table = make_table(stake.game, 7, jackpot_reset=RESET, limits=stake.limits,
                              method="A" if stake.game == XT else None)
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    base = ("one", "two", "dollar") if stake.game == LIR else ("ante",)
    for wager in base:
        _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 5, "wager": wager, "amount": 1000})
    if stake.change_from is None:
        method, url, body = "POST", f"/rounds/{rid}/wagers", {"seat": 5, "wager": "progressive", "amount": stake.amount}
    else:
        _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 5, "wager": "progressive", "amount": stake.change_from})
        method, url, body = "PUT", f"/rounds/{rid}/wagers/5/progressive", {"amount": stake.amount}
    _refused(table, method, url, body, field="amount", error="StakeRefused", rule=stake.rule,
             says=("seat 5", *stake.says))
    held = table.round(rid)["wagers"]["5"]
    assert held.get("progressive") == stake.change_from  # unchanged: nothing accepted is lost
    # The legal stake is taken.
    if stake.change_from is None:
        _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 5, "wager": "progressive", "amount": stake.legal})
    else:
        _ok(table, "PUT", f"/rounds/{rid}/wagers/5/progressive", {"amount": stake.legal})
    _void(table, rid, "the round was opened for the test")
    _next_round_opens(table, rid)
    _replays(table)


# --- what only settlement can know: refused at the settle, the round voidable -------------------

def _dealt_tcp_round(table: Table, progressive: int = DEFAULT_MIN) -> str:
    """Seat 1 ante 1000, seat 3 ante 1000 and a progressive, dealt TCP_DEAL, both played."""
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 1, "wager": "ante", "amount": 1000})
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 3, "wager": "ante", "amount": 1000})
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 3, "wager": "progressive", "amount": progressive})
    _ok(table, "POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in TCP_DEAL])
    for seat in (1, 3):
        _ok(table, "POST", f"/rounds/{rid}/decisions", {"seat": seat, "choice": "play"})
    return rid


def test_settling_without_a_jackpot_pool_is_refused_and_settles_once_it_is_given(make_table) -> None:  # type: ignore[no-untyped-def]
    """TCP 4.4 pays the Royal Flush of spades from the pool as displayed: a progressive in action
    needs it. The settle is refused (409 naming `jackpot.pool`), the round stays in play; the
    pool is given and the round settles; the next round opens."""
    table: Table = make_table(TCP, 7, jackpot_reset=RESET)
    table.power_on_and_load()
    rid = _dealt_tcp_round(table)
    _refused(table, "POST", f"/rounds/{rid}/settle", None, field="jackpot.pool", error="SettlementRefused",
             says=("still in play",))
    assert table.round(rid)["status"] != "settled"
    _ok(table, "PUT", "/jackpot", {"amount": 5_000_000})
    settlement = _ok(table, "POST", f"/rounds/{rid}/settle")["settlement"]
    assert settlement["jackpot"]["pool_before"] == 5_000_000 == settlement["jackpot"]["pool_after"]
    _next_round_opens(table, rid)
    _replays(table)


def _restarted(table: Table, **changes: Any) -> None:
    """The table file changed and the daemon restarted (a shift's new limits, a reset removed)."""
    table.config = dataclasses.replace(table.config, **changes)
    table.restart_daemon()


def test_a_round_whose_stakes_the_restarted_table_refuses_is_named_by_seat_and_its_void_ends_it(make_table) -> None:  # type: ignore[no-untyped-def]
    """Seat 3's progressive of 100 was the minimum when placed; the table restarts with a
    progressive minimum of 500. The round is settled under the table's limits, so settlement
    refuses it (reading 13: not a whole number of minimum wagers), naming seat 3, not the
    round file's list index. A supervisor voids it and the void ends it: every wager returned,
    the next round opens, also after another restart."""
    table: Table = make_table(TCP, 7, jackpot_reset=RESET)
    table.power_on_and_load()
    _ok(table, "PUT", "/jackpot", {"amount": 5_000_000})
    rid = _dealt_tcp_round(table)
    _restarted(table, limits=(("progressive", 500, 500),))
    detail = _refused(table, "POST", f"/rounds/{rid}/settle", None, field="seat 3.wagers.progressive",
                      error="SettlementRefused", says=("seat 3", "not a whole number of minimum wagers of 500"))
    assert "round" in detail["message"]
    _void(table, rid, "the progressive's limits changed while the round was in play")
    table.restart_daemon()
    _next_round_opens(table, rid)
    settlement = table.round(rid)["settlement"]
    assert settlement["void"] is not None
    returned = {(s["seat"], w["wager"]): (w["outcome"], w["paid"]) for s in settlement["seats"] for w in s["wagers"]}
    assert returned == {(1, "ante"): ("void", 1000), (1, "play"): ("void", 1000), (3, "ante"): ("void", 1000),
                        (3, "play"): ("void", 1000), (3, "progressive"): ("void", DEFAULT_MIN)}
    _replays(table)


def test_a_round_with_a_progressive_on_a_table_restarted_without_its_reset_is_voided_and_ends(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table(TCP, 7, jackpot_reset=RESET)
    table.power_on_and_load()
    _ok(table, "PUT", "/jackpot", {"amount": 5_000_000})
    rid = _dealt_tcp_round(table)
    _restarted(table, jackpot_reset=None)
    _refused(table, "POST", f"/rounds/{rid}/settle", None, field="jackpot.pool", error="SettlementRefused")
    _void(table, rid, "the table lost its jackpot settings")
    _next_round_opens(table, rid)
    _replays(table)


def test_let_it_ride_without_the_selection_is_refused_at_settle_and_voidable(make_table) -> None:  # type: ignore[no-untyped-def]
    """LIR 4.3, 4.4 (reading 70): the Magic Card and Lucky Player are the system's, for the round."""
    table: Table = make_table(LIR, 7, jackpot_reset=RESET)
    table.power_on_and_load()
    _ok(table, "PUT", "/jackpot", {"amount": 5_000_000})
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    for wager in ("one", "two", "dollar"):
        _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 3, "wager": wager, "amount": 500})
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 3, "wager": "progressive", "amount": 100})
    _ok(table, "POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in ["Kh", "7c", "2d", "9s", "4h"]])
    _ok(table, "POST", f"/rounds/{rid}/decisions", {"seat": 3, "choice": "ride_1"})
    _ok(table, "POST", f"/rounds/{rid}/decisions", {"seat": 3, "choice": "ride_2"})
    _refused(table, "POST", f"/rounds/{rid}/settle", None, field="magic_card, lucky_seat", error="MissingInputError",
             says=("4.3", "4.4"))
    _void(table, rid, "the progressive system's selection was lost")
    _next_round_opens(table, rid)
    _replays(table)


# --- void rounds the engine refused to close ---------------------------------------------------

def test_an_empty_round_voided_ends_and_the_next_round_opens(make_table) -> None:  # type: ignore[no-untyped-def]
    """A round opened in error, voided before any wager: nothing to return, and nothing keeps the
    next round from opening (the engine refused it: "a round has at least one seat")."""
    table: Table = make_table(TCP, 7)
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    _void(table, rid, "opened in error")
    _next_round_opens(table, rid)
    _replays(table)


def test_a_card_drawn_before_any_wager_voids_the_round_and_the_next_opens(make_table) -> None:  # type: ignore[no-untyped-def]
    """The first card closes betting (3.4); with no wager on the table it is a card with no seat
    in play: the round is void (5.2, the deal cannot be shown) and returns nothing; the next
    round opens."""
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    table.deal([parse_card("As")])
    snap = table.round(rid)
    assert snap["void"] is not None, snap
    _next_round_opens(table, rid)
    _replays(table)


def test_a_let_it_ride_round_voided_with_an_incomplete_trio_ends(make_table) -> None:  # type: ignore[no-untyped-def]
    """LIR 3.4: the 1, 2 and $ are three equal wagers placed together. A round voided while a seat
    holds only the 1 returns it; the engine's 3.4 check does not keep the void round open."""
    table: Table = make_table(LIR, 7)
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 2, "wager": "one", "amount": 500})
    _void(table, rid, "the table closed")
    _next_round_opens(table, rid)
    settlement = table.round(rid)["settlement"]
    (seat,) = settlement["seats"]
    assert [(w["wager"], w["outcome"], w["paid"]) for w in seat["wagers"]] == [("one", "void", 500)]
    _replays(table)


def test_a_void_round_the_engine_still_refuses_does_not_keep_the_next_round_from_opening(make_table) -> None:  # type: ignore[no-untyped-def]
    """Were the engine to refuse a void round all the same (here the ante's limits upside down,
    which no table file passes: `TableConfig.checked`), the void still ends it: `POST /rounds`
    answers 201, the round before closed with `settlement_failed` for a person (6.1) among the
    answer's events."""
    table: Table = make_table(TCP, 7, limits=(("ante", 500, 100),))
    rid = str(_ok(table, "POST", "/rounds")["round_id"])
    _ok(table, "POST", f"/rounds/{rid}/wagers", {"seat": 2, "wager": "ante", "amount": 1000})
    _void(table, rid, "the table's limits are wrong")
    r = table.client.post("/rounds")
    assert r.status_code == 201, r.text
    events = r.json()["events"]
    assert [e["type"] for e in events] == ["round_settled", "settlement_failed", "round_opened"], events
    assert events[1]["round_id"] == rid and events[1]["rule"] == "6.1"
    assert table.round(rid)["status"] == "settled" and r.json()["round_id"] != rid
    _replays(table)


# --- the catalogue of the engine's refusals ----------------------------------------------------

ENGINE = Path(__file__).resolve().parents[2] / "host" / "settlement"

# Why a refusal cannot come from a round the daemon exports: the daemon writes the round file
# itself (cardshoe.rounds.export) from a round its rounds engine verified operation by operation.
FORMAT = "the daemon writes this field itself, always well formed (cardshoe.rounds.export)"
ROUNDS = "the rounds engine refuses the operation that would make it (cardshoe.rounds)"
CONFIG = "the table file is checked at start (cardshoe.daemon.config: TableConfig.checked)"
VOID = "a void round is settled on its stakes alone (rule reading 74): never refused for this"
INTERNAL = "an invariant of the engine or its pay tables, not an input: a bug if raised"
CLI = "`cardshoe settle`'s own bound on a file; the daemon hands the engine its export in memory"

# Every raise site of the engine, by (field, message) as written in the source: the tests of
# this module that drive it (through the API, or the core where no table file can reach it),
# and why no daemon's export can carry it otherwise.
CATALOGUE: dict[str, tuple[str, ...]] = {
    "cli: JSONInputError('' | f'over the limit of {ROUND_FILE.max_bytes} bytes')": (CLI,),
    "common: ValueError(f'a winning {wager} needs an odds line')": (INTERNAL,),
    "jackpot: ValueError('progressive wagers in action without jackpot data')": (INTERNAL,),
    'result: KeyError(name)': (INTERNAL,),
    'result: KeyError(number)': (INTERNAL,),
    'round: KeyError(number)': (INTERNAL,),
    "round: RoundError(field | f'expected an integer amount in minor units, got {value!r}')": (
        "test_settling_without_a_jackpot_pool_is_refused_and_settles_once_it_is_given",
        "test_a_round_with_a_progressive_on_a_table_restarted_without_its_reset_is_voided_and_ends",
    ),
    "round: RoundError(field | f'must be at least {minimum}, got {value}')": (ROUNDS,),
    "round: RoundError(field | f'expected true or false, got {value!r}')": (FORMAT,),
    "round: RoundError(field | f'expected text, got {value!r}')": (FORMAT,),
    "round: RoundError(field | f'expected an object, got {type(value).__name__}')": (FORMAT,),
    "round: RoundError(field | f'expected a list, got {type(value).__name__}')": (FORMAT,),
    "round: RoundError(field | f'bad card {value[:8]!r}: rank {value[0]!r} is not one of {RANKS} (upp)": (FORMAT,),
    'round: RoundError(field | str(exc))': (FORMAT,),
    "round: RoundError(f'{field}[{i}]' | f'seat {n} has no wagers in this round')": (FORMAT,),
    "round: RoundError(where | 'unknown field')": (FORMAT,),
    "round: RoundError(f'{field}.seat' | f'seat {number} is out of range 1..{MAX_SEAT}')": (ROUNDS,),
    "round: RoundError(f'{field}.wagers' | 'a seat in the round needs at least one wager')": (ROUNDS,),
    'round: RoundError(f\'{field}.wagers.{name}\' | f"{game.title} has no wager {name!r} (its wagers: {\', \'.join(game.wage)':
        (ROUNDS,),
    'round: RoundError(f\'{field}.kind\' | f"unknown irregularity {raw.get(\'kind\')!r}; known: {kinds}")':
        (FORMAT,),
    "round: RoundError(f'{field}.kind' | f'{game.title} has no {kind.value!r} (no such hand or cards in this ga)":
        (FORMAT,),
    'round: RoundError(f\'{field}.kind\' | f"{game.title} has no rule for a wrong number of cards at one betting )':
        (ROUNDS,),
    "round: RoundError(f'{field}.effect' | f'expected one of {MANAGER_EFFECTS}, got {effect!r}')": (FORMAT,),
    "round: RoundError(f'{field}.seats' | 'a decision returning wagers names the seats')": (FORMAT,),
    "round: RoundError(f'{field}.effect' | 'only a manager_decision states its effect')": (FORMAT,),
    "round: RoundError(f'{field}.seats' | f'{kind.value} names the seats it concerns')": (FORMAT,),
    "round: RoundError(f'{field}.seats' | 'multiple_hands names every seat the player controls (two or more)')":
        (FORMAT,),
    "round: RoundError(f'{field}.withdrawn_seats' | 'only player_card_count lets players withdraw (5.7.1)')":
        (FORMAT,),
    'round: RoundError(f\'{field}.wagers.{decision.wager}\' | f"a {decision.wager} wager without an {decision.on} wager ({game.rule()':
        (FORMAT,),
    "round: RoundError(f'{field}.decisions.{decision.on}' | f'expected {decision.continue_choice!r} or {decision.fold_choice!r}, g)":
        (FORMAT,),
    "round: RoundError(f'{field}.decisions.{decision.on}' | 'an absent player makes no decision (5.11)')":
        (ROUNDS,),
    "round: RoundError(f'{field}.decisions.{decision.on}' | 'missing: play/bet or fold')": (ROUNDS,),
    "round: RoundError(f'{field}.wagers.{decision.wager}' | f'the player chose {choice!r} but placed no {decision.wager}')":
        (FORMAT,),
    "round: RoundError(f'{field}.wagers.{decision.wager}' | 'a folded hand has no such wager')": (FORMAT,),
    "round: RoundError(f'{field}.wagers.{decision.wager}' | f'must be {decision.multiple} x the {decision.on} ({decision.multiple )":
        (FORMAT,),
    "round: RoundError(f'{field}.decisions.{decision.on}' | f'there is no {decision.on} wager to decide on')":
        (ROUNDS,),
    "round: RoundError(f'{field}.wagers.{missing}' | 'the 1, 2 and $ wagers are placed together (3.4)')": (
        VOID,
        "test_a_let_it_ride_round_voided_with_an_incomplete_trio_ends",
    ),
    "round: RoundError(f'{field}.wagers.two' | 'the 1, 2 and $ wagers must be equal (3.4)')": (VOID,),
    'round: RoundError(f\'{field}.decisions.{key}\' | "missing: \'ride\' or \'withdraw\'")': (ROUNDS,),
    'round: RoundError(f\'{field}.decisions.{key}\' | f"expected \'ride\' or \'withdraw\', got {choice!r}")':
        (FORMAT,),
    "round: RoundError(f'{field}.decisions.{key}' | 'there is no wager to decide on')": (ROUNDS,),
    "round: RoundError(f'{field}.decisions.{key}' | f'{game.title} has no decision on {key!r}')": (FORMAT,),
    "round: RoundError(f'{field}.declined_comparison' | f'{game.title} has no comparison with a dealer')":
        (ROUNDS,),
    "round: RoundError(f'limits.{wager}' | 'missing: the table limits of this wager are needed')": (
        CONFIG,
        "test_a_wager_the_table_has_no_limits_for_is_refused_when_placed",
    ),
    "round: RoundError(where | f'{stake} is not a whole number of minimum wagers of {limit.min}')": (
        "test_a_stake_settlement_would_refuse_is_refused_when_placed_naming_the_seat_and_rule",
        "test_a_round_whose_stakes_the_restarted_table_refuses_is_named_by_seat_and_its_void_ends_it",
    ),
    "round: RoundError(where | f'{k} x the minimum is not allowed (allowed: {allowed})')": (
        "test_the_issues_progressive_is_refused_when_placed_naming_seat_3_and_the_round_settles",
        "test_a_stake_settlement_would_refuse_is_refused_when_placed_naming_the_seat_and_rule",
    ),
    "round: RoundError(where | f'{stake} is over the progressive maximum {limit.max}')": (
        "test_a_stake_settlement_would_refuse_is_refused_when_placed_naming_the_seat_and_rule",
    ),
    'round: RoundError(\'format\' | f"expected {FORMAT!r}, got {top.get(\'format\')!r}")': (FORMAT,),
    "round: RoundError('game' | f'expected a game id, got {game_id!r}')": (FORMAT,),
    "round: RoundError('game' | str(exc))": (FORMAT,),
    "round: RoundError('rules_version' | f'the round is for rules version {version!r}; the pay table is for {ga)":
        (FORMAT,),
    "round: RoundError('currency' | f'the pay table is in {game.currency!r}, the round says {currency!r}')":
        (FORMAT,),
    "round: RoundError('dealing' | f'expected one of {methods}, got {dealing!r}')": (FORMAT,),
    "round: RoundError(f'limits.{name}' | f'{game.title} has no wager {name!r}')": (FORMAT,),
    "round: RoundError('seats' | f'{len(seats_raw)} seats listed; a table has at most {MAX_SEAT}')": (ROUNDS,),
    "round: RoundError(f'seats[{i}].seat' | f'seat {seat.seat} is listed twice')": (FORMAT,),
    'round: RoundError(\'dealer.cards\' | f"{game.title} has no dealer\'s hand")': (FORMAT,),
    "round: RoundError('community' | f'{game.title} has no community cards')": (FORMAT,),
    'round: RoundError(f\'out_of_play[{i}].role\' | f"expected \'burn\', \'security\' or \'discard\', got {role!r}")':
        (FORMAT,),
    "round: RoundError(f'out_of_play[{i}].role' | 'a security card is dealt only by Xtreme method C (3.7.3.1)')":
        (ROUNDS,),
    'round: RoundError(f\'exposures[{i}].during\' | f"expected \'deal\' or \'play\', got {during!r}")': (FORMAT,),
    'round: RoundError(\'power_failure.withdrawn_seats\' | f"an outcome was established: play continues and nobody may withdraw ()':
        (FORMAT,),
    'round: RoundError(\'power_failure.outcome_established\' | f"seat {folded[0]} folded, so an outcome was established: play continu)':
        (FORMAT,),
    "round: RoundError('jackpot.magic_card' if magic is not None else 'jackpot.lucky_player' | f'{game.title} has no Magic Card or Lucky Player')":
        (FORMAT,),
    "round: RoundError('jackpot.lucky_player' | f'seat {lucky_seat} is out of range 1..{MAX_SEAT}')": (ROUNDS,),
    "round: RoundError('seats' | 'a round has at least one seat with a wager')": (
        "test_an_empty_round_voided_ends_and_the_next_round_opens",
        "test_a_card_drawn_before_any_wager_voids_the_round_and_the_next_opens",
    ),
    "round: RoundError(field | f'card {card_text(card)} appears twice (also at {seen[card]})')": (ROUNDS,),
    "round: RoundError(f'{field}.cards' | f'seat {seat.seat} has {len(seat.cards)} cards, {game.title} deals {ga)":
        (ROUNDS,),
    "round: RoundError('dealer.cards' | f'the dealer has {len(rnd.dealer)} cards, {game.title} deals {game.dea)":
        (ROUNDS,),
    "round: RoundError('community' | f'{len(rnd.community)} community cards, {game.title} has {game.communi)":
        (ROUNDS,),
    "round: RoundError('jackpot' | 'missing: progressive wagers need the pool and reset amounts')": (FORMAT,),
    "round: RoundError(field | 'missing: the system selects it every round (4.3, 4.4)')": (
        "test_let_it_ride_without_the_selection_is_refused_at_settle_and_voidable",
    ),
}


def _sites() -> dict[str, str]:
    """Every `raise` in the engine's modules: key -> 'module:line'."""
    out: dict[str, str] = {}
    for path in sorted(ENGINE.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc
                if isinstance(exc, ast.Call):
                    name = ast.unparse(exc.func)
                    args = " | ".join(ast.unparse(a)[:70] for a in exc.args)
                    key = f"{path.stem}: {name}({args})"
                else:
                    key = f"{path.stem}: {ast.unparse(exc)}"
                assert key not in out, f"two raise sites read the same: {key}"
                out[key] = f"{path.name}:{node.lineno}"
    return out


def test_every_refusal_of_the_engine_is_classified() -> None:
    """The engine's raise sites, each either driven through the API by a test above or shown
    impossible in a daemon's export (a new refusal fails this until it is classified)."""
    sites = _sites()
    unclassified = sorted(set(sites) - set(CATALOGUE))
    stale = sorted(set(CATALOGUE) - set(sites))
    assert not unclassified and not stale, {"unclassified": [(k, sites[k]) for k in unclassified], "stale": stale}
    tests = {name for name, value in globals().items() if name.startswith("test_") and callable(value)}
    reasons = {FORMAT, ROUNDS, CONFIG, VOID, INTERNAL, CLI}
    for key, how in CATALOGUE.items():
        assert how and all(part in tests or part in reasons for part in how), (key, how)



# --- through the core: what no table file can give --------------------------------------------

class Core:
    """A table core fed journal-shaped inputs and shoe 1's cards, with rising host times."""

    def __init__(self, setup: TableSetup) -> None:
        self.core = TableCore(setup)
        self.t = 1_700_000_000_000_000_000
        self.index = 0

    def input(self, body: dict[str, Any]) -> Applied:
        self.t += 1_000_000
        return self.core.apply_input(body, self.t)

    def op(self, rid: str, op: Any) -> Applied:
        return self.input({"action": "op", "round_id": rid, "op": operation_to_json(op)})

    def card(self, text: str) -> Applied:
        self.index += 1
        self.t += 1_000_000
        msg = {"type": "CARD", "shoe_no": 1, "index": self.index, "code": parse_card(text), "raw": f"{self.index:08x}",
               "t_ms": 1000 * self.index, "card_deck": 7, "method": 1, "flags": 0}
        return self.core.apply_frame(1, msg, self.t)


def _types(done: Applied) -> list[str]:
    return [str(d.body.get("type", d.kind)) for d in done.derived]


def test_a_wager_the_table_has_no_limits_for_is_refused_when_placed() -> None:
    """`cardshoe run` gives every wager of its game limits (the table file's, else min 100 and
    max 10,000,000), so only a setup journaled otherwise lacks some. Settlement needs the limits
    of every wager (docs/round-format.md), so a wager without them is refused when placed (409,
    field `limits.pair_plus`), and the round goes on without it."""
    table = Core(TableSetup(name="T", game=TCP, seats=7, limits=(("ante", 100, 100_000),)))
    rid = str(table.input({"action": "open_round"}).round_id)
    assert table.op(rid, PlaceWager(seat=2, wager="ante", amount=1000)).refused is None
    done = table.op(rid, PlaceWager(seat=2, wager="pair_plus", amount=500))
    assert isinstance(done.refused, StakeRefused), done.derived
    assert done.refused.field == "limits.pair_plus" and "seat 2" in str(done.refused)
    refused = refusal_of(done.refused)
    assert (refused.status, refused.field, refused.error) == (409, "limits.pair_plus", "StakeRefused")
    assert table.core.rounds[rid].wagers == {2: {"ante": 1000}}
    assert table.op(rid, VoidRound(rule="6.1", reason="test", by="SM-4")).refused is None
    nxt = table.input({"action": "open_round"})
    assert nxt.refused is None and nxt.round_id != rid


def test_a_void_round_the_engine_still_refuses_is_closed_and_the_next_round_opens() -> None:
    """A void round is settled on its stakes alone; were the engine to refuse it all the same (here
    a setup whose ante limits are upside down, which no table file passes), the void still ends
    it: the round is closed with `settlement_failed` for a person (6.1) and the next round opens,
    its answer the new round's (the controller gets 201, not a 500 for the round before)."""
    table = Core(TableSetup(name="T", game=TCP, seats=7, limits=(("ante", 500, 100), ("play", 100, 1000))))
    rid = str(table.input({"action": "open_round"}).round_id)
    table.op(rid, PlaceWager(seat=2, wager="ante", amount=1000))
    table.op(rid, VoidRound(rule="6.1", reason="test", by="SM-4"))
    opened = table.input({"action": "open_round"})
    assert opened.refused is None, opened.derived
    assert _types(opened) == ["round_settled", "settlement_failed", "round_opened"], _types(opened)
    failed = opened.derived[1]
    assert failed.round_id == rid and failed.body["rule"] == "6.1" and failed.body["field"] == "limits.ante.max"
    assert opened.round_id != rid and table.core.rounds[rid].status.value == "settled"
    # Before issue 20 the same table stranded: every open_round refused.
    old = Core(dataclasses.replace(table.core.setup, core_version=1))
    rid = str(old.input({"action": "open_round"}).round_id)
    old.op(rid, PlaceWager(seat=2, wager="ante", amount=1000))
    old.op(rid, VoidRound(rule="6.1", reason="test", by="SM-4"))
    assert old.input({"action": "open_round"}).refused is not None


def test_a_settle_whose_last_count_point_finds_too_few_cards_waits_without_failing() -> None:
    """A seat with only Pair Plus makes no decision (TCP 3.9.3), so the deal stays open until the
    settle, whose count point finds five cards of six: the flag waits for a person's count (5.7,
    5.2) and the round is not closed. Nothing failed, so no `settlement_failed` (which the
    controller got as a 500 before issue 20)."""
    for version, failed in ((2, False), (1, True)):
        table = Core(TableSetup(name="T", game=TCP, seats=7,
                                limits=(("ante", 100, 10_000), ("pair_plus", 100, 10_000)), core_version=version))
        rid = str(table.input({"action": "open_round"}).round_id)
        table.op(rid, PlaceWager(seat=2, wager="pair_plus", amount=500))
        for text in ["Ah", "Kh", "Qh", "2c", "2d"]:
            table.card(text)
        done = table.input({"action": "settle", "round_id": rid})
        assert done.refused is None
        assert "flagged" in _types(done) and ("settlement_failed" in _types(done)) is failed, (version, _types(done))
        assert table.core.rounds[rid].status.value != "settled" and rid not in table.core.settlements
