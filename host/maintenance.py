"""`cardshoe maintenance`: ask a streaming shoe to stop and wait at its REPL, for `cardshoe flash`.

    cardshoe maintenance --port PORT [--keys DIR] [--timeout S]

A streaming shoe ignores Ctrl-C by design (firmware/README.md, "Boot"), so mpremote
cannot reach its REPL. This command listens on the port for the shoe's frames (HELLO,
HEARTBEAT: one comes every few seconds) to learn its serial, checks them with the shoe's
key from the key store, sends the MAINTENANCE command (SPEC section 5) under a new host
epoch (the unix time in seconds, SPEC 3.3), resends it until the shoe's REPLY, and waits
for the REPL. The shoe then stays at the REPL until it is reset or power-cycled.

Use it when no daemon holds the shoe. A daemon that holds it keeps its own epoch and
journal: ask it instead (`POST /shoe/maintenance`, a supervisor's journaled request).
The other way to the REPL is a dealer key held at power-on.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .keys import KeyStore, KeyStoreError

REPL_SIGNS = (b">>> ", b"raw REPL")
_RESEND_S = 0.5


class MaintenanceError(Exception):
    """The shoe could not be put into maintenance; the message says why and what to do."""


@dataclass(frozen=True)
class ShoeSeen:
    """What the line showed: a streaming shoe's serial and boot, or a board at its REPL."""

    serial: int | None
    boot: int = 0
    at_repl: bool = False
    foreign: int | None = None  # a shoe serial whose key the store does not have


def listen(line: Any, keys: Callable[[int], bytes | None], timeout: float) -> ShoeSeen:
    """Read the line until a shoe frame authenticates (or the REPL shows) within `timeout`.

    `line` is an open pyserial port. A board at its REPL prints its prompt on a bare
    carriage return; a streaming shoe takes the byte as line noise."""
    from cardshoe import protocol as P

    rx = P.Receiver(keys=keys)
    line.write(b"\r")
    tail = b""
    foreign: int | None = None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        data: bytes = line.read(512)
        if not data:
            continue
        tail = (tail + data)[-64:]
        if any(sign in tail for sign in REPL_SIGNS):
            return ShoeSeen(None, at_repl=True)
        for item in rx.feed(data):
            if isinstance(item, P.Frame):
                if item.type < 0x80:
                    return ShoeSeen(item.header.shoe, item.header.boot)
            elif item.header is not None and item.header.type < 0x80 and str(item.reason) == "unknown_shoe":
                foreign = item.header.shoe
    return ShoeSeen(None, foreign=foreign)


def enter_maintenance(port: str, store: KeyStore, timeout: float = 10.0,
                      log: Callable[[str], None] = print) -> int:
    """Put the shoe on `port` into maintenance; returns its serial. Raises MaintenanceError."""
    import serial as pyserial

    from cardshoe import protocol as P

    try:
        line = pyserial.serial_for_url(port, baudrate=115200, timeout=0.1)
    except (pyserial.SerialException, OSError) as exc:
        raise MaintenanceError(f"cannot open {port}: {exc}") from None
    with line:
        seen = listen(line, store.lookup, timeout)
        if seen.at_repl:
            log(f"the board on {port} is already at its REPL: flash it with `cardshoe flash --port {port}`")
            return 0
        if seen.serial is None:
            if seen.foreign is not None:
                raise MaintenanceError(f"shoe {seen.foreign} streams on {port}, but the key store {store.dir} "
                                       f"has no key for it: give --keys DIR")
            raise MaintenanceError(f"no frame from a shoe on {port} within {timeout:.0f}s and no REPL: is the board "
                                   "powered and is this its port?")
        serial = seen.serial
        key = store.lookup(serial)
        assert key is not None
        epoch = int(time.time())
        log(f"shoe {serial} (boot {seen.boot}) streams on {port}; sending MAINTENANCE")
        rx = P.Receiver(keys=lambda s: key if s == serial else None)
        wire = P.encode_frame(P.Maintenance(), key=key, shoe=serial, boot=epoch, seq=1)
        resent = P.encode_frame(P.Maintenance(), key=key, shoe=serial, boot=epoch, seq=1, flags=P.FLAG_RESENT)
        end = time.monotonic() + timeout
        next_send = 0.0
        sends = 0
        reply: P.Reply | None = None
        tail = b""
        while reply is None and time.monotonic() < end:
            if time.monotonic() >= next_send:
                line.write(resent if sends else wire)
                sends += 1
                next_send = time.monotonic() + _RESEND_S
            data = line.read(512)
            tail = (tail + data)[-200:]
            for item in rx.feed(data):
                if isinstance(item, P.Frame) and isinstance(item.message, P.Reply):
                    if (item.message.epoch, item.message.seq) == (epoch, 1):
                        reply = item.message
        if reply is None:
            raise MaintenanceError(f"shoe {serial} did not answer MAINTENANCE within {timeout:.0f}s ({sends} sends)")
        if reply.status != 0:
            why = {1: "it is in a state that does not allow it", 3: "its flash refused the state write (STORAGE)"}
            raise MaintenanceError(f"shoe {serial} refused MAINTENANCE: "
                                   f"{why.get(reply.detail, f'status {reply.status} detail {reply.detail}')}")
        end = time.monotonic() + timeout
        while not any(sign in tail for sign in REPL_SIGNS):
            if time.monotonic() >= end:
                raise MaintenanceError(f"shoe {serial} accepted MAINTENANCE but its REPL did not show within "
                                       f"{timeout:.0f}s")
            tail = (tail + line.read(512))[-200:]
    log(f"shoe {serial} is at its REPL: flash it with `cardshoe flash --port {port}` "
        "(reset or power-cycle it to stream again)")
    return serial


def main(argv: Sequence[str]) -> int:
    """`cardshoe maintenance` entry point."""
    parser = argparse.ArgumentParser(prog="cardshoe maintenance", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", required=True, help="serial port of the shoe (e.g. /dev/ttyACM0)")
    parser.add_argument("--keys", help="key store directory (default $CARDSHOE_KEYS or ~/.local/share/cardshoe/keys)")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds to wait for the shoe's frames, its REPLY, then its REPL (default 10)")
    args = parser.parse_args(list(argv))
    try:
        enter_maintenance(args.port, KeyStore(args.keys), args.timeout)
    except (MaintenanceError, KeyStoreError) as e:
        print(f"cardshoe maintenance: {e}", file=sys.stderr)
        return 1
    return 0
