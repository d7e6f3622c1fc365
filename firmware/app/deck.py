"""Card identity, count and deck integrity of one shoe session.

A card is identified from its RFID UID through the loaded manifest, or from its
barcode (SPEC section 6). Reads are held until the exit sensor fires and then
belong to the card that left: the same tag read twice as it slides out is one card,
and an exit with no read is an UNREAD card. Two exits with the same code are a
duplicate; a UID not in the manifest, or a barcode of another deck ID, is foreign.

`count()` is the one place the counters change, both live and when the card log is
replayed at boot, so the counts after a power cut are those before it.
"""

from micropython import const

from app.mem import take

_FLAG_DUPLICATE = const(1)
_FLAG_FOREIGN = const(2)

_INT_DUPLICATE = const(1)
_INT_FOREIGN = const(2)
_INT_UNREAD = const(4)
_INT_MISSING = const(8)
_INT_EXTRA = const(16)

_KIND_CARD = const(2)  # the message types CARD and UNREAD
_KIND_UNREAD = const(3)
_METHOD_RFID = const(1)
_METHOD_BARCODE = const(2)

_DECK_SIZE = const(52)
_ENTRY = const(12)  # manifest slot: code, uid_len, uid[10]
_UID_MAX = const(10)
_RAW_MAX = const(16)
_NO_CARD = const(0xFF)

def _sat(v):
    return v + 1 if v < 255 else 255


class Deck:
    """The loaded shoe session: manifest, the read pending for the next exit, counters."""

    def __init__(self):
        self.table = take(_DECK_SIZE * _ENTRY)
        self.entries = 0
        self.shoe_no = 0
        self.deck_id = 0
        self.scheme = 0
        self.seen = take(7)
        self.map = take(7)
        self.raw = take(_RAW_MAX)
        self.reset(0, 0, 0, 0)
        self.integ = 0
        self.integ_from = 0

    def reset(self, shoe_no, deck_id, scheme, entries):
        """Start counting a session (a fresh one, or one whose log is about to be replayed)."""
        self.shoe_no = shoe_no
        self.deck_id = deck_id
        self.scheme = scheme
        self.entries = entries
        self.dealt = 0
        self.duplicates = 0
        self.foreign = 0
        self.unread = 0
        self.missing = 0
        self.integ = 0
        self.integ_from = 0
        for i in range(7):
            self.seen[i] = 0
        self.clear_read()
        # result of identify()
        self.card_deck = 0
        self.code = _NO_CARD
        self.flags = 0

    @property
    def remaining(self):
        return _DECK_SIZE - self.dealt if self.dealt < _DECK_SIZE else 0

    # -- reads pending for the next exit ------------------------------------
    def clear_read(self):
        self.method = 0
        self.retries = 0
        self.raw_len = 0
        self._read_deck = 0
        self._read_code = _NO_CARD

    def on_rfid(self, uid, n, retries):
        """The reader saw tag `uid[:n]`; the first good read of a card is kept."""
        if self.method:
            return  # a second read as the card slides out: the same card
        n = min(n, _RAW_MAX)
        raw = self.raw
        for i in range(n):  # by byte: a slice would allocate for every card
            raw[i] = uid[i]
        self.raw_len = n
        self.method = _METHOD_RFID
        self.retries = min(self.retries + retries, 255)
        self._read_deck = 0
        self._read_code = _NO_CARD
        t = self.table  # the manifest's slot with this UID, if any
        for i in range(self.entries):
            o = i * _ENTRY
            if t[o + 1] != n:
                continue
            j = 0
            while j < n and t[o + 2 + j] == uid[j]:
                j += 1
            if j == n:
                self._read_deck = self.deck_id
                self._read_code = t[o]
                return

    def on_barcode(self, text, n, retries):
        """The barcode module sent `text[:n]`; a line that is not a card is a retry."""
        if self.method:
            return
        # The parser is app/barcode.py, loaded at boot on a board with a barcode reader
        # (app/run.py): a shoe with only RFID never holds its code.
        from app.barcode import parse_barcode

        got = parse_barcode(text, n)
        if got is None:
            self.retries = min(self.retries + 1 + retries, 255)
            return
        n = min(n, _RAW_MAX)
        raw = self.raw
        for i in range(n):
            raw[i] = text[i]
        self.raw_len = n
        self.method = _METHOD_BARCODE
        self.retries = min(self.retries + retries, 255)
        self._read_deck, self._read_code = got

    # -- a card left ------------------------------------------------------
    def identify(self):
        """Decide what the card that just left was; returns _KIND_CARD or _KIND_UNREAD.

        Sets `card_deck`, `code` and `flags` from the pending read (then cleared by
        the caller with `clear_read()` once the card is recorded).
        """
        self.flags = 0
        if not self.method:
            self.card_deck = 0
            self.code = _NO_CARD
            return _KIND_UNREAD
        self.card_deck = self._read_deck
        self.code = self._read_code
        if self.code == _NO_CARD or not self.shoe_no or self.card_deck != self.deck_id:
            self.flags = _FLAG_FOREIGN
        elif self.seen[self.code >> 3] & (1 << (self.code & 7)):
            self.flags = _FLAG_DUPLICATE
        return _KIND_CARD

    def count(self, kind, code, flags, index):
        """Count card `index` of the session; returns True when the integrity bits changed."""
        self.dealt = index
        bits = 0
        if kind == _KIND_UNREAD:
            self.unread = _sat(self.unread)
            bits = _INT_UNREAD
        elif flags & _FLAG_FOREIGN:
            self.foreign = _sat(self.foreign)
            bits = _INT_FOREIGN
        elif flags & _FLAG_DUPLICATE:
            self.duplicates = _sat(self.duplicates)
            bits = _INT_DUPLICATE
        elif code < _DECK_SIZE:
            self.seen[code >> 3] |= 1 << (code & 7)
        if index > _DECK_SIZE:
            bits |= _INT_EXTRA
        if index <= self.integ_from:
            return False  # already reported and cleared by the host
        before = self.integ
        self.integ |= bits
        return self.integ != before

    def end_shoe(self):
        """The dealer ended the shoe: count the manifest's cards never dealt."""
        missing = 0
        for code in range(_DECK_SIZE):
            if not self.seen[code >> 3] & (1 << (code & 7)):
                missing += 1
        self.missing = min(missing, 255)
        if missing:
            self.integ |= _INT_MISSING
        return missing

    def missing_map(self):
        """SPEC DECK_STATUS missing_map: bit i set when code i was not dealt."""
        m = self.map
        for i in range(7):
            m[i] = ~self.seen[i] & 0xFF
        m[6] &= 0x0F  # codes 48..51 only
        return m
