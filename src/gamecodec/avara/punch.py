"""Hole-punch datagrams: exactly 7 bytes, no checksum.

Shared by both implementations: punches are rare and never on a hot path.
"""

from __future__ import annotations

import ipaddress

from gamecodec._public import public_dir
from gamecodec.avara._models import PUNCH_SIZE, HolePunch, PunchCommand
from gamecodec.errors import EncodeError

__all__ = ["decode_punch", "encode_punch"]


def decode_punch(data: bytes) -> HolePunch:
    """Decode a 7-byte hole-punch datagram.

    ``connection_id`` (byte 1 as int8) is given for kHolePunch only; ``host``
    and ``port`` (bytes 1-4 as a dotted quad, 5-6 big-endian) for commands 1-3.
    """
    raw = bytes(data)
    if len(raw) != PUNCH_SIZE:
        raise ValueError(f"a hole punch is {PUNCH_SIZE} bytes, not {len(raw)}")
    command = raw[0]
    if command == PunchCommand.kHolePunch:
        cid = raw[1] - 256 if raw[1] > 127 else raw[1]
        return HolePunch(command, cid, None, None, raw)
    if command in (1, 2, 3):
        host = ".".join(str(b) for b in raw[1:5])
        return HolePunch(command, None, host, int.from_bytes(raw[5:7], "big"), raw)
    return HolePunch(command, None, None, None, raw)


def encode_punch(
    command: int,
    *,
    connection_id: int = 0,
    host: str = "0.0.0.0",
    port: int = 0,
) -> bytes:
    """Encode a hole punch: kHolePunch carries ``connection_id``, the others an
    IPv4 ``host`` and ``port``."""
    if not 0 <= command <= 255:
        raise EncodeError(f"punch command {command} outside 0..255", protocol="avara")
    if command == PunchCommand.kHolePunch:
        if not -128 <= connection_id <= 127:
            raise EncodeError(f"connection_id {connection_id} outside -128..127", protocol="avara")
        return bytes((command, connection_id & 0xFF, 0, 0, 0, 0, 0))
    try:
        addr = ipaddress.IPv4Address(host).packed
    except ValueError as exc:
        raise EncodeError(f"host {host!r} is not an IPv4 address", protocol="avara") from exc
    if not 0 <= port <= 0xFFFF:
        raise EncodeError(f"port {port} outside 0..65535", protocol="avara")
    return bytes((command,)) + addr + port.to_bytes(2, "big")


__dir__ = public_dir(__name__)
