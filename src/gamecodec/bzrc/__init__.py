"""BZRC: the bzrflag / BZFlag remote-control text protocol (``../shared/specs/bzrc.md``).

Client side: :func:`encode_command` and the streaming :class:`ResponseParser`
(bytes in any chunking -> typed responses). Server side:
:func:`encode_response` (bzrflag's exact bytes, or the C++ ``%f`` dialect).
Sessions: :class:`ClientSession`, :class:`ServerSession` (Sans-IO) and
:func:`gamecodec.bzrc.aio.connect`.

>>> from gamecodec import bzrc
>>> parser = bzrc.ResponseParser()
>>> parser.feed(b"ack 1.10923 timer\\ntimer 1.580439 300000\\n")
[Timer(ack=Ack(time=1.10923, command='timer', args=()), elapsed=1.580439, limit=300000)]
>>> bzrc.encode_command("speed", 0, 0.5)
b'speed 0 0.5\\n'
"""

from __future__ import annotations

from gamecodec import _accel
from gamecodec.bzrc._encode import (
    COMMANDS,
    MYTANK_GAP,
    encode_command,
    encode_commands,
    encode_item,
    encode_response,
)
from gamecodec.bzrc._format import Dialect, c_f, format_number, py2_str
from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_LINE,
    Ack,
    Base,
    CommandFailed,
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
from gamecodec.bzrc.session import ClientSession, Request, ServerSession

_codec = _accel.load("gamecodec.bzrc", "_codec", "bzrc")

ResponseParser = _codec.ResponseParser
parse_number = _codec.parse_number

__all__ = [
    "COMMANDS",
    "DEFAULT_MAX_GRID_CELLS",
    "DEFAULT_MAX_LINE",
    "MYTANK_GAP",
    "Ack",
    "Base",
    "ClientSession",
    "CommandFailed",
    "Constant",
    "Dialect",
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
    "ResponseParser",
    "Score",
    "ServerSession",
    "Shot",
    "Team",
    "Timer",
    "c_f",
    "encode_command",
    "encode_commands",
    "encode_item",
    "encode_response",
    "format_number",
    "parse_number",
    "py2_str",
]
