"""`cardshoe report` end to end on journals dealt by the bench's simulated table, and the floor's
`GET /report` over the same day shipped to a floor store (both backends)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from cardshoe.floor.store import FloorStore, ShippedEntry
from cardshoe.hil.shiftsim import SimEntry, SimTable, write_journal
from cardshoe.report import cli

START = int(datetime(2027, 1, 15, 6, 5).astimezone().timestamp() * 1e9)


@pytest.fixture(scope="module")
def day() -> list[SimEntry]:
    table = SimTable(name="T07", seed=4, start_ns=START)
    table.sign_on("D-ANNA")
    table.seat_player(2, "P-1")
    for r in range(40):
        if r == 20:
            table.sign_on("D-BEN")
        table.deal_round(table.random_wagers())
    return table.entries


def test_json_html_and_pdf_from_a_journal_with_a_time_cut(day: list[SimEntry], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "T07.sqlite"
    write_journal(day, journal)
    assert cli.main(["--journal", str(journal), "--out", str(tmp_path / "r.json")]) == 0
    data = json.loads((tmp_path / "r.json").read_text())
    t07 = data["groups"]["table"]["T07"]
    assert t07["pace"]["rounds"] == 40 and set(data["groups"]["dealer"]) == {"D-ANNA", "D-BEN"}
    assert data["groups"]["dealer"]["D-ANNA"]["pace"]["rounds"] == 20
    assert data["groups"]["player"]["P-1"]["rating"]["rounds"] > 0
    # The money adds up: the table's handle and actual win are the settlements' own.
    settled = [json.loads(e.body)["settlement"] for e in day if e.kind == "settlement"]
    stake = sum(s["totals"]["stake"] for s in settled)
    net = sum(s["totals"]["net"] for s in settled)
    assert t07["hold"]["overall"]["handle"] == stake and t07["hold"]["overall"]["actual"] == -net
    # --from/--to: a round counts when it opened in the window.
    opened = sorted(e.t_ns for e in day if e.kind == "event" and json.loads(e.body)["type"] == "round_opened")
    cut = datetime.fromtimestamp(opened[10] / 1e9).astimezone().isoformat()
    assert cli.main(["--journal", str(journal), "--to", cut, "--out", str(tmp_path / "cut.json")]) == 0
    assert json.loads((tmp_path / "cut.json").read_text())["groups"]["table"]["T07"]["pace"]["rounds"] == 10
    assert cli.main(["--journal", str(journal), "--out", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "<svg" in page and "D-ANNA" in page
    # Self-contained: nothing to fetch (SVG namespaces are names, not fetched).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|url\((?!#)|<link|<script|@import""", page)
    assert cli.main(["--journal", str(journal), "--out", str(tmp_path / "r.pdf")]) == 0
    assert (tmp_path / "r.pdf").read_bytes()[:5] == b"%PDF-"
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "r.pdf"), "-"], capture_output=True,
                              text=True, check=True).stdout
        assert "Shift report" in text and "D-BEN" in text and "Hold by wager type" in text
    capsys.readouterr()


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--journal", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "r.html")]) == 2
    assert cli.main(["--journal", "j", "--out", str(tmp_path / "r.docx")]) == 2
    assert cli.main(["--journal", "j", "--out", "r.json", "--shifts", "25"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("cardshoe report: ") for line in err), err
    assert "r.docx" in err[1] and "--shifts" in err[2]


def test_the_floor_reports_every_table_it_holds(day: list[SimEntry], store: FloorStore) -> None:
    from floor_chain import chained
    from floor_server import TOKENS
    from floor_server import app as floor_app

    shipped = [ShippedEntry(e.id, e.t_ns, e.kind, None, None, None, None, e.round_id, e.body, None) for e in day]
    half = len(shipped) // 2
    store.ingest("T07.aa", chained("T07.aa", shipped), game="three-card-poker")
    t08 = chained("T08.bb", shipped)  # the same day as another journal: its own chain
    store.ingest("T08.bb", t08[:half], game="three-card-poker")
    c = TestClient(floor_app(store), headers={"Authorization": f"Bearer {TOKENS['pit']}"})
    first = c.get("/report", params={"since_ns": 0, "min_rounds": 10}).json()["groups"]["table"]["T07"]["pace"]["rounds"]
    assert 40 < first < 80
    # The rest of the second journal arrives: the next call reads only it, and counts it.
    store.ingest("T08.bb", t08[half:], game="three-card-poker")
    r = c.get("/report", params={"since_ns": 0, "min_rounds": 10})
    assert r.status_code == 200, r.text
    data = r.json()
    assert [t["source"] for t in data["tables"]] == ["floor:T07.aa", "floor:T08.bb"]
    assert data["groups"]["table"]["T07"]["pace"]["rounds"] == 80  # both journals carry the name T07
    assert isinstance(data["alarms"], list)
    # The figures kept between calls (only the new rounds counted) are those of a floor that
    # reads everything at once.
    fresh = TestClient(floor_app(store), headers={"Authorization": f"Bearer {TOKENS['pit']}"})
    once = fresh.get("/report", params={"since_ns": 0, "min_rounds": 10}).json()
    assert json.dumps(once["groups"], sort_keys=True) == json.dumps(data["groups"], sort_keys=True)
    assert once["alarms"] == data["alarms"]
    assert c.get("/floor/report.js").status_code == 200
    assert 'src="/floor/report.js"' in c.get("/floor").text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
