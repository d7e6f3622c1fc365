"""Hypothesis strategies for the messages of SPEC section 5 (valid by the payload rules)."""

from __future__ import annotations

from hypothesis import strategies as st

from cardshoe.protocol import (
    Ack, Card, CardsFrom, Clear, Config, Crash, DeckStatus, Fault, Heartbeat, Hello, Key, Maintenance,
    ManifestEntry, Message, NewShoe, Ping, Reply, ResendFrom, Time, Unread,
)

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
u64 = st.integers(0, 0xFFFFFFFFFFFFFFFF)
code = st.one_of(st.integers(0, 51), st.just(0xFF))


@st.composite
def new_shoes(draw: st.DrawFn) -> NewShoe:
    parts = draw(st.integers(1, 255))
    entries = draw(st.lists(st.builds(ManifestEntry, u8, st.binary(min_size=1, max_size=16)), max_size=11))
    return NewShoe(draw(u32), draw(u32), draw(st.sampled_from([1, 2])), draw(st.integers(0, parts - 1)),
                   parts, tuple(entries))


shoe_messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(Hello, u8, u8, u8, st.binary(min_size=32, max_size=32), u8, u8, u32, u32, u16, u16, u16),
    st.builds(Card, u32, u16, u32, code, st.sampled_from([1, 2]), u8, u8, u32, st.binary(min_size=1, max_size=16)),
    st.builds(Unread, u32, u16, u32),
    st.builds(DeckStatus, u32, u32, u8, u16, u16, u16, u8, u8, u8, u8, st.binary(min_size=7, max_size=7)),
    st.builds(Fault, u8, u8, u16, u32),
    st.builds(Key, u8, u8, u32),
    st.builds(Heartbeat, u32, u16, u8),
    st.builds(Reply, u32, u32, u8, u8, u32),
    st.builds(Crash, u32, st.sampled_from((1, 2)), u8, u8, u8, u32, u32, st.binary(min_size=32, max_size=32)),
)

host_messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(Ack, u32, u32),
    st.builds(ResendFrom, u32, u32),
    new_shoes(),
    st.builds(Config, u16, u16, u16, u16),
    st.builds(Time, u64),
    st.builds(Ping, u32),
    st.just(Maintenance()),
    st.builds(Clear, u16, u16),
    st.builds(CardsFrom, u32, u16),
)

# RESENT and the ignorable hint bits 4-7, never the reserved bits 1-3.
frame_flags = st.sampled_from([0, 1, 0x10, 0x81, 0xF0])
