"""Boot the shoe on a board: hash the firmware, boot, load the streaming code.

The order is chosen for a small heap (firmware/README.md, "Memory"): the boot-only
code (the firmware hash, then the boot) is loaded, run and dropped before the rest of
the shoe's code is loaded, one module at a time with a collection after each; `boot()`
drops this module too before the shoe streams.
"""

import gc
import os
import sys

# The streaming shoe's modules in dependency order (app.shoe imports them all).
_MODULES = ("wire", "app.outbox", "app.link", "app.shoe")


def _drop(name):
    sys.modules.pop("app." + name, None)
    import app

    try:
        delattr(app, name)
    except (AttributeError, KeyError):  # never loaded (MicroPython raises KeyError then)
        pass
    gc.collect()


def firmware_hash(root):
    """The firmware hash, with app/fwhash.py loaded only for it (boot-only code)."""
    from app import fwhash

    try:
        return fwhash.firmware_hash(root)
    finally:
        del fwhash
        _drop("fwhash")


def load_shoe():
    """Import the shoe's modules one at a time, collecting after each; returns `Shoe`.

    Loading a .mpy leaves garbage (read buffers, the qstr pool it outgrew) that would
    otherwise be left between the modules' code and fragment a small heap.
    """
    gc.collect()
    for name in _MODULES:
        __import__(name)
        gc.collect()
    from app.shoe import Shoe

    return Shoe


def boot_shoe(board, fw, t0=None):
    """Boot (app/boot.py, then dropped) and build the Shoe; None when not provisioned.
    `t0`: the ticks_ms the shoe's clock counts from (default now; app/run.py `_boot`
    passes the boot's start, before the board's hardware started)."""
    import time

    if t0 is None:
        t0 = time.ticks_ms()
    from app.deck import Deck
    from app.store import Store

    gc.collect()
    st = Store(board.root)
    deck = Deck()
    from app import boot

    try:
        ok = boot.boot(st, deck)
    finally:
        del boot
        _drop("boot")
    if not ok:
        return None
    crash = None
    try:
        os.stat(st.dir + "crash.bin")  # (most boots: app/crash.py is not even loaded)
    except OSError:
        pass
    else:
        from app import crash as record  # the last boot's crash, reported once

        crash = record.take(st.dir)
        del record
        _drop("crash")
    Shoe = load_shoe()
    if board.readers & 2:  # a barcode reader fitted: its parser too (app/deck.py on_barcode)
        __import__("app.barcode")
        gc.collect()
    shoe = Shoe(board, fw, st, deck, t0=t0)
    if crash is not None:  # for the CRASH frame after HELLO (Shoe.hello): the staging table is free
        stage = shoe._stage
        for i in range(len(crash)):
            stage[i] = crash[i]
        from app import mem

        mem.ctx[6] = 1
    gc.collect()
    return shoe


def boot(board):
    """Hash the firmware, start the board, boot the shoe; returns the Shoe (None when not
    provisioned, False when halted). Drops this module (boot-only) before it returns;
    main.py then streams with `shoe.run()`."""
    try:
        return _boot(board)
    finally:
        _drop("run")


def _boot(board):
    import time

    from app import mem

    t0 = time.ticks_ms()  # the shoe's time origin: before the board's hardware can stamp an event
    mem.root = board.root  # where a crash record goes (app/crash.py)
    fw = firmware_hash(board.root)
    board.start()
    from app.store import StorageError

    try:
        return boot_shoe(board, fw, t0)
    except StorageError as e:
        # The boot could not be counted in flash: no frame may be sent (AGCO 6.1.8, SPEC
        # 3.3). The LED is lit before close() for a board that reports it (the bench) and
        # after it for one whose close() turns it off (the Pico); the REPL stays, for reflash.
        board.led(2)
        board.close()
        board.led(2)
        print("cardshoe: not streaming:", e)
        return False
