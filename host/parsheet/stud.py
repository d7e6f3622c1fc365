"""Par sheet of Megalink Singapore Stud Poker: ante/bet and the progressive.

Exact over all 2,598,960 x 1,533,939 (player hand, dealer hand) pairs, by
inclusion-exclusion over the cards the two hands share. For any f of the two strengths,

    sum over disjoint (P, D) of f = sum over card sets S of (-1)^|S| * sum over
    P containing S, D containing S of f,

and the inner sum only needs H_S, the histogram of strengths of the 5-card hands that
contain S. Sets S of 1 to 4 cards are taken up to suit relabelling (13, 169, 1,755 and
16,432 classes), about 9.4 million evaluations in all; |S| = 0 and 5 come from the
5-card histogram.

The player also sees the dealer's exposed card (3.7/3.8), and the truly optimal strategy
uses it: the default sheet (:func:`ante_bet_upcard_sheet`, computed in
:mod:`cardshoe.parsheet.stud_upcard` from these counts as "always bet" plus the situations
the optimum folds; about a minute of CPU). :func:`ante_bet_sheet` (``--rank-only``) gives
the best strategy that decides from the player's hand rank alone (a decision for each of
the 7,462 strengths), exact for that strategy, in seconds. Both reproduce the published
Caribbean Stud figures (tests).
"""

from __future__ import annotations

import time
from collections import Counter
from fractions import Fraction
from itertools import combinations
from typing import Callable, Sequence

from ..games import Game, PayLine, PayTable, dealer_qualifies
from ..poker import STRENGTH5_MAX, Hand5, kind5, strengths5, tiebreak5
from .distributions import histogram5
from .let_it_ride import canonical_classes
from .lines import describe, lines_by_strength5, merge_lines, net_per_unit, representatives5
from .model import Line, Progress, WagerSheet
from .three_card import progressive_sheet

__all__ = ["StudTotals", "stud_totals", "ante_bet_sheet", "strategy_edge"]

PAIRS_TOTAL = 2598960 * 1533939  # disjoint (player, dealer) 5-card hand pairs


class StudTotals:
    """Per player strength a: the number of disjoint (P, D) pairs with s(P) = a in
    which the dealer does not qualify (nq), qualifies lower (win), equal (tie), higher
    (lose)."""

    def __init__(self, n: int) -> None:
        self.nq = [0] * (n + 1)
        self.win = [0] * (n + 1)
        self.tie = [0] * (n + 1)
        self.lose = [0] * (n + 1)

    def all(self, a: int) -> int:
        """Pairs with player strength a."""
        return self.nq[a] + self.win[a] + self.tie[a] + self.lose[a]


def _add_histogram(totals: StudTotals, hist: dict[int, int], coeff: int, qmin: int) -> None:
    """Add coeff * sum over (a, b) in hist x hist, split by outcome, to totals."""
    keys = sorted(hist)
    nq = sum(hist[b] for b in keys if b < qmin)
    q_total = sum(hist[b] for b in keys if b >= qmin)
    below_q = 0  # qualifying dealer hands strictly below a
    for a in keys:
        h = hist[a]
        c = coeff * h
        if a < qmin:
            totals.nq[a] += c * nq
            totals.lose[a] += c * q_total
            continue
        eq = h
        totals.nq[a] += c * nq
        totals.win[a] += c * below_q
        totals.tie[a] += c * eq
        totals.lose[a] += c * (q_total - below_q - eq)
        below_q += h


def qualifying_minimum(qualifier: str) -> int:
    """The lowest 5-card strength that qualifies the dealer, by settlement's own test
    (3.10.2/3.10.3: at least an Ace and a King), checked to be a threshold."""
    flags = [dealer_qualifies(qualifier, hand) for hand in representatives5()]
    first = flags.index(True)
    if not all(flags[first:]):
        raise ValueError(f"dealer qualifier {qualifier!r} is not a strength threshold")
    return first + 1


def stud_totals(qmin: int, progress: Progress | None = None) -> StudTotals:
    """The disjoint-pair outcome counts for every player strength (a few seconds)."""
    totals = StudTotals(STRENGTH5_MAX)
    h5 = histogram5()
    _add_histogram(totals, h5, 1, qmin)
    # |S| = 5: P = D = S; (-1)^5 times "the hand against itself"
    for a, n in h5.items():
        if a < qmin:
            totals.nq[a] -= n
        else:
            totals.tie[a] -= n
    work = [(k, rep, w) for k in (1, 2, 3, 4) for rep, w in sorted(canonical_classes(k).items())]
    for i, (k, rep, w) in enumerate(work):
        if progress is not None and i % 200 == 0:
            progress("stud: shared-card corrections", i / len(work))
        rest = [c for c in range(52) if c not in rep]
        hist = Counter(strengths5(rep + extra for extra in combinations(rest, 5 - k)))
        _add_histogram(totals, hist, (-1) ** k * w, qmin)
    if progress is not None:
        progress("stud: shared-card corrections", 1.0)
    return totals


def _bet_nets(table: PayTable) -> tuple[list[int], list[int]]:
    """Net multiple of the bet for each strength, and the pay line index."""
    nets = [0] * (STRENGTH5_MAX + 1)
    line_of = lines_by_strength5(table)
    for s in range(1, STRENGTH5_MAX + 1):
        i = line_of[s]
        if i < 0:
            raise ValueError(f"the bet table has no line for {kind5(s).name}")
        nets[s] = nets_for(table.lines[i])
    return nets, line_of


def strategy_edge(
    totals: StudTotals, nets: Sequence[int], bet: Callable[[int], bool], bet_multiple: int = 2
) -> Fraction:
    """House edge per unit of ante for a strategy deciding on the player's strength."""
    ev = 0
    for a in range(1, len(nets)):
        if bet(a):
            # 3.10.2: no hand -> ante 1 to 1, bet returned; 3.10.3: win ante 1 to 1 and the
            # bet by the table (4.1.2); lose both; 3.10.4: stand-off.
            ev += totals.nq[a] + totals.win[a] * (1 + bet_multiple * nets[a]) \
                - totals.lose[a] * (1 + bet_multiple)
        else:
            ev -= totals.all(a)  # 3.9.1: a fold loses the ante
    return -Fraction(ev, PAIRS_TOTAL)


def _describe(strength: int) -> str:
    ranks = tiebreak5(strength)
    return f"{kind5(strength).name.replace('_', ' ').title()} " + "-".join(
        "23456789TJQKA"[r - 2] for r in ranks)


def ante_bet_sheet(game: Game, progress: Progress | None = None,
                   totals: StudTotals | None = None) -> WagerSheet:
    """Ante and bet (twice the ante, 1.1.2) under the best rank-only strategy."""
    t0 = time.perf_counter()
    table = game.table("bet")
    multiple = game.decision.multiple if game.decision is not None else 2
    nets, line_of = _bet_nets(table)
    qmin = qualifying_minimum(game.dealer_qualifier or "")
    totals = totals if totals is not None else stud_totals(qmin, progress)
    n = len(nets) - 1
    decide = [False] * (n + 1)
    for a in range(1, n + 1):
        ev_bet = totals.nq[a] + totals.win[a] * (1 + multiple * nets[a]) \
            - totals.lose[a] * (1 + multiple)
        decide[a] = ev_bet >= -totals.all(a)
    edge = strategy_edge(totals, nets, lambda a: decide[a], multiple)
    # lines: fold, dealer no hand, win by bet line, tie, lose
    fold = nq = tie = lose = 0
    wins: dict[int, int] = {}
    for a in range(1, n + 1):
        if not decide[a]:
            fold += totals.all(a)
            continue
        nq += totals.nq[a]
        tie += totals.tie[a]
        lose += totals.lose[a]
        wins[line_of[a]] = wins.get(line_of[a], 0) + totals.win[a]
    lines: list[Line] = []
    for i, pay in enumerate(table.lines):
        if i in wins and wins[i]:
            net = Fraction(1 + multiple * nets_for(pay))
            lines.append(Line(f"Bet, player wins with {pay.label}", Fraction(wins[i], PAIRS_TOTAL),
                              f"ante 1 to 1, bet {describe(pay, game)}", net, wins[i], PAIRS_TOTAL))
    lines = merge_lines(lines)
    lines.append(Line("Bet, dealer has no hand (ante 1 to 1, bet returned)",
                      Fraction(nq, PAIRS_TOTAL), "+1 unit", Fraction(1), nq, PAIRS_TOTAL))
    lines.append(Line("Bet, stand-off", Fraction(tie, PAIRS_TOTAL), "0", Fraction(0), tie, PAIRS_TOTAL))
    lines.append(Line("Bet, dealer wins (ante and bet lost)", Fraction(lose, PAIRS_TOTAL),
                      f"-{1 + multiple} units", Fraction(-1 - multiple), lose, PAIRS_TOTAL))
    lines.append(Line("Fold (ante lost)", Fraction(fold, PAIRS_TOTAL), "-1 unit", Fraction(-1),
                      fold, PAIRS_TOTAL))
    p_bet = 1 - Fraction(fold, PAIRS_TOTAL)
    lowest = min((a for a in range(1, n + 1) if decide[a]), default=None)
    strategy = []
    if lowest is not None and all(decide[a] for a in range(lowest, n + 1)):
        strategy.append(f"Bet with {_describe(lowest)} or better; fold lower hands "
                        "(decided on the player's hand alone, the dealer's up card ignored).")
    else:
        strategy.append("Bet on strengths: " + ", ".join(_describe(a) for a in range(1, n + 1) if decide[a]))
    h5 = histogram5()
    p_qual = Fraction(sum(c for s, c in h5.items() if s >= qmin), 2598960)
    pair_or_better = strategy_edge(totals, nets, lambda a: kind5(a) >= Hand5.PAIR, multiple)
    ak_or_better = strategy_edge(totals, nets, lambda a: a >= qmin, multiple)
    always = strategy_edge(totals, nets, lambda a: True, multiple)
    return WagerSheet(
        wager="ante+bet", rule="3.9, 3.10, 4.1", lines=tuple(lines), house_edge=edge,
        edge_basis="per unit of ante (best strategy on the player's hand alone)",
        exact=True,
        figures=(
            ("probability of betting", p_bet),
            ("element of risk (edge per unit of ante+bet wagered)", edge / (1 + multiple * p_bet)),
            ("dealer qualifies (A-K or better, all 2,598,960 hands)", p_qual),
            ("house edge, bet with a pair or better", pair_or_better),
            ("house edge, bet with A-K or better", ak_or_better),
            ("house edge, always bet", always),
        ),
        strategy=tuple(strategy),
        notes=(
            "exact over all 3,986,646,103,440 disjoint (player, dealer) hand pairs, by "
            "inclusion-exclusion over shared cards",
            "NOT the up-card optimum: the strategy ignores the dealer's exposed card (3.7), so the "
            "optimum's edge is at most the figure shown; the exact up-card optimum is the "
            "default sheet (without --rank-only)",
        ),
        seconds=time.perf_counter() - t0,
    )


def ante_bet_upcard_sheet(game: Game, progress: Progress | None = None,
                          workers: int = 1) -> WagerSheet:
    """Ante and bet under the exact optimal strategy using the dealer's up card, the
    default sheet (about a minute of CPU; see cardshoe.parsheet.stud_upcard)."""
    from .stud_upcard import upcard_optimum

    t0 = time.perf_counter()
    table = game.table("bet")
    multiple = game.decision.multiple if game.decision is not None else 2
    nets, line_of = _bet_nets(table)
    qmin = qualifying_minimum(game.dealer_qualifier or "")
    result = upcard_optimum(nets, qmin, multiple, progress, workers)
    totals = result.baseline
    assert totals is not None
    total = result.deals
    wins: dict[int, int] = {}
    for s, count in result.wins_by_strength.items():
        wins[line_of[s]] = wins.get(line_of[s], 0) + count
    lines: list[Line] = []
    for i, pay in enumerate(table.lines):
        if wins.get(i):
            net = Fraction(1 + multiple * nets_for(pay))
            lines.append(Line(f"Bet, player wins with {pay.label}", Fraction(wins[i], total),
                              f"ante 1 to 1, bet {describe(pay, game)}", net, wins[i], total))
    lines = merge_lines(lines)
    lines.append(Line("Bet, dealer has no hand (ante 1 to 1, bet returned)",
                      Fraction(result.nq, total), "+1 unit", Fraction(1), result.nq, total))
    lines.append(Line("Bet, stand-off", Fraction(result.tie, total), "0", Fraction(0), result.tie, total))
    lines.append(Line("Bet, dealer wins (ante and bet lost)", Fraction(result.lose, total),
                      f"-{1 + multiple} units", Fraction(-1 - multiple), result.lose, total))
    lines.append(Line("Fold (ante lost)", Fraction(result.fold, total), "-1 unit", Fraction(-1),
                      result.fold, total))
    edge = -Fraction(result.ev_units, total)
    p_bet = Fraction(result.bet_deals, total)
    strategy = ["Bet when betting's exact expectation given the player's 5 cards and the "
                "dealer's up card is at least that of folding; by hand class (weighted "
                "player-hand/up-card situations bet of all):"]
    order = ["royal flush", "straight flush", "four of a kind", "full house", "flush", "straight",
             "three of a kind", "two pair", "pair", "A-K high", "below A-K"]
    for name in order:
        if name in result.decisions:
            bet, seen = result.decisions[name]
            strategy.append(f"  {name}: {bet} of {seen}")
    # the strategies on the player's hand alone, from the same disjoint-pair counts
    rank_only = ante_bet_sheet(game, totals=totals)
    h5 = histogram5()
    p_qual = Fraction(sum(c for s, c in h5.items() if s >= qmin), 2598960)
    return WagerSheet(
        wager="ante+bet", rule="3.7, 3.9, 3.10, 4.1", lines=tuple(lines), house_edge=edge,
        edge_basis="per unit of ante (exact optimum with the dealer's up card)",
        exact=True,
        figures=(
            ("probability of betting", p_bet),
            ("element of risk (edge per unit of ante+bet wagered)", edge / (1 + multiple * p_bet)),
            ("dealer qualifies (A-K or better, all 2,598,960 hands)", p_qual),
            ("house edge, best strategy on the player's hand alone", rank_only.house_edge
             or Fraction(0)),
            ("house edge, bet with a pair or better",
             strategy_edge(totals, nets, lambda a: kind5(a) >= Hand5.PAIR, multiple)),
            ("house edge, bet with A-K or better",
             strategy_edge(totals, nets, lambda a: a >= qmin, multiple)),
            ("house edge, always bet", strategy_edge(totals, nets, lambda a: True, multiple)),
        ),
        strategy=tuple(strategy),
        notes=(f"exact over all {total:,} (player hand, up card, dealer hand) deals",
               "CPU time: " + ", ".join(f"{who} {sec:.1f} s" for who, sec in result.cpu.items())
               + " (the 13 up-card ranks in the workers while the calling process counts the "
               "baseline; the run takes about the busiest process's time on idle cores)",
               "the player sees the dealer's exposed card (3.7) and bets when betting's exact "
               "expectation is at least folding's; --rank-only gives the best strategy on "
               "the player's hand alone (" + rank_only.strategy[0].rstrip(".") + ")"),
        seconds=time.perf_counter() - t0,
    )


def nets_for(pay: PayLine) -> int:
    """Whole net multiple of a bet pay line."""
    net = net_per_unit(pay)
    if net is None or net.denominator != 1:
        raise ValueError(f"bet line {pay.label!r} is not a whole multiple of the bet")
    return int(net)


def progressive_sheets(game: Game, stake: int | None) -> list[WagerSheet]:
    """The progressive (4.2) on the player's 5 cards."""
    return [progressive_sheet(game, stake)]
