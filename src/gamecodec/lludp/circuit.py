"""Sans-IO LLUDP circuit: sequence numbers, acks, resends, pings.

A :class:`Circuit` is the viewer's ``LLCircuitData`` for one peer plus the
parts of ``LLMessageSystem`` that stamp, ack and resend its packets. It does
no I/O and reads no clock: every entry point takes ``now`` in seconds (any
monotonic origin, e.g. ``loop.time()``)::

    from gamecodec import lludp
    from gamecodec.lludp.circuit import Circuit

    circuit = Circuit(now=t)
    circuit.send(lludp.build("ChatFromViewer", ...), reliable=True, now=t)
    for datagram in circuit.datagrams_to_send(t):
        sock.sendto(datagram, peer)
    for message in circuit.receive_datagram(payload, t):  # decoded Messages
        ...
    for event in circuit.events():  # PeerLost, MessageDropped, BadDatagram, StrictDecodeFailed
        ...
    wake_up_at = circuit.next_deadline()  # seconds, or None

A circuit is a :class:`gamecodec.sessions.DatagramSession`. Its events are
frozen dataclasses (subclasses of :class:`gamecodec.sessions.Event`); the
peer's loss is :class:`gamecodec.sessions.PeerLost`, the event every
gamecodec session reports. Both the compiled and the pure circuit report the
same classes.

What it does, with the LL viewer's rules and numbers (``secondlife/viewer``,
``indra/llmessage``; every constant is a constructor parameter with LL's value
as its default):

* **Sequence numbers** start at 1 and wrap at ``MAX_OUT_PACKET_ID`` = 2^24
  (``LL_MAX_OUT_PACKET_ID``, ``LLCircuitData::nextPacketOutID``); every
  packet takes one, reliable or not, pings and PacketAcks included.
* **Reliable packets** are kept (without appended acks, as ``sendMessage``
  stores them) until acked and resent with the RESENT flag after
  ``max(MINIMUM_RELIABLE_TIMEOUT, RELIABLE_TIMEOUT_FACTOR * averaged ping)``
  = ``max(1 s, 5 * ping)`` (``LL_MINIMUM_RELIABLE_TIMEOUT_SECONDS``,
  ``LL_RELIABLE_TIMEOUT_FACTOR``, ``resendUnackedPackets``). After
  ``MAX_RESENDS`` = 3 resends (``LL_DEFAULT_RELIABLE_RETRIES``) and one more
  timeout, the packet is given up: a :class:`MessageDropped` event (LL's
  ``LL_ERR_TCP_TIMEOUT`` callback). ``max_resends=None`` never gives up while
  the circuit lives.
* **Acks owed** (``collectRAck``) are appended to outgoing packets, oldest
  first, at most ``MAX_APPENDED_ACKS`` = 250 and only while the datagram stays
  within ``MTU`` = 1200 bytes (``MTUBYTES``), never on PacketAck
  (``message.cpp`` ``sendMessage``). Acks no packet carried within
  ``ACK_COLLECT_TIME`` of the first one queued go out as PacketAck messages of
  up to ``MAX_PACKET_ACK_IDS`` = 255 ids, as many as the Variable block holds
  (``LLCircuit::sendAcks``; LL sends 251 per message; the viewer's collect
  time is its ``AckCollectTime`` setting, 0.1 s, clamped to
  ``LL_COLLECT_ACK_TIME_MAX`` = 2 s). Acks arriving appended or in PacketAck
  retire pending packets with one dict operation each (``ackReliablePacket``).
* **Duplicates**: reliable sequence numbers received are remembered; a
  reliable packet seen before is acked again and not delivered, its appended
  acks applied (LL checks this only for packets flagged RESENT,
  ``isDuplicateResend``; here every reliable packet is checked, so a datagram
  the network duplicated is caught too). One whose ack count does not fit is
  refused unacked, as a first copy would be: ``checkMessages`` drops it
  before its duplicate check.
  The memory is pruned like ``clearDuplicateList``, by the OldestUnacked of
  the peer's StartPingCheck, but one ping late, so a resend already in flight
  when the peer saw our ack is still caught; ``DUPLICATE_WINDOW`` caps it.
  Unreliable packets are not deduplicated (as in LL).
* **Pings**: a StartPingCheck every ``PING_INTERVAL`` = 5 s (the viewer's
  ``circuit_heartbeat_interval``, ``llstartup.cpp``) with the next PingID and
  the oldest unacked sequence (``updateWatchDogTimers``); a StartPingCheck is
  answered at once with a CompletePingCheck of the same PingID
  (``process_start_ping_check``); a CompletePingCheck gives the round trip
  (``pingTimerStop``: whole pings behind count ``PING_INTERVAL`` each). The
  averaged ping (``setPingDelay``) takes a rise at once and a fall at
  ``AVERAGED_PING_ALPHA`` = 0.2, clamped to [0.1 s, 2 s]
  (``LL_AVERAGED_PING_MIN``/``MAX``), starting at ``INITIAL_PING`` = 1 s
  (``INITIAL_PING_VALUE_MSEC``). While pings go unanswered the average used for
  timeouts is raised to the age of the oldest unanswered ping
  (``getPingInTransitTime``). LL does not take round trips from acks, and
  neither does this. Unlike LL, pings are not jittered by +-5 %.
* **Peer lost**: no CompletePingCheck for ``CIRCUIT_TIMEOUT`` = 100 s (the
  viewer's ``circuit_timeout``, ``checkCircuitTimeout``) kills the circuit:
  a :class:`PeerLost` event, nothing is sent or delivered after it, and
  :meth:`Circuit.send` raises :class:`~gamecodec.LocalProtocolError`. LL
  notices at its next ping tick; here the check runs at the exact deadline.

PacketAck, StartPingCheck and CompletePingCheck are handled by the circuit
and not returned by :meth:`Circuit.receive_datagram` (``deliver_control=True``
returns them too, after handling). A datagram the codec cannot decode (a
:class:`~gamecodec.DecodeError`) is never raised: it becomes a
:class:`BadDatagram` event, and so does a packet whose message number the
template lacks (the viewer's ``validateMessage`` fails on it). Neither is
acked nor read, but their appended acks are applied (``ackReliablePacket``),
as ``checkMessages`` applies them before it validates the body: when the
datagram has 7 bytes or more, the ACK flag and room for the count of acks
its last byte gives (``count * 4 + 7`` bytes before it; otherwise the viewer
drops the whole datagram unread, and so does the circuit). Nothing else
changes. Every other decoded message is delivered as the
:class:`~gamecodec.lludp.Message` the codec returns (with the wire's flags,
sequence and acks).

``strict=True`` changes what is delivered, never what is acked: the viewer
acks every reliable packet its reader takes (``checkMessages``), and its
reader is the tolerant one. A packet the strict decode refuses but the
tolerant decode takes (OpenSimulator's ImprovedInstantMessage without
MetaData, say, under the Second Life template) is acked, its appended acks
are applied and a PacketAck or ping in it is acted on, as without
``strict``; instead of the message the application gets a
:class:`StrictDecodeFailed` event naming it, with the strict error, the
datagram and the tolerant decode. A packet neither decode takes is a
:class:`BadDatagram`, unacked, as in the viewer (so its sender resends it).
Refusing acked packets would not stop them: a sender resends what is not
acked, about three times a second for as long as the circuit lives.

Memory: everything a circuit holds is bounded. Packets waiting for their ack
are the application's own reliable sends, each given up after
``max_resends`` resends or with the circuit (``circuit_timeout``); what
:meth:`Circuit.datagrams_to_send` has not taken yet is the application's
sends plus at most one answer per datagram received since; acks owed stop at
``max_pending_acks`` (``MAX_PENDING_ACKS`` = 4096: an ack past it is not
queued, the peer resends and the duplicate is acked); remembered sequence
numbers stop at ``duplicate_window``; :class:`BadDatagram` and
:class:`StrictDecodeFailed` events waiting for :meth:`Circuit.events` stop
at ``max_bad_datagrams`` events in all (``MAX_BAD_DATAGRAMS`` = 1024, later
ones only counted in ``bad_datagrams_dropped`` or
``strict_failures_dropped``); the other events are the application's
packets given up and the one :class:`PeerLost`.

Deliberately left out (LL has them; they only shape traffic or keep
statistics): bandwidth throttles and the resend throttle, the
potentially-lost packet accounting, and the 512 kB unacked-bytes overflow rule.

Deliberately different: the averaged ping follows the measured round trip.
In the viewer, ``pingTimerStop`` calls ``setPingDelay`` before it resets the
pings in transit, and ``getPingInTransitTime`` counts ``pings * interval -
1 s`` (a 1 s heartbeat's formula under a 5 s heartbeat), so every update
starts from the 2 s cap: the average settles near ``0.8 * 2 s + 0.2 * rtt``
and the reliable timeout near 8-10 s whatever the link does. Here the
average starts from itself and the in-transit time is ``(pings - 1) *
interval + elapsed``: the timeout, ``max(1 s, 5 * ping)``, is derived from
the measured round trip, so resends come sooner than the viewer's on a fast
link. ``minimum_reliable_timeout=8.0`` gets close to the
viewer's pace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gamecodec import _accel
from gamecodec._clock import MAX_TIME
from gamecodec._public import public_dir
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
    MessageDropped,
    PeerLost,
    StrictDecodeFailed,
)

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
    "MAX_BAD_DATAGRAMS",
    "MAX_DATAGRAM",
    "MAX_OUT_PACKET_ID",
    "MAX_PACKET_ACK_IDS",
    "MAX_PENDING_ACKS",
    "MAX_RESENDS",
    "MAX_TIME",
    "MINIMUM_RELIABLE_TIMEOUT",
    "MTU",
    "PING_INTERVAL",
    "RELIABLE_TIMEOUT_FACTOR",
    "BadDatagram",
    "Circuit",
    "CircuitEvent",
    "MessageDropped",
    "PeerLost",
    "StrictDecodeFailed",
]

if TYPE_CHECKING:
    from gamecodec.lludp._circuit_py import Circuit
else:
    Circuit = _accel.load("gamecodec.lludp", "_circuit", "lludp.circuit").Circuit

__dir__ = public_dir(__name__)
