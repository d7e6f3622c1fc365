"""The pit view: a round and its events as they are public at the table.

A card's value is public when the game shows it: a place the dealing procedure deals face
up (Singapore Stud's dealer up card, `DealingProcedure.public_places`), a card recorded as
exposed, or every card once the round is settled (the hands are turned for settlement).
Until then the pit view carries the card's place but not its value: not hidden by the
page, absent from the JSON, so it never reaches a browser's DOM (docs/rule-readings.md,
"The pit view"). A voided round's cards stay face down: they are collected unseen.

Pure functions over the JSON the API already serves; the caller passes what is public.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cardshoe.cards import card_text

#: What a face-down card shows in the pit view.
FACE_DOWN = None


@dataclass(frozen=True)
class Public:
    """What of a round is public: `all` once settled, else the shoe indices shown face up."""

    all: bool
    indices: frozenset[int]
    codes: frozenset[int]


def public_of(snapshot: dict[str, Any], face_up_places: set[tuple[str, int, int]]) -> Public:
    """What is public of the round `snapshot` (the API's `GET /rounds/{id}` JSON), given the
    places its procedure deals face up as (kind, seat, number)."""
    if snapshot.get("status") == "settled" and snapshot.get("void") is None:
        return Public(True, frozenset(), frozenset())
    indices: set[int] = set()
    for key, place in (snapshot.get("placements") or {}).items():
        if isinstance(place, dict) and (place.get("kind"), place.get("seat"), place.get("number")) in face_up_places:
            indices.add(int(key))
    by_place = {(p.get("kind"), p.get("seat"), p.get("number")): int(k)
                for k, p in (snapshot.get("placements") or {}).items() if isinstance(p, dict)}
    for exposure in snapshot.get("exposures") or []:  # seen at the table (5.4, 6.1)
        if not isinstance(exposure, dict):
            continue
        if isinstance(exposure.get("shoe_index"), int):
            indices.add(exposure["shoe_index"])
        place = exposure.get("place")
        if isinstance(place, dict) and (key := (place.get("kind"), place.get("seat"), place.get("number"))) in by_place:
            indices.add(by_place[key])
    codes: set[int] = set()
    for key, card in (snapshot.get("cards") or {}).items():
        if int(key) in indices and isinstance(card, dict) and isinstance(card.get("code"), int):
            codes.add(card["code"])
    return Public(False, frozenset(indices), frozenset(codes))


def scrub(value: Any, public: Public, *, hidden_texts: frozenset[str] = frozenset()) -> Any:
    """`value` (snapshot, event body, flag) with every face-down card value removed.

    A dict with a shoe `index` loses `code`/`card` and `reader_id` (the barcode names the
    card) unless that index is public; a `hands` map and a hand event's `cards` keep only
    public codes; card texts of face-down cards are masked in free text (flag details)."""
    if public.all:
        return value
    return _scrub(value, public, hidden_texts, None)


def hidden_texts_of(snapshot: dict[str, Any], public: Public) -> frozenset[str]:
    """The card texts ("Ah") of the round's face-down cards, to mask in free text."""
    out: set[str] = set()
    for key, card in (snapshot.get("cards") or {}).items():
        if int(key) not in public.indices and isinstance(card, dict) and isinstance(card.get("code"), int):
            if card["code"] not in public.codes:
                out.add(card_text(card["code"]))
    return frozenset(out)


def _scrub(value: Any, public: Public, texts: frozenset[str], key: str | None) -> Any:
    if isinstance(value, dict):
        index = value.get("index")
        shown = isinstance(index, int) and index in public.indices
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in ("code", "card") and isinstance(index, int):
                out[k] = v if shown else FACE_DOWN
            elif k == "reader_id":
                if shown:
                    out[k] = v
            elif k in ("burns", "security") and isinstance(v, list):
                out[k] = _codes(v, public)  # card codes by burn number / the security card
            elif k == "hands" and isinstance(v, dict):
                out[k] = {label: _codes(cards, public) for label, cards in v.items()}
            elif k == "cards" and isinstance(v, list) and not isinstance(index, int):
                out[k] = _codes(v, public)
            elif k in ("cards", "placements") and isinstance(v, dict):
                out[k] = {kk: _scrub(vv, public, texts, k) for kk, vv in v.items()}
            else:
                out[k] = _scrub(v, public, texts, k)
        return out
    if isinstance(value, list):
        return [_scrub(v, public, texts, key) for v in value]
    if isinstance(value, str) and texts:
        return _mask(value, texts)
    return value


def _codes(cards: Any, public: Public) -> Any:
    if not isinstance(cards, list):
        return cards
    return [c if isinstance(c, int) and c in public.codes else (c if not isinstance(c, (int, str)) else FACE_DOWN)
            for c in cards]


#: Games whose hands are three cards, ranked by the Three Card Poker table (TCP 3.16, Megalink
#: and Xtreme 3.14); Three Card Poker v5 ranks A-K-Q suited as a Royal Flush (TCP 3.16.1).
THREE_CARD = {"three-card-poker": True, "megalink-three-card-poker": False,
              "megalink-three-card-poker-xtreme": False}


def hand_classes(snapshot: dict[str, Any]) -> dict[str, str]:
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


def _mask(text: str, texts: frozenset[str]) -> str:
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in sorted(texts)) + r")\b")
    return pattern.sub("??", text)


__all__ = ["FACE_DOWN", "Public", "hand_classes", "hidden_texts_of", "public_of", "scrub"]
