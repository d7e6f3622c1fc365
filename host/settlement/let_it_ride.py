"""Megalink Let It Ride (version 2).

Three equal wagers "1", "2" and "$" (3.4); the player may take back "1" before the first
community card (3.8-3.10) and "2" before the second (3.12-3.14); "$" always plays (3.16).
Every wager still up is paid on the player's three cards plus the two community cards
when they make a pair of tens or better (3.18, 4.1.1), and lost otherwise (3.3). There is
no dealer's hand. The progressive pays on the same five cards (4.2), plus the Magic Card
(4.3, 4.3.1) and the Lucky Player (4.4) at 5 to 1 (4.5).
"""

from __future__ import annotations

from cardshoe.cards import card_text
from cardshoe.games import best_line
from cardshoe.poker import evaluate5

from .common import settle_odds, under_minimum_returned
from .jackpot import Claim, Extra
from .result import HandShown, Outcome, WagerResult
from .round import Round, Seat

__all__ = ["settle_seat"]


def settle_seat(rnd: Round, seat: Seat) -> tuple[list[WagerResult], dict[str, HandShown], Claim | None]:
    """Settle one seat's 1, 2 and $; return its progressive claim for later."""
    game = rnd.game
    r = game.rule
    hand = evaluate5(seat.cards + rnd.community)
    hands = {"player": HandShown(hand.name, hand.cards)}
    table = game.table("hand")
    line = best_line(table, hand)
    results: list[WagerResult] = []
    for wager in ("one", "two", "dollar"):
        if wager not in seat.wagers:
            continue
        rules: tuple[str, ...] = ()
        if wager in game.pull_backs:
            choice = seat.decisions.get(wager)
            if choice is None and seat.absent:
                choice = "ride"
                rules += (r("absent"),)
            if choice == "withdraw":
                results.append(settle_odds(rnd, seat, wager, Outcome.RETURNED, (game.pull_backs[wager],)))
                continue
            rules += (r("ride_one" if wager == "one" else "ride_two"),)
        else:
            rules += (r("dollar_stays"),)
        early = under_minimum_returned(rnd, seat, wager)
        if early is not None:
            results.append(early)
        elif line is None:
            results.append(settle_odds(rnd, seat, wager, Outcome.LOSE, rules + (r("objective"), r("winning_hand"))))
        else:
            results.append(
                settle_odds(rnd, seat, wager, Outcome.WIN, rules + (r("winning_hand"), r("paid"), table.rule),
                            line=line, table_rule=table.rule)
            )

    claim = None
    if "progressive" in seat.wagers:
        jackpot = rnd.jackpot
        assert jackpot is not None  # parse_round requires it with a progressive in action
        stake = seat.wagers["progressive"]
        prog_line = best_line(game.progressive_table, hand)
        claim = Claim(seat.seat, stake, prog_line, [r("progressive"), r("progressive_qualifies")])
        magic = game.table("magic_card").lines[0]
        lucky = game.table("lucky_player").lines[0]
        assert magic.odds is not None and lucky.odds is not None
        if jackpot.magic_card is not None:
            if jackpot.magic_card in seat.cards:
                claim.extras.append(Extra(f"{magic.label} {card_text(jackpot.magic_card)}", magic.pays_text,
                                          magic.odds * stake, r("magic_card"), True))
            elif jackpot.magic_card in rnd.community:
                claim.extras.append(Extra(f"{magic.label} {card_text(jackpot.magic_card)} (community)",
                                          magic.pays_text, magic.odds * stake, r("magic_card_community"), True))
        if jackpot.lucky_player == seat.seat:
            claim.extras.append(Extra(lucky.label, lucky.pays_text, lucky.odds * stake, r("lucky_player"), True))
        if claim.extras:
            claim.rules.append(r("magic_lucky_table"))
    return results, hands, claim
