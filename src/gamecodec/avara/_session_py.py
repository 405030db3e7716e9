# cython: annotation_typing=False, boundscheck=False, wraparound=False
# cython: freethreading_compatible=True, auto_pickle=False
# Free-threading compatible: a Connection keeps its transmit queue in one PyMem
# block that send() reallocates, and swaps Python objects held in C fields (the
# events, the receive queue), so every entry point that touches them first claims
# the connection's busy lock (``_enter``): a second thread entering one Connection
# at once gets a RuntimeError, never a half-changed connection or freed memory.
"""Avara reliable connection, pure-Python twin (compiled as ``_session_c``).

This one source is both twins: run as Python it is the pure twin, and Cython
compiles it, typed by ``_session_c.pxd``, into ``gamecodec.avara._session_c``
(a few primitives have C bodies in the .pxd; their pure versions are in the
``if not cython.compiled`` block below). ``gamecodec.avara.session``
documents the model and picks the twin; ``tests/avara/test_connection_parity.py``
holds the twins together.

The wire is the codec's: its CRC, its command reader and its writers
(``_codec_py``'s here, ``_codec_c``'s cimported in the compiled twin). A
received datagram is checked and read in one pass (no ``Datagram``, only the
delivered ``Command``s are built), and an outgoing datagram is written into a
scratch buffer. The
transmit queue is a pool of slots in parallel arrays (C ints and doubles in
the compiled twin), linked in queue order: the game's ``FindBestPacket``
scans in that order, and resent commands go back at its end.
"""

from __future__ import annotations

import math
from array import array
from threading import Lock
from typing import Any, Final

from gamecodec._clock import MAX_TIME, check_time
from gamecodec.avara._models import (
    ACK_DELAY,
    CRAM_PACK_SIZE,
    CRAM_TIME,
    DEFAULT_VERSION,
    INITIAL_RETRANSMIT_TIME,
    INITIAL_ROUND_TRIP_TIME,
    INITIAL_ROUND_TRIP_VAR,
    MAX_DATA_LEN,
    MAX_RESENDS_WITHOUT_RECEIVE,
    MAX_RETRANSMIT_TIME,
    MAX_SKIP_EVENTS,
    MAX_TRANSMIT_QUEUE,
    PUNCH_SIZE,
    SEND_WINDOW,
    SERIAL_STEP,
    SETTLE,
    ULP_TIMEOUT,
    Command,
    PeerLost,
    SerialSkipped,
)
from gamecodec.errors import EncodeError, LocalProtocolError

try:
    import cython
except ImportError:  # Cython is a build-time dependency only
    from types import SimpleNamespace

    cython = SimpleNamespace(compiled=False)

__all__ = ["Connection", "serial_diff"]

# Typed copies for the hot path (C globals in the compiled twin, see the .pxd).
_ACK_DELAY: Final = ACK_DELAY
_CRAM_TIME: Final = CRAM_TIME
_ULP_TIMEOUT: Final = ULP_TIMEOUT
_INITIAL_VAR: Final = INITIAL_ROUND_TRIP_VAR
_MAX_RETRANSMIT_TIME: Final = MAX_RETRANSMIT_TIME
_MAX_QUEUE: Final = MAX_TRANSMIT_QUEUE
_CRAM_PACK: Final = CRAM_PACK_SIZE
_SETTLE: Final = SETTLE
_STEP: Final = SERIAL_STEP
_MAX_DATA: Final = MAX_DATA_LEN
_PUNCH: Final = PUNCH_SIZE
_WINDOW: Final = 2 * SEND_WINDOW  # in serials
_NO_BITMAP_LIMIT: Final = 64  # bitmap bits reach base + 64
_MAX_REACH: Final = 32766  # the farthest serial distance the reader tells from one behind
_CONTROL: Final = -4  # kpPacketProtocolControl; p1 0 = udpCramInfo
_KEY_AND_MOUSE: Final = 17
_PING: Final = 31
# CUDPConnection's RTT statistics (Avara aaa5e633): RTTSMOOTHFACTOR 100
# (up and down), per-command weights (kpKeyAndMouse: fpsScale, kpPing with
# p3 > 0: 64 ms * 0.4), ping round trips * 0.82, a ping more than one classic
# frame above the mean de-weighted by max(4, diff^2 / var)
_RTT_SMOOTH: Final = 100.0
_PING_WEIGHT: Final = 64 * 0.4
_PING_SCALE: Final = 0.82
_CLASSIC_FRAME: Final = 0.064
_RESEND_BUFFER: Final = 0.016  # RESEND_PACKET_BUFFER of urgentRetransmitTime
_INF: Final = math.inf
# The longest datagram: < 64 bytes of header and packed commands, then one of
# at most 17 header bytes + MAX_DATA_LEN.
_OUT_SIZE: Final = 63 + 17 + MAX_DATA_LEN + 8
_MAX_PICKS: Final = 16  # commands packed in one datagram: at most 13 (5 bytes each)
_MAX_TIME: Final = MAX_TIME  # times within +-2**33 s (gamecodec._clock says why)


def serial_diff(a: int, b: int) -> int:
    """``a - b`` as the game's ``RolloverCounter`` sees it: -32768..32767."""
    return ((a - b + 0x8000) & 0xFFFF) - 0x8000


def _diff(a: int, b: int) -> int:
    """:func:`serial_diff` on C ints (inlined in the compiled twin)."""
    return ((a - b + 0x8000) & 0xFFFF) - 0x8000


def _command_size(flags: int, n: int) -> int:
    """The wire length of a command with these flags (never a distribution)
    and ``n`` data bytes."""
    size = 5 + (flags & 0x01) + (flags >> 7) + n
    if flags & 0x02:
        size += 2
    if flags & 0x04:
        size += 4
    elif flags & 0x20:
        size += 2
    if flags & 0x08:
        size += 2
    elif flags & 0x10:
        size += 1
    return size


# -- primitives: C bodies in _session_c.pxd, pure bodies here --------------------------


def _refuse_time(now: float) -> None:
    """:func:`check_time`'s error for a bad ``now`` (the compiled ``_time``'s slow path)."""
    check_time(now)


if not cython.compiled:  # the pure bodies (Cython drops this block)
    from gamecodec.avara._codec_py import (
        command_object,
        crc16,
        parse_command,
        write_acks,
        write_command,
        writer_flags,
    )

    _sqrt = math.sqrt

    def _time(now: float) -> float:
        """``now`` if the timers can work with it (:func:`check_time` raises otherwise)."""
        if not -_MAX_TIME <= now <= _MAX_TIME:
            check_time(now)
        return now

    def _fits(value: object, low: int, high: int) -> bool:
        """Whether ``value`` is an int in ``low..high``."""
        return isinstance(value, int) and low <= value <= high

    def _trunc(x: float) -> int:
        """``(long) x``: truncation toward zero, saturating (NaN gives 0), so
        both twins agree on any double, even from a clock that jumps."""
        if math.isnan(x):
            return 0
        if x >= 9.2e18:
            return 9_200_000_000_000_000_000
        if x <= -9.2e18:
            return -9_200_000_000_000_000_000
        return int(x)

    def _head(buf: bytearray, size: int) -> bytes:
        """The first ``size`` bytes of ``buf``."""
        return bytes(buf[:size])

    def _grown(old: Any, code: str, size: int, cap: int) -> Any:
        """A ``cap``-long array of ``code`` starting with ``old[:size]``."""
        new = array(code, [0]) * cap
        for i in range(size):
            new[i] = old[i]
        return new

    _SLOT_ARRAYS = (
        ("_t_serial", "i"),
        ("_t_command", "i"),
        ("_t_p1", "i"),
        ("_t_p2", "i"),
        ("_t_p3", "i"),
        ("_t_flags", "i"),
        ("_t_size", "i"),
        ("_t_send_count", "i"),
        ("_t_urgent", "i"),
        ("_t_sender", "i"),
        ("_t_birth", "d"),
        ("_t_next_send", "d"),
        ("_t_prev", "i"),
        ("_t_next", "i"),
    )

    def _resize(conn: Connection, size: int, cap: int) -> None:
        """Give ``conn`` a slot pool of ``cap`` slots that starts with the
        first ``size`` slots of the old one (in C: one PyMem_Malloc'ed block;
        ``cap`` 0 frees it)."""
        for name, code in _SLOT_ARRAYS:
            old = getattr(conn, name) if size else None
            setattr(conn, name, _grown(old, code, size, cap))


class Connection:
    """One direction pair of the game's reliable command stream with one peer.

    ``my_id`` is our slot (the sender byte we write; it can be set once
    later, as a client does from the TOC), ``peer_id`` the peer's:
    a received command whose sender byte names another slot is ignored, as
    the game does; delivered commands are as decoded (``sender``
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
    ``max_skip_events`` caps the :class:`SerialSkipped` events kept until
    :meth:`events` (later ones are counted in ``skip_events_dropped``).
    ``peer_window`` is the most commands the peer keeps unacknowledged
    (the game's limit, 1024, by default): an ack bitmap bit is written only
    where the game's reader cannot take it for a serial in that reach that
    was not received (see ``docs/avara.md``; below 1024, a block the peer
    reads late, after a later one, can still alias). ``peer_lead`` (mean round
    trips, e.g. 2.0; default None: no such bound) also bounds it by time: the
    peer sends at most one command a frame, and reads our block within
    ``peer_lead`` mean round trips of sending its newest command we have (plus
    the time that command has waited here); with it, commands received after a
    hole are acknowledged as the game's own blocks do, where the bound holds.
    ``latency_tolerance`` is the
    game's ``latencyTolerance`` (classic 64 ms frames, 0..8) that sets
    ``urgent_retransmit_time``; the application keeps it current.
    ``first_receive_serial`` is where the peer's stream starts (a server
    that consumed a client's login expects 2). ``codec`` is accepted for
    compatibility and ignored: the connection reads and writes datagrams
    with the codec's primitives.
    """

    # the transmit queue's slot pool: array.arrays here; in the compiled twin C
    # pointers into one PyMem_Malloc'ed block (``_resize``, freed by __dealloc__)
    _t_serial: array[int]
    _t_command: array[int]
    _t_p1: array[int]
    _t_p2: array[int]
    _t_p3: array[int]
    _t_flags: array[int]
    _t_size: array[int]
    _t_send_count: array[int]
    _t_urgent: array[int]
    _t_sender: array[int]
    _t_birth: array[float]
    _t_next_send: array[float]
    _t_prev: array[int]
    _t_next: array[int]

    if cython.compiled:  # the C slot pool's life cycle (dropped from the pure twin)

        def __cinit__(self) -> None:
            # an empty pool, no slot: a Connection whose __init__ never ran
            # has nothing to index and raises in _resize when asked to grow
            self._head = self._tail = self._free = -1
            self._busy = Lock()

        def __dealloc__(self) -> None:
            _resize(self, 0, 0)

    def __init__(
        self,
        *,
        my_id: int = 1,
        peer_id: int = 0,
        now: float = 0.0,
        version: int = DEFAULT_VERSION,
        frame_time: float = 16.0,
        cram_data: int = 3,
        peer_cram_data: int = 0,
        skip_after: int | bool | None = True,
        max_resends_without_receive: int | None = MAX_RESENDS_WITHOUT_RECEIVE,
        first_receive_serial: int = 0,
        max_skip_events: int = MAX_SKIP_EVENTS,
        peer_window: int = MAX_TRANSMIT_QUEUE,
        peer_lead: float | None = None,
        latency_tolerance: float = 0.0,
        codec: object = None,
    ) -> None:
        self._busy = Lock()  # held by the thread inside an entry point (_enter)
        if not _fits(my_id, -128, 127) or not _fits(peer_id, -128, 127):
            raise ValueError(f"slot ids {my_id!r}, {peer_id!r}: each must fit a signed byte")
        if not _fits(version, 0, 0xFFFF):
            raise ValueError(f"version {version!r} outside 0..65535")
        if not 1.0 <= frame_time <= 10_000.0:
            raise ValueError(f"frame_time {frame_time!r} outside 1..10000 ms")
        check_time(now)
        if not _fits(max_skip_events, 0, 0x7FFFFFFF):
            raise ValueError(f"max_skip_events {max_skip_events!r} outside 0..2**31-1")
        if not _fits(peer_window, 1, _MAX_REACH // 2):
            raise ValueError(f"peer_window {peer_window!r} outside 1..{_MAX_REACH // 2}")
        self._peer_window = peer_window
        if peer_lead is None:
            self._peer_lead = -1.0
        elif isinstance(peer_lead, (int, float)) and 0.0 <= peer_lead <= 100.0:
            self._peer_lead = float(peer_lead)
        else:
            raise ValueError(f"peer_lead {peer_lead!r} outside 0..100 (or None)")
        self._latency_tolerance = 0.0
        self.latency_tolerance = latency_tolerance
        self._max_skip_events = max_skip_events
        self.skip_events_dropped = 0
        self._my_id = my_id
        self._my_id_set = False
        self.peer_id = peer_id
        self.version = version
        self.cram_data = cram_data
        self.peer_cram_data = peer_cram_data
        self.frame_time = frame_time
        fps_scale = frame_time / 64.0
        self._fps_scale = fps_scale
        if skip_after is True:
            skip_after = int(4 / fps_scale)
        # at least 1: with 0 the rule would skip forever
        self._skip = -1 if skip_after is None or skip_after is False else max(1, int(skip_after))
        self._urgent_resend = 2 * frame_time / 1000.0
        self._resend_cap = (
            _INF if max_resends_without_receive is None else float(max_resends_without_receive)
        )
        self._crc_seed = crc16(version.to_bytes(2, "little"), 0, 2, 0)
        self._out = bytearray(_OUT_SIZE)  # the datagram being written
        self._picked = list(range(_MAX_PICKS))  # the slots packed into it (scratch)
        # sending side: the transmit queue, slots linked in queue order
        self._serial = 0
        self._max_valid = 0xFFFE
        self._nrwr = 0  # resends without receive
        self._valid_time = float(now)
        self.retransmit_time = INITIAL_RETRANSMIT_TIME
        # FreshClient (CUDPConnection.cpp:859-860): 2 frames, urgentResendTime
        self.urgent_retransmit_time = self._urgent_resend
        self.mean_round_trip = INITIAL_ROUND_TRIP_TIME
        self._var_round_trip = INITIAL_ROUND_TRIP_VAR
        self._cap = 0
        self._count = 0
        self._head = self._tail = self._free = -1
        self._t_data: list[bytes] = []
        self._grow()
        # receiving side
        self._receive_serial = first_receive_serial & 0xFFFF
        self._rxq: dict[int, Command] = {}
        self._top = (self._receive_serial - 2) & 0xFFFF  # the newest serial received
        self._top_time = float(now)  # when it arrived
        self._have_to_send_ack = True
        self._next_ack_time = now + _ACK_DELAY
        self._events: list[SerialSkipped | PeerLost] = []
        self.lost: PeerLost | None = None
        self._dl_stale = True
        self._dl_exact = _INF
        self._dl_lower = _INF
        self.total_sent = 0  # commands written (``totalSent``), resends included
        self.total_resent = 0  # of which resends (``totalResent``)
        self.datagrams_received = 0  # datagrams taken (checksum right, not a punch)

    # -- state ------------------------------------------------------------

    @property
    def my_id(self) -> int:
        """Our slot: the sender byte written with the commands queued from now on."""
        return self._my_id

    @my_id.setter
    def my_id(self, value: int) -> None:
        # A game client logs in as slot -1 and takes its slot from the TOC:
        # commands queued before keep their sender byte (as the game's packets
        # keep theirs), and from now on carry it (the game writes the byte
        # whenever it differs from its own id).
        if not _fits(value, -128, 127):
            raise ValueError(f"slot id {value!r} must fit a signed byte")
        self._enter()
        try:
            self._set_my_id(value)
        finally:
            self._busy.release()

    def _set_my_id(self, value: int) -> None:
        if value == self._my_id:
            return
        if self._my_id_set:
            raise LocalProtocolError(
                f"my_id is already set to {self._my_id} (it can be set once)", protocol="avara"
            )
        self._my_id_set = True
        self._my_id = value
        slot = self._head
        while slot >= 0:
            if self._t_sender[slot] != value and not self._t_flags[slot] & 0x80:
                self._t_flags[slot] |= 0x80
                self._t_size[slot] += 1
            slot = self._t_next[slot]
        self._dl_stale = True

    @property
    def latency_tolerance(self) -> float:
        """The game's ``latencyTolerance`` (classic 64 ms frames, 0..8): it
        sets ``urgent_retransmit_time`` at the next timed ack."""
        return self._latency_tolerance

    @latency_tolerance.setter
    def latency_tolerance(self, value: float) -> None:
        if not (isinstance(value, (int, float)) and 0.0 <= value <= 8.0):
            raise ValueError(f"latency_tolerance {value!r} outside 0..8 frames")
        self._latency_tolerance = float(value)

    @property
    def peer_window(self) -> int:
        """The most commands the peer is taken to keep unacknowledged."""
        return self._peer_window

    @property
    def peer_lead(self) -> float | None:
        """The time bound on what the peer holds, in mean round trips (None: none)."""
        return None if self._peer_lead < 0 else self._peer_lead

    @property
    def skip_after(self) -> int | None:
        """Queued commands that make the receiver give up a missing serial."""
        return None if self._skip < 0 else self._skip

    @property
    def max_skip_events(self) -> int:
        """SerialSkipped events kept at most until :meth:`events` takes them."""
        return self._max_skip_events

    @property
    def max_resends_without_receive(self) -> int | None:
        """The resend cap while nothing is heard from the peer (``None``: none)."""
        cap = self._resend_cap
        return None if cap == _INF else int(cap)

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
        return self._count

    @property
    def unacked_serials(self) -> tuple[int, ...]:
        """Serials of the transmit queue, in queue order (resent ones last)."""
        out = []
        self._enter()
        slot = self._head
        while slot >= 0:
            out.append(self._t_serial[slot])
            slot = self._t_next[slot]
        self._busy.release()
        return tuple(out)

    @property
    def receive_queue(self) -> tuple[int, ...]:
        """Serials waiting for a missing one, in serial order."""
        self._enter()
        try:
            rs = self._receive_serial
            return tuple(sorted(self._rxq, key=lambda s: (s - rs) & 0xFFFF))
        finally:
            self._busy.release()

    def ack_block(self, now: float | None = None) -> tuple[int, int | None]:
        """``(ack, bitmap)`` as a datagram written at ``now`` would carry them
        (default: the time of the last datagram received)."""
        t = self._valid_time if now is None else _time(now)
        self._enter()
        try:
            base = (self._receive_serial - 2) & 0xFFFF
            bits = self._bitmap(t) if self._rxq else 0
        finally:
            self._busy.release()
        if bits:
            return base + 1, bits
        return base, None

    def events(self) -> list[SerialSkipped | PeerLost]:
        """Events since the last call: :class:`SerialSkipped`, :class:`PeerLost`."""
        self._enter()
        out = self._events
        self._events = []
        self._busy.release()
        return out

    def _enter(self) -> None:
        """Claim the connection for this call, or raise RuntimeError (changing
        nothing) if another thread is inside it."""
        if not self._busy.acquire(False):
            raise RuntimeError(
                "this Connection is already in use, by another thread (use one connection "
                "from one thread at a time: one per peer, or behind a lock) or by the call "
                "this one was made from"
            )

    # -- the transmit queue: a pool of slots in parallel arrays ------------

    def _grow(self) -> None:
        """Double the slot pool (the new slots go on the free list)."""
        size = self._cap
        cap = 2 * size if size else 8
        _resize(self, size, cap)
        self._t_data.extend([b""] * (cap - size))
        for slot in range(cap - 1, size - 1, -1):
            self._t_next[slot] = self._free
            self._free = slot
        self._cap = cap

    def _append(self, slot: int) -> None:
        """Put ``slot`` at the end of the queue."""
        tail = self._tail
        self._t_prev[slot] = tail
        self._t_next[slot] = -1
        if tail < 0:
            self._head = slot
        else:
            self._t_next[tail] = slot
        self._tail = slot
        self._count += 1

    def _unlink(self, slot: int) -> None:
        """Take ``slot`` out of the queue (it stays allocated)."""
        prev = self._t_prev[slot]
        nxt = self._t_next[slot]
        if prev < 0:
            self._head = nxt
        else:
            self._t_next[prev] = nxt
        if nxt < 0:
            self._tail = prev
        else:
            self._t_prev[nxt] = prev
        self._count -= 1

    def _release(self, slot: int) -> None:
        """Return an unlinked slot to the pool."""
        self._t_data[slot] = b""
        self._t_next[slot] = self._free
        self._free = slot

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
        reads the wire byte, a quirk of the game).
        """
        if self.lost is not None:
            raise LocalProtocolError(
                f"send on a lost connection ({self.lost.reason})", protocol="avara"
            )
        if not _fits(command, -128, 127):
            raise EncodeError(f"command {command!r} outside -128..127", protocol="avara")
        if not _fits(p1, -128, 127):
            raise EncodeError(f"p1 {p1!r} outside -128..127", protocol="avara")
        if not _fits(p2, -0x8000, 0x7FFF):
            raise EncodeError(f"p2 {p2!r} outside -32768..32767", protocol="avara")
        if not _fits(p3, -0x80000000, 0x7FFFFFFF):
            raise EncodeError(f"p3 {p3!r} outside -2147483648..2147483647", protocol="avara")
        if type(data) is not bytes:
            raise EncodeError(f"data must be bytes, not {type(data).__name__}", protocol="avara")
        if len(data) > _MAX_DATA:
            raise EncodeError(f"{len(data)} data bytes, more than {MAX_DATA_LEN}", protocol="avara")
        t = _time(now)
        self._enter()
        try:
            return self._queue(command, p1, p2, p3, data, urgent, t)
        finally:
            self._busy.release()

    def _queue(  # noqa: PLR0917
        self, command: int, p1: int, p2: int, p3: int, data: bytes, urgent: object, now: float
    ) -> int:
        """Put a checked command (``now`` checked too) at the end of the transmit queue."""
        n = len(data)
        serial = self._serial
        # the writer's flag rules; the sender byte while serial <= 100
        flags = writer_flags(False, p3, p2, n, p1, (_SETTLE - serial) & 0xFFFF <= 0x7FFF)
        if self._free < 0:
            self._grow()
        slot = self._free
        self._free = self._t_next[slot]
        self._t_serial[slot] = serial
        self._t_command[slot] = command
        self._t_p1[slot] = p1
        self._t_p2[slot] = p2
        self._t_p3[slot] = p3
        self._t_flags[slot] = flags
        self._t_size[slot] = _command_size(flags, n)
        self._t_send_count[slot] = 0
        self._t_urgent[slot] = 1 if urgent else 0
        self._t_sender[slot] = self._my_id
        self._t_birth[slot] = now
        self._t_next_send[slot] = now
        self._t_data[slot] = data
        self._append(slot)
        self._serial = (serial + _STEP) & 0xFFFF
        self._dl_stale = True
        return serial

    def _find_best(self, now: float, cram_time: float, urgency: float) -> int:
        """``FindBestPacket``: the slot to put next, unlinked, or -1."""
        allow = self._nrwr < self._resend_cap
        max_valid = self._max_valid
        slot = self._head
        if self._count == 1:  # the usual case: one new command
            if now < self._t_next_send[slot] or not (allow or not self._t_send_count[slot]):
                return -1
            d = _diff(self._t_serial[slot], max_valid)
            if d > _WINDOW:
                return -1
            self._unlink(slot)
            if d > 0:  # due, so due with any cram time and urgency too
                return slot
            self._validated(slot, now)
            self._release(slot)
            return -1
        next_send = self._t_next_send
        send_count = self._t_send_count
        serial = self._t_serial
        urgent = self._t_urgent
        nxt = self._t_next
        # the first due command (resends only while allowed) ...
        while slot >= 0 and not (now >= next_send[slot] and (allow or not send_count[slot])):
            slot = nxt[slot]
        # ... then the first one not more than SEND_WINDOW commands past the ack
        while slot >= 0 and _diff(serial[slot], max_valid) > _WINDOW:
            slot = nxt[slot]
        if slot < 0:
            return -1
        best = slot
        best_time = next_send[slot] - urgency if urgent[slot] else next_send[slot]
        slot = nxt[slot]
        while slot >= 0:  # (the window test last: it is the dearest in the pure twin)
            t = next_send[slot] - urgency if urgent[slot] else next_send[slot]
            if (
                best_time > t
                and (allow or not send_count[slot])
                and _diff(serial[slot], max_valid) <= _WINDOW
            ):
                best_time = t
                best = slot
            slot = nxt[slot]
        if _diff(serial[best], max_valid) > 0:
            if best_time - cram_time - now <= 0:
                self._unlink(best)
                return best
            return -1
        self._unlink(best)  # acked already: GetOutPacket validates it
        self._validated(best, now)
        self._release(best)
        return -1

    def _sent(self, slot: int, now: float) -> None:
        """``GetOutPacket``'s bookkeeping for a command taken to be written."""
        self._have_to_send_ack = False
        self._next_ack_time = now + _ACK_DELAY + self.retransmit_time
        self.total_sent += 1
        if self._t_send_count[slot]:
            self.total_resent += 1
            self._nrwr += 1

    def datagrams_to_send(self, now: float) -> list[bytes]:
        """Every datagram due at ``now`` (usually none or one)."""
        t = _time(now)
        self._enter()
        try:
            if self.lost is not None:
                return []
            if not self._dl_stale and t < self._dl_lower:
                return []  # nothing can be due before the cached lower bound
            return self._transmit(t)
        finally:
            self._busy.release()

    def _transmit(self, now: float) -> list[bytes]:
        self._dl_stale = True
        out: list[bytes] = []
        if self._count and now - self._valid_time > _ULP_TIMEOUT and self._oldest_check(now):
            return out
        buf = self._out
        picked = self._picked
        while True:
            if self._count > _MAX_QUEUE:
                self._kill("transmit queue overflow", now)
                return out
            first = self._find_best(now, 0.0, 0.0) if self._count else -1
            if first >= 0:
                self._sent(first, now)
            elif not (self._have_to_send_ack and self._next_ack_time <= now):
                return out
            # WriteAcks: the cumulative ack, or base + 1 and the bitmap
            bits = self._bitmap(now) if self._rxq else 0
            if bits:
                pos = write_acks(buf, ((self._receive_serial - 2) & 0xFFFF) + 1, bits)
            else:
                pos = write_acks(buf, (self._receive_serial - 2) & 0xFFFF, 0)
            if first < 0:  # an ACK-only datagram
                self._have_to_send_ack = False
                self._next_ack_time = now + _ACK_DELAY + self.retransmit_time
                out.append(self._signed(pos))
                continue
            cram = min(self.cram_data, self.peer_cram_data)
            early = cram != 0
            cram -= 1
            picked[0] = first
            count = 1
            if self._count:  # something else might be packed: keep going while < 64 bytes
                length = pos + self._t_size[first]
                while length < _CRAM_PACK:
                    slot = self._find_best(now, _CRAM_TIME if cram > 0 else 0.0, _CRAM_TIME)
                    cram -= 1
                    if slot < 0:
                        break
                    self._sent(slot, now)
                    picked[count] = slot
                    count += 1
                    length += self._t_size[slot]
            for i in range(count):
                pos = self._write_command(pos, picked[i])
            out.append(self._signed(pos))
            rest = self._count
            rt = self.retransmit_time
            for i in range(count - 1, -1, -1):  # re-queued last-written first
                slot = picked[i]
                # after the first write the in-memory flags are the wire flags:
                # "urgent" now means p1 != 0 (a quirk of the game)
                if self._t_send_count[slot] == 0:
                    self._t_birth[slot] = now
                    if early and self._t_p1[slot]:
                        self._t_next_send[slot] = now + self.urgent_retransmit_time
                        self._t_urgent[slot] = 1
                    else:
                        self._t_next_send[slot] = now + rt
                        self._t_urgent[slot] = 0
                else:
                    self._t_next_send[slot] = now + rt
                    self._t_urgent[slot] = 0
                self._t_send_count[slot] += 1  # a short in memory, its low byte on the wire
                self._append(slot)
            if not rest and self.urgent_retransmit_time > 0 and rt > 0:
                return out  # only the commands just sent are queued: none is due

    def _write_command(self, pos: int, slot: int) -> int:
        """Write the command in ``slot`` at ``pos`` of the datagram buffer."""
        return write_command(
            self._out,
            pos,
            True,
            self._t_serial[slot],
            self._t_send_count[slot],  # a short in memory, its low byte on the wire
            self._t_flags[slot],
            self._t_command[slot],
            0,
            self._t_p3[slot],
            self._t_p2[slot],
            self._t_p1[slot],
            self._t_sender[slot],
            self._t_data[slot],
        )

    def _signed(self, size: int) -> bytes:
        """The datagram buffer's first ``size`` bytes with their CRC."""
        out = self._out
        crc = crc16(out, 2, size, self._crc_seed)
        out[0] = crc & 0xFF
        out[1] = crc >> 8
        return _head(out, size)

    def _oldest_check(self, now: float) -> bool:
        if now - self._valid_time <= _ULP_TIMEOUT:
            return False
        slot = self._head
        while slot >= 0:
            if self._t_send_count[slot] and now - self._t_birth[slot] > _ULP_TIMEOUT:
                self._kill("no acknowledgement for 120 s", now)
                return True
            slot = self._t_next[slot]
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
        self._enter()
        try:
            if self._dl_stale:
                self._compute_deadlines()
            at = self._dl_exact
        finally:
            self._busy.release()
        return None if at == _INF else at

    def _compute_deadlines(self) -> None:
        self._dl_stale = False
        if self.lost is not None:
            self._dl_exact = self._dl_lower = _INF
            return
        best = lower = _INF
        if self._count:
            if self._count > _MAX_QUEUE:
                self._dl_exact = self._dl_lower = self._valid_time  # overdue: kill at once
                return
            allow = self._nrwr < self._resend_cap
            max_valid = self._max_valid
            oldest = _INF
            next_send = self._t_next_send
            send_count = self._t_send_count
            birth = self._t_birth
            serial = self._t_serial
            nxt = self._t_next
            slot = self._head
            while slot >= 0:  # (comparisons, not min(): the pure twin walks 1024 slots)
                t = next_send[slot]
                if send_count[slot]:
                    if birth[slot] < oldest:  # noqa: PLR1730
                        oldest = birth[slot]
                    if not allow:
                        slot = nxt[slot]
                        continue
                if t < lower:  # noqa: PLR1730
                    lower = t
                if t < best and _diff(serial[slot], max_valid) <= _WINDOW:
                    best = t
                slot = nxt[slot]
            if oldest != _INF:
                kill = max(oldest, self._valid_time) + _ULP_TIMEOUT + 1e-6
                best = min(best, kill)
                lower = min(lower, kill)
        if self._have_to_send_ack:
            best = min(best, self._next_ack_time)
            lower = min(lower, self._next_ack_time)
        self._dl_exact = best
        # nothing can happen before the first command the first scan may pick
        self._dl_lower = lower

    # -- receiving --------------------------------------------------------

    def receive_datagram(self, data: bytes, now: float) -> list[Command]:
        """Take one datagram from the peer; return the commands it released,
        in serial order (the game's ``ReceivedGoodPacket`` calls).

        Datagrams the game drops (bad checksum, shorter than 4 bytes, 7-byte
        hole punches) give ``[]``. A command that runs past the end of the
        datagram or has a bad dataLen ends it; the commands before it still
        count (as in the game).
        """
        t = _time(now)
        if self.lost is not None:
            return []
        if type(data) is not bytes:
            data = memoryview(data).tobytes()
        self._enter()
        try:
            return self._receive(data, t)
        finally:
            self._busy.release()

    def _receive(self, data: bytes, now: float) -> list[Command]:
        p = data  # the bytes' buffer in the compiled twin
        size = len(data)
        delivered: list[Command] = []
        if size == _PUNCH or size < 4:
            return delivered
        if crc16(p, 2, size, self._crc_seed) != p[0] | p[1] << 8:
            return delivered
        self.datagrams_received += 1
        self._dl_stale = True
        # ValidateReceivedPackets: the bitmap first, then the cumulative ack
        self._nrwr = 0
        ack = p[2] | p[3] << 8
        pos = 4
        if ack & 1:
            ack &= 0xFFFE
            if size < 8:
                pos = size  # a truncated bitmap ends the datagram
            else:
                bits = p[6] | p[7] << 8  # unsigned in the compiled twin
                bits = bits << 16 | p[4] | p[5] << 8
                pos = 8
                if bits and self._count:
                    self._bitmap_acks(ack, bits, now)
        self._valid_time = now
        max_valid = self._max_valid
        if ack != max_valid and (ack - max_valid) & 0xFFFF <= 0x7FFF:
            self._max_valid = ack
            if self._count:
                self._cumulative_acks(ack, now)
        if pos >= size:
            return delivered
        rs = self._receive_serial
        rxq = self._rxq
        peer_id = self.peer_id
        while pos < size:  # the game's command loop
            c = parse_command(p, size, pos, True)
            if c.end < 0:
                break  # it runs past the end or has a bad dataLen: the game stops here
            pos = c.end
            self._have_to_send_ack = True
            if c.flags & 0x80 and c.sender != peer_id:
                continue  # not from this peer's slot: the game ignores it
            serial = c.serial
            if serial & 1:
                # serials are even: an odd one could never be delivered,
                # would stay queued for good (the skip rule would loop on it) and
                # would set the bitmap bit of an even serial never received
                continue
            if _diff(serial, self._top) > 0:
                self._top = serial
                self._top_time = now
            if serial == rs:
                delivered.append(command_object(c, p))
                rs = (rs + 2) & 0xFFFF
                if rxq:
                    while rs in rxq:
                        delivered.append(rxq.pop(rs))
                        rs = (rs + 2) & 0xFFFF
            elif (rs - serial) & 0xFFFF <= 0x7FFF:
                continue  # already delivered: a duplicate
            elif serial in rxq:
                continue  # already queued: a duplicate
            else:
                rxq[serial] = command_object(c, p)
                skip = self._skip
                if skip >= 0 and len(rxq) >= skip:
                    # ReceivedPacket(nullptr): one serial given up per command queued
                    # past the limit (a loop here let one datagram of commands far
                    # ahead walk half the serial space)
                    if len(self._events) < self._max_skip_events:
                        self._events.append(SerialSkipped(rs))
                    else:
                        self.skip_events_dropped += 1
                    rs = (rs + 2) & 0xFFFF
                    while rs in rxq:
                        delivered.append(rxq.pop(rs))
                        rs = (rs + 2) & 0xFFFF
            if c.command == _CONTROL and c.p1 == 0:
                self.peer_cram_data = c.p2  # udpCramInfo: the peer's cramData
        self._receive_serial = rs
        return delivered

    def _bitmap(self, now: float) -> int:
        """The ack bitmap to write at ``now`` (0: the cumulative ack alone).

        The game's reader acks every queued serial whose bit
        ``(((sn - base) >> 1) - 1) & 31`` is set (x86 masks the shift count), so
        bit k stands for every serial base + 2(k+1) + 64j it holds past the base.
        Bit k is written only if some such serial is in the receive queue and
        every one the peer may hold is: those up to the nearer of two bounds on
        what it holds when it reads the block (``_reach``).
        """
        rxq = self._rxq
        base = (self._receive_serial - 2) & 0xFFFF
        reach = self._reach(base, now)
        one = 1  # unsigned in the compiled twin: bit 31 is a plain bit
        bits = 0
        for s in rxq:
            d = _diff(s, base)
            if d > 0:
                bits |= one << (((d >> 1) - 1) & 31)
        for k in range(32):
            if bits >> k & 1:
                d = 2 * (k + 1)
                while d <= reach:
                    if (base + d) & 0xFFFF not in rxq:
                        bits &= ~(one << k)
                        break
                    d += 64
        return bits

    def _reach(self, base: int, now: float) -> int:
        """How far past ``base`` the peer may hold serials when it reads a block
        written at ``now``: at most ``peer_window`` commands (plus those in our
        receive queue, which it may have dropped as acked), and, with
        ``peer_lead``, no further than the serials it sends in ``peer_lead``
        mean round trips plus the time since our newest serial arrived, at one
        a frame past that serial."""
        reach = 2 * (self._peer_window + len(self._rxq))
        if self._peer_lead >= 0:
            lead = now - self._top_time + self._peer_lead * self.mean_round_trip
            frames = _trunc(lead * 1000.0 / self.frame_time) + 1
            frames = min(frames, _MAX_REACH)
            ahead = _diff(self._top, base) + 2 * frames
            reach = min(reach, ahead)
        reach = min(reach, _MAX_REACH)
        return reach

    def _bitmap_acks(self, base: int, bits: int, now: float) -> None:
        """Drop the commands the ack bitmap reports (bits 1..31: base+4 .. base+64).

        The game's writer sets bit k also for a serial base + 2(k+1) + 64j it
        holds (its shift wraps on x86), so a bit counts only where no serial
        we have sent aliases to it: every serial the peer holds is one we sent.
        """
        slot = self._head
        # past ``reach`` serials past base, a bit could stand for an alias
        reach = _diff((self._serial - 2) & 0xFFFF, base) - _NO_BITMAP_LIMIT
        while slot >= 0:
            nxt = self._t_next[slot]
            d = _diff(self._t_serial[slot], base)
            # bit 0 (base + 2, the serial the peer is missing) is skipped too:
            # only a game's wrapped shift sets it
            if reach < d <= _NO_BITMAP_LIMIT and d >= 4 and bits >> ((d >> 1) - 1) & 1:
                self._unlink(slot)
                self._validated(slot, now)
                self._release(slot)
            slot = nxt

    def _cumulative_acks(self, ack: int, now: float) -> None:
        """``RunValidate``: drop every command with serial <= ack."""
        slot = self._head
        while slot >= 0:
            nxt = self._t_next[slot]
            if (ack - self._t_serial[slot]) & 0xFFFF <= 0x7FFF:
                self._unlink(slot)
                self._validated(slot, now)
                self._release(slot)
            slot = nxt

    def _validated(self, slot: int, when: float) -> None:
        """``ValidatePacket``: an acked command updates the RTT statistics."""
        rtt = when - self._t_birth[slot]
        if self._max_valid <= 10:  # as a u16: the first acks (and again after a wrap)
            # prime the mean with the best early round trip, the variance capped
            if rtt < self.mean_round_trip:
                self.mean_round_trip = rtt
                self._var_round_trip = min(rtt * rtt, _INITIAL_VAR)
            return
        command = self._t_command[slot]
        if command == _KEY_AND_MOUSE:
            weight = self._fps_scale
        elif command == _PING and self._t_p3[slot] > 0:
            weight = _PING_WEIGHT
            # long roundTrip *= 0.82: whole ms (the nanosecond absorbs a float
            # clock's error on a whole-ms round trip)
            rtt = _trunc(rtt * 1000.0 * _PING_SCALE + 1e-6) / 1000.0
        else:
            return  # CommandMultiplierForStats: only these two are timed
        mean = self.mean_round_trip
        var = self._var_round_trip
        diff = rtt - mean
        if command == _PING and diff > _CLASSIC_FRAME:
            # an outlier ping: de-weighted, not dropped
            reduction = diff * diff / var if var > 0 else _INF
            reduction = max(reduction, 4.0)
            weight /= reduction
        alpha = weight / _RTT_SMOOTH
        inc = alpha * diff
        mean += inc
        var = (1 - alpha) * (var + diff * inc)
        self.mean_round_trip = mean
        self._var_round_trip = var
        # the game counts whole milliseconds: (long) truncations, then clamps
        spread = _trunc(2500.0 * _sqrt(var)) if var > 0 else 0
        rt_ms = _trunc(mean * 1000.0 + spread)
        rt = rt_ms / 1000.0
        floor = self._urgent_resend
        if rt < floor:
            rt = floor
        elif rt > _MAX_RETRANSMIT_TIME:
            rt = _MAX_RETRANSMIT_TIME
        self.retransmit_time = rt
        # resend an urgent command so that it can still arrive 16 ms before
        # twice the latency tolerance, within [2 frames, retransmitTime]
        urgent_ms = _trunc(
            (2.0 * self._latency_tolerance * _CLASSIC_FRAME - mean - _RESEND_BUFFER) * 1000.0
        )
        urgent = urgent_ms / 1000.0
        urgent = max(urgent, floor)
        self.urgent_retransmit_time = urgent if urgent < rt else rt
