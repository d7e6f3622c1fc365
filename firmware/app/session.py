"""A new shoe session: started for a NEW_SHOE, loaded for it and dropped after it.

`Shoe.command` loads this module once app/commands.py (which checked and staged the
manifest) is dropped: the session's files (manifest, state, the new log) each need a
hole of about 1.2 KB in the heap, which the command code would take (firmware/README.md,
"Memory"). The store's half (`new_session`) is here too: it runs for nothing else.
"""

import gc
import os

from micropython import const

from app.store import StorageError

_F_STORAGE = const(7)
_REPLY_OK = const(0)
_REPLY_REFUSED = const(1)
_D_STORAGE = const(3)
_REASON_LOADED = const(1)
_ENTRY = const(12)  # manifest slot: code, uid_len, uid[10] (as in deck and store)
_KEYS = const(8)  # app/shoe.py's key ring
_SEG = const(5)  # records per log segment (app/store.py)


def start(sh, shoe_no, deck_id, scheme, count):
    """Start the session of a completed NEW_SHOE (app/commands.py checked and staged its
    manifest in `sh._stage`); returns (status, detail) for its REPLY."""
    # The session's files need 304-byte holes each (littlefs file objects); the last
    # manifest part's garbage is collected first so that they are found.
    gc.collect()
    try:
        new_session(sh.store, shoe_no, deck_id, scheme, sh._stage, count)
    except StorageError:
        sh.raise_fault(_F_STORAGE)
        return _REPLY_REFUSED, _D_STORAGE
    d = sh.deck
    d.table, sh._stage = sh._stage, d.table
    d.reset(shoe_no, deck_id, scheme, count)
    sh._stage_next = -1
    sh.next_frame = 1
    for i in range(_KEYS):
        sh._key_at[i] = 0  # keys of the last shoe go out before the new shoe's cards
    sh.status_reason = _REASON_LOADED
    return _REPLY_OK, 0


def save_manifest(st, table, count):
    """Write the manifest table (`count` slots of _ENTRY bytes) power-safely."""
    try:
        os.mkdir(st.dir[:-1])  # data/, on a flash where nothing was saved yet
    except OSError:
        pass
    st._replace("manifest.bin", memoryview(table)[: count * _ENTRY])


def new_session(st, shoe_no, deck_id, scheme, table, count):
    """Start shoe session `shoe_no`: manifest, then state, then an empty log.

    A power cut between the steps leaves either the old session whole or the new
    one (with the manifest of the new one, which the old one no longer needs).
    """
    old = st.shoe_no
    kept = (st.shoe_no, st.deck_id, st.scheme, st.ended, st.integ, st.integ_from)
    # The old session's log stays open until the state is saved: a file that finds no
    # hole in the heap opens in its place (`_open`), and it is opened again as its own
    # session's (`_log_no`), not the new one's.
    if scheme == 1:
        save_manifest(st, table, count)
    st.shoe_no = shoe_no
    st.deck_id = deck_id
    st.scheme = scheme
    st.ended = 0
    st.integ = 0
    st.integ_from = 0
    try:
        st.save()
    except StorageError:
        # The old session is still the one on the flash: it stays the one in RAM,
        # its log open again, so its next card is logged where it belongs.
        st.shoe_no, st.deck_id, st.scheme, st.ended, st.integ, st.integ_from = kept
        if st._log is None:
            try:
                st._open_append()
            except StorageError:
                pass
        raise
    st.close_log()
    if old != shoe_no:  # the old session's segments (strays of a cut go at the next boot)
        for seg in range(st.in_file // _SEG + 1):
            _remove(st._seg_name(old, seg))
    st.logged = st.in_file = st.unlogged = 0
    try:
        st._open_append()
    except StorageError:
        # The new session is saved: it is the one on the flash, so it is started. Its
        # log opens at the first card (`append`), or that card raises STORAGE.
        pass


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass
