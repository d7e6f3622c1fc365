"""The bench rig: a virtual board, `cardshoe flash`, `cardshoe run`, the table API, faults.

`Bench` puts the whole product together the way a table would have it, from real parts:

- the shoe: `cardshoe.hil.vboard.VirtualBoard` (the real firmware in the MicroPython unix
  port behind a pseudo-terminal, littlefs flash, the sim channel for reader, exit sensor
  and keys), deployed with the real `cardshoe flash` (mpy-cross, mpremote, provisioning);
- optionally a `FaultRelay` between the board's serial device and the daemon (line noise);
- the daemon: the real `cardshoe run` in a child process, with its journal and key store
  in the bench's workdir, so it can be SIGKILLed and restarted like a crashed table PC;
- the table controller: `TableClient` on the daemon's HTTP API and event stream.

The dealer's hand is `deal()`: the card's barcode (or RFID UID) is presented to the
reader and the exit sensor fires, and the bench waits until the daemon has journaled the
card (its next expected shoe index moved on), which is the only way it knows.
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cardshoe.hil.provision import flash_command_available, provision_offline
from cardshoe.hil.relay import FaultRelay, LineFaults
from cardshoe.hil.table import BenchTimeout, Event, TableClient, wait_for
from cardshoe.hil.vboard import VirtualBoard
from cardshoe.hil.vboard.errors import VirtualBoardError
from cardshoe.protocol import make_barcode

Log = Callable[[str], None]

#: The bench's shoe serial and first deck id (any values do; these read well in hex).
DEFAULT_SERIAL = 0x00C5_0E01
DEFAULT_DECK = 0x00C0_FFEE
#: Another deck's id: its cards are foreign to the shoe (SPEC 6, rule 5.1).
FOREIGN_DECK = 0x0BAD_DECC

#: The dealer keys' codes in a KEY message (protocol/SPEC.md, KEY).
KEY_CODES = {"new_round": 1, "deal_complete": 2, "exposure": 3, "end_shoe": 4}

_BOOT_TIMEOUT = 30.0
_CARD_TIMEOUT = 60.0


class BenchError(RuntimeError):
    """The bench could not set up or drive the table (not a finding about the product)."""


# The progressive jackpot resets to this after a royal (the bench's table file, [jackpot] reset).
JACKPOT_RESET = 5_000_000


@dataclass(frozen=True)
class TableSpec:
    """The table the daemon serves."""

    game: str
    seats: int = 7
    dealing: str = "automated"
    method: str | None = None
    name: str = "bench"


@dataclass
class BenchCounts:
    """Faults the bench injected and cards it dealt (line faults are in the relay's counts)."""

    cards_dealt: int = 0
    power_cuts: int = 0
    daemon_restarts: int = 0
    unplugs: int = 0
    garbage_bursts: int = 0
    lost_in_power_cut: int = 0
    """Cards that left as the shoe's power went, before it logged them (issue 9 item 7)."""
    card_faults: dict[str, int] = field(default_factory=dict)

    def count_card_fault(self, kind: str) -> None:
        """Count one injected card fault of `kind` (foreign, duplicate, unread, ...)."""
        self.card_faults[kind] = self.card_faults.get(kind, 0) + 1


def api_socket() -> socket.socket:
    """A TCP socket bound to a free port of 127.0.0.1 (the kernel picks it), for the daemon's API.

    The bench keeps it open for as long as it runs and hands it to every `cardshoe run` it
    starts (`--listen-fd`), so the port is never free: not between the bench's choice and the
    daemon's bind (a port number handed on could be taken by any process on the machine in
    that gap: two test suites at once do), and not while a killed daemon is being restarted
    (the table page's and the bench's event streams resume on the same URL, and a connection
    made while the daemon is down waits in the socket's backlog for the next one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def cardshoe_command(*args: str) -> list[str]:
    """The argv of `cardshoe ARGS...` with this interpreter (works without the console script)."""
    return [sys.executable, "-m", "cardshoe.cli", *args]


class Bench:
    """One virtual table: board, optional fault relay, daemon, table client. See module doc."""

    def __init__(
        self,
        workdir: Path,
        table: TableSpec,
        *,
        line: LineFaults | None = None,
        seed: int = 0,
        serial: int = DEFAULT_SERIAL,
        log: Log | None = None,
        link_timing: tuple[int, int, int] = (1000, 60, 480),
        real_port: str | None = None,
        keys_dir: Path | None = None,
        extra_config: str = "",
    ) -> None:
        self.workdir = Path(workdir).resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.table = table
        self.serial = serial
        self.rng = random.Random(seed)
        self.log: Log = log or (lambda _msg: None)
        self.counts = BenchCounts()
        self.keys_dir = keys_dir if keys_dir is not None else self.workdir / "keys"
        self.journal = self.workdir / "journal.sqlite"
        self.token = secrets.token_urlsafe(24)
        self._api_sock = api_socket()
        self.api_port: int = self._api_sock.getsockname()[1]
        self.link_timing = link_timing
        self.extra_config = extra_config  # more of the table's TOML (e.g. the soak's [limits])
        self._board: VirtualBoard | None = None if real_port else VirtualBoard(self.workdir / "board")
        self.real_port = real_port
        self.relay: FaultRelay | None = None
        self._line = line
        self.daemon: subprocess.Popen[bytes] | None = None
        self._daemon_log: Any = None
        self.client = TableClient(f"http://127.0.0.1:{self.api_port}", self.token)
        self.deck_id = DEFAULT_DECK
        self.shoe_no: int | None = None
        self.boot: int | None = None
        self.flashed_with = ""
        self._last_key_ms: dict[int | None, int] = {}  # boot -> shoe time of the last key press seen
        self.pushed = 0  # cards the bench has pushed out of the current shoe (its own count)

    # --- set-up --------------------------------------------------------------------------

    @property
    def board(self) -> VirtualBoard:
        """The virtual board (BenchError on a real board, where a person does its part)."""
        if self._board is None:
            raise BenchError("this bench drives a real board: there is no virtual board")
        return self._board

    @property
    def upstream_port(self) -> Path:
        """The shoe's own serial device."""
        return Path(self.real_port) if self.real_port else self.board.tty_path

    @property
    def daemon_port(self) -> Path:
        """The serial device the daemon opens: the relay's, or the shoe's own."""
        return self.workdir / "relay-tty" if self.relay is not None else self.upstream_port

    def flash(self, *, offline: bool | None = None) -> str:
        """Deploy the firmware with `cardshoe flash` and boot it; returns what flashing said.

        Without `cardshoe flash` in this checkout (or with `offline=True`), the offline
        fallback of `cardshoe.hil.provision` is used and the output says so."""
        self.keys_dir.mkdir(mode=0o700, exist_ok=True)
        if offline is None:
            offline = os.environ.get("CARDSHOE_BENCH_FLASH") == "offline" or not flash_command_available()
        if offline:
            files = provision_offline(self.board, self.keys_dir, self.serial, self.workdir / "build")
            self.flashed_with = "offline"
            self.board.power_on()
            self.boot = self.board.sim.wait_ready(_BOOT_TIMEOUT)
            return (f"`cardshoe flash` is not in this checkout: wrote {len(files)} firmware files and the "
                    f"shoe identity straight into the virtual board's flash image instead (bench fallback)")
        self.board.power_on()
        argv = cardshoe_command("flash", "--port", str(self.board.tty_path), "--serial", str(self.serial),
                                "--keys", str(self.keys_dir))
        proc = subprocess.run(argv, capture_output=True, timeout=300, env=self._env())
        out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0:
            raise BenchError(f"cardshoe flash exited {proc.returncode}:\n{out.strip()}")
        self.flashed_with = "cardshoe flash"
        self.boot = self.board.sim.wait_ready(_BOOT_TIMEOUT)
        return out

    def adopt_image(self, image: Path, keys_dir: Path, flashed_with: str, romfs: Path | None = None) -> None:
        """Start from a copy of a board image another bench flashed (same firmware, same shoe),
        with its ROM partition when the code was deployed there."""
        if self.board.powered:
            raise BenchError("adopt_image needs a board that was never powered")
        if romfs is not None:
            if romfs.stat().st_size != self.board.romfs_size:
                raise BenchError(f"the ROM partition {romfs} does not fit this board's ({self.board.romfs_size} bytes)")
            shutil.copyfile(romfs, self.board.romfs_path)
        shutil.copyfile(image, self.board.flash.path)
        shutil.copytree(keys_dir, self.keys_dir, dirs_exist_ok=True)
        os.chmod(self.keys_dir, 0o700)
        self.flashed_with = flashed_with + " (a copy of the image it made)"
        self.power_on()

    def start_line(self, faults: LineFaults | None = None) -> None:
        """Put the fault relay between the board and the daemon (before start_daemon)."""
        if self.relay is None:
            self.relay = FaultRelay(self.upstream_port, self.workdir / "relay-tty",
                                    faults or self._line or LineFaults(), self.rng)

    def start_daemon(self, *, wait_shoe: bool = True) -> None:
        """Start `cardshoe run` against the board and wait until the shoe's HELLO is in
        (`wait_shoe`; without it, only until the API answers: an attacker on the relay may
        be holding every frame of the shoe)."""
        t = self.table
        argv = ["run", "--port", str(self.daemon_port), "--game", t.game, "--seats", str(t.seats),
                "--dealing", t.dealing, "--name", t.name, "--journal", str(self.journal),
                "--keys", str(self.keys_dir), "--listen-fd", str(self._api_sock.fileno()),
                "--config", str(self._table_file())]
        if t.method:
            argv += ["--method", t.method]
        if self._daemon_log is not None:
            self._daemon_log.close()
        self._daemon_log = open(self.workdir / "daemon.log", "ab")
        self.daemon = subprocess.Popen(cardshoe_command(*argv), stdout=self._daemon_log,
                                       stderr=subprocess.STDOUT, env=self._env(CARDSHOE_TOKEN=self.token),
                                       pass_fds=(self._api_sock.fileno(),))
        wait_for(self._daemon_answers, 60.0, "the daemon's API to answer")
        self.client.follow()
        if wait_shoe:
            wait_for(lambda: (self.client.try_status() or {}).get("shoe") == self.serial, _BOOT_TIMEOUT,
                     "the shoe's HELLO at the daemon")

    def _daemon_answers(self) -> bool:
        if self.daemon is not None and self.daemon.poll() is not None:
            raise BenchError(f"cardshoe run exited {self.daemon.returncode}; see {self.workdir / 'daemon.log'}")
        return self.client.try_status() is not None

    def _table_file(self) -> Path:
        """The table's TOML: the link timing the daemon sends as CONFIG (faster resends on the bench),
        and the progressive jackpot's reset amount, which a table taking progressive wagers has
        configured (a round with a progressive wager cannot be settled without it)."""
        heartbeat, resend, resend_max = self.link_timing
        path = self.workdir / "table.toml"
        path.write_text(f"[link]\nheartbeat_ms = {heartbeat}\nresend_ms = {resend}\nresend_max_ms = {resend_max}\n"
                        f"\n[jackpot]\nreset = {JACKPOT_RESET}\n\n{self.extra_config}", encoding="utf-8")
        return path

    def _env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env["CARDSHOE_KEYS"] = str(self.keys_dir)
        env.update(extra)
        return env

    def load_shoe(self, deck_id: int | None = None) -> int:
        """Load a barcode deck through the API (the daemon sends NEW_SHOE); returns shoe_no."""
        if deck_id is not None:
            self.deck_id = deck_id
        shoe_no = int(self.client.request("POST", "/shoe/load", {"deck_id": self.deck_id})["shoe_no"])
        wait_for(lambda: self._shoe_state().get("shoe_no") == shoe_no, _CARD_TIMEOUT,
                 f"the shoe to load shoe {shoe_no}")
        self.shoe_no = shoe_no
        self.pushed = 0
        return shoe_no

    def _shoe_state(self) -> dict[str, Any]:
        status = self.client.try_status() or {}
        shoes: dict[str, Any] = status.get("shoes") or {}
        state: dict[str, Any] = shoes.get(str(self.serial)) or {}
        return state

    def next_index(self) -> int:
        """The shoe index the daemon expects next (1 + the cards it has journaled)."""
        return int(self._shoe_state().get("next_index", 1))

    # --- the dealer ----------------------------------------------------------------------

    def barcode(self, card: int, deck_id: int | None = None) -> str:
        """The printed barcode of `card` in this shoe's deck (or another deck's)."""
        return make_barcode(self.deck_id if deck_id is None else deck_id, card)

    def deal(self, card: int | None, *, reads: list[str] | None = None, wait: bool = True) -> int:
        """A card leaves the shoe; returns its shoe index.

        `card` None with no `reads` is an unread card (the exit sensor alone). `reads`
        overrides what the reader sees before the exit (e.g. a misread then the good read,
        or another deck's barcode).
        """
        self.pushed += 1
        index = self.pushed  # the bench's own count of this shoe's cards, not the daemon's
        sim = self.board.sim
        for text in (reads if reads is not None else ([] if card is None else [self.barcode(card)])):
            sim.present_barcode(text)
        sim.exit_sensor()
        self.counts.cards_dealt += 1
        if wait:
            self.wait_card(index)
        return index

    def wait_card(self, index: int, timeout: float = _CARD_TIMEOUT) -> None:
        """Wait until the daemon has journaled shoe index `index`."""
        wait_for(lambda: self.next_index() > index, timeout, f"the daemon to journal shoe card {index}")

    def key(self, name: str) -> int:
        """A dealer key on the shoe; returns the event id the daemon gave the key.

        The event waited for is this key's (its SPEC code) and, when this boot of the shoe has
        been pressed before, one with a shoe time later than the last press seen: an event id
        taken just before the press may be stale (the follower thread can lag under load),
        and must not let an earlier press of the same key end the wait."""
        code = KEY_CODES[name]
        after = self.client.last_event_id
        since = self._last_key_ms.get(self.boot)
        self.board.sim.key(name)

        def this_press(e: Event) -> bool:
            return (e.type == "shoe_key" and int(e.data.get("key", -1)) == code
                    and (since is None or int(e.data.get("shoe_ms", -1)) > since))

        ev = self.client.wait_event(this_press, after, _CARD_TIMEOUT, f"the shoe key {name}")
        self._last_key_ms[self.boot] = int(ev.data.get("shoe_ms", 0))
        return ev.id

    # --- faults --------------------------------------------------------------------------

    def power_cut(self, *, then_on: bool = True) -> int | None:
        """Cut the shoe's power at this instant, then power it on again.

        Returns the number of cards the shoe says (in its HELLO) it had logged, once the
        daemon has every one of them (it asks for the missing ones with CARDS_FROM)."""
        after = self.client.last_event_id
        self.board.power_cut()
        self.counts.power_cuts += 1
        if not then_on:
            return None
        self.power_on()
        return self.wait_reconciled(after)

    def wait_reconciled(self, after: int) -> int:
        """After a shoe boot: wait for its HELLO (an event after `after`, of the boot the board
        itself reported on the sim channel) and for the daemon to hold every card the HELLO
        reports; returns that count.

        Matching the boot number, not just "a HELLO after `after`": under load the event
        follower may not yet have seen every earlier event when `after` is taken, and an
        earlier boot's HELLO would then end the wait too soon."""
        boot = self.boot
        hello = self.client.wait_event(
            lambda e: e.type == "shoe_hello" and (boot is None or int(e.data.get("boot", -1)) == boot),
            after, _BOOT_TIMEOUT, f"the shoe's HELLO of boot {boot} after its power-on")
        dealt = int(hello.data.get("dealt", 0))
        if int(hello.data.get("shoe_no", 0)) == (self.shoe_no or 0):
            wait_for(lambda: self.next_index() > dealt, _CARD_TIMEOUT,
                     f"the daemon to hold the {dealt} cards the shoe logged")
        return dealt

    def power_on(self) -> None:
        """Power the shoe on and wait until its firmware streams (says `ready` on the sim channel)."""
        self.board.power_on()
        self.boot = self.board.sim.wait_ready(_BOOT_TIMEOUT)

    def jam(self) -> None:
        """A card jams in the shoe's throat until the shoe reports FAULT JAM; then it is cleared."""
        after = self.client.last_event_id
        self.board.sim.jam(True)
        self.client.wait_event(lambda e: e.type == "shoe_fault", after, _CARD_TIMEOUT, "the shoe's JAM fault")
        self.board.sim.jam(False)

    def unplug(self, seconds: float = 0.5) -> None:
        """Pull the shoe's USB cable for `seconds`, then plug it back in."""
        self.board.unplug()
        self.counts.unplugs += 1
        time.sleep(seconds)
        self.board.replug()

    def garbage(self, size: int = 64) -> None:
        """A burst of line noise towards the daemon (needs the relay)."""
        if self.relay is None:
            raise BenchError("a garbage burst needs the fault relay (line faults in the scenario)")
        self.relay.garbage(bytes(self.rng.randrange(256) for _ in range(size)))
        self.counts.garbage_bursts += 1

    def new_journal(self, name: str) -> Path:
        """Stop the daemon and point the next start at a new journal `name` in the workdir (a
        new gaming day, a replaced table PC). Its entry ids, and so its event ids, start again
        at 1: the table client is made anew, so it follows the new journal's stream from its start."""
        self.stop_daemon()
        self.journal = self.workdir / name
        self.client.close()
        self.client = TableClient(f"http://127.0.0.1:{self.api_port}", self.token)
        self._last_key_ms.clear()
        return self.journal

    def kill_daemon(self) -> None:
        """SIGKILL the daemon: nothing in its memory survives (the journal does)."""
        if self.daemon is not None:
            self.daemon.send_signal(signal.SIGKILL)
            self.daemon.wait(timeout=10)
            self.daemon = None

    def restart_daemon(self) -> None:
        """Kill the daemon and start it again (the shoe keeps resending meanwhile)."""
        self.kill_daemon()
        self.counts.daemon_restarts += 1
        self.start_daemon()

    def diagnose(self) -> str:
        """What the daemon and the shoe looked like just now (for a failure's message)."""
        status = self.client.try_status() or {}
        events = [f"{e.id}:{e.type}" for e in self.client.events()[-12:]]
        board = ""
        if self._board is not None:
            board = f"; board powered={self._board.powered} plugged={self._board.plugged} boots={self._board.boots}"
            # The firmware's own last words (a traceback, a soft reboot) say why a shoe went quiet;
            # frames are binary, so only the printable tail is shown.
            tail = bytes(b for b in self._board.transcript()[-4096:] if 32 <= b < 127 or b == 10)
            text = tail.decode("ascii").strip()[-400:]
            if text:
                board += f"; board's last output {text!r}"
        return (f"daemon shoes={status.get('shoes')} link={status.get('link')} link_up={status.get('link_up')}; "
                f"last events {events}{board}; daemon log {self.workdir / 'daemon.log'}")

    # --- tear-down -----------------------------------------------------------------------

    def stop_daemon(self) -> int | None:
        """Stop the daemon cleanly (SIGTERM); returns its exit status."""
        proc = self.daemon
        if proc is None:
            return None
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait(timeout=5)
        finally:
            self.daemon = None

    def close(self) -> None:
        """Stop everything the bench started. Safe to call twice."""
        self.client.close()
        self.stop_daemon()
        self._api_sock.close()
        if self._daemon_log is not None:
            self._daemon_log.close()
            self._daemon_log = None
        if self.relay is not None:
            self.relay.close()
        if self._board is not None:
            try:
                self._board.close()
            except VirtualBoardError:
                pass

    def __enter__(self) -> Bench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Bench", "BenchCounts", "BenchError", "BenchTimeout", "DEFAULT_DECK", "DEFAULT_SERIAL",
           "FOREIGN_DECK", "TableSpec", "api_socket", "cardshoe_command"]
