"""An asyncio Archipelago client: websockets around :class:`ClientSession`.

>>> async def play(url: str) -> None:  # doctest: +SKIP
...     client = await connect(url, name="Alice", game="Clique")
...     await client.check_locations([10])
...     print(await client.get(["counter"]))
...     await client.close()

:func:`connect` opens the websocket (permessage-deflate negotiated, loopback
proxies ignored), logs in and returns once the server accepted the login
(:class:`LoginRefusedError` otherwise; ``TimeoutError`` when the server has
not accepted or refused it within ``login_timeout`` seconds). Requests that have a reply (scouts,
Get, Set) are awaited; everything else arrives through :meth:`Client.next_event`
or ``async for event in client``. If the connection drops after a login, the
client reconnects with exponential backoff, logs in again with the same
session parameters and re-sends its checked locations; :meth:`Client.close`
shuts it down cleanly (close code 1000, pending requests fail with
``ConnectionError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from gamecodec.archipelago import commands as C
from gamecodec.archipelago.session import (
    ClientSession,
    Event,
    LocationsScouted,
    LoggedIn,
    LoginRefused,
    RequestRefused,
    RequestTimedOut,
    State,
    StorageChanged,
    StorageRead,
)
from gamecodec.errors import RemoteProtocolError, SessionError

__all__ = ["Client", "LoginRefusedError", "connect"]

MAX_FRAME = 16 * 1024 * 1024
"""Inbound frame limit, as CommonClient (a DataPackage of every world is ~4 MB)."""


class LoginRefusedError(SessionError):
    """The server answered Connect with ConnectionRefused."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__(f"login refused: {', '.join(errors) or 'no reason given'}")


class Client:
    """A logged-in connection (see :func:`connect`)."""

    def __init__(
        self,
        uri: str,
        session_options: dict[str, Any],
        *,
        reconnect: bool = True,
        initial_backoff: float = 0.5,
        max_backoff: float = 30.0,
        login_timeout: float | None = 30.0,
        clock: Any = None,
    ) -> None:
        self.uri = uri
        self.login_timeout = login_timeout
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
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def items(self) -> list[C.Item]:
        """Every item received so far, in server order."""
        return self.session.items

    @property
    def connected(self) -> C.Connected | None:
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

    def _waiter(self, request_id: int) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = self._loop.create_future()
        self._waiters[request_id] = future
        return future

    async def check_locations(self, locations: Iterable[int]) -> None:
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
        self.session.set_notify(keys)
        await self._flush()

    async def say(self, text: str) -> None:
        self.session.say(text)
        await self._flush()

    async def status_update(self, status: int) -> None:
        self.session.status_update(status)
        await self._flush()

    async def death_link(self, cause: str = "", *, now: float | None = None) -> None:
        """Bounce a DeathLink (``now``: the death's Unix time; default the loop clock)."""
        self.session.death_link(time.time() if now is None else now, cause)
        await self._flush()

    async def bounce(self, data: dict[str, Any], **targets: Any) -> None:
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
                    RemoteProtocolError(f"the server refused {event.kind}: {event.invalid.text}")
                )
                return
        if request_id is not None and request_id in self._waiters:
            future = self._waiters.pop(request_id)
            if not future.done():
                future.set_result(value)
            return
        self._events.put_nowait(event)

    async def _session_loop(self, socket: ClientConnection) -> None:
        login_by = None if self.login_timeout is None else self._clock() + self.login_timeout
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
                    raise TimeoutError(f"no login within {self.login_timeout} s") from None
                for event in self.session.handle_timeout(self._clock()):
                    self._dispatch(event)
                continue
            for event in self.session.receive_frame(message, self._clock()):
                self._dispatch(event)
            await self._flush()
            if self.session.state is State.REFUSED:
                return

    async def _run(self) -> None:
        attempt = 0
        while not self._closing:
            try:
                async with ws_connect(
                    self.uri, proxy=None, max_size=MAX_FRAME, compression="deflate"
                ) as socket:
                    self._socket = socket
                    attempt = 0
                    await self._session_loop(socket)
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
    login_timeout: float | None = 30.0,
) -> Client:
    """Open ``uri``, log in as ``name`` playing ``game``; returns the :class:`Client`.
    ``login_timeout`` bounds each login (the first one raises ``TimeoutError``;
    a re-login after a dropped connection that times out is retried)."""
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
        login_timeout=login_timeout,
    )
    await client.start()
    return client
