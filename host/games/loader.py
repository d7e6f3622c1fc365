"""Load and check the versioned pay-table files of the five games.

A pay-table file is data, versioned with the rules it transcribes (``rules_version``,
``rules_effective``) and with its own ``revision``. Loading checks every field, because a
pay table with a typo would pay real money wrongly: any inconsistency raises
:class:`PayTableError` naming the file and the field.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from cardshoe.cards import SUITS

from .model import (
    Basis,
    Decision,
    Game,
    HandOf,
    PayLine,
    PayTable,
    PayTableError,
    ProgressiveRules,
    UnknownGameError,
)

__all__ = ["GAME_IDS", "get_game", "load_game", "parse_game", "HAND_NAMES"]

GAME_IDS: tuple[str, ...] = (
    "three-card-poker",
    "megalink-three-card-poker",
    "megalink-three-card-poker-xtreme",
    "megalink-let-it-ride",
    "megalink-singapore-stud-poker",
)

WAGER_NAMES = frozenset(
    {"ante", "play", "pair_plus", "six_card_bonus", "progressive", "bet", "one", "two", "dollar"}
)

# Hand class names a line may name (the Hand3/Hand5 member names of cardshoe.poker), plus ANY.
HAND_NAMES = frozenset(
    {
        "HIGH_CARD", "PAIR", "TWO_PAIR", "FLUSH", "STRAIGHT", "THREE_OF_A_KIND", "FULL_HOUSE",
        "FOUR_OF_A_KIND", "STRAIGHT_FLUSH", "ROYAL_FLUSH", "ANY",
    }
)

SCHEMA = "cardshoe.paytable/1"


class _Reader:
    """Typed access to one JSON object, naming the path of any bad field."""

    def __init__(self, source: str, data: Any, path: str = "") -> None:
        if not isinstance(data, dict):
            raise PayTableError(f"{source}: {path or 'file'} must be an object")
        self.source, self.data, self.path = source, data, path

    def _where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, message: str) -> PayTableError:
        return PayTableError(f"{self.source}: {self._where(key)}: {message}")

    def raw(self, key: str) -> Any:
        if key not in self.data:
            raise self.fail(key, "missing")
        return self.data[key]

    def text(self, key: str, *, optional: bool = False) -> str | None:
        value = self.data.get(key) if optional else self.raw(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail(key, f"expected text, got {value!r}")
        return value

    def req_text(self, key: str) -> str:
        value = self.text(key)
        assert value is not None
        return value

    def integer(self, key: str, *, optional: bool = False, minimum: int = 0) -> int | None:
        value = self.data.get(key) if optional else self.raw(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def req_int(self, key: str, minimum: int = 0) -> int:
        value = self.integer(key, minimum=minimum)
        assert value is not None
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.raw(key)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"expected a list of text, got {value!r}")
        return tuple(value)

    def obj(self, key: str) -> _Reader:
        return _Reader(self.source, self.raw(key), self._where(key))

    def str_map(self, key: str) -> dict[str, str]:
        value = self.raw(key)
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
        ):
            raise self.fail(key, "expected an object of text values")
        return dict(value)


def _line(reader: _Reader) -> PayLine:
    forms = [k for k in ("odds", "fixed", "pool_percent") if k in reader.data]
    if len(forms) != 1:
        raise reader.fail("odds", f"a line pays in exactly one way (odds, fixed, pool_percent), got {forms}")
    hand = reader.req_text("hand")
    if hand not in HAND_NAMES:
        raise reader.fail("hand", f"unknown hand {hand!r}")
    odds = reader.integer("odds", optional=True, minimum=1)
    basis: Basis | None = None
    if odds is not None:
        try:
            basis = Basis(reader.raw("basis"))
        except ValueError:
            raise reader.fail("basis", f"must be 'to' or 'for', got {reader.data['basis']!r}") from None
    elif "basis" in reader.data:
        raise reader.fail("basis", "only odds have a basis")
    pool_percent = reader.integer("pool_percent", optional=True, minimum=1)
    if pool_percent is not None and pool_percent > 100:
        raise reader.fail("pool_percent", f"{pool_percent} is over 100")
    suits: frozenset[int] | None = None
    if "suits" in reader.data:
        letters = reader.texts("suits")
        if not letters or any(s not in SUITS for s in letters):
            raise reader.fail("suits", f"expected suit letters of {SUITS!r}, got {letters!r}")
        suits = frozenset(SUITS.index(s) for s in letters)
    min_pair_rank = reader.integer("min_pair_rank", optional=True, minimum=2)
    if min_pair_rank is not None and (hand != "PAIR" or min_pair_rank > 14):
        raise reader.fail("min_pair_rank", "only a PAIR line has a pair rank 2..14")
    return PayLine(
        label=reader.req_text("label"),
        hand=hand,
        odds=odds,
        basis=basis,
        fixed=reader.integer("fixed", optional=True, minimum=1),
        pool_percent=pool_percent,
        suits=suits,
        min_pair_rank=min_pair_rank,
        envy=reader.integer("envy", optional=True, minimum=1),
    )


def _table(name: str, reader: _Reader) -> PayTable:
    try:
        hand_of = HandOf(reader.raw("hand_of"))
    except ValueError:
        raise reader.fail("hand_of", f"unknown value {reader.data['hand_of']!r}") from None
    raw_lines = reader.raw("lines")
    if not isinstance(raw_lines, list) or not raw_lines:
        raise reader.fail("lines", "expected a non-empty list")
    lines = tuple(_line(_Reader(reader.source, item, f"{reader.path}.lines[{i}]")) for i, item in enumerate(raw_lines))
    return PayTable(name=name, rule=reader.req_text("rule"), hand_of=hand_of, lines=lines)


def parse_game(data: Any, source: str = "<pay table>") -> Game:
    """Build a :class:`Game` from a pay-table document; raise PayTableError if inconsistent."""
    top = _Reader(source, data)
    if top.raw("schema") != SCHEMA:
        raise top.fail("schema", f"expected {SCHEMA!r}, got {top.data.get('schema')!r}")
    game_id = top.req_text("game")
    if game_id not in GAME_IDS:
        raise top.fail("game", f"unknown game {game_id!r}")
    wagers = top.texts("wagers")
    bad = [w for w in wagers if w not in WAGER_NAMES]
    if bad:
        raise top.fail("wagers", f"unknown wager names {bad}")
    base = top.texts("base_wagers")
    if not set(base) <= set(wagers):
        raise top.fail("base_wagers", "must be wagers of the game")
    decision: Decision | None = None
    if top.data.get("decision") is not None:
        d = top.obj("decision")
        decision = Decision(
            on=d.req_text("on"),
            continue_choice=d.req_text("continue"),
            fold_choice=d.req_text("fold"),
            wager=d.req_text("wager"),
            multiple=d.req_int("multiple", minimum=1),
        )
        if decision.on not in wagers or decision.wager not in wagers:
            raise top.fail("decision", "decision wagers must be wagers of the game")
    pull_backs = top.str_map("pull_backs") if "pull_backs" in top.data else {}
    tables_reader = top.obj("tables")
    tables = {name: _table(name, tables_reader.obj(name)) for name in tables_reader.data}
    if "progressive" in wagers and "progressive" not in tables:
        raise top.fail("tables", "a game with a progressive wager needs a progressive table")
    prog = top.obj("progressive")
    multiples_raw = prog.raw("multiples")
    multiples: tuple[int, ...] | None
    if multiples_raw is None:
        multiples = None
    elif isinstance(multiples_raw, list) and multiples_raw and all(
        isinstance(m, int) and not isinstance(m, bool) and m >= 1 for m in multiples_raw
    ):
        multiples = tuple(multiples_raw)
    else:
        raise prog.fail("multiples", f"expected null or a list of positive integers, got {multiples_raw!r}")
    if prog.raw("fixed_paid_from") != "table":
        # Only the table-paid reading is implemented (docs/rule-readings.md); refuse others
        # rather than settle a pool the way the file did not mean.
        raise prog.fail("fixed_paid_from", "only 'table' is supported")
    envy = prog.raw("envy")
    if not isinstance(envy, bool):
        raise prog.fail("envy", "expected true or false")
    qualifier = top.data.get("dealer_qualifier")
    if qualifier not in (None, "queen_high", "ace_king"):
        raise top.fail("dealer_qualifier", f"unknown qualifier {qualifier!r}")
    royal3 = top.raw("three_card_royal")
    if not isinstance(royal3, bool):
        raise top.fail("three_card_royal", "expected true or false")
    positions = top.obj("positions")
    cards = top.obj("cards")
    effective = top.text("rules_effective", optional=True)
    return Game(
        id=game_id,
        title=top.req_text("title"),
        rules_version=top.req_text("rules_version"),
        rules_effective=effective,
        revision=top.req_int("revision", minimum=1),
        currency=top.req_text("currency"),
        minor_per_major=top.req_int("minor_per_major", minimum=1),
        positions_min=positions.req_int("min", minimum=1),
        positions_max=positions.req_int("max", minimum=1),
        player_cards=cards.req_int("player", minimum=1),
        dealer_cards=cards.req_int("dealer"),
        community_cards=cards.req_int("community"),
        dealing_methods=top.texts("dealing_methods") if "dealing_methods" in top.data else (),
        wagers=wagers,
        base_wagers=base,
        decision=decision,
        pull_backs=pull_backs,
        dealer_qualifier=qualifier,
        three_card_royal=royal3,
        tables=tables,
        progressive=ProgressiveRules(
            multiples=multiples,
            envy=envy,
            sharing=prog.str_map("sharing"),
            top_hand_last=prog.text("top_hand_last", optional=True),
        ),
        rules=top.str_map("rules"),
    )


def load_game(game_id: str) -> Game:
    """Read and check ``paytables/<game_id>.json`` (uncached)."""
    if game_id not in GAME_IDS:
        raise UnknownGameError(game_id, GAME_IDS)
    name = f"{game_id}.json"
    text = resources.files("cardshoe.games").joinpath("paytables", name).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PayTableError(f"paytables/{name}: not JSON: {exc}") from None
    game = parse_game(data, f"paytables/{name}")
    if game.id != game_id:
        raise PayTableError(f"paytables/{name}: game is {game.id!r}, expected {game_id!r}")
    return game


@lru_cache(maxsize=None)
def get_game(game_id: str) -> Game:
    """The game ``game_id`` with its pay tables; raise UnknownGameError for other ids."""
    return load_game(game_id)
