"""A model of the MFRC522's SPI interface, registers, FIFO and commands, with ISO 14443A cards.

SPI registers cannot exist on the unix port, so the MFRC522 driver is tested against
this model (it runs under MicroPython). It is strict where the real chip and cards are:

- SPI only counts while CS is low; a transfer with CS high raises ``BusError``.
  Address bytes follow datasheet 8.1.2.3 (bit 7 read, bits 6-1 register, bit 0 zero).
- ComIrqReg/DivIrqReg have Set1/Set2 semantics; FIFOLevelReg bit 7 flushes; ErrorReg is
  cleared when a command starts; VersionReg is read-only.
- SoftReset puts the registers back to their reset values (antenna off, timer not
  automatic, CRC preset 0x6363), so a driver that skips its set-up gets no cards.
- Cards hear nothing unless both antenna drivers are on and 100 % ASK is forced. The
  timer only fires (``TimerIRq``) when TModeReg.TAuto is set; otherwise a silent card
  never ends the command, as on the chip.
- CalcCRC uses the ModeReg CRC preset (0x0000, 0x6363, 0xA671, 0xFFFF).
- Cards follow the ISO 14443-3 type A state machine (IDLE, READY, ACTIVE, HALT) with
  cascade levels for 4-, 7- and 10-byte UIDs; they check the CRC_A of SELECT and HLTA
  and ignore frames they do not expect. Several cards answering at once are combined
  bit by bit: the first differing bit sets ErrorReg.CollErr and CollReg.CollPos.
"""

try:
    import micropython as _mp
except ImportError:  # CPython: no heap lock to step around
    _mp = None

_CMD_IDLE = 0x00
_CMD_CALC_CRC = 0x03
_CMD_TRANSCEIVE = 0x0C
_CMD_SOFT_RESET = 0x0F

_RESET_VALUES = {
    0x01: 0x20,  # CommandReg: RcvOff
    0x02: 0x80,
    0x04: 0x14,
    0x0A: 0x00,
    0x0B: 0x08,
    0x0C: 0x10,
    0x0E: 0x80,  # CollReg: ValuesAfterColl
    0x11: 0x3F,  # ModeReg: CRC preset 0xFFFF
    0x12: 0x00,
    0x13: 0x00,
    0x14: 0x80,  # TxControlReg: antenna off
    0x15: 0x00,  # TxASKReg: no Force100ASK
    0x24: 0x26,
    0x2A: 0x00,  # TModeReg: TAuto off
}

_PRESETS = (0x0000, 0x6363, 0xA671, 0xFFFF)


class BusError(Exception):
    """The driver broke the SPI protocol (CS high during a transfer, bad address byte)."""


def crc16_a(data, n=None, preset=0x6363):
    """ISO 14443-3 CRC_A (CRC-16/ISO-IEC-14443-3-A) of data[:n]."""
    crc = preset
    if n is None:
        n = len(data)
    for i in range(n):
        b = data[i] ^ (crc & 0xFF)
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    return crc


def with_crc(frame):
    crc = crc16_a(frame)
    return bytes(frame) + bytes((crc & 0xFF, crc >> 8))


class Card:
    """An ISO 14443A PICC with a 4-, 7- or 10-byte UID."""

    IDLE = 0
    READY = 1
    ACTIVE = 2
    HALT = 3

    def __init__(self, uid, sak=None, corrupt_bcc_level=None, corrupt_sak_crc=False):
        uid = bytes(uid)
        assert len(uid) in (4, 7, 10)
        self.uid = uid
        # NTAG21x (7 bytes) answers SAK 0x00; a 4-byte MIFARE Classic 1K answers 0x08.
        self.sak = (0x08 if len(uid) == 4 else 0x00) if sak is None else sak
        self.corrupt_bcc_level = corrupt_bcc_level
        self.corrupt_sak_crc = corrupt_sak_crc
        self.state = Card.IDLE
        self.level = 0
        self.selected_count = 0
        self.halted_count = 0

    def levels(self):
        u = self.uid
        if len(u) == 4:
            return [u]
        if len(u) == 7:
            return [b"\x88" + u[0:3], u[3:7]]
        return [b"\x88" + u[0:3], b"\x88" + u[3:6], u[6:10]]

    def atqa(self):
        size = {4: 0x00, 7: 0x40, 10: 0x80}[len(self.uid)]
        return bytes((size | 0x04, 0x00))

    def power_off(self):
        self.state = Card.IDLE
        self.level = 0

    def _drop(self):
        # ISO 14443-3: an unexpected frame sends a READY card back to IDLE (HALT stays HALT).
        if self.state != Card.HALT:
            self.state = Card.IDLE
        self.level = 0

    def receive(self, frame, bits):
        """Answer one frame (``bits`` valid bits in the last byte, 0 = 8); None = silence."""
        if len(frame) == 1 and bits == 7:
            cmd = frame[0]
            if cmd == 0x26 and self.state == Card.IDLE or cmd == 0x52 and self.state in (Card.IDLE, Card.HALT):
                self.state = Card.READY
                self.level = 0
                return self.atqa()
            # REQA/WUPA in READY or ACTIVE is unexpected: back to IDLE, silently.
            self._drop()
            return None
        if bits != 0:
            self._drop()
            return None
        if len(frame) == 4 and frame[0] == 0x50 and frame[1] == 0x00:
            if crc16_a(frame, 2) != frame[2] | (frame[3] << 8):
                return None
            if self.state == Card.ACTIVE:
                self.state = Card.HALT
                self.halted_count += 1
            return None
        if self.state != Card.READY:
            if self.state == Card.ACTIVE:
                self.state = Card.IDLE
            return None
        sel = 0x93 + 2 * self.level
        cl = self.levels()[self.level]
        bcc = cl[0] ^ cl[1] ^ cl[2] ^ cl[3]
        if len(frame) == 2 and frame[0] == sel and frame[1] == 0x20:
            if self.corrupt_bcc_level == self.level:
                bcc ^= 0x01
            return cl + bytes((bcc,))
        if len(frame) == 9 and frame[0] == sel and frame[1] == 0x70:
            if crc16_a(frame, 7) != frame[7] | (frame[8] << 8):
                self._drop()
                return None
            if bytes(frame[2:6]) != cl or frame[6] != bcc:
                self._drop()  # another card was selected
                return None
            last = self.level == len(self.levels()) - 1
            sak = self.sak if last else 0x04
            answer = bytearray(with_crc(bytes((sak,))))
            if self.corrupt_sak_crc:
                answer[2] ^= 0x40
            if last:
                self.state = Card.ACTIVE
                self.selected_count += 1
            else:
                self.level += 1
            return bytes(answer)
        self._drop()
        return None


class Chip:
    """The MFRC522 itself: registers, 64-byte FIFO, commands, and the RF field with its cards."""

    def __init__(self, version=0x92):
        self.version = version
        self.regs = bytearray(64)
        self.fifo = bytearray()
        self.cards = []
        self.frames = []  # every frame sent to the air, as (bytes, bits)
        self.dead = False  # MISO floats high: every read is 0xFF
        self.stuck = False  # commands never finish (no IRQ bits ever)
        self.reset_polls = 0  # reads of CommandReg that still show PowerDown after SoftReset
        self.parity_noise = False
        self._soft_reset()
        self.regs[0x37] = version
        # SPI transaction state
        self._active = False
        self._first = True
        self._read_mode = False
        self._addr = 0
        self.transactions = 0

    # -- the RF field ---------------------------------------------------------------

    def enter(self, card):
        self.cards.append(card)
        return card

    def leave(self, card):
        self.cards.remove(card)
        card.power_off()

    # -- SPI ------------------------------------------------------------------------

    def cs_changed(self, level):
        if level == 0:
            self._active = True
            self._first = True
            self.transactions += 1
        else:
            self._active = False

    def exchange(self, mosi):
        """One byte on the bus while CS is low; returns MISO."""
        if not self._active:
            raise BusError("SPI transfer while CS is high")
        if self._first:
            self._first = False
            if mosi & 0x01:
                raise BusError("address byte 0x%02X has bit 0 set" % mosi)
            self._read_mode = bool(mosi & 0x80)
            self._addr = (mosi >> 1) & 0x3F
            return 0x00
        if self._read_mode:
            out = self.read_reg(self._addr)
            if mosi & 0x80:
                self._addr = (mosi >> 1) & 0x3F
            return out
        self.write_reg(self._addr, mosi)
        return 0x00

    # -- registers ------------------------------------------------------------------

    def _soft_reset(self):
        for i in range(64):
            self.regs[i] = 0
        for reg, value in _RESET_VALUES.items():
            self.regs[reg] = value
        self.regs[0x37] = self.version
        self.fifo = bytearray()

    def read_reg(self, reg):
        if self.dead:
            return 0xFF
        if reg == 0x09:
            if not self.fifo:
                return 0x00
            b = self.fifo[0]
            self.fifo = self.fifo[1:]
            return b
        if reg == 0x0A:
            return len(self.fifo)
        if reg == 0x01 and self.reset_polls > 0:
            self.reset_polls -= 1
            return self.regs[0x01] | 0x10
        return self.regs[reg]

    def write_reg(self, reg, value):
        if reg == 0x37:
            return
        if reg == 0x09:
            if len(self.fifo) >= 64:
                self.regs[0x06] |= 0x10  # BufferOvfl
            else:
                self.fifo.append(value)
            return
        if reg == 0x0A:
            if value & 0x80:
                self.fifo = bytearray()
                self.regs[0x06] &= ~0x10 & 0xFF
            return
        if reg in (0x04, 0x05):
            if value & 0x80:
                self.regs[reg] |= value & 0x7F
            else:
                self.regs[reg] &= ~value & 0x7F
            return
        if reg == 0x0E:
            self.regs[reg] = (self.regs[reg] & 0x7F) | (value & 0x80)
            return
        if reg == 0x01:
            self._command(value)
            return
        self.regs[reg] = value
        if reg == 0x0D and value & 0x80 and (self.regs[0x01] & 0x0F) == _CMD_TRANSCEIVE:
            self._transmit()

    # -- commands -------------------------------------------------------------------

    def _command(self, value):
        cmd = value & 0x0F
        self.regs[0x01] = value & 0x3F
        if cmd == _CMD_SOFT_RESET:
            self._soft_reset()
            return
        if cmd in (_CMD_CALC_CRC, _CMD_TRANSCEIVE):
            self.regs[0x06] = 0  # ErrorReg clears when a command starts
        if cmd == _CMD_CALC_CRC:
            if self.stuck:
                return
            crc = crc16_a(self.fifo, len(self.fifo), _PRESETS[self.regs[0x11] & 0x03])
            self.fifo = bytearray()
            self.regs[0x21] = crc >> 8
            self.regs[0x22] = crc & 0xFF
            self.regs[0x05] |= 0x04  # CRCIRq

    def _transmit(self):
        bits = self.regs[0x0D] & 0x07
        frame = bytes(self.fifo)
        self.fifo = bytearray()
        self.frames.append((frame, bits))
        if self.stuck:
            return
        self.regs[0x04] |= 0x40  # TxIRq
        heard = (self.regs[0x14] & 0x03) == 0x03 and self.regs[0x15] & 0x40
        answers = []
        if heard:
            for card in self.cards:
                a = card.receive(frame, bits)
                if a is not None:
                    answers.append(a)
        if not answers:
            if self.regs[0x2A] & 0x80:  # TAuto: the timer runs after transmission
                self.regs[0x04] |= 0x01  # TimerIRq
            return
        length = max(len(a) for a in answers)
        combined = bytearray(length)
        coll = 0
        for i in range(length):
            for j in range(8):
                values = set()
                for a in answers:
                    if i < len(a):
                        values.add((a[i] >> j) & 1)
                if len(values) > 1 and not coll:
                    coll = i * 8 + j + 1
                if 1 in values:
                    combined[i] |= 1 << j
        self.fifo = combined
        self.regs[0x0C] = (self.regs[0x0C] & 0xF8) | 0  # RxLastBits: whole bytes
        self.regs[0x04] |= 0x20 | 0x10  # RxIRq, IdleIRq
        if self.parity_noise:
            self.regs[0x06] |= 0x02
            self.regs[0x04] |= 0x02
        if coll:
            self.regs[0x06] |= 0x08  # CollErr
            self.regs[0x04] |= 0x02  # ErrIRq
            pos = (coll & 0x1F) if coll <= 32 else 0x20  # 32 reads as 0; beyond is not valid
            self.regs[0x0E] = (self.regs[0x0E] & 0x80) | pos


class FakeSPI:
    """``machine.SPI`` stand-in wired to a ``Chip``; CS is a FakePin that tells the chip.

    Set ``heap_guard`` while the test holds ``micropython.heap_lock()``: the model (which
    allocates freely) then runs unlocked, so only the driver's own code is held to
    "no allocation".
    """

    def __init__(self, chip):
        self.chip = chip
        self.heap_guard = False

    def _enter(self):
        if self.heap_guard:
            _mp.heap_unlock()

    def _leave(self):
        if self.heap_guard:
            _mp.heap_lock()

    def write(self, buf):
        self._enter()
        try:
            for b in buf:
                self.chip.exchange(b)
        finally:
            self._leave()

    def write_readinto(self, wbuf, rbuf):
        self._enter()
        try:
            if len(wbuf) != len(rbuf):
                raise ValueError("buffers differ in length")
            for i in range(len(wbuf)):
                rbuf[i] = self.chip.exchange(wbuf[i])
        finally:
            self._leave()

    def readinto(self, buf, write=0x00):
        self._enter()
        try:
            for i in range(len(buf)):
                buf[i] = self.chip.exchange(write)
        finally:
            self._leave()


def make_reader_bus(version=0x92):
    """Return (chip, spi, cs, rst) wired together."""
    from fakes.pins import FakePin

    chip = Chip(version)
    cs = FakePin(1, on_change=chip.cs_changed)
    rst = FakePin(1)
    return chip, FakeSPI(chip), cs, rst
