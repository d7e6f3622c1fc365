"""The table's state machine: journaled inputs in, derived events and settlements out.

`TableCore` is pure: it never touches the serial port, the journal or the clock. Each
input carries the host time it was journaled with, and the core's output depends only on
the inputs and their order. The live daemon and `cardshoe replay` both feed it the same
journaled inputs, so the replay reproduces every event and settlement byte for byte.

Inputs are journal entries of two kinds:

- `frame`: an accepted shoe frame, decoded (`{"type": "CARD", ...fields}`), for a shoe.
- `input`: a table-controller or daemon input, `{"action": ..., ...}`:
  `open_round`, `op` (a `cardshoe.rounds` operation for the current round),
  `settle`, `jackpot_pool`, `setup`, `shoe_loading` (a NEW_SHOE is being sent: the session
  of a number this journal chose), `shoe_loaded` (the shoe's REPLY took it), `staff` and
  `player` (who deals, who plays), `shoe_handover` (the gaming day's rollover: the shoe
  session and the table's standing state leave one journal and enter the next, issue 25).

A shoe's cards are placed by their `(shoe_no, index)` in index order: a card resent after
a shoe reboot (CARDS_FROM) is placed once, and a card that arrives ahead of a missing one
waits for it (the core asks for the missing ones with a `cards_requested` event, which the
live daemon turns into a CARDS_FROM command).

A shoe's other round events (KEY, DECK_STATUS) are applied in the same shoe order: after a
reboot the shoe sends its new boot's frames (the dealer's DEAL_COMPLETE key) before the
cards of its log that CARDS_FROM asks for, so a frame that arrives while cards the shoe
dealt before it are missing waits (`shoe_frame_held`) and is applied right after the last
of them is placed. Applied at once, a DEAL_COMPLETE would close the deal on a short count
and the late cards would land as cards not due: misplaced (issue 11). A HELLO saying the
shoe no longer holds the awaited cards ends the wait (`held_frames_released`): the cards
are lost, and flagged as missing.

The core is one class made of parts, one module each: `shoes` (shoe sessions and their
frames), `play` (rounds: open, operate, settle, export), `jackpot` (the pool and the
progressive's settings), `shufflewatch` (the shuffle alarm), `staff` (dealer and supervisor
sign-on, player ids by seat, each round's attribution), `handover` (the gaming day's
rollover) and `archive` (checkpoints);
`outcome` holds the values they share. This module dispatches each input to its part.
"""

from __future__ import annotations

from typing import Any, Mapping

from cardshoe import rounds
from cardshoe.daemon.archive import ArchiveLoader, CheckpointedState, FrozenBook, _Archived, _Frozen
from cardshoe.daemon.handover import DayHandover
from cardshoe.daemon.jackpot import JackpotInputs
from cardshoe.daemon.outcome import (
    CORE_VERSION,
    FAULT_NAMES,
    KEY_NAMES,
    NOT_DURABLE,
    Applied,
    Derived,
    InputError,
    SettlementRefused,
    StakeRefused,
    TableSetup,
    error_body,
    event,
)
from cardshoe.daemon.play import KEEP_ROUNDS, RoundPlay
from cardshoe.daemon.shoes import ShoeFrames, ShoeSession
from cardshoe.daemon.shufflewatch import ShuffleWatch
from cardshoe.daemon.staff import StaffRoster
from cardshoe.rounds import Round, RoundOperationError
from cardshoe.shuffle.book import ShuffleBook

# The names other modules import from here, and the classes older checkpoints were pickled
# with (`cardshoe.daemon.core.ShoeSession`, `_Frozen`, `_Archived`): still found here.
__all__ = [
    "CORE_VERSION", "FAULT_NAMES", "KEEP_ROUNDS", "KEY_NAMES", "NOT_DURABLE", "Applied", "ArchiveLoader", "Derived",
    "FrozenBook", "InputError", "SettlementRefused", "ShoeSession", "StakeRefused", "TableCore", "TableSetup",
    "_Archived", "_Frozen",
]


class TableCore(CheckpointedState, ShoeFrames, RoundPlay, JackpotInputs, ShuffleWatch, StaffRoster, DayHandover):
    """The state of one table, advanced only by `apply_frame` and `apply_input`."""

    def __init__(self, setup: TableSetup) -> None:
        self.setup = setup
        self.rounds: dict[str, Round] = {}
        self.current: Round | None = None
        self.rounds_opened = 0
        self.jackpot_pool: int | None = None
        self.shoes: dict[int, ShoeSession] = {}
        self.settlements: dict[str, dict[str, Any]] = {}
        # A jackpot pool given when re-settling a round closed without one (see `_settle`).
        self.pool_given_late: dict[str, int] = {}
        # Settled rounds' pickles (round, settlement), made once for checkpoints; dropped when
        # a round changes.
        self._frozen: dict[str, tuple[bytes, bytes]] = {}
        # rid -> the checkpoint entry that stores the settled round whole; the rounds the
        # checkpoint being written stores whole (see `checkpoint_written`).
        self._archived: dict[str, int] = {}
        self._pending_archive: list[str] = []
        # Earlier shoes' orders per deck and the alarms raised (issue 14 item 6).
        self.shuffle = ShuffleBook()

    def current_round_id(self) -> str | None:
        """The id of the round in play (or last played), if any."""
        return self._round_id()

    def _round_id(self) -> str | None:
        return self.current.round_id if self.current is not None else None

    def _game(self) -> str:
        return self.current.game if self.current is not None else self.setup.game

    def apply_input(self, body: Mapping[str, Any], t_ns: int) -> Applied:
        """Advance by one table-controller input; a refused input changes nothing.

        As for frames, a fault in the daemon's own code becomes an `internal_error` event
        (journaled with the input, reproduced by replay) rather than an input that changed
        state in memory but never reached the journal."""
        try:
            return self._apply_input(body, t_ns)
        except Exception as exc:  # noqa: BLE001 - reported as an event, journaled, shown
            return Applied((event(self._round_id(), "internal_error", action=str(body.get("action")),
                                  error=type(exc).__name__, message=str(exc), rule="6.1"),))

    def _apply_input(self, body: Mapping[str, Any], t_ns: int) -> Applied:
        time_ms = t_ns // 1_000_000
        action = body.get("action")
        try:
            if action == "open_round":
                opened = self._open_round(time_ms)
                assert opened.round_id is not None
                return Applied(opened.derived + tuple(self._round_staff(opened.round_id)), round_id=opened.round_id)
            if action == "op":
                return self._op(body)
            if action == "settle":
                return self._settle(self._round_for(body), body.get("jackpot_pool"), time_ms)
            if action == "jackpot_pool":
                return self._jackpot_pool_input(body)
            if action == "setup":
                return self._setup(body)
            if action == "shoe_loaded":
                return self._shoe_loaded(body, time_ms)
            if action == "shoe_loading":
                return self._shoe_loading(body)
            if action == "staff":
                return self._staff_input(body)
            if action == "player":
                return self._player_input(body)
            if action == "shoe_handover":
                return self._shoe_handover(body)
            raise InputError("action", f"unknown action {action!r}")
        except (RoundOperationError, InputError) as exc:
            refusal = event(self._round_id(), "input_refused", action=action, **error_body(exc))
            return Applied((refusal,), refused=exc)

    def _setup(self, body: Mapping[str, Any]) -> Applied:
        # A daemon start journals the table's settings, so a replay uses the settings each
        # round was played under. A round in play keeps its own game and procedure.
        try:
            limits = tuple(sorted((str(w), int(v["min"]), int(v["max"])) for w, v in dict(body["limits"]).items()))
            reset = body.get("jackpot_reset")
            # A setup journaled before issue 20 has no `core_version`: its rounds are played by
            # the rules of that time, so the journal replays as it was written (CORE_VERSION).
            version = body.get("core_version", 1)
            if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= CORE_VERSION:
                raise ValueError(f"core_version {version!r} is not one of 1..{CORE_VERSION}")
            scope = body.get("round_scope")
            if scope is not None and not (isinstance(scope, str) and scope.isascii() and scope.isalnum()
                                          and 1 <= len(scope) <= 16):
                raise ValueError(f"round_scope {scope!r} is not 1-16 letters and digits")
            setup = TableSetup(name=str(body["name"]), game=str(body["game"]), seats=int(body["seats"]),
                               dealing=str(body["dealing"]),
                               method=None if body.get("method") is None else str(body["method"]),
                               limits=limits, jackpot_reset=None if reset is None else int(reset),
                               core_version=version, round_scope=scope)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError("setup", f"bad table settings: {exc}") from None
        self.setup = setup
        return Applied((event(self._round_id(), "table_setup", **setup.to_json()),))
