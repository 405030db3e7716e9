# cython: annotation_typing=False
"""The LLUDP circuit, pure twin (also compiled, typed by ``_circuit_c.pxd``).

One source for both twins: Cython compiles this file as
``gamecodec.lludp._circuit_c`` and the augmenting ``_circuit_c.pxd`` turns
:class:`Circuit` into a cdef class with typed attributes and typed locals.
The public documentation is in :mod:`gamecodec.lludp.circuit`; the LL viewer
sources each rule comes from are named beside it below.

Hot-path notes: the header (flags, sequence) is read from the raw bytes; a
reliable sequence number already seen is acked again without decoding; the
codec's ``decode`` runs once per new datagram and ``encode`` once per sent
message; acks are appended to the encoded bytes here; pending reliable
packets live in a dict keyed by sequence number (retired in O(1)) with a
timeline (a deque in resend-time order, cleaned lazily).
"""

from __future__ import annotations

import math
import struct
from collections import deque
from types import ModuleType
from typing import Any

from gamecodec import _accel
from gamecodec.errors import DecodeError, LocalProtocolError
from gamecodec.lludp._models import Message
from gamecodec.lludp.template import Template, default_template

__all__ = [
    "ACK_COLLECT_TIME",
    "AVERAGED_PING_ALPHA",
    "AVERAGED_PING_MAX",
    "AVERAGED_PING_MIN",
    "CIRCUIT_TIMEOUT",
    "COLLECT_ACK_TIME_MAX",
    "DUPLICATE_WINDOW",
    "INITIAL_PING",
    "MAX_APPENDED_ACKS",
    "MAX_OUT_PACKET_ID",
    "MAX_PACKET_ACK_IDS",
    "MAX_RESENDS",
    "MINIMUM_RELIABLE_TIMEOUT",
    "MTU",
    "PING_INTERVAL",
    "RELIABLE_TIMEOUT_FACTOR",
    "Circuit",
]

# -- constants (LL names and files in gamecodec.lludp.circuit's docstring) ------------

PING_INTERVAL = 5.0
CIRCUIT_TIMEOUT = 100.0
RELIABLE_TIMEOUT_FACTOR = 5.0
MINIMUM_RELIABLE_TIMEOUT = 1.0
MAX_RESENDS = 3
INITIAL_PING = 1.0
AVERAGED_PING_ALPHA = 0.2
AVERAGED_PING_MIN = 0.1
AVERAGED_PING_MAX = 2.0
ACK_COLLECT_TIME = 0.1
COLLECT_ACK_TIME_MAX = 2.0
MAX_APPENDED_ACKS = 250
MAX_PACKET_ACK_IDS = 255
MTU = 1200
MAX_OUT_PACKET_ID = 0x01000000
DUPLICATE_WINDOW = 1 << 17

_MASK = MAX_OUT_PACKET_ID - 1
_HALF = MAX_OUT_PACKET_ID >> 1
_ZEROCODED = 0x80
_RELIABLE = 0x40
_RESENT = 0x20
_ACK = 0x10
_CONTROL = frozenset(("PacketAck", "StartPingCheck", "CompletePingCheck"))
_INF = math.inf

_HEAD = struct.Struct(">BI")
_ONE_ACK = struct.Struct(">IB")
_ACK_TAILS: dict[int, struct.Struct] = {}
_ACK_IDS: dict[int, struct.Struct] = {}
_PACKET_ACK_HEAD = b"\x00\xff\xff\xff\xfb"  # extra length 0, Fixed number 0xFFFFFFFB
_START_PING_HEAD = b"\x00\x01"  # extra length 0, High 1
_COMPLETE_PING_HEAD = b"\x00\x02"  # extra length 0, High 2
_PING_BODY = struct.Struct("<BI")


def _ack_tail(acks: list[int], count: int) -> bytes:
    """``count`` queued ids as appended acks: big-endian u32s, then the u8 count.

    Queue order on the wire (LL's ``sendMessage``), so the codec's ``acks[0]``
    (the id nearest the count byte) is the last one taken.
    """
    if count == 1:
        return _ONE_ACK.pack(acks[0], 1)
    fmt = _ACK_TAILS.get(count)
    if fmt is None:
        fmt = _ACK_TAILS[count] = struct.Struct(f">{count}IB")
    return fmt.pack(*acks[:count], count)


def _packet_ack_body(ids: list[int]) -> bytes:
    """The body of a PacketAck (after the 5 header bytes): Packets count + u32 LE ids."""
    count = len(ids)
    fmt = _ACK_IDS.get(count)
    if fmt is None:
        fmt = _ACK_IDS[count] = struct.Struct(f"<B{count}I")
    return _PACKET_ACK_HEAD + fmt.pack(count, *ids)


def _older(a: int, b: int) -> bool:
    """Sequence ``a`` comes before ``b`` (24-bit wrap-around)."""
    d = (b - a) & _MASK
    return 0 < d < _HALF


def _event(name: str, *args: Any) -> Any:
    # The event classes live in the never-compiled facade (one class for both
    # twins); events are rare, so importing here costs nothing on the hot path.
    from gamecodec.lludp import circuit

    return getattr(circuit, name)(*args)


class Circuit:
    """One LLUDP circuit (see :class:`gamecodec.lludp.circuit.Circuit`)."""

    def __init__(
        self,
        *,
        now: float = 0.0,
        template: Template | None = None,
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
        first_sequence: int = 1,
        deliver_control: bool = False,
    ) -> None:
        if codec is None:
            codec = _accel.load("gamecodec.lludp", "_codec", "lludp")
        if zero_coding not in ("flag", "smaller"):
            raise ValueError(f"zero_coding must be 'flag' or 'smaller', not {zero_coding!r}")
        if ping_interval <= 0 or circuit_timeout <= 0 or minimum_reliable_timeout <= 0:
            raise ValueError("ping_interval, circuit_timeout and the reliable timeout must be > 0")
        if max_resends is not None and max_resends < 0:
            raise ValueError("max_resends must be >= 0 or None")
        if not 0 <= max_appended_acks <= MAX_APPENDED_ACKS:
            raise ValueError(f"max_appended_acks must be 0..{MAX_APPENDED_ACKS}")
        if duplicate_window < 1:
            raise ValueError("duplicate_window must be >= 1")
        self.template = default_template() if template is None else template
        self._decode = codec.decode
        self._encode = codec.encode
        self.strict = bool(strict)
        self.max_size = int(max_size)
        self.zero_coding = zero_coding
        self.ping_interval = float(ping_interval)
        self.circuit_timeout = float(circuit_timeout)
        self.reliable_timeout_factor = float(reliable_timeout_factor)
        self.minimum_reliable_timeout = float(minimum_reliable_timeout)
        self._max_resends = -1 if max_resends is None else int(max_resends)
        self.ping_alpha = float(ping_alpha)
        self.ping_min = float(ping_min)
        self.ping_max = float(ping_max)
        self.ack_collect_time = min(max(float(ack_collect_time), 0.0), COLLECT_ACK_TIME_MAX)
        self.max_appended_acks = int(max_appended_acks)
        self.mtu = int(mtu)
        self.duplicate_window = int(duplicate_window)
        self.deliver_control = bool(deliver_control)
        # sending
        self._seq = int(first_sequence) & _MASK
        self._unacked: dict[int, tuple[bytes, float, int, int]] = {}
        self._timeline: deque[int] = deque()  # unacked sequences by resend time
        self._last_exp = -_INF
        self._out: list[bytes] = []
        self._out_at = _INF
        # acks owed to the peer
        self._acks: list[int] = []
        self._ack_deadline = _INF
        # duplicate suppression
        self._seen: set[int] = set()
        self._order: deque[int] = deque()
        self._prune_at = -1  # the OldestUnacked of the previous StartPingCheck
        # pings and round-trip time (llcircuit.cpp)
        self._ping_id = 0
        self._ping_sent = now
        self._pings_in_transit = 0
        self._next_ping = now + self.ping_interval
        self._last_ping_answer = now
        self.rtt = float(initial_ping)
        self._ping_avg = float(initial_ping)
        self._rto = self._timeout_for(self._ping_avg)
        # state and counters
        self._lost: Any = None
        self._events: list[Any] = []
        self._wake = min(self._next_ping, now + self.circuit_timeout)
        self.packets_out = 0
        self.packets_in = 0
        self.resent = 0
        self.duplicates = 0
        self.dropped = 0

    # -- state ------------------------------------------------------------------

    @property
    def max_resends(self) -> int | None:
        """Resends of a reliable packet before it is given up (``None``: never)."""
        return None if self._max_resends < 0 else self._max_resends

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
        return list(self._unacked)

    @property
    def acks_pending(self) -> list[int]:
        """Sequence numbers we owe the peer an ack for, in queue order."""
        return list(self._acks)

    @property
    def ping(self) -> float:
        """The averaged ping in seconds (``mPingDelayAveraged``)."""
        return self._ping_avg

    @property
    def pings_in_transit(self) -> int:
        """StartPingChecks sent and not answered (``mPingsInTransit``)."""
        return self._pings_in_transit

    @property
    def lost(self) -> Any:
        """The :class:`PeerLost` event once the circuit is dead, else ``None``."""
        return self._lost

    def reliable_timeout(self, now: float) -> float:
        """Seconds a reliable packet sent at ``now`` waits before its resend:
        ``max(minimum_reliable_timeout, factor * averaged ping)`` (llcircuit.cpp)."""
        return self._rto_at(now)

    def events(self) -> list[Any]:
        """Events since the last call: PeerLost, MessageDropped, BadDatagram."""
        out = self._events
        self._events = []
        return out

    # -- timers -----------------------------------------------------------------

    def _timeout_for(self, ping: float) -> float:
        t = self.reliable_timeout_factor * ping
        return t if t > self.minimum_reliable_timeout else self.minimum_reliable_timeout

    def _rto_at(self, now: float) -> float:
        """``getPingDelayAveraged``: the average, raised while pings go unanswered."""
        n = self._pings_in_transit
        if n == 0:
            return self._rto
        transit = (n - 1) * self.ping_interval + (now - self._ping_sent)
        ping = self._ping_avg
        if transit > ping:
            ping = min(transit, self.ping_max)
        return self._timeout_for(ping)

    def next_deadline(self) -> float | None:
        """When :meth:`datagrams_to_send` next has work (seconds), or ``None``."""
        if self._lost is not None:
            return None
        if self._out:
            return self._out_at
        return self._compute_wake()

    def _compute_wake(self) -> float:
        """The earliest timer: a live resend, the ping, the ack flush, the
        lost-peer check (timeline entries of packets acked since are dropped)."""
        timeline = self._timeline
        unacked = self._unacked
        t = self._next_ping
        while timeline:
            p = unacked.get(timeline[0])
            if p is not None:
                exp = p[1]
                t = min(t, exp)
                break
            timeline.popleft()
        lost_at = self._last_ping_answer + self.circuit_timeout
        t = min(t, lost_at)
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
        Encoding errors raise :class:`~gamecodec.EncodeError` and queue nothing.
        """
        return self._send(message, reliable, now)

    def _send(self, message: Message, reliable: bool, now: float) -> int:
        if self._lost is not None:
            raise LocalProtocolError(f"send on a lost circuit ({self._lost.reason})")
        data: bytes = self._encode(message, self.template, self.zero_coding)
        flags = data[0]
        if flags & _ACK:  # the message carried acks of its own: drop them
            end = len(data) - 1 - 4 * data[len(data) - 1]
            body = data[5:end]
        else:
            body = data[5:]
        flags &= _ZEROCODED
        if reliable:
            flags |= _RELIABLE
        return self._put(flags, body, message.name != "PacketAck", now)

    def _put(self, flags: int, body: bytes, can_ack: bool, now: float) -> int:
        """Put one packet (``body`` = everything after the sequence number) on
        the outgoing queue with the next sequence number and the acks that fit."""
        seq = self._seq
        self._seq = (seq + 1) & _MASK
        acks = self._acks
        wire: bytes
        if acks and can_ack:
            count = len(acks)
            count = min(count, self.max_appended_acks)
            room = (self.mtu - 6 - len(body)) >> 2
            count = min(count, room)
            if count > 0:
                wire = _HEAD.pack(flags | _ACK, seq) + body + _ack_tail(acks, count)
                if count == len(acks):
                    acks.clear()
                    self._ack_deadline = _INF
                else:
                    del acks[:count]
            else:
                wire = _HEAD.pack(flags, seq) + body
        else:
            wire = _HEAD.pack(flags, seq) + body
        if flags & _RELIABLE:
            exp = now + self._rto_at(now)
            self._unacked[seq] = (body, exp, 0, flags)
            if exp >= self._last_exp:
                self._timeline.append(seq)
                self._last_exp = exp
            else:
                self._schedule_early(seq, exp)
            self._wake = min(self._wake, exp)
        out = self._out
        if not out:
            self._out_at = now
        out.append(wire)
        self.packets_out += 1
        return seq

    def _schedule_early(self, seq: int, exp: float) -> None:
        """Slot ``seq`` into the timeline before later resend times (the
        timeout shrank since they were set: rare, linear)."""
        timeline = self._timeline
        unacked = self._unacked
        i = len(timeline)
        while i > 0:
            p = unacked.get(timeline[i - 1])
            if p is not None and p[1] <= exp:
                break
            i -= 1
        timeline.insert(i, seq)

    def datagrams_to_send(self, now: float) -> list[bytes]:
        """Every datagram due at ``now``: what :meth:`send` queued, resends
        (RESENT flag set, no acks appended, as LL resends its stored buffer),
        a StartPingCheck every ``ping_interval``, PacketAck messages for acks
        that no outgoing packet carried within ``ack_collect_time``."""
        if self._lost is not None:
            return []
        if now >= self._wake:
            self._timers(now)
        out = self._out
        if out:
            self._out = []
            self._out_at = _INF
        return out

    def _timers(self, now: float) -> None:
        if now >= self._last_ping_answer + self.circuit_timeout:
            self._kill(f"no CompletePingCheck for {self.circuit_timeout:g} s", now)
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
            body, exp, resends, flags = p
            if exp > now:
                break
            timeline.popleft()
            if 0 <= cap <= resends:
                del unacked[seq]
                self.dropped += 1
                self._events.append(
                    _event("MessageDropped", seq, _HEAD.pack(flags, seq) + body, now)
                )
                continue
            if not self._out:
                self._out_at = now
            self._out.append(_HEAD.pack(flags | _RESENT, seq) + body)
            self.resent += 1
            exp = now + self._rto_at(now)
            unacked[seq] = (body, exp, resends + 1, flags)
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
        self._next_ping = now + self.ping_interval
        self._put(0, _START_PING_HEAD + _PING_BODY.pack(ping_id, oldest), True, now)

    def _flush_acks(self, now: float) -> None:
        """``LLCircuit::sendAcks``: every owed ack in PacketAck messages."""
        acks = self._acks
        start = 0
        n = len(acks)
        while start < n:
            chunk = acks[start : start + MAX_PACKET_ACK_IDS]
            start += len(chunk)
            self._put(0, _packet_ack_body(chunk), False, now)
        acks.clear()
        self._ack_deadline = _INF

    def _kill(self, reason: str, now: float) -> None:
        lost = _event("PeerLost", reason, now)
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
        datagram the codec cannot decode is reported as a :class:`BadDatagram`
        event and changes nothing.
        """
        if self._lost is not None:
            return []
        raw = data if type(data) is bytes else bytes(data)
        flags = 0
        seq = 0
        if len(raw) >= 7:
            flags = raw[0]
            if flags & _RELIABLE:
                seq = raw[1]  # widened first: the compiled twin shifts in 64 bits
                seq = (seq << 24) | (raw[2] << 16) | (raw[3] << 8) | raw[4]
                if seq in self._seen:
                    self.duplicates += 1
                    self._queue_ack(seq, now)
                    return []
        try:
            msg: Message = self._decode(raw, self.template, self.strict, self.max_size)
        except DecodeError as exc:
            self._events.append(_event("BadDatagram", exc, raw, now))
            return []
        control = msg.name in _CONTROL and msg.body is None
        if control and msg.truncated:
            # the codec zero-filled a cut-short PacketAck or ping (LL's
            # tolerance): acting on made-up ids would retire the wrong
            # packets, so it is refused like garbage, with the strict error
            try:
                self._decode(raw, self.template, True, self.max_size)
            except DecodeError as exc:
                self._events.append(_event("BadDatagram", exc, raw, now))
            return []
        self.packets_in += 1
        acks = msg.acks
        if acks:
            unacked = self._unacked
            for a in acks:
                if a in unacked:
                    del unacked[a]
        if flags & _RELIABLE:
            seen = self._seen
            order = self._order
            seen.add(seq)
            order.append(seq)
            if len(order) > self.duplicate_window:
                seen.discard(order.popleft())
            self._queue_ack(seq, now)
        if control:
            self._control(msg, now)
            if not self.deliver_control:
                return []
        return [msg]

    def _queue_ack(self, seq: int, now: float) -> None:
        """``collectRAck``: owe the peer an ack; the first one starts the clock."""
        acks = self._acks
        if not acks:
            deadline = now + self.ack_collect_time
            self._ack_deadline = deadline
            self._wake = min(self._wake, deadline)
        acks.append(seq)

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
            if len(block) > 1:
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
        seen = self._seen
        while order and _older(order[0], prune):
            seen.discard(order.popleft())

    def _ping_answered(self, ping_id: int, now: float) -> None:
        """``pingTimerStop`` + ``setPingDelay``: whole pings behind count one
        ``ping_interval`` each; the average takes a rise at once and a fall at
        ``ping_alpha``, clamped to [ping_min, ping_max]."""
        behind = (self._ping_id - ping_id) & 0xFF
        rtt = behind * self.ping_interval + (now - self._ping_sent)
        self.rtt = rtt
        avg = self._ping_avg
        avg = max(avg, rtt)
        avg = (1.0 - self.ping_alpha) * avg + self.ping_alpha * rtt
        if avg < self.ping_min:
            avg = self.ping_min
        elif avg > self.ping_max:
            avg = self.ping_max
        self._ping_avg = avg
        self._pings_in_transit = behind
        self._rto = self._timeout_for(avg)
        self._last_ping_answer = now
