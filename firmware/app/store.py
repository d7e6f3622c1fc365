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
- `cNNNNNNNN.log` the card log of shoe session NNNNNNNN (hex): append-only fixed
  44-byte records, each with its own CRC-32. A power cut during an append leaves a
  short or bad last record: at boot `app.boot.open_log` keeps the records before it
  and rewrites the file without it (write-temp-then-rename), so a torn write costs only the card whose
  exit had not finished being recorded.

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

_ENOENT = const(2)
# Records the flash refused, kept in RAM and written before the next one, so that the log
# never has a gap or a record out of place; more failures in a row than this and the log
# stops taking records until the next session or boot (the cards still go out from RAM).
_PEND_MAX = const(4)

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
        self._log = None  # the current session's log, open for reads and appends
        self.in_file = 0  # records in the log file (logged = in_file + pending, until one is given up)
        self._pend = take(_REC_SIZE * _PEND_MAX)
        self._pend_n = 0
        self.unlogged = 0  # records given up this session: the log takes no more
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
        caller opens the log again after (`_relog`). A MemoryError even then is not a
        storage fault and is not reported as one: it ends the main loop, and the
        watchdog restarts the board from its saved state."""
        try:
            return open(path, mode)
        except MemoryError:
            if self._log is None:
                raise
        self.close_log()
        self.lent += 1
        gc.collect()
        return open(path, mode)

    def _relog(self, had_log):
        """Open the log again if it lent its place to a file that is closed now."""
        if had_log and self._log is None:
            self._open_append()

    # -- paths ------------------------------------------------------------
    def _path(self, name):
        return self.dir + name

    def _log_name(self, shoe_no):
        return self.dir + "c%08x.log" % shoe_no

    def _ensure_dir(self):
        try:
            os.mkdir(self.dir[:-1])
        except OSError:
            pass

    def _replace(self, name, data):
        """Write `data` to `name` by write-temp-then-rename."""
        had_log = self._log is not None
        self._write(name, data)
        try:
            self._relog(had_log)  # here, not in _write: its file object is garbage only now
        except StorageError:
            pass  # `name` is written; the next append opens the log again, or reports it

    def _write(self, name, data):
        tmp = self._path(name + ".tmp")
        try:
            with self._open(tmp, "wb") as f:
                f.write(data)
            os.rename(tmp, self._path(name))
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
        self._ensure_dir()
        self._replace("state1.bin" if b[_STATE_SIZE - 8] & 1 else "state0.bin", b)  # by generation

    # -- the manifest -----------------------------------------------------
    def save_manifest(self, table, count):
        """Write the manifest table (`count` slots of _ENTRY bytes) power-safely."""
        self._ensure_dir()
        self._replace("manifest.bin", memoryview(table)[: count * _ENTRY])

    # -- a new shoe session -----------------------------------------------
    def new_session(self, shoe_no, deck_id, scheme, table, count):
        """Start shoe session `shoe_no`: manifest, then state, then an empty log.

        A power cut between the steps leaves either the old session whole or the new
        one (with the manifest of the new one, which the old one no longer needs).
        """
        old = self.shoe_no
        kept = (self.shoe_no, self.deck_id, self.scheme, self.ended, self.integ, self.integ_from)
        self.close_log()
        if scheme == 1:
            self.save_manifest(table, count)
        self.shoe_no = shoe_no
        self.deck_id = deck_id
        self.scheme = scheme
        self.ended = 0
        self.integ = 0
        self.integ_from = 0
        try:
            self.save()
        except StorageError:
            # The old session is still the one on the flash: it stays the one in RAM,
            # its log open again, so its next card is logged where it belongs.
            self.shoe_no, self.deck_id, self.scheme, self.ended, self.integ, self.integ_from = kept
            try:
                self._open_append()
            except StorageError:
                pass
            raise
        try:
            with self._open(self._log_name(shoe_no), "wb"):
                pass
            if old != shoe_no:
                self._remove(self._log_name(old))
        except OSError as e:
            raise StorageError("log") from e
        self.logged = self.in_file = self._pend_n = self.unlogged = 0
        self._open_append()

    def _remove(self, path):
        try:
            os.remove(path)
        except OSError:
            pass

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

    def unpack(self):
        """The fields of `self.rec`: kind, magic, index, shoe, card_deck, code, method, retries, flags, t_ms, raw_len."""
        return struct.unpack_from("<BBHIIBBBBIB", self.rec, 0)

    def _valid(self, expect_index):
        r = self.rec
        if r[1] != _REC_MAGIC or crc32(self._body) != struct.unpack_from("<I", r, _REC_BODY)[0]:
            return False
        index, shoe = struct.unpack_from("<HI", r, 2)
        return index == expect_index and shoe == self.shoe_no and r[0] in (2, 3) and r[20] <= _RAW_MAX

    def _open_append(self):
        """Open the session's log for appends and reads ("r+b": one file object serves
        both, so a resend from the log opens nothing). A MemoryError here is a storage
        fault: the card being dealt is kept in RAM (see append)."""
        self._ensure_dir()
        name = self._log_name(self.shoe_no)
        try:
            try:
                self._log = open(name, "r+b")
            except OSError as missing:
                if missing.errno != _ENOENT:
                    raise  # never "w+b" over a log that is there: it would empty it
                self._log = open(name, "w+b")  # no log yet: an empty one
        except (OSError, MemoryError) as e:
            self._log = None
            raise StorageError("log") from e

    def close_log(self):
        f = self._log
        self._log = None
        if f is not None:
            f.close()

    def append(self):
        """Append `self.rec` (already packed) to the log and make it durable; `logged`
        counts it whatever happens.

        Each write goes where the file's good records end (`in_file`), so a write the
        flash half took is overwritten, not appended after. When the flash refuses
        (StorageError, for the STORAGE fault) the record is kept in RAM and written
        before the next one, up to _PEND_MAX in a row; past that it is given up and the
        log takes nothing more this session: a record out of place would be read back as
        another card."""
        self.logged += 1
        if self.unlogged:
            self.unlogged += 1
            raise StorageError("log")
        try:
            if self._log is None:
                self._open_append()
            f = self._log
            f.seek(self.in_file * _REC_SIZE)
            pend = self._pend
            for i in range(self._pend_n):
                f.write(pend[i * _REC_SIZE : (i + 1) * _REC_SIZE])
            f.write(self.rec)
            f.flush()
        except (OSError, StorageError) as e:
            if self._pend_n < _PEND_MAX:
                at = self._pend_n * _REC_SIZE
                for i in range(_REC_SIZE):
                    self._pend[at + i] = self.rec[i]
                self._pend_n += 1
            else:
                self.unlogged += 1
            raise StorageError("log") from e
        self.in_file += self._pend_n + 1
        self._pend_n = 0

    def read(self, index):
        """Load record `index` (1-based) of the current log into `self.rec`; False if absent."""
        if index < 1 or index > self.logged:
            return False
        if index > self.in_file:  # still in RAM, waiting for the flash
            k = index - self.in_file - 1
            if k >= self._pend_n:
                return False  # given up
            at = k * _REC_SIZE
            for i in range(_REC_SIZE):
                self.rec[i] = self._pend[at + i]
            return self._valid(index)
        f = self._log
        try:
            if f is None:
                f = open(self._log_name(self.shoe_no), "rb")  # only when the log failed to open
            f.seek((index - 1) * _REC_SIZE)
            return f.readinto(self.rec) == _REC_SIZE and self._valid(index)
        except OSError:
            return False
        finally:
            if f is not None and f is not self._log:
                f.close()
