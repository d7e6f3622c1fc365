"""The shoe: boot, the main loop, and the host's commands.

Boot (app/boot.py, dropped afterwards): count the boot in flash before the first
frame, rebuild the session's counts from the card log; then say HELLO. Then the loop, which never blocks
for long: host bytes in, hardware events in, frames out (faults first, then keys,
cards and deck status in the order they happened), resends and heartbeat, and the
watchdog fed only when a pass of the loop completed.

Cards are written to the flash log before they are framed, and framed from the log
when the outbox has room, so a full outbox or a power cut never drops one.
"""

import gc
import struct
import sys
import time

import wire
from micropython import const

from app.mem import ctx, take
from app.link import Link
from app.outbox import REPLY_SLOTS, Outbox
from app.store import StorageError

# The firmware version, 0.1.0 (HELLO): consts, not a global tuple the streaming heap holds.
_FW_MAJOR = const(0)
_FW_MINOR = const(1)
_FW_PATCH = const(0)

_EV_NONE = const(0)
_EV_RFID = const(1)
_EV_BARCODE = const(2)
_EV_EXIT = const(3)
_EV_KEY = const(4)
_EV_FAULT = const(5)

_T_HELLO = const(0x01)
_T_CARD = const(0x02)
_T_UNREAD = const(0x03)
_T_DECK_STATUS = const(0x04)
_T_FAULT = const(0x05)
_T_KEY = const(0x06)
_T_HEARTBEAT = const(0x07)
_T_CRASH = const(0x09)
_CRASH_SIZE = const(48)
_RESET_CRASH = const(6)  # HELLO reset_cause: the firmware reset itself after a crash (SPEC 5)

_T_NEW_SHOE = const(0x83)
_T_PING = const(0x86)
_OUT_SIZE = const(260)  # wire's OUT_SIZE: an encoded frame with both delimiters

_F_READER = const(1)
_F_JAM = const(2)
_F_TAMPER = const(3)
_F_SENSOR = const(4)
_F_LOW_MEMORY = const(5)
_F_OUTBOX_FULL = const(6)
_F_STORAGE = const(7)
_F_MANIFEST = const(8)
# Faults that clear themselves; every other one is latched in flash until CLEAR.
_TRANSIENT = const((1 << 5) | (1 << 6))

_KEY_END_SHOE = const(4)
_CF_NOT_DURABLE = const(4)  # CARD flags bit 2: framed from RAM, not in the flash log (SPEC 5)

_REPLY_OK = const(0)


_REASON_REQUEST = const(0)
_REASON_INTEGRITY = const(2)
_REASON_END = const(3)

_DECK_SIZE = const(52)
_ENTRY = const(12)  # manifest slot: code, uid_len, uid[10] (as in deck and store)
# Outbox slots cards, keys and deck status leave free: the REPLY slots, and one for FAULTs
# (app/outbox.py). Before, FAULTs and repeated REPLYs could fill the REPLY slots, and a
# daemon proving the shoe live (SPEC 3.4 item 6) found none for the REPLY to its PING.
_RESERVE = const(3)
_KEYS = const(8)
_LOW_MEM = const(4096)
_MEM_CHECK_MS = const(1000)
_EVENTS_PER_PASS = const(8)


def _unload(name):
    # A module loaded for one command, dropped with its code (app.run drops the boot's so).
    sys.modules.pop("app." + name, None)
    import app

    try:
        delattr(app, name)
    except AttributeError:
        pass
    gc.collect()


def _copy(dst, d, src, s, n):
    for i in range(n):
        dst[d + i] = src[s + i]


class Shoe:
    """The booted shoe: `store` and `deck` come from `app.boot.boot()` (see `app.run.boot_shoe`)."""

    def __init__(self, board, fw_hash, store, deck, slots=16, t0=None):
        self.board = board
        self.store = store
        self.deck = deck
        # The clock: milliseconds since the boot began (`t0`, the ticks_ms of app/run.py's
        # start, before the board's hardware is started: no event can be stamped earlier) as
        # a u32 (ticks_ms wraps much earlier on some ports). Started here, at the Shoe, an
        # exit the sensor saw during the boot went out 22 ms before 0: t_ms 4294967274.
        self._t_last = time.ticks_ms() if t0 is None else t0
        self.ms = 0
        self.fw_hash = fw_hash
        self.encoder = None
        self._out = take(_OUT_SIZE)
        self._out_n = -1
        self._out_k = None
        self.outbox = Outbox(self._emit, slots)
        self.link = Link(self.store, self.outbox, self)
        self.rx = take(64)
        self.payload = take(64)
        self._stage = take(_DECK_SIZE * _ENTRY)
        self._stage_count = 0
        self._stage_next = -1
        self._stage_hdr = [0, 0, 0, 0]  # shoe_no, deck_id, scheme, parts
        self._key_code = bytearray(_KEYS)
        self._key_at = [0] * _KEYS
        self._key_ms = [0] * _KEYS
        self._key_head = 0
        self._key_count = 0
        self.next_frame = 1  # the next card index of the log to frame
        self.status_reason = -1  # a DECK_STATUS waiting to be framed
        self.transient = 0  # OUTBOX_FULL, LOW_MEMORY
        self.condition = 0  # fault conditions the hardware reports now
        self.fault_dirty = 0  # faults whose state the host has not been told
        self.maintenance = False
        self.time_offset = 0
        self._led = -1
        self._mem_at = 0
        # Continue from what the boot read from flash.
        st = store
        self.next_frame = st.logged + 1
        self.outbox.resend_ms = st.resend_ms
        self.outbox.resend_max_ms = st.resend_max_ms
        board.set_debounce(st.debounce_ms)
        self.encoder = wire.Encoder(st.key, st.serial)
        self.link.attach(st.key, st.serial, self.encoder)

    # -- boot -------------------------------------------------------------
    # -- the clock ----------------------------------------------------------
    def now(self):
        """Milliseconds since boot (u32)."""
        t = time.ticks_ms()
        self.ms = (self.ms + time.ticks_diff(t, self._t_last)) & 0xFFFFFFFF
        self._t_last = t
        return self.ms

    def at(self, ticks):
        """The u32 time of an event stamped with `ticks` (taken shortly before now); 0 for
        one stamped before the clock's origin (never a time wrapped below 0)."""
        t = self.ms + time.ticks_diff(ticks, self._t_last)
        return t & 0xFFFFFFFF if t > 0 else 0

    def hello(self):
        d = self.deck
        p = self.payload
        struct.pack_into(
            "<BBB32sBBIIHHH",
            p,
            0,
            _FW_MAJOR,
            _FW_MINOR,
            _FW_PATCH,
            self.fw_hash,
            _RESET_CRASH if ctx[6] else self.board.reset_cause,
            self.board.readers,
            d.shoe_no,
            d.deck_id,
            d.dealt,
            d.integ,
            self.active_faults(),
        )
        self.outbox.push(_T_HELLO, p, 51)
        if ctx[6]:  # what made the last boot reset (app/crash.py), once, right after HELLO
            # The record waits in the staging table (free until a NEW_SHOE: run.boot_shoe put
            # it there): no attribute, no buffer kept for a frame sent once.
            ctx[6] = 0
            self.outbox.push(_T_CRASH, self._stage, _CRASH_SIZE)

    # -- faults -----------------------------------------------------------
    def active_faults(self):
        return self.store.faults | self.transient

    def raise_fault(self, code):
        bit = 1 << code
        if bit & _TRANSIENT:
            if self.transient & bit:
                return
            self.transient |= bit
        else:
            if self.store.faults & bit:
                return
            self.store.faults |= bit
            self._save()
        self.fault_dirty |= bit

    def clear_transient(self, code):
        bit = 1 << code
        if self.transient & bit:
            self.transient &= ~bit
            self.fault_dirty |= bit

    def _save(self):
        try:
            self.store.save()
            return True
        except StorageError:
            if not self.store.faults & (1 << _F_STORAGE):
                self.store.faults |= 1 << _F_STORAGE
                self.fault_dirty |= 1 << _F_STORAGE
            return False

    # -- hardware events --------------------------------------------------
    def on_event(self, ev):
        b = self.board
        d = self.deck
        if ev == _EV_EXIT:
            self.on_exit(self.at(b.ev_ms))
        elif ev == _EV_RFID:
            d.on_rfid(b.ev_buf, b.ev_len, b.ev_arg)
        elif ev == _EV_BARCODE:
            d.on_barcode(b.ev_buf, b.ev_len, b.ev_arg)
        elif ev == _EV_KEY:
            self.on_key(b.ev_arg, self.at(b.ev_ms))
        elif ev == _EV_FAULT:
            bit = 1 << b.ev_arg
            if b.ev_on:
                self.condition |= bit
                self.raise_fault(b.ev_arg)
            else:
                self.condition &= ~bit  # the latch stays until the host's CLEAR

    def on_exit(self, t_ms):
        """A card left the shoe: identify, log to flash, count."""
        d = self.deck
        st = self.store
        kind = d.identify()
        index = d.dealt + 1
        if not d.shoe_no:  # no shoe loaded
            self.raise_fault(_F_MANIFEST)
        st.pack(kind, index, d.card_deck, d.code, d.method, d.retries, d.flags, t_ms, d.raw, d.raw_len)
        try:
            st.append()
        except StorageError:
            # The card is framed from RAM below and its record kept for the next append
            # (store.append; records given up are counted in store.unlogged); the host
            # sees the STORAGE fault.
            self.raise_fault(_F_STORAGE)
        d.clear_read()
        if d.count(kind, d.code, d.flags, index):
            self.status_reason = _REASON_INTEGRITY

    def on_key(self, key, t_ms):
        if key == _KEY_END_SHOE:
            d = self.deck
            d.end_shoe()
            self.store.ended = 1
            self.store.integ = d.integ
            self._save()
            self.status_reason = _REASON_END
        if self._key_count >= _KEYS:
            return  # eight keys waiting behind a stalled link: the dealer presses again
        i = (self._key_head + self._key_count) % _KEYS
        self._key_code[i] = key
        self._key_at[i] = self.deck.dealt  # framed after the cards dealt before it
        self._key_ms[i] = t_ms
        self._key_count += 1

    # -- frames out -------------------------------------------------------
    def _emit(self, mtype, flags, seq, buf, off, n):
        k = self.encoder.encode(mtype, flags, self.store.boot, seq, buf, self._out, n, off)
        if k != self._out_n:  # the view is kept while frames keep their length: no garbage
            self._out_n = k
            self._out_k = self._out[:k]
        self.board.write_serial(self._out_k)

    def pump(self):
        """Frame what is waiting, in order, while the outbox has room."""
        ob = self.outbox
        d = self.deck
        st = self.store
        again = True
        while again:  # twice when OUTBOX_FULL clears: its FAULT frame goes out now (no recursion)
            again = False
            while self.fault_dirty and ob.free() > REPLY_SLOTS:
                code = 1
                while not self.fault_dirty & (1 << code):
                    code += 1
                self.fault_dirty &= ~(1 << code)
                struct.pack_into(
                    "<BBHI", self.payload, 0, code, 1 if self.active_faults() & (1 << code) else 0, 0, self.ms
                )
                ob.push(_T_FAULT, self.payload, 8)
            while ob.free() > _RESERVE:
                if self._key_count and self._key_at[self._key_head] < self.next_frame:
                    i = self._key_head
                    struct.pack_into("<BBI", self.payload, 0, self._key_code[i], 0, self._key_ms[i])
                    self._key_head = (i + 1) % _KEYS
                    self._key_count -= 1
                    ob.push(_T_KEY, self.payload, 6)
                elif self.next_frame <= st.logged:
                    if not self._frame_card(self.next_frame):
                        break
                    self.next_frame += 1
                elif self.status_reason >= 0:
                    self._frame_status(self.status_reason)
                    self.status_reason = -1
                else:
                    break
            if self.next_frame <= st.logged:
                self.raise_fault(_F_OUTBOX_FULL)
            elif self.transient & (1 << _F_OUTBOX_FULL) and ob.free() > REPLY_SLOTS:
                self.clear_transient(_F_OUTBOX_FULL)
                again = self.fault_dirty != 0
        # The LED (inline: a method costs the streaming heap more than these lines)
        if self.transient & (1 << _F_OUTBOX_FULL) or st.faults & (1 << _F_STORAGE):
            mode = 2
        elif self.active_faults() or d.integ:
            mode = 1
        else:
            mode = 0
        if mode != self._led:
            self._led = mode
            self.board.led(mode)

    def _frame_card(self, index):
        st = self.store
        r = st.rec
        if r[2] | (r[3] << 8) != index or r[1] != 0xC5:
            if not st.read(index):
                self.raise_fault(_F_STORAGE)
                if index <= st.in_file or st.logged - index < 4:  # 4: store._PEND_MAX
                    return False  # in the log or in RAM: read again on the next pass
                # Its record left the RAM ring before the flash took it (store.append): the
                # card left, its identity is gone. It goes out as UNREAD rather than never
                # (which stopped every card after it, and NEW_SHOE, for the session).
                st.pack(_T_UNREAD, index, 0, 0, 0, 0, 0, self.ms, r, 0)
        ob = self.outbox
        p = ob.buf
        o = ob.reserve_payload()
        # Log record -> payload by byte copy (layouts in store._REC_FMT and SPEC section 5),
        # one byte at a time: slices would allocate for every card.
        _copy(p, o, r, 4, 4)  # shoe_no
        _copy(p, o + 4, r, 2, 2)  # index
        if r[0] == _T_UNREAD:
            _copy(p, o + 6, r, 16, 4)  # t_ms
            ob.push_in_place(_T_UNREAD, 10)
            return True
        raw_len = r[20]
        # card_deck, code, method, retries, flags, t_ms, raw_len, then the raw bytes
        _copy(p, o + 6, r, 8, 13 + raw_len)
        if index > st.in_file:
            p[o + 13] |= _CF_NOT_DURABLE  # framed from RAM: the flash has not taken it
        ob.push_in_place(_T_CARD, 19 + raw_len)
        return True

    def _frame_status(self, reason):
        d = self.deck
        struct.pack_into(
            "<IIBHHHBBBB7s",
            self.payload,
            0,
            d.shoe_no,
            d.deck_id,
            reason,
            d.dealt,
            d.remaining,
            d.integ,
            d.duplicates,
            d.foreign,
            d.unread,
            d.missing,
            d.missing_map(),
        )
        self.outbox.push(_T_DECK_STATUS, self.payload, 26)

    # -- host commands (called by Link) -----------------------------------
    def ready(self, mtype):
        """False when command `mtype` must wait (Link does not take it; the host resends it).

        A NEW_SHOE while cards of the loaded session still wait to be framed (re-sent for
        CARDS_FROM after a reboot, or behind a full outbox) would cut them off; it waits
        until they are out (SPEC 5, NEW_SHOE). Refusing it instead left the host with a
        REFUSED it took for final: the new shoe never loaded (issue 11)."""
        return not (mtype == _T_NEW_SHOE and self.next_frame <= self.store.logged)

    def command(self, mtype, p, n):
        """Execute host command `mtype` (payload `p[:n]`); returns (status, detail).

        PING, the daemon's proof of life (SPEC 3.4 item 6), is answered here. The others
        (NEW_SHOE, CONFIG, TIME, CLEAR, MAINTENANCE, CARDS_FROM) come a few times a shoe:
        their code is in app/commands.py (and app/session.py, for a NEW_SHOE's new session),
        loaded for the command and dropped after it, so it does not hold the streaming heap
        (firmware/README.md, "Memory")."""
        if mtype == _T_PING:
            return _REPLY_OK, 0
        from app import commands

        try:
            r = commands.command(self, mtype, p, n)
        finally:
            del commands
            _unload("commands")
        if len(r) == 2:
            return r
        # A NEW_SHOE completed its manifest: the session is started with the command code
        # dropped, as the session's files each need a hole of about 1.2 KB.
        from app import session

        try:
            return session.start(self, *r)
        finally:
            del session
            _unload("session")

    # -- the loop ---------------------------------------------------------
    def step(self):
        """One pass of the main loop; returns True when something happened."""
        b = self.board
        busy = False
        n = b.read_serial(self.rx)
        if n:
            busy = True
            self.link.feed(self.rx, n)
        for _ in range(_EVENTS_PER_PASS):
            ev = b.poll()
            if ev == _EV_NONE:
                break
            busy = True
            self.on_event(ev)
        now = self.now()
        self.pump()
        ob = self.outbox
        # The heartbeat, when nothing has gone out for heartbeat_ms and nothing is held.
        if ob.count == 0 and time.ticks_diff(ob.ticks(), ob._last_tx) >= self.store.heartbeat_ms:
            struct.pack_into("<IHB", self.payload, 0, now, self.deck.dealt, ob.count)
            ob.push(_T_HEARTBEAT, self.payload, 7)
        ob.service(ob.ticks())
        if time.ticks_diff(time.ticks_ms(), self._mem_at) >= _MEM_CHECK_MS:
            self._mem_at = time.ticks_ms()
            gc.collect()  # free memory is what a collection leaves, not the garbage of the moment
            free = gc.mem_free()
            if free < _LOW_MEM:
                self.raise_fault(_F_LOW_MEMORY)
            elif free > 2 * _LOW_MEM:
                self.clear_transient(_F_LOW_MEMORY)
        return busy

    def run(self):
        """Stream until the host's MAINTENANCE; returns then (main.py goes to the REPL).

        Ctrl-C is off and the watchdog armed since main.py's first statements. A pass that
        found nothing to do sleeps until there is work: the board's `wait()` is given the
        time to the loop's next timer (a resend of what is held, the heartbeat, the memory
        check: at most _MEM_CHECK_MS), and host bytes and hardware events end it before
        (the USB line, the exit sensor's IRQ, a reader's read). Not a fixed 10 ms: idle, the
        loop runs a few passes a second, not a hundred. (Inline: a method costs the
        streaming heap more than these lines.)"""
        b = self.board
        ob = self.outbox
        ctx[4] = 1  # a crash from here on is one while streaming (app/crash.py)
        self.hello()
        b.ready(self.store.boot)
        while not self.maintenance:
            if not self.step():
                left = (ob._backoff if ob.count else self.store.heartbeat_ms) - time.ticks_diff(ob.ticks(), ob._last_tx)
                check = _MEM_CHECK_MS - time.ticks_diff(time.ticks_ms(), self._mem_at)
                if check < left:
                    left = check
                b.wait(left if left > 0 else 0)
            b.wdt_feed()  # reached only when a pass completed (at least every _MEM_CHECK_MS)
