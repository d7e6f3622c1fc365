"""Helpers for the rounds tests (imported by name: tests/rounds is on sys.path): open a round, wager, and deal a known deck through it."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from cardshoe.cards import parse_card
from cardshoe.rounds import (
    Device,
    NoMoreBets,
    OpenRound,
    PlaceWager,
    Round,
    ShoeCard,
    XtremeMethod,
)

BASE = {
    "three-card-poker": "ante",
    "megalink-three-card-poker": "ante",
    "megalink-three-card-poker-xtreme": "ante",
    "megalink-let-it-ride": "one",
    "megalink-singapore-stud-poker": "ante",
}


def open_round(
    game: str,
    device: Device | str = Device.AUTOMATED,
    method: XtremeMethod | str | None = None,
    seats: Iterable[int] = (1,),
    *,
    amount: int = 2500,
    close: bool = True,
    round_id: str = "R1",
) -> Round:
    """A round with the game's base wager(s) on ``seats`` and, if ``close``, no more bets."""
    rnd = Round.open(
        OpenRound(round_id=round_id, game=game, device=Device(device), method=XtremeMethod(method) if method else None, time_ms=1000)
    )
    for seat in seats:
        if game == "megalink-let-it-ride":
            for w in ("one", "two", "dollar"):  # LIR 3.4: three equal wagers
                rnd.do(PlaceWager(seat=seat, wager=w, amount=amount, time_ms=1001))
        else:
            rnd.do(PlaceWager(seat=seat, wager=BASE[game], amount=amount, time_ms=1001))
    if close:
        rnd.do(NoMoreBets(time_ms=1002))
    return rnd


def shoe_card(index: int, code: int | None, *, shoe_no: int = 1, **kw: object) -> ShoeCard:
    """A card from shoe session ``shoe_no`` at ``index`` with a made-up reader ID and times."""
    return ShoeCard(
        shoe_no=shoe_no,
        index=index,
        code=code,
        reader_id=f"04{index:02x}{(code or 0):02x}a1b2c3",
        shoe_ms=50_000 + 250 * index,
        time_ms=2_000_000 + 250 * index,
        **kw,  # type: ignore[arg-type]
    )


def deal(rnd: Round, codes: Sequence[int | None], *, start: int = 1) -> list[object]:
    """Feed ``codes`` to ``rnd`` as consecutive shoe cards; return all the events."""
    events: list[object] = []
    for k, code in enumerate(codes):
        events.extend(rnd.do(shoe_card(start + k, code)))
    return events


def cards(text: str) -> list[int]:
    """``"As Kd 2c"`` -> card codes."""
    return [parse_card(t) for t in text.split()]


