"""Fixtures for the rounds tests."""

from __future__ import annotations

import random

import pytest


@pytest.fixture
def deck() -> list[int]:
    """A shuffled deck, the same every run."""
    d = list(range(52))
    random.Random(20261125).shuffle(d)
    return d
