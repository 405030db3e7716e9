"""A synchronous drop-in for the reference client ``bzrc.py`` (BYU CS 470).

Agents written against the reference client's ``BZRC`` class run unchanged
once their import reads ``from gamecodec.bzrc.compat import BZRC, Command``:
the same methods (``get_mytanks()``, ``get_lots_o_stuff()``,
``do_commands(...)`` ...) return the same shapes, objects with the reference's
attribute names (``tank.index``, ``tank.time_to_reload``, ``flag.poss_color``
...) and its types (positions and counts as ``float``, ``constants`` as a
dict of strings). Underneath is gamecodec's decoder and client session on a
plain blocking socket: no asyncio, no threads.

Where it differs from the reference (Python 3, and robust where the
reference exits or desynchronises): a connection lost at any point raises
:class:`ConnectionError` (the reference calls ``sys.exit``); each call waits
at most ``timeout`` seconds for its answer and then raises
:class:`TimeoutError` and closes the connection; a confusing reply raises
:class:`UnexpectedResponse`; the extra ``fail`` bzrflag sends after a bad
speed/angvel argument and the ack-less occgrid ``fail`` no longer shift later
answers; ``error`` lines (BZFlag C++ dialect) that answer nothing are kept
in :attr:`BZRC.errors`. The low-level readers of the reference
(``read_arr``, ``expect``, ``read_ack`` ...) are not offered.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Sequence
from typing import Any

from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_RESPONSE,
    DEFAULT_TIMEOUT,
    Base,
    Closed,
    Connected,
    Constant,
    Error,
    Fail,
    Flag,
    Item,
    Listing,
    MyTank,
    Obstacle,
    OccGrid,
    Ok,
    OtherTank,
    Response,
    Shot,
    Team,
    Unsolicited,
)
from gamecodec.bzrc._models import Answer as Answered
from gamecodec.bzrc.session import ClientSession
from gamecodec.errors import RemoteProtocolError

__all__ = ["BZRC", "MAX_ERRORS", "Answer", "Command", "UnexpectedResponse"]

_READ_SIZE = 1 << 16

MAX_ERRORS = 100
"""How many unsolicited ``error`` lines :attr:`BZRC.errors` keeps (the latest)."""


class Answer:
    """One item of a reply (a tank, a flag ...), its fields as attributes
    named as in the reference client. Compared and hashed by identity, as the
    reference's plain objects are (agents key dicts and sets by them)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"Answer({fields})"


class Command:
    """One tank's orders for :meth:`BZRC.do_commands` (the reference's ``Command``)."""

    def __init__(self, index: int, speed: float, angvel: float, shoot: bool) -> None:
        self.index = index
        self.speed = speed
        self.angvel = angvel
        self.shoot = shoot


class UnexpectedResponse(RemoteProtocolError):
    """The server answered something the call cannot use (the reference's
    exception, with its ``expected`` and ``got`` attributes)."""

    def __init__(self, expected: str, got: str) -> None:
        super().__init__(expected, got, protocol="bzrc")
        self.expected = expected
        self.got = got

    def __str__(self) -> str:
        return f'BZRC: Expected "{self.expected}".  Instead got "{self.got}".'


def _got(response: Response) -> str:
    """A response as the words the reference client would have read."""
    if isinstance(response, Fail):
        return f"fail {response.comment}".rstrip()
    if isinstance(response, Error):
        return f"error {response.message}"
    return type(response).__name__


def _xy(corners: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in corners]


def _team(item: Team) -> Answer:
    # the reference also reads base corners from the team line; bzrflag sends none
    return Answer(color=item.color, count=float(item.ntanks), base=[])


def _flag(item: Flag) -> Answer:
    return Answer(color=item.color, poss_color=item.possessor, x=float(item.x), y=float(item.y))


def _shot(item: Shot) -> Answer:
    return Answer(x=float(item.x), y=float(item.y), vx=float(item.vx), vy=float(item.vy))


def _mytank(item: MyTank) -> Answer:
    return Answer(
        index=int(item.idx),
        callsign=item.callsign,
        status=item.status,
        shots_avail=int(item.shots_avail),
        time_to_reload=float(item.reload),
        flag=item.flag,
        x=float(item.x),
        y=float(item.y),
        angle=float(item.angle),
        vx=float(item.vx),
        vy=float(item.vy),
        angvel=float(item.angvel),
    )


def _othertank(item: OtherTank) -> Answer:
    return Answer(
        callsign=item.callsign,
        color=item.color,
        status=item.status,
        flag=item.flag,
        x=float(item.x),
        y=float(item.y),
        angle=float(item.angle),
    )


def _base(item: Base) -> Answer:
    if len(item.corners) < 4:
        raise UnexpectedResponse("base with four corners", f"base {item.color} {item.corners}")
    fields: dict[str, Any] = {"color": item.color}
    for n, (x, y) in enumerate(item.corners[:4], 1):
        fields[f"corner{n}_x"] = float(x)
        fields[f"corner{n}_y"] = float(y)
    return Answer(**fields)


class BZRC:
    """A connection to one team's BZRC port, used like the reference's ``BZRC``.

    ``BZRC(host, port)`` connects, reads the greeting and shakes hands.
    ``timeout`` bounds the connection, the greeting and every call's wait for
    its answer, in seconds (:data:`~gamecodec.bzrc.DEFAULT_TIMEOUT`; ``None``:
    no limit); the ``max_*`` caps are the decoder's. ``debug`` prints the
    lines received, split into words, as the reference does. One thread at a
    time.
    """

    def __init__(
        self,
        host: str,
        port: int,
        debug: bool = False,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_line: int = DEFAULT_MAX_LINE,
        max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
        max_response: int = DEFAULT_MAX_RESPONSE,
        max_items: int = DEFAULT_MAX_ITEMS,
    ) -> None:
        self.debug = debug
        self.timeout = timeout
        self.errors: list[Error] = []
        """Unsolicited ``error`` lines: the latest :data:`MAX_ERRORS`."""
        self.session = ClientSession(
            max_line=max_line,
            max_grid_cells=max_grid_cells,
            max_response=max_response,
            max_items=max_items,
        )
        self._broken: BaseException | None = None
        self._answers: dict[int, Response] = {}
        self._debug_lines = bytearray()
        self._sock = socket.create_connection((host, port), timeout)
        try:
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            deadline = None if timeout is None else time.monotonic() + timeout
            while self.session.greeting is None:
                if self._broken is not None:
                    raise self._broken.with_traceback(None)
                self._receive(deadline, "the greeting")
            self._flush()
        except BaseException:
            self._sock.close()
            raise

    # -- connection ------------------------------------------------------------

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()
        if self._broken is None:
            self._broken = ConnectionError("BZRC connection closed")

    def __enter__(self) -> BZRC:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fail(self, error: BaseException) -> BaseException:
        """Close the connection for good; later calls raise ``error`` again
        (a timeout: :class:`ConnectionError`)."""
        self._sock.close()
        if self._broken is None:
            self._broken = (
                ConnectionError(f"BZRC connection closed: {error}")
                if isinstance(error, TimeoutError)
                else error
            )
        return error

    def _flush(self) -> None:
        data = self.session.data_to_send()
        if data:
            try:
                self._sock.sendall(data)
            except OSError as exc:
                raise self._fail(_lost(exc)) from exc

    def _receive(self, deadline: float | None, waiting_for: str) -> None:
        """Read once from the socket and take what it delivered."""
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(
                    TimeoutError(f"no answer to {waiting_for} within {self.timeout} s")
                )
            self._sock.settimeout(left)
        else:
            self._sock.settimeout(None)
        try:
            data = self._sock.recv(_READ_SIZE)
        except TimeoutError:
            raise self._fail(
                TimeoutError(f"no answer to {waiting_for} within {self.timeout} s")
            ) from None
        except OSError as exc:
            raise self._fail(_lost(exc)) from exc
        if self.debug:
            self._debug_lines += data
            *lines, rest = self._debug_lines.split(b"\n")
            self._debug_lines = bytearray(rest)
            for line in lines:
                print(f"Received: {line.decode('latin-1').split()}")
        try:
            events = self.session.receive_data(data, time.monotonic())
        except RemoteProtocolError as exc:
            self._take(self.session.events())
            raise self._fail(UnexpectedResponse("a BZRC response", str(exc))) from exc
        self._take(events)

    def _take(self, events: Iterable[object]) -> None:
        for event in events:
            if isinstance(event, Answered):
                self._answers[event.request.id] = event.response
            elif isinstance(event, Unsolicited):
                if len(self.errors) >= MAX_ERRORS:
                    del self.errors[0]
                self.errors.append(event.response)
            elif isinstance(event, Closed):
                self._fail(ConnectionError("BZRC connection closed by the server"))
            elif not isinstance(event, Connected):  # pragma: no cover - no other events
                raise TypeError(f"unexpected event {event!r}")

    def _call(self, commands: Sequence[tuple[object, ...]]) -> list[Response]:
        """Send ``commands`` in one write and wait for all their answers."""
        if self._broken is not None:
            raise self._broken.with_traceback(None)
        requests = self.session.send_many(commands)
        self._flush()
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        names = " ".join(r.command for r in requests)
        while any(r.id not in self._answers for r in requests):
            if self._broken is not None:
                raise self._broken.with_traceback(None)
            self._receive(deadline, names)
        return [self._answers.pop(r.id) for r in requests]

    # -- commands ----------------------------------------------------------------

    def shoot(self, index: int) -> bool:
        """Fire tank ``index``'s gun: True (``ok``) or False (``fail``)."""
        return _bool(self._call([("shoot", index)])[0])

    def speed(self, index: int, value: float) -> bool:
        """Set tank ``index``'s speed, -1..1."""
        return _bool(self._call([("speed", index, value)])[0])

    def angvel(self, index: int, value: float) -> bool:
        """Set tank ``index``'s angular velocity, -1..1."""
        return _bool(self._call([("angvel", index, value)])[0])

    def do_commands(self, commands: Iterable[Command]) -> list[tuple[bool, bool, bool]]:
        """Speed, angvel (and shoot) for every tank in one write; one
        ``(speed, angvel, shoot)`` tuple of results per command (shoot is
        False when it was not asked for)."""
        orders = list(commands)
        plan: list[tuple[object, ...]] = []
        for cmd in orders:
            plan.append(("speed", cmd.index, cmd.speed))
            plan.append(("angvel", cmd.index, cmd.angvel))
            if cmd.shoot:
                plan.append(("shoot", cmd.index))
        answers = iter(self._call(plan))
        results = []
        for cmd in orders:
            speed = _bool(next(answers))
            angvel = _bool(next(answers))
            shoot = _bool(next(answers)) if cmd.shoot else False
            results.append((speed, angvel, shoot))
        return results

    # -- queries -------------------------------------------------------------------

    def get_teams(self) -> list[Answer]:
        """The teams: ``color``, ``count`` (float) and ``base`` (empty)."""
        return [_team(i) for i in _items(self._call([("teams",)])[0], Team)]

    def get_obstacles(self) -> list[list[tuple[float, float]]]:
        """Each obstacle as a list of (x, y) corners."""
        return [_xy(i.corners) for i in _items(self._call([("obstacles",)])[0], Obstacle)]

    def get_occgrid(self, tankid: int) -> tuple[tuple[int, int], list[list[int]]] | None:
        """``((x, y), grid)`` with ``grid[i][j]`` the cell at (x + i, y + j),
        or None when the server answers ``fail``."""
        response = self._call([("occgrid", tankid)])[0]
        if isinstance(response, Fail):
            return None
        if not isinstance(response, OccGrid):
            raise UnexpectedResponse("begin", _got(response))
        grid: list[list[int]] = response.grid.tolist()
        return (response.x, response.y), grid

    def get_flags(self) -> list[Answer]:
        """Each flag: ``color``, ``poss_color``, ``x``, ``y``."""
        return [_flag(i) for i in _items(self._call([("flags",)])[0], Flag)]

    def get_shots(self) -> list[Answer]:
        """Each shot in flight: ``x``, ``y``, ``vx``, ``vy``."""
        return [_shot(i) for i in _items(self._call([("shots",)])[0], Shot)]

    def get_mytanks(self) -> list[Answer]:
        """Our tanks: ``index``, ``callsign``, ``status``, ``shots_avail``,
        ``time_to_reload``, ``flag``, ``x``, ``y``, ``angle``, ``vx``, ``vy``,
        ``angvel``."""
        return [_mytank(i) for i in _items(self._call([("mytanks",)])[0], MyTank)]

    def get_othertanks(self) -> list[Answer]:
        """The other teams' tanks: ``callsign``, ``color``, ``status``,
        ``flag``, ``x``, ``y``, ``angle``."""
        return [_othertank(i) for i in _items(self._call([("othertanks",)])[0], OtherTank)]

    def get_bases(self) -> list[Answer]:
        """Each base: ``color`` and ``corner1_x`` .. ``corner4_y``."""
        return [_base(i) for i in _items(self._call([("bases",)])[0], Base)]

    def get_constants(self) -> dict[str, str]:
        """The game constants, name -> value as text."""
        items = _items(self._call([("constants",)])[0], Constant)
        return {i.name: i.value for i in items}

    def get_lots_o_stuff(
        self,
    ) -> tuple[list[Answer], list[Answer], list[Answer], list[Answer]]:
        """mytanks, othertanks, flags and shots, asked in one write."""
        mine, others, flags, shots = self._call(
            [("mytanks",), ("othertanks",), ("flags",), ("shots",)]
        )
        return (
            [_mytank(i) for i in _items(mine, MyTank)],
            [_othertank(i) for i in _items(others, OtherTank)],
            [_flag(i) for i in _items(flags, Flag)],
            [_shot(i) for i in _items(shots, Shot)],
        )


def _lost(exc: OSError) -> ConnectionError:
    if isinstance(exc, ConnectionError):
        return exc
    error = ConnectionError(f"BZRC connection lost: {exc}")
    error.__cause__ = exc
    return error


def _bool(response: Response) -> bool:
    if isinstance(response, Ok):
        return True
    if isinstance(response, Fail | Error):
        return False
    raise UnexpectedResponse("ok or fail", _got(response))


def _items(response: Response, kind: type[Any]) -> list[Any]:
    if not isinstance(response, Listing):
        raise UnexpectedResponse("begin", _got(response))
    items: list[Item] = response.items
    for item in items:
        if not isinstance(item, kind):
            raise UnexpectedResponse(f"{kind.__name__.lower()} or end", repr(item))
    return items
