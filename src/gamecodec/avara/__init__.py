"""Avara: the game's UDP datagrams of command packets, and its reliable connection.

Every datagram starts with a CRC-16/KERMIT checksum (seeded with the network
version), then an ack block and a run of command packets; exactly 7 bytes is
a hole-punch packet instead.

>>> from gamecodec import avara
>>> dg = avara.decode(bytes.fromhex("26081400"))
>>> dg.crc_ok, dg.ack, dg.commands
(True, 20, ())
>>> avara.encode(dg) == bytes.fromhex("26081400")
True

:func:`decode_array` gives numpy structured arrays (numpy is imported only
then, and when ``COMMAND_DTYPE`` or ``DATAGRAM_DTYPE`` is first read).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gamecodec import _accel
from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.avara import payloads
from gamecodec.avara._errors import CrcMismatchError, OversizeDatagramError, ShortDatagramError
from gamecodec.avara._models import (
    CRAM_PACK_SIZE,
    DEFAULT_VERSION,
    MAX_DATA_LEN,
    MAX_DATAGRAM,
    NO_ACK,
    PUNCH_SIZE,
    Batch,
    Command,
    CommandId,
    Datagram,
    Flag,
    HolePunch,
    Layout,
    PeerLost,
    PunchCommand,
    SerialSkipped,
    Status,
)
from gamecodec.avara.punch import decode_punch, encode_punch

if TYPE_CHECKING:
    from gamecodec.avara import _codec_py as _codec
    from gamecodec.avara import aio as aio
    from gamecodec.avara._arrays import COMMAND_DTYPE, DATAGRAM_DTYPE
    from gamecodec.avara.session import Connection
else:
    _codec = _accel.load("gamecodec.avara", "_codec", "avara")

crc16_kermit = _codec.crc16_kermit
datagram_crc = _codec.datagram_crc
decode = _codec.decode
decode_many = _codec.decode_many
decode_array = _codec.decode_array
encode = _codec.encode
encode_into = _codec.encode_into
canonical_flags = _codec.canonical_flags

__all__ = [
    "COMMAND_DTYPE",
    "CRAM_PACK_SIZE",
    "DATAGRAM_DTYPE",
    "DEFAULT_VERSION",
    "MAX_DATAGRAM",
    "MAX_DATA_LEN",
    "NO_ACK",
    "PUNCH_SIZE",
    "Batch",
    "Command",
    "CommandId",
    "Connection",
    "CrcMismatchError",
    "Datagram",
    "Flag",
    "HolePunch",
    "Layout",
    "OversizeDatagramError",
    "PeerLost",
    "PunchCommand",
    "SerialSkipped",
    "ShortDatagramError",
    "Status",
    "canonical_flags",
    "crc16_kermit",
    "datagram_crc",
    "decode",
    "decode_array",
    "decode_many",
    "decode_punch",
    "encode",
    "encode_into",
    "encode_punch",
    "payloads",
]


def _connection_event() -> Any:
    return SerialSkipped | PeerLost


def _connection() -> Any:
    from gamecodec.avara.session import Connection  # the session loads on first use

    return Connection


def _dtype(name: str) -> Any:
    from gamecodec.avara import _arrays  # numpy loads here, on first use

    return getattr(_arrays, name)


__getattr__ = deprecated_names(
    __name__,
    {
        "decode_datagram": ("decode", lambda: decode),
        "encode_datagram": ("encode", lambda: encode),
        "ConnectionEvent": ("SerialSkipped | PeerLost", _connection_event),
    },
    lazy={
        "Connection": _connection,
        "aio": lambda: importlib.import_module("gamecodec.avara.aio"),
        "COMMAND_DTYPE": lambda: _dtype("COMMAND_DTYPE"),
        "DATAGRAM_DTYPE": lambda: _dtype("DATAGRAM_DTYPE"),
    },
)

__dir__ = public_dir(__name__)
