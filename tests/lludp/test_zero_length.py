"""Empty pieces at every copy: a circuit's first send (no acks owed), an
empty ack list, an empty raw body and extra, empty Variable fields. The
compiled twin copies each with memcpy; a copy of zero bytes from a NULL
pointer is undefined behaviour, which the sanitizer build of the test suite
reports."""

from __future__ import annotations

import uuid
from types import ModuleType

from gamecodec.lludp import build, default_template
from tests.lludp.conftest import numbered


def test_first_send_of_a_circuit_appends_no_acks(twin: ModuleType, codec: ModuleType) -> None:
    circuit = twin.Circuit(now=0.0, codec=codec)
    assert circuit.acks_pending == []
    seq = circuit.send(numbered(7), reliable=True, now=0.0)
    (wire,) = circuit.datagrams_to_send(0.0)
    assert wire == codec.encode_packet(
        numbered(7), default_template(), "flag", 0x40, seq, [], 0, 1200
    )
    assert not wire[0] & 0x10  # no ACK flag: nothing appended


def test_empty_acks_body_and_extra(codec: ModuleType) -> None:
    template = default_template()
    message = numbered(1)
    for acks in ([], ()):
        packet = codec.encode_packet(message, template, "flag", 0, 5, acks, 0, 0)
        assert packet == codec.encode(message._replace(sequence=5), template)
    empty = message._replace(body=b"", extra=b"", flags=0)
    assert codec.encode(empty, template) == b"\x00" * 6 + b"\xff\xff\x00\x01"


def test_empty_variable_fields(codec: ModuleType) -> None:
    template = default_template()
    message = build(
        "ChatFromViewer",
        AgentData={"AgentID": uuid.UUID(int=0), "SessionID": uuid.UUID(int=1)},
        ChatData={"Message": b"", "Type": 1, "Channel": 0},
    )
    wire = codec.encode(message, template)
    decoded = codec.decode(wire, template)
    assert decoded.blocks["ChatData"][0].Message == b""
