# cython: annotation_typing=False, freethreading_compatible=True, auto_pickle=False
# Free-threading compatible: a Circuit swaps the Python objects its C fields hold
# (the outgoing list, the event list), so every entry point that touches them
# first claims the circuit's busy lock (``_enter``): a second thread entering one
# Circuit at once gets a RuntimeError, never a half-changed circuit or freed memory.
"""The LLUDP circuit, both twins in one source.

Run as Python, this is the pure twin; Cython compiles the same file, typed by
``_circuit_c.pxd``, into ``gamecodec.lludp._circuit_c``. The public
documentation is in :mod:`gamecodec.lludp.circuit`, which picks the twin; the
events and constants both twins use live in :mod:`gamecodec.lludp._models`,
and the codec a circuit uses by default is the active one
(:mod:`gamecodec.lludp._impl`). The LL viewer sources each rule comes from are
named beside it below.

The header (flags, sequence) is read from the raw bytes, so a reliable
packet seen before is acked again without being decoded. The codec's
``decode`` runs once per new datagram and its ``encode_packet`` once per sent
message, writing the header, the body and the appended acks in one go (the
circuit reads back from the last byte how many acks fitted). Reliable packets
waiting for their ack are a dict keyed by sequence number (insertion order:
the oldest first) holding the wire bytes as first sent; a deque of their
sequence numbers in resend-time order, cleaned lazily of acked ones, gives
the next one due. Reliable sequence numbers received are a set, with a deque
in arrival order to forget the oldest first.
"""

from __future__ import annotations

import struct
from collections import deque
from threading import Lock
from types import ModuleType

from gamecodec._clock import MAX_TIME, check_time
from gamecodec.errors import DecodeError, EncodeError, LocalProtocolError
from gamecodec.lludp import _impl
from gamecodec.lludp._errors import PROTOCOL
from gamecodec.lludp._models import (
    ACK_COLLECT_TIME,
    AVERAGED_PING_ALPHA,
    AVERAGED_PING_MAX,
    AVERAGED_PING_MIN,
    CIRCUIT_TIMEOUT,
    COLLECT_ACK_TIME_MAX,
    DUPLICATE_WINDOW,
    INITIAL_PING,
    MAX_APPENDED_ACKS,
    MAX_BAD_DATAGRAMS,
    MAX_DATAGRAM,
    MAX_OUT_PACKET_ID,
    MAX_PACKET_ACK_IDS,
    MAX_PENDING_ACKS,
    MAX_RESENDS,
    MINIMUM_RELIABLE_TIMEOUT,
    MTU,
    PING_INTERVAL,
    RELIABLE_TIMEOUT_FACTOR,
    BadDatagram,
    CircuitEvent,
    Message,
    MessageDropped,
    PeerLost,
    StrictDecodeFailed,
)
from gamecodec.lludp.template import Template, resolve_template

__all__ = ["Circuit"]

_MASK = MAX_OUT_PACKET_ID - 1
_HALF = MAX_OUT_PACKET_ID >> 1
_ZEROCODED = 0x80
_RELIABLE = 0x40
_RESENT = 0x20
_ACK = 0x10
_CONTROL = frozenset(("PacketAck", "StartPingCheck", "CompletePingCheck"))
_INF = float("inf")
_MAX_TIME = MAX_TIME  # (these copies are C values compiled; the public names stay objects)
_MAX_DATAGRAM = MAX_DATAGRAM
_HEAD = struct.Struct(">BI")
_PACKET_ACK_HEAD = b"\x00\xff\xff\xff\xfb"  # extra length 0, Fixed number 0xFFFFFFFB
_START_PING_HEAD = b"\x00\x01"  # extra length 0, High 1
_COMPLETE_PING_HEAD = b"\x00\x02"  # extra length 0, High 2
_PING_BODY = struct.Struct("<BI")


def _seconds(now: float) -> float:
    """``now``, refused by :func:`check_time` unless it is a time the timers can use."""
    if type(now) is float:
        t = now  # a C double when compiled: the range check below is two compares
        if -_MAX_TIME <= t <= _MAX_TIME:
            return t
    check_time(now)
    return now


def _older(a: int, b: int) -> bool:
    """Sequence ``a`` comes before ``b`` (24-bit wrap-around)."""
    d = (b - a) & _MASK
    return 0 < d < _HALF


def _ack_tail(acks: list[int], count: int) -> bytes:
    """The first ``count`` owed ids as appended acks: big-endian u32s in
    queue order (LL's ``sendMessage``), then the u8 count."""
    return struct.pack(f">{count}IB", *acks[:count], count)


def _packet_ack_body(ids: list[int]) -> bytes:
    """A PacketAck after its 5 header bytes: the number, then the Packets
    count and the ids (u32, little-endian)."""
    return _PACKET_ACK_HEAD + struct.pack(f"<B{len(ids)}I", len(ids), *ids)


class _Pending:
    """A reliable packet waiting for its ack: the wire bytes as first sent,
    where its appended acks begin, when it is resent next and how often it was."""

    __slots__ = ("end", "exp", "resends", "wire")

    wire: bytes
    end: int
    exp: float
    resends: int


def _pending(wire: bytes, end: int, exp: float) -> _Pending:
    p = _Pending.__new__(_Pending)
    p.wire = wire
    p.end = end
    p.exp = exp
    p.resends = 0
    return p


class Circuit:
    """One LLUDP circuit to one peer, Sans-IO: the LL viewer's sequence
    numbers, acks, resends and pings (:mod:`gamecodec.lludp.circuit` says
    what it does, rule by rule).

    Give it every datagram from the peer (:meth:`receive_datagram`, which
    returns the messages delivered), send with :meth:`send`, write out what
    :meth:`datagrams_to_send` returns, and call that again at
    :meth:`next_deadline`; :meth:`events` returns the
    :class:`~gamecodec.lludp.MessageDropped`,
    :class:`~gamecodec.lludp.BadDatagram`,
    :class:`~gamecodec.lludp.StrictDecodeFailed` (with ``strict``: a packet
    acked and not delivered, its tolerant decode in it) and
    :class:`~gamecodec.sessions.PeerLost` events. Every method takes ``now``
    in seconds (any monotonic clock). The keyword arguments default to the
    LL viewer's values (the constants of :mod:`gamecodec.lludp.circuit`);
    ``template`` (a :class:`~gamecodec.lludp.Template` or a built-in one's
    name, ``"secondlife"`` or ``"opensim"``) and ``codec`` default to the
    Second Life template and the active codec, ``strict`` and ``max_size`` are the decoder's, and
    ``deliver_control=True`` also returns PacketAck and ping messages.
    """

    def __init__(
        self,
        *,
        now: float = 0.0,
        template: Template | str | None = None,
        codec: ModuleType | None = None,
        strict: bool = False,
        max_size: int = 8192,
        zero_coding: str = "flag",
        ping_interval: float = PING_INTERVAL,
        circuit_timeout: float = CIRCUIT_TIMEOUT,
        reliable_timeout_factor: float = RELIABLE_TIMEOUT_FACTOR,
        minimum_reliable_timeout: float = MINIMUM_RELIABLE_TIMEOUT,
        max_resends: int | None = MAX_RESENDS,
        initial_ping: float = INITIAL_PING,
        ping_alpha: float = AVERAGED_PING_ALPHA,
        ping_min: float = AVERAGED_PING_MIN,
        ping_max: float = AVERAGED_PING_MAX,
        ack_collect_time: float = ACK_COLLECT_TIME,
        max_appended_acks: int = MAX_APPENDED_ACKS,
        mtu: int = MTU,
        duplicate_window: int = DUPLICATE_WINDOW,
        max_pending_acks: int = MAX_PENDING_ACKS,
        max_bad_datagrams: int = MAX_BAD_DATAGRAMS,
        first_sequence: int = 1,
        deliver_control: bool = False,
    ) -> None:
        self._busy = Lock()  # held by the thread inside an entry point (_enter)
        check_time(now)
        if codec is None:
            codec = _impl.codec
        if zero_coding not in ("flag", "smaller"):
            raise ValueError(f"zero_coding must be 'flag' or 'smaller', not {zero_coding!r}")
        if not (ping_interval > 0 and circuit_timeout > 0 and minimum_reliable_timeout >= 0.001):
            raise ValueError(
                "ping_interval and circuit_timeout must be > 0, minimum_reliable_timeout >= 0.001"
            )
        if not reliable_timeout_factor >= 0:
            raise ValueError("reliable_timeout_factor must be >= 0")
        if not (0.0 <= ping_alpha <= 1.0 and 0.0 < ping_min <= ping_max):
            raise ValueError("ping_alpha must be within 0..1, and 0 < ping_min <= ping_max")
        if max_resends is not None and max_resends < 0:
            raise ValueError("max_resends must be >= 0 or None")
        if not 0 <= max_appended_acks <= MAX_APPENDED_ACKS:
            raise ValueError(f"max_appended_acks must be 0..{MAX_APPENDED_ACKS}")
        if duplicate_window < 1:
            raise ValueError("duplicate_window must be >= 1")
        if max_pending_acks < 1 or max_bad_datagrams < 0:
            raise ValueError("max_pending_acks must be >= 1 and max_bad_datagrams >= 0")
        self.template = resolve_template(template)
        self._decode = codec.decode
        self._encode_packet = codec.encode_packet
        self._zero_decode = codec.zero_decode
        self.strict = bool(strict)
        self.max_size = int(max_size)
        self._zero_coding = zero_coding
        self._ping_interval = float(ping_interval)
        self._circuit_timeout = float(circuit_timeout)
        self._reliable_timeout_factor = float(reliable_timeout_factor)
        self._minimum_reliable_timeout = float(minimum_reliable_timeout)
        self._max_resends = -1 if max_resends is None else int(max_resends)
        self._ping_alpha = float(ping_alpha)
        self._ping_min = float(ping_min)
        self._ping_max = float(ping_max)
        self._ack_collect_time = min(max(float(ack_collect_time), 0.0), COLLECT_ACK_TIME_MAX)
        self._max_appended_acks = int(max_appended_acks)
        self.mtu = int(mtu)
        self._duplicate_window = int(duplicate_window)
        self._max_pending_acks = int(max_pending_acks)
        self._max_bad_datagrams = int(max_bad_datagrams)
        self.deliver_control = bool(deliver_control)
        # sending
        self._seq = int(first_sequence) & _MASK
        self._unacked: dict[int, _Pending] = {}
        self._timeline: deque[int] = deque()  # unacked sequences by resend time
        self._last_exp = -_INF
        self._out: list[bytes] = []
        self._out_at = _INF
        # acks owed to the peer
        self._acks: list[int] = []
        self._ack_deadline = _INF
        # duplicate suppression
        self._seen: set[int] = set()
        self._order: deque[int] = deque()  # the same sequences, oldest first
        self._prune_at = -1  # the OldestUnacked of the previous StartPingCheck
        self._ping_in = -1  # the PingID of that StartPingCheck
        # pings and round-trip time (llcircuit.cpp)
        self._ping_id = 0
        self._ping_sent = now
        self._pings_in_transit = 0
        self._next_ping = now + self._ping_interval
        self._last_ping_answer = now
        self.rtt = float(initial_ping)
        self._ping_avg = float(initial_ping)
        self._rto = self._timeout_for(self._ping_avg)
        # state and counters
        self._lost: PeerLost | None = None
        self._events: list[CircuitEvent] = []
        # the earliest timer without the ack flush (a lower bound), and with it
        self._timer_wake = min(self._next_ping, now + self._circuit_timeout)
        self._wake = self._timer_wake
        self.packets_out = 0
        self.packets_in = 0
        self.resent = 0
        self.duplicates = 0
        self.dropped = 0
        self.bad_datagrams_dropped = 0
        self.strict_failures_dropped = 0

    def restart_clock(self, now: float) -> None:
        """Count the ping schedule and the circuit timeout from ``now``: for a
        circuit built before its peer was known (a server endpoint waiting for
        its first client). Only before anything was sent or received."""
        check_time(now)
        self._enter()
        try:
            self._restart_clock(now)
        finally:
            self._busy.release()

    def _restart_clock(self, now: float) -> None:
        if self.packets_in or self.packets_out or self._lost is not None:
            raise LocalProtocolError("restart_clock on a circuit already in use", protocol=PROTOCOL)
        self._ping_sent = now
        self._next_ping = now + self._ping_interval
        self._last_ping_answer = now
        self._timer_wake = min(self._next_ping, now + self._circuit_timeout)
        self._wake = self._timer_wake

    # -- state ------------------------------------------------------------------

    @property
    def max_resends(self) -> int | None:
        """Resends of a reliable packet before it is given up (``None``: never)."""
        return None if self._max_resends < 0 else self._max_resends

    # set at construction only: a timeout of 0 or NaN set later looped the resend timer
    @property
    def zero_coding(self) -> str:
        """``"flag"`` or ``"smaller"``: when sent packets are zero-coded."""
        return self._zero_coding

    @property
    def ping_interval(self) -> float:
        """Seconds between StartPingChecks."""
        return self._ping_interval

    @property
    def circuit_timeout(self) -> float:
        """Seconds without a CompletePingCheck before the peer is lost."""
        return self._circuit_timeout

    @property
    def reliable_timeout_factor(self) -> float:
        """The resend timeout is this times the averaged ping, at least ..."""
        return self._reliable_timeout_factor

    @property
    def minimum_reliable_timeout(self) -> float:
        """... this many seconds."""
        return self._minimum_reliable_timeout

    @property
    def ping_alpha(self) -> float:
        """The averaged ping's weight of a new (lower) round trip."""
        return self._ping_alpha

    @property
    def ping_min(self) -> float:
        """The averaged ping's floor, in seconds."""
        return self._ping_min

    @property
    def ping_max(self) -> float:
        """The averaged ping's cap, in seconds."""
        return self._ping_max

    @property
    def ack_collect_time(self) -> float:
        """Seconds an owed ack waits for a packet to ride on before a PacketAck."""
        return self._ack_collect_time

    @property
    def max_appended_acks(self) -> int:
        """Acks appended to one packet at most."""
        return self._max_appended_acks

    @property
    def duplicate_window(self) -> int:
        """Reliable sequence numbers remembered at most, for duplicates."""
        return self._duplicate_window

    @property
    def max_pending_acks(self) -> int:
        """Acks owed to the peer at most; an ack past it is not queued."""
        return self._max_pending_acks

    @property
    def max_bad_datagrams(self) -> int:
        """BadDatagram events kept at most until :meth:`events` takes them."""
        return self._max_bad_datagrams

    @property
    def max_size(self) -> int:
        """The decoder's cap on a zero-expanded packet, and the largest packet
        :meth:`send` sends, in bytes."""
        return self._max_size

    @max_size.setter
    def max_size(self, value: int) -> None:
        self._max_size = value

    @property
    def template(self) -> Template:
        """The message template the circuit encodes and decodes with."""
        return self._template

    @template.setter
    def template(self, value: Template | str) -> None:
        template = resolve_template(value)
        self._enter()
        self._template = template
        self._busy.release()

    @property
    def mtu(self) -> int:
        """Appended acks keep a datagram within this many bytes."""
        return self._mtu

    @mtu.setter
    def mtu(self, value: int) -> None:
        self._mtu = value
        self._limit = min(max(value, 0), 0xFFFFFFFF)  # encode_packet's range

    @property
    def next_sequence(self) -> int:
        """The sequence number the next packet gets."""
        return self._seq

    @property
    def unacked(self) -> int:
        """Reliable packets sent and not acked yet."""
        return len(self._unacked)

    @property
    def unacked_sequences(self) -> list[int]:
        """Their sequence numbers, oldest first."""
        self._enter()
        try:
            return list(self._unacked)
        finally:
            self._busy.release()

    @property
    def acks_pending(self) -> list[int]:
        """Sequence numbers we owe the peer an ack for, in queue order."""
        self._enter()
        try:
            return list(self._acks)
        finally:
            self._busy.release()

    @property
    def ping(self) -> float:
        """The averaged ping in seconds (``mPingDelayAveraged``)."""
        return self._ping_avg

    @property
    def pings_in_transit(self) -> int:
        """StartPingChecks sent and not answered (``mPingsInTransit``)."""
        return self._pings_in_transit

    @property
    def lost(self) -> PeerLost | None:
        """The :class:`PeerLost` event once the circuit is dead, else ``None``."""
        return self._lost

    def reliable_timeout(self, now: float) -> float:
        """Seconds a reliable packet sent at ``now`` waits before its resend:
        ``max(minimum_reliable_timeout, factor * averaged ping)`` (llcircuit.cpp)."""
        return self._rto_at(_seconds(now))

    def events(self) -> list[CircuitEvent]:
        """Events since the last call: PeerLost, MessageDropped, BadDatagram,
        StrictDecodeFailed."""
        self._enter()
        out = self._events
        self._events = []
        self._busy.release()
        return out

    def _enter(self) -> None:
        """Claim the circuit for this call, or raise RuntimeError (changing
        nothing) if another thread is inside it."""
        if not self._busy.acquire(False):
            raise RuntimeError(
                "this Circuit is already in use, by another thread (use one circuit from one "
                "thread at a time: one per peer, or behind a lock) or by the call this one "
                "was made from"
            )

    # -- timers -----------------------------------------------------------------

    def _timeout_for(self, ping: float) -> float:
        t = self._reliable_timeout_factor * ping
        return t if t > self._minimum_reliable_timeout else self._minimum_reliable_timeout

    def _rto_at(self, now: float) -> float:
        """``getPingDelayAveraged``: the average, raised while pings go unanswered."""
        n = self._pings_in_transit
        if n == 0:
            return self._rto
        transit = (n - 1) * self._ping_interval + (now - self._ping_sent)
        ping = self._ping_avg
        if transit > ping:
            ping = min(transit, self._ping_max)
        return self._timeout_for(ping)

    def next_deadline(self) -> float | None:
        """When :meth:`datagrams_to_send` next has work (seconds), or ``None``."""
        self._enter()
        try:
            if self._lost is not None:
                return None
            if self._out:
                return self._out_at
            return self._compute_wake()
        finally:
            self._busy.release()

    def _compute_wake(self) -> float:
        """The earliest timer: a live resend, the ping, the ack flush, the
        lost-peer check (timeline entries of packets acked since are dropped)."""
        timeline = self._timeline
        unacked = self._unacked
        t = self._next_ping
        while timeline:
            p = unacked.get(timeline[0])
            if p is not None:
                t = min(t, p.exp)
                break
            timeline.popleft()
        t = min(t, self._last_ping_answer + self._circuit_timeout)
        self._timer_wake = t
        if self._acks and self._ack_deadline < t:
            t = self._ack_deadline
        self._wake = t
        return t

    # -- sending ----------------------------------------------------------------

    def send(self, message: Message, *, reliable: bool = False, now: float) -> int:
        """Encode ``message`` once, give it the next sequence number, append the
        acks owed (up to 250 within the MTU, never on PacketAck) and queue it for
        :meth:`datagrams_to_send`; return its sequence number. ``reliable``
        sets the RELIABLE flag and keeps it until acked. The message's own
        ``flags`` (except ZEROCODED), ``sequence`` and ``acks`` are ignored.
        Encoding errors (a block the circuit's template does not have among
        them) raise :class:`~gamecodec.EncodeError` and queue nothing, as
        does a packet longer than ``max_size`` (8192 bytes by default: the LL
        viewer's receive buffer, and what this circuit's own decoder takes) or
        than ``MAX_DATAGRAM`` (no UDP datagram holds it), and a zero-coded packet
        that expands past ``max_size`` as the receiver checks it (its 6 header
        bytes included, a zero run ending before the cap).
        """
        t = _seconds(now)
        self._enter()
        try:
            return self._send(message, bool(reliable), t)
        finally:
            self._busy.release()

    def _send(self, message: Message, reliable: bool, now: float) -> int:
        if self._lost is not None:
            raise LocalProtocolError(
                f"send on a lost circuit ({self._lost.reason})", protocol=PROTOCOL
            )
        seq = self._seq
        acks = self._acks
        count = min(len(acks), self._max_appended_acks)
        # encode's errors come out before anything changes
        wire: bytes = self._encode_packet(
            message,
            self._template,
            self._zero_coding,
            _RELIABLE if reliable else 0,
            seq,
            acks,
            count,
            self._limit,
        )
        end = len(wire)
        if end > self._max_size or end > _MAX_DATAGRAM:
            raise EncodeError(
                f"{message.name}: {end} bytes encoded, more than a peer takes "
                f"(max_size {self._max_size}, as the LL viewer's buffer; UDP at most "
                f"{MAX_DATAGRAM})",
                protocol=PROTOCOL,
            )
        if wire[0] & _ZEROCODED:
            self._check_expansion(message, wire, end)
        self._seq = (seq + 1) & _MASK
        if wire[0] & _ACK:
            count = wire[end - 1]
            end -= 4 * count + 1
            if count == len(acks):
                acks.clear()
                self._ack_deadline = _INF
                self._wake = self._timer_wake  # no ack flush to wake up for
            else:
                del acks[:count]
        self._queue(seq, wire, end, reliable, now)
        return seq

    def _check_expansion(self, message: Message, wire: bytes, end: int) -> None:
        """A zero-coded packet must expand within ``max_size`` too: the receiver's
        check (the LL viewer's buffer, this circuit's decoder) is on the expanded
        packet, its 6 header bytes included. Each zero byte adds at most 256
        bytes, so most packets need no expansion to know."""
        body_end = end - 4 * wire[end - 1] - 1 if wire[0] & _ACK else end
        if body_end + 256 * wire.count(0, 6, body_end) < self._max_size:
            return  # (below the cap: a zero run may not end at it)
        try:
            self._zero_decode(wire[6:body_end], max(self._max_size - 6, 0))
        except DecodeError:
            raise EncodeError(
                f"{message.name}: its zero-coded body expands past max_size "
                f"{self._max_size} (the receiver's limit)",
                protocol=PROTOCOL,
            ) from None

    def _put(self, flags: int, body: bytes, can_ack: bool, now: float) -> None:
        """Queue one packet of the circuit's own (``body``: everything after
        the sequence number) with the next sequence number and, if
        ``can_ack``, the owed acks that fit."""
        seq = self._seq
        self._seq = (seq + 1) & _MASK
        acks = self._acks
        end = 5 + len(body)
        count = min(len(acks), self._max_appended_acks, (self._mtu - 6 - len(body)) >> 2)
        if can_ack and count > 0:
            wire = _HEAD.pack(flags | _ACK, seq) + body + _ack_tail(acks, count)
            if count == len(acks):
                acks.clear()
                self._ack_deadline = _INF
                self._wake = self._timer_wake
            else:
                del acks[:count]
        else:
            wire = _HEAD.pack(flags, seq) + body
        self._queue(seq, wire, end, bool(flags & _RELIABLE), now)

    def _queue(self, seq: int, wire: bytes, end: int, reliable: bool, now: float) -> None:
        """Queue ``wire`` (packet ``seq``, appended acks from ``end`` on) for
        sending; keep it until acked if ``reliable``."""
        if reliable:
            exp = now + self._rto_at(now)
            self._unacked[seq] = _pending(wire, end, exp)
            if exp >= self._last_exp:
                self._timeline.append(seq)
                self._last_exp = exp
            else:
                self._schedule_early(seq, exp)
            self._timer_wake = min(self._timer_wake, exp)
            self._wake = min(self._wake, exp)
        if not self._out:
            self._out_at = now
        self._out.append(wire)
        self.packets_out += 1

    def _schedule_early(self, seq: int, exp: float) -> None:
        """Slot ``seq`` into the timeline before later resend times (the
        timeout shrank since they were set: linear, but the entries of packets
        acked meanwhile are dropped on the way, so the next call stops early)."""
        timeline = self._timeline
        unacked = self._unacked
        i = len(timeline)
        while i > 0:
            p = unacked.get(timeline[i - 1])
            if p is None:
                del timeline[i - 1]
            elif p.exp <= exp:
                break
            i -= 1
        timeline.insert(i, seq)

    def datagrams_to_send(self, now: float) -> list[bytes]:
        """Every datagram due at ``now``: what :meth:`send` queued, resends
        (RESENT flag set, no acks appended, as LL resends its stored buffer),
        a StartPingCheck every ``ping_interval``, PacketAck messages for acks
        that no outgoing packet carried within ``ack_collect_time``."""
        t = _seconds(now)
        self._enter()
        try:
            return self._datagrams_to_send(t)
        finally:
            self._busy.release()

    def _datagrams_to_send(self, t: float) -> list[bytes]:
        if self._lost is not None:
            return []
        if t >= self._wake:
            self._timers(t)
        out = self._out
        if not out:
            return []  # the caller's own: later packets go to self._out
        self._out = []
        self._out_at = _INF
        return out

    def _timers(self, now: float) -> None:
        if now >= self._last_ping_answer + self._circuit_timeout:
            self._kill(f"no CompletePingCheck for {self._circuit_timeout:g} s", now)
            return
        timeline = self._timeline
        unacked = self._unacked
        cap = self._max_resends
        while timeline:
            seq = timeline[0]
            p = unacked.get(seq)
            if p is None:
                timeline.popleft()  # acked meanwhile
                continue
            if p.exp > now:
                break
            timeline.popleft()
            wire = p.wire
            flags = wire[0] & ~_ACK  # as first sent, without its appended acks
            if 0 <= cap <= p.resends:
                del unacked[seq]
                self.dropped += 1
                dropped = bytes((flags,)) + wire[1 : p.end]
                self._events.append(MessageDropped(seq, dropped, now))
                continue
            if not self._out:
                self._out_at = now
            self._out.append(bytes((flags | _RESENT,)) + wire[1 : p.end])
            self.resent += 1
            exp = now + self._rto_at(now)
            p.exp = exp
            p.resends += 1
            if exp >= self._last_exp or not timeline:
                timeline.append(seq)
                self._last_exp = exp
            else:
                self._schedule_early(seq, exp)
        if now >= self._next_ping:
            self._send_ping(now)
        if self._acks and now >= self._ack_deadline:
            self._flush_acks(now)
        self._compute_wake()

    def _send_ping(self, now: float) -> None:
        """``updateWatchDogTimers``: StartPingCheck with the next PingID and the
        oldest unacked sequence (the last one sent when nothing is unacked)."""
        ping_id = (self._ping_id + 1) & 0xFF
        self._ping_id = ping_id
        oldest = next(iter(self._unacked)) if self._unacked else (self._seq - 1) & _MASK
        self._ping_sent = now
        self._pings_in_transit += 1
        self._next_ping = now + self._ping_interval
        self._put(0, _START_PING_HEAD + _PING_BODY.pack(ping_id, oldest), True, now)

    def _flush_acks(self, now: float) -> None:
        """``LLCircuit::sendAcks``: every owed ack in PacketAck messages."""
        acks = self._acks
        for start in range(0, len(acks), MAX_PACKET_ACK_IDS):
            self._put(0, _packet_ack_body(acks[start : start + MAX_PACKET_ACK_IDS]), False, now)
        acks.clear()
        self._ack_deadline = _INF

    def _kill(self, reason: str, now: float) -> None:
        lost = PeerLost(reason, now)
        self._lost = lost
        self._events.append(lost)
        self._unacked.clear()
        self._timeline.clear()
        self._acks.clear()
        self._out = []

    # -- receiving --------------------------------------------------------------

    def receive_datagram(self, data: bytes, now: float) -> list[Message]:
        """Take one datagram; return the messages it delivers (none or one).

        Appended acks and PacketAck retire pending reliable packets; a reliable
        packet is queued for an ack (again, if it is a duplicate, which is then
        dropped); StartPingCheck is answered and CompletePingCheck measures the
        round trip. Those three are consumed unless ``deliver_control``. A
        datagram the codec cannot decode, or whose message number the
        template lacks, is reported as a :class:`BadDatagram` event and is not
        acked, but its appended acks are applied when their count fits the
        datagram (the LL viewer reads them before the body). With ``strict``,
        a datagram that only the tolerant decode takes is handled as the LL
        viewer handles it (acked, its acks applied) and reported as a
        :class:`StrictDecodeFailed` event instead of being delivered.
        """
        t = _seconds(now)
        raw = data if type(data) is bytes else memoryview(data).tobytes()
        self._enter()
        try:
            return self._receive_datagram(raw, t)
        finally:
            self._busy.release()

    def _receive_datagram(self, raw: bytes, t: float) -> list[Message]:
        if self._lost is not None:
            return []
        seq = -1  # a reliable packet's sequence number
        if len(raw) >= 7 and raw[0] & _RELIABLE:
            seq = raw[1]  # then shifted in seq's own width (a C long long compiled)
            seq = seq << 24 | raw[2] << 16 | raw[3] << 8 | raw[4]
            # checkMessages drops a datagram whose ack count does not fit before
            # its duplicate check: such a one is refused below, not acked again
            if seq in self._seen and self._apply_appended_acks(raw):
                self.duplicates += 1
                self._queue_ack(seq, t)
                return []
        refused = None  # the strict decode's error, when only the tolerant one takes it
        try:
            msg: Message = self._decode(raw, self._template, self.strict, self._max_size)
        except DecodeError as exc:
            if not self.strict:
                self._refuse(exc, raw, t)
                return []
            # what the viewer's (tolerant) reader takes, it acks: strictness
            # must not leave the peer resending a packet for ever
            refused = exc
            try:
                msg = self._decode(raw, self._template, False, self._max_size)
            except DecodeError:
                self._refuse(exc, raw, t)
                return []
        if msg.body is not None:
            # validateMessage: a number the template lacks is neither read nor acked
            self._refuse(
                DecodeError(
                    f"message number of {msg.name} is not in the template", 6, protocol=PROTOCOL
                ),
                raw,
                t,
            )
            return []
        control = msg.name in _CONTROL
        if control and msg.truncated:
            # the codec zero-filled a cut-short PacketAck or ping (LL's
            # tolerance): acting on made-up ids would retire the wrong
            # packets, so it is refused like garbage, with the strict error
            if refused is None:
                try:
                    self._decode(raw, self._template, True, self._max_size)
                except DecodeError as exc:
                    refused = exc
            if refused is not None:
                self._refuse(refused, raw, t)
            return []
        self.packets_in += 1
        if msg.acks:
            self._retire(msg.acks)
        if seq >= 0:
            self._seen.add(seq)
            self._order.append(seq)
            if len(self._order) > self._duplicate_window:
                self._seen.discard(self._order.popleft())
            self._queue_ack(seq, t)
        if control:
            self._control(msg, t)
            if not self.deliver_control:
                return []
        if refused is not None:
            self._strict_failed(msg, refused, raw, t)
            return []
        return [msg]

    def _retire(self, acks: tuple[int, ...]) -> None:
        """``ackReliablePacket`` for each appended ack (``acks`` as the codec
        reads them, from the datagram's end), in the order they were queued."""
        unacked = self._unacked
        timeline = self._timeline
        for a in reversed(acks):
            if unacked.pop(a, None) is not None and timeline and timeline[0] == a:
                timeline.popleft()  # acks come mostly in sending order

    def _apply_appended_acks(self, raw: bytes) -> bool:
        """The appended acks of a datagram that is not read, applied as the LL
        viewer's ``checkMessages`` applies them before it looks at the body:
        a datagram of 7 bytes or more with the ACK flag whose ack count fits
        (``count * 4 + 7`` bytes before the count byte; else it is dropped
        whole, its acks too: then False)."""
        n = len(raw)
        if n < 7 or not raw[0] & _ACK:
            return n >= 7
        count = raw[n - 1]
        if n - 1 < 4 * count + 7:
            return False
        if count:
            ids = struct.unpack_from(f">{count}I", raw, n - 1 - 4 * count)  # in queue order
            self._retire(ids[::-1])  # as the codec gives them: nearest the count byte first
        return True

    def _refuse(self, exc: DecodeError, raw: bytes, now: float) -> None:
        """A datagram the circuit does not read: its appended acks applied, a
        BadDatagram event, nothing acked."""
        self._apply_appended_acks(raw)
        self._bad_datagram(exc, raw, now)

    def _bad_datagram(self, exc: DecodeError, raw: bytes, now: float) -> None:
        """A BadDatagram event, or only its count past ``max_bad_datagrams`` waiting."""
        if len(self._events) < self._max_bad_datagrams:
            self._events.append(BadDatagram(exc, raw, now))
        else:
            self.bad_datagrams_dropped += 1

    def _strict_failed(self, msg: Message, exc: DecodeError, raw: bytes, now: float) -> None:
        """A StrictDecodeFailed event, or only its count past ``max_bad_datagrams`` waiting."""
        if len(self._events) < self._max_bad_datagrams:
            self._events.append(StrictDecodeFailed(msg.name, exc, raw, msg, now))
        else:
            self.strict_failures_dropped += 1

    def _queue_ack(self, seq: int, now: float) -> None:
        """``collectRAck``: owe the peer an ack; the first one starts the clock.
        Past ``max_pending_acks`` the ack is not queued (the peer resends)."""
        if len(self._acks) >= self._max_pending_acks:
            return
        if not self._acks:
            self._ack_deadline = now + self._ack_collect_time
            self._wake = min(self._wake, self._ack_deadline)
        self._acks.append(seq)

    def _control(self, msg: Message, now: float) -> None:
        name = msg.name
        blocks = msg.blocks
        if name == "PacketAck":
            unacked = self._unacked
            for block in blocks.get("Packets", ()):
                if block and block[0] in unacked:
                    del unacked[block[0]]
            return
        pings = blocks.get("PingID")
        if not pings or not pings[0]:
            return
        block = pings[0]
        ping_id = block[0]
        if name == "StartPingCheck":
            # process_start_ping_check: answer at once, then prune duplicates
            self._put(0, _COMPLETE_PING_HEAD + bytes((ping_id & 0xFF,)), True, now)
            # only a newer ping moves the prune point: StartPingCheck is unreliable,
            # and a duplicated or reordered copy would apply the delayed one at once
            last = self._ping_in
            if len(block) > 1 and (last < 0 or 0 < ((ping_id - last) & 0xFF) < 0x80):
                self._ping_in = ping_id & 0xFF
                self._prune(block[1])
        else:
            self._ping_answered(ping_id, now)

    def _prune(self, oldest: int) -> None:
        """``clearDuplicateList``, one ping late: forget sequences older than the
        OldestUnacked of the *previous* StartPingCheck, so a resend that was
        already in flight when the peer saw our ack cannot slip through."""
        prune = self._prune_at
        self._prune_at = oldest & _MASK
        if prune < 0:
            return
        order = self._order
        while order and _older(order[0], prune):
            self._seen.discard(order.popleft())

    def _ping_answered(self, ping_id: int, now: float) -> None:
        """``pingTimerStop`` + ``setPingDelay``: whole pings behind count one
        ``ping_interval`` each; the average takes a rise at once and a fall at
        ``ping_alpha``, clamped to [ping_min, ping_max]."""
        behind = (self._ping_id - ping_id) & 0xFF
        rtt = behind * self._ping_interval + (now - self._ping_sent)
        self.rtt = rtt
        avg = max(self._ping_avg, rtt)
        avg = (1.0 - self._ping_alpha) * avg + self._ping_alpha * rtt
        if avg < self._ping_min:
            avg = self._ping_min
        elif avg > self._ping_max:
            avg = self._ping_max
        self._ping_avg = avg
        self._pings_in_transit = behind
        self._rto = self._timeout_for(avg)
        self._last_ping_answer = now
