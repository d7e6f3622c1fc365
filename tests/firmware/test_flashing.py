"""`cardshoe flash` against the virtual board: real mpy-cross, real mpremote, HELLO verified."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cardshoe import flashing
from cardshoe.keys import KeyStore
from micropython_runner import run_micropython


def test_host_hash_equals_the_firmware_hash_of_the_same_tree(tmp_path: Path) -> None:
    fw = flashing.build(tmp_path / "build")
    code = "from app.fwhash import firmware_hash\nprint(firmware_hash('').hex())\n"
    result = run_micropython(code, path=[str(tmp_path / "build"), str(tmp_path / "build" / "lib")], cwd=tmp_path / "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == fw.fw_hash.hex()
    # Any change to a file, or a file more, changes it.
    (tmp_path / "build" / "lib" / "extra.py").write_text("x = 1\n")
    assert flashing.firmware_hash(tmp_path / "build") != fw.fw_hash


def test_flash_the_virtual_board_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    keys = KeyStore(tmp_path / "keys")
    with vboard.VirtualBoard(tmp_path / "vb") as vb:
        vb.power_on()
        rc = flashing.main(["--port", str(vb.tty_path), "--serial", "4242", "--keys", str(tmp_path / "keys")])
        out = capsys.readouterr()
        assert rc == 0, out.err
        assert "verified: shoe 4242" in out.out
        key = keys.load(4242)
        assert key is not None
        # The key is never printed.
        assert key.hex() not in out.out + out.err
        assert stat.S_IMODE((tmp_path / "keys" / "4242.key").stat().st_mode) == 0o600
        vb.power_off()
        assert vb.flash.read("/data/ident.bin") == flashing.ident_bytes(4242, key)
        names = {e.name for e in vb.flash.listdir("/app")}
        assert "shoe.mpy" in names and "shoe.py" not in names
        assert vb.flash.read("/main.py") == (flashing.repo_firmware() / "main.py").read_bytes()


def test_a_board_with_another_firmware_fails_verification(tmp_path: Path) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    keys = KeyStore(tmp_path / "keys")
    with vboard.VirtualBoard(tmp_path / "vb") as vb:
        vb.power_on()
        fw = flashing.flash(str(vb.tty_path), 77, keys, log=lambda _: None)
        vb.power_off()
        vb.flash.write("/lib/stray.py", b"x = 1\n")  # a file the flash did not put there
        vb.power_on(key_held=True)  # a dealer key held: stays at the REPL
        key = keys.load(77)
        assert key is not None
        reported, _boot = flashing.reset_and_read_hello(str(vb.tty_path), 77, key, 20)
        assert reported != fw.fw_hash
