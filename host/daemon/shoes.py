"""Shoe sessions and the shoe's frames in the table core (SPEC 4, 5).

`ShoeSession` is what the core knows of one shoe's current session; `ShoeFrames` is the part
of `TableCore` that applies the shoe's accepted frames: HELLO (power failures, cards the shoe
holds and the journal lacks), CARD/UNREAD (placed once, in index order, through the round's
dealing procedure), KEY and DECK_STATUS (in shoe order: held while cards dealt before them are
missing), FAULT and CRASH (`shoe_crash`), and the daemon's `shoe_loading` and `shoe_loaded`.

**A journal acts only on the shoe session it started** (issue 20 item 3): the session of its
own NEW_SHOE (`shoe_loading`, then `shoe_loaded` from the shoe's REPLY, or the first frame
naming that session: its loaded DECK_STATUS, a HELLO after a reboot that lost the REPLY, a
card), or, for a restored journal, the one its history holds. A frame naming any other session
(another journal's, or one this journal never loaded) is journaled and placed nowhere: the
first one is a `shoe_session_foreign` referral (6.1, "load a new shoe"), each card of it a
`card_from_foreign_session` with the card as evidence, and while the shoe's stream is in such a
session its keys and deck reports touch no round. Nothing is adopted: before this, a journal
with no session took up whatever session the shoe was in, and so placed into its own round
cards another journal had already placed (and paid; issue 20, the ACK-suppression replay).
The one sanctioned passage of a session between journals is an explicit handover (issue 25).

Under issue 20's rules (`TableSetup.plays_out_voids`) a card for a round already void is
recorded in it as a card after the void (dealt into no hand) and a key for it is not applied:
`card_after_void` / `key_after_void`, each referred (6.1).

A shoe's cards are placed by their `(shoe_no, index)` in index order: a card resent after
a shoe reboot (CARDS_FROM) is placed once, and a card that arrives ahead of a missing one
waits for it (the core asks for the missing ones with a `cards_requested` event, which the
live daemon turns into a CARDS_FROM command).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Mapping

from cardshoe import rounds
from cardshoe.daemon import consistency
from cardshoe.daemon.outcome import FAULT_NAMES, KEY_NAMES, NOT_DURABLE, Applied, Derived, as_journaled, event
from cardshoe.protocol.spec import MessageType
from cardshoe.rounds import DeckFault, ShoeCard
from cardshoe.rounds.events import to_jsonable

if TYPE_CHECKING:
    from cardshoe.daemon.outcome import TableSetup
    from cardshoe.rounds import Round


@dataclass
class ShoeSession:
    """What the core knows of one shoe's current session (SPEC 4, 5 HELLO/NEW_SHOE)."""

    shoe_no: int = 0
    deck_id: int = 0
    next_index: int = 1
    boot: int = 0
    pending: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    requested_from: int = 0
    known_dealt: int = 0
    """The most cards of this session the shoe is known to have dealt (HELLO, card indices)."""
    cards: dict[tuple[int, int], consistency.Fingerprint] = field(default_factory=dict)
    """(shoe_no, index) -> the card the journal holds there (placed or waiting), to compare resends."""
    faults: int = 0
    """The shoe's active faults as last reported (HELLO, FAULT): bit ``1 << code`` (SPEC 5)."""
    not_durable: int = 0
    """Cards received marked NOT_DURABLE (CARD flags bit 2): in no flash log of the shoe."""
    not_durable_at: set[tuple[int, int]] = field(default_factory=set)
    """(shoe_no, index) of those cards: a reboot may lose them from the shoe's count, as it said."""
    held: tuple[tuple[int, Mapping[str, Any]], ...] = ()
    """Frames (KEY, DECK_STATUS) waiting for missing cards, in arrival order: (the last card
    index the shoe dealt before the frame, the frame). A tuple: immutable, so a checkpoint of
    a core made before this field reads the class default."""
    loading: tuple[int, int] = (0, 0)
    """(shoe_no, deck_id) of the NEW_SHOE this journal sent last and has not yet seen start
    (`shoe_loading`); (0, 0) when none. The first frame naming that session starts it here."""
    foreign: int = 0
    """The session the shoe's stream is in when it is not this journal's (0: it is ours, or the
    shoe has none): frames of it are placed nowhere (issue 20 item 3)."""

    def forget_other_sessions(self) -> None:
        """Drop the cards of sessions other than the current one: a card of another session is
        refused before its place is looked at (`card_from_other_session`), so they are never
        read again, and kept they would grow the state with every shoe ever dealt."""
        self.cards = {k: v for k, v in self.cards.items() if k[0] == self.shoe_no}

    def fault_names(self) -> list[str]:
        """The active faults by name (SPEC 5 FAULT codes)."""
        return [name for code, name in FAULT_NAMES.items() if self.faults & (1 << code)]

    def missing_from(self) -> int | None:
        """The first index the journal lacks of cards the shoe is known to hold, if any."""
        if self.shoe_no and self.known_dealt >= self.next_index:
            return self.next_index
        return None

    def ours(self) -> bool:
        """Whether the shoe's stream is in the session this journal started: only then do its
        keys and deck reports act on a round."""
        return self.shoe_no != 0 and self.foreign == 0

    def must_hold(self) -> bool:
        """Whether a round event from the shoe now would come ahead of cards dealt before it
        that are not placed yet (or of frames already waiting for them): then it waits."""
        return bool(self.held) or self.missing_from() is not None



#: SPEC 5 CRASH `where` and `error`, by name.
CRASH_WHERE = {1: "booting", 2: "streaming"}
CRASH_ERRORS = {0: "unknown", 1: "MemoryError", 2: "RuntimeError", 3: "OSError", 4: "ImportError",
                5: "KeyboardInterrupt", 6: "another exception"}


def crash_text(hex_text: str) -> str:
    """The CRASH frame's `text` (hex as journaled): ASCII, NULs dropped, anything else as `?`."""
    raw = bytes.fromhex(hex_text).rstrip(b"\0")
    return "".join(chr(b) if 32 <= b < 127 else "?" for b in raw)


def crash_event(round_id: str | None, shoe: int, msg: Mapping[str, Any]) -> Derived:
    """`shoe_crash`: the shoe's last boot reset itself after an exception (its CRASH frame,
    SPEC 5): where, what, the host command it was executing, crashes in a row. The daemon
    counts the crashes a command causes (cardshoe.daemon.crashloop) and stops resending it."""
    cmd_type = int(msg["cmd_type"])
    try:
        command = MessageType(cmd_type).name if cmd_type else None
    except ValueError:
        command = f"0x{cmd_type:02X}"  # a command this daemon does not know
    text = crash_text(str(msg["text"]))
    where = CRASH_WHERE.get(int(msg["where"]), "unknown")
    doing = f" executing {command} ({msg['cmd_epoch']}, {msg['cmd_seq']})" if cmd_type else ""
    return event(round_id, "shoe_crash", shoe=shoe, boot=int(msg["boot"]), where=where,
                 error=CRASH_ERRORS.get(int(msg["error"]), "unknown"), count=int(msg["count"]),
                 cmd_type=cmd_type, command=command, cmd_epoch=int(msg["cmd_epoch"]), cmd_seq=int(msg["cmd_seq"]),
                 text=text, message=f"shoe {shoe} crashed {where}{doing}: {text} "
                                    f"({msg['count']} crash{'es' if int(msg['count']) != 1 else ''} in a row); "
                                    "it reset itself")


class ShoeFrames:
    """The table core's shoes: their sessions and the frames they send."""

    if TYPE_CHECKING:
        setup: TableSetup
        current: Round | None
        rounds: dict[str, Round]
        shoes: dict[int, ShoeSession]

        def _round_id(self) -> str | None: ...

        def _game(self) -> str: ...

        def _do(self, round_: Round, op: Any, *, source: str) -> Applied: ...

        def _end_session(self, session: ShoeSession) -> None: ...

    def apply_frame(self, shoe: int, msg: Mapping[str, Any], t_ns: int) -> Applied:
        """Advance by one accepted shoe frame (decoded message as journaled).

        A fault in the daemon's own code while applying a frame must not stall the link (the
        shoe would resend the frame for ever): the frame is journaled with an `internal_error`
        event for the shift manager (6.1), and replay reproduces the same event."""
        try:
            return self._apply_frame(shoe, msg, t_ns)
        except Exception as exc:  # noqa: BLE001 - reported as an event, journaled, shown
            return Applied((event(self._round_id(), "internal_error", shoe=shoe, frame=str(msg.get("type")),
                                  error=type(exc).__name__, message=str(exc), rule="6.1"),))

    def _apply_frame(self, shoe: int, msg: Mapping[str, Any], t_ns: int) -> Applied:
        mtype = msg["type"]
        session = self.shoes.setdefault(shoe, ShoeSession())
        time_ms = t_ns // 1_000_000
        if mtype == "HELLO":
            return Applied(tuple(self._hello(shoe, session, msg, time_ms)))
        if mtype in ("CARD", "UNREAD"):
            return Applied(tuple(self._card(shoe, session, msg, time_ms)))
        owns = self.setup.owns_sessions
        if owns and mtype == "KEY" and not session.ours():
            return Applied(tuple(self._foreign_key(shoe, session, msg, time_ms)))
        if owns and mtype == "DECK_STATUS" and int(msg["shoe_no"]) != session.shoe_no and not (
                int(msg["shoe_no"]) and int(msg["shoe_no"]) == session.loading[0]):
            return Applied(tuple(self._foreign_deck_status(shoe, session, msg, time_ms)))
        if mtype in ("KEY", "DECK_STATUS") and not (mtype == "DECK_STATUS" and msg["reason"] == 1):
            if session.must_hold():
                # Shoe order (SPEC 4, issue 11): the cards the shoe dealt before this frame
                # come first; it is applied once they are placed (see `_release_held`).
                session.held += ((session.known_dealt, as_journaled(msg)),)
                return Applied((event(self._round_id(), "shoe_frame_held", shoe=shoe, frame=mtype,
                                      key=msg.get("key"), shoe_ms=msg.get("t_ms"), after_index=session.known_dealt,
                                      waiting_for=session.next_index, shoe_no=session.shoe_no),))
        if mtype == "KEY":
            return Applied(tuple(self._key(shoe, msg, time_ms)))
        if mtype == "DECK_STATUS":
            return Applied(tuple(self._deck_status(shoe, session, msg, time_ms)))
        if mtype == "FAULT":
            rid = self._round_id()
            code = int(msg["code"])
            if msg["active"]:
                session.faults |= 1 << code
            else:
                session.faults &= ~(1 << code)
            return Applied((event(rid, "shoe_fault", shoe=shoe, code=code, name=FAULT_NAMES.get(code, "unknown"),
                                  active=bool(msg["active"]), detail=msg["detail"], shoe_ms=msg["t_ms"]),))
        if mtype == "CRASH":
            return Applied((crash_event(self._round_id(), shoe, msg),))
        return Applied(())  # HEARTBEAT, REPLY: link-level, journaled but not acted on here

    def _hello(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        out = [
            event(self._round_id(), "shoe_hello", shoe=shoe, boot=msg.get("boot", 0),
                  fw=f"{msg['fw_major']}.{msg['fw_minor']}.{msg['fw_patch']}",
                  fw_hash=msg["fw_hash"], reset_cause=msg["reset_cause"], shoe_no=msg["shoe_no"],
                  deck_id=msg["deck_id"], dealt=msg["dealt"], integrity=msg["integrity"],
                  faults=msg["faults"])
        ]
        previous_boot, session.boot = session.boot, int(msg.get("boot", 0))
        session.faults = int(msg["faults"])
        shoe_no, dealt = int(msg["shoe_no"]), int(msg["dealt"])
        if shoe_no == 0:
            return out
        if shoe_no != session.shoe_no and not self.setup.owns_sessions:
            return out + self._adopted_from_hello(shoe, session, msg, time_ms)
        if shoe_no != session.shoe_no:
            if (shoe_no, int(msg["deck_id"])) == session.loading:
                # The session of this journal's NEW_SHOE, whose REPLY was lost across a shoe
                # reboot (SPEC 4): it ran; the session starts here and the cards the shoe has
                # dealt in it are asked for from 1 (CARDS_FROM), each placed once by index.
                return out + self._start_session(shoe, session, shoe_no, int(msg["deck_id"]), time_ms,
                                                 dealt=dealt, reconciled="hello")
            return out + self._foreign_session(shoe, session, shoe_no, time_ms, seen_in="HELLO",
                                               evidence={"boot": session.boot, "shoe_no": shoe_no,
                                                         "deck_id": msg["deck_id"], "dealt": dealt,
                                                         "integrity": msg["integrity"]})
        session.foreign = 0  # the shoe is (back) in this journal's session
        if previous_boot and session.boot != previous_boot:
            out += self._power_failure(shoe, session, msg, dealt, time_ms)
        holds = max(session.next_index - 1, max(session.pending, default=0))
        lost = [i for i in range(dealt + 1, holds + 1) if i < session.next_index or i in session.pending]
        if lost and not all((shoe_no, i) in session.not_durable_at for i in lost):
            # The shoe's log lost cards the journal holds: never dropped (issue 10 item 4).
            # Cards it sent marked NOT_DURABLE were never in its log (its flash refused them):
            # a reboot loses them from its count as the shoe said it would, and the reboot
            # itself is the power-failure flag (reading 51), not a missing card.
            body = consistency.count_backwards(shoe, shoe_no, dealt, holds, self._game())
            out += self._inconsistent(body, rounds.DeckFault.MISSING, time_ms)
        if session.known_dealt > max(dealt, holds):
            # The shoe counted cards earlier (a HELLO, a card's index) that neither its log nor
            # the journal holds now: they will never come. Flagged as missing cards, and the
            # frames waiting for them wait no longer than for the cards the shoe still holds.
            body = consistency.cards_unrecoverable(shoe, shoe_no, session.known_dealt, dealt, holds, self._game())
            out += self._inconsistent(body, rounds.DeckFault.MISSING, time_ms)
            out += self._stop_waiting(shoe, session, max(dealt, holds), time_ms,
                                      f"shoe {shoe}'s HELLO counts {dealt} cards of shoe {shoe_no}: cards "
                                      f"{max(dealt, holds) + 1}-{session.known_dealt} will never come")
            session.known_dealt = max(dealt, holds)
        session.known_dealt = max(session.known_dealt, dealt)
        if dealt >= session.next_index:
            # SPEC 4: the shoe logged cards the journal does not hold.
            session.requested_from = session.next_index
            out.append(event(self._round_id(), "cards_requested", shoe=shoe, shoe_no=shoe_no,
                             from_index=session.next_index, dealt=dealt))
        return out

    def _release_held(self, shoe: int, session: ShoeSession, time_ms: int) -> list[Derived]:
        """Apply, in order, the waiting frames whose cards are all placed now."""
        out: list[Derived] = []
        while session.held and session.held[0][0] < session.next_index:
            msg = session.held[0][1]
            session.held = session.held[1:]
            if msg["type"] == "KEY":
                out += self._key(shoe, msg, time_ms)
            else:
                out += self._deck_status(shoe, session, msg, time_ms)
        return out

    def _stop_waiting(self, shoe: int, session: ShoeSession, last: int, time_ms: int, why: str) -> list[Derived]:
        """The cards after index `last` will never come (`why`): the frames waiting for them
        wait only for the cards up to `last`, and those already placed are applied now."""
        if not session.held:
            return []
        capped = tuple((min(after, last), msg) for after, msg in session.held)
        if capped == session.held:
            return []
        session.held = capped
        out = [event(self._round_id(), "held_frames_released", shoe=shoe, shoe_no=session.shoe_no,
                     frames=[str(m["type"]) for _a, m in capped], waits_for_up_to=last, reason=why, rule="6.1")]
        return out + self._release_held(shoe, session, time_ms)

    def _power_failure(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], dealt: int,
                       time_ms: int) -> list[Derived]:
        """The shoe rebooted in a session of this journal: a round being dealt carries it
        (cardshoe.rounds.powerfail, 5.16 / 6.1), whatever the counts say."""
        if self.current is None or self.current.status not in (rounds.RoundStatus.DEALING, rounds.RoundStatus.DEALER):
            return []
        op = rounds.ShoePowerFailure(shoe=shoe, boot=session.boot, reset_cause=int(msg["reset_cause"]),
                                     shoe_dealt=dealt, host_count=session.next_index - 1, time_ms=time_ms)
        return list(self._do(self.current, op, source="shoe").derived)

    def _card(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        shoe_no, index = int(msg["shoe_no"]), int(msg["index"])
        out: list[Derived] = []
        if not self.setup.owns_sessions and (session.shoe_no == 0 or shoe_no != session.shoe_no):
            adopted = self._adopted_from_card(shoe, session, msg)
            if shoe_no != session.shoe_no:
                return adopted
            out += adopted
        if shoe_no != session.shoe_no and shoe_no == session.loading[0]:
            # The first frame of this journal's NEW_SHOE session (its REPLY and loaded status
            # were answered to an earlier run of the daemon): it starts here.
            out += self._start_session(shoe, session, shoe_no, session.loading[1], time_ms)
        if shoe_no != session.shoe_no:
            return out + self._foreign_card(shoe, session, msg, time_ms)
        session.foreign = 0
        if index < session.next_index or index in session.pending:
            # Already placed (or waiting): a card is placed once (SPEC 4). A resend repeats
            # it exactly; a different card there is flagged with both (issue 10 item 4).
            held = session.cards.get((shoe_no, index))
            body = None if held is None else consistency.card_conflict(shoe, shoe_no, index, held, msg, self._game())
            return [] if body is None else self._inconsistent(body, rounds.DeckFault.EXTRA, time_ms)
        if msg["type"] == "CARD" and int(msg["flags"]) & NOT_DURABLE:
            # The shoe's flash refused it (FAULT STORAGE): it is durable only in this journal.
            session.not_durable += 1
            session.not_durable_at.add((shoe_no, index))
            out.append(event(self._round_id(), "card_not_durable", shoe=shoe, shoe_no=shoe_no, index=index))
        session.known_dealt = max(session.known_dealt, index)
        session.cards[(shoe_no, index)] = consistency.fingerprint(msg)
        if index > session.next_index:
            session.pending[index] = as_journaled(msg)
            if session.requested_from != session.next_index:
                session.requested_from = session.next_index
                return [event(self._round_id(), "cards_requested", shoe=shoe, shoe_no=shoe_no,
                              from_index=session.next_index, dealt=index)]
            return []
        out += self._place(shoe, msg, time_ms)
        session.next_index += 1
        out += self._release_held(shoe, session, time_ms)  # a frame the shoe sent after this card
        while session.next_index in session.pending:
            out += self._place(shoe, session.pending.pop(session.next_index), time_ms)
            session.next_index += 1
            out += self._release_held(shoe, session, time_ms)
        return out

    def _place(self, shoe: int, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        mismatch: dict[str, Any] | None = None
        if msg["type"] == "UNREAD":
            op: Any = rounds.ShoeCard(shoe_no=msg["shoe_no"], index=msg["index"], code=None, reader_id="",
                                      shoe_ms=msg["t_ms"], time_ms=time_ms)
        else:
            code = int(msg["code"])
            session = self.shoes.get(shoe)
            # A card of another deck is foreign whether or not the shoe flagged it (issue 10 item 4).
            mismatch = consistency.deck_mismatch(shoe, msg, session.deck_id if session else 0, self._game())
            op = rounds.ShoeCard(
                shoe_no=msg["shoe_no"], index=msg["index"],
                code=None if code == 0xFF else code,
                reader_id=str(msg["raw"]), shoe_ms=msg["t_ms"], deck_id=msg["card_deck"],
                read_method=msg["method"], duplicate=bool(msg["flags"] & 1),
                foreign=bool(msg["flags"] & 2) or code == 0xFF or mismatch is not None,
                time_ms=time_ms,
            )
        # A card of another deck: its evidence first, then the card as a foreign one (issue 10 item 4).
        head = [] if mismatch is None else [event(self._round_id(), mismatch.pop("type"), **mismatch)]
        if self.current is None or self.current.status is rounds.RoundStatus.SETTLED:
            return head + [self._card_outside_round(shoe, op)]
        if self.setup.plays_out_voids and self.current.void is not None:
            # A card for a round already void is recorded in it, dealt into no hand (reading 76).
            op = replace(op, after_void=True)
        return head + list(self._do(self.current, op, source="shoe").derived)

    def _key_after_void(self, shoe: int, round_: Round, key: int, msg: Mapping[str, Any],
                        time_ms: int) -> Derived:
        """The deal-complete or exposure key pressed for a round already void (issue 20 item 2):
        there is no deal left to count or card to expose in it (every wager is returned), so
        the press is recorded against the round and referred to the shift manager (6.1), with
        the shoe's place in the deck as evidence (an exposed card may be the next one out)."""
        void = round_.void
        assert void is not None
        name = KEY_NAMES[key]
        session = self.shoes.get(shoe)
        shoe_no = session.shoe_no if session is not None else 0
        next_index = session.next_index if session is not None and session.shoe_no else None
        evidence = {"key": key, "key_name": name, "shoe_ms": msg["t_ms"], "time_ms": time_ms, "shoe_no": shoe_no,
                    "next_index": next_index}
        return event(round_.round_id, "key_after_void", shoe=shoe, key=key, key_name=name, shoe_no=shoe_no,
                     rule="6.1", rules=["6.1"], decision=rounds.DecisionKind.REFERRED.value,
                     void_rules=list(void.rules),
                     detail=f"the shoe's {name} key was pressed after round {round_.round_id} was void "
                            f"({', '.join(void.rules)}); nothing is counted or exposed in a void round: referred "
                            "to the shift manager",
                     evidence=[evidence])

    def _card_outside_round(self, shoe: int, card: ShoeCard) -> Derived:
        """A card out of the shoe while no round is in play: before the first round, or after
        the last one was settled and before the next is opened. No rule covers it, so it is
        flagged for the shift manager (6.1) with the card as evidence; it belongs to no round,
        so the settled round stands and the next one deals from the following card."""
        after = self.current.round_id if self.current is not None else None
        evidence = rounds.CardEvidence(card.index, card.code, card.reader_id, card.shoe_ms, card.time_ms)
        when = f"after round {after} was settled" if after is not None else "before any round was opened"
        return event(None, "card_outside_round", shoe=shoe, shoe_no=card.shoe_no, index=card.index,
                     rule="6.1", rules=["6.1"], decision=rounds.DecisionKind.REFERRED.value,
                     detail=f"shoe card {card.index} left the shoe {when}, outside any round; "
                            "referred to the shift manager",
                     after_round=after, evidence=[to_jsonable(evidence)])

    def _between_rounds(self) -> dict[str, Any]:
        """Where the table is when no round has a card out: the last round settled (None
        before the first) and the round opened for betting, if any."""
        current = self.current
        if current is None:
            return {"after_round": None, "round_open": None}
        if current.status is rounds.RoundStatus.SETTLED:
            return {"after_round": current.round_id, "round_open": None}
        ids = list(self.rounds)  # in the order opened; the current round is the last
        before = ids[-2] if len(ids) > 1 and ids[-1] == current.round_id else None
        return {"after_round": before, "round_open": current.round_id}

    @staticmethod
    def _where(between: Mapping[str, Any]) -> str:
        after, open_ = between["after_round"], between["round_open"]
        if open_ is not None:
            return f"while round {open_} was taking bets, before its first card"
        return f"after round {after} was settled" if after is not None else "before any round was opened"

    def _key_outside_round(self, shoe: int, key: int, msg: Mapping[str, Any], time_ms: int) -> Derived:
        """A deal-complete or exposure key pressed while no round has a card out (after the
        last round was settled, before the next one's first card). The exposure rules (5.4;
        LIR 5.5) speak of cards exposed during the deal, and a count point needs a deal, so no
        rule covers it: it is referred to the shift manager (6.1) with the key press and the
        shoe's place in the deck as evidence (an exposed card may be the next one out). It
        belongs to no round: the settled round stands and the next round is not touched."""
        name = KEY_NAMES[key]
        session = self.shoes.get(shoe)
        shoe_no = session.shoe_no if session is not None else 0
        next_index = session.next_index if session is not None and session.shoe_no else None
        between = self._between_rounds()
        what = "an exposed card" if name == "exposure" else "a deal complete"
        evidence = {"key": key, "key_name": name, "shoe_ms": msg["t_ms"], "time_ms": time_ms, "shoe_no": shoe_no,
                    "next_index": next_index}
        return event(None, "key_outside_round", shoe=shoe, key=key, key_name=name, shoe_no=shoe_no, rule="6.1",
                     rules=["6.1"], decision=rounds.DecisionKind.REFERRED.value,
                     detail=f"the shoe's {name} key ({what}) was pressed {self._where(between)}, outside any "
                            "round; no rule covers it: referred to the shift manager, the next round is not "
                            "affected",
                     **between, evidence=[evidence])

    def _deck_fault_outside_round(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any],
                                  time_ms: int) -> Derived:
        """Extra or missing cards reported by DECK_STATUS while no round is in play (after the
        last round was settled, typically at the end of the shoe). The deck rules (TCP family
        5.1, 5.8; LIR 5.2) void the round in play, and earlier rounds stand (5.1.2): with no
        round in play there is none to void, so the fault is referred to the shift manager
        (6.1) with the shoe's report as evidence (its counts and, at the end of a shoe, the
        cards never dealt), to count the deck by hand (5.8) before the next round. It belongs
        to no round: the settled rounds stand and the next round is not touched."""
        integrity = int(msg["integrity"])
        faults = [f.value for bit, f in ((8, rounds.DeckFault.MISSING), (16, rounds.DeckFault.EXTRA)) if integrity & bit]
        never_dealt: list[int] = []
        if integrity & 8:
            try:
                bitmap = bytes.fromhex(str(msg.get("missing_map", "")))
            except ValueError:
                bitmap = b""
            never_dealt = [code for code in range(52) if code // 8 < len(bitmap) and bitmap[code // 8] & (1 << (code % 8))]
        between = self._between_rounds()
        evidence = {"shoe_no": msg["shoe_no"], "deck_id": msg["deck_id"], "reason": msg["reason"],
                    "dealt": msg["dealt"], "remaining": msg["remaining"], "integrity": integrity,
                    "duplicates": msg["duplicates"], "foreign": msg["foreign"], "unread": msg["unread"],
                    "missing": msg["missing"], "never_dealt": never_dealt, "time_ms": time_ms,
                    "journal_holds": session.next_index - 1 if session.shoe_no == int(msg["shoe_no"]) else None}
        return event(None, "deck_fault_outside_round", shoe=shoe, shoe_no=msg["shoe_no"], faults=faults,
                     rule="6.1", rules=consistency.deck_rules(self._game(), "extra_missing") + ["6.1"],
                     decision=rounds.DecisionKind.REFERRED.value,
                     detail=f"shoe {shoe} reported {' and '.join(f + ' cards' for f in faults)} (DECK_STATUS "
                            f"integrity {integrity}) {self._where(between)}, with no round in play to void; "
                            "earlier rounds stand: referred to the shift manager to count the deck, the next "
                            "round is not affected",
                     **between, evidence=[evidence])

    def _inconsistent(self, body: dict[str, Any], fault: DeckFault, time_ms: int) -> list[Derived]:
        """An inconsistent shoe: the event with its evidence, and the round in play (if any,
        and not void already) takes it as a deck irregularity its game's rules decide."""
        body = dict(body)
        out = [event(self._round_id(), str(body.pop("type")), **body)]
        round_ = self.current
        if round_ is None or round_.void is not None or round_.status is rounds.RoundStatus.SETTLED:
            return out
        op = rounds.DeckIrregularity(fault=fault, detail=str(body["message"]), time_ms=time_ms)
        return out + list(self._do(round_, op, source="shoe").derived)

    def _key(self, shoe: int, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        key = int(msg["key"])
        rid = self._round_id()
        out = [event(rid, "shoe_key", shoe=shoe, key=key, shoe_ms=msg["t_ms"])]
        if key not in KEY_NAMES:
            return out
        if self.setup.plays_out_voids and self.current is not None and self.current.void is not None \
                and self.current.status is not rounds.RoundStatus.SETTLED:
            return out + [self._key_after_void(shoe, self.current, key, msg, time_ms)]
        if self.current is None or self.current.status in (rounds.RoundStatus.SETTLED, rounds.RoundStatus.BETTING):
            # No round has a card out: nothing for the key to count or expose in a round.
            return out + [self._key_outside_round(shoe, key, msg, time_ms)]
        op: Any
        if key == 2:
            op = rounds.DealComplete(source=rounds.Source.SHOE_KEY, time_ms=time_ms)
        else:
            op = rounds.ExposureDeclared(source=rounds.Source.SHOE_KEY, time_ms=time_ms)
        return out + list(self._do(self.current, op, source="shoe").derived)

    def _deck_status(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        rid = self._round_id()
        out = [event(rid, "deck_status", shoe=shoe, shoe_no=msg["shoe_no"], reason=msg["reason"],
                     dealt=msg["dealt"], remaining=msg["remaining"], integrity=msg["integrity"],
                     duplicates=msg["duplicates"], foreign=msg["foreign"], unread=msg["unread"],
                     missing=msg["missing"])]
        if not self.setup.owns_sessions:
            if msg["reason"] == 1 and int(msg["shoe_no"]) != session.shoe_no:
                out += self._adopted_from_status(shoe, session, msg, time_ms)
        elif int(msg["shoe_no"]) != session.shoe_no:
            # The loaded status of this journal's NEW_SHOE session (only that one gets here,
            # see `_apply_frame`), its REPLY answered to an earlier run of the daemon. One
            # naming the session in use is no new start: the firmware frames this status after
            # the cards waiting in its log, so it can come after cards of the session (a
            # NEW_SHOE run again before the first card, SPEC 4); taken as a new start it set
            # the session back to index 1 and the shoe's cards were asked for and placed again
            # (issue 11 soak).
            out += self._start_session(shoe, session, int(msg["shoe_no"]), int(msg["deck_id"]), time_ms)
        session.foreign = 0
        integrity = int(msg["integrity"])
        if not integrity & (8 | 16):
            # Duplicate, foreign and unread cards are flagged from their own card frames.
            return out
        if self.current is None or self.current.status is rounds.RoundStatus.SETTLED:
            return out + [self._deck_fault_outside_round(shoe, session, msg, time_ms)]
        for bit, fault in ((8, rounds.DeckFault.MISSING), (16, rounds.DeckFault.EXTRA)):
            if integrity & bit:
                op = rounds.DeckIrregularity(fault=fault, detail=f"shoe {shoe} DECK_STATUS integrity {integrity}",
                                             time_ms=time_ms)
                out += list(self._do(self.current, op, source="shoe").derived)
        return out

    def _shoe_loading(self, body: Mapping[str, Any]) -> Applied:
        """The daemon's `shoe_loading` input: it is sending NEW_SHOE (shoe_no, deck_id), a number
        of this journal's own (issue 20 item 3). Journaled before the command goes out, so the
        first frame naming that session, whatever run of the daemon receives it, starts it."""
        session = self.shoes.setdefault(int(body["shoe"]), ShoeSession())
        session.loading = (int(body["shoe_no"]), int(body["deck_id"]))
        return Applied((event(self._round_id(), "shoe_loading", shoe=body["shoe"], shoe_no=body["shoe_no"],
                              deck_id=body["deck_id"]),))

    def _shoe_loaded(self, body: Mapping[str, Any], time_ms: int) -> Applied:
        """The daemon's `shoe_loaded` input: the shoe took NEW_SHOE (its REPLY): a new session
        from card 1. (`dealt` and `reconciled`: journals written before the core reconciled a
        HELLO itself carry that reconciliation as this input.)"""
        shoe = int(body["shoe"])
        session = self.shoes.setdefault(shoe, ShoeSession())
        return Applied(tuple(self._start_session(shoe, session, int(body["shoe_no"]), int(body["deck_id"]), time_ms,
                                                 dealt=int(body.get("dealt", 0)),
                                                 reconciled=str(body.get("reconciled", "")))))

    def _start_session(self, shoe: int, session: ShoeSession, shoe_no: int, deck_id: int, time_ms: int, *,
                       dealt: int = 0, reconciled: str = "") -> list[Derived]:
        """This journal's session `shoe_no` starts on `shoe`, from card 1 (`dealt`: cards the shoe
        has dealt in it already, asked for from 1)."""
        # Frames still waiting for cards of the session being replaced: those cards
        # will never come (the shoe's log is the new session's).
        released = self._stop_waiting(shoe, session, session.next_index - 1, time_ms,
                                      f"shoe {shoe} was loaded with shoe {shoe_no}")
        if shoe_no != session.shoe_no:
            self._end_session(session)
        session.shoe_no, session.deck_id = shoe_no, deck_id
        session.next_index, session.pending, session.requested_from, session.known_dealt = 1, {}, 0, 0
        session.foreign = 0
        if session.loading[0] == shoe_no:
            session.loading = (0, 0)
        session.forget_other_sessions()
        loaded = event(self._round_id(), "shoe_loaded", shoe=shoe, shoe_no=shoe_no, deck_id=deck_id)
        out = released + [loaded]
        if dealt > 0:
            # Reconciled from a HELLO (the NEW_SHOE's REPLY was lost across a shoe
            # reboot): the shoe has dealt cards of it; they are asked for from 1.
            loaded.body["reconciled"] = reconciled
            session.known_dealt, session.requested_from = dealt, 1
            out.append(event(self._round_id(), "cards_requested", shoe=shoe, shoe_no=shoe_no, from_index=1,
                             dealt=dealt))
        return out

    # -- frames of a session this journal did not start (issue 20 item 3) ---------------
    def _foreign_session(self, shoe: int, session: ShoeSession, shoe_no: int, time_ms: int, *, seen_in: str,
                         evidence: Mapping[str, Any]) -> list[Derived]:
        """The shoe's stream names session `shoe_no`, which this journal did not start: the
        referral (6.1; docs/rule-readings.md 78) the first time, and the session's cards are placed
        nowhere from now on. (A session this journal started and has since replaced is no
        exception, and cannot come: the shoe frames a session's cards before it takes the next
        NEW_SHOE, and the host takes frames in order.)"""
        if session.foreign == shoe_no:
            return []
        out: list[Derived] = []
        if session.shoe_no:
            # The shoe has left this journal's session: cards of it it never sent will not come.
            out += self._stop_waiting(shoe, session, session.next_index - 1, time_ms,
                                      f"shoe {shoe} is in shoe session {shoe_no}, not this journal's")
        session.foreign = shoe_no
        own = session.shoe_no or None
        detail = (f"shoe {shoe} is in shoe session {shoe_no} ({seen_in}), which this journal did not start "
                  f"(another journal's, or one it never saw loaded): its cards, keys and deck reports are "
                  f"journaled and placed in no round; referred to the shift manager: load a new shoe")
        return out + [event(self._round_id(), "shoe_session_foreign", shoe=shoe, shoe_no=shoe_no,
                            journal_shoe_no=own, seen_in=seen_in, rule="6.1", rules=["6.1"],
                            decision=rounds.DecisionKind.REFERRED.value, detail=detail,
                            **self._between_rounds(), evidence=[{"time_ms": time_ms, **evidence}])]

    def _foreign_card(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        """A card of a session this journal did not start: journaled, placed in no round, each
        one referred (6.1) with the card as evidence (face down in the pit view: it has an index)."""
        shoe_no, index = int(msg["shoe_no"]), int(msg["index"])
        out = self._foreign_session(shoe, session, shoe_no, time_ms, seen_in=str(msg["type"]),
                                    evidence={"shoe_no": shoe_no, "first_index": index})
        if msg["type"] == "UNREAD":
            card = rounds.CardEvidence(index, None, "", int(msg["t_ms"]), time_ms)
        else:
            code = int(msg["code"])
            card = rounds.CardEvidence(index, None if code == 0xFF else code, str(msg["raw"]), int(msg["t_ms"]), time_ms)
        return out + [event(None, "card_from_foreign_session", shoe=shoe, shoe_no=shoe_no, index=index,
                            journal_shoe_no=session.shoe_no or None, rule="6.1", rules=["6.1"],
                            decision=rounds.DecisionKind.REFERRED.value,
                            detail=f"shoe card {index} of shoe session {shoe_no}, which this journal did not "
                                   "start: placed in no round, referred to the shift manager",
                            **self._between_rounds(), evidence=[to_jsonable(card)])]

    def _foreign_key(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any], time_ms: int) -> list[Derived]:
        """A dealer key while the shoe's stream is not in this journal's session: it belongs to
        that session's deal, not to any round of this journal's (6.1)."""
        key = int(msg["key"])
        name = KEY_NAMES.get(key, "unknown")
        where = (f"shoe session {session.foreign}, which this journal did not start" if session.foreign
                 else "no shoe session this journal started (no shoe loaded)")
        return [event(self._round_id(), "shoe_key", shoe=shoe, key=key, shoe_ms=msg["t_ms"]),
                event(None, "key_from_foreign_session", shoe=shoe, key=key, key_name=name,
                      shoe_no=session.foreign or None, journal_shoe_no=session.shoe_no or None, rule="6.1",
                      rules=["6.1"], decision=rounds.DecisionKind.REFERRED.value,
                      detail=f"the shoe's {name} key was pressed while the shoe is in {where}: no round of this "
                             "journal takes it; referred to the shift manager",
                      **self._between_rounds(), evidence=[{"key": key, "key_name": name, "shoe_ms": msg["t_ms"],
                                                           "time_ms": time_ms}])]

    def _foreign_deck_status(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any],
                             time_ms: int) -> list[Derived]:
        """A DECK_STATUS of a session this journal did not start (or of none: shoe_no 0):
        journaled, acts on no round."""
        out = [event(self._round_id(), "deck_status", shoe=shoe, shoe_no=msg["shoe_no"], reason=msg["reason"],
                     dealt=msg["dealt"], remaining=msg["remaining"], integrity=msg["integrity"],
                     duplicates=msg["duplicates"], foreign=msg["foreign"], unread=msg["unread"],
                     missing=msg["missing"])]
        if not int(msg["shoe_no"]):
            return out
        return out + self._foreign_session(shoe, session, int(msg["shoe_no"]), time_ms, seen_in="DECK_STATUS",
                                           evidence={"shoe_no": msg["shoe_no"], "deck_id": msg["deck_id"],
                                                     "reason": msg["reason"], "dealt": msg["dealt"],
                                                     "integrity": msg["integrity"]})

    # -- the rules before issue 20 item 3 (`TableSetup.owns_sessions` false) -----------------
    # Kept so that a journal written by an older daemon replays as it was written (its setup
    # has a `core_version` below 3); a daemon started on it journals its own setup, and from
    # then on only the journal's own sessions are dealt.
    def _adopted_from_hello(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any],
                            time_ms: int) -> list[Derived]:
        """Before issue 20: a HELLO of another session was adopted when the journal had no
        session or no card of it, and else was a mismatch."""
        shoe_no, dealt = int(msg["shoe_no"]), int(msg["dealt"])
        if session.shoe_no != 0 and session.next_index != 1:
            return [event(self._round_id(), "shoe_session_mismatch", shoe=shoe, shoe_no=shoe_no,
                          expected_shoe_no=session.shoe_no, rule="6.1")]
        out = self._stop_waiting(shoe, session, session.next_index - 1, time_ms,
                                 f"shoe {shoe} is in another session ({shoe_no})")
        self._end_session(session)
        session.shoe_no, session.deck_id = shoe_no, int(msg["deck_id"])
        session.next_index, session.pending, session.known_dealt = dealt + 1, {}, dealt
        session.forget_other_sessions()
        return out + [event(self._round_id(), "shoe_session_adopted", shoe=shoe, shoe_no=shoe_no,
                            next_index=dealt + 1)]

    def _adopted_from_card(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any]) -> list[Derived]:
        """Before issue 20: a card with no session in the journal started one there; a card of
        another session was `card_from_other_session`."""
        shoe_no, index = int(msg["shoe_no"]), int(msg["index"])
        out: list[Derived] = []
        if session.shoe_no == 0:
            session.shoe_no, session.next_index, session.pending, session.known_dealt = shoe_no, index, {}, index
            session.forget_other_sessions()
            out.append(event(self._round_id(), "shoe_session_adopted", shoe=shoe, shoe_no=shoe_no,
                             next_index=index))
        if shoe_no != session.shoe_no:
            return [event(self._round_id(), "card_from_other_session", shoe=shoe, shoe_no=shoe_no,
                          index=index, expected_shoe_no=session.shoe_no, rule="6.1")]
        return out

    def _adopted_from_status(self, shoe: int, session: ShoeSession, msg: Mapping[str, Any],
                             time_ms: int) -> list[Derived]:
        """Before issue 20: a loaded DECK_STATUS of any other session switched to it."""
        out = self._stop_waiting(shoe, session, session.next_index - 1, time_ms,
                                 f"shoe {shoe} was loaded with shoe {msg['shoe_no']}")
        self._end_session(session)
        session.shoe_no, session.deck_id = int(msg["shoe_no"]), int(msg["deck_id"])
        session.next_index, session.pending, session.requested_from, session.known_dealt = 1, {}, 0, 0
        session.forget_other_sessions()
        return out
