"""Behaviour of the Avara codec, each rule a named test, on both twins."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from gamecodec import avara
from gamecodec.avara import (
    COMMAND_DTYPE,
    Command,
    CrcMismatchError,
    Datagram,
    HolePunch,
    Layout,
    ShortDatagramError,
    Status,
)
from gamecodec.errors import (
    BadDataLengthError,
    DecodeError,
    EncodeError,
    NonCanonicalError,
    TruncatedError,
)
from tests.avara.helpers import kermit, sign

KM = bytes.fromhex("7ab00200040000b111d20406d001000000010005")  # spec V5


def test_crc_check_value(codec: ModuleType) -> None:
    assert codec.crc16_kermit(b"123456789") == 0x2189
    assert codec.crc16_kermit(b"") == 0
    assert codec.crc16_kermit(b"56789", codec.crc16_kermit(b"1234")) == 0x2189


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 8, 9, 31, 64, 1001])
def test_crc_matches_bitwise(codec: ModuleType, size: int) -> None:
    data = bytes((i * 37 + 11) & 0xFF for i in range(size))
    assert codec.crc16_kermit(data) == kermit(data)
    assert codec.crc16_kermit(bytearray(data)) == kermit(data)


def test_datagram_crc_substitutes_version(codec: ModuleType) -> None:
    assert codec.datagram_crc(KM) == int.from_bytes(KM[:2], "little")
    assert codec.datagram_crc(KM, 17) != codec.datagram_crc(KM, 18)


def test_ack_only_without_bitmap(codec: ModuleType) -> None:
    assert codec.decode(bytes.fromhex("26081400")) == Datagram(True, 20, None, ())


def test_ack_bitmap_serials(codec: ModuleType) -> None:
    got = codec.decode(bytes.fromhex("04260f0006000000"))
    assert got.ack_bitmap == 6
    assert got.acked_serials == (18, 20)


def test_bitmap_is_signed(codec: ModuleType) -> None:
    wire = codec.encode(0x0F, (), 0x80000000)
    assert codec.decode(wire).ack_bitmap == -(1 << 31)
    assert codec.encode(0x0F, (), -(1 << 31)) == wire


def test_crc_mismatch_reported_not_accepted(codec: ModuleType) -> None:
    bad = bytes([KM[0] ^ 1]) + KM[1:]
    assert codec.decode(bad) == Datagram(False, None, None, ())
    assert codec.decode(KM, version=17).crc_ok is False
    with pytest.raises(CrcMismatchError) as info:
        codec.decode(bad, strict=True)
    assert info.value.offset == 0


def test_version_none_skips_check(codec: ModuleType) -> None:
    bad = bytes([KM[0] ^ 1]) + KM[1:]
    got = codec.decode(bad, version=None)
    assert got.crc_ok is None
    assert got.commands == codec.decode(KM).commands


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_short_datagram(codec: ModuleType, size: int) -> None:
    assert codec.decode(b"\x00" * size) == Datagram(False, None, None, ())
    with pytest.raises(ShortDatagramError):
        codec.decode(b"\x00" * size, strict=True)


def test_hole_punch_is_any_seven_bytes(codec: ModuleType) -> None:
    got = codec.decode(bytes.fromhex("04020000000000"))
    assert got == HolePunch(4, 2, None, None, bytes.fromhex("04020000000000"))
    assert got.handled and got.crc_ok is False
    # Seven bytes that look like a game datagram are still a punch (spec §6).
    game_like = sign(bytes.fromhex("1400") + b"\x00\x00\x00")
    assert isinstance(codec.decode(game_like), HolePunch)
    punch = codec.decode(bytes.fromhex("03c0a80001ef4c"))
    assert (punch.host, punch.port, punch.connection_id) == ("192.168.0.1", 0xEF4C, None)


def test_punch_round_trip() -> None:
    wire = avara.encode_punch(3, host="10.1.2.3", port=19567)
    assert avara.decode_punch(wire) == HolePunch(3, None, "10.1.2.3", 19567, wire)
    assert avara.encode_punch(4, connection_id=-2) == bytes([4, 0xFE, 0, 0, 0, 0, 0])
    with pytest.raises(EncodeError):
        avara.encode_punch(3, host="::1")


def test_both_p3_widths_reader_precedence(codec: ModuleType) -> None:
    """0x24: the 4-byte p3 wins and 0x20 adds no bytes (spec §3)."""
    wire = sign(bytes.fromhex("1400180000241f78563412"))
    (cmd,) = codec.decode(wire).commands
    assert (cmd.flags, cmd.p3) == (0x24, 0x12345678)
    with pytest.raises(NonCanonicalError) as info:
        codec.decode(wire, strict=True)
    assert info.value.offset == 7


def test_both_length_widths_reader_precedence(codec: ModuleType) -> None:
    wire = sign(bytes.fromhex("14001a000018240300616263"))
    (cmd,) = codec.decode(wire).commands
    assert (cmd.flags, cmd.data) == (0x18, b"abc")
    assert codec.encode(codec.decode(wire), keep_flags=True) == wire
    assert codec.encode(codec.decode(wire)) != wire


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("000000042400000000", "4-byte p3"),
        ("00000020240000", "2-byte p3 for 0"),
        ("00000002240000", "p2 present"),
        ("0000000824010061", "2-byte length"),
        ("000000102400", "1-byte length for 0"),
        ("000000012400", "p1 present"),
    ],
)
def test_non_canonical_forms_tolerated(codec: ModuleType, body: str, why: str) -> None:
    wire = sign(bytes.fromhex("1400") + bytes.fromhex(body))
    got = codec.decode(wire)
    assert len(got.commands) == 1
    assert codec.encode(got, keep_flags=True) == wire
    with pytest.raises(NonCanonicalError, match=why):
        codec.decode(wire, strict=True)


def test_u16_p3_is_zero_extended(codec: ModuleType) -> None:
    wire = sign(bytes.fromhex("14000000002011ffff"))
    assert codec.decode(wire).commands[0].p3 == 65535


@pytest.mark.parametrize(("length", "hexlen"), [(-1, "ffff"), (985, "d903"), (32767, "ff7f")])
def test_bad_data_len(codec: ModuleType, length: int, hexlen: str) -> None:
    first = "0200000011"  # a whole command before the bad one
    wire = sign(bytes.fromhex("1400" + first + "0400000806" + hexlen) + b"\x00" * 40)
    with pytest.raises(BadDataLengthError) as info:
        codec.decode(wire)
    assert info.value.offset == 14
    assert str(length) in str(info.value)
    assert str(info.value).endswith("(at byte 14)")
    assert info.value.partial.commands == (Command(2, 0, 0, 17, None, 0, 0, 0, None, b""),)
    assert isinstance(info.value, ValueError)


def test_short_length_up_to_255(codec: ModuleType) -> None:
    """The 1-byte length is unsigned (the wiki's int8 is wrong, spec §3)."""
    wire = sign(bytes.fromhex("14000400001006ff") + b"\x01" * 255)
    assert codec.decode(wire).commands[0].data == b"\x01" * 255


@pytest.mark.parametrize(
    ("body", "offset", "field"),
    [
        ("0f000600", 4, "ack bitmap"),
        ("140004000000", 4, "command header"),
        ("1400040000401101", 9, "distribution"),
        ("14000400000411010203", 9, "p3"),
        ("1400040000201101", 9, "p3"),
        ("1400040000021101", 9, "p2"),
        ("1400040000081101", 9, "dataLen"),
        ("14000400001011", 9, "dataLen"),
        ("14000400000111", 9, "p1"),
        ("14000400008011", 9, "sender"),
        ("140004000010110561626364", 10, "data"),
    ],
)
def test_truncated_fields(codec: ModuleType, body: str, offset: int, field: str) -> None:
    wire = sign(bytes.fromhex(body))
    assert len(wire) != 7
    with pytest.raises(TruncatedError) as info:
        codec.decode(wire)
    assert info.value.offset == offset
    assert field in str(info.value)
    assert info.value.protocol == "avara"


def test_legacy_layout_has_no_send_count(codec: ModuleType) -> None:
    cmd = Command.make(4, 17, p1=-8, p3=1234, sender=1)
    wire = codec.encode(2, [cmd], layout=Layout.LEGACY)
    assert wire[4:] == bytes.fromhex("0400a111d204f801")
    got = codec.decode(wire, layout=Layout.LEGACY)
    assert got.commands == (cmd._replace(flags=0xA1),)
    with pytest.raises(EncodeError, match="send_count"):
        codec.encode(2, [cmd._replace(send_count=1)], layout=Layout.LEGACY)


def test_layout_must_be_known(codec: ModuleType) -> None:
    with pytest.raises(ValueError, match="layout"):
        codec.decode(KM, layout=2)


def test_writer_rules(codec: ModuleType) -> None:
    """Canonical flags: §3 'writer rule' column."""
    cases = [
        (Command.make(0, 31), 0x00),
        (Command.make(0, 31, p3=1), 0x20),
        (Command.make(0, 31, p3=0xFFFF), 0x20),
        (Command.make(0, 31, p3=0x10000), 0x04),
        (Command.make(0, 31, p3=-1), 0x04),
        (Command.make(0, 31, p2=-1), 0x02),
        (Command.make(0, 31, data=b"x" * 255), 0x10),
        (Command.make(0, 31, data=b"x" * 256), 0x08),
        (Command.make(0, 31, p1=-8), 0x01),
        (Command.make(0, 31, sender=0), 0x80),
        (Command.make(0, 31, distribution=-1), 0x40),
    ]
    for cmd, flags in cases:
        assert codec.canonical_flags(cmd) == flags
        (got,) = codec.decode(codec.encode(0xFFFE, [cmd])).commands
        assert got == cmd._replace(flags=flags)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"serial": 65536}, "serial"),
        ({"serial": -1}, "serial"),
        ({"send_count": 256}, "send_count"),
        ({"command": 128}, "command"),
        ({"distribution": 32768}, "distribution"),
        ({"p3": 1 << 31}, "p3"),
        ({"p2": -32769}, "p2"),
        ({"p1": 200}, "p1"),
        ({"sender": -129}, "sender"),
        ({"data": b"x" * 985}, "985 data bytes"),
        ({"data": "text"}, "data must be bytes"),
        ({"p3": 1.5}, "p3 must be an int"),
    ],
)
def test_encode_refuses_what_the_wire_cannot_carry(
    codec: ModuleType, change: dict[str, object], match: str
) -> None:
    cmd = Command.make(0, 17)._replace(**change)
    with pytest.raises(EncodeError, match=match):
        codec.encode(0, [cmd])


def test_encode_ack_rules(codec: ModuleType) -> None:
    with pytest.raises(EncodeError, match="needs an ack_bitmap"):
        codec.encode(15)
    with pytest.raises(EncodeError, match="cannot carry an ack_bitmap"):
        codec.encode(14, (), 6)
    with pytest.raises(EncodeError, match="ack"):
        codec.encode(65536)
    with pytest.raises(EncodeError, match="ack None"):
        codec.encode(Datagram(False, None, None, ()))
    with pytest.raises(EncodeError, match="more than 16384"):
        codec.encode(0, [Command.make(i, 6, data=b"x" * 984) for i in range(17)])


def test_keep_flags_refuses_inconsistent_flags(codec: ModuleType) -> None:
    cmd = Command(0, 0, 0x20, 31, None, 0x10000, 0, 0, None, b"")
    with pytest.raises(EncodeError, match="p3 65536"):
        codec.encode(0, [cmd], keep_flags=True)
    with pytest.raises(EncodeError, match="sender"):
        codec.encode(0, [Command(0, 0, 0x80, 31, None, 0, 0, 0, None, b"")], keep_flags=True)


def test_encode_into(codec: ModuleType) -> None:
    buf = bytearray(b"head")
    written = codec.encode_into(codec.decode(KM), buf, 4)
    assert written == len(KM)
    assert bytes(buf) == b"head" + KM
    with pytest.raises(TypeError):
        codec.encode_into(20, bytes(10))


def test_buffer_inputs(codec: ModuleType) -> None:
    want = codec.decode(KM)
    assert codec.decode(bytearray(KM)) == want
    assert codec.decode(memoryview(b"xx" + KM)[2:]) == want
    with pytest.raises(TypeError):
        codec.decode(20)


def test_results_are_plain_values(codec: ModuleType) -> None:
    got = codec.decode(KM)
    assert type(got) is Datagram and type(got.commands[0]) is Command
    assert hash(got) == hash(Datagram(*got))
    assert "Command(serial=4" in repr(got)
    assert got.commands[0].data == bytes.fromhex("000000010005")


def test_decode_array(codec: ModuleType) -> None:
    v10 = bytes.fromhex(
        "cba60400060001b111d30404d80100000002080001a111d404f8010a0001a311d5047800f901"
    )
    bad_len = sign(bytes.fromhex("140002000000110400000806ffff"))
    truncated = sign(bytes.fromhex("14000400001011056162"))
    batch = codec.decode_array(
        [
            KM,
            v10,
            b"",
            bytes.fromhex("04020000000000"),
            b"\x00" * 9,
            bad_len,
            truncated,
            bytearray(KM),
        ]
    )
    assert batch.commands.dtype == COMMAND_DTYPE
    rows = batch.datagrams
    assert list(rows["status"]) == [
        Status.OK,
        Status.OK,
        Status.SHORT_DATAGRAM,
        Status.PUNCH,
        Status.CRC_MISMATCH,
        Status.BAD_DATA_LEN,
        Status.TRUNCATED,
        Status.OK,
    ]
    assert list(rows["command_count"]) == [1, 3, 0, 0, 0, 1, 0, 1]
    assert list(rows["error_offset"]) == [0, 0, 0, 0, 0, 14, 10, 0]
    cmds = batch.commands
    assert list(cmds["datagram"]) == [0, 1, 1, 1, 5, 7]
    assert list(cmds["serial"]) == [4, 6, 8, 10, 2, 4]
    assert list(cmds["p3"]) == [1234, 1235, 1236, 1237, 0, 1234]
    assert list(cmds["p1"]) == [-48, -40, -8, -7, 0, -48]
    first = cmds[0]
    assert KM[first["data_offset"] : first["data_offset"] + first["data_length"]] == bytes.fromhex(
        "000000010005"
    )
    assert rows["first_command"][1] == 1


def test_decode_array_empty(codec: ModuleType) -> None:
    batch = codec.decode_array([])
    assert batch.commands.shape == (0,) and batch.datagrams.shape == (0,)


def test_decode_array_grows(codec: ModuleType) -> None:
    """Datagrams packed with many commands outgrow the first guess."""
    many = codec.encode(0, [Command.make(2 * i, 31) for i in range(300)])
    batch = codec.decode_array(iter([many, many, KM]))
    assert batch.commands.shape == (601,)
    assert np.array_equal(batch.commands["serial"][:300], np.arange(0, 600, 2))


def test_decode_many_gives_each_result_or_its_error(codec: ModuleType) -> None:
    bad_len = sign(bytes.fromhex("140002000000110400000806ffff"))
    truncated = sign(bytes.fromhex("14000400001011056162"))
    punch = bytes.fromhex("04020000000000")
    bad_crc = bytes([KM[0] ^ 1]) + KM[1:]
    items = [KM, bad_len, punch, bytearray(truncated), b"\x00", bad_crc, memoryview(KM)]
    got = codec.decode_many(items)
    assert len(got) == len(items)
    assert got[0] == got[6] == codec.decode(KM)
    assert isinstance(got[1], BadDataLengthError) and got[1].offset == 14
    assert got[1].protocol == "avara" and len(got[1].partial.commands) == 1
    assert got[2] == codec.decode(punch)
    assert isinstance(got[3], TruncatedError) and got[3].offset == 10
    assert got[4] == got[5] == Datagram(False, None, None, ())
    strict = codec.decode_many(items, strict=True)
    assert isinstance(strict[4], ShortDatagramError) and strict[4].offset == 0
    assert isinstance(strict[5], CrcMismatchError) and strict[5].protocol == "avara"
    assert strict[0] == got[0]
    legacy = codec.decode_many(iter([KM, bad_crc]), version=None, layout=Layout.LEGACY)
    assert legacy == [codec.decode(d, version=None, layout=Layout.LEGACY) for d in (KM, bad_crc)]


def test_decode_many_empty_and_bad_arguments(codec: ModuleType) -> None:
    assert codec.decode_many([]) == []
    with pytest.raises(ValueError, match="version"):
        codec.decode_many([KM], version=70000)
    with pytest.raises(ValueError, match="layout"):
        codec.decode_many([KM], layout=2)
    with pytest.raises(TypeError):
        codec.decode_many([KM, 20])


def test_errors_carry_the_protocol(codec: ModuleType) -> None:
    with pytest.raises(DecodeError) as decode_info:
        codec.decode(sign(bytes.fromhex("14000400001011056162")))
    assert decode_info.value.protocol == "avara"
    with pytest.raises(EncodeError) as encode_info:
        codec.encode(70000)
    assert encode_info.value.protocol == "avara"
    with pytest.raises(EncodeError) as punch_info:
        avara.encode_punch(300)
    assert punch_info.value.protocol == "avara"


def test_decode_error_is_value_error() -> None:
    assert issubclass(DecodeError, ValueError)
    assert issubclass(EncodeError, ValueError)
