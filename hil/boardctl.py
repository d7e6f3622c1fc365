"""Driving a running `cardshoe hil board` from another shell: its control socket.

`cardshoe hil board` holds the virtual board in its own process (the firmware's sim
channel is a socket that process listens on), so other commands reach it through
`<workdir>/control.sock`, a UNIX stream socket it serves while it runs. The protocol is
one ASCII line per command and one answer line per command, in order:

    client -> board   the same lines as on the board's stdin: a sim line (`barcode TEXT`,
                      `exit`, `key deal_complete`, ...) or a board command (`!cut`, `!on`, ...)
    board -> client   `ok` or `error: WHY`

`cardshoe hil deal`, `cardshoe hil key` and `cardshoe hil barcode` (in `cardshoe.hil.cli`)
build their lines with the functions here: dealing a card is presenting its printed barcode
to the shoe's reader (`make_barcode`, protocol/SPEC.md section 6), then the exit sensor.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from pathlib import Path
from typing import Callable

from cardshoe.cards import CardError, parse_card
from cardshoe.protocol import make_barcode

#: The socket's name in the board's work folder.
CONTROL_NAME = "control.sock"
#: A UNIX socket path is at most this many bytes (sun_path less its NUL).
_UNIX_SOCKET_PATH_MAX = 107
_MAX_LINE = 4096
#: What stands for a card the reader cannot read (a covered barcode): the exit sensor alone.
UNREAD = "-"


class BoardControlError(RuntimeError):
    """No board answers at the folder given, or it refused a command (the message says which)."""


def dealing_lines(cards: list[str], deck_id: int) -> list[str]:
    """The sim lines that deal `cards` (card texts such as "As", or UNREAD) from deck
    `deck_id`: each card's barcode read, then the exit sensor. ValueError names a bad card."""
    lines: list[str] = []
    for text in cards:
        if text == UNREAD:
            lines.append("exit")
            continue
        try:
            code = parse_card(text)
        except CardError as exc:
            raise ValueError(f"card {text!r}: {exc} (or {UNREAD!r} for a card the reader cannot read)") from exc
        lines += [f"barcode {make_barcode(deck_id, code)}", "exit"]
    return lines


class ControlServer:
    """Serve `handle(line) -> answer` on `<workdir>/control.sock` on a thread until `close()`."""

    def __init__(self, workdir: Path, handle: Callable[[str], str]) -> None:
        self.workdir = Path(workdir)
        self.path = self.workdir / CONTROL_NAME
        self._handle = handle
        self._lock = threading.Lock()  # one command at a time reaches the board, in order
        self._short_dir: str | None = None
        listen_at = self.path
        if self.path.is_symlink() or self.path.exists():
            self.path.unlink()  # left by a board that was killed
        if len(os.fsencode(str(self.path))) > _UNIX_SOCKET_PATH_MAX:
            # Deep work folders (pytest's tmp_path) overflow sun_path: listen in a short
            # private folder and leave a symlink where clients look.
            self._short_dir = tempfile.mkdtemp(prefix="vbctl-", dir="/tmp")
            listen_at = Path(self._short_dir) / CONTROL_NAME
            os.symlink(listen_at, self.path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(listen_at))
        os.chmod(listen_at, 0o600)  # whoever can deal cards into the table: the board's owner only
        self._sock.listen(4)
        self._listen_at = listen_at
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="vboard-control", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as stream:
            while True:
                raw = stream.readline(_MAX_LINE + 1)  # bounded: a line never grows without end
                if not raw:
                    return
                if len(raw) > _MAX_LINE:
                    stream.write(f"error: a line is at most {_MAX_LINE} bytes\n".encode())
                    stream.flush()
                    return
                line = raw.decode("ascii", "replace").rstrip("\r\n")
                with self._lock:
                    answer = self._handle(line)
                stream.write(answer.encode("ascii", "replace") + b"\n")
                stream.flush()

    def close(self) -> None:
        """Stop serving and remove the socket (and its symlink)."""
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        for p in (self.path, self._listen_at):
            if p.is_symlink() or p.exists():
                p.unlink()
        if self._short_dir is not None:
            os.rmdir(self._short_dir)


def send(board_dir: Path, lines: list[str], timeout: float = 30.0) -> None:
    """Send `lines` to the board running in `board_dir`, each answered before the next is sent;
    BoardControlError on no board there or on the first refusal."""
    path = Path(board_dir) / CONTROL_NAME
    if not (path.exists() or path.is_symlink()):
        raise BoardControlError(f"no virtual board runs in {board_dir} (no {CONTROL_NAME} there); "
                                f"start one with `cardshoe hil board --workdir {board_dir} --flash`")
    target = os.path.realpath(path)  # the short socket path when the folder is deep
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except OSError as exc:
        sock.close()
        raise BoardControlError(f"the virtual board in {board_dir} does not answer on {path}: {exc}") from exc
    with sock, sock.makefile("rwb") as stream:
        for done, line in enumerate(lines):
            # Past the first line, say how far it got: the lines before this one were carried out.
            where = f" (after {done} of {len(lines)} lines were carried out)" if done else ""
            try:
                stream.write(line.encode("ascii") + b"\n")
                stream.flush()
                answer = stream.readline(_MAX_LINE + 1).decode("ascii", "replace").rstrip("\n")
            except OSError as exc:
                raise BoardControlError(f"the virtual board in {board_dir} stopped answering at {line!r}{where}: {exc}") from exc
            if not answer:
                raise BoardControlError(f"the virtual board in {board_dir} closed the connection at {line!r}{where}")
            if answer != "ok":
                raise BoardControlError(f"the virtual board refused {line!r}{where}: {answer.removeprefix('error: ')}")
