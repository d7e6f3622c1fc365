"""Barcode payloads (SPEC section 6): `CS`, the deck ID, rank, suit, Luhn mod 36 check.

Loaded at boot only on a board with a barcode reader (app/run.py `boot_shoe`; the
HELLO `readers` bit 2): a shoe that reads RFID only never holds this code
(firmware/README.md, "Memory"). `Deck.on_barcode` imports it otherwise.
"""

from micropython import const

_RANKS = b"23456789TJQKA"
_SUITS = b"CDHS"
_BARCODE_LEN = const(13)


def _b36(c):
    if 48 <= c <= 57:
        return c - 48
    if 65 <= c <= 90:
        return c - 55
    return -1


def barcode_check(buf, n):
    """The Luhn mod 36 check value of the first `n` characters, or -1 if one is out of the alphabet."""
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


def parse_barcode(buf, n):
    """Decode a barcode payload: `(deck_id, code)`, or None when it is a misread.

    Payload: `CS` + deck ID (8 upper-case hex digits) + rank + suit + Luhn mod 36
    check character (SPEC section 6). Anything else is a misread, not a card.
    """
    while n and (buf[n - 1] == 10 or buf[n - 1] == 13):
        n -= 1  # the terminator (CR, LF or CR LF) if the module passed it on
    if n != _BARCODE_LEN or buf[0] != 67 or buf[1] != 83:  # "CS"
        return None
    check = barcode_check(buf, 12)
    if check < 0 or _b36(buf[12]) != check:
        return None
    deck = 0
    for i in range(2, 10):
        c = buf[i]
        if 48 <= c <= 57:
            v = c - 48
        elif 65 <= c <= 70:
            v = c - 55
        else:
            return None
        deck = (deck << 4) | v
    rank = _RANKS.find(bytes((buf[10],)))
    suit = _SUITS.find(bytes((buf[11],)))
    if rank < 0 or suit < 0:
        return None
    return deck, rank * 4 + suit
