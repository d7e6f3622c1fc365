"""The firmware's guards of cards and state, each pinned where it lives (issue 16).

Every expectation here comes from protocol/SPEC.md or firmware/README.md, not from what
the code happens to do; each test names the mutation of the code it was shown to kill
(`scripts/mutate`, list in `scripts/mutations.toml`). All run under the real
`micropython` with the 64 KB heap of the firmware tests.
"""

from __future__ import annotations

from cardshoe import protocol as P

SHOE = """
import shoetest as T
root = T.mount(T.BlockDev(path=IMG))
T.provision(root)
shoe, board = T.new_shoe(root)
T.spin(shoe)
def acked():
    # the host acknowledges everything sent so far (SPEC 4, cumulative ACK)
    shoe.outbox.ack(shoe.outbox.next_seq - 1)
"""


def _messages(wire, stdout: str, kind: type) -> list:  # type: ignore[no-untyped-def,type-arg]
    return [f.message for batch in wire.decode(stdout) for f in batch if isinstance(f.message, kind)]


# -- app/deck.py: missing cards at the end of a barcode shoe ---------------------------------

def test_a_barcode_shoe_ended_after_50_cards_reports_the_2_missing(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    """SPEC 5 DECK_STATUS: MISSING (8) is "end of shoe with cards of the manifest never
    dealt"; `missing` counts them; `missing_map` bit i is code i not dealt. A barcode shoe
    has no RFID manifest entries: its deck is the 52 cards of its deck ID (SPEC 6).
    Kills: missing cards counted over the manifest entries only."""
    host = [wire.frame(P.NewShoe(shoe_no=12, deck_id=0xC0FFEE, scheme=2, part=0, parts=1))]
    body = SHOE + """
T.host(board)
T.spin(shoe)
for c in range(52):
    if c in (17, 40):
        continue                      # 6d and Kc never leave the shoe
    board.barcode(T.barcode_of(0xC0FFEE, c)); board.exit()
    T.spin(shoe, 2)
    acked()
board.key(4)                          # END_SHOE
for _ in range(10):
    T.spin(shoe, 2)
    acked()
"""
    stdout = mpy(body, host=host)
    ends = [s for s in _messages(wire, stdout, P.DeckStatus) if s.reason == 3]
    assert len(ends) == 1, stdout
    end = ends[0]
    assert (end.shoe_no, end.deck_id, end.dealt, end.remaining) == (12, 0xC0FFEE, 50, 2)
    assert end.missing == 2 and end.integrity & 8
    bits = end.missing_map
    assert {i for i in range(52) if bits[i // 8] & (1 << (i % 8))} == {17, 40}
    assert (end.duplicates, end.foreign, end.unread) == (0, 0, 0)
    # The error state survives a power cycle (SPEC 5 HELLO: the loaded session's integrity;
    # app/deck.py: "the counts after a power cut are those before it"): the same flash booted
    # again says MISSING in its HELLO and counts the same 2 missing cards.
    # Kills: END_SHOE not saved.
    again = mpy("""
import shoetest as T
root = T.mount(T.BlockDev(path=IMG), fresh=False)
shoe, board = T.new_shoe(root)
T.spin(shoe)
d = shoe.deck
print('COUNTS', d.dealt, d.missing, d.integ, bytes(d.missing_map()).hex())
""")
    (hello,) = _messages(wire, again, P.Hello)
    assert (hello.shoe_no, hello.dealt) == (12, 50) and hello.integrity & 8, hello
    assert f"COUNTS 50 2 {end.integrity} {bytes(end.missing_map).hex()}" in again, again


# -- app/deck.py: EXTRA is more than 52 cards, not 52 -----------------------------------------

def test_extra_is_raised_by_the_53rd_card_and_not_by_the_52nd(mpy) -> None:  # type: ignore[no-untyped-def]
    """SPEC 5: EXTRA (16) is "more than 52 cards left". Kills: EXTRA one card early."""
    out = mpy("""
from app.deck import Deck
d = Deck()
d.reset(5, 7, 2, 0)
for i in range(1, 53):
    d.count(2, i - 1, 0, i)
print('AT52', d.integ, d.dealt, d.remaining)
print('CHANGED', d.count(3, 255, 0, 53))
print('AT53', d.integ, d.dealt, d.remaining)
""")
    assert "AT52 0 52 0" in out, out
    assert "CHANGED True" in out, out
    assert "AT53 20 53 0" in out, out  # UNREAD | EXTRA



def test_the_first_good_read_of_a_card_is_the_one_kept(mpy) -> None:  # type: ignore[no-untyped-def]
    """app/deck.py: reads are held until the exit sensor fires and the first good read of the
    card is kept; a later read before the exit (the next card's tag glimpsed as this one
    slides out, or a second barcode line) does not replace it. Kills: the second read taken."""
    out = mpy("""
import shoetest as T
from app.deck import Deck
d = Deck()
d.reset(5, 7, 2, 0)
a = T.barcode_of(7, 10)
b = T.barcode_of(7, 11)
d.on_barcode(a, len(a), 0)
d.on_barcode(b, len(b), 0)
print('BARCODE', d.identify(), d.code, d.card_deck)
d.clear_read()
d.on_rfid(b'\\x04\\x01\\x02\\x03', 4, 1)
d.on_rfid(b'\\x04\\x09\\x09\\x09', 4, 0)
d.on_barcode(b, len(b), 0)
print('RFID', d.identify(), d.method, bytes(d.raw[:d.raw_len]).hex(), d.retries)
""")
    assert "BARCODE 2 10 7" in out, out
    assert "RFID 2 1 04010203 1" in out, out


# -- app/boot.py: the boot counter ------------------------------------------------------------

def test_losing_the_newest_state_record_never_brings_a_boot_counter_back(mpy) -> None:  # type: ignore[no-untyped-def]
    """SPEC 3.3: a boot counter is never reused; firmware/README.md: the boot writes the new
    counter into both records, so one corrupt record never loses it. Here the record of the
    highest generation (the last written) rots after boot 3: the next boot is 4, not 3
    again. Kills: the boot counter written into one record only."""
    out = mpy("""
import os
import struct
import shoetest as T
from app.store import Store
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B
root = T.mount(T.BlockDev(path=IMG))
T.provision(root)
def boot_once():
    st = Store(root)
    B.load_ident(st)
    return B.count_boot(st)
print('BOOTS', [boot_once() for _ in range(3)])
gens = {}
for name in ('state0.bin', 'state1.bin'):
    with open(root + 'data/' + name, 'rb') as f:
        gens[struct.unpack_from('<I', f.read(), 40)[0]] = name
with open(root + 'data/' + gens[max(gens)], 'r+b') as f:
    f.seek(5)
    f.write(b'\\xff')                   # the boot counter's bytes: the CRC no longer holds
print('NEXT', boot_once())
""")
    assert "BOOTS [1, 2, 3]" in out, out
    assert "NEXT 4" in out, out

# -- app/boot.py: a full-length bad record is cut off at boot ---------------------------------

def test_a_full_length_bad_record_is_cut_and_old_cards_never_come_back(mpy) -> None:  # type: ignore[no-untyped-def]
    """firmware/README.md "Flash layout": at boot a bad record (here a full 44 bytes with a
    bad CRC, as flash bit rot or a cut in the middle of a page leaves) is dropped with what
    follows it by rewriting the log, so a later card written at that index is the only card
    there. Kills: cutting the log only when its length is not a multiple of the record."""
    out = mpy("""
import os
import shoetest as T
from app.store import Store
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B
bd = T.BlockDev(path=IMG)
root = T.mount(bd)
LOG = root + 'data/log/00000007.0000'  # segment 0: records 1-5 (firmware/README.md)
st = Store(root)
B.count_boot(st)
C.new_session(st, 7, 7, 2, bytearray(0), 0)
raw = bytearray(16)
for i in range(1, 6):                 # cards 1..5, codes 11..15
    st.pack(2, i, 7, 10 + i, 2, 0, 0, 1000 + i, raw, 13)
    st.append()
st.close_log()
with open(LOG, 'rb') as f:
    data = bytearray(f.read())
data[2 * 44 + 9] ^= 0x01              # one bit of record 3's code: full length, bad CRC
with open(LOG, 'wb') as f:
    f.write(data)
def boot():
    s = Store(root)
    B.load_state(s)
    codes = []
    B.open_log(s, lambda r: codes.append(B.unpack(r)[5]))
    return s, codes
st2, codes = boot()
print('BOOT1', codes, st2.logged, os.stat(LOG)[6])
st2.pack(2, 3, 7, 33, 2, 0, 0, 2003, raw, 13)   # the next card after the boot: index 3
st2.append()
st2.close_log()
st3, codes = boot()
print('BOOT2', codes, st3.logged, os.stat(LOG)[6])
""")
    assert "BOOT1 [11, 12] 2 88" in out, out
    assert "BOOT2 [11, 12, 33] 3 132" in out, out



def test_a_torn_log_whose_rewrite_fails_is_kept_whole(mpy) -> None:  # type: ignore[no-untyped-def]
    """firmware/README.md: if the boot's rewrite of a torn log fails, the log is left as it is
    and the shoe does not stream (emptying it would lose its cards). Here the flash works
    but the rewrite cannot make its temporary file (its name is taken by a folder).
    Kills: the log removed when its rewrite fails."""
    out = mpy("""
import os
import shoetest as T
from app.store import Store, StorageError
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B
root = T.mount(T.BlockDev(path=IMG))
LOG = root + 'data/log/0000002a.0000'
st = Store(root)
B.count_boot(st)
C.new_session(st, 42, 7, 2, bytearray(0), 0)
raw = bytearray(16)
for i in (1, 2, 3):
    st.pack(2, i, 7, i, 2, 0, 0, 1000 + i, raw, 13)
    st.append()
st.close_log()
with open(LOG, 'ab') as f:
    f.write(b'\\x02\\xc5\\x04\\x00' + b'\\x00' * 10)   # a cut in the middle of the fourth
os.mkdir(root + 'data/log/seg.tmp')
os.mkdir(root + 'data/log/seg.tmp/x')                      # not empty: it cannot be removed either
s = Store(root)
B.load_state(s)
try:
    B.open_log(s)
    print('OPENED')
except StorageError:
    print('STOPPED')
print('SIZE', os.stat(LOG)[6])
""")
    assert "STOPPED" in out, out
    assert "SIZE 146" in out, out


def test_a_boot_that_cannot_cut_a_torn_log_stops_and_loses_no_card(mpy) -> None:  # type: ignore[no-untyped-def]
    """firmware/README.md "Flash layout": if the boot's rewrite of a torn log fails, the log is
    left alone and the shoe does not stream. The whole boot (`app.boot.boot`) stops; once
    the flash lets the rewrite through, the next boot has every card. (Found by issue 16's
    mutation pass: the boot went on with an empty card count, and the next card was written
    over card 1, so the boot after lost them all.)"""
    out = mpy("""
import os
import shoetest as T
from app.store import Store, StorageError
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B
from app.deck import Deck
root = T.mount(T.BlockDev(path=IMG))
T.provision(root)
LOG = root + 'data/log/0000002a.0000'
st = Store(root)
B.load_ident(st)
B.count_boot(st)
C.new_session(st, 42, 7, 2, bytearray(0), 0)
raw = bytearray(16)
for i in (1, 2, 3):
    st.pack(2, i, 7, 20 + i, 2, 0, 0, 1000 + i, raw, 13)
    st.append()
st.close_log()
with open(LOG, 'ab') as f:
    f.write(b'\\x02\\xc5\\x04\\x00' + b'\\x00' * 10)   # a cut in the middle of the fourth
os.mkdir(root + 'data/log/seg.tmp')
os.mkdir(root + 'data/log/seg.tmp/x')                      # the rewrite's temporary file cannot be made
try:
    B.boot(Store(root), Deck())
    print('STREAMS')
except StorageError:
    print('STOPPED', os.stat(LOG)[6])
os.remove(root + 'data/log/seg.tmp/x')
os.remove(root + 'data/log/seg.tmp')
s2 = Store(root)
d2 = Deck()
print('NEXT BOOT', B.boot(s2, d2), d2.dealt, s2.logged, [s2.read(i) and B.unpack(s2)[5] for i in (1, 2, 3)])
""")
    assert "STOPPED 146" in out, out
    assert "NEXT BOOT True 3 3 [21, 22, 23]" in out, out

# -- app/outbox.py: the boundaries of the cumulative ACK --------------------------------------

def test_ack_boundaries_of_the_ring(mpy) -> None:  # type: ignore[no-untyped-def]
    """SPEC 4: ACK(seq) is cumulative, every frame up to and including seq. An ACK of a frame
    never sent (seq >= next) or an old one frees nothing; the ring wraps without losing or
    repeating a frame. Kills: `>=` for `>` at either end of `ack`, a wrong count freed."""
    out = mpy("""
from app.outbox import Outbox
def holds(ob, mtype):  # an unacknowledged frame of type `mtype` in the ring
    return any(ob._types[(ob._head + i) % ob.size] == mtype for i in range(ob.count))
sent = []
def emit(t, flags, seq, buf, off, n):
    sent.append((seq, flags, bytes(buf[off:off + n])))
ob = Outbox(emit, slots=4, resend_ms=300, resend_max_ms=1000)
ob.ticks = lambda: 0
for i in range(1, 5):
    ob.push(2, bytes((i,)), 1)
print('FULL', ob.count, ob.free(), ob.next_seq)
print('NEXT', ob.ack(5), ob.count, ob.free())       # the next seq was never sent
print('BEYOND', ob.ack(9), ob.count)
print('ZERO', ob.ack(0), ob.count)
print('ONE', ob.ack(1), ob.count, ob.acked)
print('SAME', ob.ack(1), ob.count)                  # again: nothing more
print('OLD', ob.ack(0), ob.count)
ob.push(2, bytes((5,)), 1)                         # seq 5 wraps around the ring
print('WRAP', ob.count, ob.free())
try:
    ob.push(2, b'x', 1)
    print('PUSHED')
except OverflowError:
    print('REFUSED')
sent.clear()
ob.resend_from(1)                                   # every held frame, oldest first
print('HELD', [(s, p[0]) for s, _, p in sent])
print('LAST', ob.ack(5), ob.count, ob.free())       # exactly the last sent: all freed
print('AFTER', ob.ack(6), ob.count, holds(ob, 2))
ob.push(2, b'z', 1)
print('SEQ', sent[-1][0], ob.count)
""")
    assert "FULL 4 0 5" in out, out
    assert "NEXT 0 4 0" in out, out
    assert "BEYOND 0 4" in out, out
    assert "ZERO 0 4" in out, out
    assert "ONE 1 3 1" in out, out
    assert "SAME 0 3" in out, out
    assert "OLD 0 3" in out, out
    assert "WRAP 4 0" in out and "REFUSED" in out, out
    assert "HELD [(2, 2), (3, 3), (4, 4), (5, 5)]" in out, out
    assert "LAST 4 0 4" in out, out  # 2, 3, 4 and 5
    assert "AFTER 0 0 False" in out, out
    assert "SEQ 6 1" in out, out


# -- app/link.py: a command with no room for its REPLY; the REPLY cache and the epoch ---------

LINK = """
import struct
import shoetest as T
from app.outbox import Outbox
from app.link import Link
class St:
    epoch = 0
    hseq = 0
    boot = 3
class Handler:
    def __init__(self):
        self.calls = []
    def ready(self, mtype):
        return True
    def command(self, mtype, p, n):
        self.calls.append(mtype)
        return 0, 0
replies = []
def emit(t, flags, seq, buf, off, n):
    if t == 8:
        replies.append(struct.unpack_from('<II', buf, off))
ob = Outbox(emit, slots=2)
ob.ticks = lambda: 0
h = Handler()
link = Link(St(), ob, h)
link.attach(T.KEY, T.SERIAL)
board = T.ScriptBoard('')
def host():
    # the next stdin line: host frames, all in one read of the serial line
    T.host(board)
    link.feed(board.host, board.host_len)
"""


def test_a_command_that_finds_the_outbox_full_is_deferred_and_answered_later(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    """SPEC 4: every shoe frame is kept until acknowledged, so a REPLY needs an outbox slot;
    app/link.py: a command is taken only when there is one, else the host's resend is
    taken later; the host resends, and once a later ACK made its same-seq resend a replay,
    issues it under a new seq (SPEC 4), which is answered.
    Kills: a command taken with no free slot for its REPLY."""
    host = [
        wire.frame(P.Ping(nonce=1), seq=1, epoch=1),                               # outbox full
        wire.frame(P.Ping(nonce=1), seq=1, epoch=1, flags=P.FLAG_RESENT),          # still full
        wire.frame(P.Ack(boot=3, seq=1), seq=2, epoch=1),                          # frees a slot
        wire.frame(P.Ping(nonce=1), seq=1, epoch=1, flags=P.FLAG_RESENT),          # now a replay
        wire.frame(P.Ping(nonce=1), seq=3, epoch=1),                               # issued again
        wire.frame(P.Ping(nonce=1), seq=3, epoch=1, flags=P.FLAG_RESENT),          # REPLY lost
    ]
    out = mpy(LINK + """
ob.push(2, b'a', 1)
ob.push(2, b'b', 1)
host()
print('FULL', len(h.calls), replies, ob.count)
host()
print('RESENT', len(h.calls), replies, ob.count)
host()
print('ACKED', len(h.calls), replies, ob.count)
host()
print('REPLAY', len(h.calls), replies)
host()
print('AGAIN', len(h.calls), replies, ob.count)
host()  # the REPLY was lost: it is still held, and goes out again from its slot (SPEC 4)
print('CACHED', len(h.calls), replies)
""", host=host)
    assert "FULL 0 [] 2" in out, out
    assert "RESENT 0 [] 2" in out, out
    assert "ACKED 0 [] 1" in out, out
    assert "REPLAY 0 []" in out, out
    assert "AGAIN 1 [(1, 3)] 2" in out, out
    assert "CACHED 1 [(1, 3), (1, 3)]" in out, out  # answered again, never executed twice


def test_the_reply_cache_matches_the_epoch_as_well_as_the_seq(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    """SPEC 4: a resent command whose (epoch, seq) is that of a command the shoe answered
    is answered again from the cache; a replayed command of another epoch with the same seq
    (a recording) is `replay` and earns nothing, nor does a frame naming (0, 0).
    Kills: the REPLY cache matched on seq without the epoch; the (0, 0) guard dropped."""
    host = [
        wire.frame(P.Ping(nonce=1), seq=1, epoch=1),
        wire.frame(P.Ping(nonce=2), seq=2, epoch=2),                               # a new epoch
        wire.frame(P.Ping(nonce=9), seq=2, epoch=1),                               # old epoch, seq 2
        wire.frame(P.Ping(nonce=9), seq=0, epoch=0),                               # (0, 0)
        wire.frame(P.Ping(nonce=2), seq=2, epoch=2, flags=P.FLAG_RESENT),          # genuine resend
    ]
    out = mpy(LINK + """
ob = Outbox(emit, slots=5)  # room for a copy outside the two REPLY slots, were one made
ob.ticks = lambda: 0
link = Link(St(), ob, h)
link.attach(T.KEY, T.SERIAL)
for tag in ('E1', 'E2', 'OLD', 'ZERO', 'RESENT'):
    host()  # nothing acknowledged: the genuine resend gets its REPLY's own frame again
    print(tag, len(h.calls), replies)
""", host=host)
    assert "E1 1 [(1, 1)]" in out, out
    assert "E2 2 [(1, 1), (2, 2)]" in out, out
    assert "OLD 2 [(1, 1), (2, 2)]" in out, out
    assert "ZERO 2 [(1, 1), (2, 2)]" in out, out
    assert "RESENT 2 [(1, 1), (2, 2), (2, 2)]" in out, out


# -- app/store.py: state and manifest are written through their temporary file ----------------

def test_state_and_manifest_are_replaced_through_their_temporary_file(mpy) -> None:  # type: ignore[no-untyped-def]
    """firmware/README.md "Flash layout": each state record and the manifest is replaced
    whole by write-temp-then-rename (`stateN.bin.tmp`); nothing is rewritten in place.
    The store's `open` and `os` are watched (the files are real, on littlefs).
    Kills: the state (or manifest) written straight to its name."""
    out = mpy("""
import os
import shoetest as T
import app.store as S
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B
root = T.mount(T.BlockDev(path=IMG))
events = []
real_open = open
def watched_open(path, mode='r'):
    if 'w' in mode or 'a' in mode or '+' in mode:
        events.append(('open', ('log/' if '/log/' in path else '') + path.split('/')[-1], mode))
    return real_open(path, mode)
class WatchedOs:
    def rename(self, a, b):
        events.append(('rename', a.split('/')[-1], b.split('/')[-1]))
        os.rename(a, b)
    def __getattr__(self, name):
        return getattr(os, name)
S.open = watched_open
S.os = WatchedOs()
st = S.Store(root)
B.count_boot(st)
table = bytearray(52 * 12)
for c in range(52):
    table[c * 12] = c
    table[c * 12 + 1] = 4
    table[c * 12 + 2] = c
C.new_session(st, 3, 7, 1, table, 52)
st.save()
for e in events:
    print('EV', e[0], e[1], e[2])
print('FILES', sorted(n for n in os.listdir(root + 'data') if n != 'log'))
""")
    events = [tuple(line.split()[1:]) for line in out.splitlines() if line.startswith("EV ")]
    written = [e for e in events if e[0] == "open" and not e[1].startswith("log/")]  # the card log appends
    assert written, out
    for _, name, _mode in written:
        assert name.endswith(".tmp"), f"{name} opened for writing in place: {events}"
    for i, (_, name, _mode) in enumerate(written):
        renames = [e for e in events if e[0] == "rename" and e[1] == name]
        assert renames and renames[0][2] == name[: -len(".tmp")], events
    targets = {e[2] for e in events if e[0] == "rename"}
    assert {"state0.bin", "state1.bin", "manifest.bin"} <= targets, events
    assert "FILES ['ident.bin', 'manifest.bin', 'state0.bin', 'state1.bin']" in out or \
        "FILES ['manifest.bin', 'state0.bin', 'state1.bin']" in out, out


# -- app/store.py: the card log ----------------------------------------------------------------

def test_a_card_record_is_on_the_flash_when_append_returns(mpy) -> None:  # type: ignore[no-untyped-def]
    """firmware/README.md: a card is appended to the log *and flushed* when the exit sensor
    fires, before it is framed. The flash image is copied while the log is still open (what
    a power cut would leave) and mounted on its own: the record is there.
    Kills: the append not flushed."""
    out = mpy("""
import os
import shoetest as T
from app.store import Store
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B
bd = T.BlockDev(path=IMG)
root = T.mount(bd)
st = Store(root)
B.count_boot(st)
C.new_session(st, 7, 7, 2, bytearray(0), 0)
raw = bytearray(16)
st.pack(2, 1, 7, 21, 2, 0, 0, 1001, raw, 13)
st.append()
SNAP = IMG + '.cut'
chunk = bytearray(512)
with open(IMG, 'rb') as src, open(SNAP, 'wb') as dst:
    while src.readinto(chunk) == 512:
        dst.write(chunk)
snap = T.mount(T.BlockDev(path=SNAP), point='/cut', fresh=False)
s2 = Store(snap)
B.load_state(s2)
codes = []
B.open_log(s2, lambda r: codes.append(B.unpack(r)[5]))
print('AFTER CUT', s2.shoe_no, codes)
""", heapsize="256k")
    assert "AFTER CUT 7 [21]" in out, out


def test_a_record_out_of_place_ends_the_log_at_boot(mpy) -> None:  # type: ignore[no-untyped-def]
    """firmware/README.md and app/boot.py: a record with the wrong index (here a good copy of
    card 2 where card 4 belongs) is a bad record: the log ends before it, so no card is
    counted twice. Kills: a record's index not checked."""
    out = mpy("""
import os
import shoetest as T
from app.store import Store
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B
root = T.mount(T.BlockDev(path=IMG))
LOG = root + 'data/log/00000009.0000'
st = Store(root)
B.count_boot(st)
C.new_session(st, 9, 7, 2, bytearray(0), 0)
raw = bytearray(16)
for i in range(1, 4):
    st.pack(2, i, 7, 30 + i, 2, 0, 0, 1000 + i, raw, 13)
    st.append()
st.close_log()
with open(LOG, 'rb') as f:
    f.seek(44)
    second = f.read(44)
with open(LOG, 'ab') as f:
    f.write(second)
s = Store(root)
B.load_state(s)
codes = []
B.open_log(s, lambda r: codes.append(B.unpack(r)[5]))
print('BOOT', codes, s.logged, os.stat(LOG)[6])
""")
    assert "BOOT [31, 32, 33] 3 132" in out, out


# -- app/shoe.py: manifests, CARDS_FROM, NEW_SHOE with cards still waiting ----------------------

def _manifest(wire, shoe_no: int, uid_of) -> list[str]:  # type: ignore[no-untyped-def]
    frames = []
    for part in range(4):
        entries = tuple(P.ManifestEntry(code=c, uid=uid_of(c)) for c in range(part * 13, part * 13 + 13))
        frames.append(wire.frame(P.NewShoe(shoe_no=shoe_no, deck_id=7, scheme=1, part=part, parts=4, entries=entries)))
    return frames


def test_a_manifest_with_a_uid_twice_is_refused(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    """SPEC 5 NEW_SHOE: a manifest with a UID twice is refused, REPLY status 1 detail 2
    (here 52 distinct codes, the ace of spades' tag the same as the two of clubs').
    Kills: the duplicate-UID check switched off."""
    def uid(c: int) -> bytes:
        c = 0 if c == 51 else c
        return bytes((0x04, 7, c, 0xA0, 0xB1, 0xC2, c ^ 0x5A))

    host = _manifest(wire, 4, uid)
    out = mpy(SHOE + """
for _ in range(4):
    T.host(board)
    T.spin(shoe)
    acked()
print('SESSION', shoe.deck.shoe_no)
""", host=host)
    replies = _messages(wire, out, P.Reply)
    assert [(r.status, r.detail) for r in replies] == [(0, 0), (0, 0), (0, 0), (1, 2)], replies
    assert "SESSION 0" in out, out


def test_cards_from_sends_the_logged_cards_again(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    """SPEC 4: CARDS_FROM(shoe_no, index) makes the shoe send the cards of its log from that
    index again, under new seqs (the host places each once by (shoe_no, index)).
    Kills: CARDS_FROM answered but nothing sent again."""
    host = [wire.frame(P.NewShoe(shoe_no=21, deck_id=0xAB, scheme=2, part=0, parts=1)),
            wire.frame(P.CardsFrom(shoe_no=21, index=2))]
    out = mpy(SHOE + """
T.host(board)
T.spin(shoe)
acked()
for c in (5, 6, 7):
    board.barcode(T.barcode_of(0xAB, c)); board.exit()
    T.spin(shoe, 2)
    acked()
T.host(board)
for _ in range(5):
    T.spin(shoe, 2)
    acked()
""", host=host)
    cards = [(c.index, c.code) for c in _messages(wire, out, P.Card)]
    assert cards == [(1, 5), (2, 6), (3, 7), (2, 6), (3, 7)], cards
    assert [(r.status, r.detail) for r in _messages(wire, out, P.Reply)] == [(0, 0), (0, 0)]


def test_a_new_shoe_waits_for_the_cards_not_yet_framed(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    """SPEC 4 "Outbox full": the outbox never drops a card; cards wait in the log and are
    framed as slots free up. SPEC 5 NEW_SHOE: one that comes while cards of the shoe still
    wait is not taken (no REPLY; the host resends it); its resend once they are all framed
    loads the new shoe, and every waiting card reached the host first. (It was REFUSED bad
    state, which the daemon took for final: the new shoe never loaded; issue 11.)
    Kills: a NEW_SHOE taken over cards not yet framed; a waiting NEW_SHOE refused."""
    ns32 = P.NewShoe(shoe_no=32, deck_id=0xAB, scheme=2, part=0, parts=1)
    host = [wire.frame(P.NewShoe(shoe_no=31, deck_id=0xAB, scheme=2, part=0, parts=1)),
            wire.frame(ns32)]
    host.append(wire.frame(ns32, seq=wire.seq, flags=P.FLAG_RESENT))
    out = mpy(SHOE + """
T.host(board)
T.spin(shoe)
acked()
for c in range(20):                   # the host acknowledges nothing: 16 slots cannot hold them
    board.barcode(T.barcode_of(0xAB, c)); board.exit()
    T.spin(shoe, 2)
ob = shoe.outbox
ob.ack(ob.acked + 3)                  # room for a REPLY, cards still waiting in the log
T.spin(shoe, 2)
print('WAITING', shoe.store.logged - shoe.next_frame + 1)
T.host(board)                         # NEW_SHOE 32: not taken while they wait
T.spin(shoe, 2)
print('NOT_TAKEN', shoe.deck.shoe_no)
for _ in range(20):
    T.spin(shoe, 2)
    acked()
print('FRAMED', shoe.store.logged - shoe.next_frame + 1)
T.host(board)                         # the host's resend of NEW_SHOE 32
T.spin(shoe, 2)
acked()
print('SESSION', shoe.deck.shoe_no)
""", host=host)
    waiting = int(next(line for line in out.splitlines() if line.startswith("WAITING ")).split()[1])
    assert waiting > 0, out
    assert "NOT_TAKEN 31" in out and "FRAMED 0" in out, out
    cards = [(c.shoe_no, c.index) for c in _messages(wire, out, P.Card)]
    assert sorted(set(cards)) == [(31, i) for i in range(1, 21)], cards
    replies = [(r.seq, r.status, r.detail) for r in _messages(wire, out, P.Reply)]
    assert replies == [(1, 0, 0), (2, 0, 0)], replies
    assert "SESSION 32" in out, out


def test_a_manifest_of_51_cards_is_refused_after_full_ones(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    """SPEC 5 NEW_SHOE: a manifest of not 52 codes in all is refused, REPLY status 1 detail 2,
    and the loaded session stays. Two full manifests first, so the shoe's staging table
    holds a whole deck from before. Kills: the 52-entry count not checked."""
    uid = lambda c: bytes((0x04, 7, c, 0xA0, 0xB1, 0xC2, c ^ 0x5A))  # noqa: E731
    host = _manifest(wire, 5, uid) + _manifest(wire, 6, uid)
    for part in range(4):
        codes = range(part * 13, min(part * 13 + 13, 51))  # the ace of spades (51) left out
        entries = tuple(P.ManifestEntry(code=c, uid=uid(c)) for c in codes)
        host.append(wire.frame(P.NewShoe(shoe_no=7, deck_id=7, scheme=1, part=part, parts=4, entries=entries)))
    out = mpy(SHOE + """
for _ in range(12):
    T.host(board)
    T.spin(shoe)
    acked()
print('SESSION', shoe.deck.shoe_no, shoe.deck.entries)
""", host=host)
    replies = [(r.status, r.detail) for r in _messages(wire, out, P.Reply)]
    assert replies == [(0, 0)] * 11 + [(1, 2)], replies
    assert "SESSION 6 52" in out, out


def test_a_record_the_flash_half_took_is_overwritten_not_followed(mpy) -> None:  # type: ignore[no-untyped-def]
    """firmware/README.md "Flash layout": each record is written where the file's good records
    end, so a write the flash half took is overwritten by the next, never followed. The
    flash here fails after k more block programs, for each k, in the middle of card 3;
    then it works again: the log holds cards 1-5 once each, in order, and so does the next
    boot. Kills: records appended at the end of the file."""
    out = mpy("""
import shoetest as T
from app.store import Store, StorageError
from app import session as C  # NEW_SHOE's half of the store
from app import boot as B

class Flaky(T.BlockDev):
    budget = -1                       # block programs left before the flash refuses (-1: never)
    def writeblocks(self, block, buf, off=None):
        if self.budget == 0:
            raise OSError(5)
        if self.budget > 0:
            self.budget -= 1
        return T.BlockDev.writeblocks(self, block, buf, off)

raw = bytearray(16)
for k in range(8):
    bd = Flaky(path=IMG + str(k))
    root = T.mount(bd, point='/f')
    st = Store(root)
    B.count_boot(st)
    C.new_session(st, 8, 7, 2, bytearray(0), 0)
    got = []
    for i in range(1, 6):
        if i == 3:
            bd.budget = k
        st.pack(2, i, 7, 40 + i, 2, 0, 0, 1000 + i, raw, 13)
        try:
            st.append()
            got.append('ok')
        except StorageError:
            got.append('refused')
        bd.budget = -1
    live = [st.read(i) and B.unpack(st)[5] for i in range(1, st.logged + 1)]
    st.close_log()
    T.unmount('/f')
    root = T.mount(bd, point='/f', fresh=False)
    s2 = Store(root)
    B.load_state(s2)
    codes = []
    B.open_log(s2, lambda r: codes.append(B.unpack(r)[5]))
    s2.close_log()
    T.unmount('/f')
    print('K', k, got, live, codes)
""", heapsize="256k", timeout=120)
    lines = [line for line in out.splitlines() if line.startswith("K ")]
    assert len(lines) == 8, out
    for line in lines:
        assert line.endswith("[41, 42, 43, 44, 45] [41, 42, 43, 44, 45]"), line
