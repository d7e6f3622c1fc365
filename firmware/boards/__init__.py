"""The hardware layer: one module per board, chosen here at boot.

`load()` returns the `Board` of the board this firmware runs on: `CARDSHOE_BOARD`
from the environment when the port has one (the virtual board sets `unix`),
otherwise by `sys.platform` (`rp2` is the Pico). The board interface every
`boards/<name>.py` implements is documented in `boards/unix.py`.

Only modules in this package may import `machine`; the application never does.
"""

import sys

# Event codes returned by Board.poll() (the same numbers in every board).
EV_NONE = 0
EV_RFID = 1
EV_BARCODE = 2
EV_EXIT = 3
EV_KEY = 4
EV_FAULT = 5


def _name():
    try:
        import os

        name = os.getenv("CARDSHOE_BOARD")
        if name:
            return name
    except (ImportError, AttributeError):
        pass
    if sys.platform == "rp2":
        return "pico"
    return "unix"


def load():
    """Construct the board this firmware runs on (hardware is opened by `start()`).

    Boot-only: this package is dropped from sys.modules (the board's own module stays,
    held by the board), so that its code goes back to the heap once main.py lets go."""
    name = _name()
    if name == "pico":
        from boards.pico import Board
    elif name == "unix":
        from boards.unix import Board
    else:
        raise ValueError("unknown board " + name)
    sys.modules.pop("boards", None)
    return Board()
