"""The report's figures from the tables read (`cardshoe.report.shift`): pace, hold, ratings, flags.

Hold. Each wager placed counts from the moment bets close: its stake in the **handle**, the
house's net (minus the settlement's net) in the **actual win**, and its unit stake times the
component's exact expected win per unit (`cardshoe.report.theory`) in the **theoretical
win**. A wager later returned untouched (an absent player, a void round) keeps its
theoretical and has actual 0: a return that favours a player whose hand was losing shows in
the hold; honest returns, independent of the cards, cost the house at most the edge on the
returned handle (shown). The **variance** of a group's win sums, round by round, each
component's exact variance and the covariances of the components of one seat and of two
seats of one round (exact where computed, else the correlation-1 bound); rounds are taken
as independent. z = (actual - theoretical) / sd; the band is theoretical +- `band_z` sd.

Progressive wagers are reported on their own row: theoretical = stake - expected payment,
counting fixed amounts per minimum progressive wager, pool lines at the pool displayed when
the round settled, the Envy Bonus per other ante hand and the Magic Card; the Lucky Player
(a system's selection, not a card) is left out. They are not part of a group's overall hold,
z or alarm: their results are a rare hit's (skewness in the hundreds), which no shift's
normal band describes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from fractions import Fraction
from typing import Any, Iterable, Sequence

import numpy as np

from cardshoe.report.boundary import GRID, seat_excess
from cardshoe.report.shift import Flag, RoundRec, SeatStake, TableShift
from cardshoe.report.theory import BASE_COMPONENTS, GameTheory, TheoryError, theory_for

__all__ = ["Options", "Cell", "Figures", "build", "GROUP_KINDS", "progressive_moments"]

GROUP_KINDS = ("table", "dealer", "shift", "hour", "seat", "player", "shoe")


@dataclass(frozen=True)
class Options:
    """How the figures are cut: time window, time zone, shifts, band, idle gap."""

    since_ns: int | None = None
    until_ns: int | None = None
    tz: tzinfo | None = None
    shift_starts: tuple[int, ...] = (6, 14, 22)
    """Local hours at which shifts begin."""
    band_z: float = 2.0
    idle_s: float = 900.0
    """A gap between rounds longer than this is the table closed, not play."""


@dataclass
class Cell:
    """The hold of one group on one row (a component, `progressive`, or `overall`)."""

    rounds: set[tuple[str, str]] = field(default_factory=set)
    wagers: int = 0
    handle: int = 0
    actual: int = 0
    returned: int = 0
    theo: float = 0.0
    var: float = 0.0
    exact: bool = True
    unpriced: int = 0
    scale: float = 0.0
    """The sd of the group's first priced round: the sequential boundary's scale (fixed before any result)."""
    tail_low: Any = None
    tail_high: Any = None
    """The summed tail excess of its rounds on `boundary.GRID` (the house winning less; more); None: unknown."""

    def add(self, key: tuple[str, str], wagers: int, handle: int, actual: int, returned: int, mean: float,
            var: float, exact: bool, tails: tuple[Any, Any] | None = None) -> None:
        self.rounds.add(key)
        self.wagers += wagers
        self.handle += handle
        self.actual += actual
        self.returned += returned
        self.theo += mean
        self.var += var
        self.exact = self.exact and exact
        if var > 0 and not self.scale:
            self.scale = math.sqrt(var)
            self.tail_low, self.tail_high = (np.zeros(len(GRID)), np.zeros(len(GRID)))
        if self.tail_low is not None:
            if tails is None:
                self.tail_low = self.tail_high = None  # tails unknown (an old theory.json): the normal part alone
            else:
                self.tail_low = self.tail_low + tails[0]
                self.tail_high = self.tail_high + tails[1]

    @property
    def sd(self) -> float:
        return math.sqrt(self.var) if self.var > 0 else 0.0

    @property
    def z(self) -> float | None:
        return (self.actual - self.theo) / self.sd if self.sd > 0 else None

    def to_json(self, band_z: float) -> dict[str, Any]:
        h = self.handle
        return {"rounds": len(self.rounds), "wagers": self.wagers, "handle": h, "actual": self.actual,
                "theoretical": round(self.theo, 2), "returned": self.returned,
                "hold_pct": None if not h else round(100 * self.actual / h, 4),
                "theoretical_pct": None if not h else round(100 * self.theo / h, 4),
                "sd": round(self.sd, 2), "z": None if self.z is None else round(self.z, 3),
                "band": [round(self.theo - band_z * self.sd, 2), round(self.theo + band_z * self.sd, 2)],
                "covariance": "exact" if self.exact else "bound", "unpriced_wagers": self.unpriced}


def progressive_moments(theory: GameTheory, st: SeatStake, min_stake: int | None) -> tuple[float, float] | None:
    """The house's expected win and its variance on one progressive wager (money), or None
    when a fixed line cannot be priced (no minimum progressive wager on record)."""
    mean_pay = Fraction(0)
    second = Fraction(0)
    p_none = Fraction(1)
    stake = st.handle
    extra_mean = Fraction(0)
    extra_var = Fraction(0)
    for line in theory.progressive:
        p = Fraction(str(line["p"]))
        if line.get("envy"):
            if not min_stake:
                return None
            amount = Fraction(int(line["fixed"])) * st.other_antes
            e = p * int(line["fixed"])
            extra_mean += e * st.other_antes
            extra_var += (p * int(line["fixed"]) ** 2 - e * e) * st.other_antes
            del amount
            continue
        if line.get("magic"):
            gain = p * Fraction(str(line["odds_net"])) * stake
            extra_mean += gain
            extra_var += p * (Fraction(str(line["odds_net"])) * stake) ** 2 - gain * gain
            continue
        if line.get("odds_net") is not None:
            pay = stake * (Fraction(str(line["odds_net"])) + 1)
        elif line.get("fixed") is not None:
            if not min_stake:
                return None
            pay = Fraction(int(line["fixed"]) * stake, min_stake)
        elif line.get("pool_percent") is not None and st.pool_before is not None:
            pay = Fraction(int(line["pool_percent"]) * st.pool_before, 100)
        else:
            return None
        mean_pay += p * pay
        second += p * pay * pay
        p_none -= p
    var = second - mean_pay * mean_pay + extra_var
    return float(stake - mean_pay - extra_mean), float(var)


#: Per game theory: float moments and covariances, made once (the figures sum them per round).
_FLOATS: dict[int, dict[tuple[str, str, str], tuple[float, bool]]] = {}


def _cov(theory: GameTheory, kind: str, a: str, b: str) -> tuple[float, bool]:
    table = _FLOATS.setdefault(id(theory), {})
    key = (kind, a, b)
    got = table.get(key)
    if got is None:
        if kind == "var":
            got = (float(theory.components[a].var), True)
        elif kind == "mean":
            got = (float(theory.components[a].mean), True)
        elif kind == "same":
            got = theory.cov_same(a, b)
        else:
            got = theory.cov_cross(a, b)
        table[key] = got
    return got


def _moments(theory: GameTheory, stakes: Sequence[SeatStake]) -> tuple[dict[str, tuple[float, float, bool]],
                                                                       tuple[float, float, bool]]:
    """Per component and overall: (mean, variance, exact) of the house's win on `stakes`
    (the seats of one round a group counts)."""
    terms = [(st.seat, st.component, st.unit) for st in stakes if st.component in theory.components and st.unit]
    per: dict[str, tuple[float, float, bool]] = {}
    mean_all = var_all = 0.0
    exact_all = True
    for i, (seat_i, comp_i, u_i) in enumerate(terms):
        mean = _cov(theory, "mean", comp_i, comp_i)[0]
        mean_all += u_i * mean
        m, v, ex = per.get(comp_i, (0.0, 0.0, True))
        per[comp_i] = (m + u_i * mean, v, ex)
        for seat_j, comp_j, u_j in terms[i:]:
            if seat_i == seat_j and comp_i == comp_j:
                cov, exact = _cov(theory, "var", comp_i, comp_i)
            elif seat_i == seat_j:
                cov, exact = _cov(theory, "same", comp_i, comp_j)
            else:
                cov, exact = _cov(theory, "cross", comp_i, comp_j)
            weight = 1 if (seat_i, comp_i) == (seat_j, comp_j) else 2
            var_all += weight * u_i * u_j * cov
            exact_all = exact_all and exact
            if comp_i == comp_j:
                m, v, ex = per[comp_i]
                per[comp_i] = (m, v + weight * u_i * u_j * cov, ex and exact)
    return per, (mean_all, var_all, exact_all)


def _tails(theory: GameTheory, stakes: Sequence[SeatStake]) -> dict[str, tuple[Any, Any] | None]:
    """Per component and overall: the round's tail excess on `boundary.GRID`, summed over its
    seats (each seat's from its exact distribution); None where a distribution is missing."""
    by_seat: dict[int, dict[str, int]] = {}
    for st in stakes:
        if st.component in theory.components and st.unit:
            units = by_seat.setdefault(st.seat, {})
            units[st.component] = units.get(st.component, 0) + st.unit
    out: dict[str, tuple[Any, Any] | None] = {}
    for row in {c for units in by_seat.values() for c in units} | {"overall"}:
        low, high = np.zeros(len(GRID)), np.zeros(len(GRID))
        known = True
        for units in by_seat.values():
            use = units if row == "overall" else ({row: units[row]} if row in units else {})
            if not use:
                continue
            got = seat_excess(theory, use)
            if got is None:
                known = False
                break
            low, high = low + got[0], high + got[1]
        out[row] = (low, high) if known else None
    return out


class _Hold:
    def __init__(self) -> None:
        self.cells: dict[tuple[str, str], dict[str, Cell]] = defaultdict(lambda: defaultdict(Cell))
        self._memo: dict[Any, tuple[dict[str, tuple[float, float, bool]], tuple[float, float, bool],
                                    dict[str, tuple[Any, Any] | None]]] = {}

    def add_round(self, group: tuple[str, str], rec: RoundRec, stakes: Sequence[SeatStake],
                  theory: GameTheory | None) -> None:
        key = (rec.source, rec.round_id)
        rows = self.cells[group]
        per: dict[str, tuple[float, float, bool]] = {}
        overall: tuple[float, float, bool] | None = None
        tails: dict[str, tuple[Any, Any] | None] = {}
        if theory is not None:
            memo = (key, tuple(st.seat for st in stakes))
            if memo not in self._memo:
                # The round's groups come one after another: one entry is enough.
                self._memo = {memo: (*_moments(theory, stakes), _tails(theory, stakes))}
            per, overall, tails = self._memo[memo]
        base = [st for st in stakes if st.component in BASE_COMPONENTS]
        for comp in {st.component for st in base}:
            mine = [st for st in base if st.component == comp]
            cell = rows[comp]
            handle, actual = sum(s.handle for s in mine), sum(s.house for s in mine)
            returned = sum(s.returned for s in mine)
            if comp in per:
                m, v, ex = per[comp]
                cell.add(key, len(mine), handle, actual, returned, m, v, ex, tails.get(comp))
            else:
                cell.unpriced += len(mine)
                cell.add(key, len(mine), handle, actual, returned, 0.0, 0.0, False)
        if base:
            priced = [st for st in base if theory is not None and st.component in theory.components]
            cell = rows["overall"]
            if overall is not None and priced:
                cell.add(key, len(priced), sum(s.handle for s in priced), sum(s.house for s in priced),
                         sum(s.returned for s in priced), overall[0], overall[1], overall[2], tails.get("overall"))
            cell.unpriced += len(base) - len(priced)
        for st in stakes:
            if st.component != "progressive":
                continue
            cell = rows["progressive"]
            mom = None if theory is None else progressive_moments(theory, st, rec.min_progressive)
            if mom is None:
                cell.unpriced += 1
                cell.add(key, 1, st.handle, st.house, st.returned, 0.0, 0.0, False)
            else:
                cell.add(key, 1, st.handle, st.house, st.returned, mom[0], mom[1], True)


@dataclass
class _Pace:
    rounds: int = 0
    cards: int = 0
    deal_cards: int = 0
    deal_s: float = 0.0
    play_s: float = 0.0
    phases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    shoes: int = 0
    loading_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        hours = self.play_s / 3600
        n = self.rounds or 1
        return {"rounds": self.rounds, "cards": self.cards, "hours": round(hours, 4),
                "rounds_per_hour": None if hours <= 0 else round(self.rounds / hours, 2),
                "cards_per_minute": None if hours <= 0 else round(self.cards / (hours * 60), 2),
                "dealing_cards_per_minute": None if self.deal_s <= 0 else round(60 * self.deal_cards / self.deal_s, 2),
                "phase_seconds": {k: round(v / n, 2) for k, v in self.phases.items()},
                "shoes": self.shoes, "shoes_per_hour": None if hours <= 0 else round(self.shoes / hours, 3),
                "loading_seconds": round(self.loading_s, 1)}


def _local(t_ns: int, tz: tzinfo | None) -> datetime:
    return datetime.fromtimestamp(t_ns / 1e9, tz) if tz is not None else datetime.fromtimestamp(t_ns / 1e9).astimezone()


def shift_label(t_ns: int, opts: Options) -> str:
    """The shift a time falls in, as "YYYY-MM-DD HH:00" of its start."""
    local = _local(t_ns, opts.tz)
    starts = sorted(opts.shift_starts) or [0]
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    begin = None
    for h in starts:
        if local.hour >= h:
            begin = day + timedelta(hours=h)
    if begin is None:
        begin = day - timedelta(days=1) + timedelta(hours=starts[-1])
    return begin.strftime("%Y-%m-%d %H:00")


@dataclass
class _TableProgress:
    """How far `Figures` has counted one table (one source)."""

    done: set[str] = field(default_factory=set)
    last_opened: int | None = None
    prev: RoundRec | None = None
    prev_groups: list[tuple[str, str]] = field(default_factory=list)


class Figures:
    """The report's figures kept up to date round by round: `update` counts only the rounds
    settled since the last call (a live table, the floor refreshing every 30 s), `report`
    answers every figure as plain JSON (what `render` draws), `cells` the hold per group and
    row (what the alarm reads)."""

    def __init__(self, opts: Options = Options()) -> None:
        self.opts = opts
        self._reset()

    def _reset(self) -> None:
        self.hold = _Hold()
        self.pace: dict[tuple[str, str], _Pace] = defaultdict(_Pace)
        self.theories: dict[str, GameTheory | None] = {}
        self.series: list[dict[str, Any]] = []
        self.games: set[str] = set()
        self._problems: list[str] = []
        self._progress: dict[str, _TableProgress] = {}
        self._latest: dict[str, TableShift] = {}

    @property
    def cells(self) -> dict[tuple[str, str], dict[str, Cell]]:
        """The hold by (group kind, key) and row."""
        return self.hold.cells

    def update(self, tables: Sequence[TableShift]) -> Figures:
        """Count the rounds of `tables` settled since the last update (a table read again whole
        is recounted only if a round arrived out of its order)."""
        for ts in tables:
            self._latest[ts.source] = ts
        for ts in tables:
            if not self._add(ts):
                latest = list(self._latest.values())
                self._reset()
                for again in latest:
                    self._latest[again.source] = again
                for again in latest:
                    self._add(again)
                break
        return self

    def _add(self, ts: TableShift) -> bool:
        opts = self.opts
        prog = self._progress.setdefault(ts.source, _TableProgress())
        fresh = sorted((r for r in ts.rounds if r.settled_ns is not None and r.round_id not in prog.done
                        and _in(r.opened_ns, opts)), key=lambda r: r.opened_ns)
        if not fresh:
            return True
        if prog.last_opened is not None and fresh[0].opened_ns < prog.last_opened:
            return False
        loads = sorted(t for t, _, _ in ts.shoes if _in(t, opts))
        for rec in fresh:
            if prog.prev is None:
                first_loads = sum(1 for t in loads if t <= rec.opened_ns)
            else:
                self._gap(prog, rec, loads)
                first_loads = 0
            prog.prev_groups = self._round(ts, rec, first_loads)
            prog.prev = rec
            prog.done.add(rec.round_id)
            prog.last_opened = rec.opened_ns
        return True

    def _gap(self, prog: _TableProgress, nxt: RoundRec, loads: Sequence[int]) -> None:
        """The time from the previous round's settlement to `nxt` opening: between rounds, or
        loading a shoe (closed table beyond the idle limit: none); shoes loaded meanwhile."""
        rec = prog.prev
        assert rec is not None and rec.settled_ns is not None
        gap = (nxt.opened_ns - rec.settled_ns) / 1e9
        loading = 0.0
        loaded = sum(1 for t in loads if rec.settled_ns < t <= nxt.opened_ns)
        if gap > self.opts.idle_s:
            gap = 0.0
        elif loaded:
            loading, gap = gap, 0.0
        for group in prog.prev_groups:
            p = self.pace[group]
            p.phases["between rounds"] += gap
            p.phases["loading shoes"] += loading
            p.play_s += gap + loading
            p.loading_s += loading
            if group[0] != "shoe":
                p.shoes += loaded

    def _theory(self, ts: TableShift, rec: RoundRec) -> GameTheory | None:
        if rec.game not in self.theories:
            try:
                self.theories[rec.game] = theory_for(rec.game)
            except TheoryError as exc:
                self.theories[rec.game] = None
                self._problems.append(f"{rec.game}: not priced: {exc}")
        theory = self.theories[rec.game]
        if theory is not None and rec.revision is not None and rec.revision != theory.revision:
            self._problems.append(f"{ts.table} {rec.round_id}: settled under pay table revision {rec.revision}, "
                                  f"moments are for revision {theory.revision}: not priced")
            return None
        return theory

    def _round(self, ts: TableShift, rec: RoundRec, first_loads: int) -> list[tuple[str, str]]:
        """Count one settled round (its hold, its own time); the pace groups it counts in."""
        opts, hold = self.opts, self.hold
        self.games.add(rec.game)
        theory = self._theory(ts, rec)
        shift = shift_label(rec.opened_ns, opts)
        hour = _local(rec.opened_ns, opts.tz).strftime("%Y-%m-%d %H:00")
        dealer = rec.dealer or "(no dealer signed on)"
        whole = rec.stakes
        for group in (("table", ts.table), ("dealer", dealer), ("shift", shift), ("hour", hour)):
            hold.add_round(group, rec, whole, theory)
        for seat in sorted({st.seat for st in whole}):
            mine = [st for st in whole if st.seat == seat]
            hold.add_round(("seat", f"{ts.table} seat {seat}"), rec, mine, theory)
            pid = rec.players.get(seat)
            if pid is not None:
                hold.add_round(("player", pid), rec, mine, theory)
        phases = rec.phases()
        groups = [("table", ts.table), ("dealer", dealer), ("hour", hour),
                  ("shoe", f"{ts.table} shoe {rec.shoe_no}"), ("shift", shift)]
        for group in groups:
            p = self.pace[group]
            p.rounds += 1
            p.cards += rec.cards
            if rec.deal_cards > 1 and rec.first_card_ns is not None and rec.last_card_ns is not None:
                p.deal_cards += rec.deal_cards - 1
                p.deal_s += (rec.last_card_ns - rec.first_card_ns) / 1e9
            for name, secs in phases.items():
                p.phases[name] += secs
            p.phases["between rounds"] += 0.0
            p.phases["loading shoes"] += 0.0
            p.play_s += sum(phases.values())
            if group[0] != "shoe":
                p.shoes += first_loads
        _, overall = _moments(theory, [st for st in whole if st.component in BASE_COMPONENTS]) \
            if theory is not None else ({}, (0.0, 0.0, True))
        self.series.append({"table": ts.table, "round_id": rec.round_id, "opened_ns": rec.opened_ns,
                            "theo": overall[0], "var": overall[1],
                            "settled_ns": rec.settled_ns, "cards": rec.cards, "dealer": rec.dealer,
                            "handle": sum(st.handle for st in whole if st.component != "progressive"),
                            "actual": sum(st.house for st in whole if st.component != "progressive")})
        return groups

    def report(self) -> dict[str, Any]:
        """Every figure of the report as plain JSON (what `render` draws and `--out x.json` writes)."""
        opts = self.opts
        tables = list(self._latest.values())
        problems: list[str] = []
        players: dict[str, dict[str, Any]] = {}
        for ts in tables:
            open_rounds = [r.round_id for r in ts.rounds if r.settled_ns is None and _in(r.opened_ns, opts)]
            if open_rounds:
                problems.append(f"{ts.table} ({ts.source}): {len(open_rounds)} round(s) not settled in the data, "
                                f"not counted: {', '.join(open_rounds[:5])}")
            for span in ts.spans:
                if span.role != "player":
                    continue
                start = max(span.start_ns, opts.since_ns or span.start_ns)
                end = span.end_ns if span.end_ns is not None else (ts.last_ns or span.start_ns)
                end = min(end, opts.until_ns or end)
                if end > start:
                    players.setdefault(span.who, {"seated_s": 0.0})["seated_s"] += (end - start) / 1e9
        problems += self._problems
        flags = [f for ts in tables for f in ts.flags if _in(f.raised_ns, opts)]
        groups: dict[str, dict[str, dict[str, Any]]] = {k: {} for k in GROUP_KINDS}
        for (kind, key), rows in self.hold.cells.items():
            groups[kind].setdefault(key, {})["hold"] = {row: cell.to_json(opts.band_z) for row, cell in rows.items()}
        for (kind, key), p in self.pace.items():
            groups[kind].setdefault(key, {})["pace"] = p.to_json()
        for pid, g in groups["player"].items():
            overall = g.get("hold", {})
            parts = [v for k, v in overall.items() if k != "overall"]
            seat_rounds = max((v["rounds"] for v in parts), default=0)
            handle = sum(v["handle"] for v in parts)
            g["rating"] = {"seated_s": round(players.get(pid, {}).get("seated_s", 0.0), 1), "rounds": seat_rounds,
                           "handle": handle, "average_bet": round(handle / seat_rounds, 2) if seat_rounds else None,
                           "actual": sum(v["actual"] for v in parts),
                           "theoretical": round(sum(v["theoretical"] for v in parts), 2)}
        return {
            "format": "cardshoe.report/1",
            "window": {"since_ns": opts.since_ns, "until_ns": opts.until_ns},
            "tables": [{"table": ts.table, "source": ts.source, "game": ts.game, "seats": ts.seats,
                        "first_ns": ts.first_ns, "last_ns": ts.last_ns} for ts in tables],
            "games": {g: _theory_json(self.theories.get(g)) for g in sorted(self.games)},
            "band_z": opts.band_z,
            "groups": groups,
            "flags": [_flag_json(f) for f in flags],
            "flags_by_rule": _flags_by_rule(flags),
            "series": list(self.series),
            "problems": problems,
        }


def build(tables: Sequence[TableShift], opts: Options = Options()) -> dict[str, Any]:
    """Every figure of the report as plain JSON, counted once (`Figures` keeps them up to date)."""
    return Figures(opts).update(tables).report()


def _in(t: int, opts: Options) -> bool:
    return (opts.since_ns is None or t >= opts.since_ns) and (opts.until_ns is None or t < opts.until_ns)


def _theory_json(t: GameTheory | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"revision": t.revision, "rules_version": t.rules_version, "strategy": t.strategy, "notes": list(t.notes),
            "components": {k: {"edge": float(m.mean), "sd": m.sd, "skew": m.skew} for k, m in t.components.items()}}


def _flag_json(f: Flag) -> dict[str, Any]:
    return {"table": f.table, "round_id": f.round_id, "kind": f.kind, "rules": f.rules, "raised_ns": f.raised_ns,
            "decision": f.decision, "waited_for_supervisor": f.waits, "resolved_ns": f.resolved_ns,
            "resolved_by": f.resolved_by, "final": f.final,
            "waited_s": None if f.waited_s is None else round(f.waited_s, 1)}


def _flags_by_rule(flags: Iterable[Flag]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for f in flags:
        for rule in f.rules or ["-"]:
            row = out.setdefault(rule, {"count": 0, "waited": 0, "unresolved": 0, "wait_s": []})
            row["count"] += 1
            if f.waits:
                row["waited"] += 1
                if f.waited_s is None:
                    row["unresolved"] += 1
                else:
                    row["wait_s"].append(f.waited_s)
    for row in out.values():
        waits = sorted(row.pop("wait_s"))
        row["wait_mean_s"] = round(sum(waits) / len(waits), 1) if waits else None
        row["wait_max_s"] = round(waits[-1], 1) if waits else None
    return dict(sorted(out.items()))
