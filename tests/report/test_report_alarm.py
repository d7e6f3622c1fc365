"""The hold alarm on the pure table core fed by a seeded shoe (`cardshoe.hil.shiftsim`).

Honest shuffles: the report's actual hold stays inside its band at the rate its z promises,
and no alarm fires. Three cheats: a seat dealt favourable cards, a dealer who returns an
accomplice's losing hands (keys him absent once he has seen the cards: the only way a dealer
can bend the money a card-reading table settles), and a stacked deck whose dealer's hand never
qualifies. For each, the number of rounds within which the alarm must fire is computed
beforehand, in the test, from the enumeration written from the rule document (`tcp_enum`).

The daemon looks after every round, at the sequential boundary (docs/report.md, "The alarm";
`cardshoe.report.boundary`): it fires once a mixture of exponential supermartingales reaches
1 / alpha_side, alpha_side the Sidak-corrected rate of one side. A mixture is at least any
one of its terms, so it has surely fired once, for one lambda of the grid with weight w,

    lambda S - lambda^2 V / 2 - n R(lambda) >= log(1 / (w alpha_side))

with S the player's excess at 95% power (n delta - 1.645 sqrt(n) sigma), V = n sigma^2 and
R the per-round excess of the cumulant generating function over its normal part. R is
computed here, not taken from the code: exactly from the rule document's pay table where the
seat's result is one wager drawn afresh each round (pair plus), otherwise bounded by
Bennett's inequality from the result's variance and its largest win (ante/play: the ante
and play won plus the 5-to-1 ante bonus, TCP 4.2). The grid and its weights are the
boundary's configuration (`boundary.GRID`, `boundary.weights`).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from statistics import NormalDist
import sys
from datetime import datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tcp_enum  # noqa: E402

from cardshoe.hil.shiftsim import SimTable  # noqa: E402
from cardshoe.report import boundary  # noqa: E402
from cardshoe.report.alarm import AlarmPolicy  # noqa: E402
from cardshoe.report.figures import Options, build  # noqa: E402
from cardshoe.report.live import LiveShift  # noqa: E402
from cardshoe.report.shift import read_table  # noqa: E402

#: 06:05 local on a working day: a simulated shift does not cross a shift change (6, 14, 22).
START = int(datetime(2027, 1, 15, 6, 5).astimezone().timestamp() * 1e9)
POLICY = AlarmPolicy(z=3.0, min_rounds=30)
POWER_Z = 1.645  # 95% power


def honest_rounds(rounds: int, seed: int) -> list[dict[str, dict[str, float]]]:
    """Deal `rounds` honest rounds with a new dealer each round: the report's figures per round
    (each dealer's): actual, theoretical and variance by row."""
    table = SimTable(name="T1", seed=seed, start_ns=START)
    for r in range(rounds):
        table.sign_on(f"D{r:05d}")
        table.deal_round(table.random_wagers())
    report = build([read_table(table.entries, "sim")], Options())
    assert not report["problems"], report["problems"]
    out = []
    for g in report["groups"]["dealer"].values():
        out.append({row: {"actual": float(c["actual"]), "theo": float(c["theoretical"]), "var": float(c["sd"]) ** 2}
                    for row, c in g["hold"].items()})
    return out


def _check(per_round: list[dict[str, dict[str, float]]], block: int) -> None:
    # 1. The band's rate: blocks of `block` rounds (a dealer's stint), their overall z.
    zs = []
    for k in range(0, len(per_round) - block + 1, block):
        part = [r["overall"] for r in per_round[k:k + block]]
        zs.append(sum(p["actual"] - p["theo"] for p in part) / math.sqrt(sum(p["var"] for p in part)))
    n = len(zs)
    for z, p in ((2.0, 0.9545), (1.0, 0.6827)):
        inside = sum(abs(v) <= z for v in zs)
        # The count inside the band is binomial(n, p) if the band is right: within 3.5 sd of n p.
        assert abs(inside - n * p) <= 3.5 * math.sqrt(n * p * (1 - p)), (z, inside, n, p)
    assert abs(statistics.mean(zs)) <= 3.5 / math.sqrt(n), statistics.mean(zs)
    # 2. The variance itself, round by round, where it is sharpest: ante/play, whose seats share
    # the dealer's hand. Each round's z squared has mean 1 if the variance (with the seats'
    # covariance) is right; its spread is estimated from the sample's own fourth moment.
    z2 = [(r["ante_play"]["actual"] - r["ante_play"]["theo"]) ** 2 / r["ante_play"]["var"]
          for r in per_round if "ante_play" in r and r["ante_play"]["var"] > 0]
    mean = statistics.mean(z2)
    assert abs(mean - 1) <= 3.5 * statistics.pstdev(z2) / math.sqrt(len(z2)), (mean, len(z2))


def test_honest_dealing_stays_inside_its_band_at_the_rate_the_z_promises() -> None:
    """600 honest rounds: in 60 stints of 10, |z| <= 2 about 95.45% of the time and <= 1 about
    68.27%; round by round the ante/play z squared averages 1 (seats' covariance included)."""
    per_round = honest_rounds(600, seed=11)
    assert len(per_round) == 600
    _check(per_round, 10)


@pytest.mark.slow
def test_honest_dealing_stays_inside_its_band_over_4000_rounds() -> None:
    per_round = honest_rounds(4000, seed=12)
    _check(per_round, 20)


def _first_alarm(table: SimTable, rounds: int, deal: Any, watch: str, every: int = 1) -> tuple[int | None, list[Any]]:
    """Deal up to `rounds` rounds, looking as the daemon does (LiveShift) every `every` rounds;
    the round at which an alarm naming `watch` first stood, and the alarms raised."""
    raised: list[Any] = []
    live = LiveShift("sim", policy=POLICY, clock=lambda: table.t,
                     on_alarm=lambda kind, a: raised.append(a) if kind == "hold_alarm" else None)
    seen = 0
    for r in range(1, rounds + 1):
        deal()
        if r % every and r != rounds:
            continue
        for e in table.entries[seen:]:
            live.feed(e)
        seen = len(table.entries)
        live.look()
        if any(watch in f"{a['group']} {a['key']}" for a in raised):
            return r, raised
    return None, raised


def _side_alpha(tests: int) -> float:
    """One side's rate of one test: alpha = P(|Z| > z) over `tests` (Sidak), halved (two sides)."""
    alpha = 2 * (1 - NormalDist().cdf(POLICY.z))
    return (1 - (1 - alpha) ** (1 / tests)) / 2


def _bennett(sigma: float, b: float) -> Any:
    """Bennett's bound on log E exp(lambda Y) - lambda^2 sigma^2 / 2, Y centred, Y <= b, on the grid."""
    lam = boundary.GRID
    return sigma ** 2 * (np.expm1(lam * b) - lam * b) / b ** 2 - lam * lam * sigma ** 2 / 2


def _exact_excess(values: list[float], probs: list[float], sigma: float) -> Any:
    """The exact log E exp(lambda Y) - lambda^2 sigma^2 / 2 of a discrete result, on the grid (>= 0)."""
    v = np.asarray(values, dtype=float)
    p = np.asarray(probs, dtype=float)
    v = v - float(p @ v)
    e = np.outer(boundary.GRID, v) + np.log(p)[None, :]
    top = e.max(axis=1)
    k = top + np.log(np.exp(e - top[:, None]).sum(axis=1))
    return np.maximum(0.0, k - boundary.GRID ** 2 * sigma ** 2 / 2)


def _rounds_needed(delta: float, sigma: float, tests: int, excess: Any) -> int:
    """The first round n at which the sequential alarm has surely fired with 95% probability
    (module docstring): `excess` is R per round on the grid, summed over the round's seats."""
    side = _side_alpha(tests)
    w = boundary.weights(sigma, side, POLICY.min_rounds)
    use = w > 0
    lam, goal, r = boundary.GRID[use], np.log(1 / (w[use] * side)), excess[use]
    for n in range(POLICY.min_rounds, 100_000):
        s = n * delta - POWER_Z * math.sqrt(n) * sigma
        if np.any(lam * s - lam * lam * n * sigma ** 2 / 2 - n * r >= goal):
            return n
    raise AssertionError("never")


def test_a_seat_dealt_favourable_cards_raises_the_alarm_within_the_rounds_computed() -> None:
    """Seat 3 always gets a pair or better (marked cards, a stacked deck for one seat): its pair
    plus pays 2.69 units a round on average where it should lose 0.056."""
    t = tcp_enum.table()
    pp = [int(x) for x in t["pp"]]
    paying = [x for x in pp if x > 0]
    honest = Fraction(sum(pp), len(pp))
    favoured = Fraction(sum(paying), len(paying))
    var = Fraction(sum(x * x for x in pp), len(pp)) - honest * honest
    delta = float(favoured - honest) * 1000  # the house loses this much more a round (stake 1000)
    sigma = math.sqrt(float(var)) * 1000
    tests = (1 + 1 + 7) * 3  # table, dealer, 7 seats x (ante_play, pair_plus, overall)
    counts = Counter(pp)
    excess = _exact_excess([1000.0 * x for x in counts], [c / len(pp) for c in counts.values()], sigma)
    need = _rounds_needed(delta, sigma, tests, excess)
    assert 90 <= need <= 120  # computed beforehand: 106 rounds (34 at one look)
    table = SimTable(name="T1", seed=21, start_ns=START, favour=3)
    table.sign_on("D1")

    def deal() -> None:
        wagers = table.random_wagers(seats=(6, 7))
        wagers[3] = {"ante": 1000, "pair_plus": 1000}
        table.deal_round(wagers)

    fired, raised = _first_alarm(table, need, deal, "seat T1 seat 3")
    print(f"alarm stood at round {fired}; computed beforehand: {need}")
    assert fired is not None and fired <= need, (need, raised)
    alarm = next(a for a in raised if "seat 3" in a["key"])
    assert alarm["direction"] == "low" and alarm["z"] < -alarm["threshold"]
    assert alarm["rounds"] >= POLICY.min_rounds and alarm["tests"] >= 3
    assert alarm["looks"] == "every"  # LiveShift, as the daemon runs it, looks at the sequential boundary


def test_a_dealer_returning_an_accomplices_losing_hands_raises_the_alarm_within_the_rounds_computed() -> None:
    """The dealer keys seat 5 absent (5.11: every wager returned) whenever its hand would lose:
    the house keeps none of its losses, E[max(X, 0)] per ante."""
    t = tcp_enum.table()
    n, dealers = t["n"], t["dealers"]
    gain = sum((Fraction(-int(s), dealers) if p else Fraction(1)) for s, p in zip(t["sneg"], t["play"])) / n
    e1 = sum((Fraction(int(s), dealers) if p else Fraction(-1)) for s, p in zip(t["s1"], t["play"])) / n
    e2 = sum((Fraction(int(s), dealers) if p else Fraction(1)) for s, p in zip(t["s2"], t["play"])) / n
    delta = float(gain) * 1000
    sigma = math.sqrt(float(e2 - e1 * e1)) * 1000
    tests = (1 + 1 + 7) * 3
    # The player's largest win per ante: ante and play 1 to 1, and the ante bonus's 5 (TCP 4.2).
    need = _rounds_needed(delta, sigma, tests, _bennett(sigma, (2 + 5 - float(e1)) * 1000))
    assert 230 <= need <= 280  # computed beforehand: 257 rounds (138 at one look)
    table = SimTable(name="T1", seed=22, start_ns=START)
    table.sign_on("D-CHEAT")

    def misread(seat: int, hand: list[int], dealer: list[int]) -> bool:
        if seat != 5:
            return False
        ci, di = t["index"][tuple(sorted(hand))], t["index"][tuple(sorted(dealer))]
        return bool(tcp_enum.ante_play_per_hand(di)[ci] < 0)  # the accomplice would lose

    table.dealer_keys = misread

    def deal() -> None:
        wagers = table.random_wagers(pair_plus=0.3, seats=(6, 7))
        wagers[5] = {"ante": 1000}
        table.deal_round(wagers)

    fired, raised = _first_alarm(table, need, deal, "seat T1 seat 5")
    print(f"alarm stood at round {fired}; computed beforehand: {need}")
    assert fired is not None and fired <= need, (need, raised)


def test_a_stacked_deck_whose_dealer_never_qualifies_raises_the_table_alarm_within_the_rounds_computed() -> None:
    """Five seats, ante 1000 each; every shoe is stacked so that the dealer's hand is 2-4-7 or
    3-5-8 offsuit (never Queen high): the house loses every ante it should win by qualifying."""
    t = tcp_enum.table()
    d1, d2 = (0, 9, 22), (5, 14, 27)  # 2c 4d 7h, 3d 5h 8s (rank = card // 4)
    idx = t["index"]
    both = (1 << 0) | (1 << 9) | (1 << 22) | (1 << 5) | (1 << 14) | (1 << 27)
    valid = (t["mask"] & both) == 0
    house = []
    for d in (d1, d2):
        assert not t["qualifies"][idx[d]]
        house.append(-float(tcp_enum.ante_play_per_hand(idx[d])[valid].mean()))
    from cardshoe.report.theory import theory_for

    th = theory_for("three-card-poker")
    mu = float(th.components["ante_play"].mean)
    var1, cross = float(th.components["ante_play"].var), float(th.cross_seat[("ante_play", "ante_play")])
    delta = 5 * 1000 * (mu - float(np.mean(house)))
    sigma = 1000 * math.sqrt(5 * var1 + 20 * cross)
    e1 = -mu  # the player's mean per ante
    seat = _bennett(1000 * math.sqrt(var1), (2 + 5 - e1) * 1000)
    need = _rounds_needed(delta, sigma, (1 + 1 + 5) * 2, 5 * seat)
    assert 150 <= need <= 185  # computed beforehand: 166 rounds (108 at one look)

    def stack(rng: Any) -> list[int]:
        rest = [c for c in range(52) if c not in d1 + d2]
        rng.shuffle(rest)
        order = rest[:15] + list(d1) + rest[15:30] + list(d2) + rest[30:]
        return order

    table = SimTable(name="T1", seed=23, start_ns=START, stack=stack)
    table.sign_on("D1")
    seats = {s: {"ante": 1000} for s in (1, 2, 3, 4, 5)}
    fired, raised = _first_alarm(table, need, lambda: table.deal_round({s: dict(w) for s, w in seats.items()}),
                                 "table T1")
    print(f"alarm stood at round {fired}; computed beforehand: {need}")
    assert fired is not None and fired <= need, (need, raised)
