"""Settle a round: void rounds, returned hands, then each game's own rules.

Order of work, as a table settles a round:

1. A void round (5.1-5.4, 5.8; Let It Ride 5.1-5.5; two cards exposed during the deal)
   returns every wager and moves nothing in the pool.
2. Seats whose wagers all go back by a rule: withdrawn at a power failure (5.16.1), wrong
   number of cards (5.7) and those who withdrew because of it (5.7.1), hand not kept
   confidential (5.9), invalidated hands of one player on several seats (5.10), a Gaming
   Shift Manager's decision (6.1), a player absent for the decision (5.11).
3. Every other seat by its game's module; a progressive wager without a base wager is
   returned (5.12.2); then all progressive wagers together (pool, sharing, Envy Bonus).
"""

from __future__ import annotations

from cardshoe.poker import Hand

from . import let_it_ride, stud, three_card
from .common import returned
from .jackpot import Claim, settle_progressives
from .result import DealerResult, HandShown, JackpotResult, Outcome, SeatResult, Settlement, WagerResult
from .round import IrregularityKind, Round, Seat, invalidated_hands

__all__ = ["settle"]

_THREE_CARD = ("three-card-poker", "megalink-three-card-poker", "megalink-three-card-poker-xtreme")


def _void(rnd: Round) -> tuple[tuple[str, ...], str] | None:
    game = rnd.game
    reasons: list[str] = []
    rules: list[str] = []
    for irr in rnd.void_irregularities():
        key = "not_covered" if irr.kind is IrregularityKind.MANAGER_DECISION else irr.kind.value
        rules.append(game.rule(key))
        reasons.append(irr.kind.value + (f" ({irr.note})" if irr.note else ""))
    if rnd.deal_exposures() >= 2:
        rules.append(game.rule("exposed_cards"))
        reasons.append(f"{rnd.deal_exposures()} cards exposed during the deal")
    if not rules:
        return None
    return tuple(dict.fromkeys(rules)), "; ".join(reasons)


def _returned_seats(rnd: Round) -> dict[int, tuple[tuple[str, ...], str]]:
    """Seats whose every wager goes back, with the rule and a reason (first reason wins)."""
    game = rnd.game
    out: dict[int, tuple[tuple[str, ...], str]] = {}

    def add(seat: int, rule: str, reason: str) -> None:
        out.setdefault(seat, ((rule,), reason))

    if rnd.power_failure is not None:
        for n in rnd.power_failure.withdrawn_seats:
            add(n, game.rule("power_failure_withdraw"), "withdrew all wagers after a power failure")
    for irr in rnd.irregularities:
        if irr.kind is IrregularityKind.PLAYER_CARD_COUNT:
            for n in irr.seats:
                add(n, game.rule("player_card_count"), "wrong number of cards: hand removed from play")
            for n in irr.withdrawn_seats:
                add(n, game.rule("withdraw_after_card_count"), "withdrew after another hand's wrong card count")
        elif irr.kind is IrregularityKind.CONFIDENTIALITY:
            for n in irr.seats:
                add(n, game.rule("confidentiality"), "hand not kept confidential: wagers returned")
        elif irr.kind is IrregularityKind.MULTIPLE_HANDS:
            invalid, key = invalidated_hands(rnd, irr)
            for n in invalid:
                add(n, game.rule(key), "hand invalidated: one player controlling several hands")
        elif irr.kind is IrregularityKind.MANAGER_DECISION and irr.effect == "return_wagers":
            for n in irr.seats:
                add(n, game.rule("not_covered"), irr.note or "Gaming Shift Manager's decision")
    decision = game.decision
    for seat in rnd.seats:
        if not seat.cards and _base_wager_missing(rnd, seat):
            # Not dealt to (a position "containing a wager" is a base wager, 3.7/3.8): the lone
            # progressive wager is invalid and returned.
            add(seat.seat, game.rule("progressive_without_base"), "no base wager: not dealt to, progressive invalid")
        if seat.absent and decision is not None and decision.on in seat.wagers:
            add(seat.seat, game.rule("absent"), "player not present for the decision: hand invalid")
    return out


def _base_wager_missing(rnd: Round, seat: Seat) -> bool:
    return not any(w in seat.wagers for w in rnd.game.base_wagers)


def settle(rnd: Round) -> Settlement:
    """Settle a parsed round (pure: same round, same settlement)."""
    game = rnd.game
    void = _void(rnd)
    notes: list[str] = []
    exposures = rnd.deal_exposures()
    if exposures == 1 and void is None:
        notes.append(f"one card exposed during the deal: the round stands ({game.rule('exposed_cards')} needs two or more)")
    if rnd.power_failure is not None and rnd.power_failure.outcome_established:
        notes.append(f"power failure after an outcome was established: play continued ({game.rule('power_failure_continue')})")

    if void is not None:
        seats = tuple(
            SeatResult(
                s.seat,
                s.player,
                tuple(returned(w, amt, void[0], "round void", Outcome.VOID) for w, amt in s.wagers.items()),
            )
            for s in rnd.seats
        )
        jp = None
        if rnd.jackpot is not None:
            jp = JackpotResult(rnd.jackpot.pool, rnd.jackpot.pool, rnd.jackpot.reset, ())
        return Settlement(game.id, game.rules_version, game.revision, game.currency, rnd.round_id, void,
                          None, rnd.community, seats, jp, tuple(notes))

    gone = _returned_seats(rnd)
    playing = [s for s in rnd.seats if s.seat not in gone]

    dealer: DealerResult | None = None
    dealer_hand: Hand | None = None
    if playing and game.dealer_cards:
        if game.id in _THREE_CARD:
            dealer, dealer_hand = three_card.dealer_result(rnd)
        else:
            dealer, dealer_hand = stud.dealer_result(rnd)

    per_seat: dict[int, list[WagerResult]] = {}
    hands: dict[int, dict[str, HandShown]] = {}
    claims: dict[int, Claim] = {}
    for seat in playing:
        if game.id in _THREE_CARD:
            assert dealer is not None and dealer_hand is not None
            results, shown, claim = three_card.settle_seat(rnd, seat, dealer_hand, dealer.qualifies)
        elif game.id == "megalink-singapore-stud-poker":
            assert dealer is not None and dealer_hand is not None
            results, shown, claim = stud.settle_seat(rnd, seat, dealer_hand, dealer.qualifies)
        else:
            results, shown, claim = let_it_ride.settle_seat(rnd, seat)
        hands[seat.seat] = shown
        if claim is not None:
            if _base_wager_missing(rnd, seat):
                rule = game.rule("progressive_without_base")
                results.append(returned("progressive", claim.stake, (rule,), "no base wager: progressive invalid"))
                claim = None
            else:
                claims[seat.seat] = claim
        per_seat[seat.seat] = results

    if game.id == "three-card-poker":
        notes += three_card.envy_extras(game, rnd, playing, claims)
    jackpot: JackpotResult | None = None
    if claims:
        prog_results, jackpot = settle_progressives(rnd, list(claims.values()))
        for number, result in prog_results.items():
            per_seat[number].append(result)
    elif rnd.jackpot is not None:
        jackpot = JackpotResult(rnd.jackpot.pool, rnd.jackpot.pool, rnd.jackpot.reset, ())

    seat_results: list[SeatResult] = []
    for seat in rnd.seats:
        if seat.seat in gone:
            rules, reason = gone[seat.seat]
            wagers = tuple(returned(w, amt, rules, reason) for w, amt in seat.wagers.items())
            seat_results.append(SeatResult(seat.seat, seat.player, wagers))
        else:
            names = [n for w in game.wagers for n in ((w, "ante_bonus") if w == "ante" else (w,))]
            order = {w: i for i, w in enumerate(names)}
            ordered = sorted(per_seat[seat.seat], key=lambda w: order.get(w.wager, 99))
            seat_results.append(SeatResult(seat.seat, seat.player, tuple(ordered), hands[seat.seat]))
    return Settlement(game.id, game.rules_version, game.revision, game.currency, rnd.round_id, None,
                      dealer, rnd.community, tuple(seat_results), jackpot, tuple(notes))
