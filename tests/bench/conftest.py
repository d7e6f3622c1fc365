"""Fixtures for the bench tests: one flashed virtual-board image shared by the session."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from cardshoe.hil.runner import FlashedImage, flash_image


@pytest.fixture(scope="session")
def flashed_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlashedImage]:
    """A virtual board flashed once (with `cardshoe flash`), copied by each test that needs a shoe."""
    yield flash_image(tmp_path_factory.mktemp("bench-image"), lambda _m: None)
