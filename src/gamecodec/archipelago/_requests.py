"""The requests of one Archipelago client session awaiting a reply, in one place.

:class:`PendingRequests` keeps every piece of request bookkeeping a
:class:`~gamecodec.archipelago.session.ClientSession` needs: the request ids,
the requests waiting for their reply (and when they were sent, for the
timeout), the line of scouts (LocationInfo replies carry no id: they come in
order), the cancelled requests whose replies must be consumed without an event,
and the Sets and Gets the reference server refuses with an InvalidPacket. It
does no I/O and reads no clock. Each memory of a request that may never be
answered is bounded (the ``MAX_*`` constants); a pending request is the
application's own, bounded by the session's ``request_timeout``.
"""

from __future__ import annotations

import enum
import itertools
import secrets
from collections import deque
from dataclasses import dataclass

__all__ = [
    "MAX_CANCELLED",
    "MAX_LATE_SCOUTS",
    "MAX_REFUSABLE_SETS",
    "PendingRequests",
    "Unmatched",
]

MAX_LATE_SCOUTS = 1024
"""Cancelled scouts remembered so that their replies are consumed without an
event (beyond it the oldest are forgotten: a reply that still comes is reported
as a reply to no request, as a timed-out scout's is). Every scout keeps its
place in the line of replies whatever the count: a place costs no memory."""
MAX_REFUSABLE_SETS = 1024
"""Sets (and, apart, Gets) the reference refuses, awaiting that refusal (beyond
it the oldest are forgotten: a server that lets them through)."""
MAX_CANCELLED = 1024
"""Cancelled Gets and Sets remembered so that their replies are consumed without an
event (beyond it the oldest are forgotten: a server that answers none; a reply
that comes after that is reported as a reply to no request, as a late one is)."""

SCOUT = "LocationScouts"


class Unmatched(enum.Enum):
    """A reply that answers no pending request of ours."""

    EATEN = "eaten"  # it answers a cancelled request: consumed, no event
    NOT_OURS = "not_ours"  # timed out, forgotten, sent with send(), or none due


@dataclass(slots=True)
class _Pending:
    kind: str
    sent_at: float
    place: int = -1  # a scout's place in the line of scouts


def _bound(queue: deque[int | None], request_id: int | None) -> None:
    queue.append(request_id)
    while len(queue) > MAX_REFUSABLE_SETS:
        queue.popleft()


class PendingRequests:
    """A session's requests awaiting their reply, and the replies still due
    to requests no longer awaited (cancelled, timed out, sent untracked)."""

    def __init__(self, first_id: int | None = None) -> None:
        # ids start at random: the server echoes a Set's extra keys to every
        # SetNotify watcher, so another client's ids must not look like ours
        start = secrets.randbits(48) + 1 if first_id is None else first_id
        self._ids = itertools.count(start)
        self._pending: dict[int, _Pending] = {}
        # scouts are answered in order (LocationInfo or InvalidPacket, no id):
        # each takes the next place in line, each reply the oldest place unanswered
        self._scouts_sent = 0
        self._scouts_answered = 0
        self._scouts: dict[int, int] = {}  # place: our pending scout's request id
        self._cancelled_scouts: dict[int, None] = {}  # places, oldest first: replies eaten
        # cancelled Gets and Sets (id: command), oldest first, their replies still due
        self._cancelled: dict[int, str] = {}
        # Sets and Gets the reference refuses, oldest first (None: sent with send())
        self._refusable: dict[str, deque[int | None]] = {"Set": deque(), "Get": deque()}

    def __len__(self) -> int:
        """Requests awaiting their reply."""
        return len(self._pending)

    @property
    def remembered(self) -> int:
        """Entries kept for replies still due to requests no longer awaited
        (cancelled ones, refusals expected), each bounded by a ``MAX_*``."""
        refusable = sum(len(queue) for queue in self._refusable.values())
        return len(self._cancelled_scouts) + len(self._cancelled) + refusable

    # ------------------------------------------------------------------ adding

    def add(self, kind: str, now: float, *, refusable: bool = False) -> int:
        """A new request of command ``kind`` sent at ``now``; its id. A scout
        takes the next place in the line of scouts; ``refusable``: a Set or Get
        the reference refuses (its InvalidPacket answers it)."""
        request_id = next(self._ids)
        pending = _Pending(kind, now)
        self._pending[request_id] = pending
        if kind == SCOUT:
            pending.place = self._scouts_sent
            self._scouts[self._scouts_sent] = request_id
            self._scouts_sent += 1
        if refusable:
            _bound(self._refusable[kind], request_id)
        return request_id

    def add_untracked(self, kind: str, *, refusable: bool = False) -> None:
        """A command sent without an id of ours (with ``send()``) whose reply
        carries none either: a scout's place in line, a refusable Set or Get,
        so that its reply is not taken for one of ours."""
        if kind == SCOUT:
            self._scouts_sent += 1
        elif refusable:
            _bound(self._refusable[kind], None)

    # ------------------------------------------------------------------ replies

    def resolve(self, request_id: int | None, kind: str) -> int | None:
        """The reply to pending ``kind`` request ``request_id`` (the id it
        echoes) came: no longer pending; the id, or ``None`` if that is no
        pending ``kind`` request of ours (a notice)."""
        if request_id is None:
            return None
        pending = self._pending.get(request_id)
        if pending is None or pending.kind != kind:
            return None
        del self._pending[request_id]
        return request_id

    def eaten(self, request_id: int | None, kind: str) -> bool:
        """Whether a reply or refusal echoing ``request_id`` answers a cancelled
        ``kind`` request (then it is forgotten, and consumed without an event)."""
        if request_id is None or self._cancelled.get(request_id) != kind:
            return False
        del self._cancelled[request_id]
        return True

    def answer_scout(self) -> int | Unmatched | None:
        """A scout reply (LocationInfo, or a refusal) came: the pending scout it
        answers (the oldest place in line), :class:`Unmatched` if that place is
        not a pending scout, ``None`` if no scout reply is due at all."""
        if self._scouts_answered == self._scouts_sent:
            return None
        place = self._scouts_answered
        self._scouts_answered += 1
        request_id = self._scouts.pop(place, None)
        if request_id is not None:
            self._pending.pop(request_id, None)
            return request_id
        if place in self._cancelled_scouts:
            del self._cancelled_scouts[place]
            return Unmatched.EATEN
        return Unmatched.NOT_OURS

    def answer_refusal(self, kind: str) -> int | Unmatched:
        """An InvalidPacket refusing a ``kind`` Set or Get came: the oldest one
        sent that the reference refuses, if it is pending (another Set's reply
        may still come after this refusal: the server broadcasts SetReplies from
        a task), else :class:`Unmatched`."""
        queue = self._refusable.get(kind)
        refused = queue.popleft() if queue else None
        if self.eaten(refused, kind):
            return Unmatched.EATEN
        if refused is None or self._pending.pop(refused, None) is None:
            return Unmatched.NOT_OURS
        return refused

    # ------------------------------------------------------------------ ending

    def cancel(self, request_id: int) -> bool:
        """Drop pending ``request_id`` (its caller went away): its reply, when it
        comes, is eaten (:meth:`eaten`, :meth:`answer_scout`); a scout keeps its
        place in line. False if it was not pending."""
        pending = self._pending.pop(request_id, None)
        if pending is None:
            return False
        if pending.kind == SCOUT:
            del self._scouts[pending.place]
            self._cancelled_scouts[pending.place] = None
            while len(self._cancelled_scouts) > MAX_LATE_SCOUTS:
                del self._cancelled_scouts[next(iter(self._cancelled_scouts))]
        else:
            self._cancelled[request_id] = pending.kind
            while len(self._cancelled) > MAX_CANCELLED:
                del self._cancelled[next(iter(self._cancelled))]
        return True

    def next_deadline(self, timeout: float | None) -> float | None:
        """When the oldest pending request times out (``None``: no timer)."""
        if timeout is None or not self._pending:
            return None
        return min(p.sent_at for p in self._pending.values()) + timeout

    def expire(self, now: float, timeout: float | None) -> list[tuple[int, str]]:
        """Drop the requests sent ``timeout`` or more before ``now``; their ids
        and commands, oldest first. A timed-out scout's reply is still due: its
        place stays in line (at no cost), its reply answers no request."""
        if timeout is None:
            return []
        expired: list[tuple[int, str]] = []
        for request_id, pending in list(self._pending.items()):
            if now >= pending.sent_at + timeout:
                del self._pending[request_id]
                if pending.kind == SCOUT:
                    del self._scouts[pending.place]
                expired.append((request_id, pending.kind))
        return expired
