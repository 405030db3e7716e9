"""Payload helpers (spec §5): round-trips, the spec's V5 example, errors with offsets.

Pure Python only (no compiled twin), so no ``impl`` fixture.
"""

from __future__ import annotations

import importlib.util
import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gamecodec.avara import payloads as pl
from gamecodec.errors import DecodeError, EncodeError, TruncatedError

needs_msgspec = pytest.mark.skipif(
    importlib.util.find_spec("msgspec") is None,
    reason="kpJSON needs msgspec (none for a free-threaded 3.13)",
)

I16 = st.integers(-(1 << 15), (1 << 15) - 1)
U16 = st.integers(0, (1 << 16) - 1)
I32 = st.integers(-(1 << 31), (1 << 31) - 1)
U32 = st.integers(0, (1 << 32) - 1)


# -- kpKeyAndMouse --------------------------------------------------------------


def test_key_and_mouse_v5_example() -> None:
    km = pl.decode_key_and_mouse(-48, 0, 1234, bytes.fromhex("00000001 0005"))
    assert km == pl.KeyAndMouse(
        frame=1234, buttons=0, down=0, up=0, held=1, mouse_v=0, mouse_h=5, msg_char=0
    )
    assert pl.encode_key_and_mouse(1234, held=1, mouse_h=5) == (
        -48,
        0,
        1234,
        bytes.fromhex("000000010005"),
    )


def test_key_and_mouse_unsigned_p1_is_accepted() -> None:
    assert pl.decode_key_and_mouse(0xD0, 0, 1, bytes.fromhex("000000010005")).held == 1


def test_key_and_mouse_idle_frame() -> None:
    assert pl.encode_key_and_mouse(7) == (-8, 0, 7, b"")
    assert pl.decode_key_and_mouse(-8, 0, 7, b"") == pl.KeyAndMouse(7, 0, 0, 0, 0, 0, 0, 0)


def test_key_and_mouse_all_fields() -> None:
    p1, p2, p3, data = pl.encode_key_and_mouse(
        70000, buttons=3, down=1, up=2, held=0xFFFFFFFF, mouse_v=-1, mouse_h=-32768, msg_char=65
    )
    assert (p1, p2, p3) == (3, 65, 70000)
    assert data == bytes.fromhex("00000001 00000002 ffffffff ffff 8000")
    assert pl.decode_key_and_mouse(p1, p2, p3, bytearray(data)) == pl.KeyAndMouse(
        70000, 3, 1, 2, 0xFFFFFFFF, -1, -32768, 65
    )


def test_key_and_mouse_roundtrip_of_decoded() -> None:
    km = pl.decode_key_and_mouse(-48, 0, 1234, memoryview(bytes.fromhex("000000010005")))
    assert pl.encode_key_and_mouse(**km._asdict()) == (-48, 0, 1234, bytes.fromhex("000000010005"))


def test_key_and_mouse_buttons_are_kept() -> None:
    # p1 = 0x05 | all absent bits = 0xFD = -3
    assert pl.encode_key_and_mouse(1, buttons=5)[0] == -3
    assert pl.decode_key_and_mouse(-3, 0, 1, b"").buttons == 5


@pytest.mark.parametrize(
    ("p1", "data", "error", "offset"),
    [
        (-48, b"", TruncatedError, 0),  # held announced, nothing there
        (-48, bytes(3), TruncatedError, 0),
        (-48, bytes(4), TruncatedError, 4),  # mouse_h missing
        (-48, bytes(5), TruncatedError, 4),
        (-48, bytes(7), DecodeError, 6),  # one byte too many
        (-8, b"\x00", DecodeError, 0),  # idle frame with data
        (0x00, bytes(15), TruncatedError, 14),  # everything announced: 16 bytes
    ],
)
def test_key_and_mouse_length_mismatch(
    p1: int, data: bytes, error: type[DecodeError], offset: int
) -> None:
    with pytest.raises(error) as info:
        pl.decode_key_and_mouse(p1, 0, 1, data, strict=True)
    assert type(info.value) is error
    assert info.value.offset == offset
    assert info.value.protocol == "avara"
    assert str(info.value).endswith(f"(at byte {offset})")


@pytest.mark.parametrize("p1", [-129, 256, None])
def test_key_and_mouse_bad_p1(p1: Any) -> None:
    with pytest.raises(DecodeError):
        pl.decode_key_and_mouse(p1, 0, 0, b"")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"frame": 1 << 31},
        {"frame": 0, "buttons": 8},
        {"frame": 0, "buttons": -1},
        {"frame": 0, "down": -1},
        {"frame": 0, "held": 1 << 32},
        {"frame": 0, "mouse_v": 1 << 15},
        {"frame": 0, "mouse_h": -(1 << 15) - 1},
        {"frame": 0, "msg_char": 1 << 15},
        {"frame": 0, "up": 1.5},
    ],
)
def test_key_and_mouse_encode_range(kwargs: dict[str, Any]) -> None:
    with pytest.raises(EncodeError):
        pl.encode_key_and_mouse(**kwargs)


@given(
    frame=I32,
    buttons=st.integers(0, 7),
    down=U32,
    up=U32,
    held=U32,
    mouse_v=I16,
    mouse_h=I16,
    msg_char=I16,
)
def test_key_and_mouse_roundtrip(**fields: int) -> None:
    km = pl.KeyAndMouse(**fields)
    p1, p2, p3, data = pl.encode_key_and_mouse(**fields)
    assert -128 <= p1 <= 127
    assert len(data) <= 16
    assert pl.decode_key_and_mouse(p1, p2, p3, data) == km


@given(p1=st.integers(-128, 127), data=st.binary(max_size=20))
def test_key_and_mouse_random_bytes(p1: int, data: bytes) -> None:
    try:
        km = pl.decode_key_and_mouse(p1, 0, 0, data)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data)
    else:
        # whatever decodes re-encodes to a canonical form of the same values
        assert pl.decode_key_and_mouse(*pl.encode_key_and_mouse(**km._asdict())) == km


# -- kpPacketProtocolTOC --------------------------------------------------------


def test_toc_roundtrip_and_empty_slots() -> None:
    raw = bytearray(56)
    raw[0:8] = bytes.fromhex("c0a80102 1f90 abcd")  # slot 1: 192.168.1.2:8080, stale padding
    raw[16:24] = bytes.fromhex("0a000001 4e20 0000")  # slot 3: 10.0.0.1:20000
    toc = pl.decode_toc(bytes(raw))
    assert len(toc) == 7
    assert toc[0] == pl.TocEntry(1, "192.168.1.2", 8080, b"\xab\xcd")
    assert toc[2] == pl.TocEntry(3, "10.0.0.1", 20000, b"\x00\x00")
    assert [i for i, e in enumerate(toc) if e is None] == [1, 3, 4, 5, 6]
    assert pl.encode_toc(toc) == bytes(raw)


def test_toc_all_empty() -> None:
    assert pl.decode_toc(bytes(56)) == (None,) * 7
    assert pl.encode_toc([None] * 7) == bytes(56)


def test_toc_zero_host_with_padding_is_not_empty() -> None:
    raw = bytes(6) + b"\x01\x00" + bytes(48)
    assert pl.decode_toc(raw)[0] == pl.TocEntry(1, "0.0.0.0", 0, b"\x01\x00")
    assert pl.encode_toc(pl.decode_toc(raw)) == raw


@pytest.mark.parametrize(
    ("size", "error", "offset"),
    [
        (0, TruncatedError, 0),
        (7, TruncatedError, 0),
        (8, TruncatedError, 8),
        (55, TruncatedError, 48),
        (57, DecodeError, 56),
    ],
)
def test_toc_bad_length(size: int, error: type[DecodeError], offset: int) -> None:
    with pytest.raises(error) as info:
        pl.decode_toc(bytes(size), strict=True)
    assert type(info.value) is error
    assert info.value.offset == offset


@pytest.mark.parametrize(
    "entries",
    [
        [None] * 6,
        [None] * 8,
        [pl.TocEntry(2, "1.2.3.4", 1)] + [None] * 6,  # wrong slot for entry 0
        [pl.TocEntry(1, "1.2.3.256", 1)] + [None] * 6,
        [pl.TocEntry(1, "::1", 1)] + [None] * 6,
        [pl.TocEntry(1, "1.2.3.4", 65536)] + [None] * 6,
        [pl.TocEntry(1, "1.2.3.4", -1)] + [None] * 6,
        [pl.TocEntry(1, "1.2.3.4", 1, b"\x00")] + [None] * 6,
    ],
)
def test_toc_encode_errors(entries: list[pl.TocEntry | None]) -> None:
    with pytest.raises(EncodeError):
        pl.encode_toc(entries)


TOC_ENTRY = st.builds(
    lambda host, port, pad: (".".join(map(str, host)), port, pad),
    st.tuples(*[st.integers(0, 255)] * 4),
    U16,
    st.binary(min_size=2, max_size=2),
)


@given(st.lists(st.one_of(st.none(), TOC_ENTRY), min_size=7, max_size=7))
def test_toc_roundtrip(raw_entries: list[tuple[str, int, bytes] | None]) -> None:
    entries = [
        None
        if e is None or (e[0] == "0.0.0.0" and e[1] == 0 and e[2] == b"\0\0")
        else pl.TocEntry(i + 1, *e)
        for i, e in enumerate(raw_entries)
    ]
    data = pl.encode_toc(entries)
    assert len(data) == 56
    assert list(pl.decode_toc(data)) == entries


# -- PlayerConfigRecord ---------------------------------------------------------


def test_player_config_layout() -> None:
    cfg = pl.PlayerConfig(3, 4, 5, 1, 0, 8, 16, -1, 0xFF112233, 0xFF445566, 0x80000000, 0)
    data = pl.encode_player_config(cfg)
    assert data == bytes.fromhex(
        "0003 0004 0005 0001 0000 0008 0010 ffff ff112233 ff445566 80000000 00000000"
    )
    assert pl.decode_player_config(data) == cfg


@pytest.mark.parametrize(
    ("size", "error", "offset"),
    [
        (0, TruncatedError, 0),
        (3, TruncatedError, 2),
        (15, TruncatedError, 14),
        (17, TruncatedError, 16),
        (31, TruncatedError, 28),
        (33, DecodeError, 32),
    ],
)
def test_player_config_bad_length(size: int, error: type[DecodeError], offset: int) -> None:
    with pytest.raises(error) as info:
        pl.decode_player_config(bytes(size), strict=True)
    assert type(info.value) is error
    assert info.value.offset == offset


@pytest.mark.parametrize(
    ("index", "value"),
    [(0, 1 << 15), (4, -1), (5, 1 << 16), (7, -(1 << 15) - 1), (8, -1), (11, 1 << 32), (2, "3")],
)
def test_player_config_encode_range(index: int, value: Any) -> None:
    fields: list[Any] = [0] * 12
    fields[index] = value
    with pytest.raises(EncodeError):
        pl.encode_player_config(pl.PlayerConfig(*fields))


def test_player_config_wrong_field_count() -> None:
    with pytest.raises(EncodeError):
        pl.encode_player_config((0,) * 11)  # type: ignore[arg-type]


@given(st.tuples(I16, I16, I16, I16, U16, U16, I16, I16, U32, U32, U32, U32))
def test_player_config_roundtrip(fields: tuple[int, ...]) -> None:
    cfg = pl.PlayerConfig(*fields)
    assert pl.decode_player_config(pl.encode_player_config(cfg)) == cfg


# -- kpResultsReport ---------------------------------------------------------------


def test_results_layout() -> None:
    values = list(range(1, 58))
    data = struct.pack(">57i", *values)
    report = pl.decode_results(data)
    assert len(report.players) == 8
    assert report.players[0] == pl.PlayerResult(1, 2, 3, 4, 5, 6)
    assert report.players[7] == pl.PlayerResult(43, 44, 45, 46, 47, 48)
    assert report.team_points == tuple(range(49, 58))
    assert pl.encode_results(report) == data


def test_results_absent_player() -> None:
    absent = pl.PlayerResult(0, 0, 0, -1, 0, 0)
    report = pl.ResultsReport((absent,) * 8, (0,) * 9)
    data = pl.encode_results(report)
    assert data[12:16] == b"\xff\xff\xff\xff"
    assert pl.decode_results(data) == report


@pytest.mark.parametrize(
    ("size", "error", "offset"),
    [
        (0, TruncatedError, 0),
        (227, TruncatedError, 224),
        (101, TruncatedError, 100),
        (229, DecodeError, 228),
    ],
)
def test_results_bad_length(size: int, error: type[DecodeError], offset: int) -> None:
    with pytest.raises(error) as info:
        pl.decode_results(bytes(size), strict=True)
    assert type(info.value) is error
    assert info.value.offset == offset


def test_results_encode_errors() -> None:
    row = pl.PlayerResult(0, 0, 0, 0, 0, 0)
    with pytest.raises(EncodeError):
        pl.encode_results(pl.ResultsReport((row,) * 7, (0,) * 9))
    with pytest.raises(EncodeError):
        pl.encode_results(pl.ResultsReport((row,) * 8, (0,) * 8))
    with pytest.raises(EncodeError):
        pl.encode_results(pl.ResultsReport((row._replace(kills=1 << 31),) * 8, (0,) * 9))
    with pytest.raises(EncodeError):
        pl.encode_results(pl.ResultsReport((row,) * 8, (0,) * 8 + (-(1 << 31) - 1,)))
    with pytest.raises(EncodeError):
        pl.encode_results(pl.ResultsReport(((0,) * 5,) * 8, (0,) * 9))  # type: ignore[arg-type]


@given(st.lists(st.tuples(*[I32] * 6), min_size=8, max_size=8), st.tuples(*[I32] * 9))
def test_results_roundtrip(rows: list[tuple[int, ...]], teams: tuple[int, ...]) -> None:
    report = pl.ResultsReport(tuple(pl.PlayerResult(*r) for r in rows), teams)
    data = pl.encode_results(report)
    assert len(data) == 228
    assert pl.decode_results(data) == report


# -- kpPlayerStatusChange -------------------------------------------------------------


def test_win_frame_is_little_endian() -> None:
    assert pl.encode_win_frame(0x01020304) == b"\x04\x03\x02\x01"
    assert pl.encode_win_frame(-1) == b"\xff\xff\xff\xff"
    assert pl.decode_win_frame(b"\x04\x03\x02\x01") == 0x01020304
    assert pl.decode_win_frame(b"\xff\xff\xff\xff") == -1


def test_win_frame_from_an_8_byte_long() -> None:
    assert pl.decode_win_frame(struct.pack("<q", 1234)) == 1234


@pytest.mark.parametrize(
    ("size", "error", "offset"),
    [(0, TruncatedError, 0), (3, TruncatedError, 0), (5, DecodeError, 4), (9, DecodeError, 4)],
)
def test_win_frame_bad_length(size: int, error: type[DecodeError], offset: int) -> None:
    with pytest.raises(error) as info:
        pl.decode_win_frame(bytes(size), strict=True)
    assert type(info.value) is error
    assert info.value.offset == offset


@pytest.mark.parametrize("value", [1 << 31, -(1 << 31) - 1, None])
def test_win_frame_encode_range(value: Any) -> None:
    with pytest.raises(EncodeError):
        pl.encode_win_frame(value)


@given(I32)
def test_win_frame_roundtrip(value: int) -> None:
    assert pl.decode_win_frame(pl.encode_win_frame(value)) == value


# -- Pascal strings -------------------------------------------------------------------


def test_pascal() -> None:
    assert pl.encode_pascal(b"") == b"\x00"  # the empty login password (spec V1)
    assert pl.decode_pascal(b"\x00") == b""
    assert pl.encode_pascal(b"-Unnamed") == b"\x08-Unnamed"
    assert pl.decode_pascal(bytearray(b"\x08-Unnamed")) == b"-Unnamed"
    assert pl.encode_pascal(b"\xff" * 255)[0] == 255


@pytest.mark.parametrize(
    ("data", "error", "offset"),
    [(b"", TruncatedError, 0), (b"\x05abc", TruncatedError, 1), (b"\x02abc", DecodeError, 3)],
)
def test_pascal_bad(data: bytes, error: type[DecodeError], offset: int) -> None:
    with pytest.raises(error) as info:
        pl.decode_pascal(data, strict=True)
    assert type(info.value) is error
    assert info.value.offset == offset


@pytest.mark.parametrize("value", [b"x" * 256, "text", None])
def test_pascal_encode_errors(value: Any) -> None:
    with pytest.raises(EncodeError):
        pl.encode_pascal(value)


@given(st.binary(max_size=255))
def test_pascal_roundtrip(value: bytes) -> None:
    assert pl.decode_pascal(pl.encode_pascal(value)) == value


# -- level tags -------------------------------------------------------------------------


def test_level_tag() -> None:
    assert pl.encode_level_tag("aa-normal/Bwadi") == b"aa-normal/Bwadi\x00"
    assert pl.decode_level_tag(b"aa-normal/Bwadi\x00") == "aa-normal/Bwadi"
    assert pl.decode_level_tag(b"\x00") == ""


@pytest.mark.parametrize(
    ("data", "error", "offset"),
    [
        (b"", TruncatedError, 0),
        (b"abc", TruncatedError, 3),
        (b"ab\x00c\x00", DecodeError, 3),
        (b"ab\xff\x00", DecodeError, 2),
    ],
)
def test_level_tag_bad(data: bytes, error: type[DecodeError], offset: int) -> None:
    with pytest.raises(error) as info:
        pl.decode_level_tag(data, strict=True)
    assert type(info.value) is error
    assert info.value.offset == offset


@pytest.mark.parametrize("value", ["a\x00b", "\ud800", "x" * 984, b"bytes"])
def test_level_tag_encode_errors(value: Any) -> None:
    with pytest.raises(EncodeError):
        pl.encode_level_tag(value)


@given(st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")))
def test_level_tag_roundtrip(tag: str) -> None:
    assert pl.decode_level_tag(pl.encode_level_tag(tag)) == tag


# -- kpJSON ---------------------------------------------------------------------------------


@needs_msgspec
def test_json() -> None:
    assert pl.encode_json({"away": True}) == b'{"away":true}'
    assert pl.decode_json(b'{"away":true}') == {"away": True}


@needs_msgspec
@pytest.mark.parametrize(
    ("data", "error", "offset"),
    [
        (b"", TruncatedError, 0),
        (b'{"a":', TruncatedError, 5),
        (b"[1,]", DecodeError, 3),
        (b"1 2", DecodeError, 2),
        (b'{"a":true}\x00', DecodeError, 10),
        (b'"\xff"', DecodeError, 1),
        (b"[" * 100_000, DecodeError, 0),
    ],
)
def test_json_bad(data: bytes, error: type[DecodeError], offset: int) -> None:
    with pytest.raises(error) as info:
        pl.decode_json(data)
    assert type(info.value) is error
    assert info.value.offset == offset


@needs_msgspec
@pytest.mark.parametrize("value", [object(), {"x": "y" * 1000}, [1j]])
def test_json_encode_errors(value: Any) -> None:
    with pytest.raises(EncodeError):
        pl.encode_json(value)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 63) - 1) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@needs_msgspec
@given(JSON_VALUES)
def test_json_roundtrip(value: Any) -> None:
    assert pl.decode_json(pl.encode_json(value)) == value


# -- every decoder, random bytes ----------------------------------------------------------------

DECODERS: list[Any] = [
    pl.decode_toc,
    pl.decode_player_config,
    pl.decode_results,
    pl.decode_win_frame,
    pl.decode_pascal,
    pl.decode_level_tag,
    pytest.param(pl.decode_json, marks=needs_msgspec),
]


@pytest.mark.parametrize("decode", DECODERS, ids=lambda f: f.__name__)
@given(data=st.binary(max_size=300))
def test_random_bytes_raise_only_decode_error(
    decode: Callable[[bytes], object], data: bytes
) -> None:
    try:
        decode(data)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data)
        assert exc.protocol == "avara"


@pytest.mark.parametrize("size", [56, 32, 228])
@given(data=st.data())
def test_fixed_records_reencode_exactly(size: int, data: st.DataObject) -> None:
    raw = data.draw(st.binary(min_size=size, max_size=size))
    decode, encode = {
        56: (pl.decode_toc, pl.encode_toc),
        32: (pl.decode_player_config, pl.encode_player_config),
        228: (pl.decode_results, pl.encode_results),
    }[size]
    assert encode(decode(raw)) == raw  # type: ignore[operator]


def test_trailing_bytes_tolerated_like_the_game() -> None:
    """The game reads what it needs and ignores the rest; strict=True refuses."""
    assert pl.decode_key_and_mouse(-48, 0, 1, bytes.fromhex("000000010005ff")).held == 1
    assert pl.decode_toc(bytes(57)) == pl.decode_toc(bytes(56))
    assert pl.decode_player_config(bytes(33)) == pl.decode_player_config(bytes(32))
    assert pl.decode_results(bytes(229)) == pl.decode_results(bytes(228))
    assert pl.decode_win_frame(b"\x05\x00\x00\x00\xff") == 5
    assert pl.decode_pascal(b"\x02abc") == b"ab"
    assert pl.decode_level_tag(b"ab\x00c\x00") == "ab"
