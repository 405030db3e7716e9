"""Thin asyncio adapters over the Sans-IO sessions.

``bot = await connect(host, port)`` greets, shakes hands and returns a
:class:`Bot` with one coroutine per command (``await bot.mytanks()``,
``await bot.occgrid(0)``). Commands issued concurrently are pipelined; the
answers are matched in order. ``await serve(handler, host, port)`` runs a
bzrflag-style server on :class:`~gamecodec.bzrc.ServerSession` (a test
double: ``handler(request)`` returns each command's answer).

Both take ``tap=`` (a :data:`gamecodec.sessions.Tap`: every chunk read or
written, as a :class:`~gamecodec.sessions.Traffic`) and ``connect_timeout=``
(seconds for the connection and the handshake).

Failures a client call raises: :class:`TimeoutError` when no byte has come
from the server for the bot's ``timeout`` seconds while the call waits (an
idle limit, :data:`~gamecodec.bzrc.DEFAULT_TIMEOUT` unless given: a long
answer still arriving is waited for), or when its whole wait passes
``total_timeout`` (only if given); the connection is then closed, since BZRC
answers carry no id;
:class:`ConnectionError` when the connection is lost or closed, at any point
(before the greeting, between replies or inside one; an ``OSError`` behind it
is its ``__cause__``), :class:`~gamecodec.RemoteProtocolError` when the server
breaks the protocol, and :class:`~gamecodec.bzrc.CommandFailed` when a query
is answered with ``fail``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NamedTuple, TypeAlias, cast

from gamecodec._aio import call_tap
from gamecodec._public import public_dir
from gamecodec.bzrc._format import Dialect
from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_RESPONSE,
    DEFAULT_TIMEOUT,
    Base,
    CommandFailed,
    Constant,
    Error,
    Fail,
    Flag,
    Help,
    Item,
    Listing,
    MyTank,
    Obstacle,
    OccGrid,
    Ok,
    OtherTank,
    Response,
    Score,
    Shot,
    Team,
    Timer,
)
from gamecodec.bzrc.session import (
    Answer,
    ClientSession,
    Closed,
    Connected,
    Request,
    ServerSession,
    Unsolicited,
)
from gamecodec.errors import EncodeError, LocalProtocolError, RemoteProtocolError
from gamecodec.sessions import Tap, Traffic

__all__ = [
    "MAX_ERRORS",
    "Bot",
    "Handler",
    "HandlerAnswer",
    "TankCommand",
    "TankResult",
    "connect",
    "serve",
]

_READ_SIZE = 1 << 16

MAX_ERRORS = 100
"""How many unsolicited ``error`` lines :attr:`Bot.errors` keeps (the latest)."""


class TankCommand(NamedTuple):
    """One tank's orders for a tick (the reference client's ``Command``)."""

    tank: int
    speed: float
    angvel: float
    shoot: bool = False


class TankResult(NamedTuple):
    """Whether each order was accepted; ``shoot`` is None when not given."""

    speed: bool
    angvel: bool
    shoot: bool | None


class Bot:
    """A connected BZRC client (made by :func:`connect`). Queries return typed
    values and raise :class:`~gamecodec.bzrc.CommandFailed` on ``fail``;
    actions return True (``ok``) or False (``fail``). ``errors`` collects
    unsolicited ``error`` lines: the latest :data:`MAX_ERRORS` (older ones are
    dropped, so a server sending them without end holds no more).

    ``timeout`` (settable, seconds; ``None``: none) is an idle limit on every
    call's wait: it fires when no byte has come from the server for that
    long (bytes for any pending command count), so a long answer (five
    800x800 grids) is waited for as long as it keeps arriving.
    ``total_timeout`` (settable; ``None``, the default: none) limits each
    call's whole wait. See the module for what calls raise."""

    def __init__(
        self,
        session: ClientSession,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        tap: Tap | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        total_timeout: float | None = None,
    ) -> None:
        self.session = session
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.errors: list[Error] = []
        self._reader = reader
        self._writer = writer
        self._tap = tap
        self._peer: Any = writer.get_extra_info("peername")
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._last_in = loop.time()  # when the last byte came from the server
        self._ready: asyncio.Future[None] = loop.create_future()
        self._waiting: dict[int, asyncio.Future[Response]] = {}
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    async def _start(self) -> None:
        self._task = asyncio.create_task(self._run())
        await self._ready

    async def _run(self) -> None:
        try:
            while not self.session.closed:
                data = await self._reader.read(_READ_SIZE)
                now = self._last_in = self._loop.time()
                if data and self._tap is not None:
                    call_tap(self._tap, Traffic("in", data, now, self._peer))
                try:
                    self._dispatch(self.session.receive_data(data, now))
                finally:
                    self._dispatch(self.session.events())
                self._flush()
        except ConnectionError as exc:
            self._error = exc
        except OSError as exc:
            self._error = ConnectionError(f"BZRC connection lost: {exc}")
            self._error.__cause__ = exc
        except RemoteProtocolError as exc:
            self._error = exc
        finally:
            self._finish()

    def _finish(self) -> None:
        if self._error is None:
            self._error = ConnectionError("BZRC connection closed")
        error = self._error
        if not self._ready.done():
            self._ready.set_exception(error)
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(error)
        self._waiting.clear()
        self._writer.close()

    def _dispatch(self, events: list[Connected | Answer | Unsolicited | Closed]) -> None:
        for event in events:
            if isinstance(event, Connected):
                if not self._ready.done():
                    self._ready.set_result(None)
            elif isinstance(event, Answer):
                fut = self._waiting.pop(event.request.id, None)
                if fut is not None and not fut.done():
                    fut.set_result(event.response)
            elif isinstance(event, Unsolicited):
                if len(self.errors) >= MAX_ERRORS:
                    del self.errors[0]
                self.errors.append(event.response)

    def _flush(self) -> None:
        data = self.session.data_to_send()
        if data and not self._writer.is_closing():
            if self._tap is not None:
                call_tap(self._tap, Traffic("out", data, self._loop.time(), self._peer))
            self._writer.write(data)

    def _check_open(self) -> None:
        if self._error is not None:
            raise self._error
        if self.session.closed or self._writer.is_closing():
            raise ConnectionError("BZRC connection closed")

    async def _wait(self, command: str, waiting: Awaitable[Any]) -> Any:
        """``waiting``'s result, while bytes keep coming within :attr:`timeout`
        and within :attr:`total_timeout` of the start; past either the
        connection is closed (a late answer would land on the next command)
        and :class:`TimeoutError` raised."""
        if self.timeout is None and self.total_timeout is None:
            return await waiting
        task = asyncio.ensure_future(waiting)
        start = self._loop.time()
        try:
            while True:
                _, wake = self._limit(start, command)
                done, _ = await asyncio.wait({task}, timeout=max(0.0, wake - self._loop.time()))
                if done:
                    return task.result()
                reason, wake = self._limit(start, command)  # bytes may have come meanwhile
                if self._loop.time() >= wake:
                    task.cancel()  # before the others fail: its error would go unread
                    self._time_out(command)
                    raise TimeoutError(reason)
        finally:
            if not task.done():
                task.cancel()

    def _limit(self, start: float, command: str) -> tuple[str, float]:
        """The nearest limit on a wait for ``command`` that started at
        ``start``: what passing it means, and when it passes."""
        limits = []
        if self.timeout is not None:
            silent_since = max(self._last_in, start)
            limits.append(
                (
                    silent_since + self.timeout,
                    f"no byte from the server for {self.timeout} s waiting for {command}",
                )
            )
        if self.total_timeout is not None:
            limits.append(
                (
                    start + self.total_timeout,
                    f"no answer to {command} within {self.total_timeout} s",
                )
            )
        wake, reason = min(limits)
        return reason, wake

    def _time_out(self, command: str) -> None:
        """Close the connection after a timeout: later answers cannot be matched."""
        error = ConnectionError(f"BZRC connection closed: {command} timed out")
        if self._error is None:
            self._error = error
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(error)
        self._waiting.clear()
        self._writer.close()

    def _expect(self, request: Request) -> asyncio.Future[Response]:
        """A future for the answer to ``request``."""
        fut: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[request.id] = fut
        return fut

    def _submit(self, command: str, *args: object) -> asyncio.Future[Response]:
        self._check_open()
        return self._expect(self.session.send(command, *args))

    async def _drain(self) -> None:
        self._flush()
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    async def command(self, command: str, *args: object) -> Response:
        """Send one command and return its raw response."""
        fut = self._submit(command, *args)
        await self._drain()
        response: Response = await self._wait(command, fut)
        return response

    async def commands(self, commands: Iterable[tuple[object, ...]]) -> list[Response]:
        """Pipeline several commands in one write: ``[("mytanks",), ("shots",)]``.
        All or none: a bad argument anywhere raises before any is sent."""
        self._check_open()
        requests = self.session.send_many(commands)
        futures = [self._expect(r) for r in requests]
        await self._drain()
        names = " ".join(r.command for r in requests)
        return list(await self._wait(names, asyncio.gather(*futures)))

    # -- actions ---------------------------------------------------------

    async def _action(self, command: str, *args: object) -> bool:
        return _ok(command, await self.command(command, *args))

    async def shoot(self, index: int) -> bool:
        """Fire tank ``index``'s gun (False while it reloads)."""
        return await self._action("shoot", index)

    async def speed(self, index: int, value: float) -> bool:
        """Set tank ``index``'s speed, -1..1."""
        return await self._action("speed", index, value)

    async def angvel(self, index: int, value: float) -> bool:
        """Set tank ``index``'s angular velocity, -1..1."""
        return await self._action("angvel", index, value)

    async def accelx(self, index: int, value: float) -> bool:
        """Older servers and the C++ hover-bots only."""
        return await self._action("accelx", index, value)

    async def accely(self, index: int, value: float) -> bool:
        """Older servers and the C++ hover-bots only."""
        return await self._action("accely", index, value)

    async def taunt(self, text: str) -> bool:
        """Send a taunt (its words) to the other teams."""
        return await self._action("taunt", text)

    async def do_commands(self, commands: Iterable[TankCommand]) -> list[TankResult]:
        """The per-tick batch: speed, angvel (and shoot) for every tank, in one
        write, answers gathered in order."""
        plan: list[tuple[object, ...]] = []
        orders = list(commands)
        for order in orders:
            plan.append(("speed", order.tank, order.speed))
            plan.append(("angvel", order.tank, order.angvel))
            if order.shoot:
                plan.append(("shoot", order.tank))
        responses = iter(await self.commands(plan))
        results = []
        for order in orders:
            speed = _ok("speed", next(responses))
            angvel = _ok("angvel", next(responses))
            shot = _ok("shoot", next(responses)) if order.shoot else None
            results.append(TankResult(speed, angvel, shot))
        return results

    # -- queries ---------------------------------------------------------------

    async def _list(self, command: str) -> list[Item]:
        return _items(command, await self.command(command))

    async def teams(self) -> list[Team]:
        """The teams and their tank counts."""
        return [i for i in await self._list("teams") if isinstance(i, Team)]

    async def obstacles(self) -> list[Obstacle]:
        """The obstacles' corners."""
        return [i for i in await self._list("obstacles") if isinstance(i, Obstacle)]

    async def bases(self) -> list[Base]:
        """Every team's base corners."""
        return [i for i in await self._list("bases") if isinstance(i, Base)]

    async def flags(self) -> list[Flag]:
        """Every flag and who carries it."""
        return [i for i in await self._list("flags") if isinstance(i, Flag)]

    async def shots(self) -> list[Shot]:
        """The shots in flight."""
        return [i for i in await self._list("shots") if isinstance(i, Shot)]

    async def mytanks(self) -> list[MyTank]:
        """Our tanks."""
        return [i for i in await self._list("mytanks") if isinstance(i, MyTank)]

    async def othertanks(self) -> list[OtherTank]:
        """The other teams' tanks."""
        return [i for i in await self._list("othertanks") if isinstance(i, OtherTank)]

    async def constants(self) -> dict[str, str]:
        """name -> value text, as the reference client returns them."""
        items = await self._list("constants")
        return {i.name: i.value for i in items if isinstance(i, Constant)}

    async def scores(self) -> list[Score]:
        """The score difference of every pair of teams."""
        return [i for i in await self._list("scores") if isinstance(i, Score)]

    async def timer(self) -> Timer:
        """Elapsed game time and the time limit."""
        response = await self.command("timer")
        if isinstance(response, Timer):
            return response
        raise _failed("timer", response)

    async def occgrid(self, index: int) -> OccGrid:
        """The occupancy grid around tank ``index``."""
        response = await self.command("occgrid", index)
        if isinstance(response, OccGrid):
            return response
        raise _failed("occgrid", response)

    async def help(self, topic: str | None = None, *, quiet: float = 0.2) -> Help:
        """Help output has no terminator: it is taken as complete when the
        next response starts, or after ``quiet`` seconds without more of it."""
        fut = self._submit("help", *(() if topic is None else (topic,)))
        await self._drain()

        async def answer() -> Response:
            while True:
                with contextlib.suppress(asyncio.TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(fut), quiet)
                self._dispatch(self.session.end_help())

        response: Response = await self._wait("help", answer())
        if isinstance(response, Help):
            return response
        raise _failed("help", response)

    async def quit(self) -> bool:
        """Say goodbye; the server closes the connection after ``ok``."""
        ok = await self._action("quit")
        await self.wait_closed()
        return ok

    async def endgame(self) -> bool:
        """Undocumented bzrflag command: the whole server exits."""
        return await self._action("endgame")

    async def wait_closed(self) -> None:
        """Wait until the connection has ended."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def close(self) -> None:
        """Close the connection; commands still waiting fail."""
        self._writer.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    async def __aenter__(self) -> Bot:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _failed(command: str, response: Response) -> CommandFailed | RemoteProtocolError:
    if isinstance(response, Fail | Error):
        return CommandFailed(command, response)
    return RemoteProtocolError(f"{command} answered with {response!r}")


def _ok(command: str, response: Response) -> bool:
    if isinstance(response, Ok):
        return True
    if isinstance(response, Fail | Error):
        return False
    raise RemoteProtocolError(f"{command} answered with {response!r}")


def _items(command: str, response: Response) -> list[Item]:
    if isinstance(response, Listing):
        return response.items
    raise _failed(command, response)


async def connect(
    host: str,
    port: int,
    *,
    tap: Tap | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    total_timeout: float | None = None,
    connect_timeout: float | None = DEFAULT_TIMEOUT,
    max_line: int = DEFAULT_MAX_LINE,
    max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
    max_response: int = DEFAULT_MAX_RESPONSE,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> Bot:
    """Connect, wait for ``bzrobots 1``, send ``agent 1``; return the :class:`Bot`.

    ``timeout`` is the idle limit of each call (:attr:`Bot.timeout`: no byte
    from the server for that many seconds), ``total_timeout`` a limit on each
    call's whole wait (:attr:`Bot.total_timeout`, none unless given),
    ``connect_timeout`` the limit on the connection and the greeting (one
    short line: silence and total are the same there). ``timeout`` and
    ``connect_timeout`` default to :data:`~gamecodec.bzrc.DEFAULT_TIMEOUT`
    seconds (``None``: no limit; :class:`TimeoutError` when one passes). A
    connection lost before the greeting raises :class:`ConnectionError`.
    ``tap`` sees every chunk read and written. ``max_line``,
    ``max_grid_cells``, ``max_response`` and ``max_items`` bound the decoder.
    """
    session = ClientSession(
        max_line=max_line,
        max_grid_cells=max_grid_cells,
        max_response=max_response,
        max_items=max_items,
    )
    bot: Bot | None = None

    async def start() -> Bot:
        nonlocal bot
        reader, writer = await asyncio.open_connection(host, port)
        bot = Bot(session, reader, writer, tap=tap, timeout=timeout, total_timeout=total_timeout)
        await bot._start()
        return bot

    try:
        return await asyncio.wait_for(start(), connect_timeout)
    except BaseException:
        if bot is not None:
            await bot.close()
        raise


HandlerAnswer: TypeAlias = "Response | tuple[Response, bool]"
"""What a :data:`Handler` returns: the answer, or ``(answer, False)``."""

Handler: TypeAlias = Callable[[Request], "HandlerAnswer | Awaitable[HandlerAnswer]"]
"""``handler(request)`` -> the answer (Ok/Fail/Listing/Timer/OccGrid, ack
filled in by the session), or ``(answer, False)`` to send it without an ack;
plain or async. A handler that raises, or whose answer cannot be sent (another
type, a field the wire cannot carry), gets the command answered ``fail`` with
the problem, logged on the ``gamecodec.bzrc.aio`` logger; the connection goes on."""

_log = logging.getLogger(__name__)


def _one_line(text: str) -> str:
    """``text`` as a ``fail`` comment: one latin-1 line."""
    return " ".join(text.split()).encode("latin-1", "replace").decode("latin-1")


async def _answer(
    session: ServerSession, request: Request, handler: Handler, clock: Callable[[], float]
) -> None:
    """Answer ``request`` with ``handler``'s answer, or with ``fail`` naming
    the handler's mistake."""
    try:
        answer: object = handler(request)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:
        _log.error("bzrc handler raised on %r", request, exc_info=exc)
        session.fail(request, clock(), _one_line(f"handler raised {type(exc).__name__}: {exc}"))
        return
    with_ack = True
    if type(answer) is tuple and len(answer) == 2 and answer[1] is False:
        answer, with_ack = answer[0], False
    try:
        session.respond(request, cast(Response, answer), clock(), ack=with_ack)
    except (LocalProtocolError, EncodeError) as exc:
        _log.error("bzrc handler answered %r with %r: %s", request, answer, exc)
        session.fail(request, clock(), _one_line(f"handler answer refused: {exc}"))


async def serve(
    handler: Handler,
    host: str | None,
    port: int,
    *,
    tap: Tap | None = None,
    connect_timeout: float | None = None,
    dialect: Dialect = "bzrflag",
    mytank_gap: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> asyncio.Server:
    """A bzrflag-style server: one :class:`ServerSession` per connection,
    ``handler(request)`` (plain or async, see :data:`Handler`) answers every command.

    ``connect_timeout`` closes a connection that has not sent ``agent 1``
    within that many seconds (``None``: no limit). ``tap`` sees every chunk
    read and written, ``clock`` gives the sessions their time.
    """

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        session = ServerSession(clock(), dialect=dialect, mytank_gap=mytank_gap)
        peer: Any = writer.get_extra_info("peername")
        loop = asyncio.get_running_loop()
        deadline = None if connect_timeout is None else loop.time() + connect_timeout

        def send() -> None:
            data = session.data_to_send()
            if data:
                if tap is not None:
                    call_tap(tap, Traffic("out", data, loop.time(), peer))
                writer.write(data)

        try:
            send()
            while not session.closed:
                if deadline is not None and not session.established:
                    data = await asyncio.wait_for(reader.read(_READ_SIZE), deadline - loop.time())
                else:
                    data = await reader.read(_READ_SIZE)
                if not data:
                    break
                if tap is not None:
                    call_tap(tap, Traffic("in", data, loop.time(), peer))
                for request in session.receive_data(data, clock()):
                    await _answer(session, request, handler, clock)
                send()
                await writer.drain()
        except (OSError, RemoteProtocolError, TimeoutError):
            pass
        except asyncio.CancelledError:
            # the server is shutting down: end this connection quietly (Python
            # 3.11's stream callback logs a traceback for a cancelled handler)
            pass
        finally:
            writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await writer.wait_closed()

    return await asyncio.start_server(handle, host, port)


__dir__ = public_dir(__name__)
