"""A shoe that lost its power while the round's cards were being dealt (issue 9, item 7).

The shoe logs a card when its exit has finished; a card that was leaving as the power went
is on the table but in no record, and after the reboot the shoe's HELLO count, the host's
count and the cards in front of the players can disagree. The host cannot see which card
it was, so it never guesses: the round carries a flag under the power-failure rule and is
referred to the Gaming Shift Manager, who checks the cards on the table against the
round's record and lets the round stand (confirmed) or voids it (refused).

Rules: 5.16 (TCP, Megalink TCP, Xtreme, Singapore Stud: "in the event of a power
failure"). Let It Ride's document has no power-failure rule and no general provision 6.1;
as the settlement does (docs/rule-readings.md, reading 35) the flag cites Megalink Three
Card Poker 5.16 by analogy, for the Gaming Shift Manager to confirm.

Choices made where the rules and the issue are silent (docs/rule-readings.md, reading 51):

- Only a reboot while a dealing phase is open is flagged (DEALING, or DEALER for Xtreme
  method B): outside them no card is leaving the shoe. A flag per reboot.
- The flag is referred (it blocks settlement until a supervisor answers), whether or not
  the counts disagree: a card can be lost with every count agreeing (the shoe never logged
  it and the host never received it), which only the cards on the table can show.
"""

from __future__ import annotations

from .errors import WrongStateError
from .events import DecisionKind, Event, Irregularity, IrregularityKind
from .operations import ShoePowerFailure
from .procedures import LET_IT_RIDE
from .state import DEALING_STATUSES, RoundState

#: Let It Ride has no power-failure rule: Megalink Three Card Poker's, by analogy (reading 35).
LIR_POWER_FAILURE = "Megalink Three Card Poker 5.16 (by analogy)"


def power_failure_rules(game: str) -> tuple[str, ...]:
    """The rule a power failure falls under in ``game``'s document."""
    return (LIR_POWER_FAILURE,) if game == LET_IT_RIDE else ("5.16",)


def verify_shoe_power_failure(rnd: RoundState, op: ShoePowerFailure) -> None:
    """Only while a dealing phase is open: the cards may be leaving the shoe."""
    if rnd.status not in DEALING_STATUSES:
        raise WrongStateError(f"no cards are being dealt ({rnd.status.value}); a shoe reboot does not touch this round")


def do_shoe_power_failure(rnd: RoundState, op: ShoePowerFailure, events: list[Event]) -> None:
    held = len(rnd.cards)
    agree = "agree" if op.shoe_dealt == op.host_count else "DISAGREE"
    detail = (f"shoe {op.shoe} rebooted mid-deal (boot {op.boot}, reset cause {op.reset_cause}): the shoe's log holds "
              f"{op.shoe_dealt} cards of its session and the host {op.host_count} (counts {agree}), {held} in this round; "
              "a card leaving as the power went may be on the table but not recorded: check the cards on the table "
              "against the round (confirm: the round stands; refuse: the round is void)")
    rnd.add_flag(Irregularity(0, IrregularityKind.POWER_FAILURE, power_failure_rules(rnd.game), detail,
                              DecisionKind.REFERRED, "shoe", time_ms=op.time_ms), events)
