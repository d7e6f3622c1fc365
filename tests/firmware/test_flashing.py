"""`cardshoe flash` against the virtual board: real mpy-cross, real mpremote, HELLO verified."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any, Callable

import pytest

from cardshoe import flashing
from cardshoe.keys import KeyStore
from micropython_runner import run_micropython


def test_host_hash_equals_the_firmware_hash_of_the_same_tree(tmp_path: Path) -> None:
    fw = flashing.build(tmp_path / "build")
    code = "from app.fwhash import firmware_hash\nprint(firmware_hash('', '/no-rom-here/').hex())\n"
    result = run_micropython(code, path=[str(tmp_path / "build"), str(tmp_path / "build" / "lib")], cwd=tmp_path / "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == fw.fw_hash.hex()
    # Any change to a file, or a file more, changes it.
    (tmp_path / "build" / "lib" / "extra.py").write_text("x = 1\n")
    assert flashing.firmware_hash(tmp_path / "build") != fw.fw_hash


def test_a_deep_folder_on_the_flash_is_hashed_on_a_picos_stack(tmp_path: Path) -> None:
    """issue 26 item 1: the firmware hash walks the firmware's folders with a list of folders
    to read, not a call per level: a folder tree 40 deep under lib/ (more than a Pico's stack
    holds calls) is hashed at boot as the host hashes it. On main at 60da493 (`_walk`
    calling itself) the boot died there: RuntimeError, maximum recursion depth exceeded."""
    fw = flashing.build(tmp_path / "build")
    deep = tmp_path / "build" / "lib"
    for _ in range(40):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "stray.py").write_text("x = 1\n")
    code = "from app.fwhash import firmware_hash\nprint(firmware_hash('', '/no-rom-here/').hex())\n"
    result = run_micropython(code, path=[str(tmp_path / "build"), str(tmp_path / "build" / "lib")], cwd=tmp_path / "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == flashing.firmware_hash(tmp_path / "build").hex() != fw.fw_hash.hex()


def test_the_build_and_its_hash_do_not_depend_on_where_the_checkout_is(tmp_path: Path) -> None:
    """mpy-cross embeds a source name in each module (kept on the board's heap for
    tracebacks): the build gives it the path in the firmware tree, not the checkout's."""
    import shutil

    here = flashing.build(tmp_path / "a")
    elsewhere = tmp_path / "much" / "deeper" / "checkout" / "of" / "the" / "firmware"
    shutil.copytree(flashing.repo_firmware(), elsewhere)
    there = flashing.build(tmp_path / "b", elsewhere)
    assert there.fw_hash == here.fw_hash
    shoe = (tmp_path / "b" / "app" / "shoe.mpy").read_bytes()
    assert b"app/shoe.py" in shoe and str(elsewhere).encode() not in shoe


@pytest.mark.parametrize("romfs_size", [128 * 1024, 0], ids=["romfs-partition", "no-romfs"])
def test_flash_the_virtual_board_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str], romfs_size: int) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    keys = KeyStore(tmp_path / "keys")
    with vboard.VirtualBoard(tmp_path / "vb", romfs_size=romfs_size) as vb:
        assert vb.romfs_size == romfs_size
        vb.power_on()
        rc = flashing.main(["--port", str(vb.tty_path), "--serial", "4242", "--keys", str(tmp_path / "keys")])
        out = capsys.readouterr()
        assert rc == 0, out.err
        assert "verified: shoe 4242" in out.out
        # It says where the code went, and why (issue 26 item 6: it fell back without a word).
        if romfs_size:
            assert "the code goes there as a" in out.out and "its code in ROMFS" in out.out, out.out
        else:
            assert "has no ROMFS partition" in out.out and "its code as .mpy files on the flash" in out.out, out.out
        key = keys.load(4242)
        assert key is not None
        # The key is never printed.
        assert key.hex() not in out.out + out.err
        assert stat.S_IMODE((tmp_path / "keys" / "4242.key").stat().st_mode) == 0o600
        vb.power_off()
        assert vb.flash.read("/data/ident.bin") == flashing.ident_bytes(4242, key)
        assert vb.flash.read("/main.py") == (flashing.repo_firmware() / "main.py").read_bytes()
        top = {e.name for e in vb.flash.listdir("/")}
        if romfs_size:
            # The code is in the ROM partition, a ROMFS image (magic d2 cd 31), none on the flash.
            assert "ROMFS partition" in out.out
            assert vb.romfs_path.read_bytes()[:3] == b"\xd2\xcd\x31"
            assert b"shoe.mpy" in vb.romfs_path.read_bytes()
            assert not top & {"app", "boards", "drivers", "lib"}, top
        else:
            names = {e.name for e in vb.flash.listdir("/app")}
            assert "shoe.mpy" in names and "shoe.py" not in names


def test_flashing_a_romfs_board_with_files_and_back_verifies_each_time(tmp_path: Path) -> None:
    """ROMFS, then --no-romfs (the old image is replaced by an empty one, or it would still
    be mounted and counted), then ROMFS again (the files are removed from the flash, or
    they would shadow the image: sys.path has the flash first)."""
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    keys = KeyStore(tmp_path / "keys")
    with vboard.VirtualBoard(tmp_path / "vb", romfs_size=128 * 1024) as vb:
        vb.power_on()
        flashing.flash(str(vb.tty_path), 9, keys, log=lambda _: None)
        assert b"shoe.mpy" in vb.romfs_path.read_bytes()
        vb.power_off()
        vb.power_on(key_held=True)
        said: list[str] = []
        flashing.flash(str(vb.tty_path), 9, keys, log=said.append, use_romfs=False)
        assert any("empty image" in line for line in said), said
        assert vb.romfs_path.read_bytes()[:4] == b"\xd2\xcd\x31\x00"  # a ROMFS image of no bytes
        vb.power_off()
        assert "shoe.mpy" in {e.name for e in vb.flash.listdir("/app")}
        vb.power_on(key_held=True)
        flashing.flash(str(vb.tty_path), 9, keys, log=lambda _: None)
        vb.power_off()
        assert "app" not in {e.name for e in vb.flash.listdir("/")}
        assert b"shoe.mpy" in vb.romfs_path.read_bytes()


def test_an_image_too_big_for_the_partition_is_refused_before_the_board_is_touched(tmp_path: Path) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    keys = KeyStore(tmp_path / "keys")
    with vboard.VirtualBoard(tmp_path / "vb", romfs_size=8 * 4096) as vb:
        vb.power_on()
        with pytest.raises(flashing.FlashError, match="ROMFS image is .* bytes, the board's ROM partition 32768"):
            flashing.flash(str(vb.tty_path), 9, keys, log=lambda _: None)
        vb.power_off()
        assert "main.py" not in {e.name for e in vb.flash.listdir("/")}  # nothing was there, nothing written
        assert keys.load(9) is None  # no key made either


def _stray_file(vb: Any, build_dir: Path) -> None:
    if "lib" not in {e.name for e in vb.flash.listdir("/")}:
        vb.flash.mkdir("/lib")  # the code is in the ROMFS image: no /lib on the flash
    vb.flash.write("/lib/stray.py", b"x = 1\n")  # a file the flash did not put there


def _old_copy_shadowing_the_image(vb: Any, build_dir: Path) -> None:
    # Code left on the flash is imported before the image's (sys.path order); the hash
    # lists it twice, so it cannot match (firmware/app/fwhash.py), even with the same bytes.
    same = flashing.build(build_dir)
    vb.flash.mkdir("/app")
    for mod in sorted((same.root / "app").iterdir()):
        vb.flash.write(f"/app/{mod.name}", mod.read_bytes())


def _stray_module_at_the_root(vb: Any, build_dir: Path) -> None:
    # Any module at the root counts (one named like a firmware module would be imported
    # before it: "" is first on sys.path).
    vb.flash.write("/helper.py", b"x = 1\n")


@pytest.mark.parametrize(("tamper", "romfs_size"), [
    (_stray_file, 128 * 1024), (_stray_file, 0), (_old_copy_shadowing_the_image, 128 * 1024),
    (_stray_module_at_the_root, 128 * 1024), (_stray_module_at_the_root, 0),
], ids=["stray-file", "stray-file-no-romfs", "shadowing-copy", "root-module", "root-module-no-romfs"])
def test_a_board_with_other_firmware_files_fails_verification(tmp_path: Path, tamper: Callable[[Any, Path], None],
                                                              romfs_size: int) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    keys = KeyStore(tmp_path / "keys")
    with vboard.VirtualBoard(tmp_path / "vb", romfs_size=romfs_size) as vb:
        vb.power_on()
        fw = flashing.flash(str(vb.tty_path), 77, keys, log=lambda _: None)
        vb.power_off()
        tamper(vb, tmp_path / "same")
        vb.power_on(key_held=True)  # a dealer key held: stays at the REPL
        key = keys.load(77)
        assert key is not None
        reported, _boot = flashing.reset_and_read_hello(str(vb.tty_path), 77, key, 20)
        assert reported != fw.fw_hash
