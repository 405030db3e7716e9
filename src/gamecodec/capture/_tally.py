"""What a capture counts as it is read: flows, errors, flow numbers."""

from __future__ import annotations

from dataclasses import dataclass

from gamecodec.capture._records import CaptureError, Flow

__all__ = ["FlowStats", "Tally"]


@dataclass(slots=True)
class FlowStats:
    """What one flow carried: its :class:`Flow` and counts (``first``/``last``: capture times)."""

    flow: Flow
    packets: int = 0
    bytes: int = 0
    """Transport payload bytes (UDP data, TCP segment data, retransmissions included)."""
    units: int = 0
    errors: int = 0
    first: float = 0.0
    last: float = 0.0


class Tally:
    """The counts one capture keeps, shared by its UDP and TCP halves."""

    __slots__ = ("error_counts", "errors", "flows", "next_index", "now", "packets")

    def __init__(self) -> None:
        self.packets = 0
        self.errors = 0
        self.error_counts: dict[str, int] = {}
        self.flows: list[FlowStats] = []
        self.next_index = 1
        self.now = 0.0

    def error(self, item: CaptureError) -> CaptureError:
        """Count ``item``; returns it."""
        self.errors += 1
        self.error_counts[item.where] = self.error_counts.get(item.where, 0) + 1
        return item

    def new_index(self) -> int:
        """The next flow's number."""
        index = self.next_index
        self.next_index += 1
        return index
