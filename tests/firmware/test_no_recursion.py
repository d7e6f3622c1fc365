"""No firmware code calls itself (issue 26, item 1): a Pico's C stack is 8 KB, and a depth a
recursion reaches on the unix port can kill the shoe there (NEW_SHOE crashed in
`store._collect`, 24 calls of itself deep). The dynamic guard is the virtual board's
Pico stack (hil/vboard/runtime/picostack.py), on which every firmware test runs; this is
the static one, read from the source: a module-level function that calls itself by name, a
method that calls itself through `self`, or module-level functions of one module that call
one another round in a circle. (Method calls through other objects are not followed: a
method name shared by several classes would make a circle of nothing.)

On main at 60da493 this finds `store._collect`, `main._off`, `Shoe.pump`, `fwhash._walk`
and `pico Board.poll`."""

from __future__ import annotations

import ast
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"


def _calls(fn: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call)]


def self_calls(source: str) -> list[str]:
    """Functions of `source` that call themselves, directly or in a circle (module-level)."""
    tree = ast.parse(source)
    found: list[str] = []
    graph: dict[str, set[str]] = {}
    module_functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names = {c.func.id for c in _calls(node) if isinstance(c.func, ast.Name)}
            graph[node.name] = names & module_functions
            if node.name in names:
                found.append(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    for c in _calls(item):
                        f = c.func
                        if (isinstance(f, ast.Attribute) and f.attr == item.name
                                and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls")):
                            found.append(f"{node.name}.{item.name}")
                            break
    # Circles of two or more module-level functions.
    for start in graph:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            name = todo.pop()
            if name == start and start not in found:
                found.append(start)
                break
            if name not in seen:
                seen.add(name)
                todo.extend(graph.get(name, ()))
    return found


def test_no_firmware_function_calls_itself() -> None:
    found = {str(p.relative_to(FIRMWARE)): self_calls(p.read_text()) for p in sorted(FIRMWARE.rglob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_finds_what_issue_26_found() -> None:
    """The check itself: each pattern the firmware had before issue 26, and a circle."""
    assert self_calls("def _collect(d):\n    if d:\n        _collect(d - 1)\n") == ["_collect"]
    assert self_calls("class Shoe:\n    def pump(self):\n        if self.x:\n            self.pump()\n") == ["Shoe.pump"]
    assert self_calls("def a():\n    b()\ndef b():\n    a()\n") == ["a", "b"]
    assert self_calls("def a():\n    b()\ndef b():\n    pass\n") == []
    assert self_calls("class B:\n    def poll(self):\n        self._sensor.poll()\n") == []
