"""The pit view: what the table shows, and nothing of a card still face down.

A supervisor (a reader without `controller` or `surveillance`), and any reader asking
`?view=pit`, reads the table through this one filter, at the API's edge, on every path: the
event stream (live and backlog), `GET /rounds/{id}`, `/rounds`, `/status` and the evidence
file (docs/api.md, "The pit view").

**What is public** is decided by the rules, not by what an event happens to carry
(docs/rule-readings.md 55 and 77): a card the dealing procedure deals face up (Singapore
Stud's dealer up card, 3.7/3.8: `DealingProcedure.public_places`), a card recorded as exposed
(5.4, 6.1), and, once a round is settled (not void), every card of its hands, turned to settle
them (TCP 3.10, LIR 3.11, SSP 3.10). A burn card and Xtreme's security card are never turned
(MTCP/XT 3.7: "burned and discarded into the discard holder"), a void round's cards are
collected unseen, and a card of no round (drawn between rounds, reported by the shoe in a
contradiction, left in the shoe at its end) was never shown at all: they stay face down.

**Nothing new leaks by default.** Every event kind is listed in `EVENTS` with each of its
fields and how the pit sees it; a field not listed is left out (named in `withheld`), and a
kind not listed keeps only its `type` (its fields all named in `withheld`). Even a listed
field is walked for anything that looks like a card: a card code under a card's key, a card's
text ("Ah", also inside free text: masked "??"), a reader ID (a barcode names its card); each
is kept only if that card is public. So a new event kind, or a new field, is face down in the
pit until someone says how the pit sees it (tests/daemon/test_pit_view_every_event.py fails
until then: it walks every kind the code can emit).

Pure functions over the JSON the daemon already builds (codes, before `cardtext` turns them
into text); the caller says what is public (`public_of`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping

from cardshoe.cards import card_text

#: What a face-down card shows in the pit view.
FACE_DOWN = None
#: A face-down card's text inside free text (a flag's detail, a message).
MASK = "??"
#: Where the names of the fields a pit reader does not get are listed.
WITHHELD = "withheld"

_CARD_TEXT = re.compile(r"\b[2-9TJQKA][cdhs]\b")
_EXACT_CARD = re.compile(r"[2-9TJQKA][cdhs]")
#: Place kinds whose cards are turned when the round is settled (not burns, not the security card).
_TURNED_AT_SETTLEMENT = frozenset({"seat", "dealer", "community", "discard"})


@dataclass(frozen=True)
class Public:
    """What of one round is public now: the shoe indices (of its shoe session `shoe_no`)
    shown face up, their card codes and their reader IDs."""

    shoe_no: int | None
    indices: frozenset[int]
    codes: frozenset[int]
    readers: frozenset[str]
    hidden_readers: frozenset[str] = frozenset()
    """The reader IDs of the round's face-down cards, masked where free text names them (a
    foreign card's flag says "reader ...")."""

    def index(self, index: Any, shoe_no: Any = None) -> bool:
        """Whether the card at shoe `index` (of session `shoe_no`, if said) is public."""
        if not isinstance(index, int) or isinstance(index, bool) or index not in self.indices:
            return False
        return shoe_no is None or shoe_no == self.shoe_no

    def code(self, code: Any) -> bool:
        """Whether card `code` is one of the public cards."""
        return isinstance(code, int) and not isinstance(code, bool) and code in self.codes

    def text(self, text: str) -> bool:
        """Whether card text `text` ("Ah") is one of the public cards'."""
        return text in self.texts

    @cached_property
    def texts(self) -> frozenset[str]:
        """The public cards' texts."""
        return frozenset(card_text(c) for c in self.codes if 0 <= c < 52)


#: Nothing public: the view of what belongs to no round.
NOTHING = Public(None, frozenset(), frozenset(), frozenset())


def _place_key(place: Any) -> tuple[Any, Any, Any] | None:
    if not isinstance(place, dict):
        return None
    return place.get("kind"), place.get("seat"), place.get("number")


def public_of(snapshot: Mapping[str, Any], face_up_places: set[tuple[str, int, int]]) -> Public:
    """What is public of the round `snapshot` (the engine's snapshot, as `GET /rounds/{id}`
    has it before cards become text), given the places its procedure deals face up as
    (kind, seat, number)."""
    placements = {int(k): p for k, p in (snapshot.get("placements") or {}).items() if isinstance(p, dict)}
    by_place = {_place_key(p): k for k, p in placements.items()}
    indices = {k for k, p in placements.items() if _place_key(p) in face_up_places}
    for exposure in snapshot.get("exposures") or []:  # seen at the table (5.4, 6.1)
        if not isinstance(exposure, dict):
            continue
        if isinstance(exposure.get("shoe_index"), int):
            indices.add(exposure["shoe_index"])
        at = by_place.get(_place_key(exposure.get("place")))
        if at is not None:
            indices.add(at)
    if snapshot.get("status") == "settled" and snapshot.get("void") is None:
        # The hands are turned to settle them; burns and the security card are not.
        indices |= {k for k, p in placements.items() if p.get("kind") in _TURNED_AT_SETTLEMENT}
    cards = {int(k): c for k, c in (snapshot.get("cards") or {}).items() if isinstance(c, dict)}
    codes = {c["code"] for k, c in cards.items() if k in indices and isinstance(c.get("code"), int)}
    readers = {str(c["reader_id"]) for k, c in cards.items() if k in indices and c.get("reader_id")}
    hidden = {str(c["reader_id"]) for k, c in cards.items() if k not in indices and c.get("reader_id")}
    shoe_nos = {c.get("shoe_no") for c in cards.values()}
    shoe_no = next(iter(shoe_nos)) if len(shoe_nos) == 1 else None
    return Public(shoe_no if isinstance(shoe_no, int) else None, frozenset(indices), frozenset(codes),
                  frozenset(readers), frozenset(hidden - readers))


# -- the walk that hides anything that looks like a card -----------------------------------

#: Keys whose integer value is a card code (in a card record, a frame, an evidence entry).
_CODE_KEYS = frozenset({"code", "card"})
#: Keys whose value names a card the way the reader saw it (a barcode's text, an RFID UID).
_READER_KEYS = frozenset({"reader_id", "raw", "uid"})
#: Keys holding a list of card codes.
_CODE_LIST_KEYS = frozenset({"burns", "security", "never_dealt", "dealt", "reference", "cards"})


def _text(value: str, public: Public) -> str | None:
    """A string as the pit sees it: a face-down card's text is no text at all; inside free
    text each face-down card's text, and each reader ID of one, becomes "??"."""
    if _EXACT_CARD.fullmatch(value):
        return value if public.text(value) else FACE_DOWN
    for reader in public.hidden_readers:
        if reader in value:  # as a word of its own: a reader ID is no part of another word
            value = re.sub(rf"(?<![A-Za-z0-9]){re.escape(reader)}(?![A-Za-z0-9])", MASK, value)
    if not _CARD_TEXT.search(value):
        return value
    return _CARD_TEXT.sub(lambda m: m.group() if public.text(m.group()) else MASK, value)


def _codes(cards: list[Any], public: Public) -> list[Any]:
    """A list of cards (codes or texts) with each face-down one `null`."""
    out: list[Any] = []
    for c in cards:
        if isinstance(c, int) and not isinstance(c, bool):
            out.append(c if public.code(c) else FACE_DOWN)
        elif isinstance(c, str):
            out.append(_text(c, public))
        else:
            out.append(scrub(c, public))
    return out


def scrub(value: Any, public: Public, shoe_no: Any = None) -> Any:
    """`value` with everything that looks like a face-down card removed: a record with a shoe
    `index` keeps its `code`/`card` and reader ID only if that index is public (a record
    without one: only if the code is a public card's); a list of cards keeps the public ones;
    card texts, and the reader IDs of the round's face-down cards, are masked (`_text`)."""
    if isinstance(value, dict):
        record_shoe = value.get("shoe_no", shoe_no)
        index = value.get("index")
        has_index = isinstance(index, int) and not isinstance(index, bool)
        shown = has_index and public.index(index, record_shoe)
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in _CODE_KEYS and isinstance(v, int) and not isinstance(v, bool):
                out[k] = v if (shown if has_index else public.code(v)) else FACE_DOWN
            elif k in _CODE_KEYS and isinstance(v, str):
                out[k] = v if (shown if has_index else public.text(v)) else FACE_DOWN
            elif k in _READER_KEYS:
                if shown or (not has_index and isinstance(v, str) and v in public.readers):
                    out[k] = v
            elif k == "hands" and isinstance(v, dict):
                out[k] = {label: _codes(cards, public) if isinstance(cards, list) else scrub(cards, public, shoe_no)
                          for label, cards in v.items()}
            elif k in _CODE_LIST_KEYS and isinstance(v, list) and not has_index:
                out[k] = _codes(v, public)
            else:
                out[k] = scrub(v, public, record_shoe)
        return out
    if isinstance(value, list):
        return [scrub(v, public, shoe_no) for v in value]
    if isinstance(value, str):
        return _text(value, public)
    return value


# -- how each event kind is shown -----------------------------------------------------------

Rule = Callable[[Any, Mapping[str, Any], Public], Any]
_DROP = object()


def _plain(value: Any, _body: Mapping[str, Any], public: Public) -> Any:
    """A field that is no card (a count, an id, a rule, a seat): kept; its text still masked."""
    if isinstance(value, str):
        return _text(value, public)
    if isinstance(value, list):
        return [_plain(v, _body, public) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v, _body, public) for k, v in value.items()}
    return value


def _deep(value: Any, body: Mapping[str, Any], public: Public) -> Any:
    """A structure that may hold cards (records, hands, evidence): `scrub`."""
    return scrub(value, public, body.get("shoe_no"))


def _card_at_index(value: Any, body: Mapping[str, Any], public: Public) -> Any:
    """The card at the event's own `index`: shown only if that index is public."""
    return value if public.index(body.get("index"), body.get("shoe_no")) else FACE_DOWN


def _reader_at_index(value: Any, body: Mapping[str, Any], public: Public) -> Any:
    """The reader ID of the card at the event's `index`: left out unless it is public."""
    return value if public.index(body.get("index"), body.get("shoe_no")) else _DROP


def _record_at_index(value: Any, body: Mapping[str, Any], public: Public) -> Any:
    """A card record without an index of its own, for the card at the event's `index` (the
    card the journal holds there, in a contradiction): as public as that index."""
    if not isinstance(value, dict):
        return _deep(value, body, public)
    if public.index(body.get("index"), body.get("shoe_no")):
        return dict(value)
    return _never(value, body, public)


def _never(value: Any, body: Mapping[str, Any], public: Public) -> Any:
    """A card record that was never shown at the table (a card the shoe claims at an index the
    journal holds another at): its card and reader ID never reach the pit."""
    if not isinstance(value, dict):
        return FACE_DOWN
    return {k: (FACE_DOWN if k in _CODE_KEYS else _plain(v, body, public))
            for k, v in value.items() if k not in _READER_KEYS}


def _public_selection(value: Any, _body: Mapping[str, Any], _public: Public) -> Any:
    """Let It Ride's Magic Card: a card the system selects and the table displays (4.3): public."""
    return value


def _flag(value: Any, body: Mapping[str, Any], public: Public) -> Any:
    """An irregularity: its evidence (card records by shoe index) and free text scrubbed."""
    return scrub(value, public, body.get("shoe_no"))


_P: Rule = _plain


def _kind(plain: str, **special: Rule) -> dict[str, Rule]:
    fields: dict[str, Rule] = {name: _P for name in plain.split()}
    fields.update(special)
    return fields


#: Round events (`cardshoe.rounds.events`) carry their kind twice: `type` and `kind`.
_R = "type kind "
#: A referral's common fields (6.1): rule, rules, decision, detail.
_REFERRAL = "rule rules decision detail after_round round_open "
#: A refusal's fields (`outcome.error_body`).
_REFUSAL = "error message field rule "

#: Every event kind, and how the pit sees each field (`_plain`: no card; the others: cards).
EVENTS: dict[str, dict[str, Rule]] = {
    # -- the round (cardshoe.rounds.events) --
    "wager_accepted": _kind(_R + "seat wager amount"),
    "bets_closed": _kind(_R + "seats expected_cards"),
    "card_placed": _kind(_R + "index place public shoe_ms", card=_card_at_index, reader_id=_reader_at_index),
    "card_not_due": _kind(_R + "index shoe_ms", card=_card_at_index, reader_id=_reader_at_index),
    "hand_complete": _kind(_R + "position", cards=_deep),
    "count_checked": _kind(_R + "phase point expected dealt"),
    "flagged": _kind(_R, irregularity=_flag),
    "flag_resolved": _kind(_R, irregularity=_flag),
    "hands_rebuilt": _kind(_R + "flag placements"),
    "seat_voided": _kind(_R + "seat rules reason"),
    "round_voided": _kind(_R + "rules reason"),
    "decision_recorded": _kind(_R + "seat choice"),
    "exposure_recorded": _kind(_R + "source place shoe_index during_deal counted"),
    "round_settled": _kind(_R + "void"),
    # A card out of the shoe for a round already void: recorded in it, dealt into no hand (5.1.1).
    "card_after_void": _kind(_R + "index shoe_ms void_rules " + _REFERRAL, card=_card_at_index,
                             reader_id=_reader_at_index, evidence=_deep),
    # -- the table core (cardshoe.daemon.core and its parts) --
    "internal_error": _kind("type action shoe frame " + _REFUSAL),
    "input_refused": _kind("type action op " + _REFUSAL),
    "shoe_input_refused": _kind("type op " + _REFUSAL),
    "table_setup": _kind("type name game seats dealing method limits jackpot_reset core_version round_scope"),
    "jackpot_pool": _kind("type amount"),
    "progressive_selected": _kind("type lucky_seat rules", magic_card=_public_selection),
    "round_opened": _kind("type round_id game dealing method positions"),
    "settlement_failed": _kind("type round_id " + _REFUSAL),
    "settlement": _kind("type round_id", settlement=_deep),
    "shoe_frame_held": _kind("type shoe frame key shoe_ms after_index waiting_for shoe_no"),
    "shoe_fault": _kind("type shoe code name active detail shoe_ms"),
    "shoe_hello": _kind("type shoe boot fw fw_hash reset_cause shoe_no deck_id dealt integrity faults"),
    "shoe_session_adopted": _kind("type shoe shoe_no next_index"),
    "shoe_session_mismatch": _kind("type shoe shoe_no expected_shoe_no rule"),
    "cards_requested": _kind("type shoe shoe_no from_index dealt"),
    "held_frames_released": _kind("type shoe shoe_no frames waits_for_up_to reason rule"),
    "card_from_other_session": _kind("type shoe shoe_no index expected_shoe_no rule"),
    # A shoe session this journal did not start (issue 20 item 3): its cards were never shown.
    "shoe_loading": _kind("type shoe shoe_no deck_id"),
    "shoe_session_foreign": _kind("type shoe shoe_no journal_shoe_no seen_in " + _REFERRAL, evidence=_deep),
    "card_from_foreign_session": _kind("type shoe shoe_no index journal_shoe_no " + _REFERRAL, evidence=_deep),
    "key_from_foreign_session": _kind("type shoe key key_name shoe_no journal_shoe_no evidence " + _REFERRAL),
    # The shoe reset itself after an exception (issue 26): where, what, the command it ran.
    "shoe_crash": _kind("type shoe boot where error count cmd_type command cmd_epoch cmd_seq text message"),
    "card_not_durable": _kind("type shoe shoe_no index"),
    "card_outside_round": _kind("type shoe shoe_no index " + _REFERRAL, evidence=_deep),
    "key_outside_round": _kind("type shoe key key_name shoe_no evidence " + _REFERRAL),
    "key_after_void": _kind("type shoe key key_name shoe_no void_rules evidence " + _REFERRAL),
    "deck_fault_outside_round": _kind("type shoe shoe_no faults " + _REFERRAL, evidence=_deep),
    "shoe_key": _kind("type shoe key shoe_ms"),
    "deck_status": _kind("type shoe shoe_no reason dealt remaining integrity duplicates foreign unread missing"),
    "shoe_loaded": _kind("type shoe shoe_no deck_id reconciled"),
    "shoe_count_backwards": _kind("type shoe shoe_no hello_dealt journal_holds missing_from_shoe fault rules "
                                  "message"),
    "shoe_cards_unrecoverable": _kind("type shoe shoe_no announced hello_dealt journal_holds missing_indices fault "
                                      "rules message"),
    "shoe_card_conflict": _kind("type shoe shoe_no index shoe_ms fault rules message", held=_record_at_index,
                                reported=_never),
    "card_deck_mismatch": _kind("type shoe shoe_no index card_deck loaded_deck shoe_flagged_foreign fault rules "
                                "message", code=_card_at_index, raw=_reader_at_index),
    # The shoe's order so far and the reference order, as cards: face down unless public.
    "shuffle_alarm": _kind("type shoe shoe_no deck_id round_id rule rules decision detail cards threshold finding "
                           "findings", evidence=_deep),
    # -- the daemon, the link, the shoe's commands (journal kinds daemon, link, reject, command) --
    "daemon_started": _kind("type epoch port restored_inputs rebuild_mismatches journal_restored"),
    "daemon_stopped": _kind("type epoch"),
    "frame_rejected": _kind("type reason detail note boot seq frame_type flags"),
    # A frame of a shoe not yet proven live: what it says is not shown (never on the stream).
    "frame_held": _kind("type reason note detail boot seq frame_type flags", message=_deep),
    "rejections_summary": _kind("type reason samples unsampled counts shoes other_shoes seconds"),
    "shoe_version_mismatch": _kind("type shoe shoe_version daemon_version message"),
    "shoe_challenged": _kind("type shoe epoch seq"),
    "shoe_verified": _kind("type shoe boot epoch seq held"),
    "link_up": _kind("type detail at_ns"),
    "link_lost": _kind("type detail at_ns"),
    "shoe_silent": _kind("type shoe port since_ns heartbeat_ms message"),
    "shoe_silent_cleared": _kind("type shoe silent_since_ns"),
    "window_adopted": _kind("type shoe boot seq"),
    "command_reply": _kind("type command epoch seq sends status detail"),
    "command_abandoned": _kind("type command epoch seq sends reason crashes"),
    "command_withheld": _kind("type command reason"),
    **{kind: _kind("type shoe command epoch seq seqs crashes bound shoe_count error where text boot since_ns "
                   "reason message")
       for kind in ("shoe_crash_loop", "shoe_crash_loop_cleared")},
    # The ACK path (issue 20 item 4) and a load that did not load (item 3).
    "ack_path": _kind("type shoe boot seq resends since_ns message"),
    "ack_path_cleared": _kind("type shoe boot seq why since_ns"),
    **{kind: _kind("type shoe shoe_no deck_id reason since_ns message") for kind in ("shoe_load", "shoe_load_failed")},
    "new_shoe": _kind("type shoe_no deck_id parts scheme"),
    "new_shoe_already_loaded": _kind("type shoe_no deck_id"),
    "new_shoe_refused": _kind("type shoe_no deck_id refused"),
    "new_shoe_again": _kind("type shoe_no deck_id refused"),
    "maintenance_requested": _kind("type supervisor reason"),
    "evidence_written": _kind("type round_id reason path sha256 public_key"),
    "evidence_failed": _kind("type round_id error message"),
    "evidence_exported": _kind("type round_id roles via"),
    # A supervisor saw a referral outside a round (issue 22; reading 79): who, and which.
    "referral_acknowledged": _kind("type entry referral rules by note"),
    # -- who deals, and the shift's hold alarm (issue 23: cardshoe.daemon.staff, cardshoe.report) --
    "staff_signed_on": _kind("type role staff_id replaced"),
    "staff_signed_off": _kind("type role staff_id"),
    "player_seated": _kind("type seat player_id replaced"),
    "player_left": _kind("type seat player_id"),
    "round_staff": _kind("type round_id dealer supervisor players"),
    **{kind: _kind("type group key row direction rounds handle actual theoretical sd z threshold tests "
                   "alpha_family alpha_test looks min_rounds covariance message since_ns")
       for kind in ("hold_alarm", "hold_alarm_cleared", "hold")},
    # -- the gaming day's rollover (issue 25: cardshoe.daemon.gamingday, .handover); no card in any --
    "shoe_handed_over": _kind("type shoe shoe_no next_index to_day to_journal"),
    "shoe_taken_over": _kind("type shoe shoe_no deck_id next_index from_day from_journal"),
    "day_handover": _kind("type direction to_day to_journal from_day from_journal shoes staff jackpot_pool"),
    "day_opened": _kind("type gaming_day day_ends file previous"),
    "day_closed": _kind("type gaming_day head rounds settled next_day next_file next_journal_id"),
    "clock_stepped": _kind("type step_ns since_ns message"),
    "clock_stepped_cleared": _kind("type since_ns"),
    **{kind: _kind("type day due since_ns message") for kind in ("gaming_day", "day_rollover_failed")},
    # -- the floor (journal kind floor; shown live) --
    "progressive_refused": _kind("type round_id message last_error"),
    "void_refused": _kind("type round_id message error field seq"),
    "settle_sent": _kind("type round_id link"),
    "settle_withdrawn": _kind("type round_id link"),
    "settle_refused": _kind("type round_id message error field"),
    "floor_mismatch": _kind("type round_id rule table_pool_after floor_pool_after"),
    # -- /status alarms (cardshoe.daemon.daemon.Daemon.current_alarms) --
    "port_unavailable": _kind("type port detail since_ns message"),
    "shuffle": _kind("type shoe shoe_no deck_id round_id rule finding message"),
    "shoe_session": _kind("type shoe shoe_no journal_shoe_no rule message"),
    "floor_journal": _kind("type table message"),
    # -- the stream's own marker --
    "overflow": _kind("type"),
}


def pit_body(body: Mapping[str, Any], public: Public) -> dict[str, Any]:
    """An event body (journaled, with its `type`), an alarm or a settlement entry as the pit
    sees it: each field by its kind's rule in `EVENTS`, the fields no rule names left out and
    named in `withheld` (a kind not listed keeps only its `type`): `withheld` names what this
    version of the pit view does not know, never a face-down card's field."""
    kind = str(body.get("type"))
    rules = EVENTS.get(kind, {})
    out: dict[str, Any] = {}
    withheld: list[str] = []
    for name, value in body.items():
        rule = rules.get(name)
        if name == "type":
            out[name] = kind
        elif rule is None:
            withheld.append(name)
        elif rule is _public_selection:
            out[name] = value
        elif rule is _deep or rule is _flag:
            # Walked as a field of that name: `hands`, `cards`, `burns` are cards by their key.
            out[name] = scrub({name: value}, public, body.get("shoe_no"))[name]
        else:
            shown = rule(value, body, public)
            if shown is not _DROP:  # a face-down card's reader ID: not sent (as in a round's cards)
                out[name] = scrub(shown, public, body.get("shoe_no"))
    if withheld:
        out[WITHHELD] = sorted(withheld)
    return out


#: The round's snapshot (`Round.snapshot`, `GET /rounds/{id}`): the fields the pit gets, all
#: walked by `scrub` (cards by shoe index, hands and burns by card) but the Magic Card, which
#: the table displays (LIR 4.3).
ROUND = frozenset({"round_id", "game", "device", "method", "status", "wagers", "magic_card", "lucky_seat",
                   "procedure", "placements", "cards", "not_due", "hands", "burns", "security", "exposures",
                   "decisions", "absent", "irregularities", "void", "void_seats", "jackpot_pool", "settlement",
                   # the table page's additions (issue 22): seats as they stand, who owes a
                   # decision, the round's refused inputs (walked like the rest)
                   "seat_state", "owing", "refusals"})
_ROUND_PUBLIC = frozenset({"magic_card"})


def pit_round(snapshot: Mapping[str, Any], public: Public) -> dict[str, Any]:
    """The round `snapshot` as the pit sees it: every face-down card's value `null`, its
    reader ID left out; fields not in `ROUND` left out and named in `withheld`."""
    out: dict[str, Any] = scrub({k: v for k, v in snapshot.items() if k in ROUND and k not in _ROUND_PUBLIC}, public)
    out.update({k: v for k, v in snapshot.items() if k in _ROUND_PUBLIC})
    withheld = sorted(k for k in snapshot if k not in ROUND)
    if withheld:
        out[WITHHELD] = withheld
    return out


#: Games whose hands are three cards, ranked by the Three Card Poker table (TCP 3.16, Megalink
#: and Xtreme 3.14); Three Card Poker v5 ranks A-K-Q suited as a Royal Flush (TCP 3.16.1).
THREE_CARD = {"three-card-poker": True, "megalink-three-card-poker": False,
              "megalink-three-card-poker-xtreme": False}


def hand_classes(snapshot: Mapping[str, Any]) -> dict[str, str]:
    """Each complete hand's class by position label, from the cards `snapshot` shows (a hand
    with a face-down card has none): three cards in the three-card games, else the best five
    of the hand and the community cards (Let It Ride 3.21, Stud 3.11)."""
    from cardshoe.poker import best5, evaluate3

    game = str(snapshot.get("game"))
    hands = snapshot.get("hands") or {}
    community = [c for c in hands.get("community", []) if isinstance(c, int)]
    out: dict[str, str] = {}
    for label, cards in hands.items():
        if label in ("community", "discard") or not cards or not all(isinstance(c, int) for c in cards):
            continue
        try:
            if game in THREE_CARD and len(cards) == 3:
                out[label] = evaluate3(cards, royal=THREE_CARD[game]).name
            elif game not in THREE_CARD and len(cards) + len(community) >= 5:
                out[label] = best5(list(cards) + community).name
        except ValueError:
            continue  # a duplicate or foreign card: the flag says so; no class
    return out




def evidence_face_down(doc: Mapping[str, Any], public: Public) -> list[str]:
    """What of a round's evidence file (`cardshoe.evidence`) the pit may not see, named: its
    cards and frames whose shoe index is face down, and journal entries that carry more than
    the pit view of them shows. A signed file cannot be shown in part, so the pit gets it only
    when this is empty (docs/api.md, "Evidence")."""
    body = doc.get("evidence")
    if not isinstance(body, dict):
        return ["the file"]
    out: list[str] = []
    for card in body.get("cards") or []:
        if isinstance(card, dict) and not public.index(card.get("index"), card.get("shoe_no")):
            out.append(f"card {card.get('index')}")
    for frame in body.get("frames") or []:
        message = frame.get("message") if isinstance(frame, dict) else None
        if isinstance(message, dict) and message.get("type") in ("CARD", "UNREAD") \
                and not public.index(message.get("index"), message.get("shoe_no")):
            out.append(f"frame {frame.get('entry')} (card {message.get('index')})")
    for entry in body.get("journal") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("body"), dict):
            continue
        data = entry["body"]
        if entry.get("kind") == "frame":
            if data.get("type") in ("CARD", "UNREAD") and not public.index(data.get("index"), data.get("shoe_no")):
                out.append(f"journal entry {entry.get('id')} (card {data.get('index')})")
        elif entry.get("kind") in ("input", "checkpoint"):
            continue  # the controller's inputs and the state's summary name no face-down card
        elif (pit_body(data, public) if "type" in data else scrub(data, public)) != data:
            out.append(f"journal entry {entry.get('id')} ({data.get('type', entry.get('kind'))})")
    return out


__all__ = ["EVENTS", "FACE_DOWN", "MASK", "NOTHING", "Public", "ROUND", "WITHHELD", "evidence_face_down",
           "hand_classes", "pit_body", "pit_round", "public_of", "scrub"]
