# cardshoe firmware entry point: the board runs this file at boot (it stays .py).
# Everything else is compiled to .mpy by `cardshoe flash`; see firmware/README.md.
#
# Nothing on the line may stop the shoe (firmware/README.md, "Boot"). Until
# kbd_intr(-1) has run, a 0x03 from the host raises KeyboardInterrupt wherever the code
# is (the USB stack looks at every byte it receives), so that is the first thing done;
# the watchdog is the second, before anything is loaded that could block or raise.
# Never the REPL after a crash ("Crash"): an exception out of the boot or the loop is
# written to data/crash.bin and the board resets at once. The ways to the REPL are
# deliberate: a dealer key held at boot, and the host's MAINTENANCE.
# (This file is compiled on the board at every boot and its code kept: keep it small.)
import micropython


def _off():
    # One KeyboardInterrupt scheduled just before kbd_intr(-1) is raised at the next
    # jump, the `if`, inside the `try`, after kbd_intr(-1) ran (a call raises nothing
    # pending): so at most one, and none after it, as ^C is data by then. No retry by
    # recursion (firmware/README.md, "Stack").
    try:
        micropython.kbd_intr(-1)
        if micropython:
            return
    except:  # noqa: E722
        micropython.kbd_intr(-1)


_off()
import machine  # noqa: E402

if hasattr(machine, "WDT"):  # not on the bare unix port of the firmware tests
    machine.WDT(timeout=8000)  # both chips allow it (RP2040 8388 ms, RP2350 16777); fed by the loop only
del machine
import gc  # noqa: E402
import sys  # noqa: E402


def main():
    import boards

    board = boards.load()  # drops the package's loader; the board's own module stays
    del boards
    board.wdt_start(8000)  # takes over the watchdog armed above
    gc.collect()
    why = "key held"
    if not board.key_held():
        from app import run

        shoe = run.boot(board)  # hashes the firmware, boots, loads the streaming code; drops app.run
        del run
        gc.collect()
        if shoe is None:
            why = "not provisioned"
        elif shoe is False:
            why = None  # the boot could not be counted: app/run.py halted the board
        else:
            shoe.run()  # until the host's MAINTENANCE
            why = "maintenance"
    # A deliberate stop: the watchdog off, Ctrl-C back on, the REPL for mpremote.
    if why:
        board.close()
        print("cardshoe: REPL,", why)
    micropython.kbd_intr(3)


def _crash(e):
    # The boot or the loop has unwound: the shoe's objects are garbage, and a collection
    # gives back the heap the record's file needs (even after a MemoryError). Whatever
    # fails here, the board resets: never the REPL, which would read the host's frames
    # as code (issue 26).
    try:
        gc.collect()
        from app import crash

        crash.record(e)
    except BaseException:  # noqa: B036
        pass
    import machine

    machine.reset()


try:
    for _p in ("/lib", "lib"):
        if _p not in sys.path:
            sys.path.append(_p)
    # `import machine` looked for a machine.py on the flash first (an extensible module):
    # its garbage goes before the arena is made, or the arena would sit above holes.
    gc.collect()
    # First: the arena of the app's buffers, before other modules fragment the heap.
    from app import mem  # noqa: F401

    main()
except BaseException as _e:  # noqa: B036
    _crash(_e)
