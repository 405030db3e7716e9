"""BZRC: the bzrflag / BZFlag remote-control text protocol (a line protocol over TCP).

Client side: :func:`encode` writes a command, the streaming :class:`Decoder`
turns the server's bytes (in any chunking) into typed responses, and
:func:`decode` / :func:`decode_many` decode complete input. Server side:
:func:`encode_response` writes bzrflag's exact bytes, or the BZFlag C++ ``%f``
dialect. Sessions: :class:`ClientSession`, :class:`ServerSession` (Sans-IO,
:class:`gamecodec.sessions.StreamSession`) and :mod:`gamecodec.bzrc.aio`.
numpy is imported only when an ``occgrid`` reply is decoded.

>>> from gamecodec import bzrc
>>> decoder = bzrc.Decoder()
>>> decoder.feed(b"ack 1.10923 timer\\ntimer 1.580439 300000\\n")
[Timer(ack=Ack(time=1.10923, command='timer', args=()), elapsed=1.580439, limit=300000)]
>>> bzrc.encode("speed", 0, 0.5)
b'speed 0 0.5\\n'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.bzrc._encode import (
    COMMANDS,
    MYTANK_GAP,
    encode,
    encode_commands,
    encode_item,
    encode_response,
)
from gamecodec.bzrc._format import Dialect, c_f, format_number, py2_str
from gamecodec.bzrc._impl import Decoder, decode, decode_many, parse_number
from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_PENDING,
    DEFAULT_MAX_RESPONSE,
    DEFAULT_TIMEOUT,
    Ack,
    Answer,
    Base,
    ClientEvent,
    Closed,
    CommandFailed,
    Connected,
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
    Request,
    Response,
    Score,
    Shot,
    Team,
    Timer,
    Unsolicited,
)
from gamecodec.bzrc.session import ClientSession, ServerSession

if TYPE_CHECKING:  # loaded on first use (asyncio): gamecodec.bzrc.aio.Bot is typed
    from gamecodec.bzrc import aio as aio

__getattr__ = deprecated_names(
    __name__,
    {
        "ResponseParser": ("Decoder", lambda: Decoder),
        "encode_command": ("encode", lambda: encode),
    },
    lazy={"aio": lambda: importlib.import_module("gamecodec.bzrc.aio")},
)

__all__ = [
    "COMMANDS",
    "DEFAULT_MAX_GRID_CELLS",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_LINE",
    "DEFAULT_MAX_PENDING",
    "DEFAULT_MAX_RESPONSE",
    "DEFAULT_TIMEOUT",
    "MYTANK_GAP",
    "Ack",
    "Answer",
    "Base",
    "ClientEvent",
    "ClientSession",
    "Closed",
    "CommandFailed",
    "Connected",
    "Constant",
    "Decoder",
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
    "Score",
    "ServerSession",
    "Shot",
    "Team",
    "Timer",
    "Unsolicited",
    "c_f",
    "decode",
    "decode_many",
    "encode",
    "encode_commands",
    "encode_item",
    "encode_response",
    "format_number",
    "parse_number",
    "py2_str",
]

__dir__ = public_dir(__name__)
