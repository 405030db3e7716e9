"""LLUDP: the Second Life / OpenSimulator message-template UDP codec.

>>> from gamecodec import lludp
>>> msg = lludp.build("StartPingCheck", PingID={"PingID": 7, "OldestUnacked": 0})
>>> lludp.decode(lludp.encode(msg)).PingID[0].PingID
7

``decode`` materialises every field; ``peek`` reads only the header, acks
and message name; ``forward`` rewrites header and acks around an untouched
body. Semantics follow the LL viewer (``specs/lludp.md``, section 9).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gamecodec import _accel
from gamecodec.errors import DecodeError
from gamecodec.lludp._models import (
    ACK,
    MAX_ACKS,
    MTU,
    RELIABLE,
    RESENT,
    ZEROCODED,
    Block,
    BlockKind,
    BlockSpec,
    Deprecation,
    FieldSpec,
    FieldType,
    Flag,
    Frequency,
    Header,
    Message,
    MessageSpec,
    blocks_from_mapping,
    message_code,
    split_code,
)
from gamecodec.lludp.circuit import (
    ACK_COLLECT_TIME,
    CIRCUIT_TIMEOUT,
    MAX_RESENDS,
    PING_INTERVAL,
    BadDatagram,
    Circuit,
    CircuitEvent,
    MessageDropped,
    PeerLost,
)
from gamecodec.lludp.template import (
    Template,
    TemplateError,
    default_template,
    load_template,
    parse_template,
)

_codec = _accel.load("gamecodec.lludp", "_codec", "lludp")

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
    "Template",
    "TemplateError",
    "build",
    "decode",
    "decode_many",
    "default_template",
    "encode",
    "encode_into",
    "forward",
    "load_template",
    "message_code",
    "parse_template",
    "peek",
    "split_code",
    "text",
    "zero_decode",
    "zero_encode",
]


def _template(template: Template | None) -> Template:
    return default_template() if template is None else template


def decode(
    data: bytes, *, template: Template | None = None, strict: bool = False, max_size: int = 8192
) -> Message:
    """Decode a whole packet, every field materialised.

    Tolerant like the LL viewer unless ``strict``: excess bytes are kept in
    ``Message.excess``, a missing Variable count gives 0 blocks (listed in
    ``absent``), a field cut short is zero-filled (``truncated=True``).
    ``max_size`` caps the zero-decoded body. Bad input raises
    :class:`~gamecodec.DecodeError` with the byte offset.
    """
    return _codec.decode(data, _template(template), strict, max_size)  # type: ignore[no-any-return]


def encode(
    message: Message, *, template: Template | None = None, zero_coding: str = "flag"
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
    return _codec.encode(message, _template(template), zero_coding)  # type: ignore[no-any-return]


def encode_into(
    message: Message,
    buf: bytearray,
    offset: int = 0,
    *,
    template: Template | None = None,
    zero_coding: str = "flag",
) -> int:
    """Write ``message`` into ``buf`` at ``offset`` (growing it if needed); returns the size."""
    return _codec.encode_into(  # type: ignore[no-any-return]
        message, buf, offset, _template(template), zero_coding
    )


def peek(data: bytes, *, template: Template | None = None) -> Header:
    """Flags, sequence, acks and message name and number, without decoding the body."""
    return _codec.peek(data, _template(template))  # type: ignore[no-any-return]


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
    return _codec.forward(  # type: ignore[no-any-return]
        data, flags, sequence, None if acks is None else tuple(acks)
    )


def zero_decode(data: bytes, *, max_size: int = 8192) -> bytes:
    """Expand LL zero-coding (``00 n`` = n zeros, ``00 00`` adds 256, trailing ``00`` = one)."""
    return _codec.zero_decode(data, max_size)  # type: ignore[no-any-return]


def zero_encode(data: bytes) -> bytes:
    """LL zero-coding: each run of zeros as ``00 n``, runs cut at 255."""
    return _codec.zero_encode(data)  # type: ignore[no-any-return]


def decode_many(
    datagrams: Iterable[bytes],
    *,
    template: Template | None = None,
    strict: bool = False,
    max_size: int = 8192,
) -> list[Message | DecodeError]:
    """Decode a batch in one call; a bad packet gives its DecodeError in its place."""
    return _codec.decode_many(  # type: ignore[no-any-return]
        datagrams, _template(template), strict, max_size
    )


def build(
    name: str,
    *,
    template: Template | None = None,
    flags: int = 0,
    sequence: int = 0,
    acks: Iterable[int] = (),
    extra: bytes = b"",
    **blocks: Any,
) -> Message:
    """A message from plain values: ``build("ChatFromViewer", AgentData={...}, ChatData={...})``.

    A Single block takes a dict, Multiple and Variable blocks a list of dicts;
    Variable blocks may be left out (no instances). ``flags`` defaults to 0
    plus ZEROCODED when the template marks the message Zerocoded. The message
    holds each block's instances as a tuple, as a decoded one does.
    """
    tpl = _template(template)
    try:
        spec = tpl[name]
    except KeyError:
        raise KeyError(f"no message {name!r} in {tpl!r}") from None
    if spec.zerocoded:
        flags |= ZEROCODED
    made = blocks_from_mapping(spec, tpl.block_classes(name), blocks)
    return Message(
        name, made, flags, sequence, tuple(acks), bytes(extra), spec.frequency, spec.number
    )


def text(value: bytes) -> str:
    """A NUL-terminated text field as ``str`` (UTF-8, undecodable bytes replaced)."""
    end = value.find(b"\x00")
    return (value if end < 0 else value[:end]).decode("utf-8", errors="replace")
