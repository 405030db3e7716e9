"""Sans-IO Avara reliable connection: serials, acks, resends.

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

What it models, with the game's numbers (from its ``CUDPConnection.cpp`` and
``CUDPComm.cpp``):

* Serials step by 2 from 0 and wrap at 2^16; order is modular.
* Receive: in-order delivery, duplicates dropped, out-of-order commands
  queued; once ``skip_after`` (``4 / fpsScale`` = 16 at 16 ms frames) are
  queued, the missing serial is given up (:class:`SerialSkipped`).
* The ack block of every datagram in ``WriteAcks``'s format: the cumulative
  ack, or base + 1 and a 32-bit bitmap, recomputed after each datagram that
  changed the receive queue or the next serial expected. A bitmap bit is
  written only where the game's reader (whose shift wraps on x86 past base +
  64) cannot take it for a serial not received that the peer may hold
  (``peer_window``, 1024 by default: then the bits are cleared unless their
  aliases were received, so the blocks are in practice cumulative; a smaller
  ``peer_window`` trusts that a block is not read late, after a later one
  moved the peer's base on). ACK-only datagrams when an ack is owed, nothing
  else is due, and 41 ms + ``retransmitTime`` have passed since the last send.
* Send: ``FindBestPacket``'s choice (due commands, urgency, the 1024-command
  window past the peer's ack), packing more commands while the datagram is
  shorter than 64 bytes, up to ``min(cramData) - 1`` of them taken up to 5 s
  early; resends keep the serial with ``sendCount + 1``; at most 3
  resends without hearing from the peer.
* Timers, as ``ValidatePacket``: RTT mean and variance (smoothing factor
  100, kpKeyAndMouse weighted ``fpsScale``, kpPing with p3 > 0 weighted 25.6
  with its round trip x 0.82 and outliers de-weighted; nothing else timed),
  ``retransmitTime`` = mean + 2.5 sigma clamped to [2 frames, 4000 ms],
  initially 2000 ms; ``urgentRetransmitTime`` = 2 x ``latency_tolerance`` x
  64 ms - mean - 16 ms clamped to [2 frames, ``retransmitTime``], initially
  500 ms. The mean is primed by the best round trip while the peer's ack (a
  u16) is at most 10, so again after every serial wrap (about 9 minutes at
  16 ms frames), as in the C++.
* ``my_id`` can be set once (a client logs in as -1 and takes its slot from
  the TOC); queued commands keep the sender byte they were made with.
* Peer lost (:class:`PeerLost`): more than 1024 commands waiting in the
  transmit queue, or 120 s without an ack while a sent command is unacked.

Memory: everything a connection holds is bounded. The transmit queue is the
application's sends, and more than ``MAX_TRANSMIT_QUEUE`` = 1024 waiting loses
the peer; the receive queue holds at most ``skip_after`` commands (with
``skip_after=None``, the commands of the half serial space ahead: 16,384);
:class:`SerialSkipped` events waiting for :meth:`Connection.events` stop at
``max_skip_events`` (``MAX_SKIP_EVENTS`` = 1024, later ones only counted in
``skip_events_dropped``); the one :class:`PeerLost` is always kept.

The two give-up rules (the skip rule and the resend cap) lose or stall
messages on very lossy links, as in the game. ``Connection(skip_after=None,
max_resends_without_receive=None)`` keeps the wire bytes and timers but never
gives up a message while the peer answers.

Numbers from the game's ``CUDPConnection.cpp`` at commit aaa5e633 (2026-01-19)
(the millisecond clock): the send window (``kMaxReceiveQueueLength`` =
``kMaxTransmitQueueLength`` = 1024), the initial mean RTT (500 ms) and
variance (64 ms squared), the RTT statistics above.

Where this differs from the C++ (deliberately, documented in
``docs/avara.md``): no byte quota (the game's ``quota`` only throttles
bursts); round trips on the caller's continuous clock and C ``float`` RTT
arithmetic done in doubles; the 120 s check looks at every unacked command
rather than only those ``FindBestPacket`` happens to scan; ack blocks as
above (the game writes aliased bits for serials more than 64 past the base;
ours leaves those out and clears bits that could alias). Our reader ignores
bit 0 (base + 2, the serial the peer is missing), bits for serials past
base + 64, and bit k while we have sent base + 2(k+1) + 64 or later: the
game's writer sets that bit for such a serial too (its shift wraps on x86),
so it could ack a command the peer never got; the command is resent instead.

Two twins, one source: ``_session_py.py`` is the pure twin and, compiled with
the types of ``_session_c.pxd``, the compiled twin ``_session_c``; this module
picks one (``gamecodec.implementation()["avara.session"]``) and re-exports it.
Both return the same event classes (defined in ``_models``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gamecodec import _accel
from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.avara._models import (
    ACK_DELAY,
    CRAM_PACK_SIZE,
    CRAM_TIME,
    INITIAL_RETRANSMIT_TIME,
    INITIAL_ROUND_TRIP_TIME,
    INITIAL_ROUND_TRIP_VAR,
    MAX_RESENDS_WITHOUT_RECEIVE,
    MAX_RETRANSMIT_TIME,
    MAX_SKIP_EVENTS,
    MAX_TRANSMIT_QUEUE,
    SEND_WINDOW,
    SERIAL_STEP,
    SETTLE,
    ULP_TIMEOUT,
    PeerLost,
    SerialSkipped,
)

__all__ = [
    "ACK_DELAY",
    "CRAM_PACK_SIZE",
    "CRAM_TIME",
    "INITIAL_RETRANSMIT_TIME",
    "INITIAL_ROUND_TRIP_TIME",
    "INITIAL_ROUND_TRIP_VAR",
    "MAX_RESENDS_WITHOUT_RECEIVE",
    "MAX_RETRANSMIT_TIME",
    "MAX_SKIP_EVENTS",
    "MAX_TRANSMIT_QUEUE",
    "SEND_WINDOW",
    "SERIAL_STEP",
    "SETTLE",
    "ULP_TIMEOUT",
    "Connection",
    "PeerLost",
    "SerialSkipped",
    "serial_diff",
]

if TYPE_CHECKING:
    from gamecodec.avara import _session_py as _twin
else:
    _twin = _accel.load("gamecodec.avara", "_session", "avara.session")

Connection = _twin.Connection
serial_diff = _twin.serial_diff


def _connection_event() -> Any:
    return SerialSkipped | PeerLost


__getattr__ = deprecated_names(
    __name__, {"ConnectionEvent": ("SerialSkipped | PeerLost", _connection_event)}
)

__dir__ = public_dir(__name__)
