"""Scenario files: a table, its rounds, the shoe's order of cards, the faults, what must come out.

The format is TOML (read with `tomllib`), documented in docs/bench.md. In short::

    name = "tcp-automated"
    about = "Three Card Poker, automated device: three to each wagered seat, then the dealer (3.7)"
    game = "three-card-poker"
    dealing = "automated"          # or "manual"; Xtreme: method = "A" | "B" | "C"
    seats = 7                      # positions on the layout
    seed = 1                       # the random source of line faults and shuffled shoes

    [line]                         # optional: line faults through the fault relay
    corrupt = 0.01                 # per byte, one bit flipped
    drop_bytes = 0.0               # per byte, lost
    drop_frames = 0.01             # per frame, lost whole

    [[round]]
    wagers = { "2" = { ante = 1000, pair_plus = 500 }, "5" = { ante = 1000 } }
    deal = ["Ah", "Kh", "Qh", "2c", "7d", "9s", "Jc", "Jd", "4s"]
    decisions = [[2, "play"], [5, "fold"]]

    [round.expect]
    hands = { "seat 2" = ["Ah", "Kh", "Qh"], "seat 5" = ["2c", "7d", "9s"], dealer = ["Jc", "Jd", "4s"] }
    net = { "2" = 2500, "5" = -1000 }

A `deal` entry is a step of the dealer or the bench, in order:

=====================  =====================================================================
``"Ah"``               a card of the shoe's deck: its barcode read, then the exit sensor
``"?"``                an unread card: the exit sensor fires with no read
``"foreign:Ah"``       a card of another deck (its barcode carries another deck id)
``"misread:Ah"``       a garbled barcode first (bad check character), then the good read
``"double:Ah"``        the same barcode read twice as the card slides out (one card)
``"!expose"``          the dealer presses the shoe's exposure key
``"!deal_complete"``   the dealer presses "deal complete" (also done after `deal` unless
                       ``deal_complete = false``)
``"!jam"``             a card jams in the shoe's throat, then is cleared
``"!power_cut"``       the shoe's power is cut now, and restored
``"!unplug"``          the USB cable is pulled and plugged back in
``"!restart"``         the daemon is SIGKILLed and started again
``"!garbage"``         a burst of 200 random bytes on the line (needs ``[line]``)
=====================  =====================================================================

A duplicate card is simply the same card text dealt twice. Other round keys:
``after_decisions`` (deal entries after the decisions: Xtreme method B's dealer hand),
``exposures`` (table-declared exposures, each ``{shoe_index = N}``), ``counts`` (a person's
counts for an open count flag: ``[{position = "seat 2", count = 2}]``), ``confirm``
(supervisor's answer to a proposed reconstruction or a referral: true / false),
``candidate`` (with ``confirm``: which of a manual-deal slip's proposed placements the
supervisor picks, 5.7: the API's 1-based number, or ``{slip_pass = N}`` for the candidate in
which the short seat missed pass N), ``absent`` (seats whose player is absent for the
decision, 5.11: ``[5]``), ``late_wagers`` (wagers placed, or with ``change = true``
changed, after "no more bets", 5.5-5.6: ``[{seat = 2, wager = "ante", amount = 2000}]``),
``progressive`` (Let It Ride: ``{magic_card = "2s", lucky_seat = 7}``), ``jackpot_pool``
(the progressive pool as displayed, minor units, sent with the settlement), ``settle``
(default true). ``[round.expect]``: ``hands`` (position label -> cards), ``burns``,
``security``, ``void`` (false, or the rule that voided the round, e.g. "5.4"),
``void_seats`` (seat -> rule), ``flags`` (each ``{kind, rules, decision?, fault?}``; the
round must carry exactly these flags), ``net`` (seat -> net in minor units),
``outcomes`` (seat -> {wager -> outcome}), ``refusals`` (every request the daemon refused
in the round, in order, each ``{status, rule?, error?}``; without it refusals are not checked).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardshoe.cards import CardError, parse_card
from cardshoe.hil.relay import LineFaults

GAMES = (
    "three-card-poker",
    "megalink-three-card-poker",
    "megalink-three-card-poker-xtreme",
    "megalink-let-it-ride",
    "megalink-singapore-stud-poker",
)
BENCH_STEPS = ("expose", "deal_complete", "jam", "power_cut", "unplug", "restart", "garbage")
CARD_KINDS = ("card", "unread", "foreign", "misread", "double")


class ScenarioError(ValueError):
    """A scenario file is not valid; the message names the file and the field."""


# Every key a scenario file may hold, table by table: anything else is an error naming the key
# (a typo such as `[round.expected]` must not pass silently).
TOP_KEYS = ("name", "about", "game", "dealing", "method", "seats", "seed", "line", "round")
LINE_KEYS = ("corrupt", "drop_bytes", "drop_frames", "directions")
ROUND_KEYS = ("new_shoe", "wagers", "progressive", "late_wagers", "deal", "deal_complete", "exposures", "counts",
              "absent", "decisions", "after_decisions", "confirm", "candidate", "jackpot_pool", "settle",
              "after_settle", "expect")
EXPECT_KEYS = ("hands", "burns", "security", "void", "void_seats", "flags", "net", "outcomes", "refusals")
FLAG_KEYS = ("kind", "rules", "decision", "fault")
FLAG_KINDS = ("card_not_due", "too_few_cards", "exposures_during_deal", "exposure", "deck", "not_covered",
              "power_failure")
PROGRESSIVE_KEYS = ("magic_card", "lucky_seat")
#: Position labels as the daemon names hands (docs/api.md): `seat 1` .. `seat 7`, and the areas.
AREAS = ("dealer", "community", "discard")
OUTCOMES = ("win", "lose", "push", "void", "returned")  # the settlement format's outcomes (docs/round-format.md)


def _only(raw: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """ScenarioError naming the first key of `raw` not in `allowed`."""
    for key in raw:
        if key not in allowed:
            at = f"{where}." if where else ""
            raise ScenarioError(f"{at}{key}: unknown key (expected one of {', '.join(allowed)})")


def check_position(label: Any, where: str) -> str:
    """A position label exactly as the daemon writes it: `seat N` (1..7), `dealer`,
    `community` or `discard`; ScenarioError otherwise (`Seat 1`, `seat1`, `Dealer` are refused)."""
    if isinstance(label, str):
        if label in AREAS:
            return label
        head, _, num = label.partition(" ")
        if head == "seat" and num.isdigit() and str(int(num)) == num and 1 <= int(num) <= 7:
            return label
    raise ScenarioError(f"{where}: {label!r} is not a position; expected \"seat 1\" .. \"seat 7\", "
                        + ", ".join(f'"{a}"' for a in AREAS))


@dataclass(frozen=True)
class Step:
    """One deal entry: a card leaving the shoe (`kind` in CARD_KINDS) or a bench step."""

    kind: str
    card: int | None = None
    text: str = ""


@dataclass(frozen=True)
class FlagExpect:
    """A flag the round must carry."""

    kind: str
    rules: tuple[str, ...]
    decision: str | None = None
    fault: str | None = None


@dataclass(frozen=True)
class LateWager:
    """A wager placed (or changed) after "no more bets": the daemon must refuse it (5.5-5.6)."""

    seat: int
    wager: str
    amount: int
    change: bool = False


@dataclass(frozen=True)
class RefusalExpect:
    """A request the daemon must have refused: its HTTP status, and the rule and error it named."""

    status: int
    rule: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Expect:
    """What must come out of a round."""

    hands: dict[str, tuple[int, ...]] | None = None
    burns: tuple[int, ...] | None = None
    security: tuple[int, ...] | None = None
    void: str | bool | None = None
    void_seats: dict[int, str] | None = None
    flags: tuple[FlagExpect, ...] | None = None
    net: dict[int, int] | None = None
    outcomes: dict[int, dict[str, str]] | None = None
    refusals: tuple[RefusalExpect, ...] | None = None


@dataclass(frozen=True)
class RoundSpec:
    """One round of a scenario."""

    wagers: dict[int, dict[str, int]]
    deal: tuple[Step, ...]
    deal_complete: bool = True
    decisions: tuple[tuple[int, str], ...] = ()
    after_decisions: tuple[Step, ...] = ()
    exposures: tuple[int, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()
    confirm: bool | None = None
    candidate: int | dict[str, int] | None = None
    absent: tuple[int, ...] = ()
    late_wagers: tuple[LateWager, ...] = ()
    progressive: dict[str, Any] | None = None
    jackpot_pool: int | None = None
    settle: bool = True
    expect: Expect = field(default_factory=Expect)
    new_shoe: bool = False  # load a new shoe (a new deck id) before this round
    after_settle: tuple[Step, ...] = ()  # deal entries after the settlement


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario file."""

    name: str
    about: str
    game: str
    dealing: str
    method: str | None
    seats: int
    seed: int
    line: LineFaults | None
    rounds: tuple[RoundSpec, ...]
    path: Path | None = None


def load_scenario(path: Path) -> Scenario:
    """Read and check a scenario file; raises ScenarioError naming the file and field."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc
    try:
        return parse_scenario(data, path=Path(path))
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from None


def parse_scenario(data: dict[str, Any], *, path: Path | None = None) -> Scenario:
    """A Scenario from the TOML's data; raises ScenarioError naming the field."""
    _only(data, TOP_KEYS, "")
    name = _str(data, "name")
    if not all(c.isalnum() or c in "-_." for c in name) or name.startswith("."):
        raise ScenarioError(f"name: {name!r}; letters, digits, '-', '_' and '.' only (it names a work folder)")
    game = _str(data, "game")
    if game not in GAMES:
        raise ScenarioError(f"game: {game!r} is not one of {', '.join(GAMES)}")
    dealing = str(data.get("dealing", "automated"))
    if dealing not in ("automated", "manual"):
        raise ScenarioError(f"dealing: {dealing!r}; expected automated or manual")
    method = data.get("method")
    if method is not None and (game != "megalink-three-card-poker-xtreme" or method not in ("A", "B", "C")):
        raise ScenarioError(f"method: {method!r}; only Xtreme has a method, A, B or C")
    seats = data.get("seats", 7)
    if not isinstance(seats, int) or not 1 <= seats <= 7:
        raise ScenarioError(f"seats: {seats!r}; expected 1..7")
    seed = data.get("seed", 0)
    if not isinstance(seed, int):
        raise ScenarioError(f"seed: {seed!r}; expected an integer")
    line = None
    if "line" in data:
        raw = data["line"]
        if not isinstance(raw, dict):
            raise ScenarioError("line: expected a table")
        _only(raw, LINE_KEYS, "line")
        try:
            line = LineFaults(corrupt=float(raw.get("corrupt", 0.0)), drop_bytes=float(raw.get("drop_bytes", 0.0)),
                              drop_frames=float(raw.get("drop_frames", 0.0)),
                              directions=str(raw.get("directions", "both")))
        except (ValueError, AttributeError) as exc:
            raise ScenarioError(f"line: {exc}") from None
    rounds_raw = data.get("round")
    if not isinstance(rounds_raw, list) or not rounds_raw:
        raise ScenarioError("round: at least one [[round]] table is needed")
    rounds = tuple(_round(r, f"round[{i}]") for i, r in enumerate(rounds_raw))
    return Scenario(name=name, about=str(data.get("about", "")), game=game, dealing=dealing, method=method,
                    seats=seats, seed=seed, line=line, rounds=rounds, path=path)


def parse_step(text: str, where: str = "deal") -> Step:
    """One deal entry (see the module docstring)."""
    if not isinstance(text, str) or not text:
        raise ScenarioError(f"{where}: {text!r} is not a deal entry")
    if text.startswith("!"):
        name = text[1:]
        if name not in BENCH_STEPS:
            raise ScenarioError(f"{where}: unknown bench step {text!r}; expected one of "
                                + ", ".join("!" + s for s in BENCH_STEPS))
        return Step(kind=name)
    if text == "?":
        return Step(kind="unread")
    kind, _, card_text = text.rpartition(":")
    kind = kind or "card"
    if kind not in CARD_KINDS or kind == "unread":
        raise ScenarioError(f"{where}: unknown card kind {kind!r} in {text!r}")
    return Step(kind=kind, card=_card(card_text, where), text=text)


def _round(raw: Any, where: str) -> RoundSpec:
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: expected a table")
    _only(raw, ROUND_KEYS, where)
    wagers: dict[int, dict[str, int]] = {}
    for seat, ws in dict(raw.get("wagers", {})).items():
        s = _seat(seat, f"{where}.wagers")
        if not isinstance(ws, dict):
            raise ScenarioError(f"{where}.wagers.{seat}: expected a table of wager = amount")
        for wager, amount in ws.items():
            if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
                raise ScenarioError(f"{where}.wagers.{seat}.{wager}: {amount!r} is not an amount in minor units")
        wagers[s] = dict(ws)
    deal = tuple(parse_step(t, f"{where}.deal[{i}]") for i, t in enumerate(_list(raw, "deal", where)))
    after = tuple(parse_step(t, f"{where}.after_decisions[{i}]")
                  for i, t in enumerate(_list(raw, "after_decisions", where)))
    after_settle = tuple(parse_step(t, f"{where}.after_settle[{i}]")
                         for i, t in enumerate(_list(raw, "after_settle", where)))
    new_shoe = raw.get("new_shoe", False)
    if not isinstance(new_shoe, bool):
        raise ScenarioError(f"{where}.new_shoe: expected true or false")
    decisions = []
    for i, d in enumerate(raw.get("decisions", [])):
        if not (isinstance(d, list) and len(d) == 2 and isinstance(d[1], str)):
            raise ScenarioError(f"{where}.decisions[{i}]: expected [seat, choice]")
        decisions.append((_seat(d[0], f"{where}.decisions[{i}]"), d[1]))
    exposures = []
    for i, e in enumerate(raw.get("exposures", [])):
        if not isinstance(e, dict) or not isinstance(e.get("shoe_index"), int) or set(e) != {"shoe_index"}:
            raise ScenarioError(f"{where}.exposures[{i}]: expected {{shoe_index = N}}")
        exposures.append(int(e["shoe_index"]))
    counts = []
    for i, c in enumerate(raw.get("counts", [])):
        if not isinstance(c, dict) or not isinstance(c.get("position"), str) or not isinstance(c.get("count"), int) \
                or set(c) != {"position", "count"}:
            raise ScenarioError(f"{where}.counts[{i}]: expected {{position = \"seat 2\", count = N}}")
        counts.append((check_position(c["position"], f"{where}.counts[{i}].position"), int(c["count"])))
    confirm = raw.get("confirm")
    if confirm is not None and not isinstance(confirm, bool):
        raise ScenarioError(f"{where}.confirm: expected true or false")
    candidate = raw.get("candidate")
    if candidate is not None:
        if confirm is None:
            raise ScenarioError(f"{where}.candidate: a candidate is picked by a confirmation; set confirm too")
        ok_number = isinstance(candidate, int) and not isinstance(candidate, bool) and candidate >= 1
        ok_pass = (isinstance(candidate, dict) and list(candidate) == ["slip_pass"]
                   and isinstance(candidate["slip_pass"], int) and candidate["slip_pass"] >= 1)
        if not (ok_number or ok_pass):
            raise ScenarioError(f"{where}.candidate: {candidate!r}; expected a number 1.. or {{slip_pass = N}}")
    absent = tuple(_seat(s, f"{where}.absent[{i}]") for i, s in enumerate(_list(raw, "absent", where)))
    late = []
    for i, w in enumerate(_list(raw, "late_wagers", where)):
        at = f"{where}.late_wagers[{i}]"
        if not isinstance(w, dict) or not isinstance(w.get("wager"), str) or set(w) - {"seat", "wager", "amount", "change"}:
            raise ScenarioError(f"{at}: expected {{seat = N, wager = \"ante\", amount = N, change = false}}")
        amount = w.get("amount")
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
            raise ScenarioError(f"{at}.amount: {amount!r} is not an amount in minor units")
        late.append(LateWager(seat=_seat(w.get("seat"), at), wager=w["wager"], amount=amount,
                              change=bool(w.get("change", False))))
    progressive = raw.get("progressive")
    if progressive is not None:
        if not isinstance(progressive, dict):
            raise ScenarioError(f"{where}.progressive: expected {{magic_card = \"2s\", lucky_seat = 7}}")
        _only(progressive, PROGRESSIVE_KEYS, f"{where}.progressive")
    pool = raw.get("jackpot_pool")
    if pool is not None and (not isinstance(pool, int) or isinstance(pool, bool) or pool < 0):
        raise ScenarioError(f"{where}.jackpot_pool: {pool!r} is not an amount in minor units")
    return RoundSpec(wagers=wagers, deal=deal, deal_complete=bool(raw.get("deal_complete", True)),
                     decisions=tuple(decisions), after_decisions=after, exposures=tuple(exposures),
                     counts=tuple(counts), confirm=confirm, candidate=candidate, absent=absent,
                     late_wagers=tuple(late), progressive=progressive, jackpot_pool=pool,
                     settle=bool(raw.get("settle", True)), expect=_expect(raw.get("expect", {}), f"{where}.expect"),
                     new_shoe=new_shoe, after_settle=after_settle)


def _expect(raw: Any, where: str) -> Expect:
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: expected a table")
    _only(raw, EXPECT_KEYS, where)
    hands = None
    if "hands" in raw:
        if not isinstance(raw["hands"], dict):
            raise ScenarioError(f"{where}.hands: expected a table of position = [cards]")
        hands = {check_position(k, f"{where}.hands.{k}"): _cards(v, f"{where}.hands.{k}")
                 for k, v in raw["hands"].items()}
    flags = None
    if "flags" in raw:
        fl = []
        for i, f in enumerate(_list(raw, "flags", where)):
            at = f"{where}.flags[{i}]"
            if not isinstance(f, dict):
                raise ScenarioError(f"{at}: expected {{kind = ..., rules = [...]}}")
            _only(f, FLAG_KEYS, at)
            if f.get("kind") not in FLAG_KINDS:
                raise ScenarioError(f"{at}.kind: {f.get('kind')!r} is not one of {', '.join(FLAG_KINDS)}")
            rules = f.get("rules", [])
            if not isinstance(rules, list):
                raise ScenarioError(f"{at}.rules: expected a list of rule numbers")
            fl.append(FlagExpect(kind=str(f["kind"]), rules=tuple(str(r) for r in rules),
                                 decision=f.get("decision"), fault=f.get("fault")))
        flags = tuple(fl)
    void = raw.get("void")
    if void is not None and not (void is False or (isinstance(void, str) and void)):
        raise ScenarioError(f"{where}.void: {void!r}; expected false or a rule number such as \"5.1\"")
    for i, (seat, wagers) in enumerate(dict(raw.get("outcomes", {})).items()):
        if not isinstance(wagers, dict) or any(v not in OUTCOMES for v in wagers.values()):
            raise ScenarioError(f"{where}.outcomes.{seat}: expected {{wager = outcome}} with outcomes "
                                f"{', '.join(OUTCOMES)}")
    refusals = None
    if "refusals" in raw:
        refusals = []
        for i, r in enumerate(_list(raw, "refusals", where)):
            if not isinstance(r, dict) or not isinstance(r.get("status"), int) or set(r) - {"status", "rule", "error"}:
                raise ScenarioError(f"{where}.refusals[{i}]: expected {{status = 409, rule = \"5.5-5.6\", error = ...}}")
            refusals.append(RefusalExpect(status=r["status"], rule=None if r.get("rule") is None else str(r["rule"]),
                                          error=None if r.get("error") is None else str(r["error"])))
    return Expect(
        hands=hands,
        burns=_cards(raw["burns"], f"{where}.burns") if "burns" in raw else None,
        security=_cards(raw["security"], f"{where}.security") if "security" in raw else None,
        void=void,
        void_seats={_seat(k, f"{where}.void_seats"): str(v) for k, v in raw["void_seats"].items()}
        if "void_seats" in raw else None,
        flags=flags,
        net={_seat(k, f"{where}.net"): int(v) for k, v in raw["net"].items()} if "net" in raw else None,
        outcomes={_seat(k, f"{where}.outcomes"): dict(v) for k, v in raw["outcomes"].items()}
        if "outcomes" in raw else None,
        refusals=None if refusals is None else tuple(refusals),
    )


def _list(raw: dict[str, Any], key: str, where: str) -> list[Any]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise ScenarioError(f"{where}.{key}: expected a list")
    return value


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{key}: required text")
    return value


def _seat(value: Any, where: str) -> int:
    try:
        seat = int(value)
    except (TypeError, ValueError):
        raise ScenarioError(f"{where}: seat {value!r} is not a number 1..7") from None
    if not 1 <= seat <= 7:
        raise ScenarioError(f"{where}: seat {seat} is not 1..7")
    return seat


def _card(text: str, where: str) -> int:
    try:
        return parse_card(text)
    except CardError as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def _cards(values: Any, where: str) -> tuple[int, ...]:
    if not isinstance(values, list):
        raise ScenarioError(f"{where}: expected a list of cards")
    return tuple(_card(v, f"{where}[{i}]") for i, v in enumerate(values))


def shipped_scenarios() -> list[Path]:
    """The scenario files shipped in hil/scenarios/, sorted by name."""
    return sorted((Path(__file__).resolve().parent / "scenarios").glob("*.toml"))
