"""Thin asyncio adapter: one :class:`~gamecodec.lludp.Circuit` per UDP endpoint.

:func:`open_endpoint` binds a socket and returns an :class:`Endpoint`, which
feeds received datagrams to the circuit with the loop's clock, writes what
the circuit wants to send, and keeps one timer at the circuit's
``next_deadline()``. Delivered messages queue up for :meth:`Endpoint.recv`,
and so do the :class:`~gamecodec.lludp.StrictDecodeFailed` events of a
``strict=True`` circuit, in arrival order among them.
A ``tap=`` callable sees every datagram in and out as a
:class:`~gamecodec.sessions.Traffic` record (for logging or capture).

Loopback example (both ends send 10,000 reliable messages)::

    import asyncio
    from gamecodec import lludp
    from gamecodec.lludp import aio

    def numbered(i: int) -> lludp.Message:
        return lludp.build(
            "TestMessage",
            TestBlock1={"Test1": i},
            NeighborBlock=[{"Test0": 0, "Test1": 0, "Test2": 0}] * 4,
        )

    async def main() -> None:
        a = await aio.open_endpoint(("127.0.0.1", 0))
        b = await aio.open_endpoint(("127.0.0.1", 0))
        a.peer, b.peer = b.local_address, a.local_address

        async def pump(p: aio.Endpoint) -> list[int]:
            async def sender() -> None:
                for i in range(10_000):
                    await p.drain()  # at most 256 reliable messages unacked
                    p.send(numbered(i), reliable=True)
            task = asyncio.create_task(sender())
            got = [(await p.recv()).TestBlock1[0].Test1 for _ in range(10_000)]
            await task
            return got

        got_a, got_b = await asyncio.gather(pump(a), pump(b))
        assert sorted(got_a) == sorted(got_b) == list(range(10_000))
        a.close()
        b.close()

    asyncio.run(main())

LLUDP does not order messages: they are delivered in arrival order (over
loopback that is the order sent, save resends).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from gamecodec._aio import Address, SessionProtocol
from gamecodec._aio import open_endpoint as _bind
from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.lludp._models import (
    BadDatagram,
    Message,
    MessageDropped,
    PeerLost,
    StrictDecodeFailed,
)
from gamecodec.lludp.circuit import Circuit
from gamecodec.sessions import Tap

__all__ = ["DRAIN_LIMIT", "Endpoint", "open_endpoint"]

DRAIN_LIMIT = 256
"""Default bound of :meth:`Endpoint.drain`: reliable messages unacked."""


class Endpoint(SessionProtocol[Circuit, Message | StrictDecodeFailed]):
    """A :class:`asyncio.DatagramProtocol` driving one :class:`Circuit`.

    Datagrams from addresses other than ``peer`` are ignored (when ``peer``
    is ``None``, the first sender whose datagram decodes becomes the peer).
    :meth:`recv` returns the messages delivered and, in their place, the
    :class:`~gamecodec.lludp.StrictDecodeFailed` event of a packet a
    ``strict=True`` circuit acked but did not deliver (its ``message`` is
    the tolerant decode), so nothing the peer sent is known only to a list
    that is polled. ``dropped`` keeps the latest reliable messages the
    circuit gave up (:class:`~gamecodec.lludp.MessageDropped`) and ``bad``
    the latest datagrams it could not decode
    (:class:`~gamecodec.lludp.BadDatagram`), ``strict_failures`` the latest
    StrictDecodeFailed events (also returned by :meth:`recv`):
    :class:`collections.deque` objects of :attr:`history` events each;
    ``lost`` is set to the :class:`~gamecodec.sessions.PeerLost` event when
    the circuit reports the peer lost, and then :meth:`recv` raises
    :class:`ConnectionError`. Messages are delivered in arrival order.
    ``tap``, if given, sees every datagram received and sent.
    """

    name = "LLUDP"
    drain_limit = DRAIN_LIMIT
    taken_counter = "packets_in"

    def __init__(
        self, circuit: Circuit, peer: Address | None = None, *, tap: Tap | None = None
    ) -> None:
        super().__init__(circuit, peer, tap=tap)
        self.circuit = circuit
        self.dropped: deque[MessageDropped] = self._recent()
        self.bad: deque[BadDatagram] = self._recent()
        self.strict_failures: deque[StrictDecodeFailed] = self._recent()
        self.lost: PeerLost | None = None

    def send(self, message: Message, *, reliable: bool = False) -> int:
        """Send ``message`` now (with the acks owed); return its sequence number."""
        seq = self.circuit.send(message, reliable=reliable, now=self._now())
        self._flush()
        return seq

    def _started(self, now: float) -> None:
        # a circuit built before its peer wrote (a server endpoint waiting for its
        # first client, or built with the default now=0.0) counts from here, or
        # the circuit timeout would already have run out
        circuit = self.circuit
        if not (circuit.packets_in or circuit.packets_out) and circuit.lost is None:
            circuit.restart_clock(now)

    def _event(self, event: Any) -> None:
        if isinstance(event, MessageDropped):
            self.dropped.append(event)
        elif isinstance(event, BadDatagram):
            self.bad.append(event)
        elif isinstance(event, StrictDecodeFailed):
            self.strict_failures.append(event)
            self._received.put_nowait(event)  # delivered as the message would be
        else:
            self._peer_lost(event)


async def open_endpoint(
    local_addr: Address,
    remote_addr: Address | None = None,
    *,
    tap: Tap | None = None,
    circuit_type: Callable[..., Circuit] | None = None,
    **circuit_kwargs: Any,
) -> Endpoint:
    """Bind a UDP socket at ``local_addr`` and return its :class:`Endpoint`.

    Its :class:`Circuit` (built from ``circuit_kwargs``, with the loop's clock
    as ``now`` unless given) talks to ``remote_addr`` (a host name is
    resolved), or to the first peer whose datagram decodes, or to whatever
    ``endpoint.peer`` is set to later. ``tap`` sees every datagram in and out
    as a :class:`~gamecodec.sessions.Traffic` record. ``circuit_type`` builds
    the circuit instead of :class:`Circuit` (any callable taking the same
    keywords).
    """
    loop = asyncio.get_running_loop()
    circuit_kwargs.setdefault("now", loop.time())
    circuit = (Circuit if circuit_type is None else circuit_type)(**circuit_kwargs)
    endpoint = Endpoint(circuit, tap=tap)
    await _bind(endpoint, local_addr, remote_addr)
    return endpoint


__getattr__ = deprecated_names(
    __name__,
    {
        "open_circuit": ("open_endpoint", lambda: open_endpoint),
        "CircuitProtocol": ("Endpoint", lambda: Endpoint),
    },
)

__dir__ = public_dir(__name__)
