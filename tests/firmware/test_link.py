"""The link of the real firmware over a pseudo-terminal: replay refused, host commands, resends.

The firmware runs as a process (tests/firmware/vshoe.py); the host side is the host codec.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import cardshoe.protocol as P
from vshoe import Host, VShoe, uid_of


@pytest.fixture
def shoe(tmp_path: Path, fw_build: Path) -> Iterator[tuple[VShoe, Host]]:
    vs = VShoe(tmp_path / "shoe", fw_build)
    host = Host(vs)
    assert vs.power_on() == 1
    host.until(lambda: host.hello is not None)
    yield vs, host
    vs.close()


def load(host: Host, shoe_no: int) -> list[bytes]:
    """Load a 52-card RFID shoe part by part; returns the frames as sent (a recording)."""
    frames = []
    for part in range(4):
        entries = tuple(P.ManifestEntry(code=c, uid=uid_of(c)) for c in range(part * 13, part * 13 + 13))
        wire = host.vs.peer.host_frame(P.NewShoe(shoe_no=shoe_no, deck_id=7, scheme=1, part=part, parts=4, entries=entries))
        seq = host.vs.peer.seq
        host.vs.write(wire)
        host.until(lambda: any(r.seq == seq and r.status == 0 for r in host.replies))
        frames.append(wire)
    return frames


def deal(vs: VShoe, host: Host, code: int) -> P.Card:
    before = len(host.placed)
    vs.send_sim(f"rfid {uid_of(code).hex()}", "exit")
    host.until(lambda: len(host.placed) > before)
    last = [f.message for f in vs.peer.frames if isinstance(f.message, P.Card)][-1]
    assert isinstance(last, P.Card)
    return last


def replies_to(host: Host, seq: int) -> list[P.Reply]:
    return [r for r in host.replies if r.seq == seq]


def test_a_replayed_command_is_not_executed_but_its_reply_is_repeated(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    recorded = load(host, 5)
    load(host, 6)
    assert deal(vs, host, 3).shoe_no == 6
    # The host resends the last command of shoe 6 (same epoch and seq, RESENT): answered again.
    last = host.replies[-1].seq  # the last command (the host's ACKs have seqs too)
    n = len(replies_to(host, last))
    vs.send(P.Ping(nonce=1), seq=last, flags=P.FLAG_RESENT)
    host.until(lambda: len(replies_to(host, last)) > n)
    # A recording of shoe 5's NEW_SHOE is replayed: refused, the session stays shoe 6.
    before = len(host.replies)
    for wire in recorded:
        vs.write(wire)
    host.pump(0.3)
    card = deal(vs, host, 4)
    assert (card.shoe_no, card.index) == (6, 2), (host.replies[before - 6:], [(f.type.name, f.seq, f.resent) for f in vs.peer.frames[-12:]])


def test_the_replay_window_survives_a_reboot(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    recorded = load(host, 5)
    load(host, 6)
    vs.cut()
    assert vs.power_on() == 2
    host.hello = None
    host.until(lambda: host.hello is not None)
    for wire in recorded:  # a recorded command of the last epoch, replayed after the reboot
        vs.write(wire)
    host.pump(0.3)
    assert deal(vs, host, 9).shoe_no == 6


def test_an_ack_of_an_earlier_boot_acknowledges_nothing(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    vs.cut()
    assert vs.power_on() == 2
    vs.send(P.Ack(boot=1, seq=1))  # HELLO of boot 2 is seq 1 too, but this names boot 1
    time.sleep(0.4)
    frames = vs.receive(0.5)
    hellos = [f for f in frames if isinstance(f.message, P.Hello)]
    assert hellos and hellos[-1].boot == 2 and hellos[-1].resent


def test_a_frame_made_with_another_key_is_ignored(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    forged = P.encode_frame(P.Ping(nonce=7), key=b"X" * 32, shoe=vs.serial, boot=1, seq=5000)
    vs.write(forged)
    host.pump(0.4)
    assert not replies_to(host, 5000)
    # and a genuine one right after is answered (the window did not move)
    seq = vs.send(P.Ping(nonce=8))
    host.until(lambda: bool(replies_to(host, seq)))


def test_resend_from_sends_again_from_that_seq_with_the_resent_flag(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    load(host, 5)
    host.pump(0.2)
    # Two cards the host receives but does not acknowledge (no pump): they stay in the outbox.
    vs.send_sim(f"rfid {uid_of(1).hex()}", "exit", f"rfid {uid_of(2).hex()}", "exit")
    first = [f for f in vs.receive(0.2) if isinstance(f.message, P.Card)]
    assert [f.message.index for f in first] == [1, 2] and not any(f.resent for f in first)
    vs.send(P.ResendFrom(boot=first[0].boot, seq=first[0].seq))
    again = [f for f in vs.receive(0.2) if f.resent and isinstance(f.message, P.Card)]
    assert [f.seq for f in again][:2] == [first[0].seq, first[1].seq]
    assert [f.message.index for f in again][:2] == [1, 2]


def test_config_time_ping_and_heartbeat(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    r = host.command(P.Config(heartbeat_ms=200, resend_ms=100, resend_max_ms=400, debounce_ms=3))
    assert r.status == 0
    assert host.command(P.Time(unix_ms=1_700_000_000_000)).status == 0
    assert host.command(P.Ping(nonce=99)).status == 0
    vs.receive(0.1)
    beats = [f for f in vs.receive(1.0) if isinstance(f.message, P.Heartbeat)]
    assert len(beats) >= 2  # every 200 ms now, acked by the host peer
    bad = host.command(P.Config(heartbeat_ms=200, resend_ms=500, resend_max_ms=100, debounce_ms=3))
    assert (bad.status, bad.detail) == (1, 1)


def test_error_states_survive_a_power_cycle_until_clear(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    host.allow_unread = True
    load(host, 5)
    vs.send_sim("exit")  # an unread card
    vs.send_sim("jam on")
    host.until(lambda: any(isinstance(f.message, P.Fault) and f.message.code == 2 for f in vs.peer.frames))
    host.until(lambda: any(s.integrity & 4 for s in host.statuses))
    vs.cut()
    assert vs.power_on() == 2
    host.hello = None
    host.until(lambda: host.hello is not None)
    assert host.hello is not None
    assert host.hello.integrity == 4 and host.hello.faults == 1 << 2 and host.hello.dealt == 1
    vs.send_sim("jam off")
    r = host.command(P.Clear(integrity_mask=4, fault_mask=1 << 2))
    assert r.status == 0
    host.until(lambda: any(isinstance(f.message, P.Fault) and f.message.code == 2 and f.message.active == 0 for f in vs.peer.frames))
    vs.cut()
    assert vs.power_on() == 3
    host.hello = None
    host.until(lambda: host.hello is not None)
    assert host.hello is not None
    assert (host.hello.integrity, host.hello.faults, host.hello.dealt) == (0, 0, 1)


def test_bad_manifests_are_refused(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    one = (P.ManifestEntry(code=1, uid=uid_of(1)),)
    twice = P.NewShoe(shoe_no=5, deck_id=7, scheme=1, part=0, parts=1, entries=one + one)
    assert (host.command(twice).status, host.command(twice).detail) == (1, 2)
    short = P.NewShoe(shoe_no=5, deck_id=7, scheme=1, part=0, parts=1, entries=one)
    assert host.command(short).detail == 2
    assert host.command(P.NewShoe(shoe_no=0, deck_id=7, scheme=2, part=0, parts=1)).status == 1


def test_maintenance_returns_to_the_repl(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    r = host.command(P.Maintenance())
    assert r.status == 0
    assert vs.proc is not None
    vs.proc.wait(timeout=5)  # main.py ended: on a board the REPL takes over
    assert vs.proc.returncode == 0


def test_the_unix_board_reconnects_to_the_bench_and_drives_the_led(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    assert vs.sim_line(2) == "led off"  # after `ready 1`, the LED state
    vs.send_sim("jam on")
    line = vs.sim_line(3)
    while line == "led off":
        line = vs.sim_line(3)
    assert line == "led on"
    # The bench goes away and comes back: the board reconnects and says ready again.
    assert vs.sim is not None
    vs.sim.close()
    vs._listener.settimeout(5)
    vs.sim, _ = vs._listener.accept()
    vs.sim.setblocking(False)
    vs.sim_buf = b""
    assert vs.sim_line(3) == "ready 1"
    assert vs.sim_line(3) == "led on"
    # and cards still flow
    load(host, 5)
    assert deal(vs, host, 8).code == 8


def test_a_full_outbox_raises_the_fault_keeps_every_card_and_drains_on_ack(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    load(host, 5)
    host.pump(0.2)
    # 20 cards while the host acknowledges nothing: 16 slots cannot hold them all.
    for c in range(20):
        vs.send_sim(f"rfid {uid_of(c).hex()}", "exit")
    frames = vs.receive(0.6)
    faults = [f.message for f in frames if isinstance(f.message, P.Fault)]
    assert any(f.code == 6 and f.active == 1 for f in faults)
    assert len({f.message.index for f in frames if isinstance(f.message, P.Card)}) < 20
    # A command sent while the outbox is full is not taken (the last slots are kept for a
    # restarted host's PING, SPEC 4 "Outbox full"); the host issues it again, as the daemon
    # does (under a new seq once an ACK has passed it), and it is answered once there is room.
    pings = [vs.send(P.Ping(nonce=3))]
    # The host now takes what it missed (RESEND_FROM, in order) and acknowledges.
    host.until(lambda: len(host.placed) == 20, timeout=15)
    assert [host.placed[(5, i)] for i in range(1, 21)] == list(range(20))
    host.until(lambda: any(isinstance(f.message, P.Fault) and f.message.code == 6 and f.message.active == 0
                           for f in vs.peer.frames), timeout=10)

    def answered() -> bool:
        if any(replies_to(host, s) for s in pings):
            return True
        pings.append(vs.send(P.Ping(nonce=3)))
        return False

    host.until(answered, timeout=10)


def test_dealer_keys_are_framed_in_order_with_the_cards(shoe: tuple[VShoe, Host]) -> None:
    vs, host = shoe
    load(host, 5)
    vs.send_sim(f"rfid {uid_of(1).hex()}", "exit", "key new_round", f"rfid {uid_of(2).hex()}", "exit",
                "key deal_complete", "key exposure")
    host.until(lambda: sum(isinstance(f.message, P.Key) for f in vs.peer.frames) == 3)
    order = [(type(f.message).__name__, getattr(f.message, "key", getattr(f.message, "index", None)))
             for f in vs.peer.frames if isinstance(f.message, (P.Card, P.Key))]
    assert order == [("Card", 1), ("Key", 1), ("Card", 2), ("Key", 2), ("Key", 3)]


def test_the_shoe_with_its_code_in_ram_streams_without_running_low(shoe: tuple[VShoe, Host]) -> None:
    # The fixture's shoe runs its code from RAM under `micropython -X heapsize=96k`
    # (vshoe.IN_RAM_HEAP). The main loop checks free memory after a collection once a
    # second and raises LOW_MEMORY (fault code 5) under 4 KB: loading a manifest and
    # dealing must not get there.
    vs, host = shoe
    assert vs.heapsize == "96k"
    load(host, 5)
    for code in (3, 17, 41):
        deal(vs, host, code)
    end = time.monotonic() + 1.5  # past at least one memory check
    while time.monotonic() < end:
        host.pump(0.05)
    faults = [(f.message.code, f.message.active) for f in vs.peer.frames if isinstance(f.message, P.Fault)]
    assert (5, 1) not in faults, faults
    assert host.count(5) == 3


def test_a_command_rejected_as_bad_payload_or_unknown_type_is_answered_unsupported(shoe: tuple[VShoe, Host]) -> None:
    """SPEC 4 and 5 (REPLY): status 2 UNSUPPORTED, detail 0, so the host stops resending."""
    vs, host = shoe

    def raw(mtype: int, payload: bytes, seq: int | None = None, flags: int = 0) -> int:
        if seq is None:
            vs.peer.seq += 1
            seq = vs.peer.seq
        vs.write(P.encode_raw_frame(mtype, payload, key=vs.key, shoe=vs.serial, boot=vs.peer.epoch, seq=seq, flags=flags))
        return seq

    def reply(seq: int) -> tuple[int, int]:
        host.until(lambda: bool(replies_to(host, seq)))
        r = replies_to(host, seq)[-1]
        return r.status, r.detail

    # Old firmware: REFUSED with detail 1 (bad state) or 2 (bad manifest) for a bad payload.
    assert reply(raw(0x84, b"\x01\x02\x03")) == (2, 0)  # CONFIG of 3 bytes, not 8
    assert reply(raw(0x83, bytes(11))) == (2, 0)  # NEW_SHOE shorter than 12 bytes
    assert reply(raw(0x87, b"XXXX")) == (2, 0)  # MAINTENANCE with a wrong magic
    # Old firmware: no REPLY at all for a type this version does not define.
    unknown = raw(0x9A, b"future")
    assert reply(unknown) == (2, 0)
    # Its resend (same seq, RESENT) is a replay: not acted on, answered again.
    n = len(replies_to(host, unknown))
    raw(0x9A, b"future", seq=unknown, flags=P.FLAG_RESENT)
    host.until(lambda: len(replies_to(host, unknown)) > n)
    # A malformed ACK is not a command: never answered. The link still works after all this.
    bad_ack = raw(0x81, b"\x01")
    ping = vs.send(P.Ping(nonce=9))
    assert reply(ping) == (0, 0)
    host.pump(0.3)
    assert not replies_to(host, bad_ack)
    # Manifest contents stay REFUSED detail 2 (test_bad_manifests_are_refused), bad state detail 1.
    assert (host.command(P.CardsFrom(shoe_no=99, index=1)).status, host.command(P.CardsFrom(shoe_no=99, index=1)).detail) == (1, 1)


def test_the_shoe_runs_from_its_romfs_image_in_a_64_kb_heap(tmp_path: Path, fw_build: Path) -> None:
    """The code as `cardshoe flash` deploys it to a board with a ROM partition: a ROMFS
    image mapped outside the 64 KB heap, run in place; only main.py on the littlefs.
    HELLO reports the build's hash (fwhash covers /rom), cards flow across a power cut,
    and the loop never reports LOW_MEMORY."""
    import shutil

    from cardshoe import flashing

    deployed = tmp_path / "deployed"  # what the shoe has: the build without the test helpers
    shutil.copytree(fw_build, deployed, ignore=shutil.ignore_patterns("shoetest.mpy", "vboot.mpy", "vinstall.mpy"))
    vs = VShoe(tmp_path / "shoe", fw_build, heapsize="64k", romfs=True)
    try:
        host = Host(vs)
        assert vs.power_on() == 1
        host.until(lambda: host.hello is not None)
        assert host.hello is not None and host.hello.fw_hash == flashing.firmware_hash(deployed)
        load(host, 5)
        for code in (3, 17):
            deal(vs, host, code)
        vs.cut()
        assert vs.power_on() == 2
        deal(vs, host, 41)
        end = time.monotonic() + 1.5  # past at least one memory check
        while time.monotonic() < end:
            host.pump(0.05)
        assert host.count(5) == 3
        faults = [(f.message.code, f.message.active) for f in vs.peer.frames if isinstance(f.message, P.Fault)]
        assert (5, 1) not in faults, faults
    finally:
        vs.close()


def _reply_frame(vs: VShoe, command_seq: int, timeout: float = 8.0) -> tuple[int, P.Reply]:
    """The frame seq and REPLY answering host command `command_seq`; nothing is acknowledged."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for f in vs.receive(0.05):
            if isinstance(f.message, P.Reply) and f.message.seq == command_seq and not f.resent:
                return f.seq, f.message
    raise AssertionError(f"no REPLY to command {command_seq}")


def test_a_reply_names_the_first_frame_the_shoe_still_holds(shoe: tuple[VShoe, Host]) -> None:
    # SPEC 3.4 item 6 and 5 (REPLY `oldest`): the first seq of this boot the outbox still
    # holds when the REPLY is made, the REPLY included; frames before it were acknowledged.
    vs, host = shoe
    host.command(P.Ping(nonce=1))  # HELLO and this REPLY accepted and acknowledged by the host
    s2, r2 = _reply_frame(vs, vs.send(P.Ping(nonce=2)))  # from here on nothing is acknowledged
    s3, r3 = _reply_frame(vs, vs.send(P.Ping(nonce=3)))
    assert r2.oldest <= s2 < s3
    assert r3.oldest == r2.oldest  # no ACK in between: REPLY 2 (at least) is still held
    vs.ack(vs_boot := host.boot, s3)  # everything up to REPLY 3 acknowledged
    s4, r4 = _reply_frame(vs, vs.send(P.Ping(nonce=4)))
    assert (vs_boot, r4.oldest) == (host.boot, s3 + 1) and r4.oldest <= s4
