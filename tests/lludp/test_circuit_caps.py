"""A circuit's memory is bounded whatever the peer sends: acks owed stop at
``max_pending_acks``, waiting BadDatagram events at ``max_bad_datagrams``."""

from __future__ import annotations

from types import ModuleType

import pytest

from gamecodec.lludp import RELIABLE, default_template
from gamecodec.lludp.circuit import MAX_BAD_DATAGRAMS, MAX_PENDING_ACKS, BadDatagram
from tests.lludp.conftest import numbered


def _reliable(codec: ModuleType, seq: int) -> bytes:
    message = numbered(seq)
    return codec.encode(
        message._replace(flags=message.flags | RELIABLE, sequence=seq), default_template()
    )


def test_defaults_and_checks(twin: ModuleType) -> None:
    circuit = twin.Circuit()
    assert circuit.max_pending_acks == MAX_PENDING_ACKS
    assert circuit.max_bad_datagrams == MAX_BAD_DATAGRAMS
    with pytest.raises(ValueError, match="max_pending_acks"):
        twin.Circuit(max_pending_acks=0)
    with pytest.raises(ValueError, match="max_bad_datagrams"):
        twin.Circuit(max_bad_datagrams=-1)


def test_acks_owed_stop_at_the_cap(twin: ModuleType, codec: ModuleType) -> None:
    circuit = twin.Circuit(now=0.0, codec=codec, max_pending_acks=10)
    for seq in range(1, 51):  # the application never sends: nothing carries the acks
        assert len(circuit.receive_datagram(_reliable(codec, seq), 0.0)) == 1
    assert circuit.acks_pending == list(range(1, 11))
    circuit.datagrams_to_send(1.0)  # the PacketAck flush
    assert circuit.acks_pending == []
    # the peer resends one whose ack was not queued: the duplicate is acked now
    assert circuit.receive_datagram(_reliable(codec, 30), 1.0) == []
    assert circuit.acks_pending == [30]


def test_bad_datagram_events_stop_at_the_cap(twin: ModuleType, codec: ModuleType) -> None:
    circuit = twin.Circuit(now=0.0, codec=codec, max_bad_datagrams=5)
    for i in range(20):
        circuit.receive_datagram(bytes([i, 1]), 0.0)  # too short: a BadDatagram
    events = circuit.events()
    assert len(events) == 5 and all(isinstance(e, BadDatagram) for e in events)
    assert circuit.bad_datagrams_dropped == 15
    circuit.receive_datagram(b"\x00\x01", 0.0)  # room again once they were taken
    assert len(circuit.events()) == 1


def test_memory_stays_bounded_under_a_flood(twin: ModuleType, codec: ModuleType) -> None:
    """A peer flooding reliable packets and garbage at a circuit whose
    application never drains it: every structure stays within its cap."""
    circuit = twin.Circuit(
        now=0.0, codec=codec, max_pending_acks=64, max_bad_datagrams=8, duplicate_window=100
    )
    for seq in range(1, 2001):
        circuit.receive_datagram(_reliable(codec, seq), 0.0)
        circuit.receive_datagram(b"\x40\xff", 0.0)
    assert len(circuit.acks_pending) == 64
    assert circuit.bad_datagrams_dropped == 2000 - 8
    assert len(circuit.events()) == 8
