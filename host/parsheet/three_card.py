"""Par sheets of the Three Card Poker family: ante/play, pair plus, six card bonus and
the progressives (TCP v5, Megalink Three Card Poker, Megalink Three Card Poker Xtreme).
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from fractions import Fraction
from functools import lru_cache
from itertools import combinations

from ..games import Game, PayLine, PayTable, dealer_qualifies
from ..poker import Hand, evaluate3
from .distributions import histogram5, histogram_best
from .lines import describe, edge_of, line_index, lines_by_strength5, net_per_unit, table_lines
from .model import Line, Progress, WagerSheet

__all__ = [
    "hands3_evaluated",
    "pair_plus_sheet",
    "ante_play_sheet",
    "progressive_sheet",
    "envy_sheet",
    "six_card_bonus_sheet",
    "count_by_line5",
    "DealerHands",
]

TOTAL3 = 22100
DEALER3 = 18424  # C(49, 3) dealer hands for each player hand


@lru_cache(maxsize=None)
def hands3_evaluated(royal: bool) -> tuple[Hand, ...]:
    """All 22,100 3-card hands evaluated (with or without the TCP v5 royal)."""
    return tuple(evaluate3(h, royal=royal) for h in combinations(range(52), 3))


def _count3(table: PayTable, royal: bool) -> tuple[list[int], int]:
    counts = [0] * len(table.lines)
    none = 0
    for hand in hands3_evaluated(royal):
        i = line_index(table, hand)
        if i is None:
            none += 1
        else:
            counts[i] += 1
    return counts, none


def count_by_line5(table: PayTable, hist: dict[int, int]) -> tuple[list[int], int]:
    """Hand counts per pay line from a 5-card strength histogram, and the non-paying count."""
    line_of = lines_by_strength5(table)
    counts = [0] * len(table.lines)
    none = 0
    for s, n in hist.items():
        i = line_of[s]
        if i < 0:
            none += n
        else:
            counts[i] += n
    return counts, none


def pair_plus_sheet(game: Game) -> WagerSheet:
    """Pair plus (4.3): a 3-card hand-only wager, all 22,100 hands."""
    t0 = time.perf_counter()
    table = game.table("pair_plus")
    counts, none = _count3(table, game.three_card_royal)
    lines = table_lines(table, counts, none, TOTAL3, game)
    return WagerSheet(
        wager="pair_plus", rule=table.rule, lines=tuple(lines), house_edge=edge_of(lines),
        edge_basis="per unit wagered", seconds=time.perf_counter() - t0,
        notes=("all 22,100 three-card hands; paid irrespective of the dealer's hand and after a fold",),
    )


class DealerHands:
    """Dealer outcomes against a player's 3-card hand, over the 18,424 dealer hands that
    share no card with it, by inclusion-exclusion: all qualifying dealer hands, minus
    those holding each player card, plus those holding each pair of them, minus the
    player's hand itself."""

    def __init__(self, hands: tuple[Hand, ...], qualifier: str) -> None:
        self.qualifier = qualifier
        self.all: list[int] = []
        self.by_card: list[list[int]] = [[] for _ in range(52)]
        self.by_pair: dict[tuple[int, int], list[int]] = {}
        for hand in hands:
            if not dealer_qualifies(qualifier, hand):  # 3.11: Queen high or better
                continue
            s = hand.strength
            a, b, c = sorted(hand.cards)
            self.all.append(s)
            for x in (a, b, c):
                self.by_card[x].append(s)
            for pair in ((a, b), (a, c), (b, c)):
                self.by_pair.setdefault(pair, []).append(s)
        self.n_qualify = len(self.all)
        self.all.sort()
        for lst in self.by_card:
            lst.sort()
        for lst in self.by_pair.values():
            lst.sort()

    def outcomes(self, hand: Hand) -> tuple[int, int, int, int]:
        """(dealer does not qualify, player wins, stand-off, dealer wins) counts."""
        a, b, c = sorted(hand.cards)
        s = hand.strength
        empty: list[int] = []
        win = tie = lose = 0
        for lst, sign in (
            (self.all, 1), (self.by_card[a], -1), (self.by_card[b], -1), (self.by_card[c], -1),
            (self.by_pair.get((a, b), empty), 1), (self.by_pair.get((a, c), empty), 1),
            (self.by_pair.get((b, c), empty), 1),
        ):
            lo = bisect_left(lst, s)
            hi = bisect_right(lst, s)
            win += sign * lo
            tie += sign * (hi - lo)
            lose += sign * (len(lst) - hi)
        if dealer_qualifies(self.qualifier, hand):
            tie -= 1  # the player's own hand: counted once in all, -3 +3 in the corrections
        return DEALER3 - win - tie - lose, win, tie, lose


def _describe3(hand: Hand) -> str:
    return "-".join("23456789TJQKA"[r - 2] for r in sorted(hand.ranks, reverse=True))


def ante_play_sheet(game: Game, progress: Progress | None = None) -> WagerSheet:
    """Ante and play with the ante bonus, under the strategy that maximises the player's
    expected return for each of the 22,100 player hands against all 18,424 dealer hands.

    Dealer outcomes for a player hand are counted by inclusion-exclusion: all qualifying
    dealer hands of each strength, minus those that share a card with the player's hand.
    """
    t0 = time.perf_counter()
    royal = game.three_card_royal
    bonus_table = game.tables.get("ante_bonus")
    hands = hands3_evaluated(royal)
    qualifier = game.dealer_qualifier or ""

    dealer = DealerHands(hands, qualifier)
    n_qualify = dealer.n_qualify

    bonus_lines: tuple[PayLine, ...] = bonus_table.lines if bonus_table else ()
    # Lines printed as one in the rules (TCP 4.2 "Royal Flush/Straight Flush") count as one.
    canon = [
        next(j for j, other in enumerate(bonus_lines)
             if other.label == line.label and other.odds == line.odds)
        for line in bonus_lines
    ]
    outcome: dict[tuple[str, int], int] = {}
    played = 0
    decisions: dict[int, list[bool]] = {}
    for n, hand in enumerate(hands):
        if progress is not None and n % 1000 == 0:
            progress("ante/play", n / len(hands))
        s = hand.strength
        nq, win, tie, lose = dealer.outcomes(hand)
        bi = line_index(bonus_table, hand) if bonus_table else None
        bonus = net_per_unit(bonus_lines[bi]) if bi is not None else Fraction(0)
        assert bonus is not None
        # 4.1, 3.11, 3.12: not qualified: ante +1, play stands off; win +1 +1; tie 0;
        # lose -1 -1. The ante bonus (4.2) is paid whatever the dealer holds.
        ev_play = nq + 2 * win - 2 * lose + DEALER3 * bonus  # in units of 1/DEALER3
        play = ev_play >= -DEALER3  # a fold loses the ante (3.9.1); equal EV goes to play
        decisions.setdefault(s, []).append(play)
        if not play:
            outcome[("fold", -1)] = outcome.get(("fold", -1), 0) + DEALER3
            continue
        played += 1
        key_b = -1 if bi is None else canon[bi]
        for name, k in (("nq", nq), ("win", win), ("tie", tie), ("lose", lose)):
            if k:
                outcome[(name, key_b)] = outcome.get((name, key_b), 0) + k
    if progress is not None:
        progress("ante/play", 1.0)

    total = len(hands) * DEALER3
    base_net = {"fold": -1, "nq": 1, "win": 2, "tie": 0, "lose": -2}
    base_label = {
        "fold": "Fold (ante lost)",
        "nq": "Play, dealer does not qualify (ante 1 to 1, play stands off)",
        "win": "Play, player wins (ante and play 1 to 1)",
        "tie": "Play, stand-off",
        "lose": "Play, dealer wins (ante and play lost)",
    }
    lines: list[Line] = []
    for name in ("win", "nq", "tie", "lose", "fold"):
        for bi in [-1, *range(len(bonus_lines))]:
            count = outcome.get((name, bi), 0)
            if not count:
                continue
            net = Fraction(base_net[name])
            label = base_label[name]
            if bi >= 0:
                bonus = net_per_unit(bonus_lines[bi])
                assert bonus is not None
                net += bonus
                label += f", ante bonus {bonus_lines[bi].label} {describe(bonus_lines[bi], game)}"
            lines.append(Line(label, Fraction(count, total), _signed(net), net, count, total))
    edge = edge_of(lines)
    assert edge is not None
    p_play = Fraction(played, len(hands))
    return WagerSheet(
        wager="ante+play", rule="3.9-3.12, 4.1, 4.2", lines=tuple(lines), house_edge=edge,
        edge_basis="per unit of ante (ante bonus included)",
        figures=(
            ("probability of playing", p_play),
            ("element of risk (edge per unit of ante+play wagered)", edge / (1 + p_play)),
            ("dealer qualifies (all 22,100 hands)", Fraction(n_qualify, TOTAL3)),
        ),
        strategy=tuple(_strategy3(decisions, hands)),
        notes=(
            "exact over all 22,100 x 18,424 player/dealer hands (407,170,400 deals)",
            "a fold loses the ante and forfeits the ante bonus (3.9.1); play equals the ante (3.9.2)",
        ),
        seconds=time.perf_counter() - t0,
    )


def _strategy3(decisions: dict[int, list[bool]], hands: tuple[Hand, ...]) -> list[str]:
    rep: dict[int, Hand] = {}
    for hand in hands:
        rep.setdefault(hand.strength, hand)
    order = sorted(decisions)
    lowest_all = None
    for s in reversed(order):
        if not all(decisions[s]):
            break
        lowest_all = s
    out: list[str] = []
    n_play = sum(sum(decisions[s]) for s in order)
    if lowest_all is not None:
        out.append(f"Play {_describe3(rep[lowest_all])} or better; fold lower hands "
                   f"({n_play} of 22,100 hands played).")
    for s in order:
        if lowest_all is not None and s >= lowest_all:
            break
        if any(decisions[s]):
            out.append(f"also play {_describe3(rep[s])}: {sum(decisions[s])} of "
                       f"{len(decisions[s])} suit patterns.")
    return out


def _signed(net: Fraction) -> str:
    return f"{'+' if net > 0 else ''}{net} unit{'' if abs(net) == 1 else 's'}"


def _progressive_net(line: PayLine, stake: int | None) -> Fraction | None:
    """Net per unit: odds "to"/"for" as stated; a fixed amount is the whole payment
    (the progressive stake is not returned), so it needs the stake in minor units."""
    if line.odds is not None:
        return net_per_unit(line)
    if line.fixed is not None and stake:
        return Fraction(line.fixed, stake) - 1
    return None


def progressive_sheet(game: Game, stake: int | None) -> WagerSheet:
    """The progressive wager: per-hand probabilities of every line; fixed amounts and
    odds give an expected return, percentage-of-pool lines are given as probabilities
    and a break-even pool."""
    t0 = time.perf_counter()
    table = game.progressive_table
    if table.hand_of.value == "player3":
        counts, none = _count3(table, game.three_card_royal)
        total = TOTAL3
        basis = "player's 3 cards: all 22,100 hands"
    else:  # player3+community2 or player5: a uniformly random 5-card hand
        counts, none = count_by_line5(table, histogram5())
        total = 2598960
        basis = "5 cards (the player's 3 + 2 community, or the player's 5): all 2,598,960 hands"
    lines: list[Line] = []
    for pay, n in zip(table.lines, counts):
        lines.append(Line(pay.label, Fraction(n, total), describe(pay, game),
                          _progressive_net(pay, stake), n, total))
    lines.append(Line("No paying hand", Fraction(none, total), "loses", Fraction(-1), none, total))
    figures: list[tuple[str, Fraction]] = []
    notes = [basis]
    fixed_return = Fraction(0)
    all_priced = True
    pool_rate = Fraction(0)
    fixed_money = Fraction(0)
    for line, pay in zip(lines, table.lines):
        if pay.pool_percent is not None:
            pool_rate += line.probability * Fraction(pay.pool_percent, 100)
        elif line.net is not None:
            fixed_return += line.probability * (line.net + 1)
        else:
            all_priced = False
        if pay.fixed is not None:
            fixed_money += line.probability * pay.fixed
    if fixed_money:
        figures.append((f"expected fixed payment per minimum wager ({game.currency} minor units)",
                        fixed_money))
    edge: Fraction | None = None
    if all_priced:
        edge_ex = 1 - fixed_return
        figures.append(("return of the fixed lines per unit staked", fixed_return))
        if pool_rate:
            figures.append(("house edge counting percentage-of-pool lines as zero", edge_ex))
            figures.append(("pool (in units of the stake) at which the wager breaks even",
                            edge_ex / pool_rate))
        else:
            edge = edge_ex
    else:
        notes.append("fixed amounts need the minimum progressive wager to give an edge: "
                     "pass --progressive-stake MINOR_UNITS")
    if pool_rate:
        figures.append(("expected share of the pool per hand (x pool)", pool_rate))
        notes.append("percentage-of-pool lines depend on the pool: reported as probabilities; "
                     "sharing among several winners in one round is not modelled")
    multiples = game.progressive.multiples or (1,)
    if len(multiples) > 1:
        notes.append(f"stakes of {list(multiples)} x the minimum: fixed odds multiply, pool "
                     "percentages do not (Xtreme 3.5.4, Stud 3.5.3.1), so the break-even pool "
                     "scales with the multiple")
    if stake:
        notes.append(f"fixed amounts are per minimum progressive wager of {stake} minor units "
                     "and paid in place of the stake (reading: the progressive stake is not returned)")
    return WagerSheet(
        wager="progressive", rule=table.rule, lines=tuple(lines), house_edge=edge,
        edge_basis="per unit wagered" if edge is not None else "depends on the pool",
        figures=tuple(figures), notes=tuple(notes), seconds=time.perf_counter() - t0,
    )


def envy_sheet(game: Game) -> WagerSheet | None:
    """The TCP Envy Bonus (3.14): paid to each progressive bettor when another player's
    ante-backed hand makes a top progressive hand."""
    table = game.progressive_table
    if not game.progressive.envy or not any(pay.envy for pay in table.lines):
        return None
    counts, _ = _count3(table, game.three_card_royal)
    lines: list[Line] = []
    expected = Fraction(0)
    for pay, n in zip(table.lines, counts):
        if pay.envy:
            p = Fraction(n, TOTAL3)
            lines.append(Line(f"Another ante hand makes {pay.label}", p,
                              f"{game.currency} {pay.envy / game.minor_per_major:,.2f} envy",
                              None, n, TOTAL3))
            expected += p * pay.envy
    rest = TOTAL3 - sum(line.count or 0 for line in lines)
    lines.append(Line("No envy from that hand", Fraction(rest, TOTAL3), "nothing", None, rest, TOTAL3))
    return WagerSheet(
        wager="envy_bonus", rule="3.14, 3.15", lines=tuple(lines), house_edge=None,
        edge_basis="per other ante hand at the table",
        figures=((f"expected envy per other ante hand ({game.currency} minor units)", expected),),
        notes=("each other player's hand is a uniformly random 3-card hand, so these hold "
               "for every other ante position, whatever the bettor's own cards",
               "3.15: a top hand on a pair-plus-only position cancels the envy; such hands "
               "are not triggers (3.14 needs an ante) and the cancellation is not modelled"),
    )


def six_card_bonus_sheet(game: Game) -> WagerSheet:
    """Six Card Bonus (Xtreme 4.5): best 5 of the player's 3 and the dealer's 3 cards,
    all 20,358,520 six-card hands."""
    t0 = time.perf_counter()
    table = game.table("six_card_bonus")
    hist = histogram_best(6)
    counts, none = count_by_line5(table, hist)
    lines = table_lines(table, counts, none, sum(hist.values()), game)
    return WagerSheet(
        wager="six_card_bonus", rule=table.rule, lines=tuple(lines), house_edge=edge_of(lines),
        edge_basis="per unit wagered",
        notes=("all 20,358,520 six-card hands, counted by rank multiset with every flush hand "
               "enumerated (see cardshoe.parsheet.distributions)",
               "paid after a fold too (3.9.1.2), not when the comparison is declined (3.10.3)"),
        seconds=time.perf_counter() - t0,
    )
