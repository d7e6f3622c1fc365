"""The host's commands but PING, loaded for one command and dropped after it.

NEW_SHOE (the manifest checked and staged; app/session.py, loaded after this module
is dropped, starts the session), CONFIG, TIME, CLEAR,
MAINTENANCE and CARDS_FROM (SPEC 5) arrive a few times a shoe, never per card:
`Shoe.command` imports this module for one and drops it again (app/shoe.py `_unload`),
so its code does not hold the streaming heap (firmware/README.md, "Memory"). The
functions work on the Shoe `sh` as its methods did.
"""

import struct

from micropython import const

_T_NEW_SHOE = const(0x83)
_T_CONFIG = const(0x84)
_T_TIME = const(0x85)
_T_MAINTENANCE = const(0x87)
_T_CLEAR = const(0x88)
_T_CARDS_FROM = const(0x89)

_REPLY_OK = const(0)
_REPLY_REFUSED = const(1)
_D_BAD_STATE = const(1)
_D_BAD_MANIFEST = const(2)
_D_STORAGE = const(3)

_MAINTENANCE_MAGIC = const(0x43544E4D)

_REASON_INTEGRITY = const(2)

_DECK_SIZE = const(52)
_ENTRY = const(12)  # manifest slot: code, uid_len, uid[10] (as in deck and store)
_UID_MAX = const(10)


def command(sh, mtype, p, n):
    """(status, detail) for the REPLY; for the NEW_SHOE that completes a manifest,
    (shoe_no, deck_id, scheme, count): the session to start, which `Shoe.command` does
    with app/session.py once this module is dropped (the session's files need the heap)."""
    if mtype == _T_NEW_SHOE:
        return _new_shoe(sh, p, n)
    if mtype == _T_CARDS_FROM:
        if n != 6:
            return _REPLY_REFUSED, _D_BAD_STATE
        shoe_no, index = struct.unpack_from("<IH", p, 0)
        if shoe_no != sh.deck.shoe_no or index < 1 or index > sh.store.logged + 1:
            return _REPLY_REFUSED, _D_BAD_STATE
        if index < sh.next_frame:
            sh.next_frame = index
        return _REPLY_OK, 0
    if mtype == _T_TIME:
        if n != 8:
            return _REPLY_REFUSED, _D_BAD_STATE
        sh.time_offset = struct.unpack_from("<Q", p, 0)[0] - sh.now()
        return _REPLY_OK, 0
    if mtype == _T_CONFIG:
        if n != 8:
            return _REPLY_REFUSED, _D_BAD_STATE
        hb, rs, rmax, deb = struct.unpack_from("<HHHH", p, 0)
        if not hb or not rs or rmax < rs:
            return _REPLY_REFUSED, _D_BAD_STATE
        st = sh.store
        st.heartbeat_ms, st.resend_ms, st.resend_max_ms, st.debounce_ms = hb, rs, rmax, deb
        sh.outbox.resend_ms = rs
        sh.outbox.resend_max_ms = rmax
        sh.board.set_debounce(deb)
        return (_REPLY_OK, 0) if sh._save() else (_REPLY_REFUSED, _D_STORAGE)
    if mtype == _T_CLEAR:
        if n != 4:
            return _REPLY_REFUSED, _D_BAD_STATE
        integ_mask, fault_mask = struct.unpack_from("<HH", p, 0)
        return _clear(sh, integ_mask, fault_mask)
    if mtype == _T_MAINTENANCE:
        if n != 4 or struct.unpack_from("<I", p, 0)[0] != _MAINTENANCE_MAGIC:
            return _REPLY_REFUSED, _D_BAD_STATE
        if not sh._save():
            return _REPLY_REFUSED, _D_STORAGE
        sh.maintenance = True
        return _REPLY_OK, 0
    return _REPLY_REFUSED, _D_BAD_STATE


def _clear(sh, integ_mask, fault_mask):
    d = sh.deck
    st = sh.store
    before = d.integ
    d.integ &= ~integ_mask
    st.integ = d.integ
    st.integ_from = d.dealt
    d.integ_from = d.dealt
    cleared = (st.faults | sh.transient) & fault_mask
    st.faults &= ~fault_mask
    sh.transient &= ~fault_mask
    sh.fault_dirty |= cleared
    ok = sh._save()
    # A condition still present is raised again at once.
    for code in range(1, 9):
        if cleared & sh.condition & (1 << code):
            sh.raise_fault(code)
    if d.integ != before:
        sh.status_reason = _REASON_INTEGRITY
    return (_REPLY_OK, 0) if ok else (_REPLY_REFUSED, _D_STORAGE)


def _new_shoe(sh, p, n):
    if n < 12:
        return _REPLY_REFUSED, _D_BAD_MANIFEST
    shoe_no, deck_id, scheme, part, parts, count = struct.unpack_from("<IIBBBB", p, 0)
    if sh.next_frame <= sh.store.logged:
        return _REPLY_REFUSED, _D_BAD_STATE  # cards of this shoe not yet framed
    if shoe_no == 0 or (shoe_no == sh.deck.shoe_no and sh.deck.dealt):
        return _REPLY_REFUSED, _D_BAD_STATE
    hdr = sh._stage_hdr
    if scheme == 2:
        if parts != 1 or part != 0 or count != 0 or n != 12:
            return _REPLY_REFUSED, _D_BAD_MANIFEST
        return shoe_no, deck_id, scheme, 0  # started by app/session.py
    if scheme != 1 or parts == 0 or part >= parts:
        return _REPLY_REFUSED, _D_BAD_MANIFEST
    if part == 0:
        hdr[0], hdr[1], hdr[2], hdr[3] = shoe_no, deck_id, scheme, parts
        sh._stage_count = 0
        sh._stage_next = 0
    elif part != sh._stage_next or hdr[0] != shoe_no or hdr[1] != deck_id or hdr[3] != parts:
        return _REPLY_REFUSED, _D_BAD_STATE
    t = sh._stage
    o = 12
    for _ in range(count):
        if o + 2 > n:
            return _bad_manifest(sh)
        code = p[o]
        ulen = p[o + 1]
        if code >= _DECK_SIZE or ulen not in (4, 7, 10) or o + 2 + ulen > n:
            return _bad_manifest(sh)
        if sh._stage_count >= _DECK_SIZE:
            return _bad_manifest(sh)
        e = sh._stage_count * _ENTRY
        t[e] = code
        t[e + 1] = ulen
        for j in range(_UID_MAX):
            t[e + 2 + j] = p[o + 2 + j] if j < ulen else 0
        sh._stage_count += 1
        o += 2 + ulen
    if o != n:
        return _bad_manifest(sh)
    sh._stage_next = part + 1
    if part + 1 < parts:
        return _REPLY_OK, 0
    # The last part: the whole manifest must be 52 distinct codes and distinct UIDs.
    if sh._stage_count != _DECK_SIZE:
        return _bad_manifest(sh)
    seen = bytearray(7)
    for i in range(_DECK_SIZE):
        c = t[i * _ENTRY]
        if seen[c >> 3] & (1 << (c & 7)):
            return _bad_manifest(sh)
        seen[c >> 3] |= 1 << (c & 7)
        a = i * _ENTRY
        for k in range(i):
            b = k * _ENTRY
            j = 1
            while j < _ENTRY and t[a + j] == t[b + j]:
                j += 1
            if j == _ENTRY:
                return _bad_manifest(sh)
    return shoe_no, deck_id, scheme, _DECK_SIZE  # started by app/session.py


def _bad_manifest(sh):
    sh._stage_next = -1
    return _REPLY_REFUSED, _D_BAD_MANIFEST
