"""A connection's memory is bounded whatever the peer sends: waiting
SerialSkipped events stop at ``max_skip_events``."""

from __future__ import annotations

from types import ModuleType

import pytest

from gamecodec.avara.session import MAX_SKIP_EVENTS, SerialSkipped
from tests.conftest import load_twin


@pytest.fixture
def twin(impl: str) -> ModuleType:
    return load_twin("gamecodec.avara", "_session", impl)


def _one_command_each(twin: ModuleType, count: int) -> list[bytes]:
    """Datagrams of about one command each (64-byte payloads are not packed together)."""
    sender = twin.Connection(my_id=1, peer_id=2, now=0.0)
    wires = []
    for i in range(count):
        sender.send(17, p1=i % 100, data=bytes(64), now=i * 0.001)
        wires += sender.datagrams_to_send(i * 0.001)
    return wires


def test_default_and_check(twin: ModuleType) -> None:
    assert twin.Connection().max_skip_events == MAX_SKIP_EVENTS
    with pytest.raises(ValueError, match="max_skip_events"):
        twin.Connection(max_skip_events=-1)


def test_skip_events_stop_at_the_cap(twin: ModuleType) -> None:
    wires = _one_command_each(twin, 40)
    skipped = []
    for cap in (MAX_SKIP_EVENTS, 5):
        receiver = twin.Connection(my_id=2, peer_id=1, now=0.0, skip_after=1, max_skip_events=cap)
        for wire in wires[1::2]:  # every other one lost: arrivals skip serials
            receiver.receive_datagram(wire, 0.0)
        skipped.append((receiver.events(), receiver.skip_events_dropped))
    (everything, none_dropped), (kept, dropped) = skipped
    assert len(everything) > 10 and none_dropped == 0
    assert kept == everything[:5] and all(isinstance(e, SerialSkipped) for e in kept)
    assert dropped == len(everything) - 5
