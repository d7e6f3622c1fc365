"""The table configuration (TOML + command line), `cardshoe replay` on a real journal,
the RFID manifest in parts, Let It Ride's drawn Magic Card, and a failing journal."""

from __future__ import annotations

import io
import json
import os
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import wire
from daemon_harness import Table, wait_for

from cardshoe.cards import parse_card
from cardshoe.daemon.cli import config_from_args, ensure_token
from cardshoe.daemon.config import ConfigError, read_token
from cardshoe.journal import JournalReader, canonical_json
from cardshoe.journal import replay as replay_cli

TOML = """
[table]
name = "TCP-07"
game = "megalink-three-card-poker-xtreme"
seats = 6
method = "C"
[shoe]
port = "/dev/cardshoe-T07"
[journal]
path = "/var/lib/cardshoe/T07.sqlite"
[api]
listen = "0.0.0.0:9000"
[limits]
ante = { min = 2500, max = 250000 }
progressive = { min = 500, max = 2500 }
[jackpot]
reset = 5000000
[link]
resend_ms = 250
"""


def test_a_toml_table_file_with_command_line_overrides(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(TOML)
    cfg = config_from_args(["--config", str(path), "--seats", "7"])
    assert (cfg.name, cfg.game, cfg.seats, cfg.method, cfg.port) == (
        "TCP-07", "megalink-three-card-poker-xtreme", 7, "C", "/dev/cardshoe-T07")
    assert (cfg.listen_host, cfg.listen_port, cfg.link.resend_ms, cfg.jackpot_reset) == ("0.0.0.0", 9000, 250, 5000000)
    setup = cfg.setup()
    assert setup.limits_json()["ante"] == {"min": 2500, "max": 250000}
    assert setup.limits_json()["pair_plus"] == {"min": 100, "max": 10_000_000}  # default for unset wagers


@pytest.mark.parametrize("text,field", [
    ('[table]\ngame = "poker"\nseats = 7\n[shoe]\nport = "x"', "table.game"),
    ('[table]\ngame = "three-card-poker"\nseats = 9\n[shoe]\nport = "x"', "table.seats"),
    ('[table]\ngame = "three-card-poker"\nseats = "7"\n[shoe]\nport = "x"', "table.seats"),
    ('[table]\ngame = "three-card-poker"\nseats = 7\nmethod = "B"\n[shoe]\nport = "x"', "table.method"),
    # Xtreme deals by method A, B or C (3.7): without one no round could ever be opened (issue 20).
    ('[table]\ngame = "megalink-three-card-poker-xtreme"\nseats = 7\n[shoe]\nport = "x"', "table.method"),
    ('[table]\ngame = "three-card-poker"\nseats = 7\n[shoe]\nport = "x"\n[limits]\nante = { min = 5 }', "limits.ante"),
    ('[table]\ngame = "three-card-poker"\nseats = 7\n[shoe]\nport = "x"\n[tabel]\nx = 1', "tabel"),
    ('[table]\ngame = "three-card-poker"\nseats = 7', "port"),
    ('[table\n', "--config"),
])
def test_a_bad_setting_is_refused_naming_it(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        config_from_args(["--config", str(path)])
    assert str(err.value).startswith(field), str(err.value)


def test_the_token_file_is_created_private_and_refused_when_readable_by_others(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CARDSHOE_TOKEN", raising=False)
    token_file = tmp_path / "etc" / "T07.token"
    cfg = config_from_args(["--port", "x", "--game", "three-card-poker", "--seats", "7",
                            "--token-file", str(token_file)])
    token = ensure_token(cfg)
    assert len(token) >= 32 and os.stat(token_file).st_mode & 0o777 == 0o600
    assert ensure_token(cfg) == token  # kept, not replaced
    os.chmod(token_file, 0o644)
    with pytest.raises(ConfigError, match="table.token_file"):
        read_token(cfg)


def _played_round(table: Table) -> str:
    table.power_on_and_load()
    rid = str(table.ok("POST", "/rounds")["round_id"])
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in ["Ah", "Kh", "Qh", "2c", "7d", "9s"]])
    table.ok("POST", f"/rounds/{rid}/decisions", json={"seat": 1, "choice": "play"})
    table.ok("POST", f"/rounds/{rid}/settle", json={})
    return rid


def test_replay_detects_a_journal_edited_after_the_fact(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    rid = _played_round(table)
    table.kill_daemon()
    path = table.config.journal
    assert replay_cli.main([str(path)]) == 0
    # Someone edits the settlement in the journal: replay sees it differs from the cards.
    conn = sqlite3.connect(path)
    row = conn.execute("SELECT id, body FROM entries WHERE kind = 'settlement'").fetchone()
    data = json.loads(row[1])
    data["settlement"]["seats"][0]["net"] += 7000
    conn.execute("UPDATE entries SET body = ? WHERE id = ?", (canonical_json(data), row[0]))
    conn.commit()
    conn.close()
    out = io.StringIO()
    with redirect_stdout(out):
        assert replay_cli.main([str(path)]) == 1
    assert f"MISMATCH entry {row[0]}" in out.getvalue()
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert replay_cli.main([str(path), "--export", "NOPE"]) == 2
    assert "--export" in err.getvalue() and rid in err.getvalue()
    with redirect_stderr(io.StringIO()):
        assert replay_cli.main([str(path.with_name("missing.sqlite"))]) == 2
    table.start_daemon()


def test_an_rfid_manifest_goes_to_the_shoe_in_parts(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    table.shoe.power_on()
    table.shoe_on = True
    table.shoe.wait_acked()
    wait_for(lambda: table.daemon.shoe_serial is not None, what="HELLO")
    cards = ["23456789TJQKA"[r] + s for r in range(13) for s in "cdhs"]
    manifest = [{"card": c, "uid": f"04{i:02x}a1b2c3d4e5"} for i, c in enumerate(cards)]
    bad = table.client.post("/shoe/load", json={"deck_id": 9, "manifest": manifest[:51]})
    assert bad.status_code == 422 and bad.json()["detail"]["field"] == "manifest"
    bad = table.client.post("/shoe/load", json={"deck_id": 9, "manifest": [dict(manifest[0], card="1c")] + manifest[1:]})
    assert bad.status_code == 422 and bad.json()["detail"]["field"] == "manifest.0.card"  # the schema error's location
    r = table.client.post("/shoe/load", json={"deck_id": 9, "manifest": manifest})
    assert r.status_code == 202
    wait_for(lambda: table.shoe.state.deck_id == 9, what="the last part stored")
    parts = [args for kind, args in table.shoe.commands if kind == wire.NEW_SHOE]
    assert [p[3] for p in parts] == list(range(len(parts))) and len(parts) >= 3
    assert sum(p[5] for p in parts) == 52 and all(p[2] == 1 for p in parts)


def test_let_it_ride_magic_card_drawn_is_journaled_before_the_first_card(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("megalink-let-it-ride", 7, draw_magic=True, jackpot_reset=1_000_000)
    table.power_on_and_load()
    opened = table.ok("POST", "/rounds")
    rid = opened["round_id"]
    # Configured to draw: drawn as the round opens, before any card can be dealt.
    assert [e["type"] for e in opened["events"]][-1] == "progressive_selected"
    for w in ("one", "two", "dollar"):
        table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": w, "amount": 500})
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 3, "wager": "progressive", "amount": 100})
    done = table.ok("POST", f"/rounds/{rid}/progressive", json={"draw": True})  # drawn again: still allowed
    snap = table.round(rid)
    # The harness's random source returns n-1: the last card (As) and the last seat (7).
    assert (snap["magic_card"], snap["lucky_seat"]) == ("As", 7)
    assert [e["type"] for e in done["events"]] == ["progressive_selected"]
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    table.deal([parse_card(c) for c in ["2h", "3h", "4h"]])
    again = table.client.post(f"/rounds/{rid}/progressive", json={"magic_card": "Kd", "lucky_seat": 1})
    assert again.status_code == 409  # after the first card: refused
    with JournalReader(table.config.journal) as j:
        ids = [(e.id, e.data()) for e in j.entries(("input", "frame"))]
    selection = min(i for i, d in ids if d.get("op", {}).get("op") == "progressive_selection")
    first_card = next(i for i, d in ids if d.get("type") == "CARD")
    assert selection < first_card


def test_a_failing_journal_stops_acknowledging_and_refuses_requests(make_table) -> None:  # type: ignore[no-untyped-def]
    table: Table = make_table("three-card-poker", 7)
    table.power_on_and_load()
    rid = table.ok("POST", "/rounds")["round_id"]
    table.ok("POST", f"/rounds/{rid}/wagers", json={"seat": 1, "wager": "ante", "amount": 1000})
    table.ok("POST", f"/rounds/{rid}/no-more-bets")
    # The disk goes bad: every write now fails inside the writer's transaction.
    assert table.daemon.journal is not None

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TEMP TRIGGER no_more BEFORE INSERT ON entries BEGIN SELECT RAISE(ABORT, 'disk'); END")

    table.daemon.journal.write(broken)
    acked_before = table.daemon.status()["link"]["acks_sent"]
    table.shoe.deal(parse_card("As"))
    with pytest.raises(TimeoutError):
        table.shoe.wait_acked(0.5)
    assert table.daemon.status()["link"]["acks_sent"] == acked_before
    r = table.client.post(f"/rounds/{rid}/decisions", json={"seat": 1, "choice": "play"})
    assert r.status_code == 503 and r.json()["detail"]["field"] == "journal"
    assert table.daemon.status()["journal_failed"]


def test_keys_come_from_the_key_store_and_a_leaked_key_file_is_refused(tmp_path: Path) -> None:
    from cardshoe.daemon.daemon import keystore_keys
    from cardshoe.keys import KeyStore

    store = KeyStore(tmp_path / "keys")
    key = store.create(4711)
    assert keystore_keys(tmp_path / "keys")(4711) == key
    assert keystore_keys(tmp_path / "keys")(4712) is None
    os.chmod(store.path(4711), 0o644)
    assert keystore_keys(tmp_path / "keys")(4711) is None  # readable by others: not used


def test_cardshoe_run_refuses_a_bad_command_line_naming_the_setting(capsys: pytest.CaptureFixture[str]) -> None:
    from cardshoe.cli import main

    assert main(["run", "--port", "/dev/null", "--game", "three-card-poker", "--seats", "8"]) == 2
    assert "table.seats" in capsys.readouterr().err
    assert main(["run", "--game", "three-card-poker", "--seats", "7"]) == 2
    assert "port" in capsys.readouterr().err
