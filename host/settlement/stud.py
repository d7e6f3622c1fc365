"""Megalink Singapore Stud Poker (version 9).

Ante, then Bet (twice the ante, 1.1.2) or fold (3.9). The dealer needs Ace-King or better
(3.10.2/3.10.3). Against a dealer with "no hand" the ante is paid and the bet returned
(3.10.2.1, 3.10.2.2); otherwise the ante pays 1 to 1 (4.1.1) and the bet by the player's
hand (4.1.2) when the player wins, both are collected when he loses, and a tie is a
stand-off (3.10.4). The progressive pays on the player's five cards (4.2), folded or not.
"""

from __future__ import annotations

from cardshoe.games import best_line, dealer_qualifies
from cardshoe.poker import Hand, evaluate5

from .common import settle_odds, under_minimum_returned
from .jackpot import Claim
from .result import DealerResult, HandShown, Outcome, WagerResult
from .round import Round, Seat

__all__ = ["dealer_result", "settle_seat"]


def dealer_result(rnd: Round) -> tuple[DealerResult, Hand]:
    """The dealer's five cards and whether they hold Ace-King or better."""
    game = rnd.game
    hand = evaluate5(rnd.dealer)
    assert game.dealer_qualifier is not None
    qualifies = dealer_qualifies(game.dealer_qualifier, hand)
    rule = game.rule("dealer_qualified" if qualifies else "dealer_not_qualified")
    return DealerResult(rnd.dealer, HandShown(hand.name, hand.cards), qualifies, (rule,)), hand


def settle_seat(
    rnd: Round, seat: Seat, dealer: Hand, qualifies: bool
) -> tuple[list[WagerResult], dict[str, HandShown], Claim | None]:
    """Settle one seat's ante and bet; return its progressive claim for later."""
    game = rnd.game
    r = game.rule
    hand = evaluate5(seat.cards)
    hands = {"player": HandShown(hand.name, hand.cards)}
    results: list[WagerResult] = []
    choice = seat.decisions.get("ante")
    folded = choice == "fold"
    declined = seat.declined_comparison
    ante_table, bet_table = game.table("ante"), game.table("bet")
    ante_line = ante_table.lines[0]

    rules: tuple[str, ...]
    # A progressive with no ante (5.12.2) is returned by the caller; nothing else to settle.
    early = under_minimum_returned(rnd, seat, "ante") if "ante" in seat.wagers else None
    if "ante" not in seat.wagers:
        pass
    elif early is not None:
        results.append(early)
        if "bet" in seat.wagers:
            results.append(under_minimum_returned(rnd, seat, "bet") or early)
    elif folded:
        results.append(settle_odds(rnd, seat, "ante", Outcome.LOSE, (r("fold"),)))
    elif not qualifies:
        base = (r("dealer_not_qualified"),)
        declined_note = ("comparison declined; the dealer has no hand, so no comparison is made",) if declined else ()
        results.append(settle_odds(rnd, seat, "ante", Outcome.WIN, base + (r("ante_paid_unqualified"), ante_table.rule),
                                   line=ante_line, table_rule=ante_table.rule, notes=declined_note))
        results.append(settle_odds(rnd, seat, "bet", Outcome.RETURNED, base + (r("bet_returned"),)))
    elif declined:
        rules = (r("dealer_qualified"), r("declined"), r("player_loses"))
        results += [settle_odds(rnd, seat, w, Outcome.LOSE, rules) for w in ("ante", "bet")]
    elif hand.strength > dealer.strength:
        rules = (r("dealer_qualified"), r("player_wins"))
        line = best_line(bet_table, hand)
        assert line is not None  # "One Pair or Lower" covers every hand
        results.append(settle_odds(rnd, seat, "ante", Outcome.WIN, rules + (ante_table.rule,),
                                   line=ante_line, table_rule=ante_table.rule))
        results.append(settle_odds(rnd, seat, "bet", Outcome.WIN, rules + (bet_table.rule,),
                                   line=line, table_rule=bet_table.rule))
    elif hand.strength < dealer.strength:
        rules = (r("dealer_qualified"), r("player_loses"))
        results += [settle_odds(rnd, seat, w, Outcome.LOSE, rules) for w in ("ante", "bet")]
    else:
        rules = (r("dealer_qualified"), r("standoff"), r("standoff_same_ranks"))
        results += [settle_odds(rnd, seat, w, Outcome.PUSH, rules) for w in ("ante", "bet")]

    claim = None
    if "progressive" in seat.wagers:
        rules_p = [r("progressive") if qualifies else r("progressive_unqualified")]
        notes: list[str] = []
        if folded:
            rules_p.append(r("fold_keeps_progressive"))
        line_p = None
        if declined:
            rules_p.append(r("declined"))
            notes.append("comparison declined: deemed no winning progressive combination")
        else:
            line_p = best_line(game.progressive_table, hand)
        claim = Claim(seat.seat, seat.wagers["progressive"], line_p, rules_p, notes=notes)
    return results, hands, claim
