"""The gaming day's handover in the table core (issue 25 item 2): the one sanctioned passage of
a shoe session, and of the table's standing state, from one journal to the next.

At a rollover (`cardshoe.daemon.gamingday`) the daemon journals a `shoe_handover` input in
both journals, with the same `carried` body:

- in the day that closes, `direction: "out"`: the sessions leave this journal. A frame that
  still named one of them here would be another journal's (6.1, as any foreign session):
  the closing day places no card after its handover;
- in the day that opens, `direction: "in"`: the sessions continue here where the old day
  left them: the same `shoe_no`, the next index to place, the cards the old day placed (by
  their fingerprints, so a resend of one is recognised and a different card at its index is
  flagged, never placed twice), the shoe's boot and faults. The link window of each shoe
  travels beside them (the daemon writes it to the new journal's `windows`), so the shoe's
  next frame is taken and an old one refused as a replay (SPEC 3.1).

What else stands at the table across the hour comes with them: who is signed on (the
dealer, the supervisor, players by seat), the jackpot pool, and the shuffle alarm's memory
of earlier shoes (issue 14 item 6). Nothing of a round is carried: a rollover waits until
no round is in play (a round in play at the hour finishes in the old day).

`carried` is built by `handover_state` from the closing core and is pure data (JSON), so a
replay of either day alone rebuilds the same state, and `cardshoe replay` of a chain of days
checks that the two copies agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from cardshoe import rounds
from cardshoe.daemon.outcome import Applied, InputError, event

if TYPE_CHECKING:
    from cardshoe.daemon.shoes import ShoeSession
    from cardshoe.rounds import Round
    from cardshoe.shuffle.book import ShuffleBook


class DayHandover:
    """The table core's `shoe_handover` input (see the module docstring)."""

    if TYPE_CHECKING:
        current: Round | None
        shoes: dict[int, ShoeSession]
        jackpot_pool: int | None
        shuffle: ShuffleBook

        def _round_id(self) -> str | None: ...

        def _roster(self, *, write: bool = False) -> dict[str, Any]: ...

        def staff_on(self) -> dict[str, Any]: ...

    def in_play(self) -> str | None:
        """Why the table cannot hand over now, or None: a round in play (opened and not
        settled), or a shoe with cards or frames waiting, or a load not yet answered."""
        cur = self.current
        if cur is not None and cur.status is not rounds.RoundStatus.SETTLED:
            return f"round {cur.round_id} is in play ({cur.status.value})"
        for serial, s in sorted(self.shoes.items()):
            if s.pending or s.held or s.missing_from() is not None:
                return f"shoe {serial} has cards or frames waiting"
            if s.loading != (0, 0):
                return f"shoe {serial} is being loaded (NEW_SHOE {s.loading[0]})"
        return None

    def handover_state(self) -> dict[str, Any]:
        """What passes to the next day's journal (the `carried` body of both inputs)."""
        sessions = []
        for serial, s in sorted(self.shoes.items()):
            if not s.shoe_no or s.foreign:
                continue  # a shoe in no session of this journal's: nothing to carry
            sessions.append({
                "shoe": serial, "shoe_no": s.shoe_no, "deck_id": s.deck_id, "next_index": s.next_index,
                "known_dealt": s.known_dealt, "boot": s.boot, "faults": s.faults, "not_durable": s.not_durable,
                "not_durable_at": sorted(i for n, i in s.not_durable_at if n == s.shoe_no),
                "cards": [[index, *fp] for (shoe_no, index), fp in sorted(s.cards.items()) if shoe_no == s.shoe_no],
            })
        book = self.shuffle
        return {
            "sessions": sessions,
            "staff": self.staff_on(),
            "jackpot_pool": self.jackpot_pool,
            "shuffle": {
                "history": [[deck, [[o.shoe_no, list(o.dealt), list(o.collected)] for o in orders]]
                            for deck, orders in book.history.items()],
                "collecting": [[shoe_no, list(cards)] for shoe_no, cards in sorted(book.collecting.items())],
                # The alarm raised for a shoe still in play stands in the next day (until it is replaced).
                "alarmed": [[shoe_no, dict(body)] for shoe_no, body in sorted(book.alarmed.items())
                            if shoe_no in {x["shoe_no"] for x in sessions}],
            },
        }

    def _shoe_handover(self, body: Mapping[str, Any]) -> Applied:
        direction = body.get("direction")
        carried = body.get("carried")
        if direction not in ("out", "in") or not isinstance(carried, Mapping):
            raise InputError("shoe_handover", "direction 'out' or 'in' and the state carried")
        if direction == "out":
            busy = self.in_play()
            if busy is not None:
                # The daemon never asks this (it waits for the table to be idle); a journal
                # that says so anyway is refused, and replay says where.
                raise InputError("shoe_handover", f"not at a rollover: {busy}")
            return self._handover_out(body, carried)
        return self._handover_in(body, carried)

    def _handover_out(self, body: Mapping[str, Any], carried: Mapping[str, Any]) -> Applied:
        out = []
        for s in carried["sessions"]:
            session = self.shoes.get(int(s["shoe"]))
            if session is None or session.shoe_no != int(s["shoe_no"]):
                raise InputError("shoe_handover", f"shoe {s['shoe']} is not in session {s['shoe_no']} here")
            # From now on the session is the next day's: here the shoe is in a session this
            # journal no longer holds, and a frame of it is another journal's (6.1).
            session.foreign, session.shoe_no = session.shoe_no, 0
            out.append(event(self._round_id(), "shoe_handed_over", shoe=int(s["shoe"]), shoe_no=int(s["shoe_no"]),
                             next_index=int(s["next_index"]), to_day=body.get("to_day"),
                             to_journal=body.get("to_journal")))
        out.append(event(self._round_id(), "day_handover", direction="out", to_day=body.get("to_day"),
                         to_journal=body.get("to_journal"), shoes=len(carried["sessions"])))
        return Applied(tuple(out))

    def _handover_in(self, body: Mapping[str, Any], carried: Mapping[str, Any]) -> Applied:
        from cardshoe.daemon.shoes import ShoeSession
        from cardshoe.shuffle.book import ShoeOrder

        if self.current is not None:
            raise InputError("shoe_handover", "a day's handover comes before its first round")
        out = []
        for s in carried["sessions"]:
            shoe_no = int(s["shoe_no"])
            cards = {(shoe_no, int(c[0])): (str(c[1]), None if c[2] is None else int(c[2]),
                                            None if c[3] is None else int(c[3]), str(c[4])) for c in s["cards"]}
            session = ShoeSession(shoe_no=shoe_no, deck_id=int(s["deck_id"]), next_index=int(s["next_index"]),
                                  boot=int(s["boot"]), known_dealt=int(s["known_dealt"]), cards=cards,
                                  faults=int(s["faults"]), not_durable=int(s["not_durable"]),
                                  not_durable_at={(shoe_no, int(i)) for i in s.get("not_durable_at", [])})
            self.shoes[int(s["shoe"])] = session
            out.append(event(None, "shoe_taken_over", shoe=int(s["shoe"]), shoe_no=shoe_no, deck_id=session.deck_id,
                             next_index=session.next_index, from_day=body.get("from_day"),
                             from_journal=body.get("from_journal")))
        staff = carried.get("staff") or {}
        if staff.get("dealer") or staff.get("supervisor") or staff.get("players"):
            roster = self._roster(write=True)
            roster["dealer"], roster["supervisor"] = staff.get("dealer"), staff.get("supervisor")
            roster["players"] = {int(k): str(v) for k, v in dict(staff.get("players", {})).items()}
        pool = carried.get("jackpot_pool")
        self.jackpot_pool = None if pool is None else int(pool)
        shuffle = carried.get("shuffle") or {}
        for deck, orders in shuffle.get("history", []):
            self.shuffle.history[int(deck)] = [ShoeOrder(int(o[0]), tuple(int(c) for c in o[1]),
                                                          tuple(int(c) for c in o[2])) for o in orders]
        for shoe_no, cards_ in shuffle.get("collecting", []):
            self.shuffle.collecting[int(shoe_no)] = [int(c) for c in cards_]
        for shoe_no, alarm in shuffle.get("alarmed", []):
            self.shuffle.alarmed[int(shoe_no)] = dict(alarm)
        out.append(event(None, "day_handover", direction="in", from_day=body.get("from_day"),
                         from_journal=body.get("from_journal"), shoes=len(carried["sessions"]),
                         staff=self.staff_on(), jackpot_pool=self.jackpot_pool))
        return Applied(tuple(out))


__all__ = ["DayHandover"]
