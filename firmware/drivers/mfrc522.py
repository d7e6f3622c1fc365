"""MFRC522 (NXP) ISO 14443A reader at register level, over SPI.

The shoe reads each card's tag UID as the card slides out. This driver speaks to the
chip's registers directly: no library, no allocation once constructed.

Interface (for the boards and the app)
--------------------------------------
``MFRC522(spi, cs, rst=None, *, card_timeout_ms=5, wait_ms=100)``
    ``spi`` is a ready-made bus with ``write(buf)`` and ``write_readinto(wbuf, rbuf)``
    (``machine.SPI``: mode 0, MSB first, up to 10 MHz); ``cs`` and ``rst`` are output
    pins called as ``pin(0)`` / ``pin(1)``. The driver never imports ``machine``.
    ``card_timeout_ms`` is the chip's own timer: how long a card has to answer.
    ``wait_ms`` bounds every wait on the chip; when it passes the chip is not working
    (``ReaderTimeout``), which is different from "no card" (the chip's timer fired).

``init() -> int``
    Hard reset (if ``rst``), soft reset, timer, modulation, CRC preset 0x6363, antenna
    on. Returns the version register (0x88 clone, 0x91 v1.0, 0x92 v2.0, 0xB2 FM17522);
    anything else raises ``ReaderNotFound`` (0x00/0xFF is a dead or unwired bus).

``read_uid(buf, wake=False) -> int``
    REQA (or WUPA when ``wake``), then anticollision + SELECT for cascade levels 1 to 3,
    then HLTA so the same card stays quiet while it is still in the field. Writes the
    UID into the caller's ``buf`` (at least 10 bytes) and returns its length (4, 7 or
    10); returns 0 when no card answered. ``sak`` and ``atqa`` hold the last card's
    answers. Raises:

    - ``CollisionError`` (``.bit``: the first colliding bit, 1-based, 0 if unknown):
      two tags answered. The shoe must name the card that leaves, so two tags in the
      field are a misread to retry, never a pick of one of them.
    - ``BCCError`` (a ``CRCError``): the UID check byte does not match the UID bytes.
    - ``CRCError``: the SAK's CRC_A is wrong.
    - ``ProtocolError``: parity/protocol/overflow error, or an answer of the wrong
      length or an inconsistent cascade (cascade tag without the SAK cascade bit...).
    - ``ReaderTimeout``: the chip did not finish within ``wait_ms`` (reader fault).

``halt()``: HLTA to the selected card. ``antenna(on)``. ``crc_a(mv, n, out)``: the
chip's CRC coprocessor (CRC_A over ``mv[:n]`` into ``out[0:2]``, LSB first).

All ``*Error`` classes derive from ``ReaderError`` (an ``OSError``). Read errors
(collision, CRC, BCC, protocol) mean "retry the read"; ``ReaderTimeout`` and
``ReaderNotFound`` mean the reader is failing (FAULT READER).
"""

from micropython import const
import time

# Registers (datasheet section 9).
_CommandReg = const(0x01)
_ComIEnReg = const(0x02)
_ComIrqReg = const(0x04)
_DivIrqReg = const(0x05)
_ErrorReg = const(0x06)
_FIFODataReg = const(0x09)
_FIFOLevelReg = const(0x0A)
_ControlReg = const(0x0C)
_BitFramingReg = const(0x0D)
_CollReg = const(0x0E)
_ModeReg = const(0x11)
_TxModeReg = const(0x12)
_RxModeReg = const(0x13)
_TxControlReg = const(0x14)
_TxASKReg = const(0x15)
_CRCResultRegH = const(0x21)
_CRCResultRegL = const(0x22)
_ModWidthReg = const(0x24)
_TModeReg = const(0x2A)
_TPrescalerReg = const(0x2B)
_TReloadRegH = const(0x2C)
_TReloadRegL = const(0x2D)
_VersionReg = const(0x37)

# Commands (datasheet section 10.3).
_CMD_IDLE = const(0x00)
_CMD_CALC_CRC = const(0x03)
_CMD_TRANSCEIVE = const(0x0C)
_CMD_SOFT_RESET = const(0x0F)

# Bits.
_IRQ_TIMER = const(0x01)
_IRQ_ERR = const(0x02)
_IRQ_IDLE = const(0x10)
_IRQ_RX = const(0x20)
_IRQ_ALL = const(0x7F)  # Set1=0: writing clears the marked bits
_DIV_CRC = const(0x04)
_ERR_PROTOCOL = const(0x01)
_ERR_PARITY = const(0x02)
_ERR_CRC = const(0x04)
_ERR_COLL = const(0x08)
_ERR_BUF_OVFL = const(0x10)
_FIFO_FLUSH = const(0x80)
_START_SEND = const(0x80)
_COLL_VALUES_AFTER = const(0x80)
_COLL_POS_NOT_VALID = const(0x20)
_POWER_DOWN = const(0x10)

# ISO 14443-3 type A commands.
_PICC_REQA = const(0x26)
_PICC_WUPA = const(0x52)
_PICC_HLTA = const(0x50)
_SEL_CL1 = const(0x93)
_NVB_ANTICOLL = const(0x20)
_NVB_SELECT = const(0x70)
_CASCADE_TAG = const(0x88)
_SAK_CASCADE = const(0x04)

_KNOWN_VERSIONS = (0x88, 0x91, 0x92, 0xB2)

# 13.56 MHz / (2 * 0xA9 + 1) = 40 kHz: one timer tick is 25 us, 40 ticks a millisecond.
_PRESCALER = const(0xA9)
_TICKS_PER_MS = const(40)


class ReaderError(OSError):
    """Base of every MFRC522 error."""


class ReaderNotFound(ReaderError):
    """The version register did not read as a known MFRC522 (unwired, dead or not an MFRC522)."""


class ReaderTimeout(ReaderError):
    """The chip did not finish a command within the bounded wait: the reader is failing."""


class CollisionError(ReaderError):
    """Two or more tags answered at once; ``bit`` is the first colliding bit (1-based, 0 unknown)."""

    def __init__(self, bit):
        super().__init__("tags collided at bit %d" % bit)
        self.bit = bit


class CRCError(ReaderError):
    """A CRC_A check failed (the SAK's CRC, or the CRC coprocessor)."""


class BCCError(CRCError):
    """The UID check byte (XOR of the four UID bytes) did not match."""


class ProtocolError(ReaderError):
    """A malformed answer: parity, framing, buffer overflow, wrong length or cascade."""


class MFRC522:
    """One MFRC522 on an SPI bus; see the module docstring for the interface."""

    def __init__(self, spi, cs, rst=None, *, card_timeout_ms=5, wait_ms=100):
        self._spi = spi
        self._cs = cs
        self._rst = rst
        self._card_ticks = card_timeout_ms * _TICKS_PER_MS
        if not 0 < self._card_ticks <= 0xFFFF:
            raise ValueError("card_timeout_ms out of range 1..1638")
        if wait_ms <= card_timeout_ms:
            raise ValueError("wait_ms must exceed card_timeout_ms")
        self._wait_ms = wait_ms
        # Every transfer goes through these, so the read path never allocates.
        self._reg = bytearray(2)
        self._reg_in = bytearray(2)
        self._tx = bytearray(9)
        self._rx = bytearray(8)
        self._crc = bytearray(2)
        self.version = 0
        self.atqa = 0
        self.sak = 0
        self._rx_bits = 0
        cs(1)

    # -- bus: the only methods that touch SPI ---------------------------------------

    def _write(self, reg, value):
        buf = self._reg
        buf[0] = (reg << 1) & 0x7E
        buf[1] = value
        self._cs(0)
        try:
            self._spi.write(buf)
        finally:
            self._cs(1)

    def _read(self, reg):
        buf = self._reg
        buf[0] = ((reg << 1) & 0x7E) | 0x80
        buf[1] = 0
        self._cs(0)
        try:
            self._spi.write_readinto(buf, self._reg_in)
        finally:
            self._cs(1)
        return self._reg_in[1]

    def _fifo_write(self, data, n):
        # One byte per transfer: frames are at most 9 bytes, and this needs no slice
        # (a memoryview slice allocates).
        for i in range(n):
            self._write(_FIFODataReg, data[i])

    def _fifo_read(self, out, n):
        for i in range(n):
            out[i] = self._read(_FIFODataReg)

    def _set_bits(self, reg, mask):
        self._write(reg, self._read(reg) | mask)

    def _clear_bits(self, reg, mask):
        self._write(reg, self._read(reg) & ~mask & 0xFF)

    # -- chip -----------------------------------------------------------------------

    def init(self):
        """Reset and configure the chip, turn the antenna on; return the version byte."""
        if self._rst is not None:
            self._rst(0)
            time.sleep_ms(1)
            self._rst(1)
            time.sleep_ms(50)  # oscillator start-up (datasheet 8.8.2: 37.74 us + crystal)
        self._write(_CommandReg, _CMD_SOFT_RESET)
        # The PowerDown bit stays set until the soft reset has finished (datasheet 9.3.1.2).
        deadline = time.ticks_add(time.ticks_ms(), self._wait_ms)
        while self._read(_CommandReg) & _POWER_DOWN:
            if time.ticks_diff(deadline, time.ticks_ms()) <= 0:
                v = self._read(_VersionReg)
                if v not in _KNOWN_VERSIONS:
                    raise ReaderNotFound("MFRC522 version register reads 0x%02X" % v)
                raise ReaderTimeout("MFRC522 soft reset did not finish")
            time.sleep_ms(1)
        version = self._read(_VersionReg)
        if version not in _KNOWN_VERSIONS:
            raise ReaderNotFound("MFRC522 version register reads 0x%02X" % version)
        self.version = version
        # Timer starts when a transmission ends: the card's time to answer.
        self._write(_TModeReg, 0x80 | ((_PRESCALER >> 8) & 0x0F))
        self._write(_TPrescalerReg, _PRESCALER & 0xFF)
        self._write(_TReloadRegH, self._card_ticks >> 8)
        self._write(_TReloadRegL, self._card_ticks & 0xFF)
        self._write(_TxModeReg, 0x00)  # 106 kbit/s, no hardware CRC: we add CRC_A ourselves
        self._write(_RxModeReg, 0x00)
        self._write(_ModWidthReg, 0x26)
        self._write(_TxASKReg, 0x40)  # 100 % ASK, which type A cards need
        self._write(_ModeReg, 0x3D)  # CRC preset 0x6363 (ISO 14443-3 CRC_A)
        self._write(_ComIEnReg, 0x00)  # polled, no IRQ pin
        self.antenna(True)
        return version

    def antenna(self, on):
        """Switch the 13.56 MHz field on (TX1 and TX2) or off."""
        if on:
            if self._read(_TxControlReg) & 0x03 != 0x03:
                self._set_bits(_TxControlReg, 0x03)
        else:
            self._clear_bits(_TxControlReg, 0x03)

    def _wait(self, reg, mask):
        # Every wait on the chip ends, either in its bits or in ReaderTimeout.
        deadline = time.ticks_add(time.ticks_ms(), self._wait_ms)
        while True:
            value = self._read(reg)
            if value & mask:
                return value
            if time.ticks_diff(deadline, time.ticks_ms()) <= 0:
                raise ReaderTimeout("MFRC522 register 0x%02X never showed 0x%02X" % (reg, mask))

    def crc_a(self, data, n, out):
        """CRC_A of ``data[:n]`` by the chip's coprocessor, written LSB first into ``out[0:2]``."""
        self._write(_CommandReg, _CMD_IDLE)
        self._write(_DivIrqReg, _DIV_CRC)
        self._write(_FIFOLevelReg, _FIFO_FLUSH)
        self._fifo_write(data, n)
        self._write(_CommandReg, _CMD_CALC_CRC)
        try:
            self._wait(_DivIrqReg, _DIV_CRC)
        finally:
            self._write(_CommandReg, _CMD_IDLE)
        out[0] = self._read(_CRCResultRegL)
        out[1] = self._read(_CRCResultRegH)

    def _transceive(self, n, tx_last_bits=0):
        """Send ``self._tx[:n]``; return the number of bytes answered into ``self._rx`` (0: none).

        Collision and framing errors raise; a card that does not answer within the
        chip's timer is 0, not an error.
        """
        self._write(_CommandReg, _CMD_IDLE)
        self._write(_ComIrqReg, _IRQ_ALL)
        self._write(_FIFOLevelReg, _FIFO_FLUSH)
        self._fifo_write(self._tx, n)
        self._write(_BitFramingReg, tx_last_bits)
        self._write(_CommandReg, _CMD_TRANSCEIVE)
        self._write(_BitFramingReg, _START_SEND | tx_last_bits)
        try:
            irq = self._wait(_ComIrqReg, _IRQ_RX | _IRQ_IDLE | _IRQ_TIMER)
        finally:
            self._write(_BitFramingReg, 0)
            self._write(_CommandReg, _CMD_IDLE)
        if not irq & (_IRQ_RX | _IRQ_IDLE):
            return 0  # the chip's timer ran out: nobody answered
        err = self._read(_ErrorReg)
        if err & _ERR_COLL:
            coll = self._read(_CollReg)
            bit = 0 if coll & _COLL_POS_NOT_VALID else (coll & 0x1F) or 32
            raise CollisionError(bit)
        if err & (_ERR_BUF_OVFL | _ERR_PARITY | _ERR_PROTOCOL):
            raise ProtocolError("MFRC522 error register 0x%02X" % err)
        level = self._read(_FIFOLevelReg) & 0x7F
        if level > len(self._rx):
            raise ProtocolError("answer of %d bytes is too long" % level)
        self._fifo_read(self._rx, level)
        self._rx_bits = self._read(_ControlReg) & 0x07
        return level

    def request(self, wake=False):
        """REQA (or WUPA); return the ATQA as an int, or 0 when no card answered."""
        # ValuesAfterColl = 0: bits after a collision read as 0 and CollPos is kept, as
        # type A anticollision at 106 kbit/s expects (datasheet 9.3.1.15).
        if self._read(_CollReg) & _COLL_VALUES_AFTER:
            self._clear_bits(_CollReg, _COLL_VALUES_AFTER)
        self._tx[0] = _PICC_WUPA if wake else _PICC_REQA
        try:
            n = self._transceive(1, 7)  # a short frame: 7 bits
        except CollisionError:
            # Cards of different ATQA collide here; ISO 14443-3 goes on to anticollision.
            n = self._read(_FIFOLevelReg) & 0x7F
            if n != 2:
                raise
            self._fifo_read(self._rx, 2)
        if n == 0:
            return 0
        if n != 2:
            raise ProtocolError("ATQA of %d bytes" % n)
        atqa = self._rx[0] | (self._rx[1] << 8)
        # ISO 14443-3 6.3.2: exactly one of the five bit-frame anticollision bits is set.
        frame = atqa & 0x1F
        if frame == 0 or frame & (frame - 1):
            raise ProtocolError("ATQA 0x%04X is not a type A answer" % atqa)
        self.atqa = atqa
        return atqa

    def _select_level(self, level, out, at):
        """Anticollision and SELECT at cascade ``level`` (0..2); return bytes put in ``out``."""
        tx = self._tx
        rx = self._rx
        sel = _SEL_CL1 + 2 * level
        tx[0] = sel
        tx[1] = _NVB_ANTICOLL
        n = self._transceive(2)
        if n == 0:
            return -1  # the card left between frames
        if n != 5:
            raise ProtocolError("anticollision answer of %d bytes" % n)
        if rx[0] ^ rx[1] ^ rx[2] ^ rx[3] != rx[4]:
            raise BCCError("UID check byte mismatch at cascade level %d" % (level + 1))
        tx[1] = _NVB_SELECT
        for i in range(5):
            tx[2 + i] = rx[i]
        self.crc_a(tx, 7, self._crc)
        tx[7] = self._crc[0]
        tx[8] = self._crc[1]
        cascade_tag = rx[0] == _CASCADE_TAG
        uid0 = rx[0]
        uid1 = rx[1]
        uid2 = rx[2]
        uid3 = rx[3]
        n = self._transceive(9)
        if n == 0:
            return -1
        if n != 3 or self._rx_bits:
            raise ProtocolError("SAK answer of %d bytes" % n)
        self.crc_a(rx, 1, self._crc)
        if self._crc[0] != rx[1] or self._crc[1] != rx[2]:
            raise CRCError("SAK CRC_A mismatch at cascade level %d" % (level + 1))
        sak = rx[0]
        more = sak & _SAK_CASCADE
        if bool(more) != cascade_tag:
            raise ProtocolError("cascade tag and SAK disagree at level %d" % (level + 1))
        if more and level == 2:
            raise ProtocolError("SAK asks for a fourth cascade level")
        self.sak = sak
        if more:
            out[at] = uid1
            out[at + 1] = uid2
            out[at + 2] = uid3
            return 3
        out[at] = uid0
        out[at + 1] = uid1
        out[at + 2] = uid2
        out[at + 3] = uid3
        return 4

    def read_uid(self, buf, wake=False):
        """Read one card's UID into ``buf``; return its length (4, 7, 10) or 0 for no card."""
        if len(buf) < 10:
            raise ValueError("UID buffer shorter than 10 bytes")
        if not self.request(wake):
            return 0
        n = 0
        for level in range(3):
            got = self._select_level(level, buf, n)
            if got < 0:
                return 0
            n += got
            if got == 4:
                break
        self.halt()
        return n

    def halt(self):
        """HLTA: the selected card stops answering REQA until it leaves the field."""
        tx = self._tx
        tx[0] = _PICC_HLTA
        tx[1] = 0
        self.crc_a(tx, 2, self._crc)
        tx[2] = self._crc[0]
        tx[3] = self._crc[1]
        # ISO 14443-3 6.4.3: silence for 1 ms after HLTA is the acknowledgement, so wait
        # 1 ms, not the full card timeout, on every card.
        self._write(_TReloadRegH, 0)
        self._write(_TReloadRegL, _TICKS_PER_MS)
        try:
            self._transceive(4)
        except (CollisionError, ProtocolError):
            pass  # an answer to HLTA changes nothing: the UID is already read and checked
        finally:
            self._write(_TReloadRegH, self._card_ticks >> 8)
            self._write(_TReloadRegL, self._card_ticks & 0xFF)
