"""Power-safe state: the only module that writes flash.

Files under `<root>data/` (see firmware/README.md, "Flash layout"):

- `ident.bin`  provisioning, written by `cardshoe flash`: magic `CSI1`, shoe serial
  (u32), the 32-byte HMAC key, CRC-32. Never written by the firmware.
- `state0.bin`, `state1.bin`  two state records, written alternately (generation `g`
  goes to `state<g % 2>.bin`), each replaced whole by write-temp-then-rename
  (`stateN.bin.tmp`): boot counter, shoe session (shoe_no, deck_id, scheme, ended), the
  open error state (integrity bits, latched faults), the last accepted host
  `(epoch, seq)`, the link configuration and the generation; CRC-32 at the end. The boot
  takes the valid record of the highest generation and writes the new boot counter into
  both (app/boot.py), so one corrupt record never loses the boot counter; while
  streaming, one corrupt record costs at most the last save. (`state.bin`, the single
  record of firmware 0.1.0, is read once and removed.)
- `manifest.bin` the loaded deck's RFID manifest, replaced whole with the session.
- `log/NNNNNNNN.SSSS` the card log of shoe session NNNNNNNN (hex), in segment files of
  `_SEG` fixed 44-byte records each (segment SSSS holds records 5*SSSS+1 .. 5*SSSS+5),
  each record with its own CRC-32. A segment is small enough for littlefs to keep it
  inline in its directory's metadata, so appending a record (write, flush) is one
  metadata commit into pre-erased space: a block is erased only when the directory's
  metadata block fills (about one erase per 7 cards, against one erase and a copy of
  the block per card for one growing file: firmware/README.md, "Flash wear"). A commit
  is atomic; a short or bad record (a bit gone bad) is dropped at boot with what
  follows it (`app.boot.open_log`).

Nothing is ever rewritten in place. What only the boot reads (ident.bin, the state,
the manifest, the log's replay) is in `app/boot.py`, dropped after the boot.
"""

import gc
import os
import struct
from binascii import crc32

from micropython import const

from app.mem import take

_STATE_FMT = "<4sIIIBBHHHIIHHHHI"  # ... debounce_ms, gen
_STATE_SIZE = const(48)  # struct.calcsize(_STATE_FMT) + 4 (CRC)
_STATE_MAGIC = b"CSS2"

# The card log record: kind (2 CARD, 3 UNREAD: the message types), magic, index,
# shoe_no, card_deck, code, method, retries, flags, t_ms, raw_len, raw; then CRC-32.
_REC_FMT = "<BBHIIBBBBIB16s3x"  # documentation: pack() writes it field by field
_REC_SIZE = const(44)
_REC_BODY = const(40)
_REC_MAGIC = const(0xC5)
_RAW_MAX = const(16)

# Records not yet in the log (the flash refused them) are kept in a RAM ring of the last
# _PEND_MAX, written in order before the next one, so the log never has a gap or a record
# out of place. When one is pushed out of the ring before it reached the flash, the log
# takes no more records this session (STORAGE stays raised): the cards still go out,
# framed from RAM and marked not durable (SPEC CARD flags bit 2).
_PEND_MAX = const(4)
_SEG = const(5)  # records per segment file: 220 bytes, inline in littlefs's metadata

_MANIFEST_MAX = const(52)
_ENTRY = const(12)  # manifest slot: code, uid_len, uid[10]


class StorageError(Exception):
    """A flash write failed (the caller raises FAULT STORAGE)."""


class Store:
    """Owns every file the firmware writes; values live in plain attributes."""

    def __init__(self, root=""):
        self.dir = root + "data/"
        # provisioning
        self.serial = 0
        self.key = None
        # state.bin fields
        self.boot = 0
        self.shoe_no = 0
        self.deck_id = 0
        self.scheme = 0
        self.ended = 0
        self.integ = 0
        self.integ_from = 0
        self.faults = 0
        self.epoch = 0
        self.hseq = 0
        self.heartbeat_ms = 2000
        self.resend_ms = 300
        self.resend_max_ms = 5000
        self.debounce_ms = 5
        # the card log
        self.logged = 0  # records in the current session's log
        self.dropped = 0  # torn records dropped at boot
        self.rec = take(_REC_SIZE)
        self.rec_mv = self.rec
        self._body = self.rec_mv[:_REC_BODY]
        self._sbuf = take(_STATE_SIZE)
        self._log = None  # the log's segment that takes the next record, open for reads and appends
        self._seg = -1  # which segment `_log` is
        self._log_no = 0  # and of which session
        self.in_file = 0  # records in the log (durable); in_file + 1 .. logged are in RAM
        self._pend = take(_REC_SIZE * _PEND_MAX)  # ring: record i at slot (i - 1) % _PEND_MAX
        self.unlogged = 0  # records that never reached the flash this session (> 0: the log takes no more)
        self.lent = 0  # files opened in the card log's place (see _open)

    # -- memory for files ---------------------------------------------------
    def _open(self, path, mode):
        """`open()`, or, when the heap has no hole for a littlefs file, open it in the
        card log's place.

        Every open littlefs file is one block of the heap, the object and its cache
        (about 1.1 KB with a Pico's mount, 4 x progsize 256). A live heap can be so
        fragmented that no hole that size is left even after a collection, and a state
        save that cannot open its file would halt the shoe. The log's own file object is
        such a block: closed and collected, it leaves a hole that fits (first fit); the
        caller opens the log again after (`_replace`). A MemoryError even then is not a
        storage fault and is not reported as one: it ends the main loop, and the
        watchdog restarts the board from its saved state."""
        try:
            return open(path, mode)
        except MemoryError:
            pass
        if self._log is not None:
            self.close_log()
            self.lent += 1
        gc.collect()  # with no log to lend, a file closed just before may still free its block
        return open(path, mode)

    # -- paths ------------------------------------------------------------
    def _seg_name(self, shoe_no, seg):
        return "%slog/%08x.%04x" % (self.dir, shoe_no, seg)

    def _replace(self, name, data):
        """Write `data` to `name` by write-temp-then-rename."""
        had_log = self._log is not None
        self._write(name, data)
        # The log again if it lent its place to the file (`_open`): here, not in _write, as
        # that file object is garbage only now.
        if had_log and self._log is None:
            try:
                self._open_append(self._log_no)
            except StorageError:
                pass  # `name` is written; the next append opens the log again, or reports it

    def _write(self, name, data):
        tmp = self.dir + name + ".tmp"
        try:
            with self._open(tmp, "wb") as f:
                f.write(data)
            os.rename(tmp, self.dir + name)
        except OSError as e:
            raise StorageError(name) from e

    # -- the state records (read at boot by app/boot.py) ---------------------------
    def save(self):
        """Write the next state record power-safely, the older of the two (raises StorageError).

        One file per save, as with a single record: on a 64 KB heap every file opened
        needs a 304-byte hole, and the boot alone writes both (app/boot.py)."""
        b = self._sbuf  # holds the last record read or written: its generation + 1 is next
        struct.pack_into(
            _STATE_FMT,
            b,
            0,
            _STATE_MAGIC,
            self.boot,
            self.shoe_no,
            self.deck_id,
            self.scheme,
            self.ended,
            self.integ,
            self.integ_from,
            self.faults,
            self.epoch,
            self.hseq,
            self.heartbeat_ms,
            self.resend_ms,
            self.resend_max_ms,
            self.debounce_ms,
            struct.unpack_from("<I", b, _STATE_SIZE - 8)[0] + 1,
        )
        struct.pack_into("<I", b, _STATE_SIZE - 4, crc32(b[:-4]))
        try:
            os.mkdir(self.dir[:-1])  # data/, on a flash where nothing was saved yet
        except OSError:
            pass
        self._replace("state1.bin" if b[_STATE_SIZE - 8] & 1 else "state0.bin", b)  # by generation

    # -- the card log -----------------------------------------------------
    def pack(self, kind, index, card_deck, code, method, retries, flags, t_ms, raw, raw_len):
        """Fill `self.rec` with one record (raw is a buffer of at least raw_len bytes)."""
        r = self.rec
        struct.pack_into(
            "<BBHIIBBBBIB",
            r,
            0,
            kind,
            _REC_MAGIC,
            index,
            self.shoe_no,
            card_deck,
            code,
            method,
            retries,
            flags,
            t_ms & 0xFFFFFFFF,
            raw_len,
        )
        mv = self.rec_mv
        for i in range(_RAW_MAX):
            r[21 + i] = raw[i] if i < raw_len else 0
        struct.pack_into("<I", r, _REC_BODY, crc32(self._body))
        return mv

    def _valid(self, expect_index):
        r = self.rec
        if r[1] != _REC_MAGIC or crc32(self._body) != struct.unpack_from("<I", r, _REC_BODY)[0]:
            return False
        index, shoe = struct.unpack_from("<HI", r, 2)
        return index == expect_index and shoe == self.shoe_no and r[0] in (2, 3) and r[20] <= _RAW_MAX

    def _open_append(self, shoe_no=-1):
        """Open the segment that takes the next record for appends and reads ("a+b": one
        file object serves both, so dealing opens a file only once per segment; a
        segment not there yet is made, one that is there is never emptied). A
        MemoryError here is a storage fault: the card being dealt is kept in RAM.

        Every open file is one block of about 1.1 KB (a Pico's mount). Its name is made
        first, then the segment before (or a file that took the log's place) is closed
        and collected, then the file is opened: nothing allocated in between can split
        the hole it leaves, which is the hole the new one takes."""
        if shoe_no < 0:
            shoe_no = self.shoe_no
        seg = self.in_file // _SEG
        name = self._seg_name(shoe_no, seg)
        self.close_log()
        # A plain collection. It once ran at the end of a chain of 24 calls of itself that
        # wrote over the C stack first (a stale copy of the closed file's address there
        # kept its block); 24 calls deep under NEW_SHOE's own chain overflowed a Pico's
        # 8 KB stack (issue 26). Measured since, `cardshoe bench firmware` frees the same
        # heap without it (firmware/README.md, "Stack").
        gc.collect()
        try:
            try:
                self._log = open(name, "a+b")
            except OSError:
                os.mkdir(self.dir + "log")  # the first log on this flash
                self._log = open(name, "a+b")
        except (OSError, MemoryError) as e:
            self._log = None
            raise StorageError("log") from e
        self._seg = seg
        self._log_no = shoe_no

    def close_log(self):
        f = self._log
        self._log = None
        self._seg = -1
        if f is not None:
            f.close()

    def append(self):
        """Log `self.rec` (already packed) as record `logged + 1` and make it durable;
        `logged` counts it whatever happens.

        The record goes into the RAM ring first, then every record not yet in the log is
        written in order, each where it belongs (segment and offset by index), flushed one
        by one. When the flash refuses (StorageError, for the STORAGE fault) they stay in
        the ring and are written before the next one; once a record has left the ring
        unwritten, the log takes no more this session (a record after the gap would be
        read back as another card)."""
        self.logged += 1
        n = self.logged
        at = ((n - 1) % _PEND_MAX) * _REC_SIZE
        pend = self._pend
        r = self.rec
        for i in range(_REC_SIZE):
            pend[at + i] = r[i]
        if self.unlogged or n - self.in_file > _PEND_MAX:
            self.unlogged = max(1, n - self.in_file - _PEND_MAX)  # pushed out of the ring unwritten
            raise StorageError("log")
        try:
            while self.in_file < n:
                i = self.in_file + 1
                if self._log is None or self._seg != (i - 1) // _SEG:
                    self._open_append()  # no reference to the segment before may be left here
                    if self._log.seek(0, 2) > (i - 1) % _SEG * _REC_SIZE:
                        # A write the flash refused landed all the same (a commit is atomic:
                        # all of it): taken, never written twice ("a+b" appends after it).
                        self.in_file = i
                        continue
                if i == n:  # the record just packed: `rec` itself, no slice (a view per card)
                    self._log.write(r)
                else:
                    at = ((i - 1) % _PEND_MAX) * _REC_SIZE
                    self._log.write(pend[at : at + _REC_SIZE])
                self._log.flush()
                self.in_file = i
        except (OSError, StorageError) as e:
            try:
                self.close_log()  # opened afresh for the next attempt
            except OSError:
                pass
            raise StorageError("log") from e

    def read(self, index):
        """Load record `index` (1-based) of the current log into `self.rec`; False if absent."""
        if index < 1 or index > self.logged:
            return False
        if index > self.in_file:  # still in RAM, waiting for the flash
            if self.logged - index >= _PEND_MAX:
                return False  # pushed out of the ring before the flash took it
            at = ((index - 1) % _PEND_MAX) * _REC_SIZE
            for i in range(_REC_SIZE):
                self.rec[i] = self._pend[at + i]
            return self._valid(index)
        seg = (index - 1) // _SEG
        if self._seg != seg:  # an earlier segment (a resend): it takes the log's place
            try:
                self.in_file, n = seg * _SEG, self.in_file
                self._open_append()  # (a segment that is there: "a+b" never empties it)
            except StorageError:
                return False
            finally:
                self.in_file = n
        f = self._log
        try:
            f.seek(((index - 1) % _SEG) * _REC_SIZE)
            return f.readinto(self.rec) == _REC_SIZE and self._valid(index)
        except OSError:
            return False
