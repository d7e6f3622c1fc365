"""Par sheet of Megalink Let It Ride: the 1, 2 and $ wagers with both pull-back
decisions under the optimal strategy, and the progressive with the Magic Card.

The three base wagers are equal and each is paid by the same table (4.1.1) on the
5-card hand (3.18), so each wager left riding returns X, the net multiple of the final
hand (-1 below a pair of tens). Pulling a wager back returns it (0). The decisions are
therefore separable: wager "1" rides when E[X | 3 cards] > 0 (3.8-3.10) and wager "2"
when E[X | 3 cards + first community card] > 0 (3.12-3.14); "$" always rides (3.16).

Enumeration: player hands are grouped by suit isomorphism (1,755 classes stand for all
22,100 hands); for each class every pair of community cards is evaluated once (1,176 of
them) and both orders of exposure are counted, so the sheet covers all
22,100 x 49 x 48 = 51,979,200 ordered deals exactly.
"""

from __future__ import annotations

import time
from fractions import Fraction
from itertools import combinations

from ..games import Game, PayTable
from ..poker import _T5
from .lines import describe, lines_by_strength5, net_per_unit
from .model import Line, Progress, WagerSheet
from .three_card import progressive_sheet

__all__ = ["base_sheet", "progressive_sheets", "canonical_classes"]

RANKS = "23456789TJQKA"


def canonical_classes(n: int) -> dict[tuple[int, ...], int]:
    """Hands of n cards up to a relabelling of suits: representative -> number of hands.

    Two hands are the same up to suits exactly when their multisets of per-suit rank
    sets are equal; the representative gives the suits in the order of those sets.
    """
    counts: dict[tuple[tuple[int, ...], ...], int] = {}
    for hand in combinations(range(52), n):
        per_suit: list[list[int]] = [[], [], [], []]
        for c in hand:
            per_suit[c & 3].append(c >> 2)
        signature = tuple(sorted((tuple(r) for r in per_suit), reverse=True))
        counts[signature] = counts.get(signature, 0) + 1
    return {
        tuple(sorted(r * 4 + s for s, ranks in enumerate(signature) for r in ranks)): count
        for signature, count in counts.items()
    }


def _net_by_key(table: PayTable) -> tuple[dict[int, int], list[int]]:
    """Net win (integer multiple of the wager) keyed by the evaluator's 5-card lookup
    key, and the matching pay-line index per strength (-1 for no paying hand)."""
    nets: list[int] = []
    for line in table.lines:
        net = net_per_unit(line)
        if net is None or net.denominator != 1:
            raise ValueError(f"Let It Ride line {line.label!r} is not a whole multiple")
        nets.append(int(net))
    line_of = lines_by_strength5(table)
    net_of_key = {
        key: (nets[line_of[s]] if line_of[s] >= 0 else -1) for key, s in _T5.table5.items()
    }
    return net_of_key, line_of


def _describe3(cards: tuple[int, ...]) -> str:
    ranks = sorted((c >> 2 for c in cards), reverse=True)
    suits = len({c & 3 for c in cards})
    text = "-".join(RANKS[r] for r in ranks)
    if len(set(ranks)) == 3:
        text += {1: " suited", 2: " two suited", 3: " offsuit"}[suits]
    return text


def _category4(cards: tuple[int, ...], min_pair: int) -> str:
    ranks = [c >> 2 for c in cards]
    counts = sorted((ranks.count(r) for r in set(ranks)), reverse=True)
    if counts[0] >= 2:
        if counts[0] == 4:
            return "four of a kind"
        if counts[0] == 3:
            return "three of a kind"
        if counts[:2] == [2, 2]:
            return "two pair"
        pair = max(r for r in ranks if ranks.count(r) == 2) + 2
        return "paying pair" if pair >= min_pair else "low pair"
    flush = len({c & 3 for c in cards}) == 1
    rset = set(ranks) | ({-1} if 12 in ranks else set())  # ace also low
    completions = 0
    for low in range(-1, 9):
        window = set(range(low, low + 5))
        if len(window & rset) >= 4 and len({r for r in window if r not in rset}) == 1:
            completions += 1
    high = sum(1 for r in ranks if r + 2 >= min_pair)
    if flush and completions:
        return "four to a straight flush"
    if flush:
        return "four to a flush"
    if completions >= 2:
        return f"four to an open-ended straight, {high} high card(s)"
    if completions == 1:
        return f"four to an inside straight, {high} high card(s)"
    return f"nothing, {high} high card(s)"


def base_sheet(game: Game, progress: Progress | None = None) -> WagerSheet:
    """The 1, 2 and $ wagers together, per unit of one wager, optimal pull-backs."""
    t0 = time.perf_counter()
    table = game.table("hand")
    net_of_key, _ = _net_by_key(table)
    card, mask = _T5.card5, _T5.mask5
    classes = canonical_classes(3)
    min_pair = min((pl.min_pair_rank for pl in table.lines if pl.min_pair_rank), default=2)
    # (bets riding, pay-line index or -1) -> count of ordered deals
    outcome: dict[tuple[int, int], int] = {}
    ride1: list[tuple[tuple[int, ...], int]] = []
    cat_total: dict[str, int] = {}
    cat_keep: dict[str, int] = {}
    net_line: dict[int, int] = {}
    for n, (hand, weight) in enumerate(sorted(classes.items())):
        if progress is not None and n % 25 == 0:
            progress("let it ride", n / len(classes))
        k3 = card[hand[0]] + card[hand[1]] + card[hand[2]]
        rest = [c for c in range(52) if c not in hand]
        vals = [card[c] for c in rest]
        m = len(rest)
        sum4 = [0] * m
        pair_net: dict[tuple[int, int], int] = {}
        for i in range(m):
            ki = k3 + vals[i]
            si = 0
            for j in range(i + 1, m):
                x = net_of_key[(ki + vals[j]) & mask]
                pair_net[(i, j)] = x
                si += x
                sum4[j] += x
            sum4[i] += si
        total3 = sum(sum4)  # = 2 * sum over unordered pairs = 48 * 49 * E[X] * ... scaled
        keep1 = total3 > 0  # 3.8: let "1" ride iff E[X | 3 cards] > 0 (ties pull back)
        if keep1:
            ride1.append((hand, weight))
        for i in range(m):
            keep2 = sum4[i] > 0  # 3.12: let "2" ride iff E[X | 4 cards] > 0
            cat = _category4(hand + (rest[i],), min_pair)
            cat_total[cat] = cat_total.get(cat, 0) + weight
            if keep2:
                cat_keep[cat] = cat_keep.get(cat, 0) + weight
            bets = 1 + keep1 + keep2
            for j in range(m):
                if j == i:
                    continue
                x = pair_net[(i, j) if i < j else (j, i)]
                key = (bets, x)
                outcome[key] = outcome.get(key, 0) + weight
    if progress is not None:
        progress("let it ride", 1.0)
    total = 22100 * 49 * 48
    # map net multiple back to pay lines for labels (nets are distinct per line here)
    for idx, line in enumerate(table.lines):
        net = net_per_unit(line)
        assert net is not None
        net_line.setdefault(int(net), idx)
    lines: list[Line] = []
    for bets in (3, 2, 1):
        for x in sorted({x for (b, x) in outcome if b == bets}, reverse=True):
            count = outcome[(bets, x)]
            if x < 0:
                label = f"{bets} wager(s) riding, no paying hand"
                pays = "loses"
            else:
                pl = table.lines[net_line[x]]
                label = f"{bets} wager(s) riding, {pl.label}"
                pays = f"{describe(pl, game)} on each"
            lines.append(Line(label, Fraction(count, total), pays, Fraction(bets * x), count, total))
    edge = -sum((line.probability * line.net for line in lines if line.net is not None), Fraction(0))
    avg_bets = sum((line.probability * int(line.label[0]) for line in lines), Fraction(0))
    n1 = sum(w for _, w in ride1)
    strategy = [
        f'Let wager "1" ride on {n1} of 22,100 three-card hands (3.8): '
        + ", ".join(sorted({_describe3(h) for h, _ in ride1},
                           key=lambda t: (t.split()[-1:], t))),
        'Let wager "2" ride (3.12) by four-card holding (kept of all, weighted by deals):',
    ]
    for cat in sorted(cat_total, key=lambda c: -cat_keep.get(c, 0) / cat_total[c]):
        strategy.append(f"  {cat}: {cat_keep.get(cat, 0)} of {cat_total[cat]}")
    return WagerSheet(
        wager="one+two+dollar", rule="3.8-3.19, 4.1.1", lines=tuple(lines), house_edge=edge,
        edge_basis="per unit of one wager (the $ wager)",
        figures=(
            ("average wagers riding at the showdown", avg_bets),
            ("element of risk (edge per unit riding at the showdown)", edge / avg_bets),
            ("house edge per unit of the three wagers placed", edge / 3),
        ),
        strategy=tuple(strategy),
        notes=("exact over all 22,100 x 49 x 48 ordered deals of the player's 3 cards and "
               "the two community cards, in order of exposure (3.11, 3.15)",
               "a wager with zero expectation is pulled back (returned)"),
        seconds=time.perf_counter() - t0,
    )


def progressive_sheets(game: Game, stake: int | None) -> list[WagerSheet]:
    """The progressive's hand table (4.2) and the Magic Card / Lucky Player lines (4.3-4.5)."""
    t0 = time.perf_counter()
    sheets = [progressive_sheet(game, stake)]
    tables: dict[str, PayTable] = game.tables
    magic = tables.get("magic_card")
    if magic is not None:
        # The system selects one card of 52; the player's hand holds it when it is one of the
        # player's 3 cards or one of the 2 community cards (4.3, 4.3.1): 5 of 52 cards.
        p = Fraction(5, 52)
        line = magic.lines[0]
        lines = (
            Line(line.label, p, describe(line, game), net_per_unit(line), 5, 52),
            Line("Magic Card elsewhere", 1 - p, "nothing", Fraction(0), 47, 52),
        )
        net = net_per_unit(line)
        assert net is not None
        sheets.append(WagerSheet(
            wager="magic_card", rule=magic.rule, lines=lines, house_edge=None,
            edge_basis="extra return on the progressive wager",
            figures=(("expected extra net win per unit of progressive wager", p * net),),
            notes=("assumes the system picks the Magic Card uniformly from the 52 cards; it is "
                   "paid in addition to any hand payout, the stake counted once",),
            seconds=time.perf_counter() - t0,
        ))
    lucky = tables.get("lucky_player")
    if lucky is not None:
        line = lucky.lines[0]
        sheets.append(WagerSheet(
            wager="lucky_player", rule=lucky.rule,
            lines=(), house_edge=None, edge_basis="not derivable from the cards",
            notes=(f"{line.label} pays {describe(line, game)} when the system selects the "
                   "position (4.4); its probability is the system's selection rule, not a card "
                   "probability (1/N if one of N wagering positions is picked uniformly)",),
        ))
    return sheets
