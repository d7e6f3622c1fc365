"""Counts: a count flag, the counts people report, and what they decide (5.2, 5.3, 5.7, 5.7.1).

A count point that finds too few cards, and any card drawn when none is due, opens one count
flag per phase (:func:`count_flag`); a person then reports which position holds the wrong
count (``HandCountReported``). Once the counts account for every card, the deal is laid out
as it physically lies: a wrong count at the dealer or community voids the round, at a seat
voids that hand (or the round, where the document says so), and a deal that moving complete
hands rebuilds is proposed to a supervisor (:mod:`.irregularities` takes the confirmation).

Choices made where the rules are silent:

- Manual device (3.8), one seat one card short or long: the shoe's order cannot show which
  pass slipped, so the flag lists the candidate placements and a supervisor confirms one (5.7
  voids the seat) or refuses them (5.2, void); a manual deal no list can settle is void.
- A recorded decision means a player has handled their cards, so 5.2 (LIR 5.3) no longer
  allows moving hands in the deal phase.
"""

from __future__ import annotations

from dataclasses import replace

from .errors import BadAmountError, BadSeatError, DecisionError, RoundOperationError, UnknownFlagError, WrongStateError
from .events import (
    CardEvidence,
    CountReport,
    DecisionKind,
    Event,
    HandsRebuilt,
    Irregularity,
    IrregularityKind,
    PlacementCandidate,
)
from .layout import UnitLayout, layout_placements, physical_layout, reconstruction, slip_passes
from .operations import HandCountReported, WagerWithdrawn
from .places import Place, PlaceKind, Position
from .procedures import Device, Phase
from .state import RoundState


def count_flag(rnd: RoundState, phase: int, kind: IrregularityKind, evidence: tuple[CardEvidence, ...], time_ms: int, events: list[Event]) -> None:
    """Open the phase's count flag, or add ``evidence`` to the one open (and try the counts again)."""
    assert rnd.procedure is not None
    state = rnd.phase_states[phase]
    ph = rnd.procedure.phases[phase]
    expected, dealt = len(ph.places), len(state.indices)
    detail = (
        f"phase {ph.name}: {dealt} card(s) dealt, the procedure deals {expected}; "
        "waiting for the table to report which position holds the wrong count"
    )
    if state.flag is not None and rnd.flags[state.flag - 1].decision in (
        DecisionKind.PENDING, DecisionKind.RECONSTRUCTION_PROPOSED, DecisionKind.PLACEMENT_PROPOSED,
    ):
        old = rnd.flags[state.flag - 1]
        rnd.update_flag(replace(old, detail=detail, evidence=old.evidence + evidence), events)
        _try_resolve_count(rnd, old.id, events)
        return
    rules = rnd.rules.reconstruction
    # A later count problem in the same phase starts from what people already counted.
    earlier = rnd.flags[state.flag - 1].reports if state.flag is not None else ()
    flag = rnd.add_flag(
        Irregularity(
            0, kind, rules, detail, DecisionKind.PENDING, "shoe" if kind is IrregularityKind.CARD_NOT_DUE else "host",
            ph.name, evidence, reports=earlier, time_ms=time_ms,
        ),
        events,
    )
    state.flag = flag.id


def _try_resolve_count(rnd: RoundState, flag_id: int, events: list[Event]) -> None:
    """Decide a count flag once the reported counts account for every card of its phase."""
    flag = rnd.flags[flag_id - 1]
    if not flag.reports or rnd.procedure is None:
        return
    i = next(k for k, ph in enumerate(rnd.procedure.phases) if ph.name == flag.phase)
    phase, state = rnd.procedure.phases[i], rnd.phase_states[i]
    counts = {r.position: r.count for r in flag.reports}
    layout = physical_layout(phase, counts)
    total = sum(u.count for u in layout)
    if total != len(state.indices):
        # Back to the procedure's own placement until the counts account for every card.
        nominal = {idx: phase.places[k] for k, idx in enumerate(state.indices) if k < len(phase.places)}
        apply_placements(rnd, nominal, flag_id, events)
        rnd.placements = {k: p for k, p in rnd.placements.items() if k in nominal or k not in state.indices}
        rnd.not_due = sorted(set(rnd.not_due) | {idx for idx in state.indices if idx not in nominal})
        rnd.update_flag(replace(flag, decision=DecisionKind.PENDING, proposal=(), fallback=None, wrong=(), candidates=(), detail=(
            f"phase {phase.name}: {len(state.indices)} card(s) dealt; the counts reported so far account "
            f"for {total}; waiting for further counts"
        )), events)
        return
    physical = {state.indices[k]: place for k, place in layout_placements(layout).items()}
    # 5.2 (LIR 5.3) allows moving hands only while no player has handled their cards; a
    # recorded decision means someone has.
    handled = phase.name == "deal" and any(rnd.decisions.values())
    proposal_by_order = None if handled else reconstruction(phase, layout, rnd.procedure.hand_size)
    wrong = [u for u in layout if not u.correct]
    wrong_kinds = {u.position.kind for u in wrong}
    rules: tuple[str, ...]
    seats: tuple[int, ...] = ()
    if not wrong:
        decision, rules = DecisionKind.ACKNOWLEDGED, ()
        detail = f"phase {phase.name}: the reported counts match the procedure; the count point came early"
    elif PlaceKind.DEALER in wrong_kinds or PlaceKind.COMMUNITY in wrong_kinds:
        decision = DecisionKind.VOID_ROUND
        rules = rnd.rules.reconstruction + (rnd.rules.dealer_count if PlaceKind.DEALER in wrong_kinds else rnd.rules.community_count)
        detail = "wrong number of cards to the " + " and ".join(sorted(k.value for k in wrong_kinds - {PlaceKind.SEAT})) + "; the round is void"
    elif any(u.nominal is None and u.position.kind is PlaceKind.SEAT for u in wrong):
        decision, rules = DecisionKind.VOID_ROUND, rnd.rules.reconstruction
        detail = "cards dealt to a position without a wager and the deal cannot be rebuilt; the round is void"
    elif PlaceKind.SEAT in wrong_kinds:
        seats = tuple(u.position.seat for u in wrong if u.position.kind is PlaceKind.SEAT)
        if rnd.rules.seat_count_voids_round:
            decision, rules = DecisionKind.VOID_ROUND, rnd.rules.seat_count
            detail = f"wrong number of cards at seat(s) {', '.join(map(str, seats))}; the deal cannot be rebuilt, the round is void"
            seats = ()
        else:
            decision, rules = DecisionKind.VOID_SEAT, rnd.rules.seat_count
            detail = f"wrong number of cards at seat(s) {', '.join(map(str, seats))}; that hand is void and its wagers returned"
    else:  # only cards straight to the discard: every hand is right
        decision, rules = DecisionKind.REFERRED, rnd.rules.referral or rnd.rules.reconstruction
        detail = "card(s) drawn in error went to the discard; every hand holds its cards; referred to the shift manager"
    flag = replace(flag, wrong=tuple(u.position for u in wrong), candidates=())
    if proposal_by_order is None and decision is DecisionKind.VOID_SEAT and rnd.device is Device.MANUAL:
        # 3.8: one card per position per pass. The shoe's order cannot show in which pass a
        # position was missed (or doubled), and every card after the slip lies elsewhere
        # depending on it, so the other hands are not known: a supervisor decides.
        passes = slip_passes(phase, wrong[0].position, wrong[0].count) if len(wrong) == 1 else None
        if passes is not None:
            cands = slip_candidates(phase, state.indices, counts, wrong[0].position, wrong[0].count, passes)
            label = wrong[0].position.label()
            how = "missed in" if wrong[0].count < len(wrong[0].nominal.places if wrong[0].nominal else ()) else "given an extra card in"
            if len(cands) == 1:
                ask = (f"the other hands are the same whichever pass; a supervisor confirms the void of {label}'s hand "
                       f"({', '.join(rnd.rules.seat_count)})")
            else:
                ask = (f"{len(cands)} candidate placements, by the pass {label} was {how}; a supervisor confirms the one "
                       f"seen at the table (then {label}'s hand is void, {', '.join(rnd.rules.seat_count)}) or refuses "
                       f"them (the round is void, {', '.join(rnd.rules.reconstruction)})")
            new = replace(
                flag, decision=DecisionKind.PLACEMENT_PROPOSED, rules=rnd.rules.seat_count + rnd.rules.reconstruction,
                detail=(f"manual deal: {label} holds {wrong[0].count} card(s), the procedure deals "
                        f"{len(wrong[0].nominal.places) if wrong[0].nominal else 0}; the shoe's order cannot show in which "
                        f"pass, so where the other hands' cards lie is not known: {ask}"),
                proposal=(), fallback=DecisionKind.VOID_ROUND, void_seats=seats, candidates=cands, resolved_by=None,
            )
            rnd.update_flag(new, events)
            return
        decision, rules = DecisionKind.VOID_ROUND, rnd.rules.seat_count + rnd.rules.reconstruction
        detail = (f"manual deal: wrong number of cards at seat(s) {', '.join(map(str, seats))}; the shoe's order cannot "
                  "show where the other hands' cards lie, so the deal cannot be shown; the round is void")
        seats = ()
    if proposal_by_order is not None:
        proposal = tuple(sorted((state.indices[k], place) for k, place in proposal_by_order.items()))
        moved = ", ".join(f"{_position_of(physical, idx)}->{p.label()}" for idx, p in proposal if physical[idx] != p)
        new = replace(
            flag, decision=DecisionKind.RECONSTRUCTION_PROPOSED, rules=rnd.rules.reconstruction,
            detail=f"the deal can be rebuilt by moving complete hands ({moved}); waiting for a supervisor; otherwise: {detail}",
            proposal=proposal, fallback=decision, void_seats=seats,
        )
        apply_placements(rnd, physical, flag_id, events)
        rnd.update_flag(new, events)
        return
    apply_placements(rnd, physical, flag_id, events)
    new = replace(flag, decision=decision, rules=rules or flag.rules, detail=detail, void_seats=seats,
                  fallback=DecisionKind.VOID_ROUND if decision is DecisionKind.REFERRED else None,
                  resolved_by=None if decision is DecisionKind.REFERRED else "host")
    rnd.update_flag(new, events, resolved=not new.open)
    rnd.apply_decision(new, events)


def slip_candidates(
    phase: Phase, indices: list[int], counts: dict[Position, int], position: Position, count: int,
    passes: tuple[int, ...],
) -> tuple[PlacementCandidate, ...]:
    """The placements of a manual phase for each pass in which ``position`` may have been
    missed or doubled; one candidate when the other hands are the same whichever pass."""
    found: list[tuple[int, dict[int, Place], list[UnitLayout]]] = []
    for p in passes:
        layout = physical_layout(phase, counts, (position, p))
        placed = {indices[k]: place for k, place in layout_placements(layout).items()}
        if all(placed != other for _, other, _ in found):
            found.append((p, placed, layout))

    def others(placed: dict[int, Place]) -> dict[int, Place]:
        return {k: pl for k, pl in placed.items() if pl.position != position}

    if all(others(placed) == others(found[0][1]) for _, placed, _ in found):
        found = [found[-1]]
    size = next(len(u.places) for u in phase.units if u.position == position)
    short = count < size
    out: list[PlacementCandidate] = []
    for number, (p, placed, layout) in enumerate(found, start=1):
        hands = tuple(
            (u.position, tuple(indices[k] for k in u.order)) for u in layout if u.count
        )
        if short:
            what = f"{position.label()} missed in pass {p}"
        elif p > size:
            what = f"{position.label()} given an extra card after the last pass"
        else:
            what = f"{position.label()} given two cards in pass {p}"
        shown = "; ".join(f"{pos.label()} #{', #'.join(map(str, idx))}" for pos, idx in hands)
        out.append(PlacementCandidate(number, position, p, tuple(sorted(placed.items())), hands, f"{what}: {shown}"))
    return tuple(out)


def _position_of(placements: dict[int, Place], index: int) -> str:
    return placements[index].label()


def apply_placements(rnd: RoundState, placements: dict[int, Place], flag_id: int, events: list[Event]) -> None:
    """Move cards to ``placements`` (flag ``flag_id`` decided it), announcing what changed."""
    changed = {k: p for k, p in placements.items() if rnd.placements.get(k) != p}
    if not changed:
        return
    rnd.placements.update(placements)
    rnd.not_due = [k for k in rnd.not_due if k not in placements]
    events.append(HandsRebuilt(flag_id, tuple(sorted(changed.items()))))


def verify_hand_count_reported(rnd: RoundState, op: HandCountReported) -> None:
    """A person's count of one position's cards, for an open count flag."""
    flag = rnd.get_flag(op.flag)
    if flag.kind not in (IrregularityKind.CARD_NOT_DUE, IrregularityKind.TOO_FEW_CARDS) or flag.phase is None:
        raise UnknownFlagError(f"irregularity {op.flag} is not about a card count")
    if flag.decision not in (DecisionKind.PENDING, DecisionKind.RECONSTRUCTION_PROPOSED, DecisionKind.PLACEMENT_PROPOSED):
        raise WrongStateError(f"irregularity {op.flag} is already decided ({flag.decision.value})")
    if not isinstance(op.count, int) or isinstance(op.count, bool) or not 0 <= op.count <= 52:
        raise BadAmountError(f"count must be 0..52, got {op.count!r}")
    if not op.reporter:
        raise RoundOperationError("a count report must name the person who counted")
    assert rnd.procedure is not None
    phase = next(ph for ph in rnd.procedure.phases if ph.name == flag.phase)
    pos = op.position
    kinds = {u.position.kind for u in phase.units}
    if pos.kind is PlaceKind.SEAT:
        rnd.check_seat(pos.seat)
        if PlaceKind.SEAT not in kinds:
            raise BadSeatError(f"phase {phase.name} deals no seat; {pos.label()} cannot hold its cards")
    elif pos.kind not in kinds and pos.kind is not PlaceKind.DISCARD:
        raise BadSeatError(f"phase {phase.name} deals nothing to the {pos.kind.value}")


def do_hand_count_reported(rnd: RoundState, op: HandCountReported, events: list[Event]) -> None:
    flag = rnd.flags[op.flag - 1]
    reports = tuple(r for r in flag.reports if r.position != op.position) + (
        CountReport(op.position, op.count, op.reporter, op.time_ms),
    )
    rnd.update_flag(replace(flag, reports=reports), events)
    _try_resolve_count(rnd, flag.id, events)


def verify_wager_withdrawn(rnd: RoundState, op: WagerWithdrawn) -> None:
    """5.7.1: a correct hand withdraws after another hand was voided for its count."""
    flag = rnd.get_flag(op.flag)
    if flag.decision is not DecisionKind.VOID_SEAT:
        raise WrongStateError(f"irregularity {op.flag} voided no hand for a wrong count; 5.7.1 does not apply")
    if not op.permitted_by:
        raise RoundOperationError("a withdrawal under 5.7.1 must name who permitted it")
    rnd.seat_in_play(op.seat)
    if rnd.decisions.get(op.seat):
        raise DecisionError(f"seat {op.seat} has already decided; the wager is in play")


def do_wager_withdrawn(rnd: RoundState, op: WagerWithdrawn, events: list[Event]) -> None:
    flag = rnd.flags[op.flag - 1]
    rnd.update_flag(replace(flag, withdrawn_seats=flag.withdrawn_seats + (op.seat,)), events, resolved=True)
    reason = f"withdrew after another hand's wrong card count (#{flag.id}), permitted by {op.permitted_by}"
    rnd.mark_seat_void(op.seat, tuple(f"{r}.1" for r in rnd.rules.seat_count), reason, flag.id, events)
    rnd.maybe_open_dealer_phase(events)
