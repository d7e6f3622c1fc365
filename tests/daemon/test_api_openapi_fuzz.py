"""A property-based run of the API's OpenAPI description against a live daemon (issue 13
item 6): schemathesis generates requests from `/openapi.json`, valid ones and invalid ones,
sends them over real HTTP (uvicorn) to a daemon with a shoe on a pty, and checks every answer
against the description: no 5xx, every status code declared, every body of its declared
schema and content type, a valid request never refused as invalid (422), an invalid one never
accepted, auth never ignored.

Bounded and deterministic: a fixed number of examples per operation and mode, derandomized
(Hypothesis's seed comes from the test, not the clock), no example database, no shrinking
(a failure is reported as found; the run goes on to count them all). `/events` is left out
of the generated run (a stream ends only with `limit`); test_daemon_api.py reads it and
test_openapi_declares_the_event_stream checks its declared content type.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from browser_harness import Served  # noqa: E402
from daemon_harness import TOKEN, Table  # noqa: E402

from cardshoe.cards import parse_card  # noqa: E402

schemathesis = pytest.importorskip("schemathesis")

#: Examples per operation and mode (and per fixed round): 2 modes x ~21 operations, and the
#: round operations again on a real round. Raise it for a deeper run (CASES=... is not read:
#: the everyday suite must stay well under a minute on two shared cores).
EXAMPLES = 5


def _played(table: Table) -> tuple[str, str]:
    """A settled round with cards, a flag and a settlement, and an open round with wagers."""
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    for seat in (2, 5):
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": seat, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(x) for x in ["Ah", "Kh", "Qh", "2c", "7d", "9s", "Qs", "Js", "4d"]])
    table.ok("POST", f"/rounds/{rid}/exposures", json={"shoe_index": 4})  # one exposure: referred (6.1)
    flag = table.round(rid)["irregularities"][0]["id"]
    table.ok("POST", f"/rounds/{rid}/confirmations", json={"flag": flag, "confirmed": True, "supervisor": "SM"})
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 2, "choice": "play"})
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 5, "choice": "fold"})
    table.ok("POST", f"/rounds/{rid}/settle", json={})
    open_rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{open_rid}/wagers", json={"seat": 3, "wager": "ante", "amount": 500})
    return str(rid), str(open_rid)


def test_the_openapi_description_holds_against_a_live_daemon(make_table) -> None:  # type: ignore[no-untyped-def]
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis.generation.modes import GenerationMode

    table: Table = make_table("three-card-poker", 7)
    settled, open_rid = _played(table)
    served = Served(table)
    try:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        # The description needs the token like every endpoint (docs/api.md).
        schema = schemathesis.openapi.from_url(served.url + "/openapi.json", headers=auth)
        failures: list[str] = []
        cases = 0
        started = time.monotonic()
        for result in schema.get_all_operations():
            operation = result.ok()
            if operation.path == "/events":
                continue
            runs: list[dict[str, Any]] = [{}]
            if "{round_id}" in operation.path:
                runs += [{"round_id": settled}, {"round_id": open_rid}]
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                for fixed in runs:
                    params = {"path_parameters": fixed} if fixed else {}
                    strategy = operation.as_strategy(generation_mode=mode, **params)

                    @given(case=strategy)
                    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
                    def run(case: Any) -> None:
                        nonlocal cases
                        cases += 1
                        try:
                            case.call_and_validate(base_url=served.url, headers=auth, timeout=10)
                        except BaseException as exc:  # noqa: BLE001 - every failure is counted, then reported
                            failures.append(f"{operation.label} [{mode.value} {fixed}]: {exc}"[:1500])

                    try:
                        run()
                    except Unsatisfiable:
                        assert mode is GenerationMode.NEGATIVE  # nothing in it can be made invalid
        elapsed = time.monotonic() - started
        print(f"schemathesis: {cases} cases in {elapsed:.1f} s, {len(failures)} failures")
        assert not failures, f"{len(failures)} failures in {cases} cases:\n" + "\n\n".join(failures[:15])
        assert cases > 300  # the run did run (every operation, both modes)
    finally:
        served.stop()


def test_openapi_declares_the_event_stream_and_every_error(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    spec = table.client.get("/openapi.json").json()
    events = spec["paths"]["/events"]["get"]["responses"]
    assert "text/event-stream" in events["200"]["content"]
    assert "application/json" not in events["200"]["content"]
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            declared = set(op["responses"])
            assert {"401", "403"} <= declared or (method, path) == ("get", "/session"), (method, path)
            assert "422" in declared, (method, path)  # a query parameter the endpoint does not take
            if method in ("post", "put", "delete"):
                assert "413" in declared, (method, path)  # the body limits come first
            for code, answer in op["responses"].items():
                if code.startswith(("4", "5")):
                    ref = answer["content"]["application/json"]["schema"]["$ref"]
                    assert ref.endswith("/ErrorBody"), (method, path, code)
