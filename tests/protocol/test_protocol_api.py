"""The documented API: the example in the module docstring runs as written."""

from __future__ import annotations

import textwrap

import cardshoe.protocol as protocol


def test_module_docstring_example_runs() -> None:
    doc = protocol.__doc__ or ""
    example = textwrap.dedent(doc.split("Example::", 1)[1])
    assert "encode_frame" in example
    exec(compile(example, "cardshoe.protocol docstring", "exec"), {})


def test_public_names_exist() -> None:
    for name in protocol.__all__:
        assert hasattr(protocol, name), name
