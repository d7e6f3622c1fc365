"""The virtual board, end to end with real parts: the MicroPython unix port on real
pseudo-terminals, the real mpremote, real littlefs images, a real UNIX socket.

The programs deployed are tiny test main.py files (the firmware is tested elsewhere).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
import serial

from cardshoe.hil.vboard import (
    SOFT_REBOOT,
    BoardStateError,
    FlashBusy,
    FlashError,
    SimNotConnected,
    VirtualBoard,
)

from vboard_helpers import MpRemote

# A main.py that counts its runs in the flash (the count survives power cycles).
COUNTING_MAIN = """\
try:
    with open("boots.txt") as f:
        n = int(f.read()) + 1
except OSError:
    n = 1
with open("boots.tmp", "w") as f:
    f.write(str(n))
import os
os.rename("boots.tmp", "boots.txt")
print("main run %d" % n)
"""

# The firmware side of the sim channel, reduced to an echo: say ready with the run count,
# then answer every bench line with `echo <line>`.
ECHO_SIM_MAIN = COUNTING_MAIN + """\
import socket, struct
path = os.getenv("CARDSHOE_SIM")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(struct.pack("H", socket.AF_UNIX) + path.encode())
s.send(b"ready %d\\n" % n)
buf = b""
while True:
    data = s.recv(256)
    if not data:
        break
    buf += data
    while b"\\n" in buf:
        line, buf = buf.split(b"\\n", 1)
        s.send(b"echo " + line + b"\\n")
        if line == b"key new_round":
            s.send(b"led blink\\n")
"""


def write_main(tmp_path: Path, source: str) -> str:
    path = tmp_path / "main.py"
    path.write_text(source)
    return str(path)


def boot_count(mpremote: MpRemote) -> int:
    return int(mpremote("exec", "print(open('boots.txt').read())").strip())


def test_mpremote_copy_then_power_cycle_runs_main(board: VirtualBoard, mpremote: MpRemote, tmp_path: Path) -> None:
    board.power_on()
    mpremote("fs", "cp", write_main(tmp_path, COUNTING_MAIN), ":main.py")
    board.power_off()
    assert board.flash.read("/main.py").decode() == COUNTING_MAIN  # it landed in the image
    mark = board.output_mark()
    board.power_on()
    board.wait_output(b"main run 1", timeout=10, since=mark)
    board.power_off()
    assert board.flash.read("/boots.txt") == b"1"  # main.py ran at boot, once
    board.power_on()
    # mpremote soft-resets into the raw REPL, where a board does not run main.py.
    assert boot_count(mpremote) == 2


def test_fs_ls_exec_and_import_from_lib(board: VirtualBoard, mpremote: MpRemote, tmp_path: Path) -> None:
    board.power_on(safe_boot=True)
    module = tmp_path / "shoe_const.py"
    module.write_text("DECKS = 6\n")
    mpremote("fs", "mkdir", ":lib")
    mpremote("fs", "cp", str(module), ":lib/shoe_const.py")
    listing = mpremote("fs", "ls", ":lib")
    assert "shoe_const.py" in listing
    assert "lib/" in mpremote("fs", "ls")
    assert mpremote("exec", "import shoe_const; print(shoe_const.DECKS * 52)").strip() == "312"
    # The interpreter's / is the image, not the host: nothing of the workdir shows.
    assert mpremote("exec", "import os; print(os.listdir('/'))").strip() == "['lib']"
    script = tmp_path / "script.py"
    script.write_text("import shoe_const\nprint('run', shoe_const.DECKS)\n")
    assert mpremote("run", str(script)).strip() == "run 6"  # `run` executes a host file on the board


def test_soft_reset_reruns_main_like_a_board(tmp_path: Path) -> None:
    vb = VirtualBoard(tmp_path / "board", serial_follows_power=False)
    try:
        vb.power_on()
        mp = MpRemote.for_board(vb)
        mp("fs", "cp", write_main(tmp_path, COUNTING_MAIN), ":main.py")
        with serial.Serial(str(vb.tty_path), timeout=5) as port:
            port.write(b"\r\n")
            assert port.read_until(b">>> ").endswith(b">>> ")
            port.reset_input_buffer()
            port.write(b"\x04")  # Ctrl-D at the friendly REPL: soft reset
            got = port.read_until(b"main run 1")
            assert SOFT_REBOOT in got and got.endswith(b"main run 1"), got
            assert port.read_until(b">>> ").endswith(b">>> ")  # main.py ended: the REPL
            port.write(b"\x04")
            assert port.read_until(b"main run 2").endswith(b"main run 2")
            assert port.read_until(b">>> ").endswith(b">>> ")
            port.write(b"import machine; machine.soft_reset()\r")
            got = port.read_until(b"main run 3")
            assert SOFT_REBOOT in got and got.endswith(b"main run 3"), got
        # From the raw REPL (mpremote), a soft reset returns to the raw REPL without
        # running main.py, as on a Pico.
        before = vb.boots
        mp("exec", "--no-follow", "import machine; machine.soft_reset()")
        vb.wait_boots(before + 1, timeout=10)
        assert boot_count(mp) == 3
    finally:
        vb.close()


def test_mpremote_reset_is_a_hard_reset_that_runs_main(board: VirtualBoard, mpremote: MpRemote, tmp_path: Path) -> None:
    board.power_on()
    mpremote("fs", "cp", write_main(tmp_path, COUNTING_MAIN), ":main.py")
    mark = board.output_mark()
    mpremote("reset")
    board.wait_output(b"main run 1", timeout=10, since=mark)  # main.py ran after the reset
    assert boot_count(mpremote) == 1


def test_flash_persists_across_power_cut(board: VirtualBoard, mpremote: MpRemote) -> None:
    board.power_on()
    mpremote("exec", "f = open('table.txt', 'w'); f.write('table 7, shoe 3'); f.close()")
    board.power_cut()
    assert board.flash.read("/table.txt") == b"table 7, shoe 3"  # read back with littlefs, offline
    board.power_on()
    assert mpremote("exec", "print(open('table.txt').read())").strip() == "table 7, shoe 3"


def test_the_board_counts_its_flash_erases_and_programs_across_power_cuts(board: VirtualBoard, mpremote: MpRemote) -> None:
    # A 4 KiB file is one data block: littlefs erases it and programs it through its cache
    # (4 x progsize 256 = 1 KiB per program, as MicroPython configures it), then commits
    # the directory: at least 1 erase and 4 programs.
    board.power_on()
    before = board.flash.wear()
    mpremote("exec", "f = open('blob.bin', 'wb'); f.write(bytes(4096)); f.close()")
    board.power_cut()
    after = board.flash.wear()
    assert after.erases >= before.erases + 1 and after.programs >= before.programs + 4, (before, after)
    board.power_on()  # the counts carry on from the image's, not from zero
    mpremote("exec", "import os; os.remove('blob.bin')")
    board.power_cut()
    again = board.flash.wear()
    assert again.programs > after.programs and again.erases >= after.erases, (after, again)


# main.py that keeps the flash busy: write-temp-then-rename of a state record, an
# append-only log and a churn of files being created and removed.
CHURN_MAIN = """\
import os
n = 0
try:
    with open("state.txt") as f:
        n = int(f.read().split()[0])
except OSError:
    pass
while True:
    n += 1
    with open("state.tmp", "w") as f:
        f.write("%d %s" % (n, "x" * (n % 700)))
    os.rename("state.tmp", "state.txt")
    with open("log.txt", "a") as f:
        f.write("%d\\n" % n)
    name = "churn%d.bin" % (n % 5)
    with open(name, "wb") as f:
        f.write(bytes(n % 3000))
    if n % 3 == 0:
        os.remove(name)
"""


def test_power_cut_at_random_instants_leaves_a_mountable_filesystem(
    board: VirtualBoard, mpremote: MpRemote, tmp_path: Path
) -> None:
    seed = int(os.environ.get("VBOARD_TEST_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    board.power_on()
    mpremote("fs", "cp", write_main(tmp_path, CHURN_MAIN), ":main.py")
    board.power_cut()
    last = 0
    for cut in range(6):
        board.power_on()
        time.sleep(rng.uniform(0.02, 0.4))
        board.power_cut()
        status = board.flash.check()  # mounts, or raises FlashError
        assert status.free_blocks > 0, f"seed {seed} cut {cut}"
        names = {entry.name for entry in board.flash.listdir("/")}
        assert "main.py" in names, f"seed {seed} cut {cut}: {names}"
        if "state.txt" not in names:
            continue  # cut before the first record
        count_text, _, padding = board.flash.read("/state.txt").decode().partition(" ")
        count = int(count_text)
        assert padding == "x" * (count % 700), f"seed {seed} cut {cut}: torn state record"
        assert count >= last, f"seed {seed} cut {cut}: state went back from {last} to {count}"
        last = count
    assert last > 0, f"seed {seed}: the churn never wrote a record"


def test_sim_channel_delivers_lines_both_ways_and_reconnects(board: VirtualBoard, mpremote: MpRemote, tmp_path: Path) -> None:
    board.power_on(safe_boot=True)
    mpremote("fs", "cp", write_main(tmp_path, ECHO_SIM_MAIN), ":main.py")
    board.power_cut()
    board.power_on()
    assert board.sim.wait_ready(timeout=10) == 1
    board.sim.present_rfid(bytes.fromhex("04a1b2c3d4e5f6"))
    assert board.sim.read_line(5) == "echo rfid 04A1B2C3D4E5F6"
    board.sim.present_barcode("QS-0042")
    assert board.sim.read_line(5) == "echo barcode QS-0042"
    board.sim.exit_sensor()
    assert board.sim.read_line(5) == "echo exit"
    board.sim.jam(True)
    board.sim.lid(False)
    board.sim.reader(False)
    assert [board.sim.read_line(5) for _ in range(3)] == ["echo jam on", "echo lid closed", "echo reader fail"]
    board.sim.key("new_round")
    assert board.sim.read_line(5) == "echo key new_round"
    assert board.sim.read_line(5) == "led blink"
    assert board.sim.led == "blink"
    with pytest.raises(ValueError):
        board.sim.key("shuffle")
    with pytest.raises(ValueError):
        board.sim.present_barcode("two\nlines")

    board.power_cut()
    deadline = time.monotonic() + 5
    while board.sim.connected and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(SimNotConnected):
        board.sim.exit_sensor()  # nobody is there to see the card
    board.power_on()
    assert board.sim.wait_ready(timeout=10) == 2  # a new boot, a new connection
    board.sim.exit_sensor()
    assert board.sim.read_line(5) == "echo exit"


def test_unplug_and_replug_seen_by_pyserial(board: VirtualBoard) -> None:
    board.power_on()
    with serial.Serial(str(board.tty_path), timeout=5) as port:
        port.write(b"total = 41\r")
        assert port.read_until(b">>> ").endswith(b">>> ")
        first_device = board.serial_device
        board.unplug()
        assert not board.tty_path.exists() and not Path(str(first_device)).exists()
        with pytest.raises(serial.SerialException):
            port.read(1)  # the device vanished under the open port
    with pytest.raises(serial.SerialException):
        serial.Serial(str(board.tty_path))
    board.replug()
    with serial.Serial(str(board.tty_path), timeout=5) as port:
        port.write(b"print(total + 1)\r")
        # The board kept running while unplugged: its REPL state is still there.
        assert b"42" in port.read_until(b"42")
    with pytest.raises(BoardStateError):
        board.replug()


def test_binary_clean_and_interrupt_char_off_when_firmware_disables_it(board: VirtualBoard, tmp_path: Path, mpremote: MpRemote) -> None:
    board.power_on(safe_boot=True)
    echo_main = (
        "import sys, micropython\n"
        "micropython.kbd_intr(-1)\n"
        "print('echo ready')\n"
        "r, w = sys.stdin.buffer, sys.stdout.buffer\n"
        "while True:\n"
        "    w.write(r.read(1))\n"
    )
    mpremote("fs", "cp", write_main(tmp_path, echo_main), ":main.py")
    board.power_cut()
    every_byte = bytes(range(256))
    mark = board.output_mark()
    board.power_on()
    with serial.Serial(str(board.tty_path), timeout=5) as port:
        board.wait_output(b"echo ready", timeout=10, since=mark)  # ^C is off from here
        port.write(b"S")  # sync: whatever came before the echo of S is start-up text
        assert port.read_until(b"S").endswith(b"S")
        port.write(every_byte)
        assert port.read(256) == every_byte  # ^C, ^D, ^Z, \r, \n pass as data
        port.write(b"\x03\x03still here")
        assert port.read(12) == b"\x03\x03still here"


def test_offline_flash_access_refused_while_powered(board: VirtualBoard) -> None:
    board.power_on()
    with pytest.raises(FlashBusy):
        board.flash.read("/main.py")
    with pytest.raises(BoardStateError):
        board.power_on()
    board.power_off()
    board.flash.write("/note.txt", b"written offline")
    assert [e.name for e in board.flash.listdir("/")] == ["note.txt"]
    board.flash.mkdir("/data")
    blob = random.Random(7).randbytes(100_000)  # spans many blocks and tool chunks
    board.flash.write("/data/blob.bin", blob)
    assert board.flash.read("/data/blob.bin") == blob
    assert [(e.name, e.is_dir, e.size) for e in board.flash.listdir("/data")] == [("blob.bin", False, 100_000)]
    board.flash.remove("/note.txt")
    assert {e.name for e in board.flash.listdir("/")} == {"data"}


ENV_MAIN = """\
import os
with open("env.txt", "a") as f:
    f.write("%s %s %s %s\\n" % (os.getenv("CARDSHOE_BOARD"), os.getenv("CARDSHOE_RESET_CAUSE"),
                               os.getenv("CARDSHOE_KEY_HELD"), os.getenv("CARDSHOE_SIM")))
print("env logged")
"""


def test_firmware_environment_names_the_board_the_sim_and_the_reset_cause(board: VirtualBoard) -> None:
    board.flash.create()
    board.flash.write("/main.py", ENV_MAIN.encode())  # deployed offline, board off
    mark = board.output_mark()
    board.power_on(key_held=True)
    board.wait_output(b"env logged", timeout=10, since=mark)
    mark = board.output_mark()
    board.reset()
    board.wait_output(b"env logged", timeout=10, since=mark)
    board.power_off()
    mark = board.output_mark()
    board.power_on(safe_boot=True)  # the board's safe mode: straight to the REPL
    board.wait_output(b'Type "help()"', timeout=10, since=mark)
    board.power_off()
    sim = str(board.sim_path)
    assert board.flash.read("/env.txt").decode().splitlines() == [
        f"unix 1 1 {sim}",  # power on, key held
        f"unix 4 None {sim}",  # hard reset, key released
    ]
    assert Path(sim).is_socket()


def test_a_broken_image_is_reported_not_reformatted(board: VirtualBoard) -> None:
    board.flash.create()
    board.flash.write("/main.py", b"print('should not run')\n")
    with open(board.flash.path, "r+b") as image:
        image.write(bytes(2 * board.flash.block_size))  # both superblocks gone
    mark = board.output_mark()
    board.power_on()
    board.wait_output(b"vboard: flash mount failed", timeout=10, since=mark)
    board.power_off()
    assert b"should not run" not in board.transcript()
    with pytest.raises(FlashError):
        board.flash.check()
    assert board.flash.path.read_bytes()[: 2 * board.flash.block_size] == bytes(2 * board.flash.block_size)


# ^C as a Pico's USB stack delivers it (issue 9, item 2): KeyboardInterrupt only while
# kbd_intr has it set, data otherwise, and never a signal to the board's process.
INTERRUPT_MAIN = """\
import micropython, sys, time
micropython.kbd_intr(-1)
print("off")
t = time.ticks_ms()
while time.ticks_diff(time.ticks_ms(), t) < 300:
    pass
got = b""
import select
p = select.poll()
p.register(sys.stdin, select.POLLIN)
while p.poll(0):
    got += sys.stdin.buffer.read(1)
print("data %r" % got)
micropython.kbd_intr(3)
print("live")
try:
    while True:
        pass
except KeyboardInterrupt:
    print("interrupted")
"""


def test_ctrl_c_is_data_while_off_and_keyboardinterrupt_while_on(board: VirtualBoard) -> None:
    board.flash.create()
    board.flash.write("/main.py", INTERRUPT_MAIN.encode())
    mark = board.output_mark()
    board.power_on()
    with serial.Serial(str(board.tty_path), timeout=5) as port:
        board.wait_output(b"off", timeout=10, since=mark)
        port.write(b"a\x03b")
        board.wait_output(b"data b'a\\x03b'", timeout=10, since=mark)
        board.wait_output(b"live", timeout=10, since=mark)
        port.write(b"\x03")
        board.wait_output(b"interrupted", timeout=10, since=mark)
    assert board.boots == 1  # the process was never signalled: no restart


# A firmware that turns ^C off first thing (as firmware/main.py does) and then says so.
STORM_MAIN = """\
import micropython


def off():
    try:
        micropython.kbd_intr(-1)
        if micropython:
            return
    except:
        return off()


off()
print("main up")
while True:
    pass
"""


def test_a_stream_of_ctrl_c_through_power_on_never_kills_the_board(board: VirtualBoard) -> None:
    """The host writes ^C without pause while the board powers on: with a SIGINT per ^C
    the launcher's CPython start-up died ("Fatal Python error ... KeyboardInterrupt") and
    the board restarted; a Pico's USB stack only schedules KeyboardInterrupt."""
    board.flash.create()
    board.flash.write("/main.py", STORM_MAIN.encode())
    for attempt in range(3):
        mark = board.output_mark()
        board.power_on()
        with serial.Serial(str(board.tty_path), timeout=0, write_timeout=0) as port:
            deadline = time.monotonic() + 20
            up = False
            while time.monotonic() < deadline and not up:
                try:
                    port.write(b"\x03" * 64)
                except serial.SerialTimeoutException:
                    pass
                port.reset_input_buffer()
                try:
                    board.wait_output(b"main up", timeout=0.005, since=mark)
                    up = True
                except Exception:
                    pass
            assert up, board.transcript()[-400:]
            for _ in range(50):  # and more ^C once it runs
                port.write(b"\x03" * 64)
                time.sleep(0.002)
        assert b"Fatal Python error" not in board.transcript()
        assert b"Traceback" not in board.transcript()
        board.power_off()
    assert board.boots == 3


# The board's watchdog (machine.WDT, served by the launcher): a firmware that stops
# feeding it is reset (HELLO reset cause 2), and only the chip's register stops it.
WDT_MAIN = """\
import machine, os
w = machine.WDT(timeout=300)
print("armed cause %s" % os.getenv("CARDSHOE_RESET_CAUSE"))
if "stop" in os.listdir():
    w.stop()
    print("stopped")
raise RuntimeError("the firmware failed")
"""


def test_an_unfed_watchdog_resets_the_board_and_a_stopped_one_does_not(board: VirtualBoard) -> None:
    board.flash.create()
    board.flash.write("/main.py", WDT_MAIN.encode())
    mark = board.output_mark()
    board.power_on()
    board.wait_output(b"armed cause 1", timeout=10, since=mark)
    board.wait_output(b"armed cause 2", timeout=10, since=mark)  # reset by the watchdog, main.py again
    assert board.watchdog_resets >= 1
    board.power_off()
    board.flash.write("/stop", b"")
    resets = board.watchdog_resets
    mark = board.output_mark()
    board.power_on()
    board.wait_output(b"stopped", timeout=10, since=mark)
    boots = board.boots
    time.sleep(1.0)  # three timeouts: a running watchdog would have reset it by now
    assert board.watchdog_resets == resets and board.boots == boots
