"""Fixtures for the live table page's browser test: a daemon served over real HTTP and
headless Chromium (Debian's `chromium` + `chromedriver`, installed by scripts/browser-deps)
driven by Selenium. Nothing is downloaded at run time: the driver path is given, so
Selenium Manager never runs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_harness import BoardTable, Served, Table  # noqa: E402


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    made: list[tuple[Table, Served]] = []

    def make(game: str, seats: int = 7, **settings: Any) -> Served:
        table = Table(tmp_path / f"t{len(made)}", game, seats, **settings)
        s = Served(table)
        made.append((table, s))
        return s

    yield make
    for table, s in made:
        s.close()
        table.close()


@pytest.fixture
def board_table(tmp_path: Path) -> Iterator[Callable[..., BoardTable]]:
    """A table on the virtual board with the real firmware (made on demand: flashing takes seconds)."""
    made: list[BoardTable] = []

    def make(game: str, seats: int = 7) -> BoardTable:
        table = BoardTable(tmp_path / f"b{len(made)}", game, seats)
        made.append(table)
        return table

    yield make
    for table in made:
        table.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.fail("chromium and chromedriver are needed (bash scripts/browser-deps installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1440,900", "--enable-precise-memory-info", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--js-flags=--expose-gc"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_script_timeout(30)
    # The page is laid out for a pit podium screen: its viewport, not the window, is 1440x900.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1440, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    try:
        yield driver
    finally:
        driver.quit()
