"""Thin asyncio adapter: one :class:`~gamecodec.avara.Connection` per UDP endpoint.

:func:`open_endpoint` binds a socket and returns its :class:`Endpoint`, which
feeds received datagrams to the connection with the loop's clock, writes what
the connection wants to send, and keeps one timer at its ``next_deadline()``.
Delivered commands queue up for :meth:`Endpoint.recv`. A ``tap=`` callable
sees every datagram in and out (a :class:`gamecodec.sessions.Traffic`).

Loopback example (both peers send 10,000 reliable commands; ``peer_cram_data=3``
as after the peer's kpPacketProtocolControl, so an urgent command unacked after
2 frames is resent: without it a burst waits for the peer's ACK-only datagram,
41 ms + the retransmit time later, as with the game)::

    import asyncio
    from gamecodec.avara import aio

    async def main() -> None:
        a = await aio.open_endpoint(("127.0.0.1", 0), my_id=1, peer_id=2, peer_cram_data=3)
        b = await aio.open_endpoint(("127.0.0.1", 0), my_id=2, peer_id=1, peer_cram_data=3)
        a.peer, b.peer = b.local_address, a.local_address

        async def pump(p: aio.Endpoint) -> list[int]:
            async def sender() -> None:
                for i in range(10_000):
                    await p.drain()  # at most DRAIN_LIMIT commands unacked
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
from collections import deque
from typing import Any

from gamecodec._aio import Address, SessionProtocol
from gamecodec._aio import open_endpoint as _bind
from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.avara._models import Command, PeerLost, SerialSkipped
from gamecodec.avara.session import Connection
from gamecodec.sessions import Tap

__all__ = ["DRAIN_LIMIT", "Address", "Endpoint", "open_endpoint"]

DRAIN_LIMIT = 32
"""Default bound of :meth:`Endpoint.drain`: commands unacked. Far below
the protocol's 1024-command window on purpose: the game paces itself (a
command per frame), and a burst that overflows a socket buffer loses
datagrams; once 16 commands queue behind a lost one the peer gives its serial
up for good (the game's skip rule). Over loopback, 256 lost commands so."""


class Endpoint(SessionProtocol[Connection, Command]):
    """A :class:`asyncio.DatagramProtocol` driving one :class:`Connection`.

    Datagrams from addresses other than ``peer`` are ignored (when ``peer``
    is ``None``, the first sender of a datagram with a right checksum becomes
    the peer). ``skipped`` (a :class:`collections.deque`) keeps the latest
    serials the skip rule gave up (:attr:`history` of them); ``lost`` is set
    when the session kills the connection, and then :meth:`recv` raises
    :class:`ConnectionError`. Commands are delivered in serial order.
    ``tap``, if given, sees every datagram received and sent.
    """

    name = "Avara"
    drain_limit = DRAIN_LIMIT

    def __init__(
        self, connection: Connection, peer: Address | None = None, *, tap: Tap | None = None
    ) -> None:
        super().__init__(connection, peer, tap=tap)
        self.connection = connection
        self.skipped: deque[int] = self._recent()
        self.lost: PeerLost | None = None

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
        serial = self.connection.send(
            command, p1=p1, p2=p2, p3=p3, data=data, urgent=urgent, now=self._now()
        )
        self._flush()
        return serial

    def _event(self, event: Any) -> None:
        if isinstance(event, SerialSkipped):
            self.skipped.append(event.serial)
        else:
            self._peer_lost(event)


async def open_endpoint(
    local_addr: Address,
    remote_addr: Address | None = None,
    *,
    tap: Tap | None = None,
    **connection_kwargs: Any,
) -> Endpoint:
    """Bind a UDP socket at ``local_addr`` and return its :class:`Endpoint`.

    Its :class:`Connection` (built from ``connection_kwargs``, ``now``
    defaulting to the loop's clock) talks to ``remote_addr`` (or to the first
    peer that writes, or to whatever ``endpoint.peer`` is set to later).
    ``tap`` sees every datagram in and out.
    """
    loop = asyncio.get_running_loop()
    connection_kwargs.setdefault("now", loop.time())
    endpoint = Endpoint(Connection(**connection_kwargs), tap=tap)
    await _bind(endpoint, local_addr, remote_addr)
    return endpoint


__getattr__ = deprecated_names(
    __name__,
    {
        "open_connection": ("open_endpoint", lambda: open_endpoint),
        "AvaraProtocol": ("Endpoint", lambda: Endpoint),
    },
)

__dir__ = public_dir(__name__)
