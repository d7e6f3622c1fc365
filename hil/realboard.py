"""The scenarios on a real board: `cardshoe hil run --port /dev/ttyACM0`.

The shoe is a real one (a Pico with its reader and exit sensor, flashed beforehand with
`cardshoe flash --port PORT`, whose key is in the key store). The bench runs the daemon
against the port and plays each scenario's round through the daemon's API as on the
virtual board, but the dealer is a person: the bench prompts for each card ("deal Ah")
and for each action it cannot do itself (press the exposure key, cut the power, pull
the cable), waits until the daemon has journaled the card, and checks that the shoe
read the card the scenario asked for. A daemon restart and line noise (through the
fault relay) the bench still does itself.

Cards are barcode cards of the deck whose id is printed on them (`--deck-id`). A
"foreign" card is one from another deck; an "unread" card one dealt with its barcode
covered. The bench cannot force a misread or a double read on a real reader: it asks
for the card and checks only that it was read as that card.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from cardshoe.cards import card_text
from cardshoe.hil.bench import DEFAULT_DECK, FOREIGN_DECK, KEY_CODES, Bench, BenchError, TableSpec
from cardshoe.hil.runner import ScenarioResult, run_scenario
from cardshoe.hil.scenario import Scenario

Prompt = Callable[[str], str]

_ASK = {
    "exposure": "press the shoe's EXPOSURE key",
    "deal_complete": "press the shoe's DEAL COMPLETE key",
    "new_round": "press the shoe's NEW ROUND key",
    "end_shoe": "press the shoe's END SHOE key",
}


class RealBench(Bench):
    """A Bench whose shoe is a real board on `port`, with a person as the dealer."""

    def __init__(self, workdir: Path, table: TableSpec, port: str, *, prompt: Prompt = input,
                 deck_id: int | None = None, serial: int | None = None, keys_dir: Path | None = None) -> None:
        super().__init__(workdir, table, real_port=port, keys_dir=keys_dir or _default_keys())
        self.prompt = prompt
        self.deck_id = deck_id if deck_id is not None else DEFAULT_DECK
        self._serial_given = serial

    def flash(self, *, offline: bool | None = None) -> str:
        """A real board is flashed beforehand (`cardshoe flash --port PORT`); nothing to do."""
        return "the real board was flashed beforehand with `cardshoe flash`"

    def start_daemon(self, *, wait_shoe: bool = True) -> None:
        """Start the daemon against the real port; the shoe's serial is given or the key store's only one."""
        if self._serial_given is not None:
            self.serial = self._serial_given
        else:
            keys = sorted(self.keys_dir.glob("*.key"))
            if len(keys) != 1:
                raise BenchError(f"the key store {self.keys_dir} holds {len(keys)} shoe keys: give the shoe's "
                                 "serial (--serial) of the board on the port")
            self.serial = int(keys[0].stem)
        super().start_daemon(wait_shoe=wait_shoe)

    def deal(self, card: int | None, *, reads: list[str] | None = None, wait: bool = True) -> int:
        """Ask the person to deal `card`, wait until the daemon has it (the runner checks what was read)."""
        self.pushed += 1
        index = self.pushed  # the bench's own count of this shoe's cards
        if card is None:
            what = "any card with its barcode covered (an unread card)"
        elif reads and reads[0] == self.barcode(card, FOREIGN_DECK):
            what = f"{card_text(card)} from ANOTHER deck (a foreign card)"
        else:
            what = card_text(card)
        self.prompt(f"deal {what} (shoe card {index}), then press Enter ")
        self.counts.cards_dealt += 1
        if wait:
            self.wait_card(index, timeout=120.0)
        return index

    def key(self, name: str) -> int:
        """Ask the person to press a dealer key on the shoe; wait for the daemon to get it."""
        after = self.client.last_event_id
        self.prompt(_ASK.get(name, f"press the shoe's {name} key") + ", then press Enter ")
        code = KEY_CODES[name]
        return self.client.wait_event(lambda e: e.type == "shoe_key" and int(e.data.get("key", -1)) == code,
                                      after, 120.0, f"the shoe key {name}").id

    def power_cut(self, *, then_on: bool = True) -> int | None:
        """Ask the person to cut the shoe's power and restore it."""
        after = self.client.last_event_id
        self.prompt("cut the shoe's power (pull its USB cable), plug it back in, then press Enter ")
        self.counts.power_cuts += 1
        return self.wait_reconciled(after)

    def power_on(self) -> None:
        """A real board is powered by its USB cable."""

    def unplug(self, seconds: float = 0.5) -> None:
        """Ask the person to pull the USB cable and plug it back in."""
        self.prompt("pull the shoe's USB cable, plug it back in, then press Enter ")
        self.counts.unplugs += 1

    def jam(self) -> None:
        """Ask the person to block the exit sensor until the shoe reports a jam, then clear it."""
        after = self.client.last_event_id
        self.prompt("block the shoe's exit sensor until its LED shows a jam, clear it, then press Enter ")
        self.client.wait_event(lambda e: e.type == "shoe_fault", after, 120.0, "the shoe's JAM fault")


def _default_keys() -> Path:
    from cardshoe.keys import KeyStore

    return KeyStore().dir


def run_on_real_board(scenarios: list[Scenario], port: str, workdir: Path, *, deck_id: int | None,
                      progress: Callable[[ScenarioResult, int], None], prompt: Prompt = input,
                      serial: int | None = None) -> list[ScenarioResult]:
    """Run `scenarios` on the real board on `port`, one daemon journal per scenario."""
    results = []
    for i, scenario in enumerate(scenarios, 1):
        print(f"\n== scenario {scenario.name}: {scenario.about}", flush=True)
        bench = RealBench(workdir / scenario.name, TableSpec(scenario.game, scenario.seats, scenario.dealing,
                                                            scenario.method), port, prompt=prompt, deck_id=deck_id,
                           serial=serial)
        try:
            if scenario.line is not None:
                bench.start_line(scenario.line)
            bench.start_daemon()
            bench.load_shoe()
            result = run_scenario(scenario, bench.workdir, lambda m: print(m, flush=True), bench=bench)
        except BenchError as exc:
            result = ScenarioResult(scenario.name, False, 0.0, [], [], error=str(exc))
        finally:
            bench.close()
        results.append(result)
        progress(result, i)
    return results


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use `cardshoe hil run --port PORT`")
