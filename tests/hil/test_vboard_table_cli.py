"""A virtual table driven from a shell (issue 13 item 7): `cardshoe hil board --flash`,
`cardshoe run` on its serial device, and a whole round dealt with `cardshoe hil deal` and
`cardshoe hil key`, each a separate process, as an integrator would from a shell.

Expectations from the rules and the SPEC, not from the code: Three Card Poker's automated
dealing (TCP 3.7: three cards to each position with a wager, in seat order, then three to the
dealer); a dealer without a queen or better (2c 7d 9s) does not compare hands: no payment on
the play, the ante paid by 4.1's 1 to 1 (TCP 3.11, 3.11.1, 3.11.2); Pair Plus pays a straight
flush 40 to 1 whatever the dealer holds (TCP 3.11.4, 4.3); the barcode of a card is SPEC
section 6's (its worked examples are checked verbatim).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from cardshoe.cards import card_text
from cardshoe.hil.boardctl import send

DECK = 0x00C0FFEE
TOKEN = "integrator-token-0123456789abcdef"


def cardshoe(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cardshoe.cli", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def _lines(stream: IO[bytes], into: queue.Queue[str]) -> None:
    for raw in stream:
        into.put(raw.decode("utf-8", "replace").rstrip("\n"))


def _read_until(lines: queue.Queue[str], prefix: str, timeout: float) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        seen.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
        if seen[-1].startswith(prefix):
            return seen


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def text(card: Any) -> str:
    """A card as the API gives it: text ("As") or, before issue 13 item 6, its code."""
    return card if isinstance(card, str) else card_text(int(card))


def settlement_of(body: dict[str, Any]) -> dict[str, Any]:
    """The settlement in a settle answer (nested under `settlement.settlement` before item 6)."""
    s: dict[str, Any] = body["settlement"]
    return s["settlement"] if "settlement" in s and "seats" not in s else s


def test_barcode_command_prints_the_spec_examples() -> None:
    # protocol/SPEC.md section 6's worked examples.
    done = cardshoe("hil", "barcode", "--deck", "0x1234ABCD", "As")
    assert (done.returncode, done.stdout) == (0, "CS1234ABCDASU\n")
    done = cardshoe("hil", "barcode", "2c", "Kd")  # the default deck, the bench's 0x00C0FFEE
    assert done.returncode == 0 and done.stdout.splitlines()[0] == "CS00C0FFEE2CM"
    assert done.stdout.splitlines()[1].startswith("CS00C0FFEEKD") and len(done.stdout.splitlines()[1]) == 13
    bad = cardshoe("hil", "barcode", "10d")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "10d" in bad.stderr
    big = cardshoe("hil", "barcode", "--deck", "0x100000000", "As")
    assert big.returncode == 2 and "32-bit" in big.stderr


def test_deal_without_a_board_is_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CARDSHOE_BOARD"}
    done = cardshoe("hil", "deal", "As", env=env)
    assert done.returncode == 1 and "--board" in done.stderr and done.stderr.count("\n") == 1
    done = cardshoe("hil", "deal", "--board", str(tmp_path), "As")
    assert done.returncode == 1 and "no virtual board runs in" in done.stderr
    done = cardshoe("hil", "deal", "--board", str(tmp_path), "As", "1x")
    assert done.returncode == 2 and "'1x'" in done.stderr
    done = cardshoe("hil", "board", "--workdir", str(tmp_path / "b"), "--flash", "--off")
    assert done.returncode == 2 and "excludes --off" in done.stderr


def test_a_round_from_a_shell(tmp_path: Path) -> None:
    workdir = tmp_path / "board"
    board = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "hil", "board", "--workdir", str(workdir), "--flash"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert board.stdout is not None and board.stderr is not None
    out: queue.Queue[str] = queue.Queue()
    err: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(board.stdout, out), daemon=True).start()
    threading.Thread(target=_lines, args=(board.stderr, err), daemon=True).start()
    daemon: subprocess.Popen[bytes] | None = None
    try:
        tty = out.get(timeout=300)  # flashing comes first: the path is printed once the shoe streams
        assert tty == str(workdir / "tty")
        printed = "\n".join(_read_until(out, "Board commands", 30))
        # It says how to deal, with this board's folder in each command.
        assert f"cardshoe hil deal --board {workdir} As" in printed
        assert f"cardshoe hil key --board {workdir} deal_complete" in printed
        assert f"cardshoe run --port {tty}" in printed and f'"deck_id": {DECK}' in printed

        env = dict(os.environ, CARDSHOE_TOKEN=TOKEN)
        port_file = tmp_path / "api.port"
        with open(tmp_path / "daemon.log", "wb") as log:
            # Port 0 and --port-file: the daemon binds a port the kernel picks and says which,
            # so no other process can take it between a choice made here and the daemon's bind.
            daemon = subprocess.Popen(
                [sys.executable, "-m", "cardshoe.cli", "run", "--port", tty, "--keys", str(workdir / "keys"),
                 "--game", "three-card-poker", "--seats", "7", "--journal", str(tmp_path / "journal.sqlite"),
                 "--listen", "127.0.0.1:0", "--port-file", str(port_file)],
                stdout=log, stderr=subprocess.STDOUT, env=env)

        def bound() -> int | None:
            assert daemon is not None and daemon.poll() is None, (tmp_path / "daemon.log").read_text()
            return int(port_file.read_text()) if port_file.exists() else None  # renamed into place: whole
        port = wait_for(bound, 60, "the daemon's port file")
        api = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {TOKEN}"},
                           timeout=15)

        def call(method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
            r = api.request(method, path, json=body)
            assert r.status_code < 300, (method, path, r.status_code, r.text)
            data: dict[str, Any] = r.json()
            return data

        def status() -> dict[str, Any] | None:
            assert daemon is not None and daemon.poll() is None, (tmp_path / "daemon.log").read_text()
            try:
                return call("GET", "/status")
            except httpx.HTTPError:
                return None
        wait_for(lambda: (status() or {}).get("shoe") is not None, 60, "the shoe's HELLO at the daemon")

        shoe_no = call("POST", "/shoe/load", {"deck_id": DECK})["shoe_no"]
        wait_for(lambda: any(s.get("shoe_no") == shoe_no for s in (status() or {}).get("shoes", {}).values()),
                 60, "NEW_SHOE at the shoe")
        rid = str(call("POST", "/rounds")["round_id"])
        call("POST", f"/rounds/{rid}/wagers", {"seat": 1, "wager": "ante", "amount": 1000})
        call("POST", f"/rounds/{rid}/wagers", {"seat": 1, "wager": "pair_plus", "amount": 500})
        call("POST", f"/rounds/{rid}/wagers", {"seat": 4, "wager": "ante", "amount": 500})
        call("POST", f"/rounds/{rid}/no-more-bets")

        seat1, seat4, dealer = ["Ah", "Kh", "Qh"], ["5c", "5d", "Js"], ["2c", "7d", "9s"]
        dealt = cardshoe("hil", "deal", "--board", str(workdir), *seat1, *seat4)
        assert dealt.returncode == 0, dealt.stderr
        first = dealt.stdout.splitlines()[0]
        assert first.startswith("Ah: barcode CS00C0FFEEAH") and first.endswith(", left the shoe"), first
        # The board's folder from the environment, as `export CARDSHOE_BOARD=...` gives it.
        dealt = cardshoe("hil", "deal", *dealer, env=dict(os.environ, CARDSHOE_BOARD=str(workdir)))
        assert dealt.returncode == 0, dealt.stderr
        pressed = cardshoe("hil", "key", "--board", str(workdir), "deal_complete")
        assert pressed.returncode == 0, pressed.stderr

        snap = wait_for(lambda: (lambda s: s if len(s.get("placements", {})) == 9 else None)(
            call("GET", f"/rounds/{rid}")), 60, "the nine cards at the daemon")
        hands = {k: [text(c) for c in v] for k, v in snap["hands"].items()}
        assert hands == {"seat 1": seat1, "seat 4": seat4, "dealer": dealer}  # TCP 3.7
        assert snap["irregularities"] == []
        wait_for(lambda: any(e == "shoe_key" for e in _event_types(api)), 30, "the deal-complete key")

        call("POST", f"/rounds/{rid}/decisions", {"seat": 1, "choice": "play"})
        call("POST", f"/rounds/{rid}/decisions", {"seat": 4, "choice": "play"})
        settled = settlement_of(call("POST", f"/rounds/{rid}/settle", {}))
        by = {(s["seat"], w["wager"]): w for s in settled["seats"] for w in s["wagers"]}
        assert by[(1, "pair_plus")]["net"] == 40 * 500  # TCP 3.11.4, 4.3: straight flush 40 to 1
        assert by[(4, "ante")]["net"] == 500  # TCP 3.11.2: the dealer does not qualify, ante 1 to 1
        assert by[(4, "play")]["net"] == 0  # TCP 3.11.1: no payment on the play

        # The board switched off through its control socket: dealing is refused, in one line.
        send(workdir, ["!off"])
        refused = cardshoe("hil", "deal", "--board", str(workdir), "As", "Kd")
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
        assert "refused 'barcode CS00C0FFEEAS" in refused.stderr and "no firmware connected" in refused.stderr
    finally:
        if daemon is not None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=20)
        board.send_signal(signal.SIGTERM)
        rc = board.wait(timeout=20)
    assert rc == 0
    assert not (workdir / "control.sock").exists()  # the board's control socket went with it


def _event_types(api: httpx.Client) -> list[str]:
    types: list[str] = []
    with api.stream("GET", "/events", params={"after": 0}, timeout=httpx.Timeout(5, read=1)) as r:
        try:
            for line in r.iter_lines():
                if line.startswith("event:"):
                    types.append(line[6:].strip())
        except httpx.ReadTimeout:
            pass
    return types


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-x", "-q"]))
