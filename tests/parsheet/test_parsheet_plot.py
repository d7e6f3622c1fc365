"""`cardshoe parsheet GAME --plot FILE` (issue 13 item 8): each wager's outcome distribution
and house edge, drawn from the par sheet.

The expected bars are the counts of three-card hands from combinatorics (22,100 hands of
52 cards: 48 straight flushes, 52 three of a kind, 720 straights, 1,096 flushes, 3,744
pairs, 16,440 others), which the Pair Plus pay table's lines (TCP 4.3) are priced on; the
house edges shown are the sheet's, as the text table prints them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from cardshoe.parsheet import compute
from cardshoe.parsheet.cli import main
from cardshoe.parsheet.plot import PlotError, edge_text, figure, line_text, plot

TCP = "three-card-poker"
HANDS3 = 22_100
# Pair Plus (TCP 4.3) lines, top to bottom as the pay table lists them, by counting.
PAIR_PLUS_COUNTS = [48, 52, 720, 1_096, 3_744, 16_440]


@pytest.fixture(scope="module")
def sheet():  # type: ignore[no-untyped-def]
    return compute(TCP)


def svg_texts(path: Path) -> list[str]:
    texts = []
    for el in ET.parse(path).iter():
        if el.tag.endswith("}text") or el.tag == "text":
            texts.append("".join(el.itertext()))
    return texts


def test_svg_shows_every_line_and_house_edge_of_the_sheet(tmp_path: Path, sheet) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "tcp.svg"
    assert main([TCP, "--plot", str(out), "--no-progress"]) == 0
    texts = svg_texts(out)
    joined = "\n".join(texts)
    for wager in sheet.wagers:
        assert any(edge_text(wager) in t and wager.wager in t for t in texts), wager.wager
        for line in wager.lines:
            if line.probability > 0:
                assert line_text(line) in texts, (wager.wager, line.label)
    # The house edge of ante/play with the 5-4-1 ante bonus is the published 3.37%.
    ante = next(w for w in sheet.wagers if w.wager.startswith("ante"))
    assert ante.house_edge is not None and round(float(ante.house_edge) * 100, 2) == 3.37
    assert "house edge 3.37" in joined
    # Pair Plus: each line's probability by counting three-card hands.
    for count in PAIR_PLUS_COUNTS:
        p = count / HANDS3
        shown = f"p={p:.6f}" if p >= 1e-3 else f"p={p:.4e}"
        assert any(shown in t for t in texts), (count, shown)


def test_bars_are_the_sheets_probabilities(sheet) -> None:  # type: ignore[no-untyped-def]
    fig = figure([sheet])
    axes = fig.axes
    assert len(axes) == len(sheet.wagers)
    for ax, wager in zip(axes, sheet.wagers):
        assert wager.wager in ax.get_title(loc="left")
        widths = [bar.get_width() for bar in ax.patches]
        assert widths == [float(line.probability) for line in wager.lines if line.probability > 0]
    pair_plus = next(ax for ax, w in zip(axes, sheet.wagers) if w.wager == "pair_plus")
    assert [bar.get_width() for bar in pair_plus.patches] == [float(Fraction(c, HANDS3)) for c in PAIR_PLUS_COUNTS]


def test_png_is_a_png(tmp_path: Path, sheet) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "tcp.PNG"
    assert plot([sheet], out) == out
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 600 and height > 600


@pytest.mark.parametrize("name", ["tcp.pdf", "tcp", "tcp.svg.txt"])
def test_unknown_suffix_is_refused_before_computing(tmp_path: Path, name: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / name
    assert main([TCP, "--plot", str(out), "--no-progress"]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "cannot tell the format" in err and ".png or .svg" in err
    assert not out.exists()
    assert captured.out == ""  # no sheet printed: refused before it was computed


def test_unwritable_file_is_a_typed_error(tmp_path: Path, sheet) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PlotError, match="cannot write"):
        plot([sheet], tmp_path / "no-such-folder" / "tcp.svg")


def test_outcome_labels_are_drawn_whole(sheet) -> None:  # type: ignore[no-untyped-def]
    """Issue 22 item 9: a long outcome ("..., ante bonus Royal Flush/Straight Flush 5 to 1")
    is wrapped beside its bar, never cut."""
    fig = figure([sheet])
    for ax, wager in zip(fig.axes, sheet.wagers):
        drawn = [t.get_text().replace("\n", " ") for t in ax.get_yticklabels()]
        assert drawn == [line.label for line in wager.lines if line.probability > 0], wager.wager
    longest = max((line.label for w in sheet.wagers for line in w.lines), key=len)
    assert len(longest) > 80  # the case that was cut


def test_probability_axis_ends_at_one(sheet) -> None:  # type: ignore[no-untyped-def]
    """A probability is at most 1: no panel's axis runs on to 10 (issue 22 item 9)."""
    for ax in figure([sheet]).axes:
        assert ax.get_xlim()[1] == 1.0, ax.get_title(loc="left")


@pytest.mark.parametrize("where", ["missing-folder", "a-folder", "a-file-as-folder"])
def test_unwritable_plot_path_is_refused_before_computing(tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22 item 9: the sheet can take minutes (Singapore Stud): a --plot that cannot be
    written fails at once, before any of it is computed."""
    if where == "missing-folder":
        out = tmp_path / "no-such-folder" / "tcp.png"
    elif where == "a-folder":
        out = tmp_path / "tcp.png"
        out.mkdir()
    else:
        (tmp_path / "plain-file").write_text("x")
        out = tmp_path / "plain-file" / "tcp.png"

    def computed(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the sheet was computed before the plot's path was checked")
    monkeypatch.setattr("cardshoe.parsheet.cli.compute", computed)
    assert main([TCP, "--plot", str(out), "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "cannot write" in captured.err, captured.err
    assert captured.out == ""


def test_checking_an_existing_plot_file_leaves_it_as_it_was(tmp_path: Path) -> None:
    from cardshoe.parsheet.plot import check_plot_path

    old = tmp_path / "old.svg"
    old.write_text("<svg/>")
    assert check_plot_path(old) == "svg" and old.read_text() == "<svg/>"
    new = tmp_path / "new.png"
    assert check_plot_path(new) == "png" and not new.exists()
