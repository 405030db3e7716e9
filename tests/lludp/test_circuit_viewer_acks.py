"""What a circuit acks and which acks it applies for datagrams it does not read,
as the LL viewer's ``LLMessageSystem::checkMessages`` (``message.cpp``) does;
both twins.

The viewer reads a datagram's appended acks and calls ``ackReliablePacket`` for
each before it looks for duplicates or validates the body, so a datagram it
then drops still retires our packets; it drops unread (acks included) one
shorter than 7 bytes or whose ack count does not fit. A message number its
template lacks fails ``validateMessage``: not read, not acked."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.errors import DecodeError
from gamecodec.lludp.circuit import BadDatagram
from tests.lludp.test_circuit import (
    ACK,
    QUIET,
    RELIABLE,
    RESENT,
    ZEROCODED,
    head,
    make,
    numbered,
    reliable_from_peer,
    tail,
)

UNKNOWN = b"\x00\xff\xff\xfe\xee\x01\x02"  # extra 0, Fixed 0xFFFFFEEE (no such message), 2 bytes


def sending(twin: ModuleType, codec: ModuleType, count: int, **kw: Any) -> Any:
    """A circuit that sent ``count`` reliable packets (sequences 1..count)."""
    c = make(twin, codec, **kw, **QUIET)
    for i in range(count):
        c.send(numbered(i), reliable=True, now=0.0)
    c.datagrams_to_send(0.0)
    assert c.unacked_sequences == list(range(1, count + 1))
    return c


REFUSED = {
    "number cut short": head(RELIABLE | ACK, 9) + b"\x00\xff" + tail([2, 4]),
    "zero run past max_size": head(RELIABLE | ZEROCODED | ACK, 9) + bytes(40) + tail([2, 4]),
    "extra bytes claimed": head(RELIABLE | ACK, 9) + b"\x50\x01" + tail([2, 4]),
    "PacketAck cut short": head(RELIABLE | ACK, 9) + b"\x00\xff\xff\xff\xfb\x03\x01" + tail([2, 4]),
    "StartPingCheck cut short": head(RELIABLE | ACK, 9) + b"\x00\x01\x05" + tail([2, 4]),
    "unknown message number": head(RELIABLE | ACK, 9) + UNKNOWN + tail([2, 4]),
}


@pytest.mark.parametrize("strict", [False, True], ids=["tolerant", "strict"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_datagram_applies_its_appended_acks(
    twin: ModuleType, codec: ModuleType, name: str, strict: bool
) -> None:
    """Refused (a BadDatagram, not acked, not delivered), its acks applied."""
    c = sending(twin, codec, 5, strict=strict)
    data = REFUSED[name]
    if name == "unknown message number":  # the codec reads it; the circuit does not
        assert codec.decode(data, c.template, strict, 8192).body == b"\x01\x02"
    elif name.endswith("Check cut short") or name.startswith("PacketAck"):
        assert codec.decode(data, c.template, False, 8192).truncated  # zero-filled
    else:
        with pytest.raises(DecodeError):
            codec.decode(data, c.template, False, 8192)
    assert c.receive_datagram(data, 0.5) == []
    assert c.unacked_sequences == [1, 3, 5]
    assert c.acks_pending == [] and c.packets_in == 0
    (event,) = c.events()
    assert isinstance(event, BadDatagram) and (event.data, event.at) == (data, 0.5)
    assert isinstance(event.error, DecodeError)
    # nothing is owed: nothing goes out until a ping or a resend is due
    assert c.datagrams_to_send(0.9) == []


def test_the_ack_count_must_fit(twin: ModuleType, codec: ModuleType) -> None:
    """``count * 4 + 7`` bytes before the count byte: applied when exactly
    there, the datagram dropped unread (its acks too) one byte short."""
    c = sending(twin, codec, 3)
    fits = head(ACK, 9) + b"\x00\xff" + tail([2])  # 7 + 4 bytes before the count
    assert len(fits) - 1 == 4 + 7
    assert c.receive_datagram(fits, 0.1) == []
    assert c.unacked_sequences == [1, 3]
    short = head(ACK, 10) + b"\x00" + tail([1])  # one byte fewer
    assert c.receive_datagram(short, 0.2) == []
    assert c.unacked_sequences == [1, 3]
    assert [type(e) for e in c.events()] == [BadDatagram, BadDatagram]


def test_a_duplicate_applies_its_appended_acks(twin: ModuleType, codec: ModuleType) -> None:
    """The viewer applies them before its duplicate check: a resend that carries
    acks (or a datagram the network duplicated) retires our packets too."""
    c = sending(twin, codec, 3)
    first = reliable_from_peer(codec, 40, 40)
    assert len(c.receive_datagram(first, 0.1)) == 1
    again = bytes((first[0] | RESENT | ACK,)) + first[1:] + tail([3, 1])
    assert c.receive_datagram(again, 0.2) == [] and c.events() == []
    assert c.duplicates == 1 and c.packets_in == 1
    assert c.unacked_sequences == [2]
    assert c.acks_pending == [40, 40]  # acked again, as before


@pytest.mark.parametrize("strict", [False, True], ids=["tolerant", "strict"])
def test_an_unknown_message_number_is_neither_acked_nor_delivered(
    twin: ModuleType, codec: ModuleType, strict: bool
) -> None:
    """``validateMessage`` fails on it: the viewer drops it unacked (its
    sender resends it, each resend refused again) after applying its acks."""
    c = sending(twin, codec, 2, strict=strict)
    data = head(RELIABLE | ACK, 3) + UNKNOWN + tail([2])
    assert not codec.decode(data, c.template, strict, 8192).known  # the codec reads it
    assert c.receive_datagram(data, 0.1) == []
    assert c.acks_pending == [] and c.packets_in == 0 and c.unacked_sequences == [1]
    (event,) = c.events()
    assert isinstance(event, BadDatagram) and event.data == data
    assert event.error.offset == 6 and "Unknown:0xfffffeee" in str(event.error)
    # the resend is not a duplicate of anything: refused again, still unacked
    resent = bytes((RELIABLE | RESENT,)) + data[1:5] + UNKNOWN
    assert c.receive_datagram(resent, 1.5) == []
    assert [type(e) for e in c.events()] == [BadDatagram]
    assert c.acks_pending == [] and c.duplicates == 0
    # unreliable, the same: refused, not delivered
    assert c.receive_datagram(head(0, 4) + UNKNOWN, 1.6) == []
    assert [type(e) for e in c.events()] == [BadDatagram]
    # a known message afterwards is delivered and acked as usual
    (got,) = c.receive_datagram(reliable_from_peer(codec, 5, 5), 1.7)
    assert got.TestBlock1[0].Test1 == 5 and c.acks_pending == [5]


def viewer_applies(raw: bytes) -> set[int]:
    """The ids ``checkMessages`` passes to ``ackReliablePacket`` for ``raw``."""
    n = len(raw)
    if n < 7 or not raw[0] & ACK:
        return set()
    count = raw[-1]
    if n - 1 < 4 * count + 7:
        return set()
    return {int.from_bytes(raw[n - 5 - 4 * k : n - 1 - 4 * k], "big") for k in range(count)}


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flags=st.integers(0, 0xFF),
    extra=st.integers(0, 3),
    number=st.integers(0, 0xFE),  # never 0xFF: no PacketAck, whose body retires packets
    body=st.binary(max_size=40),
    ids=st.lists(st.integers(0, 8), max_size=6),
    count=st.one_of(st.none(), st.integers(0, 255)),
)
def test_every_datagram_retires_what_the_viewer_would(
    twin: ModuleType,
    codec: ModuleType,
    flags: int,
    extra: int,
    number: int,
    body: bytes,
    ids: list[int],
    count: int | None,
) -> None:
    """Whatever the body (read, refused, unknown), the packets retired are the
    appended acks the viewer reads; ``count`` forges the count byte."""
    c = sending(twin, codec, 6)
    acks = b"".join(i.to_bytes(4, "big") for i in ids)
    raw = head(flags, 700) + bytes((extra, number)) + body + acks
    raw += bytes((len(ids) if count is None else count,))
    c.receive_datagram(raw, 0.1)
    assert set(c.unacked_sequences) == set(range(1, 7)) - viewer_applies(raw)


@pytest.mark.parametrize(
    "tail_bytes",
    [tail([1, 3])[:-1] + b"\x09", b"\x00"],  # count past the datagram; 7 bytes, count 0
    ids=["count too big", "count 0, no room"],
)
def test_a_duplicate_whose_ack_count_does_not_fit_is_dropped_unread(
    twin: ModuleType, codec: ModuleType, tail_bytes: bytes
) -> None:
    """``checkMessages`` drops a datagram whose ack count does not fit before
    its duplicate check: a seen sequence number with a bad tail is not acked
    again (nor are its acks applied); it is refused like a first copy."""
    c = sending(twin, codec, 3)
    first = reliable_from_peer(codec, 40, 40)
    assert len(c.receive_datagram(first, 0.1)) == 1
    c.datagrams_to_send(0.2)  # the ack of 40 goes out
    bad = bytes((RELIABLE | RESENT | ACK,)) + first[1:6] + tail_bytes
    with pytest.raises(DecodeError):  # a first copy is refused
        codec.decode(bad, c.template, False, 8192)
    assert viewer_applies(bad) == set()
    assert c.receive_datagram(bad, 0.3) == []
    assert c.acks_pending == [] and c.unacked_sequences == [1, 2, 3]
    assert [type(e) for e in c.events()] == [BadDatagram]
