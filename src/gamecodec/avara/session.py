"""Sans-IO Avara reliable connection: serials, acks, resends (spec §4).

A :class:`Connection` is the game's per-peer ``CUDPConnection`` plus the part
of ``CUDPComm::AsyncWrite`` that fills one datagram for that peer. It does no
I/O and reads no clock: every entry point takes ``now`` in seconds (any
monotonic origin, e.g. ``loop.time()``)::

    conn = Connection(my_id=1, peer_id=0, now=t)
    conn.send(CommandId.kpRosterMessage, data=b"hi", now=t)
    for datagram in conn.datagrams_to_send(t):
        sock.sendto(datagram, peer)
    delivered = conn.receive_datagram(payload, t)  # commands, in serial order
    for event in conn.events():  # SerialSkipped, PeerLost
        ...
    wake_up_at = conn.next_deadline()  # seconds, or None

What it models, with the game's numbers (spec §4, ``src/net/CUDPConnection.cpp``
and ``CUDPComm.cpp``):

* Serials step by 2 from 0 and wrap at 2^16; order is modular (§4.1).
* Receive: in-order delivery, duplicates dropped, out-of-order commands
  queued; once ``skip_after`` (``4 / fpsScale`` = 16 at 16 ms frames) are
  queued, the missing serial is given up (:class:`SerialSkipped`) (§4.5).
* The ack block of every datagram exactly as ``WriteAcks`` writes it: the
  cumulative ack, or base + 1 and the 32-bit bitmap computed when the receive
  queue last changed (§4.2). ACK-only datagrams when an ack is owed, nothing
  else is due, and 41 ms + ``retransmitTime`` have passed since the last send.
* Send: ``FindBestPacket``'s choice (due commands, urgency, the 32-command
  window past the peer's ack), packing more commands while the datagram is
  shorter than 64 bytes, up to ``min(cramData) - 1`` of them taken up to 5 s
  early (§2.2); resends keep the serial with ``sendCount + 1``; at most 3
  resends without hearing from the peer (§4.5).
* Timers: RTT mean and variance (exponential, up faster than down, only for
  kpPing / kpRosterMessage / kpKeyAndMouse), ``retransmitTime`` = mean +
  2.5 sigma clamped to [2 frames, 4000 ms], initially 2000 ms;
  ``urgentRetransmitTime`` = min(mean / 2, 2 frames).
* Peer lost (:class:`PeerLost`): more than 1024 commands waiting in the
  transmit queue, or 120 s without an ack while a sent command is unacked.

The two give-up rules (the skip rule and the resend cap) lose or stall
messages on very lossy links, as in the game. ``Connection(skip_after=None,
max_resends_without_receive=None)`` keeps the wire bytes and timers but never
gives up a message while the peer answers.

Numbers the spec does not give, taken from older stored versions of the
source: the initial mean RTT (1 s), the 32-command send window and the RTT
smoothing factors (``fpsScale / 80`` up, ``/ 160`` down).

Where this differs from the C++ (deliberately, documented): no byte quota
(the game's ``quota`` only throttles bursts), C ``float`` RTT arithmetic is
done in doubles, bitmap bits for serials more than 64 ahead (undefined
behaviour in C++) are ignored, and the 120 s check looks at every unacked
command rather than only those ``FindBestPacket`` happens to scan.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Final, NamedTuple

from gamecodec import _accel
from gamecodec.avara._models import DEFAULT_VERSION, MAX_DATA_LEN, PUNCH_SIZE, Command, Datagram
from gamecodec.errors import DecodeError, EncodeError, LocalProtocolError

__all__ = [
    "ACK_DELAY",
    "CRAM_TIME",
    "INITIAL_RETRANSMIT_TIME",
    "INITIAL_ROUND_TRIP_TIME",
    "MAX_RESENDS_WITHOUT_RECEIVE",
    "MAX_RETRANSMIT_TIME",
    "MAX_TRANSMIT_QUEUE",
    "SEND_WINDOW",
    "SERIAL_STEP",
    "ULP_TIMEOUT",
    "Connection",
    "ConnectionEvent",
    "PeerLost",
    "SerialSkipped",
    "serial_diff",
]

SERIAL_STEP: Final = 2
"""``kSerialNumberStepSize`` (§4.1)."""
ACK_DELAY: Final = 0.041
"""``kAckRetransmitBase``: an ACK-only datagram waits this + retransmitTime (§4.2)."""
INITIAL_RETRANSMIT_TIME: Final = 2.0
"""``kInitialRetransmitTime`` (§4.5)."""
INITIAL_ROUND_TRIP_TIME: Final = 1.0
"""``kInitialRoundTripTime``: 240 ticks of ~4.17 ms in the tick-based source."""
MAX_RETRANSMIT_TIME: Final = 4.0
"""``kMaxAllowedRetransmitTime`` (§4.5)."""
ULP_TIMEOUT: Final = 120.0
"""``kULPTimeOut``: this long without an ack kills the connection (§4.5)."""
MAX_TRANSMIT_QUEUE: Final = 1024
"""``kMaxTransmitQueueLength`` (§4.5)."""
SEND_WINDOW: Final = 32
"""``kMaxReceiveQueueLength``: commands sent at most this many serials past the ack."""
MAX_RESENDS_WITHOUT_RECEIVE: Final = 3
"""Resends allowed without hearing from the peer (§4.5)."""
CRAM_TIME: Final = 5.0
"""``CRAMTIME``: packed extras may be resent up to this early (§2.2)."""
CRAM_PACK_SIZE: Final = 64
"""Keep packing while the datagram is shorter than this (§2.2)."""
SETTLE: Final = 100
"""``SERIAL_NUMBER_UDP_SETTLE``: the sender byte is written while serial <= this (§4.3)."""
_RTT_UP: Final = 80.0
_RTT_DOWN: Final = 160.0
_STATS_COMMANDS: Final = frozenset((6, 17, 31))  # kpRosterMessage, kpKeyAndMouse, kpPing
_CONTROL: Final = -4  # kpPacketProtocolControl, p1 0 = udpCramInfo
_NO_BITMAP_LIMIT: Final = 64
_WINDOW: Final = 2 * SEND_WINDOW

_new = tuple.__new__


def serial_diff(a: int, b: int) -> int:
    """``a - b`` as the game's ``RolloverCounter`` sees it: -32768..32767."""
    return ((a - b + 0x8000) & 0xFFFF) - 0x8000


class SerialSkipped(NamedTuple):
    """The receiver gave up waiting for ``serial`` (the skip rule, §4.5)."""

    serial: int


class PeerLost(NamedTuple):
    """The connection was killed (``ErrorKill``): the peer is unreachable."""

    reason: str
    at: float


ConnectionEvent = SerialSkipped | PeerLost
"""What :meth:`Connection.events` returns (delivered commands are returned
by :meth:`Connection.receive_datagram` itself)."""


class _Out:
    """A command in the transmit queue (the game's ``UDPPacketInfo``)."""

    __slots__ = (
        "birth",
        "command",
        "data",
        "next_send",
        "p1",
        "p2",
        "p3",
        "send_count",
        "sender",
        "serial",
        "size",
        "urgent",
    )

    def __init__(  # noqa: PLR0917
        self,
        serial: int,
        command: int,
        p1: int,
        p2: int,
        p3: int,
        data: bytes,
        sender: int | None,
        urgent: bool,
        now: float,
    ) -> None:
        self.serial = serial
        self.command = command
        self.p1 = p1
        self.p2 = p2
        self.p3 = p3
        self.data = data
        self.sender = sender
        self.urgent = urgent
        self.send_count = 0
        self.birth = now
        self.next_send = now
        self.size = -1


class Connection:
    """One direction pair of the game's reliable command stream with one peer.

    ``my_id`` is our slot (the sender byte we write), ``peer_id`` the peer's:
    a received command whose sender byte names another slot is ignored, as
    the game does (spec §3.2); delivered commands are as decoded (``sender``
    is ``None`` where the byte was absent, meaning ``peer_id``).
    ``frame_time`` (ms, default 16) sets the resend floor (2 frames) and the
    skip rule (``4 / fpsScale`` = 256 / frame_time queued commands);
    ``skip_after`` overrides the latter (``True``, the default: the game's
    rule; an int: that many; ``None``: never skip, wait for the resend).
    ``max_resends_without_receive`` (default 3, the game's) caps resends
    while nothing is heard from the peer; ``None`` removes the cap.
    ``cram_data`` / ``peer_cram_data`` are the "connection speed" settings
    (0..3) that allow ``min(both) - 1`` early resends per datagram; the peer's
    value is also taken from a received ``kpPacketProtocolControl``.
    ``first_receive_serial`` is where the peer's stream starts (a server
    that consumed a client's login expects 2). ``codec`` picks a codec twin
    (a module with ``decode_datagram``/``encode_datagram``; the active twin
    by default).
    """

    def __init__(
        self,
        *,
        my_id: int = 1,
        peer_id: int = 0,
        now: float = 0.0,
        version: int = DEFAULT_VERSION,
        frame_time: float = 16.0,
        cram_data: int = 3,
        peer_cram_data: int = 3,
        skip_after: int | bool | None = True,
        max_resends_without_receive: int | None = MAX_RESENDS_WITHOUT_RECEIVE,
        first_receive_serial: int = 0,
        codec: ModuleType | None = None,
    ) -> None:
        if codec is None:
            codec = _accel.load("gamecodec.avara", "_codec", "avara")
        self.my_id = my_id
        self.peer_id = peer_id
        self.version = version
        self.cram_data = cram_data
        self.peer_cram_data = peer_cram_data
        self.frame_time = frame_time
        fps_scale = frame_time / 64.0
        self._fps_scale = fps_scale
        self._alpha_up = fps_scale / _RTT_UP
        self._alpha_down = fps_scale / _RTT_DOWN
        if skip_after is True:
            skip_after = int(4 / fps_scale)
        self.skip_after: int | None = None if skip_after is False else skip_after
        self._urgent_resend = 2 * frame_time / 1000.0
        self.max_resends_without_receive = max_resends_without_receive
        self._resend_cap: float = (
            math.inf if max_resends_without_receive is None else max_resends_without_receive
        )
        decode = codec.decode_datagram
        encode = codec.encode_datagram
        if version == DEFAULT_VERSION:
            self._decode = decode
            self._encode = encode
        else:
            self._decode = lambda d: decode(d, version=version)
            self._encode = lambda a, c, b: encode(a, c, b, version=version)
        # sending side
        self._serial = 0
        self._max_valid = 0xFFFE
        self._txq: list[_Out] = []
        self._nrwr = 0
        self._valid_time = now
        self.retransmit_time = INITIAL_RETRANSMIT_TIME
        self.urgent_retransmit_time = self._urgent_resend
        self.mean_round_trip = INITIAL_ROUND_TRIP_TIME
        self._var_round_trip = INITIAL_ROUND_TRIP_TIME * INITIAL_ROUND_TRIP_TIME
        # receiving side
        self._receive_serial = first_receive_serial & 0xFFFF
        self._rxq: dict[int, Command] = {}
        self._ack_base = 0
        self._ack_bitmap = 0
        self._have_to_send_ack = True
        self._next_ack_time = now + ACK_DELAY
        self._events: list[ConnectionEvent] = []
        self.lost: PeerLost | None = None
        self._dl_stale = True
        self._dl_exact: float | None = None
        self._dl_lower = math.inf
        self.total_sent = 0
        self.total_resent = 0

    # -- state ------------------------------------------------------------

    @property
    def next_serial(self) -> int:
        """The serial the next command will get."""
        return self._serial

    @property
    def receive_serial(self) -> int:
        """The peer's serial we deliver next (``receiveSerial``)."""
        return self._receive_serial

    @property
    def unacked(self) -> int:
        """Commands in the transmit queue (sent or not, not yet acked)."""
        return len(self._txq)

    @property
    def receive_queue(self) -> tuple[int, ...]:
        """Serials waiting for a missing one, in serial order."""
        rs = self._receive_serial
        return tuple(sorted(self._rxq, key=lambda s: (s - rs) & 0xFFFF))

    def ack_block(self) -> tuple[int, int | None]:
        """``(ack, bitmap)`` as ``WriteAcks`` would write them now (§4.2)."""
        if self._ack_base & 1:
            return self._ack_base, self._ack_bitmap
        return (self._receive_serial - 2) & 0xFFFF, None

    def events(self) -> list[ConnectionEvent]:
        """Events since the last call: :class:`SerialSkipped`, :class:`PeerLost`."""
        out = self._events
        self._events = []
        return out

    # -- sending ----------------------------------------------------------

    def send(
        self,
        command: int,
        *,
        p1: int = 0,
        p2: int = 0,
        p3: int = 0,
        data: bytes = b"",
        urgent: bool = False,
        now: float,
    ) -> int:
        """Queue one reliable command; return its serial.

        Values are checked here (a bad value raises
        :class:`~gamecodec.EncodeError` now, not when sending). ``urgent`` is the
        game's ``kpUrgentFlag``: preferred when packing, and resent after
        ``urgent_retransmit_time`` when its p1 is non-zero (the flag then
        reads the wire byte, spec §4.5 quirk).
        """
        if self.lost is not None:
            raise LocalProtocolError(f"send on a lost connection ({self.lost.reason})")
        serial = self._serial
        sender = self.my_id if (SETTLE - serial) & 0xFFFF <= 0x7FFF else None
        out = _Out(serial, command, p1, p2, p3, data, sender, urgent, now)
        try:
            ok = (
                -128 <= p1 <= 127
                and -0x8000 <= p2 <= 0x7FFF
                and -(1 << 31) <= p3 < (1 << 31)
                and -128 <= command <= 127
                and type(data) is bytes
                and len(data) <= MAX_DATA_LEN
            )
        except TypeError:
            ok = False
        if not ok:
            self._size(out)  # the encoder says what is wrong
            raise EncodeError(f"command {command} cannot be encoded")  # pragma: no cover
        self._serial = (serial + SERIAL_STEP) & 0xFFFF
        self._txq.append(out)
        self._dl_stale = True
        return serial

    def _find_best(self, now: float, cram_time: float, urgency: float) -> _Out | None:
        """``FindBestPacket``: the command to put next, taken off the queue."""
        txq = self._txq
        allow = self._nrwr < self._resend_cap
        max_valid = self._max_valid
        n = len(txq)
        if n == 1:  # the usual case: one new command
            o = txq[0]
            if now < o.next_send or not (allow or not o.send_count):
                return None
            d = ((o.serial - max_valid + 0x8000) & 0xFFFF) - 0x8000
            if d > _WINDOW:
                return None
            txq.clear()
            if d > 0:  # due, so due with any cram time and urgency too
                return o
            self._validated(o, now)
            return None
        i = 0
        while i < n:
            o = txq[i]
            if now >= o.next_send and (allow or not o.send_count):
                break
            i += 1
        else:
            return None
        while i < n:
            # skip commands more than SEND_WINDOW serials past the peer's ack
            if ((txq[i].serial - max_valid + 0x8000) & 0xFFFF) - 0x8000 <= 2 * SEND_WINDOW:
                break
            i += 1
        if i >= n:
            return None
        best_i = i
        best = txq[i]
        best_time = best.next_send - urgency if best.urgent else best.next_send
        for j in range(i + 1, n):
            o = txq[j]
            if ((o.serial - max_valid + 0x8000) & 0xFFFF) - 0x8000 <= 2 * SEND_WINDOW:
                t = o.next_send - urgency if o.urgent else o.next_send
                if best_time > t and (allow or not o.send_count):
                    best_time = t
                    best = o
                    best_i = j
        if ((best.serial - max_valid + 0x8000) & 0xFFFF) - 0x8000 > 0:
            if best_time - cram_time - now <= 0:
                del txq[best_i]
                return best
            return None
        del txq[best_i]
        self._validated(best, now)
        return None

    def _take(self, now: float, cram_time: float, urgency: float) -> _Out | None:
        """``GetOutPacket`` for a command (the ACK-only case is the caller's)."""
        out = self._find_best(now, cram_time, urgency) if self._txq else None
        if out is not None:
            self._have_to_send_ack = False
            self._next_ack_time = now + ACK_DELAY + self.retransmit_time
            self.total_sent += 1
            if out.send_count:
                self.total_resent += 1
                self._nrwr += 1
        return out

    def datagrams_to_send(self, now: float) -> list[bytes]:
        """Every datagram due at ``now`` (usually none or one)."""
        if self.lost is not None:
            return []
        if not self._dl_stale and now < self._dl_lower:
            return []  # nothing can be due before the cached lower bound
        self._dl_stale = True
        out: list[bytes] = []
        txq = self._txq
        if txq and now - self._valid_time > ULP_TIMEOUT and self._oldest_check(now):
            return out
        encode = self._encode
        while True:
            if len(txq) > MAX_TRANSMIT_QUEUE:
                self._kill("transmit queue overflow", now)
                return out
            first = self._find_best(now, 0.0, 0.0) if txq else None
            if first is not None:  # GetOutPacket's bookkeeping, inlined
                self._have_to_send_ack = False
                self._next_ack_time = now + ACK_DELAY + self.retransmit_time
                self.total_sent += 1
                if first.send_count:
                    self.total_resent += 1
                    self._nrwr += 1
            elif not (self._have_to_send_ack and self._next_ack_time <= now):
                return out
            if self._ack_base & 1:
                ack: int = self._ack_base
                bitmap: int | None = self._ack_bitmap
            else:
                ack = (self._receive_serial - 2) & 0xFFFF
                bitmap = None
            if first is None:  # an ACK-only datagram
                self._have_to_send_ack = False
                self._next_ack_time = now + ACK_DELAY + self.retransmit_time
                out.append(encode(ack, (), bitmap))
                continue
            cram = self.cram_data
            cram = min(cram, self.peer_cram_data)
            orig_cram = cram
            cram -= 1
            picked = [first]
            if txq:  # something else might be packed: keep going while < 64 bytes
                length = (8 if bitmap is not None else 4) + self._size(first)
                while length < CRAM_PACK_SIZE:
                    pkt = self._take(now, CRAM_TIME if cram > 0 else 0.0, CRAM_TIME)
                    cram -= 1
                    if pkt is None:
                        break
                    picked.append(pkt)
                    length += self._size(pkt)
            if len(picked) == 1:
                o = first
                cmds: list[Command] | tuple[Command] = (
                    _new(
                        Command,
                        (
                            o.serial,
                            o.send_count & 0xFF,
                            0,
                            o.command,
                            None,
                            o.p3,
                            o.p2,
                            o.p1,
                            o.sender,
                            o.data,
                        ),
                    ),
                )
            else:
                cmds = [
                    _new(
                        Command,
                        (
                            o.serial,
                            o.send_count & 0xFF,
                            0,
                            o.command,
                            None,
                            o.p3,
                            o.p2,
                            o.p1,
                            o.sender,
                            o.data,
                        ),
                    )
                    for o in picked
                ]
                picked.reverse()  # the game re-queues its packet list last-written first
            out.append(encode(ack, cmds, bitmap))
            rest = len(txq)
            rt = self.retransmit_time
            for o in picked:
                # after the first write the in-memory flags are the wire flags:
                # "urgent" now means p1 != 0 (spec §4.5 quirk)
                if o.send_count == 0:
                    o.birth = now
                    if orig_cram and o.p1:
                        o.next_send = now + self.urgent_retransmit_time
                        o.urgent = True
                    else:
                        o.next_send = now + rt
                        o.urgent = False
                else:
                    o.next_send = now + rt
                    o.urgent = False
                o.send_count += 1  # a short in memory, its low byte on the wire
                txq.append(o)
            if not rest and self.urgent_retransmit_time > 0 and rt > 0:
                return out  # only the commands just sent are queued: none is due

    def _size(self, o: _Out) -> int:
        """Wire size of a command (encoded once, when packing needs it)."""
        size = o.size
        if size < 0:
            probe = _new(
                Command,
                (o.serial, 0, 0, o.command, None, o.p3, o.p2, o.p1, o.sender, o.data),
            )
            size = o.size = len(self._encode(0, (probe,), None)) - 4
        return size

    def _oldest_check(self, now: float) -> bool:
        if now - self._valid_time <= ULP_TIMEOUT:
            return False
        for o in self._txq:
            if o.send_count and now - o.birth > ULP_TIMEOUT:
                self._kill("no acknowledgement for 120 s", now)
                return True
        return False

    def _kill(self, reason: str, now: float) -> None:
        if self.lost is None:
            self.lost = PeerLost(reason, now)
            self._events.append(self.lost)

    def next_deadline(self) -> float | None:
        """When :meth:`datagrams_to_send` next has something to do, or None.

        The earliest of: a due command inside the peer's window (resends only
        while the resend limit allows), an owed ACK-only datagram, and the
        120 s kill check. (A command blocked by the window or the resend limit
        waits for the peer: :meth:`receive_datagram` moves the deadline.)
        """
        if self._dl_stale:
            self._compute_deadlines()
        return self._dl_exact

    def _compute_deadlines(self) -> None:
        self._dl_stale = False
        if self.lost is not None:
            self._dl_exact = None
            self._dl_lower = math.inf
            return
        best = lower = math.inf
        txq = self._txq
        if txq:
            if len(txq) > MAX_TRANSMIT_QUEUE:
                self._dl_exact = self._dl_lower = self._valid_time  # overdue: kill at once
                return
            allow = self._nrwr < self._resend_cap
            max_valid = self._max_valid
            oldest = math.inf
            for o in txq:
                t = o.next_send
                if o.send_count:
                    oldest = min(oldest, o.birth)
                    if not allow:
                        continue
                lower = min(lower, t)
                if (
                    t < best
                    and ((o.serial - max_valid + 0x8000) & 0xFFFF) - 0x8000 <= 2 * SEND_WINDOW
                ):
                    best = t
            if oldest != math.inf:
                kill = max(oldest, self._valid_time) + ULP_TIMEOUT + 1e-6
                best = min(best, kill)
                lower = min(lower, kill)
        if self._have_to_send_ack:
            best = min(best, self._next_ack_time)
            lower = min(lower, self._next_ack_time)
        self._dl_exact = None if best == math.inf else best
        # nothing can happen before the first command the first scan may pick
        self._dl_lower = lower

    # -- receiving --------------------------------------------------------

    def receive_datagram(self, data: bytes, now: float) -> list[Command]:
        """Take one datagram from the peer; return the commands it released,
        in serial order (the game's ``ReceivedGoodPacket`` calls).

        Datagrams the game drops (bad checksum, shorter than 4 bytes, 7-byte
        hole punches) give ``[]``. A command the codec cannot decode ends the
        datagram; the commands before it still count (as in the game).
        """
        if self.lost is not None or len(data) == PUNCH_SIZE:
            return []
        try:
            dg = self._decode(data)
        except DecodeError as exc:
            dg = exc.partial
            if not isinstance(dg, Datagram):
                return []
        crc_ok, ack, bitmap, commands = dg
        if not crc_ok:
            return []
        self._dl_stale = True
        # ValidateReceivedPackets: the bitmap first, then the cumulative ack
        self._nrwr = 0
        txq = self._txq
        if ack & 1:
            ack &= 0xFFFE
            if bitmap and txq:
                self._bitmap_acks(ack, bitmap, now)
        self._valid_time = now
        max_valid = self._max_valid
        if ack != max_valid and (ack - max_valid) & 0xFFFF <= 0x7FFF:
            self._max_valid = ack
            if len(txq) == 1:
                o = txq[0]
                if (ack - o.serial) & 0xFFFF <= 0x7FFF:
                    txq.clear()
                    self._validated(o, now)
            elif txq:
                self._cumulative_acks(ack, now)
        delivered: list[Command] = []
        if not commands:
            return delivered
        self._have_to_send_ack = True
        rs = self._receive_serial
        rxq = self._rxq
        changed = False
        peer_id = self.peer_id
        for cmd in commands:
            sender = cmd[8]
            if sender is not None and sender != peer_id:
                continue  # not from this peer's slot: the game ignores it (spec §3.2)
            serial = cmd[0]
            if serial == rs:
                delivered.append(cmd)
                rs = (rs + 2) & 0xFFFF
                if rxq:
                    while rs in rxq:
                        delivered.append(rxq.pop(rs))
                        rs = (rs + 2) & 0xFFFF
                        changed = True
            elif (rs - serial) & 0xFFFF <= 0x7FFF:
                continue  # already delivered: a duplicate
            elif serial in rxq:
                continue  # already queued: a duplicate
            else:
                rxq[serial] = cmd
                changed = True
                skip = self.skip_after
                if skip is not None:
                    while len(rxq) >= skip:
                        self._events.append(SerialSkipped(rs))
                        rs = (rs + 2) & 0xFFFF
                        while rs in rxq:
                            delivered.append(rxq.pop(rs))
                            rs = (rs + 2) & 0xFFFF
            if cmd[3] == _CONTROL and cmd[7] == 0:
                self.peer_cram_data = cmd[6]  # udpCramInfo: the peer's cramData
        self._receive_serial = rs
        if changed:
            base = (rs - 2) & 0xFFFF
            if rxq:
                bits = 0
                for s in rxq:
                    k = ((((s - base + 0x8000) & 0xFFFF) - 0x8000) >> 1) - 1
                    bits |= 1 << (k & 31)  # x86 masks the shift count
                self._ack_bitmap = bits
                self._ack_base = base + 1
            else:
                self._ack_base = base
        return delivered

    def _bitmap_acks(self, base: int, bitmap: int, now: float) -> None:
        """Drop the commands the ack bitmap reports (bits for base+4 .. base+64)."""
        txq = self._txq
        keep: list[_Out] = []
        done: list[_Out] = []
        for o in txq:
            d = ((o.serial - base + 0x8000) & 0xFFFF) - 0x8000
            if 2 <= d <= _NO_BITMAP_LIMIT and bitmap >> ((d >> 1) - 1) & 1:
                done.append(o)
            else:
                keep.append(o)
        if done:
            txq[:] = keep
            for o in done:
                self._validated(o, now)

    def _cumulative_acks(self, ack: int, now: float) -> None:
        """``RunValidate``: drop every command with serial <= ack."""
        txq = self._txq
        done = [o for o in txq if (ack - o.serial) & 0xFFFF <= 0x7FFF]
        if done:
            if len(done) == len(txq):
                txq.clear()
            else:
                txq[:] = [o for o in txq if (ack - o.serial) & 0xFFFF > 0x7FFF]
            for o in done:
                self._validated(o, now)

    def _validated(self, o: _Out, when: float) -> None:
        """``ValidatePacket``: an acked command updates the RTT statistics."""
        rtt = when - o.birth
        if self._max_valid == 4:
            if rtt < self.mean_round_trip:
                self.mean_round_trip = rtt
                self._var_round_trip = rtt * rtt
            return
        if o.command not in _STATS_COMMANDS:
            return
        mean = self.mean_round_trip
        diff = rtt - mean
        alpha = self._alpha_up if diff > 0 else self._alpha_down
        sc = o.send_count
        if sc > 1:
            alpha /= sc * sc
        inc = alpha * diff
        mean += inc
        var = (1 - alpha) * (self._var_round_trip + diff * inc)
        self.mean_round_trip = mean
        self._var_round_trip = var
        # the game counts whole milliseconds: (long) truncations, then clamps
        rt = int(mean * 1000.0 + int(2500.0 * var**0.5)) / 1000.0
        floor = self._urgent_resend
        if rt < floor:
            rt = floor
        elif rt > MAX_RETRANSMIT_TIME:
            rt = MAX_RETRANSMIT_TIME
        self.retransmit_time = rt
        urgent = int(mean * 500.0) / 1000.0  # LatencyEstimate(): max mean RTT / 2
        urgent = min(urgent, floor)
        self.urgent_retransmit_time = urgent if urgent < rt else rt
