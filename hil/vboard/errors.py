"""The virtual board's exception types."""

from __future__ import annotations


class VirtualBoardError(Exception):
    """Base of every error raised by the virtual board."""


class MicroPythonNotFound(VirtualBoardError):
    """No `micropython` executable next to this Python or on PATH (install the test extras)."""


class BoardStateError(VirtualBoardError):
    """A bench operation that does not fit the board's state (power on twice, closed board...)."""


class FlashError(VirtualBoardError):
    """The flash image could not be created, mounted or accessed."""


class FlashBusy(FlashError):
    """Offline access to the flash image while the board is powered (it would corrupt it)."""


class SimNotConnected(VirtualBoardError):
    """A sim event was sent while no firmware is connected to the sim socket."""


class SimTimeout(VirtualBoardError, TimeoutError):
    """The firmware did not send the awaited sim line in time."""


class SimProtocolError(VirtualBoardError):
    """The firmware sent a sim line that does not follow INTERFACES.md."""
