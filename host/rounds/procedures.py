"""The dealing procedures of the five games, as data.

A procedure lists, per phase, the places in the order the shoe emits their cards. The host
cannot see where a card lands, only the order cards leave the shoe, so this order *is* the
placement: the n-th card of a phase goes to the phase's n-th place.

Readings of the rule text taken here (reported to the lead):

- "The third card of the Community cards (top card) shall be burned" (Megalink TCP 3.7,
  Xtreme 3.7.1-3.7.3): the third community card out of the shoe is the burn; the first two
  are community cards 1 and 2.
- Xtreme method C (3.7.3.1) "three cards ... with an additional security card at the bottom":
  a pile is built from the bottom up, so the security card is the first card out of the shoe,
  then dealer cards 1-3, then the seats, then the community cards with the burn.
- Stud 3.7/3.8 "the Dealer's last card (the bottom card) shall be exposed": the dealer's fifth
  card out of the shoe is the up card (public, not an exposure).
- Let It Ride has one dealing rule whatever the device: 3.6, three cards to each betting area
  (packets, in the words the other documents use for the automated device at 3.7), then 3.7
  the two community cards. The document has no one-card-at-a-time rule like the others'
  3.8, so a manual device deals by 3.6 too. The community cards are *dealt* at 3.7 (face
  down, before any decision); turning them over at 3.11 and 3.15 is not dealing and involves
  no shoe card.
- Megalink TCP / Xtreme manual (3.8): two community cards, no burn.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

from .errors import ProcedureError
from .places import MAX_SEATS, Place, PlaceKind, Position

__all__ = [
    "Device",
    "XtremeMethod",
    "CountPoint",
    "Unit",
    "Group",
    "Phase",
    "DealingProcedure",
    "GameRules",
    "GAME_IDS",
    "WAGERS",
    "BASE_WAGERS",
    "build_procedure",
    "game_rules",
    "interleave",
]

TCP = "three-card-poker"
MEGALINK_TCP = "megalink-three-card-poker"
XTREME = "megalink-three-card-poker-xtreme"
LET_IT_RIDE = "megalink-let-it-ride"
STUD = "megalink-singapore-stud-poker"
GAME_IDS: tuple[str, ...] = (TCP, MEGALINK_TCP, XTREME, LET_IT_RIDE, STUD)

WAGERS: dict[str, frozenset[str]] = {
    TCP: frozenset({"ante", "play", "pair_plus", "progressive"}),
    MEGALINK_TCP: frozenset({"ante", "play", "pair_plus", "progressive"}),
    XTREME: frozenset({"ante", "play", "pair_plus", "six_card_bonus", "progressive"}),
    LET_IT_RIDE: frozenset({"one", "two", "dollar", "progressive"}),
    STUD: frozenset({"ante", "bet", "progressive"}),
}
"""Every wager of each game (names as in INTERFACES.md)."""

BASE_WAGERS: dict[str, frozenset[str]] = {
    TCP: frozenset({"ante", "pair_plus"}),  # 3.4
    MEGALINK_TCP: frozenset({"ante", "pair_plus"}),  # 3.4
    XTREME: frozenset({"ante", "pair_plus", "six_card_bonus"}),  # 3.4
    LET_IT_RIDE: frozenset({"one", "two", "dollar"}),  # 3.4
    STUD: frozenset({"ante"}),  # 3.4
}
"""The wagers that make a position "a playing position containing a wager" (3.7/3.8): those a
player places to take part (3.4). A progressive alone is invalid after no more bets (5.12.2)
and does not get the seat dealt."""

DECISION_WAGERS: dict[str, frozenset[str]] = {
    TCP: frozenset({"play"}),
    MEGALINK_TCP: frozenset({"play"}),
    XTREME: frozenset({"play"}),
    LET_IT_RIDE: frozenset(),
    STUD: frozenset({"bet"}),
}
"""Wagers placed by a decision after the deal, not before "no more bets"."""


class Device(StrEnum):
    """The dealing device in use (rules 3.7 automated, 3.8 manual)."""

    AUTOMATED = "automated"
    MANUAL = "manual"


class XtremeMethod(StrEnum):
    """Megalink Three Card Poker Xtreme's automated dealing methods (3.7.1-3.7.3)."""

    A = "A"
    B = "B"
    C = "C"


class CountPoint(StrEnum):
    """Points where the host checks that a phase got exactly its cards."""

    DEAL_COMPLETE = "deal_complete"
    DECISION = "decision"
    SETTLE = "settle"


@dataclass(frozen=True)
class Unit:
    """The cards one position receives in a phase, in the order they leave the shoe.

    ``places`` may mix kinds: a Megalink community unit is community 1, community 2, burn 1;
    Xtreme C's dealer unit is security 1 then dealer 1-3.
    """

    position: Position
    places: tuple[Place, ...]


@dataclass(frozen=True)
class Group:
    """Units dealt together: one after another (automated packets), or ``interleaved`` one card
    at a time round the table (manual device, 3.8)."""

    units: tuple[Unit, ...]
    interleaved: bool


def interleave(sizes: list[int]) -> list[tuple[int, int]]:
    """Manual dealing order for units of the given sizes: (unit, card) pairs, one card per unit
    per pass, skipping units that are full (3.8: "repeated until all ... have three cards")."""
    order: list[tuple[int, int]] = []
    rounds = max(sizes, default=0)
    for k in range(rounds):
        for u, size in enumerate(sizes):
            if k < size:
                order.append((u, k))
    return order


@dataclass(frozen=True)
class Phase:
    """A stretch of dealing checked at one count point.

    ``name`` is ``"deal"`` (the initial deal) or ``"dealer"`` (Xtreme method B's dealer hand,
    3.7.2.1, dealt after every player has decided). ``opens_after`` is ``"no_more_bets"`` or
    ``"decisions"``; ``closes_at`` the count points that close it.
    """

    name: str
    groups: tuple[Group, ...]
    opens_after: str
    closes_at: tuple[CountPoint, ...]

    @cached_property
    def places(self) -> tuple[Place, ...]:
        """Every place of the phase in the order the shoe emits the cards."""
        out: list[Place] = []
        for group in self.groups:
            if group.interleaved:
                for u, k in interleave([len(unit.places) for unit in group.units]):
                    out.append(group.units[u].places[k])
            else:
                for unit in group.units:
                    out.extend(unit.places)
        return tuple(out)

    @property
    def units(self) -> tuple[Unit, ...]:
        return tuple(unit for group in self.groups for unit in group.units)


@dataclass(frozen=True)
class DealingProcedure:
    """The expected places of one round, per phase, for a game, device and active seats."""

    game: str
    device: Device
    method: XtremeMethod | None
    seats: tuple[int, ...]
    hand_size: int
    phases: tuple[Phase, ...]
    public_places: frozenset[Place]
    """Places dealt face up by the procedure (stud's dealer up card): showing them is not an
    exposure, and the event stream may show their card."""

    @cached_property
    def places(self) -> tuple[Place, ...]:
        """Every place of the round in the order the shoe emits the cards."""
        return tuple(place for phase in self.phases for place in phase.places)

    @property
    def has_dealer(self) -> bool:
        return self.game != LET_IT_RIDE

    @property
    def community_size(self) -> int:
        return sum(1 for p in self.places if p.kind is PlaceKind.COMMUNITY)

    def expected(self, position: Position) -> int:
        """How many cards the procedure deals to ``position`` (0 for one it never deals to)."""
        return sum(1 for p in self.places if p.position == position and p.kind not in (PlaceKind.BURN, PlaceKind.SECURITY))

    def to_json(self) -> dict[str, object]:
        return {
            "game": self.game,
            "device": self.device.value,
            "method": self.method.value if self.method else None,
            "seats": list(self.seats),
            "phases": [
                {"name": ph.name, "places": [p.to_json() for p in ph.places], "closes_at": [c.value for c in ph.closes_at]}
                for ph in self.phases
            ],
        }


def _seat_unit(seat: int, size: int) -> Unit:
    return Unit(Position.seat_(seat), tuple(Place(PlaceKind.SEAT, seat, k) for k in range(1, size + 1)))


def _dealer_unit(size: int, security: bool = False) -> Unit:
    places = [Place(PlaceKind.SECURITY, 0, 1)] if security else []
    places += [Place(PlaceKind.DEALER, 0, k) for k in range(1, size + 1)]
    return Unit(Position.DEALER, tuple(places))


def _community_unit(burn: bool) -> Unit:
    places = [Place(PlaceKind.COMMUNITY, 0, 1), Place(PlaceKind.COMMUNITY, 0, 2)]
    if burn:
        places.append(Place(PlaceKind.BURN, 0, 1))
    return Unit(Position.COMMUNITY, tuple(places))


_DEAL_CLOSES = (CountPoint.DEAL_COMPLETE, CountPoint.DECISION, CountPoint.SETTLE)
_DEALER_CLOSES = (CountPoint.DEAL_COMPLETE, CountPoint.SETTLE)


def build_procedure(
    game: str, device: Device | str, seats: tuple[int, ...] | list[int], method: XtremeMethod | str | None = None
) -> DealingProcedure:
    """The dealing procedure of ``game`` on ``device`` for the active ``seats``.

    ``seats`` are the positions holding a wager; they are dealt from the dealer's left
    clockwise, i.e. in ascending order whatever order they are given in. ``method`` is
    required for Xtreme on the automated device (3.7) and refused elsewhere.
    Raises :class:`ProcedureError` naming what is wrong.
    """
    if game not in GAME_IDS:
        raise ProcedureError(f"unknown game {game!r}; expected one of {', '.join(GAME_IDS)}")
    try:
        dev = Device(device)
    except ValueError:
        raise ProcedureError(f"unknown device {device!r}; expected 'automated' or 'manual'") from None
    active = tuple(sorted(set(seats)))
    if len(active) != len(list(seats)):
        raise ProcedureError(f"seats given twice: {list(seats)!r}")
    if not active:
        raise ProcedureError("no active seat: a round needs at least one position with a wager")
    for seat in active:
        if not isinstance(seat, int) or not 1 <= seat <= MAX_SEATS:
            raise ProcedureError(f"seat must be 1..{MAX_SEATS}, got {seat!r}")
    meth: XtremeMethod | None = None
    if method is not None:
        try:
            meth = XtremeMethod(method)
        except ValueError:
            raise ProcedureError(f"unknown Xtreme method {method!r}; expected A, B or C") from None
    if game == XTREME and dev is Device.AUTOMATED and meth is None:
        raise ProcedureError("Xtreme on an automated device needs a dealing method: A, B or C (3.7)")
    if meth is not None and not (game == XTREME and dev is Device.AUTOMATED):
        raise ProcedureError(f"dealing method {meth.value} applies only to Xtreme on an automated device (3.7)")

    size = 5 if game == STUD else 3
    seat_units = [_seat_unit(s, size) for s in active]
    interleaved = dev is Device.MANUAL
    public: frozenset[Place] = frozenset()
    phases: list[Phase]
    groups: tuple[Group, ...]

    if game == LET_IT_RIDE:
        # 3.6 three cards to each betting area, 3.7 then two community cards; no dealer hand.
        # 3.6 is the document's only dealing rule (it has no manual 3.8), so packets on either device.
        groups = (Group(tuple(seat_units), False), Group((_community_unit(False),), False))
        phases = [Phase("deal", groups, "no_more_bets", _DEAL_CLOSES)]
    elif game in (TCP, STUD) or (dev is Device.MANUAL):
        # TCP 3.7/3.8, stud 3.7/3.8, Megalink and Xtreme manual 3.8 (two community cards).
        groups_l = [Group(tuple(seat_units) + (_dealer_unit(size),), interleaved)]
        if game in (MEGALINK_TCP, XTREME):
            groups_l.append(Group((_community_unit(False),), False))
        phases = [Phase("deal", tuple(groups_l), "no_more_bets", _DEAL_CLOSES)]
        if game == STUD:
            public = frozenset({Place(PlaceKind.DEALER, 0, 5)})  # 3.7/3.8 dealer's last card exposed
    elif meth is XtremeMethod.B:
        # 3.7.2.1: seats, community with the top card burned; the dealer's three after decisions.
        groups = (Group(tuple(seat_units), False), Group((_community_unit(True),), False))
        dealer = (Group((_dealer_unit(size),), False),)
        phases = [
            Phase("deal", groups, "no_more_bets", _DEAL_CLOSES),
            Phase("dealer", dealer, "decisions", _DEALER_CLOSES),
        ]
    elif meth is XtremeMethod.C:
        # 3.7.3.1: dealer's three with the security card beneath (first out), seats, community.
        groups = (
            Group((_dealer_unit(size, security=True),), False),
            Group(tuple(seat_units), False),
            Group((_community_unit(True),), False),
        )
        phases = [Phase("deal", groups, "no_more_bets", _DEAL_CLOSES)]
    else:
        # Megalink TCP 3.7 and Xtreme method A 3.7.1.1: seats, dealer, community with burn.
        groups = (Group(tuple(seat_units) + (_dealer_unit(size),), False), Group((_community_unit(True),), False))
        phases = [Phase("deal", groups, "no_more_bets", _DEAL_CLOSES)]
    return DealingProcedure(game, dev, meth, active, size, tuple(phases), public)


@dataclass(frozen=True)
class GameRules:
    """The rule numbers of one game's document that decide each irregularity."""

    seat_count: tuple[str, ...]
    seat_count_voids_round: bool
    dealer_count: tuple[str, ...]
    community_count: tuple[str, ...]
    reconstruction: tuple[str, ...]
    exposure: tuple[str, ...]
    referral: tuple[str, ...]
    foreign: tuple[str, ...]
    extra_missing: tuple[str, ...]
    unread: tuple[str, ...]
    wagers_closed: tuple[str, ...]
    absent: tuple[str, ...]


_STANDARD = GameRules(
    seat_count=("5.7",),
    seat_count_voids_round=False,
    dealer_count=("5.3",),
    community_count=("5.3",),
    reconstruction=("5.2",),
    exposure=("5.4",),
    referral=("6.1",),
    foreign=("5.1",),
    extra_missing=("5.1", "5.8"),
    unread=("5.1", "5.8"),
    wagers_closed=("5.5", "5.6"),
    absent=("5.11",),
)

_RULES: dict[str, GameRules] = {
    TCP: _STANDARD,
    MEGALINK_TCP: _STANDARD,
    XTREME: _STANDARD,
    STUD: _STANDARD,
    # Let It Ride v2 numbers its irregularities differently and has no player-count rule (so a
    # wrong count at a betting area falls under 5.3: the round is void unless reconstructed),
    # no absent-player rule and no general provision 6.1 (referrals cite the exposure rule).
    LET_IT_RIDE: GameRules(
        seat_count=("5.3",),
        seat_count_voids_round=True,
        dealer_count=(),
        community_count=("5.4",),
        reconstruction=("5.3",),
        exposure=("5.5",),
        referral=(),
        foreign=("5.1",),
        extra_missing=("5.2",),
        unread=("5.1", "5.2"),
        wagers_closed=("5.6", "5.7"),
        absent=(),
    ),
}


def game_rules(game: str) -> GameRules:
    """The irregularity rule numbers of ``game``; raises ProcedureError for an unknown game."""
    try:
        return _RULES[game]
    except KeyError:
        raise ProcedureError(f"unknown game {game!r}; expected one of {', '.join(GAME_IDS)}") from None
