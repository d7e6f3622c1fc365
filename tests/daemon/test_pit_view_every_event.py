"""The pit view never carries a face-down card, in any event kind (issue 20 item 5).

A supervisor's `/events` carried `shoe_card_conflict` with `held.card`, `held.raw`,
`reported.card` and `reported.raw`: the filter knew the fields of a few kinds and let every
other field through. Here one table is played through every event kind the code can emit
(found in the code itself: every `event(..., "kind")` of the daemon, every event class of
`cardshoe.rounds.events`, every `{"type": ...}` it journals or shows), on a real journal and a
real pseudo-terminal, and each is read the ways a pit can read it: with the supervisor's
token, with a supervisor's browser session and `?view=pit`, and with surveillance's token and
`?view=pit`; live on the stream, from the journal (the backlog), in `GET /rounds/{id}`,
`/rounds`, `/status` and the evidence file. A kind the code has and this test neither makes
nor lists (with the reason) fails the census test.

The test keeps its own ledger of every card it dealt (value, reader ID, round, place) and
decides what is public from the rules, not from the code under test (docs/rule-readings.md
55, 77): TCP 3.7 deals three cards to each wagered seat then three to the dealer, all face
down; 3.10 turns the dealer's hand and the players' to settle them, so the cards of a settled
round are public then; a card exposed at the table (5.4, 6.1) is public; a void round's cards
are collected unseen (5.1); a card out of the shoe between rounds, a card a shoe claims at an
index the journal holds another at, and the cards left in the shoe were never shown.
"""

from __future__ import annotations

import ast
import json
import re
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import payloads
import pytest
import wire
from daemon_harness import DECK_ID, ROOT, SERIAL, TOKEN, Table, journal, wait_for
from fastapi.testclient import TestClient

from cardshoe.api import create_app
from cardshoe.cards import DECK, card_text
from cardshoe.daemon.bus import streamable

TCP = "three-card-poker"
LIR = "megalink-let-it-ride"
SUP, SURV = "pit-supervisor-token-0123456789", "surveillance-token-0123456789a"
OTHER_DECK = 0x0BADDECC
POOL, RESET = 5_000_000, 1_000_000


# -- the census: every kind of event the code can emit --------------------------------------

def kinds_in_code() -> dict[str, set[str]]:
    """Every event type the daemon can journal, publish or show, by the file that makes it:
    `event(rid, "kind", ...)` calls, `{"type": "kind", ...}` bodies (the consistency events,
    the link's and the daemon's records, /status alarms), the event classes' `kind`, and the
    settlement entry, the kinds the shift's hold alarm is journaled as."""
    found: dict[str, set[str]] = {}
    files = sorted((ROOT / "host" / "daemon").glob("*.py")) + sorted((ROOT / "host" / "report").glob("*.py")) + [
        ROOT / "host" / "rounds" / "events.py", ROOT / "host" / "api" / "app.py"]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = str(path.relative_to(ROOT))
        nodes: list[ast.AST] = list(ast.walk(tree))
        if path.name == "app.py":  # the API's own records only (its other dicts are OpenAPI's)
            nodes = [n for call in nodes if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "record"
                     for arg in call.args for n in ast.walk(arg)]
        for node in nodes:
            if isinstance(node, ast.Call) and len(node.args) >= 2 \
                    and getattr(node.func, "id", getattr(node.func, "attr", None)) == "event":
                kind = node.args[1]
                for option in [kind.body, kind.orelse] if isinstance(kind, ast.IfExp) else [kind]:
                    if isinstance(option, ast.Constant):
                        found.setdefault(str(option.value), set()).add(name)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if not (isinstance(key, ast.Constant) and key.value == "type"):
                        continue
                    options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
                    for option in options:
                        if isinstance(option, ast.Constant) and isinstance(option.value, str):
                            found.setdefault(option.value, set()).add(name)
            elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "kind" \
                    and isinstance(node.value, ast.Constant):
                found.setdefault(str(node.value.value), set()).add(name)
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Derived" and node.args \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "settlement":
                found.setdefault("settlement", set()).add(name)
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "on_alarm" and node.args \
                    and isinstance(node.args[0], ast.Constant):  # the shift's hold alarm, journaled as its kind
                found.setdefault(str(node.args[0].value), set()).add(name)
    found.pop("CARD", None)  # the frame type in the core's docstring example, not an event
    return found


#: Kinds this test does not make happen, and why (each is checked where it is made).
NOT_MADE_HERE = {
    "settlement_failed": "only for a round an older daemon closed without a settlement (docs/api.md 500)",
    "evidence_failed": "the evidence writer failing (a key store that cannot be used): tests/daemon/test_daemon_evidence.py",
    "shoe_version_mismatch": "a HELLO of another protocol version: tests/daemon/test_daemon_link_faults.py",
    "new_shoe_refused": "a busy shoe refusing NEW_SHOE six times: tests/daemon/test_daemon_shoe_reload.py",
    "new_shoe_again": "the same, sent again at a heartbeat: tests/daemon/test_daemon_shoe_reload.py",
    "new_shoe_already_loaded": "a NEW_SHOE reissued across a shoe reboot: tests/daemon/test_daemon_shoe_reload.py",
    "shoe_session_adopted": "a session no journal loaded: tests/daemon/test_daemon_core_shoe_power.py",
    "seat_voided": "a manual deal's slip voiding a hand (5.7): tests/rounds",
    "progressive_refused": "the floor (issue 14): tests/floor/test_floor_table_e2e.py",
    "void_refused": "the floor: tests/floor/test_floor_void_sent.py",
    "settle_sent": "the floor: tests/floor/test_floor_table_e2e.py",
    "settle_withdrawn": "the floor: tests/floor/test_floor_void_sent.py",
    "settle_refused": "the floor: tests/floor/test_floor_table_e2e.py",
    "floor_mismatch": "the floor: tests/floor/test_floor_table_e2e.py",
    "card_from_other_session": "a journal written before sessions were owned (core_version 2) replayed: "
                               "tests/daemon/test_daemon_core_sessions.py",
    "shoe_session_mismatch": "the same, replayed: tests/daemon/test_daemon_core_sessions.py",
    "shoe_session": "a /status alarm while the shoe is in another journal's session (read here after it "
                    "left it): tests/daemon/test_daemon_core_sessions.py, tests/browser/test_table_page.py",
    "ack_path": "a shoe whose ACKs are dropped (issue 20 item 4): tests/daemon/test_daemon_seams.py",
    "ack_path_cleared": "the same, the outbox drained: tests/daemon/test_daemon_seams.py",
    "shoe_load": "a load the shoe refused or never answered: tests/daemon/test_daemon_seams.py",
    "shoe_load_failed": "the same, journaled: tests/daemon/test_daemon_seams.py",
    "shoe_crash": "a firmware that raises (issue 26): tests/daemon/test_daemon_crash_loop.py",
    "shoe_crash_loop": "a command that crashes the shoe twice: tests/daemon/test_daemon_crash_loop.py",
    "shoe_crash_loop_cleared": "the same, cleared: tests/daemon/test_daemon_crash_loop.py",
    "command_withheld": "a given-up command the daemon would send on its own: tests/daemon/test_daemon_crash_loop.py",
    "floor_journal": "a /status alarm while the floor refuses this journal (issue 21): tests/floor/test_floor_chain.py",
    # The gaming day's rollover (issue 25), read in the pit view there: tests/daemon/test_daemon_gaming_day.py.
    **{kind: "a gaming-day rollover: tests/daemon/test_daemon_gaming_day.py (the pit view of each checked there)"
       for kind in ("shoe_handed_over", "shoe_taken_over", "day_handover", "day_opened", "day_closed",
                    "clock_stepped", "clock_stepped_cleared", "gaming_day", "day_rollover_failed")},
}


# -- the test's own ledger of cards ---------------------------------------------------------

@dataclass
class Card:
    """One card this test made leave the shoe (or a shoe claim), and where it went."""

    code: int
    raw: bytes
    round_id: str | None
    place: str  # "hand" (a seat's or the dealer's), "outside" (no round), "claim" (a shoe's claim)
    exposed: bool = False

    @property
    def text(self) -> str:
        return card_text(self.code)


@dataclass
class Played:
    tables: list[Table]
    cards: list[Card]
    rounds: dict[str, str]  # round id -> "settled" or "void"
    live: list[dict[str, Any]]
    magic: int
    readers: dict[str, Any] = field(default_factory=dict)


def public_in(card: Card, round_id: str | None, played: Played) -> bool:
    """Whether `card` is public where an item of round `round_id` is read (the rules' view)."""
    if card.round_id is None or card.round_id != round_id:
        return False
    if card.exposed:
        return True  # seen at the table (5.4, 6.1)
    return card.place == "hand" and played.rounds.get(card.round_id) == "settled"  # turned (TCP 3.10)


_CODE_KEYS = {"code", "card"}
_CODE_LISTS = {"cards", "hands", "burns", "security", "never_dealt", "dealt", "reference"}


#: Integers under a card's key that are no card: a FAULT's code (SPEC 5).
NOT_CARDS = {("shoe_fault", "code")}


def leaks(value: Any, hidden: list[Card], where: str = "") -> list[str]:
    """Every face-down card of `hidden` that `value` shows: as text (alone or in free text),
    as a reader ID (hex or text), or as a code under a card's key."""
    out: list[str] = []
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if (value.get("type"), k) not in NOT_CARDS}
    texts = {c.text: c for c in hidden}
    raws = {c.raw.hex(): c for c in hidden} | {c.raw.decode("latin-1"): c for c in hidden}
    codes = {c.code: c for c in hidden}

    def walk(item: Any, path: str, key: str | None, in_list: str | None) -> None:
        if isinstance(item, dict):
            for k, v in item.items():
                walk(v, f"{path}.{k}", str(k), str(k) if isinstance(v, (list, dict)) else None)
        elif isinstance(item, list):
            for i, v in enumerate(item):
                walk(v, f"{path}[{i}]", key, in_list)
        elif isinstance(item, str):
            for text, card in texts.items():
                if item == text or re.search(rf"(?<![A-Za-z0-9]){text}(?![A-Za-z0-9])", item):
                    out.append(f"{where}{path}: {text} ({card.place} of {card.round_id})")
            for raw, card in raws.items():
                if raw and raw in item:
                    out.append(f"{where}{path}: reader ID of {card.text} ({card.place} of {card.round_id})")
        elif isinstance(item, int) and not isinstance(item, bool) and item in codes:
            if key in _CODE_KEYS or in_list in _CODE_LISTS:
                out.append(f"{where}{path}: code {item} = {codes[item].text}")

    walk(value, "", None, None)
    return out


def hidden_for(round_id: str | None, played: Played) -> list[Card]:
    return [c for c in played.cards if not public_in(c, round_id, played)]


def sse(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "data" in fields:
            out.append({"id": fields.get("id"), "event": fields["event"], "data": json.loads(fields["data"])})
    return out


# -- the table, played through every kind ---------------------------------------------------

class Dealer:
    """Deals the next cards of a new deck's order (so the shoe's order raises the shuffle
    alarm, 5.1), each with its own reader ID, and writes them into the ledger."""

    def __init__(self, table: Table, cards: list[Card]) -> None:
        self.table, self.cards, self.next = table, cards, 0

    def take(self) -> tuple[int, bytes]:
        code = DECK[self.next]
        self.next += 1
        return code, f"PV{self.next:02d}Q".encode()

    def deal(self, round_id: str | None, place: str, n: int = 1, **kwargs: Any) -> list[Card]:
        out = []
        for _ in range(n):
            code, raw = self.take()
            card = Card(code, raw, round_id, place)
            self.cards.append(card)
            out.append(card)
            self.table.shoe.deal(code, raw=raw, **kwargs)
        self.table.shoe.wait_acked()
        return out


def _frame(table: Table, mtype: int, payload: bytes) -> None:
    with table.shoe.lock:
        table.shoe._queue(mtype, payload)
    table.shoe.wait_acked()


def _claim(table: Table, index: int, code: int, raw: bytes) -> None:
    """The shoe's own, properly tagged CARD frame claiming card `code` at `index`."""
    buf = bytearray(wire.MAX_PAYLOAD)
    n = payloads.pack_card(buf, table.shoe.state.shoe_no, index, DECK_ID, code, 2, 0, 0, table.shoe.ms(), raw)
    _frame(table, wire.CARD, bytes(buf[:n]))


def _running_shoe(table: Table, *, boot: int, seq: int) -> None:
    """The table's shoe, powered on long ago: boot `boot`, frames up to `seq` gone, a heartbeat next."""
    shoe = table.shoe
    with shoe.lock:
        shoe.state.boot, shoe.seq, shoe.outbox, shoe.replies = boot, seq, [], {}
        shoe.rx = wire.Receiver(shoe.key, shoe.serial, shoe.state.host_epoch, shoe.state.host_seq)
    shoe._stop.clear()
    shoe._thread = threading.Thread(target=shoe._run, daemon=True)
    shoe._thread.start()
    table.shoe_on = True
    n = payloads.pack_heartbeat(shoe.payload, shoe.ms(), 0, 0)
    _frame(table, wire.HEARTBEAT, bytes(shoe.payload[:n]))


def _journal_types(table: Table) -> list[tuple[str, dict[str, Any]]]:
    with journal(table) as j:
        return [(e.kind, e.data()) for e in j.entries() if isinstance(e.data(), dict) and "type" in e.data()]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    stop = threading.Event()
    played = Played([], [], {}, [], DECK[50])
    try:
        # The hold alarm watches from the first round with a loose z (issue 23): it is raised.
        table = Table(tmp_path_factory.mktemp("pit"), TCP, 7, jackpot_reset=RESET,
                      limits=(("progressive", 100, 100),), alarm_z=0.05, alarm_min_rounds=1)
        played.tables.append(table)
        app = create_app(table.daemon, TOKEN, role_tokens={SUP: ["supervisor"], SURV: ["surveillance"]},
                         stopping=stop.is_set)
        # The pit's browser follows the stream live from the start (its cookie, ?view=pit).
        browser = TestClient(app)
        assert browser.post("/session", json={"token": SUP}).status_code == 200
        connected = threading.Event()

        def follow() -> None:
            with browser.stream("GET", "/events?view=pit") as r:
                assert r.status_code == 200
                buf = ""
                for chunk in r.iter_text():
                    buf += chunk
                    if ": connected" in buf:
                        connected.set()
                played.live.extend(sse(buf))

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        assert connected.wait(10)
        _play(table, played, app)
        lir = Table(tmp_path_factory.mktemp("pit-lir"), LIR, 7, jackpot_reset=RESET)
        played.tables.append(lir)
        rl = str(lir.ok("POST", "/rounds")["round_id"])
        # Let It Ride's Magic Card and Lucky Player, selected by the system and displayed (4.3, 4.4).
        lir.ok("POST", f"/rounds/{rl}/progressive", json={"magic_card": card_text(played.magic), "lucky_seat": 4})
        # A shoe this journal never saw, already running (its HELLO acknowledged to another
        # journal): its window is adopted at the first frame it proves it holds (SPEC 3.4).
        _running_shoe(lir, boot=7, seq=40)
        wait_for(lambda: "window_adopted" in {b["type"] for _k, b in _journal_types(lir)}, what="the window adopted")
        stop.set()
        follower.join(15)
        assert not follower.is_alive()
        # Last, a command the shoe never answers, abandoned when the daemon stops; a new daemon.
        table.shoe.deaf_to_commands = True
        table.ok("POST", "/shoe/clear", json={"integrity_mask": 0, "fault_mask": 0})
        table.restart_daemon()
        table.shoe.deaf_to_commands = False
        played.readers["app"] = create_app(table.daemon, TOKEN,
                                           role_tokens={SUP: ["supervisor"], SURV: ["surveillance"]})
        yield played
    finally:
        stop.set()
        for t in played.tables:
            t.close()


def _play(table: Table, played: Played, app: Any) -> None:
    """One table through every kind of event this test makes (see NOT_MADE_HERE for the rest)."""
    cards, rounds = played.cards, played.rounds
    dealer = Dealer(table, cards)
    shoe = table.shoe
    table.power_on_and_load()
    table.ok("PUT", "/jackpot", json={"amount": POOL})

    # Between rounds: a card out of the shoe, the deal-complete key, a deck fault whose report
    # names the cards never dealt (still in the shoe).
    dealer.deal(None, "outside")
    shoe.key_press(2)
    left = [Card(code, b"", None, "outside") for code in DECK[40:44]]
    cards.extend(left)
    bitmap = bytearray(7)
    for c in left:
        bitmap[c.code // 8] |= 1 << (c.code % 8)
    s = shoe.state
    n = payloads.pack_deck_status(shoe.payload, s.shoe_no, s.deck_id, 0, s.dealt, 52 - s.dealt, 8, 0, 0, 0,
                                  len(left), bytes(bitmap))
    _frame(table, wire.DECK_STATUS, bytes(shoe.payload[:n]))
    # A supervisor marks the oldest of those referrals seen (issue 22): journaled, decides nothing.
    referral = wait_for(lambda: table.ok("GET", "/status")["referrals"], what="the referrals outside a round")[-1]
    table.ok("POST", f"/referrals/{referral['id']}/acknowledge", json={"by": "PS-1"})

    # Round 1, the issue's case: the shoe claims another card at an index the journal holds
    # (an extra card: TCP 5.1 voids the round; its cards are collected unseen).
    r1 = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{r1}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{r1}/no-more-bets")
    dealer.deal(r1, "hand", flags=4)  # framed from RAM, not in the shoe's flash log (card_not_durable)
    dealer.deal(r1, "hand", 2)
    code, raw = dealer.take()
    cards.append(Card(code, raw, r1, "claim"))
    _claim(table, shoe.state.dealt - 1, code, raw)
    wait_for(lambda: table.round(r1)["void"] is not None, what="round 1 voided")
    rounds[r1] = "void"
    dealer.deal(r1, "hand")  # a card after the void: recorded in the round, dealt into no hand
    shoe.key_press(2)  # and the deal-complete key: nothing to count in a void round
    shoe.wait_acked()
    assert table.client.post(f"/rounds/{r1}/decisions", json={"seat": 5, "choice": "play"}).status_code == 409

    # Round 2, played and settled: a card exposed after the deal (6.1, referred and let stand),
    # a progressive hit (three of a kind, TCP 4.4: its evidence written), and the shoe's order,
    # a new deck's, raises the shuffle alarm (5.1).
    table.ok("POST", "/staff/sign-on", json={"role": "dealer", "staff_id": "D-1"})  # who deals (issue 23)
    table.ok("POST", "/staff/sign-on", json={"role": "supervisor", "staff_id": "S-1"})
    table.ok("PUT", "/seats/2/player", json={"player_id": "P-1"})
    r2 = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{r2}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{r2}/wagers", json={"seat": 2, "wager": "progressive", "amount": 100})
    table.ok("POST", f"/rounds/{r2}/no-more-bets")
    while dealer.next % 4:
        dealer.take()  # skipped (never dealt): seat 2 then gets three of one rank
    seat2 = dealer.deal(r2, "hand", 3)
    dealer.deal(r2, "hand", 3)  # the dealer's (TCP 3.7)
    shoe.key_press(2)  # deal complete: the count point
    shoe.wait_acked()
    shoe.key_press(2)  # again: no count point is due now
    shoe.wait_acked()
    table.ok("POST", f"/rounds/{r2}/exposures", json={"shoe_index": shoe.state.dealt - 5})
    seat2[0].exposed = True
    for flag in table.round(r2)["irregularities"]:
        if flag.get("decision") == "referred":
            table.ok("POST", f"/rounds/{r2}/confirmations", json={"flag": flag["id"], "confirmed": True,
                                                                  "supervisor": "PS-1"})
    table.ok("POST", f"/rounds/{r2}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{r2}/settle", json={})
    rounds[r2] = "settled"
    wait_for(lambda: table.daemon.evidence_files.get(r2), what="the evidence of round 2's progressive hit")
    wait_for(lambda: "hold_alarm" in {b["type"] for _k, b in _journal_types(table)}, timeout=20,
             what="the hold alarm (the house lost round 2)")
    # The live alarm stands at a sequential boundary (docs/report.md, "The alarm") and may clear
    # as later rounds come in: /status is read while it stands (before the next settlement).
    played.readers["hold_status"] = [{"alarms": wait_for(
        lambda: [a for a in table.ok("GET", "/status")["alarms"] if a["type"] == "hold"], timeout=20,
        what="the hold alarm in /status")}]
    table.ok("DELETE", "/seats/2/player")
    table.ok("POST", "/staff/sign-off", json={"role": "supervisor"})

    # Round 5 (as numbered by the table): an unwagered seat dealt three cards in error; the
    # dealer counts them, a supervisor confirms the reconstruction (5.2), and it is settled.
    r5 = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{r5}/wagers", json={"seat": 2, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{r5}/wagers", json={"seat": 5, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{r5}/no-more-bets")
    dealer.deal(r5, "hand", 12)
    shoe.key_press(2)
    shoe.wait_acked()
    [flag] = wait_for(lambda: table.round(r5)["irregularities"], what="the count flag")
    table.ok("POST", f"/rounds/{r5}/counts", json={"flag": flag["id"], "position": {"kind": "seat", "seat": 3},
                                                  "count": 3, "reporter": "dealer"})
    table.ok("POST", f"/rounds/{r5}/confirmations", json={"flag": flag["id"], "confirmed": True,
                                                          "supervisor": "PS-1"})
    for seat in (2, 5):
        table.ok("POST", f"/rounds/{r5}/decisions", json={"seat": seat, "choice": "play"})
    table.ok("POST", f"/rounds/{r5}/settle", json={})
    rounds[r5] = "settled"

    # Round 3: the deal, its count point, a card not due, a card of another deck (5.1: void).
    r3 = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{r3}/wagers", json={"seat": 3, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{r3}/no-more-bets")
    dealer.deal(r3, "hand", 6)
    shoe.key_press(2)
    shoe.wait_acked()
    dealer.deal(r3, "hand")  # not due
    dealer.deal(r3, "hand", deck_id=OTHER_DECK)
    wait_for(lambda: table.round(r3)["void"] is not None, what="round 3 voided")
    rounds[r3] = "void"

    # Round 4: the shoe loses power mid-deal (5.16, 6.1); its HELLO counts a card the journal
    # lacks, a key waits for it, the card never comes, and the shoe's log then loses one more.
    r4 = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{r4}/wagers", json={"seat": 4, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{r4}/no-more-bets")
    dealer.deal(r4, "hand", 2)
    code, raw = dealer.take()
    shoe.deal(code, raw=raw, send=False)  # out of the shoe and logged, never framed: never journaled
    shoe.defer_cards_from = True
    shoe.reboot()
    shoe.wait_command(wire.CARDS_FROM)
    shoe.wait_acked()
    shoe.key_press(2)  # held: a card dealt before it is missing
    shoe.wait_acked()
    for _ in range(2):  # the missing card lost from the log, then one the journal holds
        shoe.power_off()
        shoe.state.dealt -= 1
        del shoe.state.log[-1]
        shoe.defer_cards_from = False
        shoe.power_on(reset_cause=2)
        shoe.wait_acked()
    if table.round(r4)["void"] is None:
        table.ok("POST", f"/rounds/{r4}/void", json={"rule": "5.16", "reason": "power failure", "by": "PS-1"})
    rounds[r4] = "void"

    # The shoe's other frames: a fault; frames made with another key, a flood of them (sampled,
    # then counted); a daemon fault (internal_error, 6.1).
    n = payloads.pack_fault(shoe.payload, 2, 1, 0, shoe.ms())
    _frame(table, wire.FAULT, bytes(shoe.payload[:n]))
    n = payloads.pack_heartbeat(shoe.payload, 0, 0, 0)
    for seq in range(30):
        shoe.send_raw(shoe.encode(wire.HEARTBEAT, bytes(shoe.payload[:n]), boot=shoe.state.boot, seq=9000 + seq,
                                  key=bytes(32)))
    wait_for(lambda: "rejections_summary" in {b["type"] for _k, b in _journal_types(table)},
             what="a rejections summary")
    table.daemon.service.submit_input({"action": "shoe_loaded", "shoe": "not-a-serial"})

    # The link: the shoe silent, then the cable pulled (alarms in /status), put back.
    shoe.power_off()
    wait_for(lambda: any(a["type"] == "shoe_silent" for a in table.daemon.current_alarms()), timeout=20,
             what="the silent-shoe alarm")
    table.plug.unplug()
    wait_for(lambda: any(a["type"] == "port_unavailable" for a in table.daemon.current_alarms()),
             what="the port alarm")
    played.readers["status"] = [
        TestClient(app, headers={"Authorization": f"Bearer {tok}"}).get("/status" + query).json()
        for tok, query in ((SUP, ""), (SURV, "?view=pit"))]
    table.plug.replug()
    wait_for(lambda: table.daemon.link_up, what="the port back")
    shoe.power_on()
    shoe.wait_acked()

    # A shoe in a session this journal never loaded, with cards dealt: its HELLO, its card, a key.
    saved = (shoe.state.shoe_no, shoe.state.dealt, list(shoe.state.log))
    shoe.power_off()
    shoe.state.shoe_no += 100
    shoe.power_on()
    shoe.wait_acked()
    shoe.deal(DECK[45], raw=b"PVOTHERQ")
    cards.append(Card(DECK[45], b"PVOTHERQ", None, "outside"))
    shoe.wait_acked()
    shoe.key_press(2)  # a dealer key while in that session: no round takes it
    shoe.wait_acked()
    shoe.power_off()
    shoe.state.shoe_no, shoe.state.dealt, shoe.state.log = saved[0], saved[1], saved[2]
    shoe.power_on()
    shoe.wait_acked()

    # A supervisor puts the shoe into maintenance; surveillance takes round 2's evidence.
    table.ok("POST", "/shoe/maintenance", json={"supervisor": "PS-1", "reason": "test"})
    shoe.wait_acked()
    assert TestClient(app, headers={"Authorization": f"Bearer {SURV}"}).get(
        f"/rounds/{r2}/evidence").status_code == 200


# -- what the pit reads ---------------------------------------------------------------------

def _made(played: Played) -> set[str]:
    """Every kind of event the played tables journaled, and the alarms /status showed."""
    kinds = {body["type"] for t in played.tables for k, body in _journal_types(t) if k not in ("frame", "input")}
    statuses = played.readers["status"] + played.readers["hold_status"]
    return kinds | {a["type"] for status in statuses for a in status["alarms"]}


def _streamable(table: Table) -> int:
    with journal(table) as j:
        return sum(1 for e in j.entries() if isinstance(e.data(), dict) and streamable(e.kind, e.data()))


def _pit_clients(app: Any) -> dict[str, tuple[TestClient, str]]:
    """The pit's ways in: the supervisor's token; a supervisor's browser session asking
    `?view=pit`; surveillance's token asking `?view=pit`."""
    browser = TestClient(app)
    assert browser.post("/session", json={"token": SUP}).status_code == 200
    return {"supervisor token": (TestClient(app, headers={"Authorization": f"Bearer {SUP}"}), ""),
            "supervisor session ?view=pit": (browser, "view=pit"),
            "surveillance ?view=pit": (TestClient(app, headers={"Authorization": f"Bearer {SURV}"}), "view=pit")}


def _backlog(client: TestClient, query: str, n: int) -> list[dict[str, Any]]:
    text = client.get(f"/events?after=0&limit={n}" + (f"&{query}" if query else "")).text
    return sse(text)


def test_every_event_kind_in_the_code_is_made_here_or_listed(played: Played) -> None:
    in_code = kinds_in_code()
    made = _made(played)
    missing = sorted(set(in_code) - made - set(NOT_MADE_HERE))
    assert not missing, f"kinds the code can emit that this test neither makes nor lists: " \
                        f"{[(k, sorted(in_code[k])) for k in missing]}"
    assert not set(NOT_MADE_HERE) - set(in_code), "listed kinds the code no longer has"
    assert not set(NOT_MADE_HERE) & made, f"listed as not made, but made: {sorted(set(NOT_MADE_HERE) & made)}"


def test_the_pit_reads_no_face_down_card_on_the_stream_from_the_journal(played: Played) -> None:
    table = played.tables[0]
    n = _streamable(table)
    streamed_kinds: set[str] = set()
    for who, (client, query) in _pit_clients(played.readers["app"]).items():
        events = _backlog(client, query, n)
        assert len(events) == n, (who, len(events), n)
        found = [leak for e in events
                 for leak in leaks(e["data"]["data"], hidden_for(e["data"]["round_id"], played),
                                   f"{who} {e['event']} #{e['id']}")]
        assert found == [], "\n".join(found[:40])
        # Every field of every kind made is one the pit view knows how to show (a new field
        # would be withheld: face down, but the pit would miss it; say how it is shown).
        unknown = {(e["event"], f) for e in events for f in e["data"]["data"].get("withheld", [])}
        assert not unknown, sorted(unknown)
        streamed_kinds |= {e["event"] for e in events}
    # Public faces still show: round 2 was settled, so its hands were turned (TCP 3.10).
    r2 = [rid for rid, how in played.rounds.items() if how == "settled"][0]
    shown = {e["data"]["data"]["card"] for e in _backlog(*_pit_clients(played.readers["app"])["supervisor token"], n)
             if e["event"] == "card_placed" and e["data"]["round_id"] == r2}
    assert shown == {c.text for c in played.cards if c.round_id == r2}
    assert {"shoe_card_conflict", "card_deck_mismatch", "card_outside_round", "key_outside_round",
            "deck_fault_outside_round", "shuffle_alarm", "flagged", "settlement"} <= streamed_kinds


def test_the_issues_conflict_reaches_the_pit_without_either_card(played: Played) -> None:
    # Issue 20: `shoe_card_conflict` carried held.card, held.raw, reported.card, reported.raw to
    # the supervisor (token or cookie) and to ?view=pit, before `round_voided`.
    table = played.tables[0]
    for who, (client, query) in _pit_clients(played.readers["app"]).items():
        events = _backlog(client, query, _streamable(table))
        types = [e["event"] for e in events]
        conflict = events[types.index("shoe_card_conflict")]["data"]["data"]
        assert types.index("shoe_card_conflict") < types.index("round_voided"), who
        assert conflict["held"].get("card") is None and "raw" not in conflict["held"], (who, conflict)
        assert conflict["reported"].get("card") is None and "raw" not in conflict["reported"], (who, conflict)
        assert conflict["index"] and conflict["shoe"] == SERIAL  # where, not what


def test_the_live_pit_stream_carried_no_face_down_card(played: Played) -> None:
    assert len(played.live) > 50
    found = [leak for e in played.live
             for leak in leaks(e["data"]["data"], hidden_for(e["data"]["round_id"], played), f"live {e['event']} ")]
    assert found == [], "\n".join(found[:40])
    assert "shoe_card_conflict" in {e["event"] for e in played.live}


def test_rounds_list_and_status_show_the_pit_no_face_down_card(played: Played) -> None:
    app = played.readers["app"]
    for who, (client, query) in _pit_clients(app).items():
        for rid in played.rounds:
            snap = client.get(f"/rounds/{rid}" + (f"?{query}" if query else "")).json()
            assert snap["view"] == "pit" and "withheld" not in snap, snap.get("withheld")
            assert leaks(snap, hidden_for(rid, played), f"{who} /rounds/{rid}") == []
        listing = client.get("/rounds" + (f"?{query}" if query else "")).json()
        assert leaks(listing, hidden_for(None, played), f"{who} /rounds") == []
        status = client.get("/status" + (f"?{query}" if query else "")).json()
        assert not [a for a in status["alarms"] if "withheld" in a], status["alarms"]
        assert leaks(status, hidden_for(status["current_round"], played), f"{who} /status") == []
    for status in played.readers["status"]:  # read while the shoe was silent and its port gone
        assert {"shoe_silent", "port_unavailable", "shuffle"} <= {a["type"] for a in status["alarms"]}
        assert leaks(status, hidden_for(status["current_round"], played), "/status (alarms)") == []
    # The settled round's hands are shown, turned (TCP 3.10); the void ones' are not (5.1).
    client = _pit_clients(app)["supervisor token"][0]
    for rid, how in played.rounds.items():
        snap = client.get(f"/rounds/{rid}").json()
        values = [c["card"] for c in snap["cards"].values()]
        in_hands = [c for hand in snap["hands"].values() for c in hand]
        if how == "settled":
            assert sorted(values) == sorted(c.text for c in played.cards if c.round_id == rid and c.place == "hand")
            assert in_hands and None not in in_hands
        else:
            exposed = {c.text for c in played.cards if c.round_id == rid and c.exposed}
            assert set(values) <= {None} | exposed and set(in_hands) <= {None} | exposed


def test_the_pit_gets_a_rounds_evidence_only_if_it_holds_no_face_down_card(played: Played) -> None:
    app = played.readers["app"]
    supervisor = TestClient(app, headers={"Authorization": f"Bearer {SUP}"})
    surveillance = TestClient(app, headers={"Authorization": f"Bearer {SURV}"})
    given = []
    for rid in played.rounds:
        if supervisor.get(f"/rounds/{rid}").json()["status"] != "settled":
            continue
        r = supervisor.get(f"/rounds/{rid}/evidence")
        if r.status_code == 200:
            assert leaks(r.json(), hidden_for(rid, played), f"evidence {rid}") == []
            given.append(rid)
        else:
            assert r.status_code == 403 and "never shown at the table" in r.json()["detail"]["message"], r.text
            assert leaks(r.json(), hidden_for(rid, played)) == []
        assert surveillance.get(f"/rounds/{rid}/evidence").status_code == 200
    void = [rid for rid, how in played.rounds.items() if how == "void"][0]
    assert supervisor.get(f"/rounds/{void}/evidence").status_code == 403  # its cards were collected unseen
    # Round 5 (the reconstruction) was settled and holds nothing face down: the pit gets it.
    assert given == [[rid for rid, how in played.rounds.items() if how == "settled"][1]], given


def test_the_magic_card_is_public_and_nothing_else_of_the_lir_table_leaks(played: Played) -> None:
    lir = played.tables[1]
    app = create_app(lir.daemon, TOKEN, role_tokens={SUP: ["supervisor"]})
    events = _backlog(TestClient(app, headers={"Authorization": f"Bearer {SUP}"}), "", _streamable(lir))
    [selected] = [e["data"]["data"] for e in events if e["event"] == "progressive_selected"]
    assert selected["magic_card"] == card_text(played.magic)  # system-selected and displayed (LIR 4.3)


def test_a_kind_or_field_the_pit_view_does_not_know_is_withheld() -> None:
    # A new event kind, or a new field of a known one, is face down until someone says how the
    # pit sees it: its fields are named in `withheld`, their values are not sent.
    from cardshoe.api.pitview import NOTHING, pit_body

    assert pit_body({"type": "a_kind_added_later", "card": 51, "reader_id": "PV01Q", "note": "As"}, NOTHING) == {
        "type": "a_kind_added_later", "withheld": ["card", "note", "reader_id"]}
    shown = pit_body({"type": "card_placed", "kind": "card_placed", "index": 3, "card": 51, "reader_id": "x",
                      "place": {"kind": "seat", "seat": 1, "number": 1}, "public": False, "shoe_ms": 1,
                      "peeked": 51}, NOTHING)
    assert shown["card"] is None and "reader_id" not in shown and "peeked" not in shown
    assert shown["withheld"] == ["peeked"]


def test_every_journaled_kind_through_the_pit_views_filter(played: Played) -> None:
    # The kinds the stream does not carry (a command's reply, a frame held, the floor's) are
    # read by the pit only inside an evidence file; each goes through the same filter.
    from cardshoe.api.pitview import NOTHING, pit_body, public_of

    table = played.tables[0]
    found: list[str] = []
    kinds: set[str] = set()
    with journal(table) as j:
        entries = [e for e in j.entries() if e.kind not in ("frame", "input", "checkpoint")]
    for e in entries:
        body = e.data()
        if not isinstance(body, dict) or "type" not in body:
            continue
        public = NOTHING
        if e.round_id is not None:
            public = public_of(table.daemon.control.round_snapshot(e.round_id), set())  # type: ignore[union-attr]
        shown = pit_body(body, public)
        assert "withheld" not in shown, (body["type"], shown["withheld"])
        found += leaks(shown, hidden_for(e.round_id, played), f"{e.kind} {body['type']} #{e.id}")
        kinds.add(body["type"])
    assert found == [], "\n".join(found[:40])
    assert {"command_reply", "frame_held", "new_shoe", "command_abandoned", "daemon_stopped"} <= kinds
