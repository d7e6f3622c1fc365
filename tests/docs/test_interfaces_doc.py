"""INTERFACES.md exists, every reference to it names it, and its tables agree with both sides
of each interface (issue 12 item 12: it was cited in a dozen places and did not exist)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "INTERFACES.md"


def _tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / n for n in names.splitlines() if n.endswith((".py", ".md", ".toml", ".txt")) and (ROOT / n).exists()]


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_every_reference_resolves() -> None:
    assert DOC.is_file()
    headings = re.findall(r"^## (.+)$", DOC.read_text(), re.MULTILINE)
    referrers = 0
    for path in _tracked_text_files():
        if path in (DOC, Path(__file__).resolve()):
            continue
        text = path.read_text(errors="replace")
        for match in re.finditer(r"INTERFACES\b(\.md)?", text):
            referrers += 1
            assert match.group(1) == ".md", f"{path.relative_to(ROOT)}: {text[match.start():match.end() + 20]!r}"
        for cited in re.findall(r'INTERFACES\.md[:,] "?([A-Z][A-Za-z ]+)', text):
            assert any(h.startswith(cited.strip()) or h.startswith("The " + cited.strip().lower())
                       or cited.strip().lower() in h.lower() for h in headings), (path, cited)
    assert referrers >= 10


def test_the_wager_names_are_the_pay_tables() -> None:
    table = _section("Wager and decision names")
    rows = dict(re.findall(r"^\| `([a-z-]+)` \| ([^|]+) \|", table, re.MULTILINE))
    assert len(rows) == 5
    for game, cell in rows.items():
        paytable = json.loads((ROOT / "host" / "games" / "paytables" / f"{game}.json").read_text())
        assert re.findall(r"`([a-z_]+)`", cell) == paytable["wagers"], game


def test_the_sim_lines_are_the_ones_both_sides_speak() -> None:
    sim = _section("The sim channel (bench and virtual board)")
    keys = re.search(r"a dealer key: ((?:`[a-z_]+`,? ?)+)", sim)
    assert keys is not None
    documented_keys = re.findall(r"`([a-z_]+)`", keys.group(1))
    bench = (ROOT / "hil" / "vboard" / "sim.py").read_text()
    firmware = (ROOT / "firmware" / "boards" / "unix.py").read_text()
    bench_keys = re.search(r"^KEYS = \(([^)]*)\)", bench, re.MULTILINE)
    firmware_keys = re.search(r"^_KEYS = \(([^)]*)\)", firmware, re.MULTILINE)
    assert bench_keys and firmware_keys
    assert documented_keys == re.findall(r'"([a-z_]+)"', bench_keys.group(1))
    assert documented_keys == re.findall(r'b"([a-z_]+)"', firmware_keys.group(1))
    for word in ("rfid", "barcode", "exit", "key", "reader", "jam", "lid", "ready", "led"):
        assert f"`{word}" in sim, word
        assert f'b"{word}' in firmware or f"b\"{word} " in firmware or f'"{word} ' in firmware, word


def test_the_key_store_layout_is_the_one_the_code_keeps(tmp_path: Path) -> None:
    from cardshoe.keys import KeyStore

    store = _section("The host key store")
    assert "`<dir>/N.key`" in store and "mode `0600`" in store and "64 hex characters" in store
    assert "`$CARDSHOE_KEYS`" in store and "`~/.local/share/cardshoe/keys`" in store
    keys = KeyStore(tmp_path / "keys")
    key = keys.create(4242)
    path = tmp_path / "keys" / "4242.key"  # as documented, not as KeyStore.path says
    assert path.read_text().strip() == key.hex() and len(key.hex()) == 64
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "keys").stat().st_mode & 0o777 == 0o700
