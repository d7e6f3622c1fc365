"""A stand-in `machine` module of an RP2040 for testing boards/pico.py on the unix port.

Pins, SPI, UART and the watchdog cannot exist here. This module is put first on
sys.path (its own directory, so no other test sees it) and records what the board
builds: `pins[id]` (FakePin subclasses with the constructor arguments), `spis`,
`uarts`, `wdts`, and writes to `mem32`. The SPI bus is wired to the MFRC522 register
model, so the board's reader runs against it; a UART is a FakeUART (`feed`).
"""

from fakes.pins import FakePin
from fakes.uart import FakeUART
from fakes.mfrc522_chip import Chip, FakeSPI

PWRON_RESET = 1
WDT_RESET = 3

_cause = [PWRON_RESET]
pins = {}
initial_levels = {}  # pin id -> level the outside world holds it at when built
spis = []
uarts = []
wdts = []
mem32_writes = []
chip = Chip(0x92)


def reset_cause():
    return _cause[0]


def set_reset_cause(c):
    _cause[0] = c


def idle():
    pass


class Pin(FakePin):
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, id, mode=-1, pull=-1, *, value=None):
        initial = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            initial = 1 if value else 0
        elif id in initial_levels:
            initial = initial_levels[id]
        on_change = None
        if id == 17:  # the MFRC522's chip select, as wired in boards/pico.py
            on_change = chip.cs_changed
        super().__init__(initial, on_change=on_change)
        self.id = id
        self.mode = mode
        self.pull = pull
        pins[id] = self

    def irq(self, handler=None, trigger=0, hard=False):
        return super().irq(handler, trigger, hard)


def disable_irq():
    """Interrupts off, as rp2_flash.c does around an erase or program: pin edges latch."""
    Pin.irqs_off()
    return 1


def enable_irq(state=1):
    Pin.irqs_on()


class SPI(FakeSPI):
    MSB = 0
    LSB = 1

    def __init__(self, id, baudrate=1000000, *, polarity=0, phase=0, bits=8, firstbit=0, sck=None, mosi=None, miso=None):
        super().__init__(chip)
        self.id = id
        self.baudrate = baudrate
        self.polarity = polarity
        self.phase = phase
        self.bits = bits
        self.firstbit = firstbit
        self.sck = sck
        self.mosi = mosi
        self.miso = miso
        self.deinited = False
        spis.append(self)

    def deinit(self):
        self.deinited = True


class UART(FakeUART):
    def __init__(self, id, baudrate=115200, *, bits=8, parity=None, stop=1, tx=None, rx=None, timeout=0, timeout_char=0, rxbuf=256):
        super().__init__()
        self.id = id
        self.baudrate = baudrate
        self.bits = bits
        self.parity = parity
        self.stop = stop
        self.tx = tx
        self.rx = rx
        self.timeout = timeout
        self.rxbuf = rxbuf
        self.deinited = False
        uarts.append(self)

    def deinit(self):
        self.deinited = True


wdt_max = [8388]  # the chip's machine.WDT maximum (RP2040; 16777 on the RP2350)


class WDT:
    def __init__(self, id=0, timeout=5000):
        if timeout > wdt_max[0]:
            raise ValueError("rp2 watchdog timeout above the chip's maximum")
        self.timeout = timeout
        self.feeds = 0
        wdts.append(self)

    def feed(self):
        self.feeds += 1


class _Mem32:
    def __getitem__(self, addr):
        return 0

    def __setitem__(self, addr, value):
        mem32_writes.append((addr, value))


mem32 = _Mem32()
