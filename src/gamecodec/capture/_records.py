"""What reading a capture gives: flows, decoded units and located errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

Direction = Literal["to_server", "to_client"]
"""Which way a unit went: from the flow's client to its server, or back."""


@dataclass(frozen=True, slots=True)
class Address:
    """One end of a flow: an IPv4 or IPv6 host and a port."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class Flow:
    """One conversation: a UDP address pair or one TCP connection, client first.

    ``protocol`` is what the flow was taken for (``None``: not recognised) and
    ``reason`` says why (the port, what the content showed, or an override).
    """

    transport: Literal["udp", "tcp"]
    client: Address
    server: Address
    protocol: str | None
    reason: str
    index: int
    """The flow's number in the capture, from 1 (a reused address pair is a new flow)."""

    @property
    def id(self) -> str:
        """``"udp 10.0.0.2:51712 > 10.0.0.1:9000"``: transport, client, server."""
        return f"{self.transport} {self.client} > {self.server}"


@dataclass(slots=True)
class Unit:
    """One decoded protocol unit.

    A datagram (Avara, LLUDP), a WebSocket message (Archipelago), a command or a
    response (BZRC), a message (ywindow). ``value`` is what the protocol's own decoder
    gives for ``payload``; ``names`` are the message names it holds (LLUDP: the
    message; Avara: its commands; Archipelago: each command's ``cmd``; BZRC: the
    command word, or the response's kind; ywindow: the word).

    Read-only by convention, not frozen: a capture makes one per datagram or
    message, and a frozen dataclass costs four times as much to make.
    """

    time: float
    """Capture time, in seconds since the epoch, of the packet that completed the unit."""
    packet: int
    """That packet's number in the file, from 1."""
    flow: Flow
    direction: Direction
    protocol: str
    names: tuple[str, ...]
    value: object
    size: int
    """Bytes the unit took on the wire (for a compressed WebSocket message, compressed)."""
    payload: bytes
    """The bytes given to the decoder (for a WebSocket message, after inflating)."""
    options: tuple[int, int] | None = None
    """What the decoder was given besides ``payload``, so that it can be decoded
    again the same way: Avara's net version and layout; ``None`` elsewhere."""


@dataclass(frozen=True, slots=True)
class CaptureError:
    """Something in a capture that could not be read or decoded, and where.

    ``where`` names the layer (``"file"``, ``"link"``, ``"ip"``, ``"tcp"``,
    ``"websocket"``, ``"decode"``, ...); ``offset`` is a byte offset in the file for
    file errors, in the payload for decode errors, in the direction's byte stream
    for stream errors (a TCP gap, bad WebSocket framing).
    """

    where: str
    message: str
    time: float | None = None
    packet: int | None = None
    flow: Flow | None = None
    direction: Direction | None = None
    offset: int | None = None


Item = Unit | CaptureError
"""What reading a capture yields."""


class StreamDecoder(Protocol):
    """Turns one TCP connection's two byte streams, in capture order, into units.

    Made with the connection's :class:`Flow`; fed each direction's reassembled bytes
    as they become contiguous.
    """

    def feed(self, direction: Direction, data: bytes, time: float, packet: int) -> list[Item]:
        """The units (and errors) that ``data`` completes."""
        ...

    def gap(self, direction: Direction, size: int, time: float, packet: int) -> list[Item]:
        """``size`` bytes of ``direction`` were never captured: resynchronise.

        ``size`` 0: the direction is picked up after its start (the capture began
        inside the connection), so its first bytes may be the middle of anything.
        """
        ...

    def close(self, time: float, packet: int) -> list[Item]:
        """The connection ended (or the capture did): what is left, as errors."""
        ...
