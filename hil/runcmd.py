"""`cardshoe hil run [SCENARIO...] [--junit PATH] [--port PORT]`: run scenarios, report per scenario.

With no SCENARIO, every file in hil/scenarios/ runs. A SCENARIO is a path to a TOML file
or the name of a shipped one (`tcp-foreign-card`). On the virtual board (the default) the
firmware is flashed once and each scenario starts from a copy of that board image with a
fresh daemon journal. `--port` runs them on a real board instead, where a person deals
the cards the bench asks for (see `cardshoe.hil.realboard`). One progress line per
scenario; `--junit` writes a JUnit XML report; the exit status is 1 when any failed.
"""

from __future__ import annotations

import argparse
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from cardshoe.hil.runner import ScenarioResult, flash_image, run_scenario
from cardshoe.hil.workdir import WorkdirRefused, fresh_workdir
from cardshoe.hil.scenario import Scenario, ScenarioError, load_scenario, shipped_scenarios


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of `cardshoe hil run`."""
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenario files or shipped names (default: all)")
    p.add_argument("--junit", type=Path, help="write a JUnit XML report here")
    p.add_argument("--port", help="run on a real board on this serial port (a person deals)")
    p.add_argument("--workdir", type=Path, default=Path("var/hil"), help="work directory: created and marked by the bench, emptied on the next run; "
                   "an existing folder the bench did not create is refused")
    p.add_argument("--deck-id", type=lambda s: int(s, 0), default=None,
                   help="real board: the deck id printed on the cards (e.g. 0x00C0FFEE)")
    p.add_argument("--serial", type=int, default=None,
                   help="real board: the shoe's serial (default: the only key in the key store)")
    p.add_argument("-v", "--verbose", action="store_true", help="print each bench step")


def resolve(names: list[str]) -> list[Path]:
    """Scenario paths from command-line names (all shipped ones when empty)."""
    if not names:
        return shipped_scenarios()
    shipped = {p.stem: p for p in shipped_scenarios()}
    out = []
    for name in names:
        path = Path(name)
        if path.suffix == ".toml" and path.exists():
            out.append(path)
        elif name in shipped:
            out.append(shipped[name])
        else:
            raise ScenarioError(f"{name}: no such scenario file, and not a shipped scenario "
                                f"({', '.join(sorted(shipped))})")
    return out


def run(args: argparse.Namespace) -> int:
    """`cardshoe hil run` with parsed arguments."""
    try:
        scenarios = [load_scenario(p) for p in resolve(args.scenarios)]
    except ScenarioError as exc:
        print(f"cardshoe hil run: {exc}", file=sys.stderr)
        return 2
    workdir: Path = args.workdir
    try:
        fresh_workdir(workdir, command="cardshoe hil run")
    except WorkdirRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    log = (lambda m: print(m, flush=True)) if args.verbose else (lambda _m: None)
    started = time.monotonic()
    results: list[ScenarioResult] = []
    if args.port:
        from cardshoe.hil.realboard import run_on_real_board

        results = run_on_real_board(scenarios, args.port, workdir, deck_id=args.deck_id, serial=args.serial,
                                    progress=lambda r, i: _progress(r, i, len(scenarios)))
    else:
        print(f"flashing the virtual board once for {len(scenarios)} scenarios ...", flush=True)
        image = flash_image(workdir / "_image", log)
        print(f"  firmware deployed with {image.flashed_with}", flush=True)
        folders = scenario_folders(scenarios)
        for i, scenario in enumerate(scenarios, 1):
            result = run_scenario(scenario, workdir / folders[i - 1], log, image=image)
            results.append(result)
            _progress(result, i, len(scenarios))
    failed = [r for r in results if not r.passed]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed in {time.monotonic() - started:.0f} s",
          flush=True)
    if args.junit:
        write_junit(args.junit, results, scenarios)
        print(f"JUnit report: {args.junit}")
    return 1 if failed else 0


def scenario_folders(scenarios: list[Scenario]) -> list[str]:
    """A work folder name per scenario, distinct even when two files share a `name`
    (the second `tcp-jam` runs in `tcp-jam-2`, so neither's journal or log is overwritten)."""
    used: set[str] = set()
    out = []
    for s in scenarios:
        folder, n = s.name, 1
        while folder in used or folder == "_image":
            n += 1
            folder = f"{s.name}-{n}"
        used.add(folder)
        out.append(folder)
    return out


def _progress(r: ScenarioResult, i: int, n: int) -> None:
    mark = "PASS" if r.passed else "FAIL"
    print(f"[{i:>2}/{n}] {mark} {r.name} ({r.seconds:.1f} s)", flush=True)
    if r.error:
        print(f"        error: {r.error}", flush=True)
    for p in r.problems:
        print(f"        {p}", flush=True)


def write_junit(path: Path, results: list[ScenarioResult], scenarios: list[Scenario]) -> None:
    """A JUnit XML report: one testcase per scenario, failures with every problem found."""
    about = {s.name: s.about for s in scenarios}
    suite = ET.Element("testsuite", name="cardshoe-hil", tests=str(len(results)),
                       failures=str(sum(1 for r in results if not r.passed and not r.error)),
                       errors=str(sum(1 for r in results if r.error)),
                       time=f"{sum(r.seconds for r in results):.3f}")
    for r in results:
        case = ET.SubElement(suite, "testcase", classname="hil.scenarios", name=r.name, time=f"{r.seconds:.3f}")
        if about.get(r.name):
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="about", value=about[r.name])
        if r.error:
            ET.SubElement(case, "error", message=r.error).text = "\n".join([r.error, *r.problems])
        elif r.problems:
            ET.SubElement(case, "failure", message=r.problems[0]).text = "\n".join(r.problems)
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = ET.ElementTree(suite)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def main(argv: list[str]) -> int:
    """Entry point when run as a module."""
    p = argparse.ArgumentParser(prog="cardshoe hil run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
