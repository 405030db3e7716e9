"""The LLUDP codec on both twins: tolerance (spec §1.6, §9.5), header, acks, fields, model.

Hand-made packets: StartPingCheck (High 1: PingID U8, OldestUnacked U32),
CompletePingCheck (High 2: PingID U8), PacketAck (Fixed FFFFFFFB: Variable of
U32), ObjectRotation (Low 93: Single AgentData, Variable ObjectData), and the
``all_types`` template of conftest.py for every field type.
"""

from __future__ import annotations

import math
import struct
import uuid
from types import ModuleType
from typing import Any

import pytest

from gamecodec import lludp
from gamecodec.errors import DecodeError, EncodeError
from gamecodec.lludp import Block, Frequency, Header, Message, Template, build
from tests.lludp.conftest import unchecked

AGENT = uuid.UUID("5801511b-c0a5-4f2d-281f-98f1b92abc6a")
SESSION = uuid.UUID("299a2f94-28f0-2ffc-4a4a-36685e8009fe")
PING = bytes.fromhex("40 00000007 00 01 09 05000000")  # StartPingCheck 9, 5
ROTATION_NUMBER = b"\xff\xff\x00\x5d"  # ObjectRotation, Low 93
POSITION_NUMBER = b"\xff\x04"  # ObjectPosition, Medium 4


def header(flags: int = 0, sequence: int = 7, extra: int = 0) -> bytes:
    return bytes((flags,)) + sequence.to_bytes(4, "big") + bytes((extra,))


def decode(codec: ModuleType, template: Template, data: bytes, strict: bool = False) -> Message:
    return codec.decode(data, template, strict, 8192)  # type: ignore[no-any-return]


def strict_error(codec: ModuleType, template: Template, data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        codec.decode(data, template, True, 8192)
    return info.value


def rotation(agent_and_session: bool = True) -> bytes:
    """ObjectRotation's header and AgentData, up to (not including) the ObjectData count."""
    return header() + ROTATION_NUMBER + (AGENT.bytes + SESSION.bytes if agent_and_session else b"")


# --- the baseline --------------------------------------------------------------------------------


def test_plain_packet(codec: ModuleType, template: Template) -> None:
    msg = decode(codec, template, PING, strict=True)
    assert (msg.name, msg.frequency, msg.number) == ("StartPingCheck", Frequency.HIGH, 1)
    assert (msg.flags, msg.sequence, msg.acks, msg.extra) == (0x40, 7, (), b"")
    assert msg.PingID[0] == (9, 5)
    assert (msg.excess, msg.absent, msg.truncated, msg.body, msg.known) == (
        b"",
        (),
        False,
        None,
        True,
    )
    assert msg.reliable and not msg.zerocoded and not msg.resent
    assert codec.encode(msg, template, "flag") == PING


# --- tolerance: spec §1.6 and §9.5 ---------------------------------------------------------------


def test_excess_bytes_are_kept(codec: ModuleType, template: Template) -> None:
    data = PING + b"\xaa\x00\xbb"
    msg = decode(codec, template, data)
    assert msg.excess == b"\xaa\x00\xbb"
    assert msg.PingID[0] == (9, 5)
    assert not msg.truncated
    assert codec.encode(msg, template, "flag") == data
    error = strict_error(codec, template, data)
    assert error.offset == len(PING)
    assert "3 bytes after the last block" in str(error)


def test_excess_bytes_in_a_zero_coded_packet(codec: ModuleType, template: Template) -> None:
    data = header(0x80) + b"\x01\x09\x00\x04\xaa\x00\x03\xbb"
    msg = decode(codec, template, data)
    assert msg.excess == b"\xaa\x00\x00\x00\xbb"  # decoded form
    assert codec.encode(msg, template, "flag") == data
    assert strict_error(codec, template, data).offset == 12  # in the zero-decoded packet


def test_excess_bytes_with_acks(codec: ModuleType, template: Template) -> None:
    data = bytes((0x50,)) + PING[1:] + b"\xee" + (1234).to_bytes(4, "big") + b"\x01"
    msg = decode(codec, template, data)
    assert (msg.excess, msg.acks) == (b"\xee", (1234,))
    assert codec.encode(msg, template, "flag") == data


def test_missing_variable_count_is_absent(codec: ModuleType, template: Template) -> None:
    data = rotation()
    msg = decode(codec, template, data)
    assert msg.name == "ObjectRotation"
    assert msg.ObjectData == ()
    assert msg.absent == ("ObjectData",)
    assert not msg.truncated
    assert msg.AgentData[0].AgentID == AGENT
    assert codec.encode(msg, template, "flag") == data  # the count byte stays left out
    # once the message is changed to have blocks, the count is written
    filled = msg._replace(absent=())
    assert codec.encode(filled, template, "flag") == data + b"\x00"
    error = strict_error(codec, template, data)
    assert error.offset == len(data)
    assert "count of block ObjectData" in str(error)


def test_an_absent_block_a_written_block_follows_gets_its_count(
    codec: ModuleType, template: Template
) -> None:
    """AgentAnimation cut before both Variable counts decodes with both absent;
    filling the second one wrote no count for the first, and the packet read
    back as a garbage AnimationList (found in a Hippolyzer differential run:
    Hippolyzer writes the 0 count)."""
    aid = {"AgentID": uuid.UUID(int=1), "SessionID": uuid.UUID(int=2)}
    full = codec.encode(build("AgentAnimation", AgentData=aid)._replace(flags=0), template, "flag")
    cut = full[:-2]
    msg = decode(codec, template, cut)
    assert msg.absent == ("AnimationList", "PhysicalAvatarEventList")
    assert codec.encode(msg, template, "flag") == cut  # unchanged: both left out
    event = template.block_classes("AgentAnimation")["PhysicalAvatarEventList"]
    changed = msg._replace(blocks={**msg.blocks, "PhysicalAvatarEventList": [event([b"\x07"])]})
    wire = codec.encode(changed, template, "flag")
    assert wire == cut + b"\x00\x01\x01\x07"  # AnimationList: 0; one event of 1 byte
    back = decode(codec, template, wire)
    assert (back.AnimationList, back.PhysicalAvatarEventList[0].TypeData) == ((), b"\x07")
    assert not back.truncated and back.absent == ()


def test_missing_count_in_the_all_types_template(codec: ModuleType, all_types: Template) -> None:
    data = header() + b"\xc8" + (77).to_bytes(4, "little")  # Tiny: One, then no Tail count
    msg = decode(codec, all_types, data)
    assert (msg.name, msg.One[0].Value, msg.Tail, msg.absent) == ("Tiny", 77, (), ("Tail",))
    assert codec.encode(msg, all_types, "flag") == data
    assert strict_error(codec, all_types, data).offset == 11


def test_field_cut_short_is_zero_filled(codec: ModuleType, template: Template) -> None:
    """The viewer zero-fills a fixed-size field cut short as a whole: the bytes
    that are there are not used (``lltemplatemessagereader.cpp``, ``decodeData``)."""
    data = PING[:-1]  # OldestUnacked has 3 of its 4 bytes (05 00 00)
    msg = decode(codec, template, data)
    assert msg.PingID[0] == (9, 0)
    assert msg.truncated
    assert codec.encode(msg, template, "flag") == PING[:-4] + bytes(4)  # re-encoded zero-filled
    error = strict_error(codec, template, data)
    assert error.offset == 8  # where the field starts
    assert "PingID.OldestUnacked" in str(error)
    for cut in (PING[:-3], PING[:-2] + b"\xff"):
        assert decode(codec, template, cut).PingID[0].OldestUnacked == 0


def test_field_entirely_missing_is_zero(codec: ModuleType, template: Template) -> None:
    """CompletePingCheck ending after its number: PingID 0, as LL delivers it."""
    data = header() + b"\x02"
    msg = decode(codec, template, data)
    assert (msg.name, msg.PingID[0].PingID, msg.truncated) == ("CompletePingCheck", 0, True)
    assert strict_error(codec, template, data).offset == 7


def test_fixed_bytes_and_uuid_cut_short(codec: ModuleType, template: Template) -> None:
    data = rotation(agent_and_session=False) + AGENT.bytes[:5]
    msg = decode(codec, template, data)
    assert msg.AgentData[0].AgentID == uuid.UUID(int=0)  # 5 of 16 bytes: all zeros
    assert msg.AgentData[0].SessionID == uuid.UUID(int=0)
    assert msg.truncated
    assert msg.absent == ("ObjectData",)


def test_variable_field_without_prefix_is_empty(codec: ModuleType, all_types: Template) -> None:
    data = header() + b"\xc8" + bytes(4) + b"\x01"  # Tail count 1, no length prefix
    msg = decode(codec, all_types, data)
    assert msg.Tail[0].Data == b""
    assert msg.truncated
    assert strict_error(codec, all_types, data).offset == 12


def test_variable_2_with_half_a_prefix(codec: ModuleType, all_types: Template) -> None:
    body = header() + b"\xff\xff\x03\xe8"
    scalars = bytes(1 + 2 + 4 + 8 + 1 + 2 + 4 + 8 + 4 + 8 + 1 + 4 + 2 + 16)
    vectors = bytes(2 * (12 + 24 + 16 + 12))
    data = body + scalars + vectors + b"\x01" + b"abcd" + b"\x01x" + b"\x05"
    msg = decode(codec, all_types, data)
    assert msg.Raw[0] == (b"abcd", b"x", b"")
    assert msg.truncated


def test_variable_data_cut_short_is_zero_filled(codec: ModuleType, all_types: Template) -> None:
    data = header() + b"\xc8" + bytes(4) + b"\x01\x05ab"
    msg = decode(codec, all_types, data)
    assert msg.Tail[0].Data == b"ab\x00\x00\x00"
    assert msg.truncated
    assert strict_error(codec, all_types, data).offset == 13


@pytest.mark.parametrize(
    ("body", "offset"),
    [
        (b"\xff\xff\xff\xfb\x00", 11),  # PacketAck with count 0
        (b"\xff\xff\xff\xfb", 10),  # PacketAck ending after its number
    ],
)
def test_message_without_any_block_is_an_error(
    codec: ModuleType, template: Template, body: bytes, offset: int
) -> None:
    with pytest.raises(DecodeError, match="PacketAck: message has no block") as info:
        codec.decode(header() + body, template, False, 8192)
    assert info.value.offset == offset
    # strict mode may report the missing count first; it is an error at the same byte
    with pytest.raises(DecodeError, match="PacketAck: ") as info:
        codec.decode(header() + body, template, True, 8192)
    assert info.value.offset == offset


def test_message_with_only_variable_blocks_empty(codec: ModuleType, template: Template) -> None:
    data = rotation(agent_and_session=False)[:-4] + b"\xff\xff\x00\xeb\x00"  # UUIDNameRequest
    with pytest.raises(DecodeError, match="no block"):
        decode(codec, template, data)


def test_message_without_blocks_in_its_template(codec: ModuleType, template: Template) -> None:
    data = header() + b"\xff\xff\xff\xfd"
    msg = decode(codec, template, data, strict=True)
    assert (msg.name, msg.blocks, msg.frequency) == ("CloseCircuit", {}, Frequency.FIXED)
    assert msg.number == 0xFFFFFFFD
    assert codec.encode(msg, template, "flag") == data
    assert codec.encode(build("CloseCircuit", sequence=7), template, "flag") == data
    assert decode(codec, template, data + b"\x01").excess == b"\x01"


# --- unknown messages ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "frequency", "value"),
    [
        (b"\x00", Frequency.HIGH, 0),
        (b"\xfe", Frequency.HIGH, 0xFE),
        (b"\xff\x50", Frequency.MEDIUM, 0x50),
        (b"\xff\xff\x0f\x00", Frequency.LOW, 0x0F00),
        (b"\xff\xff\xff\xfa", Frequency.FIXED, 0xFFFFFFFA),
    ],
)
def test_unknown_message_numbers(
    codec: ModuleType, template: Template, number: bytes, frequency: Frequency, value: int
) -> None:
    data = header(0x40) + number + b"\x01\x00\x02"
    msg = decode(codec, template, data, strict=True)
    assert msg.name.startswith("Unknown")
    assert not msg.known
    assert (msg.frequency, msg.number, msg.body, msg.blocks) == (
        frequency,
        value,
        b"\x01\x00\x02",
        {},
    )
    assert codec.encode(msg, template, "flag") == data
    head = codec.peek(data, template)
    assert (head.name, head.frequency, head.number) == (None, frequency, value)
    coded = header(0x90) + codec.zero_encode(number + b"\x01\x00\x00\x02") + b"\x00\x00\x00\x05\x01"
    msg = decode(codec, template, coded)
    assert (msg.body, msg.acks) == (b"\x01\x00\x00\x02", (5,))
    assert codec.encode(msg, template, "flag") == coded


# --- extra header bytes --------------------------------------------------------------------------


def test_extra_header_bytes(codec: ModuleType, template: Template) -> None:
    data = header(extra=3) + b"\x01" + b"xyz" + PING[7:]
    msg = decode(codec, template, data, strict=True)
    assert msg.extra == b"xyz"
    assert msg.PingID[0] == (9, 5)
    assert codec.encode(msg, template, "flag") == data
    assert codec.peek(data, template).extra_length == 3
    built = build(
        "StartPingCheck", sequence=7, extra=b"xyz", PingID={"PingID": 9, "OldestUnacked": 5}
    )
    assert codec.encode(built, template, "flag") == data


def test_extra_header_bytes_zero_coded(codec: ModuleType, template: Template) -> None:
    data = header(0x80, extra=3) + b"\x01\x00\x03\x09\x05\x00\x03"
    msg = decode(codec, template, data, strict=True)
    assert msg.extra == bytes(3)
    assert codec.encode(msg, template, "flag") == data


def test_extra_header_longer_than_the_packet(codec: ModuleType, template: Template) -> None:
    for strict in (False, True):
        with pytest.raises(DecodeError, match="extra header") as info:
            codec.decode(header(extra=200) + b"\x01\x09", template, strict, 8192)
        assert info.value.offset == 8


def test_extra_header_over_255_is_refused(codec: ModuleType, template: Template) -> None:
    msg = decode(codec, template, PING)._replace(extra=bytes(256))
    with pytest.raises(EncodeError, match="at most 255"):
        codec.encode(msg, template, "flag")


# --- appended acks -------------------------------------------------------------------------------


def test_acks_order(codec: ModuleType, template: Template) -> None:
    tail = bytes.fromhex("00000001 00000002 00000003 03")
    data = bytes((0x50,)) + PING[1:] + tail
    msg = decode(codec, template, data, strict=True)
    assert msg.acks == (3, 2, 1)  # acks[0] is the id nearest the count byte
    assert msg.flags == 0x50
    assert codec.encode(msg, template, "flag") == data
    assert codec.peek(data, template).acks == (3, 2, 1)


def test_ack_flag_with_zero_acks(codec: ModuleType, template: Template) -> None:
    data = bytes((0x50,)) + PING[1:] + b"\x00"
    msg = decode(codec, template, data, strict=True)
    assert (msg.acks, msg.excess) == ((), b"")
    assert msg.PingID[0] == (9, 5)


@pytest.mark.parametrize("count", [0, 1, 249, 250])
def test_up_to_250_acks(codec: ModuleType, template: Template, count: int) -> None:
    acks = tuple(range(1, count + 1))
    msg = decode(codec, template, PING)._replace(acks=acks)
    wire = codec.encode(msg, template, "flag")
    assert len(wire) == len(PING) + (4 * count + 1 if count else 0)
    got = decode(codec, template, wire, strict=True)
    assert got.acks == acks
    assert bool(got.flags & 0x10) == bool(count)


@pytest.mark.parametrize("count", [251, 255])
def test_decoded_packets_past_lls_ack_rule_re_encode_exactly(
    codec: ModuleType, template: Template, count: int
) -> None:
    """LL sends at most 250 acks and none on PacketAck, but its reader takes up to
    255 on any packet, and so does decode: encode writes them back (it refused,
    so an unmodified decoded message did not re-encode: spec decision 5)."""
    tail = b"".join(i.to_bytes(4, "big") for i in range(count)) + bytes((count,))
    data = bytes((0x10,)) + PING[1:] + tail
    msg = decode(codec, template, data, strict=True)
    assert len(msg.acks) == count
    assert codec.encode(msg, template, "flag") == data
    with pytest.raises(EncodeError, match="256 acks, at most 255"):
        codec.encode(msg._replace(acks=tuple(range(256))), template, "flag")


def test_acks_on_a_packet_ack_are_written_back(codec: ModuleType, template: Template) -> None:
    data = header(0x10, 0) + b"\xff\xff\xff\xfb\x01\x05\x00\x00\x00" + b"\x00\x00\x00\x01\x01"
    msg = decode(codec, template, data, strict=True)
    assert (msg.name, msg.acks) == ("PacketAck", (1,))
    assert codec.encode(msg, template, "flag") == data
    assert codec.encode(msg._replace(acks=(), flags=0), template, "flag") == (
        header(0, 0) + b"\xff\xff\xff\xfb\x01\x05\x00\x00\x00"
    )


@pytest.mark.parametrize("bad_ack", [-1, 1 << 32, "1", 1.0])
def test_bad_ack_values(codec: ModuleType, template: Template, bad_ack: object) -> None:
    msg = decode(codec, template, PING)._replace(acks=(1, bad_ack))
    with pytest.raises(EncodeError, match="acks"):
        codec.encode(msg, template, "flag")


@pytest.mark.parametrize(("count", "extra_bytes"), [(1, 0), (2, 4), (255, 0), (3, 11)])
def test_bad_ack_count(codec: ModuleType, template: Template, count: int, extra_bytes: int) -> None:
    """The count byte claims more acks than the packet can hold past its 7-byte minimum."""
    data = bytes((0x50,)) + PING[1:7] + bytes(extra_bytes) + bytes((count,))
    if len(data) - 1 >= 4 * count + 7:
        pytest.skip("fits")
    for fn in (
        lambda: codec.decode(data, template, False, 8192),
        lambda: codec.peek(data, template),
        lambda: codec.forward(data, None, None, None),
    ):
        with pytest.raises(DecodeError, match="appended ack count") as info:
            fn()
        assert info.value.offset == len(data) - 1


# --- short packets -------------------------------------------------------------------------------


@pytest.mark.parametrize("size", range(7))
def test_packet_shorter_than_7_bytes(codec: ModuleType, template: Template, size: int) -> None:
    data = PING[:size]
    for fn in (
        lambda: codec.decode(data, template, False, 8192),
        lambda: codec.peek(data, template),
        lambda: codec.forward(data, None, 5, None),
    ):
        with pytest.raises(DecodeError, match="shorter than the 7-byte minimum") as info:
            fn()
        assert info.value.offset == size


@pytest.mark.parametrize(
    ("number", "offset"),
    [(b"\xff", 7), (b"\xff\xff", 8), (b"\xff\xff\x00", 9), (b"\xff\xff\xff", 9)],
)
def test_message_number_truncated(
    codec: ModuleType, template: Template, number: bytes, offset: int
) -> None:
    for strict in (False, True):
        for fn in (
            lambda strict=strict: codec.decode(header() + number, template, strict, 8192),
            lambda: codec.peek(header() + number, template),
        ):
            with pytest.raises(DecodeError, match="inside the message number") as info:
                fn()
            assert info.value.offset == offset


def test_zero_coded_number_truncated(codec: ModuleType, template: Template) -> None:
    with pytest.raises(DecodeError, match="message number"):
        decode(codec, template, header(0x80) + b"\xff\xff\x00\x01")  # expands to FF FF 00


# --- peek and forward ----------------------------------------------------------------------------


def test_peek(codec: ModuleType, template: Template) -> None:
    data = bytes((0x70,)) + PING[1:] + (99).to_bytes(4, "big") + b"\x01"
    head = codec.peek(data, template)
    assert isinstance(head, Header)
    assert head == Header(0x70, 7, 0, Frequency.HIGH, 1, "StartPingCheck", (99,), len(PING))
    assert head.reliable and head.resent and not head.zerocoded
    assert head.code == 1


def test_peek_does_not_decode_the_body(codec: ModuleType, template: Template) -> None:
    data = header() + b"\xff\xff\xff\xfb\x00"  # an empty PacketAck: decode refuses it
    with pytest.raises(DecodeError):
        decode(codec, template, data)
    head = codec.peek(data, template)
    assert (head.name, head.number, head.body_end) == ("PacketAck", 0xFFFFFFFB, len(data))


def test_peek_zero_coded_low_number(codec: ModuleType, template: Template) -> None:
    data = header(0x80) + b"\xff\xff\x00\x01\x95" + b"\x00\x20"  # RegionHandshakeReply
    head = codec.peek(data, template)
    assert (head.name, head.frequency, head.number) == ("RegionHandshakeReply", Frequency.LOW, 149)
    assert head.code == 0xFFFF0095
    # the number itself spread over zero pairs: FF FF 00 01 00 01 is Low 0 (unknown)
    head = codec.peek(header(0x80) + b"\xff\xff\x00\x02\x07", template)
    assert (head.name, head.frequency, head.number) == (None, Frequency.LOW, 0)


def test_forward(codec: ModuleType, template: Template) -> None:
    body = b"\x01\x00\x01\x07\x00\x03"  # zero-coded StartPingCheck, kept as it is
    data = header(0xD0, 1) + body + (5).to_bytes(4, "big") + b"\x01"
    out = codec.forward(data, None, None, None)
    assert out == data
    out = codec.forward(data, 0xE0, 0xFFFFFFFF, (1, 2))
    assert out[:6] == b"\xf0\xff\xff\xff\xff\x00"  # ACK set: acks are given
    assert out[6 : 6 + len(body)] == body
    assert out[6 + len(body) :] == bytes.fromhex("00000002 00000001 02")
    msg = decode(codec, template, out, strict=True)
    assert (msg.sequence, msg.acks, msg.PingID[0]) == (0xFFFFFFFF, (1, 2), (0, 7))
    cleared = codec.forward(data, None, 9, ())
    assert cleared == header(0xC0, 9) + body


def test_forward_refuses_bad_values(codec: ModuleType) -> None:
    for args, match in (
        ((256, None, None), "flags"),
        ((None, -1, None), "sequence"),
        ((None, None, tuple(range(251))), "at most 250"),
        ((None, None, (1 << 32,)), "acks"),
    ):
        with pytest.raises(EncodeError, match=match):
            codec.forward(PING, *args)
    packet_ack = header(0x00, 5) + b"\xff\xff\xff\xfb\x01" + (7).to_bytes(4, "little")
    with pytest.raises(EncodeError, match="never appended to PacketAck"):
        codec.forward(packet_ack, None, None, (1,))  # as encode refuses it
    assert codec.forward(packet_ack, None, 9, ()) == header(0x00, 9) + packet_ack[6:]


def test_encode_into(codec: ModuleType, template: Template) -> None:
    msg = decode(codec, template, PING)
    buf = bytearray(b"0123456789")
    assert codec.encode_into(msg, buf, 3, template, "flag") == len(PING)
    assert bytes(buf) == b"012" + PING  # grows past the end
    buf = bytearray(40)
    assert codec.encode_into(msg, buf, 0, template, "flag") == len(PING)
    assert bytes(buf[: len(PING)]) == PING
    assert buf[len(PING) :] == bytearray(40 - len(PING))
    with pytest.raises(ValueError, match="offset"):
        codec.encode_into(msg, bytearray(2), 3, template, "flag")
    with pytest.raises(TypeError, match="bytearray"):
        codec.encode_into(msg, b"", 0, template, "flag")


def test_values_out_of_a_fields_reach_are_encode_errors(codec: ModuleType) -> None:
    """An int past the double range for a float field, and an address with digits
    that are not ASCII, are EncodeErrors (OverflowError / ValueError escaped, and
    Arabic-Indic digits were taken as 1.2.3.4: found by an audit)."""
    tpl = lludp.parse_template(
        "version 2.0\n{ M Low 1 NotTrusted Unencoded { B Single { F F32 } { V LLVector3 }"
        " { Q LLQuaternion } { A IPADDR } } }"
    )
    good = {"F": 1.0, "V": (0.0, 0.0, 0.0), "Q": (0.0, 0.0, 0.0), "A": "1.2.3.4"}
    assert len(codec.encode(build("M", template=tpl, B=good), tpl, "flag")) > 6
    for key, value in (
        ("F", 10**400),
        ("V", (0.0, 10**400, 0.0)),
        ("Q", (0.0, 0.0, 10**400, 1.0)),
        ("A", "\u00b2.1.1.1"),
        ("A", "\u0661.\u0662.\u0663.\u0664"),
    ):
        with pytest.raises(EncodeError, match=f"B.{key}"):
            codec.encode(build("M", template=tpl, B={**good, key: value}), tpl, "flag")


def test_an_unknown_messages_number_must_read_back_as_itself(
    codec: ModuleType, template: Template
) -> None:
    """A hand-built unknown message: only the four frequencies, and a Fixed number
    of the FF FF FF xx form (0x0A went out as bytes that decode as High 0; a huge
    frequency wrote 4 bytes on one twin and raised OverflowError on the other)."""
    fixed = Message("X", {}, frequency=Frequency.FIXED, number=0xFFFFFFFA, body=b"")
    data = codec.encode(fixed, template, "flag")
    assert data[6:] == b"\xff\xff\xff\xfa"
    for bad in (
        fixed._replace(number=0x0A),
        fixed._replace(frequency=2**40),
        fixed._replace(frequency=3),
    ):
        with pytest.raises(EncodeError, match=r"number|frequency"):
            codec.encode(bad, template, "flag")


def test_encode_refuses_non_messages(codec: ModuleType, template: Template) -> None:
    with pytest.raises(TypeError, match="expected a Message"):
        codec.encode(("StartPingCheck", {}), template, "flag")
    msg = decode(codec, template, PING)
    with pytest.raises(EncodeError, match="not in the template"):
        codec.encode(msg._replace(name="NoSuchMessage"), template, "flag")
    for bad in ({"flags": 256}, {"sequence": 1 << 32}, {"sequence": -1}):
        with pytest.raises(EncodeError):
            codec.encode(msg._replace(**bad), template, "flag")


def test_block_counts_on_encode(codec: ModuleType, template: Template) -> None:
    msg = decode(codec, template, PING)
    with pytest.raises(EncodeError, match="expected 1 block"):
        codec.encode(msg._replace(blocks={"PingID": []}), template, "flag")
    ids = unchecked("PacketAck", Packets=[{"ID": i} for i in range(256)])
    with pytest.raises(EncodeError, match="256 blocks, at most 255"):
        codec.encode(ids, template, "flag")
    assert len(codec.encode(ids._replace(blocks={"Packets": ids.Packets[:255]}), template, "flag"))
    with pytest.raises(EncodeError, match="fields"):
        codec.encode(msg._replace(blocks={"PingID": [(1, 2, 3)]}), template, "flag")


# --- field types ---------------------------------------------------------------------------------


def everything(**changes: Any) -> dict[str, Any]:
    """Values for the ``Everything`` message of the ``all_types`` template."""
    scalars = {
        "AU8": 0xFF, "AU16": 0xFFFF, "AU32": 0xFFFFFFFF, "AU64": 0xFFFFFFFFFFFFFFFF,
        "AS8": -0x80, "AS16": -0x8000, "AS32": -0x80000000, "AS64": -0x8000000000000000,
        "AF32": 3.4028234663852886e38, "AF64": -1e308, "ABool": True, "AIP": "192.168.0.255",
        "APort": 0x1234, "AID": AGENT,
    }  # fmt: skip
    scalars.update(changes)
    vectors = [
        {"V3": (1.0, -0.0, 1.5e-45), "V3d": (1e300, -2.5, 0.0), "V4": (1.0, 2.0, 3.0, 4.0),
         "Q": (0.0, 0.0, 0.6, 0.8)},
        {"V3": (0.0, 0.0, 0.0), "V3d": (0.0, 0.0, 0.0), "V4": (0.0, 0.0, 0.0, 0.0),
         "Q": (0.0, 0.0, 0.0, 1.0)},
    ]  # fmt: skip
    raw = [{"Fix4": b"\x00\x01\x02\x03", "Var1": bytes(255), "Var2": b"\xab" * 0xFFFF}]
    return {"Scalars": scalars, "Vectors": vectors, "Raw": raw}


def test_every_field_type_round_trips(codec: ModuleType, all_types: Template) -> None:
    msg = build("Everything", template=all_types, **everything())
    wire = codec.encode(msg, all_types, "flag")
    got = decode(codec, all_types, wire, strict=True)
    scalars = got.Scalars[0]
    for name, value in everything()["Scalars"].items():
        assert scalars[name] == value, name
        assert type(scalars[name]) is type(value), name
    assert scalars.ABool is True
    assert got.Raw[0] == (b"\x00\x01\x02\x03", bytes(255), b"\xab" * 0xFFFF)
    assert got.Vectors[0].V3 == (1.0, -0.0, 1.401298464324817e-45)  # the float32 nearest 1.5e-45
    assert math.copysign(1.0, got.Vectors[0].V3[1]) == -1.0
    assert got.Vectors[0].V3d == (1e300, -2.5, 0.0)
    assert got.Vectors[0].V4 == (1.0, 2.0, 3.0, 4.0)
    q = got.Vectors[0].Q
    assert q[:3] == struct.unpack("<3f", struct.pack("<3f", 0.0, 0.0, 0.6))
    assert math.isclose(q[3], 0.8, rel_tol=1e-6)
    assert got.Vectors[1].Q == (0.0, 0.0, 0.0, 1.0)
    assert codec.encode(got, all_types, "flag") == wire


def test_field_wire_forms(codec: ModuleType, all_types: Template) -> None:
    """Byte order per type: little-endian body, IPPORT big-endian, IPADDR and UUID as is."""
    msg = build("Everything", template=all_types, **everything(
        AU16=0x0102, AU32=0x01020304, AS16=-2, AIP="1.2.3.4", APort=0x1234
    ))  # fmt: skip
    wire = codec.encode(msg, all_types, "flag")
    assert wire[6:10] == b"\xff\xff\x03\xe8"  # Low 1000, big-endian
    scalars = wire[10:]
    assert scalars[0:1] == b"\xff"
    assert scalars[1:3] == b"\x02\x01"
    assert scalars[3:7] == b"\x04\x03\x02\x01"
    assert scalars[16:18] == b"\xfe\xff"  # S16 -2
    assert scalars[42:43] == b"\x01"  # BOOL
    assert scalars[43:47] == b"\x01\x02\x03\x04"  # IPADDR
    assert scalars[47:49] == b"\x12\x34"  # IPPORT
    assert scalars[49:65] == AGENT.bytes


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("AU8", 256, "out of range"),
        ("AU8", -1, "out of range"),
        ("AU16", 0x10000, "out of range"),
        ("AU32", 1 << 32, "out of range"),
        ("AU64", 1 << 64, "out of range"),
        ("AU64", -1, "out of range"),
        ("AS8", 128, "out of range"),
        ("AS8", -129, "out of range"),
        ("AS16", -0x8001, "out of range"),
        ("AS32", 0x80000000, "out of range"),
        ("AS64", 1 << 63, "out of range"),
        ("AS64", -(1 << 63) - 1, "out of range"),
        ("AU32", "1", "expected an int"),
        ("AU32", 1.0, "expected an int"),
        ("AF32", 1e39, "float32"),
        ("AF32", -3.5e38, "float32"),
        ("AF32", "1", "expected a number"),
        ("AF64", None, "expected a number"),
        ("ABool", 256, "out of range"),
        ("ABool", -1, "out of range"),
        ("AIP", "1.2.3", "IPv4"),
        ("AIP", "1.2.3.256", "IPv4"),
        ("AIP", 0x01020304, "IPv4"),
        ("APort", 0x10000, "out of range"),
        ("AID", "5801511b-c0a5-4f2d-281f-98f1b92abc6a", "UUID"),
        ("AID", b"\x01" * 15, "UUID"),
    ],
)
def test_bad_field_values(
    codec: ModuleType, all_types: Template, field: str, value: Any, match: str
) -> None:
    msg = unchecked("Everything", template=all_types, **everything(**{field: value}))
    with pytest.raises(EncodeError, match=match) as info:
        codec.encode(msg, all_types, "flag")
    assert f"Everything: Scalars.{field}:" in str(info.value)


def test_float_specials(codec: ModuleType, all_types: Template) -> None:
    for value in (math.inf, -math.inf, math.nan, -0.0, 1.401298464324817e-45):
        msg = build("Everything", template=all_types, **everything(AF32=value, AF64=value))
        got = decode(codec, all_types, codec.encode(msg, all_types, "flag")).Scalars[0]
        for got_value in (got.AF32, got.AF64):
            if math.isnan(value):
                assert math.isnan(got_value)
            else:
                assert struct.pack("<d", got_value) == struct.pack("<d", value)


def test_ints_accept_index(codec: ModuleType, all_types: Template) -> None:
    class Seven:
        def __index__(self) -> int:
            return 7

    msg = build("Everything", template=all_types, **everything(AU32=Seven(), ABool=0))
    got = decode(codec, all_types, codec.encode(msg, all_types, "flag")).Scalars[0]
    assert (got.AU32, got.ABool) == (7, False)


def test_bool_any_non_zero_byte_is_true(codec: ModuleType, template: Template) -> None:
    """As the viewer's ``getBOOL``: any non-zero byte is ``True``. A byte other
    than 0/1 is listed in ``bool_bytes``, so the message re-encodes exactly."""
    spec = template["ViewerFrozenMessage"]
    number = b"\xff\xff" + spec.number.to_bytes(2, "big")
    for byte in (0, 1, 2, 255):
        data = header() + number + bytes((byte,))
        msg = decode(codec, template, data, strict=True)
        assert msg.FrozenData[0].Data is (byte != 0)
        assert msg.bool_bytes == ((("FrozenData", 0, "Data", byte),) if byte > 1 else ())
        assert codec.encode(msg, template, "flag") == data
    odd = decode(codec, template, header() + number + b"\x07", strict=True)
    assert "bool_bytes" in repr(odd)
    # a changed value is written as it is; a field still True keeps its byte
    frozen = odd.FrozenData[0]
    off = odd._replace(blocks={"FrozenData": (frozen._replace(Data=False),)})
    assert codec.encode(off, template, "flag")[-1] == 0
    again = odd._replace(blocks={"FrozenData": (frozen._replace(Data=True),)})
    assert codec.encode(again, template, "flag")[-1] == 7
    assert codec.encode(odd._replace(bool_bytes=()), template, "flag")[-1] == 1


def test_bool_bytes_in_many_blocks(codec: ModuleType, template: Template) -> None:
    """Each instance keeps its own byte (block, index, field)."""
    msg = build(
        "AgentAnimation",
        AgentData={"AgentID": AGENT, "SessionID": SESSION},
        AnimationList=[{"AnimID": AGENT, "StartAnim": b} for b in (True, False, True)],
    )
    wire = bytearray(codec.encode(msg._replace(flags=0), template, "flag"))
    first = len(wire) - 1 - 3 * 17 + 16  # the list, then an empty Variable block
    third = first + 2 * 17
    assert wire[first] == wire[third] == 1
    wire[first], wire[third] = 9, 200
    got = decode(codec, template, bytes(wire), strict=True)
    assert [a.StartAnim for a in got.AnimationList] == [True, False, True]
    assert got.bool_bytes == (
        ("AnimationList", 0, "StartAnim", 9),
        ("AnimationList", 2, "StartAnim", 200),
    )
    assert codec.encode(got, template, "flag") == bytes(wire)


@pytest.mark.parametrize(
    "bad", [5, [("FrozenData", 0, "Data")], [("FrozenData", 0, "Data", 0)], [(1, 2, 3, 256)]]
)
def test_malformed_bool_bytes(codec: ModuleType, template: Template, bad: Any) -> None:
    msg = build("ViewerFrozenMessage", FrozenData={"Data": True})._replace(bool_bytes=bad)
    with pytest.raises(EncodeError, match="bool_bytes"):
        codec.encode(msg, template, "flag")


def test_quaternion_normalised_and_negated(codec: ModuleType, all_types: Template) -> None:
    """LL's packToVector3: normalise, negate x, y, z when w < 0 (Hippolyzer does not)."""
    values = everything()
    values["Vectors"][0]["Q"] = (0.0, 0.0, 0.5, -0.8660254037844386)
    values["Vectors"][1]["Q"] = (0.0, 0.0, 1.0, 1.0)  # not unit length
    wire = codec.encode(build("Everything", template=all_types, **values), all_types, "flag")
    got = decode(codec, all_types, wire)
    x, y, z, w = got.Vectors[0].Q
    assert (x, y) == (-0.0, -0.0) or (x, y) == (0.0, 0.0)
    assert math.isclose(z, -0.5, rel_tol=1e-6)
    assert math.isclose(w, 0.8660254, rel_tol=1e-6)
    x, y, z, w = got.Vectors[1].Q
    assert math.isclose(z, math.sqrt(0.5), rel_tol=1e-6)
    assert math.isclose(w, math.sqrt(0.5), rel_tol=1e-5)
    # a 3-tuple is the wire form, packed as given
    values["Vectors"][0]["Q"] = (0.25, -0.5, 0.125)
    wire = codec.encode(build("Everything", template=all_types, **values), all_types, "flag")
    assert decode(codec, all_types, wire).Vectors[0].Q[:3] == (0.25, -0.5, 0.125)
    # a zero quaternion packs as 0, 0, 0 (w rebuilt as 1)
    values["Vectors"][0]["Q"] = (0.0, 0.0, 0.0, 0.0)
    wire = codec.encode(build("Everything", template=all_types, **values), all_types, "flag")
    assert decode(codec, all_types, wire).Vectors[0].Q == (0.0, 0.0, 0.0, 1.0)
    for bad in ((1.0, 2.0), (math.inf, 0.0, 0.0, 1.0), ("a", 0.0, 0.0, 1.0), 5.0):
        values["Vectors"][0]["Q"] = bad
        with pytest.raises(EncodeError, match=r"Vectors\.Q"):
            codec.encode(build("Everything", template=all_types, **values), all_types, "flag")


def test_quaternion_w_rebuilt(codec: ModuleType, all_types: Template) -> None:
    """w = sqrt(1 - x² - y² - z²), or 0 when that is not positive."""
    values = everything()
    values["Vectors"][0]["Q"] = (1.0, 1.0, 0.0)
    wire = codec.encode(build("Everything", template=all_types, **values), all_types, "flag")
    assert decode(codec, all_types, wire).Vectors[0].Q == (1.0, 1.0, 0.0, 0.0)


def test_vector_values(codec: ModuleType, all_types: Template) -> None:
    values = everything()
    values["Vectors"][0]["V3"] = [1, 2, 3]  # a list of ints is accepted
    wire = codec.encode(build("Everything", template=all_types, **values), all_types, "flag")
    assert decode(codec, all_types, wire).Vectors[0].V3 == (1.0, 2.0, 3.0)
    for field, bad, match in (
        ("V3", (1.0, 2.0), "expected 3 numbers"),
        ("V4", (1.0, 2.0, 3.0), "expected 4 numbers"),
        ("V3", (1e39, 0.0, 0.0), "float32"),
        ("V3d", 1.0, "expected 3 numbers"),
        ("V3", (1.0, "2", 3.0), "expected a number"),
    ):
        values = everything()
        values["Vectors"][1][field] = bad
        with pytest.raises(EncodeError, match=match):
            codec.encode(build("Everything", template=all_types, **values), all_types, "flag")


def test_uuid_from_16_bytes(codec: ModuleType, all_types: Template) -> None:
    for raw in (AGENT.bytes, bytearray(AGENT.bytes)):
        msg = build("Everything", template=all_types, **everything(AID=raw))
        got = decode(codec, all_types, codec.encode(msg, all_types, "flag"))
        assert got.Scalars[0].AID == AGENT


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("Fix4", b"abc", "expected 4 bytes, got 3"),
        ("Fix4", b"abcde", "expected 4 bytes, got 5"),
        ("Fix4", 1234, "expected bytes"),
        ("Var1", bytes(256), "256 bytes do not fit a 1-byte length"),
        ("Var2", bytes(0x10000), "65536 bytes do not fit a 2-byte length"),
        ("Var1", 5, "expected bytes"),
        ("Var1", None, "expected bytes"),
    ],
)
def test_bad_raw_values(
    codec: ModuleType, all_types: Template, field: str, value: Any, match: str
) -> None:
    values = everything()
    values["Raw"][0][field] = value
    with pytest.raises(EncodeError, match=match) as info:
        codec.encode(build("Everything", template=all_types, **values), all_types, "flag")
    assert f"Raw.{field}" in str(info.value)


def test_raw_value_types(codec: ModuleType, all_types: Template) -> None:
    values = everything()
    values["Raw"] = [
        {"Fix4": bytearray(b"wxyz"), "Var1": "héllo", "Var2": memoryview(b"m\x00")},
        {"Fix4": "abcd", "Var1": b"", "Var2": ""},
    ]
    msg = build("Everything", template=all_types, **values)
    got = decode(codec, all_types, codec.encode(msg, all_types, "flag"), strict=True)
    # text is sent as LL sends it: UTF-8 and a NUL (Fixed: padded with NULs, and
    # a text filling the field has none, as LL's 32-digit Digest)
    assert got.Raw == ((b"wxyz", "héllo".encode() + b"\x00", b"m\x00"), (b"abcd", b"", b""))
    assert lludp.text(got.Raw[0].Var1) == "héllo"
    values["Raw"] = [{"Fix4": "é", "Var1": "", "Var2": "x" * 300}]
    got = decode(
        codec,
        all_types,
        codec.encode(build("Everything", template=all_types, **values), all_types, "flag"),
    )
    assert got.Raw[0] == ("é".encode() + b"\x00\x00", b"", b"x" * 300 + b"\x00")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("Fix4", "abcde", "5 bytes of UTF-8 text, at most 4"),
        ("Fix4", "\ud800", "not encodable as UTF-8"),
        ("Var1", "x" * 255, "256 bytes do not fit a 1-byte length"),  # 255 and the NUL
        ("Var2", "\udfff", "not encodable as UTF-8"),
    ],
)
def test_text_that_does_not_fit(
    codec: ModuleType, all_types: Template, field: str, value: str, match: str
) -> None:
    values = everything()
    values["Raw"][0][field] = value
    with pytest.raises(EncodeError, match=match):
        codec.encode(build("Everything", template=all_types, **values), all_types, "flag")


def test_str_text_field_gets_its_nul(codec: ModuleType, template: Template) -> None:
    """``ChatData={"Message": "hi"}`` goes out as LL text: ``03 00 'h' 'i' 00``."""
    chat = lludp.build(
        "ChatFromViewer",
        AgentData={"AgentID": AGENT, "SessionID": SESSION},
        ChatData={"Message": "hi", "Type": 1, "Channel": 0},
    )
    wire = codec.encode(chat._replace(flags=0), template, "flag")
    assert b"\x03\x00hi\x00\x01" in wire
    assert decode(codec, template, wire, strict=True).ChatData[0].Message == b"hi\x00"
    raw = chat._replace(
        blocks={**chat.blocks, "ChatData": (chat.ChatData[0]._replace(Message=b"hi"),)}
    )
    assert b"\x02\x00hi\x01" in codec.encode(
        raw._replace(flags=0), template, "flag"
    )  # bytes as given


def test_empty_str_text_field_is_empty(codec: ModuleType, template: Template) -> None:
    """An empty text goes out with no bytes at all, not a lone NUL: the viewer's
    ``addString("")`` writes size 0, and OpenSim's ``osUTF8Getbytes`` returns 0."""
    chat = lludp.build(
        "ChatFromViewer",
        AgentData={"AgentID": AGENT, "SessionID": SESSION},
        ChatData={"Message": "", "Type": 1, "Channel": 0},
    )
    wire = codec.encode(chat._replace(flags=0), template, "flag")
    assert wire[-7:] == b"\x00\x00\x01\x00\x00\x00\x00"  # length 0, Type, Channel
    assert decode(codec, template, wire, strict=True).ChatData[0].Message == b""


def test_variable_length_over_65535_on_decode(codec: ModuleType, template: Template) -> None:
    """No template has Variable 4; a Variable 2 prefix can say at most 65535, which is fine."""
    spec = template["LayerData"]
    number = bytes((spec.number,))
    data = header() + number + b"\x01" + b"\xff\xff" + b"x" * 10
    msg = decode(codec, template, data)
    assert msg.LayerData[0].Data == b"x" * 10 + bytes(0xFFFF - 10)
    assert msg.truncated


def test_large_zero_coded_packet_with_a_larger_cap(codec: ModuleType, template: Template) -> None:
    msg = build("LayerData", LayerID={"Type": 1}, LayerData={"Data": bytes(20000)})
    wire = codec.encode(msg._replace(flags=0x80), template, "flag")
    assert len(wire) < 200
    with pytest.raises(DecodeError, match="8192"):
        codec.decode(wire, template, False, 8192)
    got = codec.decode(wire, template, True, 30000)
    assert got.LayerData[0].Data == bytes(20000)
    assert codec.encode(got, template, "flag") == wire


# --- the object model ----------------------------------------------------------------------------


def test_message_and_block_access(codec: ModuleType, template: Template) -> None:
    msg = build(
        "ObjectRotation",
        AgentData={"AgentID": AGENT, "SessionID": SESSION},
        ObjectData=[{"ObjectLocalID": 5, "Rotation": (0.0, 0.0, 0.0, 1.0)}],
    )
    got = decode(codec, template, codec.encode(msg, template, "flag"), strict=True)
    assert got == msg
    assert got["AgentData"][0]["AgentID"] == got.AgentData[0].AgentID == AGENT
    assert got.AgentData[0][1] == SESSION
    block = got.ObjectData[0]
    assert isinstance(block, Block)
    assert type(block).__name__ == "ObjectData"
    assert block.keys() == ("ObjectLocalID", "Rotation")
    assert block._asdict() == {"ObjectLocalID": 5, "Rotation": (0.0, 0.0, 0.0, 1.0)}
    assert block.items() == [("ObjectLocalID", 5), ("Rotation", (0.0, 0.0, 0.0, 1.0))]
    changed = block._replace(ObjectLocalID=6)
    assert type(changed) is type(block)
    assert changed.ObjectLocalID == 6
    assert block.ObjectLocalID == 5
    with pytest.raises(TypeError, match="no field"):
        block._replace(Nope=1)
    with pytest.raises(KeyError, match="no field"):
        block["Nope"]
    with pytest.raises(AttributeError, match="no block"):
        got.Nope  # noqa: B018
    assert got.to_dict()["ObjectData"] == [block._asdict()]
    assert got[0] == "ObjectRotation"
    assert got.name == "ObjectRotation"
    assert got != got._replace(sequence=1)
    assert got.code == 0xFFFF005D
    text = repr(got)
    assert text.startswith("Message(ObjectRotation, flags=0x80, sequence=0")
    assert "ObjectLocalID=5" in text
    assert "AgentID=UUID('5801511b-c0a5-4f2d-281f-98f1b92abc6a')" in text
    with pytest.raises(TypeError):
        type(block)((1,))  # wrong number of values


def test_repr_of_tolerated_input(codec: ModuleType, template: Template) -> None:
    text = repr(decode(codec, template, rotation() + b""))
    assert "absent=('ObjectData',)" in text
    text = repr(decode(codec, template, PING[:-1] + b""))
    assert "truncated=True" in text
    assert "excess=b'\\x01'" in repr(decode(codec, template, PING + b"\x01"))


PING_ID = {"PingID": 1, "OldestUnacked": 0}
CHAT = {"Message": b"hi", "Type": 1, "Channel": 0}
AGENT_DATA = {"AgentID": AGENT, "SessionID": SESSION}


@pytest.mark.parametrize(
    ("name", "kw", "match"),
    [
        ("NoSuch", {}, "no message 'NoSuch'"),
        (7, {}, "no message 7"),
        ("StartPingCheck", {}, "block PingID is required"),
        ("StartPingCheck", {"PingID": {"PingID": 1}}, "missing fields"),
        ("StartPingCheck", {"PingID": {**PING_ID, "X": 1}}, r"unknown \['X'\]"),
        ("StartPingCheck", {"PingID": PING_ID, "Other": {}}, "no block"),
        ("StartPingCheck", {"PingID": 5}, "expected a dict or a list of dicts"),
        ("StartPingCheck", {"PingID": "ab"}, "expected a dict or a list of dicts"),
        ("StartPingCheck", {"PingID": [5]}, "expected a dict, got 5"),
        ("StartPingCheck", {"PingID": [PING_ID, PING_ID]}, "expected 1 block"),
        ("PacketAck", {"Packets": [{"ID": 1}] * 256}, "256 blocks, at most 255"),
        ("StartPingCheck", {"PingID": {**PING_ID, "PingID": 256}}, "out of range"),
        ("StartPingCheck", {"PingID": {**PING_ID, "PingID": -1}}, "out of range"),
        ("StartPingCheck", {"PingID": {**PING_ID, "PingID": "1"}}, "expected an int"),
        ("StartPingCheck", {"PingID": {**PING_ID, "OldestUnacked": 1.5}}, "expected an int"),
        ("ChatFromViewer", {"AgentData": AGENT_DATA, "ChatData": {**CHAT, "Message": 1}}, "bytes"),
        ("ChatFromViewer", {"AgentData": {**AGENT_DATA, "AgentID": "x"}, "ChatData": CHAT}, "UUID"),
        ("StartPingCheck", {"PingID": PING_ID, "flags": 256}, "flags: 256 out of range"),
        ("StartPingCheck", {"PingID": PING_ID, "flags": "x"}, "StartPingCheck: "),
        ("StartPingCheck", {"PingID": PING_ID, "sequence": -1}, "sequence: -1 out of range"),
        ("StartPingCheck", {"PingID": PING_ID, "acks": 5}, "StartPingCheck: "),
        ("StartPingCheck", {"PingID": PING_ID, "acks": [-1]}, "acks: -1 out of range"),
        ("StartPingCheck", {"PingID": PING_ID, "acks": range(256)}, "256 acks, at most 255"),
        ("StartPingCheck", {"PingID": PING_ID, "extra": "x"}, "StartPingCheck: "),
        ("StartPingCheck", {"PingID": PING_ID, "extra": bytes(256)}, "256 bytes, at most 255"),
    ],
)
def test_build_raises_encode_error(
    codec: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    name: Any,
    kw: dict[str, Any],
    match: str,
) -> None:
    """build refuses what cannot go on the wire with an EncodeError of protocol
    lludp (still a ValueError), whichever twin checks the values."""
    monkeypatch.setattr(lludp, "_codec", codec)
    with pytest.raises(EncodeError, match=match) as info:
        build(name, **kw)
    assert info.value.protocol == "lludp"
    assert isinstance(info.value, ValueError)


def test_build_takes_blocks_and_leaves_variable_blocks_out(template: Template) -> None:
    msg = build("ObjectRotation", AgentData={"AgentID": AGENT, "SessionID": SESSION})
    assert msg.ObjectData == ()  # a Variable block may be left out
    assert msg.flags == 0x80  # the template says Zerocoded
    # Blocks are accepted too
    again = build("ObjectRotation", AgentData=msg.AgentData[0])
    assert again == msg
    one_value = build("PacketAck", Packets=[{"ID": 1}]).Packets[0]
    with pytest.raises(EncodeError, match="expected 2 values, got 1"):
        build("ObjectRotation", AgentData=one_value)


def test_blocks_are_tuples_and_encode_takes_any_sequence(
    codec: ModuleType, template: Template
) -> None:
    """Decoded and built messages hold each block's instances as a tuple;
    encode takes lists (or other sequences) of blocks as well."""
    msg = build(
        "ObjectRotation",
        AgentData={"AgentID": AGENT, "SessionID": SESSION},
        ObjectData=[
            {"ObjectLocalID": 1, "Rotation": (0.0, 0.0, 0.0)},
            {"ObjectLocalID": 2, "Rotation": (0.5, 0.5, 0.5)},
        ],
    )
    wire = codec.encode(msg, template)
    got = decode(codec, template, wire)
    assert all(type(v) is tuple for v in (*msg.blocks.values(), *got.blocks.values()))
    assert got.AgentData == msg.AgentData and codec.encode(got, template) == wire
    as_lists = msg._replace(blocks={k: list(v) for k, v in msg.blocks.items()})
    assert codec.encode(as_lists, template) == wire
    as_iterators = msg._replace(blocks={k: iter(v) for k, v in msg.blocks.items()})
    assert codec.encode(as_iterators, template) == wire


def test_decode_many(codec: ModuleType, template: Template) -> None:
    bad = header() + b"\xff\xff\xff\xfb\x00"
    results = codec.decode_many(
        [PING, bad, bytearray(PING + b"\x01"), b"\x00"], template, False, 8192
    )
    assert len(results) == 4
    assert results[0] == decode(codec, template, PING)
    assert isinstance(results[1], DecodeError)
    assert results[1].offset == 11
    assert results[2].excess == b"\x01"
    assert isinstance(results[3], DecodeError)
    strict = codec.decode_many([PING, PING + b"\x01"], template, True, 8192)
    assert isinstance(strict[1], DecodeError)
    assert codec.decode_many(iter([]), template, False, 8192) == []


def test_inputs_other_than_bytes(codec: ModuleType, template: Template) -> None:
    for data in (bytearray(PING), memoryview(PING)):
        assert decode(codec, template, data) == decode(codec, template, PING)
        assert codec.peek(data, template) == codec.peek(PING, template)
        assert codec.forward(data, None, None, None) == PING


# --- the public wrappers (active twin, default template) -----------------------------------------


def test_public_wrappers() -> None:
    msg = lludp.build(
        "StartPingCheck", flags=0x40, sequence=7, PingID={"PingID": 9, "OldestUnacked": 5}
    )
    assert lludp.encode(msg) == PING
    assert lludp.decode(PING) == msg
    assert lludp.decode(PING + b"\x01", strict=False).excess == b"\x01"
    with pytest.raises(DecodeError):
        lludp.decode(PING + b"\x01", strict=True)
    with pytest.raises(DecodeError):
        lludp.decode(header(0x80) + b"\x01\x00\x00", max_size=100)
    buf = bytearray()
    assert lludp.encode_into(msg, buf) == len(PING)
    assert bytes(buf) == PING
    assert lludp.peek(PING).name == "StartPingCheck"
    assert lludp.forward(PING, sequence=8)[1:5] == b"\x00\x00\x00\x08"
    assert lludp.forward(PING, acks=[3]).endswith(b"\x00\x00\x00\x03\x01")
    assert lludp.zero_decode(lludp.zero_encode(bytes(300))) == bytes(300)
    with pytest.raises(DecodeError):
        lludp.zero_decode(b"\x00\x00", max_size=10)
    many = lludp.decode_many([PING, b""])
    assert many[0] == msg
    assert isinstance(many[1], DecodeError)
    smaller = lludp.encode(msg._replace(flags=0xC0), zero_coding="smaller")
    assert smaller == b"\xc0" + PING[1:8] + b"\x05\x00\x03"  # 3 zeros: coded is smaller
    assert lludp.text(b"hello\x00junk") == "hello"
    assert lludp.text(b"\xffok") == "\ufffdok"
    assert lludp.text(b"") == ""


@pytest.mark.parametrize(("frequency", "number"), [(Frequency.HIGH, 300), (Frequency.FIXED, -1)])
def test_unknown_message_number_out_of_range(
    codec: ModuleType, template: Template, frequency: Frequency, number: int
) -> None:
    """Regression (lludp_bugs.md BUG 2): an EncodeError, not ValueError/OverflowError."""
    msg = Message("Unknown:x", {}, 0, 0, (), b"", frequency, number, body=b"ab")
    with pytest.raises(EncodeError):
        codec.encode(msg, template, "flag")


@pytest.mark.parametrize("xyz", [(0.0, 1.0, 1.0), (math.nan, 0.0, 0.0), (math.inf, 0.5, 0.0)])
def test_decoded_odd_quaternion_re_encodes(
    codec: ModuleType, template: Template, xyz: tuple[float, float, float]
) -> None:
    """§9.5: an unmodified decoded message re-encodes to its input (regression: BUG 3)."""
    wire = rotation() + b"\x01" + bytes(4) + struct.pack("<3f", *xyz)
    msg = decode(codec, template, wire, strict=True)
    assert not msg.truncated
    assert codec.encode(msg, template, "flag") == wire


SIGNALLING_NANS = [b"\x01\x00\x80\x7f", b"\x00\x01\x80\xff", b"\xff\xff\xbf\x7f"]


@pytest.mark.parametrize("raw", SIGNALLING_NANS)
def test_signalling_nan_f32_re_encodes(codec: ModuleType, template: Template, raw: bytes) -> None:
    """§9.5: a signalling NaN keeps its bits (a hardware f32 -> double conversion quietens it)."""
    spec = template["HealthMessage"]  # Low 138: one F32
    wire = header() + b"\xff\xff" + spec.number.to_bytes(2, "big") + raw
    msg = decode(codec, template, wire, strict=True)
    health = msg.HealthData[0].Health
    assert math.isnan(health)
    bits = int.from_bytes(struct.pack("<d", health), "little")
    assert not bits & (1 << 51), "the double is still signalling"
    assert codec.encode(msg, template, "flag") == wire


@pytest.mark.parametrize("raw", SIGNALLING_NANS)
def test_signalling_nan_in_vectors_re_encodes(
    codec: ModuleType, template: Template, raw: bytes
) -> None:
    """The F32 parts of a quaternion and of a vector keep a signalling NaN's bits too."""
    rest = struct.pack("<2f", 0.25, 0.5)
    wire = rotation() + b"\x01" + bytes(4) + raw + rest
    assert codec.encode(decode(codec, template, wire, strict=True), template, "flag") == wire
    position = rotation().replace(ROTATION_NUMBER, POSITION_NUMBER) + b"\x01" + bytes(4)
    wire = position + rest + raw
    msg = decode(codec, template, wire, strict=True)
    assert math.isnan(msg.ObjectData[0].Position[2])
    assert codec.encode(msg, template, "flag") == wire


def test_nan_payload_below_f32_precision_encodes_quiet(
    codec: ModuleType, template: Template
) -> None:
    """A double NaN whose payload lies only in its low 29 bits has no F32 form: a quiet NaN."""
    nan = struct.unpack("<d", (0x7FF0000000000001).to_bytes(8, "little"))[0]
    quiet = build("HealthMessage", HealthData={"Health": math.nan})
    msg = build("HealthMessage", HealthData={"Health": nan})
    assert codec.encode(msg, template, "flag") == codec.encode(quiet, template, "flag")


def test_quiet_nan_f32_re_encodes(codec: ModuleType, template: Template) -> None:
    spec = template["HealthMessage"]
    for raw in (b"\x00\x00\xc0\x7f", b"\x01\x00\xc0\xff", b"\x00\x00\x80\x7f"):
        wire = header() + b"\xff\xff" + spec.number.to_bytes(2, "big") + raw
        assert codec.encode(decode(codec, template, wire, strict=True), template, "flag") == wire


# --- result objects: values the compiled twin makes directly ------------------------------


def test_many_distinct_uuids(codec: ModuleType) -> None:
    """Thousands of UUIDs, with repeats: every value right, every time."""
    ids = [uuid.UUID(int=((k * 0x9E3779B97F4A7C15) % (1 << 64)) << 64 | k) for k in range(3000)]
    ids += [*ids[:500], uuid.UUID(int=0), uuid.UUID(int=(1 << 128) - 1)]
    tpl = lludp.default_template()
    for k in range(0, len(ids), 2):
        pair = ids[k : k + 2] if k + 1 < len(ids) else [ids[k], ids[0]]
        msg = build("AgentPause", AgentData={"AgentID": pair[0], "SessionID": pair[1],
                                             "SerialNum": k})  # fmt: skip
        got = decode(codec, tpl, codec.encode(msg, tpl))
        assert got.AgentData[0].AgentID == pair[0] and got.AgentData[0].SessionID == pair[1]
        assert type(got.AgentData[0].AgentID) is uuid.UUID
        assert got.AgentData[0].AgentID.bytes == pair[0].bytes


def test_shared_float_values(codec: ModuleType) -> None:
    """+0.0, -0.0 and 1.0 keep their bits (the compiled twin shares +0.0 and 1.0 objects)."""
    tpl = lludp.default_template()
    values = [(0.0, -0.0, 1.0), (-1.0, 1.0, 0.0), (0.0, 0.0, 0.0), (-0.0, -0.0, -0.0)]
    msg = build(
        "ObjectPosition",
        AgentData={"AgentID": AGENT, "SessionID": SESSION},
        ObjectData=[{"ObjectLocalID": k, "Position": v} for k, v in enumerate(values)],
    )
    got = decode(codec, tpl, codec.encode(msg, tpl))
    for block, want in zip(got.ObjectData, values, strict=True):
        assert [math.copysign(1, x) for x in block.Position] == [math.copysign(1, x) for x in want]
        assert block.Position == want and type(block.Position) is tuple
