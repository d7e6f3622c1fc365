# cardshoe firmware entry point: the board runs this file at boot (it stays .py).
# Everything else is compiled to .mpy by `cardshoe flash`; see firmware/README.md.
import sys

for _p in ("/lib", "lib"):
    if _p not in sys.path:
        sys.path.append(_p)

# First: the arena of the app's buffers, before other modules fragment the heap.
from app import mem  # noqa: E402


def main():
    import boards

    board = boards.load()
    if board.key_held():
        print("cardshoe: key held at boot, staying in the REPL")
        return
    import app.fwhash
    import app.shoe
    from app import run

    mem.release()
    run.start(board)


main()
