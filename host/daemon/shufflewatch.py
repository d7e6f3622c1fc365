"""The shuffle alarm's side of the table core (issue 14 item 6; `cardshoe.shuffle`).

Each shoe's order, once a round of it has been dealt, is checked against the deck's earlier
orders; a session that ends becomes a reference for the next ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cardshoe import rounds
from cardshoe.daemon.outcome import Derived, event
from cardshoe.rounds import Round
from cardshoe.shuffle.book import ShuffleBook, alarm_body

if TYPE_CHECKING:
    from cardshoe.daemon.shoes import ShoeSession


class ShuffleWatch:
    """The table core's shuffle alarm: orders of ended sessions kept, each dealt round checked."""

    if TYPE_CHECKING:
        shuffle: ShuffleBook
        shoes: dict[int, ShoeSession]

    @staticmethod
    def _session_order(session: ShoeSession) -> list[int | None]:
        """The current session's cards by index: codes, None for one unread or of no deck."""
        out: list[int | None] = []
        for (shoe_no, _), fp in sorted(session.cards.items()):
            if shoe_no == session.shoe_no:
                code = fp[1]
                out.append(code if code is not None and 0 <= code < 52 else None)
        return out

    def _end_session(self, session: ShoeSession) -> None:
        """The session in `session` ends (another is loaded): its order becomes a reference."""
        if session.shoe_no:
            dealt = [c for c in self._session_order(session) if c is not None]
            self.shuffle.shoe_finished(session.deck_id, session.shoe_no, dealt)

    def _shuffle_check(self, round_: Round) -> list[Derived]:
        """Once a round has been dealt, its shoe's order so far against the deck's earlier
        orders; a `shuffle_alarm` event (rule 5.1, referred) the first time it fails."""
        if round_.shoe_no is None or round_.status in (rounds.RoundStatus.BETTING, rounds.RoundStatus.DEALING):
            return []
        found = next(((serial, s) for serial, s in self.shoes.items() if s.shoe_no == round_.shoe_no), None)
        if found is None:
            return []
        serial, session = found
        dealt = self._session_order(session)
        verdict = self.shuffle.check(session.deck_id, session.shoe_no, dealt, round_.round_id)
        if verdict is None:
            return []
        body = alarm_body(verdict, shoe=serial, shoe_no=session.shoe_no, deck_id=session.deck_id,
                          round_id=round_.round_id, dealt=dealt,
                          history=self.shuffle.history.get(session.deck_id, []))
        self.shuffle.alarmed[session.shoe_no] = body
        return [event(round_.round_id, "shuffle_alarm", **body)]
