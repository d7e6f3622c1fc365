"""`cardshoe evidence`: export a round's signed evidence file, verify one offline, show the key.

    cardshoe evidence export --journal J --round ID [--out FILE] [--table-key FILE]
    cardshoe evidence verify FILE [--shoe-key [SERIAL=]HEX ...] [--keys DIR] [--table-pubkey HEX|FILE]
                                  [--floor-pubkey HEX|FILE]
    cardshoe evidence key (--table-key FILE | --journal J) [--create]

`export` rebuilds the table from the journal (read-only, as `cardshoe replay` does) and signs
the round's evidence with the table's key (default: `<journal stem>.table-key` beside the
journal, as the daemon keeps it). `verify` checks every frame tag with the shoe's key (from
`--shoe-key`, else the key store `--keys`/$CARDSHOE_KEYS), the signature (with the table's
public key when given), the hands rebuilt from the frames by the dealing procedure, the
settlement recomputed, the journal section's hash chain and its inputs against the operations,
and the floor's signed assignment (with the floor's public key when given: then one is
required); it prints `verified: ...` and exits 0, or one `FAILED check: why` line per failure
and exits 1. A file that cannot be read, or that gives a key twice (read with
`cardshoe.strictjson`), exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from cardshoe.journal.store import JournalError, now_ns


class UsageError(ValueError):
    """A bad argument (a key that is not 64 hex characters, a missing option): exit 2."""


def _default_key(journal: Path) -> Path:
    return journal.with_name(journal.stem + ".table-key")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardshoe evidence", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write a round's signed evidence file")
    ex.add_argument("--journal", type=Path, required=True, help="the table's journal (SQLite)")
    ex.add_argument("--round", required=True, help="the round id, e.g. T07-3f9c0a1b-000123")
    ex.add_argument("--out", type=Path, help="the file to write (default: standard output)")
    ex.add_argument("--table-key", type=Path, help="the table's signing key (default: <journal stem>.table-key)")
    ve = sub.add_parser("verify", help="check an evidence file offline")
    ve.add_argument("file", type=Path)
    ve.add_argument("--shoe-key", action="append", default=[], metavar="[SERIAL=]HEX",
                    help="a shoe's 64-hex key (for the file's only shoe, or SERIAL=HEX); repeatable")
    ve.add_argument("--keys", type=Path, help="a key store of shoe keys (default $CARDSHOE_KEYS or "
                                              "~/.local/share/cardshoe/keys)")
    ve.add_argument("--table-pubkey", help="the table's Ed25519 public key: 64 hex characters, or a file holding them")
    ve.add_argument("--floor-pubkey", help="the floor's Ed25519 public key (cardshoe floor key): the file must carry "
                                           "the floor's signed assignment of the round")
    ve.add_argument("--json", action="store_true", help="print the report as JSON")
    ke = sub.add_parser("key", help="print the table's public key")
    ke.add_argument("--table-key", type=Path, help="the table's signing key file")
    ke.add_argument("--journal", type=Path, help="the journal whose default key to use")
    ke.add_argument("--create", action="store_true", help="make the key if there is none")
    return p


def _hex32(text: str, what: str) -> bytes:
    try:
        value = bytes.fromhex(text.strip())
    except ValueError:
        raise UsageError(f"{what}: not hex") from None
    if len(value) != 32:
        raise UsageError(f"{what}: {len(value)} bytes, not 32")
    return value


def _shoe_keys(args: argparse.Namespace, serials: list[int]) -> Callable[[int], bytes | None]:
    given: dict[int | None, bytes] = {}
    for item in args.shoe_key:
        serial_text, sep, hex_text = item.rpartition("=")
        try:
            serial = int(serial_text, 0) if sep else None
        except ValueError:
            raise UsageError(f"--shoe-key: {serial_text!r} is not a shoe serial") from None
        given[serial] = _hex32(hex_text, "--shoe-key")
    if None in given:
        if len(serials) != 1:
            raise UsageError("--shoe-key: the file holds frames of several shoes; give SERIAL=HEX for each")
        given[serials[0]] = given.pop(None)
    from cardshoe.keys import KeyStore

    store = KeyStore(args.keys)

    def lookup(serial: int) -> bytes | None:
        return given.get(serial) if given else store.lookup(serial)

    return lookup


def _export(args: argparse.Namespace) -> int:
    from cardshoe.evidence.build import EvidenceError, export
    from cardshoe.evidence.store import dumps
    from cardshoe.journal import JournalReader
    from cardshoe.journal.replay import replay
    from cardshoe.keys import KeyStoreError, table_key

    try:
        report, core = replay(args.journal, check=True)
        seed = table_key(args.table_key or _default_key(args.journal), create=False)
        with JournalReader(args.journal) as reader:
            doc = export(core, reader, args.round, seed, reason="request", made_ns=now_ns())
    except (JournalError, KeyStoreError) as exc:
        print(f"cardshoe evidence export: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except EvidenceError as exc:
        print(f"cardshoe evidence export: {exc}", file=sys.stderr)
        return 1
    if not report.ok:
        print(f"cardshoe evidence export: warning: the journal does not replay identically "
              f"({len(report.mismatches)} differences; see cardshoe replay)", file=sys.stderr)
    data = dumps(doc)
    if args.out is None:
        sys.stdout.write(data.decode("utf-8"))
    else:
        from cardshoe.evidence.store import write

        path, digest = write(args.out.parent if str(args.out.parent) else Path("."), args.out.name, doc)
        print(f"wrote {path} (sha256 {digest})")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from cardshoe.evidence.verify import verify

    from cardshoe.evidence.verify import read

    try:
        doc: Any = read(args.file.read_bytes())
    except OSError as exc:
        print(f"cardshoe evidence verify: {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # strictjson's JSONInputError: not JSON, a duplicate key, over a bound
        print(f"cardshoe evidence verify: {args.file}: refused: {exc}", file=sys.stderr)
        return 2
    if not isinstance(doc, dict):
        print(f"cardshoe evidence verify: {args.file}: not an evidence file", file=sys.stderr)
        return 2
    pubkey = None if not args.table_pubkey else _key_arg(args.table_pubkey, "--table-pubkey")
    floor_pubkey = None if not args.floor_pubkey else _key_arg(args.floor_pubkey, "--floor-pubkey")
    found = doc.get("evidence")
    body: dict[str, Any] = found if isinstance(found, dict) else {}
    serials = sorted({f.get("shoe") for f in body.get("frames", []) if isinstance(f.get("shoe"), int)})
    report = verify(doc, keys=_shoe_keys(args, serials), table_pubkey=pubkey, floor_pubkey=floor_pubkey)
    if args.json:
        print(json.dumps({"ok": report.ok, "failures": [{"check": f.check, "message": f.message}
                                                        for f in report.failures],
                          "frames": report.frames, "cards": report.cards, "signer": report.signer,
                          "signer_checked": report.signer_checked}, indent=2))
    elif report.ok:
        who = "the table's key given" if report.signer_checked else \
            f"the key the file names ({report.signer}; give --table-pubkey to check whose it is)"
        floor = "; the floor's assignment checked with its key" if floor_pubkey is not None else \
            ("; the floor's assignment checked with the key it names (give --floor-pubkey)"
             if body.get("floor") is not None else "; no floor assignment (give --floor-pubkey to require one)")
        print(f"verified: round {body.get('round_id')}: {report.frames} frame tags, {report.cards} cards, "
              f"hands and settlement rebuilt; signed by {who}{floor}")
    else:
        for failure in report.failures:
            print(f"FAILED {failure}")
    return 0 if report.ok else 1


def _key_arg(text: str, what: str) -> bytes:
    if Path(text).is_file():
        text = Path(text).read_text(encoding="ascii").strip()
    return _hex32(text, what)


def _key(args: argparse.Namespace) -> int:
    from cardshoe.evidence.build import public_key_of
    from cardshoe.keys import KeyStoreError, table_key

    path = args.table_key or (_default_key(args.journal) if args.journal else None)
    if path is None:
        raise UsageError("give --table-key FILE or --journal JOURNAL")
    try:
        seed = table_key(path, create=args.create)
    except KeyStoreError as exc:
        print(f"cardshoe evidence key: {exc}", file=sys.stderr)
        return 2
    print(public_key_of(seed).hex())
    return 0


def main(argv: list[str]) -> int:
    """`cardshoe evidence export|verify|key`."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "export":
            return _export(args)
        if args.command == "verify":
            return _verify(args)
        return _key(args)
    except UsageError as exc:
        print(f"cardshoe evidence {args.command}: {exc} (see cardshoe evidence --help)", file=sys.stderr)
        return 2
