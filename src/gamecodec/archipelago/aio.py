"""An asyncio Archipelago client: websockets around :class:`ClientSession`.

>>> async def play(url: str) -> None:  # doctest: +SKIP
...     client = await connect(url, name="Alice", game="Clique")
...     await client.check_locations([10])
...     print(await client.get(["counter"]))
...     await client.close()

:func:`connect` opens the websocket (permessage-deflate negotiated, loopback
proxies ignored), logs in and returns once the server accepted the login
(:class:`LoginRefusedError` otherwise; ``TimeoutError`` when connecting and
logging in took more than ``connect_timeout`` seconds). Requests that have a
reply (scouts, Get, Set, hints) are awaited, each for at most
``request_timeout`` seconds; one the server refuses raises
:class:`RequestRefusedError` at once. A request whose caller goes away
(cancelled, or timed out by ``asyncio.wait_for``/``asyncio.timeout``) is
dropped at once (:meth:`ClientSession.cancel`): its frame still goes out
whole, and its reply, when it comes, is consumed without an event and never
answers a later request (scout replies, which carry no id, are matched in
order, and the cancelled scout keeps its place). Everything else arrives through
:meth:`Client.next_event` or ``async for event in client``, every event, in
order. ``tap=`` is given every text frame received and sent, as a
:class:`~gamecodec.sessions.Traffic` record (``peer`` is the URI).

Events and backpressure: the receive loop lets the event loop run between
frames, so a consumer task keeps pace. Once ``max_events`` events wait to be
taken (:attr:`Client.pending_events`), the client stops reading the socket
(:attr:`Client.reading_paused`) until the application takes one: the frames
wait in websockets' buffer and the kernel's, and TCP holds the server. The
queue ends at most one frame's events past ``max_events``. Two exceptions,
so that nothing waits for ever on an application that reads no events: while
a request awaits its reply (:meth:`Client.scout`, :meth:`Client.get`,
:meth:`Client.set`, :meth:`Client.hints`), and while a login is under way,
the client reads on and keeps every event the frames carry (the queue grows
past ``max_events`` until the reply or the login is in; each request is
bounded by ``request_timeout``, a login by ``connect_timeout``). While
reading is paused the client cannot see the connection go, nor pongs come
(the silence does not count for ``keepalive_timeout``), nor answer the
server's pings (a server that pings drops a client paused for too long). ``on_full="drop_oldest"``
keeps reading instead and drops the oldest event past ``max_events``, counted
in :attr:`Client.events_dropped`, with a warning.

Keepalive: like the reference client, no websocket pings by default, so a
busy server that answers no ping for a while does not get every client
closing at once. ``keepalive=N`` pings every N seconds; with
``keepalive_timeout=T`` too, the connection counts as lost once nothing at
all (no frame, no pong) arrived for T seconds, so a server that keeps sending
data is never timed out.

If the connection drops after a login, the event queue gets a
:class:`ConnectionLost` (the close code and reason), :attr:`Client.connected`
becomes ``None`` and :attr:`Client.state` ``RECONNECTING``
(:attr:`Client.reconnects` counts these outages, however many attempts each
took: :attr:`Client.reconnect_attempts`); the client reconnects with
exponential backoff and jitter, logs in again with the same session
parameters (tags changed since included), re-sends its checked locations and
watches its SetNotify keys again. Calls made meanwhile raise
:class:`NotConnectedError` (a ``ConnectionError``), or, with
``queue_while_reconnecting=True``, wait for the new login;
:meth:`Client.wait_logged_in` waits for it. :meth:`Client.close` shuts the
client down cleanly (close code 1000; pending requests fail with
:class:`NotConnectedError`).

The policy is Sans-IO and tested without a socket: the reconnect deadlines,
the replay after a re-login, the login deadline and the keepalive's silence
are :class:`~gamecodec.archipelago.policy.ClientPolicy` (``client.policy``),
the options :class:`~gamecodec.archipelago.policy.ClientOptions`
(``client.options``); this module keeps the socket, the timers, the event
queue and the futures of the session's requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import warnings
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, MutableMapping
from typing import Any, TypeVar

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from gamecodec._aio import call_tap
from gamecodec._public import public_dir
from gamecodec.archipelago import commands as C
from gamecodec.archipelago._errors import (
    LoginRefusedError,
    NotConnectedError,
    RequestRefusedError,
)
from gamecodec.archipelago._models import Hint
from gamecodec.archipelago.names import Names
from gamecodec.archipelago.policy import (
    MAX_EVENTS,
    ClientOptions,
    ClientPolicy,
    ClientState,
    ConnectionLost,
    OnFull,
    _Option,
)
from gamecodec.archipelago.session import (
    ClientSession,
    HintsChanged,
    LocationsScouted,
    LoggedIn,
    LoginRefused,
    RequestRefused,
    RequestTimedOut,
    State,
    StorageChanged,
    StorageRead,
    _hints,
)
from gamecodec.sessions import Event, Tap, Traffic

E = TypeVar("E", bound=Event)
"""An event class, for :meth:`Client.wait_for`."""

__all__ = [
    "MAX_EVENTS",
    "Client",
    "ClientState",
    "ConnectionLost",
    "LoginRefusedError",
    "NotConnectedError",
    "RequestRefusedError",
    "connect",
]

MAX_FRAME = 16 * 1024 * 1024
"""Inbound frame limit, as CommonClient (a DataPackage of every world is ~4 MB)."""
ABNORMAL_CLOSURE = 1006
"""The close code of a connection that ended without a close frame (RFC 6455)."""

_NOT_GIVEN: Any = object()


def _connect_timeout(connect_timeout: float | None, login_timeout: Any) -> float | None:
    """``connect_timeout``, or the deprecated ``login_timeout`` if that was given."""
    if login_timeout is _NOT_GIVEN:
        return connect_timeout
    warnings.warn(
        "login_timeout= is deprecated; use connect_timeout= (it bounds connect and login)",
        DeprecationWarning,
        stacklevel=3,
    )
    result: float | None = login_timeout
    return result


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a failed future's exception as seen: a request whose caller went
    away (cancelled, timed out) must not log "exception was never retrieved"."""
    if not future.cancelled():
        future.exception()


class Client:
    """A logged-in connection (see :func:`connect`, which makes one)."""

    def __init__(
        self,
        uri: str,
        session_options: dict[str, Any],
        *,
        reconnect: bool = True,
        initial_backoff: float = 0.5,
        max_backoff: float = 30.0,
        backoff_jitter: float = 0.5,
        connect_timeout: float | None = 30.0,
        keepalive: float | None = None,
        keepalive_timeout: float | None = None,
        max_events: int = MAX_EVENTS,
        on_full: OnFull = "backpressure",
        queue_while_reconnecting: bool = False,
        tap: Tap | None = None,
        clock: Any = None,
        login_timeout: Any = _NOT_GIVEN,
    ) -> None:
        options = ClientOptions(
            reconnect=reconnect,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            backoff_jitter=backoff_jitter,
            connect_timeout=connect_timeout,
            keepalive=keepalive,
            keepalive_timeout=keepalive_timeout,
            max_events=max_events,
            on_full=on_full,
            queue_while_reconnecting=queue_while_reconnecting,
        )
        if login_timeout is not _NOT_GIVEN:
            timeout = _connect_timeout(connect_timeout, login_timeout)
            options = dataclasses.replace(options, connect_timeout=timeout)
        self.uri = uri
        self.tap = tap
        self.policy = ClientPolicy(session_options, options)
        """Its state across connections: session, reconnects, replay (Sans-IO)."""
        self._loop = asyncio.get_running_loop()
        self._clock = clock or self._loop.time
        self.events_dropped = 0
        """Events dropped past ``max_events`` (only with ``on_full="drop_oldest"``)."""
        self._socket: ClientConnection | None = None
        self._events: deque[Event] = deque()
        self._events_ready = asyncio.Event()
        self._wake_reader = asyncio.Event()  # wakes a paused receive loop
        self._reading_paused = False
        self._events_closed = False
        self._waiters: dict[int, asyncio.Future[Any]] = {}
        self._send_lock = asyncio.Lock()  # one batch of frames at a time, in order
        self._sending: set[asyncio.Task[None]] = set()  # batches whose caller may be gone
        self._login: asyncio.Future[LoggedIn] | None = None
        self._logged_in = asyncio.Event()  # set while LOGGED_IN, and once CLOSED
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ policy

    @property
    def session(self) -> ClientSession:
        """The session of the current (or next) connection."""
        return self.policy.session

    @property
    def state(self) -> ClientState:
        """Where the client is (connecting, logged in, reconnecting, closed)."""
        return self.policy.state

    @property
    def checked(self) -> set[int]:
        """Locations checked, sent again after a reconnect if the server lost them."""
        return self.policy.checked

    @property
    def watched(self) -> set[str]:
        """Data storage keys watched (SetNotify), watched again after a reconnect."""
        return self.policy.watched

    @property
    def reconnects(self) -> int:
        """Outages: logged-in connections lost and reconnected from (or being)."""
        return self.policy.outages

    @property
    def reconnect_attempts(self) -> int:
        """Connection attempts made after outages (several when the server stays away)."""
        return self.policy.attempts

    @property
    def options(self) -> ClientOptions:
        """The client's options (:class:`~gamecodec.archipelago.policy.ClientOptions`);
        each is an attribute of the client too, read and written here."""
        return self.policy.options

    @options.setter
    def options(self, options: ClientOptions) -> None:
        self.policy.options = options

    reconnect = _Option[bool]("Whether the client reconnects after a logged-in connection went.")
    initial_backoff = _Option[float]("The wait before the first reconnect (before jitter), s.")
    max_backoff = _Option[float]("The longest wait between reconnect attempts, in seconds.")
    backoff_jitter = _Option[float]("The part of each backoff taken off at random (0 to 1).")
    connect_timeout = _Option[float | None]("The bound on each connect and login, in seconds.")
    keepalive = _Option[float | None]("Seconds between pings (``None``: no pings).")
    keepalive_timeout = _Option[float | None]("The silence after which the connection is lost.")
    max_events = _Option[int]("Events waiting past which the client stops reading.")
    on_full = _Option[OnFull]('What a full queue does: "backpressure" or "drop_oldest".')
    queue_while_reconnecting = _Option[bool]("Whether calls wait for the next login.")

    def backoff(self, attempt: int) -> float:
        """The wait before reconnect ``attempt`` (:meth:`ClientPolicy.backoff
        <gamecodec.archipelago.policy.ClientPolicy.backoff>`)."""
        return self.policy.backoff(attempt)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> LoggedIn:
        """Connect and log in; raises :class:`LoginRefusedError` or ``OSError``."""
        self._login = self._loop.create_future()
        self._login.add_done_callback(_retrieve)
        self._task = asyncio.create_task(self._run())
        try:
            return await asyncio.shield(self._login)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Close the websocket (code 1000) and stop reconnecting; returns once
        the frames still going out have failed (the socket is closed). The
        events queued by then can still be taken (``async for`` ends after
        them); a paused client reads on to the server's close frame."""
        self._closing = True
        self._wake_reader.set()  # a paused loop reads on: the server's close frame is behind
        if self._timer is not None:
            self._timer.cancel()
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await self._socket.close()
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        # sends still going out (their callers may be gone): with the socket
        # closed they fail at once (NotConnectedError to a caller still there);
        # none may be left pending for the loop to destroy
        await asyncio.gather(*self._sending, return_exceptions=True)
        self._end(NotConnectedError("client closed"))

    def _end(self, exc: Exception) -> None:
        """No more logins: fail what waits, end the event stream (the events
        already queued are still delivered)."""
        self.policy.close()
        self._fail_waiters(exc)
        self._events_closed = True
        self._events_ready.set()
        self._logged_in.set()

    async def __aenter__(self) -> Client:
        """``async with`` closes the client on the way out."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the client (:meth:`close`)."""
        await self.close()

    async def wait_logged_in(self, timeout: float | None = None) -> C.Connected:
        """Wait until the client is logged in (again, after a reconnect); the
        login's Connected. Raises :class:`NotConnectedError` once it is closed."""
        async with asyncio.timeout(timeout):
            await self._logged_in.wait()
        if self.state is not ClientState.LOGGED_IN or self.session.connected is None:
            raise NotConnectedError(f"the client is {self.state.value}")
        return self.session.connected

    @property
    def login_timeout(self) -> float | None:
        """Deprecated: :attr:`connect_timeout`."""
        warnings.warn(
            "Client.login_timeout is deprecated; use Client.connect_timeout",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.connect_timeout

    @property
    def items(self) -> list[C.Item]:
        """Every item received so far, in server order."""
        return self.session.items

    @property
    def connected(self) -> C.Connected | None:
        """The server's Connected of the current login (slot, team, players);
        ``None`` while not logged in (before the login, after the connection
        went, once closed)."""
        if self.state is not ClientState.LOGGED_IN:
            return None
        return self.session.connected

    @property
    def players(self) -> list[C.Player]:
        """The room's players (Connected, then RoomUpdate: aliases follow ``!alias``)."""
        return self.session.players

    @property
    def hint_points(self) -> int:
        """Our hint points (Connected, then RoomUpdate)."""
        return self.session.hint_points

    @property
    def names(self) -> Names:
        """Item, location and player names for ids (the DataPackage and the login)."""
        return self.session.names

    def render(self, message: C.PrintJSON) -> str:
        """A PrintJSON message as text, ids replaced by names."""
        return self.session.names.render(message)

    @property
    def tags(self) -> list[str]:
        """Our tags (kept across reconnects)."""
        return list(self.session.tags)

    @property
    def compression(self) -> str | None:
        """The negotiated websocket extension header value (permessage-deflate)."""
        if self._socket is None or self._socket.response is None:
            return None
        return self._socket.response.headers.get("Sec-WebSocket-Extensions")

    # ------------------------------------------------------------------ events

    @property
    def pending_events(self) -> int:
        """Events waiting for the application (:meth:`next_event`)."""
        return len(self._events)

    @property
    def reading_paused(self) -> bool:
        """Whether the client has stopped reading the socket because
        ``max_events`` events wait to be taken (backpressure)."""
        return self._reading_paused

    def _queue(self, event: Event) -> None:
        if self.options.on_full == "drop_oldest" and len(self._events) >= self.options.max_events:
            self._events.popleft()
            self.events_dropped += 1
            if self.events_dropped & (self.events_dropped - 1) == 0:  # 1, 2, 4, 8, ...
                warnings.warn(
                    f"Archipelago client {self.session.name!r}: {self.events_dropped} events "
                    f"dropped (more than max_events={self.options.max_events} not taken)",
                    RuntimeWarning,
                    stacklevel=2,
                )
        self._events.append(event)
        self._events_ready.set()

    async def next_event(self, timeout: float | None = None) -> Event:
        """The next event the session produced (not replies to awaited requests)."""
        async with asyncio.timeout(timeout):
            while not self._events:
                if self._events_closed:
                    raise NotConnectedError("client closed")
                self._events_ready.clear()
                await self._events_ready.wait()
        event = self._events.popleft()
        if len(self._events) < self.options.max_events:
            self._wake_reader.set()  # room again: a paused receive loop reads on
        return event

    async def wait_for(self, kind: type[E], timeout: float | None = 10.0) -> E:
        """Skip events until one of type ``kind`` arrives, and return it (typed
        as ``kind``); :class:`TimeoutError` after ``timeout`` seconds (``None``: none)."""
        async with asyncio.timeout(timeout):
            while True:
                event = await self.next_event()
                if isinstance(event, kind):
                    return event

    def __aiter__(self) -> AsyncIterator[Event]:
        """``async for event in client``: :meth:`next_event` until the client closes."""
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while True:
            try:
                yield await self.next_event()
            except ConnectionError:
                return

    # ------------------------------------------------------------------ requests

    async def _ready(self) -> None:
        """Return when a call may go out; raise :class:`NotConnectedError` if it cannot."""
        if self.state is ClientState.LOGGED_IN and self._socket is not None:
            return
        if self.state is ClientState.RECONNECTING and self.options.queue_while_reconnecting:
            await self.wait_logged_in()
            return
        raise NotConnectedError(f"not logged in: the client is {self.state.value}")

    async def _flush(self) -> None:
        """Send the frames the session queued. The sending runs shielded and
        one batch at a time: a caller cancelled meanwhile drops no frame (its
        own or one queued with it), and frames go out in the order the session
        queued them, the order scout replies are matched in."""
        frames = self.session.frames_to_send()
        if not frames:
            return
        sending = asyncio.ensure_future(self._send_frames(self._socket, frames))
        self._sending.add(sending)
        sending.add_done_callback(self._sent)
        await asyncio.shield(sending)

    def _sent(self, sending: asyncio.Task[None]) -> None:
        self._sending.discard(sending)
        _retrieve(sending)

    async def _send_frames(self, socket: ClientConnection | None, frames: list[str]) -> None:
        async with self._send_lock:
            for frame in frames:
                if socket is None:
                    raise NotConnectedError("the connection was lost")
                try:
                    await socket.send(frame)
                except ConnectionClosed as exc:
                    raise NotConnectedError(f"the connection was lost: {exc}") from exc
                if self.tap is not None:
                    call_tap(self.tap, Traffic("out", frame, self._loop.time(), self.uri))

    @property
    def pending_requests(self) -> int:
        """Requests awaiting their reply (a cancelled one is dropped at once)."""
        return len(self._waiters)

    def _waiter(self, request_id: int) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = self._loop.create_future()
        future.add_done_callback(_retrieve)
        self._waiters[request_id] = future
        self._wake_reader.set()  # a paused receive loop reads on for the reply
        self._arm_timer()
        return future

    async def _request(self, request_id: int) -> Any:
        """Send request ``request_id`` (queued in the session) and return its
        reply. If the caller goes away first, the request is dropped at once
        from here and from the session; its reply is consumed there."""
        future = self._waiter(request_id)
        try:
            await self._flush()
            return await future
        except BaseException:
            if self._waiters.pop(request_id, None) is not None:
                future.cancel()
                self.session.cancel(request_id)
            raise

    def _arm_timer(self) -> None:
        """Run the session's timers at its next deadline even if no frame
        arrives to wake the receive loop (a server that answers nothing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = self.session.next_deadline()
        if deadline is not None and not self._closing:
            delay = max(0.0, deadline - self._clock())
            self._timer = self._loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        for event in self.session.handle_timeout(self._clock()):
            self._dispatch(event)
        self._arm_timer()

    async def check_locations(self, locations: Iterable[int]) -> None:
        """Report checked locations (remembered, and sent again after a
        reconnect if the server lost them)."""
        ids = list(locations)
        self.policy.check_locations(ids)
        await self._ready()
        self.session.check_locations(ids)
        await self._flush()

    async def scout(self, locations: Iterable[int], create_as_hint: int = 0) -> list[C.Item]:
        """What is at ``locations`` (LocationScouts -> LocationInfo)."""
        await self._ready()
        request_id = self.session.scout_locations(locations, self._clock(), create_as_hint)
        result: list[C.Item] = await self._request(request_id)
        return result

    async def get(self, keys: Iterable[str]) -> dict[str, Any]:
        """Read data storage keys (Get -> Retrieved)."""
        await self._ready()
        request_id = self.session.get(keys, self._clock())
        result: dict[str, Any] = await self._request(request_id)
        return result

    async def set(
        self, key: str, operations: Iterable[tuple[str, Any]], *, default: Any = C.UNSET
    ) -> StorageChanged:
        """Change a data storage key and wait for the SetReply (without ``default``
        the server starts a new key from 0). A key the server refuses (the
        read-only ``_read_`` keys) raises :class:`RequestRefusedError`."""
        await self._ready()
        request_id = self.session.set(key, operations, self._clock(), default=default)
        assert request_id is not None
        result: StorageChanged = await self._request(request_id)
        return result

    async def set_notify(self, keys: Iterable[str]) -> None:
        """Be told of changes to ``keys`` (each a :class:`StorageChanged` event),
        also after a reconnect."""
        await self._ready()
        keys = list(keys)
        self.session.set_notify(keys)
        self.policy.watch(keys)
        await self._flush()

    async def say(self, text: str) -> None:
        """Send a chat message (or a ``!command``) to the room."""
        await self._ready()
        self.session.say(text)
        await self._flush()

    async def status_update(self, status: int) -> None:
        """Report our state, a :class:`~gamecodec.archipelago.ClientStatus`."""
        await self._ready()
        self.session.status_update(status)
        await self._flush()

    async def sync(self) -> None:
        """Ask for every item again (Sync): an :class:`ItemsReceived` from index 0."""
        await self._ready()
        self.session.sync()
        await self._flush()

    async def death_link(self, cause: str = "", *, now: float | None = None) -> None:
        """Bounce a DeathLink (``now``: the death's Unix time; default the loop clock)."""
        await self._ready()
        self.session.death_link(time.time() if now is None else now, cause)
        await self._flush()

    async def bounce(self, data: dict[str, Any], **targets: Any) -> None:
        """Send ``data`` to the clients matching ``games=``, ``slots=`` or ``tags=``."""
        await self._ready()
        self.session.bounce(data, **targets)
        await self._flush()

    async def send(self, *commands: C.Command | Mapping[str, Any]) -> None:
        """Send any commands (typed, or plain dicts) in one frame; replies arrive as events."""
        await self._ready()
        self.session.send(*commands)
        await self._flush()

    async def update_tags(self, tags: Iterable[str]) -> None:
        """Replace our tags (ConnectUpdate); kept for every later login.
        ``DeathLink`` among them turns DeathLink on, its absence off."""
        await self._ready()
        self.session.update_tags(tags)
        self.policy.keep_tags()
        await self._flush()

    async def set_death_link(self, enabled: bool) -> None:
        """Add or remove the ``DeathLink`` tag (:meth:`update_tags`)."""
        await self._ready()
        self.session.set_death_link(enabled)
        self.policy.keep_tags()
        await self._flush()

    # ------------------------------------------------------------------ hints

    async def hints(self) -> list[Hint]:
        """Our hints (the ``_read_hints_{team}_{slot}`` key)."""
        await self._ready()
        key = self.session.hints_key
        request_id = self.session.get([key], self._clock())
        result: dict[str, Any] = await self._request(request_id)
        return _hints(result.get(key))

    async def watch_hints(self) -> None:
        """Be told of every change to our hints (each a :class:`HintsChanged` event)."""
        await self._ready()
        self.session.watch_hints()
        self.policy.watch([self.session.hints_key])
        await self._flush()

    async def create_hints(
        self, locations: Iterable[int], *, player: int | None = None, status: int = 0
    ) -> None:
        """Hint ``player``'s (default: our) ``locations`` (CreateHints)."""
        await self._ready()
        self.session.create_hints(locations, player=player, status=status)
        await self._flush()

    async def update_hint(self, player: int, location: int, status: int) -> None:
        """Set the priority of a hint (UpdateHint)."""
        await self._ready()
        self.session.update_hint(player, location, status)
        await self._flush()

    # ------------------------------------------------------------------ the loop

    def _fail_waiters(self, exc: Exception) -> None:
        for future in self._waiters.values():
            if not future.done():
                future.set_exception(exc)
        self._waiters.clear()

    def _settle(self, request_id: int, value: Any = None, exc: Exception | None = None) -> bool:
        future = self._waiters.pop(request_id, None)
        if future is None or future.done():
            return False
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(value)
        return True

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, LoggedIn):
            self.policy.logged_in(event.connected)  # queues the replay in the session
            self._logged_in.set()
            if self._login is not None and not self._login.done():
                self._login.set_result(event)
        elif isinstance(event, LoginRefused) and self._login is not None and not self._login.done():
            self._login.set_exception(LoginRefusedError(event.errors))
        if isinstance(event, LocationsScouted):
            if self._settle(event.request_id, event.locations):
                return
        elif isinstance(event, StorageRead) and event.request_id is not None:
            if self._settle(event.request_id, event.keys):
                return
        elif isinstance(event, StorageChanged) and event.request_id is not None:
            if self._settle(event.request_id, event):
                return
        elif isinstance(event, HintsChanged) and event.request_id is not None:
            return  # the answer to hints(), returned there
        elif isinstance(event, RequestTimedOut):
            self._settle(
                event.request_id, exc=TimeoutError(f"{event.kind} {event.request_id} timed out")
            )
            return
        elif isinstance(event, RequestRefused):
            error = RequestRefusedError(event.kind, event.invalid.text)
            if self._settle(event.request_id, exc=error):
                return
        self._queue(event)

    def _heard(self) -> None:
        self.policy.heard(self._clock())

    def _on_pong(self, pong: asyncio.Future[float]) -> None:
        if not pong.cancelled() and pong.exception() is None:
            self._heard()

    async def _keepalive(self, socket: ClientConnection) -> None:
        """Ping every ``keepalive`` seconds; with ``keepalive_timeout``, close the
        connection once nothing (frame or pong) arrived for that long."""
        interval = self.options.keepalive
        assert interval is not None
        while True:
            await asyncio.sleep(interval)
            if self.policy.keepalive_expired(self._clock(), reading=not self._reading_paused):
                socket.transport.abort()  # no close handshake with a silent peer
                return
            try:
                # a peer that reads nothing fills the socket: the ping waits like
                # any send, so at most one interval before the silence is checked
                pong = asyncio.ensure_future(await asyncio.wait_for(socket.ping(), interval))
            except TimeoutError:
                continue
            except ConnectionClosed:
                return
            pong.add_done_callback(self._on_pong)

    async def _session_loop(self, socket: ClientConnection, started: float) -> None:
        """Run the session until a refusal (``started``: when connecting began)."""
        login_by = self.policy.login_deadline(started)
        while True:
            deadline = self.session.next_deadline()
            if login_by is not None:
                if self.session.state is State.CONNECTED:
                    login_by = None
                else:
                    deadline = login_by if deadline is None else min(deadline, login_by)
            timeout = None if deadline is None else max(0.0, deadline - self._clock())
            try:
                if self._must_pause():
                    await self._pause(timeout)
                    continue
                message = await asyncio.wait_for(socket.recv(), timeout)
            except TimeoutError:
                if login_by is not None and self._clock() >= login_by:
                    # a server that never sends RoomInfo or answers Connect: no
                    # close handshake with it either (that would wait close_timeout)
                    socket.transport.abort()
                    raise TimeoutError(f"no login within {self.connect_timeout} s") from None
                for event in self.session.handle_timeout(self._clock()):
                    self._dispatch(event)
                continue
            self._heard()
            if self.tap is not None:
                call_tap(self.tap, Traffic("in", message, self._loop.time(), self.uri))
            for event in self.session.receive_frame(message, self._clock()):
                self._dispatch(event)
            await self._flush()
            if self.session.state is State.REFUSED:
                return
            # let the application run: recv() returns a buffered frame
            # without suspending, and a consumer task must keep pace
            await asyncio.sleep(0)

    def _must_pause(self) -> bool:
        """Whether to stop reading: the queue is full, no request awaits its
        reply, no login is under way and we are not closing (those read on,
        see the module text)."""
        return (
            self.options.on_full == "backpressure"
            and len(self._events) >= self.options.max_events
            and not self._waiters
            and self.session.state is State.CONNECTED
            and not self._closing
        )

    async def _pause(self, timeout: float | None) -> None:
        """Read nothing until an event is taken or a request is made (or
        ``timeout``, the session's next deadline, passes: ``TimeoutError``)."""
        self._wake_reader.clear()
        self._reading_paused = True
        try:
            await asyncio.wait_for(self._wake_reader.wait(), timeout)
        finally:
            self._reading_paused = False
            self._heard()  # the silence while paused was ours, not the server's

    async def _connected(self, socket: ClientConnection, started: float) -> None:
        self._socket = socket
        self._heard()
        pinger = None
        if self.options.keepalive is not None:
            pinger = asyncio.create_task(self._keepalive(socket))
        try:
            await self._session_loop(socket, started)
        finally:
            if pinger is not None:
                pinger.cancel()

    def _ended(self, socket: ClientConnection | None, *, recoverable: bool) -> bool:
        """A connection after the first login ended: queue the
        :class:`ConnectionLost` of a logged-in one; whether to reconnect
        (:meth:`ClientPolicy.connection_ended
        <gamecodec.archipelago.policy.ClientPolicy.connection_ended>`)."""
        code = ABNORMAL_CLOSURE
        reason = ""
        if socket is not None and socket.close_code is not None:
            code, reason = socket.close_code, socket.close_reason or ""
        lost, reconnecting = self.policy.connection_ended(code, reason, recoverable=recoverable)
        if lost is not None:
            self._queue(lost)
        return reconnecting

    async def _run(self) -> None:
        while not self._closing:
            started = self._clock()
            socket: ClientConnection | None = None
            try:
                async with ws_connect(
                    self.uri,
                    proxy=None,
                    max_size=MAX_FRAME,
                    compression="deflate",
                    open_timeout=self.options.connect_timeout,
                    ping_interval=None,  # our own keepalive, off by default
                    ping_timeout=None,
                ) as socket:
                    await self._connected(socket, started)
                    # refused: a first login's refusal went to connect(); a re-login's
                    # ends the event stream too
                    self._socket = None
                    self._end(NotConnectedError("login refused"))
                    return
            except (ConnectionClosed, OSError, TimeoutError) as exc:
                self._socket = None
                logged_in = self._login is not None and self._login.done()
                if self._closing:
                    return
                if not logged_in:
                    if self._login is not None and not self._login.done():
                        self._login.set_exception(exc)
                    self.policy.close()
                    return
                if not self._ended(socket, recoverable=True):
                    self._end(NotConnectedError(f"connection lost: {exc}"))
                    return
            except Exception as exc:  # a protocol error from the session: give up
                self._socket = None
                if self._login is not None and not self._login.done():
                    self._login.set_exception(exc)
                if not self._closing:
                    self._ended(socket, recoverable=False)
                self._end(NotConnectedError(f"client failed: {exc}"))
                return
            finally:
                self._socket = None
            # lost after a login: start over with a fresh session, after a backoff
            now = self._clock()
            retry_at = self.policy.retry_at(now)  # RECONNECTING, the attempt counted
            self._logged_in.clear()
            self._fail_waiters(NotConnectedError("connection lost; reconnecting"))
            await asyncio.sleep(retry_at - now)
            self.policy.new_session()


async def connect(
    uri: str,
    *,
    name: str,
    game: str | None,
    password: str | None = None,
    uuid: str = "",
    version: tuple[int, int, int] = (0, 6, 8),
    items_handling: int = 0b111,
    tags: Iterable[str] = ("AP",),
    slot_data: bool = True,
    death_link: bool = False,
    request_timeout: float | None = 30.0,
    data_packages: MutableMapping[str, C.GameData] | None = None,
    reconnect: bool = True,
    initial_backoff: float = 0.5,
    max_backoff: float = 30.0,
    backoff_jitter: float = 0.5,
    connect_timeout: float | None = 30.0,
    keepalive: float | None = None,
    keepalive_timeout: float | None = None,
    max_events: int = MAX_EVENTS,
    on_full: OnFull = "backpressure",
    queue_while_reconnecting: bool = False,
    tap: Tap | None = None,
    login_timeout: Any = _NOT_GIVEN,
) -> Client:
    """Open ``uri``, log in as ``name`` playing ``game``; returns the :class:`Client`.

    ``connect_timeout`` bounds each connect and login, in seconds (the first
    one raises ``TimeoutError``; a re-login after a dropped connection that
    times out is retried). ``request_timeout`` bounds the wait for the reply
    to :meth:`Client.scout`, :meth:`Client.get` and :meth:`Client.set`
    (``TimeoutError``). ``keepalive`` (seconds between pings; default none, as
    the reference client) and ``keepalive_timeout`` (silence after which the
    connection counts as lost) are described in the module's text, as are
    ``backoff_jitter``, ``max_events``, ``on_full`` (``"backpressure"``, the
    default, or ``"drop_oldest"``) and ``queue_while_reconnecting``.
    ``data_packages`` is the DataPackage cache (a dict, or a
    :class:`~gamecodec.archipelago.datapackage.DataPackageCache` on disk).
    ``tap`` is called with a :class:`~gamecodec.sessions.Traffic` for every
    text frame received and sent. ``login_timeout`` is the deprecated name of
    ``connect_timeout``. The other options go into the :class:`ClientSession`."""
    options: dict[str, Any] = {
        "name": name,
        "game": game,
        "password": password,
        "uuid": uuid,
        "version": version,
        "items_handling": items_handling,
        "tags": list(tags),
        "slot_data": slot_data,
        "death_link_enabled": death_link,
        "request_timeout": request_timeout,
        "data_packages": {} if data_packages is None else data_packages,
    }
    client = Client(
        uri,
        options,
        reconnect=reconnect,
        initial_backoff=initial_backoff,
        max_backoff=max_backoff,
        backoff_jitter=backoff_jitter,
        connect_timeout=_connect_timeout(connect_timeout, login_timeout),
        keepalive=keepalive,
        keepalive_timeout=keepalive_timeout,
        max_events=max_events,
        on_full=on_full,
        queue_while_reconnecting=queue_while_reconnecting,
        tap=tap,
    )
    await client.start()
    return client


__dir__ = public_dir(__name__)
