"""The API's request bodies within stated bounds (issue 12 items 6 and 8; docs/api.md "Limits").

NaN, Infinity and 1e999 answered 500 on every endpoint; a duplicate key was taken with its
last value; a body of any size was read; a refused wager name was journaled in full, twice.
"""

from __future__ import annotations

from typing import Any

import pytest
from daemon_harness import TOKEN, Table

from cardshoe.journal import JournalReader

TCP = "three-card-poker"
JSON = {"content-type": "application/json"}


def _journal_bytes(table: Table) -> tuple[int, int]:
    """(entries, bytes of their bodies) in the table's journal."""
    with JournalReader(table.config.journal) as j:
        bodies = [len(e.body) + len(e.raw or b"") for e in j.entries()]
    return len(bodies), sum(bodies)


def _body_endpoints(table: Table, rid: str) -> list[tuple[str, str]]:
    """Every endpoint that takes a body, with its path parameters filled in."""
    out = []
    for route in table.client.app.routes:  # type: ignore[attr-defined]
        methods = getattr(route, "methods", set()) or set()
        for method in sorted(methods & {"POST", "PUT", "PATCH"}):
            path = route.path.replace("{round_id}", rid).replace("{seat}", "3").replace("{wager}", "ante")
            out.append((method, path))
    return out


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_that_is_not_finite_is_a_4xx_naming_the_field_on_every_endpoint(
        make_table: Any, literal: str) -> None:
    table: Table = make_table(TCP, 7)
    rid = table.ok("POST", "/rounds")["round_id"]
    endpoints = _body_endpoints(table, rid)
    assert len(endpoints) >= 15, endpoints
    before = _journal_bytes(table)
    for method, path in endpoints:
        r = table.client.request(method, path, content=f'{{"amount": {literal}}}', headers=JSON)
        assert r.status_code == 422, (method, path, r.status_code, r.text)
        detail = r.json()["detail"]
        assert detail["field"] == "amount" and "not a finite number" in detail["message"], (path, detail)
    assert _journal_bytes(table) == before  # nothing got in


def test_a_duplicate_key_is_refused_naming_it(make_table: Any) -> None:
    table: Table = make_table(TCP, 7)
    rid = table.ok("POST", "/rounds")["round_id"]
    r = table.client.post(f"/rounds/{rid}/wagers", headers=JSON,
                          content='{"seat": 3, "wager": "pair_plus", "amount": 1000, "amount": 100000}')
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail["field"] == "amount" and "duplicate key" in detail["message"]
    assert table.round(rid)["wagers"] == {}


def test_a_body_over_the_size_limit_is_413_without_reading_it(make_table: Any) -> None:
    table: Table = make_table(TCP, 7)
    rid = table.ok("POST", "/rounds")["round_id"]
    before = _journal_bytes(table)
    big = '{"seat": 3, "wager": "ante", "amount": 1000, "pad": "' + "x" * (70 << 10) + '"}'
    r = table.client.post(f"/rounds/{rid}/wagers", headers=JSON, content=big)
    assert r.status_code == 413, r.text
    assert r.json()["detail"]["field"] == "body" and "65536" in r.json()["detail"]["message"]

    def chunks() -> Any:  # no Content-Length: the limit counts what arrives
        for _ in range(100):
            yield b" " * 1024

    r = table.client.post(f"/rounds/{rid}/wagers", headers=JSON, content=chunks())
    assert r.status_code == 413, r.text
    assert _journal_bytes(table) == before


def test_a_long_string_is_refused_and_not_journaled(make_table: Any) -> None:
    table: Table = make_table(TCP, 7)
    rid = table.ok("POST", "/rounds")["round_id"]
    before = _journal_bytes(table)
    r = table.client.post(f"/rounds/{rid}/wagers", json={"seat": 3, "wager": "w" * 10_000, "amount": 1000})
    assert r.status_code == 422, r.text
    assert r.json()["detail"]["field"] == "wager"
    r = table.client.put(f"/rounds/{rid}/wagers/3/{'w' * 5000}", json={"amount": 1000})
    assert 400 <= r.status_code < 500, r.text
    r = table.client.post(f"/rounds/{'r' * 5000}/no-more-bets")
    assert 400 <= r.status_code < 500, r.text
    assert _journal_bytes(table) == before


def test_the_journal_grows_a_bounded_amount_per_refused_request(make_table: Any) -> None:
    # A wager name within the bound that the game does not have is refused and journaled
    # (input + input_refused); its cost is bounded by the name's bound (40 characters).
    table: Table = make_table(TCP, 7)
    rid = table.ok("POST", "/rounds")["round_id"]
    before = _journal_bytes(table)
    r = table.client.post(f"/rounds/{rid}/wagers", json={"seat": 3, "wager": "w" * 40, "amount": 1000})
    assert r.status_code == 422, r.text
    after = _journal_bytes(table)
    assert after[1] - before[1] < 2048, (before, after)


def test_an_unauthorised_body_is_still_401(make_table: Any) -> None:
    table: Table = make_table(TCP, 7)
    r = table.client.post("/rounds", content='{"x": NaN}',
                          headers={**JSON, "Authorization": "Bearer not-the-token-at-all"})
    assert r.status_code == 401
    r = table.client.post("/rounds", content='{"x": NaN}', headers={**JSON, "Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 422


def _nested(levels: int) -> str:
    """A body nested exactly `levels` deep: the object (level 1), then `levels - 1` arrays."""
    return '{"amount": 1000, "deep": ' + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "}"


def test_the_depth_limit_itself_refuses_a_body_one_level_over_8(make_table: Any) -> None:
    # Issue 20 item 7: the limit could be switched off with every test passing, the only
    # nesting test being refused by the parser's recursion error. At 9 levels no recursion
    # error can happen: only the limit (docs/api.md "Limits": 8 levels) refuses it, naming
    # the first array over the limit; at 8 the limit passes it and the schema has its say.
    table: Table = make_table(TCP, 7)
    r = table.client.put("/jackpot", headers=JSON, content=_nested(9))
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == {"field": "deep" + "[0]" * 7, "message": "nested deeper than 8 levels",
                                  "error": "JSONInputError"}
    r = table.client.put("/jackpot", headers=JSON, content=_nested(8))
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail["error"] == "ValidationError" and detail["field"] == "deep", detail  # not the depth limit
