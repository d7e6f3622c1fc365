"""Rejections are bounded: a few samples journaled whole per interval, the rest counted into
one summary per interval, nothing lost from the count (issue 10 item 5).

The figures of the issue (20,000 one-byte frames; 1,000 bad-tag guesses) over a real pty;
the speed side (a genuine card's delay behind the burst) is measured by
`cardshoe bench daemon --noise`, not asserted here."""

from __future__ import annotations

import logging
import math
import time

import payloads
import pytest
import wire
from daemon_harness import HANDS, SERIAL, Table, check_hands, journal, open_two_seat_round, wait_for

from cardshoe.cards import parse_card
from cardshoe.daemon.daemon import REJECT_PER_REASON, REJECT_SAMPLES, SECURITY_KEYS
from cardshoe.daemon.rejections import MAX_SHOES, RejectionLimiter
from cardshoe.journal.replay import replay

TCP = "three-card-poker"
S = 1_000_000_000


def test_the_limiter_samples_then_counts_and_summarises_each_interval() -> None:
    lim = RejectionLimiter(interval_s=1.0, samples=3, per_reason=3)
    admitted = [lim.admit("bad_crc", None, t)[0] for t in range(10)]
    assert admitted == [True] * 3 + [False] * 7
    assert lim.take(S // 2) is None  # the interval is not over
    sample, ended = lim.admit("bad_tag:", 7, S + 5)  # the next interval: the last one's summary comes out
    assert sample is True and ended is not None
    assert ended["unsampled"] == {"bad_crc": 7} and ended["counts"] == {"bad_crc": 10} and ended["samples"] == 3
    assert lim.take(S + 6, force=True) is None  # all of this interval was sampled: nothing to summarise


def test_noise_does_not_use_up_the_samples_of_another_reason() -> None:
    lim = RejectionLimiter(interval_s=1.0, samples=6, per_reason=2)
    noise = [lim.admit("bad_cobs", None, 1)[0] for _ in range(100)]
    guesses = [lim.admit("bad_tag", 5, 2)[0] for _ in range(100)]
    assert sum(noise) == 2 and sum(guesses) == 2


def test_security_reasons_are_sampled_outside_the_total_and_notes_apart() -> None:
    lim = RejectionLimiter(interval_s=1.0, samples=4, per_reason=2, security=frozenset({"bad_tag", "replay:old boot"}))
    for reason in ("bad_cobs", "truncated", "bad_crc", "replay:gap"):  # every kind of noise at once
        for _ in range(50):
            lim.admit(reason, None, 1)
    guesses = [lim.admit("bad_tag", 5, 2)[0] for _ in range(50)]
    recorded = [lim.admit("replay:old boot", 5, 3)[0] for _ in range(50)]
    assert sum(guesses) == 2 and sum(recorded) == 2  # not crowded out by the noise
    summary = lim.take(4, force=True)
    assert summary is not None and summary["samples"] == 4 + 2 + 2
    assert summary["unsampled"]["replay"] == 50 - 0 + 48  # the gap ones (none sampled: total used) and old boot


def test_the_shoes_a_summary_names_are_bounded_whatever_serials_arrive() -> None:
    lim = RejectionLimiter(interval_s=1.0, samples=0, per_reason=0)
    for shoe in range(1000):
        lim.admit("unknown_shoe", shoe, 0)
    summary = lim.take(0, force=True)
    assert summary is not None
    assert len(summary["shoes"]) == MAX_SHOES and summary["other_shoes"] == 1000 - MAX_SHOES
    assert summary["unsampled"] == {"unknown_shoe": 1000}


def test_noise_and_tag_guessing_are_journaled_as_samples_and_summaries_and_all_counted(
        make_table, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO)
    table: Table = make_table(TCP, 7)
    table.power_on_and_load()
    rid = open_two_seat_round(table)
    table.deal([parse_card(x) for x in HANDS[:3]])
    before = sum(table.daemon.status()["link"]["rejected"].values())
    with journal(table) as j:
        rejects_before = j.count("reject")
    t0 = time.monotonic()
    # 20,000 one-byte frames (40 KB of line noise) ...
    table.shoe.send_raw(b"\x55\x00" * 20_000)
    # ... and 1,000 guesses at the tag of the shoe's next frames.
    buf = bytearray(wire.MAX_PAYLOAD)
    n = payloads.pack_card(buf, table.shoe.state.shoe_no, 4, 0x1234ABCD, parse_card("As"), 2, 0, 0, 9,
                           b"CS1234ABCDAS")
    base = table.shoe.seq + 1
    table.shoe.send_raw(b"".join(
        table.shoe.encode(wire.CARD, bytes(buf[:n]), boot=table.shoe.state.boot, seq=base + k,
                          key=bytes([k % 256]) * 32) for k in range(1_000)))
    table.deal([parse_card(x) for x in HANDS[3:]])  # genuine cards after the burst
    wait_for(lambda: sum(table.daemon.status()["link"]["rejected"].values()) - before >= 21_000, 120,
             "every rejection counted")
    elapsed = time.monotonic() - t0
    table.daemon.flush_rejections()
    check_hands(table, rid)  # the guesses placed nothing; the genuine cards are all there

    rejected = table.daemon.status()["link"]["rejected"]
    total = sum(rejected.values()) - before
    with journal(table) as j:
        new = [e for e in j.entries(("reject",))][rejects_before:]
    samples = [e for e in new if e.data()["type"] == "frame_rejected"]
    summaries = [e.data() for e in new if e.data()["type"] == "rejections_summary"]
    # Nothing lost from the count: samples + summarised = every rejection the link saw.
    assert len(samples) + sum(sum(s["unsampled"].values()) for s in summaries) == total
    # Bounded: at most REJECT_SAMPLES samples and one summary per second that passed.
    intervals = math.ceil(elapsed) + 1
    per_second = REJECT_SAMPLES + len(SECURITY_KEYS) * REJECT_PER_REASON
    assert len(samples) <= per_second * intervals
    assert len(summaries) <= intervals
    bound = table.daemon.rejections.bytes_per_interval_bound()
    assert sum(len(e.body) + len(e.raw or b"") for e in new) <= bound * intervals
    # A bad-tag log line names the shoe and the seq; the WARNINGs are bounded like the samples.
    bad_tag = [r.getMessage() for r in caplog.records if "bad_tag" in r.getMessage() and r.levelno == logging.WARNING]
    assert bad_tag
    first = next(m for m in bad_tag if "frame rejected" in m)
    assert f"shoe {SERIAL}" in first and f"seq {base}" in first
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and "rejected" in r.getMessage()]
    assert len(warnings) <= (per_second + 1) * intervals
    # The audit counts them all too.
    report, _ = replay(table.config.journal)
    assert sum(report.rejects.values()) >= total


def test_security_samples_taken_first_leave_the_whole_total_to_other_reasons() -> None:
    """host/daemon/rejections.py's bounds: the security reasons are sampled outside the
    `samples` total, so a tag-guessing attempt before the noise leaves the noise its whole
    total (and the journal's bound, `bytes_per_interval_bound`, counts them apart).
    Kills: security samples counted in the total."""
    lim = RejectionLimiter(interval_s=1.0, samples=4, per_reason=2, security=frozenset({"bad_tag"}))
    guesses = [lim.admit("bad_tag", 5, 1)[0] for _ in range(10)]
    noise = [lim.admit(reason, None, 2)[0] for reason in ("bad_cobs", "truncated") for _ in range(10)]
    assert sum(guesses) == 2 and sum(noise) == 4
    summary = lim.take(3, force=True)
    assert summary is not None and summary["samples"] == 2 + 4
