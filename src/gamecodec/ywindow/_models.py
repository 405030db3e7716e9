"""ywindow result types, events and constants (never compiled)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple, TypeAlias

from gamecodec.sessions import Event

__all__ = [
    "AUTHORITY_SIZE",
    "COOKIE_SIZE",
    "DIGEST_SIZE",
    "MAX_GREETING",
    "MAX_MESSAGE",
    "MAX_SOFTWARE",
    "MAX_UNANSWERED",
    "MIN_MAX_MESSAGE",
    "VERSION",
    "Authenticated",
    "AuthenticationFailed",
    "Call",
    "CallHandle",
    "ConnectionClosed",
    "Encodable",
    "Greeting",
    "Keyword",
    "Message",
    "Notification",
    "PeerEvent",
    "Reply",
    "Role",
    "State",
    "Value",
]

MAX_MESSAGE = 16 * 1024 * 1024
"""Default cap on one message's bytes (header word included): the most a
decoder ever buffers, and the largest word length it accepts."""

MAX_UNANSWERED = 1024
"""Default cap on incoming calls a peer holds unanswered (its own replies
wait behind them, in call order): past it the other side is pipelining more
than this side answers, and the peer closes."""

MIN_MAX_MESSAGE = 6
"""The smallest usable cap: one header word."""

COOKIE_SIZE = 256
"""The bytes of the random cookie each side sends in the handshake."""
DIGEST_SIZE = 16
"""The bytes of a handshake digest, MD5(authority || cookie)."""
AUTHORITY_SIZE = 256
"""The bytes of the shared secret (the authority)."""
MAX_GREETING = 100
"""A greeting line's bytes, newline included."""
MAX_SOFTWARE = 40
"""A greeting's ``<software>`` characters."""
VERSION = (0, 0)
"""The protocol version both greetings carry."""


class Keyword(str):
    """A ``k`` word: an ASCII keyword (method name or symbolic value such as
    ``ok``). Equal to the plain ``str``; plain ``str`` values encode as ``s``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Keyword({str.__repr__(self)})"


Value = int | str | bytes
"""A decoded word value: ``int`` (``i``), :class:`Keyword` (``k``), ``str``
(``s``) or ``bytes`` (``b``)."""

Encodable = Value | bytearray | memoryview
"""What the encoders take: a :data:`Value`, or any bytes-like object for ``b``."""


class Message(NamedTuple):
    """A ``c`` (call), ``v`` (call without reply, event) or ``r`` (reply)
    header and exactly the words it announces."""

    kind: str
    words: tuple[Value, ...]

    @property
    def method(self) -> str | None:
        """The method keyword of a ``c``/``v`` message (``None`` otherwise)."""
        if self.kind != "r" and self.words and type(self.words[0]) is Keyword:
            return self.words[0]
        return None

    @property
    def args(self) -> tuple[Value, ...]:
        """The words after the method of a ``c``/``v``; a reply's values."""
        return self.words if self.kind == "r" else self.words[1:]


class Role(enum.Enum):
    """Which side of the handshake a peer plays."""

    CLIENT = "client"
    SERVER = "server"


class State(enum.Enum):
    """Where a :class:`~gamecodec.ywindow.Peer` is in the connection."""

    GREETING = "greeting"
    COOKIE = "cookie"
    DIGEST = "digest"
    OPEN = "open"
    CLOSED = "closed"


class CallHandle:
    """One outgoing ``c`` call; ``values`` is set when its reply arrives."""

    __slots__ = ("args", "id", "method", "values")

    def __init__(self, id: int, method: str, args: tuple[Encodable, ...]) -> None:
        self.id = id
        self.method = method
        self.args = args
        self.values: tuple[Value, ...] | None = None

    @property
    def done(self) -> bool:
        """Whether the reply has arrived."""
        return self.values is not None

    def __repr__(self) -> str:
        state = "pending" if self.values is None else f"values={self.values!r}"
        return f"CallHandle(id={self.id}, method={self.method!r}, {state})"


@dataclass(frozen=True, slots=True)
class Greeting(Event):
    """The other side's greeting line: its role, protocol version and software."""

    role: Role
    major: int
    minor: int
    software: str


@dataclass(frozen=True, slots=True)
class Authenticated(Event):
    """Both digests checked: the connection is in packet mode. The server
    cookie (with the authority) is what applications key cryptography on."""

    server_cookie: bytes


@dataclass(frozen=True, slots=True)
class AuthenticationFailed(Event):
    """The other side's digest did not match (or it sent our own cookie back):
    this side closed."""

    reason: str


@dataclass(frozen=True, slots=True)
class Call(Event):
    """An incoming ``c``: answer it with ``Peer.reply(id, ...)``."""

    id: int
    method: str
    args: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Notification(Event):
    """An incoming ``v``: a call without reply, or a server event."""

    method: str
    args: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Reply(Event):
    """The ``r`` answering our call ``id`` (replies come in call order)."""

    id: int
    values: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class ConnectionClosed(Event):
    """The connection ended: ``pending_calls`` are the ids of our calls that
    never got a reply. ``by_peer`` is True when the other side closed the
    stream (end of input), False when :meth:`Peer.close` closed it."""

    pending_calls: tuple[int, ...]
    by_peer: bool = True


PeerEvent: TypeAlias = (
    Greeting | Authenticated | AuthenticationFailed | Call | Notification | Reply | ConnectionClosed
)
"""Every event a :class:`~gamecodec.ywindow.Peer` reports."""
