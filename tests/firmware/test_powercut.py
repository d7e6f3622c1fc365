"""Power cuts at random instants while a shoe is dealt: no card lost or repeated, the count right.

The real firmware runs as a process on a pseudo-terminal (tests/firmware/vshoe.py) with
its littlefs image; the bench feeds cards through the sim socket; a host peer made of
the host codec (`cardshoe.protocol`) receives, accepts frames in order and ACKs like the
daemon, and asks CARDS_FROM after a reboot as SPEC section 4 says. The interpreter is
SIGKILLed at random points; after each cut the shoe boots (boot counter + 1), says HELLO
with its state, and the deal goes on.

A card whose exit the shoe had not finished recording when the power went is, for the
shoe, a card that never left: the bench deals it again (the shoe cannot see a card leave
while it is off). What must hold is that every card the shoe recorded reaches the host
exactly once at its index, that the HELLO count never goes back below what the host holds,
and that each shoe ends with 52 dealt, no duplicate, nothing missing.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

import cardshoe.protocol as P
from vshoe import Host, VShoe, uid_of


def boot(vs: VShoe, host: Host, expected_boot: int) -> P.Hello:
    assert vs.power_on() == expected_boot
    host.hello = None
    host.until(lambda: host.hello is not None)
    assert host.boot == expected_boot
    assert host.hello is not None
    return host.hello


def load_shoe(host: Host, shoe_no: int, order: list[int]) -> None:
    parts = 4
    for part in range(parts):
        codes = range(part * 13, part * 13 + 13)
        entries = tuple(P.ManifestEntry(code=c, uid=uid_of(c, deck=shoe_no % 200)) for c in codes)
        reply = host.command(P.NewShoe(shoe_no=shoe_no, deck_id=shoe_no, scheme=1, part=part, parts=parts, entries=entries))
        assert reply.status == 0


def run_cuts(tmp_path: Path, fw_build: Path, cuts: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    vs = VShoe(tmp_path / "shoe", fw_build)
    host = Host(vs)
    boots = 1
    done_cuts = 0
    shoes = 0
    try:
        boot(vs, host, boots)
        while done_cuts < cuts:
            shoes += 1
            shoe_no = 100 + shoes
            order = list(range(52))
            rng.shuffle(order)
            load_shoe(host, shoe_no, order)
            while host.count(shoe_no) < 52 and done_cuts < cuts or host.count(shoe_no) < 52:
                # Deal the next card the shoe has not recorded (one it lost to a cut is dealt again).
                logged = host.hello.dealt if host.hello and host.hello.shoe_no == shoe_no else 0
                index = max(host.count(shoe_no), logged) + 1
                if index <= 52:
                    burst = min(rng.randint(1, 3), 53 - index)
                    lines = []
                    for k in range(burst):
                        uid = uid_of(order[index - 1 + k], deck=shoe_no % 200).hex()
                        lines += [f"rfid {uid}"] * rng.choice((1, 1, 2)) + ["exit"]
                    vs.send_sim(*lines)
                if done_cuts < cuts and rng.random() < 0.6:
                    host.pump(rng.uniform(0.0, 0.02))
                    vs.cut()
                    done_cuts += 1
                    boots += 1
                    hello = boot(vs, host, boots)
                    have = host.count(shoe_no)
                    # Nothing the host holds can be unknown to the shoe after the cut.
                    assert hello.shoe_no == shoe_no and hello.dealt >= have, (hello, have)
                    assert hello.integrity == 0 and hello.faults == 0, hello
                    if hello.dealt > have:
                        assert host.command(P.CardsFrom(shoe_no=shoe_no, index=have + 1)).status == 0
                    host.until(lambda: host.count(shoe_no) >= hello.dealt)
                else:
                    target = min(52, index + burst - 1) if index <= 52 else 52
                    host.until(lambda: host.count(shoe_no) >= target)
                    host.hello = host.hello  # the deal goes on in this boot
                    if host.hello is not None and host.hello.shoe_no == shoe_no:
                        host.hello = P.Hello(**{**host.hello.__dict__, "dealt": host.count(shoe_no)})
            # The whole shoe, in order, each index once, no duplicate or foreign flag.
            got = [host.placed[(shoe_no, i)] for i in range(1, 53)]
            assert got == order
            assert host.flags_seen == 0
            vs.send_sim("key end_shoe")
            host.until(lambda: any(s.shoe_no == shoe_no and s.reason == 3 for s in host.statuses))
            end = [s for s in host.statuses if s.shoe_no == shoe_no and s.reason == 3][-1]
            assert (end.dealt, end.remaining, end.missing, end.duplicates, end.integrity) == (52, 0, 0, 0, 0)
    finally:
        vs.close()
    return {"cuts": done_cuts, "boots": boots, "shoes": shoes, "resends_asked": host.resends_asked}


def test_power_cuts_never_lose_or_repeat_a_card(tmp_path: Path, fw_build: Path) -> None:
    stats = run_cuts(tmp_path, fw_build, cuts=int(os.environ.get("CARDSHOE_CUTS", "300")), seed=3)
    assert stats["cuts"] == int(os.environ.get("CARDSHOE_CUTS", "300"))


@pytest.mark.slow
def test_power_cuts_many(tmp_path: Path, fw_build: Path, request: pytest.FixtureRequest) -> None:
    """1,000 cuts over several shoes (about 2.5 minutes): run with `-m slow`."""
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("long soak: run with -m slow")
    stats = run_cuts(tmp_path, fw_build, cuts=1000, seed=11)
    assert stats["cuts"] == 1000 and stats["shoes"] >= 5
