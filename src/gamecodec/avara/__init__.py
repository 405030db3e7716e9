"""Avara: UDP datagrams of command packets (``../shared/specs/avara.md``).

>>> from gamecodec import avara
>>> dg = avara.decode_datagram(bytes.fromhex("26081400"))
>>> dg.crc_ok, dg.ack, dg.commands
(True, 20, ())
"""

from __future__ import annotations

from gamecodec import _accel
from gamecodec.avara import payloads
from gamecodec.avara._models import (
    COMMAND_DTYPE,
    CRAM_PACK_SIZE,
    DATAGRAM_DTYPE,
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
    PunchCommand,
    Status,
)
from gamecodec.avara.punch import decode_punch, encode_punch
from gamecodec.avara.session import Connection, ConnectionEvent, PeerLost, SerialSkipped

_codec = _accel.load("gamecodec.avara", "_codec", "avara")

crc16_kermit = _codec.crc16_kermit
datagram_crc = _codec.datagram_crc
decode_datagram = _codec.decode_datagram
decode_many = _codec.decode_many
encode_datagram = _codec.encode_datagram
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
    "ConnectionEvent",
    "Datagram",
    "Flag",
    "HolePunch",
    "Layout",
    "PeerLost",
    "PunchCommand",
    "SerialSkipped",
    "Status",
    "canonical_flags",
    "crc16_kermit",
    "datagram_crc",
    "decode_datagram",
    "decode_many",
    "decode_punch",
    "encode_datagram",
    "encode_into",
    "encode_punch",
    "payloads",
]
