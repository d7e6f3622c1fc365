"""UART barcode module: lines in, card identities (or named misreads) out.

A barcode module (a fixed-mount scanner at the shoe's mouth) sends what it read as
ASCII text ended by CR, LF or CR LF; some modules end a read only by falling silent.
Everything it sends is untrusted: line noise, another scheme's labels, half a label.

Interface (for the boards and the app)
--------------------------------------
``parse_barcode(buf, n) -> (deck_id, code)``
    The pure validation of SPEC section 6 on ``buf[:n]`` (bytes-like, no terminator):
    13 characters, alphabet ``0-9A-Z``, Luhn mod 36 check character, ``CS`` prefix,
    8 upper-case hex digits of deck ID, rank ``23456789TJQKA``, suit ``CDHS``. Checked
    in that order (the host codec's order). Returns the deck ID (u32) and the card
    code ``(rank - 2) * 4 + suit``; raises a ``BarcodeError`` subclass naming what was
    wrong. Also runs under CPython, so host tests can use the same vectors.
``check_value(buf, n) -> int``: the Luhn mod 36 check value (0..35) of ``buf[:n]``, -1
    if a character is outside the alphabet. ``barcode_text(deck_id, code) -> bytes``:
    the 13-character payload printed on a card (for tests and printing).

``BarcodeReader(uart, *, timeout_ms=50, max_line=16)``
    ``uart`` has ``readinto(buf) -> int | None`` that never blocks (``machine.UART``
    built with ``timeout=0``; None or 0 means nothing waiting).
    ``poll(now=None) -> int``: read what the UART holds (into a preallocated buffer)
    and return at most one event: ``NONE`` (0), ``CARD`` (1) or ``MISREAD`` (2).
    Call it again until it returns ``NONE``. After an event: ``line`` (a memoryview
    of the text as read, without the terminator, valid until the next poll),
    ``length``, ``reason`` (0 for a card, else one of the ``R_*`` codes below),
    ``deck_id`` and ``code`` (for ``CARD``). ``now`` is ``time.ticks_ms()`` (taken
    when omitted). Counters: ``cards``, ``misreads``.

Lines end at CR or LF (an empty line, as between CR and LF, is skipped), or when no
character came for ``timeout_ms``. A line longer than ``max_line`` is dropped whole
(``R_TOO_LONG``) without growing any buffer. Reading and validation allocate nothing;
only ``parse_barcode`` allocates, for its exception.

Reason codes and their exceptions (all ``BarcodeError``, a ``ValueError``):
``R_LENGTH`` 1 ``BadLength``, ``R_CHARACTER`` 2 ``BadCharacter``, ``R_CHECK`` 3
``BadCheck``, ``R_PREFIX`` 4 ``BadPrefix``, ``R_DECK`` 5 ``BadDeckId``, ``R_RANK`` 6
``BadRank``, ``R_SUIT`` 7 ``BadSuit``, ``R_TOO_LONG`` 8 ``LineTooLong`` (a ``BadLength``).
``REASONS[code]`` is the reason's name in protocol/vectors/barcodes.json ("length",
"alphabet", "check", "prefix", "deck_id", "rank", "suit"; too long is "length").
"""

try:
    from micropython import const
except ImportError:  # CPython, for host-side tests against the same vectors

    def const(x):
        return x


import time

NONE = const(0)
CARD = const(1)
MISREAD = const(2)

R_OK = const(0)
R_LENGTH = const(1)
R_CHARACTER = const(2)
R_CHECK = const(3)
R_PREFIX = const(4)
R_DECK = const(5)
R_RANK = const(6)
R_SUIT = const(7)
R_TOO_LONG = const(8)

_LEN = const(13)
_CR = const(13)
_LF = const(10)
_RANKS = b"23456789TJQKA"
_SUITS = b"CDHS"
_CHUNK = const(16)


class BarcodeError(ValueError):
    """A barcode line that is not a card: a misread (retried; the exit sensor decides)."""

    reason = R_LENGTH


class BadLength(BarcodeError):
    """Not 13 characters."""

    reason = R_LENGTH


class BadCharacter(BarcodeError):
    """A character outside 0-9A-Z."""

    reason = R_CHARACTER


class BadCheck(BarcodeError):
    """The Luhn mod 36 check character does not match."""

    reason = R_CHECK


class BadPrefix(BarcodeError):
    """Not this scheme: the payload does not start with CS."""

    reason = R_PREFIX


class BadDeckId(BarcodeError):
    """The deck ID is not 8 upper-case hex digits."""

    reason = R_DECK


class BadRank(BarcodeError):
    """The rank character is not one of 23456789TJQKA."""

    reason = R_RANK


class BadSuit(BarcodeError):
    """The suit character is not one of CDHS."""

    reason = R_SUIT


class LineTooLong(BadLength):
    """The line ran past the reader's buffer and was dropped."""

    reason = R_TOO_LONG


# Reason names as in protocol/vectors/barcodes.json (and the host codec).
REASONS = ("", "length", "alphabet", "check", "prefix", "deck_id", "rank", "suit", "length")
ERRORS = (None, BadLength, BadCharacter, BadCheck, BadPrefix, BadDeckId, BadRank, BadSuit, LineTooLong)
_WHAT = (
    "",
    "length is not 13",
    "character outside 0-9A-Z",
    "bad check character",
    "prefix is not CS",
    "deck ID is not 8 upper-case hex digits",
    "rank is not one of 23456789TJQKA",
    "suit is not one of CDHS",
    "line too long",
)


def _b36(c):
    if 48 <= c <= 57:
        return c - 48
    if 65 <= c <= 90:
        return c - 55
    return -1


def check_value(buf, n):
    """Luhn mod 36 check value of ``buf[:n]`` (SPEC 6), or -1 if a character is out of the alphabet."""
    total = 0
    double = True  # the rightmost character is doubled
    i = n - 1
    while i >= 0:
        v = _b36(buf[i])
        if v < 0:
            return -1
        if double:
            v *= 2
            v = v // 36 + v % 36
        total += v
        double = not double
        i -= 1
    return (36 - total % 36) % 36


def _validate(buf, n):
    # Returns a reason code; allocation-free so the reader can call it on every line.
    if n != _LEN:
        return R_LENGTH
    for i in range(_LEN):
        if _b36(buf[i]) < 0:
            return R_CHARACTER
    if check_value(buf, _LEN - 1) != _b36(buf[_LEN - 1]):
        return R_CHECK
    if buf[0] != 67 or buf[1] != 83:  # "CS"
        return R_PREFIX
    for i in range(2, 10):
        if _b36(buf[i]) > 15:
            return R_DECK
    if _index(_RANKS, buf[10]) < 0:
        return R_RANK
    if _index(_SUITS, buf[11]) < 0:
        return R_SUIT
    return R_OK


def _index(table, c):
    for i in range(len(table)):
        if table[i] == c:
            return i
    return -1


def _deck_id(buf):
    deck = 0
    for i in range(2, 10):
        deck = (deck << 4) | _b36(buf[i])
    return deck


def _code(buf):
    return _index(_RANKS, buf[10]) * 4 + _index(_SUITS, buf[11])


def parse_barcode(buf, n):
    """Validate ``buf[:n]`` as a SPEC section 6 payload; return ``(deck_id, code)``.

    Raises the ``BarcodeError`` subclass of the first rule broken (see the module doc).
    """
    if n > len(buf):
        raise ValueError("n is larger than the buffer")
    reason = _validate(buf, n)
    if reason:
        text = bytes(buf[:n])
        raise ERRORS[reason]("barcode %r: %s" % (text, _WHAT[reason]))
    return _deck_id(buf), _code(buf)


def barcode_text(deck_id, code):
    """The 13-character payload printed on card ``code`` of deck ``deck_id``."""
    if not 0 <= deck_id <= 0xFFFFFFFF or not 0 <= code <= 51:
        raise ValueError("deck ID or card code out of range")
    out = bytearray(b"CS%08X" % deck_id)
    out.append(_RANKS[code // 4])
    out.append(_SUITS[code % 4])
    out.append(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[check_value(out, 12)])
    return bytes(out)


class BarcodeReader:
    """Lines from a UART barcode module; see the module docstring for the interface."""

    def __init__(self, uart, *, timeout_ms=50, max_line=16):
        if max_line < _LEN:
            raise ValueError("max_line shorter than a payload")
        self._uart = uart
        self._timeout = timeout_ms
        self._chunk = bytearray(_CHUNK)
        self._chunk_mv = memoryview(self._chunk)
        self._pos = 0
        self._got = 0
        self._buf = bytearray(max_line)
        self._n = 0
        self._overlong = False
        self._last = 0
        self.line = memoryview(self._buf)
        self.length = 0
        self.reason = R_OK
        self.deck_id = 0
        self.code = 0
        self.cards = 0
        self.misreads = 0

    def _finish(self):
        # A line has ended: classify it. Returns the event.
        n = self._n
        self._n = 0
        if self._overlong:
            self._overlong = False
            self.length = 0
            self.reason = R_TOO_LONG
            self.misreads += 1
            return MISREAD
        if n == 0:
            return NONE
        self.length = n
        reason = _validate(self._buf, n)
        self.reason = reason
        if reason:
            self.misreads += 1
            return MISREAD
        self.deck_id = _deck_id(self._buf)
        self.code = _code(self._buf)
        self.cards += 1
        return CARD

    def poll(self, now=None):
        """Process waiting bytes; return NONE, CARD or MISREAD (one event per call)."""
        if now is None:
            now = time.ticks_ms()
        while True:
            if self._pos >= self._got:
                got = self._uart.readinto(self._chunk_mv)
                self._pos = 0
                self._got = got or 0
                if not self._got:
                    break
                self._last = now
            c = self._chunk[self._pos]
            self._pos += 1
            if c == _CR or c == _LF:
                ev = self._finish()
                if ev:
                    return ev
                continue
            if self._n < len(self._buf):
                self._buf[self._n] = c
                self._n += 1
            else:
                self._overlong = True  # keep dropping until the line ends
        if (self._n or self._overlong) and time.ticks_diff(now, self._last) >= self._timeout:
            return self._finish()
        return NONE
