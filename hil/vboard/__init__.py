"""The virtual board: the MicroPython unix port as a Pico on a USB serial port.

`VirtualBoard(workdir)` gives the host a serial device (`<workdir>/tty`), a littlefs2
flash image that survives power cycles (`board.flash`), the bench operations (power on,
off and cut, reset, unplug and replug) and the sim channel of INTERFACES.md
(`board.sim`). See README.md in this folder for how it works and how it differs from a Pico.
"""

from .board import SOFT_REBOOT, VirtualBoard
from .errors import (
    BoardStateError,
    FlashBusy,
    FlashError,
    MicroPythonNotFound,
    SimNotConnected,
    SimProtocolError,
    SimTimeout,
    VirtualBoardError,
)
from .flash import PICO_BLOCK_SIZE, PICO_FLASH_SIZE, FlashEntry, FlashImage, FlashStatus, FlashWear, find_micropython
from .sim import KEYS, LED_STATES, Sim

__all__ = [
    "KEYS",
    "LED_STATES",
    "PICO_BLOCK_SIZE",
    "PICO_FLASH_SIZE",
    "SOFT_REBOOT",
    "BoardStateError",
    "FlashBusy",
    "FlashEntry",
    "FlashError",
    "FlashImage",
    "FlashStatus",
    "FlashWear",
    "MicroPythonNotFound",
    "Sim",
    "SimNotConnected",
    "SimProtocolError",
    "SimTimeout",
    "VirtualBoard",
    "VirtualBoardError",
    "find_micropython",
]
