"""What a capture counts as it is read: flows, errors, flow numbers."""

from __future__ import annotations

from dataclasses import dataclass

from gamecodec.capture._records import CaptureError, Flow

__all__ = ["FlowStats", "OtherFlows", "Tally"]


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


@dataclass(slots=True)
class OtherFlows:
    """The ended flows of no protocol not kept one by one, summed (they carry no units)."""

    flows: int = 0
    packets: int = 0
    bytes: int = 0
    errors: int = 0
    first: float | None = None
    last: float | None = None

    def add(self, stats: FlowStats) -> None:
        """Count one more flow."""
        self.flows += 1
        self.packets += stats.packets
        self.bytes += stats.bytes
        self.errors += stats.errors
        self.first = stats.first if self.first is None else min(self.first, stats.first)
        self.last = stats.last if self.last is None else max(self.last, stats.last)


class Tally:
    """The counts one capture keeps, shared by its UDP and TCP halves.

    ``flows`` holds, by flow number, the flows being followed, the flows taken
    for a protocol, and the first ``max_other_flows`` flows of no protocol to
    end; later flows of no protocol are summed in ``other_flows`` as they end.
    """

    __slots__ = (
        "error_counts",
        "errors",
        "flows",
        "max_other_flows",
        "next_index",
        "now",
        "other_flows",
        "other_kept",
        "packets",
    )

    def __init__(self, max_other_flows: int = 1000) -> None:
        self.packets = 0
        self.errors = 0
        self.error_counts: dict[str, int] = {}
        self.flows: dict[int, FlowStats] = {}
        self.max_other_flows = max_other_flows
        self.other_kept = 0
        self.other_flows = OtherFlows()
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

    def add_flow(self, stats: FlowStats) -> None:
        """A new flow (followed from now on)."""
        self.flows[stats.flow.index] = stats

    def ended(self, stats: FlowStats) -> None:
        """A flow is no longer followed (its counts are final): keep it or sum it."""
        if stats.flow.protocol is not None:
            return
        if self.other_kept < self.max_other_flows:
            self.other_kept += 1
            return
        if self.flows.pop(stats.flow.index, None) is not None:
            self.other_flows.add(stats)
