"""Avara result types, events, constants and enums (never compiled).

Both codec twins and both session twins import their models from here, so
they return instances of the same classes. numpy is not imported here: the
structured-array dtypes (``COMMAND_DTYPE``, ``DATAGRAM_DTYPE``) are built by
``gamecodec.avara._arrays`` the first time they are asked for.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from gamecodec.sessions import Event, PeerLost

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ACK_DELAY",
    "CRAM_PACK_SIZE",
    "CRAM_TIME",
    "DEFAULT_VERSION",
    "INITIAL_RETRANSMIT_TIME",
    "INITIAL_ROUND_TRIP_TIME",
    "INITIAL_ROUND_TRIP_VAR",
    "MAX_DATAGRAM",
    "MAX_DATA_LEN",
    "MAX_RESENDS_WITHOUT_RECEIVE",
    "MAX_RETRANSMIT_TIME",
    "MAX_SKIP_EVENTS",
    "MAX_TRANSMIT_QUEUE",
    "NO_ACK",
    "PUNCH_SIZE",
    "SEND_WINDOW",
    "SERIAL_STEP",
    "SETTLE",
    "ULP_TIMEOUT",
    "Batch",
    "Command",
    "CommandId",
    "Datagram",
    "Flag",
    "HolePunch",
    "Layout",
    "PeerLost",
    "PunchCommand",
    "SerialSkipped",
    "Status",
]

DEFAULT_VERSION = 18
"""``kAvaraNetVersion`` at avaraline/Avara aaa5e633."""

MAX_DATA_LEN = 984
"""``PACKETDATABUFFERSIZE``: the largest dataLen the reader accepts."""

MAX_DATAGRAM = 16384
"""The game's receive buffer (``UDPSTREAMBUFFERSIZE``): the encoder refuses
anything larger, the decoders refuse a longer input at this offset."""

PUNCH_SIZE = 7
"""Every datagram of exactly this many bytes is a hole-punch packet."""

NO_ACK = 0xFFFE
"""The ack a peer sends before it has received anything (0 - 2)."""

CRAM_PACK_SIZE = 64
"""The sender keeps appending commands while a datagram is shorter."""


class Layout(enum.IntEnum):
    """Command-packet layout: with the sendCount byte (net version >= 11) or without."""

    LEGACY = 0
    CURRENT = 1


class Flag(enum.IntFlag):
    """The bits of a command's flag byte."""

    P1 = 0x01
    P2 = 0x02
    P3_LONG = 0x04
    LEN_LONG = 0x08
    LEN_SHORT = 0x10
    P3_SHORT = 0x20
    DISTRIBUTION = 0x40
    SENDER = 0x80


class Status(enum.IntEnum):
    """Per-datagram outcome in :func:`~gamecodec.avara.decode_array`."""

    OK = 0
    CRC_MISMATCH = 1
    SHORT_DATAGRAM = 2
    BAD_DATA_LEN = 3
    TRUNCATED = 4
    PUNCH = 5
    OVERSIZE = 6
    """Longer than ``MAX_DATAGRAM``: not decoded (``error_offset`` is ``MAX_DATAGRAM``)."""


class CommandId(enum.IntEnum):
    """Command identifiers (the game's ``CommDefs.h``)."""

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
    """Hole-punch commands (the game's ``AvaraTCP.h``)."""

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
        """Out-of-order serials the ack bitmap reports as received."""
        if self.ack is None or self.ack_bitmap is None:
            return ()
        base = self.ack - 1
        bits = self.ack_bitmap & 0xFFFFFFFF
        return tuple((base + 2 * (k + 1)) & 0xFFFF for k in range(32) if bits >> k & 1)


class HolePunch(NamedTuple):
    """A 7-byte hole-punch datagram: no checksum, no commands."""

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
    """Result of :func:`~gamecodec.avara.decode_array`: every command of every datagram in one
    structured array, plus one row of outcome per datagram."""

    commands: np.ndarray
    datagrams: np.ndarray


# -- the session's constants (the game's names in backquotes) -------------------

SERIAL_STEP: Final = 2
"""``kSerialNumberStepSize``: serials step by 2 and wrap at 2**16."""
ACK_DELAY: Final = 0.041
"""``kAckRetransmitBase``: an ACK-only datagram waits this + retransmitTime (s)."""
INITIAL_RETRANSMIT_TIME: Final = 2.0
"""``kInitialRetransmitTime`` (s)."""
INITIAL_ROUND_TRIP_TIME: Final = 0.5
"""``kInitialRoundTripTime`` (500 ms in the millisecond-clock source)."""
INITIAL_ROUND_TRIP_VAR: Final = 0.064 * 0.064
"""``kInitialRoundTripVar``: ``CLASSICFRAMECLOCK`` squared (64 ms, the classic frame)."""
MAX_RETRANSMIT_TIME: Final = 4.0
"""``kMaxAllowedRetransmitTime``: the resend timer's ceiling (s)."""
ULP_TIMEOUT: Final = 120.0
"""``kULPTimeOut``: this long without an ack kills the connection (s)."""
MAX_TRANSMIT_QUEUE: Final = 1024
"""``kMaxTransmitQueueLength``: more commands waiting kills the connection."""
SEND_WINDOW: Final = 1024
"""``kMaxReceiveQueueLength`` (= ``kMaxTransmitQueueLength``, "receive as much as is
sent"): commands are sent at most this many commands (twice as many serials) past
the peer's ack."""
MAX_RESENDS_WITHOUT_RECEIVE: Final = 3
"""Resends allowed while nothing is heard from the peer."""
MAX_SKIP_EVENTS: Final = 1024
"""The most :class:`SerialSkipped` events a connection keeps until ``events()``
takes them: later ones are counted in ``skip_events_dropped`` only."""
CRAM_TIME: Final = 5.0
"""``CRAMTIME``: packed extras may be resent up to this early (s)."""
SETTLE: Final = 100
"""``SERIAL_NUMBER_UDP_SETTLE``: the sender byte is written while serial <= this."""


# -- the session's events -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SerialSkipped(Event):
    """The receiver gave up waiting for ``serial``: the game's skip rule (once
    enough later commands are queued behind a missing one, it is dropped)."""

    serial: int


def __getattr__(name: str) -> Any:
    """``COMMAND_DTYPE`` and ``DATAGRAM_DTYPE``, built (importing numpy) on first use."""
    if name in ("COMMAND_DTYPE", "DATAGRAM_DTYPE"):
        from gamecodec.avara import _arrays

        return getattr(_arrays, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
