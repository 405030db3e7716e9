"""One direction of a TCP connection put back in order: a byte stream with its gaps.

Segments arrive in any order, repeated or overlapping; the stream releases bytes
as they become contiguous, each byte once (the copy that first reaches the
stream's end wins; real retransmissions carry the same bytes anyway). A hole
becomes a gap (an ``int``, the number of bytes never captured) when the other
side acknowledges past it (it was delivered, only not captured), when more than
``max_pending`` bytes wait behind it, or when the connection ends.
"""

from __future__ import annotations

import heapq

__all__ = ["MAX_PENDING", "MAX_SEGMENTS", "Piece", "TcpStream"]

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
        "fin_at",
        "max_pending",
        "next",
        "offset",
        "pending",
        "pending_bytes",
        "picked_up",
        "retransmitted",
        "starts",
    )

    def __init__(self, max_pending: int = MAX_PENDING) -> None:
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
        if self.pending_bytes > self.max_pending or len(self.pending) > MAX_SEGMENTS:
            return self._skip_hole()
        return []

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

    def acked(self, ack: int) -> list[Piece]:
        """The other side acknowledged up to ``ack``: a hole before it was only not captured."""
        if self.next is None:
            return []
        if self.fin_at is not None and ack == (self.fin_at + 1) & _MASK:
            ack = self.fin_at  # the FIN takes a sequence number but is not a stream byte
        out: list[Piece] = []
        while True:
            ahead = (ack - self.next) & _MASK
            if ahead == 0 or ahead >= _WINDOW:
                return out
            if self.starts and self.starts[0] - self.offset < ahead:
                ahead = self.starts[0] - self.offset  # the hole ends where captured bytes start
            out += self._skip(ahead)

    def flush(self) -> list[Piece]:
        """The connection ended: every hole left becomes a gap, and what is pending is released."""
        out: list[Piece] = []
        while self.pending:
            out += self._skip_hole()
        return out
