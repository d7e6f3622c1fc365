"""The strict card parser of cardshoe.cards (INTERFACES.md: Cards)."""

from __future__ import annotations

import pytest

from cardshoe.cards import (
    DECK,
    CardError,
    DuplicateCardError,
    card_text,
    cards_text,
    check_card,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)


def test_codes_match_wire_encoding() -> None:
    # code = (rank - 2) * 4 + suit, suit c=0 d=1 h=2 s=3 (SPEC section 6)
    assert parse_card("2c") == 0
    assert parse_card("2s") == 3
    assert parse_card("Td") == (10 - 2) * 4 + 1
    assert parse_card("As") == 51
    assert parse_card("ah") == 50  # lower-case rank accepted


def test_round_trip_every_card() -> None:
    assert [parse_card(card_text(c)) for c in DECK] == list(DECK)
    assert len({card_text(c) for c in DECK}) == 52
    for c in DECK:
        assert make_card(rank_of(c), suit_of(c)) == c


@pytest.mark.parametrize("text", ["10d", "", "Xx", "AS", "A", "Asd", "1c", "T", " Td", "Td "])
def test_bad_text_is_refused_naming_it(text: str) -> None:
    with pytest.raises(CardError) as info:
        parse_card(text)
    assert repr(text) in str(info.value)


def test_non_string_is_refused() -> None:
    with pytest.raises(CardError):
        parse_card(7)  # type: ignore[arg-type,unused-ignore]


def test_duplicates_are_refused() -> None:
    with pytest.raises(DuplicateCardError) as info:
        parse_cards(["As", "Kd", "as"])
    assert "'as'" in str(info.value)
    assert issubclass(DuplicateCardError, CardError)
    assert issubclass(CardError, ValueError)


def test_parse_cards_forms() -> None:
    assert parse_cards("As Kd, 5c") == (51, 45, 12)
    assert parse_cards(["As", "Kd"]) == (51, 45)
    assert cards_text((51, 45, 12)) == "As Kd 5c"
    with pytest.raises(CardError):
        parse_cards("As 10d")


@pytest.mark.parametrize("code", [-1, 52, True, 3.0, "3"])
def test_bad_codes(code: object) -> None:
    with pytest.raises(CardError):
        check_card(code)  # type: ignore[arg-type,unused-ignore]
    with pytest.raises(CardError):
        card_text(code)  # type: ignore[arg-type,unused-ignore]


def test_make_card_range() -> None:
    with pytest.raises(CardError):
        make_card(1, 0)
    with pytest.raises(CardError):
        make_card(14, 4)
