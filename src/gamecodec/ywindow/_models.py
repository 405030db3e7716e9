"""ywindow result types, events and constants (never compiled)."""

from __future__ import annotations

import enum
from typing import NamedTuple

__all__ = [
    "AUTHORITY_SIZE",
    "COOKIE_SIZE",
    "DIGEST_SIZE",
    "MAX_GREETING",
    "MAX_MESSAGE",
    "MAX_SOFTWARE",
    "MIN_MAX_MESSAGE",
    "VERSION",
    "Authenticated",
    "AuthenticationFailed",
    "Call",
    "CallHandle",
    "ConnectionClosed",
    "Encodable",
    "Event",
    "Greeting",
    "Keyword",
    "Message",
    "Notification",
    "Reply",
    "Role",
    "State",
    "Value",
]

MAX_MESSAGE = 16 * 1024 * 1024
"""Default cap on one message's bytes (header word included): the most a
decoder ever buffers, and the largest word length it accepts."""

MIN_MAX_MESSAGE = 6
"""The smallest usable cap: one header word."""

COOKIE_SIZE = 256
DIGEST_SIZE = 16
AUTHORITY_SIZE = 256
MAX_GREETING = 100
"""A greeting line's bytes, newline included (spec §1.5)."""
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


class Greeting(NamedTuple):
    """The other side's greeting line."""

    role: Role
    major: int
    minor: int
    software: str


class Authenticated(NamedTuple):
    """Both digests checked: the connection is in packet mode. The server
    cookie (with the authority) is what the document keys cryptography on."""

    server_cookie: bytes


class AuthenticationFailed(NamedTuple):
    """The other side's digest did not match: this side closed."""

    reason: str


class Call(NamedTuple):
    """An incoming ``c``: answer it with ``Peer.reply(id, ...)``."""

    id: int
    method: str
    args: tuple[Value, ...]


class Notification(NamedTuple):
    """An incoming ``v``: a call without reply, or a server event."""

    method: str
    args: tuple[Value, ...]


class Reply(NamedTuple):
    """The ``r`` answering our call ``id`` (FIFO order)."""

    id: int
    values: tuple[Value, ...]


class ConnectionClosed(NamedTuple):
    """The other side closed the stream (end of input)."""

    pending_calls: tuple[int, ...]


Event = (
    Greeting | Authenticated | AuthenticationFailed | Call | Notification | Reply | ConnectionClosed
)
