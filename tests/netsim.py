"""A seeded, deterministic simulated lossy network for Sans-IO session tests.

Protocol-agnostic: two endpoints exchange opaque datagrams (``bytes``) over
two one-way links, in virtual time (seconds, floats). Nothing reads a clock;
the same seed and the same endpoints give the same run, byte for byte.

Endpoints
---------
Anything with these three methods (wrap your session in a small adapter)::

    receive(data: bytes, now: float) -> None     # a datagram arrived
    transmit(now: float) -> list[bytes]          # datagrams to put on the wire now
    next_deadline() -> float | None              # when transmit() next has work

The loop calls ``transmit(now)`` on both endpoints after every step (after
arrivals and timers at that instant), so a session only needs to report its
own timers through ``next_deadline()``.

Links
-----
``LinkConfig(loss, duplicate, reorder, reorder_delay, delay, jitter)``: each
datagram is lost with probability ``loss``; otherwise it arrives after
``delay + uniform(0, jitter)`` seconds, plus ``uniform(0, reorder_delay)``
with probability ``reorder`` (so it overtakes or is overtaken by others), and
a second copy (with its own delay) is delivered with probability
``duplicate``. ``Network.cut()`` drops everything on the chosen directions
until ``Network.restore()``; datagrams already in flight still arrive.

Network
-------
``net = Network(a, b, seed=1, ab=LinkConfig(...), ba=None)`` (``ba=None``
uses the ``ab`` settings for both directions), then:

* ``net.now``: the current virtual time (starts at ``start``, default 0.0).
* ``net.at(when, callback)``: run ``callback(now)`` at virtual time ``when``
  (application timers: "send one message every 16 ms"). Callbacks may call
  ``net.at`` again.
* ``net.run(until=None, stop=None, max_steps=10_000_000) -> int``: step to
  the minimum of the endpoints' deadlines, the next arrival and the next
  timer, until ``until`` (then ``net.now == until``), until ``stop()`` is
  true, or until nothing is left to do. Returns the number of steps. An
  endpoint whose deadline never moves past ``now`` while nothing else
  happens raises ``RuntimeError`` (a busy-looping session is a bug).
* ``net.stats["ab"]`` / ``["ba"]``: counters ``sent``, ``lost``, ``cut``,
  ``duplicated``, ``reordered``, ``delivered``.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Endpoint", "LinkConfig", "Network"]

_STALL_LIMIT = 1000


class Endpoint(Protocol):
    """What the network drives (see the module docstring)."""

    def receive(self, data: bytes, now: float) -> None: ...

    def transmit(self, now: float) -> list[bytes]: ...

    def next_deadline(self) -> float | None: ...


@dataclass(frozen=True)
class LinkConfig:
    """Fault settings of one direction (probabilities, seconds)."""

    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    reorder_delay: float = 0.05
    delay: float = 0.02
    jitter: float = 0.0


class Network:
    """Two endpoints, two faulty links, one virtual clock."""

    def __init__(
        self,
        a: Endpoint,
        b: Endpoint,
        *,
        seed: int,
        ab: LinkConfig | None = None,
        ba: LinkConfig | None = None,
        start: float = 0.0,
    ) -> None:
        self.a = a
        self.b = b
        self.now = start
        self._rng = random.Random(seed)
        self._links = {"ab": ab or LinkConfig(), "ba": ba or ab or LinkConfig()}
        self._cut = {"ab": False, "ba": False}
        self._flight: list[tuple[float, int, int, bytes]] = []  # (time, seq, to 0/1, data)
        self._timers: list[tuple[float, int, Callable[[float], None]]] = []
        self._seq = 0
        self.stats = {
            name: dict.fromkeys(("sent", "lost", "cut", "duplicated", "reordered", "delivered"), 0)
            for name in ("ab", "ba")
        }

    def at(self, when: float, callback: Callable[[float], None]) -> None:
        """Run ``callback(now)`` at virtual time ``when``."""
        self._seq += 1
        heapq.heappush(self._timers, (when, self._seq, callback))

    def cut(self, *, ab: bool = True, ba: bool = True) -> None:
        """Drop every datagram sent on the chosen directions from now on."""
        self._cut["ab"] = self._cut["ab"] or ab
        self._cut["ba"] = self._cut["ba"] or ba

    def restore(self) -> None:
        """Undo :meth:`cut` on both directions."""
        self._cut = {"ab": False, "ba": False}

    def in_flight(self) -> int:
        """Datagrams on the wire right now."""
        return len(self._flight)

    def _put(self, link: str, to: int, data: bytes) -> None:
        stats = self.stats[link]
        stats["sent"] += 1
        if self._cut[link]:
            stats["cut"] += 1
            return
        cfg = self._links[link]
        rng = self._rng
        if rng.random() < cfg.loss:
            stats["lost"] += 1
            return
        copies = 2 if rng.random() < cfg.duplicate else 1
        if copies == 2:
            stats["duplicated"] += 1
        for _ in range(copies):
            delay = cfg.delay + (rng.random() * cfg.jitter if cfg.jitter else 0.0)
            if cfg.reorder and rng.random() < cfg.reorder:
                stats["reordered"] += 1
                delay += rng.random() * cfg.reorder_delay
            self._seq += 1
            heapq.heappush(self._flight, (self.now + delay, self._seq, to, data))

    def _transmit_all(self) -> None:
        now = self.now
        for data in self.a.transmit(now):
            self._put("ab", 1, data)
        for data in self.b.transmit(now):
            self._put("ba", 0, data)

    def run(
        self,
        until: float | None = None,
        stop: Callable[[], bool] | None = None,
        max_steps: int = 10_000_000,
    ) -> int:
        """Step virtual time (see the module docstring); return the steps taken."""
        steps = 0
        stalled = 0
        flight = self._flight
        timers = self._timers
        a, b = self.a, self.b
        self._transmit_all()
        while steps < max_steps:
            if stop is not None and stop():
                break
            t = math.inf
            if flight:
                t = flight[0][0]
            if timers and timers[0][0] < t:
                t = timers[0][0]
            da = a.next_deadline()
            if da is not None and da < t:
                t = da
            db = b.next_deadline()
            if db is not None and db < t:
                t = db
            if t == math.inf:
                break
            if until is not None and t > until:
                self.now = max(self.now, until)
                break
            if t <= self.now:
                stalled += 1
                if stalled > _STALL_LIMIT:
                    raise RuntimeError(f"an endpoint's deadline is stuck at {self.now}")
            else:
                stalled = 0
                self.now = t
            now = self.now
            steps += 1
            while flight and flight[0][0] <= now:
                _, _, to, data = heapq.heappop(flight)
                if to:
                    self.stats["ab"]["delivered"] += 1
                    b.receive(data, now)
                else:
                    self.stats["ba"]["delivered"] += 1
                    a.receive(data, now)
                stalled = 0
            while timers and timers[0][0] <= now:
                _, _, callback = heapq.heappop(timers)
                callback(now)
                stalled = 0
            self._transmit_all()
        return steps
