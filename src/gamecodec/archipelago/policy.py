"""What an Archipelago client does around its sessions, Sans-IO: no sockets, no clock.

A :class:`~gamecodec.archipelago.session.ClientSession` is one connection: its
handshake, its items, its requests. :class:`ClientPolicy` outlives it and
decides what the asyncio :class:`~gamecodec.archipelago.aio.Client` only
carries out:

* where the client is (:class:`ClientState`), the :class:`ConnectionLost`
  event of a logged-in connection that went, and whether it reconnects;
* when to reconnect: exponential backoff from ``initial_backoff``, capped at
  ``max_backoff``, less a random part of up to ``backoff_jitter`` of it (the
  random source is injected: seed it to replay a run), as a deadline from
  ``now``; the exponent counts the attempts since the last login, so a server
  that takes sockets but no logins is not hammered;
* what a re-login replays into the new session: the checked locations the
  server's Connected lacks (LocationChecks), the watched keys (SetNotify), and
  the tags changed since the first login (in the Connect);
* the keepalive's silence: when nothing at all (no frame, no pong) was heard
  for ``keepalive_timeout`` seconds, the connection counts as lost.

:class:`ClientOptions` declares the client's options once, with their
defaults and checks.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, overload

from gamecodec._public import public_dir
from gamecodec.archipelago import commands as C
from gamecodec.archipelago.session import ClientSession
from gamecodec.sessions import Event

__all__ = [
    "MAX_EVENTS",
    "ON_FULL",
    "ClientOptions",
    "ClientPolicy",
    "ClientState",
    "ConnectionLost",
    "OnFull",
]

MAX_EVENTS = 1024
"""Events waiting for the application past which the client stops reading the
socket (``max_events``; with ``on_full="drop_oldest"``, drops the oldest)."""

OnFull = Literal["backpressure", "drop_oldest"]
"""What a full event queue does: stop reading the socket, or drop the oldest event."""
ON_FULL: tuple[OnFull, ...] = ("backpressure", "drop_oldest")


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """A client's options around its sessions (see :func:`~gamecodec.archipelago.aio.connect`).

    ``reconnect``, ``initial_backoff``, ``max_backoff`` and ``backoff_jitter``
    shape the reconnects; ``connect_timeout`` bounds each connect and login;
    ``keepalive`` is the seconds between pings (``None``: none) and
    ``keepalive_timeout`` the silence after which the connection counts as
    lost; ``max_events`` and ``on_full`` what a full event queue does;
    ``queue_while_reconnecting`` makes calls wait for the next login.
    """

    reconnect: bool = True
    initial_backoff: float = 0.5
    max_backoff: float = 30.0
    backoff_jitter: float = 0.5
    connect_timeout: float | None = 30.0
    keepalive: float | None = None
    keepalive_timeout: float | None = None
    max_events: int = MAX_EVENTS
    on_full: OnFull = "backpressure"
    queue_while_reconnecting: bool = False

    def __post_init__(self) -> None:
        if self.max_events < 1:
            raise ValueError("max_events must be at least 1")
        if self.on_full not in ON_FULL:
            raise ValueError(f"on_full must be one of {ON_FULL}, not {self.on_full!r}")
        if not 0.0 <= self.backoff_jitter <= 1.0:
            raise ValueError("backoff_jitter must be between 0 and 1")
        if self.keepalive_timeout is not None and self.keepalive is None:
            raise ValueError("keepalive_timeout needs keepalive (the seconds between pings)")


_Value = TypeVar("_Value")


class _HasOptions(Protocol):
    options: ClientOptions


class _Option(Generic[_Value]):
    """One of a client's ``options`` as an attribute of the client: read
    there, and written back there (checked as :class:`ClientOptions` checks it)."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self._name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, client: None, owner: type[Any]) -> _Option[_Value]: ...
    @overload
    def __get__(self, client: _HasOptions, owner: type[Any]) -> _Value: ...
    def __get__(self, client: _HasOptions | None, owner: type[Any]) -> _Value | _Option[_Value]:
        if client is None:
            return self
        value: _Value = getattr(client.options, self._name)
        return value

    def __set__(self, client: _HasOptions, value: _Value) -> None:
        changes: dict[str, Any] = {self._name: value}
        client.options = dataclasses.replace(client.options, **changes)


class ClientState(enum.Enum):
    """Where a client is."""

    CONNECTING = "connecting"  # the first connect and login
    LOGGED_IN = "logged_in"
    RECONNECTING = "reconnecting"  # the connection dropped; a new login is on its way
    CLOSED = "closed"  # closed, refused, or given up: calls raise NotConnectedError


@dataclass(frozen=True, slots=True)
class ConnectionLost(Event):
    """The connection of a logged-in client went (not by closing it).

    ``code`` and ``reason`` are the server's close frame (``1006`` and ``""``
    when the connection ended without one: cut, or timed out by the
    keepalive); ``reconnecting`` says whether the client logs in again.
    """

    code: int
    reason: str
    reconnecting: bool


class ClientPolicy:
    """A client's state across connections: its current session, where it is,
    when it reconnects and what it replays after a re-login.

    ``session_options`` are the :class:`ClientSession` arguments (kept, and
    updated with the tags changed at run time, for every later session; its
    ``data_packages`` dict is shared by them all); ``random_source`` returns
    floats in [0, 1) for the backoff's jitter (default: a fresh
    ``random.Random``; pass a seeded one's ``random`` to replay a run).
    """

    def __init__(
        self,
        session_options: dict[str, Any],
        options: ClientOptions | None = None,
        *,
        random_source: Callable[[], float] | None = None,
    ) -> None:
        self.options = ClientOptions() if options is None else options
        self.session_options = session_options
        self.session_options.setdefault("data_packages", {})
        self._random = random.Random().random if random_source is None else random_source
        self.session = ClientSession(**self.session_options)
        """The session of the current (or next) connection."""
        self.state = ClientState.CONNECTING
        self.checked: set[int] = set()
        """Locations checked, sent again after a re-login if the server lacks them."""
        self.watched: set[str] = set()
        """Data storage keys watched (SetNotify), watched again after a re-login."""
        self.outages = 0
        """Logged-in connections lost and reconnected from (or being)."""
        self.attempts = 0
        """Connection attempts made after outages (several when the server stays away)."""
        self._attempt = 0  # attempts since the last login (the backoff's exponent)
        self._last_heard = 0.0

    # ------------------------------------------------------------------ replay

    def check_locations(self, locations: Iterable[int]) -> None:
        """Remember checked ``locations`` (whether or not they go out now)."""
        self.checked.update(locations)

    def watch(self, keys: Iterable[str]) -> None:
        """Remember watched data storage ``keys``."""
        self.watched.update(keys)

    def keep_tags(self) -> None:
        """Keep the session's tags (and DeathLink) for every later login."""
        self.session_options["tags"] = list(self.session.tags)
        self.session_options["death_link_enabled"] = self.session.death_link_enabled

    def replay(self, connected: C.Connected) -> tuple[list[int], list[str]]:
        """What a login answered by ``connected`` must send again: the checked
        locations it lacks, and the watched keys (a new connection: the server
        forgot our SetNotify keys), each sorted."""
        missing = self.checked - set(connected.checked_locations)
        return sorted(missing), sorted(self.watched)

    def logged_in(self, connected: C.Connected) -> None:
        """The session logged in: queue the replay in it (sent with the
        session's next frames) and start the backoff over."""
        self.state = ClientState.LOGGED_IN
        self._attempt = 0
        missing, watched = self.replay(connected)
        if missing:
            self.session.check_locations(missing)
        if watched:
            self.session.set_notify(watched)

    def login_deadline(self, started: float) -> float | None:
        """When a connection begun at ``started`` must have logged in
        (``connect_timeout`` later; ``None``: no bound)."""
        timeout = self.options.connect_timeout
        return None if timeout is None else started + timeout

    # ------------------------------------------------------------------ outages

    def lost(self, code: int, reason: str, *, reconnecting: bool) -> ConnectionLost:
        """The logged-in connection went (``code``, ``reason``: its close
        frame): its event, the outage counted if the client reconnects."""
        self.state = ClientState.RECONNECTING if reconnecting else ClientState.CLOSED
        if reconnecting:
            self.outages += 1
        return ConnectionLost(code, reason, reconnecting)

    def connection_ended(
        self, code: int, reason: str, *, recoverable: bool
    ) -> tuple[ConnectionLost | None, bool]:
        """A connection after the first login ended (not by closing the
        client; ``code``, ``reason``: its close frame): the
        :class:`ConnectionLost` of a logged-in one (a re-login that did not
        come through is no new outage), and whether to reconnect: with
        ``reconnect``, from a ``recoverable`` end (a dropped connection, not
        a protocol error)."""
        reconnecting = recoverable and self.options.reconnect
        lost = None
        if self.state is ClientState.LOGGED_IN:
            lost = self.lost(code, reason, reconnecting=reconnecting)
        return lost, reconnecting

    def backoff(self, attempt: int) -> float:
        """The wait before reconnect ``attempt`` (0, 1, ... since the last
        login): exponential, capped at ``max_backoff``, less a random part of
        up to ``backoff_jitter`` of it, so that clients dropped together do
        not all come back at once."""
        options = self.options
        delay = float(min(options.max_backoff, options.initial_backoff * 2**attempt))
        return delay * (1.0 - options.backoff_jitter * self._random())

    def retry_at(self, now: float) -> float:
        """A connection after a login failed at ``now`` (dropped, or a re-login
        that did not come through): when to try the next one."""
        self.state = ClientState.RECONNECTING
        deadline = now + self.backoff(self._attempt)
        self._attempt += 1
        self.attempts += 1
        return deadline

    def new_session(self) -> ClientSession:
        """The session of the next connection (the options kept, a fresh
        handshake); it becomes :attr:`session`."""
        self.session = ClientSession(**self.session_options)
        return self.session

    def close(self) -> None:
        """No more logins (closed, refused, given up)."""
        self.state = ClientState.CLOSED

    # ------------------------------------------------------------------ keepalive

    def heard(self, now: float) -> None:
        """Something arrived at ``now`` (a frame, a pong), or the silence up to
        ``now`` was ours (connecting, reading paused): the silence starts over."""
        self._last_heard = now

    def keepalive_expired(self, now: float, *, reading: bool) -> bool:
        """Whether the silence up to ``now`` counts as a lost connection: more
        than ``keepalive_timeout`` seconds without a frame or pong (never
        without that option, nor while reading is paused: nothing can arrive
        then, that silence is ours)."""
        timeout = self.options.keepalive_timeout
        return reading and timeout is not None and now - self._last_heard > timeout


__dir__ = public_dir(__name__)
