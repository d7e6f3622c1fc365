"""A table's [floor] section: read from the table file, and refused with the setting named."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardshoe.daemon.config import ConfigError, build_config, load_toml, read_floor_token


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


@pytest.mark.parametrize(("floor", "jackpot", "named"), [
    ('[floor]\nlink = "mega"\n', "[jackpot]\nreset = 5\n", "floor.link"),          # a link needs the url
    ('[floor]\nurl = "http://f"\nlink = "mega"\n', "", "floor.link"),              # and the reset amount
    ('[floor]\nurl = "floor:8700"\n', "", "floor.url"),
    ('[floor]\nurl = 8700\n', "", "floor.url"),
])
def test_a_wrong_floor_setting_is_named(tmp_path: Path, floor: str, jackpot: str, named: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_config(load_toml(write(tmp_path, floor, jackpot)), {})
    assert str(err.value).startswith(named), err.value
