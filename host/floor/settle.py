"""Settling a round by its id, from the journal the floor holds (issue 21 item 2).

A linked table asks `POST /links/{link}/settle` with `{table, round_id, entry, entries}`:
`entry` is the id of its journal's `settle_sent` entry for the round (journaled, under the
table's service lock, as the last entry before the round's Settle), `entries` the journal's
tail up to it that the shipper has not delivered yet (stored and chain-checked exactly as
shipped entries are; empty when the shipper is far behind). The floor then:

1. refuses while it holds an open alarm of the table's journal (a gap, a break, a journal
   restored or changed): nothing of such a journal is paid until a person looks;
2. refuses with `RoundIncomplete` (the table waits and asks again, as when the floor is away)
   until it holds the journal up to `entry`;
3. checks `entry` is the table's `settle_sent` of that round on that link;
4. answers a round it assigned already from that same entry with that assignment;
5. rebuilds the round from the stored entries up to `entry` (`cardshoe.floor.rebuild`: the
   replay core, every frame checked with its shoe's key), tries the Settle operation on it,
   and checks the round file's digest against the one the table journaled in `settle_sent`;
6. settles that round file against the pool (`FloorStore.settle`) and signs the assignment
   with the floor's key, naming `entry` and its chain value.
"""

from __future__ import annotations

import json
from typing import Sequence

from .progressive import Assignment, FloorRefusal, round_digest
from .rebuild import Rebuilder, RoundIncomplete
from .store import FloorStore, ShippedEntry, Signer

__all__ = ["FloorSettler", "StreamAlarmed", "RoundMismatch"]


class StreamAlarmed(FloorRefusal):
    """The floor holds an open alarm of the table's journal: none of its rounds is settled."""


class RoundMismatch(FloorRefusal):
    """The round the floor rebuilt is not the one the table says it settles."""


class FloorSettler:
    """Settles rounds by id from `store`'s entries, rebuilt by `rebuilder`, signed by `signer`."""

    def __init__(self, store: FloorStore, rebuilder: Rebuilder, signer: Signer | None) -> None:
        self.store = store
        self.rebuilder = rebuilder
        self.signer = signer

    def settle(self, link: str, stream: str, round_id: str, entry: int, entries: Sequence[ShippedEntry] = (),
               head: tuple[int, str | None] | None = None) -> Assignment:
        """Assign round `round_id` of `stream`, as its journal holds it up to `entry`, its pool."""
        if entries or head is not None:
            self.store.ingest(stream, entries, head=head)
        alarms = self.store.alarms(stream, open_only=True)
        if alarms:
            raise StreamAlarmed("table", f"the floor holds an open alarm of table {stream}'s journal "
                                         f"({alarms[0]['kind']} at entry {alarms[0]['at_id']}: "
                                         f"{alarms[0]['message']}); "
                                         "no round of it is settled until a floor supervisor clears it")
        info = self.store.stream(stream)
        held = 0 if info is None else int(info["high_water"])
        if held < entry:
            raise RoundIncomplete("entry", f"the floor holds table {stream}'s journal up to entry {held}; round "
                                           f"{round_id} was sent for settlement at entry {entry}: it has not all "
                                           "arrived (the table waits and asks again)")
        found = self.store.entries(stream, after_id=entry - 1, upto=entry, lineage=True, limit=1)
        body = _body(found[0].body) if found else {}
        if not found or found[0].kind != "floor" or body.get("type") != "settle_sent" \
                or body.get("round_id") != round_id or body.get("link") != link:
            raise FloorRefusal("entry", f"entry {entry} of table {stream} is not its settle_sent of round {round_id} "
                                        f"on link {link}")
        before = self.store.assignment(stream, round_id)
        if before is not None and before.entry == entry:
            return before  # the same request again (its answer lost): the first answer
        round_json = self.rebuilder.round_file(stream, round_id, entry, found[0].t_ns)
        claimed = body.get("digest")
        if isinstance(claimed, str) and claimed != round_digest(round_json):
            raise RoundMismatch("round", f"round {round_id} as table {stream}'s journal holds it up to entry {entry} "
                                         "is not the round the table says it settles (digest); a person must look")
        return self.store.settle(link, stream, round_json, entry=entry, chain=found[0].chain, signer=self.signer)


def _body(text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
