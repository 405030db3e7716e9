"""Thin asyncio adapters: a :class:`~gamecodec.ywindow.Peer` over a stream.

``await connect(host, port, authority=...)`` logs in and returns a
:class:`Client`; ``await serve(on_call, host, port, authority=...)``
starts a server whose connections answer calls with ``on_call``. Both take
``tap=`` (a :data:`gamecodec.sessions.Tap`: every chunk read or written, as a
:class:`~gamecodec.sessions.Traffic`) and ``connect_timeout=`` (seconds for
the connection and the login).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from gamecodec._aio import call_tap
from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.errors import RemoteProtocolError
from gamecodec.sessions import Tap, Traffic
from gamecodec.ywindow._errors import AuthenticationError
from gamecodec.ywindow._models import (
    MAX_MESSAGE,
    Authenticated,
    AuthenticationFailed,
    Call,
    Encodable,
    Greeting,
    Notification,
    PeerEvent,
    Reply,
    Role,
    State,
    Value,
)
from gamecodec.ywindow.authority import check_authority, load_authority, save_authority
from gamecodec.ywindow.session import Peer

__all__ = ["MAX_QUEUED", "Client", "OnCall", "OnConnect", "connect", "serve"]

OnCall = Callable[[str, tuple[Value, ...]], Awaitable[Iterable[Encodable]]]
"""``async def on_call(method, args) -> values``: answers one incoming call."""
OnConnect = Callable[["Client"], Awaitable[None]]
"""``async def on_connect(client)``: runs once a served connection has logged in."""

_READ_SIZE = 65536

MAX_QUEUED = 1024
"""While this many incoming notifications and calls wait for
:meth:`Client.next_event`, the connection stops reading (TCP then holds the
other side back, and the end of the stream is seen once events are taken);
one read can add the events of at most 64 KiB more. Calls handled by
``on_call`` do not queue: the peer's ``max_unanswered`` bounds them."""


class Client:
    """A logged-in ywindow connection, either side (made by :func:`connect`
    and :func:`serve`). Incoming ``v`` messages (and ``c`` calls when there is
    no ``on_call``) queue up for :meth:`next_event`."""

    def __init__(
        self,
        peer: Peer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_call: OnCall | None = None,
        *,
        tap: Tap | None = None,
    ) -> None:
        self.peer = peer
        self.greeting: Greeting | None = None
        self._reader = reader
        self._writer = writer
        self._on_call = on_call
        self._tap = tap
        self._peer_address: Any = writer.get_extra_info("peername")
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._ready: asyncio.Future[None] = loop.create_future()
        self._replies: dict[int, asyncio.Future[tuple[Value, ...]]] = {}
        self._queue: asyncio.Queue[Notification | Call | None] = asyncio.Queue()
        self._room = asyncio.Event()  # set when next_event takes from a full queue
        self._handlers: set[asyncio.Task[None]] = set()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    async def _start(self) -> None:
        self._flush()
        self._task = asyncio.create_task(self._run())
        await self._ready

    async def _run(self) -> None:
        try:
            while not self.peer.closed:
                while self._queue.qsize() >= MAX_QUEUED:
                    self._room.clear()
                    await self._room.wait()
                data = await self._read()
                now = self._loop.time()
                if data and self._tap is not None:
                    call_tap(self._tap, Traffic("in", data, now, self._peer_address))
                events: list[PeerEvent] = []
                try:
                    events = self.peer.receive_data(data, now)
                finally:
                    self._dispatch(self.peer.events() + events)
                    self._flush()
                await self._writer.drain()
        except (OSError, RemoteProtocolError) as exc:
            if self._error is None:  # the first failure is the one to tell
                self._error = exc
        finally:
            self._finish()

    async def _read(self) -> bytes:
        """The next chunk; a connection that ends while the server holds our
        digest is the server refusing it (the side that finds a mismatch
        closes the connection, without a word)."""
        refusable = self.peer.role is Role.CLIENT and self.peer.state is State.DIGEST
        try:
            data = await self._reader.read(_READ_SIZE)
        except OSError as exc:
            if refusable:
                raise _refused() from exc
            raise
        if not data and refusable and self._error is None:
            self._error = _refused()
        return data

    def _finish(self) -> None:
        error = self._error or ConnectionError("ywindow connection closed")
        if not self._ready.done():
            self._ready.set_exception(error)
        for fut in self._replies.values():
            if not fut.done():
                fut.set_exception(error)
        self._replies.clear()
        self._queue.put_nowait(None)
        self._writer.close()

    def _dispatch(self, events: list[PeerEvent]) -> None:
        for event in events:
            if isinstance(event, Reply):
                fut = self._replies.pop(event.id)
                if not fut.done():
                    fut.set_result(event.values)
            elif isinstance(event, Notification):
                self._queue.put_nowait(event)
            elif isinstance(event, Call):
                if self._on_call is None:
                    self._queue.put_nowait(event)
                else:
                    task = asyncio.create_task(self._answer(self._on_call, event))
                    self._handlers.add(task)
                    task.add_done_callback(self._handlers.discard)
            elif isinstance(event, Greeting):
                self.greeting = event
            elif isinstance(event, Authenticated):
                if not self._ready.done():
                    self._ready.set_result(None)
            elif isinstance(event, AuthenticationFailed):
                self._error = AuthenticationError(f"authentication failed: {event.reason}")

    async def _answer(self, on_call: OnCall, call: Call) -> None:
        try:
            values = tuple(await on_call(call.method, call.args))
            if not self.peer.closed:
                self.peer.reply(call.id, *values)
                await self._send()
        except Exception as exc:
            # replies carry no id: one left unanswered would hold every later one
            # back for good, so the connection ends (the caller's calls fail)
            if self._error is None:
                self._error = exc
            self.peer.close()
            self._writer.close()

    def _flush(self) -> None:
        data = self.peer.data_to_send()
        if data and not self._writer.is_closing():
            if self._tap is not None:
                call_tap(self._tap, Traffic("out", data, self._loop.time(), self._peer_address))
            self._writer.write(data)

    async def _send(self) -> None:
        self._flush()
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    async def call(self, method: str, *args: Encodable) -> tuple[Value, ...]:
        """Call ``method`` and wait for its reply's values."""
        handle = self.peer.call(method, *args)
        fut: asyncio.Future[tuple[Value, ...]] = asyncio.get_running_loop().create_future()
        self._replies[handle.id] = fut
        await self._send()
        return await fut

    async def notify(self, method: str, *args: Encodable) -> None:
        """Send a ``v`` (no reply)."""
        self.peer.notify(method, *args)
        await self._send()

    async def reply(self, call: Call, *values: Encodable) -> None:
        """Answer a queued incoming call (FIFO order is kept by the peer)."""
        self.peer.reply(call, *values)
        await self._send()

    async def next_event(self) -> Notification | Call:
        """The next queued notification or call; ``ConnectionError`` at the end."""
        item = await self._queue.get()
        self._room.set()
        if item is None:
            self._queue.put_nowait(None)
            raise self._error or ConnectionError("ywindow connection closed")
        return item

    async def wait_closed(self) -> None:
        """Wait until the connection has ended."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def close(self) -> None:
        """Close the connection and wait for it to end."""
        self.peer.close()
        self._writer.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _refused() -> AuthenticationError:
    return AuthenticationError(
        "authentication failed: the server closed the connection on our digest "
        "(it does not know our authority)"
    )


def _authority(authority: bytes | None, authority_file: str | os.PathLike[str] | None) -> bytes:
    return authority if authority is not None else load_authority(authority_file)


async def connect(
    host: str,
    port: int,
    *,
    authority: bytes | None = None,
    authority_file: str | os.PathLike[str] | None = None,
    software: str = "gamecodec",
    on_call: OnCall | None = None,
    max_message: int = MAX_MESSAGE,
    tap: Tap | None = None,
    connect_timeout: float | None = None,
) -> Client:
    """Connect and log in; the authority comes from bytes or a file
    (``~/.Yauthority`` by default). ``on_call`` answers the server's calls
    (without it they queue for :meth:`Client.next_event`). A server that
    refuses the login raises :class:`~gamecodec.ywindow.AuthenticationError`.

    ``connect_timeout`` bounds the connection and the login (``None``: no
    limit; :class:`TimeoutError` when it passes); ``tap`` sees every chunk read
    and written.
    """
    secret = _authority(authority, authority_file)
    peer = Peer.client(secret, software=software, max_message=max_message)
    client: Client | None = None

    async def start() -> Client:
        nonlocal client
        reader, writer = await asyncio.open_connection(host, port)
        client = Client(peer, reader, writer, on_call, tap=tap)
        await client._start()
        return client

    try:
        return await asyncio.wait_for(start(), connect_timeout)
    except BaseException:
        if client is not None:
            await client.close()
        raise


async def serve(
    on_call: OnCall,
    host: str | None,
    port: int,
    *,
    authority: bytes | None = None,
    authority_file: str | os.PathLike[str] | None = None,
    software: str = "gamecodec",
    on_connect: OnConnect | None = None,
    max_message: int = MAX_MESSAGE,
    tap: Tap | None = None,
    connect_timeout: float | None = None,
) -> asyncio.Server:
    """Start a server: each connection logs in, then ``on_connect(client)``
    runs (it can call the client) and ``on_call`` answers its calls.

    Without ``authority``, the server generates a fresh one at startup and
    writes it to ``authority_file`` (``~/.Yauthority`` by default, readable by
    its owner only) for clients to read, as the protocol document describes.

    ``connect_timeout`` closes a connection that has not logged in within that
    many seconds (``None``: no limit); ``tap`` sees every chunk read and written.
    """
    if authority is None:
        secret = save_authority(None, authority_file)
    else:
        secret = check_authority(authority)  # refused now, not at the first connection

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = Peer.server(secret, software=software, max_message=max_message)
        conn = Client(peer, reader, writer, on_call, tap=tap)
        try:
            try:
                await asyncio.wait_for(conn._start(), connect_timeout)
            except (ConnectionError, RemoteProtocolError, TimeoutError):
                await conn.close()
                return
            if on_connect is not None:
                await on_connect(conn)
            await conn.wait_closed()
        except asyncio.CancelledError:
            # the server is shutting down: end this connection quietly (Python
            # 3.11's stream callback logs a traceback for a cancelled handler)
            await conn.close()

    return await asyncio.start_server(handle, host, port)


__getattr__ = deprecated_names(__name__, {"Connection": ("Client", lambda: Client)})

__dir__ = public_dir(__name__)
