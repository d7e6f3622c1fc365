"""A table's real journal for the floor tests, without a pty: the table core and service
(`cardshoe.daemon`) fed CARD frames encoded with the harness shoe's key by the protocol codec,
so the floor can check every tag. Rounds are Megalink Three Card Poker (3.7: the seat's three
cards, the dealer's three, then two community cards and a burn)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from cardshoe import rounds
from cardshoe.cards import parse_card
from cardshoe.daemon.bus import EventBus
from cardshoe.daemon.control import TableControl
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.daemon.service import FrameInput, TableService
from cardshoe.floor.progressive import round_digest
from cardshoe.floor.shipper import shipped
from cardshoe.floor.store import ShippedEntry
from cardshoe.journal import Journal, JournalReader
from cardshoe.journal.frames import frame_message
from cardshoe.protocol.frames import decode_frame, encode_frame
from cardshoe.protocol.messages import Card
from cardshoe.protocol.spec import Direction

from floor_server import KEY, SERIAL

MTCP = "megalink-three-card-poker"
RESET = 1_000_000
LIMITS = (("ante", 1000, 500_000), ("pair_plus", 1000, 100_000), ("play", 1000, 500_000), ("progressive", 500, 500))


class MiniTable:
    """Table `name`'s journal at `path`, dealt through the service by encoded frames."""

    def __init__(self, path: Path, name: str = "T1") -> None:
        self.path = path
        self.journal = Journal(path, synchronous="NORMAL")
        setup = TableSetup(name, MTCP, 7, limits=LIMITS, jackpot_reset=RESET)
        self.service = TableService(TableCore(setup), self.journal, EventBus())
        self.service.submit_input({"action": "setup", **setup.to_json()})
        self.control = TableControl(self.service)
        self.seq = 0
        self.index = 0
        with JournalReader(path) as reader:
            self.stream = f"{name}.{reader.meta('journal_id')}"

    def close(self) -> None:
        self.journal.close()

    def card(self, text: str, *, key: bytes = KEY) -> None:
        """One CARD frame from the shoe, as the link hands an accepted one over."""
        self.seq += 1
        self.index += 1
        msg = Card(shoe_no=1, index=self.index, card_deck=7, code=parse_card(text), method=1, retries=0, flags=0,
                   t_ms=self.index * 10, raw=f"{self.index:08x}".encode())
        wire = encode_frame(msg, key=key, shoe=SERIAL, boot=1, seq=self.seq)
        frame = decode_frame(wire, keys=lambda s: key, direction=Direction.SHOE_TO_HOST)
        self.service.submit_frame(FrameInput(frame.shoe, frame.boot, frame.seq, int(frame.type), frame_message(frame),
                                             frame.raw))

    def play(self, seat: str, dealer: str, community: str, burn: str = "4d", progressive: bool = True) -> str:
        """A round dealt to the decision: seat 2 ante 1000 (+ progressive 500), plays."""
        rid = str(self.control.open_round().round_id)
        self.control.place_wager(rid, 2, "ante", 1000)
        if progressive:
            self.control.place_wager(rid, 2, "progressive", 500)
        self.control.no_more_bets(rid)
        for text in f"{seat} {dealer} {community} {burn}".split():
            self.card(text)
        self.control.deal_complete(rid)
        self.control.decision(rid, 2, "play")
        return rid

    def send(self, rid: str) -> int:
        """Journal `settle_sent` for the round as a linked table does before asking the floor;
        its entry id."""
        with self.service.lock:
            trial = copy.deepcopy(self.service.core.rounds[rid])
            trial.do(rounds.Settle(jackpot_pool=0, time_ms=1))
            digest = round_digest(self.service.core.export(trial))
            entry = self.service.record("floor", {"type": "settle_sent", "round_id": rid, "link": "mega",
                                                  "digest": digest})
        assert entry is not None
        return entry

    def settle_with(self, rid: str, answer: dict[str, Any]) -> None:
        """Settle the round at the table with the floor's answer, as the table journals it."""
        self.service.submit_input({"action": "settle", "round_id": rid, "jackpot_pool": int(answer["pool"]),
                                   "floor": {**{k: answer[k] for k in ("link", "seq", "stakes", "contribution",
                                                                       "carry_before", "carry_after", "pool_before",
                                                                       "pool", "pool_after", "digest")},
                                             "signed": answer.get("signed")}})

    def entries(self, after: int = 0, upto: int | None = None) -> list[ShippedEntry]:
        with JournalReader(self.path) as reader:
            return [shipped(e) for e in reader.entries(after_id=after) if upto is None or e.id <= upto]

    def head(self) -> tuple[int, str | None]:
        with JournalReader(self.path) as reader:
            top = reader.top()
        assert top is not None
        return top.id, top.chain


def wire(entries: list[ShippedEntry]) -> list[dict[str, Any]]:
    return [e.to_json() for e in entries]
