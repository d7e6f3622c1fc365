"""The order in which a round's cards are collected (docs/rule-readings.md, reading 60).

The rule documents say how cards are dealt (TCP 3.7/3.8 and the sister rules) but not how
they are picked up. The reading: the dealer settles and picks up the hands from the
dealer's right to the dealer's left (the direction Let It Ride 3.17 gives for turning the
hands over; the highest seat first), each hand in the order its cards were dealt; then the
dealer's hand, the community cards and the discard holder (burn, security card, cards put
out of play), each in dealt order; the rounds of one shoe in the order they were played.
A pile turned over before loading deals in the reverse order, which the detector also tests.
Only cards the shoe read have a known place: an unread card, and the undealt stub, have none.
"""

from __future__ import annotations

from typing import Mapping

from cardshoe.rounds import Place, PlaceKind, ShoeCard

#: Groups after the seats, in the order they are picked up.
_AFTER_SEATS = (PlaceKind.DEALER, PlaceKind.COMMUNITY, PlaceKind.BURN, PlaceKind.SECURITY, PlaceKind.DISCARD)


def collected_order(placements: Mapping[int, Place], cards: Mapping[int, ShoeCard]) -> tuple[int, ...]:
    """The known card codes of one round in the order they are collected (reading 60)."""

    def group_key(index: int) -> tuple[int, int, int, int]:
        place = placements[index]
        if place.kind is PlaceKind.SEAT:
            group = -place.seat  # the dealer's right (highest seat) first
        else:
            group = _AFTER_SEATS.index(place.kind) + 1
        return (group, place.number, index, 0)

    out: list[int] = []
    for index in sorted(placements, key=group_key):
        card = cards.get(index)
        if card is not None and card.code is not None:
            out.append(card.code)
    return tuple(out)
