"""Fixtures of the protocol tests (helpers live in protocol_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from protocol_helpers import (  # noqa: E402
    FirmwareCodec,
    load_barcodes,
    load_vectors,
    run_firmware_cpython,
    run_firmware_micropython,
)


@pytest.fixture(scope="session")
def vectors() -> dict[str, Any]:
    return load_vectors()


@pytest.fixture(scope="session")
def barcodes() -> dict[str, Any]:
    return load_barcodes()


@pytest.fixture(params=["micropython", "cpython"], scope="session")
def firmware_codec(request: pytest.FixtureRequest) -> FirmwareCodec:
    """Runs harness commands through the firmware codec, under each interpreter in turn."""
    return run_firmware_micropython if request.param == "micropython" else run_firmware_cpython
