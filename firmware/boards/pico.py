"""The reference board: Raspberry Pi Pico (RP2040), all of its wiring in this one file.

Implements the board interface documented in ``boards/unix.py`` (class ``Board``; the
app calls only that interface and never imports ``machine``). See firmware/WIRING.md
for the wiring diagram and parts.

Pin map (GP numbers)
--------------------
==========  =====  ==========================================================
function    GP     notes
==========  =====  ==========================================================
RFID SCK    18     SPI0, MFRC522 SCK, 4 MHz, mode 0, MSB first
RFID MOSI   19     SPI0 TX -> MFRC522 MOSI (SDA/NSS is CS below)
RFID MISO   16     SPI0 RX <- MFRC522 MISO
RFID CS     17     MFRC522 SDA/NSS, active low
RFID RST    20     MFRC522 RST (NRSTPD), active low
Barcode TX  4      UART1 TX -> module RX, 9600 8N1
Barcode RX  5      UART1 RX <- module TX
Exit beam   15     IR break-beam receiver output, pull-up, low while a card blocks
Lid switch  14     pull-up, closed (to GND) when the lid is shut; open = TAMPER
Key 1       10     NEW_ROUND, to GND, pull-up
Key 2       11     DEAL_COMPLETE, to GND, pull-up
Key 3       12     EXPOSURE, to GND, pull-up
Key 4       13     END_SHOE, to GND, pull-up
Status LED  "LED"  the on-board LED (GP25 on the Pico; the Pico W routes it itself)
USB         -      the host link: sys.stdin.buffer / sys.stdout.buffer (USB CDC)
Flash       -      the Pico's built-in littlefs at "/", the app's state in /data
==========  =====  ==========================================================

Behaviour on this board
-----------------------
- ``poll()`` hands out, in this order: fault changes; barcode lines already received
  (the scanner window is before the exit beam, so those reads precede the exit); exits
  (the time is the beam's first edge, taken in the pin's hard IRQ); a fresh RFID read
  (at most every ``RFID_EVERY_MS``); dealer keys. Read errors (collision, CRC, BCC,
  framing) are counted as retries of the next good read (``ev_arg``); a reader that
  stops answering is FAULT READER (``ev_on`` 1), re-initialised every
  ``rfid_retry_ms`` until it answers (``ev_on`` 0). JAM and SENSOR come from the exit
  sensor driver, TAMPER from the lid switch.
- Barcode lines are handed out as read (up to 16 bytes, without CR/LF); the app
  validates them (``drivers.barcode.parse_barcode`` / ``app.deck``), as on the unix
  board. Lines longer than 16 bytes are dropped by the driver.
- The watchdog: main.py arms ``machine.WDT`` before anything else is loaded;
  ``wdt_start(ms)`` takes it over (``machine.WDT`` again, capped at the chip's maximum:
  8388 ms on the RP2040, 16777 on the RP2350); ``wdt_feed()`` is the only place it is
  fed, and the app calls it from its healthy main loop only. ``machine`` cannot stop
  it: ``wdt_stop()`` (and ``close()``) clears WATCHDOG CTRL.ENABLE through the atomic
  clear alias of the chip it runs on (RP2040 at 0x40058000, RP2350 at 0x400D8000; the
  RP2040's address is the RP2350's PLL_USB), so that the REPL after MAINTENANCE or a
  key held at boot is not reset. On a chip it does not know it writes nothing and
  returns False (the REPL is then reset within the timeout).
- USB writes: a Pico's USB stack blocks a write up to 500 ms per 64-byte chunk while
  the host does not read (``mphalport.h``), and RFID reads are missed meanwhile. A
  frame is written whole while the host keeps up; once a write came back short or
  slow, the board writes a byte at a time, each only when ``poll`` says the CDC has
  room, and drops the rest of a frame when it has none (the outbox resends it). So
  a host that stops reading costs at most one blocked write (500 ms), not one per frame.
- ``reset_cause`` maps ``machine.reset_cause()`` to SPEC HELLO codes (1 power on,
  2 watchdog, 3 soft, 4 hard, 5 deep sleep; 0 unknown). A soft reboot (Ctrl-D) does
  not reset the RP2040, so it reports the cause of the last real reset.
- ``wait(ms)`` sleeps until there is work (issue 26): ``select.poll`` on the USB CDC and on
  ``_Wake`` (readable while the exit sensor's hard IRQ has queued an edge: the IRQ ends the
  poll's WFE), making the board's own checks when due (the reader's presence check every
  ``RFID_EVERY_MS``, the keys, lid, jam and LED every ``SCAN_MS``, the exit debounce); a UID
  read there is held for ``poll()``. firmware/README.md, "The loop waits for work".
- ``key_held()`` (called before ``start()``) reads the keys for 500 ms: a key held
  down through boot keeps the board in the REPL for maintenance.
- Flash writes stop interrupts on the rp2 port (an erase takes tens of ms): ``start()``
  mounts the filesystem again through ``FlashWatch``, which tells the exit sensor when
  the flash is being written, so a card that passed meanwhile (both edges in one IRQ)
  is counted (drivers/exitsensor.py), and counts erases and programs.
"""

import io
import sys
import time

import machine
import select
from micropython import const

from drivers.barcode import BarcodeReader, CARD, MISREAD
from drivers.exitsensor import ExitSensor
from drivers.keys import Keys
from drivers.mfrc522 import MFRC522, ReaderError, ReaderNotFound, ReaderTimeout

# -- wiring (the pin map above) ---------------------------------------------------
SPI_ID = const(0)
SPI_BAUD = const(4_000_000)
GP_SCK = const(18)
GP_MOSI = const(19)
GP_MISO = const(16)
GP_CS = const(17)
GP_RST = const(20)
UART_ID = const(1)
UART_BAUD = const(9600)
GP_UART_TX = const(4)
GP_UART_RX = const(5)
GP_EXIT = const(15)
GP_LID = const(14)
GP_KEYS = (10, 11, 12, 13)  # NEW_ROUND, DEAL_COMPLETE, EXPOSURE, END_SHOE
LED_PIN = "LED"  # GP25 on the Pico
LED_GP_FALLBACK = const(25)

# What this build has fitted (the HELLO `readers` bitmask follows RFID and BARCODE).
RFID = True
BARCODE = True
LID_SWITCH = True

RFID_EVERY_MS = const(5)
SCAN_MS = const(20)  # keys, lid, jam timer and LED: sampled this often while the loop sleeps
RFID_CARD_TIMEOUT_MS = const(2)  # a type A card answers within ~0.1 ms
LID_DEBOUNCE_MS = const(50)
BLINK_MS = const(250)
SLOW_WRITE_MS = const(20)  # a whole-frame write that took longer met a full CDC FIFO
_WATCHDOG_CLR = const(0x3000)  # atomic clear alias of a register (both chips)
_WATCHDOG_ENABLE = const(1 << 30)  # WATCHDOG CTRL.ENABLE (both chips)


def _chip():
    """2040, 2350 or 0 (unknown) from the port's machine name ("... with RP2040")."""
    m = sys.implementation._machine
    return 2350 if "RP2350" in m else 2040 if "RP2040" in m else 0


CHIP = _chip()

_EV_NONE = const(0)
_EV_RFID = const(1)
_EV_BARCODE = const(2)
_EV_EXIT = const(3)
_EV_KEY = const(4)
_EV_FAULT = const(5)

_F_READER = const(1)
_F_JAM = const(2)
_F_TAMPER = const(3)
_F_SENSOR = const(4)

_FAULTQ = const(8)


class _Wake(io.IOBase):
    """Readable for `select.poll` while the exit sensor's IRQ has queued edges (`fired`):
    what makes wait() return at once for a card leaving (its ioctl answers MP_STREAM_POLL,
    as asyncio's ThreadSafeFlag does; the IRQ wakes the core from the poll's WFE)."""

    def __init__(self, sensor):
        self._s = sensor

    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL
            return arg & 1 if self._s.fired else 0  # POLLIN
        return -1  # nothing else (no file descriptor)


class FlashWatch:
    """The filesystem's block device (littlefs's extended protocol), wrapped: the exit
    sensor's ``flash`` is set while a block is erased or programmed (interrupts are off
    then, rp2_flash.c), and ``erases`` and ``programs`` are counted."""

    def __init__(self, bdev, sensor):
        self._b = bdev
        self._s = sensor
        self.erases = 0
        self.programs = 0

    def readblocks(self, n, buf, off=0):
        self._b.readblocks(n, buf, off)

    def writeblocks(self, n, buf, off=None):
        s = self._s
        s.flash = True
        try:
            if off is None:  # the simple protocol: erase, then program
                self.erases += 1
                self._b.writeblocks(n, buf)
            else:
                self._b.writeblocks(n, buf, off)
            self.programs += 1
        finally:
            s.flash = False

    def ioctl(self, op, arg):
        if op != 6:
            return self._b.ioctl(op, arg)
        s = self._s
        s.flash = True
        try:
            self.erases += 1
            return self._b.ioctl(op, arg)
        finally:
            s.flash = False


def watch_flash(sensor, bdev, point="/"):
    """Mount littlefs at `point` again through a FlashWatch of `bdev`; returns it.

    The new mount is made before the old one is let go, so a failure leaves the old one."""
    import vfs

    fw = FlashWatch(bdev, sensor)
    fs = vfs.VfsLfs2(fw, progsize=256)  # as the rp2 port's _boot.py mounts it
    vfs.umount(point)
    vfs.mount(fs, point)
    if point == "/":
        import os

        os.chdir("/")  # the board's paths are relative to it
    return fw


def _reset_cause():
    cause = machine.reset_cause()
    for name, code in (
        ("PWRON_RESET", 1),
        ("WDT_RESET", 2),
        ("SOFT_RESET", 3),
        ("HARD_RESET", 4),
        ("DEEPSLEEP_RESET", 5),
    ):
        if getattr(machine, name, None) == cause:
            return code
    return 0


class Board:
    name = "pico"
    # Tunables (class attributes so a build or a test can change them).
    rfid_retry_ms = 2000  # how often a failed reader is re-initialised
    jam_ms = 2000  # exit beam blocked this long: FAULT JAM

    def __init__(self, stdin=None, stdout=None):
        self.readers = (1 if RFID else 0) | (2 if BARCODE else 0)
        self.root = ""
        self.reset_cause = _reset_cause()
        self.ev_buf = bytearray(32)
        self.ev_len = 0
        self.ev_arg = 0
        self.ev_on = 0
        self.ev_ms = 0
        self._in = stdin if stdin is not None else sys.stdin.buffer
        self._out = stdout if stdout is not None else sys.stdout.buffer
        self._in_obj = stdin if stdin is not None else sys.stdin
        self._one = bytearray(1)
        self._poll = select.poll()
        self._keys = None
        self._rfid = None
        self._rfid_ok = False
        self._reader_fault = False
        self._rfid_at = 0
        self._retries = 0
        self._uid = bytearray(10)
        self._uid_held = 0  # a UID read (in wait(), or when a reader fault change was queued): handed out next
        self._scan_at = 0
        self._barcode = None
        self._uart = None
        self._spi = None
        self._sensor = None
        self._lid = None
        self._lid_open = False
        self._lid_raw = 0
        self._lid_since = 0
        self._jam = False
        self._chatter = False
        self._fq = bytearray(_FAULTQ)  # code | on << 7
        self._fq_head = 0
        self._fq_tail = 0
        self._led = None
        self._led_mode = 0
        self._led_at = 0
        self._wdt = None
        self.flash = None  # the FlashWatch of the filesystem (erase/program counts)
        self._started = False
        self._stalled = False  # the host stopped reading: write only what the CDC takes
        self._out_poll = None
        self._byte = bytearray(1)

    # -- life cycle -------------------------------------------------------
    def _make_keys(self):
        if self._keys is None:
            pins = [machine.Pin(gp, machine.Pin.IN, machine.Pin.PULL_UP) for gp in GP_KEYS]
            self._keys = Keys(pins, pressed_level=0, debounce_ms=30)
        return self._keys

    def key_held(self):
        """A dealer key held down through boot (500 ms): stay in the REPL."""
        return self._make_keys().held_at_boot(hold_ms=500) != 0

    def start(self):
        Pin = machine.Pin
        self._poll.register(self._in_obj, select.POLLIN)
        try:
            self._led = Pin(LED_PIN, Pin.OUT)
        except (TypeError, ValueError):
            self._led = Pin(LED_GP_FALLBACK, Pin.OUT)
        self._led(0)
        self._make_keys()
        self._sensor = ExitSensor(Pin(GP_EXIT, Pin.IN, Pin.PULL_UP), blocked_level=0, debounce_ms=3, jam_ms=self.jam_ms)
        self._poll.register(_Wake(self._sensor), select.POLLIN)  # the sensor's IRQ ends wait()
        if sys.platform == "rp2":
            try:
                import rp2

                self.flash = watch_flash(self._sensor, rp2.Flash())
            except (ImportError, OSError):
                pass  # the port's own mount stays: exits in a flash write may then be missed
        if LID_SWITCH:
            self._lid = Pin(GP_LID, Pin.IN, Pin.PULL_UP)
            self._lid_raw = self._lid.value()
            self._lid_since = time.ticks_ms()
            if self._lid_raw:
                self._lid_open = True
                self._fault(_F_TAMPER, 1)
        if BARCODE:
            self._uart = machine.UART(
                UART_ID,
                UART_BAUD,
                bits=8,
                parity=None,
                stop=1,
                tx=Pin(GP_UART_TX),
                rx=Pin(GP_UART_RX),
                timeout=0,
                timeout_char=0,
                rxbuf=256,
            )
            self._barcode = BarcodeReader(self._uart, timeout_ms=50)
        if RFID:
            self._spi = machine.SPI(
                SPI_ID,
                SPI_BAUD,
                polarity=0,
                phase=0,
                bits=8,
                firstbit=machine.SPI.MSB,
                sck=Pin(GP_SCK),
                mosi=Pin(GP_MOSI),
                miso=Pin(GP_MISO),
            )
            cs = Pin(GP_CS, Pin.OUT, value=1)
            rst = Pin(GP_RST, Pin.OUT, value=1)
            self._rfid = MFRC522(self._spi, cs, rst, card_timeout_ms=RFID_CARD_TIMEOUT_MS)
            self._rfid_init()
        self._started = True

    def close(self):
        self.wdt_stop()
        if self._sensor is not None and self._sensor._pin is not None:
            self._sensor._pin.irq(handler=None)
        if self._rfid is not None and self._rfid_ok:
            try:
                self._rfid.antenna(False)
            except ReaderError:
                pass
        if self._spi is not None:
            self._spi.deinit()
        if self._uart is not None:
            self._uart.deinit()
        if self._led is not None:
            self._led(0)
        try:
            self._poll.unregister(self._in_obj)
        except (OSError, ValueError, KeyError):
            pass
        self._started = False

    # -- serial (USB CDC) -------------------------------------------------
    def _serial_waiting(self):
        for _obj, ev in self._poll.ipoll(0):
            if ev & select.POLLIN:
                return True
        return False

    def read_serial(self, buf):
        n = 0
        size = len(buf)
        one = self._one
        # One byte per read: stdin's readinto blocks until its buffer is full.
        while n < size and self._serial_waiting():
            if not self._in.readinto(one):
                break
            buf[n] = one[0]
            n += 1
        return n

    def _room(self):
        p = self._out_poll
        if p is None:
            p = self._out_poll = select.poll()
            p.register(self._out, select.POLLOUT)
        for _obj, ev in p.ipoll(0):
            return ev & select.POLLOUT
        return 0

    def write_serial(self, mv):
        total = len(mv)
        if not self._stalled:
            t = time.ticks_ms()
            done = self._out.write(mv) or 0
            if done >= total and time.ticks_diff(time.ticks_ms(), t) < SLOW_WRITE_MS:
                return
            self._stalled = True  # the host is not keeping up; the outbox resends the frame
            return
        # Stalled: never a write that waits. A byte at a time while the CDC has room.
        one = self._byte
        for i in range(total):
            one[0] = mv[i]
            if not self._room() or not self._out.write(one):
                return  # the rest of the frame is dropped: the outbox resends it
        self._stalled = False  # a whole frame went out without waiting

    def _work(self):
        """Something for poll() to hand out (or to read: an edge, a UART byte)."""
        s = self._sensor
        return (self._fq_tail != self._fq_head or self._uid_held or (s is not None and (s.fired or s.pending()))
                or (self._uart is not None and self._uart.any()) or self._keys.pending())

    def _due(self, now):
        """Milliseconds until the board's own next check: the reader's presence check
        (every RFID_EVERY_MS; a failed reader at its retry time), the exit sensor's
        debounce, the keys, the lid, the jam timer and the LED sampled every SCAN_MS."""
        due = SCAN_MS - time.ticks_diff(now, self._scan_at)
        if self._rfid is not None:
            r = time.ticks_diff(self._rfid_at, now) + (RFID_EVERY_MS if self._rfid_ok else 0)
            if r < due:
                due = r
        s = self._sensor.due(now)
        return s if s < due else due

    def _check(self, now):
        """The checks poll() makes, with what they find kept for it: the LED, the lid, the
        exit sensor (edges settled into exits), the keys, and a presence check of the reader
        when due (a UID read is held for poll())."""
        self._scan_at = now
        self._blink(now)
        self._watch(now)
        self._keys.poll(now)
        if self._rfid is not None and not self._uid_held:
            self._uid_held = self._read_rfid(now)

    def wait(self, ms):
        """Sleep until there is work, at most `ms` (the app's next timer).

        What ends the sleep at once: host bytes (the USB CDC, `sys.stdin` in the poll set)
        and an exit edge: the sensor's hard IRQ sets `fired`, which `_Wake` makes readable.
        A barcode byte waits for the next wake (the UART's `any()`: at most SCAN_MS, and
        RFID_EVERY_MS on a board with a reader; the scanner's window is before the exit
        beam, so the line is in before the exit it belongs to wakes the loop). (The UART is
        not put in the poll set: an object `select.poll` cannot register leaves a hole that
        crashes its next poll, extmod/modselect.c, and a stand-in UART is no stream.) On the
        rp2 port `select.poll` looks at its objects, then waits in `mp_event_wait_ms` (WFE)
        until an interrupt or its timeout, then looks again (extmod/modselect.c): the IRQ
        ends the WFE and the poll returns, as asyncio's ThreadSafeFlag (an io.IOBase whose
        ioctl answers MP_STREAM_POLL) is woken from an IRQ. `time.sleep_ms` would not do:
        rp2's mp_hal_delay_ms sleeps the whole time whatever interrupt comes.
        The board's own checks (`_due`) are made here when they come due, without a pass of
        the app's loop: the MFRC522 has no interrupt wired (and no way to see a card but a
        REQA), so its presence check every RFID_EVERY_MS is the pace of these wakes, not of
        the loop's passes."""
        if not self._started:
            return
        now = time.ticks_ms()
        end = time.ticks_add(now, ms)
        while not self._work():
            due = self._due(now)
            if due <= 0:
                self._check(now)
                continue
            left = time.ticks_diff(end, now)
            if left <= 0:
                return
            for _obj, _ev in self._poll.ipoll(due if due < left else left):
                return
            now = time.ticks_ms()

    # -- outputs ----------------------------------------------------------
    def ready(self, boot):
        pass  # nobody to tell on this board: the HELLO already went to the host

    def led(self, mode):
        self._led_mode = mode
        if self._led is not None:
            self._led(1 if mode else 0)
            self._led_at = time.ticks_ms()

    def _blink(self, now):
        if self._led_mode == 2 and time.ticks_diff(now, self._led_at) >= BLINK_MS:
            self._led_at = now
            self._led(0 if self._led() else 1)

    def set_debounce(self, ms):
        if self._sensor is not None:
            self._sensor.set_debounce(ms)

    def wdt_start(self, ms):
        top = 16777 if CHIP == 2350 else 8388
        self._wdt = machine.WDT(timeout=ms if ms <= top else top)

    def wdt_stop(self):
        """Stop the watchdog (machine.WDT cannot): True when it is stopped."""
        if self._wdt is None:
            return True
        base = 0x40058000 if CHIP == 2040 else 0x400D8000 if CHIP == 2350 else 0
        if not base:
            return False
        machine.mem32[base + _WATCHDOG_CLR] = _WATCHDOG_ENABLE
        self._wdt = None
        return True

    def wdt_feed(self):
        if self._wdt is not None:
            self._wdt.feed()

    # -- events -----------------------------------------------------------
    def _fault_event(self, now):
        v = self._fq[self._fq_tail]
        self._fq_tail = (self._fq_tail + 1) & (_FAULTQ - 1)
        self.ev_arg = v & 0x7F
        self.ev_on = v >> 7
        self.ev_ms = now
        return _EV_FAULT

    def _fault(self, code, on):
        head = self._fq_head
        if ((head + 1) & (_FAULTQ - 1)) == self._fq_tail:
            return  # eight changes unread: the latest state is re-sent on the next change
        self._fq[head] = code | (on << 7)
        self._fq_head = (head + 1) & (_FAULTQ - 1)

    def _reader(self, ok, now):
        # The READER fault follows the reader's health; report changes only.
        self._rfid_ok = ok
        if ok == self._reader_fault:
            self._reader_fault = not ok
            self._fault(_F_READER, 0 if ok else 1)
        self._rfid_at = now if ok else time.ticks_add(now, self.rfid_retry_ms)

    def _rfid_init(self):
        try:
            self._rfid.init()
        except ReaderError:
            self._reader(False, time.ticks_ms())
            return
        self._reader(True, time.ticks_ms())

    def _read_rfid(self, now):
        if not self._rfid_ok:
            if time.ticks_diff(now, self._rfid_at) < 0:
                return 0
            self._rfid_init()
            if not self._rfid_ok:
                return 0
        elif time.ticks_diff(now, self._rfid_at) < RFID_EVERY_MS:
            return 0
        self._rfid_at = now
        try:
            n = self._rfid.read_uid(self._uid)
        except (ReaderTimeout, ReaderNotFound):
            self._reader(False, now)
            return 0
        except ReaderError:
            if self._retries < 255:
                self._retries += 1
            return 0
        return n

    def _watch(self, now):
        s = self._sensor
        s.poll(now)
        if s.jammed != self._jam:
            self._jam = s.jammed
            self._fault(_F_JAM, 1 if s.jammed else 0)
        if s.chattering != self._chatter:
            self._chatter = s.chattering
            self._fault(_F_SENSOR, 1 if s.chattering else 0)
        if self._lid is not None:
            raw = self._lid.value()
            if raw != self._lid_raw:
                self._lid_raw = raw
                self._lid_since = now
            elif (raw == 1) != self._lid_open and time.ticks_diff(now, self._lid_since) >= LID_DEBOUNCE_MS:
                self._lid_open = raw == 1
                self._fault(_F_TAMPER, 1 if self._lid_open else 0)

    def poll(self):
        if not self._started:
            return _EV_NONE
        now = time.ticks_ms()
        self._blink(now)
        self._watch(now)
        if self._fq_tail != self._fq_head:
            return self._fault_event(now)
        b = self._barcode
        if b is not None:
            ev = b.poll(now)
            if ev == CARD or ev == MISREAD and b.length:
                n = b.length
                buf = self.ev_buf
                line = b.line
                for i in range(n):
                    buf[i] = line[i]
                self.ev_len = n
                self.ev_arg = self._retries
                self._retries = 0
                self.ev_ms = now
                return _EV_BARCODE
        s = self._sensor
        if s.pending():
            self.ev_ms = s.take()
            self._retries = 0  # errors before this exit belonged to the card that left
            return _EV_EXIT
        if self._rfid is not None:
            n = self._uid_held or self._read_rfid(now)
            self._uid_held = 0
            if self._fq_tail != self._fq_head:
                # The reader just failed or recovered: report it now, and a UID read in the
                # same call at the next poll (no call of poll() from poll(): no recursion).
                self._uid_held = n
                return self._fault_event(now)
            if n:
                buf = self.ev_buf
                uid = self._uid
                for i in range(n):
                    buf[i] = uid[i]
                self.ev_len = n
                self.ev_arg = self._retries
                self._retries = 0
                self.ev_ms = now
                return _EV_RFID
        k = self._keys
        k.poll(now)
        if k.pending():
            self.ev_arg = k.take()
            self.ev_ms = k.t_ms
            return _EV_KEY
        return _EV_NONE
