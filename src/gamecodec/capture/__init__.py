"""Decode packet captures (pcap, pcapng) of the five protocols."""

from gamecodec.capture._records import (
    Address,
    CaptureError,
    Direction,
    Flow,
    Item,
    StreamDecoder,
    Unit,
)

__all__ = ["Address", "CaptureError", "Direction", "Flow", "Item", "StreamDecoder", "Unit"]
