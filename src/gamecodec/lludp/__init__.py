"""LLUDP: the Second Life / OpenSimulator message-template UDP codec.

>>> from gamecodec import lludp
>>> msg = lludp.build("StartPingCheck", PingID={"PingID": 7, "OldestUnacked": 0})
>>> lludp.decode(lludp.encode(msg)).PingID[0].PingID
7

``decode`` materialises every field; ``peek`` reads only the header, acks
and message name; ``forward`` rewrites header and acks around an untouched
body. Decoding is as tolerant as the LL viewer's reader unless
``strict=True``: bytes after the last block are kept in ``Message.excess``, a
missing Variable block count reads as 0 blocks (listed in ``Message.absent``),
a fixed-size field cut short reads as zeros (``Message.truncated``), and a
BOOL byte other than 0/1 reads as ``True`` (kept in ``Message.bool_bytes``);
a message that is not truncated re-encodes to the bytes it came from.
``template="opensim"`` selects the built-in OpenSimulator variant of the
schema. :class:`Circuit` (Sans-IO) keeps the LL viewer's sequence numbers,
acks, resends and pings for one peer, and :mod:`gamecodec.lludp.aio` runs one
over UDP.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gamecodec._public import public_dir
from gamecodec.errors import DecodeError
from gamecodec.lludp._errors import build_error
from gamecodec.lludp._impl import codec as _codec
from gamecodec.lludp._models import (
    ACK,
    ACK_COLLECT_TIME,
    CIRCUIT_TIMEOUT,
    MAX_ACKS,
    MAX_RESENDS,
    MTU,
    PING_INTERVAL,
    RELIABLE,
    RESENT,
    ZEROCODED,
    BadDatagram,
    Block,
    BlockKind,
    BlockSpec,
    CircuitEvent,
    Deprecation,
    FieldSpec,
    FieldType,
    Flag,
    Frequency,
    Header,
    Message,
    MessageDropped,
    MessageSpec,
    PeerLost,
    StrictDecodeFailed,
    blocks_from_mapping,
    message_code,
    split_code,
)
from gamecodec.lludp.template import (
    Template,
    TemplateError,
    builtin_template,
    default_template,
    load_template,
    opensim_template,
    parse_template,
    resolve_template,
)

__all__ = [
    "ACK",
    "ACK_COLLECT_TIME",
    "CIRCUIT_TIMEOUT",
    "MAX_ACKS",
    "MAX_RESENDS",
    "MTU",
    "PING_INTERVAL",
    "RELIABLE",
    "RESENT",
    "ZEROCODED",
    "BadDatagram",
    "Block",
    "BlockKind",
    "BlockSpec",
    "Circuit",
    "CircuitEvent",
    "DecodeError",
    "Deprecation",
    "FieldSpec",
    "FieldType",
    "Flag",
    "Frequency",
    "Header",
    "Message",
    "MessageDropped",
    "MessageSpec",
    "PeerLost",
    "StrictDecodeFailed",
    "Template",
    "TemplateError",
    "build",
    "builtin_template",
    "decode",
    "decode_many",
    "default_template",
    "encode",
    "encode_into",
    "forward",
    "load_template",
    "message_code",
    "opensim_template",
    "parse_template",
    "peek",
    "split_code",
    "text",
    "zero_decode",
    "zero_encode",
]


_template = resolve_template


def decode(
    data: bytes,
    *,
    template: Template | str | None = None,
    strict: bool = False,
    max_size: int = 8192,
) -> Message:
    """Decode a whole packet, every field materialised.

    Tolerant like the LL viewer unless ``strict``: excess bytes are kept in
    ``Message.excess``, a missing Variable count gives 0 blocks (listed in
    ``absent``), a field cut short is zero-filled (``truncated=True``).
    ``max_size`` caps a zero-coded packet as the LL viewer's buffer holds it
    (its 6 header bytes and the expanded message; a zero run must end a byte
    before the cap, as the viewer checks it). ``template`` is a
    :class:`Template` or a built-in one's name (``"secondlife"``, the
    default, or ``"opensim"``), here and in every function of this module.
    Bad input raises :class:`~gamecodec.DecodeError` with the byte offset.
    """
    return _codec.decode(data, _template(template), strict, max_size)


def encode(
    message: Message, *, template: Template | str | None = None, zero_coding: str = "flag"
) -> bytes:
    """The packet bytes of ``message``.

    ``zero_coding="flag"`` zero-codes exactly when ``flags`` has ZEROCODED
    (Hippolyzer, LibreMetaverse); ``"smaller"`` is LL's rule: only when that
    makes the packet strictly smaller, else it goes plain with the flag clear.
    The message's acks are appended as they are (``acks[0]`` nearest the count
    byte), up to 255, so a decoded packet re-encodes exactly even when its
    sender broke LL's sending rule (at most 250, never on PacketAck), which
    LL's reader tolerates. :class:`Circuit` and :func:`forward`, which add
    acks, keep that rule.
    """
    return _codec.encode(message, _template(template), zero_coding)


def encode_into(
    message: Message,
    buf: bytearray,
    offset: int = 0,
    *,
    template: Template | str | None = None,
    zero_coding: str = "flag",
) -> int:
    """Write ``message`` into ``buf`` at ``offset`` (growing it if needed); returns the size."""
    return _codec.encode_into(message, buf, offset, _template(template), zero_coding)


def peek(data: bytes, *, template: Template | str | None = None) -> Header:
    """Flags, sequence, acks and message name and number, without decoding the body."""
    return _codec.peek(data, _template(template))


def forward(
    data: bytes,
    *,
    flags: int | None = None,
    sequence: int | None = None,
    acks: Iterable[int] | None = None,
) -> bytes:
    """``data`` with a new header and/or appended acks, its body copied as it is.

    Giving ``acks`` replaces the appended acks (and sets or clears the ACK flag).
    """
    return _codec.forward(data, flags, sequence, None if acks is None else tuple(acks))


def zero_decode(data: bytes, *, max_size: int = 8192) -> bytes:
    """Expand LL zero-coding (``00 n`` = n zeros, ``00 00`` adds 256, trailing ``00`` = one).

    At most ``max_size`` bytes, a zero run ending at least one byte before it
    (the LL viewer's check; a lone trailing ``00`` counts as a literal byte).
    """
    return _codec.zero_decode(data, max_size)


def zero_encode(data: bytes) -> bytes:
    """LL zero-coding: each run of zeros as ``00 n``, runs cut at 255."""
    return _codec.zero_encode(data)


def decode_many(
    datagrams: Iterable[bytes],
    *,
    template: Template | str | None = None,
    strict: bool = False,
    max_size: int = 8192,
) -> list[Message | DecodeError]:
    """Decode a batch in one call; a bad packet gives its DecodeError in its place."""
    return _codec.decode_many(datagrams, _template(template), strict, max_size)


def build(
    name: str,
    *,
    template: Template | str | None = None,
    flags: int = 0,
    sequence: int = 0,
    acks: Iterable[int] = (),
    extra: bytes = b"",
    **blocks: Any,
) -> Message:
    """A message from plain values: ``build("ChatFromViewer", AgentData={...}, ChatData={...})``.

    A Single block takes a dict, Multiple and Variable blocks a list of dicts
    (or :class:`Block` instances); Variable blocks may be left out (no
    instances). ``flags`` defaults to 0 plus ZEROCODED when the template marks
    the message Zerocoded. The message holds each block's instances as a
    tuple, as a decoded one does. A ``str`` in a Fixed or Variable field is
    text and goes out as LL writes text: UTF-8 and a NUL, none for ``""``
    (in a Fixed field, padded with NULs); ``bytes`` go out as given.

    The message is checked as :func:`encode` would check it: an unknown
    message name, an unknown or missing block or field, a wrong number of
    blocks, a value of the wrong type or out of its field's range raise
    :class:`~gamecodec.EncodeError`.
    """
    tpl = _template(template)
    spec = tpl.by_name.get(name) if isinstance(name, str) else None
    if spec is None:
        raise build_error(f"no message {name!r} in {tpl!r}")
    made = blocks_from_mapping(spec, tpl.block_classes(name), blocks)
    try:
        if spec.zerocoded:
            flags |= ZEROCODED
        message = Message(
            name, made, flags, sequence, tuple(acks), bytes(extra), spec.frequency, spec.number
        )
    except (TypeError, ValueError) as exc:  # flags, acks or extra of the wrong type
        raise build_error(f"{name}: {exc}") from None
    _codec.encode(message, tpl, "flag")  # the values' checks: EncodeError
    return message


def text(value: bytes) -> str:
    """A NUL-terminated text field as ``str`` (UTF-8, undecodable bytes replaced)."""
    end = value.find(b"\x00")
    return (value if end < 0 else value[:end]).decode("utf-8", errors="replace")


if TYPE_CHECKING:  # loaded on first use: a codec user never loads the session
    from gamecodec.lludp import aio as aio
    from gamecodec.lludp.circuit import Circuit


def __getattr__(name: str) -> Any:
    """The circuit and the asyncio adapter, imported on first use."""
    if name == "Circuit":
        from gamecodec.lludp.circuit import Circuit

        return Circuit
    if name == "aio":
        return importlib.import_module("gamecodec.lludp.aio")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__dir__ = public_dir(__name__)
