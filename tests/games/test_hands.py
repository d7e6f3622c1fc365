"""Dealer qualifiers and pay-line matching, from the rule text."""

from __future__ import annotations

import pytest

from cardshoe.cards import parse_cards
from cardshoe.games import ace_king, best_line, get_game, pair_rank, queen_high
from cardshoe.poker import best5, evaluate3, evaluate5


@pytest.mark.parametrize(
    ("cards", "qualifies"),
    [
        ("Qc Td 6h", True),  # TCP 3.12: at least one Queen
        ("Kc 4d 2h", True),
        ("Ac 3d 2h", True),  # A-3-2 offsuit is A-2-3, a straight (3.3.1.2): qualifies
        ("Jc Td 8h", False),  # Jack high does not (3.11)
        ("Jc Tc 8c", True),  # a flush ranks above Queen high (reading, docs/rule-readings.md)
        ("2c 2d 5h", True),  # any pair
        ("4c 3d 2h", True),  # a straight without a Queen
    ],
)
def test_three_card_dealer_qualifier(cards: str, qualifies: bool) -> None:
    assert queen_high(evaluate3(parse_cards(cards))) is qualifies


@pytest.mark.parametrize(
    ("cards", "qualifies"),
    [
        ("As Kd 7h 4c 2s", True),  # Stud 3.10.3: Ace and King
        ("As Qd 7h 4c 2s", False),  # Ace-Queen: "No hand" (3.10.2)
        ("Ks Qd Jh 9c 2s", False),
        ("2s 2d 7h 4c 3s", True),  # a pair beats A-K high
        ("As 5d 4h 3c 2s", True),  # the wheel is a straight (3.3.1.2)
    ],
)
def test_stud_dealer_qualifier(cards: str, qualifies: bool) -> None:
    assert ace_king(evaluate5(parse_cards(cards))) is qualifies


def test_pair_rank() -> None:
    assert pair_rank(parse_cards("Tc Td 4h 9s 2c")) == 10
    assert pair_rank(parse_cards("Tc Td 4h 4s 2c")) == 10  # the higher of two pairs
    assert pair_rank(parse_cards("Tc Jd 4h 9s 2c")) is None


@pytest.mark.parametrize(
    ("cards", "label"),
    [
        ("Tc Td 4h 9s 2c", "Pair of 10's, Jacks, Queens, Kings or Aces"),
        ("Ac Ad 4h 9s 2c", "Pair of 10's, Jacks, Queens, Kings or Aces"),
        ("9c 9d 4h Ts 2c", None),  # a pair of nines does not pay (3.18)
        ("2c 2d 4h 4s Tc", "Two Pairs"),
    ],
)
def test_let_it_ride_pair_of_tens(cards: str, label: str | None) -> None:
    line = best_line(get_game("megalink-let-it-ride").table("hand"), evaluate5(parse_cards(cards)))
    assert (line.label if line else None) == label


@pytest.mark.parametrize(
    ("cards", "label"),
    [
        ("As Ks Qs", "Royal Flush (Spades only)"),
        ("Ah Kh Qh", "Royal Flush (Hearts/Diamond/Clubs)"),  # 3.20.2: not also a Straight Flush
        ("Ad Kd Qd", "Royal Flush (Hearts/Diamond/Clubs)"),
        ("Ac Kc Qc", "Royal Flush (Hearts/Diamond/Clubs)"),
        ("Ks Qs Js", "Straight Flush"),
        ("As 2s 3s", "Straight Flush"),
        ("7c 7d 7h", "Three of a Kind"),
        ("Ac Kd Qh", "Straight"),
        ("9s 5s 2s", None),  # no flush line in TCP 4.4
    ],
)
def test_tcp_progressive_lines(cards: str, label: str | None) -> None:
    table = get_game("three-card-poker").progressive_table
    line = best_line(table, evaluate3(parse_cards(cards), royal=True))
    assert (line.label if line else None) == label


def test_six_card_bonus_uses_the_best_five_of_six() -> None:
    # Xtreme 1.1.11 / 3.10.1: only the highest possible five-card hand is paid.
    table = get_game("megalink-three-card-poker-xtreme").table("six_card_bonus")
    hand = best5(parse_cards("9h 9d 9c 9s Kd 2c"))
    assert best_line(table, hand).label == "Four of a Kind"  # type: ignore[union-attr]
    hand = best5(parse_cards("Ah 2h 3h 4h 5h 5c"))
    assert best_line(table, hand).label == "Straight Flush"  # type: ignore[union-attr]
    hand = best5(parse_cards("Ah 2d 3h 7h 9c 5s"))
    assert best_line(table, hand) is None
