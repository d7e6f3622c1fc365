"""Work folders the bench may wipe: only the ones it made itself.

`cardshoe demo --workdir .` once deleted every file in the current directory: the bench
wiped its work folder with an unguarded `rmtree`. Now a work folder is created by the
bench and marked with a file naming it as the bench's (`MARK`); on the next run a marked
folder is emptied and reused, a missing one is created and marked, and an existing folder
without the mark (the current directory, a home directory, anything a person made) is
refused with a message and left untouched. Nothing outside the marked folder is ever
deleted: symbolic links inside it are unlinked, never followed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: The file that marks a folder as the bench's work folder.
MARK = ".cardshoe-bench-workdir"
_MARK_TEXT = "This folder was created by the cardshoe bench; the bench empties it at the start of each run.\n"


class WorkdirRefused(RuntimeError):
    """The folder exists and the bench did not make it: it will not empty it."""


def is_bench_workdir(path: Path) -> bool:
    """Whether `path` is a folder the bench created (it holds the mark as a regular file)."""
    mark = Path(path) / MARK
    return Path(path).is_dir() and not Path(path).is_symlink() and mark.is_file() and not mark.is_symlink()


def fresh_workdir(path: Path, *, command: str = "cardshoe") -> Path:
    """An empty work folder at `path`, marked as the bench's; WorkdirRefused when `path`
    exists and is not a folder the bench made (it is then left exactly as it was)."""
    path = Path(path)
    if path.is_symlink():
        raise WorkdirRefused(f"{command}: {path} is a symbolic link; the bench works only in a folder it created "
                             f"(give --workdir a new path)")
    if path.exists():
        if not path.is_dir():
            raise WorkdirRefused(f"{command}: {path} exists and is not a folder; give --workdir a new path")
        if not is_bench_workdir(path):
            raise WorkdirRefused(f"{command}: {path} exists and was not created by the bench (no {MARK} in it), "
                                 f"so the bench will not empty it; give --workdir a new path, or remove it yourself")
        _empty(path)
    else:
        path.mkdir(parents=True)
    (path / MARK).write_text(_MARK_TEXT, encoding="utf-8")
    return path


def _empty(path: Path) -> None:
    """Delete what is inside the marked folder (links unlinked, not followed); keep the mark."""
    for child in path.iterdir():
        if child.name == MARK:
            continue
        if child.is_symlink() or not child.is_dir():
            child.unlink()
        else:
            shutil.rmtree(child)  # does not follow links inside it


__all__ = ["MARK", "WorkdirRefused", "fresh_workdir", "is_bench_workdir"]
