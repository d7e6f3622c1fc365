"""Par sheets: exact counts, published figures, and internal consistency.

Published figures used here (sources in docs/parsheets.md):
* Pair plus 40-30-6-4-1: 2.32%; 40-30-6-3-1: 7.28% (Wizard of Odds).
* Ante/play with ante bonus 5-4-1: 3.37%, element of risk 2.01%, play Q-6-4 or better.
* Let It Ride 1000-200-50-11-8-5-3-2-1: 3.51%.
* Six Card Bonus 1000-200-50-25-20-10-5: 10.23% (table-games-online.com; exact 10.2248%).
* Caribbean Stud (the same game as Singapore Stud with a 100 to 1 royal): raise on pair or
  better 5.470%, on A-K or better 5.682%, always 16.607%, best rank-only strategy
  (A-K-J-8-3 or better) 5.316% (Wizard of Odds strategy table).
* Best-of-6 and best-of-7 class frequencies (standard combinatorics tables).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from fractions import Fraction
from itertools import combinations
from typing import Any

import pytest

from cardshoe.games import Basis, Game, PayLine, get_game
from cardshoe.parsheet import ParSheetError, compute
from cardshoe.parsheet.cli import main, render
from cardshoe.parsheet.distributions import histogram5, histogram_best
from cardshoe.parsheet.let_it_ride import base_sheet, canonical_classes
from cardshoe.parsheet.model import WagerSheet
from cardshoe.parsheet.stud import (
    StudTotals,
    ante_bet_sheet,
    qualifying_minimum,
    strategy_edge,
    stud_totals,
)
from cardshoe.parsheet.three_card import (
    DEALER3,
    DealerHands,
    ante_play_sheet,
    hands3_evaluated,
    pair_plus_sheet,
    six_card_bonus_sheet,
)
from cardshoe.poker import Hand5, kind5

TCP = "three-card-poker"
XTREME = "megalink-three-card-poker-xtreme"
LIR = "megalink-let-it-ride"
STUD = "megalink-singapore-stud-poker"


def with_odds(game: Game, table: str, odds: dict[str, int]) -> Game:
    """The game with some lines of one pay table repriced (by hand class)."""
    t = game.table(table)
    lines = tuple(dataclasses.replace(line, odds=odds.get(line.hand, line.odds)) for line in t.lines)
    tables = dict(game.tables)
    tables[table] = dataclasses.replace(t, lines=lines)
    return dataclasses.replace(game, tables=tables)


def pct(x: Fraction | None, places: int) -> float:
    assert x is not None
    return round(float(x) * 100, places)


def assert_lines_sum_to_one(sheet: WagerSheet) -> None:
    if sheet.lines:
        assert sum(line.probability for line in sheet.lines) == 1, sheet.wager


# ------------------------------------------------------------------ distributions


def test_best_of_5_by_multiset_equals_enumeration() -> None:
    assert histogram_best(5) == histogram5()


def _by_kind(hist: dict[int, int]) -> dict[Hand5, int]:
    out: Counter[Hand5] = Counter()
    for s, n in hist.items():
        out[kind5(s)] += n
    return dict(out)


def test_best_of_6_frequencies() -> None:
    assert _by_kind(histogram_best(6)) == {
        Hand5.ROYAL_FLUSH: 188, Hand5.STRAIGHT_FLUSH: 1656, Hand5.FOUR_OF_A_KIND: 14664,
        Hand5.FULL_HOUSE: 165984, Hand5.FLUSH: 205792, Hand5.STRAIGHT: 361620,
        Hand5.THREE_OF_A_KIND: 732160, Hand5.TWO_PAIR: 2532816, Hand5.PAIR: 9730740,
        Hand5.HIGH_CARD: 6612900,
    }


def test_best_of_7_frequencies() -> None:
    # the standard 7-card table (133,784,560 hands)
    assert _by_kind(histogram_best(7)) == {
        Hand5.ROYAL_FLUSH: 4324, Hand5.STRAIGHT_FLUSH: 37260, Hand5.FOUR_OF_A_KIND: 224848,
        Hand5.FULL_HOUSE: 3473184, Hand5.FLUSH: 4047644, Hand5.STRAIGHT: 6180020,
        Hand5.THREE_OF_A_KIND: 6461620, Hand5.TWO_PAIR: 31433400, Hand5.PAIR: 58627800,
        Hand5.HIGH_CARD: 23294460,
    }


def test_suit_classes() -> None:
    for k, n_classes in ((1, 13), (2, 169), (3, 1755)):
        classes = canonical_classes(k)
        assert len(classes) == n_classes
        assert sum(classes.values()) == len(list(combinations(range(52), k)))


# ------------------------------------------------------------------ Three Card Poker


def test_pair_plus_counts_tcp_v5() -> None:
    sheet = pair_plus_sheet(get_game(TCP))
    counts = {line.label: line.count for line in sheet.lines}
    # TCP 4.3: royal and straight flush share one line: 4 + 44 = 48 of 22,100
    assert counts == {
        "Royal Flush/Straight Flush": 48, "Three of a Kind": 52, "Straight": 720,
        "Flush": 1096, "Pair": 3744, "No paying hand": 16440,
    }
    assert_lines_sum_to_one(sheet)
    # 40-30-5-4-1: (48*40 + 52*30 + 720*5 + 1096*4 + 3744 - 16440) / 22100
    assert sheet.house_edge == Fraction(1232, 22100)


@pytest.mark.parametrize("straight, flush, edge", [(6, 4, 2.32), (6, 3, 7.28)])
def test_pair_plus_published(straight: int, flush: int, edge: float) -> None:
    game = with_odds(get_game(XTREME), "pair_plus", {"STRAIGHT": straight, "FLUSH": flush})
    assert pct(pair_plus_sheet(game).house_edge, 2) == edge


def test_ante_play_published_and_strategy() -> None:
    sheet = ante_play_sheet(get_game(TCP))
    assert pct(sheet.house_edge, 2) == 3.37
    figures = dict(sheet.figures)
    assert pct(figures["element of risk (edge per unit of ante+play wagered)"], 2) == 2.01
    assert figures["dealer qualifies (all 22,100 hands)"] == Fraction(15380, 22100)
    assert sheet.strategy[0].startswith("Play Q-6-4 or better")
    assert_lines_sum_to_one(sheet)
    assert sum(line.count or 0 for line in sheet.lines) == 22100 * DEALER3
    # the royal option changes nothing for ante/play (AKQ suited is the top hand either way)
    assert ante_play_sheet(get_game(XTREME)).house_edge == sheet.house_edge


def test_dealer_outcomes_against_brute_force() -> None:
    hands = hands3_evaluated(False)
    dealer = DealerHands(hands, "queen_high")
    queen = min(h.strength for h in hands if h.kind.name == "HIGH_CARD" and max(h.ranks) == 12)
    for player in hands[::1379]:
        nq = win = tie = lose = 0
        for d in hands:
            if set(d.cards) & set(player.cards):
                continue
            if d.strength < queen:
                nq += 1
            elif d.strength < player.strength:
                win += 1
            elif d.strength == player.strength:
                tie += 1
            else:
                lose += 1
        assert dealer.outcomes(player) == (nq, win, tie, lose)


def test_six_card_bonus() -> None:
    game = get_game(XTREME)
    sheet = six_card_bonus_sheet(game)
    assert_lines_sum_to_one(sheet)
    paying = [188, 1656, 14664, 165984, 205792, 361620, 732160]
    assert [line.count for line in sheet.lines] == paying + [20358520 - sum(paying)]
    published = with_odds(game, "six_card_bonus", {
        "ROYAL_FLUSH": 1000, "STRAIGHT_FLUSH": 200, "FULL_HOUSE": 25, "FLUSH": 20,
        "THREE_OF_A_KIND": 5})
    # the page prints 10.23%; the exact value is 10.2248%, so allow its last digit
    edge = six_card_bonus_sheet(published).house_edge
    assert edge is not None and abs(float(edge) * 100 - 10.23) <= 0.01


def test_progressives() -> None:
    tcp = compute(TCP)
    prog = next(w for w in tcp.wagers if w.wager == "progressive")
    assert [line.count for line in prog.lines] == [1, 3, 44, 52, 720, 21280]
    assert prog.house_edge is None  # fixed amounts and a pool share: no edge without the pool
    envy = next(w for w in tcp.wagers if w.wager == "envy_bonus")
    assert dict(envy.figures)["expected envy per other ante hand (SGD minor units)"] == Fraction(
        1 * 25000 + 3 * 5000, 22100)
    xtreme = compute(XTREME)
    prog = next(w for w in xtreme.wagers if w.wager == "progressive")
    assert [line.count for line in prog.lines] == [4, 36, 624, 3744, 5108, 10200, 2579244]
    # Xtreme 4.4: "for 1" -- a flush returns 40 in all, a net win of 39
    flush = next(line for line in prog.lines if line.label == "Flush")
    assert flush.net == 39
    figures = dict(prog.figures)
    ret = Fraction(624 * 400 + 3744 * 80 + 5108 * 40 + 10200 * 20, 2598960)
    assert figures["return of the fixed lines per unit staked"] == ret
    assert figures["expected share of the pool per hand (x pool)"] == Fraction(4, 2598960) + Fraction(36, 2598960) / 10
    for sheet in (tcp, xtreme):
        for w in sheet.wagers:
            assert_lines_sum_to_one(w)


def test_fixed_amounts_with_a_stake() -> None:
    sheet = compute("megalink-three-card-poker", progressive_stake=500)
    prog = next(w for w in sheet.wagers if w.wager == "progressive")
    four = next(line for line in prog.lines if line.label == "Four of a Kind")
    assert four.net == Fraction(200000, 500) - 1  # $2,000 for a $5 stake


# ------------------------------------------------------------------ Let It Ride


@pytest.fixture(scope="module")
def lir_sheet() -> WagerSheet:
    return base_sheet(get_game(LIR))


def test_let_it_ride_published(lir_sheet: WagerSheet) -> None:
    assert pct(lir_sheet.house_edge, 2) == 3.51
    assert_lines_sum_to_one(lir_sheet)
    assert sum(line.count or 0 for line in lir_sheet.lines) == 22100 * 49 * 48


def test_let_it_ride_strategy(lir_sheet: WagerSheet) -> None:
    first = lir_sheet.strategy[0]
    # 3.8: ride paying pairs, trips, three to a royal; not low pairs or A-K offsuit
    for held in ("T-T-2", "A-A-K", "7-7-7", "A-K-Q suited", "Q-J-T suited"):
        assert held in first
    for held in ("9-9-2", "A-9-9", "A-K-Q two suited", "A-K-Q offsuit", "A-K-2 suited"):
        assert held not in first
    kept = {line.split(":")[0].strip(): line.split(":")[1] for line in lir_sheet.strategy[2:]}
    assert kept["paying pair"].split(" of ")[0].strip() == kept["paying pair"].split(" of ")[1].strip()
    assert kept["four to a flush"].split(" of ")[0].strip() == kept["four to a flush"].split(" of ")[1].strip()
    assert kept["low pair"].split(" of ")[0].strip() == "0"


def test_let_it_ride_pay_table_drives_result() -> None:
    # a lower royal (500 to 1, the Dakotas/Colorado table) must raise the edge
    game = with_odds(get_game(LIR), "hand", {"ROYAL_FLUSH": 500})
    sheet = base_sheet(game)
    assert sheet.house_edge is not None
    assert sheet.house_edge > Fraction(3505, 100000)


def test_magic_card() -> None:
    sheet = compute(LIR)
    magic = next(w for w in sheet.wagers if w.wager == "magic_card")
    assert magic.lines[0].probability == Fraction(5, 52)  # 3 player + 2 community (4.3, 4.3.1)


# ------------------------------------------------------------------ Singapore Stud


@pytest.fixture(scope="module")
def totals() -> StudTotals:
    return stud_totals(qualifying_minimum("ace_king"))


def test_stud_pairs_total(totals: StudTotals) -> None:
    assert sum(totals.all(a) for a in range(1, 7463)) == 2598960 * 1533939


def test_caribbean_stud_published(totals: StudTotals) -> None:
    from cardshoe.parsheet.stud import _bet_nets

    game = with_odds(get_game(STUD), "bet", {"ROYAL_FLUSH": 100})
    nets, _ = _bet_nets(game.table("bet"))
    qmin = qualifying_minimum("ace_king")
    assert pct(strategy_edge(totals, nets, lambda a: kind5(a) >= Hand5.PAIR), 3) == 5.470
    assert pct(strategy_edge(totals, nets, lambda a: a >= qmin), 3) == 5.682
    assert pct(strategy_edge(totals, nets, lambda a: True), 3) == 16.607
    sheet = ante_bet_sheet(game, totals=totals)
    assert pct(sheet.house_edge, 3) == 5.316
    assert "A-K-J-8-3" in sheet.strategy[0]


def test_singapore_stud_sheet(totals: StudTotals) -> None:
    sheet = ante_bet_sheet(get_game(STUD), totals=totals)
    assert_lines_sum_to_one(sheet)
    # a 250 to 1 royal is worth more than the 100 to 1 of Caribbean Stud
    assert sheet.house_edge is not None and pct(sheet.house_edge, 3) < 5.316
    assert "not the up-card optimum" in " ".join(sheet.notes).lower()
    qmin = qualifying_minimum("ace_king")
    assert dict(sheet.figures)["dealer qualifies (A-K or better, all 2,598,960 hands)"] == Fraction(
        sum(n for s, n in histogram5().items() if s >= qmin), 2598960)


# ------------------------------------------------------------------ CLI


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([TCP, "--json", "--no-progress"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert data["game"] == TCP
    pp = next(w for w in data["wagers"] if w["wager"] == "pair_plus")
    assert pp["house_edge"]["exact"] == str(Fraction(1232, 22100)).replace("/", "/")
    total = sum(Fraction(line["probability"]["exact"]) for line in pp["lines"])
    assert total == 1


def test_cli_table_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([XTREME, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "six_card_bonus" in out and "house edge: 13.4380%" in out
    with pytest.raises(SystemExit):
        main(["baccarat"])
    with pytest.raises(ParSheetError):
        compute("baccarat")
    assert "Three Card Poker" in render(compute(TCP))


def test_pay_lines_read_from_games_data() -> None:
    # the par sheet prices lines from cardshoe.games, like settlement
    line = get_game(XTREME).table("progressive").lines[2]
    assert isinstance(line, PayLine) and line.basis is Basis.FOR


def test_cli_stud_options_refused_together(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([STUD, "--upcard", "--rank-only"])
    assert exc.value.code == 2
    assert "--rank-only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([STUD, "--workers", "0"])
