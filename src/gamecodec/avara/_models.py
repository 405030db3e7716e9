"""Avara result types, constants and enums (never compiled)."""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

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
    "Datagram",
    "Flag",
    "HolePunch",
    "Layout",
    "PunchCommand",
    "Status",
]

DEFAULT_VERSION = 18
"""``kAvaraNetVersion`` at avaraline/Avara aaa5e633 (spec §2.1)."""

MAX_DATA_LEN = 984
"""``PACKETDATABUFFERSIZE``: the largest dataLen the reader accepts (spec §3)."""

MAX_DATAGRAM = 16384
"""The game's receive buffer (spec §1); the encoder refuses anything larger."""

PUNCH_SIZE = 7
"""Every datagram of exactly this many bytes is a hole-punch packet (spec §6)."""

NO_ACK = 0xFFFE
"""The ack a peer sends before it has received anything (0 - 2, spec §4.2)."""

CRAM_PACK_SIZE = 64
"""The sender keeps appending commands while a datagram is shorter (spec §2.2)."""


class Layout(enum.IntEnum):
    """Command-packet layout: with the sendCount byte (net version >= 11) or without."""

    LEGACY = 0
    CURRENT = 1


class Flag(enum.IntFlag):
    """The bits of a command's flag byte (spec §3)."""

    P1 = 0x01
    P2 = 0x02
    P3_LONG = 0x04
    LEN_LONG = 0x08
    LEN_SHORT = 0x10
    P3_SHORT = 0x20
    DISTRIBUTION = 0x40
    SENDER = 0x80


class Status(enum.IntEnum):
    """Per-datagram outcome in :func:`decode_many` (mirrors the corpus' ``error``)."""

    OK = 0
    CRC_MISMATCH = 1
    SHORT_DATAGRAM = 2
    BAD_DATA_LEN = 3
    TRUNCATED = 4
    PUNCH = 5


class CommandId(enum.IntEnum):
    """Command identifiers (``src/net/CommDefs.h``, spec §5)."""

    kpPacketProtocolRefusal = -9
    kpPacketProtocolLogin = -8
    kpPacketProtocolLogout = -7
    kpPacketProtocolReject = -6
    kpPacketProtocolTOC = -5
    kpPacketProtocolControl = -4
    kpKillConnection = -3
    kpDisconnect = -2
    kpError = -1
    kpLogin = 0
    kpLoginAck = 1
    kpNameQuery = 2
    kpNameChange = 3
    kpColorChange = 4
    kpOrderChange = 5
    kpRosterMessage = 6
    kpPlayerStatusChange = 7
    kpLoadLevel = 8
    kpLevelLoaded = 9
    kpLevelLoadErr = 10
    kpStartLevel = 11
    kpResumeLevel = 12
    kpReadySynch = 13
    kpUnavailableSynch = 14
    kpZeroSynch = 15
    kpStartSynch = 16
    kpKeyAndMouse = 17
    kpKeyAndMouseRequest = 18
    kpAskLater = 19
    kpKillNet = 20
    kpFastTrack = 21
    kpRemoveMeFromGame = 22
    kpGetMugShot = 23
    kpMugShot = 24
    kpZapMugShot = 25
    kpServerOptions = 26
    kpNewArrival = 27
    kpKickClient = 28
    kpLatencyVote = 29
    kpResultsReport = 30
    kpPing = 31
    kpRealName = 32
    kpSendConfig = 33
    kpStartRequest = 34
    kpResumeRequest = 35
    kpJSON = 36


class PunchCommand(enum.IntEnum):
    """Hole-punch commands (``src/net/AvaraTCP.h``, spec §6)."""

    kPunchPing = 1
    kPunchRequest = 2
    kPunch = 3
    kHolePunch = 4


class Command(NamedTuple):
    """One command packet. ``distribution`` and ``sender`` are ``None`` when
    absent on the wire; ``flags`` is the flag byte as decoded (the encoder
    recomputes it unless told to keep it)."""

    serial: int
    send_count: int
    flags: int
    command: int
    distribution: int | None
    p3: int
    p2: int
    p1: int
    sender: int | None
    data: bytes

    @classmethod
    def make(
        cls,
        serial: int,
        command: int,
        *,
        p1: int = 0,
        p2: int = 0,
        p3: int = 0,
        data: bytes = b"",
        send_count: int = 0,
        distribution: int | None = None,
        sender: int | None = None,
    ) -> Command:
        """Build a command to encode; its flags are computed at encode time."""
        return cls(serial, send_count, 0, command, distribution, p3, p2, p1, sender, data)


class Datagram(NamedTuple):
    """A game datagram: checksum verdict, ack block and commands.

    ``crc_ok`` is ``None`` when decoded with ``version=None`` (not checked).
    When the checksum fails (or the datagram is shorter than 4 bytes), ``ack``
    is ``None`` and there are no commands: the game drops such datagrams.
    """

    crc_ok: bool | None
    ack: int | None
    ack_bitmap: int | None
    commands: tuple[Command, ...]

    @property
    def acked_serials(self) -> tuple[int, ...]:
        """Out-of-order serials the ack bitmap reports as received (spec §4.2)."""
        if self.ack is None or self.ack_bitmap is None:
            return ()
        base = self.ack - 1
        bits = self.ack_bitmap & 0xFFFFFFFF
        return tuple((base + 2 * (k + 1)) & 0xFFFF for k in range(32) if bits >> k & 1)


class HolePunch(NamedTuple):
    """A 7-byte hole-punch datagram (spec §6): no checksum, no commands."""

    command: int
    connection_id: int | None
    host: str | None
    port: int | None
    raw: bytes

    @property
    def handled(self) -> bool:
        """Whether the game acts on this punch (kPunch and kHolePunch only)."""
        return self.command in (3, 4)

    @property
    def crc_ok(self) -> bool:
        """Always ``False``: hole punches carry no checksum."""
        return False

    @property
    def commands(self) -> tuple[Command, ...]:
        """Always empty: hole punches carry no commands."""
        return ()


class Batch(NamedTuple):
    """Result of :func:`decode_many`: every command of every datagram in one
    structured array, plus one row of outcome per datagram."""

    commands: np.ndarray
    datagrams: np.ndarray


COMMAND_DTYPE = np.dtype(
    [
        ("datagram", "=u4"),
        ("serial", "=u2"),
        ("send_count", "u1"),
        ("flags", "u1"),
        ("command", "i1"),
        ("distribution", "=i2"),
        ("p1", "i1"),
        ("p2", "=i2"),
        ("p3", "=i4"),
        ("sender", "i1"),
        ("data_offset", "=u4"),
        ("data_length", "=u2"),
    ]
)
"""One row per command. ``distribution``/``sender`` are 0 when absent (test
``flags & 0x40`` / ``flags & 0x80``); ``data_offset`` is into the datagram."""

DATAGRAM_DTYPE = np.dtype(
    [
        ("status", "u1"),
        ("ack", "=u2"),
        ("ack_bitmap", "=i4"),
        ("first_command", "=u4"),
        ("command_count", "=u4"),
        ("error_offset", "=u4"),
    ]
)
"""One row per input datagram; ``status`` is a :class:`Status` (a checksum
failure is ``CRC_MISMATCH``); ``ack`` and ``ack_bitmap`` are 0 where absent;
``error_offset`` is the byte offset of a ``BAD_DATA_LEN``/``TRUNCATED`` error."""
