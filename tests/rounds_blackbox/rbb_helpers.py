"""Black-box helpers for cardshoe.rounds: the dealing order as derived from the rule texts.

Written from the rule documents and the public API description only (host/rounds/__init__.py
docstring, docs/round-format.md, docs/rule-readings.md); nothing here is copied from the
implementation. ``expected_order`` is the tester's own derivation of each game's dealing
procedure, so a test comparing it with ``Round.placements`` can disagree with the code.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardshoe.rounds import (
    Choice,
    DealComplete,
    Decision,
    Device,
    NoMoreBets,
    OpenRound,
    PlaceKind,
    PlaceWager,
    Round,
    ShoeCard,
    XtremeMethod,
)

TCP = "three-card-poker"
MTCP = "megalink-three-card-poker"
XT = "megalink-three-card-poker-xtreme"
LIR = "megalink-let-it-ride"
SSP = "megalink-singapore-stud-poker"
GAMES = (TCP, MTCP, XT, LIR, SSP)

# One active seat (in the middle), three with gaps, and a full table.
SEAT_SETS = ((4,), (2, 5, 7), (1, 2, 3, 4, 5, 6, 7))

S, D, C, B, X = PlaceKind.SEAT, PlaceKind.DEALER, PlaceKind.COMMUNITY, PlaceKind.BURN, PlaceKind.SECURITY

Slot = tuple[PlaceKind, int, int]  # (kind, seat, number); seat 0 off the seats


@dataclass(frozen=True)
class Expected:
    """The tester's derivation: shoe order before the decisions, and after (Xtreme B)."""

    deal: tuple[Slot, ...]
    after_decisions: tuple[Slot, ...] = ()
    public: frozenset[Slot] = frozenset()


def hand_size(game: str) -> int:
    # SSP 1.1.5 / 3.7: five-card hands; every other game deals three (TCP 3.7, LIR 3.6).
    return 5 if game == SSP else 3


def _packets(seats: tuple[int, ...], n: int) -> list[Slot]:
    # "n cards to each playing position containing a wager", from the dealer's left
    # clockwise: seat 1 is first base (round-format.md SEAT), so ascending seat order.
    return [(S, s, k) for s in sorted(seats) for k in range(1, n + 1)]


def _dealer(n: int) -> list[Slot]:
    return [(D, 0, k) for k in range(1, n + 1)]


def _passes(seats: tuple[int, ...], n: int, with_dealer: bool) -> list[Slot]:
    # Manual device (TCP/MTCP/SSP 3.8, XT 3.8): one card to each wagered position and one to
    # the dealer, repeated until everyone has n cards: the dealer closes every pass.
    out: list[Slot] = []
    for k in range(1, n + 1):
        out += [(S, s, k) for s in sorted(seats)]
        if with_dealer:
            out.append((D, 0, k))
    return out


# Megalink community unit on the automated device (MTCP 3.7, XT 3.7.1.1/3.7.2.1/3.7.3.1):
# three cards are dealt to the community area and "the third card (top card)" is burned, so
# the third card out of the shoe is the burn; community 1 and 2 are the first two out.
_MEGALINK_COMMUNITY = [(C, 0, 1), (C, 0, 2), (B, 0, 1)]
# Manual device (MTCP 3.8, XT 3.8): "Two Community cards shall then be dealt": no burn.
_MANUAL_COMMUNITY = [(C, 0, 1), (C, 0, 2)]


def expected_order(game: str, device: str, seats: tuple[int, ...], method: str | None = None) -> Expected:
    """Derive the shoe order of one round from the rule text (see the comments)."""
    n = hand_size(game)
    if game == TCP:
        if device == "automated":  # TCP 3.7: packets to the seats, then the dealer's three.
            return Expected(tuple(_packets(seats, 3) + _dealer(3)))
        return Expected(tuple(_passes(seats, 3, True)))  # TCP 3.8
    if game == MTCP:
        if device == "automated":  # MTCP 3.7: seats, dealer, community 1, 2 + burn.
            return Expected(tuple(_packets(seats, 3) + _dealer(3) + _MEGALINK_COMMUNITY))
        return Expected(tuple(_passes(seats, 3, True) + _MANUAL_COMMUNITY))  # MTCP 3.8
    if game == XT:
        if device == "manual":  # XT 3.8: as MTCP 3.8.
            return Expected(tuple(_passes(seats, 3, True) + _MANUAL_COMMUNITY))
        if method == "A":  # XT 3.7.1.1: identical to MTCP 3.7.
            return Expected(tuple(_packets(seats, 3) + _dealer(3) + _MEGALINK_COMMUNITY))
        if method == "B":
            # XT 3.7.2.1: seats, then the community unit (top card burned); the dealer's
            # three only "after all the Players have made a decision".
            return Expected(tuple(_packets(seats, 3) + _MEGALINK_COMMUNITY), tuple(_dealer(3)))
        if method == "C":
            # XT 3.7.3.1: the dealer's three "with an additional security card at the bottom"
            # come first. The first card dealt onto a pile lies at its bottom, so the security
            # card is the first card out of the shoe, then dealer 1-3, then the seats, then
            # the community unit with its burn.
            return Expected(tuple([(X, 0, 1)] + _dealer(3) + _packets(seats, 3) + _MEGALINK_COMMUNITY))
        raise ValueError(method)
    if game == LIR:
        # LIR 3.6-3.7: three cards to each betting area, then two community cards; no
        # dealer's hand and no burn. 3.6 is the document's only dealing rule (no manual 3.8),
        # so it applies on either device (issue 12 item 1).
        return Expected(tuple(_packets(seats, 3) + _MANUAL_COMMUNITY))
    if game == SSP:
        # SSP 3.7 (automated: five to each seat, five to the dealer, "the Dealer's last card
        # (the bottom card) shall be exposed") and 3.8 (manual: passes, "the Dealer's last
        # card shall be exposed"): either way dealer card 5 is public.
        order = _packets(seats, n) + _dealer(n) if device == "automated" else _passes(seats, n, True)
        return Expected(tuple(order), public=frozenset({(D, 0, 5)}))
    raise ValueError(game)


def combos() -> list[tuple[str, str, str | None]]:
    """Every (game, device, method) the rules define."""
    out: list[tuple[str, str, str | None]] = []
    for g in GAMES:
        if g == XT:
            out += [(g, "automated", m) for m in ("A", "B", "C")]
        else:
            out.append((g, "automated", None))
        out.append((g, "manual", None))
    return out


def code_for(index: int) -> int:
    # A fixed permutation of the deck (5 is prime to 52), so every card differs.
    return (index * 5 + 3) % 52


def base_wagers(game: str) -> dict[str, int]:
    if game == LIR:
        return {"one": 2500, "two": 2500, "dollar": 2500}  # LIR 3.4: three equal wagers
    return {"ante": 2500}


def open_round(game: str, device: str, method: str | None = None, rid: str = "R1") -> Round:
    return Round.open(
        OpenRound(
            round_id=rid,
            game=game,
            device=Device(device),
            method=XtremeMethod(method) if method else None,
            time_ms=1,
        )
    )


def bet(r: Round, game: str, seats: tuple[int, ...]) -> None:
    for s in seats:
        for w, a in base_wagers(game).items():
            r.do(PlaceWager(seat=s, wager=w, amount=a, time_ms=2))


_AUTO = -1


def card(index: int, code: int | None = _AUTO, **kw: object) -> ShoeCard:
    """The shoe's CARD frame for ``index``; ``code=None`` is an UNREAD frame."""
    return ShoeCard(
        shoe_no=1,
        index=index,
        code=code_for(index) if code == _AUTO else code,
        reader_id=f"{index:08x}",
        shoe_ms=index * 100,
        time_ms=1000 + index,
        **kw,  # type: ignore[arg-type]
    )


def deal(r: Round, first: int, count: int) -> list:  # type: ignore[type-arg]
    events = []
    for i in range(first, first + count):
        events += list(r.do(card(i)))
    return events


def decide_all(r: Round, game: str, seats: tuple[int, ...]) -> None:
    """Every seat keeps its hand in play (the decisions the rules give each game)."""
    for s in sorted(seats):
        if game == LIR:
            r.do(Decision(seat=s, choice=Choice.RIDE_1))
        elif game == SSP:
            r.do(Decision(seat=s, choice=Choice.BET))
        else:
            r.do(Decision(seat=s, choice=Choice.PLAY))
    if game == LIR:
        for s in sorted(seats):
            r.do(Decision(seat=s, choice=Choice.RIDE_2))


def dealt_round(game: str, device: str, seats: tuple[int, ...], method: str | None = None) -> Round:
    """A round with bets closed and the initial deal out of the shoe, deal complete pressed."""
    r = open_round(game, device, method)
    bet(r, game, seats)
    r.do(NoMoreBets(time_ms=3))
    n = len(expected_order(game, device, seats, method).deal)
    deal(r, 1, n)
    r.do(DealComplete(time_ms=5000))
    return r


def flags_of(events: list, kind: object | None = None) -> list:  # type: ignore[type-arg]
    from cardshoe.rounds import Flagged

    out = [e.irregularity for e in events if isinstance(e, Flagged)]
    return [f for f in out if kind is None or f.kind == kind]
