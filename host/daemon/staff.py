"""Who deals and who plays (the table core's part for staff and players; issue 23 item 1).

`StaffRoster` keeps the dealer and the supervisor signed on at the table and the player id
(a rating card) given for each seat. Each change is a journaled input (`action` `staff` or
`player`), so a replay rebuilds who was on at every moment, and each gives an event:
`staff_signed_on` / `staff_signed_off` (`role`, `staff_id`, `replaced`) and `player_seated`
/ `player_left` (`seat`, `player_id`, `replaced`).

Attribution. Every round opened while someone is on or seated gets a `round_staff` event
right after `round_opened`: `{dealer, supervisor, players: {seat: id}}`. A change made while
that round still takes bets (a relief dealer taking over, a player swiping a card after the
round opened) gives the round a new `round_staff`: a round is attributed to whoever was on
when its bets closed; a change after that applies from the next round. Reports take a
round's last `round_staff`. A table nobody signed on to emits no `round_staff` (and the
journals of earlier versions replay unchanged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from cardshoe.daemon.outcome import Applied, Derived, InputError, TableSetup, event

if TYPE_CHECKING:
    from cardshoe.rounds import Round

#: The roles that sign on at a table.
STAFF_ROLES = ("dealer", "supervisor")
#: An id is what a badge or a rating card reads: short, printable, no surrounding blanks.
MAX_ID = 64


def check_id(value: Any, field_name: str) -> str:
    """A staff or player id as given, or InputError naming `field_name`."""
    if not isinstance(value, str) or not value or len(value) > MAX_ID or value != value.strip() \
            or not value.isprintable():
        raise InputError(field_name, f"an id of 1-{MAX_ID} printable characters without surrounding blanks")
    return value


class StaffRoster:
    """The table core's staff and players: who is on now, and each round's attribution."""

    if TYPE_CHECKING:
        setup: TableSetup
        current: Round | None

        def _round_id(self) -> str | None: ...

    # Kept in a dict made by the first staff or player input, never by a read: a checkpoint
    # pickled before this part existed loads and carries on (nobody on), and the state a
    # replay rebuilds of a journal with no such input is the state its checkpoints hold.
    def _roster(self, *, write: bool = False) -> dict[str, Any]:
        roster: dict[str, Any] | None = self.__dict__.get("_staff")
        if roster is None:
            roster = {"dealer": None, "supervisor": None, "players": {}}
            if write:
                self.__dict__["_staff"] = roster
        return roster

    def staff_on(self) -> dict[str, Any]:
        """Who is on now: `{dealer, supervisor, players: {"3": id}}` (a copy)."""
        r = self._roster()
        return {"dealer": r["dealer"], "supervisor": r["supervisor"],
                "players": {str(s): p for s, p in sorted(r["players"].items())}}

    def _staff_input(self, body: Mapping[str, Any]) -> Applied:
        role = body.get("role")
        if role not in STAFF_ROLES:
            raise InputError("role", f"one of {', '.join(STAFF_ROLES)}")
        roster = self._roster(write=True)
        on = body.get("on")
        if not isinstance(on, bool):
            raise InputError("on", "true (sign on) or false (sign off)")
        rid = self._round_id()
        if on:
            staff_id = check_id(body.get("staff_id"), "staff_id")
            replaced = roster[role]
            roster[role] = staff_id
            out = [event(rid, "staff_signed_on", role=role, staff_id=staff_id, replaced=replaced)]
        else:
            held = roster[role]
            given = body.get("staff_id")
            if held is None:
                raise InputError("staff_id", f"no {role} is signed on at this table")
            if given is not None and check_id(given, "staff_id") != held:
                raise InputError("staff_id", f"{given!r} is not the {role} signed on ({held!r})")
            roster[role] = None
            out = [event(rid, "staff_signed_off", role=role, staff_id=held)]
        return Applied(tuple(out + self._reattribute()), round_id=rid)

    def _player_input(self, body: Mapping[str, Any]) -> Applied:
        seat = body.get("seat")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= self.setup.seats:
            raise InputError("seat", f"a seat of this table, 1..{self.setup.seats}")
        roster = self._roster(write=True)
        players: dict[int, str] = roster["players"]
        rid = self._round_id()
        given = body.get("player_id")
        if given is None:
            held = players.pop(seat, None)
            if held is None:
                raise InputError("player_id", f"no player id is given for seat {seat}")
            out = [event(rid, "player_left", seat=seat, player_id=held)]
        else:
            player_id = check_id(given, "player_id")
            replaced = players.get(seat)
            players[seat] = player_id
            out = [event(rid, "player_seated", seat=seat, player_id=player_id, replaced=replaced)]
        return Applied(tuple(out + self._reattribute()), round_id=rid)

    def _round_staff(self, rid: str) -> list[Derived]:
        """The `round_staff` event of round `rid` as things stand, or none when nobody is on."""
        now = self.staff_on()
        if now["dealer"] is None and now["supervisor"] is None and not now["players"]:
            return []
        return [event(rid, "round_staff", round_id=rid, **now)]

    def _reattribute(self) -> list[Derived]:
        # A change while the round in play still takes bets is that round's (see the module doc).
        from cardshoe.rounds import RoundStatus

        cur = self.current
        if cur is None or cur.status is not RoundStatus.BETTING or cur.void is not None:
            return []
        now = self.staff_on()
        return [event(cur.round_id, "round_staff", round_id=cur.round_id, **now)]


__all__ = ["MAX_ID", "STAFF_ROLES", "StaffRoster", "check_id"]
