"""The bench's subcommands of `cardshoe hil`: `run` (scenarios) and `soak` (many shoes, random faults).

`hil/cli.py` builds the `cardshoe hil` parser and calls `add_bench_commands` to add these.
"""

from __future__ import annotations

import argparse

from cardshoe.hil import runcmd, soak


def add_bench_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `run` and `soak` to the `cardshoe hil` subparsers."""
    run = sub.add_parser("run", help="run scenarios on the virtual board (or a real one with --port)",
                         description=runcmd.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    runcmd.add_arguments(run)
    run.set_defaults(run=runcmd.run)

    s = sub.add_parser("soak", help="many shoes in a row with random faults; prints the totals",
                       description=soak.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    soak.add_arguments(s)
    s.set_defaults(run=soak.run)
