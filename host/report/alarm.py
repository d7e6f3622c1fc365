"""The statistical alarm: a table's, dealer's or seat's result beyond the band the mathematics allows.

Each watched group (a table, a dealer, a seat) is tested on each base component and overall,
once it has `min_rounds` rounds: z = (actual - theoretical) / sd (`cardshoe.report.figures`).
The configured `z` fixes the **family** false-alarm rate: alpha = P(|Z| > z) (two-sided; with
`sides = "low"`, P(Z < -z)). With m tests watched at once, each test uses the Sidak-corrected
rate 1 - (1 - alpha)^(1/m), so the chance that any of the m fires on honest play at one look
is alpha (exactly, for independent tests; at most about alpha for the positively correlated
tests here: a seat is part of its table). The threshold printed with every alarm is that
corrected z.

Looks. The table looks after every settled round, the floor at every refresh: many looks at
a growing sum cross a fixed threshold more often than one look does. The rate measured over
whole honest shifts is printed by `cardshoe bench report --false-alarms` and quoted in
docs/report.md; it is the figure to set `z` by.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Mapping

__all__ = ["AlarmPolicy", "evaluate", "corrected_z", "family_alpha"]

_N = NormalDist()


@dataclass(frozen=True)
class AlarmPolicy:
    """What the alarm watches and how sure it must be."""

    z: float = 3.0
    """Family-wise: the z whose tail is the false-alarm rate of all tests at one look."""
    min_rounds: int = 100
    sides: str = "both"
    """"both": too little or too much hold; "low": only the house winning too little."""
    kinds: tuple[str, ...] = ("table", "dealer", "seat")

    def __post_init__(self) -> None:
        if self.sides not in ("both", "low"):
            raise ValueError("sides: both or low")
        if not self.z > 0 or self.min_rounds < 1:
            raise ValueError("z > 0 and min_rounds >= 1")


def family_alpha(policy: AlarmPolicy) -> float:
    """The false-alarm rate of everything watched, at one look."""
    tail = 1 - _N.cdf(policy.z)
    return 2 * tail if policy.sides == "both" else tail


def corrected_z(policy: AlarmPolicy, tests: int) -> float:
    """The per-test threshold for `tests` tests watched at once (Sidak)."""
    alpha = family_alpha(policy)
    per = 1 - (1 - alpha) ** (1 / max(1, tests))
    return _N.inv_cdf(1 - per / 2) if policy.sides == "both" else _N.inv_cdf(1 - per)


def evaluate(report: Mapping[str, Any], policy: AlarmPolicy, *, extra_tests: int = 0) -> list[dict[str, Any]]:
    """The alarms a report's figures raise under `policy`, each with the figures behind it.

    `extra_tests` adds tests watched elsewhere to the correction (the floor watches every table)."""
    candidates: list[tuple[str, str, str, Mapping[str, Any]]] = []
    for kind in policy.kinds:
        for key, group in dict(report.get("groups", {}).get(kind, {})).items():
            for row, cell in dict(group.get("hold", {})).items():
                if row == "progressive" or cell.get("z") is None or cell.get("unpriced_wagers"):
                    continue
                if cell["rounds"] >= policy.min_rounds:
                    candidates.append((kind, key, row, cell))
    m = len(candidates) + extra_tests
    if not candidates:
        return []
    threshold = corrected_z(policy, m)
    out: list[dict[str, Any]] = []
    for kind, key, row, cell in candidates:
        z = float(cell["z"])
        low = z < -threshold
        high = policy.sides == "both" and z > threshold
        if not (low or high):
            continue
        direction = "low" if low else "high"
        what = "wins less" if low else "wins more"
        out.append({
            "type": "hold", "group": kind, "key": key, "row": row, "direction": direction,
            "rounds": cell["rounds"], "handle": cell["handle"], "actual": cell["actual"],
            "theoretical": cell["theoretical"], "sd": cell["sd"], "z": cell["z"], "threshold": round(threshold, 3),
            "tests": m, "alpha_family": family_alpha(policy), "min_rounds": policy.min_rounds,
            "covariance": cell.get("covariance"),
            "message": (f"{kind} {key}, {row}: the house {what} than the mathematics allows: actual "
                        f"{cell['actual']} against theoretical {cell['theoretical']:.0f} (sd {cell['sd']:.0f}) over "
                        f"{cell['rounds']} rounds, z {z:+.2f} beyond {threshold:.2f} ({m} tests watched)"),
        })
    return out
