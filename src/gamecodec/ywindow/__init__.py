"""ywindow typed-word RPC (``../shared/specs/ywindow.md``).

>>> from gamecodec import ywindow
>>> wire = ywindow.call("goto", 10, 10)
>>> wire.hex(" ")
'63 04 00 00 00 03 6b 04 67 6f 74 6f 69 04 00 00 00 0a 69 04 00 00 00 0a'
>>> ywindow.Decoder().feed(wire)
[Message(kind='c', words=(Keyword('goto'), 10, 10))]
"""

from __future__ import annotations

from gamecodec.ywindow._encode import (
    call,
    encode_into,
    encode_message,
    encode_word,
    notify,
    reply,
)
from gamecodec.ywindow._impl import Decoder, decode
from gamecodec.ywindow._models import (
    AUTHORITY_SIZE,
    COOKIE_SIZE,
    DIGEST_SIZE,
    MAX_GREETING,
    MAX_MESSAGE,
    MAX_SOFTWARE,
    VERSION,
    Authenticated,
    AuthenticationFailed,
    Call,
    CallHandle,
    ConnectionClosed,
    Encodable,
    Event,
    Greeting,
    Keyword,
    Message,
    Notification,
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

__all__ = [
    "AUTHORITY_SIZE",
    "COOKIE_SIZE",
    "DIGEST_SIZE",
    "MAX_GREETING",
    "MAX_MESSAGE",
    "MAX_SOFTWARE",
    "VERSION",
    "Authenticated",
    "AuthenticationFailed",
    "Call",
    "CallHandle",
    "ConnectionClosed",
    "Decoder",
    "Encodable",
    "Event",
    "Greeting",
    "Keyword",
    "Message",
    "Notification",
    "Peer",
    "Reply",
    "Role",
    "State",
    "Value",
    "call",
    "decode",
    "default_path",
    "digest",
    "encode_greeting",
    "encode_into",
    "encode_message",
    "encode_word",
    "load_authority",
    "new_authority",
    "notify",
    "parse_greeting",
    "reply",
    "save_authority",
]
