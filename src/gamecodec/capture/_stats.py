"""Per-flow statistics of a capture: messages, bytes, rates, resends, round trips.

Memory is bounded whatever the capture's length: sequence windows, pending acks
and kept round-trip samples are capped.
"""

from __future__ import annotations

import statistics
from collections import Counter, OrderedDict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gamecodec.capture._records import CaptureError, Direction, Flow, Item, Unit
from gamecodec.capture._source import Source, as_items

__all__ = ["CaptureStats", "FlowStats", "SequenceStats", "collect"]

WINDOW = 4096
"""Recent sequence numbers (per direction) kept to tell a duplicate from a late packet."""
PENDING = 65_536
"""Unanswered reliable packets or pings kept (per flow) for round-trip estimates."""
SAMPLES = 10_000
"""Round-trip samples kept per flow (the count, minimum and maximum cover all)."""
ERRORS_KEPT = 100
"""Errors kept per flow (and for the capture) with their place; all are counted."""
OTHER_FLOWS_KEPT = 1000
"""Flows of no protocol given their own statistics; the errors of later ones are summed."""


@dataclass
class SequenceStats:
    """One direction's sequence numbers (LLUDP packets, Avara command serials)."""

    resends: int = 0
    """Units flagged as resent (LLUDP RESENT; Avara send count above 0)."""
    duplicates: int = 0
    """Sequence numbers seen again."""
    gaps: int = 0
    """Jumps forward past at least one number."""
    missing: int = 0
    """Numbers jumped over (some may arrive late)."""
    late: int = 0
    """Numbers below the highest seen, not seen before (reordered, or a gap filled);
    ``as_dict`` also gives ``lost``: missing numbers that never came late."""
    highest: int | None = None
    recent: OrderedDict[int, None] = field(default_factory=OrderedDict)

    def see(self, number: int, step: int, modulus: int) -> None:
        """Count ``number`` (numbers go up by ``step`` and wrap at ``modulus``)."""
        if number in self.recent:
            self.duplicates += 1
            return
        self.recent[number] = None
        if len(self.recent) > WINDOW:
            self.recent.popitem(last=False)
        if self.highest is None:
            self.highest = number
            return
        ahead = (number - self.highest) % modulus
        if ahead == 0 or ahead >= modulus // 2:
            self.late += 1
            return
        if ahead > step:
            self.gaps += 1
            self.missing += ahead // step - 1
        self.highest = number

    def as_dict(self) -> dict[str, int]:
        return {
            "resends": self.resends,
            "duplicates": self.duplicates,
            "gaps": self.gaps,
            "missing": self.missing,
            "late": self.late,
            "lost": max(0, self.missing - self.late),
        }


@dataclass
class RoundTrips:
    """Round-trip samples in seconds (the first ``SAMPLES`` kept for the median)."""

    count: int = 0
    low: float | None = None
    high: float | None = None
    kept: list[float] = field(default_factory=list)

    def add(self, seconds: float) -> None:
        if seconds < 0:
            return
        self.count += 1
        self.low = seconds if self.low is None else min(self.low, seconds)
        self.high = seconds if self.high is None else max(self.high, seconds)
        if len(self.kept) < SAMPLES:
            self.kept.append(seconds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "samples": self.count,
            "median_ms": None if not self.kept else 1000 * statistics.median(self.kept),
            "min_ms": None if self.low is None else 1000 * self.low,
            "max_ms": None if self.high is None else 1000 * self.high,
        }


_OTHER: dict[Direction, Direction] = {"to_server": "to_client", "to_client": "to_server"}


@dataclass
class FlowStats:
    """What one flow carried."""

    flow: Flow
    first: float | None = None
    last: float | None = None
    units: Counter[str] = field(default_factory=Counter)
    """Units per direction."""
    bytes: Counter[str] = field(default_factory=Counter)
    """Bytes (on the wire) per direction."""
    messages: Counter[str] = field(default_factory=Counter)
    """Messages by name (an Avara datagram counts each of its commands)."""
    message_bytes: Counter[str] = field(default_factory=Counter)
    """Bytes by message name (a unit's size, counted for each name it holds)."""
    sequences: dict[str, SequenceStats] = field(default_factory=dict)
    ack_rtt: RoundTrips = field(default_factory=RoundTrips)
    ping_rtt: RoundTrips = field(default_factory=RoundTrips)
    errors: int = 0
    errors_by_where: Counter[str] = field(default_factory=Counter)
    error_list: list[CaptureError] = field(default_factory=list)
    pending: dict[tuple[str, int], float] = field(default_factory=dict)
    in_order: dict[str, deque[tuple[int, float]]] = field(default_factory=dict)
    """Avara: each direction's unacknowledged serials and when they were sent."""

    def seq(self, direction: str) -> SequenceStats:
        got = self.sequences.get(direction)
        if got is None:
            got = self.sequences[direction] = SequenceStats()
        return got

    def expect(self, key: tuple[str, int], time: float) -> None:
        """Remember when something that will be answered was sent."""
        if key not in self.pending:
            self.pending[key] = time
            if len(self.pending) > PENDING:
                del self.pending[next(iter(self.pending))]

    def answer(self, key: tuple[str, int], time: float, into: RoundTrips) -> None:
        sent = self.pending.pop(key, None)
        if sent is not None:
            into.add(time - sent)

    @property
    def duration(self) -> float:
        if self.first is None or self.last is None:
            return 0.0
        return self.last - self.first

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for JSON)."""
        seconds = self.duration
        total = sum(self.units.values())
        return {
            "flow": self.flow.index,
            "flow_id": self.flow.id,
            "protocol": self.flow.protocol,
            "reason": self.flow.reason,
            "first": self.first,
            "last": self.last,
            "seconds": seconds,
            "units": dict(self.units),
            "bytes": dict(self.bytes),
            "units_per_second": total / seconds if seconds > 0 else None,
            "bytes_per_second": sum(self.bytes.values()) / seconds if seconds > 0 else None,
            "messages": dict(self.messages.most_common()),
            "message_bytes": dict(self.message_bytes.most_common()),
            "sequences": {d: s.as_dict() for d, s in sorted(self.sequences.items())},
            "ack_rtt": self.ack_rtt.as_dict(),
            "ping_rtt": self.ping_rtt.as_dict(),
            "errors": self.errors,
            "errors_by_where": dict(self.errors_by_where),
            "error_list": [_error_dict(e) for e in self.error_list],
        }


def _error_dict(error: CaptureError) -> dict[str, Any]:
    return {
        "where": error.where,
        "message": error.message,
        "time": error.time,
        "packet": error.packet,
        "direction": error.direction,
        "offset": error.offset,
    }


def _lludp(stats: FlowStats, unit: Unit) -> None:
    m: Any = unit.value
    direction = unit.direction
    seq = stats.seq(direction)
    if m.flags & 0x20:
        seq.resends += 1
    seq.see(m.sequence, 1, 1 << 32)
    if m.flags & 0x40 and not m.flags & 0x20:
        stats.expect((direction, m.sequence), unit.time)
    other = _OTHER[direction]
    for ack in m.acks:
        stats.answer((other, ack), unit.time, stats.ack_rtt)
    if m.name == "PacketAck":
        for block in m.blocks.get("Packets", ()):
            stats.answer((other, block[0]), unit.time, stats.ack_rtt)
    elif m.name == "StartPingCheck":
        for block in m.blocks.get("PingID", ()):
            stats.expect((f"ping {direction}", block[0]), unit.time)
    elif m.name == "CompletePingCheck":
        for block in m.blocks.get("PingID", ()):
            stats.answer((f"ping {other}", block[0]), unit.time, stats.ping_rtt)


def _avara(stats: FlowStats, unit: Unit) -> None:
    d: Any = unit.value
    direction = unit.direction
    seq = stats.seq(direction)
    for command in d.commands:
        if command.send_count:
            seq.resends += 1
        seq.see(command.serial, 2, 1 << 16)
        if not command.send_count:
            sent = stats.in_order.get(direction)
            if sent is None:
                sent = stats.in_order[direction] = deque(maxlen=PENDING)
            sent.append((command.serial, unit.time))
    # the ack covers every serial up to it (an odd ack: up to ack - 1)
    acked = d.ack - (d.ack & 1)
    waiting = stats.in_order.get(_OTHER[direction])
    while waiting and _covers(acked, waiting[0][0]):
        stats.ack_rtt.add(unit.time - waiting.popleft()[1])


def _covers(ack: int, serial: int) -> bool:
    return (ack - serial) % 65_536 < 32_768


_PER_PROTOCOL = {"lludp": _lludp, "avara": _avara}


@dataclass
class CaptureStats:
    """Statistics of a whole capture: one :class:`FlowStats` per flow with units
    or errors (flows of no protocol: the first :data:`OTHER_FLOWS_KEPT`)."""

    flows: dict[tuple[str, int], FlowStats] = field(default_factory=dict)
    units: int = 0
    errors: int = 0
    errors_by_where: Counter[str] = field(default_factory=Counter)
    error_list: list[CaptureError] = field(default_factory=list)
    """Errors outside any flow (the file, the link layer)."""
    other_errors: Counter[str] = field(default_factory=Counter)
    """By layer, the errors of the flows of no protocol past the first
    :data:`OTHER_FLOWS_KEPT` (a scan on a known port, say): counted, not kept per flow."""
    other_flows_kept: int = 0
    """Flows of no protocol given their own statistics so far."""
    timeline: Counter[tuple[str, int]] = field(default_factory=Counter)
    """Units per protocol and whole second of capture time."""
    sizes: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """Per protocol and message name: units and bytes (for sizes by message)."""
    silent_flows: Counter[str] = field(default_factory=Counter)
    """Flows that gave no unit and no error (no known port, content not
    recognised): ``flows``, ``packets`` and ``bytes``."""

    def add_silent_flows(self, flows: Iterable[Any], capture: str = "", other: Any = None) -> None:
        """Count the flows of a capture read to its end (its
        :attr:`gamecodec.capture.Capture.flows`) that no item named, and the flows of
        no protocol it summed instead of keeping (``other``: its ``other_flows``)."""
        for flow in flows:
            if flow.flow.protocol is None and (capture, flow.flow.index) not in self.flows:
                self.silent_flows.update(flows=1, packets=flow.packets, bytes=flow.bytes)
        if other is not None:
            self.silent_flows.update(flows=other.flows, packets=other.packets, bytes=other.bytes)

    def add(self, item: Item, capture: str = "") -> None:
        """Count one item."""
        if isinstance(item, CaptureError):
            self.errors += 1
            self.errors_by_where[item.where] += 1
            if item.flow is None:
                if len(self.error_list) < ERRORS_KEPT:
                    self.error_list.append(item)
                return
            key = (capture, item.flow.index)
            if item.flow.protocol is None and key not in self.flows:
                if self.other_flows_kept >= OTHER_FLOWS_KEPT:
                    self.other_errors[item.where] += 1
                    return
                self.other_flows_kept += 1
            stats = self._flow(item.flow, capture)
            stats.errors += 1
            stats.errors_by_where[item.where] += 1
            if len(stats.error_list) < ERRORS_KEPT:
                stats.error_list.append(item)
            return
        self.units += 1
        stats = self._flow(item.flow, capture)
        if stats.first is None:
            stats.first = item.time
        stats.last = item.time
        stats.units[item.direction] += 1
        stats.bytes[item.direction] += item.size
        names = item.names or ("?",)
        for name in names:
            stats.messages[name] += 1
            stats.message_bytes[name] += item.size
        self.timeline[item.protocol, int(item.time)] += 1
        for name in set(names):
            size = self.sizes.get((item.protocol, name))
            if size is None:
                size = self.sizes[item.protocol, name] = [0, 0]
            size[0] += 1
            size[1] += item.size
        special = _PER_PROTOCOL.get(item.protocol)
        if special is not None:
            special(stats, item)

    def _flow(self, flow: Flow, capture: str) -> FlowStats:
        key = (capture, flow.index)
        stats = self.flows.get(key)
        if stats is None:
            stats = self.flows[key] = FlowStats(flow)
        return stats

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for JSON)."""
        return {
            "units": self.units,
            "errors": self.errors,
            "errors_by_where": dict(self.errors_by_where),
            "error_list": [_error_dict(e) for e in self.error_list],
            "other_errors": dict(self.other_errors),
            "silent_flows": {k: self.silent_flows[k] for k in ("flows", "packets", "bytes")},
            "flows": [
                {"capture": capture, **stats.as_dict()}
                for (capture, _), stats in self.flows.items()
            ],
        }


def collect(
    source: Source | Iterable[Item],
    *,
    protocols: Sequence[str] = (),
    capture: str | None = None,
    into: CaptureStats | None = None,
) -> CaptureStats:
    """The statistics of ``source`` (a capture, or items already read), added to
    ``into`` when given (to gather several captures)."""
    items, name = as_items(source, protocols, capture)
    stats = CaptureStats() if into is None else into
    for item in items:
        stats.add(item, name)
    flows = getattr(items, "flows", None)  # a capture read here: its silent flows
    if flows is not None:
        stats.add_silent_flows(flows, name, getattr(items, "other_flows", None))
    return stats
