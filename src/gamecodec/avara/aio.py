"""Thin asyncio adapter: one :class:`~gamecodec.avara.Connection` per UDP endpoint.

The protocol feeds received datagrams to the session with the loop's clock,
writes what the session wants to send, and keeps one timer at the session's
``next_deadline()``. Delivered commands queue up for :meth:`AvaraProtocol.recv`.

Loopback example (both peers send 10,000 reliable commands)::

    import asyncio
    from gamecodec.avara import aio

    async def main() -> None:
        a = await aio.open_connection(("127.0.0.1", 0), my_id=1, peer_id=2)
        b = await aio.open_connection(("127.0.0.1", 0), my_id=2, peer_id=1)
        a.peer, b.peer = b.local_address, a.local_address

        async def pump(p: aio.AvaraProtocol) -> list[int]:
            async def sender() -> None:
                for i in range(10_000):
                    await p.drain()  # at most SEND_WINDOW commands unacked
                    p.send(17, p1=-8, p3=i)
            task = asyncio.create_task(sender())
            got = [(await p.recv()).p3 for _ in range(10_000)]
            await task
            return got

        assert await asyncio.gather(pump(a), pump(b)) == [list(range(10_000))] * 2
        a.close()
        b.close()

    asyncio.run(main())
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from gamecodec.avara._models import Command
from gamecodec.avara.session import SEND_WINDOW, Connection, PeerLost, SerialSkipped
from gamecodec.errors import LocalProtocolError

__all__ = ["AvaraProtocol", "open_connection"]

Address = tuple[Any, ...]


class AvaraProtocol(asyncio.DatagramProtocol):
    """A :class:`asyncio.DatagramProtocol` driving one :class:`Connection`.

    Datagrams from addresses other than ``peer`` are ignored (when ``peer``
    is ``None``, the first sender becomes the peer). ``skipped`` lists the
    serials the skip rule gave up; ``lost`` is set when the session kills the
    connection, and then :meth:`recv` raises :class:`ConnectionError`.
    """

    def __init__(self, connection: Connection, peer: Address | None = None) -> None:
        self.connection = connection
        self._peer = peer
        self.skipped: list[int] = []
        self.lost: PeerLost | None = None
        self._transport: asyncio.DatagramTransport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._received: asyncio.Queue[Command | None] = asyncio.Queue()
        self._room = asyncio.Event()
        self._room.set()

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
        for cmd in self.connection.receive_datagram(data, self._loop.time()):
            put(cmd)
        self._flush()

    def error_received(self, exc: Exception) -> None:
        """ICMP errors (port unreachable ...): the game ignores them too."""

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

    def send(
        self,
        command: int,
        *,
        p1: int = 0,
        p2: int = 0,
        p3: int = 0,
        data: bytes = b"",
        urgent: bool = False,
    ) -> int:
        """Queue a reliable command and send what is due; return its serial."""
        if self._loop is None or self._transport is None:
            raise LocalProtocolError("send on a closed endpoint")
        serial = self.connection.send(
            command, p1=p1, p2=p2, p3=p3, data=data, urgent=urgent, now=self._loop.time()
        )
        self._flush()
        return serial

    async def drain(self, limit: int = SEND_WINDOW) -> None:
        """Wait until fewer than ``limit`` commands are unacknowledged."""
        while self.connection.unacked >= limit and self.lost is None and self._transport:
            self._room.clear()
            await self._room.wait()

    async def recv(self) -> Command:
        """The next delivered command, in serial order."""
        if self.lost is not None and self._received.empty():
            raise ConnectionError(f"Avara peer lost: {self.lost.reason}")
        cmd = await self._received.get()
        if cmd is None:
            self._received.put_nowait(None)  # wake other readers too
            raise ConnectionError(
                "Avara peer lost" if self.lost is None else f"Avara peer lost: {self.lost.reason}"
            )
        return cmd

    def close(self) -> None:
        """Close the socket (the game sends no goodbye at this layer)."""
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
        conn = self.connection
        for dg in conn.datagrams_to_send(loop.time()):
            transport.sendto(dg, peer)
        for event in conn.events():
            if isinstance(event, SerialSkipped):
                self.skipped.append(event.serial)
            else:
                self.lost = event
                self._received.put_nowait(None)
        if conn.unacked < SEND_WINDOW or self.lost is not None:
            self._room.set()
        deadline = conn.next_deadline()
        if deadline != self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None if deadline is None else loop.call_at(deadline, self._on_timer)
            self._timer_at = deadline

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        self._flush()


async def open_connection(
    local_addr: Address,
    remote_addr: Address | None = None,
    **connection_kwargs: Any,
) -> AvaraProtocol:
    """Bind a UDP socket at ``local_addr`` and return its protocol, whose
    :class:`Connection` (built from ``connection_kwargs`` with the loop's
    clock) talks to ``remote_addr`` (or to the first peer that writes, or to
    whatever ``protocol.peer`` is set to later)."""
    loop = asyncio.get_running_loop()
    connection_kwargs.setdefault("now", loop.time())
    conn = Connection(**connection_kwargs)
    _, protocol = await loop.create_datagram_endpoint(
        lambda: AvaraProtocol(conn, remote_addr), local_addr=local_addr
    )
    return protocol
