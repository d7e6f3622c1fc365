"""Jackpot evidence (issue 14 item 5): made by the real daemon from a real journal of frames
received over a pty, verified offline; each kind of tampering fails with its check named.

Expectations come from the rules, not the code: TCP 3.7 deals three cards to each wagered
seat then three to the dealer, so the hands are the dealt cards in that order; A-K-Q of one
of spades is the Royal Flush TCP 4.4 pays 100% of the pool (the pool then resets).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from daemon_harness import KEY, SERIAL, Table, wait_for  # type: ignore[import-not-found]

from cardshoe.cards import parse_card
from cardshoe.cli import main as cardshoe
from cardshoe.evidence import verify
from cardshoe.evidence.build import public_key_of, sign
from cardshoe.keys import load_table_key

TCP = "three-card-poker"
POOL, RESET = 12_345_600, 1_000_000
DEALT = ["As", "Ks", "Qs", "2c", "7d", "9h"]  # seat 1 (a Royal Flush of spades), then the dealer (TCP 3.7)


@pytest.fixture(scope="module")
def hit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Table, str, dict[str, Any]]]:
    table = Table(tmp_path_factory.mktemp("evidence"), TCP, 7, jackpot_reset=RESET,
                  limits=(("progressive", 100, 100),))
    try:
        table.power_on_and_load()
        table.ok("PUT", "/jackpot", json={"amount": POOL})
        rid = str(table.ok("POST", "/rounds")["round_id"])
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "progressive", "amount": 100})
        table.ok("POST", f"/rounds/{rid}/no-more-bets")
        table.deal([parse_card(x) for x in DEALT])
        table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 1, "choice": "play"})
        table.ok("POST", f"/rounds/{rid}/settle", json={})
        path = wait_for(lambda: table.daemon.evidence_files.get(rid), what="the evidence file of the hit")
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        yield table, rid, doc
    finally:
        table.close()


def keys(serial: int) -> bytes | None:
    return KEY if serial == SERIAL else None


def checks(doc: dict[str, Any], pubkey: bytes | None = None) -> set[str]:
    return {f.check for f in verify(doc, keys=keys, table_pubkey=pubkey).failures}


def resign(doc: dict[str, Any], table: Table) -> dict[str, Any]:
    """The tampered body signed again with the table's own key: only the evidence can refute it."""
    seed = load_table_key(table.config.table_key_file())
    assert seed is not None
    return sign(doc["evidence"], seed)


def test_a_progressive_hit_gets_a_signed_evidence_file_that_verifies(hit: tuple[Table, str, dict[str, Any]]) -> None:
    table, rid, doc = hit
    body = doc["evidence"]
    assert body["round_id"] == rid and body["reason"] == "progressive_hit"
    assert body["hands"]["positions"]["seat 1"] == ["As", "Ks", "Qs"]
    assert body["hands"]["positions"]["dealer"] == ["2c", "7d", "9h"]
    assert [c["card"] for c in body["cards"]] == DEALT and body["shoe"]["serials"] == [SERIAL]
    assert {f["type"] for f in body["frames"]} >= {"CARD"} and all(f["tag"] for f in body["frames"])
    assert body["jackpot"]["pool_before"] == POOL and body["jackpot"]["pool_after"] == RESET  # TCP 4.4: 100%
    assert body["jackpot"]["hits"][0]["seat"] == 1
    pubkey = table.daemon.table_public_key()
    assert doc["signature"]["public_key"] == pubkey.hex()
    report = verify(doc, keys=keys, table_pubkey=pubkey)
    assert report.ok, report.failures
    assert report.frames >= 6 and report.cards == 6
    events = [json.loads(e.body) for e in table.daemon.journal.reader().entries(("daemon",))]
    assert any(e["type"] == "evidence_written" and e["round_id"] == rid for e in events)


def test_a_tampered_frame_fails_its_tag(hit: tuple[Table, str, dict[str, Any]]) -> None:
    table, _, doc = hit
    bad = copy.deepcopy(doc)
    frame = next(f for f in bad["evidence"]["frames"] if f["type"] == "CARD")
    raw = bytearray(bytes.fromhex(frame["raw"]))
    raw[len(raw) // 2] ^= 0x01
    frame["raw"] = raw.hex()
    assert "frame" in checks(resign(bad, table))
    assert {"frame", "signature"} <= checks(bad)
    bad = copy.deepcopy(doc)  # the bytes intact, the message said to be decoded from them changed
    frame = next(f for f in bad["evidence"]["frames"] if f["type"] == "CARD")
    frame["message"]["code"] = parse_card("2d")
    assert checks(resign(bad, table)) == {"frame"}
    bad = copy.deepcopy(doc)  # the journal's copy of a frame changed
    entry = next(e for e in bad["evidence"]["journal"] if e["kind"] == "frame" and e["body"]["type"] == "CARD")
    entry["body"]["code"] = parse_card("2d")
    # ... no longer the frame recorded, and no longer the entry its hash chain sealed (issue 21 item 3)
    assert checks(resign(bad, table)) == {"journal", "chain"}


def test_a_tampered_card_fails_against_its_frame_and_the_hands(hit: tuple[Table, str, dict[str, Any]]) -> None:
    table, _, doc = hit
    bad = copy.deepcopy(doc)
    bad["evidence"]["hands"]["positions"]["seat 1"][2] = "Js"
    assert checks(resign(bad, table)) == {"hands"}
    bad = copy.deepcopy(doc)
    card = bad["evidence"]["cards"][2]
    card["card"], card["code"] = "Js", parse_card("Js")
    assert checks(resign(bad, table)) == {"cards"}
    bad = copy.deepcopy(doc)  # the round's own record of the card: the frame refutes it
    op = next(o for o in bad["evidence"]["operations"] if o["op"] == "shoe_card" and o["index"] == 3)
    op["code"] = parse_card("Js")
    assert "operations" in checks(resign(bad, table))


def test_a_tampered_settlement_fails_the_recomputation(hit: tuple[Table, str, dict[str, Any]]) -> None:
    table, _, doc = hit
    bad = copy.deepcopy(doc)
    bad["evidence"]["settlement"]["seats"][0]["net"] += 100_000
    assert checks(resign(bad, table)) == {"settlement"}
    bad = copy.deepcopy(doc)
    bad["evidence"]["jackpot"]["pool_after"] = 0
    assert checks(resign(bad, table)) == {"jackpot"}


def test_a_wrong_signature_fails(hit: tuple[Table, str, dict[str, Any]]) -> None:
    table, _, doc = hit
    pubkey = table.daemon.table_public_key()
    other = sign(doc["evidence"], bytes(range(1, 33)))  # a valid signature, by another key
    assert checks(other) == set()  # it is a signature, but whose? only the table's key can say
    assert checks(other, pubkey) == {"signature"}
    bad = copy.deepcopy(doc)
    value = bytearray(bytes.fromhex(bad["signature"]["value"]))
    value[0] ^= 0x80
    bad["signature"]["value"] = value.hex()
    assert checks(bad, pubkey) == {"signature"}
    assert public_key_of(bytes(range(1, 33))) != pubkey


def test_the_cli_exports_from_the_journal_and_verifies_offline(hit: tuple[Table, str, dict[str, Any]], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    table, rid, doc = hit
    out = tmp_path / "e.json"
    # The journal is read as a copy (the daemon holds it open): replay's reader never writes.
    assert cardshoe(["evidence", "export", "--journal", str(table.config.journal), "--round", rid,
                     "--out", str(out), "--table-key", str(table.config.table_key_file())]) == 0
    exported = json.loads(out.read_text())
    assert exported["evidence"]["reason"] == "request"
    assert exported["evidence"]["settlement"] == doc["evidence"]["settlement"]
    pub = table.daemon.table_public_key().hex()
    capsys.readouterr()
    assert cardshoe(["evidence", "verify", str(out), "--shoe-key", KEY.hex(), "--table-pubkey", pub]) == 0
    assert capsys.readouterr().out.startswith(f"verified: round {rid}")
    bad = copy.deepcopy(exported)
    bad["evidence"]["settlement"]["totals"]["net"] += 1
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert cardshoe(["evidence", "verify", str(tmp_path / "bad.json"), "--shoe-key", KEY.hex(),
                     "--table-pubkey", pub]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "FAILED signature: the Ed25519 signature does not verify" in lines[0]
    assert any(line.startswith("FAILED settlement:") for line in lines)
    assert cardshoe(["evidence", "verify", str(out), "--shoe-key", bytes(32).hex()]) == 1  # the wrong shoe key
    assert "FAILED frame:" in capsys.readouterr().out
    assert cardshoe(["evidence", "verify", str(out), "--shoe-key", "abc"]) == 2  # not a key: usage
    assert cardshoe(["evidence", "verify", str(tmp_path / "missing.json")]) == 2


def test_the_api_gives_evidence_to_the_supervisor_and_surveillance_only(hit: tuple[Table, str, dict[str, Any]]) -> None:
    from fastapi.testclient import TestClient

    from cardshoe.api import create_app

    table, rid, _ = hit
    tokens = {"controller-token-0123456789": ["controller"], "supervisor-token-0123456789": ["supervisor"],
              "surveil-token-0123456789abc": ["surveillance"]}
    app = create_app(table.daemon, "all-roles-token-0123456789", role_tokens=tokens)
    with TestClient(app) as client:
        def get(token: str, url: str) -> Any:
            return client.get(url, headers={"Authorization": f"Bearer {token}"})

        assert get("controller-token-0123456789", f"/rounds/{rid}/evidence").status_code == 403
        for token in ("supervisor-token-0123456789", "surveil-token-0123456789abc"):
            r = get(token, f"/rounds/{rid}/evidence")
            assert r.status_code == 200, r.text
            assert verify(r.json(), keys=keys, table_pubkey=table.daemon.table_public_key()).ok
        assert get("supervisor-token-0123456789", "/rounds/T1-999999/evidence").status_code == 404
        key = get("controller-token-0123456789", "/evidence/public-key").json()
        assert key["public_key"] == table.daemon.table_public_key().hex()


def test_a_frame_entry_carrying_another_frames_bytes_fails_the_journal_check(
        hit: tuple[Table, str, dict[str, Any]]) -> None:
    # Issue 20 item 7: only decoded bodies were ever tampered, so the journal check's
    # comparison of the bytes could be switched off unseen. Each frame below is genuine (its
    # tag verifies with the shoe's key); what is wrong is which journal entry it is said to be.
    table, _, doc = hit
    frames = doc["evidence"]["frames"]
    cards = [f for f in frames if f["type"] == "CARD"]
    first, second = cards[0], cards[1]

    def entry_of(body: dict[str, Any], frame: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = next(e for e in body["journal"] if e["id"] == frame["entry"])
        return found

    # The journal's copy of the first card's entry holds the second card's bytes.
    bad = copy.deepcopy(doc)
    entry_of(bad["evidence"], first)["raw"] = second["raw"]
    # The hash chain (issue 21) sees the changed bytes too; the journal check must on its own.
    assert checks(resign(bad, table)) == {"journal", "chain"}
    # The second card's frame, bytes, header and message, recorded again as the first card's
    # journal entry, in the frame list and in the journal's copy alike: the entry's own shoe,
    # boot and seq say it is another frame, and one frame is never journaled twice.
    bad = copy.deepcopy(doc)
    body = bad["evidence"]
    i = next(n for n, f in enumerate(body["frames"]) if f["entry"] == first["entry"])
    body["frames"][i] = dict(copy.deepcopy(second), entry=first["entry"], t_ns=first["t_ns"])
    entry_of(body, first).update(raw=second["raw"], body=copy.deepcopy(second["message"]))
    failures = verify(resign(bad, table), keys=keys).failures
    assert [f.message for f in failures if f.check == "journal"] == [
        f"frame entry {first['entry']} (shoe {SERIAL} boot {second['boot']} seq {second['seq']}): the journal entry "
        f"recorded with that id was written for shoe {SERIAL} boot {first['boot']} seq {first['seq']}, not this frame",
        f"frame entry {second['entry']} (shoe {SERIAL} boot {second['boot']} seq {second['seq']}): the same frame is "
        f"recorded as journal entry {first['entry']} too"]
