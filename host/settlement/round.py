"""A round of play as settlement receives it, parsed strictly from the round JSON.

The format is documented in docs/round-format.md. :func:`parse_round` checks everything
that can be checked without settling (the game and its rules version, every card, every
wager name and amount, the decisions, the card counts, the limits, the progressive stake)
and raises :class:`RoundError` naming the field at the first problem. A round that parses
can be settled.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from collections.abc import Mapping
from typing import Any

from cardshoe.cards import RANKS, CardError, card_text, parse_card
from cardshoe.games import Game, UnknownGameError, get_game

from .errors import RoundError

__all__ = [
    "FORMAT",
    "Limit",
    "IrregularityKind",
    "Irregularity",
    "Exposure",
    "PowerFailure",
    "Jackpot",
    "Seat",
    "Round",
    "parse_round",
    "invalidated_hands",
    "VOID_KINDS",
    "check_stake",
    "limit_of",
]

FORMAT = "cardshoe.round/1"
MAX_SEAT = 7


_LET_IT_RIDE = "megalink-let-it-ride"


class IrregularityKind(str, Enum):
    """What went wrong, as the table reports it; the game's document decides the effect."""

    FOREIGN_CARD = "foreign_card"
    EXTRA_OR_MISSING_CARDS = "extra_or_missing_cards"
    UNSHUFFLED_CARDS = "unshuffled_cards"
    MISDEAL = "misdeal"
    DEALER_CARD_COUNT = "dealer_card_count"
    COMMUNITY_CARD_COUNT = "community_card_count"
    EXPOSED_CARDS = "exposed_cards"
    CARD_COUNT = "card_count"
    PLAYER_CARD_COUNT = "player_card_count"
    CONFIDENTIALITY = "confidentiality"
    MULTIPLE_HANDS = "multiple_hands"
    MANAGER_DECISION = "manager_decision"


# Kinds that void the whole round (5.1-5.4, 5.8; Let It Ride 5.1-5.5).
VOID_KINDS = frozenset(
    {
        IrregularityKind.FOREIGN_CARD,
        IrregularityKind.EXTRA_OR_MISSING_CARDS,
        IrregularityKind.UNSHUFFLED_CARDS,
        IrregularityKind.MISDEAL,
        IrregularityKind.DEALER_CARD_COUNT,
        IrregularityKind.COMMUNITY_CARD_COUNT,
        IrregularityKind.EXPOSED_CARDS,
        IrregularityKind.CARD_COUNT,
    }
)
# Kinds under which one deck can show the same card twice (a card from another deck).
_DUPLICATE_EXPLAINED = frozenset({IrregularityKind.FOREIGN_CARD, IrregularityKind.EXTRA_OR_MISSING_CARDS})
_SEAT_KINDS = frozenset(
    {IrregularityKind.PLAYER_CARD_COUNT, IrregularityKind.CONFIDENTIALITY, IrregularityKind.MULTIPLE_HANDS}
)
MANAGER_EFFECTS = ("void_round", "return_wagers")


@dataclass(frozen=True)
class Limit:
    """Table minimum and maximum of one wager, in minor units."""

    min: int
    max: int


@dataclass(frozen=True)
class Irregularity:
    """One irregularity reported for the round."""

    kind: IrregularityKind
    seats: tuple[int, ...] = ()
    withdrawn_seats: tuple[int, ...] = ()
    effect: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Exposure:
    """A card seen face up when it should not have been (only a person can tell)."""

    card: int | None
    position: str | None
    during: str  # "deal" or "play"


@dataclass(frozen=True)
class PowerFailure:
    """Rule 5.16: whether an outcome was established, and who withdrew."""

    outcome_established: bool
    withdrawn_seats: tuple[int, ...]


@dataclass(frozen=True)
class Jackpot:
    """The progressive system's state for the round."""

    pool: int
    reset: int
    magic_card: int | None = None
    lucky_player: int | None = None


@dataclass(frozen=True)
class Seat:
    """One playing position with its wagers, decisions and cards."""

    seat: int
    player: str
    viewed: bool
    absent: bool
    wagers: dict[str, int]
    decisions: dict[str, str]
    declined_comparison: bool
    under_minimum_settled_before: bool
    cards: tuple[int, ...]


@dataclass(frozen=True)
class Round:
    """A parsed, checked round ready to settle."""

    game: Game
    round_id: str | None
    dealing: str | None
    limits: dict[str, Limit]
    seats: tuple[Seat, ...]
    dealer: tuple[int, ...]
    community: tuple[int, ...]
    out_of_play: tuple[tuple[int, str], ...]
    exposures: tuple[Exposure, ...]
    irregularities: tuple[Irregularity, ...]
    power_failure: PowerFailure | None
    jackpot: Jackpot | None

    def limit(self, wager: str) -> Limit:
        """The limits of ``wager``; play/bet/two/dollar default from ante/one (docs)."""
        return limit_of(self.limits, wager)

    def seat(self, number: int) -> Seat:
        """The seat numbered ``number``."""
        for seat in self.seats:
            if seat.seat == number:
                return seat
        raise KeyError(number)

    def void_irregularities(self) -> tuple[Irregularity, ...]:
        """The irregularities that void the whole round."""
        return tuple(
            i
            for i in self.irregularities
            if i.kind in VOID_KINDS
            or (i.kind is IrregularityKind.MANAGER_DECISION and i.effect == "void_round")
        )

    def deal_exposures(self) -> int:
        """How many cards were incorrectly exposed during the deal (5.4)."""
        return sum(1 for e in self.exposures if e.during == "deal")

    @property
    def is_void(self) -> bool:
        """Whether the round is void as a whole (every wager returned)."""
        return bool(self.void_irregularities()) or self.deal_exposures() >= 2


# --- parsing helpers -------------------------------------------------------------------


def _int(value: Any, field: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RoundError(field, f"expected an integer amount in minor units, got {value!r}")
    if value < minimum:
        raise RoundError(field, f"must be at least {minimum}, got {value}")
    return int(value)


def _bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise RoundError(field, f"expected true or false, got {value!r}")
    return value


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise RoundError(field, f"expected text, got {value!r}")
    return value


def _obj(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RoundError(field, f"expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise RoundError(field, f"expected a list, got {type(value).__name__}")
    return value


def _card(value: Any, field: str) -> int:
    # The round format lists the ranks as 23456789TJQKA: a lower-case rank ("as") is
    # refused here, though a person typing at the table may use one (cardshoe.cards).
    if isinstance(value, str) and value[:1] and value[0] not in RANKS:
        raise RoundError(field, f"bad card {value[:8]!r}: rank {value[0]!r} is not one of {RANKS} (upper case)")
    try:
        return int(parse_card(value))
    except CardError as exc:
        raise RoundError(field, str(exc)) from None


def _cards(value: Any, field: str) -> tuple[int, ...]:
    return tuple(_card(v, f"{field}[{i}]") for i, v in enumerate(_list(value, field)))


def _seat_numbers(value: Any, field: str, known: set[int]) -> tuple[int, ...]:
    numbers = []
    for i, v in enumerate(_list(value, field)):
        n = _int(v, f"{field}[{i}]", minimum=1)
        if n not in known:
            raise RoundError(f"{field}[{i}]", f"seat {n} has no wagers in this round")
        numbers.append(n)
    return tuple(numbers)


def _check_keys(data: dict[str, Any], allowed: set[str], field: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        where = f"{field}.{unknown[0]}" if field else unknown[0]
        raise RoundError(where, "unknown field")


_TOP_KEYS = {
    "format", "round_id", "game", "rules_version", "currency", "dealing", "limits", "seats",
    "dealer", "community", "out_of_play", "exposures", "irregularities", "power_failure", "jackpot",
}
_SEAT_KEYS = {
    "seat", "player", "viewed", "absent", "wagers", "decisions", "declined_comparison",
    "under_minimum_settled_before", "cards",
}


def _parse_seat(data: Any, field: str, game: Game) -> Seat:
    raw = _obj(data, field)
    _check_keys(raw, _SEAT_KEYS, field)
    number = _int(raw.get("seat"), f"{field}.seat", minimum=1)
    if number > MAX_SEAT:
        raise RoundError(f"{field}.seat", f"seat {number} is out of range 1..{MAX_SEAT}")
    wagers_raw = _obj(raw.get("wagers"), f"{field}.wagers")
    if not wagers_raw:
        raise RoundError(f"{field}.wagers", "a seat in the round needs at least one wager")
    wagers: dict[str, int] = {}
    for name, amount in wagers_raw.items():
        if name not in game.wagers:
            raise RoundError(
                f"{field}.wagers.{name}",
                f"{game.title} has no wager {name!r} (its wagers: {', '.join(game.wagers)})",
            )
        wagers[name] = _int(amount, f"{field}.wagers.{name}", minimum=1)
    decisions_raw = _obj(raw.get("decisions", {}), f"{field}.decisions")
    decisions = {k: _text(v, f"{field}.decisions.{k}") for k, v in decisions_raw.items()}
    player = raw.get("player", f"seat-{number}")
    return Seat(
        seat=number,
        player=_text(player, f"{field}.player"),
        viewed=_bool(raw.get("viewed", True), f"{field}.viewed"),
        absent=_bool(raw.get("absent", False), f"{field}.absent"),
        wagers=wagers,
        decisions=decisions,
        declined_comparison=_bool(raw.get("declined_comparison", False), f"{field}.declined_comparison"),
        under_minimum_settled_before=_bool(
            raw.get("under_minimum_settled_before", False), f"{field}.under_minimum_settled_before"
        ),
        cards=_cards(raw.get("cards", []), f"{field}.cards"),
    )


def _parse_irregularity(data: Any, field: str, game: Game, known: set[int]) -> Irregularity:
    raw = _obj(data, field)
    _check_keys(raw, {"kind", "seats", "withdrawn_seats", "effect", "note"}, field)
    try:
        kind = IrregularityKind(raw.get("kind"))
    except ValueError:
        kinds = ", ".join(k.value for k in IrregularityKind)
        raise RoundError(f"{field}.kind", f"unknown irregularity {raw.get('kind')!r}; known: {kinds}") from None
    rule_key = {
        IrregularityKind.MULTIPLE_HANDS: "multiple_hands_viewed",
        IrregularityKind.MANAGER_DECISION: "not_covered",
    }.get(kind, kind.value)
    if rule_key not in game.rules:
        raise RoundError(f"{field}.kind", f"{game.title} has no {kind.value!r} (no such hand or cards in this game)")
    if kind is IrregularityKind.PLAYER_CARD_COUNT and game.id == _LET_IT_RIDE:
        # Reading 35/42: LIR has no per-player count rule (no 5.7); its 5.3 covers any deal
        # "dealt incorrectly", so a wrong count at one betting area voids the whole round.
        raise RoundError(
            f"{field}.kind",
            f"{game.title} has no rule for a wrong number of cards at one betting area; the deal was dealt "
            f"incorrectly and the round is void under {game.rule('misdeal')}: report a 'misdeal'",
        )
    seats = _seat_numbers(raw.get("seats", []), f"{field}.seats", known)
    withdrawn = _seat_numbers(raw.get("withdrawn_seats", []), f"{field}.withdrawn_seats", known)
    effect = raw.get("effect")
    if kind is IrregularityKind.MANAGER_DECISION:
        if effect not in MANAGER_EFFECTS:
            raise RoundError(f"{field}.effect", f"expected one of {MANAGER_EFFECTS}, got {effect!r}")
        if effect == "return_wagers" and not seats:
            raise RoundError(f"{field}.seats", "a decision returning wagers names the seats")
    elif effect is not None:
        raise RoundError(f"{field}.effect", "only a manager_decision states its effect")
    if kind in _SEAT_KINDS and not seats:
        raise RoundError(f"{field}.seats", f"{kind.value} names the seats it concerns")
    if kind is IrregularityKind.MULTIPLE_HANDS and len(seats) < 2:
        raise RoundError(f"{field}.seats", "multiple_hands names every seat the player controls (two or more)")
    if withdrawn and kind is not IrregularityKind.PLAYER_CARD_COUNT:
        raise RoundError(f"{field}.withdrawn_seats", "only player_card_count lets players withdraw (5.7.1)")
    note = raw.get("note")
    return Irregularity(
        kind=kind,
        seats=seats,
        withdrawn_seats=withdrawn,
        effect=effect,
        note=None if note is None else _text(note, f"{field}.note"),
    )


def invalidated_hands(rnd: Round, irr: Irregularity) -> tuple[tuple[int, ...], str]:
    """5.10: the seats a multiple_hands irregularity invalidates, and the rule key.

    With a hand viewed, the unviewed hands are invalid (5.10.1); with none viewed, the hand
    dealt first (the lowest seat: dealing starts at the dealer's left) plays (5.10.2).
    """
    viewed = [n for n in irr.seats if rnd.seat(n).viewed]
    if viewed:
        return tuple(n for n in irr.seats if n not in viewed), "multiple_hands_viewed"
    first = min(irr.seats)
    return tuple(n for n in irr.seats if n != first), "multiple_hands_unviewed"


def _returned_seats(rnd: Round) -> set[int]:
    """Seats whose every wager goes back by a rule, so their decisions/cards may be missing."""
    out: set[int] = set()
    if rnd.power_failure is not None:
        out.update(rnd.power_failure.withdrawn_seats)
    for irr in rnd.irregularities:
        if irr.kind in (IrregularityKind.PLAYER_CARD_COUNT, IrregularityKind.CONFIDENTIALITY):
            out.update(irr.seats)
            out.update(irr.withdrawn_seats)
        elif irr.kind is IrregularityKind.MANAGER_DECISION and irr.effect == "return_wagers":
            out.update(irr.seats)
        elif irr.kind is IrregularityKind.MULTIPLE_HANDS:
            out.update(invalidated_hands(rnd, irr)[0])
    for seat in rnd.seats:
        if seat.absent and rnd.game.decision is not None and rnd.game.decision.on in seat.wagers:
            out.add(seat.seat)
    return out


def _check_seat_play(rnd: Round, seat: Seat, field: str, returned: bool) -> None:
    """Decisions and wagers that go with them (TCP 3.9, Stud 3.9, Let It Ride 3.8-3.16)."""
    game = rnd.game
    decision = game.decision
    allowed_keys: set[str] = set()
    if decision is not None:
        allowed_keys = {decision.on}
        cont = seat.wagers.get(decision.wager)
        base = seat.wagers.get(decision.on)
        if cont is not None and base is None:
            raise RoundError(
                f"{field}.wagers.{decision.wager}",
                f"a {decision.wager} wager without an {decision.on} wager ({game.rule('continue')})",
            )
        choice = seat.decisions.get(decision.on)
        if choice is not None and choice not in (decision.continue_choice, decision.fold_choice):
            raise RoundError(
                f"{field}.decisions.{decision.on}",
                f"expected {decision.continue_choice!r} or {decision.fold_choice!r}, got {choice!r}",
            )
        if seat.absent and choice is not None:
            # An absent player makes no decision: the hand is invalid and its wagers go back (5.11).
            raise RoundError(f"{field}.decisions.{decision.on}", "an absent player makes no decision (5.11)")
        if base is not None:
            if choice is None and not returned and not seat.absent:
                raise RoundError(f"{field}.decisions.{decision.on}", "missing: play/bet or fold")
            if choice == decision.continue_choice and cont is None:
                raise RoundError(f"{field}.wagers.{decision.wager}", f"the player chose {choice!r} but placed no {decision.wager}")
            if choice == decision.fold_choice and cont is not None:
                raise RoundError(f"{field}.wagers.{decision.wager}", "a folded hand has no such wager")
            if cont is not None and cont != decision.multiple * base:
                raise RoundError(
                    f"{field}.wagers.{decision.wager}",
                    f"must be {decision.multiple} x the {decision.on} ({decision.multiple * base}), got {cont}",
                )
        elif choice is not None:
            raise RoundError(f"{field}.decisions.{decision.on}", f"there is no {decision.on} wager to decide on")
    if game.pull_backs:
        allowed_keys = set(game.pull_backs)
        main = [w for w in ("one", "two", "dollar") if w in seat.wagers]
        if main and len(main) != 3:
            missing = [w for w in ("one", "two", "dollar") if w not in seat.wagers][0]
            raise RoundError(f"{field}.wagers.{missing}", "the 1, 2 and $ wagers are placed together (3.4)")
        if main and len({seat.wagers[w] for w in main}) != 1:
            raise RoundError(f"{field}.wagers.two", "the 1, 2 and $ wagers must be equal (3.4)")
        for key in game.pull_backs:
            choice = seat.decisions.get(key)
            if choice is None:
                if main and not returned and not seat.absent:
                    raise RoundError(f"{field}.decisions.{key}", "missing: 'ride' or 'withdraw'")
            elif choice not in ("ride", "withdraw"):
                raise RoundError(f"{field}.decisions.{key}", f"expected 'ride' or 'withdraw', got {choice!r}")
            elif not main:
                raise RoundError(f"{field}.decisions.{key}", "there is no wager to decide on")
    for key in seat.decisions:
        if key not in allowed_keys:
            raise RoundError(f"{field}.decisions.{key}", f"{game.title} has no decision on {key!r}")
    if seat.declined_comparison and game.decision is None:
        raise RoundError(f"{field}.declined_comparison", f"{game.title} has no comparison with a dealer")


def limit_of(limits: Mapping[str, Limit], wager: str) -> Limit:
    """The table's limits of ``wager``; play and bet default from the ante's (the ante's, twice
    the ante's), two and dollar from the one's (docs/round-format.md). Raises RoundError
    (``limits.<wager>``) when the table gives none."""
    if wager in limits:
        return limits[wager]
    if wager == "play" and "ante" in limits:
        return limits["ante"]
    if wager == "bet" and "ante" in limits:
        ante = limits["ante"]
        return Limit(2 * ante.min, 2 * ante.max)
    if wager in ("two", "dollar") and "one" in limits:
        return limits["one"]
    raise RoundError(f"limits.{wager}", "missing: the table limits of this wager are needed")


def check_stake(game: Game, limits: Mapping[str, Limit], wager: str, stake: int, *, field: str = "") -> None:
    """Raise RoundError if settlement would refuse ``stake`` on ``wager`` at a table with
    ``limits``: the table gives no limits for the wager, or a progressive stake is not a whole
    number of minimum wagers, not a multiple the game allows or over its maximum (reading 13:
    TCP/MTCP 3.5 exactly the minimum, XT/SSP 3.5.3 one to five times it, LIR 3.5 any whole
    number; 3.4 "within the minimum and maximum limits displayed at the table"). Any other
    stake is settled, a base wager outside its limits by 5.13/5.14 (reading 75). The error's
    field is ``<field>.wagers.<wager>`` (``wagers.<wager>`` without ``field``) and its ``rule``
    the game's. The table checks each wager with this when it is placed (issue 20);
    parse_round checks each seat's progressive with it."""
    limit = limit_of(limits, wager)
    if wager != "progressive":
        return
    where = f"{field}.wagers.{wager}" if field else f"wagers.{wager}"
    multiples = game.progressive.multiples
    rule = game.rules.get("progressive_multiples") or game.rule("progressive_wager")
    if stake % limit.min:
        raise RoundError(where, f"{stake} is not a whole number of minimum wagers of {limit.min}", rule=rule)
    k = stake // limit.min
    if multiples is not None and k not in multiples:
        allowed = ", ".join(str(m) for m in multiples)
        raise RoundError(where, f"{k} x the minimum is not allowed (allowed: {allowed})", rule=rule)
    if stake > limit.max:
        # 3.4: the limits displayed at the table. Let It Ride's 3.4 names none: its 3.5, the credits.
        over = game.rule("progressive_wager" if game.id == _LET_IT_RIDE else "base_wager")
        raise RoundError(where, f"{stake} is over the progressive maximum {limit.max}", rule=over)


def _check_progressive(rnd: Round, seat: Seat, field: str) -> None:
    """The progressive stake is a legal multiple of the minimum (TCP 3.5.3, Xtreme 3.5.3...)."""
    stake = seat.wagers.get("progressive")
    if stake is None:
        return
    check_stake(rnd.game, rnd.limits, "progressive", stake, field=field)


def parse_round(data: Any, *, strict_void: bool = False) -> Round:
    """Parse and check a round (docs/round-format.md); raise RoundError naming the field.

    A void round (its irregularities or two exposures during the deal void it) returns every
    wager as staked (5.1-5.4, 5.8; Let It Ride 5.1-5.5), so only its form is checked: what its
    stakes, decisions and cards would have needed to settle on their merits (the table's
    limits, the progressive's multiples, Let It Ride's three equal wagers, the decisions, the
    card counts, the pool) cannot keep it from closing, and it may hold no seat at all (a round
    voided before any wager; rule reading 74). ``strict_void`` checks a void round as any
    other, as cardshoe did before issue 20: for replaying the journals it wrote then."""
    top = _obj(data, "round")
    _check_keys(top, _TOP_KEYS, "")
    if top.get("format") != FORMAT:
        raise RoundError("format", f"expected {FORMAT!r}, got {top.get('format')!r}")
    game_id = top.get("game")
    if not isinstance(game_id, str):
        raise RoundError("game", f"expected a game id, got {game_id!r}")
    try:
        game = get_game(game_id)
    except UnknownGameError as exc:
        raise RoundError("game", str(exc)) from None
    version = top.get("rules_version")
    if version != game.rules_version:
        raise RoundError(
            "rules_version",
            f"the round is for rules version {version!r}; the pay table is for {game.rules_version!r}",
        )
    currency = top.get("currency")
    if currency != game.currency:
        raise RoundError("currency", f"the pay table is in {game.currency!r}, the round says {currency!r}")
    round_id = top.get("round_id")
    if round_id is not None:
        round_id = _text(round_id, "round_id")
    dealing = top.get("dealing")
    if dealing is not None:
        methods = ("automated", "manual", *game.dealing_methods)
        if dealing not in methods:
            raise RoundError("dealing", f"expected one of {methods}, got {dealing!r}")

    limits: dict[str, Limit] = {}
    for name, raw_limit in _obj(top.get("limits", {}), "limits").items():
        if name not in game.wagers:
            raise RoundError(f"limits.{name}", f"{game.title} has no wager {name!r}")
        lim = _obj(raw_limit, f"limits.{name}")
        _check_keys(lim, {"min", "max"}, f"limits.{name}")
        low = _int(lim.get("min"), f"limits.{name}.min", minimum=1)
        high = _int(lim.get("max"), f"limits.{name}.max", minimum=low)
        limits[name] = Limit(low, high)

    seats_raw = _list(top.get("seats"), "seats")
    if len(seats_raw) > MAX_SEAT:
        # Checked before any seat is parsed: a long list costs nothing to refuse.
        raise RoundError("seats", f"{len(seats_raw)} seats listed; a table has at most {MAX_SEAT}")
    seats = tuple(_parse_seat(s, f"seats[{i}]", game) for i, s in enumerate(seats_raw))
    numbers: dict[int, int] = {}
    for i, seat in enumerate(seats):
        if seat.seat in numbers:
            raise RoundError(f"seats[{i}].seat", f"seat {seat.seat} is listed twice")
        numbers[seat.seat] = i
    known = set(numbers)

    dealer_raw = top.get("dealer")
    dealer: tuple[int, ...] = ()
    if dealer_raw is not None:
        dealer_obj = _obj(dealer_raw, "dealer")
        _check_keys(dealer_obj, {"cards"}, "dealer")
        dealer = _cards(dealer_obj.get("cards", []), "dealer.cards")
    if game.dealer_cards == 0 and dealer:
        raise RoundError("dealer.cards", f"{game.title} has no dealer's hand")
    community = _cards(top.get("community", []), "community")
    if game.community_cards == 0 and community:
        raise RoundError("community", f"{game.title} has no community cards")

    out_of_play: list[tuple[int, str]] = []
    for i, item in enumerate(_list(top.get("out_of_play", []), "out_of_play")):
        obj = _obj(item, f"out_of_play[{i}]")
        _check_keys(obj, {"card", "role"}, f"out_of_play[{i}]")
        role = obj.get("role")
        if role not in ("burn", "security", "discard"):
            raise RoundError(f"out_of_play[{i}].role", f"expected 'burn', 'security' or 'discard', got {role!r}")
        if role == "security" and (game.id != "megalink-three-card-poker-xtreme" or dealing not in (None, "C")):
            # Only Xtreme's method C deals a security card under the dealer's hand (3.7.3.1).
            raise RoundError(f"out_of_play[{i}].role", "a security card is dealt only by Xtreme method C (3.7.3.1)")
        out_of_play.append((_card(obj.get("card"), f"out_of_play[{i}].card"), role))

    exposures: list[Exposure] = []
    for i, item in enumerate(_list(top.get("exposures", []), "exposures")):
        obj = _obj(item, f"exposures[{i}]")
        _check_keys(obj, {"card", "position", "during"}, f"exposures[{i}]")
        card = obj.get("card")
        during = obj.get("during", "deal")
        if during not in ("deal", "play"):
            raise RoundError(f"exposures[{i}].during", f"expected 'deal' or 'play', got {during!r}")
        position = obj.get("position")
        exposures.append(
            Exposure(
                card=None if card is None else _card(card, f"exposures[{i}].card"),
                position=None if position is None else _text(position, f"exposures[{i}].position"),
                during=during,
            )
        )

    irregularities = tuple(
        _parse_irregularity(item, f"irregularities[{i}]", game, known)
        for i, item in enumerate(_list(top.get("irregularities", []), "irregularities"))
    )

    power_failure: PowerFailure | None = None
    if top.get("power_failure") is not None:
        pf = _obj(top.get("power_failure"), "power_failure")
        _check_keys(pf, {"outcome_established", "withdrawn_seats"}, "power_failure")
        established = _bool(pf.get("outcome_established"), "power_failure.outcome_established")
        withdrawn = _seat_numbers(pf.get("withdrawn_seats", []), "power_failure.withdrawn_seats", known)
        if established and withdrawn:
            raise RoundError(
                "power_failure.withdrawn_seats",
                f"an outcome was established: play continues and nobody may withdraw "
                f"({game.rule('power_failure_continue')})",
            )
        if withdrawn and not established and game.decision is not None:
            # A fold loses the base wager there and then (e.g. TCP 3.9.1), so once anyone
            # has folded an outcome is established and nobody may withdraw.
            decision = game.decision
            folded = [s.seat for s in seats if s.decisions.get(decision.on) == decision.fold_choice]
            if folded:
                raise RoundError(
                    "power_failure.outcome_established",
                    f"seat {folded[0]} folded, so an outcome was established: play continues and "
                    f"nobody may withdraw ({game.rule('power_failure_continue')})",
                )
        power_failure = PowerFailure(established, withdrawn)

    jackpot: Jackpot | None = None
    if top.get("jackpot") is not None:
        jp = _obj(top.get("jackpot"), "jackpot")
        _check_keys(jp, {"pool", "reset", "magic_card", "lucky_player"}, "jackpot")
        magic = jp.get("magic_card")
        lucky = jp.get("lucky_player")
        if game.id != "megalink-let-it-ride" and (magic is not None or lucky is not None):
            raise RoundError("jackpot.magic_card" if magic is not None else "jackpot.lucky_player",
                             f"{game.title} has no Magic Card or Lucky Player")
        lucky_seat = None
        if lucky is not None:
            lucky_seat = _int(lucky, "jackpot.lucky_player", minimum=1)
            if lucky_seat > MAX_SEAT:
                raise RoundError("jackpot.lucky_player", f"seat {lucky_seat} is out of range 1..{MAX_SEAT}")
        jackpot = Jackpot(
            pool=_int(jp.get("pool"), "jackpot.pool"),
            reset=_int(jp.get("reset"), "jackpot.reset"),
            magic_card=None if magic is None else _card(magic, "jackpot.magic_card"),
            lucky_player=lucky_seat,
        )

    rnd = Round(
        game=game,
        round_id=round_id,
        dealing=dealing,
        limits=limits,
        seats=seats,
        dealer=dealer,
        community=community,
        out_of_play=tuple(out_of_play),
        exposures=tuple(exposures),
        irregularities=irregularities,
        power_failure=power_failure,
        jackpot=jackpot,
    )
    void_as_staked = rnd.is_void and not strict_void
    if not rnd.seats and not void_as_staked:
        raise RoundError("seats", "a round has at least one seat with a wager")
    if not void_as_staked:
        _check_round(rnd)
    return rnd


def _check_round(rnd: Round) -> None:
    """Cross-field checks that need the whole round."""
    game = rnd.game
    void = rnd.is_void
    returned = _returned_seats(rnd)

    # One deck: every card once, unless a 5.1 irregularity (a card of another deck) voids it.
    if not any(i.kind in _DUPLICATE_EXPLAINED for i in rnd.irregularities):
        seen: dict[int, str] = {}
        places: list[tuple[str, int]] = []
        for i, seat in enumerate(rnd.seats):
            places += [(f"seats[{i}].cards[{j}]", c) for j, c in enumerate(seat.cards)]
        places += [(f"dealer.cards[{j}]", c) for j, c in enumerate(rnd.dealer)]
        places += [(f"community[{j}]", c) for j, c in enumerate(rnd.community)]
        places += [(f"out_of_play[{j}].card", c) for j, (c, _) in enumerate(rnd.out_of_play)]
        for field, card in places:
            if card in seen:
                raise RoundError(field, f"card {card_text(card)} appears twice (also at {seen[card]})")
            seen[card] = field

    for i, seat in enumerate(rnd.seats):
        field = f"seats[{i}]"
        # A void round may stop before the decisions: none are required then.
        _check_seat_play(rnd, seat, field, void or seat.seat in returned)
        for name in seat.wagers:
            rnd.limit(name)  # raises naming limits.<wager> when missing
        _check_progressive(rnd, seat, field)
        settles = not void and seat.seat not in returned
        # A seat with no base wager is not dealt to (3.7/3.8 "a position containing a wager"):
        # its progressive goes back under 5.12.2, so it may hold no cards.
        undealt = not seat.cards and not any(w in seat.wagers for w in game.base_wagers)
        if settles and not undealt and len(seat.cards) != game.player_cards:
            remedy = (
                f"a misdeal, which voids the round ({game.rule('misdeal')})" if game.id == _LET_IT_RIDE
                else "a player_card_count irregularity"
            )
            raise RoundError(
                f"{field}.cards",
                f"seat {seat.seat} has {len(seat.cards)} cards, {game.title} deals {game.player_cards} "
                f"(report {remedy} if that is what happened)",
            )

    settling = [s for s in rnd.seats if s.seat not in returned]
    if not void and settling:
        if game.dealer_cards and len(rnd.dealer) != game.dealer_cards:
            raise RoundError(
                "dealer.cards",
                f"the dealer has {len(rnd.dealer)} cards, {game.title} deals {game.dealer_cards} "
                f"(report a dealer_card_count irregularity if that is what happened)",
            )
        if len(rnd.community) != game.community_cards:
            raise RoundError(
                "community",
                f"{len(rnd.community)} community cards, {game.title} has {game.community_cards} "
                f"(report a community_card_count irregularity if that is what happened)",
            )
        # A progressive without a base wager is not in action (5.12.2): it needs no pool.
        if any("progressive" in s.wagers and any(b in s.wagers for b in game.base_wagers) for s in settling):
            if rnd.jackpot is None:
                raise RoundError("jackpot", "missing: progressive wagers need the pool and reset amounts")
            if game.id == "megalink-let-it-ride" and (
                rnd.jackpot.magic_card is None or rnd.jackpot.lucky_player is None
            ):
                field = "jackpot.magic_card" if rnd.jackpot.magic_card is None else "jackpot.lucky_player"
                raise RoundError(field, "missing: the system selects it every round (4.3, 4.4)")
