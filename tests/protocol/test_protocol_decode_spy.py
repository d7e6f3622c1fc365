"""`cardshoe decode` reads the log pyserial's own `spy://` handler writes (issue 12 item 10).

The log is made by the real handler (serial.serial_for_url("spy://...?file=...")) on a real
pseudo-terminal: the test's end of the pty plays the shoe, the spy port the host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import serial

from protocol_helpers import load_vectors

DOC = load_vectors()
BY_NAME = {v["name"]: v for v in DOC["vectors"]}
KEY_HEX = DOC["key"]
CARDSHOE = str(Path(sys.executable).with_name("cardshoe"))


def wire(name: str) -> bytes:
    return bytes.fromhex(BY_NAME[name]["wire"])


def _read_exactly(port: Any, n: int, timeout: float = 30.0) -> bytes:
    got = bytearray()
    deadline = time.monotonic() + timeout
    while len(got) < n:
        assert time.monotonic() < deadline, f"read {len(got)} of {n} bytes"
        got += port.read(n - len(got))
    return bytes(got)


def _read_fd(fd: int, n: int, timeout: float = 30.0) -> bytes:
    import select

    got = bytearray()
    deadline = time.monotonic() + timeout
    while len(got) < n:
        left = deadline - time.monotonic()
        assert left > 0, f"read {len(got)} of {n} bytes"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            got += os.read(fd, n - len(got))
    return bytes(got)


@pytest.fixture
def spy_log(tmp_path: Path) -> Path:
    log = tmp_path / "line.log"
    shoe, host_end = os.openpty()
    port = serial.serial_for_url(f"spy://{os.ttyname(host_end)}?file={log}", baudrate=115200, timeout=0.2)
    try:
        hello, card = wire("hello"), wire("card_rfid_uid7")
        # The shoe's HELLO, then a CARD split across two reads of the host.
        os.write(shoe, hello)
        assert _read_exactly(port, len(hello)) == hello
        port.write(wire("ack"))  # the host answers
        port.flush()
        assert _read_fd(shoe, len(wire("ack"))) == wire("ack")
        os.write(shoe, card[:9])
        assert _read_exactly(port, 9) == card[:9]
        os.write(shoe, card[9:])
        assert _read_exactly(port, len(card) - 9) == card[9:]
    finally:
        port.close()
        port.formatter.output.close()  # the handler never closes the file it opened
        os.close(shoe)
        os.close(host_end)
    return log


def test_decode_reads_a_spy_log(spy_log: Path) -> None:
    text = spy_log.read_text()
    assert " RX   0000  " in text and " TX   0000  " in text  # it is pyserial's format
    done = subprocess.run([CARDSHOE, "decode", str(spy_log), "--key", KEY_HEX], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert [(x["stream"], x["result"], x["type_name"]) for x in lines] == [
        ("rx", "ok", "HELLO"), ("tx", "ok", "ACK"), ("rx", "ok", "CARD")]
    assert lines[2]["fields"] == BY_NAME["card_rfid_uid7"]["expect"][0]["fields"]
    assert lines[0]["time"] <= lines[1]["time"] <= lines[2]["time"]


def test_a_spy_log_is_not_taken_for_raw_bytes(spy_log: Path) -> None:
    # Before: the log's text was dissected as if it were the line's bytes: no frame in it.
    done = subprocess.run([CARDSHOE, "decode", str(spy_log), "--format", "spy"], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {json.loads(x)["result"] for x in done.stdout.splitlines()} == {"unverified"}


def test_a_damaged_spy_log_names_the_line(tmp_path: Path) -> None:
    log = tmp_path / "line.log"
    log.write_text("000000.010 RX   0000  00 ZZ 01\n")
    done = subprocess.run([CARDSHOE, "decode", str(log), "--format", "spy"], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 2
    assert "spy log line 1" in done.stderr and len(done.stderr.strip().splitlines()) == 1
