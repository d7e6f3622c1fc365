"""How tests/daemon/data/journals-before-issue-20.json was made: journals written by the table
core and journal of cardshoe before issue 20 (commit cf005b8), every entry dumped to JSON.

Run with that version of cardshoe installed (not with this one: the point is what the older
daemon journaled), e.g. `python make_journals_before_issue_20.py OUTDIR > journals.json`; the
fixture is that output with one entry per line. tests/daemon/test_daemon_journals_before_issue_20.py
replays them with the current code."""
import base64, json, sys
from pathlib import Path
import cardshoe
from cardshoe.cards import parse_card
from cardshoe.daemon.bus import EventBus
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.daemon.service import FrameInput, TableService
from cardshoe.journal import JournalReader
from cardshoe.journal.store import Journal
from cardshoe.rounds import (Choice, Decision, NoMoreBets, PlaceWager, VoidRound, ChangeWager,
                             operation_to_json)

print("code:", cardshoe.__file__, file=sys.stderr)
OUT = Path(sys.argv[1])
SERIAL = 0x00C0FFEE
WAGERS = ("ante", "pair_plus", "play", "progressive")
LIMITS = {w: {"min": 100, "max": 10_000_000} for w in WAGERS}  # DEFAULT_LIMITS of cardshoe run


class Writer:
    def __init__(self, path: Path) -> None:
        self.journal = Journal(path)
        self.service = TableService(TableCore(TableSetup(name="T1", game="three-card-poker", seats=7)),
                                    self.journal, EventBus(), clock=self.clock, checkpoint_every=0)
        self.t = 1_700_000_000_000_000_000
        self.seq = 0
        self.index = 0

    def clock(self) -> int:
        self.t += 1_000_000
        return self.t

    def input(self, body):
        if body.get("action") == "op":
            body = {**body, "op": {**body["op"], "time_ms": (self.t + 1_000_000) // 1_000_000}}
        return self.service.submit_input(body)

    def op(self, rid, op):
        return self.input({"action": "op", "round_id": rid, "op": operation_to_json(op)})

    def frame(self, msg):
        self.seq += 1
        return self.service.submit_frame(FrameInput(SERIAL, 1, self.seq, 0, msg, bytes([self.seq % 256]) * 4))

    def card(self, text):
        self.index += 1
        return self.frame({"type": "CARD", "shoe_no": 1, "index": self.index, "code": parse_card(text),
                           "raw": f"{self.index:08x}", "t_ms": 1000 * self.index, "card_deck": 7, "method": 1,
                           "flags": 0})

    def close(self):
        self.journal.close()


def setup(w, reset=1_000_000):
    w.input({"action": "setup", "name": "T1", "game": "three-card-poker", "seats": 7, "dealing": "automated",
             "method": None, "limits": LIMITS, "jackpot_reset": reset})
    w.input({"action": "shoe_loaded", "shoe": SERIAL, "shoe_no": 1, "deck_id": 7})


def stranded(path):
    """Issue 20, first defect: ante 1000 and progressive 500 (5 x the minimum 100) on seat 3,
    accepted; dealt; settle refused; voided; then every open_round and settle refused."""
    w = Writer(path)
    setup(w)
    w.input({"action": "jackpot_pool", "amount": 5_000_000})
    rid = w.input({"action": "open_round"}).round_id
    w.op(rid, PlaceWager(seat=1, wager="ante", amount=1000))
    w.op(rid, PlaceWager(seat=3, wager="ante", amount=1000))
    w.op(rid, PlaceWager(seat=3, wager="progressive", amount=500))
    w.op(rid, NoMoreBets())
    for c in ["Ah", "Kh", "Qh", "2c", "2d", "9s", "Jc", "8d", "4s"]:
        w.card(c)
    w.op(rid, Decision(seat=1, choice=Choice.PLAY))
    w.op(rid, Decision(seat=3, choice=Choice.PLAY))
    w.input({"action": "settle", "round_id": rid})
    w.op(rid, VoidRound(rule="6.1", reason="the settlement engine refuses the round", by="pit boss"))
    w.input({"action": "open_round"})
    w.input({"action": "settle", "round_id": rid})
    w.input({"action": "open_round"})
    w.service.checkpoint()  # the core pickled as that daemon pickled it: its setup has no core_version
    w.close()


def void_plays_on(path):
    """Issue 20, second defect: a round opened while the shoe is on its old session; the end of
    that shoe reports missing cards (5.1, 5.8) and voids it, yet wagers, no more bets, cards and
    the keys are taken; then an empty round voided, and a card drawn before any wager."""
    w = Writer(path)
    setup(w)
    rid = w.input({"action": "open_round"}).round_id
    w.op(rid, PlaceWager(seat=2, wager="ante", amount=1000))
    w.frame({"type": "DECK_STATUS", "shoe_no": 1, "deck_id": 7, "reason": 3, "dealt": 0, "remaining": 52,
             "integrity": 8, "duplicates": 0, "foreign": 0, "unread": 0, "missing": 52,
             "missing_map": "ffffffffffff0f"})
    w.op(rid, PlaceWager(seat=5, wager="pair_plus", amount=500))
    w.op(rid, ChangeWager(seat=2, wager="ante", amount=2000))
    w.op(rid, NoMoreBets())
    for c in ["Ah", "Kh", "Qh", "2c", "2d", "9s", "Jc", "8d", "4s"]:
        w.card(c)
    w.frame({"type": "KEY", "key": 2, "arg": 0, "t_ms": 50_000})
    w.frame({"type": "KEY", "key": 3, "arg": 0, "t_ms": 50_001})
    w.op(rid, Decision(seat=2, choice=Choice.PLAY))
    w.input({"action": "settle", "round_id": rid})
    # An empty round voided: its settlement is refused ("a round has at least one seat").
    empty = w.input({"action": "open_round"}).round_id
    w.op(empty, VoidRound(rule="6.1", reason="opened in error", by="pit boss"))
    w.input({"action": "open_round"})
    w.service.checkpoint()
    w.close()


def dump(path):
    with JournalReader(path) as r:
        entries = [{"id": e.id, "t_ns": e.t_ns, "kind": e.kind, "shoe": e.shoe, "boot": e.boot, "seq": e.seq,
                    "type": e.type, "round_id": e.round_id, "body": e.body,
                    "raw": None if e.raw is None else e.raw.hex()} for e in r.entries()]
    return entries


OUT.mkdir(parents=True, exist_ok=True)
out = {}
for name, make in (("stranded", stranded), ("void_plays_on", void_plays_on)):
    p = OUT / f"{name}.sqlite"
    p.unlink(missing_ok=True)
    make(p)
    out[name] = dump(p)
lines = ["{"]
for n, name in enumerate(out):
    lines.append(f' "{name}": [')
    lines += ["  " + json.dumps(e, separators=(",", ":")) + ("," if i < len(out[name]) - 1 else "")
              for i, e in enumerate(out[name])]
    lines.append(" ]" + ("," if n < len(out) - 1 else ""))
print("\n".join(lines + ["}"]))
