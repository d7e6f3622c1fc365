"""The host believes only a consistent shoe (issue 10 item 4).

A shoe's frames are authenticated, but an authenticated shoe can still contradict what
the journal already holds: its flash log lost or rewritten, a firmware fault, or a key
in the wrong hands. Four contradictions are never dropped in silence; each becomes an
event carrying its evidence (what the journal holds, what the shoe says) and, when a
round is in play, a deck irregularity of that round, decided by the game's deck rules
(`cardshoe.rounds.procedures.GameRules`; docs/rule-readings.md says how each is read):

- **a count that goes backwards**: a HELLO of the session in use whose `dealt` is below
  the cards the journal holds of it. Cards the host placed are missing from the shoe's
  log: a *missing cards* irregularity (`extra_missing`: TCP family 5.1/5.8, LIR 5.2);
- **a different card at a held index**: a CARD or UNREAD at an index the journal holds
  (placed or waiting), different in type, code, deck or reader ID. Two cards claim one
  place in the order of the deal, so one of them is a card not accounted for: an *extra
  card* irregularity (`extra_missing`). An identical one is a resend, placed once (SPEC 4);
- **a count that no longer covers cards it counted**: a HELLO whose `dealt` is below what
  the shoe counted before (an earlier HELLO, a card's index) for cards the journal never
  received: those cards are in no record and never will be (`extra_missing`, as above);
- **a card of another deck**: a CARD whose `card_deck` is not the deck loaded for the
  session (NEW_SHOE or HELLO), even if the shoe did not flag it FOREIGN: taken exactly as
  a card the shoe flagged FOREIGN, a *foreign card* irregularity (`foreign`: 5.1) that
  voids the round, never as a good card of the deck.

Pure functions of the journaled inputs, so `cardshoe replay` derives the same events.
"""

from __future__ import annotations

from typing import Any, Mapping

from cardshoe.rounds.errors import ProcedureError
from cardshoe.rounds.procedures import game_rules

#: The identity of a card frame that a resend must repeat exactly.
Fingerprint = tuple[str, int | None, int | None, str]


def fingerprint(msg: Mapping[str, Any]) -> Fingerprint:
    """What a card frame says about the card at its index (type, code, deck, reader ID)."""
    if msg["type"] == "UNREAD":
        return ("UNREAD", None, None, "")
    return ("CARD", int(msg["code"]), int(msg["card_deck"]), str(msg["raw"]))


def _as_json(fp: Fingerprint) -> dict[str, Any]:
    kind, code, deck, raw = fp
    return {"type": kind, "code": code, "card_deck": deck, "raw": raw}


def deck_rules(game: str, which: str) -> list[str]:
    """The rule numbers of `game` for a deck irregularity (`foreign` or `extra_missing`)."""
    try:
        rules = game_rules(game)
    except ProcedureError:
        return ["6.1"]
    return list(getattr(rules, which))


def count_backwards(shoe: int, shoe_no: int, dealt: int, holds: int, game: str) -> dict[str, Any]:
    """The event of a HELLO counting fewer cards of the session than the journal holds."""
    return {"type": "shoe_count_backwards", "shoe": shoe, "shoe_no": shoe_no, "hello_dealt": dealt,
            "journal_holds": holds, "missing_from_shoe": holds - dealt, "fault": "missing",
            "rules": deck_rules(game, "extra_missing"),
            "message": f"shoe {shoe}'s HELLO counts {dealt} cards of shoe {shoe_no}; the journal holds {holds}"}


def cards_unrecoverable(shoe: int, shoe_no: int, announced: int, dealt: int, holds: int,
                        game: str) -> dict[str, Any]:
    """The event of a HELLO whose count no longer covers cards the shoe counted before
    (`announced`: an earlier HELLO, a card's index) that the journal never received: they are
    in neither the shoe's log nor the journal, so they will never be placed."""
    first = max(dealt, holds) + 1
    return {"type": "shoe_cards_unrecoverable", "shoe": shoe, "shoe_no": shoe_no, "announced": announced,
            "hello_dealt": dealt, "journal_holds": holds, "missing_indices": [first, announced], "fault": "missing",
            "rules": deck_rules(game, "extra_missing"),
            "message": f"shoe {shoe} counted {announced} cards of shoe {shoe_no}; its HELLO now counts {dealt} "
                       f"and the journal holds {holds}: cards {first}-{announced} are lost"}


def card_conflict(shoe: int, shoe_no: int, index: int, held: Fingerprint, msg: Mapping[str, Any],
                  game: str) -> dict[str, Any] | None:
    """The event of a card frame contradicting the card held at its index; None when identical."""
    got = fingerprint(msg)
    if got == held:
        return None
    return {"type": "shoe_card_conflict", "shoe": shoe, "shoe_no": shoe_no, "index": index,
            "held": _as_json(held), "reported": _as_json(got), "shoe_ms": msg.get("t_ms"), "fault": "extra",
            "rules": deck_rules(game, "extra_missing"),
            "message": f"shoe {shoe} reports a different card at index {index} of shoe {shoe_no}, "
                       "which the journal already holds"}


def deck_mismatch(shoe: int, msg: Mapping[str, Any], loaded_deck: int, game: str) -> dict[str, Any] | None:
    """The event of a CARD whose deck is not the loaded deck's; None when it is (or is unknown)."""
    if msg["type"] != "CARD" or not loaded_deck:
        return None
    card_deck = int(msg["card_deck"])
    if card_deck == loaded_deck or int(msg["code"]) == 0xFF:
        return None  # the right deck, or already a card of no deck (code 0xFF): foreign as sent
    return {"type": "card_deck_mismatch", "shoe": shoe, "shoe_no": msg["shoe_no"], "index": msg["index"],
            "card_deck": card_deck, "loaded_deck": loaded_deck, "code": msg["code"], "raw": msg["raw"],
            "shoe_flagged_foreign": bool(int(msg["flags"]) & 2), "fault": "foreign",
            "rules": deck_rules(game, "foreign"),
            "message": f"card {msg['index']} of shoe {msg['shoe_no']} is of deck 0x{card_deck:08X}, "
                       f"the shoe is loaded with deck 0x{loaded_deck:08X}"}
