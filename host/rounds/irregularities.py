"""Irregularities: deck faults, exposed cards, a supervisor's confirmation, a round voided by hand.

Deck faults (5.1, 5.8; LIR 5.1-5.2) void the round; earlier rounds stand. Exposures: two or
more during the deal void the round (5.4; LIR 5.5), a single one is referred to the shift
manager (6.1). A supervisor confirms or refuses what a flag proposes (a reconstruction, a
manual deal's candidate placements, a referral).

Choices made where the rules are silent:

- "During the deal" (5.4; LIR 5.5) is while a dealing phase is open. Two declarations naming
  the same card (by place or shoe index) count once; declarations naming no card count apart.
- Any flag that waits for a person blocks settlement.
"""

from __future__ import annotations

from dataclasses import replace

from .counts import apply_placements
from .errors import CandidateError, ExposureMismatchError, RoundOperationError, WrongStateError
from .events import CardEvidence, DecisionKind, Event, ExposureRecorded, Irregularity, IrregularityKind
from .operations import DeckFault, DeckIrregularity, ExposureDeclared, SupervisorConfirmation, VoidRound
from .state import DEALING_STATUSES, Exposure, RoundState, RoundStatus


def deck_flag(rnd: RoundState, fault: DeckFault, detail: str, evidence: tuple[CardEvidence, ...], source: str) -> Irregularity:
    """A deck fault's flag: the round is void by the rule the game's document gives the fault."""
    rules = {
        DeckFault.FOREIGN: rnd.rules.foreign,
        DeckFault.DUPLICATE: rnd.rules.foreign,
        DeckFault.UNREAD: rnd.rules.unread,
        DeckFault.EXTRA: rnd.rules.extra_missing,
        DeckFault.MISSING: rnd.rules.extra_missing,
    }[fault]
    return Irregularity(
        0, IrregularityKind.DECK, rules, f"{fault.value}: {detail}; the round is void, earlier rounds stand",
        DecisionKind.VOID_ROUND, source, None, evidence, fault=fault.value,
        time_ms=evidence[0].time_ms if evidence else 0,
    )


def verify_deck_irregularity(rnd: RoundState, op: DeckIrregularity) -> None:
    """A deck fault the shoe reported (DECK_STATUS), naming a card of this round if any."""
    if op.fault not in tuple(DeckFault):
        raise RoundOperationError(f"unknown deck fault {op.fault!r}; expected one of {', '.join(DeckFault)}")
    if op.shoe_index is not None and op.shoe_index not in rnd.cards:
        raise RoundOperationError(f"shoe index {op.shoe_index} is not a card of round {rnd.round_id}")


def do_deck_irregularity(rnd: RoundState, op: DeckIrregularity, events: list[Event]) -> None:
    evidence = (rnd.card_evidence(op.shoe_index),) if op.shoe_index is not None else ()
    flag = deck_flag(rnd, DeckFault(op.fault), op.detail or "reported by the shoe's deck status", evidence, "shoe")
    rnd.add_flag(replace(flag, time_ms=op.time_ms), events)


def verify_exposure_declared(rnd: RoundState, op: ExposureDeclared) -> None:
    """An exposed card, by place or shoe index (which must agree when both are given)."""
    if rnd.status is RoundStatus.BETTING:
        raise WrongStateError("no card has been dealt; an exposure needs a card")
    if op.shoe_index is not None and op.shoe_index not in rnd.cards:
        raise RoundOperationError(f"shoe index {op.shoe_index} is not a card of round {rnd.round_id}")
    if op.place is not None and op.place not in rnd.placements.values():
        raise RoundOperationError(f"no card has been placed at {op.place.label()}")
    if op.place is not None and op.shoe_index is not None:
        at = rnd.placements.get(op.shoe_index)
        if at != op.place:
            where = at.label() if at is not None else "no place (a card not due)"
            raise ExposureMismatchError(
                f"exposure names shoe index {op.shoe_index} and {op.place.label()}, but shoe index "
                f"{op.shoe_index} is at {where}; declare the card by one of them"
            )


def do_exposure_declared(rnd: RoundState, op: ExposureDeclared, events: list[Event]) -> None:
    place = op.place
    if place is None and op.shoe_index is not None:
        place = rnd.placements.get(op.shoe_index)
    index = op.shoe_index
    if index is None and place is not None:
        index = next((k for k, p in rnd.placements.items() if p == place), None)
    public = rnd.procedure is not None and place is not None and place in rnd.procedure.public_places
    same = index is not None and any(e.shoe_index == index and e.counted for e in rnd.exposures)
    during = rnd.status in DEALING_STATUSES
    counted = not public and not same
    exposure = Exposure(op.source.value, place, index, during, counted, op.time_ms)
    rnd.exposures.append(exposure)
    events.append(ExposureRecorded(op.source.value, place, index, during, counted))
    if not counted:
        return
    evidence = (rnd.card_evidence(index),) if index is not None else ()
    during_count = sum(1 for e in rnd.exposures if e.counted and e.during_deal)
    if during and during_count >= 2:
        # 5.4 (LIR 5.5): two or more exposed during the deal void the round; an earlier single
        # exposure's referral is decided by the same rule, and its record says so.
        void_id = len(rnd.flags) + 1
        rule_text = ", ".join(rnd.rules.exposure)
        for f in rnd.flags:
            if f.kind is IrregularityKind.EXPOSURE and f.open:
                superseded = (
                    f"a single card exposed during the deal, superseded by #{void_id}: a further exposure "
                    f"during the deal voids the round ({rule_text})"
                )
                rnd.update_flag(replace(f, decision=DecisionKind.VOID_ROUND, rules=rnd.rules.exposure, detail=superseded,
                                          fallback=None, resolved_by="host"), events, resolved=True)
        # The decision rests on every card exposed during the deal, so all are its evidence.
        indices = list(dict.fromkeys(e.shoe_index for e in rnd.exposures if e.counted and e.during_deal and e.shoe_index is not None))
        all_evidence = tuple(rnd.card_evidence(k) for k in indices)
        unnamed = sum(1 for e in rnd.exposures if e.counted and e.during_deal and e.shoe_index is None)
        detail = f"{during_count} cards exposed during the deal (last declared by {op.source.value})"
        if unnamed:
            detail += f"; {unnamed} declaration(s) named no card"
        rnd.add_flag(
            Irregularity(
                0, IrregularityKind.EXPOSURES_DURING_DEAL, rnd.rules.exposure, detail + "; the round is void",
                DecisionKind.VOID_ROUND, "table" if op.source.value == "table" else "shoe", None, all_evidence, time_ms=op.time_ms,
            ),
            events,
        )
        return
    rules = rnd.rules.referral or rnd.rules.exposure
    detail = "a single card exposed " + ("during the deal" if during else "after the deal") + "; referred to the shift manager"
    if not rnd.rules.referral:
        detail += " (this document has no general provision; its exposure rule covers two or more)"
    rnd.add_flag(
        Irregularity(0, IrregularityKind.EXPOSURE, rules, detail, DecisionKind.REFERRED,
                     "table" if op.source.value == "table" else "shoe", None, evidence, fallback=DecisionKind.VOID_ROUND, time_ms=op.time_ms),
        events,
    )


def verify_supervisor_confirmation(rnd: RoundState, op: SupervisorConfirmation) -> None:
    """A supervisor confirms or refuses what a flag proposes (or lets a referred round stand)."""
    flag = rnd.get_flag(op.flag)
    if flag.decision not in (DecisionKind.RECONSTRUCTION_PROPOSED, DecisionKind.REFERRED, DecisionKind.PLACEMENT_PROPOSED):
        raise WrongStateError(f"irregularity {op.flag} is not waiting for a supervisor ({flag.decision.value})")
    if not op.supervisor:
        raise RoundOperationError("a confirmation must name the supervisor")
    if op.candidate is not None:
        if not flag.candidates:
            raise CandidateError(f"irregularity {op.flag} offers no candidate placements; confirm it without one")
        if isinstance(op.candidate, bool) or not isinstance(op.candidate, int) or not 1 <= op.candidate <= len(flag.candidates):
            raise CandidateError(f"candidate must be 1..{len(flag.candidates)} for irregularity {op.flag}, got {op.candidate!r}")
    elif op.confirmed and len(flag.candidates) > 1:
        raise CandidateError(
            f"irregularity {op.flag} offers {len(flag.candidates)} candidate placements; name the one confirmed "
            f"(candidate 1..{len(flag.candidates)}) or refuse them all"
        )


def do_supervisor_confirmation(rnd: RoundState, op: SupervisorConfirmation, events: list[Event]) -> None:
    flag = rnd.flags[op.flag - 1]
    if flag.decision is DecisionKind.PLACEMENT_PROPOSED:
        if op.confirmed:
            cand = flag.candidates[(op.candidate or 1) - 1]
            apply_placements(rnd, dict(cand.placements), flag.id, events)
            labels = ", ".join(f"seat {n}" for n in flag.void_seats)
            new = replace(flag, decision=DecisionKind.VOID_SEAT, rules=rnd.rules.seat_count, resolved_by=op.supervisor,
                          detail=(f"manual deal, candidate {cand.number} confirmed by {op.supervisor} ({cand.description}); "
                                  f"wrong number of cards at {labels}: that hand is void and its wagers returned"))
        else:
            new = replace(flag, decision=DecisionKind.VOID_ROUND, rules=rnd.rules.reconstruction, resolved_by=op.supervisor,
                          detail=(f"manual deal: no placement of the cards could be established (refused by {op.supervisor}); "
                                  "the deal cannot be shown, the round is void"))
        rnd.update_flag(new, events, resolved=True)
        rnd.apply_decision(new, events)
        return
    if flag.decision is DecisionKind.RECONSTRUCTION_PROPOSED:
        if op.confirmed:
            apply_placements(rnd, dict(flag.proposal), flag.id, events)
            new = replace(flag, decision=DecisionKind.RECONSTRUCTED, void_seats=(), resolved_by=op.supervisor,
                          detail=f"hands moved as proposed; confirmed by {op.supervisor}")
        else:
            fallback = flag.fallback or DecisionKind.VOID_ROUND
            new = replace(flag, decision=fallback, resolved_by=op.supervisor,
                          detail=f"reconstruction refused by {op.supervisor}; {fallback.value}")
    else:
        if op.confirmed:
            new = replace(flag, decision=DecisionKind.ACKNOWLEDGED, resolved_by=op.supervisor,
                          detail=flag.detail + f"; the round stands ({op.supervisor})")
        else:
            new = replace(flag, decision=DecisionKind.VOID_ROUND, resolved_by=op.supervisor,
                          detail=flag.detail + f"; voided by {op.supervisor}")
    rnd.update_flag(new, events, resolved=True)
    rnd.apply_decision(new, events)


def verify_void_round(rnd: RoundState, op: VoidRound) -> None:
    """A supervisor voids the round: the rule and who decided it are required."""
    if not op.rule or not op.by:
        raise RoundOperationError("voiding a round needs the rule and who decided it")


def do_void_round(rnd: RoundState, op: VoidRound, events: list[Event]) -> None:
    for f in rnd.flags:
        if f.open:
            rnd.update_flag(replace(f, decision=DecisionKind.VOID_ROUND, resolved_by=op.by), events, resolved=True)
    flag = Irregularity(
        0, IrregularityKind.NOT_COVERED, (op.rule,), f"{op.reason} (voided by {op.by})", DecisionKind.VOID_ROUND,
        "table", None, resolved_by=op.by, time_ms=op.time_ms,
    )
    rnd.add_flag(flag, events)
