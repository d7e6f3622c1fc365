"""The host key store (cardshoe.keys): file layout, modes, refusal of bad files."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cardshoe.keys import KeyStore, KeyStoreError


def test_create_then_load_gives_the_same_key_with_private_modes(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys")
    key = store.create(1001)
    assert len(key) == 32
    assert store.load(1001) == key
    path = tmp_path / "keys" / "1001.key"
    assert path.read_text().strip() == key.hex()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700


def test_create_makes_a_new_key_each_time(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    assert store.create(7) != store.create(7)


def test_unknown_shoe_has_no_key(tmp_path: Path) -> None:
    assert KeyStore(tmp_path).load(42) is None


def test_a_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.create(5)
    (tmp_path / "5.key").chmod(0o644)
    with pytest.raises(KeyStoreError, match="readable by others"):
        store.load(5)


def test_a_damaged_key_file_is_refused_by_name(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.create(6)
    (tmp_path / "6.key").write_text("abcd\n")
    with pytest.raises(KeyStoreError, match="6.key"):
        store.load(6)


def test_default_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDSHOE_KEYS", str(tmp_path / "k"))
    KeyStore().create(9)
    assert (tmp_path / "k" / "9.key").exists()


def test_serial_out_of_range_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyStoreError):
        KeyStore(tmp_path).create(0)
