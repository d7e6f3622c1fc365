"""Journals as a real table leaves them, built fast: for `cardshoe bench daemon` and the tests.

The real `TableService` (the real table core, the real journal on SQLite) is fed Three Card
Poker rounds: seven seats ante, 24 CARD frames of shoe 1 (a shuffled deck each round), each
seat plays, the round is settled; a new 8-deck shoe is loaded when the one in play runs low. Only the serial link is left out (frames go straight to
the service as an accepted frame would), and the journal is written with synchronous=NORMAL,
which changes how fast it is written, not what is in it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from cardshoe.cards import parse_card
from cardshoe.daemon.bus import EventBus
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.daemon.service import FrameInput, TableService
from cardshoe.journal import Journal
from cardshoe.rounds import Choice, Decision, PlaceWager, operation_to_json

GAME = "three-card-poker"
SEATS = 7
CARDS_PER_ROUND = 3 * SEATS + 3
SHOE_CARDS = 8 * 52 - 26  # an 8-deck shoe cut about half a deck from its end
LIMITS = (("ante", 100, 100_000), ("pair_plus", 100, 100_000), ("play", 100, 100_000))
SETUP = TableSetup(name="BENCH", game=GAME, seats=SEATS, limits=LIMITS)
T0 = 1_700_000_000_000_000_000
DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


class JournalBuilder:
    """Feeds rounds to a real `TableService` over a journal at `path`."""

    def __init__(self, path: Path, *, checkpoint_every: int = 0, seed: int = 15) -> None:
        self.journal = Journal(path, synchronous="NORMAL")
        self.t = T0
        self.index = 0
        self.seq = 0
        self.shoe_no = 0
        self.rng = random.Random(seed)
        self.service = TableService(TableCore(SETUP), self.journal, EventBus(), clock=self._tick,
                                    checkpoint_every=checkpoint_every)
        self.service.submit_input({"action": "setup", **SETUP.to_json()})

    def _tick(self) -> int:
        self.t += 1_000_000
        return self.t

    def card(self, text: str) -> None:
        """One CARD frame of shoe 1, session 1, as the link hands it over."""
        self.index += 1
        self.seq += 1
        msg: dict[str, Any] = {"type": "CARD", "shoe_no": self.shoe_no, "index": self.index, "code": parse_card(text),
                               "raw": f"{self.index:08x}", "t_ms": 1000 * self.index, "card_deck": 7, "method": 1,
                               "flags": 0}
        self.service.submit_frame(FrameInput(shoe=1, boot=1, seq=self.seq, type=2, message=msg, raw=bytes(64)))

    def op(self, rid: str, op: Any) -> None:
        done = self.service.submit_input({"action": "op", "round_id": rid, "op": operation_to_json(op)})
        if done.refused is not None:
            raise RuntimeError(f"bench round refused: {done.refused}")

    def load_shoe(self) -> None:
        """A new shoe session (the dealer loads 8 decks): its cards count from 1 again."""
        self.shoe_no += 1
        self.index = 0
        self.service.submit_input({"action": "shoe_loaded", "shoe": 1, "shoe_no": self.shoe_no, "deck_id": 7})

    def play_round(self) -> str:
        """One round: 7 antes, 24 cards, 7 plays, settled; returns its id. A new shoe is
        loaded when the one in play has fewer cards left than a round takes."""
        if self.shoe_no == 0 or self.index + CARDS_PER_ROUND > SHOE_CARDS:
            self.load_shoe()
        rid = str(self.service.submit_input({"action": "open_round"}).round_id)
        for seat in range(1, SEATS + 1):
            self.op(rid, PlaceWager(seat=seat, wager="ante", amount=1000))
        for text in self.rng.sample(DECK, CARDS_PER_ROUND):
            self.card(text)
        for seat in range(1, SEATS + 1):
            self.op(rid, Decision(seat=seat, choice=Choice.PLAY))
        self.service.submit_input({"action": "settle", "round_id": rid})
        return rid

    def close(self) -> None:
        self.journal.close()


def build(path: Path, cards: int, *, checkpoint_every: int = 0, final_checkpoint: bool = False) -> int:
    """A journal at `path` with about `cards` cards dealt in settled rounds; the rounds played.
    With `final_checkpoint`, a checkpoint is journaled at the end (as a daemon's stop does)."""
    builder = JournalBuilder(path, checkpoint_every=checkpoint_every)
    try:
        rounds = max(1, cards // CARDS_PER_ROUND)
        for _ in range(rounds):
            builder.play_round()
        if final_checkpoint:
            builder.service.checkpoint()
    finally:
        builder.close()
    return rounds
