"""The Python versions cardshoe promises are the ones it can be set up on (issue 12 item 11).

pyproject.toml, README and scripts/setup say the same range, and set-up refuses a Python
outside it with a message instead of failing half-way through the install.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _requires_python() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])


def test_pyproject_and_readme_promise_the_same_range() -> None:
    # 3.10 cannot work: enum.StrEnum and tomllib are 3.11, and pokerkit 0.7 needs 3.11.
    assert _requires_python() == ">=3.11,<3.14"
    readme = (ROOT / "README.md").read_text()
    assert "CPython 3.11-3.13" in readme
    assert "3.10-3.13" not in readme
    assert "CI (`bash .ci/run`) runs" in readme and "3.11" in readme
    assert "python3.11" in (ROOT / ".ci" / "run").read_text()


def _python310() -> str | None:
    found = shutil.which("python3.10")
    candidates = ([found] if found else []) + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3")))
    for path in candidates:
        done = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                              text=True, check=False)
        if done.returncode == 0 and done.stdout.strip() == "(3, 10)":
            return path
    return None


@pytest.mark.parametrize("which", ["python3.10", "missing"])
def test_setup_refuses_an_unsupported_python_with_a_message(which: str) -> None:
    if which == "python3.10":
        python = _python310()
        if python is None:
            pytest.skip("no CPython 3.10 on this machine")
    else:
        python = "no-such-python-here"
    done = subprocess.run(["bash", str(ROOT / "scripts" / "setup")], env={**os.environ, "PYTHON": python},
                          capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert re.search(r"cardshoe needs CPython 3\.11, 3\.12 or 3\.13", done.stderr), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""  # refused before anything was made or installed
