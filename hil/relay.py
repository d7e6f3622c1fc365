"""The fault-injecting serial relay: line noise between the shoe's serial device and the daemon.

    board <workdir>/tty  <->  FaultRelay  <->  <link> (a new pty the daemon opens)

The relay opens the board's serial device as a host would and publishes a second
pseudo-terminal (a stable symlink, `link`) for the daemon. Bytes pass both ways through
`LineFaults`: each byte may be corrupted (one random bit flipped) or dropped, each frame
may be dropped whole, and the bench can inject a burst of garbage at any moment. An
attacker on the cable (`FrameAttack`) reads each frame's type from its clear header (SPEC 2)
and drops the host's frames of chosen types on their way to the shoe (every ACK and
RESEND_FROM, say), or holds the shoe's frames back and releases them when it likes. When the
board's device vanishes (unplug, power off or cut: a Pico's USB serial is the chip itself)
the relay's own device vanishes too, and comes back, as a new /dev/pts/N behind the same
symlink, when the board's does. So the daemon sees what it would see on a noisy USB cable.

Everything random comes from the `random.Random` handed in, so a seed replays a run.
"""

from __future__ import annotations

import errno
import os
import random
import select
import threading
import tty
from dataclasses import dataclass, field
from pathlib import Path

from cobs import cobs

_DELIMITER = 0
_POLL_MS = 20
_CHUNK = 4096


@dataclass(frozen=True)
class LineFaults:
    """Rates of line faults, each a probability in [0, 1].

    `corrupt`: per byte, one bit flipped. `drop_bytes`: per byte, lost. `drop_frames`: per
    frame (the bytes between two 0x00 delimiters), all of its bytes lost. `directions`:
    "both", "to_host" (shoe to daemon only) or "to_shoe".
    """

    corrupt: float = 0.0
    drop_bytes: float = 0.0
    drop_frames: float = 0.0
    directions: str = "both"

    def __post_init__(self) -> None:
        for name in ("corrupt", "drop_bytes", "drop_frames"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"line fault rate {name} must be in [0, 1], not {value}")
        if self.directions not in ("both", "to_host", "to_shoe"):
            raise ValueError(f"line fault directions must be both, to_host or to_shoe, not {self.directions!r}")

    @property
    def any(self) -> bool:
        """True when any rate is non-zero."""
        return self.corrupt > 0 or self.drop_bytes > 0 or self.drop_frames > 0


@dataclass(frozen=True)
class FrameAttack:
    """What an attacker on the cable does to whole frames (SPEC 3.6: read, drop, delay).

    `drop_to_shoe`: the message types (SPEC 5, e.g. 0x81 ACK, 0x82 RESEND_FROM) of host frames
    dropped on their way to the shoe; the type is in the frame's clear header, so no key is
    needed to choose. `hold_to_host`: the shoe's frames are held back, in order, until
    `FaultRelay.release_held` lets them go (a delay as long as the attacker likes)."""

    drop_to_shoe: frozenset[int] = frozenset()
    hold_to_host: bool = False

    @property
    def any(self) -> bool:
        """True when the attacker does anything."""
        return bool(self.drop_to_shoe) or self.hold_to_host


@dataclass
class LineCounts:
    """What the relay did to the line."""

    bytes_to_host: int = 0
    bytes_to_shoe: int = 0
    corrupted_bytes: int = 0
    dropped_bytes: int = 0
    dropped_frames: int = 0
    garbage_bursts: int = 0
    garbage_bytes: int = 0
    disconnects: int = 0
    attacker_dropped: int = 0
    """Host frames the attacker dropped by type (`FrameAttack.drop_to_shoe`)."""
    attacker_held: int = 0
    """Shoe frames the attacker held back (`FrameAttack.hold_to_host`)."""
    attacker_released: int = 0

    def to_json(self) -> dict[str, int]:
        """The counters as a plain dict."""
        return dict(self.__dict__)


@dataclass
class _Direction:
    """One direction's fault state: whether the current frame is being dropped."""

    active: bool
    dropping_frame: bool = False
    pending: bytearray = field(default_factory=bytearray)
    frame: bytearray = field(default_factory=bytearray)
    """The attacker's view: the bytes of the frame being received, until its delimiter."""


class FaultRelay:
    """Relays `upstream` (the board's serial device) to a new pty published at `link`."""

    def __init__(self, upstream: Path, link: Path, faults: LineFaults, rng: random.Random) -> None:
        self.upstream = Path(upstream)
        self.link = Path(link)
        self.faults = faults
        self.rng = rng
        self.counts = LineCounts()
        self.attack = FrameAttack()
        self._held = bytearray()
        self._lock = threading.Lock()
        self._garbage = bytearray()
        self._up_fd: int | None = None
        self._down_master: int | None = None
        self._down_device: str | None = None
        self._to_host = _Direction(active=faults.directions in ("both", "to_host"))
        self._to_shoe = _Direction(active=faults.directions in ("both", "to_shoe"))
        self._stop_r, self._stop_w = os.pipe()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="hil-fault-relay", daemon=True)
        self._thread.start()

    # --- bench operations ----------------------------------------------------------------

    def set_faults(self, faults: LineFaults) -> None:
        """Change the fault rates from now on."""
        with self._lock:
            self.faults = faults
            self._to_host.active = faults.directions in ("both", "to_host")
            self._to_shoe.active = faults.directions in ("both", "to_shoe")

    def set_attack(self, attack: FrameAttack) -> None:
        """Change what the attacker does to whole frames from now on (held frames stay held)."""
        with self._lock:
            self.attack = attack

    def release_held(self) -> int:
        """Let the shoe's held frames go to the daemon, in the order they came; returns how many."""
        with self._lock:
            count = self.counts.attacker_held - self.counts.attacker_released
            self.counts.attacker_released += count
            self._garbage += b"\x00" + self._held
            self._held.clear()
        return count

    def garbage(self, data: bytes) -> None:
        """Inject `data` towards the daemon, between whatever bytes pass now."""
        with self._lock:
            self._garbage += data
            self.counts.garbage_bursts += 1
            self.counts.garbage_bytes += len(data)

    @property
    def connected(self) -> bool:
        """True while the relay has the board's device open (and publishes its own)."""
        return self._up_fd is not None and self._down_master is not None

    def close(self) -> None:
        """Stop relaying and remove the published device. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=5)
        self._disconnect()
        os.close(self._stop_r)
        os.close(self._stop_w)

    # --- the relay thread ----------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopped:
            if self._up_fd is None:
                if not self._connect():
                    if _wait_readable(self._stop_r, _POLL_MS):
                        return
                    continue
            self._pump()

    def _connect(self) -> bool:
        try:
            fd = os.open(self.upstream, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            tty.setraw(fd)
        except OSError:
            os.close(fd)
            return False
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        device = os.ttyname(slave)
        os.close(slave)
        tmp = self.link.with_name(self.link.name + ".new")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(device, tmp)
        os.replace(tmp, self.link)
        self._up_fd, self._down_master, self._down_device = fd, master, device
        self._to_host.pending.clear()
        self._to_shoe.pending.clear()
        self._to_host.frame.clear()
        self._to_shoe.frame.clear()
        return True

    def _disconnect(self) -> None:
        if self._up_fd is not None:
            os.close(self._up_fd)
            self._up_fd = None
        if self._down_master is not None:
            try:
                if os.readlink(self.link) == self._down_device:
                    self.link.unlink()
            except OSError:
                pass
            os.close(self._down_master)
            self._down_master = None
            self._down_device = None
            self.counts.disconnects += 1

    def _pump(self) -> None:
        up, down = self._up_fd, self._down_master
        assert up is not None and down is not None
        poller = select.poll()
        poller.register(self._stop_r, select.POLLIN)
        up_mask = select.POLLIN | (select.POLLOUT if self._to_shoe.pending else 0)
        down_mask = select.POLLIN | (select.POLLOUT if (self._to_host.pending or self._garbage) else 0)
        poller.register(up, up_mask)
        poller.register(down, down_mask)
        for fd, ev in poller.poll(_POLL_MS):
            if fd == self._stop_r:
                return
            if fd == up:
                if ev & select.POLLIN or ev & (select.POLLHUP | select.POLLERR):
                    data = _read(up)
                    if data is None:  # the board's device vanished: so does ours
                        self._disconnect()
                        return
                    self.counts.bytes_to_host += len(data)
                    self._to_host.pending += self._attack(self._to_host, self._apply(self._to_host, data))
                if ev & select.POLLOUT and self._to_shoe.pending:
                    if not _write(up, self._to_shoe.pending):
                        self._disconnect()
                        return
            elif fd == down:
                if ev & select.POLLIN:
                    data = _read(down)
                    if data:
                        self.counts.bytes_to_shoe += len(data)
                        self._to_shoe.pending += self._attack(self._to_shoe, self._apply(self._to_shoe, data))
                if ev & select.POLLHUP:
                    # No daemon has our device open: what the board says is lost, as a
                    # Pico drops output while DTR is low. Wait a little rather than spin.
                    self._to_host.pending.clear()
                    if _wait_readable(self._stop_r, 5):
                        return
                elif ev & select.POLLOUT:
                    with self._lock:
                        if self._garbage:
                            self._to_host.pending += self._garbage
                            self._garbage.clear()
                    _write(down, self._to_host.pending)
        if self._garbage and self._down_master is not None:
            with self._lock:
                self._to_host.pending += self._garbage
                self._garbage.clear()

    def _apply(self, direction: _Direction, data: bytes) -> bytes:
        """`data` after this direction's faults."""
        with self._lock:
            faults = self.faults
        if not direction.active or not faults.any:
            return data
        out = bytearray()
        rng = self.rng
        for byte in data:
            if byte == _DELIMITER:
                # Delimiters always pass, so a dropped frame costs that frame only; a
                # corrupted one is noise like any other byte.
                direction.dropping_frame = faults.drop_frames > 0 and rng.random() < faults.drop_frames
                if direction.dropping_frame:
                    self.counts.dropped_frames += 1
            elif direction.dropping_frame:
                self.counts.dropped_bytes += 1
                continue
            if faults.drop_bytes > 0 and rng.random() < faults.drop_bytes:
                self.counts.dropped_bytes += 1
                continue
            if faults.corrupt > 0 and rng.random() < faults.corrupt:
                byte ^= 1 << rng.randrange(8)
                self.counts.corrupted_bytes += 1
            out.append(byte)
        return bytes(out)


    def _attack(self, direction: _Direction, data: bytes) -> bytes:
        """`data` after the attacker's dropping and holding of whole frames (`FrameAttack`).

        While the attacker is at work, each frame's bytes wait here until its closing
        delimiter, and the whole frame is then passed, dropped or held by its type."""
        with self._lock:
            attack = self.attack
        if not attack.any and not direction.frame:
            return data
        to_shoe = direction is self._to_shoe
        out = bytearray()
        for byte in data:
            if byte != _DELIMITER:
                direction.frame.append(byte)
                continue
            frame = bytes(direction.frame)
            direction.frame.clear()
            if frame and to_shoe and _frame_type(frame) in attack.drop_to_shoe:
                with self._lock:
                    self.counts.attacker_dropped += 1
            elif frame and not to_shoe and attack.hold_to_host:
                with self._lock:
                    self._held += frame + b"\x00"
                    self.counts.attacker_held += 1
            else:
                out += frame
            out.append(_DELIMITER)  # delimiters pass: a dropped frame leaves an empty one, ignored
        if not attack.any:  # the attacker stopped mid-frame: the rest passes as it comes
            out += direction.frame
            direction.frame.clear()
        return bytes(out)


def _frame_type(encoded: bytes) -> int | None:
    """The message type in the clear header of one COBS-encoded frame (None: not a frame)."""
    try:
        decoded = cobs.decode(encoded)
    except cobs.DecodeError:
        return None
    return decoded[1] if len(decoded) > 1 else None


def _read(fd: int) -> bytes | None:
    """What `fd` has now; b"" when nothing, None when the device is gone."""
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:
        return b""
    except OSError as exc:
        if exc.errno in (errno.EIO, errno.ENXIO, errno.EBADF):
            return None
        raise
    return data if data else None


def _write(fd: int, pending: bytearray) -> bool:
    """Write what `fd` takes of `pending` (removing it); False when the device is gone."""
    try:
        n = os.write(fd, pending)
    except BlockingIOError:
        return True
    except OSError:
        return False
    del pending[:n]
    return True


def _wait_readable(fd: int, timeout_ms: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_ms))
