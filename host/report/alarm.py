"""The statistical alarm: a table's, dealer's or seat's result beyond what the mathematics allows.

Each watched group (a table, a dealer, a seat) is tested on each base component and overall,
once it has `min_rounds` rounds. The configured `z` names the **family-wise** false-alarm
rate alpha = P(|Z| > z) (two-sided; `sides = "low"`: P(Z < -z)): the chance that any of the
m tests watched raises an alarm on honest play. Each test gets the Sidak rate
alpha_m = 1 - (1 - alpha)^(1/m) (m alpha_m <= -log(1 - alpha), alpha to within alpha^2 / 2).

How often the figures are looked at decides the test (`AlarmPolicy.looks`):

* `"every"` (the table after every round, the floor at every refresh): the **sequential
  boundary** (`cardshoe.report.boundary`). A test fires when its mixture martingale reaches
  1/alpha_m; by Ville's inequality an honest group ever does so, at any look of the shift or
  after, with probability at most alpha_m. So alpha is the rate of false alarms **per shift**
  (indeed per any stretch of looks), not per look.
* `"one"` (a report printed and read once): z against the Sidak-corrected normal quantile;
  alpha is the rate at that one look. Looked at repeatedly this threshold is crossed far more
  often (measured: 1 honest shift in 10 at z = 3, looks every 5 rounds).

The threshold printed with every alarm is the z the boundary stands at for that group at this
look (sequential), or the corrected quantile (one look).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Mapping

from cardshoe.report import boundary

if TYPE_CHECKING:
    from cardshoe.report.figures import Cell, Figures

__all__ = ["AlarmPolicy", "evaluate", "corrected_z", "family_alpha", "per_test_alpha"]

_N = NormalDist()


@dataclass(frozen=True)
class AlarmPolicy:
    """What the alarm watches, how sure it must be, and how often it is looked at."""

    z: float = 3.0
    """Family-wise: the z whose normal tail is the false-alarm rate of all tests together."""
    min_rounds: int = 100
    sides: str = "both"
    """"both": too little or too much hold; "low": only the house winning too little."""
    kinds: tuple[str, ...] = ("table", "dealer", "seat")
    looks: str = "every"
    """"every": the sequential boundary (a rate per shift); "one": a single look (a printed report)."""

    def __post_init__(self) -> None:
        if self.sides not in ("both", "low"):
            raise ValueError("sides: both or low")
        if self.looks not in ("every", "one"):
            raise ValueError("looks: every or one")
        if not self.z > 0 or self.min_rounds < 1:
            raise ValueError("z > 0 and min_rounds >= 1")


def family_alpha(policy: AlarmPolicy) -> float:
    """The false-alarm rate of everything watched (per shift with `looks = "every"`, per look with "one")."""
    tail = 1 - _N.cdf(policy.z)
    return 2 * tail if policy.sides == "both" else tail


def per_test_alpha(policy: AlarmPolicy, tests: int) -> float:
    """Each test's rate with `tests` tests watched (Sidak)."""
    return float(1 - (1 - family_alpha(policy)) ** (1 / max(1, tests)))


def corrected_z(policy: AlarmPolicy, tests: int) -> float:
    """The one-look per-test threshold for `tests` tests watched (Sidak)."""
    per = per_test_alpha(policy, tests)
    return _N.inv_cdf(1 - per / 2) if policy.sides == "both" else _N.inv_cdf(1 - per)


def _candidates(source: Any, policy: AlarmPolicy) -> list[tuple[str, str, str, Mapping[str, Any], Cell | None]]:
    """(kind, key, row, figures as JSON, the cell) of every test with enough rounds."""
    from cardshoe.report.figures import Figures

    out: list[tuple[str, str, str, Mapping[str, Any], Cell | None]] = []
    if isinstance(source, Figures):
        band = source.opts.band_z
        for (kind, key), rows in sorted(source.cells.items()):
            if kind not in policy.kinds:
                continue
            for row, cell in sorted(rows.items()):
                if row == "progressive" or cell.z is None or cell.unpriced or len(cell.rounds) < policy.min_rounds:
                    continue
                out.append((kind, key, row, cell.to_json(band), cell))
        return out
    for kind in policy.kinds:
        for key, group in dict(source.get("groups", {}).get(kind, {})).items():
            for row, js in dict(group.get("hold", {})).items():
                if row == "progressive" or js.get("z") is None or js.get("unpriced_wagers"):
                    continue
                if js["rounds"] >= policy.min_rounds:
                    out.append((kind, key, row, js, None))
    return out


def evaluate(source: Figures | Mapping[str, Any], policy: AlarmPolicy, *,
             extra_tests: int = 0) -> list[dict[str, Any]]:
    """The alarms the figures raise under `policy`, each with the figures behind it. `source` is
    a `Figures` (either kind of look) or a report's JSON (one look only). `extra_tests` adds
    tests watched elsewhere to the correction (the floor watches every table)."""
    from cardshoe.report.figures import Figures

    if policy.looks == "every" and not isinstance(source, Figures):
        raise TypeError("the sequential boundary needs the figures themselves (Figures), not their JSON")
    candidates = _candidates(source, policy)
    if not candidates:
        return []
    m = len(candidates) + extra_tests
    alpha_m = per_test_alpha(policy, m)
    sides = ("low", "high") if policy.sides == "both" else ("low",)
    alpha_side = alpha_m / len(sides)
    one_z = corrected_z(policy, m)
    out: list[dict[str, Any]] = []
    for kind, key, row, js, cell in candidates:
        z = float(js["z"])
        fired: tuple[str, float] | None = None
        if policy.looks == "one":
            if z < -one_z:
                fired = ("low", one_z)
            elif policy.sides == "both" and z > one_z:
                fired = ("high", one_z)
        else:
            assert cell is not None
            for direction in sides:
                side = _side(cell, direction)
                if boundary.crosses(side, alpha_side, policy.min_rounds):
                    fired = (direction, boundary.threshold(side, alpha_side, policy.min_rounds) / cell.sd)
                    break
        if fired is None:
            continue
        direction, threshold = fired
        what = "wins less" if direction == "low" else "wins more"
        look = "sequential boundary, every look" if policy.looks == "every" else "one look"
        out.append({
            "type": "hold", "group": kind, "key": key, "row": row, "direction": direction,
            "rounds": js["rounds"], "handle": js["handle"], "actual": js["actual"],
            "theoretical": js["theoretical"], "sd": js["sd"], "z": js["z"], "threshold": round(threshold, 3),
            "tests": m, "alpha_family": family_alpha(policy), "alpha_test": alpha_m, "looks": policy.looks,
            "min_rounds": policy.min_rounds, "covariance": js.get("covariance"),
            "message": (f"{kind} {key}, {row}: the house {what} than the mathematics allows: actual "
                        f"{js['actual']} against theoretical {js['theoretical']:.0f} (sd {js['sd']:.0f}) over "
                        f"{js['rounds']} rounds, z {z:+.2f} beyond {threshold:.2f} ({look}, {m} tests watched)"),
        })
    return out


def _side(cell: Cell, direction: str) -> boundary.Side:
    """One side of a cell's test: the excess in that direction, its variance and tail excess."""
    excess = (cell.theo - cell.actual) if direction == "low" else (cell.actual - cell.theo)
    tail = cell.tail_low if direction == "low" else cell.tail_high
    if tail is None:  # no distribution for a wager of the group: the normal part alone
        tail = [0.0] * len(boundary.GRID)
    import numpy as np

    return boundary.Side(excess, cell.var, np.asarray(tail, dtype=float), cell.scale or math.sqrt(cell.var))
