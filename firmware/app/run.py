"""Start the shoe on a board: hash, boot, stream; return to the REPL on MAINTENANCE."""

import gc


def start(board):
    """Run the shoe on `board` until the host asks for maintenance."""
    from app.fwhash import firmware_hash
    from app.shoe import Shoe

    fw = firmware_hash(board.root)
    gc.collect()

    shoe = Shoe(board, fw)
    board.start()
    if not shoe.boot():
        board.close()
        print("cardshoe: not provisioned (no data/ident.bin): run `cardshoe flash`")
        return None
    gc.collect()
    try:
        shoe.run()
    finally:
        board.close()
    return shoe
