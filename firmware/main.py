# cardshoe firmware entry point: the board runs this file at boot (it stays .py).
# Everything else is compiled to .mpy by `cardshoe flash`; see firmware/README.md.
import sys

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


def main():
    import gc

    import boards

    board = boards.load()
    del boards
    _forget("boards")  # the package's loader; the board's own module stays in use
    gc.collect()
    if board.key_held():
        print("cardshoe: key held at boot, staying in the REPL")
        return
    from app import run

    shoe = run.boot(board)  # hashes the firmware, boots, loads the streaming code
    del run
    _forget("app.run")
    gc.collect()
    if shoe is False:  # the boot could not be counted, the board is halted (app/run.py)
        return
    if shoe is None:
        board.close()
        print("cardshoe: not provisioned (no data/ident.bin): run `cardshoe flash`")
        return
    shoe.run()  # until the host's MAINTENANCE: then the REPL, for mpremote
    # Only then: an exception out of the loop leaves the board as it is, its watchdog
    # running and unfed, so the board restarts from its saved state instead of sitting
    # at the REPL (the unix port has no watchdog: there the process stops).
    board.close()


main()
