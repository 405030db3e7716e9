"""What every gamecodec session has in common: its events and its shape.

Sessions are Sans-IO: they never read a socket or a clock. Give them bytes
and the time, and ask them what to send and when to wake them next.

* **Datagram sessions** (:class:`gamecodec.avara.Connection`,
  :class:`gamecodec.lludp.Circuit`) follow :class:`DatagramSession`.
* **Stream sessions** (BZRC, ywindow) follow :class:`StreamSession`.
* **Frame sessions** (Archipelago, whose transport delivers whole WebSocket
  messages) follow :class:`FrameSession`.

``receive_*`` returns what that input delivered (decoded messages, or the
events they caused: each session's docstring says which).
:meth:`~DatagramSession.events` returns, once each, the events the session
raised otherwise: its timers, losses and closures. Every event is an
:class:`Event`; a peer that stopped answering is :class:`PeerLost` in every
protocol.

The asyncio adapters can hand every datagram, chunk or frame they send or
receive to a *tap*, a callable taking one :class:`Traffic` record (for logging
and capture). An exception a tap raises goes to the event loop's exception
handler (which logs it) and changes nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from gamecodec._public import public_dir

__all__ = [
    "DatagramSession",
    "Event",
    "FrameSession",
    "PeerLost",
    "StreamSession",
    "Tap",
    "Traffic",
]


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of every event a gamecodec session reports."""


@dataclass(frozen=True, slots=True)
class PeerLost(Event):
    """The peer stopped answering: the session gave up on it at ``at``.

    ``reason`` says why, in words (``"no ping reply for 60 s"``).
    """

    reason: str
    at: float


class Traffic(NamedTuple):
    """One datagram or frame an asyncio adapter sent or received."""

    direction: Literal["in", "out"]
    """``"in"`` (received) or ``"out"`` (sent)."""
    data: bytes | str
    """The bytes as on the wire (``str`` for WebSocket text frames)."""
    time: float
    """The event loop's clock when it was seen."""
    peer: Any
    """The other side's address (``None`` where the transport has one peer)."""


Tap = Callable[[Traffic], None]
"""A callable the asyncio adapters give every :class:`Traffic` record."""


@runtime_checkable
class DatagramSession(Protocol):
    """A session over datagrams (UDP)."""

    def receive_datagram(self, data: bytes, now: float) -> list[Any]:
        """Take one received datagram; returns what it delivered, in order."""
        ...

    def datagrams_to_send(self, now: float) -> list[bytes]:
        """Run the timers due at ``now``; returns the datagrams to send."""
        ...

    def events(self) -> list[Any]:
        """The events raised since the last call (each returned once)."""
        ...

    def next_deadline(self) -> float | None:
        """When to call :meth:`datagrams_to_send` next (``None``: no timer)."""
        ...


@runtime_checkable
class StreamSession(Protocol):
    """A session over a byte stream (TCP)."""

    def receive_data(self, data: bytes, now: float) -> list[Any]:
        """Take received bytes, in any chunking (``b""``: the peer closed)."""
        ...

    def data_to_send(self) -> bytes:
        """The bytes to write now (``b""`` when there is nothing)."""
        ...

    def events(self) -> list[Any]:
        """The events raised since the last call (each returned once)."""
        ...

    def next_deadline(self) -> float | None:
        """When to call :meth:`handle_timeout` next (``None``: no timer)."""
        ...

    def handle_timeout(self, now: float) -> list[Any]:
        """Run the timers due at ``now``; returns the events they raised."""
        ...


@runtime_checkable
class FrameSession(Protocol):
    """A session over a message transport (WebSocket frames)."""

    def receive_frame(self, frame: str | bytes, now: float) -> list[Any]:
        """Take one received frame; returns what it delivered, in order."""
        ...

    def frames_to_send(self) -> list[str]:
        """The frames to send now."""
        ...

    def events(self) -> list[Any]:
        """The events raised since the last call (each returned once)."""
        ...

    def next_deadline(self) -> float | None:
        """When to call :meth:`handle_timeout` next (``None``: no timer)."""
        ...

    def handle_timeout(self, now: float) -> list[Any]:
        """Run the timers due at ``now``; returns the events they raised."""
        ...


__dir__ = public_dir(__name__)
