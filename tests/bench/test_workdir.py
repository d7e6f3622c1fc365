"""The bench never deletes what it did not make (issue 11 item 6): `cardshoe demo`,
`cardshoe hil run` and `cardshoe hil soak` refuse an existing work folder the bench did not
create, with a message, and leave it exactly as it was; a folder the bench made is marked
and emptied on the next run. The refusals are checked before any board starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cardshoe.hil import demo, runcmd, soak
from cardshoe.hil.workdir import MARK, WorkdirRefused, fresh_workdir, is_bench_workdir


def _someone_elses(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "src").mkdir(parents=True)
    (home / "notes.txt").write_text("mine", encoding="utf-8")
    (home / "src" / "main.c").write_text("int main;", encoding="utf-8")
    return home


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_a_new_folder_is_created_and_marked_and_emptied_next_time(tmp_path: Path) -> None:
    wd = fresh_workdir(tmp_path / "var" / "demo")
    assert is_bench_workdir(wd) and (wd / MARK).is_file()
    (wd / "journal.sqlite").write_text("x", encoding="utf-8")
    (wd / "board").mkdir()
    (wd / "board" / "flash.img").write_text("x", encoding="utf-8")
    fresh_workdir(wd)
    assert _tree(wd) == [MARK]


def test_an_existing_folder_the_bench_did_not_make_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = _someone_elses(tmp_path)
    before = _tree(home)
    with pytest.raises(WorkdirRefused, match="was not created by the bench"):
        fresh_workdir(home)
    assert _tree(home) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WorkdirRefused):
        fresh_workdir(empty)  # even an empty one: the bench did not make it
    assert _tree(empty) == []


def test_links_are_refused_and_never_followed(tmp_path: Path) -> None:
    home = _someone_elses(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(home, target_is_directory=True)
    with pytest.raises(WorkdirRefused, match="symbolic link"):
        fresh_workdir(link)
    # A link inside a bench folder is unlinked, its target untouched.
    wd = fresh_workdir(tmp_path / "wd")
    (wd / "out").symlink_to(home, target_is_directory=True)
    fresh_workdir(wd)
    assert _tree(wd) == [MARK] and (home / "notes.txt").exists()
    # A mark that is a link does not make a folder the bench's.
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / MARK).symlink_to(home / "notes.txt")
    assert not is_bench_workdir(fake)


@pytest.mark.parametrize("command, argv", [
    ("cardshoe demo", lambda wd: demo.main(["--workdir", str(wd), "--seed", "1"])),
    ("cardshoe hil run", lambda wd: runcmd.main(["tcp-automated", "--workdir", str(wd)])),
    ("cardshoe hil soak", lambda wd: soak.main(["--cards", "1", "--workdir", str(wd)])),
])
def test_every_bench_command_refuses_the_current_directory(command: str, argv: object, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # `cardshoe demo --workdir .` once deleted every file in the current directory.
    home = _someone_elses(tmp_path)
    before = _tree(home)
    monkeypatch.chdir(home)
    assert callable(argv)
    assert argv(Path(".")) == 2
    err = capsys.readouterr().err
    assert f"{command}: . exists and was not created by the bench" in err
    assert _tree(home) == before and os.path.exists("notes.txt")
