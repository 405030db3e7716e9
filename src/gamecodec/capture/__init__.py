"""Decode packet captures (pcap, pcapng) of the five protocols.

>>> from gamecodec import capture
>>> cap = capture.read("game.pcap")                       # doctest: +SKIP
>>> for item in cap:                                       # doctest: +SKIP
...     if isinstance(item, capture.Unit):
...         print(item.time, item.flow.id, item.direction, item.names)
>>> [(s.flow.id, s.flow.protocol, s.flow.reason) for s in cap.flows]  # doctest: +SKIP

:func:`read` takes a path or a binary file object and yields, in capture
order, a :class:`Unit` per decoded datagram or message and a
:class:`CaptureError` per thing that could not be read or decoded.
"""

from gamecodec.capture._capture import Capture, read
from gamecodec.capture._detect import PORTS, Override, parse_override
from gamecodec.capture._records import (
    Address,
    CaptureError,
    Direction,
    Flow,
    Item,
    StreamDecoder,
    Unit,
)
from gamecodec.capture._streams import STREAM_DECODERS
from gamecodec.capture._tally import FlowStats

__all__ = [
    "PORTS",
    "STREAM_DECODERS",
    "Address",
    "Capture",
    "CaptureError",
    "Direction",
    "Flow",
    "FlowStats",
    "Item",
    "Override",
    "StreamDecoder",
    "Unit",
    "parse_override",
    "read",
]
