"""Types of the compiled Avara codec (``_codec_c.pyx``); the pure twin is ``_codec_py``."""

from collections.abc import Iterable

from gamecodec.avara._models import Batch, Command, Datagram, HolePunch, Layout
from gamecodec.errors import DecodeError

__all__ = [
    "canonical_flags",
    "crc16_kermit",
    "datagram_crc",
    "decode",
    "decode_array",
    "decode_many",
    "encode",
    "encode_into",
]

_Buffer = bytes | bytearray | memoryview

def crc16_kermit(data: _Buffer, crc: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` (reflected 0x1021, no final XOR), continuing from ``crc``."""

def datagram_crc(data: _Buffer, version: int = 18) -> int:
    """The checksum a datagram should carry in bytes 0-1."""

def decode(
    data: _Buffer,
    *,
    version: int | None = 18,
    layout: Layout | int = 1,
    strict: bool = False,
) -> Datagram | HolePunch:
    """Decode one UDP payload."""

def decode_many(
    datagrams: Iterable[_Buffer],
    *,
    version: int | None = 18,
    layout: Layout | int = 1,
    strict: bool = False,
) -> list[Datagram | HolePunch | DecodeError]:
    """Decode each datagram independently; a bad one gives its error in its place."""

def decode_array(
    datagrams: Iterable[_Buffer],
    *,
    version: int | None = 18,
    layout: Layout | int = 1,
) -> Batch:
    """Decode many datagrams into numpy structured arrays."""

def canonical_flags(command: Command) -> int:
    """The flag byte the game's writer computes for these values."""

def encode(
    datagram: Datagram | int,
    commands: Iterable[Command] = (),
    ack_bitmap: int | None = None,
    *,
    version: int = 18,
    layout: Layout | int = 1,
    keep_flags: bool = False,
) -> bytes:
    """Encode a :class:`Datagram` (or an ack, commands and bitmap) to bytes."""

def encode_into(
    datagram: Datagram | int,
    buf: bytearray,
    offset: int = 0,
    commands: Iterable[Command] = (),
    ack_bitmap: int | None = None,
    *,
    version: int = 18,
    layout: Layout | int = 1,
    keep_flags: bool = False,
) -> int:
    """Encode into ``buf`` at ``offset``; return the number of bytes written."""

def _uses_fast_tuples() -> bool: ...
