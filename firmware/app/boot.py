"""Boot-only code: provisioning, the boot counter, the card log's replay, cleanup.

Everything here runs once per boot and never again, so it lives in its own module
that `app.run.boot_shoe` loads for the boot, before the rest of the shoe's code, and
then drops: its bytecode (loaded into RAM from the .mpy) goes back to the
heap before the link, the outbox and the main loop are loaded. The store
(`app/store.py`) keeps only what runs while dealing. File formats: firmware/README.md,
"Flash layout", and `app/store.py`.
"""

import os
import struct
from binascii import crc32

from micropython import const

from app.store import StorageError

_STATE_FMT = "<4sIIIBBHHHIIHHHH"  # as app/store.py, without the generation that follows
_STATE_SIZE = const(48)
_OLD_SIZE = const(44)  # state.bin of firmware 0.1.0: magic CSS1, no generation
_IDENT_FMT = "<4sI32s"
_IDENT_SIZE = const(44)
_REC_SIZE = const(44)
_SEG = const(5)  # records per log segment, as app/store.py
_ENTRY = const(12)
_F_STORAGE = const(7)
_TRIES = const(3)  # writes of the boot counter before the shoe gives up (AGCO 6.1.8)
# The card log has a bad tail the boot could not cut off: it is kept as it is and the shoe
# does not stream (appending after a bad record could bring old cards back).
_KEPT = "log kept"


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def unpack(st):
    """The fields of `st.rec`: kind, magic, index, shoe, card_deck, code, method, retries, flags, t_ms, raw_len."""
    return struct.unpack_from("<BBHIIBBBBIB", st.rec, 0)


def ident_bytes(serial, key):
    """The ident.bin contents for `serial` and `key` (tests; the host writes the same)."""
    body = struct.pack(_IDENT_FMT, b"CSI1", serial, key)
    return body + struct.pack("<I", crc32(body))


def load_ident(st):
    """Read ident.bin into `st`; True when the shoe is provisioned (serial and key)."""
    try:
        with open(st.dir + "ident.bin", "rb") as f:
            data = f.read(_IDENT_SIZE + 1)
    except OSError:
        return False
    if len(data) != _IDENT_SIZE:
        return False
    magic, serial, key = struct.unpack_from(_IDENT_FMT, data)
    if magic != b"CSI1" or crc32(memoryview(data)[:40]) != struct.unpack_from("<I", data, 40)[0]:
        return False
    st.serial = serial
    st.key = key
    return True


def load_state(st):
    """Read the newest valid state record into `st`; False (defaults kept) when there is none.

    The two records of app/store.py, and `state.bin` (firmware 0.1.0's single record,
    magic CSS1 and no generation: taken as generation 0). Read twice (choose, then load)
    rather than with a second buffer.
    """
    b = st._sbuf
    best = -1
    pick = None
    for load in (False, True):
        for name in ("state0.bin", "state1.bin", "state.bin"):
            if load and name != pick:
                continue
            try:
                with open(st.dir + name, "rb") as f:
                    n = f.readinto(b)
            except OSError:
                continue
            m = bytes(b[:4])
            if n == _STATE_SIZE and m == b"CSS2" and crc32(b[:-4]) == struct.unpack_from("<I", b, _STATE_SIZE - 4)[0]:
                g = struct.unpack_from("<I", b, _STATE_SIZE - 8)[0]
            elif n == _OLD_SIZE and m == b"CSS1" and crc32(b[:40]) == struct.unpack_from("<I", b, 40)[0]:
                g = 0
            else:
                continue
            if g > best:
                best, pick = g, name
    if pick is None:
        return False
    (
        _magic,
        st.boot,
        st.shoe_no,
        st.deck_id,
        st.scheme,
        st.ended,
        st.integ,
        st.integ_from,
        st.faults,
        st.epoch,
        st.hseq,
        st.heartbeat_ms,
        st.resend_ms,
        st.resend_max_ms,
        st.debounce_ms,
    ) = struct.unpack_from(_STATE_FMT, b)
    struct.pack_into("<I", b, _STATE_SIZE - 8, best)  # the next save's generation follows it
    return True


def count_boot(st):
    """Load the state and count this boot in flash, before any frame may be sent.

    Raises StorageError, and no frame may then be sent (AGCO 6.1.8, SPEC 3.3): when the
    counter cannot be written after `_TRIES` attempts, or when no valid state record is
    left on a shoe that has booted before (restarting the counter at 1 would reuse boot
    counters, and the host window at (0, 0) would let recorded commands in again).
    A brand-new shoe (no record, no log) starts at boot 1.
    """
    if not load_state(st):
        # Has it booted before? A state record (even a corrupt one) or a card log says so.
        try:
            names = os.listdir(st.dir[:-1])
        except OSError:
            names = ()
        for name in names:
            if name in ("state0.bin", "state1.bin", "state.bin", "log") or name.endswith(".log"):
                raise StorageError(name)  # names what shows the past boot
    st.boot += 1
    for i in range(_TRIES):
        try:
            # Into both records: neither may be left with an older boot counter, or
            # losing the other one would bring that counter back.
            st.save()
            st.save()
            return st.boot
        except StorageError:
            if i == _TRIES - 1:
                raise


def load_manifest(st, table):
    """Fill `table` from manifest.bin; returns the number of entries (0 if none)."""
    try:
        with open(st.dir + "manifest.bin", "rb") as f:
            n = f.readinto(table)
    except OSError:
        return 0
    return (n or 0) // _ENTRY


def _migrate(st):
    """Copy the single-file log of firmware 0.1 (`cNNNNNNNN.log`) into segments, then remove
    it. A cut part way leaves the old file: the next boot drops the segments and copies again."""
    old = st.dir + "c%08x.log" % st.shoe_no
    try:
        os.stat(old)
    except OSError:
        return
    drop_segments(st, -1)  # every segment: a copy a cut interrupted
    st.logged = st.in_file = st.unlogged = 0
    try:
        with open(old, "rb") as f:
            while f.readinto(st.rec) == _REC_SIZE and st._valid(st.logged + 1):
                st.append()
        st.close_log()
        os.remove(old)
    except OSError as e:
        raise StorageError("log") from e


def open_log(st, visit=None):
    """Read the current session's log segments in order, calling `visit(st)` per good
    record; open the last segment for appends. Returns the number of good records.

    A short or bad record (bad CRC, wrong index) ends the log: its segment is rewritten
    with the records before it (write-temp-then-rename) and later segments are removed.
    """
    _migrate(st)
    good = 0
    seg = 0
    while True:
        name = st._seg_name(st.shoe_no, seg)
        n = 0
        try:
            size = os.stat(name)[6]
            with open(name, "rb") as f:
                while n < _SEG and f.readinto(st.rec) == _REC_SIZE and st._valid(good + 1):
                    good += 1
                    n += 1
                    if visit is not None:
                        visit(st)
        except OSError:
            break  # no such segment: the log ends before it
        if size != n * _REC_SIZE:
            st.dropped += (size - n * _REC_SIZE + _REC_SIZE - 1) // _REC_SIZE
            try:
                _truncate(st, name, n)
            except StorageError:
                st.logged = st.in_file = good
                st.unlogged = 1  # nothing may follow a record that could not be dropped
                raise
        if n < _SEG:
            break
        seg += 1
    _drop_after(st, seg)
    st.logged = st.in_file = good
    st._open_append()
    return good


def drop_segments(st, keep):
    """Remove the log segments of every session but `keep` (-1: all) and stray temp files."""
    prefix = "%08x." % keep
    d = st.dir + "log/"
    try:
        names = os.listdir(d[:-1])
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix) or name.endswith(".tmp"):
            _remove(d + name)


def _drop_after(st, last):
    """Remove this session's segments after segment `last` (beyond the log's end)."""
    prefix = "%08x." % st.shoe_no
    d = st.dir + "log"
    try:
        names = os.listdir(d)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix) and not name.endswith(".tmp") and int(name[9:], 16) > last:
            try:
                st.dropped += (os.stat(d + "/" + name)[6] + _REC_SIZE - 1) // _REC_SIZE
            except OSError:
                pass
            _remove(d + "/" + name)


def _truncate(st, name, good):
    """Rewrite a segment with its first `good` records. If that fails, the log is left as
    it is and the boot stops (StorageError): emptying it would lose the good records, and
    appending after a torn one would make the next boot drop everything after it."""
    tmp = st.dir + "log" + "/seg.tmp"
    try:
        with open(name, "rb") as src, open(tmp, "wb") as dst:
            for _ in range(good):
                src.readinto(st.rec)
                dst.write(st.rec)
        os.rename(tmp, name)
    except (OSError, MemoryError) as e:
        _remove(tmp)
        raise StorageError(_KEPT) from e


def cleanup(st):
    """Remove logs of other sessions, the single-file logs of firmware 0.1 and stray temp
    files (after a cut mid-switch)."""
    try:
        names = os.listdir(st.dir[:-1])
    except OSError:
        return
    for name in names:
        if name.endswith(".log") or name.endswith(".tmp") or name == "state.bin":
            _remove(st.dir + name)
    drop_segments(st, st.shoe_no)


def boot(st, d):
    """Load provisioning and state into Store `st`, count this boot, rebuild Deck `d`'s counts.

    False when the shoe is not provisioned (no valid ident.bin). Raises StorageError when
    the boot cannot be counted (`count_boot`), or when the card log's bad tail cannot be cut
    off (`open_log`, StorageError "log kept"): the shoe must not stream. A card log that
    cannot be written later latches the STORAGE fault; the shoe boots and says so in HELLO.
    """
    if not load_ident(st):
        return False
    count_boot(st)
    from app import mem

    struct.pack_into("<I", mem.ctx, 0, st.boot)  # a crash from here on names this boot
    d.reset(st.shoe_no, st.deck_id, st.scheme, 0)
    if st.scheme == 1:
        d.entries = load_manifest(st, d.table)
    d.integ_from = st.integ_from

    def replay(s):
        kind, _m, index, _s, _cd, code, _me, _r, flags, _t, _rl = unpack(s)
        d.count(kind, code, flags, index)

    try:
        open_log(st, replay)
    except StorageError as e:
        if e.args[0] == _KEPT:
            raise  # firmware/README.md: the log is left alone and the shoe does not stream
        st.faults |= 1 << _F_STORAGE  # the log could not be opened: the next append retries
    d.integ |= st.integ
    if st.ended:
        d.end_shoe()
    cleanup(st)
    return True
