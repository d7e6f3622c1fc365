"""Barcode payloads and their Luhn mod 36 check character (SPEC section 6)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from protocol_helpers import load_barcodes
from cardshoe.protocol import BarcodeError, make_barcode, parse_barcode
from cardshoe.protocol.barcode import ALPHABET, check_character

ITEMS = load_barcodes()["barcodes"]


@pytest.mark.parametrize("item", ITEMS, ids=[f"{i}-{it['text']!r}" for i, it in enumerate(ITEMS)])
def test_barcode_vectors(item: dict[str, Any]) -> None:
    if item["valid"]:
        payload = parse_barcode(item["text"])
        assert (payload.deck_id, payload.code) == (item["deck_id"], item["code"])
        assert "23456789TJQKA"[payload.code // 4] + "cdhs"[payload.code % 4] == item["card"]
    else:
        with pytest.raises(BarcodeError) as info:
            parse_barcode(item["text"])
        assert info.value.reason == item["reason"]


def test_spec_examples() -> None:
    # The worked examples in SPEC section 6.
    assert make_barcode(0x1234ABCD, 51) == "CS1234ABCDASU"
    assert make_barcode(0x00C0FFEE, 0) == "CS00C0FFEE2CM"


def test_check_character_by_hand() -> None:
    # "CS0000000002C" worked by hand: values from the right, doubling the rightmost.
    body = "CS00000000" + "2C"
    values = [ALPHABET.index(ch) for ch in body]
    total = 0
    for i, v in enumerate(reversed(values)):
        if i % 2 == 0:
            v *= 2
            v = v // 36 + v % 36
        total += v
    assert check_character(body) == ALPHABET[(36 - total % 36) % 36]
    # C=12 doubled 24; 2 stays 2; zeros 0; S=28 doubled 56 -> 1+20 = 21; C=12 stays 12.
    assert total == 24 + 2 + 21 + 12


@pytest.mark.parametrize("code", [0, 17, 51])
def test_every_single_character_error_is_caught(code: int) -> None:
    good = make_barcode(0x5EED1234, code)
    for pos, ch in itertools.product(range(13), ALPHABET):
        if ch == good[pos]:
            continue
        bad = good[:pos] + ch + good[pos + 1 :]
        with pytest.raises(BarcodeError):
            parse_barcode(bad)


def test_adjacent_transpositions_caught_except_0z() -> None:
    body_chars = ALPHABET
    missed = set()
    for a, b in itertools.permutations(body_chars, 2):
        text = "CS" + "00000000" + "00"
        body = text[:4] + a + b + text[6:]
        good = body + check_character(body)
        swapped = good[:4] + b + a + good[6:]
        if check_character(swapped[:12]) == swapped[12]:
            missed.add(frozenset((a, b)))
    assert missed == {frozenset("0Z")}


def test_barcode_bytes_and_terminators() -> None:
    text = make_barcode(7, 12)
    assert parse_barcode((text + "\r\n").encode()) == parse_barcode(text)
    with pytest.raises(BarcodeError):
        parse_barcode(b"\xffCS000000072C")
    with pytest.raises(BarcodeError):
        parse_barcode(text + "\n\n")
