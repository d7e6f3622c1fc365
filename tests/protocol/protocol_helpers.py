"""Helpers of the protocol tests: the golden vectors and the firmware codec driver.

A module with a name of its own (not `conftest`), so test modules can import it whatever
other areas' conftest files are loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from micropython_runner import FIRMWARE, REPO, run_micropython

VECTORS = REPO / "protocol" / "vectors"
HARNESS = Path(__file__).with_name("mp_harness.py")

FirmwareCodec = Callable[[list[str]], list[Any]]


def load_vectors() -> dict[str, Any]:
    return json.loads((VECTORS / "frames.json").read_text())


def load_barcodes() -> dict[str, Any]:
    return json.loads((VECTORS / "barcodes.json").read_text())


def feed_command(name: str, receiver: str, boot: int, seq: int, data: bytes, chunk: int = 200) -> str:
    """One harness command feeding `data` to a fresh firmware receiver in chunks."""
    lines = [f"D {name} {receiver} {boot} {seq}"]
    lines += [f"C {data[i : i + chunk].hex()}" for i in range(0, len(data), chunk)]
    return "\n".join(lines + ["."])


def _parse(stdout: str, commands: list[str]) -> list[Any]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    assert len(lines) == len(commands), f"{len(commands)} commands, {len(lines)} answers:\n{stdout[-2000:]}"
    return lines


def run_firmware_micropython(commands: list[str]) -> list[Any]:
    """Run the harness commands through firmware/lib/wire.py under the real micropython."""
    result = run_micropython(
        HARNESS.read_text(), stdin=("\n".join(commands) + "\n").encode(), heapsize="64k", timeout=120
    )
    if result.returncode != 0:
        pytest.fail(f"micropython exited {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return _parse(result.stdout, commands)


def run_firmware_cpython(commands: list[str]) -> list[Any]:
    """The same firmware module, unchanged, under CPython."""
    # tests/cpython: the stand-in of MicroPython's cryptolib (AES ECB) for CPython.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(FIRMWARE / "lib"), str(REPO / "tests" / "cpython"))))
    proc = subprocess.run(
        [sys.executable, str(HARNESS)], input=("\n".join(commands) + "\n").encode(),
        capture_output=True, env=env, timeout=120,
    )
    if proc.returncode != 0:
        pytest.fail(f"cpython harness exited {proc.returncode}\n{proc.stderr.decode()[-3000:]}")
    return _parse(proc.stdout.decode(), commands)
