"""Fixtures for the bench tests: a virtual board in a temporary workdir, the real mpremote."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from vboard_helpers import MpRemote

from cardshoe.hil.vboard import VirtualBoard


@pytest.fixture
def board(tmp_path: Path) -> Iterator[VirtualBoard]:
    """A powered-off virtual board; closed (and its interpreter killed) after the test."""
    vb = VirtualBoard(tmp_path / "board")
    try:
        yield vb
    finally:
        vb.close()


@pytest.fixture
def mpremote(board: VirtualBoard) -> MpRemote:
    """The real mpremote pointed at the `board` fixture's serial device."""
    return MpRemote.for_board(board)
