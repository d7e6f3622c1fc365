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
so their results are correlated; a seat's wagers share its hand. For the Three Card Poker
family, `ante_play` and `pair_plus` co-vary exactly as computed here by enumeration: for
every dealer hand (taken up to suits), every pair of disjoint player hands, by
inclusion-exclusion over the cards two player hands share (`tcp_covariances`). Where no
exact covariance is computed (Six Card Bonus, Let It Ride, Stud) the report takes the
Cauchy-Schwarz bound, correlation 1: its band is then wider than the exact one and its
alarm conservative (docs/report.md says so).

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
                "progressive": [dict(line) for line in self.progressive]}

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
                   progressive=tuple(dict(line) for line in data.get("progressive", ())))


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
    """Compute a game's moments from its par sheet (and its exact covariances where
    `tcp_covariances` applies); seconds, or about a minute of CPU for Stud."""
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
    same: dict[tuple[str, str], Fraction] = {}
    cross: dict[tuple[str, str], Fraction] = {}
    notes = ["moments: exact, from the par sheet's outcome lines under the strategy that maximises the "
             "player's return"]
    if game in ("three-card-poker", "megalink-three-card-poker", "megalink-three-card-poker-xtreme"):
        same, cross = tcp_covariances(game)
        notes.append("ante_play and pair_plus covariances: exact enumeration of every dealer hand and every pair "
                     "of disjoint player hands (inclusion-exclusion over shared cards)")
    missing = [c for c in components if c not in ("ante_play", "pair_plus")] if same else list(components)
    if missing:
        notes.append(f"{', '.join(missing)}: covariance with other components and seats not computed; the "
                     "Cauchy-Schwarz bound (correlation 1) is used, a wider band than exact")
    return GameTheory(game=game, rules_version=spec.rules_version, revision=spec.revision,
                      digest=paytable_digest(game), components=components, same_seat=same, cross_seat=cross,
                      strategy=strategy, notes=tuple(notes), progressive=tuple(_progressive_lines(spec, by_name)))


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


def tcp_covariances(game: str) -> tuple[dict[tuple[str, str], Fraction], dict[tuple[str, str], Fraction]]:
    """Exact covariances of `ante_play` (per ante, optimal play) and `pair_plus` (per unit) in
    the Three Card Poker family: on one seat, and between two seats of one round.

    Integer sums over every deal: for each dealer hand D (up to suits, weighted by its class
    size) the player hands disjoint from D; two seats' hands must also be disjoint from each
    other, which inclusion-exclusion over the shared cards S gives as
    sum_{P1, P2 disjoint} f g = (sum f)(sum g) - sum_{S != 0} (-1)^(|S|+1) F_S G_S,
    F_S the sum of f over the hands holding S."""
    import numpy as np

    from cardshoe.games import dealer_qualifies, get_game
    from cardshoe.parsheet.let_it_ride import canonical_classes
    from cardshoe.parsheet.lines import line_index, net_per_unit
    from cardshoe.parsheet.three_card import hands3_evaluated
    from itertools import combinations

    spec = get_game(game)
    royal = spec.three_card_royal
    hands = hands3_evaluated(royal)
    combos = list(combinations(range(52), 3))
    index: dict[tuple[int, ...], int] = {h: i for i, h in enumerate(combos)}
    n = len(combos)
    strength = np.array([h.strength for h in hands], dtype=np.int64)
    qualifies = np.array([dealer_qualifies(spec.dealer_qualifier or "", h) for h in hands], dtype=bool)

    def nets(table_name: str) -> Any:
        table = spec.tables.get(table_name)
        out = np.zeros(n, dtype=np.int64)
        if table is None:
            return out
        for i, h in enumerate(hands):
            li = line_index(table, h)
            if li is not None:
                v = net_per_unit(table.lines[li])
                assert v is not None and v.denominator == 1
                out[i] = int(v)
        return out

    bonus = nets("ante_bonus")
    pp = nets("pair_plus")
    pp = np.where(pp == 0, -1, pp)  # no paying line: the stake is lost
    # The optimal decision per player hand, as the par sheet finds it (play iff E[play] >= -1).
    from cardshoe.parsheet.three_card import DEALER3, DealerHands

    dealer = DealerHands(hands, spec.dealer_qualifier or "")
    play = np.zeros(n, dtype=bool)
    for i, h in enumerate(hands):
        nq, win, _tie, lose = dealer.outcomes(h)
        play[i] = nq + 2 * win - 2 * lose + DEALER3 * int(bonus[i]) >= -DEALER3
    mask = np.array([(1 << a) | (1 << b) | (1 << c) for a, b, c in combos], dtype=np.int64)
    cards = np.array(combos, dtype=np.int64)
    pair_ix = [cards[:, 0] * 52 + cards[:, 1], cards[:, 0] * 52 + cards[:, 2], cards[:, 1] * 52 + cards[:, 2]]

    def overlap(f: Any, g: Any) -> int:
        """sum over ordered (P1, P2) sharing at least one card of f(P1) g(P2)."""
        total = 0
        fc = sum(np.bincount(cards[:, k], weights=f, minlength=52) for k in range(3))
        gc = sum(np.bincount(cards[:, k], weights=g, minlength=52) for k in range(3))
        total += int(round(float(np.dot(fc, gc))))
        fp = sum(np.bincount(pair_ix[k], weights=f, minlength=52 * 52) for k in range(3))
        gp = sum(np.bincount(pair_ix[k], weights=g, minlength=52 * 52) for k in range(3))
        total -= int(round(float(np.dot(fp, gp))))
        total += int(np.dot(f, g))
        return total

    sums = {"a": 0, "p": 0, "aa": 0, "ap": 0, "pp": 0, "x_aa": 0, "x_ap": 0, "x_pp": 0}
    deals = 0
    for rep, weight in canonical_classes(3).items():
        d = index[tuple(sorted(rep))]
        valid = (mask & mask[d]) == 0
        if qualifies[d]:
            base = np.where(strength > strength[d], 2, np.where(strength == strength[d], 0, -2))
        else:
            base = np.ones(n, dtype=np.int64)
        a = np.where(play, base + bonus, -1) * valid
        p = pp * valid
        sa, sp = int(a.sum()), int(p.sum())
        sums["a"] += weight * sa
        sums["p"] += weight * sp
        sums["aa"] += weight * int(np.dot(a, a))
        sums["ap"] += weight * int(np.dot(a, p))
        sums["pp"] += weight * int(np.dot(p, p))
        af, pf = a.astype(np.float64), p.astype(np.float64)
        sums["x_aa"] += weight * (sa * sa - overlap(af, af))
        sums["x_ap"] += weight * (sa * sp - overlap(af, pf))
        sums["x_pp"] += weight * (sp * sp - overlap(pf, pf))
        deals += weight * int(valid.sum())
    per_seat = deals  # (D, P) pairs: 22,100 x 18,424
    two_seats = per_seat * 15180  # (D, P1, P2) all disjoint: 18,424 x 15,180 per dealer hand
    ea, ep = Fraction(sums["a"], per_seat), Fraction(sums["p"], per_seat)
    # The house's win is minus the player's: covariances are unchanged by the sign.
    same = {("ante_play", "pair_plus"): Fraction(sums["ap"], per_seat) - ea * ep}
    cross = {("ante_play", "ante_play"): Fraction(sums["x_aa"], two_seats) - ea * ea,
             ("ante_play", "pair_plus"): Fraction(sums["x_ap"], two_seats) - ea * ep,
             ("pair_plus", "pair_plus"): Fraction(sums["x_pp"], two_seats) - ep * ep}
    return same, cross


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
