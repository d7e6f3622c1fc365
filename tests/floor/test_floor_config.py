"""A table's [floor] section: read from the table file, and refused with the setting named."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardshoe.daemon.config import ConfigError, build_config, load_toml, read_floor_public_key, read_floor_token
from cardshoe.floor.config import ConfigError as FloorConfigError
from cardshoe.floor.config import load_floor_config


def write(tmp_path: Path, floor: str, jackpot: str = "[jackpot]\nreset = 1000000\n") -> Path:
    path = tmp_path / "t.toml"
    path.write_text('[table]\ngame = "megalink-three-card-poker"\nseats = 7\n[shoe]\nport = "/dev/null"\n'
                    + jackpot + floor)
    return path


def test_the_floor_section_is_read(tmp_path: Path) -> None:
    token = tmp_path / "floor.token"
    token.write_text("x" * 20)
    token.chmod(0o600)
    cfg = build_config(load_toml(write(tmp_path, f'[floor]\nurl = "http://floor:8700"\nlink = "mega"\n'
                                                 f'token_file = "{token}"\n')), {})
    assert (cfg.floor_url, cfg.floor_link, cfg.floor_token_file) == ("http://floor:8700", "mega", token)
    assert read_floor_token(cfg) == "x" * 20
    assert read_floor_public_key(cfg) is None
    key = tmp_path / "floor.pub"
    key.write_text("ab" * 32 + "\n")
    for given in ("ab" * 32, str(key)):
        cfg = build_config(load_toml(write(tmp_path, f'[floor]\nurl = "http://floor:8700"\npublic_key = "{given}"\n')),
                           {})
        assert read_floor_public_key(cfg) == bytes([0xAB] * 32)


@pytest.mark.parametrize(("floor", "jackpot", "named"), [
    ('[floor]\nlink = "mega"\n', "[jackpot]\nreset = 5\n", "floor.link"),          # a link needs the url
    ('[floor]\nurl = "http://f"\nlink = "mega"\n', "", "floor.link"),              # and the reset amount
    ('[floor]\nurl = "floor:8700"\n', "", "floor.url"),
    ('[floor]\nurl = 8700\n', "", "floor.url"),
    ('[floor]\nurl = "http://f"\ntoken = "x"\n', "", "floor.token"),          # not a setting of the section
])
def test_a_wrong_floor_setting_is_named(tmp_path: Path, floor: str, jackpot: str, named: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_config(load_toml(write(tmp_path, floor, jackpot)), {})
    assert str(err.value).startswith(named), err.value


def _floor_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "floor.toml"
    path.write_text(text)
    return path


def test_the_floors_file_is_read_with_paths_from_its_folder(tmp_path: Path) -> None:
    cfg = load_floor_config(_floor_file(tmp_path, """
[floor]
listen = "0.0.0.0:8700"
pg_dir = "pg"
signing_key = "floor.key"
[links.mega]
reset = 1000000
rate_ppm = 50000
start = 3000000
[roles]
pit = ["pit-1.token", "pit-2.token"]
supervisor = "/etc/sup.token"
[tables.TCP-07]
token_file = "TCP-07.token"
link = "mega"
shoe_keys = "keys/TCP-07"
shoes = [12648430]
"""))
    assert (cfg.listen, cfg.pg_dir, cfg.signing_key) == ("0.0.0.0:8700", tmp_path / "pg", tmp_path / "floor.key")
    assert [(l.name, l.reset, l.rate_ppm, l.opening_pool) for l in cfg.links] == [
        ("mega", 1_000_000, 50_000, 3_000_000)]
    assert cfg.roles == {"pit": [tmp_path / "pit-1.token", tmp_path / "pit-2.token"],
                         "supervisor": [Path("/etc/sup.token")]}
    t = cfg.tables["TCP-07"]
    assert (t.token_file, t.link, t.shoe_keys, t.shoes) == (tmp_path / "TCP-07.token", "mega", tmp_path / "keys/TCP-07",
                                                            (12648430,))
    assert cfg.link_of("TCP-07") == "mega" and cfg.link_of("other") is None
    assert cfg.key_lookup("other") is None


@pytest.mark.parametrize(("text", "named"), [
    ('[links.mega]\nreset = 5\n', "links.mega"),                                      # no rate
    ('[links.mega]\nreset = 5\nrate_ppm = 2000000\n', "links.mega.rate_ppm"),
    ('[roles]\ncontroller = "c.token"\n', "roles.controller"),                        # a table's role is per table
    ('[tables.T1]\nlink = "mega"\n', "tables.T1.token_file"),
    ('[links.mega]\nreset = 5\nrate_ppm = 1\n[tables.T1]\ntoken_file = "t"\nlink = "megalink"\n', "tables.T1.link"),
    ('[tables.T1]\ntoken_file = "t"\nshoes = [0]\n', "tables.T1.shoes"),
    ('[floor]\nsqlite = "a"\npostgres = "b"\n', "floor.postgres"),
    ('[floor]\ntoken_file = "all.token"\n', "floor.token_file"),                      # no all-roles token
    ('[pit]\n', "pit"),
])
def test_a_wrong_setting_of_the_floors_file_is_named(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(FloorConfigError) as err:
        load_floor_config(_floor_file(tmp_path, text))
    assert str(err.value).startswith(named), err.value
