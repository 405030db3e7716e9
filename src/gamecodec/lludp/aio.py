"""Thin asyncio adapter: one :class:`~gamecodec.lludp.circuit.Circuit` per UDP endpoint.

The protocol feeds received datagrams to the circuit with the loop's clock,
writes what the circuit wants to send, and keeps one timer at the circuit's
``next_deadline()``. Delivered messages queue up for :meth:`CircuitProtocol.recv`.

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
        a = await aio.open_circuit(("127.0.0.1", 0))
        b = await aio.open_circuit(("127.0.0.1", 0))
        a.peer, b.peer = b.local_address, a.local_address

        async def pump(p: aio.CircuitProtocol) -> list[int]:
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
from collections.abc import Callable
from typing import Any, cast

from gamecodec.errors import LocalProtocolError
from gamecodec.lludp._models import Message
from gamecodec.lludp.circuit import BadDatagram, Circuit, MessageDropped, PeerLost

__all__ = ["DRAIN_LIMIT", "CircuitProtocol", "open_circuit"]

Address = tuple[Any, ...]

DRAIN_LIMIT = 256
"""Default bound of :meth:`CircuitProtocol.drain`: reliable messages unacked."""


class CircuitProtocol(asyncio.DatagramProtocol):
    """A :class:`asyncio.DatagramProtocol` driving one :class:`Circuit`.

    Datagrams from addresses other than ``peer`` are ignored (when ``peer``
    is ``None``, the first sender becomes the peer). ``dropped`` collects the
    reliable messages the circuit gave up (:class:`MessageDropped`) and
    ``bad`` the datagrams it could not decode (:class:`BadDatagram`); ``lost``
    is set when the circuit reports the peer lost, and then :meth:`recv`
    raises :class:`ConnectionError`.
    """

    def __init__(self, circuit: Circuit, peer: Address | None = None) -> None:
        self.circuit = circuit
        self._peer = peer
        self.dropped: list[MessageDropped] = []
        self.bad: list[BadDatagram] = []
        self.lost: PeerLost | None = None
        self._transport: asyncio.DatagramTransport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._received: asyncio.Queue[Message | None] = asyncio.Queue()
        self._room = asyncio.Event()
        self._room.set()
        self._limit = DRAIN_LIMIT

    # -- asyncio callbacks ------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)
        self._loop = asyncio.get_running_loop()
        self._flush()

    def datagram_received(self, data: bytes, addr: Address) -> None:
        if self._peer is None:
            self._peer = addr
        elif addr != self._peer:
            return
        assert self._loop is not None
        put = self._received.put_nowait
        for message in self.circuit.receive_datagram(data, self._loop.time()):
            put(message)
        self._flush()

    def error_received(self, exc: Exception) -> None:
        """ICMP errors (port unreachable ...): the circuit's pings decide."""

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport = None
        self._received.put_nowait(None)
        self._room.set()

    # -- API ----------------------------------------------------------------

    @property
    def peer(self) -> Address | None:
        """Where datagrams go (and the only address they are taken from)."""
        return self._peer

    @peer.setter
    def peer(self, addr: Address | None) -> None:
        self._peer = addr
        self._flush()

    @property
    def local_address(self) -> Address:
        """The socket's own address (to give to the other side)."""
        assert self._transport is not None
        return tuple(self._transport.get_extra_info("sockname"))

    def send(self, message: Message, *, reliable: bool = False) -> int:
        """Send ``message`` now (with the acks owed); return its sequence number."""
        if self._loop is None or self._transport is None:
            raise LocalProtocolError("send on a closed endpoint")
        seq = self.circuit.send(message, reliable=reliable, now=self._loop.time())
        self._flush()
        return seq

    async def drain(self, limit: int = DRAIN_LIMIT) -> None:
        """Wait until fewer than ``limit`` reliable messages are unacknowledged."""
        self._limit = limit
        while self.circuit.unacked >= limit and self.lost is None and self._transport:
            self._room.clear()
            await self._room.wait()

    async def recv(self) -> Message:
        """The next delivered message (in arrival order)."""
        if self.lost is not None and self._received.empty():
            raise ConnectionError(f"LLUDP peer lost: {self.lost.reason}")
        message = await self._received.get()
        if message is None:
            self._received.put_nowait(None)  # wake other readers too
            raise ConnectionError(
                "LLUDP endpoint closed"
                if self.lost is None
                else f"LLUDP peer lost: {self.lost.reason}"
            )
        return message

    def close(self) -> None:
        """Close the socket (send a CloseCircuit first if the peer expects one)."""
        if self._transport is not None:
            self._transport.close()

    # -- internals ------------------------------------------------------------

    def _flush(self) -> None:
        loop, transport = self._loop, self._transport
        if loop is None or transport is None:
            return
        peer = self._peer
        if peer is None:
            return  # nobody to talk to yet: no timers either
        circuit = self.circuit
        for dg in circuit.datagrams_to_send(loop.time()):
            transport.sendto(dg, peer)
        for event in circuit.events():
            if isinstance(event, MessageDropped):
                self.dropped.append(event)
            elif isinstance(event, BadDatagram):
                self.bad.append(event)
            else:
                self.lost = event
                self._received.put_nowait(None)
        if circuit.unacked < self._limit or self.lost is not None:
            self._room.set()
        deadline = circuit.next_deadline()
        if deadline != self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None if deadline is None else loop.call_at(deadline, self._on_timer)
            self._timer_at = deadline

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        self._flush()


async def open_circuit(
    local_addr: Address,
    remote_addr: Address | None = None,
    *,
    circuit_type: Callable[..., Circuit] | None = None,
    **circuit_kwargs: Any,
) -> CircuitProtocol:
    """Bind a UDP socket at ``local_addr`` and return its protocol, whose
    :class:`Circuit` (built from ``circuit_kwargs`` with the loop's clock)
    talks to ``remote_addr`` (or to the first peer that writes, or to whatever
    ``protocol.peer`` is set to later). ``circuit_type`` picks a twin
    (``gamecodec.lludp._circuit_py.Circuit``; the active one by default)."""
    loop = asyncio.get_running_loop()
    circuit_kwargs.setdefault("now", loop.time())
    circuit = (Circuit if circuit_type is None else circuit_type)(**circuit_kwargs)
    _, protocol = await loop.create_datagram_endpoint(
        lambda: CircuitProtocol(circuit, remote_addr), local_addr=local_addr
    )
    return protocol
