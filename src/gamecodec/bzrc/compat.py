"""A synchronous drop-in for the reference client ``bzrc.py`` (BYU CS 470).

Agents written against the reference client's ``BZRC`` class run unchanged
once their import reads ``from gamecodec.bzrc.compat import BZRC, Command``:
the same methods (``get_mytanks()``, ``get_lots_o_stuff()``,
``do_commands(...)`` ...) return the same shapes, objects with the reference's
attribute names (``tank.index``, ``tank.time_to_reload``, ``flag.poss_color``
...) and its types (positions and counts as ``float``, ``constants`` as a
dict of strings). The reference's low-level methods are there too, over the
same connection (``sendline``, ``read_arr``, ``expect``, ``expect_multi``,
``read_ack``, ``read_bool``, ``read_teams`` .. ``read_constants``,
``read_occgrid``, ``die_confused``, ``handshake`` and ``conn``), so
``sendline('mytanks'); read_ack(); read_mytanks()`` works between high-level
calls. Underneath is gamecodec's decoder and client session on a plain
blocking socket: no asyncio, no threads.

Where it differs from the reference (Python 3, and robust where the
reference exits or desynchronises): a connection lost at any point raises
:class:`ConnectionError` (the reference calls ``sys.exit``); there is no
timeout unless one is given, as in the reference: ``timeout`` is an idle
limit (no byte from the server for that many seconds), ``total_timeout`` a
limit on each call's whole wait, and either raises :class:`TimeoutError` and
closes the connection; a confusing reply raises :class:`UnexpectedResponse`,
also a reply without the ``ack`` every method reads first (the dead-tank
``occgrid`` ``fail``); a value the server cannot parse (a bool, a str where
a number goes, a float tank id) raises :class:`~gamecodec.EncodeError`
before anything is sent; the extra ``fail`` bzrflag sends after a bad
speed/angvel argument no longer shifts later answers; ``error`` lines (BZFlag
C++ dialect) that answer nothing are kept in :attr:`BZRC.errors`.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NoReturn, TypeVar

from gamecodec._public import public_dir
from gamecodec.bzrc._compat_answers import (
    Answer,
    BaseAnswer,
    FlagAnswer,
    MyTankAnswer,
    OtherTankAnswer,
    ShotAnswer,
    TeamAnswer,
)
from gamecodec.bzrc._compat_lines import Line, response_lines
from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_RESPONSE,
    Base,
    Closed,
    Connected,
    Constant,
    Error,
    Fail,
    Flag,
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

__all__ = [
    "BZRC",
    "HELP_QUIET",
    "MAX_ERRORS",
    "Answer",
    "BaseAnswer",
    "Command",
    "FlagAnswer",
    "MyTankAnswer",
    "OtherTankAnswer",
    "ShotAnswer",
    "TeamAnswer",
    "UnexpectedResponse",
]

_READ_SIZE = 1 << 16

_I = TypeVar("_I")  # a decoded list item (bzrc.MyTank ...)
_R = TypeVar("_R")  # what the reference makes of it (MyTankAnswer ...)

HELP_QUIET = 0.2
"""Seconds without a byte after which ``help`` output read with
:meth:`BZRC.read_arr` is taken as complete (it has no terminator)."""

MAX_ERRORS = 100
"""How many unsolicited ``error`` lines :attr:`BZRC.errors` keeps (the latest)."""


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


def _team(item: Team) -> TeamAnswer:
    # the reference also reads base corners from the team line; bzrflag sends none
    return TeamAnswer(color=item.color, count=float(item.ntanks), base=[])


def _flag(item: Flag) -> FlagAnswer:
    return FlagAnswer(color=item.color, poss_color=item.possessor, x=float(item.x), y=float(item.y))


def _shot(item: Shot) -> ShotAnswer:
    return ShotAnswer(x=float(item.x), y=float(item.y), vx=float(item.vx), vy=float(item.vy))


def _mytank(item: MyTank) -> MyTankAnswer:
    return MyTankAnswer(
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


def _othertank(item: OtherTank) -> OtherTankAnswer:
    return OtherTankAnswer(
        callsign=item.callsign,
        color=item.color,
        status=item.status,
        flag=item.flag,
        x=float(item.x),
        y=float(item.y),
        angle=float(item.angle),
    )


def _base(item: Base) -> BaseAnswer:
    if len(item.corners) < 4:
        raise UnexpectedResponse("base with four corners", f"base {item.color} {item.corners}")
    (x1, y1), (x2, y2), (x3, y3), (x4, y4) = item.corners[:4]
    return BaseAnswer(
        color=item.color,
        corner1_x=float(x1),
        corner1_y=float(y1),
        corner2_x=float(x2),
        corner2_y=float(y2),
        corner3_x=float(x3),
        corner3_y=float(y3),
        corner4_x=float(x4),
        corner4_y=float(y4),
    )


class _Conn:
    """:attr:`BZRC.conn`: the connection as the reference's line-buffered
    ``sock.makefile()``, for agents that write or read it directly
    (``print(line, file=bzrc.conn)``, ``bzrc.conn.readline()``). A written
    line is sent as :meth:`BZRC.sendline` sends it (a partial line is held
    until its newline); :meth:`readline` is one :meth:`BZRC.read_arr` line,
    its words joined by single spaces."""

    def __init__(self, bzrc: BZRC) -> None:
        self._bzrc = bzrc
        self._partial = ""

    def write(self, text: str) -> int:
        """Send every line ``text`` completes; returns ``len(text)``."""
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self._bzrc.sendline(line)
        return len(text)

    def flush(self) -> None:
        """Nothing to do: whole lines are sent as they are written."""

    def readline(self) -> str:
        """The next line of the answers to lines sent, with its ``\\n``."""
        return " ".join(self._bzrc.read_arr()) + "\n"

    def fileno(self) -> int:
        """The socket's file descriptor."""
        return self._bzrc._sock.fileno()

    @property
    def closed(self) -> bool:
        """True once the connection is closed."""
        return self._bzrc._broken is not None

    def close(self) -> None:
        """Close the connection (:meth:`BZRC.close`)."""
        self._bzrc.close()


class BZRC:
    """A connection to one team's BZRC port, used like the reference's ``BZRC``.

    ``BZRC(host, port)`` connects, reads the greeting and shakes hands
    (:meth:`handshake`). As in the reference, nothing times out unless asked:
    ``timeout`` (seconds, settable) is an idle limit on the connection, the
    greeting and every call: it fires only when no byte has come from the
    server for that long, so a long answer still arriving (five 800x800
    grids) or a server busy for a minute with another team's grids
    (bzrflag's loop is single-threaded) is waited for as long as bytes keep
    coming; ``total_timeout`` limits each call's whole wait. Either raises
    :class:`TimeoutError` and closes the connection (a late answer would
    land on the next command). The ``max_*`` caps are the decoder's.
    ``debug`` prints the lines received, split into words, as the reference
    does. One thread at a time.
    """

    def __init__(
        self,
        host: str,
        port: int,
        debug: bool = False,
        *,
        timeout: float | None = None,
        total_timeout: float | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
        max_response: int = DEFAULT_MAX_RESPONSE,
        max_items: int = DEFAULT_MAX_ITEMS,
    ) -> None:
        self.debug = debug
        self.timeout = timeout
        """Idle limit in seconds: no byte from the server for that long (None: none)."""
        self.total_timeout = total_timeout
        """Limit in seconds on each call's whole wait (None: none)."""
        self.errors: list[Error] = []
        """Unsolicited ``error`` lines: the latest :data:`MAX_ERRORS`."""
        self.session = ClientSession(
            max_line=max_line,
            max_grid_cells=max_grid_cells,
            max_response=max_response,
            max_items=max_items,
        )
        self.conn = _Conn(self)
        """The connection as a file, as the reference's ``conn`` (see :class:`_Conn`)."""
        self._broken: BaseException | None = None
        self._answers: dict[int, Response] = {}
        self._raw: set[int] = set()  # ids of lines sent with sendline, not yet answered
        self._lines: deque[Line] = deque()  # their answers' lines, not yet read
        self._debug_lines = bytearray()
        self._silent_since = time.monotonic()
        limits = [t for t in (timeout, total_timeout) if t is not None]
        self._sock = socket.create_connection((host, port), min(limits, default=None))
        try:
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.handshake()
        except BaseException:
            self._sock.close()
            raise

    # -- connection ------------------------------------------------------------

    def handshake(self) -> None:
        """Wait for the greeting ``bzrobots 1`` (``agent 1`` is answered by
        the session); called by the constructor, at once done after it."""
        deadline = self._start_wait()
        while self.session.greeting is None:
            if self._broken is not None:
                raise self._broken.with_traceback(None)
            self._receive(deadline, "the greeting")
        self._flush()

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

    def _start_wait(self) -> float | None:
        """Start a wait: the idle clock starts now; returns its total deadline."""
        self._silent_since = time.monotonic()
        return None if self.total_timeout is None else self._silent_since + self.total_timeout

    def _receive(
        self, deadline: float | None, waiting_for: str, quiet: float | None = None
    ) -> bool:
        """Read once from the socket and take what it delivered. False when
        ``quiet`` seconds passed without a byte (only then)."""
        now = time.monotonic()
        limits: list[tuple[float, Literal["idle", "total", "quiet"]]] = []
        if self.timeout is not None:
            limits.append((self._silent_since + self.timeout - now, "idle"))
        if deadline is not None:
            limits.append((deadline - now, "total"))
        if quiet is not None:
            limits.append((quiet, "quiet"))
        wait, kind = min(limits, default=(None, "quiet"))
        if wait is not None and wait <= 0:
            raise self._fail(self._timeout(kind, waiting_for))
        self._sock.settimeout(wait)
        try:
            data = self._sock.recv(_READ_SIZE)
        except TimeoutError:
            if kind == "quiet":
                return False
            raise self._fail(self._timeout(kind, waiting_for)) from None
        except OSError as exc:
            raise self._fail(_lost(exc)) from exc
        self._silent_since = time.monotonic()
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
        return True

    def _timeout(self, kind: str, waiting_for: str) -> TimeoutError:
        if kind == "total":
            return TimeoutError(f"no answer to {waiting_for} within {self.total_timeout} s")
        return TimeoutError(
            f"no byte from the server for {self.timeout} s while waiting for {waiting_for}"
        )

    def _take(self, events: Iterable[object]) -> None:
        for event in events:
            if isinstance(event, Answered):
                if event.request.id in self._raw:
                    self._raw.discard(event.request.id)
                    self._lines.extend(response_lines(event.response))
                else:
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
        deadline = self._start_wait()
        names = " ".join(r.command for r in requests)
        while any(r.id not in self._answers for r in requests):
            if self._broken is not None:
                raise self._broken.with_traceback(None)
            self._receive(deadline, names)
        return [self._answers.pop(r.id) for r in requests]

    # -- the reference's low-level methods -----------------------------------------

    def sendline(self, line: str) -> None:
        """Send ``line`` as typed (several if it holds line breaks); read its
        answer with :meth:`read_arr` and the readers built on it. A character
        latin-1 cannot write raises :class:`~gamecodec.EncodeError`."""
        if self._broken is not None:
            raise self._broken.with_traceback(None)
        for part in str(line).split("\n"):
            request = self.session.send_line(part)
            if request is not None:
                self._raw.add(request.id)
        self._flush()

    def read_arr(self) -> list[str]:
        """The next line of the answers to lines sent with :meth:`sendline`,
        split into words. With none of them still to come, raises
        :class:`UnexpectedResponse` at once (the reference would wait forever)."""
        return list(self._next_line().words)

    def _next_line(self) -> Line:
        deadline = self._start_wait()
        while not self._lines:
            if self._broken is not None:
                raise self._broken.with_traceback(None)
            if not self._raw:
                raise UnexpectedResponse(
                    "a line", "nothing: no line sent with sendline is waiting for its answer"
                )
            pending = self.session.pending
            if pending and pending[0].command == "help" and pending[0].id in self._raw:
                # help output has no terminator: it is complete once the server is quiet
                if not self._receive(deadline, "help", quiet=HELP_QUIET):
                    self._take(self.session.end_help())
            else:
                self._receive(deadline, "a line")
        return self._lines.popleft()

    def die_confused(self, expected: str, got_arr: Sequence[str]) -> NoReturn:
        """Raise :class:`UnexpectedResponse`: ``expected`` says what should
        have come, ``got_arr`` holds the words that came."""
        raise UnexpectedResponse(expected, " ".join(got_arr))

    def _expect_line(self, expected: Sequence[str], full: bool) -> Line:
        line = self._next_line()
        words = line.words
        good = words[: len(expected)] == list(expected) and (
            not full or len(words) == len(expected)
        )
        if not good:
            self.die_confused(" ".join(expected), words)
        return line

    def expect(self, expected: str | Sequence[str], full: bool = False) -> list[str] | bool:
        """Read a line that starts with the words ``expected`` (exactly those
        when ``full``); return the words after them (True when ``full``), or
        raise :class:`UnexpectedResponse`. A line shorter than ``expected``
        does not match (the reference's ``zip`` took an empty line for any)."""
        wanted = (expected,) if isinstance(expected, str) else tuple(expected)
        words = self._expect_line(wanted, full).words
        return True if full else words[len(wanted) :]

    def expect_multi(self, *expecteds: Sequence[str], full: bool = False) -> tuple[int, list[str]]:
        """Read a line that starts with one of ``expecteds`` (each a sequence
        of words; exactly those when ``full``); return the index of the first
        that matches and the words after it, or raise :class:`UnexpectedResponse`."""
        words = self._next_line().words
        for i, expected in enumerate(expecteds):
            n = len(expected)
            if words[:n] == list(expected) and (not full or len(words) == n):
                return i, words[n:]
        self.die_confused(" or ".join(" ".join(one) for one in expecteds), words)

    def read_ack(self) -> None:
        """Read the ``ack`` line, or raise :class:`UnexpectedResponse`."""
        self.expect("ack")

    def read_bool(self) -> bool:
        """Read ``ok`` (True) or ``fail`` (False), or raise :class:`UnexpectedResponse`."""
        i, _ = self.expect_multi(("ok",), ("fail",))
        return i == 0

    def _read_items(self, word: str, kind: type[_I], convert: Callable[[_I], _R]) -> list[_R]:
        line = self._next_line()
        if line.words[:1] != ["begin"]:
            self.die_confused("begin", line.words)
        items: list[_R] = []
        while True:
            line = self._next_line()
            head = line.words[:1]
            if head == ["end"]:
                return items
            if head == [word] and isinstance(line.value, kind):
                items.append(convert(line.value))
            else:
                self.die_confused(f"{word} or end", line.words)

    def read_teams(self) -> list[TeamAnswer]:
        """Read a ``teams`` list (as :meth:`get_teams` returns it)."""
        return self._read_items("team", Team, _team)

    def read_obstacles(self) -> list[list[tuple[float, float]]]:
        """Read an ``obstacles`` list (as :meth:`get_obstacles` returns it)."""
        return self._read_items("obstacle", Obstacle, lambda item: _xy(item.corners))

    def read_occgrid(self) -> tuple[tuple[int, int], list[list[int]]] | None:
        """Read an occupancy grid (as :meth:`get_occgrid` returns it); None
        when its first line holds ``fail``."""
        first = self._next_line()
        if "fail" in first.words:
            return None
        at = self._expect_line(("at",), False)
        grid = at.value
        if not isinstance(grid, OccGrid):
            self.die_confused("at", at.words)
        self.expect("size")
        rows, columns = grid.grid.shape
        for _ in range(rows if columns else 0):
            self._next_line()
        self.expect("end", True)
        cells: list[list[int]] = grid.grid.tolist()
        return (grid.x, grid.y), cells

    def read_flags(self) -> list[FlagAnswer]:
        """Read a ``flags`` list (as :meth:`get_flags` returns it)."""
        return self._read_items("flag", Flag, _flag)

    def read_shots(self) -> list[ShotAnswer]:
        """Read a ``shots`` list (as :meth:`get_shots` returns it)."""
        return self._read_items("shot", Shot, _shot)

    def read_mytanks(self) -> list[MyTankAnswer]:
        """Read a ``mytanks`` list (as :meth:`get_mytanks` returns it)."""
        return self._read_items("mytank", MyTank, _mytank)

    def read_othertanks(self) -> list[OtherTankAnswer]:
        """Read an ``othertanks`` list (as :meth:`get_othertanks` returns it)."""
        return self._read_items("othertank", OtherTank, _othertank)

    def read_bases(self) -> list[BaseAnswer]:
        """Read a ``bases`` list (as :meth:`get_bases` returns it)."""
        return self._read_items("base", Base, _base)

    def read_constants(self) -> dict[str, str]:
        """Read a ``constants`` list (as :meth:`get_constants` returns it)."""
        return dict(self._read_items("constant", Constant, lambda item: (item.name, item.value)))

    # -- commands ----------------------------------------------------------------
    # A value the server cannot parse (a bool, a str where a number goes, a
    # float tank id ...) raises EncodeError before anything is sent.

    def shoot(self, index: int) -> bool:
        """Fire tank ``index``'s gun: True (``ok``) or False (``fail``). A tank
        id that is not an int (a bool included) raises :class:`~gamecodec.EncodeError`."""
        return _bool(self._call([("shoot", index)])[0])

    def speed(self, index: int, value: float) -> bool:
        """Set tank ``index``'s speed, -1..1. A value that is not a number
        (a bool or a str included) raises :class:`~gamecodec.EncodeError`."""
        return _bool(self._call([("speed", index, value)])[0])

    def angvel(self, index: int, value: float) -> bool:
        """Set tank ``index``'s angular velocity, -1..1 (values as :meth:`speed`)."""
        return _bool(self._call([("angvel", index, value)])[0])

    def do_commands(self, commands: Iterable[Command]) -> list[tuple[bool, bool, bool]]:
        """Speed, angvel (and shoot) for every tank in one write; one
        ``(speed, angvel, shoot)`` tuple of results per command (shoot is
        False when it was not asked for). All or none: a value the server
        cannot parse (as :meth:`speed`) raises :class:`~gamecodec.EncodeError`
        with nothing sent."""
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

    def get_teams(self) -> list[TeamAnswer]:
        """The teams: ``color``, ``count`` (float) and ``base`` (empty)."""
        return [_team(i) for i in _items(self._call([("teams",)])[0], Team)]

    def get_obstacles(self) -> list[list[tuple[float, float]]]:
        """Each obstacle as a list of (x, y) corners."""
        return [_xy(i.corners) for i in _items(self._call([("obstacles",)])[0], Obstacle)]

    def get_occgrid(self, tankid: int) -> tuple[tuple[int, int], list[list[int]]] | None:
        """``((x, y), grid)`` with ``grid[i][j]`` the cell at (x + i, y + j),
        or None when the server acks and answers ``fail`` (a bad tank id).
        The ack-less ``fail`` bzrflag answers for a dead tank (or a map of
        rotated obstacles) raises :class:`UnexpectedResponse`, as the
        reference's ``read_ack`` does. A tank id that is not an int raises
        :class:`~gamecodec.EncodeError`."""
        response = _acked(self._call([("occgrid", tankid)])[0])
        if isinstance(response, Fail):
            return None
        if not isinstance(response, OccGrid):
            raise UnexpectedResponse("begin", _got(response))
        grid: list[list[int]] = response.grid.tolist()
        return (response.x, response.y), grid

    def get_flags(self) -> list[FlagAnswer]:
        """Each flag: ``color``, ``poss_color``, ``x``, ``y``."""
        return [_flag(i) for i in _items(self._call([("flags",)])[0], Flag)]

    def get_shots(self) -> list[ShotAnswer]:
        """Each shot in flight: ``x``, ``y``, ``vx``, ``vy``."""
        return [_shot(i) for i in _items(self._call([("shots",)])[0], Shot)]

    def get_mytanks(self) -> list[MyTankAnswer]:
        """Our tanks: ``index``, ``callsign``, ``status``, ``shots_avail``,
        ``time_to_reload``, ``flag``, ``x``, ``y``, ``angle``, ``vx``, ``vy``,
        ``angvel``."""
        return [_mytank(i) for i in _items(self._call([("mytanks",)])[0], MyTank)]

    def get_othertanks(self) -> list[OtherTankAnswer]:
        """The other teams' tanks: ``callsign``, ``color``, ``status``,
        ``flag``, ``x``, ``y``, ``angle``."""
        return [_othertank(i) for i in _items(self._call([("othertanks",)])[0], OtherTank)]

    def get_bases(self) -> list[BaseAnswer]:
        """Each base: ``color`` and ``corner1_x`` .. ``corner4_y``."""
        return [_base(i) for i in _items(self._call([("bases",)])[0], Base)]

    def get_constants(self) -> dict[str, str]:
        """The game constants, name -> value as text."""
        items = _items(self._call([("constants",)])[0], Constant)
        return {i.name: i.value for i in items}

    def get_lots_o_stuff(
        self,
    ) -> tuple[list[MyTankAnswer], list[OtherTankAnswer], list[FlagAnswer], list[ShotAnswer]]:
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


def _acked(response: Response) -> Response:
    """``response``, if it has the ``ack`` the reference's ``read_ack``
    reads before every answer; else raise as ``read_ack`` does."""
    if isinstance(response, Fail | Error) and getattr(response, "ack", None) is None:
        raise UnexpectedResponse("ack", _got(response))
    return response


def _bool(response: Response) -> bool:
    response = _acked(response)
    if isinstance(response, Ok):
        return True
    if isinstance(response, Fail):
        return False
    raise UnexpectedResponse("ok or fail", _got(response))


def _items(response: Response, kind: type[_I]) -> list[_I]:
    response = _acked(response)
    if not isinstance(response, Listing):
        raise UnexpectedResponse("begin", _got(response))
    items: list[_I] = []
    for item in response.items:
        if not isinstance(item, kind):
            raise UnexpectedResponse(f"{kind.__name__.lower()} or end", repr(item))
        items.append(item)
    return items


__dir__ = public_dir(__name__)
