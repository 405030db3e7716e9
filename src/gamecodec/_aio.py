"""The asyncio datagram adapter shared by the UDP sessions (Avara, LLUDP).

:class:`SessionProtocol` drives any Sans-IO session with the methods
``receive_datagram(data, now)``, ``datagrams_to_send(now)``, ``events()``,
``next_deadline()`` and the property ``unacked``: it feeds received datagrams
with the loop's clock, writes what the session wants to send, and keeps one
timer at the session's next deadline. Each protocol's ``aio`` module
subclasses it with its own ``send`` and event handling.
"""

from __future__ import annotations

import asyncio
import socket
from collections import deque
from typing import Any, Generic, Protocol, TypeVar, cast

from gamecodec.errors import LocalProtocolError
from gamecodec.sessions import Tap, Traffic

__all__ = ["Address", "Session", "SessionProtocol", "call_tap", "open_endpoint"]

Address = tuple[Any, ...]


class Session(Protocol):
    """What :class:`SessionProtocol` needs of a session."""

    @property
    def unacked(self) -> int: ...
    def receive_datagram(self, data: bytes, now: float) -> list[Any]: ...
    def datagrams_to_send(self, now: float) -> list[bytes]: ...
    def events(self) -> list[Any]: ...
    def next_deadline(self) -> float | None: ...


def call_tap(tap: Tap, record: Traffic) -> None:
    """Give ``record`` to ``tap``. An exception the tap raises goes to the
    running event loop's exception handler (logged by default) and changes
    nothing else: a failing log must not stop a connection."""
    try:
        tap(record)
    except Exception as exc:
        asyncio.get_running_loop().call_exception_handler(
            {"message": f"gamecodec: the traffic tap {tap!r} raised", "exception": exc}
        )


S = TypeVar("S", bound=Session)
T = TypeVar("T")


class SessionProtocol(asyncio.DatagramProtocol, Generic[S, T]):
    """A :class:`asyncio.DatagramProtocol` driving one session of type ``S``
    that delivers items of type ``T``.

    Datagrams from addresses other than ``peer`` are ignored (when ``peer``
    is ``None``, the first sender whose datagram the session takes becomes
    the peer: garbage from a stray address does not). ``lost`` is set when
    the session reports its peer lost; :meth:`recv` then raises
    :class:`ConnectionError`. The event records of the subclasses are
    :class:`collections.deque` objects holding the latest :attr:`history`
    events (a class attribute, read when the protocol is built). ``tap``, if
    given, sees every datagram received (from any address) and sent, as a
    :class:`~gamecodec.sessions.Traffic` record (see :func:`call_tap` for a
    tap that raises).
    """

    name = "session"
    """The protocol's name in error messages."""
    drain_limit = 32
    """The default bound of :meth:`drain`."""
    history = 1024
    """How many of the latest events each event list keeps."""
    taken_counter = "datagrams_received"
    """The session's counter of datagrams it took (decoded, checksum right)."""

    def __init__(self, session: S, peer: Address | None = None, *, tap: Tap | None = None) -> None:
        self.session = session
        self.tap = tap
        self._peer = peer
        self.lost: Any = None
        self._transport: asyncio.DatagramTransport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._received: asyncio.Queue[T | None] = asyncio.Queue()
        self._room = asyncio.Event()
        self._room.set()
        self._limit = self.drain_limit

    # -- asyncio callbacks ------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)
        self._loop = asyncio.get_running_loop()
        if self._peer is not None:
            self._started(self._loop.time())
        self._flush()

    def datagram_received(self, data: bytes, addr: Address) -> None:
        assert self._loop is not None
        now = self._loop.time()
        if self.tap is not None:
            call_tap(self.tap, Traffic("in", data, now, addr))
        if self._peer is None:
            self._started(now)  # before the datagram: it may be the peer's first
            before = self._accepted()
            items = self.session.receive_datagram(data, now)
            if before is not None and self._accepted() == before:  # refused: not our peer
                self._take_events()
                return
            self._peer = addr
        elif addr != self._peer:
            return
        else:
            items = self.session.receive_datagram(data, now)
        put = self._received.put_nowait
        for item in items:
            put(item)
        self._flush()

    def error_received(self, exc: Exception) -> None:
        """ICMP errors (port unreachable ...): the session's timers decide."""

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
        first = self._peer is None
        self._peer = addr
        if first and addr is not None and self._loop is not None and self._transport:
            self._started(self._loop.time())
        self._flush()

    @property
    def local_address(self) -> Address:
        """The socket's own address (to give to the other side)."""
        assert self._transport is not None
        return tuple(self._transport.get_extra_info("sockname"))

    async def drain(self, limit: int | None = None) -> None:
        """Wait until fewer than ``limit`` (default :attr:`drain_limit`)
        reliable messages are unacknowledged."""
        self._limit = self.drain_limit if limit is None else limit
        while self.session.unacked >= self._limit and self.lost is None and self._transport:
            self._room.clear()
            await self._room.wait()

    async def recv(self) -> T:
        """The next delivered item."""
        if self.lost is not None and self._received.empty():
            raise ConnectionError(f"{self.name} peer lost: {self.lost.reason}")
        item = await self._received.get()
        if item is None:
            self._received.put_nowait(None)  # wake other readers too
            raise ConnectionError(
                f"{self.name} endpoint closed"
                if self.lost is None
                else f"{self.name} peer lost: {self.lost.reason}"
            )
        return item

    def close(self) -> None:
        """Close the socket."""
        if self._transport is not None:
            self._transport.close()

    # -- for subclasses -------------------------------------------------------

    def _now(self) -> float:
        """The loop's clock; refuses when the endpoint is not open."""
        if self._loop is None or self._transport is None:
            raise LocalProtocolError("send on a closed endpoint")
        return self._loop.time()

    def _started(self, now: float) -> None:
        """The endpoint has its peer at ``now``, or is about to if the session
        takes this first datagram (subclasses start session clocks)."""

    def _accepted(self) -> int | None:
        """How many datagrams the session has taken: its counter named by
        :attr:`taken_counter` (``None`` if it has none: then the first sender
        becomes the peer whatever it sent)."""
        count = getattr(self.session, self.taken_counter, None)
        return None if count is None else int(count)

    def _recent(self) -> deque[Any]:
        """An event record (a deque) that keeps the latest :attr:`history` events."""
        return deque(maxlen=self.history)

    def _event(self, event: Any) -> None:
        """Handle one session event (subclasses record theirs, then call
        :meth:`_peer_lost` for the loss event)."""

    def _peer_lost(self, event: Any) -> None:
        self.lost = event
        self._received.put_nowait(None)

    # -- internals ------------------------------------------------------------

    def _flush(self) -> None:
        loop, transport = self._loop, self._transport
        if loop is None or transport is None:
            return
        peer = self._peer
        if peer is None:
            return  # nobody to talk to yet: no timers either
        session = self.session
        now = loop.time()
        tap = self.tap
        for dg in session.datagrams_to_send(now):
            transport.sendto(dg, peer)
            if tap is not None:
                call_tap(tap, Traffic("out", dg, now, peer))
        self._take_events()
        if session.unacked < self._limit or self.lost is not None:
            self._room.set()
        deadline = session.next_deadline()
        if deadline != self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None if deadline is None else loop.call_at(deadline, self._on_timer)
            self._timer_at = deadline

    def _take_events(self) -> None:
        for event in self.session.events():
            self._event(event)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        self._flush()


async def open_endpoint(
    protocol: SessionProtocol[Any, Any], local_addr: Address, remote_addr: Address | None
) -> None:
    """Bind ``protocol`` at ``local_addr``; ``remote_addr`` (a host name such as
    ``localhost`` included) is resolved first, in the socket's address family,
    so it compares equal to the addresses datagrams come from."""
    loop = asyncio.get_running_loop()
    family = 0
    if remote_addr is not None:
        local = await loop.getaddrinfo(
            local_addr[0], local_addr[1], type=socket.SOCK_DGRAM, flags=socket.AI_PASSIVE
        )
        family = local[0][0]
        remote = await loop.getaddrinfo(
            remote_addr[0], remote_addr[1], family=family, type=socket.SOCK_DGRAM
        )
        protocol._peer = tuple(remote[0][4])
    await loop.create_datagram_endpoint(lambda: protocol, local_addr=local_addr, family=family)
