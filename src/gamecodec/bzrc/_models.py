"""BZRC result types, session events and constants (never compiled).

Every response the decoder emits is one of the NamedTuples in
:data:`Response`. Numbers keep the form they had on the wire: a token that is
written as an integer (``0``, ``-390``) decodes to ``int``, anything else
(``0.0``, ``-0.0``, ``1e+16``, ``nan``, ``inf``) to ``float``. Both compare
equal (``0 == 0.0``), and keeping the distinction lets the server-side
encoder reproduce bzrflag's bytes exactly (bzrflag writes a tank's ``reload``
and ``angvel`` as the int ``0`` until first set, then as floats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from gamecodec.errors import GameCodecError
from gamecodec.sessions import Event

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_MAX_GRID_CELLS",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_LINE",
    "DEFAULT_MAX_PENDING",
    "DEFAULT_MAX_RESPONSE",
    "DEFAULT_TIMEOUT",
    "DOUBLE_FAIL_COMMANDS",
    "Ack",
    "Answer",
    "Base",
    "ClientEvent",
    "Closed",
    "CommandFailed",
    "Connected",
    "Constant",
    "Error",
    "Fail",
    "Flag",
    "Greeting",
    "Help",
    "Item",
    "Listing",
    "MyTank",
    "Number",
    "Obstacle",
    "OccGrid",
    "Ok",
    "OtherTank",
    "Request",
    "Response",
    "Score",
    "Shot",
    "Team",
    "Timer",
    "Unsolicited",
]

DEFAULT_MAX_LINE = 100_000
"""The longest line (without its ``\\n``) the decoder accepts: the BZFlag C++
server's line buffer."""

DEFAULT_MAX_GRID_CELLS = 1 << 24
"""The largest ``W*H`` an ``occgrid`` ``size`` line may announce: the array is
allocated when the ``size`` line arrives, so this caps the allocation."""

DEFAULT_MAX_RESPONSE = 1 << 22
"""The most bytes a list (``begin`` to ``end``) or a help output may span:
their items are kept until the response ends, so this caps what a peer that
never ends one makes the decoder hold (4 MiB; a large map's ``obstacles``
is tens of KiB)."""

DEFAULT_MAX_ITEMS = 16_384
"""The most a list (``begin`` to ``end``) may hold: each item counts one, and
an obstacle's or base's corners one each more. A list's items are kept until
its ``end``, and a decoded item takes far more memory than its bytes (a
4 MiB list of ``shot`` lines is ~37 MB of tuples), so this caps what a server
that never ends a list makes the decoder hold. bzrflag's largest map
(``hexmaze``) gives ~1,600, the default game at most 800 shots."""

DEFAULT_MAX_PENDING = 1024
"""The most commands a server-side session holds without having sent their
answers: those the application has not answered yet, and the answers queued
behind them (answers leave in command order). Past it the client is
pipelining more than the server answers, and the session closes."""

DEFAULT_TIMEOUT = 120.0
"""The idle limit of an :mod:`~gamecodec.bzrc.aio` client unless told
otherwise: seconds without a byte from the server before a call gives up
(and, for :func:`~gamecodec.bzrc.aio.connect`, the limit on the connection and
the greeting). An idle limit, not a total, because a healthy bzrflag keeps
bytes coming for longer than any fixed total (five pipelined 800x800 grids
still arriving after 10 s), and twice the longest silence reported: its game
loop is single-threaded, and it sent nothing for 61 s while it generated
another team's occupancy grids. :class:`~gamecodec.bzrc.compat.BZRC` has no
timeout unless given one, as the reference client."""

DOUBLE_FAIL_COMMANDS = frozenset({"speed", "angvel", "accelx", "accely"})
"""Commands whose argument errors bzrflag answers with ack + ``fail Invalid
parameter(s)`` + a second bare ``fail``."""

Number: TypeAlias = "int | float"
"""A wire number: ``int`` when it was written as an integer, else ``float``."""


class CommandFailed(GameCodecError):
    """A command the server answered with ``fail`` (or an ``error`` line).

    Raised by the asyncio client's query methods; ``response`` is the
    :class:`Fail` or :class:`Error` that answered.
    """

    def __init__(self, command: str, response: Fail | Error) -> None:
        self.command = command
        self.response = response
        detail = response.comment if isinstance(response, Fail) else response.message
        super().__init__(f"{command}: {detail or 'fail'}", protocol="bzrc")


# -- list items ------------------------------------------------------------


class Team(NamedTuple):
    """``team <color> <ntanks>``."""

    color: str
    ntanks: int


class Obstacle(NamedTuple):
    """``obstacle x1 y1 x2 y2 ...``: the corners, as (x, y) pairs."""

    corners: tuple[tuple[Number, Number], ...]


class Base(NamedTuple):
    """``base <color> x1 y1 ...``: the team's base corners."""

    color: str
    corners: tuple[tuple[Number, Number], ...]


class Flag(NamedTuple):
    """``flag <color> <possessor> <x> <y>``; ``possessor`` is ``"none"`` or a colour."""

    color: str
    possessor: str
    x: Number
    y: Number


class Shot(NamedTuple):
    """``shot <x> <y> <vx> <vy>``."""

    x: Number
    y: Number
    vx: Number
    vy: Number


class MyTank(NamedTuple):
    """``mytank`` (13 fields on the wire). ``flag`` is ``"-"`` when carrying none."""

    idx: int
    callsign: str
    status: str
    shots_avail: int
    reload: Number
    flag: str
    x: Number
    y: Number
    angle: Number
    vx: Number
    vy: Number
    angvel: Number


class OtherTank(NamedTuple):
    """``othertank <callsign> <color> <status> <flag> <x> <y> <angle>``."""

    callsign: str
    color: str
    status: str
    flag: str
    x: Number
    y: Number
    angle: Number


class Constant(NamedTuple):
    """``constant <name> <value>``; the value is kept as text (``red``, ``0.5``)."""

    name: str
    value: str


class Score(NamedTuple):
    """``score <team> <other> <value>``: ``value`` is team's total minus other's."""

    team: str
    other: str
    value: Number


Item: TypeAlias = "Team | Obstacle | Base | Flag | Shot | MyTank | OtherTank | Constant | Score"
"""One line of a ``begin`` .. ``end`` list."""


# -- responses ---------------------------------------------------------------


class Ack(NamedTuple):
    """``ack <time> <echo...>``: seconds since the connection was accepted, and
    the echoed command (``command`` is ``""`` when nothing was echoed)."""

    time: Number
    command: str
    args: tuple[str, ...]


class Greeting(NamedTuple):
    """The server's first line, ``bzrobots 1``."""

    protocol: str
    version: int


class Ok(NamedTuple):
    """``ok`` (normally after an ack)."""

    ack: Ack | None


class Fail(NamedTuple):
    """``fail [comment]``. ``ack`` is None for the ack-less fails (unknown
    command, dead-tank or rotated-map occgrid); ``extra`` is True when the
    second bare ``fail`` of a speed/angvel argument error was folded in."""

    ack: Ack | None
    comment: str
    extra: bool


class Listing(NamedTuple):
    """``begin`` .. ``end``: the typed items, in wire order."""

    ack: Ack | None
    items: list[Item]


class Timer(NamedTuple):
    """The single-line ``timer <elapsed> <limit>`` reply."""

    ack: Ack | None
    elapsed: Number
    limit: Number


class OccGrid(NamedTuple):
    """``occgrid``: origin ``at x,y`` and a ``uint8`` array of shape (W, H).

    Row ``i`` is world x = ``x + i``, column ``j`` is world y = ``y + j``,
    exactly as on the wire. On the real server the cells of a
    window whose origin is negative start one unit lower than ``at`` says;
    the values here are decoded as sent.
    """

    ack: Ack | None
    x: int
    y: int
    grid: npt.NDArray[np.uint8]

    @property
    def width(self) -> int:
        """W, the number of rows (the x extent)."""
        return int(self.grid.shape[0])

    @property
    def height(self) -> int:
        """H, the number of cells per row (the y extent)."""
        return int(self.grid.shape[1])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OccGrid):
            return NotImplemented
        return (
            self.ack == other.ack
            and self.x == other.x
            and self.y == other.y
            and self.grid.shape == other.grid.shape
            and bool((self.grid == other.grid).all())
        )

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        raise TypeError("an OccGrid (it holds an array) is unhashable")


class Error(NamedTuple):
    """An ``error ...`` line (BZFlag C++ dialect; may arrive at any point)."""

    message: str


class Help(NamedTuple):
    """Ack-less ``help`` output: the raw lines (each normally starts with ``:``)."""

    lines: tuple[str, ...]


Response: TypeAlias = "Greeting | Ok | Fail | Listing | Timer | OccGrid | Error | Help"
"""Everything :meth:`Decoder.feed` can return."""


# -- sessions ------------------------------------------------------------------


class Request(NamedTuple):
    """One command: ``id`` counts from 0 per connection. On the server side
    ``args`` are the parsed values (ints, floats, words)."""

    id: int
    command: str
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Connected(Event):
    """The server's greeting arrived; ``agent 1`` has been queued."""

    greeting: Greeting


@dataclass(frozen=True, slots=True)
class Answer(Event):
    """The response to ``request``."""

    request: Request
    response: Response


@dataclass(frozen=True, slots=True)
class Unsolicited(Event):
    """An ``error`` line that answers no command (BZFlag C++ dialect)."""

    response: Error


@dataclass(frozen=True, slots=True)
class Closed(Event):
    """The server closed the stream; ``pending`` never got an answer."""

    pending: tuple[Request, ...]


ClientEvent: TypeAlias = "Connected | Answer | Unsolicited | Closed"
"""Every event a :class:`~gamecodec.bzrc.ClientSession` reports."""
