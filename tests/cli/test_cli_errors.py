"""Every `cardshoe` command: no traceback for a bad argument, file or device; one line on
standard error; the exit statuses `cardshoe --help` documents (issue 12 item 9).

Run as the user runs them: the installed console command, in a subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CARDSHOE = str(Path(sys.executable).with_name("cardshoe"))


def cardshoe(*args: str, stdin: bytes | None = None, stdout: int | None = subprocess.PIPE,
             timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "CARDSHOE_DEBUG"}
    return subprocess.run([CARDSHOE, *args], input=stdin, stdout=stdout, stderr=subprocess.PIPE,
                          check=False, timeout=timeout, env=env)


def one_line(done: subprocess.CompletedProcess[bytes]) -> str:
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_help_documents_the_exit_statuses() -> None:
    done = cardshoe("--help")
    assert done.returncode == 0
    text = done.stdout.decode()
    assert "exit status" in text
    for status in ("0", "1", "2", "3", "130", "141"):
        assert re.search(rf"^  {status} ", text, re.MULTILINE), status


def test_version_is_the_packages() -> None:
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for flag in ("--version", "-V"):
        done = cardshoe(flag)
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode().strip() == f"cardshoe {expected}"


def test_an_unknown_command_is_one_line() -> None:
    done = cardshoe("bogus")
    assert done.returncode == 2 and "unknown command 'bogus'" in one_line(done)


def test_an_unknown_benchmark_is_a_usage_error() -> None:
    done = cardshoe("bench", "bogus")
    assert done.returncode == 2
    line = one_line(done)
    assert "unknown benchmark 'bogus'" in line and "protocol" in line


@pytest.mark.parametrize(("args", "option"), [
    (["--corrupt", "2"], "--corrupt"),
    (["--drop", "-0.1"], "--drop"),
    (["--card-faults", "nan"], "--card-faults"),
    (["--drop-bytes", "x"], "--drop-bytes"),
    (["--cards", "-5"], "--cards"),
    (["--cards", "0"], "--cards"),
    (["--power-cut-every", "-1"], "--power-cut-every"),
])
def test_a_bad_soak_argument_is_refused_before_anything_runs(tmp_path: Path, args: list[str], option: str) -> None:
    workdir = tmp_path / "soak"
    workdir.mkdir()
    (workdir / "keep").write_text("not wiped")
    done = cardshoe("hil", "soak", *args, "--workdir", str(workdir), timeout=120)
    assert done.returncode == 2, done.stdout
    assert option in one_line(done)
    assert (workdir / "keep").exists()  # nothing ran


def test_an_argparse_usage_error_is_one_line() -> None:
    done = cardshoe("settle")
    assert done.returncode == 2 and "ROUND.json" in one_line(done)


def test_decode_of_an_empty_file_is_not_a_silent_success(tmp_path: Path) -> None:
    path = tmp_path / "empty.bin"
    path.write_bytes(b"")
    done = cardshoe("decode", str(path))
    assert done.returncode == 1 and "empty" in one_line(done)


def test_decode_of_random_bytes_is_not_a_success(tmp_path: Path) -> None:
    path = tmp_path / "noise.bin"
    path.write_bytes(bytes((i * 97 + 13) % 256 for i in range(4096)))
    done = cardshoe("decode", str(path), "--format", "raw")
    assert done.returncode == 1
    assert "no valid frame in 4096 bytes" in one_line(done)
    assert done.stdout  # the rejections are still shown, one JSON line each


def _no_reader() -> int:
    """A pipe whose read end is already closed: every write to it fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


def test_decode_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    path = tmp_path / "noise.bin"
    path.write_bytes(b"\x01\x02\x00" * 2000)
    out = _no_reader()
    try:
        done = cardshoe("decode", str(path), stdout=out)
    finally:
        os.close(out)
    assert done.returncode == 141, done.stderr
    assert done.stderr == b""


def test_replay_json_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    from cardshoe.journal import Journal

    journal = tmp_path / "journal.sqlite"
    Journal(journal).close()
    out = _no_reader()
    try:
        done = cardshoe("replay", str(journal), "--json", stdout=out)
    finally:
        os.close(out)
    assert done.returncode == 141, done.stderr
    assert done.stderr == b""


def test_settle_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    example = (ROOT / "docs" / "round-format.md").read_text()
    body = example.split("<!-- example: three-card-poker -->\n```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "round.json"
    path.write_text(body)
    out = _no_reader()
    try:
        done = cardshoe("settle", str(path), stdout=out)
    finally:
        os.close(out)
    assert done.returncode == 141 and done.stderr == b""


def test_flash_to_a_device_that_is_no_board_is_one_line_without_a_script(tmp_path: Path) -> None:
    env_keys = tmp_path / "keys"
    done = subprocess.run([CARDSHOE, "flash", "--port", "/dev/null", "--serial", "7", "--keys", str(env_keys)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, timeout=300)
    assert done.returncode == 1
    line = one_line(done)
    assert "/dev/null" in line
    assert "print(" not in line and "try:" not in done.stderr.decode()


def test_a_missing_file_is_one_line() -> None:
    for args in (["settle", "/nonexistent/round.json"], ["decode", "/nonexistent/cap.bin"],
                 ["replay", "/nonexistent/journal.sqlite"]):
        done = cardshoe(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "/nonexistent/" in one_line(done)


def test_a_bad_timing_argument_is_refused() -> None:
    done = cardshoe("hil", "timing", "--cycles", "-1", timeout=120)
    assert done.returncode == 2 and "--cycles" in one_line(done)


def test_an_internal_error_is_one_line_with_status_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # A subcommand with a bug (a real module that raises), dispatched as any other.
    from cardshoe import cli

    (tmp_path / "buggy_command.py").write_text(
        "def main(argv):\n    raise RuntimeError('a bug\\nover two lines')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli.SUBCOMMANDS, "buggy", ("buggy_command", "raises"))
    monkeypatch.delenv("CARDSHOE_DEBUG", raising=False)
    assert cli.main(["buggy"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError: a bug over two lines" in err
    monkeypatch.setenv("CARDSHOE_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["buggy"])


def test_help_into_a_closed_pipe_stops_quietly() -> None:
    out = _no_reader()
    try:
        done = cardshoe("--help", stdout=out)
    finally:
        os.close(out)
    assert done.returncode == 141 and done.stderr == b""
