"""The report drawn: JSON as built, HTML with inline SVG charts, PDF (reportlab) with the same charts.

Nothing is fetched: the charts are matplotlib's (Agg canvas) inlined as SVG in the HTML and
as PNG in the PDF, the HTML's style is in the file, and the PDF uses the standard Helvetica.
Amounts are shown in major units of the currency (minor units / 100) with two decimals.
"""

from __future__ import annotations

import html
import io
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

__all__ = ["write", "to_html", "to_pdf", "charts"]

Row = Sequence[Any]


def money(minor: float | int | None) -> str:
    """Minor units as major with two decimals and thousands separators."""
    if minor is None:
        return "-"
    return f"{minor / 100:,.2f}"


def pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}%"


def num(v: float | None, digits: int = 1) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def when(t_ns: int | None) -> str:
    if t_ns is None:
        return "-"
    return datetime.fromtimestamp(t_ns / 1e9).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _z(v: float | None) -> str:
    return "-" if v is None else f"{v:+.2f}"


HOLD_HEAD = ["rounds", "wagers", "handle", "actual win", "theoretical", "hold", "theo. hold", "sd", "z", "band"]


def _hold_cells(c: Mapping[str, Any]) -> list[str]:
    lo, hi = c["band"]
    return [str(c["rounds"]), str(c["wagers"]), money(c["handle"]), money(c["actual"]), money(c["theoretical"]),
            pct(c["hold_pct"]), pct(c["theoretical_pct"]), money(c["sd"]), _z(c["z"]),
            f"{money(lo)} .. {money(hi)}" + ("" if c.get("covariance") == "exact" else " (bound)")]


def sections(report: Mapping[str, Any], alarms: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, list[str], list[Row]]]:
    """The report's tables: (title, note, header, rows)."""
    g = report["groups"]
    out: list[tuple[str, str, list[str], list[Row]]] = []
    out.append(("Alarms", "z of actual against theoretical beyond the threshold, Sidak-corrected for the tests "
                "watched (docs/report.md); " + ("none fired" if not alarms else "each with the figures behind it"),
                ["group", "row", "rounds", "actual", "theoretical", "sd", "z", "threshold", "tests"],
                [[f"{a['group']} {a['key']}", a["row"], a["rounds"], money(a["actual"]), money(a["theoretical"]),
                  money(a["sd"]), _z(a["z"]), f"+-{a['threshold']:.2f}", a["tests"]] for a in alarms]))
    rows: list[Row] = []
    for key, v in sorted(g["table"].items()):
        p, h = v.get("pace", {}), v.get("hold", {}).get("overall")
        rows.append([key, p.get("rounds"), num(p.get("hours"), 2), num(p.get("rounds_per_hour")),
                     num(p.get("cards_per_minute")), num(p.get("dealing_cards_per_minute")), p.get("shoes"),
                     *(_hold_cells(h)[2:9] if h else ["-"] * 7)])
    out.append(("Tables", "pace over the time the table played (gaps over the idle limit are a closed table); "
                "hold of the base game (progressives below)",
                ["table", "rounds", "hours", "rounds/h", "cards/min", "dealing cards/min", "shoes", "handle",
                 "actual win", "theoretical", "hold", "theo. hold", "sd", "z"], rows))
    rows = []
    for kind in ("table",):
        for key, v in sorted(g[kind].items()):
            for row, c in sorted(v.get("hold", {}).items(), key=lambda rc: (rc[0] in ("overall", "progressive"),
                                                                             rc[0] == "progressive", rc[0])):
                if row != "progressive":
                    rows.append([key, row, *_hold_cells(c)])
    out.append(("Hold by wager type", "actual against the exact theoretical from the par sheet of the pay table "
                "in force; band = theoretical +- band z x sd", ["table", "wager", *HOLD_HEAD], rows))
    for kind, title in (("dealer", "Dealers"), ("shift", "Shifts"), ("seat", "Seats")):
        rows = []
        for key, v in sorted(g[kind].items()):
            h = v.get("hold", {}).get("overall")
            p = v.get("pace", {})
            if h is None:
                continue
            extra = [num(p.get("rounds_per_hour")), num(p.get("dealing_cards_per_minute"))] if kind != "seat" else []
            rows.append([key, *extra, *_hold_cells(h)])
        head = [kind, *(["rounds/h", "dealing cards/min"] if kind != "seat" else []), *HOLD_HEAD]
        out.append((title, "overall hold of the base game", head, rows))
    rows = []
    for key, v in sorted(list(g["table"].items()) + list(g["dealer"].items()) + list(g["hour"].items())):
        p = v.get("pace")
        if not p:
            continue
        ph = p.get("phase_seconds", {})
        rows.append([key, p["rounds"], num(p.get("rounds_per_hour")), num(p.get("cards_per_minute")),
                     *(num(ph.get(k)) for k in ("betting", "dealing", "decisions", "settling", "between rounds",
                                                "loading shoes")),
                     num(p.get("shoes_per_hour"), 2), num(p.get("loading_seconds"), 0)])
    out.append(("Game pace", "seconds per round in each phase, from the journal's times; by table, dealer and hour",
                ["table / dealer / hour", "rounds", "rounds/h", "cards/min", "betting", "dealing", "decisions",
                 "settling", "between", "loading shoes", "shoes/h", "loading s"], rows))
    rows = []
    for table_key, v in sorted(g["table"].items()):
        shoes = [s.get("pace", {}) for k, s in g["shoe"].items() if k.startswith(f"{table_key} shoe ")]
        p = v.get("pace", {})
        if not shoes:
            continue
        n = len(shoes)
        rows.append([table_key, n, num(sum(s.get("rounds", 0) for s in shoes) / n),
                     num(sum(s.get("cards", 0) for s in shoes) / n),
                     num(sum(s.get("hours", 0) for s in shoes) * 60 / n), num(p.get("shoes_per_hour"), 2),
                     num((p.get("loading_seconds") or 0) / max(1, p.get("shoes") or 1)),
                     num(min(s.get("dealing_cards_per_minute") or 0 for s in shoes)),
                     num(max(s.get("dealing_cards_per_minute") or 0 for s in shoes))])
    out.append(("Shoes", "per table: each shoe's rounds, cards and minutes of play on average; loading time per "
                "shoe loaded between rounds; the slowest and fastest shoe's dealing pace",
                ["table", "shoes", "rounds/shoe", "cards/shoe", "minutes/shoe", "shoes/h", "loading s/shoe",
                 "slowest dealing c/min", "fastest dealing c/min"], rows))
    rows = []
    for key, v in sorted(g["player"].items()):
        r = v.get("rating")
        if not r:
            continue
        rows.append([key, num(r["seated_s"] / 60, 0), r["rounds"], money(r["average_bet"]), money(r["handle"]),
                     money(r["actual"]), money(r["theoretical"])])
    out.append(("Player ratings", "time seated from the player ids given per seat; theoretical = stake x the "
                "wager's exact house edge", ["player", "minutes seated", "rounds", "average bet", "handle",
                                              "actual win", "theoretical"], rows))
    rows = []
    for v in [x for x in g["table"].values()]:
        pass
    for key, v in sorted(g["table"].items()):
        c = v.get("hold", {}).get("progressive")
        if c:
            rows.append([key, c["wagers"], money(c["handle"]), money(c["actual"]), money(c["theoretical"]),
                         c["unpriced_wagers"]])
    out.append(("Progressive wagers", "not in the overall hold, z or alarm: a jackpot hit's result is no normal "
                "band's; fixed amounts per minimum progressive wager, pool lines at the pool displayed; "
                "Lucky Player not priced", ["table", "wagers", "handle", "actual win", "theoretical",
                                            "not priced"], rows))
    rows = [[rule, r["count"], r["waited"], r["unresolved"], num(r["wait_mean_s"]), num(r["wait_max_s"])]
            for rule, r in report["flags_by_rule"].items()]
    out.append(("Flags by rule", "how long each waited for a supervisor's decision",
                ["rule", "flags", "waited for a supervisor", "still waiting", "mean wait s", "longest wait s"], rows))
    rows = [[f["table"], f["round_id"] or "-", f["kind"], " ".join(f["rules"]), when(f["raised_ns"]),
             f["final"] or f["decision"], f["resolved_by"] or "-", num(f["waited_s"])]
            for f in report["flags"][:200]]
    out.append(("Flags", "the first 200" if len(report["flags"]) > 200 else "",
                ["table", "round", "kind", "rules", "raised", "decision", "by", "waited s"], rows))
    return out


def charts(report: Mapping[str, Any], fmt: str) -> list[tuple[str, bytes]]:
    """(title, image) for pace over the shift, actual against theoretical with its band, and flags."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: list[tuple[str, bytes]] = []

    def save(fig: Any, title: str) -> None:
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=130, bbox_inches="tight")
        plt.close(fig)
        out.append((title, buf.getvalue()))

    series = sorted(report["series"], key=lambda s: s["opened_ns"])
    hours = report["groups"]["hour"]
    if hours:
        keys = sorted(hours)
        fig, ax = plt.subplots(figsize=(9, 3.2))
        rph = [hours[k].get("pace", {}).get("rounds_per_hour") or 0 for k in keys]
        ax.bar(range(len(keys)), rph, color="#4a7ab5")
        ax.set_xticks(range(len(keys)), [k[-5:] for k in keys], rotation=0, fontsize=8)
        ax.set_ylabel("rounds per hour")
        ax.set_title("Game pace over the shift (all tables, by hour opened)")
        ax.grid(axis="y", alpha=0.3)
        save(fig, "Pace over the shift")
    if series:
        import numpy as np

        band = float(report.get("band_z", 2.0))
        t0 = series[0]["opened_ns"]
        x = np.array([(s["opened_ns"] - t0) / 3.6e12 for s in series])
        actual = np.cumsum([s["actual"] / 100 for s in series])
        theo = np.cumsum([s.get("theo", 0.0) / 100 for s in series])
        sd = np.sqrt(np.cumsum([s.get("var", 0.0) for s in series])) / 100
        fig, ax = plt.subplots(figsize=(9, 3.6))
        ax.fill_between(x, theo - band * sd, theo + band * sd, color="#cfe0f3", label=f"band (+-{band:g} sd)")
        ax.plot(x, theo, color="#2b5d9b", lw=1.2, label="theoretical win")
        ax.plot(x, actual, color="#b23b3b", lw=1.2, label="actual win")
        ax.set_xlabel("hours from the first round")
        ax.set_ylabel("house win (major units)")
        ax.set_title("Actual against theoretical, cumulative (base game, all tables)")
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(alpha=0.3)
        save(fig, "Actual against theoretical")
    flags = report["flags_by_rule"]
    if flags:
        rules = list(flags)
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.0))
        a1.bar(rules, [flags[r]["count"] for r in rules], color="#8a6bb5")
        a1.set_title("Flags by rule")
        a2.bar(rules, [flags[r]["wait_mean_s"] or 0 for r in rules], color="#c98a2e")
        a2.set_title("Mean wait for a supervisor (s)")
        for a in (a1, a2):
            a.tick_params(axis="x", labelsize=8)
            a.grid(axis="y", alpha=0.3)
        save(fig, "Flags")
    return out


def _header(report: Mapping[str, Any]) -> list[str]:
    w = report["window"]
    tables = report["tables"]
    firsts = [t["first_ns"] for t in tables if t["first_ns"]]
    lasts = [t["last_ns"] for t in tables if t["last_ns"]]
    lines = [f"Window: {when(w['since_ns']) if w['since_ns'] else when(min(firsts) if firsts else None)} to "
             f"{when(w['until_ns']) if w['until_ns'] else when(max(lasts) if lasts else None)} (rounds opened in it)",
             f"Tables: {len(tables)} ({', '.join(sorted({t['table'] for t in tables})[:12])}"
             f"{', ...' if len(tables) > 12 else ''})"]
    for game, t in report["games"].items():
        if t is None:
            lines.append(f"{game}: not priced")
            continue
        comps = ", ".join(f"{k} edge {v['edge'] * 100:.4f}% sd {v['sd']:.4f}" for k, v in t["components"].items())
        lines.append(f"{game}: pay tables revision {t['revision']}; {comps}")
        for comp, strat in t.get("strategy", {}).items():
            lines.append(f"  strategy ({comp}): {strat}")
    totals = [v.get("hold", {}).get("overall") for v in report["groups"]["table"].values()]
    totals = [c for c in totals if c]
    rounds = sum(v.get("pace", {}).get("rounds", 0) for v in report["groups"]["table"].values())
    handle = sum(c["handle"] for c in totals)
    actual = sum(c["actual"] for c in totals)
    theo = sum(c["theoretical"] for c in totals)
    flags = report["flags"]
    lines.append(f"Totals: {rounds} rounds; base game handle {money(handle)}, actual win {money(actual)}"
                 f" ({pct(100 * actual / handle) if handle else '-'}), theoretical {money(theo)}"
                 f" ({pct(100 * theo / handle) if handle else '-'}); {len(flags)} flags, "
                 f"{sum(1 for f in flags if f['waited_for_supervisor'])} waited for a supervisor")
    lines.append(f"Band: theoretical +- {report['band_z']:g} sd; amounts in major units")
    lines += [f"Note: {p}" for p in report["problems"][:20]]
    return lines


_CSS = """
body{font:12px/1.35 system-ui,Helvetica,Arial,sans-serif;margin:18px;color:#111}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 4px;border-bottom:1px solid #999}
p.note{color:#444;margin:2px 0 6px}table{border-collapse:collapse;margin:4px 0 10px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #bbb;padding:2px 5px;text-align:right}th{background:#eee}td:first-child,th:first-child{text-align:left}
tr.alarm td{background:#fde2e2}.meta{color:#333}.sign{margin-top:28px}.sign span{display:inline-block;width:260px;
border-top:1px solid #000;margin-right:40px;padding-top:2px}figure{margin:8px 0}figure svg{max-width:100%;height:auto}
@media print{body{margin:0}h2{break-after:avoid}table,figure{break-inside:avoid}}
@page{size:A4 landscape;margin:12mm}
"""


def to_html(report: Mapping[str, Any], alarms: Sequence[Mapping[str, Any]]) -> str:
    """A self-contained HTML page: style inline, charts as inline SVG, no script, nothing fetched."""
    parts = ["<!doctype html><html lang=en><head><meta charset=utf-8><title>cardshoe shift report</title>",
             f"<style>{_CSS}</style></head><body><h1>Shift report</h1><div class=meta>"]
    parts += [f"<div>{html.escape(line)}</div>" for line in _header(report)]
    parts.append("</div>")
    for title, svg in charts(report, "svg"):
        text = svg.decode()
        text = text[text.find("<svg"):]
        # matplotlib's RDF metadata (namespace URLs, the date): not the chart, not needed inline.
        text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
        parts.append(f"<figure aria-label='{html.escape(title)}'>{text}</figure>")
    for title, note, head, rows in sections(report, alarms):
        parts.append(f"<h2>{html.escape(title)}</h2>")
        if note:
            parts.append(f"<p class=note>{html.escape(note)}</p>")
        if not rows:
            parts.append("<p class=note>none</p>")
            continue
        parts.append("<table><thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head) + "</tr></thead><tbody>")
        for row in rows:
            cls = " class=alarm" if title == "Alarms" else ""
            parts.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
        parts.append("</tbody></table>")
    parts.append("<div class=sign><span>Shift manager</span><span>Date and time</span><span>Surveillance</span></div>")
    parts.append(f"<p class=note>Made by cardshoe report at {html.escape(when(int(datetime.now().timestamp() * 1e9)))} "
                 "from the journals named; figures and method: docs/report.md.</p></body></html>")
    return "".join(parts)


def to_pdf(report: Mapping[str, Any], alarms: Sequence[Mapping[str, Any]], path: Path) -> None:
    """The same report as an A4 landscape PDF (reportlab)."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.lib.units import mm
    from reportlab.platypus import Image, LongTable, Paragraph, SimpleDocTemplate, Spacer, TableStyle

    styles = getSampleStyleSheet()
    small = styles["BodyText"].clone("small", fontSize=8, leading=10)
    cell = styles["BodyText"].clone("cell", fontSize=7, leading=8.5)
    story: list[Any] = [Paragraph("Shift report", styles["Title"])]
    story += [Paragraph(html.escape(line), small) for line in _header(report)]
    width = landscape(A4)[0] - 24 * mm
    for title, png in charts(report, "png"):
        img = Image(io.BytesIO(png))
        scale = min(width / img.drawWidth, 70 * mm / img.drawHeight)
        img.drawWidth, img.drawHeight = img.drawWidth * scale, img.drawHeight * scale
        story += [Spacer(1, 3 * mm), img]
    for title, note, head, rows in sections(report, alarms):
        story.append(Paragraph(html.escape(title), styles["Heading2"]))
        if note:
            story.append(Paragraph(html.escape(note), small))
        if not rows:
            story.append(Paragraph("none", small))
            continue
        data = [[Paragraph(f"<b>{html.escape(str(h))}</b>", cell) for h in head]]
        data += [[Paragraph(html.escape(str(c)), cell) for c in row] for row in rows]
        t = LongTable(data, repeatRows=1)
        style = [("GRID", (0, 0), (-1, -1), 0.3, colors.grey), ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                 ("VALIGN", (0, 0), (-1, -1), "TOP")]
        if title == "Alarms":
            style.append(("BACKGROUND", (0, 1), (-1, -1), colors.HexColor("#fde2e2")))
        t.setStyle(TableStyle(style))
        story.append(t)
    story += [Spacer(1, 14 * mm), Paragraph("Shift manager ______________________ &nbsp;&nbsp; Date and time "
                                            "______________________ &nbsp;&nbsp; Surveillance ______________________",
                                            small)]

    def footer(canvas: Any, doc: Any) -> None:
        canvas.setFont("Helvetica", 7)
        canvas.drawRightString(landscape(A4)[0] - 12 * mm, 7 * mm, f"cardshoe shift report - page {doc.page}")

    doc = SimpleDocTemplate(str(path), pagesize=landscape(A4), leftMargin=12 * mm, rightMargin=12 * mm,
                            topMargin=10 * mm, bottomMargin=12 * mm, title="cardshoe shift report")
    doc.build(story, onFirstPage=footer, onLaterPages=footer)


def write(report: Mapping[str, Any], alarms: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Write the report by the file's suffix: .json, .html or .pdf."""
    suffix = path.suffix.lower()
    writers: dict[str, Callable[[], object]] = {
        ".json": lambda: path.write_text(json.dumps({**report, "alarms": list(alarms)}, indent=1, sort_keys=True)),
        ".html": lambda: path.write_text(to_html(report, alarms), encoding="utf-8"),
        ".pdf": lambda: to_pdf(report, alarms, path),
    }
    if suffix not in writers:
        raise ValueError(f"--out: {path.name}: the suffix must be .json, .html or .pdf")
    writers[suffix]()
