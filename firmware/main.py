# cardshoe firmware entry point: the board runs this file at boot (it stays .py).
# Everything else is compiled to .mpy by `cardshoe flash`; see firmware/README.md.
#
# Nothing on the line may stop the shoe (firmware/README.md, "Boot"). Until
# kbd_intr(-1) has run, a 0x03 from the host raises KeyboardInterrupt wherever the code
# is (the USB stack looks at every byte it receives), so that is the first thing done;
# the watchdog is the second, before anything is loaded that could block or raise: from
# then on a boot that fails or hangs ends in a reset, never at the REPL. The ways back
# to the REPL are deliberate: a dealer key held at boot, and the host's MAINTENANCE.
import micropython


def _ctrl_c_off():
    # One KeyboardInterrupt scheduled just before kbd_intr(-1) is raised at the next
    # jump: the `if`, inside the `try`. A bare `except` has no test (a jump) where a
    # second one could escape; each retry runs under its own `try`.
    try:
        micropython.kbd_intr(-1)
        if micropython:
            return
    except:  # noqa: E722
        return _ctrl_c_off()


_ctrl_c_off()
_WDT_MS = 8000  # within machine.WDT's range on both chips (RP2040 8388 ms, RP2350 16777)


def _watchdog():
    try:
        from machine import WDT
    except ImportError:
        return  # a port without one (the unix port under the firmware tests)
    WDT(timeout=_WDT_MS)  # the board's wdt_start() takes it over; fed by the main loop only


_watchdog()
import sys  # noqa: E402

for _p in ("/lib", "lib"):
    if _p not in sys.path:
        sys.path.append(_p)

# First: the arena of the app's buffers, before other modules fragment the heap.
from app import mem  # noqa: E402


def _forget(name):
    # Boot-only code: drop the module (and its package's reference to it) so the
    # collector can take its bytecode back.
    sys.modules.pop(name, None)
    if name == "app.run":
        import app

        try:
            del app.run
        except AttributeError:
            pass


def _to_repl(board, why):
    # A deliberate stop: the watchdog off (or the REPL would be reset), Ctrl-C back on.
    board.close()
    micropython.kbd_intr(3)
    print("cardshoe:", why)


def main():
    import gc

    import boards

    board = boards.load()
    board.wdt_start(_WDT_MS)
    del boards
    _forget("boards")  # the package's loader; the board's own module stays in use
    gc.collect()
    if board.key_held():
        _to_repl(board, "key held at boot, staying in the REPL")
        return
    from app import run

    shoe = run.boot(board)  # hashes the firmware, boots, loads the streaming code
    del run
    _forget("app.run")
    gc.collect()
    if shoe is False:  # the boot could not be counted, the board is halted (app/run.py)
        micropython.kbd_intr(3)
        return
    if shoe is None:
        _to_repl(board, "not provisioned (no data/ident.bin): run `cardshoe flash`")
        return
    shoe.run()  # until the host's MAINTENANCE: then the REPL, for mpremote
    # Only then: an exception out of the boot or the loop leaves the board as it is, its
    # watchdog running and unfed, so the board restarts from its saved state instead of
    # sitting at the REPL.
    _to_repl(board, "maintenance: at the REPL (reset or power-cycle to stream again)")


main()
