"""The serial link to the shoe: transport (pyserial, reconnect) and protocol (ack, resend).

- `SerialTransport`, `LinkState`: see `transport`.
- `ShoeLink`, `LinkSink`, `Command`, `LinkStats`: see `shoelink`.
"""

from cardshoe.link.shoelink import Command, LinkSink, LinkStats, ShoeLink
from cardshoe.link.transport import LinkState, SerialTransport

__all__ = ["Command", "LinkSink", "LinkState", "LinkStats", "SerialTransport", "ShoeLink"]
