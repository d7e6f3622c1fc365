"""`cardshoe decode`: the dissector over real files, standard input and a key store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol_helpers import load_vectors
from cardshoe.protocol.decode import main

DOC = load_vectors()
BY_NAME = {v["name"]: v for v in DOC["vectors"]}
KEY_HEX = DOC["key"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]], str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def capture(*names: str) -> bytes:
    return b"".join(bytes.fromhex(BY_NAME[n]["wire"]) for n in names)


def test_raw_capture_with_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cap.bin"
    path.write_bytes(capture("hello", "card_rfid_uid7", "bad_crc_payload", "ack"))
    code, lines, _ = run([str(path), "--key", KEY_HEX], capsys)
    assert code == 0
    assert [line["result"] for line in lines] == ["ok", "ok", "bad_crc", "ok"]
    hello, card, _, ack = lines
    assert hello["type_name"] == "HELLO" and hello["tag"] == "verified"
    assert card["fields"] == BY_NAME["card_rfid_uid7"]["expect"][0]["fields"]
    assert (card["shoe"], card["boot"], card["seq"], card["flags"]) == (1001, 7, 3, 0)
    assert ack["direction"] == "host_to_shoe" and ack["fields"] == {"boot": 7, "seq": 11}
    assert hello["offset"] == 1


def test_hex_capture_autodetected_with_comments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    second = BY_NAME["card_rfid_uid4"]["wire"]
    text = "# captured at table 4\n" + BY_NAME["fault_jam"]["wire"] + "  # a jam\n" + " ".join(
        second[i : i + 2] for i in range(0, len(second), 2))
    path = tmp_path / "cap.hex"
    path.write_text(text)
    code, lines, _ = run([str(path), "--key", KEY_HEX], capsys)
    assert code == 0
    assert [(line["result"], line["type_name"]) for line in lines] == [("ok", "FAULT"), ("ok", "CARD")]


def test_without_a_key_the_tag_is_unverified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cap.bin"
    path.write_bytes(capture("card_rfid_uid4", "bad_tag_forged"))
    code, lines, _ = run([str(path)], capsys)
    assert code == 0
    # The forged frame cannot be told from the genuine one without the key: neither is "ok".
    assert [line["result"] for line in lines] == ["unverified", "unverified"]
    assert all(line["tag"] == "unverified" for line in lines)
    # SPEC 3.5: without the key no card value is shown, only the session and index.
    assert lines[0]["fields"] == {"shoe_no": 12, "index": 1}
    assert lines[0]["sealed"].startswith("17 bytes of card values, sealed")
    code, lines, _ = run([str(path), "--key", KEY_HEX], capsys)
    assert [line["result"] for line in lines] == ["ok", "bad_tag"]
    assert lines[0]["fields"]["code"] == 51 and lines[0]["fields"]["raw"] == "8a3b19c4"


@pytest.mark.parametrize("name", ["card_barcode", "card_rfid_uid7", "deck_status_end", "new_shoe_manifest_uid7"])
def test_without_a_key_no_card_value_is_in_the_output(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every card value the vector's frames carry (codes, deck read, barcode text, UIDs, the
    # missing map) is absent from the keyless dissection, as text and as hex.
    path = tmp_path / "cap.bin"
    path.write_bytes(capture(name))
    _, lines, _ = run([str(path)], capsys)
    text = json.dumps(lines)
    assert all(line["result"] == "unverified" and "sealed" in line for line in lines)
    for want in BY_NAME[name]["expect"]:
        fields = want["fields"]
        assert "code" not in text and "raw" not in json.dumps([line["fields"] for line in lines])
        for entry in fields.get("entries", []):
            assert entry["uid"] not in text
        for key in ("raw", "missing_map"):
            if key in fields:
                assert fields[key] not in text
        assert want["payload"][12:] not in text  # the plain payload past the clear prefix
    # With the host's key store (`--keys DIR`) every card value is opened.
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    (keys / f"{DOC['shoe']}.key").write_text(KEY_HEX + "\n")
    os.chmod(keys / f"{DOC['shoe']}.key", 0o600)
    _, keyed, _ = run([str(path), "--keys", str(keys)], capsys)
    assert [line["result"] for line in keyed] == ["ok"] * len(keyed)
    assert [line["fields"] for line in keyed] == [e["fields"] for e in BY_NAME[name]["expect"]]
    assert not [line for line in keyed if "sealed" in line]


def test_key_store_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    (keys / "1001.key").write_text(KEY_HEX + "\n")
    os.chmod(keys / "1001.key", 0o600)
    path = tmp_path / "cap.bin"
    path.write_bytes(capture("unread", "unknown_shoe"))
    code, lines, _ = run([str(path), "--keys", str(keys)], capsys)
    assert code == 0
    assert [line["result"] for line in lines] == ["ok", "unverified"]
    assert lines[1]["shoe"] == 4242


def test_stdin_and_noise_and_incomplete_tail(capsys: pytest.CaptureFixture[str]) -> None:
    data = capture("noisy_stream")
    proc = subprocess.run([sys.executable, "-m", "cardshoe.protocol.decode", "-", "--key", KEY_HEX],
                          input=data, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    want = [e["result"] for e in BY_NAME["noisy_stream"]["expect"]] + ["incomplete"]
    assert [line["result"] for line in lines] == want


def test_replay_within_a_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cap.bin"
    path.write_bytes(capture("card_rfid_uid4", "card_rfid_uid4"))
    _, lines, _ = run([str(path), "--key", KEY_HEX], capsys)
    assert [line["result"] for line in lines] == ["ok", "replay"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["/nonexistent/capture.bin"], "cannot read /nonexistent/capture.bin"),
        (["CAP", "--key", "abcd"], "--key holds 2 bytes"),
        (["CAP", "--key", "zz"], "--key is not hex"),
        (["CAP", "--format", "hex"], "hex capture contains non-ASCII bytes"),
        (["CAP", "--keys", "/nonexistent/keys"], "key directory /nonexistent/keys does not exist"),
    ],
)
def test_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    path = tmp_path / "cap.bin"
    path.write_bytes(b"\x00\x01\xff\x00")
    argv = [str(path) if a == "CAP" else a for a in argv]
    code, lines, err = run(argv, capsys)
    assert code == 2 and not lines
    assert message in err


@pytest.mark.parametrize(("text", "mode", "message"), [
    ("not a key", 0o600, "is not 64 hex characters"),
    ("abcd", 0o600, "holds 2 bytes, not 32"),
    (KEY_HEX, 0o644, "is readable by others"),
])
def test_bad_key_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, mode: int, message: str) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "1001.key").write_text(text)
    os.chmod(keys / "1001.key", mode)
    path = tmp_path / "cap.bin"
    path.write_bytes(capture("hello"))
    code, lines, err = run([str(path), "--keys", str(keys)], capsys)
    assert code == 2 and not lines
    assert "1001.key" in err and message in err


def test_console_command() -> None:
    exe = Path(sys.executable).with_name("cardshoe")
    proc = subprocess.run([str(exe), "decode", "-", "--key", KEY_HEX], input=capture("ping").hex().encode(),
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    (line,) = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert line["type_name"] == "PING" and line["fields"] == {"nonce": 0xCAFEF00D}


@pytest.mark.parametrize(("text", "message"), [
    ("00 01 0\n", "odd number of digits (5)"),
    ("# table 4\n00 01 00\n00 zz 00\n", "line 3: 'z' is not a hex digit"),
])
def test_bad_hex_capture_names_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                             message: str) -> None:
    path = tmp_path / "cap.hex"
    path.write_text(text)
    code, lines, err = run([str(path), "--format", "hex"], capsys)
    assert code == 2 and not lines
    assert message in err


def test_hex_capture_with_0x_prefixes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wire = BY_NAME["ping"]["wire"]
    path = tmp_path / "cap.hex"
    path.write_text("\n".join(" ".join(f"0x{wire[i:i + 2]}" for i in range(j, min(j + 32, len(wire)), 2))
                              for j in range(0, len(wire), 32)))
    code, lines, _ = run([str(path), "--key", KEY_HEX], capsys)
    assert code == 0
    assert [(line["result"], line["type_name"]) for line in lines] == [("ok", "PING")]


def test_empty_capture_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cap.bin"
    path.write_bytes(b"")
    code, lines, err = run([str(path)], capsys)
    assert code == 1 and not lines  # issue 12 item 9: an empty capture is not a success
    assert "the capture is empty" in err


def test_opened_frames_name_their_cards_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22 item 9: a dissected frame's cards as text ("Qd"), beside the codes the wire
    carries. The expectations are the vectors' own descriptions (SPEC 6's codes)."""
    def dissected(name: str, *key: str) -> list[dict[str, Any]]:
        path = tmp_path / f"{name}.bin"  # one capture each: a capture has one replay window per shoe
        path.write_bytes(capture(name))
        code, lines, _ = run([str(path), *key], capsys)
        assert code == 0
        return lines

    [barcode] = dissected("card_barcode", "--key", KEY_HEX)
    assert barcode["card"] == "Qd"  # "Q♦ read by barcode"
    assert barcode["read"] == bytes.fromhex(barcode["fields"]["raw"]).decode("ascii")
    assert barcode["fields"]["code"] == 41  # the code stays as the wire has it
    [foreign] = dissected("card_foreign", "--key", KEY_HEX)
    assert foreign["card"] is None  # "a tag not in the manifest: code 0xFF"
    [loaded] = dissected("deck_status_loaded", "--key", KEY_HEX)
    assert "never_dealt" not in loaded  # at a load every card is still to come: not a finding
    [end] = dissected("deck_status_end", "--key", KEY_HEX)
    assert end["never_dealt"] == ["As"]  # "end of shoe with A♠ never dealt"
    manifest = dissected("new_shoe_manifest_uid4", "--key", KEY_HEX)
    cards = [c for part in manifest for c in part["cards"]]
    assert len(cards) == 52 and len(set(cards)) == 52  # "a 52-card RFID manifest ... in 2 NEW_SHOE parts"
    # Without the key the values stay sealed: no card text either.
    for name in ("card_barcode", "deck_status_end", "new_shoe_manifest_uid4"):
        assert not [line for line in dissected(name) if {"card", "read", "cards", "never_dealt"} & set(line)]
