"""The ways back to a streaming shoe's REPL (issue 9, item 1) and the board checks of
`cardshoe flash` (item 8), on the virtual board with the real mpremote.

A streaming shoe ignores Ctrl-C by design; `cardshoe flash` says so at once and names
the ways into maintenance (instead of mpremote timing out after two silent minutes);
`cardshoe maintenance` sends the authenticated MAINTENANCE and the shoe waits at its
REPL, where `cardshoe flash` then works.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from cardshoe import flashing, maintenance
from cardshoe.keys import KeyStore


def test_flash_refuses_a_streaming_shoe_then_maintenance_lets_it_flash(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    keys_dir = tmp_path / "keys"
    with vboard.VirtualBoard(tmp_path / "vb") as vb:
        vb.power_on()
        assert flashing.main(["--port", str(vb.tty_path), "--serial", "5150", "--keys", str(keys_dir)]) == 0
        key = KeyStore(keys_dir).load(5150)
        vb.power_off()
        vb.power_on()  # streaming now: Ctrl-C is off from main.py's first statement
        vb.sim.wait_ready(20)
        capsys.readouterr()
        started = time.monotonic()
        rc = flashing.main(["--port", str(vb.tty_path), "--keys", str(keys_dir)])
        elapsed = time.monotonic() - started
        err = capsys.readouterr().err
        assert rc == 1
        assert "shoe 5150 is streaming" in err and f"cardshoe maintenance --port {vb.tty_path}" in err, err
        assert "POST /shoe/maintenance" in err and "dealer key held" in err
        assert elapsed < 100, elapsed  # said at once, not after mpremote's 120 s timeout
        assert KeyStore(keys_dir).load(5150) == key  # nothing was touched: the key is the same

        assert maintenance.main(["--port", str(vb.tty_path), "--keys", str(keys_dir)]) == 0
        out = capsys.readouterr().out
        assert "shoe 5150 is at its REPL" in out, out
        # Once more at the REPL: it says so rather than waiting for frames.
        assert maintenance.main(["--port", str(vb.tty_path), "--keys", str(keys_dir)]) == 0
        assert "already at its REPL" in capsys.readouterr().out

        assert flashing.main(["--port", str(vb.tty_path), "--keys", str(keys_dir)]) == 0
        out = capsys.readouterr().out
        assert "verified: shoe 5150" in out and "the board runs MicroPython" in out, out


def test_maintenance_without_the_shoes_key_names_the_shoe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    with vboard.VirtualBoard(tmp_path / "vb") as vb:
        vb.power_on()
        assert flashing.main(["--port", str(vb.tty_path), "--serial", "6160", "--keys", str(tmp_path / "keys")]) == 0
        vb.power_off()
        vb.power_on()
        vb.sim.wait_ready(20)
        capsys.readouterr()
        rc = maintenance.main(["--port", str(vb.tty_path), "--keys", str(tmp_path / "other"), "--timeout", "6"])
        err = capsys.readouterr().err
        assert rc == 1
        assert "shoe 6160 streams" in err and "no key for it" in err, err


def _info(platform: str = "rp2", version: tuple[int, ...] = (1, 28, 0), mpy: int = 0x0406 | (4 << 10),
          missing: tuple[str, ...] = (), machine: str = "Raspberry Pi Pico with RP2040") -> flashing.BoardInfo:
    return flashing.BoardInfo(platform, version, mpy, missing, machine)


@pytest.mark.parametrize(("info", "says"), [
    (_info(version=(1, 18, 0), mpy=0), "needs MicroPython 1.19 or later"),
    (_info(mpy=0x0405), "loads .mpy version 5"),
    (_info(platform="esp32", machine="ESP32 module"), "Raspberry Pi Pico (rp2) and the virtual board"),
    (_info(machine="Some RP9999 board"), "knows the RP2040 and RP2350"),
    (_info(missing=("binascii.crc32", "hashlib")), "lacks binascii.crc32, hashlib"),
], ids=["too-old", "other-mpy", "other-port", "unknown-chip", "missing-modules"])
def test_an_unsupported_board_is_refused_with_what_is_wrong(info: flashing.BoardInfo, says: str) -> None:
    with pytest.raises(flashing.FlashError, match=re.escape(says)) as exc:
        flashing.check_board(info, 6)
    assert "import" not in str(exc.value)  # what is wrong, not the script that asked


@pytest.mark.parametrize("machine", ["Raspberry Pi Pico with RP2040", "Raspberry Pi Pico2 with RP2350"])
def test_a_pico_of_either_chip_is_accepted(machine: str) -> None:
    flashing.check_board(_info(machine=machine), 6)


def test_the_virtual_board_says_what_it_runs_and_passes(tmp_path: Path) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    with vboard.VirtualBoard(tmp_path / "vb") as vb:
        vb.power_on()
        info = flashing.board_info(str(vb.tty_path))
    assert info.platform == "linux" and info.version >= (1, 19) and info.mpy & 0xFF == 6 and not info.missing
    flashing.check_board(info, flashing.mpy_cross_version())


def test_an_mpremote_failure_names_the_step_not_the_script(tmp_path: Path) -> None:
    with pytest.raises(flashing.FlashError) as exc:
        flashing.board_info(str(tmp_path / "no-such-port"))
    message = str(exc.value)
    assert "while asking the board what MicroPython it runs" in message
    assert "import" not in message and "sys.implementation" not in message and "\n" not in message
