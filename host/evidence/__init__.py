"""Jackpot evidence (issue 14 item 5): a round's frames, cards, journal, hands, settlement and
pool, in one file signed by the table (Ed25519), checked offline by `cardshoe evidence verify`.

`build` makes and signs the file (`export`, `record_of`, `round_entries`, `progressive_hits`),
`verify` checks one (`verify`, `Report`, `Failure`), `store` writes one to disk, `cli` is
`cardshoe evidence`.
"""

from cardshoe.evidence.build import FORMAT, EvidenceError, export, progressive_hits, public_key_of, sign
from cardshoe.evidence.verify import Failure, Report, verify

__all__ = ["FORMAT", "EvidenceError", "Failure", "Report", "export", "progressive_hits", "public_key_of", "sign",
           "verify"]
