"""What the mathematics says a wager should do: exact moments of the house's win per unit staked.

For each game the report needs, per *component* (the wagers settled together on one unit of
stake), the house's expected win, its variance and its third central moment, and how two
components co-vary on one seat and on two seats of one round:

| game | component | unit | from |
|---|---|---|---|
| TCP, Megalink TCP, Xtreme | `ante_play` | the ante | par sheet "ante+play" (ante, play and ante bonus) |
| same | `pair_plus` | the stake | par sheet "pair_plus" |
| Xtreme | `six_card_bonus` | the stake | par sheet "six_card_bonus" |
| Let It Ride | `base` | one wager (the $) | par sheet "one+two+dollar" (1, 2 and $ with both pull-backs) |
| Singapore Stud | `ante_bet` | the ante | par sheet "ante+bet" (the up-card optimum) |

The moments are exact fractions from the par sheets' outcome lines (exhaustive enumeration,
`cardshoe.parsheet`), under the strategy those sheets use: the one that maximises the
player's return. That strategy minimises the house's expectation over all strategies, so the
theoretical win is the least the house can expect whatever the players decide; players who
decide worse push the actual hold above it, never below (docs/report.md, "Strategy").

Covariances. Seats of one round share the dealer's hand (and Let It Ride's community cards),
so their results are correlated; a seat's wagers share its hand. They are computed exactly
by enumeration (`cardshoe.report.covariance`) for the Three Card Poker family (`ante_play`,
`pair_plus`, `six_card_bonus`, one seat and two seats) and Let It Ride (`base` of two seats).
Singapore Stud's `ante_bet` of two seats is not (five-card hands on both sides): the report
takes the Cauchy-Schwarz bound, correlation 1, whose band is wider than the exact one and
whose alarm is conservative (docs/report.md says so).

Distributions. Besides the moments, each component keeps its exact outcome distribution per
unit (`atoms`, from the par sheet's lines) and, where the enumeration gives it, one seat's
joint distribution of its components (`joint`): the alarm's sequential boundary bounds the
tails of a group's result with them (`cardshoe.report.boundary`).

Computing the sheets takes seconds (Stud's up-card optimum about a minute of CPU), so the
moments are kept in `theory.json` beside this module, keyed by the pay table's digest: a pay
table that changes without `cardshoe report --refresh-theory` being run is not priced by
a stale sheet (the report says the game is not priced).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = [
    "COMPONENTS", "Moments", "GameTheory", "TheoryError", "component_of", "theory_for", "compute_theory",
    "paytable_digest", "THEORY_PATH", "load_theory_file", "write_theory_file",
]

THEORY_PATH = Path(__file__).with_name("theory.json")

#: Settlement wager name -> component, per game family.
_TCP_COMPONENT = {"ante": "ante_play", "play": "ante_play", "ante_bonus": "ante_play", "pair_plus": "pair_plus",
                  "six_card_bonus": "six_card_bonus", "progressive": "progressive"}
_COMPONENT_OF: dict[str, dict[str, str]] = {
    "three-card-poker": _TCP_COMPONENT,
    "megalink-three-card-poker": _TCP_COMPONENT,
    "megalink-three-card-poker-xtreme": _TCP_COMPONENT,
    "megalink-let-it-ride": {"one": "base", "two": "base", "dollar": "base", "progressive": "progressive"},
    "megalink-singapore-stud-poker": {"ante": "ante_bet", "bet": "ante_bet", "progressive": "progressive"},
}
#: The wager whose stake is a component's unit.
UNIT_WAGER = {"ante_play": "ante", "pair_plus": "pair_plus", "six_card_bonus": "six_card_bonus", "base": "dollar",
              "ante_bet": "ante", "progressive": "progressive"}
#: The par sheet wager each component's distribution comes from.
_SHEET_OF = {"ante_play": "ante+play", "pair_plus": "pair_plus", "six_card_bonus": "six_card_bonus",
             "base": "one+two+dollar", "ante_bet": "ante+bet"}
COMPONENTS = ("ante_play", "pair_plus", "six_card_bonus", "base", "ante_bet", "progressive")
#: Components priced by a fixed distribution (the progressive is priced per wager: its pool).
BASE_COMPONENTS = ("ante_play", "pair_plus", "six_card_bonus", "base", "ante_bet")


class TheoryError(LookupError):
    """A game, or its pay table as installed, has no computed moments."""


def component_of(game: str, wager: str) -> str | None:
    """The component a settlement's wager belongs to (None: a wager the report does not know)."""
    return _COMPONENT_OF.get(game, {}).get(wager)


@dataclass(frozen=True)
class Moments:
    """The house's win per unit staked on one component: exact mean, variance, third central moment."""

    mean: Fraction
    var: Fraction
    m3: Fraction

    @property
    def sd(self) -> float:
        """The standard deviation per unit staked."""
        return math.sqrt(float(self.var))

    @property
    def skew(self) -> float:
        """Skewness of the house's win per unit (negative: rare large payments to players)."""
        return float(self.m3) / float(self.var) ** 1.5 if self.var else 0.0

    def to_json(self) -> dict[str, str]:
        return {k: f"{v.numerator}/{v.denominator}" for k, v in (("mean", self.mean), ("var", self.var),
                                                                 ("m3", self.m3))}

    @classmethod
    def from_json(cls, data: Mapping[str, str]) -> Moments:
        return cls(Fraction(data["mean"]), Fraction(data["var"]), Fraction(data["m3"]))


@dataclass(frozen=True)
class GameTheory:
    """One game's components, their moments, and how they co-vary within a round."""

    game: str
    rules_version: str
    revision: int
    digest: str
    components: dict[str, Moments]
    same_seat: dict[tuple[str, str], Fraction] = field(default_factory=dict)
    """Exact covariance of two different components of one seat, per unit each."""
    cross_seat: dict[tuple[str, str], Fraction] = field(default_factory=dict)
    """Exact covariance of a component of one seat and one of another seat of the same round."""
    strategy: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    atoms: dict[str, tuple[tuple[Fraction, Fraction], ...]] = field(default_factory=dict)
    """Per component: (the player's net per unit, its probability), every outcome of the par sheet."""
    joint_components: tuple[str, ...] = ()
    joint: tuple[tuple[Fraction, ...], ...] = ()
    """One seat's joint distribution of `joint_components`: rows (net per unit of each..., probability)."""
    progressive: tuple[dict[str, Any], ...] = ()
    """The progressive's pay lines: `p` (exact), and `odds_net` (per unit), `fixed` (minor units per
    minimum wager) or `pool_percent`; an `envy` line's `fixed` is paid per other ante hand, a
    `magic` line's `odds_net` on the stake (Let It Ride 4.3)."""

    def cov_same(self, a: str, b: str) -> tuple[float, bool]:
        """Covariance of components a and b of one seat (a != b) and whether it is exact;
        without an exact figure, the bound sd_a * sd_b."""
        got = self.same_seat.get((a, b), self.same_seat.get((b, a)))
        if got is not None:
            return float(got), True
        return self.components[a].sd * self.components[b].sd, False

    def cov_cross(self, a: str, b: str) -> tuple[float, bool]:
        """Covariance of component a of one seat and b of another seat of the round, and whether it is exact."""
        got = self.cross_seat.get((a, b), self.cross_seat.get((b, a)))
        if got is not None:
            return float(got), True
        return self.components[a].sd * self.components[b].sd, False

    def to_json(self) -> dict[str, Any]:
        def frac(v: Fraction) -> str:
            return f"{v.numerator}/{v.denominator}"

        return {"game": self.game, "rules_version": self.rules_version, "revision": self.revision,
                "digest": self.digest, "components": {k: v.to_json() for k, v in self.components.items()},
                "same_seat": {f"{a}|{b}": frac(v) for (a, b), v in self.same_seat.items()},
                "cross_seat": {f"{a}|{b}": frac(v) for (a, b), v in self.cross_seat.items()},
                "strategy": dict(self.strategy), "notes": list(self.notes),
                "progressive": [dict(line) for line in self.progressive],
                "atoms": {k: [[frac(x), frac(p)] for x, p in v] for k, v in self.atoms.items()},
                "joint": {"components": list(self.joint_components),
                          "rows": [[frac(v) for v in row] for row in self.joint]}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameTheory:
        def pairs(d: Mapping[str, str]) -> dict[tuple[str, str], Fraction]:
            out: dict[tuple[str, str], Fraction] = {}
            for k, v in d.items():
                a, _, b = k.partition("|")
                out[(a, b)] = Fraction(v)
            return out

        return cls(game=str(data["game"]), rules_version=str(data["rules_version"]), revision=int(data["revision"]),
                   digest=str(data["digest"]),
                   components={k: Moments.from_json(v) for k, v in dict(data["components"]).items()},
                   same_seat=pairs(data.get("same_seat", {})), cross_seat=pairs(data.get("cross_seat", {})),
                   strategy={str(k): str(v) for k, v in dict(data.get("strategy", {})).items()},
                   notes=tuple(str(n) for n in data.get("notes", ())),
                   progressive=tuple(dict(line) for line in data.get("progressive", ())),
                   atoms={str(k): tuple((Fraction(x), Fraction(p)) for x, p in v)
                          for k, v in dict(data.get("atoms", {})).items()},
                   joint_components=tuple(str(c) for c in dict(data.get("joint", {})).get("components", ())),
                   joint=tuple(tuple(Fraction(v) for v in row) for row in dict(data.get("joint", {})).get("rows", ())))


def paytable_digest(game: str) -> str:
    """SHA-256 of the game's pay-table file as installed: what the moments were computed from."""
    from cardshoe.games import loader

    path = Path(loader.__file__).with_name("paytables") / f"{game}.json"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def moments_of(lines: Iterable[Any]) -> Moments:
    """The house's win per unit from a par sheet's outcome lines (player's net per unit)."""
    mean = var = m3 = Fraction(0)
    lines = list(lines)
    for line in lines:
        mean += line.probability * (-line.net)
    for line in lines:
        d = -line.net - mean
        var += line.probability * d * d
        m3 += line.probability * d * d * d
    return Moments(mean, var, m3)


def compute_theory(game: str, *, workers: int = 2) -> GameTheory:
    """Compute a game's moments and distributions from its par sheet, and its exact covariances
    where they are computed (`cardshoe.report.covariance`); minutes of CPU."""
    from cardshoe.games import get_game
    from cardshoe.parsheet import compute

    spec = get_game(game)
    sheet = compute(game, workers=workers)
    by_name = {w.wager: w for w in sheet.wagers}
    components: dict[str, Moments] = {}
    strategy: dict[str, str] = {}
    for comp, sheet_name in _SHEET_OF.items():
        w = by_name.get(sheet_name)
        if w is None or w.house_edge is None or any(line.net is None for line in w.lines):
            continue
        components[comp] = moments_of(w.lines)
        if w.strategy:
            strategy[comp] = " ".join(w.strategy[:1])
    atoms = {comp: _atoms(by_name[_SHEET_OF[comp]].lines) for comp in components}
    same: dict[tuple[str, str], Fraction] = {}
    cross: dict[tuple[str, str], Fraction] = {}
    joint_components: tuple[str, ...] = ()
    joint: tuple[tuple[Fraction, ...], ...] = ()
    notes = ["moments: exact, from the par sheet's outcome lines under the strategy that maximises the "
             "player's return"]
    enumerated = None
    if game in ("three-card-poker", "megalink-three-card-poker", "megalink-three-card-poker-xtreme"):
        from cardshoe.report.covariance import tcp_family

        enumerated = tcp_family(game)
        notes.append(f"{', '.join(enumerated.joint_components)}: covariances on one seat and two seats, and one "
                     "seat's joint distribution: exact enumeration of every dealer hand and every pair of disjoint "
                     "player hands (inclusion-exclusion over shared cards)")
    elif game == "megalink-let-it-ride":
        from cardshoe.report.covariance import let_it_ride

        enumerated = let_it_ride(game)
        notes.append("base of two seats (the community cards they share): exact enumeration of every ordered pair "
                     "of community cards and every pair of disjoint player hands, both pull-backs as the par sheet "
                     "decides them")
    if enumerated is not None:
        for comp, mean in enumerated.means.items():
            if comp in components and -mean != components[comp].mean:
                raise AssertionError(f"{game} {comp}: the enumeration's mean {float(-mean)} is not the par "
                                     f"sheet's {float(components[comp].mean)}")
        same, cross = dict(enumerated.same_seat), dict(enumerated.cross_seat)
        if len(enumerated.joint_components) > 1:
            joint_components, joint = enumerated.joint_components, enumerated.joint
    missing = sorted({c for c in components for d in components
                      if (c, d) not in cross and (d, c) not in cross})
    if missing:
        notes.append(f"{', '.join(missing)}: covariance of two seats not computed (five-card hands on both sides: "
                     "docs/report.md); the Cauchy-Schwarz bound (correlation 1) is used, a wider band than exact")
    return GameTheory(game=game, rules_version=spec.rules_version, revision=spec.revision,
                      digest=paytable_digest(game), components=components, same_seat=same, cross_seat=cross,
                      strategy=strategy, notes=tuple(notes), progressive=tuple(_progressive_lines(spec, by_name)),
                      atoms=atoms, joint_components=joint_components, joint=joint)


def _atoms(lines: Iterable[Any]) -> tuple[tuple[Fraction, Fraction], ...]:
    """A par sheet's outcome lines as a distribution: (the player's net per unit, probability), by net."""
    out: dict[Fraction, Fraction] = {}
    for line in lines:
        out[line.net] = out.get(line.net, Fraction(0)) + line.probability
    return tuple(sorted(out.items()))


def _progressive_lines(spec: Any, sheets: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The progressive's lines with their exact probabilities (the par sheet lists them in
    the pay table's order), the Envy Bonus per other ante hand and the Magic Card."""
    from cardshoe.parsheet.lines import net_per_unit

    out: list[dict[str, Any]] = []
    sheet = sheets.get("progressive")
    if sheet is None:
        return out
    for pay, line in zip(spec.progressive_table.lines, sheet.lines):
        net = net_per_unit(pay)
        out.append({"label": pay.label, "p": f"{line.probability.numerator}/{line.probability.denominator}",
                    "odds_net": None if net is None else str(net), "fixed": pay.fixed,
                    "pool_percent": pay.pool_percent})
    envy = sheets.get("envy_bonus")
    if envy is not None:
        for line in envy.lines:
            pay = next((p for p in spec.progressive_table.lines if line.label.endswith(p.label) and p.envy), None)
            if pay is not None:
                out.append({"label": f"envy: {pay.label}", "p": f"{line.probability.numerator}/"
                            f"{line.probability.denominator}", "odds_net": None, "fixed": pay.envy,
                            "pool_percent": None, "envy": True})
    magic = sheets.get("magic_card")
    if magic is not None and magic.lines and magic.lines[0].net is not None:
        first = magic.lines[0]
        out.append({"label": first.label, "p": f"{first.probability.numerator}/{first.probability.denominator}",
                    "odds_net": str(first.net), "fixed": None, "pool_percent": None, "magic": True})
    return out


# -- the file of computed moments ------------------------------------------------------------
def load_theory_file(path: Path = THEORY_PATH) -> dict[str, GameTheory]:
    """The moments kept beside this module (empty when there is no file)."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {g: GameTheory.from_json(v) for g, v in dict(data.get("games", {})).items()}


def write_theory_file(theories: Mapping[str, GameTheory], path: Path = THEORY_PATH) -> None:
    """Write the moments file (sorted, so a recomputation that agrees changes nothing)."""
    body = {"format": "cardshoe.report.theory/1", "games": {g: t.to_json() for g, t in sorted(theories.items())}}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


@lru_cache(maxsize=None)
def _installed() -> dict[str, GameTheory]:
    return load_theory_file()


def theory_for(game: str, revision: int | None = None) -> GameTheory:
    """The moments of `game` for the pay table in force, or TheoryError saying why not."""
    got = _installed().get(game)
    if got is None:
        raise TheoryError(f"{game}: no moments computed (cardshoe report --refresh-theory)")
    if got.digest != paytable_digest(game):
        raise TheoryError(f"{game}: the installed pay table is not the one the moments were computed from "
                          "(cardshoe report --refresh-theory)")
    if revision is not None and revision != got.revision:
        raise TheoryError(f"{game}: settled under pay table revision {revision}; moments are for revision "
                          f"{got.revision}")
    return got


def refresh(games: Iterable[str] | None = None, *, workers: int = 2, log: Any = None) -> dict[str, GameTheory]:
    """Recompute the moments of `games` (default all five) and rewrite the file; returns them."""
    from cardshoe.parsheet import GAMES

    current = dict(load_theory_file())
    for game in games or GAMES:
        if log is not None:
            log(f"computing the moments of {game} ...")
        current[game] = compute_theory(game, workers=workers)
        write_theory_file(current)
    _installed.cache_clear()
    return current
