"""The round in the games task's round format (docs/round-format.md), for settlement.

The round knows what was dealt, wagered and decided; the table's configuration supplies the
rest of the format (limits, the jackpot's reset amount) and the game's pay table its rules
version and currency, so ``cardshoe settle`` of an exported round gives the daemon's settlement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cards import card_text
from .events import DecisionKind, Irregularity, IrregularityKind
from .operations import Choice
from .places import PlaceKind, Position
from .procedures import BASE_WAGERS, LET_IT_RIDE, STUD, WAGERS
from .state import TCP_FAMILY, RoundState

__all__ = ["round_to_json", "seat_wagers", "FORMAT"]

FORMAT = "cardshoe.round/1"

def _cards(codes: tuple[int | None, ...]) -> list[str]:
    # An unread card has no identity; such a round is void (5.1/5.8), so it is left out.
    return [card_text(c) for c in codes if c is not None]


def _game_meta(game: str) -> tuple[str | None, str | None]:
    try:
        from ..games import get_game
    except ImportError:  # the games package is optional for the rounds' own tests
        return None, None
    g = get_game(game)
    return g.rules_version, g.currency


def _refused_rebuild(rnd: RoundState, flag: Irregularity) -> bool:
    """Whether ``flag`` is a count flag that voided the round by the reconstruction rule when a
    person refused what it proposed (a reconstruction, a manual deal's candidate placements).

    A count flag a supervisor's ``VoidRound`` closed is not: that round was voided by the
    supervisor's own flag, so both stay manager decisions."""
    return (
        flag.kind in (IrregularityKind.TOO_FEW_CARDS, IrregularityKind.CARD_NOT_DUE)
        and flag.rules == rnd.rules.reconstruction
        and rnd.void is not None
        and rnd.void.flag == flag.id
    )


def _irregularity(rnd: RoundState, flag: Irregularity) -> dict[str, Any] | None:
    """One flag as the format's IRREGULARITY, or None when it changes no wager."""
    note = f"#{flag.id} {flag.kind.value}: {flag.detail} (rules {', '.join(flag.rules) or 'none'})"
    d = flag.decision
    if d is DecisionKind.VOID_SEAT:
        out: dict[str, Any] = {"kind": "player_card_count", "seats": list(flag.void_seats), "note": note}
        if flag.withdrawn_seats:
            out["withdrawn_seats"] = list(flag.withdrawn_seats)  # 5.7.1
        return out
    if d is not DecisionKind.VOID_ROUND:
        return None  # acknowledged, reconstructed, or moot (still open in a round void anyway)
    if flag.resolved_by not in (None, "host"):
        if _refused_rebuild(rnd, flag):
            # 5.2 (LIR 5.3): dealt incorrectly and, the supervisor refusing the proposed move or
            # placement, not reconstructed: the round is void by that rule, not by a referral.
            return {"kind": "misdeal", "note": note}
        return {"kind": "manager_decision", "effect": "void_round", "note": note}
    if flag.kind is IrregularityKind.DECK:
        # An unread card's identity is unknown, so it may not belong to the deck: 5.1 as foreign.
        kind = "extra_or_missing_cards" if flag.fault in ("extra", "missing") else "foreign_card"
        return {"kind": kind, "note": note}
    if flag.kind in (IrregularityKind.EXPOSURES_DURING_DEAL, IrregularityKind.EXPOSURE):
        return {"kind": "exposed_cards", "note": note}
    if flag.kind in (IrregularityKind.TOO_FEW_CARDS, IrregularityKind.CARD_NOT_DUE):
        kinds = {p.kind for p in flag.wrong}
        if PlaceKind.DEALER in kinds:
            return {"kind": "dealer_card_count", "note": note}
        if PlaceKind.COMMUNITY in kinds:
            return {"kind": "community_card_count", "note": note}
        return {"kind": "misdeal", "note": note}
    return {"kind": "manager_decision", "effect": "void_round", "note": note}


def round_to_json(
    rnd: RoundState,
    *,
    limits: Mapping[str, Mapping[str, int]],
    jackpot_reset: int | None = None,
    rules_version: str | None = None,
    currency: str | None = None,
) -> dict[str, Any]:
    """Export ``rnd`` in the round format of docs/round-format.md.

    ``limits`` are the table's limits per wager (minor units); ``jackpot_reset`` the amount the
    progressive resets to; ``rules_version`` and ``currency`` default to the game's pay table.
    The jackpot pool is the one given at ``Settle``. Raises ValueError while a flag still waits
    for a person in a round that is not void, since the outcome is not yet decided.
    """
    pending = rnd.pending_flags
    if pending and rnd.void is None:  # a void round returns everything whatever else is open
        raise ValueError("round has irregularities waiting for a person: " + ", ".join(f"#{f.id}" for f in pending))
    version, cur = _game_meta(rnd.game)
    seats_out: list[dict[str, Any]] = []
    seat_numbers = sorted(set(rnd.wagers) | set(rnd.active_seats()))
    for seat in seat_numbers:
        wagers, decisions = seat_wagers(rnd, seat)
        entry: dict[str, Any] = {"seat": seat, "wagers": wagers}
        if decisions:
            entry["decisions"] = decisions
        if seat in rnd.absent:
            entry["absent"] = True
        if Choice.DECLINE_COMPARISON in rnd.decisions.get(seat, []):
            entry["declined_comparison"] = True
        entry["cards"] = _cards(rnd.hand(Position.seat_(seat)))
        seats_out.append(entry)

    out: dict[str, Any] = {
        "format": FORMAT,
        "round_id": rnd.round_id,
        "game": rnd.game,
        "rules_version": rules_version if rules_version is not None else version,
        "currency": currency if currency is not None else cur,
        "dealing": rnd.method.value if rnd.method is not None else rnd.device.value,
        # A table's configuration may list limits for several games; the format takes this game's.
        "limits": {name: dict(v) for name, v in limits.items() if name in WAGERS[rnd.game]},
        "seats": seats_out,
    }
    if rnd.game != LET_IT_RIDE:
        out["dealer"] = {"cards": _cards(rnd.hand(Position.DEALER))}
    out["community"] = _cards(rnd.hand(Position.COMMUNITY))
    out_of_play = [{"card": card_text(c), "role": "burn"} for c in rnd.burns if c is not None]
    out_of_play += [{"card": card_text(c), "role": "security"} for c in rnd.security if c is not None]
    # Cards that belong to no hand: surplus hands moved off by a 5.2 reconstruction, cards a
    # person reported straight to the discard, and cards drawn when none was due left unplaced.
    discards = sorted(k for k, p in rnd.placements.items() if p.kind is PlaceKind.DISCARD)
    discards += [k for k in rnd.not_due if k not in rnd.placements]
    out_of_play += [
        {"card": card_text(code), "role": "discard"}
        for code in (rnd.cards[k].code for k in sorted(set(discards)))
        if code is not None
    ]
    out["out_of_play"] = out_of_play
    exposures = []
    for e in rnd.exposures:
        if not e.counted:
            continue
        code = rnd.cards[e.shoe_index].code if e.shoe_index is not None else None
        exposures.append({
            "card": card_text(code) if code is not None else None,
            "position": e.place.label() if e.place is not None else "unknown",
            "during": "deal" if e.during_deal else "play",
        })
    out["exposures"] = exposures
    irregularities = [x for x in (_irregularity(rnd, f) for f in rnd.irregularities) if x is not None]
    out["irregularities"] = irregularities
    out["power_failure"] = None
    # Only a progressive beside a base wager is in action (5.12.2) and needs the pool.
    base = BASE_WAGERS[rnd.game]
    has_progressive = any("progressive" in w and not base.isdisjoint(w) for w in rnd.wagers.values())
    if rnd.void is not None and rnd.jackpot_pool is None:
        # A void round returns every wager, progressive ones included: it needs no pool, and
        # asking for one would keep a void round from ever closing.
        has_progressive = False
    if has_progressive or rnd.jackpot_pool is not None:
        jackpot: dict[str, Any] = {"pool": rnd.jackpot_pool, "reset": jackpot_reset}
        if rnd.game == LET_IT_RIDE:
            jackpot["magic_card"] = card_text(rnd.magic_card) if rnd.magic_card is not None else None
            jackpot["lucky_player"] = rnd.lucky_seat
        out["jackpot"] = jackpot
    else:
        out["jackpot"] = None
    return out


def seat_wagers(rnd: RoundState, seat: int) -> tuple[dict[str, int], dict[str, str]]:
    """The wagers of ``seat`` as they stand (those placed, and a play or bet once the player
    made it) and its decisions by wager, in the round format's words.

    Three Card Poker family: a Play wager equal to the ante (3.9.2); Singapore Stud: a Bet of
    twice the ante (1.1.2); Let It Ride: the 1 and the 2 withdrawn or let ride (3.11-3.12)."""
    wagers = dict(rnd.wagers.get(seat, {}))
    made = rnd.decisions.get(seat, [])
    decisions: dict[str, str] = {}
    if rnd.game in TCP_FAMILY or rnd.game == STUD:
        if Choice.PLAY in made:
            wagers["play"] = wagers["ante"]  # 3.9.2: equal to the ante
            decisions["ante"] = "play"
        elif Choice.BET in made:
            wagers["bet"] = 2 * wagers["ante"]  # stud 1.1.2: twice the ante
            decisions["ante"] = "bet"
        elif Choice.FOLD in made:
            decisions["ante"] = "fold"
    elif rnd.game == LET_IT_RIDE:
        for choice in made:
            if choice in (Choice.PULL_1, Choice.RIDE_1):
                decisions["one"] = "withdraw" if choice is Choice.PULL_1 else "ride"
            elif choice in (Choice.PULL_2, Choice.RIDE_2):
                decisions["two"] = "withdraw" if choice is Choice.PULL_2 else "ride"
    return wagers, decisions
