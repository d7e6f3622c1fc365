"""Three Card Poker (v5), Megalink Three Card Poker and Megalink Three Card Poker Xtreme.

One module for the three documents because they share their play (3.9-3.12): ante and
play against a dealer who needs Queen high, an Ante Bonus and Pair Plus on the player's
three cards, and a progressive. They differ in data (pay tables, rule numbers) and in:

* the progressive hand: the three cards (TCP v5, with the Royal Flush of spades and the
  Envy Bonus, 3.14/3.15) or the three cards plus the two community cards (Megalink, Xtreme);
* Xtreme's Six Card Bonus, best five of the player's three and the dealer's three (3.10.1).

Rule numbers come from the game's pay-table file (``game.rule(key)``), so each result cites
the number of the document of the game being played.
"""

from __future__ import annotations

from cardshoe.games import Game, best_line, dealer_qualifies
from cardshoe.poker import Hand, best5, evaluate3, evaluate5

from .common import bonus, limit_for, settle_odds, under_minimum_returned
from .jackpot import Claim, Extra
from .result import DealerResult, HandShown, Outcome, WagerResult
from .round import Round, Seat

__all__ = ["dealer_result", "settle_seat", "envy_extras"]


def dealer_result(rnd: Round) -> tuple[DealerResult, Hand]:
    """The dealer's hand and whether it qualifies (Queen high or better, 3.11/3.12)."""
    game = rnd.game
    hand = evaluate3(rnd.dealer, royal=game.three_card_royal)
    assert game.dealer_qualifier is not None
    qualifies = dealer_qualifies(game.dealer_qualifier, hand)
    rule = game.rule("dealer_qualified" if qualifies else "dealer_not_qualified")
    return DealerResult(rnd.dealer, HandShown(hand.name, hand.cards), qualifies, (rule,)), hand


def progressive_hand(rnd: Round, seat: Seat) -> Hand:
    """The hand the progressive pays on: 3 cards (TCP 4.4) or 3 + 2 community (Megalink 4.4)."""
    if rnd.game.community_cards:
        return evaluate5(seat.cards + rnd.community)
    return evaluate3(seat.cards, royal=rnd.game.three_card_royal)


def settle_seat(
    rnd: Round,
    seat: Seat,
    dealer: Hand,
    qualifies: bool,
) -> tuple[list[WagerResult], dict[str, HandShown], Claim | None]:
    """Settle one seat's ante, play, Ante Bonus, Pair Plus and Six Card Bonus.

    Returns the results, the hands shown, and the seat's progressive claim (settled later
    with every other progressive wager, because of the pool and the Envy Bonus).
    """
    game = rnd.game
    r = game.rule
    results: list[WagerResult] = []
    hand = evaluate3(seat.cards, royal=game.three_card_royal)
    hands = {"player": HandShown(hand.name, hand.cards)}
    declined = seat.declined_comparison
    choice = seat.decisions.get("ante")
    folded = choice == "fold"

    if "ante" in seat.wagers:
        early = under_minimum_returned(rnd, seat, "ante")
        if early is not None:
            results.append(early)
            if "play" in seat.wagers:
                results.append(under_minimum_returned(rnd, seat, "play") or early)
        elif folded:
            results.append(settle_odds(rnd, seat, "ante", Outcome.LOSE, (r("fold"),)))
        else:
            results += _ante_and_play(rnd, seat, hand, dealer, qualifies, declined)
            if not declined:
                line = best_line(game.table("ante_bonus"), hand)
                if line is not None:
                    settled_on, _ = limit_for(rnd, seat, "ante")
                    rule = r("ante_bonus") if qualifies else r("ante_bonus_unqualified")
                    table = game.table("ante_bonus")
                    results.append(bonus("ante_bonus", "ante", line, settled_on, (rule, table.rule), table.rule))

    if "pair_plus" in seat.wagers:
        results.append(_side_bet(rnd, seat, "pair_plus", hand, qualifies, folded, declined))

    if "six_card_bonus" in seat.wagers:
        six = best5(seat.cards + rnd.dealer)
        hands["six_card_bonus"] = HandShown(six.name, six.cards)
        results.append(_side_bet(rnd, seat, "six_card_bonus", six, qualifies, folded, declined))

    claim = None
    if "progressive" in seat.wagers:
        prog = progressive_hand(rnd, seat)
        hands["progressive"] = HandShown(prog.name, prog.cards)
        rules = [r("progressive")]
        if game.community_cards:
            rules.append(r("community_cards"))
        notes = []
        if folded:
            rules.append(r("fold_keeps_progressive"))
        if declined:
            rules.append(r("declined"))
            notes.append("comparison declined: deemed no winning progressive combination")
            line = None
        else:
            line = best_line(game.progressive_table, prog)
        claim = Claim(seat.seat, seat.wagers["progressive"], line, rules, notes=notes)
    return results, hands, claim


def _ante_and_play(
    rnd: Round, seat: Seat, hand: Hand, dealer: Hand, qualifies: bool, declined: bool
) -> list[WagerResult]:
    """3.10-3.12: the ante and play against the dealer's hand."""
    r = rnd.game.rule
    table = rnd.game.table("ante")
    ante_line, play_line = table.lines[0], rnd.game.table("play").lines[0]
    if not qualifies:
        # 3.11: no comparison; ante paid, play neither paid nor collected.
        base = (r("dealer_not_qualified"),)
        notes = ("comparison declined; the dealer does not qualify, so no comparison is made",) if declined else ()
        return [
            settle_odds(rnd, seat, "ante", Outcome.WIN, base + (r("ante_paid_unqualified"), table.rule),
                        line=ante_line, table_rule=table.rule, notes=notes),
            settle_odds(rnd, seat, "play", Outcome.PUSH, base + (r("no_play_payment"),)),
        ]
    base = (r("dealer_qualified"),)
    rules: tuple[str, ...]
    if declined:
        rules = base + (r("declined"), r("player_loses"))
        return [settle_odds(rnd, seat, w, Outcome.LOSE, rules) for w in ("ante", "play")]
    if hand.strength > dealer.strength:
        rules = base + (r("player_wins"), table.rule)
        return [
            settle_odds(rnd, seat, "ante", Outcome.WIN, rules, line=ante_line, table_rule=table.rule),
            settle_odds(rnd, seat, "play", Outcome.WIN, rules, line=play_line, table_rule=table.rule),
        ]
    if hand.strength < dealer.strength:
        rules = base + (r("player_loses"),)
        return [settle_odds(rnd, seat, w, Outcome.LOSE, rules) for w in ("ante", "play")]
    rules = base + (r("standoff"), r("standoff_same_ranks"))
    return [settle_odds(rnd, seat, w, Outcome.PUSH, rules) for w in ("ante", "play")]


def _side_bet(
    rnd: Round, seat: Seat, wager: str, hand: Hand, qualifies: bool, folded: bool, declined: bool
) -> WagerResult:
    """Pair Plus (4.3) and Six Card Bonus (Xtreme 4.5): paid on the hand, whatever the dealer."""
    game = rnd.game
    r = game.rule
    early = under_minimum_returned(rnd, seat, wager)
    if early is not None:
        return early
    table = game.table(wager)
    rules: tuple[str, ...] = (r(wager if qualifies else f"{wager}_unqualified"),)
    if wager == "six_card_bonus":
        rules = (r("six_card_bonus_hand"),) + rules
    if folded:
        rules += (r(f"fold_keeps_{wager}"),)
    if "ante" not in seat.wagers:
        rules += (r("side_wager_only"),)
    if declined:
        return settle_odds(rnd, seat, wager, Outcome.LOSE, rules + (r("declined"),),
                           notes=("comparison declined: the hand was not exposed",))
    line = best_line(table, hand)
    if line is None:
        return settle_odds(rnd, seat, wager, Outcome.LOSE, rules + (table.rule,))
    return settle_odds(rnd, seat, wager, Outcome.WIN, rules + (table.rule,), line=line, table_rule=table.rule)


def envy_extras(game: Game, rnd: Round, seats: list[Seat], claims: dict[int, Claim]) -> list[str]:
    """TCP 3.14/3.15: add the Envy Bonus to every other player's progressive claim.

    A hand triggers it when its seat has an ante wager in this round and the hand makes a
    progressive line with an Envy Bonus (the top two hands of 4.4). A Pair-Plus-only hand
    making those hands triggers nothing (3.15). Every progressive wager in action of another
    player (not the same person's other seat) receives it, per trigger. Returns round notes.
    """
    notes: list[str] = []
    if not game.progressive.envy:
        return notes
    table = game.progressive_table
    for hitter in seats:
        if hitter.declined_comparison:
            continue
        hand = evaluate3(hitter.cards, royal=game.three_card_royal)
        line = best_line(table, hand)
        if line is None or line.envy is None:
            continue
        if "ante" not in hitter.wagers:
            notes.append(
                f"seat {hitter.seat}: {line.label} on a Pair Plus wager without an ante: "
                f"no Envy Bonus for the other players ({game.rule('envy_exclusion')})"
            )
            continue
        for number, claim in sorted(claims.items()):
            receiver = rnd.seat(number)
            if receiver.player == hitter.player:
                continue
            # Read only for a claim to pay: with no progressive wager at the table the round
            # need not give the progressive's limits (docs/round-format.md: limits of wagers placed).
            unit = rnd.limit("progressive").min
            amount = line.envy * (claim.stake // unit)
            claim.extras.append(
                Extra(f"Envy Bonus ({line.label}, seat {hitter.seat})", f"{line.envy} per minimum wager",
                      amount, game.rule("envy"), False)
            )
    return notes
