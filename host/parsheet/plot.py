"""`cardshoe parsheet GAME --plot FILE`: each wager's outcome distribution and house edge.

One panel per wager: a horizontal bar per outcome line of the par sheet, its length the
line's exact probability (a logarithmic axis: a royal flush and a loss differ by six orders
of magnitude), coloured by what it does to the player (a win, a loss, a stand-off or a
returned wager, a share of the progressive pool), labelled with what it pays and its
probability; the panel's title gives the wager, its rule and its house edge. PNG or SVG by
the file's suffix. Everything drawn is read from the :class:`ParSheet`; nothing is
recomputed here.

matplotlib is used through its object API with the Agg canvas (no display, no global
pyplot state), so the plot can be made on a table PC or in CI without a screen.
"""

from __future__ import annotations

import os
import textwrap
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

from .model import Line, ParSheet, ParSheetError, WagerSheet

__all__ = ["FORMATS", "PlotError", "check_plot_path", "figure", "plot", "edge_text", "line_text"]

#: The file suffixes --plot writes, and matplotlib's name for each format.
FORMATS = {".png": "png", ".svg": "svg"}

_WIN, _LOSS, _PUSH, _POOL = "#2e7d32", "#c62828", "#9e9e9e", "#1565c0"
_BAR_HEIGHT_IN = 0.28  # figure inches per outcome line of one text line
_LABEL_LINE_IN = 0.13  # and per further line of a wrapped label
_PANEL_EXTRA_IN = 0.9  # title and axis of each panel
_LABEL_WIDTH = 58  # characters per line of an outcome's label (wrapped, never cut)


class PlotError(ParSheetError):
    """The plot cannot be written: an unknown suffix, or a file that cannot be written."""


def check_plot_path(path: Path) -> str:
    """The format to write `path` in, from its suffix; PlotError for any other suffix, or a
    file that cannot be written there (no such folder, a folder by that name, no permission,
    a read-only file system).

    Checked before the sheet is computed (Singapore Stud's takes minutes), so a typo in the
    name or the folder fails at once. Nothing is left behind: an existing file is opened for
    appending (not changed), a new one is created and removed again."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        shown = path.suffix or "no suffix"
        raise PlotError(f"--plot {path}: cannot tell the format from {shown}; "
                        f"use a file name ending in {' or '.join(FORMATS)}")
    if path.is_dir():
        raise PlotError(f"--plot {path}: cannot write it: it is a folder")
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        raise PlotError(f"--plot {path}: cannot write it: {exc.strerror or exc}") from exc
    if not existed:
        os.unlink(path)
    return fmt


def edge_text(wager: WagerSheet) -> str:
    """The house edge as the panel's title shows it (the same rounding as the text table)."""
    if wager.house_edge is None:
        return "house edge: none (" + (wager.edge_basis or "no stake to divide by") + ")"
    return f"house edge {float(wager.house_edge) * 100:.4f}% {wager.edge_basis}".rstrip()


def line_text(line: Line) -> str:
    """The label beside one bar: what the line pays and its probability."""
    p = line.probability
    shown = f"{float(p):.6f}" if p >= Fraction(1, 1000) else f"{float(p):.4e}"
    return f"{line.pays}  p={shown}"


def _colour(line: Line) -> str:
    if line.net is None:
        return _POOL
    if line.net > 0:
        return _WIN
    if line.net < 0:
        return _LOSS
    return _PUSH


def figure(sheets: Sequence[ParSheet]) -> Any:
    """A matplotlib Figure with one panel per wager of every sheet (not yet written)."""
    from matplotlib.figure import Figure

    panels = [(sheet, w) for sheet in sheets for w in sheet.wagers]
    if not panels:
        raise PlotError("no wagers to plot")
    heights = [_panel_height(w) for _, w in panels]
    fig = Figure(figsize=(12, sum(heights) + 0.8), layout="constrained")
    titles = "; ".join(f"{s.title} (rules {s.rules_version}, pay tables revision {s.revision})" for s in sheets)
    fig.suptitle(titles + "\nbar: the outcome's exact probability; green the player wins, red loses, grey a "
                 "stand-off, blue a share of the pool or a fixed amount", fontsize=10)
    axes = fig.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, (_sheet, wager) in zip(axes, panels):
        _panel(ax, wager)
    return fig


def label_lines(label: str) -> list[str]:
    """An outcome's label as drawn beside its bar: whole, wrapped at word boundaries."""
    return textwrap.wrap(label, _LABEL_WIDTH, break_on_hyphens=False) or [""]


def _panel_height(wager: WagerSheet) -> float:
    lines = [ln for ln in wager.lines if ln.probability > 0] or wager.lines
    extra = sum(len(label_lines(ln.label)) - 1 for ln in lines)
    return max(len(lines), 1) * _BAR_HEIGHT_IN + extra * _LABEL_LINE_IN + _PANEL_EXTRA_IN


def _panel(ax: Any, wager: WagerSheet) -> None:
    title = f"{wager.wager} (rule {wager.rule}) - {edge_text(wager)}"
    if not wager.exact:
        title += " [ESTIMATE]"
    ax.set_title(title, fontsize=10, loc="left")
    lines = [ln for ln in wager.lines if ln.probability > 0]
    if not lines:
        ax.text(0.5, 0.5, "no outcome lines", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    ys = list(range(len(lines)))
    widths = [float(ln.probability) for ln in lines]
    ax.barh(ys, widths, color=[_colour(ln) for ln in lines], gid=f"bars-{wager.wager}")
    ax.set_yticks(ys, ["\n".join(label_lines(ln.label)) for ln in lines], fontsize=7)
    ax.invert_yaxis()  # the sheet's first line at the top, as in the text table
    ax.set_xscale("log")
    # A probability is at most 1: the axis ends there, and what each line pays is written in
    # a column to the right of the panel, level with its bar.
    ax.set_xlim(min(widths) / 3, 1)
    right = ax.get_yaxis_transform()  # x in the panel's width (1 = its right edge), y in lines
    for y, ln in zip(ys, lines):
        ax.text(1.01, y, line_text(ln), va="center", fontsize=7, transform=right)
    ax.set_xlabel("probability (log scale)", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)


def plot(sheets: Sequence[ParSheet], path: Path) -> Path:
    """Draw `sheets` into `path` (PNG or SVG by its suffix); returns the path written."""
    fmt = check_plot_path(path)
    import matplotlib

    # Text stays text in an SVG (searchable, and checked by the tests), not glyph paths.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cardshoe"}):
        fig = figure(sheets)
        try:
            # "tight": the column of what each line pays, right of the panels, is in the file whole.
            fig.savefig(path, format=fmt, dpi=110, bbox_inches="tight", pad_inches=0.15)
        except OSError as exc:
            raise PlotError(f"--plot {path}: cannot write it: {exc.strerror or exc}") from exc
    return path
