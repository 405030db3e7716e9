"""Types of the compiled LLUDP codec (``_codec_c.pyx``): the pure twin's signatures."""

from collections.abc import Iterable

from gamecodec.errors import DecodeError
from gamecodec.lludp._models import Header, Message
from gamecodec.lludp.template import Template

__all__ = [
    "decode",
    "decode_many",
    "encode",
    "encode_into",
    "encode_packet",
    "forward",
    "peek",
    "zero_decode",
    "zero_encode",
]

def zero_decode(data: bytes, max_size: int = 8192) -> bytes: ...
def zero_encode(data: bytes) -> bytes: ...
def peek(data: bytes, template: Template) -> Header: ...
def decode(
    data: bytes, template: Template, strict: bool = False, max_size: int = 8192
) -> Message: ...
def decode_many(
    datagrams: Iterable[bytes], template: Template, strict: bool = False, max_size: int = 8192
) -> list[Message | DecodeError]: ...
def encode(message: Message, template: Template, zero_coding: str = "flag") -> bytes: ...
def encode_packet(
    message: Message,
    template: Template,
    zero_coding: str,
    flags: int,
    sequence: int,
    acks: list[int] | tuple[int, ...],
    count: int,
    limit: int,
) -> bytes: ...
def encode_into(
    message: Message, buf: bytearray, offset: int, template: Template, zero_coding: str = "flag"
) -> int: ...
def forward(
    data: bytes,
    flags: int | None = None,
    sequence: int | None = None,
    acks: tuple[int, ...] | list[int] | None = None,
) -> bytes: ...
