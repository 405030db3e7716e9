"""ywindow: a typed-word RPC over TCP, with a shared-secret handshake.

A message is a ``c`` (call), ``v`` (call without reply, or event) or ``r``
(reply) header and the words it announces: ``i`` (int32), ``k`` (keyword),
``s`` (string) or ``b`` (bytes). Replies carry no id: they answer calls in
order. :func:`encode` (and :func:`call`, :func:`notify`, :func:`reply`) write
messages; the streaming :class:`Decoder` reads them in any chunking, and
:func:`decode` / :func:`decode_many` read complete input. :class:`Peer` is
the Sans-IO session (:class:`gamecodec.sessions.StreamSession`);
:mod:`gamecodec.ywindow.aio` runs it on asyncio.

>>> from gamecodec import ywindow
>>> wire = ywindow.call("goto", 10, 10)
>>> wire.hex(" ")
'63 04 00 00 00 03 6b 04 67 6f 74 6f 69 04 00 00 00 0a 69 04 00 00 00 0a'
>>> ywindow.Decoder().feed(wire)
[Message(kind='c', words=(Keyword('goto'), 10, 10))]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.ywindow._encode import (
    call,
    encode,
    encode_into,
    encode_word,
    notify,
    reply,
)
from gamecodec.ywindow._errors import AuthenticationError
from gamecodec.ywindow._impl import Decoder, decode, decode_many
from gamecodec.ywindow._models import (
    AUTHORITY_SIZE,
    COOKIE_SIZE,
    DIGEST_SIZE,
    MAX_GREETING,
    MAX_MESSAGE,
    MAX_SOFTWARE,
    MAX_UNANSWERED,
    VERSION,
    Authenticated,
    AuthenticationFailed,
    Call,
    CallHandle,
    ConnectionClosed,
    Encodable,
    Greeting,
    Keyword,
    Message,
    Notification,
    PeerEvent,
    Reply,
    Role,
    State,
    Value,
)
from gamecodec.ywindow.authority import (
    default_path,
    digest,
    load_authority,
    new_authority,
    save_authority,
)
from gamecodec.ywindow.greeting import encode_greeting, parse_greeting
from gamecodec.ywindow.session import Peer

if TYPE_CHECKING:  # loaded on first use (asyncio): gamecodec.ywindow.aio.Client is typed
    from gamecodec.ywindow import aio as aio

__getattr__ = deprecated_names(
    __name__,
    {
        "encode_message": ("encode", lambda: encode),
        "Event": ("PeerEvent", lambda: PeerEvent),
    },
    lazy={"aio": lambda: importlib.import_module("gamecodec.ywindow.aio")},
)

__all__ = [
    "AUTHORITY_SIZE",
    "COOKIE_SIZE",
    "DIGEST_SIZE",
    "MAX_GREETING",
    "MAX_MESSAGE",
    "MAX_SOFTWARE",
    "MAX_UNANSWERED",
    "VERSION",
    "Authenticated",
    "AuthenticationError",
    "AuthenticationFailed",
    "Call",
    "CallHandle",
    "ConnectionClosed",
    "Decoder",
    "Encodable",
    "Greeting",
    "Keyword",
    "Message",
    "Notification",
    "Peer",
    "PeerEvent",
    "Reply",
    "Role",
    "State",
    "Value",
    "call",
    "decode",
    "decode_many",
    "default_path",
    "digest",
    "encode",
    "encode_greeting",
    "encode_into",
    "encode_word",
    "load_authority",
    "new_authority",
    "notify",
    "parse_greeting",
    "reply",
    "save_authority",
]

__dir__ = public_dir(__name__)
