"""A table's journal read into what the report counts: rounds, shoes, flags, who was on.

`read_table(entries, source)` walks one journal's entries (or the floor's copy of one
journal) in id order and keeps, per round, the host times of its phases, its cards, its
dealer and players (the round's last `round_staff`), its flags and what each seat staked and
won by wager component (from the settlement). It reads only derived events, settlements and
the daemon's commands: never a round id's text (rounds are keyed by the journal they are in
and their id as given), never the pickled state.

Times are the journal's host times (`t_ns`); a round belongs to the window of the report
when it *opened* in it (`since_ns <= opened < until_ns`). A gaming-day cut (issue 25) is one
more such window: `cardshoe report --from/--to` takes it today, and a journal per gaming day
will simply be one more `--journal`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol

from cardshoe.report.theory import UNIT_WAGER, component_of

__all__ = ["EntryLike", "Flag", "RoundRec", "SeatStake", "Span", "TableReader", "TableShift", "read_table"]


class EntryLike(Protocol):
    """A journal entry as the journal (`cardshoe.journal.Entry`) or the floor (`ShippedEntry`) gives it."""

    @property
    def id(self) -> int: ...
    @property
    def t_ns(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def round_id(self) -> str | None: ...
    @property
    def body(self) -> str: ...


@dataclass
class SeatStake:
    """One seat's wagers of one component in one round: its unit stake, handle and the house's net."""

    seat: int
    component: str
    unit: int
    handle: int
    house: int
    returned: int = 0
    """Stake handed back untouched (absent, withdrawn, void): still counted in the handle."""
    pool_before: int | None = None
    other_antes: int = 0
    hits: list[str] = field(default_factory=list)


@dataclass
class Flag:
    """An irregularity (or a referral outside a round) and how long it waited for a person."""

    table: str
    round_id: str | None
    kind: str
    rules: list[str]
    raised_ns: int
    decision: str
    waits: bool
    resolved_ns: int | None = None
    resolved_by: str | None = None
    final: str | None = None

    @property
    def waited_s(self) -> float | None:
        """Seconds from raised to a person's decision (None: still waiting at the end of the data)."""
        if not self.waits:
            return 0.0
        return None if self.resolved_ns is None else (self.resolved_ns - self.raised_ns) / 1e9


@dataclass
class RoundRec:
    """One round as the report counts it."""

    table: str
    source: str
    round_id: str
    game: str
    opened_ns: int
    bets_closed_ns: int | None = None
    first_card_ns: int | None = None
    last_card_ns: int | None = None
    deal_done_ns: int | None = None
    first_decision_ns: int | None = None
    last_decision_ns: int | None = None
    settled_ns: int | None = None
    cards: int = 0
    deal_cards: int = 0
    shoe_no: int | None = None
    dealer: str | None = None
    supervisor: str | None = None
    players: dict[int, str] = field(default_factory=dict)
    void: bool = False
    revision: int | None = None
    stakes: list[SeatStake] = field(default_factory=list)
    min_progressive: int | None = None

    def phases(self) -> dict[str, float]:
        """Seconds in betting, dealing, decisions and settling (the round's own time)."""
        out = {"betting": 0.0, "dealing": 0.0, "decisions": 0.0, "settling": 0.0}
        if self.settled_ns is None:
            return out
        closed = self.bets_closed_ns or self.first_card_ns or self.settled_ns
        deal_end = self.deal_done_ns or self.first_decision_ns or self.last_card_ns or closed
        deal_end = max(deal_end, closed)
        decided = max(self.last_decision_ns or deal_end, deal_end)
        out["betting"] = (closed - self.opened_ns) / 1e9
        out["dealing"] = (deal_end - closed) / 1e9
        out["decisions"] = (decided - deal_end) / 1e9
        out["settling"] = max(0, self.settled_ns - decided) / 1e9
        return out


@dataclass
class Span:
    """Someone on the table (a dealer, a supervisor, a rated player at a seat) from `start` to `end`."""

    who: str
    role: str
    start_ns: int
    end_ns: int | None
    seat: int | None = None


@dataclass
class TableShift:
    """One journal of one table, as read."""

    table: str
    source: str
    game: str
    seats: int
    limits: dict[str, dict[str, int]]
    rounds: list[RoundRec]
    shoes: list[tuple[int, int, int]]
    """(time loaded, shoe_no, deck_id)."""
    flags: list[Flag]
    spans: list[Span]
    first_ns: int | None
    last_ns: int | None


def _open_span(spans: list[Span], role: str, who: str, t: int, seat: int | None = None) -> None:
    spans.append(Span(who, role, t, None, seat))


def _close_span(spans: list[Span], role: str, t: int, seat: int | None = None) -> None:
    for s in reversed(spans):
        if s.role == role and s.seat == seat and s.end_ns is None:
            s.end_ns = t
            return


def read_table(entries: Iterable[EntryLike], source: str) -> TableShift:
    """Read one journal's entries (id order) into a `TableShift`; `source` names the journal."""
    reader = TableReader(source)
    for e in entries:
        reader.feed(e)
    return reader.shift()


class TableReader:
    """`read_table` one entry at a time (the daemon feeds it each entry it publishes)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.name, self.game, self.seats = source, "", 0
        self.limits: dict[str, Any] = {}
        self.rounds: dict[str, RoundRec] = {}
        self.shoes: list[tuple[int, int, int]] = []
        self.flags: dict[tuple[str | None, Any], Flag] = {}
        self.outside: list[Flag] = []
        self.spans: list[Span] = []
        self.shoe_no: int | None = None
        self.first: int | None = None
        self.last: int | None = None

    def shift(self) -> TableShift:
        """What has been read so far."""
        return TableShift(table=self.name, source=self.source, game=self.game, seats=self.seats, limits=self.limits,
                          rounds=list(self.rounds.values()), shoes=list(self.shoes),
                          flags=list(self.flags.values()) + self.outside, spans=list(self.spans),
                          first_ns=self.first, last_ns=self.last)

    def feed(self, e: EntryLike) -> None:
        """One entry (entries of other kinds than event and settlement are passed over)."""
        if e.kind not in ("event", "settlement"):
            return
        self.first = e.t_ns if self.first is None else self.first
        self.last = e.t_ns
        try:
            body = json.loads(e.body)
        except ValueError:
            return
        self._event(e, body)

    def _event(self, e: EntryLike, body: dict[str, Any]) -> None:
        rounds, shoes, flags, outside, spans = self.rounds, self.shoes, self.flags, self.outside, self.spans
        name, limits = self.name, self.limits
        t = e.t_ns
        etype = body.get("type")
        rid = e.round_id
        rec = rounds.get(rid) if rid is not None else None
        if e.kind == "settlement":
            if rec is not None and rec.settled_ns is None:
                _settled(rec, body.get("settlement") or {}, t)
            return
        if etype == "table_setup":
            self.name, self.game = str(body.get("name", name)), str(body.get("game", self.game))
            self.seats = int(body.get("seats", 0))
            self.limits = dict(body.get("limits") or {})
        elif etype == "round_opened" and rid is not None:
            rec = RoundRec(table=name, source=self.source, round_id=rid, game=str(body.get("game", self.game)),
                           opened_ns=t)
            prog = limits.get("progressive") if isinstance(limits, dict) else None
            rec.min_progressive = int(prog["min"]) if isinstance(prog, dict) and "min" in prog else None
            rounds[rid] = rec
        elif etype == "shoe_loaded":
            # One shoe session is one shoe, however often its loading is reported (a REPLY and a
            # HELLO that reconciles it, a daemon restarted while loading).
            loaded = int(body.get("shoe_no", 0))
            if loaded not in {no for _, no, _ in shoes}:
                shoes.append((t, loaded, int(body.get("deck_id", 0))))
            self.shoe_no = loaded
        elif etype == "staff_signed_on":
            _close_span(spans, str(body["role"]), t)
            _open_span(spans, str(body["role"]), str(body["staff_id"]), t)
        elif etype == "staff_signed_off":
            _close_span(spans, str(body["role"]), t)
        elif etype == "player_seated":
            _close_span(spans, "player", t, int(body["seat"]))
            _open_span(spans, "player", str(body["player_id"]), t, int(body["seat"]))
        elif etype == "player_left":
            _close_span(spans, "player", t, int(body["seat"]))
        elif etype in ("card_outside_round", "key_outside_round", "deck_fault_outside_round", "shuffle_alarm"):
            # Referred to the shift manager; no event resolves them: they wait to the end of the data.
            outside.append(Flag(name, body.get("round_id") if etype == "shuffle_alarm" else None, etype,
                                [str(r) for r in body.get("rules", [body.get("rule", "")]) if r],
                                t, str(body.get("decision", "referred")), True))
        if rec is None:
            return
        # Events of a round.
        if etype == "round_staff":
            rec.dealer, rec.supervisor = body.get("dealer"), body.get("supervisor")
            rec.players = {int(s): str(p) for s, p in dict(body.get("players") or {}).items()}
        elif etype == "bets_closed":
            rec.bets_closed_ns = rec.bets_closed_ns or t
        elif etype == "card_placed":
            rec.cards += 1
            if rec.first_card_ns is None:
                rec.first_card_ns = t
                rec.shoe_no = self.shoe_no
            if rec.first_decision_ns is None and rec.deal_done_ns is None:
                rec.last_card_ns = t
                rec.deal_cards += 1
        elif etype == "count_checked" and body.get("point") == "deal_complete":
            rec.deal_done_ns = rec.deal_done_ns or t
        elif etype == "decision_recorded":
            rec.first_decision_ns = rec.first_decision_ns or t
            rec.last_decision_ns = t
        elif etype == "round_voided":
            rec.void = True
        elif etype in ("flagged", "flag_resolved"):
            irr = body.get("irregularity") or {}
            key = (rid, irr.get("id"))
            if etype == "flagged" and key not in flags:
                decision = str(irr.get("decision", ""))
                flags[key] = Flag(name, rid, str(irr.get("kind", "")), [str(r) for r in irr.get("rules", [])], t,
                                  decision, decision in ("pending", "reconstruction_proposed", "referred",
                                                         "placement_proposed"))
            elif etype == "flag_resolved" and key in flags:
                flag = flags[key]
                if flag.resolved_ns is None:
                    flag.resolved_ns, flag.resolved_by = t, irr.get("resolved_by")
                    flag.final = str(irr.get("decision", ""))


def _settled(rec: RoundRec, s: dict[str, Any], t: int) -> None:
    """The settlement's money into the round's stakes by seat and component."""
    rec.revision = s.get("paytable_revision")
    if s.get("void"):
        rec.void = True
    jackpot = s.get("jackpot") or {}
    pool_before = jackpot.get("pool_before")
    seats = list(s.get("seats") or [])
    antes = sum(1 for seat in seats if any(w.get("wager") == "ante" and w.get("stake") for w in seat.get("wagers", [])))
    for seat in seats:
        by: dict[str, SeatStake] = {}
        n = int(seat.get("seat", 0))
        has_ante = any(w.get("wager") == "ante" and w.get("stake") for w in seat.get("wagers", []))
        for w in seat.get("wagers", []):
            comp = component_of(rec.game, str(w.get("wager")))
            if comp is None:
                continue
            st = by.setdefault(comp, SeatStake(n, comp, 0, 0, 0))
            stake, net = int(w.get("stake") or 0), int(w.get("net") or 0)
            st.handle += stake
            st.house -= net
            if w.get("wager") == UNIT_WAGER[comp]:
                st.unit += stake
            if w.get("outcome") in ("returned", "void"):
                st.returned += stake
            if comp == "progressive":
                st.pool_before = None if pool_before is None else int(pool_before)
                st.other_antes = antes - (1 if has_ante else 0)
                st.hits += [str(line.get("label")) for line in w.get("lines", []) if line.get("label")]
        rec.stakes.extend(st for st in by.values() if st.handle or st.unit)
    rec.settled_ns = t  # last: a round is settled for the figures only once its money is read
