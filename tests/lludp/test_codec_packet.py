"""``encode_packet``: a message encoded straight into a circuit's packet.

The header gets the given flags (ZEROCODED from the message and
``zero_coding``, ACK from the appended acks) and sequence; the first ``n`` ids
of a list are appended in list order, ``n`` bounded by ``count``, the list and
the ``limit`` in bytes, none on PacketAck. Expected bytes are built here from
:func:`encode` and by hand; the hypothesis test holds both twins to the same
results and errors, and decodes each twin's packet with the other.
"""

from __future__ import annotations

import struct
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.errors import EncodeError
from gamecodec.lludp import Message, build, default_template
from tests.lludp.conftest import outcome, unchecked
from tests.lludp.test_parity import messages

TEMPLATE = default_template()
ACK, ZEROCODED, RELIABLE, RESENT = 0x10, 0x80, 0x40, 0x20
SETTINGS = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def chat(text: bytes, **kw: Any) -> Message:
    return unchecked(
        "ChatFromViewer",
        AgentData={"AgentID": bytes(16), "SessionID": bytes(16)},
        ChatData={"Message": text, "Type": 1, "Channel": 0},
        **kw,
    )


def expected(message: Message, zero_coding: str, flags: int, sequence: int, acks: list[int],
             count: int, limit: int) -> bytes:  # fmt: skip
    """The definition, from the pure encode and struct."""
    from gamecodec.lludp import _codec_py

    base = _codec_py.encode(message._replace(acks=()), TEMPLATE, zero_coding)
    n = (
        0
        if message.name == "PacketAck"
        else max(0, min(count, len(acks), (limit - len(base) - 1) // 4))
    )
    head = (flags & ~(ZEROCODED | ACK)) | (base[0] & ZEROCODED) | (ACK if n else 0)
    tail = struct.pack(f">{n}IB", *acks[:n], n) if n else b""
    return bytes((head,)) + sequence.to_bytes(4, "big") + base[5:] + tail


def test_header_body_and_acks(codec: ModuleType) -> None:
    msg = chat(b"hello", sequence=77, acks=(5, 6))._replace(flags=ZEROCODED | RESENT)
    got = codec.encode_packet(msg, TEMPLATE, "flag", RELIABLE, 12, [1, 2, 3], 2, 1200)
    assert got == expected(msg, "flag", RELIABLE, 12, [1, 2, 3], 2, 1200)
    assert got[0] == ZEROCODED | RELIABLE | ACK
    assert got[1:5] == (12).to_bytes(4, "big")
    assert got[-9:] == struct.pack(">IIB", 1, 2, 2)
    decoded = codec.decode(got, TEMPLATE)
    assert decoded.acks == (2, 1)  # the decoder lists the id nearest the count first
    assert decoded.sequence == 12
    assert decoded.ChatData == msg.ChatData


def test_no_acks_leaves_ack_flag_clear(codec: ModuleType) -> None:
    msg = chat(b"x")._replace(flags=0)
    for acks, count in (([], 5), ([1, 2], 0)):
        got = codec.encode_packet(msg, TEMPLATE, "flag", ACK | RELIABLE, 3, acks, count, 1200)
        assert got[0] == RELIABLE
        assert got == codec.encode(msg._replace(flags=RELIABLE, sequence=3), TEMPLATE)


def test_acks_stop_at_the_limit(codec: ModuleType) -> None:
    msg = chat(b"y" * 20)
    base = len(codec.encode(msg, TEMPLATE))
    ids = list(range(100, 110))
    for extra, n in ((0, 0), (4, 0), (5, 1), (8, 1), (9, 2), (41, 10), (400, 10)):
        got = codec.encode_packet(msg, TEMPLATE, "flag", 0, 1, ids, 250, base + extra)
        assert len(got) == base + (4 * n + 1 if n else 0)
        assert got == expected(msg, "flag", 0, 1, ids, 250, base + extra)


def test_never_on_packet_ack(codec: ModuleType) -> None:
    msg = build("PacketAck", Packets=[{"ID": 9}])
    got = codec.encode_packet(msg, TEMPLATE, "flag", 0, 4, [1, 2], 2, 1200)
    assert not got[0] & ACK
    assert codec.decode(got, TEMPLATE).acks == ()


def test_zero_coding_smaller_may_clear_the_flag(codec: ModuleType) -> None:
    ones = bytes(range(1, 17))
    msg = build(  # two lone zeros (in the number and a length): no smaller when coded
        "ChatFromViewer",
        AgentData={"AgentID": ones, "SessionID": ones},
        ChatData={"Message": b"abc", "Type": 1, "Channel": 0x01010101},
    )._replace(flags=ZEROCODED)
    flagged = codec.encode_packet(msg, TEMPLATE, "flag", 0, 1, [], 0, 1200)
    smaller = codec.encode_packet(msg, TEMPLATE, "smaller", ZEROCODED, 1, [], 0, 1200)
    assert flagged[0] == ZEROCODED
    assert smaller[0] == 0  # the given flags' ZEROCODED bit is not taken


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((256, 1, [], 0, 1200), "flags"),
        ((0, -1, [], 0, 1200), "sequence"),
        ((0, 1 << 32, [], 0, 1200), "sequence"),
        ((0, 1, [], 251, 1200), "acks"),
        ((0, 1, [1 << 32], 1, 1200), "acks"),
        ((0, 1, ["x"], 1, 1200), "acks"),
        ((0, 1, [], 0, -1), "limit"),
    ],
)
def test_bad_arguments(codec: ModuleType, args: tuple[Any, ...], match: str) -> None:
    with pytest.raises(EncodeError, match=match):
        codec.encode_packet(chat(b"z"), TEMPLATE, "flag", *args)


def test_the_messages_own_errors_are_encodes(codec: ModuleType) -> None:
    bad = chat(b"z", acks=(1 << 40,))
    with pytest.raises(EncodeError, match="acks"):
        codec.encode_packet(bad, TEMPLATE, "flag", 0, 1, [], 0, 1200)
    with pytest.raises(ValueError, match="zero_coding"):
        codec.encode_packet(chat(b"z"), TEMPLATE, "never", 0, 1, [], 0, 1200)
    with pytest.raises(TypeError):
        codec.encode_packet("not a message", TEMPLATE, "flag", 0, 1, [], 0, 1200)


@SETTINGS
@given(
    case=messages(),
    zero_coding=st.sampled_from(["flag", "flag", "smaller"]),
    flags=st.integers(0, 0xFF),
    sequence=st.integers(0, 0xFFFFFFFF),
    acks=st.lists(st.integers(0, 0xFFFFFFFF), max_size=12),
    count=st.integers(0, 250),
    limit=st.sampled_from([0, 7, 60, 100, 1200]) | st.integers(0, 2000),
)
def test_twins_agree_with_the_definition_and_each_other(
    py_codec: ModuleType, c_codec: ModuleType, case: Any, zero_coding: str, flags: int,
    sequence: int, acks: list[int], count: int, limit: int,
) -> None:  # fmt: skip
    msg, template = case
    args = (msg, template, zero_coding, flags, sequence, acks, count, limit)
    a = outcome(py_codec.encode_packet, *args)
    b = outcome(c_codec.encode_packet, *args)
    assert a == b
    if a[0] != "ok":
        assert outcome(py_codec.encode, msg, template, zero_coding)[0] != "ok"
        return
    packet = py_codec.encode_packet(*args)
    assert packet == expected(msg, zero_coding, flags, sequence, acks, count, limit)
    n = packet[-1] if packet[0] & ACK else 0
    assert c_codec.decode(packet, template).acks == tuple(reversed(acks[:n]))
    assert py_codec.decode(c_codec.encode_packet(*args), template).sequence == sequence


@SETTINGS
@given(
    case=messages(garbage=True),
    flags=st.sampled_from([0, 0x40, 0xFF, 256, -1, True, "x"]),
    sequence=st.sampled_from([0, 1, 0xFFFFFFFF, 1 << 32, -1, None]),
    acks=st.lists(st.sampled_from([0, 5, 0xFFFFFFFF, 1 << 32, -1, None, 2.0]), max_size=4),
    count=st.sampled_from([0, 1, 4, 250, 251, -1]),
    limit=st.sampled_from([0, 1200, -5, 1 << 40]),
    zero_coding=st.sampled_from(["flag", "smaller", "other"]),
)
def test_twins_agree_on_errors(
    py_codec: ModuleType, c_codec: ModuleType, case: Any, flags: Any, sequence: Any, acks: Any,
    count: Any, limit: Any, zero_coding: str,
) -> None:  # fmt: skip
    msg, template = case
    args = (msg, template, zero_coding, flags, sequence, acks, count, limit)
    assert outcome(py_codec.encode_packet, *args) == outcome(c_codec.encode_packet, *args)


class _Shrinking:
    """An int-like value whose conversion empties the list it sits in (or another)."""

    def __init__(self, victim: list[Any], value: int) -> None:
        self.victim = victim
        self.value = value

    def __index__(self) -> int:
        self.victim.clear()
        return self.value


def test_acks_emptied_while_written_raise_as_the_pure_twin(codec: ModuleType) -> None:
    """An ack whose conversion empties the acks list: the next one is missing,
    an IndexError on both twins (the compiled one read past the list)."""
    acks: list[Any] = []
    acks.extend([_Shrinking(acks, 5), 6, 7])
    with pytest.raises(IndexError):
        codec.encode_packet(chat(b"hi"), TEMPLATE, "flag", 0, 1, acks, 3, 1200)


def test_blocks_emptied_while_written_end_the_block_as_the_pure_twin(
    codec: ModuleType, py_codec: ModuleType
) -> None:
    """A field whose conversion empties its message's block list: the blocks
    after it are not written (as a list iterator stops), on both twins."""

    def message() -> Message:
        msg = build("PacketAck", Packets=[{"ID": 1}, {"ID": 2}, {"ID": 3}])
        items: list[Any] = list(msg.blocks["Packets"])
        items[0] = items[0]._replace(ID=_Shrinking(items, 9))
        return msg._replace(blocks={"Packets": items})

    got = codec.encode(message(), TEMPLATE, "flag")
    assert got == py_codec.encode(message(), TEMPLATE, "flag")
    assert got.endswith(b"\x03" + struct.pack("<I", 9))
