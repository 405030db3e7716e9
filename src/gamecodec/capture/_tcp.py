"""One direction of a TCP connection put back in order: a byte stream with its gaps.

Segments arrive in any order, repeated or overlapping; the stream releases bytes
as they become contiguous, each byte once (the copy that first reaches the
stream's end wins; real retransmissions carry the same bytes anyway). A hole
becomes a gap (an ``int``, the number of bytes never captured) when the other
side has acknowledged past it (it was delivered, only not captured) and bytes
after it were captured, when more than ``max_pending`` bytes wait behind it, or
when the connection ends. A tap or a ``tcpdump -i any`` can record the
receiver's ack before the sender's segment, so an acknowledged hole with nothing
captured after it waits: it is filled if its bytes come, and is a gap once later
bytes come without them, or once the stream has made no progress for ``grace``
seconds of capture time since the ack (see :meth:`TcpStream.expire`).
"""

from __future__ import annotations

import heapq

__all__ = ["ACK_GRACE", "MAX_PENDING", "MAX_SEGMENTS", "Piece", "TcpStream"]

ACK_GRACE = 1.0
"""Seconds of capture time an acknowledged hole with nothing captured after it
waits for its bytes (the ack was recorded before the data it covers)."""

MAX_PENDING = 1 << 20
"""Bytes held out of order per direction before the hole before them is given up."""

MAX_SEGMENTS = 1024
"""Segments held out of order per direction before the hole before them is given up."""

_MASK = 0xFFFFFFFF
_HALF = 1 << 31
_WINDOW = 1 << 30  # a segment further ahead than this is not of this stream

Piece = bytes | int
"""What a stream releases: contiguous bytes, or the size of a gap (an ``int``)."""


class TcpStream:
    """The reassembled bytes of one direction.

    ``offset`` counts the stream's bytes released so far (gaps included);
    ``started`` is False until the first sequence number is known; ``picked_up``
    is True when that was a data segment, not a SYN (the start was not captured).
    """

    __slots__ = (
        "ack_clock",
        "ack_clock_at",
        "acked_to",
        "fin_at",
        "grace",
        "max_pending",
        "next",
        "offset",
        "pending",
        "pending_bytes",
        "picked_up",
        "retransmitted",
        "starts",
    )

    def __init__(self, max_pending: int = MAX_PENDING, grace: float = ACK_GRACE) -> None:
        self.next: int | None = None
        self.pending: dict[int, bytes] = {}
        """Segments waiting behind a hole, by their start's stream offset."""
        self.starts: list[int] = []
        """The keys of ``pending`` as a heap (the earliest first)."""
        self.pending_bytes = 0
        self.max_pending = max_pending
        self.offset = 0
        self.fin_at: int | None = None
        self.picked_up = False
        self.retransmitted = 0
        self.grace = grace
        self.acked_to = 0
        """The stream offset the other side has acknowledged up to (the furthest seen)."""
        self.ack_clock = 0.0
        self.ack_clock_at = 0
        """When an acknowledged hole began to wait, and the stream's offset then."""

    @property
    def started(self) -> bool:
        """Whether the stream's position is known."""
        return self.next is not None

    def syn(self, seq: int) -> None:
        """A SYN with sequence number ``seq``: data starts at ``seq + 1``."""
        if self.next is None:
            self.next = (seq + 1) & _MASK

    def fin(self, seq: int) -> None:
        """A FIN at sequence number ``seq`` (after the segment's data)."""
        self.fin_at = seq & _MASK
        if self.next is not None:
            ahead = (self.fin_at - self.next) & _MASK
            if ahead < _WINDOW:  # an ack of the FIN is not one of a stream byte
                self.acked_to = min(self.acked_to, self.offset + ahead)

    def add(self, seq: int, data: bytes) -> list[Piece]:
        """A segment's data at ``seq``; the pieces it releases (usually zero or one)."""
        if not data:
            return []
        if self.next is None:
            self.next = seq
            self.picked_up = True
        ahead = (seq - self.next) & _MASK
        if ahead >= _HALF:  # starts before what was released: repeated or overlapping
            behind = _HALF * 2 - ahead
            if behind >= len(data):
                self.retransmitted += 1
                return []
            data = data[behind:]
            ahead = 0
        if ahead == 0:
            out: list[Piece] = []
            self._release(out, data)
            if self.pending:
                self._drain(out)
            return out
        if ahead >= _WINDOW:
            return []
        start = self.offset + ahead  # where it starts in the stream: no wrap to mind
        old = self.pending.get(start)
        if old is None:
            heapq.heappush(self.starts, start)
        if old is None or len(old) < len(data):
            self.pending_bytes += len(data) - (0 if old is None else len(old))
            self.pending[start] = data
        out = []
        while self.pending_bytes > self.max_pending or len(self.pending) > MAX_SEGMENTS:
            out += self._skip_hole()  # until what is held is within the bounds again
        if self.acked_to > self.offset:  # bytes came after an acknowledged hole
            out += self._give_up_acked()
        return out

    def _release(self, out: list[Piece], data: bytes) -> None:
        assert self.next is not None
        out.append(data)
        self.next = (self.next + len(data)) & _MASK
        self.offset += len(data)

    def _drain(self, out: list[Piece]) -> None:
        """Release the pending segments that now touch the stream (earliest start first)."""
        starts, pending = self.starts, self.pending
        while starts and starts[0] <= self.offset:
            start = heapq.heappop(starts)
            data = pending.pop(start)
            self.pending_bytes -= len(data)
            if start + len(data) > self.offset:
                self._release(out, data[self.offset - start :])

    def _skip_hole(self) -> list[Piece]:
        """Give up the hole before the first pending segment: a gap, then what follows."""
        return self._skip(self.starts[0] - self.offset)

    def _skip(self, size: int) -> list[Piece]:
        assert self.next is not None
        out: list[Piece] = [size]
        self.next = (self.next + size) & _MASK
        self.offset += size
        self._drain(out)
        return out

    def skip_to(self, seq: int) -> list[Piece]:
        """Bytes up to ``seq`` were never captured: a gap, then what is pending after it."""
        if self.next is None:
            return []
        size = (seq - self.next) & _MASK
        if size == 0 or size >= _HALF:
            return []
        return self._skip(size)

    def ack(self, ack: int, time: float) -> list[Piece]:
        """The other side acknowledged up to ``ack`` at ``time``: the gaps this shows.

        A hole before captured bytes was only not captured: a gap now. A hole
        with nothing captured after it waits (see :meth:`expire`).
        """
        if self.next is None:
            return []
        ahead = (ack - self.next) & _MASK
        if ahead == 0 or ahead >= _WINDOW:  # nothing new, behind, or not of this stream
            return []
        if self.fin_at is not None:
            ahead = min(ahead, (self.fin_at - self.next) & _MASK)
        target = self.offset + ahead
        if target > self.acked_to:
            if self.acked_to <= self.offset:  # a hole begins to wait
                self.ack_clock, self.ack_clock_at = time, self.offset
            self.acked_to = target
        return self._give_up_acked()

    def _give_up_acked(self) -> list[Piece]:
        """Gaps for the acknowledged holes that bytes captured after them show lost."""
        out: list[Piece] = []
        while self.starts and self.acked_to > self.offset:
            out += self._skip(min(self.starts[0], self.acked_to) - self.offset)
        return out

    def expire(self, time: float) -> list[Piece]:
        """At ``time``: an acknowledged hole that waited ``grace`` seconds with no
        progress of the stream is a gap (its bytes were never captured)."""
        if self.acked_to <= self.offset:
            return []
        if self.offset != self.ack_clock_at:  # bytes came since: wait from now
            self.ack_clock, self.ack_clock_at = time, self.offset
            return []
        if not time - self.ack_clock > self.grace:
            return []
        return self._skip(self.acked_to - self.offset)

    def flush(self) -> list[Piece]:
        """The connection ended: every hole left becomes a gap, and what is pending is released."""
        out: list[Piece] = []
        while self.pending:
            out += self._skip_hole()
        if self.acked_to > self.offset:
            out += self._skip(self.acked_to - self.offset)
        return out
