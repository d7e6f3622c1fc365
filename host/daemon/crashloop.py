"""A host command that crashes the shoe is not resent for ever (issue 26 item 4; SPEC 4).

The link resends a command until the shoe's REPLY names it (SPEC 4). A command whose
execution crashes the firmware never gets one: the shoe resets itself (firmware/README.md,
"Crash") and, resent after each boot, the command crashed it again, boot after boot (on a
Pico, NEW_SHOE: five watchdog resets a minute and no card dealt). The shoe now reports each
crash in the CRASH frame after its HELLO, naming the command it was executing (type, epoch,
seq); the core journals it as `shoe_crash` (cardshoe.daemon.shoes). `CrashWatch` counts, per
shoe and command type, the crashes of commands this daemon was sending, and at
`CRASH_LOOP_BOUND` the daemon gives the command up (`ShoeLink.abandon`): taken off the queue
unanswered, journaled `command_abandoned` (reason `shoe_crash_loop`), and the
`shoe_crash_loop` alarm raised (journaled, published on the event stream, in `/status`
`alarms` and so on the table page). The shoe, no longer sent the command, boots and keeps
serving the cards it holds.

- **The bound is 2.** The first crash may be a passing one (a MemoryError depends on where
  the heap's holes fall), so the command is sent once more; a second crash of the same type
  of command in a row means it will crash the shoe every time.
- **Per type, not per command object.** The daemon issues TIME and CONFIG anew at every
  HELLO, so a CONFIG that crashes the shoe is a new command each boot: counted per command
  it would never reach the bound. Once a type is given up for a shoe, the daemon no longer
  sends that type on its own (TIME and CONFIG at HELLO, CARDS_FROM) while the alarm stands;
  one a person asks for (NEW_SHOE, CLEAR, MAINTENANCE) is sent, and given up at its first
  crash.
- A REPLY to a command of the type resets its count (it did not crash the shoe), and a
  REPLY OK clears the alarm; so does a HELLO with another firmware hash (the shoe was
  flashed). A crash that names no command being sent (one of an earlier epoch, or a crash
  while booting) is journaled and logged and changes nothing here. Nothing is kept across
  a daemon restart (the link's queue is not either).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from cardshoe.link import Command
from cardshoe.protocol.spec import MessageType

#: Crashes in a row of one type of command before it is given up (see above).
CRASH_LOOP_BOUND = 2
#: The commands the daemon sends on its own (at a HELLO, for missing cards): withheld once
#: their type is given up for the shoe.
AUTOMATIC = frozenset({MessageType.TIME, MessageType.CONFIG, MessageType.CARDS_FROM})


def alarm_key(shoe: int, command: str) -> str:
    """The key of a crash-loop alarm in the daemon's `alarms`."""
    return f"shoe_crash_loop:{shoe}:{command}"


@dataclass
class CrashWatch:
    """Crashes of the shoes per command type, and the types given up."""

    bound: int = CRASH_LOOP_BOUND
    counts: dict[tuple[int, int], int] = field(default_factory=dict)
    given_up: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    fw_hash: dict[int, str] = field(default_factory=dict)

    def crashed(self, shoe: int, command: Command, crash: Mapping[str, Any], now_ns: int) -> dict[str, Any] | None:
        """The shoe crashed executing `command` (its CRASH `crash`, the `shoe_crash` body):
        count it; returns the alarm when the command is to be given up, else None."""
        key = (shoe, int(command.message.TYPE))
        n = self.counts[key] = self.counts.get(key, 0) + 1
        if n < self.bound:
            return None
        name = command.message.TYPE.name
        alarm = {
            "type": "shoe_crash_loop", "shoe": shoe, "command": name, "epoch": int(crash["cmd_epoch"]),
            "seq": int(crash["cmd_seq"]), "seqs": sorted(command.seqs), "crashes": n, "bound": self.bound,
            "shoe_count": int(crash.get("count", 0)), "error": crash.get("error"), "where": crash.get("where"),
            "text": crash.get("text", ""), "boot": int(crash.get("boot", 0)), "since_ns": now_ns,
            "message": (f"shoe {shoe} crashed {n} times in a row executing {name}; the command is given up "
                        f"(not sent again) and the shoe serves the cards it holds: {crash.get('text', '')} "
                        f"(flash fixed firmware; a {name} that succeeds clears this)"),
        }
        self.given_up[key] = alarm
        return alarm

    def answered(self, shoe: int, mtype: int, status: int) -> dict[str, Any] | None:
        """A REPLY to a command of `mtype`: its count starts again; with status OK the
        type's alarm clears (returned, for the journal), if there is one."""
        key = (shoe, mtype)
        self.counts.pop(key, None)
        return self.given_up.pop(key, None) if status == 0 else None

    def withheld(self, shoe: int, mtype: int) -> bool:
        """True when the daemon must not send a command of `mtype` to `shoe` on its own."""
        return mtype in AUTOMATIC and (shoe, mtype) in self.given_up

    def hello(self, shoe: int, fw_hash: str) -> list[dict[str, Any]]:
        """A HELLO: a firmware hash unlike the last one seen clears the shoe's alarms (the
        shoe was flashed); returns them."""
        last = self.fw_hash.get(shoe)
        self.fw_hash[shoe] = fw_hash
        if last is None or last == fw_hash:
            return []
        cleared = [a for (s, _t), a in self.given_up.items() if s == shoe]
        self.given_up = {k: a for k, a in self.given_up.items() if k[0] != shoe}
        self.counts = {k: n for k, n in self.counts.items() if k[0] != shoe}
        return cleared
