"""Helpers to build datagrams by hand, independent of the codec under test."""

from __future__ import annotations


def kermit(data: bytes) -> int:
    """Bitwise CRC-16/KERMIT: the reference the tables are checked against."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def sign(body: bytes, version: int = 18) -> bytes:
    """A datagram from everything after the CRC (ack block and commands)."""
    crc = kermit(version.to_bytes(2, "little") + body)
    return crc.to_bytes(2, "little") + body
