"""Where the cards of a phase physically are, given a person's counts; and reconstructions.

Pure functions. The shoe's order plus the procedure gives the *nominal* placement. When a
count point finds the wrong number of cards, a person says which position holds the wrong
count (``HandCountReported``); :func:`physical_layout` then replays the dealing order with
those counts to find where each card really is:

- automated device: each position's packet is contiguous, so the layout is exact;
- manual device: one card per position per pass; by default a position reported short is
  taken to have been missed in the last pass(es) it should have had, one reported long to have
  had its extra card(s) after everyone's last card. The host cannot tell which pass a slip
  happened in, so for one position one card off the round asks a supervisor to choose among
  the layouts of :func:`slip_passes` (``physical_layout(..., slip=(position, pass))``).

:func:`reconstruction` implements rule 5.2 (LIR 5.3): if every hand dealt (seats, including
seats dealt to in error, and the dealer) is complete, and there are enough complete hands,
moving complete hands in the order they were dealt to the positions the procedure deals
to rebuilds the deal exactly as it should have been; complete hands left over go to the discard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .places import Place, PlaceKind, Position
from .procedures import Group, Phase, Unit, interleave

__all__ = ["UnitLayout", "physical_layout", "slip_passes", "reconstruction", "layout_placements"]


@dataclass(frozen=True)
class UnitLayout:
    """One position's cards in the physical layout: the nominal unit (None for a seat dealt to
    in error or the discard), the places it really holds and the phase card numbers (0-based
    order of the card in the phase) on them."""

    position: Position
    nominal: Unit | None
    places: tuple[Place, ...]
    order: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.places)

    @property
    def correct(self) -> bool:
        return self.nominal is not None and self.count == len(self.nominal.places)


def _unit_places(position: Position, nominal: Unit | None, count: int) -> tuple[Place, ...]:
    base = list(nominal.places) if nominal is not None else []
    if count <= len(base):
        return tuple(base[:count])
    # Extra cards continue the position's own numbering (seat 3 card 4, dealer card 4).
    kind = position.kind
    seat = position.seat
    already = sum(1 for p in base if p.kind is kind)
    extra = [Place(kind, seat, already + k) for k in range(1, count - len(base) + 1)]
    return tuple(base + extra)


def _slip_order(sizes: list[int], nominal: list[int], wrong: int, slip_pass: int) -> list[int]:
    """Manual dealing order (unit per card) when unit ``wrong`` is one card short, missed in
    pass ``slip_pass``, or one card long, given a second card straight after its card of pass
    ``slip_pass`` (``slip_pass`` past its last pass: the extra card came after everyone's last)."""
    order: list[int] = []
    diff = sizes[wrong] - nominal[wrong]
    for k in range(max(max(sizes), max(nominal))):
        for u, size in enumerate(sizes):
            if u != wrong:
                if k < size:
                    order.append(u)
                continue
            if k < nominal[u]:
                if diff == -1 and k == slip_pass - 1:
                    continue
                order.append(u)
                if diff == 1 and k == slip_pass - 1:
                    order.append(u)
            elif diff == 1 and k == slip_pass - 1:
                order.append(u)
    return order


def physical_layout(
    phase: Phase, counts: Mapping[Position, int], slip: tuple[Position, int] | None = None
) -> list[UnitLayout]:
    """The phase's positions with the places they hold, given reported ``counts`` (positions
    not reported hold their nominal count). Seats the phase does not deal to are inserted in
    clockwise order among the seats; the discard comes last. Units appear in dealing order.

    Manual device: by default a position one card short missed its last pass and one long had
    its extra card after the last pass. ``slip=(position, pass)`` says instead in which pass
    (1-based) that position, one card short or long, was missed or given a second card (see
    :func:`slip_passes`)."""
    nominal_positions = {unit.position for unit in phase.units}
    extra_seats = sorted(p for p in counts if p.kind is PlaceKind.SEAT and p not in nominal_positions and counts[p] > 0)
    groups: list[Group] = []
    placed_extra = False
    for group in phase.groups:
        units = list(group.units)
        if any(u.position.kind is PlaceKind.SEAT for u in units) and not placed_extra:
            for pos in extra_seats:
                at = next(
                    (i for i, u in enumerate(units) if u.position.kind is not PlaceKind.SEAT or u.position.seat > pos.seat),
                    len(units),
                )
                units.insert(at, Unit(pos, ()))
            placed_extra = True
        groups.append(Group(tuple(units), group.interleaved))
    layouts: list[tuple[Position, Unit | None, tuple[Place, ...]]] = []
    order_of: list[list[int]] = []
    n = 0
    for group in groups:
        sized = []
        for unit in group.units:
            nominal = unit if unit.places else None
            count = counts.get(unit.position, len(unit.places))
            sized.append((unit.position, nominal, _unit_places(unit.position, nominal, count)))
        start = len(layouts)
        layouts.extend(sized)
        order_of.extend([] for _ in sized)
        if group.interleaved:
            sizes = [len(s[2]) for s in sized]
            nominal_sizes = [len(s[1].places) if s[1] is not None else len(s[2]) for s in sized]
            slipped = next((u for u, s in enumerate(sized) if slip is not None and s[0] == slip[0] and s[1] is not None), None)
            if slip is not None and slipped is not None and abs(sizes[slipped] - nominal_sizes[slipped]) == 1:
                sequence = _slip_order(sizes, nominal_sizes, slipped, slip[1])
            else:
                sequence = [u for u, _k in interleave(sizes)]
            for u in sequence:
                order_of[start + u].append(n)
                n += 1
        else:
            for u, s in enumerate(sized):
                for _ in s[2]:
                    order_of[start + u].append(n)
                    n += 1
    discard = counts.get(Position.DISCARD, 0)
    if discard:
        layouts.append((Position.DISCARD, None, tuple(Place(PlaceKind.DISCARD, 0, k) for k in range(1, discard + 1))))
        order_of.append(list(range(n, n + discard)))
    return [UnitLayout(pos, nom, places, tuple(order)) for (pos, nom, places), order in zip(layouts, order_of)]


def slip_passes(phase: Phase, position: Position, count: int) -> tuple[int, ...] | None:
    """The passes in which a manual deal may have missed (``count`` one short) or doubled
    (``count`` one long; the last value means "after the last pass") ``position``'s card, or
    None when the position is not dealt one card per pass or its count is not one off."""
    for group in phase.groups:
        for unit in group.units:
            if unit.position == position and group.interleaved and unit.places:
                size = len(unit.places)
                if count == size - 1:
                    return tuple(range(1, size + 1))
                if count == size + 1:
                    return tuple(range(1, size + 2))
                return None
    return None


def layout_placements(layout: list[UnitLayout]) -> dict[int, Place]:
    """Phase card number (0-based) -> place, from a physical layout."""
    out: dict[int, Place] = {}
    for unit in layout:
        for place, k in zip(unit.places, unit.order):
            out[k] = place
    return out


def _is_hand(unit: UnitLayout) -> bool:
    return unit.position.kind in (PlaceKind.SEAT, PlaceKind.DEALER)


def reconstruction(phase: Phase, layout: list[UnitLayout], hand_size: int) -> dict[int, Place] | None:
    """Rule 5.2 (LIR 5.3): phase card number -> place after moving complete hands, or None when
    the deal cannot be rebuilt that way (an incomplete hand, too few complete hands, a wrong
    community count, a card straight to the discard) or needs no rebuilding."""
    if all(u.correct for u in layout):
        return None
    for unit in layout:
        if not _is_hand(unit):
            if unit.position.kind is PlaceKind.DISCARD or not unit.correct:
                return None
    required = [u for u in phase.units if u.position.kind in (PlaceKind.SEAT, PlaceKind.DEALER)]
    dealt = [u for u in layout if _is_hand(u) and u.count > 0]
    for unit in dealt:
        size = len(unit.nominal.places) if unit.nominal is not None else hand_size
        if unit.count != size:
            return None
    if len(dealt) < len(required):
        return None
    out: dict[int, Place] = {}
    for target, source in zip(required, dealt):
        if len(target.places) != source.count:
            return None  # Xtreme C's dealer unit (with its security card) cannot swap with a seat's
        for place, k in zip(target.places, source.order):
            out[k] = place
    number = 0
    for source in dealt[len(required):]:
        for k in source.order:
            number += 1
            out[k] = Place(PlaceKind.DISCARD, 0, number)
    for unit in layout:
        if not _is_hand(unit):
            for place, k in zip(unit.places, unit.order):
                out[k] = place
    return out
