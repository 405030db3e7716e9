"""BZRC encoders: commands (client side) and responses (server side).

``encode_response`` reproduces bzrflag's bytes (floats as Python 2's
``str(float)``, with bzrflag's 28-space ``mytank`` gap as an option) or the
BZFlag C++ dialect (floats as C's ``%f``). Numbers that decoded as ``int`` are
written as ``%d``; floats in the dialect's float format.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final

from gamecodec.bzrc._errors import encode_error
from gamecodec.bzrc._format import Dialect, as_number, c_f, py2_str
from gamecodec.bzrc._models import (
    Ack,
    Base,
    Constant,
    Error,
    Fail,
    Flag,
    Greeting,
    Help,
    Item,
    Listing,
    MyTank,
    Number,
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

__all__ = [
    "COMMANDS",
    "MYTANK_GAP",
    "encode",
    "encode_commands",
    "encode_item",
    "encode_response",
]

MYTANK_GAP: Final = " " * 28
"""What bzrflag puts between a mytank's flag and its x."""

COMMANDS: Final[dict[str, tuple[str, ...]]] = {
    "agent": ("int",),
    "shoot": ("int",),
    "speed": ("int", "float"),
    "angvel": ("int", "float"),
    "accelx": ("int", "float"),
    "accely": ("int", "float"),
    "occgrid": ("int",),
    "teams": (),
    "obstacles": (),
    "bases": (),
    "flags": (),
    "shots": (),
    "mytanks": (),
    "othertanks": (),
    "constants": (),
    "scores": (),
    "timer": (),
    "quit": (),
    "endgame": (),
    "taunt": ("words",),
    "help": ("word?",),
}
"""Every command bzrflag and the BZFlag C++ server know, and its argument
kinds: ``int``, ``float``, ``words`` (any number) or ``word?`` (at most one)."""


def _word(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise encode_error(f"{what} must be a str, not {type(value).__name__}")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise encode_error(f"{what} {value!r} is not latin-1") from None
    return value


def _token(value: object, what: str) -> str:
    text = _word(value, what)
    raw = text.encode("latin-1")
    if not raw or raw.split() != [raw]:  # ASCII whitespace, as the wire splits
        raise encode_error(f"{what} {text!r} must be one non-empty token without whitespace")
    return text


def _int_arg(value: object, what: str) -> str:
    number = as_number(value)
    if not isinstance(number, int):
        raise encode_error(f"{what} must be an int, not {type(value).__name__}")
    return str(number)


def _float_arg(value: object, what: str) -> str:
    number = as_number(value)
    if number is None:
        raise encode_error(f"{what} must be a number, not {type(value).__name__}")
    return repr(number) if isinstance(number, float) else str(number)


def encode(command: str, *args: object) -> bytes:
    """One command line: ``encode("speed", 0, 0.5) == b"speed 0 0.5\\n"``.

    ``taunt`` takes any number of words (or one string of words), ``help``
    an optional command name. Floats are written with ``repr`` (shortest
    round trip), which the server's ``float()`` reads back exactly. numpy
    scalars are numbers like any other (``np.int64`` tank ids, ``np.float32``
    speeds); bools are refused. A bad command or argument raises
    :class:`~gamecodec.EncodeError`.
    """
    kinds = COMMANDS.get(command)
    if kinds is None:
        raise encode_error(f"unknown BZRC command {command!r}")
    parts = [command]
    if kinds == ("words",):
        for arg in args:
            text = _word(arg, "taunt text")
            if "\n" in text or "\r" in text:
                raise encode_error("taunt text must not contain line breaks")
            parts.extend(t.decode("latin-1") for t in text.encode("latin-1").split())
    elif kinds == ("word?",):
        if len(args) > 1:
            raise encode_error("help takes at most one command name")
        parts.extend(_token(arg, "help topic") for arg in args)
    else:
        if len(args) != len(kinds):
            raise encode_error(f"{command} takes {len(kinds)} argument(s), got {len(args)}")
        for kind, arg in zip(kinds, args, strict=True):
            parts.append(_int_arg(arg, command) if kind == "int" else _float_arg(arg, command))
    return (" ".join(parts) + "\n").encode("latin-1")


def encode_commands(commands: Iterable[tuple[Any, ...]]) -> bytes:
    """Several commands in one write (pipelining): ``[("speed", 0, 1.0), ...]``."""
    return b"".join(encode(*command) for command in commands)


# -- server side ---------------------------------------------------------------


def _f(value: Number, dialect: Dialect) -> str:
    """A float field: ints stay ``%d`` in bzrflag (``str()``), all ``%f`` in C++."""
    number = as_number(value)
    if number is None:
        raise encode_error(f"not a number: {value!r}")
    if dialect == "cpp":
        return c_f(float(number))
    return str(number) if isinstance(number, int) else py2_str(number)


def _d(value: Number) -> str:
    """An int field (``%d``); integral floats are accepted."""
    number = as_number(value)
    if number is None:
        raise encode_error(f"not an integer: {value!r}")
    if isinstance(number, float):
        if not number.is_integer():
            raise encode_error(f"not an integer: {value!r}")
        return str(int(number))
    return str(number)


def _pos(value: Number, dialect: Dialect) -> str:
    """mytank x/y: bzrflag writes ``int(x)`` (truncated), C++ ``%f``."""
    if dialect == "cpp":
        return _f(value, dialect)
    number = as_number(value)
    if isinstance(number, float) and math.isfinite(number):
        return str(math.trunc(number))
    return _d(value)


def _s(value: object) -> str:
    return _token(value, "text field")


def _points(corners: tuple[tuple[Number, Number], ...], dialect: Dialect) -> str:
    return " ".join(_f(v, dialect) for pair in corners for v in pair)


def encode_item(item: Item, *, dialect: Dialect = "bzrflag", mytank_gap: bool = True) -> str:
    """One list line, without its ``\\n``."""
    if isinstance(item, MyTank):
        gap = MYTANK_GAP if mytank_gap and dialect == "bzrflag" else " "
        return (
            f"mytank {_d(item.idx)} {_s(item.callsign)} {_s(item.status)} "
            f"{_d(item.shots_avail)} {_f(item.reload, dialect)} {_s(item.flag)}{gap}"
            f"{_pos(item.x, dialect)} {_pos(item.y, dialect)} {_f(item.angle, dialect)} "
            f"{_f(item.vx, dialect)} {_f(item.vy, dialect)} {_f(item.angvel, dialect)}"
        )
    if isinstance(item, OtherTank):
        return (
            f"othertank {_s(item.callsign)} {_s(item.color)} {_s(item.status)} {_s(item.flag)} "
            f"{_f(item.x, dialect)} {_f(item.y, dialect)} {_f(item.angle, dialect)}"
        )
    if isinstance(item, Shot):
        return "shot " + " ".join(_f(v, dialect) for v in item)
    if isinstance(item, Flag):
        return (
            f"flag {_s(item.color)} {_s(item.possessor)} "
            f"{_f(item.x, dialect)} {_f(item.y, dialect)}"
        )
    if isinstance(item, Team):
        return f"team {_s(item.color)} {_d(item.ntanks)}"
    if isinstance(item, Obstacle):
        if not item.corners:
            raise encode_error("an obstacle needs corners")
        return "obstacle " + _points(item.corners, dialect)
    if isinstance(item, Base):
        if not item.corners:
            raise encode_error("a base needs corners")
        return f"base {_s(item.color)} " + _points(item.corners, dialect)
    if isinstance(item, Constant):
        return f"constant {_s(item.name)} {_s(item.value)}"
    if isinstance(item, Score):
        return f"score {_s(item.team)} {_s(item.other)} {_f(item.value, dialect)}"
    raise encode_error(f"not a BZRC list item: {item!r}")


def _ack(ack: Ack | None, dialect: Dialect) -> str:
    if ack is None:
        return ""
    echo = [_s(ack.command)] if ack.command else []
    echo.extend(_s(arg) for arg in ack.args)
    if not ack.command and ack.args:
        raise encode_error("an ack with arguments needs a command")
    return " ".join(["ack", _f(ack.time, dialect), *echo]) + "\n"


def _line_text(text: str, what: str) -> str:
    _word(text, what)
    if "\n" in text:
        raise encode_error(f"{what} must not contain a newline")
    return text


def _grid_rows(grid: Any) -> bytes:
    import numpy as np

    arr = np.asarray(grid)
    if arr.ndim != 2:
        raise encode_error("an occgrid must be a 2-D array")
    if arr.size and not bool(((arr == 0) | (arr == 1)).all()):
        raise encode_error("occgrid cells must be 0 or 1")
    w, h = arr.shape
    if h == 0:
        return b""
    out = np.empty((w, h + 1), dtype=np.uint8)
    out[:, :h] = arr
    out[:, :h] += 48
    out[:, h] = 10
    return out.tobytes()


def encode_response(
    response: Response, *, dialect: Dialect = "bzrflag", mytank_gap: bool = True
) -> bytes:
    """A response as the server writes it.

    ``dialect="bzrflag"`` gives the Python server's bytes; ``"cpp"`` the
    BZFlag C++ ``%f`` format. ``mytank_gap`` keeps bzrflag's 28 spaces.
    """
    if dialect not in ("bzrflag", "cpp"):
        raise encode_error(f"unknown dialect {dialect!r}")
    if isinstance(response, Greeting):
        return f"{_s(response.protocol)} {_d(response.version)}\n".encode("latin-1")
    if isinstance(response, Error):
        return f"error {_line_text(response.message, 'error message')}\n".encode("latin-1")
    if isinstance(response, Help):
        return "".join(_line_text(line, "help line") + "\n" for line in response.lines).encode(
            "latin-1"
        )
    if not isinstance(response, Ok | Fail | Timer | Listing | OccGrid):
        raise encode_error(f"not a BZRC response: {response!r}")
    if response.ack is None and isinstance(response, Timer | Listing | OccGrid):
        # the reader only takes these after their ack line
        raise encode_error(f"a {type(response).__name__} reply needs its ack")
    head = _ack(response.ack, dialect)
    if isinstance(response, Ok):
        text = head + "ok\n"
    elif isinstance(response, Fail):
        comment = _line_text(response.comment, "fail comment").strip()
        text = head + ("fail " + comment if comment else "fail") + "\n"
        if response.extra:
            text += "fail\n"
    elif isinstance(response, Timer):
        text = f"{head}timer {_f(response.elapsed, dialect)} {_f(response.limit, dialect)}\n"
    elif isinstance(response, Listing):
        lines = "".join(
            encode_item(item, dialect=dialect, mytank_gap=mytank_gap) + "\n"
            for item in response.items
        )
        text = head + "begin\n" + lines + "end\n"
    else:
        import numpy as np

        w, h = np.shape(response.grid) if np.ndim(response.grid) == 2 else (0, -1)
        if h < 0:
            raise encode_error("an occgrid must be a 2-D array")
        header = f"{head}begin\nat {_d(response.x)},{_d(response.y)}\nsize {w}x{h}\n"
        return header.encode("latin-1") + _grid_rows(response.grid) + b"end\n"
    return text.encode("latin-1")
