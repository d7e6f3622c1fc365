"""The bench's own ledger: every card it pushes through the shoe, and where the rules put it.

The bench must not take the daemon's word for anything, so it keeps its own record and its
own model of dealing, written from the house rule documents (cited below by number), not
from `cardshoe.rounds`:

- `dealing_order(game, dealing, method, seats)` is the order in which the dealer's cards go
  to the positions: the deal phase, and what is dealt after the decisions (Xtreme method B);
- `RoundLedger` records each physical card that left the shoe in a round (its code, its
  order, the time, what kind of card it was), the wagers and the decisions, and derives the
  hands by position from the order;
- `compare(ledger, api_round, journal_cards)` lines the bench's cards up with what the
  daemon's API shows and what its journal holds, card by card, and counts every lost,
  repeated, invented, wrongly read or misplaced card once, by kind;
- `round_file(ledger, ...)` writes the bench's own hands as a round file
  (docs/round-format.md) for `cardshoe settle`, so the daemon's settlement is compared with
  a settlement of what was really dealt, not of what the daemon thinks was dealt.

The comparison lines sequences up (`difflib`), not shoe indices: a card the shoe lost in a
power cut shifts the shoe's numbering of every later card, and the bench, like a dealer,
does not know the shoe's numbering; it knows the order of the cards on the felt.
"""

from __future__ import annotations

import difflib
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardshoe.cards import card_text, parse_card

# The games and the wagers that make a "playing position containing a wager" (3.7/3.8): the
# base wagers of rule 3.4 of each document. A progressive alone is not one (TCP 5.12.2;
# docs/rule-readings.md reading 40).
BASE_WAGERS: dict[str, frozenset[str]] = {
    "three-card-poker": frozenset({"ante", "pair_plus"}),                       # TCP 3.4
    "megalink-three-card-poker": frozenset({"ante", "pair_plus"}),              # MTCP 3.4
    "megalink-three-card-poker-xtreme": frozenset({"ante", "pair_plus", "six_card_bonus"}),  # XT 3.4
    "megalink-let-it-ride": frozenset({"one", "two", "dollar"}),                # LIR 3.4
    "megalink-singapore-stud-poker": frozenset({"ante"}),                       # SSP 3.4
}

#: Kinds of finding, in the order the totals print them.
FINDING_KINDS = ("lost", "lost_flagged", "repeated", "extra", "wrong_read", "misplaced")


class LedgerError(ValueError):
    """The bench was asked to model a deal its rules do not describe."""


@dataclass(frozen=True, order=True)
class Slot:
    """Where one card goes: `seat` (with its number), `dealer`, `community`, `burn`, `security`."""

    kind: str
    seat: int = 0

    def label(self) -> str:
        """`seat 3`, `dealer`, `community`, `burn`, `security`."""
        return f"seat {self.seat}" if self.kind == "seat" else self.kind


DEALER = Slot("dealer")
COMMUNITY = Slot("community")
BURN = Slot("burn")
SECURITY = Slot("security")


def dealt_seats(game: str, wagers: dict[int, dict[str, int]]) -> list[int]:
    """The seats dealt to: those holding a base wager, from the dealer's left (seat 1) on."""
    try:
        base = BASE_WAGERS[game]
    except KeyError:
        raise LedgerError(f"game {game!r}: the bench has no dealing model for it") from None
    return sorted(s for s, ws in wagers.items() if any(ws.get(w, 0) > 0 for w in base))


def dealing_order(game: str, dealing: str, method: str | None, seats: list[int]) -> tuple[list[Slot], list[Slot]]:
    """(the deal, what is dealt after the decisions), each a list of slots in shoe order.

    `seats` are the dealt seats, ascending: "starting from the Dealer's left and continuing
    clockwise" is seat 1 upwards (first base is at the dealer's left)."""
    players = [Slot("seat", s) for s in sorted(seats)]
    manual = dealing == "manual"

    def packets(n: int, *, dealer: bool) -> list[Slot]:
        # Automated device: a whole hand at a time to each position, then the dealer.
        out = [p for p in players for _ in range(n)]
        return out + [DEALER] * n if dealer else out

    def passes(n: int, *, dealer: bool) -> list[Slot]:
        # Manual device: one card to each position (and the dealer), repeated n times.
        one = players + ([DEALER] if dealer else [])
        return [p for _ in range(n) for p in one]

    if game == "three-card-poker":
        # TCP 3.7 (automated: three to each position, then three to the dealer) / 3.8 (manual).
        return (passes(3, dealer=True) if manual else packets(3, dealer=True)), []
    if game == "megalink-three-card-poker":
        # MTCP 3.7: as TCP, then three community cards of which the third (top) is burned
        # (reading 36); 3.8 manual: the passes, then two community cards, no burn.
        if manual:
            return passes(3, dealer=True) + [COMMUNITY, COMMUNITY], []
        return packets(3, dealer=True) + [COMMUNITY, COMMUNITY, BURN], []
    if game == "megalink-three-card-poker-xtreme":
        if manual:  # XT 3.8
            return passes(3, dealer=True) + [COMMUNITY, COMMUNITY], []
        community = [COMMUNITY, COMMUNITY, BURN]
        if method == "A":  # XT 3.7.1.1
            return packets(3, dealer=True) + community, []
        if method == "B":  # XT 3.7.2.1: the dealer's three after the players' decisions (3.9)
            return packets(3, dealer=False) + community, [DEALER] * 3
        if method == "C":  # XT 3.7.3.1: a security card under the dealer's hand first (reading 37)
            return [SECURITY] + [DEALER] * 3 + packets(3, dealer=False) + community, []
        raise LedgerError(f"Xtreme with an automated device needs method A, B or C (XT 3.7), not {method!r}")
    if game == "megalink-let-it-ride":
        # LIR 3.6-3.7: three to each betting area (no dealer's hand), then two community
        # cards. The document has no manual-device procedure (no "one card at a time" rule as
        # TCP 3.8 has), so a manual device deals by 3.6 too (reading 39).
        return packets(3, dealer=False) + [COMMUNITY, COMMUNITY], []
    if game == "megalink-singapore-stud-poker":
        # SSP 3.7 (five to each position, then five to the dealer) / 3.8 (five passes).
        return (passes(5, dealer=True) if manual else packets(5, dealer=True)), []
    raise LedgerError(f"game {game!r}: the bench has no dealing model for it")


@dataclass(frozen=True)
class Dealt:
    """One physical card that left the shoe, as the bench pushed it.

    `code` is the card (None: an unread card, its barcode unseen); `kind` is `card`,
    `unread`, `foreign` (another deck's barcode), `duplicate` (a second card with a code
    already dealt: an extra physical card), `misread` (a garbled read first) or `double`
    (the barcode read twice). `order` counts the cards of the shoe, from 1."""

    order: int
    code: int | None
    kind: str = "card"
    t: float = 0.0
    during: str = ""  # the fault in progress when it left: "power_cut", "restart", "unplug"


@dataclass
class RoundLedger:
    """What the bench did in one round: wagers, the cards it pushed, decisions, faults."""

    round_id: str
    game: str
    dealing: str
    method: str | None
    wagers: dict[int, dict[str, int]]
    cards: list[Dealt] = field(default_factory=list)
    after: list[Dealt] = field(default_factory=list)
    decisions: dict[int, str] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    supervisor_void: str | None = None  # the rule a bench supervisor voided the round under
    supervisor_returns: tuple[int, ...] = ()  # seats whose wagers a bench supervisor returned (6.1)

    def slots(self) -> tuple[list[Slot], list[Slot]]:
        """The deal's and the after-decisions' slots for this round's wagers."""
        return dealing_order(self.game, self.dealing, self.method, dealt_seats(self.game, self.wagers))

    def due(self) -> int:
        """How many cards the deal phase takes (the rules' count, not the daemon's)."""
        return len(self.slots()[0])

    def placed(self) -> list[tuple[Slot, Dealt]]:
        """Each physical card with the slot the rules give it, in shoe order.

        Every physical card takes the next slot, including a foreign or duplicate one: it is on
        the felt in that place (which is why the round is void, 5.1)."""
        deal, after = self.slots()
        return list(zip(deal, self.cards)) + list(zip(after, self.after))

    def hands(self) -> dict[str, list[int | None]]:
        """The bench's hands by position label (`seat 2`, `dealer`, `community`, `burn`, `security`)."""
        out: dict[str, list[int | None]] = {}
        for slot, card in self.placed():
            out.setdefault(slot.label(), []).append(card.code)
        return out

    def all_cards(self) -> list[Dealt]:
        """Every card of the round in shoe order."""
        return self.cards + self.after

    def card_fault(self) -> str | None:
        """The deck irregularity the bench injected, if any (the first)."""
        return next((c.kind for c in self.all_cards() if c.kind in ("foreign", "duplicate", "unread")), None)


@dataclass(frozen=True)
class Finding:
    """One thing the daemon got wrong about one card (or, `lost_flagged`, a loss it flagged)."""

    kind: str
    detail: str


def journal_cards(journal: Path, round_id: str) -> list[tuple[int, int | None, dict[str, Any]]]:
    """Every card the daemon journaled for the round (`card_placed`, and `card_not_due` and
    `card_after_void` with the place `not_due`, as the API shows a card in no place), as a
    list (index, card, place) in journal order, read with the standard library (read-only): a
    card journaled twice appears twice here, which a JSON object keyed by index could never show."""
    import json

    uri = Path(journal).resolve().as_uri() + "?mode=ro"
    out: list[tuple[int, int | None, dict[str, Any]]] = []
    conn = sqlite3.connect(uri, uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT body FROM entries WHERE kind = 'event' AND round_id = ? ORDER BY id",
                            (round_id,)).fetchall()
    finally:
        conn.close()
    for (body,) in rows:
        data = json.loads(body)
        if data.get("type") in ("card_placed", "card_not_due", "card_after_void"):
            card = data.get("card")
            place = dict(data.get("place") or {}) if data["type"] == "card_placed" else {"kind": "not_due"}
            out.append((int(data["index"]), None if card is None else int(card), place))
    return out


def api_cards(snapshot: dict[str, Any]) -> list[tuple[int, int | None, dict[str, Any]]]:
    """The round's cards as the API shows them: (index, code, place) in shoe-index order."""
    cards = snapshot.get("cards") or {}
    places = snapshot.get("placements") or {}
    out = []
    for key in sorted(cards, key=int):
        # The API sends each card as text ("As"); the journal's codes are compared as codes.
        text = cards[key].get("card") if isinstance(cards[key], dict) else cards[key]
        code = parse_card(text) if isinstance(text, str) else None
        out.append((int(key), code, dict(places.get(key) or {"kind": "not_due"})))
    return out


def _slot_of(place: dict[str, Any]) -> str:
    kind = str(place.get("kind", "?"))
    return f"seat {place.get('seat')}" if kind == "seat" else kind


def _flags_loss(snapshot: dict[str, Any]) -> bool:
    """Whether the daemon flagged the round for a card that may be lost in a power failure
    (5.16, referred to the shift manager under 6.1), or voided it."""
    if snapshot.get("void"):
        return True
    for f in snapshot.get("irregularities") or []:
        rules = [str(r) for r in f.get("rules", [])]
        if any(r.startswith("5.16") or r == "6.1" for r in rules):
            return True
    return False


def compare(ledger: RoundLedger, snapshot: dict[str, Any],
            journaled: list[tuple[int, int | None, dict[str, Any]]] | None = None,
            flags_from: dict[str, Any] | None = None) -> list[Finding]:
    """Every way the daemon's record of the round differs from the bench's, each card counted once.

    `snapshot` is `GET /rounds/{id}`; `journaled` the round's `card_placed` events from the
    journal (`journal_cards`), checked against the API too. `flags_from` is the round as it
    stood before the bench's supervisor did anything to it (default `snapshot`): only the
    daemon's own flags or void excuse a card lost in a power cut, never the bench's."""
    found: list[Finding] = []
    mine = [c.code for c in ledger.all_cards()]
    shown = api_cards(snapshot)
    theirs = [code for _, code, _ in shown]
    # Repeated: the journal holds a shoe index twice, or the daemon shows a code more often
    # than the bench dealt it.
    if journaled is not None:
        for index, n in sorted(Counter(i for i, _, _ in journaled).items()):
            if n > 1:
                found.append(Finding("repeated", f"shoe index {index} journaled {n} times"))
        j_codes = [(i, c) for i, c, _ in journaled]
        a_codes = [(i, c) for i, c, _ in shown]
        if sorted(set(j_codes)) != a_codes:
            only_j = sorted(set(j_codes) - set(a_codes))
            only_a = sorted(set(a_codes) - set(j_codes))
            found.append(Finding("extra" if only_j else "lost",
                                 f"the journal and the API differ: journal only {only_j}, API only {only_a}"))
    matched: list[tuple[int, int]] = []  # (bench position, daemon position)
    lost: list[int] = []
    sm = difflib.SequenceMatcher(a=mine, b=theirs, autojunk=False)
    mine_count = Counter(mine)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "equal":
            matched += [(a0 + k, b0 + k) for k in range(a1 - a0)]
            continue
        pairs = min(a1 - a0, b1 - b0) if op == "replace" else 0
        for k in range(pairs):
            got, want = theirs[b0 + k], mine[a0 + k]
            idx = shown[b0 + k][0]
            if got is not None and mine_count[got] > 0 and got != want and got in mine[:a0 + k]:
                found.append(Finding("repeated", f"shoe index {idx}: {_txt(got)} again (dealt once, before)"))
                lost.append(a0 + k)
            else:
                found.append(Finding("wrong_read", f"card {a0 + k + 1} of the round: the bench dealt {_txt(want)}, "
                                                   f"the daemon has {_txt(got)} at shoe index {idx}"))
                matched.append((a0 + k, b0 + k))
        lost += list(range(a0 + pairs, a1))
        for k in range(b0 + pairs, b1):
            got = theirs[k]
            idx = shown[k][0]
            if got is not None and got in mine:
                found.append(Finding("repeated", f"shoe index {idx}: {_txt(got)}, which the bench dealt once"))
            else:
                found.append(Finding("extra", f"shoe index {idx}: {_txt(got)}, which the bench never dealt"))
    all_cards = ledger.all_cards()
    flagged = _flags_loss(snapshot if flags_from is None else flags_from)
    for a in lost:
        card = all_cards[a]
        what = f"card {a + 1} of the round ({_txt(card.code)})"
        if card.during == "power_cut" and flagged:
            found.append(Finding("lost_flagged", f"{what}: lost in a power cut, the daemon flagged the round"))
        else:
            found.append(Finding("lost", f"{what}: not in the daemon's round"
                                         + (" (a power cut; the daemon did not flag the round)"
                                            if card.during == "power_cut" else "")))
    # Misplaced: only when every card is accounted for and the deal was regular (a deck
    # irregularity or a loss moves cards by rule or by consequence, and is counted above).
    if not any(f.kind in ("lost", "lost_flagged", "extra", "repeated") for f in found) and ledger.card_fault() is None:
        placed = ledger.placed()
        for a, b in matched:
            if a >= len(placed):
                found.append(Finding("misplaced", f"card {a + 1} of the round: the rules have no place for it"))
                continue
            want_slot = placed[a][0].label()
            got_slot = _slot_of(shown[b][2])
            if got_slot != want_slot:
                found.append(Finding("misplaced", f"card {a + 1} of the round ({_txt(mine[a])}, shoe index "
                                                  f"{shown[b][0]}): the rules put it at {want_slot}, the daemon at "
                                                  f"{got_slot}"))
    return found


def money(settlement: dict[str, Any] | None) -> dict[str, Any]:
    """The money of a settlement: void or not, and per seat the stake, paid, net and each
    wager's outcome and amounts (the parts a player is paid by; the rules' wording is not)."""
    if settlement is None:
        return {}
    seats = {}
    for s in settlement.get("seats", []):
        seats[int(s["seat"])] = {
            "stake": s.get("stake"), "paid": s.get("paid"), "net": s.get("net"),
            "wagers": {w["wager"]: (w.get("outcome"), w.get("stake"), w.get("paid"), w.get("net"))
                       for w in s.get("wagers", [])},
        }
    return {"void": settlement.get("void") is not None, "seats": seats, "totals": settlement.get("totals")}


def round_file(ledger: RoundLedger, *, rules_version: str, currency: str,
               limits: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The bench's own round as a round file (docs/round-format.md): its wagers, its decisions,
    the hands its dealing model gives the cards it pushed, and the irregularities it caused."""
    hands = ledger.hands()
    seats = []
    for seat, ws in sorted(ledger.wagers.items()):
        wagers = dict(ws)
        entry: dict[str, Any] = {"seat": seat, "wagers": wagers,
                                 "cards": [card_text(c) for c in hands.get(f"seat {seat}", []) if c is not None]}
        choice = ledger.decisions.get(seat)
        if choice is not None:
            key = "one" if ledger.game == "megalink-let-it-ride" else "ante"
            entry["decisions"] = {key: choice}
            if choice == "play":
                wagers["play"] = wagers["ante"]   # TCP 3.9.2: Play equals the Ante
            elif choice == "bet":
                wagers["bet"] = 2 * wagers["ante"]  # SSP 3.9.2
        seats.append(entry)
    out: dict[str, Any] = {
        "format": "cardshoe.round/1", "round_id": ledger.round_id, "game": ledger.game,
        "rules_version": rules_version, "currency": currency, "limits": limits, "seats": seats,
        "community": [card_text(c) for c in hands.get("community", []) if c is not None],
        "out_of_play": [{"card": card_text(c), "role": role} for role in ("burn", "security")
                        for c in hands.get(role, []) if c is not None],
        "exposures": [], "irregularities": [], "power_failure": None, "jackpot": None,
    }
    if ledger.game != "megalink-let-it-ride":
        out["dealer"] = {"cards": [card_text(c) for c in hands.get("dealer", []) if c is not None]}
    if ledger.dealing == "manual":
        out["dealing"] = "manual"
    elif ledger.method:
        out["dealing"] = ledger.method
    fault = ledger.card_fault()
    if fault in ("foreign", "unread"):
        # 5.1: a card not of the deck in use; an unread card cannot be shown to be of it (reading 44).
        out["irregularities"].append({"kind": "foreign_card", "note": f"the bench dealt a {fault} card"})
    elif fault == "duplicate":
        out["irregularities"].append({"kind": "extra_or_missing_cards", "note": "the bench dealt an extra card (5.1)"})
    if ledger.supervisor_void:
        out["irregularities"].append({"kind": "manager_decision", "effect": "void_round",
                                      "note": f"the bench's supervisor voided the round ({ledger.supervisor_void})"})
    elif ledger.supervisor_returns:
        out["irregularities"].append({"kind": "manager_decision", "effect": "return_wagers",
                                      "seats": sorted(ledger.supervisor_returns),
                                      "note": "the bench's supervisor returned these seats' wagers (6.1)"})
    return out


def _txt(code: int | None) -> str:
    return "an unread card" if code is None else card_text(code)


def now() -> float:
    """The ledger's clock (monotonic seconds)."""
    return time.monotonic()


__all__ = ["BASE_WAGERS", "COMMUNITY", "DEALER", "Dealt", "FINDING_KINDS", "Finding", "LedgerError",
           "RoundLedger", "SECURITY", "BURN", "Slot", "api_cards", "compare", "dealing_order", "dealt_seats",
           "journal_cards", "money", "now", "round_file"]
