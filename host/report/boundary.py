"""The alarm's sequential boundary: a false-alarm rate that holds over every look of a shift.

The table looks at its figures after every round, the floor at every refresh. A fixed z
crossed at any of hundreds of looks is crossed far more often than at one (measured: 1 honest
shift in 10 at z = 3). This boundary is **time-uniform**: the chance that an honest group's
result ever crosses it, at any look, however many, is at most the test's rate alpha.

The statistic. For one group (a table, a dealer, a seat) and one row (a component, or
overall), S_n = sum over its rounds of (theoretical - actual), the player's excess (the house
winning too little; the other side is -S_n), with the exact variance V_n the figures compute.
Each round's centred result Y_r has a cumulant generating function K_r(lambda) = log E
exp(lambda Y_r), bounded here by

    K_r(lambda) <= lambda^2 sigma_r^2 / 2 + sum over the round's seats of R_seat(lambda)

sigma_r^2 the round's exact variance (seats' covariances included) and R_seat the excess of
one seat's exact CGF over its normal part, from that seat's exact outcome distribution (the
par sheet's lines; for the Three Card Poker family the enumerated joint distribution of its
wagers), never below 0. For one seat's row this is exact; across seats it counts their
covariance exactly and their higher cumulants as if the seats were independent (they share
only the dealer's hand or the community cards). The excess is what a normal boundary misses:
a seat's pair plus pays 40 to 1, and a normal boundary set for 1% a side was crossed by 2.4%
of 3,000 honest seats of 1,000 rounds, this one by 0.3% (tests/report/test_report_boundary.py,
docs/report.md).

For each lambda, L_n(lambda) = exp(lambda S_n - lambda^2 V_n / 2 - T_n(lambda)), T_n the summed
excess, is a nonnegative supermartingale starting at 1, and so is any mixture M_n = sum_k w_k
L_n(lambda_k) with weights summing to 1. Ville's inequality: P(M_n >= 1/alpha at any n) <= alpha.
The alarm fires when M_n >= 1/alpha (Robbins' mixture method, with a discrete mixing
distribution). The mixture: lambda on a fixed grid (`GRID`, per minor unit, a factor 1.25
apart); the weights equal on the points whose lambda * s falls in [eta_lo, eta_hi], where s is
the group's first round's sd (fixed before any of its results is known) and the range covers
the lambdas that detect soonest between `min_rounds` and ten times that, widened by 1.5 each
way for stakes that change. Two sides: each one-sided at alpha / 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

__all__ = ["GRID", "Side", "seat_excess", "weights", "log_mixture", "crosses", "threshold", "SPAN"]

#: lambda per minor unit: 1e-9 .. about 0.1, a factor 1.25 apart (83 points).
GRID = 1e-9 * 1.25 ** np.arange(83)
_LOG_GRID = np.log(GRID)
#: The boundary is tightest for results between min_rounds and SPAN times that.
SPAN = 10.0
_WIDEN = 1.5


@dataclass(frozen=True)
class Side:
    """One side of one test at one look: the excess S (money, positive = the side's direction),
    its variance V, the summed tail excess T on `GRID`, and the group's scale s (first round's sd)."""

    s: float
    v: float
    tail: Any
    scale: float


def weights(scale: float, alpha: float, min_rounds: int) -> Any:
    """The mixing weights on `GRID` for a group of first-round sd `scale`: equal on the lambdas
    between eta_lo / scale and eta_hi / scale, eta = sqrt(2 log(1/alpha) / n) for n from
    `min_rounds` to SPAN times that, widened by 1.5 each way; they sum to 1."""
    level = 2 * math.log(1 / alpha)
    lo = math.sqrt(level / (SPAN * min_rounds)) / _WIDEN / scale
    hi = math.sqrt(level / min_rounds) * _WIDEN / scale
    inside = (GRID >= lo) & (GRID <= hi)
    if not inside.any():
        inside = np.zeros(len(GRID), dtype=bool)
        inside[int(np.argmin(np.abs(_LOG_GRID - math.log(math.sqrt(lo * hi)))))] = True
    return inside / inside.sum()


def log_mixture(side: Side, w: Any) -> float:
    """log M: the mixture of exponential supermartingales at this look."""
    use = w > 0
    lam = GRID[use]
    terms = np.log(w[use]) + lam * side.s - lam * lam * side.v / 2 - side.tail[use]
    top = float(terms.max())
    return top + math.log(float(np.exp(terms - top).sum()))


def crosses(side: Side, alpha: float, min_rounds: int) -> bool:
    """Whether the side's mixture has reached 1/alpha."""
    return log_mixture(side, weights(side.scale, alpha, min_rounds)) >= math.log(1 / alpha)


def threshold(side: Side, alpha: float, min_rounds: int) -> float:
    """The excess S (money) at which this look's mixture reaches 1/alpha (the boundary now)."""
    w = weights(side.scale, alpha, min_rounds)
    goal = math.log(1 / alpha)
    sd = math.sqrt(side.v) if side.v > 0 else side.scale
    lo, hi = 0.0, sd
    while log_mixture(Side(hi, side.v, side.tail, side.scale), w) < goal:
        lo, hi = hi, hi * 2
        if hi > 1e6 * sd:
            return math.inf
    for _ in range(60):
        mid = (lo + hi) / 2
        if log_mixture(Side(mid, side.v, side.tail, side.scale), w) < goal:
            lo = mid
        else:
            hi = mid
    return hi


# -- the tail excess of one seat's result -------------------------------------------------------------
def _excess(values: Sequence[float], probs: Sequence[float]) -> tuple[Any, Any]:
    """max(0, K(+-lambda) - lambda^2 var / 2) on GRID for a discrete centred distribution."""
    v = np.asarray(values, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    keep = p > 0
    v, p = v[keep], p[keep]
    mean = float(np.dot(p, v))
    v = v - mean
    var = float(np.dot(p, v * v))
    logp = np.log(p)
    out = []
    for sign in (1.0, -1.0):
        e = logp[None, :] + sign * GRID[:, None] * v[None, :]
        top = e.max(axis=1)
        k = top + np.log(np.exp(e - top[:, None]).sum(axis=1))
        out.append(np.maximum(0.0, k - GRID * GRID * var / 2))
    return out[0], out[1]


def _parts(theory: Any, comps: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """Distributions whose independent sum is the seat's result on `comps`: the joint one for
    the components it covers (when two or more), each component's own for the others."""
    joint = tuple(c for c in theory.joint_components if c in comps)
    if len(joint) > 1:
        return [("joint", joint)] + [("atoms", (c,)) for c in comps if c not in joint]
    return [("atoms", (c,)) for c in comps]


_THEORIES: dict[tuple[str, str], Any] = {}


@lru_cache(maxsize=4096)
def _seat_excess(key: tuple[str, str], units: tuple[tuple[str, int], ...]) -> tuple[Any, Any]:
    theory = _THEORIES[key]
    stake = dict(units)
    lo = np.zeros(len(GRID))
    hi = np.zeros(len(GRID))
    for how, comps in _parts(theory, tuple(c for c, _ in units)):
        if how == "joint":
            index = [theory.joint_components.index(c) for c in comps]
            agg: dict[float, float] = {}
            for row in theory.joint:
                value = float(sum(row[i] * stake[c] for i, c in zip(index, comps)))
                agg[value] = agg.get(value, 0.0) + float(row[-1])
            a, b = _excess(list(agg), list(agg.values()))
        else:
            (c,) = comps
            a, b = _excess([float(x) * stake[c] for x, _ in theory.atoms[c]], [float(p) for _, p in theory.atoms[c]])
        lo += a
        hi += b
    return lo, hi


def seat_excess(theory: Any, units: dict[str, int]) -> tuple[Any, Any] | None:
    """One seat's tail excess on GRID (the player's side, the house's side) for its unit stakes
    by component (minor units); None when the theory has no distribution for one of them."""
    if any(c not in theory.atoms for c in units):
        return None
    key = (theory.game, theory.digest)
    _THEORIES[key] = theory
    return _seat_excess(key, tuple(sorted(units.items())))
