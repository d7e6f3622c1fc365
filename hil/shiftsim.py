"""A Three Card Poker table dealt for hours in seconds: the pure table core fed by a seeded shoe.

`SimTable` runs the daemon's own `TableCore` (no serial line, no clock): a dealer signs on,
players sit down and bet, cards leave a shoe shuffled by a seeded `random.Random`, players
decide, the round settles; every event and settlement the core derives is kept as a
journal entry (`SimEntry`, or written to a journal file with `write_journal`) with a host
time advanced at a dealer's pace the caller sets (`Pace`). The report reads those entries
exactly as it reads a daemon's journal.

The bench keeps its own model: where each card goes comes from `cardshoe.hil.ledger`'s
dealing order (the rule documents), and the players' decisions from their hands alone
(Q-6-4 or better, the par sheet's optimum), never from the daemon. Hooks make it cheat:
`stack` orders the shoe, `favour` gives one seat its cards from the top of a second deck,
`dealer_keys` lets the dealer key a seat absent (5.11) once he has seen the cards.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.hil.ledger import dealing_order
from cardshoe.poker import Hand3, evaluate3
from cardshoe.rounds import Choice, Decision, NoMoreBets, PlaceWager, PlayerAbsent, operation_to_json

__all__ = ["Pace", "SimEntry", "SimTable", "plays_q64", "write_journal"]

GAME = "three-card-poker"
LIMITS = (("ante", 100, 1_000_000), ("pair_plus", 100, 1_000_000), ("play", 100, 1_000_000),
          ("progressive", 100, 100))
_Q64 = evaluate3((42, 17, 11)).strength  # Qh 6d 4s


def plays_q64(cards: list[int]) -> bool:
    """The par sheet's optimum for ante/play: play Q-6-4 or better."""
    return evaluate3(cards).strength >= _Q64


@dataclass(frozen=True)
class Pace:
    """The dealer's pace, in seconds: what the host clock advances by at each step."""

    bet: float = 2.0
    """per wager placed"""
    card: float = 0.4
    """per card out of the shoe (2.5 cards a second)"""
    decision: float = 3.0
    settle: float = 12.0
    between: float = 8.0
    shoe: float = 60.0
    """loading a new shoe"""


@dataclass
class SimEntry:
    """A journal entry as the report reads it."""

    id: int
    t_ns: int
    kind: str
    round_id: str | None
    body: str


@dataclass
class SimTable:
    """One simulated table; `deal_round` plays one round."""

    name: str = "T1"
    seed: int = 1
    pace: Pace = Pace()
    start_ns: int = 1_800_000_000 * 10**9
    seats: int = 7
    entries: list[SimEntry] = field(default_factory=list)
    stack: Callable[[random.Random], list[int]] | None = None
    favour: int | None = None
    dealer_keys: Callable[[int, list[int], list[int]], bool] | None = None

    def __post_init__(self) -> None:
        import json

        self._json = json
        self.rng = random.Random(self.seed)
        self.core = TableCore(TableSetup(name=self.name, game=GAME, seats=self.seats, limits=LIMITS))
        self.t = self.start_ns
        self.shoe: list[int] = []
        self.shoe_no = 0
        self.index = 0
        self.input({"action": "setup", "name": self.name, "game": GAME, "seats": self.seats, "dealing": "automated",
                    "method": None, "limits": {w: {"min": lo, "max": hi} for w, lo, hi in LIMITS},
                    "jackpot_reset": None})

    # -- the journal --------------------------------------------------------------------------
    def _keep(self, kind: str, rid: str | None, body: dict[str, Any]) -> None:
        if kind not in ("event", "settlement"):
            return  # the report reads derived entries only: inputs and frames are not kept
        text = self._json.dumps(body, sort_keys=True, separators=(",", ":"))
        self.entries.append(SimEntry(len(self.entries) + 1, self.t, kind, rid, text))

    def advance(self, seconds: float) -> None:
        self.t += int(seconds * 1e9)

    def input(self, body: dict[str, Any]) -> Any:
        applied = self.core.apply_input(body, self.t)
        self._keep("input", applied.round_id, body)
        for d in applied.derived:
            self._keep(d.kind, d.round_id, d.body)
        if applied.refused is not None:
            raise RuntimeError(f"refused: {applied.refused}")
        return applied

    def _card(self, code: int) -> None:
        self.index += 1
        msg = {"type": "CARD", "shoe_no": self.shoe_no, "index": self.index, "code": code, "raw": f"{self.index:08x}",
               "t_ms": self.index * 400, "card_deck": 7, "method": 1, "flags": 0}
        applied = self.core.apply_frame(1, msg, self.t)
        self._keep("frame", applied.round_id, msg)
        for d in applied.derived:
            self._keep(d.kind, d.round_id, d.body)

    def _op(self, rid: str, op: Any) -> None:
        self.input({"action": "op", "round_id": rid, "op": operation_to_json(op)})

    # -- play ---------------------------------------------------------------------------------
    def sign_on(self, dealer: str) -> None:
        self.input({"action": "staff", "role": "dealer", "staff_id": dealer, "on": True})

    def seat_player(self, seat: int, player: str | None) -> None:
        self.input({"action": "player", "seat": seat, "player_id": player})

    def _new_shoe(self) -> None:
        self.advance(self.pace.shoe)
        self.shoe_no += 1
        self.index = 0
        if self.stack is not None:
            self.shoe = self.stack(self.rng)
        else:
            self.shoe = list(range(52))
            self.rng.shuffle(self.shoe)
        self.input({"action": "shoe_loaded", "shoe": 1, "shoe_no": self.shoe_no, "deck_id": 7})

    def deal_round(self, wagers: dict[int, dict[str, int]]) -> dict[str, Any]:
        """One round with these wagers by seat; returns its settlement."""
        slots = dealing_order(GAME, "automated", None, sorted(wagers))[0]
        if len(self.shoe) < len(slots):
            self._new_shoe()
        rid = str(self.input({"action": "open_round"}).round_id)
        for seat, ws in sorted(wagers.items()):
            for wager, amount in ws.items():
                self.advance(self.pace.bet)
                self._op(rid, PlaceWager(seat=seat, wager=wager, amount=amount))
        self._op(rid, NoMoreBets())
        hands: dict[str, list[int]] = {}
        favoured: list[int] = []
        if self.favour is not None and self.favour in wagers:
            favoured = self._favoured_hand()
        for slot in slots:
            self.advance(self.pace.card)
            if slot.kind == "seat" and slot.seat == self.favour and favoured:
                code = favoured.pop(0)
            else:
                code = self.shoe.pop(0)
            hands.setdefault(slot.label(), []).append(code)
            self._card(code)
        dealer = hands.get("dealer", [])
        for seat in sorted(wagers):
            if "ante" not in wagers[seat]:
                continue
            self.advance(self.pace.decision)
            mine = hands[f"seat {seat}"]
            if self.dealer_keys is not None and self.dealer_keys(seat, mine, dealer):
                self._op(rid, PlayerAbsent(seat=seat))
                continue
            choice = Choice.PLAY if plays_q64(mine) else Choice.FOLD
            if choice is Choice.PLAY:
                wagers[seat]["play"] = wagers[seat]["ante"]
            self._op(rid, Decision(seat=seat, choice=choice))
        self.advance(self.pace.settle)
        settled = self.input({"action": "settle", "round_id": rid})
        self.advance(self.pace.between)
        return next(d.body for d in settled.derived if d.kind == "settlement")

    def _favoured_hand(self) -> list[int]:
        """A pair or better for the favoured seat, from the cards still in the shoe (a
        marked-card or stacked-deck cheat: the seat always gets a paying pair plus hand)."""
        for _ in range(1000):
            picks = self.rng.sample(range(len(self.shoe)), 3)
            cards = [self.shoe[i] for i in picks]
            if evaluate3(cards).kind >= Hand3.PAIR:
                for i in sorted(picks, reverse=True):
                    self.shoe.pop(i)
                return cards
        return []

    def random_wagers(self, *, pair_plus: float = 0.5, seats: tuple[int, int] = (3, 7)) -> dict[int, dict[str, int]]:
        """1 to 7 seats, antes of 500, 1000 or 2500 and pair plus half the time."""
        n = self.rng.randint(*seats)
        chosen = sorted(self.rng.sample(range(1, self.seats + 1), n))
        out: dict[int, dict[str, int]] = {}
        for s in chosen:
            out[s] = {"ante": self.rng.choice((500, 1000, 2500))}
            if self.rng.random() < pair_plus:
                out[s]["pair_plus"] = self.rng.choice((500, 1000))
        return out


def write_journal(entries: list[SimEntry], path: Path) -> None:
    """Write simulated entries as a journal file (the journal's schema), for `cardshoe report`."""
    import secrets

    from cardshoe.journal.store import _SCHEMA, SCHEMA_VERSION, append

    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA)
    journal_id = secrets.token_hex(6)
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     [("schema", str(SCHEMA_VERSION)), ("journal_id", journal_id), ("chain_genesis", journal_id)])
    # Appended as the daemon's writer appends: ids from 1, each entry hash-chained to the last.
    for e in entries:
        append(conn, e.kind, e.body, t_ns=e.t_ns, round_id=e.round_id)
    conn.commit()
    conn.close()
