"""The virtual board: the MicroPython unix port on a pseudo-terminal.

THE BOARD INTERFACE (every `boards/<name>.py` defines a class `Board` with exactly
these members; `boards/pico.py` implements the same on the Raspberry Pi Pico).

Attributes (read by the app after `start()`):
    name         str   "unix" or "pico"
    readers      int   HELLO `readers` bitmask: 1 RFID (MFRC522), 2 barcode
    root         str   prefix of the flash filesystem paths ("" = the current
                       directory, which is `/` on a board); the app's state lives in
                       `root + "data/"`, the firmware files under `root`
    reset_cause  int   HELLO `reset_cause`: 0 unknown, 1 power on, 2 watchdog,
                       3 soft reset, 4 hard reset, 5 deep sleep
    ev_buf       bytearray(32)  data of the event `poll()` returned: the RFID UID
                       bytes (EV_RFID) or the barcode text as read, without CR/LF
                       (EV_BARCODE); the board owns it and reuses it
    ev_len       int   number of valid bytes in `ev_buf`
    ev_arg       int   EV_RFID/EV_BARCODE: reader retries before this read;
                       EV_KEY: key code (1 NEW_ROUND, 2 DEAL_COMPLETE, 3 EXPOSURE,
                       4 END_SHOE); EV_FAULT: fault code (SPEC section 5 FAULT:
                       1 READER, 2 JAM, 3 TAMPER, 4 SENSOR)
    ev_on        int   EV_FAULT: 1 the condition began, 0 it ended
    ev_ms        int   `time.ticks_ms()` when the event happened (for EV_EXIT the
                       time the sensor fired, taken in its interrupt)

Methods:
    start()            open the hardware; called once, before anything below
    key_held() -> bool a dealer key is held down at boot: the app returns to the
                       REPL instead of streaming (so mpremote can reflash)
    read_serial(buf) -> int   never blocks: bytes from the host into `buf`
                       (a bytearray), returns how many (0 when none)
    write_serial(mv)   write all of `mv` to the host (bounded wait)
    poll() -> int      never blocks: the next hardware event, one of EV_NONE,
                       EV_RFID, EV_BARCODE, EV_EXIT, EV_KEY, EV_FAULT (numbers in
                       `boards/__init__.py`), with the ev_* attributes set. Events
                       come in the order they happened; an exit event comes after
                       the reads of the card that left. Interrupts only queue
                       events in preallocated rings; poll() hands them out.
    wait(ms)           sleep at most `ms`, returning at once when host bytes or an
                       event are waiting (the main loop's idle: `ms` is the time to the
                       app's next timer, up to a second). The board's own periodic work
                       (a reader's presence check, debouncing, a blinking LED) is done
                       here or makes it return when due; an interrupt (the exit sensor)
                       must end the wait at once. Never allocates.
    ready(boot)        the app is streaming under boot counter `boot`
    led(mode)          status LED: 0 off, 1 on, 2 blink
    set_debounce(ms)   exit-sensor debounce time
    wdt_start(ms)      take over the watchdog main.py armed (machine.WDT), `ms`
                       capped at the chip's maximum; wdt_feed() feeds it
    close()            release the hardware and stop the watchdog (machine.WDT
                       cannot: a chip register) before returning to the REPL

This board: serial is the process's stdin/stdout (the pseudo-terminal of the
virtual board, set raw here); the reader, exit sensor, keys and fault conditions
come from the bench's sim socket `CARDSHOE_SIM` (line protocol in
INTERFACES.md, "The sim channel": `rfid HEX`, `barcode TEXT`, `exit`, `key NAME`,
`jam on|off`, `lid open|closed`, `reader ok|fail`; we answer `ready BOOT` and
`led off|on|blink`), reconnecting when the bench goes away. Flash is whatever
filesystem is mounted at the current directory (the virtual board mounts a
littlefs2 image at `/`). The watchdog is `machine.WDT` where `machine` has one (the
virtual board's launcher serves one, with a `stop()` for what a Pico does by register);
the bare unix port has none and wdt_* do nothing. Environment:
`CARDSHOE_KEY_HELD=1` means a key is held at boot; `CARDSHOE_RESET_CAUSE=N`
overrides the reset cause (default 1, power on); `CARDSHOE_ROOT` the root prefix.
"""

import os
import select
import socket
import struct
import sys
import time

from micropython import const

_EV_NONE = const(0)
_EV_RFID = const(1)
_EV_BARCODE = const(2)
_EV_EXIT = const(3)
_EV_KEY = const(4)
_EV_FAULT = const(5)

_LINE = const(96)
_RECONNECT_MS = const(250)
# Words of the sim protocol. Tuples, not dicts: this board runs in a 64 KB heap.
_KEYS = (b"new_round", b"deal_complete", b"exposure", b"end_shoe")  # key codes 1..4
_FAULTS = (b"reader", b"jam", b"lid")  # fault codes 1..3
_ON = (b"ok", b"fail", b"off", b"on", b"closed", b"open")  # odd index: the condition began
_LED = (b"led off\n", b"led on\n", b"led blink\n")


def _hexval(c):
    if 48 <= c <= 57:
        return c - 48
    c |= 0x20
    if 97 <= c <= 102:
        return c - 87
    return -1


def _find(words, w):
    for i in range(len(words)):
        if words[i] == w:
            return i
    return -1


class Board:
    name = "unix"

    def __init__(self):
        self.readers = 3
        self.root = os.getenv("CARDSHOE_ROOT") or ""
        self.reset_cause = int(os.getenv("CARDSHOE_RESET_CAUSE") or "1")
        self.ev_buf = bytearray(32)
        self.ev_len = 0
        self.ev_arg = 0
        self.ev_on = 0
        self.ev_ms = 0
        self._sim_path = os.getenv("CARDSHOE_SIM")
        self._sock = None
        self._next_try = time.ticks_ms()
        self._line = bytearray(_LINE)
        self._line_len = 0  # -1: an overlong line, dropped up to its newline
        self._rx = bytearray(128)
        self._rx_len = 0
        self._rx_pos = 0
        self._boot = None
        self._led = 0
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()  # stdin and the sim socket: wait()
        self._in_poll = select.poll()  # stdin only: read_serial()
        self._one = bytearray(1)
        self._tty_saved = None
        self._wdt = None

    # -- life cycle -------------------------------------------------------
    def start(self):
        try:
            import termios

            t = termios.tcgetattr(0)
            # Kept for close(): the control characters as one bytes object, not a list
            # of 32 one-byte objects (about 1 KB of a 64 KB heap).
            cc = t[6]
            ints = 0  # which entries are numbers (VMIN, VTIME): tcsetattr wants them so
            for i in range(len(cc)):
                if not isinstance(cc[i], bytes):
                    ints |= 1 << i
            t[6] = b"".join(c if isinstance(c, bytes) else bytes((c,)) for c in cc)
            t.append(ints)
            self._tty_saved = t
            termios.setraw(0)
        except Exception:
            self._tty_saved = None  # not a terminal (a pipe in tests)
        self._poll.register(self._in, select.POLLIN)
        self._in_poll.register(self._in, select.POLLIN)
        self._connect()

    def close(self):
        if self._wdt:
            self._wdt.stop()  # the virtual board's stand-in for the chip's register
            self._wdt = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._tty_saved is not None:
            import termios

            t = self._tty_saved
            cc = t[6]
            ints = t.pop()
            t[6] = [cc[i] if ints & (1 << i) else cc[i : i + 1] for i in range(len(cc))]
            termios.tcsetattr(0, termios.TCSANOW, t)
            self._tty_saved = None

    def key_held(self):
        return os.getenv("CARDSHOE_KEY_HELD") == "1"

    # -- serial -----------------------------------------------------------
    def read_serial(self, buf):
        # The unix port's readinto() waits to fill the whole buffer, so take the bytes
        # one at a time while the terminal has some. (ipoll: poll() makes a list a call.)
        n = 0
        one = self._one
        while n < len(buf):
            ready = False
            for _obj, ev in self._in_poll.ipoll(0):
                ready = ev & select.POLLIN
            if not ready or not self._in.readinto(one, 1):
                break
            buf[n] = one[0]
            n += 1
        return n

    def write_serial(self, mv):
        done = 0
        total = len(mv)
        while done < total:
            # the whole frame first: a slice is a new view, needed only after a short write
            n = self._out.write(mv[done:] if done else mv) or 0
            done += n
            if not n:
                time.sleep_ms(1)

    def wait(self, ms):
        # Until host bytes (stdin) or a sim line (the reader, the exit sensor, keys) arrive,
        # or `ms`; or the sim socket is due to be tried again.
        if self._rx_pos < self._rx_len:
            return
        if self._sock is None and self._sim_path:
            again = time.ticks_diff(self._next_try, time.ticks_ms())
            if again < ms:
                ms = again if again > 0 else 0
        for _ in self._poll.ipoll(ms):
            return

    # -- outputs ----------------------------------------------------------
    def ready(self, boot):
        self._boot = boot
        self._connect(False)

    def led(self, mode):
        self._led = mode
        self._sim_send(_LED[mode])

    def set_debounce(self, ms):
        pass  # the bench fires the sensor once per card: nothing to debounce

    def wdt_start(self, ms):
        import machine

        if hasattr(machine, "WDT"):  # the bare unix port has none
            self._wdt = machine.WDT(timeout=min(ms, 8388))

    def wdt_feed(self):
        if self._wdt:
            self._wdt.feed()

    # -- the sim socket ---------------------------------------------------
    def _sim_send(self, data):
        if self._sock is None:
            return
        try:
            self._sock.write(data)
        except OSError:
            self._drop()

    def _connect(self, new=True):
        """Connect to the bench's sim socket (`new`), then tell it `ready BOOT` and the LED."""
        if new:
            if not self._sim_path:
                return
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(struct.pack("H108s", socket.AF_UNIX, self._sim_path.encode()))
            except OSError:
                s.close()
                self._next_try = time.ticks_add(time.ticks_ms(), _RECONNECT_MS)
                return
            s.setblocking(False)
            self._sock = s
            self._poll.register(s, select.POLLIN)
            self._rx_len = self._rx_pos = self._line_len = 0
        if self._boot is not None:
            self._sim_send(b"ready %d\n" % self._boot)
            self._sim_send(_LED[self._led])

    def _drop(self):
        if self._sock is not None:
            try:
                self._poll.unregister(self._sock)
            except Exception:
                pass
            self._sock.close()
        self._sock = None
        self._next_try = time.ticks_add(time.ticks_ms(), _RECONNECT_MS)

    def poll(self):
        while True:
            if self._rx_pos >= self._rx_len:
                # Refill; no byte available now ends the poll.
                if self._sock is None:
                    if self._sim_path and time.ticks_diff(time.ticks_ms(), self._next_try) >= 0:
                        self._connect()
                    return _EV_NONE
                try:
                    n = self._sock.readinto(self._rx)
                except OSError as e:
                    if e.errno != 11:  # EAGAIN: nothing yet
                        self._drop()
                    return _EV_NONE
                if n is None:
                    return _EV_NONE
                if n == 0:  # the bench closed the socket
                    self._drop()
                    return _EV_NONE
                self._rx_len = n
                self._rx_pos = 0
            c = self._rx[self._rx_pos]
            self._rx_pos += 1
            n = self._line_len
            if c == 10:
                self._line_len = 0
                if n >= 0:
                    ev = self._parse(n)
                    if ev:
                        return ev
            elif n >= _LINE:
                self._line_len = -1  # overlong: dropped whole
            elif n >= 0:
                self._line[n] = c
                self._line_len = n + 1

    def _parse(self, n):
        line = self._line
        sp = 0
        while sp < n and line[sp] != 32:
            sp += 1
        word = bytes(line[:sp])
        arg = bytes(line[sp + 1 : n]).strip() if sp < n else b""
        self.ev_ms = time.ticks_ms()
        buf = self.ev_buf
        if word == b"exit":
            return _EV_EXIT
        if word == b"rfid":
            k = 0
            i = 0
            while i + 1 < len(arg) and k < len(buf):
                hi = _hexval(arg[i])
                lo = _hexval(arg[i + 1])
                if hi < 0 or lo < 0:
                    return _EV_NONE  # a garbled line from the bench, not a read
                buf[k] = (hi << 4) | lo
                k += 1
                i += 2
            if k == 0:
                return _EV_NONE
            self.ev_len = k
            self.ev_arg = 0
            return _EV_RFID
        if word == b"barcode":
            k = min(len(arg), len(buf))
            buf[:k] = arg[:k]
            self.ev_len = k
            self.ev_arg = 0
            return _EV_BARCODE
        if word == b"key":
            code = _find(_KEYS, arg) + 1
            if code:
                self.ev_arg = code
                return _EV_KEY
            return _EV_NONE
        code = _find(_FAULTS, word) + 1
        on = _find(_ON, arg)
        if code and on >= 0:
            self.ev_arg = code
            self.ev_on = on & 1
            return _EV_FAULT
        return _EV_NONE
