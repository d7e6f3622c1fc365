"""Playing a scenario's rounds on a bench and checking what came out.

`play_round` is the table: it opens the round through the daemon's API, takes the wagers,
closes betting, deals the shoe's cards through the sim channel (with the scenario's faults
between them), presses "deal complete", sends decisions, deals what comes after them,
answers the supervisor's questions, settles, and then reads back from the daemon what it
made of it. `check_round` compares that with the scenario's expectations, and always
with two invariants: every card the bench dealt is in the daemon's round exactly once, at
the shoe index it had, with the code it had; and the daemon's settlement equals
`cardshoe settle` of the round the daemon exports.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cardshoe.cards import card_text, parse_card
from cardshoe.hil.bench import FOREIGN_DECK, Bench, TableSpec
from cardshoe.hil.ledger import Dealt, LedgerError, RoundLedger, compare
from cardshoe.hil.relay import LineFaults
from cardshoe.hil.scenario import FlagExpect, RefusalExpect, RoundSpec, Scenario, Step
from cardshoe.hil.table import ApiError, BenchTimeout, Event
from cardshoe.protocol import check_character
from cardshoe.settlement import parse_round, settle

Log = Callable[[str], None]
_SUPERVISOR = "bench supervisor"
_DEALER = "bench dealer"


@dataclass(frozen=True)
class Refused:
    """A request the daemon refused: what was asked, its status, and the rule and error it named."""

    request: str
    status: int
    rule: str | None
    error: str | None

    def __str__(self) -> str:
        named = ", ".join(x for x in (self.error, f"rule {self.rule}" if self.rule else None) if x)
        return f"{self.request}: {self.status}" + (f" ({named})" if named else "")


@dataclass
class RoundOutcome:
    """What the daemon made of one round, and what the bench dealt into it."""

    round_id: str
    dealt: dict[int, tuple[str, int | None]] = field(default_factory=dict)
    snapshot: dict[str, Any] = field(default_factory=dict)
    settlement: dict[str, Any] | None = None
    offline: dict[str, Any] | None = None
    refusals: list[str] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    # What the bench could not do as the scenario asked (not the daemon's refusals).
    bench_problems: list[str] = field(default_factory=list)
    # Cards dealt after the settlement (`after_settle`), and the round as the API shows it then.
    after_settle: dict[int, tuple[str, int | None]] = field(default_factory=dict)
    snapshot_later: dict[str, Any] | None = None


def misread_text(bench: Bench, card: int) -> str:
    """The card's barcode with a wrong check character: a misread (SPEC 6), never a card."""
    good = bench.barcode(card)
    bad = "0" if good[-1] != "0" else "1"
    assert check_character(good[:-1]) != bad
    return good[:-1] + bad


def do_step(bench: Bench, step: Step, dealt: dict[int, tuple[str, int | None]], log: Log) -> None:
    """One deal entry: a card leaving the shoe, or a bench action."""
    if step.kind == "card":
        index = bench.deal(step.card)
    elif step.kind == "unread":
        index = bench.deal(None)
        bench.counts.count_card_fault("unread")
    elif step.kind == "foreign":
        assert step.card is not None
        index = bench.deal(step.card, reads=[bench.barcode(step.card, FOREIGN_DECK)])
        bench.counts.count_card_fault("foreign")
    elif step.kind == "misread":
        assert step.card is not None
        index = bench.deal(step.card, reads=[misread_text(bench, step.card), bench.barcode(step.card)])
        bench.counts.count_card_fault("misread")
    elif step.kind == "double":
        assert step.card is not None
        index = bench.deal(step.card, reads=[bench.barcode(step.card)] * 2)
        bench.counts.count_card_fault("double read")
    else:
        _bench_step(bench, step.kind, log)
        return
    if step.kind != "unread" and any(code == step.card and kind in ("card", "misread", "double")
                                     for kind, code in dealt.values()):
        bench.counts.count_card_fault("duplicate")
    dealt[index] = (step.kind, step.card)


def _bench_step(bench: Bench, kind: str, log: Log) -> None:
    if kind == "expose":
        bench.key("exposure")
        bench.counts.count_card_fault("exposure key")
    elif kind == "deal_complete":
        bench.key("deal_complete")
    elif kind == "jam":
        bench.jam()
        bench.counts.count_card_fault("jam")
    elif kind == "power_cut":
        bench.power_cut()
    elif kind == "unplug":
        bench.unplug()
    elif kind == "restart":
        bench.restart_daemon()
    elif kind == "garbage":
        bench.garbage(200)
    else:  # pragma: no cover - the scenario parser admits only BENCH_STEPS
        raise ValueError(kind)
    log(f"    {kind.replace('_', ' ')}")


def play_round(bench: Bench, spec: RoundSpec, log: Log) -> RoundOutcome:
    """Play one round through the daemon (see the module docstring)."""
    api = bench.client
    if spec.new_shoe:
        # A new shoe between rounds: another deck id, loaded through the API (NEW_SHOE).
        bench.load_shoe(bench.deck_id + 1)
    rid = str(api.request("POST", "/rounds")["round_id"])
    out = RoundOutcome(round_id=rid)
    for seat, wagers in sorted(spec.wagers.items()):
        for wager, amount in wagers.items():
            api.request("POST", f"/rounds/{rid}/wagers", {"seat": seat, "wager": wager, "amount": amount})
    if spec.progressive is not None:
        api.request("POST", f"/rounds/{rid}/progressive", dict(spec.progressive))
    api.request("POST", f"/rounds/{rid}/no-more-bets")
    for late in spec.late_wagers:
        # After "no more bets" the daemon must refuse these (5.5-5.6); the scenario says so.
        if late.change:
            _try(out, api.request, "PUT", f"/rounds/{rid}/wagers/{late.seat}/{late.wager}", {"amount": late.amount})
        else:
            _try(out, api.request, "POST", f"/rounds/{rid}/wagers",
                 {"seat": late.seat, "wager": late.wager, "amount": late.amount})
    for step in spec.deal:
        do_step(bench, step, out.dealt, log)
    if spec.deal_complete and not any(s.kind == "deal_complete" for s in spec.deal):
        bench.key("deal_complete")
    for index in spec.exposures:
        _try(out, api.request, "POST", f"/rounds/{rid}/exposures", {"shoe_index": index})
    if spec.counts:
        _report_counts(bench, rid, spec, out)
    for seat in spec.absent:
        _try(out, api.request, "POST", f"/rounds/{rid}/absent", {"seat": seat})
    for seat, choice in spec.decisions:
        _try(out, api.request, "POST", f"/rounds/{rid}/decisions", {"seat": seat, "choice": choice})
    for step in spec.after_decisions:
        do_step(bench, step, out.dealt, log)
    if spec.confirm is not None:
        for flag in api.round(rid)["irregularities"]:
            if flag["decision"] in ("reconstruction_proposed", "referred", "placement_proposed"):
                answer: dict[str, Any] = {"flag": flag["id"], "confirmed": spec.confirm, "supervisor": _SUPERVISOR}
                if spec.candidate is not None and flag["decision"] == "placement_proposed":
                    number = _candidate_number(spec.candidate, flag, out)
                    if number is None:
                        continue
                    answer["candidate"] = number
                _try(out, api.request, "POST", f"/rounds/{rid}/confirmations", answer)
    if spec.settle:
        body = {} if spec.jackpot_pool is None else {"jackpot_pool": spec.jackpot_pool}
        done = _try(out, api.request, "POST", f"/rounds/{rid}/settle", body)
        if done is not None and "settlement" in done:
            out.settlement = done["settlement"]
    out.snapshot = api.round(rid)
    if spec.settle:
        exported = api.export(rid)
        out.offline = settle(parse_round(exported)).to_json()
    if spec.after_settle:
        # Cards dealt after the settlement belong to no settled round: the round must not
        # change, and each is referred to the shift manager (6.1) as outside any round.
        after = api.last_event_id
        for step in spec.after_settle:
            do_step(bench, step, out.after_settle, log)
        for index in sorted(out.after_settle):
            def flagged(e: Event, i: int = index) -> bool:
                return e.type == "card_outside_round" and e.data.get("index") == i

            try:
                api.wait_event(flagged, after, 30.0, f"shoe card {index} flagged as outside any round")
            except BenchTimeout:
                out.bench_problems.append(f"shoe card {index}, dealt after the settlement, was not flagged as "
                                          f"outside any round (6.1)")
        out.snapshot_later = api.round(rid)
    return out


def _candidate_number(want: int | dict[str, int], flag: dict[str, Any], out: RoundOutcome) -> int | None:
    """The API's number of the candidate the scenario picks: given, or the one missing `slip_pass`."""
    if isinstance(want, int):
        return want
    candidates = list(flag.get("candidates", []))
    hits = [c for c in candidates if c.get("slip_pass") == want["slip_pass"]]
    if len(hits) != 1:
        out.bench_problems.append(f"candidate: {len(hits)} of the flag's candidates have slip_pass "
                                  f"{want['slip_pass']} (candidates {[c.get('slip_pass') for c in candidates]})")
        return None
    return int(hits[0]["number"])


def _report_counts(bench: Bench, rid: str, spec: RoundSpec, out: RoundOutcome) -> None:
    flags = [f for f in bench.client.round(rid)["irregularities"] if f["decision"] == "pending"]
    if not flags:
        out.refusals.append("counts: no flag waited for a person's count")
        return
    for label, count in spec.counts:
        kind, _, seat = label.partition(" ")
        position = {"kind": kind, "seat": int(seat) if seat else 0}
        _try(out, bench.client.request, "POST", f"/rounds/{rid}/counts",
             {"flag": flags[0]["id"], "position": position, "count": count, "reporter": _DEALER})


def _try(out: RoundOutcome, fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any] | None:
    try:
        return fn(*args)
    except ApiError as exc:
        out.refusals.append(str(exc))
        out.refused.append(_refused(exc))
        return None


def _refused(exc: ApiError) -> Refused:
    """The refusal as the daemon described it (docs/api.md, Errors): `detail.rule`, `detail.error`."""
    rule = error = None
    try:
        detail = json.loads(exc.body).get("detail")
    except (ValueError, AttributeError):
        detail = None
    if isinstance(detail, dict):
        rule = None if detail.get("rule") is None else str(detail["rule"])
        error = None if detail.get("error") is None else str(detail["error"])
    request = str(exc).split(":", 1)[0]
    return Refused(request=request, status=exc.status, rule=rule, error=error)


def check_round(spec: RoundSpec, out: RoundOutcome, table: TableSpec | None = None) -> list[str]:
    """Every way the round differs from the invariants and the scenario's expectations.

    With `table`, a regular round (nothing but cards of the deck dealt, no flag or void
    expected) is also checked against the bench's own dealing model (`cardshoe.hil.ledger`):
    every card where the rules put it."""
    problems: list[str] = list(out.bench_problems)
    snap = out.snapshot
    cards = {int(k): v for k, v in snap.get("cards", {}).items()}
    # No card lost, none repeated, none invented.
    if set(cards) != set(out.dealt):
        lost = sorted(set(out.dealt) - set(cards))
        extra = sorted(set(cards) - set(out.dealt))
        problems.append(f"shoe indices differ: lost {lost}, not dealt by the bench {extra}")
    for index, (kind, code) in sorted(out.dealt.items()):
        got = cards.get(index)
        if got is None:
            continue
        want = None if kind == "unread" else code
        # The API shows each card as text ("As"); null when unread or of no deck.
        shown = got.get("card")
        got_code = parse_card(shown) if isinstance(shown, str) else None
        if got_code != want:
            problems.append(f"shoe index {index}: the bench dealt {_txt(want)} ({kind}), the daemon has "
                            f"{_txt(got_code)}")
    # The daemon's settlement is `cardshoe settle` of the round it exports.
    if spec.settle:
        if out.settlement is None:
            problems.append("the daemon gave no settlement: " + "; ".join(out.refusals))
        elif out.offline != out.settlement:
            problems.append("the daemon's settlement differs from `cardshoe settle` of its exported round")
    exp = spec.expect
    if exp.hands is not None:
        hands = {label: _shown(cards) for label, cards in (snap.get("hands") or {}).items()}
        for label, want_cards in exp.hands.items():
            got_cards = tuple(hands.get(label, ()))
            if got_cards != want_cards:
                problems.append(f"hand {label}: expected {_cards(want_cards)}, the daemon has {_cards(got_cards)}")
        # The expectation covers every position: one it does not list must be empty (the
        # discard holder is covered by `burns` / `security` when those are given).
        for label, got in sorted(hands.items()):
            covered = label == "discard" and (exp.burns is not None or exp.security is not None)
            if label not in exp.hands and got and not covered:
                problems.append(f"hand {label}: not in the expectation, so it must be empty; the daemon has "
                                f"{_cards(got)}")
    if table is not None:
        problems += _check_dealing_model(spec, out, table)
    if out.snapshot_later is not None:
        before = {k: snap.get(k) for k in ("cards", "placements", "hands", "void", "void_seats", "status")}
        after = {k: out.snapshot_later.get(k) for k in before}
        if before != after:
            changed = sorted(k for k in before if before[k] != after[k])
            problems.append(f"cards dealt after the settlement changed the settled round ({', '.join(changed)})")
        late = sorted(set(out.after_settle) & {int(k) for k in (out.snapshot_later.get("cards") or {})})
        if late:
            problems.append(f"shoe indices {late}, dealt after the settlement, are in the settled round")
    if exp.burns is not None and _shown(snap.get("burns", ())) != exp.burns:
        problems.append(f"burns: expected {_cards(exp.burns)}, got {_cards(_shown(snap.get('burns', ())))}")
    if exp.security is not None and _shown(snap.get("security", ())) != exp.security:
        problems.append(f"security: expected {_cards(exp.security)}, got {_cards(_shown(snap.get('security', ())))}")
    if exp.void is not None:
        void = snap.get("void")
        if exp.void is False and void is not None:
            problems.append(f"the round is void ({void}), expected it to stand")
        elif isinstance(exp.void, str) and (void is None or exp.void not in _rules_of(void)):
            problems.append(f"expected the round void under rule {exp.void}, got {void}")
    if exp.void_seats is not None:
        got_seats = {int(k): v for k, v in snap.get("void_seats", {}).items()}
        if set(got_seats) != set(exp.void_seats):
            problems.append(f"void seats: expected {sorted(exp.void_seats)}, got {sorted(got_seats)}")
        for seat, rule in exp.void_seats.items():
            if seat in got_seats and rule not in _rules_of(got_seats[seat]):
                problems.append(f"seat {seat} void: expected rule {rule}, got {got_seats[seat]}")
    if exp.flags is not None:
        flags = list(snap.get("irregularities", []))
        unmatched = list(flags)
        for want_flag in exp.flags:
            hit = next((f for f in unmatched if _flag_matches(want_flag, f)), None)
            if hit is None:
                problems.append(f"expected a flag {want_flag.kind} rules {list(want_flag.rules)}"
                                + (f" decision {want_flag.decision}" if want_flag.decision else "")
                                + (f" fault {want_flag.fault}" if want_flag.fault else "")
                                + f"; the round has {[_flag_text(f) for f in flags]}")
            else:
                unmatched.remove(hit)
        for f in unmatched:
            problems.append(f"unexpected flag {_flag_text(f)}")
    if (exp.net is not None or exp.outcomes is not None) and out.settlement is not None:
        seats = {int(s["seat"]): s for s in out.settlement.get("seats", [])}
        for seat, net in (exp.net or {}).items():
            got_net = seats.get(seat, {}).get("net")
            if got_net != net:
                problems.append(f"seat {seat} net: expected {net}, got {got_net}")
        for seat, wagers in (exp.outcomes or {}).items():
            got_w = {w["wager"]: w["outcome"] for w in seats.get(seat, {}).get("wagers", [])}
            for wager, outcome in wagers.items():
                if got_w.get(wager) != outcome:
                    problems.append(f"seat {seat} {wager}: expected {outcome}, got {got_w.get(wager)}")
    if exp.refusals is not None:
        problems += _check_refusals(exp.refusals, out.refused)
    return problems


def _check_dealing_model(spec: RoundSpec, out: RoundOutcome, table: TableSpec) -> list[str]:
    """A regular round's cards against the bench's own model of the dealing order (the rules)."""
    regular = (spec.expect.void is False and spec.expect.flags == () and not spec.counts and spec.confirm is None
               and all(st.kind in ("card", "misread", "double") or st.kind in ("power_cut", "unplug", "restart",
                                                                               "garbage", "deal_complete")
                       for st in spec.deal + spec.after_decisions))
    if not regular:
        return []
    method = table.method if table.dealing == "automated" else None
    try:
        ledger = RoundLedger(out.round_id, table.game, table.dealing, method, dict(spec.wagers))
        deal_slots, after_slots = ledger.slots()
    except LedgerError as exc:
        return [f"the bench's dealing model: {exc}"]
    before = [code for _kind, code in (out.dealt[i] for i in sorted(out.dealt))][:len(deal_slots) + len(after_slots)]
    ledger.cards = [Dealt(order=n + 1, code=c) for n, c in enumerate(before[:len(deal_slots)])]
    ledger.after = [Dealt(order=len(deal_slots) + n + 1, code=c) for n, c in enumerate(before[len(deal_slots):])]
    # Lost, invented and wrongly read cards are reported above by shoe index; here, the places.
    return [f"{f.kind}: {f.detail}" for f in compare(ledger, out.snapshot) if f.kind == "misplaced"]


def _check_refusals(want: tuple[RefusalExpect, ...], got: list[Refused]) -> list[str]:
    """The refused requests must be exactly the expected ones, in order."""
    problems = []
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if g is None:
            assert w is not None
            problems.append(f"expected refusal {i + 1} ({w.status}" + (f", rule {w.rule}" if w.rule else "")
                            + f"); the daemon refused only {len(got)} request(s)")
        elif w is None:
            problems.append(f"unexpected refusal {g}")
        elif g.status != w.status or (w.rule is not None and g.rule != w.rule) \
                or (w.error is not None and g.error != w.error):
            problems.append(f"refusal {i + 1}: expected {w.status}"
                            + (f" rule {w.rule}" if w.rule else "") + (f" {w.error}" if w.error else "")
                            + f", got {g}")
    return problems


def _rules_of(mark: Any) -> list[str]:
    if isinstance(mark, dict):
        rule = mark.get("rule") or mark.get("rules") or []
        return [rule] if isinstance(rule, str) else [str(r) for r in rule]
    return [str(mark)]


def _flag_matches(want: FlagExpect, got: dict[str, Any]) -> bool:
    if got.get("kind") != want.kind:
        return False
    if not set(want.rules) <= set(got.get("rules", [])):
        return False
    if want.decision is not None and got.get("decision") != want.decision:
        return False
    return want.fault is None or got.get("fault") == want.fault


def _flag_text(f: dict[str, Any]) -> str:
    fault = f" fault {f['fault']}" if f.get("fault") else ""
    return f"{f.get('kind')} rules {f.get('rules')} decision {f.get('decision')}{fault}"


def _txt(code: Any) -> str:
    return "unread" if code is None else card_text(int(code))


def _cards(codes: Any) -> str:
    return " ".join("??" if c is None else card_text(int(c)) for c in codes) or "-"


def _shown(cards: Any) -> tuple[int | None, ...]:
    """Cards as the API shows them (text, "As"; null when not shown) as codes, to compare
    with the scenario's expectations."""
    return tuple(parse_card(c) if isinstance(c, str) else None for c in cards or ())


@dataclass
class ScenarioResult:
    """The outcome of one scenario."""

    name: str
    passed: bool
    seconds: float
    problems: list[str]
    rounds: list[RoundOutcome]
    error: str | None = None


@dataclass(frozen=True)
class FlashedImage:
    """A board image made by flashing once, copied for each scenario (same firmware, same shoe)."""

    image: Path
    keys: Path
    flashed_with: str
    romfs: Path | None = None  # the ROM partition, where `cardshoe flash` put the code


def flash_image(workdir: Path, log: Log) -> FlashedImage:
    """Flash a virtual board once and keep its image and key store for the scenarios."""
    bench = Bench(workdir, TableSpec("three-card-poker"), log=log)
    try:
        bench.flash()
        bench.board.power_off()
        rom = bench.board.romfs_path if bench.board.romfs_size and bench.board.romfs_path.exists() else None
        return FlashedImage(bench.board.flash.path, bench.keys_dir, bench.flashed_with, rom)
    finally:
        bench.close()


def run_scenario(scenario: Scenario, workdir: Path, log: Log, *, bench: Bench | None = None,
                 image: FlashedImage | None = None) -> ScenarioResult:
    """Set up a fresh bench for `scenario` (unless given one), play its rounds, check them.

    With `image`, the board starts from a copy of that flashed image instead of being
    flashed again."""
    started = time.monotonic()
    problems: list[str] = []
    outcomes: list[RoundOutcome] = []
    own = bench is None
    error: str | None = None
    try:
        if bench is None:
            bench = Bench(workdir, TableSpec(scenario.game, scenario.seats, scenario.dealing, scenario.method),
                          line=scenario.line, seed=scenario.seed, log=log)
            if image is not None:
                bench.adopt_image(image.image, image.keys, image.flashed_with, image.romfs)
            else:
                bench.flash()
            if scenario.line is not None:
                bench.start_line(scenario.line or LineFaults())
            bench.start_daemon()
            bench.load_shoe()
        for i, spec in enumerate(scenario.rounds):
            out = play_round(bench, spec, log)
            outcomes.append(out)
            table = TableSpec(scenario.game, scenario.seats, scenario.dealing, scenario.method)
            problems += [f"round {i + 1} ({out.round_id}): {p}" for p in check_round(spec, out, table)]
    except Exception as exc:  # noqa: BLE001 - a scenario that cannot run is a failed scenario, with why
        error = f"{type(exc).__name__}: {exc}"
        if bench is not None:
            error += f" [{bench.diagnose()}]"
    finally:
        if own and bench is not None:
            try:
                bench.close()
            except Exception as exc:  # noqa: BLE001 - one bench failing to close must not end the whole run
                error = error or f"closing the bench: {type(exc).__name__}: {exc}"
    passed = error is None and not problems
    return ScenarioResult(scenario.name, passed, time.monotonic() - started, problems, outcomes, error)
