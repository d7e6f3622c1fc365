"""Cards as text at the API's edge: `"As"`, never the codes 0-51 the journal stores.

The journal, the rounds engine and replay keep integer codes (a byte on the wire, compared
byte for byte by `cardshoe replay`); a controller developer should not need the code table.
So the API converts every card it sends, in `GET /rounds/{id}`, in the answers of writes and
on the event stream, here and nowhere else (docs/api.md, "Cards").

Each card-bearing field is listed by name, per event type: a blind walk over every `code`
key would also turn a shoe fault's code (`shoe_fault`) into a card. A card the shoe could not
read, one of no deck (code 0xFF), or a face-down card in the pit view is `null`; the
`reader_id`/`raw` beside it still says what the reader saw.

Pure functions over the JSON the daemon already builds; they never change their input.
"""

from __future__ import annotations

from typing import Any, Mapping

from cardshoe.cards import card_text

#: A card's text as the API sends it: rank 2-9, T, J, Q, K, A, then suit c, d, h, s.
CARD_PATTERN = r"^[2-9TJQKA][cdhs]$"
#: A card's text as the API reads it (`cardshoe.cards.parse_card` also takes a lower-case rank).
CARD_INPUT_PATTERN = r"^[2-9TJQKAtjqka][cdhs]$"


def card_of(code: Any) -> str | None:
    """The text of card `code` ("As"); None for None, an unread card or a code that is no card."""
    if isinstance(code, int) and not isinstance(code, bool) and 0 <= code < 52:
        return card_text(code)
    return None


def cards_of(codes: Any) -> Any:
    """A list of codes as texts (None stays None); anything but a list is returned as it is."""
    if not isinstance(codes, list):
        return codes
    return [card_of(c) for c in codes]


def _record(value: Any) -> Any:
    """A card record (shoe card, evidence, held/reported frame): `code` becomes `card`."""
    if not isinstance(value, dict) or "code" not in value:
        return value
    out = {k: v for k, v in value.items() if k != "code"}
    out["card"] = card_of(value["code"])
    return out


def flag_text(flag: Any) -> Any:
    """An irregularity (flag) with its evidence's cards as text."""
    if not isinstance(flag, dict):
        return flag
    out = dict(flag)
    if isinstance(out.get("evidence"), list):
        out["evidence"] = [_record(e) for e in out["evidence"]]
    return out


def settlement_of(journaled: Any) -> Any:
    """The settlement itself from its journal entry's body (`{"type", "round_id",
    "settlement": {...}}`): the API shows it at `settlement`, not `settlement.settlement`."""
    if isinstance(journaled, dict) and isinstance(journaled.get("settlement"), dict):
        return journaled["settlement"]
    return journaled


def round_text(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """`GET /rounds/{id}`'s round (the engine's snapshot) with every card as text and the
    settlement un-nested. Apply after the pit view's scrub, which reads the codes."""
    out = dict(snapshot)
    if "magic_card" in out:
        out["magic_card"] = card_of(out["magic_card"])
    if isinstance(out.get("cards"), dict):
        out["cards"] = {k: _record(v) for k, v in out["cards"].items()}
    if isinstance(out.get("hands"), dict):
        out["hands"] = {k: cards_of(v) for k, v in out["hands"].items()}
    for key in ("burns", "security"):
        if key in out:
            out[key] = cards_of(out[key])
    if isinstance(out.get("irregularities"), list):
        out["irregularities"] = [flag_text(f) for f in out["irregularities"]]
    if "settlement" in out:
        out["settlement"] = settlement_of(out["settlement"])
    return out


#: Event types whose bodies carry cards, and how each is converted.
def _card_field(key: str) -> Any:
    def convert(body: dict[str, Any]) -> None:
        if key in body:
            body[key] = card_of(body[key])
    return convert


def _cards_field(key: str) -> Any:
    def convert(body: dict[str, Any]) -> None:
        if key in body:
            body[key] = cards_of(body[key])
    return convert


def _flag_field(body: dict[str, Any]) -> None:
    if "irregularity" in body:
        body["irregularity"] = flag_text(body["irregularity"])


def _evidence_field(body: dict[str, Any]) -> None:
    if isinstance(body.get("evidence"), list):
        body["evidence"] = [_record(e) for e in body["evidence"]]


def _after_void_fields(body: dict[str, Any]) -> None:
    # A card after a void (issue 20): the card itself and its evidence.
    _card_field("card")(body)
    _evidence_field(body)


def _never_dealt_field(body: dict[str, Any]) -> None:
    # A deck fault between rounds: the shoe's report of the cards never dealt (a list of codes).
    if isinstance(body.get("evidence"), list):
        body["evidence"] = [dict(e, never_dealt=cards_of(e["never_dealt"]))
                            if isinstance(e, dict) and "never_dealt" in e else e for e in body["evidence"]]


def _conflict_fields(body: dict[str, Any]) -> None:
    for key in ("held", "reported"):
        if key in body:
            body[key] = _record(body[key])


def _mismatch_fields(body: dict[str, Any]) -> None:
    if "code" in body:
        body["card"] = card_of(body.pop("code"))


_CONVERT = {
    "card_placed": _card_field("card"),
    "card_not_due": _card_field("card"),
    "hand_complete": _cards_field("cards"),
    "flagged": _flag_field,
    "flag_resolved": _flag_field,
    "card_outside_round": _evidence_field,
    "card_after_void": _after_void_fields,
    "deck_fault_outside_round": _never_dealt_field,
    "shoe_card_conflict": _conflict_fields,
    "card_deck_mismatch": _mismatch_fields,
    "progressive_selected": _card_field("magic_card"),
}

#: The event types `event_text` changes (the stream re-encodes only these).
CARD_EVENTS = frozenset(_CONVERT)


def event_text(body: Mapping[str, Any]) -> dict[str, Any]:
    """One event body (as journaled, with its `type`) with its cards as text."""
    out = dict(body)
    convert = _CONVERT.get(str(out.get("type")))
    if convert is not None:
        convert(out)
    return out


__all__ = ["CARD_EVENTS", "CARD_INPUT_PATTERN", "CARD_PATTERN", "card_of", "cards_of", "event_text", "flag_text",
           "round_text", "settlement_of"]
