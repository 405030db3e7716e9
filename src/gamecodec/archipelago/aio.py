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
reply (scouts, Get, Set) are awaited, each for at most ``request_timeout``
seconds; everything else arrives through :meth:`Client.next_event` or
``async for event in client``. ``tap=`` is given every text frame received
and sent, as a :class:`~gamecodec.sessions.Traffic` record (``peer`` is the
URI). If the connection drops after a login, the client reconnects with
exponential backoff, logs in again with the same session parameters and
re-sends its checked locations; :meth:`Client.close` shuts it down cleanly
(close code 1000, pending requests fail with ``ConnectionError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import warnings
from collections.abc import AsyncIterator, Iterable
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from gamecodec._aio import call_tap
from gamecodec.archipelago import commands as C
from gamecodec.archipelago._errors import LoginRefusedError, remote
from gamecodec.archipelago.session import (
    ClientSession,
    LocationsScouted,
    LoggedIn,
    LoginRefused,
    RequestRefused,
    RequestTimedOut,
    State,
    StorageChanged,
    StorageRead,
)
from gamecodec.sessions import Event, Tap, Traffic

__all__ = ["Client", "LoginRefusedError", "connect"]

MAX_FRAME = 16 * 1024 * 1024
"""Inbound frame limit, as CommonClient (a DataPackage of every world is ~4 MB)."""


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
        connect_timeout: float | None = 30.0,
        tap: Tap | None = None,
        clock: Any = None,
        login_timeout: Any = _NOT_GIVEN,
    ) -> None:
        self.uri = uri
        self.connect_timeout = _connect_timeout(connect_timeout, login_timeout)
        self.tap = tap
        self._options = session_options
        self._options.setdefault("data_packages", {})
        self.reconnect = reconnect
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._loop = asyncio.get_running_loop()
        self._clock = clock or self._loop.time
        self.session = ClientSession(**self._options)
        self.checked: set[int] = set()
        self.reconnects = 0
        self._socket: ClientConnection | None = None
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()
        self._waiters: dict[int, asyncio.Future[Any]] = {}
        self._login: asyncio.Future[LoggedIn] | None = None
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> LoggedIn:
        """Connect and log in; raises :class:`LoginRefusedError` or ``OSError``."""
        self._login = self._loop.create_future()
        self._task = asyncio.create_task(self._run())
        try:
            return await asyncio.shield(self._login)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Close the websocket (code 1000) and stop reconnecting."""
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await self._socket.close()
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._fail_waiters(ConnectionError("client closed"))
        self._events.put_nowait(None)

    async def __aenter__(self) -> Client:
        """``async with`` closes the client on the way out."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the client (:meth:`close`)."""
        await self.close()

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
        """The server's Connected of the current login (slot, team, players)."""
        return self.session.connected

    @property
    def compression(self) -> str | None:
        """The negotiated websocket extension header value (permessage-deflate)."""
        if self._socket is None or self._socket.response is None:
            return None
        return self._socket.response.headers.get("Sec-WebSocket-Extensions")

    # ------------------------------------------------------------------ events

    async def next_event(self, timeout: float | None = None) -> Event:
        """The next event the session produced (not replies to awaited requests)."""
        event = await asyncio.wait_for(self._events.get(), timeout)
        if event is None:
            self._events.put_nowait(None)
            raise ConnectionError("client closed")
        return event

    async def wait_for(self, kind: type[Event], timeout: float | None = 10.0) -> Any:
        """Skip events until one of type ``kind`` arrives."""
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

    async def _flush(self) -> None:
        socket = self._socket
        for frame in self.session.frames_to_send():
            if socket is None:
                raise ConnectionError("not connected")
            await socket.send(frame)
            if self.tap is not None:
                call_tap(self.tap, Traffic("out", frame, self._loop.time(), self.uri))

    def _waiter(self, request_id: int) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = self._loop.create_future()
        self._waiters[request_id] = future
        self._arm_timer()
        return future

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
        """Report checked locations (sent again after a reconnect if the server lost them)."""
        ids = list(locations)
        self.checked.update(ids)
        self.session.check_locations(ids)
        await self._flush()

    async def scout(self, locations: Iterable[int], create_as_hint: int = 0) -> list[C.Item]:
        """What is at ``locations`` (LocationScouts -> LocationInfo)."""
        request_id = self.session.scout_locations(locations, self._clock(), create_as_hint)
        future = self._waiter(request_id)
        await self._flush()
        result: list[C.Item] = await future
        return result

    async def get(self, keys: Iterable[str]) -> dict[str, Any]:
        """Read data storage keys (Get -> Retrieved)."""
        request_id = self.session.get(keys, self._clock())
        future = self._waiter(request_id)
        await self._flush()
        result: dict[str, Any] = await future
        return result

    async def set(
        self, key: str, operations: Iterable[tuple[str, Any]], *, default: Any = C.UNSET
    ) -> StorageChanged:
        """Change a data storage key and wait for the SetReply (without ``default``
        the server starts a new key from 0)."""
        request_id = self.session.set(key, operations, self._clock(), default=default)
        assert request_id is not None
        future = self._waiter(request_id)
        await self._flush()
        result: StorageChanged = await future
        return result

    async def set_notify(self, keys: Iterable[str]) -> None:
        """Be told of changes to ``keys`` (each a :class:`StorageChanged` event)."""
        self.session.set_notify(keys)
        await self._flush()

    async def say(self, text: str) -> None:
        """Send a chat message (or a ``!command``) to the room."""
        self.session.say(text)
        await self._flush()

    async def status_update(self, status: int) -> None:
        """Report our state, a :class:`~gamecodec.archipelago.ClientStatus`."""
        self.session.status_update(status)
        await self._flush()

    async def death_link(self, cause: str = "", *, now: float | None = None) -> None:
        """Bounce a DeathLink (``now``: the death's Unix time; default the loop clock)."""
        self.session.death_link(time.time() if now is None else now, cause)
        await self._flush()

    async def bounce(self, data: dict[str, Any], **targets: Any) -> None:
        """Send ``data`` to the clients matching ``games=``, ``slots=`` or ``tags=``."""
        self.session.bounce(data, **targets)
        await self._flush()

    # ------------------------------------------------------------------ the loop

    def _fail_waiters(self, exc: Exception) -> None:
        for future in self._waiters.values():
            if not future.done():
                future.set_exception(exc)
        self._waiters.clear()

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, LoggedIn):
            if self._login is not None and not self._login.done():
                self._login.set_result(event)
            missing = self.checked - set(event.connected.checked_locations)
            if missing:
                self.session.check_locations(sorted(missing))
        elif isinstance(event, LoginRefused) and self._login is not None and not self._login.done():
            self._login.set_exception(LoginRefusedError(event.errors))
        request_id = None
        value: Any = None
        if isinstance(event, LocationsScouted):
            request_id, value = event.request_id, event.locations
        elif isinstance(event, StorageRead):
            request_id, value = event.request_id, event.keys
        elif isinstance(event, StorageChanged) and event.request_id is not None:
            request_id, value = event.request_id, event
        elif isinstance(event, RequestTimedOut):
            future = self._waiters.pop(event.request_id, None)
            if future is not None and not future.done():
                future.set_exception(TimeoutError(f"{event.kind} {event.request_id} timed out"))
            return
        elif isinstance(event, RequestRefused):
            future = self._waiters.pop(event.request_id, None)
            if future is not None and not future.done():
                future.set_exception(
                    remote(f"the server refused {event.kind}: {event.invalid.text}")
                )
                return
        if request_id is not None and request_id in self._waiters:
            future = self._waiters.pop(request_id)
            if not future.done():
                future.set_result(value)
            return
        self._events.put_nowait(event)

    async def _session_loop(self, socket: ClientConnection, started: float) -> None:
        """Run the session until a refusal (``started``: when connecting began)."""
        login_by = None if self.connect_timeout is None else started + self.connect_timeout
        while True:
            deadline = self.session.next_deadline()
            if login_by is not None:
                if self.session.state is State.CONNECTED:
                    login_by = None
                else:
                    deadline = login_by if deadline is None else min(deadline, login_by)
            timeout = None if deadline is None else max(0.0, deadline - self._clock())
            try:
                message = await asyncio.wait_for(socket.recv(), timeout)
            except TimeoutError:
                if login_by is not None and self._clock() >= login_by:
                    # a server that never sends RoomInfo or answers Connect
                    raise TimeoutError(f"no login within {self.connect_timeout} s") from None
                for event in self.session.handle_timeout(self._clock()):
                    self._dispatch(event)
                continue
            if self.tap is not None:
                call_tap(self.tap, Traffic("in", message, self._loop.time(), self.uri))
            for event in self.session.receive_frame(message, self._clock()):
                self._dispatch(event)
            await self._flush()
            if self.session.state is State.REFUSED:
                return

    async def _run(self) -> None:
        attempt = 0
        while not self._closing:
            started = self._clock()
            try:
                async with ws_connect(
                    self.uri,
                    proxy=None,
                    max_size=MAX_FRAME,
                    compression="deflate",
                    open_timeout=self.connect_timeout,
                ) as socket:
                    self._socket = socket
                    attempt = 0
                    await self._session_loop(socket, started)
                    # refused: a first login's refusal went to connect(); a re-login's
                    # ends the event stream too
                    self._fail_waiters(ConnectionError("login refused"))
                    self._events.put_nowait(None)
                    return
            except (ConnectionClosed, OSError, TimeoutError) as exc:
                self._socket = None
                logged_in = self._login is not None and self._login.done()
                if self._closing:
                    return
                if not logged_in:
                    if self._login is not None and not self._login.done():
                        self._login.set_exception(exc)
                    return
                if not self.reconnect:
                    self._fail_waiters(ConnectionError(f"connection lost: {exc}"))
                    self._events.put_nowait(None)
                    return
            except Exception as exc:  # a protocol error from the session: give up
                self._socket = None
                if self._login is not None and not self._login.done():
                    self._login.set_exception(exc)
                self._fail_waiters(ConnectionError(f"client failed: {exc}"))
                self._events.put_nowait(None)
                return
            finally:
                self._socket = None
            # lost after a login: start over with a fresh session, after a backoff
            self._fail_waiters(ConnectionError("connection lost; reconnecting"))
            delay = min(self.max_backoff, self.initial_backoff * 2**attempt)
            attempt += 1
            self.reconnects += 1
            await asyncio.sleep(delay)
            self.session = ClientSession(**self._options)


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
    data_packages: dict[str, C.GameData] | None = None,
    reconnect: bool = True,
    initial_backoff: float = 0.5,
    max_backoff: float = 30.0,
    connect_timeout: float | None = 30.0,
    tap: Tap | None = None,
    login_timeout: Any = _NOT_GIVEN,
) -> Client:
    """Open ``uri``, log in as ``name`` playing ``game``; returns the :class:`Client`.

    ``connect_timeout`` bounds each connect and login, in seconds (the first
    one raises ``TimeoutError``; a re-login after a dropped connection that
    times out is retried). ``request_timeout`` bounds the wait for the reply
    to :meth:`Client.scout`, :meth:`Client.get` and :meth:`Client.set`
    (``TimeoutError``). ``tap`` is called with a
    :class:`~gamecodec.sessions.Traffic` for every text frame received and
    sent. ``login_timeout`` is the deprecated name of ``connect_timeout``.
    The other options go into the :class:`ClientSession`."""
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
        connect_timeout=_connect_timeout(connect_timeout, login_timeout),
        tap=tap,
    )
    await client.start()
    return client
