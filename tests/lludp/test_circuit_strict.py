"""A strict circuit acks what the LL viewer's (tolerant) reader takes, and
reports what only that reader takes instead of delivering it; both twins.

The packets are OpenSimulator's own (``opensim_wire``): with the Second Life
template they decode only tolerantly, and a strict circuit that left them
unacked had the simulator resend each of them for good."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from gamecodec.errors import DecodeError
from gamecodec.lludp import Message, StrictDecodeFailed, build, forward
from gamecodec.lludp.circuit import BadDatagram
from gamecodec.sessions import Event
from tests.conftest import IMPLS, load_twin
from tests.lludp.opensim_wire import ALL, IM, MAP_BLOCK_REPLY
from tests.lludp.test_circuit import QUIET, make, numbered

RELIABLE, RESENT = 0x40, 0x20


def test_the_event_is_a_frozen_session_event() -> None:
    assert issubclass(StrictDecodeFailed, Event)
    event = StrictDecodeFailed("X", DecodeError("bad", 7), b"", build_ping(), 1.0)
    assert not hasattr(event, "__dict__")  # slotted
    with pytest.raises(AttributeError):
        event.name = "Y"  # type: ignore[misc]


def build_ping() -> Message:
    return build("CompletePingCheck", PingID={"PingID": 1})


@pytest.mark.parametrize("name", sorted(ALL))
def test_tolerated_packet_is_acked_not_delivered(
    twin: ModuleType, codec: ModuleType, name: str
) -> None:
    """Acked (with its appended acks applied) and reported, as the viewer acks it."""
    viewer = make(twin, codec, strict=True, **QUIET)
    viewer.send(numbered(1), reliable=True, now=0.0)
    viewer.datagrams_to_send(0.0)
    assert viewer.unacked == 1
    data = forward(ALL[name], acks=(1,))  # carrying the ack of our packet 1
    seq = int.from_bytes(data[1:5], "big")
    assert viewer.receive_datagram(data, 0.5) == []
    (event,) = viewer.events()
    assert isinstance(event, StrictDecodeFailed)
    assert (event.name, event.data, event.at) == (name, data, 0.5)
    assert isinstance(event.error, DecodeError)
    with pytest.raises(DecodeError) as info:
        codec.decode(data, viewer.template, True, 8192)
    assert (str(event.error), event.error.offset) == (str(info.value), info.value.offset)
    assert event.message == codec.decode(data, viewer.template, False, 8192)
    assert viewer.unacked == 0  # its appended ack retired packet 1
    assert viewer.acks_pending == [seq] and viewer.packets_in == 1
    (ack,) = viewer.datagrams_to_send(1.0)  # a PacketAck after the collect time
    assert seq == codec.decode(ack, viewer.template, True, 8192).Packets[0].ID
    # its resend is a duplicate: acked again, no second event
    resent = bytes((data[0] | RESENT,)) + data[1:]
    assert viewer.receive_datagram(resent, 2.0) == [] and viewer.events() == []
    assert viewer.acks_pending == [seq] and viewer.duplicates == 1
    # without strict it is delivered as usual
    tolerant = make(twin, codec, **QUIET)
    (got,) = tolerant.receive_datagram(data, 0.5)
    assert got == event.message and tolerant.events() == []


def test_no_resend_storm(twin: ModuleType, codec: ModuleType) -> None:
    """An OpenSim-style IM (no MetaData count) sent reliably to a strict
    circuit: acked once, never resent, reported once."""
    sim = make(twin, codec, **QUIET)
    viewer = make(twin, codec, strict=True, **QUIET)
    im = codec.decode(IM, sim.template, False, 8192)
    assert im.absent == ("MetaData",)  # encoded as it came: without the count
    sim.send(im, reliable=True, now=0.0)
    events: list[Any] = []
    t = 0.0
    while t < 30.0:
        for dg in sim.datagrams_to_send(t):
            viewer.receive_datagram(dg, t)
        for dg in viewer.datagrams_to_send(t):
            sim.receive_datagram(dg, t)
        events += viewer.events()
        t += 0.05
    assert sim.resent == 0 and sim.unacked == 0 and sim.events() == []
    assert [type(e) for e in events] == [StrictDecodeFailed]
    assert events[0].message.MessageBlock[0].Message == b"im-ping-0\x00"


def test_garbage_is_still_refused_and_unacked(twin: ModuleType, codec: ModuleType) -> None:
    """What even the tolerant decode refuses changes nothing (the viewer does not ack it)."""
    viewer = make(twin, codec, strict=True, **QUIET)
    bad = bytes((RELIABLE,)) + (5).to_bytes(4, "big") + b"\x00\xff\xff\x00"  # a cut number
    assert viewer.receive_datagram(bad, 0.0) == []
    (event,) = viewer.events()
    assert isinstance(event, BadDatagram) and event.data == bad
    assert viewer.acks_pending == [] and viewer.packets_in == 0


def test_control_messages_are_acted_on(twin: ModuleType, codec: ModuleType) -> None:
    """A PacketAck with a stray byte after it: applied, consumed, not reported
    (nothing would have been delivered); with ``deliver_control`` it is reported."""
    for deliver in (False, True):
        viewer = make(twin, codec, strict=True, deliver_control=deliver, **QUIET)
        viewer.send(numbered(1), reliable=True, now=0.0)
        viewer.datagrams_to_send(0.0)
        ack = bytes((0,)) + (9).to_bytes(4, "big") + b"\x00\xff\xff\xff\xfb\x01"
        assert viewer.receive_datagram(ack + (1).to_bytes(4, "little") + b"\x00", 0.1) == []
        assert viewer.unacked == 0
        events = viewer.events()
        assert [e.name for e in events] == (["PacketAck"] if deliver else [])


def test_strict_failures_waiting_are_capped(twin: ModuleType, codec: ModuleType) -> None:
    viewer = make(twin, codec, strict=True, max_bad_datagrams=2, **QUIET)
    for seq in range(1, 6):
        data = MAP_BLOCK_REPLY[:1] + seq.to_bytes(4, "big") + MAP_BLOCK_REPLY[5:]
        assert viewer.receive_datagram(data, 0.0) == []
    assert [type(e) for e in viewer.events()] == [StrictDecodeFailed] * 2
    assert viewer.strict_failures_dropped == 3 and viewer.bad_datagrams_dropped == 0
    assert viewer.acks_pending == [1, 2, 3, 4, 5]  # every one acked all the same


def test_both_twins_report_the_same() -> None:
    if "c" not in IMPLS:
        pytest.skip("GAMECODEC_TEST_IMPLS excludes the compiled twin")
    py_twin, py_codec, c_twin, c_codec = (
        load_twin("gamecodec.lludp", module, impl)
        for impl in ("py", "c")
        for module in ("_circuit", "_codec")
    )

    def run(twin: ModuleType, codec: ModuleType) -> list[Any]:
        viewer = make(twin, codec, strict=True, **QUIET)
        out: list[Any] = []
        for t, data in enumerate([*ALL.values(), IM[:20], IM]):
            out.append(viewer.receive_datagram(data, float(t)))
            out += [(type(e).__name__, repr(e)) for e in viewer.events()]
        out.append((viewer.acks_pending, viewer.packets_in, viewer.duplicates))
        return out

    assert run(py_twin, py_codec) == run(c_twin, c_codec)
