"""The bench end to end on the virtual board: the demo, scenarios, a small soak, the JUnit report,
and the real-board path (driven over the virtual board's serial device, with the "person" played
through the sim channel). Full runs are marked slow."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import xml.etree.ElementTree as ET
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from cardshoe.cards import parse_card
from cardshoe.hil import demo, runcmd
from cardshoe.hil.bench import TableSpec
from cardshoe.hil.realboard import RealBench
from cardshoe.hil.relay import LineFaults
from cardshoe.hil.runner import FlashedImage, run_scenario
from cardshoe.hil.scenario import load_scenario, shipped_scenarios
from cardshoe.hil.soak import soak
from cardshoe.hil.vboard import VirtualBoard
from cardshoe.journal import replay as replay_cli

SHIPPED = {p.stem: p for p in shipped_scenarios()}
QUICK = ["xtreme-c", "tcp-foreign-card", "tcp-power-cut", "tcp-too-few-seat", "tcp-manual-slip", "tcp-new-shoe-late-card"]


def test_the_demo_deals_and_settles_a_round_and_the_journal_replays(tmp_path: Path) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        rc = demo.main(["--workdir", str(tmp_path / "demo"), "--seed", "11"])
    text = out.getvalue()
    assert rc == 0, text
    assert "firmware deployed (cardshoe flash)" in text
    assert "`cardshoe settle` of the round the daemon exports: the same settlement" in text
    assert "Hands by seat" in text and "seat 1" in text and "seat 3" in text and "seat 6" in text
    assert text.count("shoe card ") == 12  # 3 seats and the dealer, three cards each (TCP 3.7)
    replay_out = io.StringIO()
    with redirect_stdout(replay_out):
        assert replay_cli.main([str(tmp_path / "demo" / "journal.sqlite"), "--json"]) == 0
    assert json.loads(replay_out.getvalue())["ok"]


@pytest.mark.parametrize("name", QUICK)
def test_a_shipped_scenario_passes(name: str, tmp_path: Path, flashed_image: FlashedImage) -> None:
    result = run_scenario(load_scenario(SHIPPED[name]), tmp_path / name, lambda _m: None, image=flashed_image)
    assert result.error is None, result.error
    assert result.passed, result.problems


def test_a_scenario_passes_on_a_board_with_a_rom_partition(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench variant of issue 9, item 9: the everyday bench runs the firmware as a
    stock Pico (no ROM partition, .mpy files in the heap); a MicroPython built with a
    ROMFS partition gets the code as an image run in place, and the power cuts of the
    scenario change nothing there either."""
    monkeypatch.setenv("CARDSHOE_VBOARD_ROMFS", str(128 * 1024))
    said: list[str] = []
    result = run_scenario(load_scenario(SHIPPED["tcp-power-cut"]), tmp_path / "rom", said.append)
    assert result.error is None, result.error
    assert result.passed, result.problems
    assert (tmp_path / "rom" / "board" / "romfs.img").read_bytes()[:3] == b"\xd2\xcd\x31"  # an image


def test_a_wrong_expectation_fails_the_scenario(tmp_path: Path, flashed_image: FlashedImage) -> None:
    scenario = load_scenario(SHIPPED["tcp-automated"])
    rnd = scenario.rounds[0]
    wrong = dataclasses.replace(rnd.expect, hands={"seat 2": (0, 1, 2)}, net={5: 0})
    bad = dataclasses.replace(scenario, rounds=(dataclasses.replace(rnd, expect=wrong),))
    result = run_scenario(bad, tmp_path / "bad", lambda _m: None, image=flashed_image)
    assert not result.passed
    assert any("hand seat 2" in p for p in result.problems)
    assert any("seat 5 net: expected 0, got -1000" in p for p in result.problems)


def test_the_supervisors_pick_decides_a_manual_slip_5_7(tmp_path: Path, flashed_image: FlashedImage) -> None:
    # The shipped scenario picks pass 2; picking pass 3 puts the cards elsewhere, so its
    # expected hands must then fail: the bench's candidate really reaches the daemon.
    scenario = load_scenario(SHIPPED["tcp-manual-slip"])
    rnd = dataclasses.replace(scenario.rounds[0], candidate={"slip_pass": 3})
    result = run_scenario(dataclasses.replace(scenario, rounds=(rnd,)), tmp_path / "pass3", lambda _m: None,
                          image=flashed_image)
    assert result.error is None, result.error
    assert any("hand seat 2: expected Ah Kh Qh, the daemon has Ah Kh 3d" in p for p in result.problems), \
        result.problems


def test_hil_run_prints_a_line_per_scenario_and_writes_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failing = tmp_path / "wrong-void.toml"
    failing.write_text(SHIPPED["tcp-misread-retried"].read_text().replace("void = false", 'void = "5.4"')
                       .replace('name = "tcp-misread-retried"', 'name = "wrong-void"'), encoding="utf-8")
    junit = tmp_path / "report.xml"
    rc = runcmd.main(["tcp-misread-retried", str(failing), "--junit", str(junit), "--workdir", str(tmp_path / "w")])
    out = capsys.readouterr().out
    assert rc == 1
    assert "[ 1/2] PASS tcp-misread-retried" in out
    assert "[ 2/2] FAIL wrong-void" in out and "expected the round void under rule 5.4" in out
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["tcp-misread-retried"].find("failure") is None
    assert cases["wrong-void"].find("failure") is not None


def test_a_small_soak_at_a_dealers_pace_loses_nothing_and_settles_like_the_benchs_own_hands(tmp_path: Path) -> None:
    # The everyday soak: every fault once or more, cards in flight (a dealer's pace, never
    # waiting for the journal), every card checked against the bench's own ledger.
    said: list[str] = []
    totals = soak(tmp_path / "soak", game="three-card-poker", cards=40, line=LineFaults(corrupt=0.01, drop_frames=0.01),
                  seed=5, power_cut_every=2, restart_every=3, unplug_every=1, card_faults=0.5, pace=5.0,
                  progress_every=0.0, log=said.append)
    assert totals.stopped is None, totals.stopped
    assert totals.cards_dealt >= 40
    assert totals.power_cuts >= 1 and totals.daemon_restarts >= 1 and totals.unplugs >= 1
    assert totals.line.get("corrupted_bytes", 0) > 0
    assert {k: v for k, v in totals.findings.items() if k != "lost_flagged"} == {}, totals.problems
    assert totals.mismatches == 0, totals.problems
    assert totals.journal_integrity == "ok" and totals.replay == "ok"
    # Every round with a foreign, duplicate or unread card is void under 5.1.
    assert sum(1 for why in totals.rounds_void if why.startswith("5.1")) >= 1
    assert any(line.startswith("[soak ") and "cards/s" in line for line in said)  # the progress line
    assert not totals.failed()


def test_a_soak_that_stops_early_still_checks_the_journal_and_prints_its_totals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from cardshoe.hil import soak as soak_mod
    from cardshoe.hil.table import BenchTimeout

    real = soak_mod._soak_round
    calls = []

    def stuck(*args: object, **kw: object) -> None:
        calls.append(1)
        if len(calls) == 2:  # the second round gets stuck, as a dead shoe would leave it
            raise BenchTimeout("timed out after 60 s waiting for the shoe key deal_complete")
        real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(soak_mod, "_soak_round", stuck)
    rc = soak_mod.main(["--cards", "200", "--power-cut-every", "0", "--restart-every", "0", "--burst",
                        "--workdir", str(tmp_path / "soak"), "--seed", "2"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "STOPPED EARLY: round 2 (no fault), after " in out and "BenchTimeout" in out
    assert "cards dealt           " in out and "lost cards            0" in out
    # The running daemon's link counters are in the totals too (1% of the bytes corrupted,
    # so a round's frames are rejected): they read "none" when only a finished run took them.
    assert "frames rejected       {" in out and "bad_crc" in out
    assert "journal               integrity ok; cardshoe replay ok" in out
    assert out.rstrip().endswith("result                FAIL")


def test_the_real_board_path_prompts_for_each_card_and_checks_what_was_read(tmp_path: Path,
                                                                            flashed_image: FlashedImage) -> None:
    # The "real board" is a virtual one on its serial device; the "person" deals through the sim.
    board = VirtualBoard(tmp_path / "shoe")
    shutil.copyfile(flashed_image.image, board.flash.path)
    if flashed_image.romfs is not None:  # the code, in the ROM partition
        shutil.copyfile(flashed_image.romfs, board.romfs_path)
    board.power_on()
    board.sim.wait_ready(30)
    scenario = load_scenario(SHIPPED["tcp-automated"])
    prompts: list[str] = []
    bench: RealBench | None = None

    def person(text: str) -> str:
        prompts.append(text)
        assert bench is not None
        if text.startswith("deal "):
            card = text.split()[1]
            board.sim.present_barcode(bench.barcode(parse_card(card)))
            board.sim.exit_sensor()
        elif "DEAL COMPLETE" in text:
            board.sim.key("deal_complete")
        return ""

    bench = RealBench(tmp_path / "bench", TableSpec(scenario.game), str(board.tty_path), prompt=person,
                      keys_dir=flashed_image.keys)
    try:
        bench.start_daemon()
        bench.load_shoe()
        result = run_scenario(scenario, bench.workdir, lambda _m: None, bench=bench)
    finally:
        bench.close()
        board.close()
    assert result.passed, (result.error, result.problems)
    assert [p.split(" (")[0] for p in prompts if p.startswith("deal ")] == [
        "deal Ah", "deal Kh", "deal Qh", "deal 2c", "deal 7d", "deal 9s", "deal Jc", "deal Jd", "deal 4s"]


@pytest.mark.slow
def test_every_shipped_scenario_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = runcmd.main(["--workdir", str(tmp_path / "all"), "--junit", str(tmp_path / "all.xml")])
    out = capsys.readouterr().out
    assert rc == 0, out


@pytest.mark.slow
def test_a_2000_card_soak_with_faults(tmp_path: Path) -> None:
    totals = soak(tmp_path / "soak", game="three-card-poker", cards=2000,
                  line=LineFaults(corrupt=0.01, drop_frames=0.01), seed=1, power_cut_every=5, restart_every=7,
                  unplug_every=11, pace=None, log=lambda _m: None)
    assert totals.stopped is None, totals.stopped
    assert totals.cards_dealt >= 2000
    assert not totals.failed(), totals.problems[:20]
