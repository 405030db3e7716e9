"""Hypothesis: the pure and compiled twins give the same results and the same errors.

Random bytes, random valid messages of random template messages, garbage
values on encode and mutated valid packets go through both twins; results
must be equal (floats bit for bit, NaN included) or raise the same exception
type with the same message and offset. Random bytes never raise anything but
DecodeError. A missing compiled twin fails these tests (``load_twin``).
"""

from __future__ import annotations

import math
import uuid
from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.lludp import (
    BlockKind,
    FieldType,
    Message,
    MessageSpec,
    Template,
    _codec_py,
    parse_template,
)
from gamecodec.lludp import default_template as _default_template
from tests.lludp.conftest import ALL_TYPES_TEMPLATE, canon, outcome, unchecked

SETTINGS = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
TEMPLATE = _default_template()
ALL_TYPES = parse_template(ALL_TYPES_TEMPLATE)
SPECS = sorted(TEMPLATE, key=lambda m: m.name)

INT_RANGES = {
    FieldType.U8: (0, 0xFF),
    FieldType.U16: (0, 0xFFFF),
    FieldType.U32: (0, 0xFFFFFFFF),
    FieldType.U64: (0, 0xFFFFFFFFFFFFFFFF),
    FieldType.S8: (-0x80, 0x7F),
    FieldType.S16: (-0x8000, 0x7FFF),
    FieldType.S32: (-0x80000000, 0x7FFFFFFF),
    FieldType.S64: (-0x8000000000000000, 0x7FFFFFFFFFFFFFFF),
    FieldType.IPPORT: (0, 0xFFFF),
}

f32s = st.floats(width=32)
f64s = st.floats()
flag_values = st.sampled_from([0, 0x40, 0x80, 0xC0, 0xE0, 0x10, 0x50, 0x90, 0xD0, 0xFF])


def int_values(low: int, high: int) -> st.SearchStrategy[int]:
    return st.sampled_from([low, high, 0 if low < 0 else high // 2]) | st.integers(low, high)


def field_values(ftype: FieldType, size: int) -> st.SearchStrategy[Any]:
    """Valid values of one field type."""
    if ftype in INT_RANGES:
        return int_values(*INT_RANGES[ftype])
    if ftype == FieldType.BOOL:
        return st.booleans() | st.integers(0, 255)
    if ftype == FieldType.F32:
        return f32s
    if ftype == FieldType.F64:
        return f64s
    if ftype == FieldType.LLVECTOR3:
        return st.tuples(f32s, f32s, f32s) | st.lists(f32s, min_size=3, max_size=3)
    if ftype == FieldType.LLVECTOR3D:
        return st.tuples(f64s, f64s, f64s)
    if ftype == FieldType.LLVECTOR4:
        return st.tuples(f32s, f32s, f32s, f32s)
    if ftype == FieldType.LLQUATERNION:
        unit = st.floats(-1.0, 1.0, width=32)
        return st.tuples(unit, unit, unit) | st.tuples(unit, unit, unit, unit)
    if ftype == FieldType.LLUUID:
        return st.uuids() | st.binary(min_size=16, max_size=16)
    if ftype == FieldType.IPADDR:
        return st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t)))
    if ftype == FieldType.FIXED:  # bytes, or text (UTF-8 padded with NULs)
        return st.binary(min_size=size, max_size=size) | st.text(max_size=size // 4)
    top = 255 if size == 1 else 600
    return st.binary(max_size=40) | st.binary(min_size=top - 2, max_size=top) | st.text(max_size=8)


def garbage_values() -> st.SearchStrategy[Any]:
    """Values of the wrong type or range for any field."""
    return st.one_of(
        st.none(),
        st.integers(-(1 << 70), 1 << 70),
        st.sampled_from([-1, 256, 1 << 16, 1 << 32, 1 << 64, -(1 << 63) - 1, True, 1e39, -1e39]),
        st.floats(),
        st.text(max_size=6),
        st.binary(max_size=20),
        st.sampled_from(["1.2.3.4", "1.2.3", "256.0.0.1", "a.b.c.d", bytes(256), bytes(0x10000)]),
        st.lists(st.floats() | st.integers(-5, 5) | st.text(max_size=1), max_size=5),
        st.tuples(st.floats(), st.floats(), st.floats(), st.floats(allow_nan=False)),
    )


@st.composite
def messages(
    draw: st.DrawFn, template: Template | None = None, garbage: bool = False
) -> tuple[Message, Template]:
    """A message of a random template message with random values (or some garbage ones)."""
    tpl = TEMPLATE if template is None else template
    spec: MessageSpec = draw(st.sampled_from(SPECS if template is None else list(tpl)))
    blocks: dict[str, list[dict[str, Any]]] = {}
    for bspec in spec.blocks:
        if bspec.kind == BlockKind.SINGLE:
            count = 1
        elif bspec.kind == BlockKind.MULTIPLE:
            count = bspec.count
        else:
            count = draw(st.integers(0, 3))
            if count == 0 and bspec is spec.blocks[-1] and not any(blocks.values()):
                count = 1  # a message with no block instance at all is not decodable (§9.5)
        blocks[bspec.name] = [
            {
                f.name: draw(
                    (garbage_values() | field_values(f.type, f.size))
                    if garbage
                    else field_values(f.type, f.size)
                )
                for f in bspec.fields
            }
            for _ in range(count)
        ]
    acks = (
        ()
        if spec.name == "PacketAck"
        else tuple(draw(st.lists(st.integers(0, 0xFFFFFFFF), max_size=5)))
    )
    msg = unchecked(
        spec.name,
        template=tpl,
        sequence=draw(st.integers(0, 0xFFFFFFFF)),
        acks=acks,
        extra=draw(st.sampled_from([b"", b"\x00\x01\x00"])),
        **blocks,
    )
    return msg._replace(flags=draw(flag_values) & ~0x10), tpl


def both(py_codec: ModuleType, c_codec: ModuleType, name: str, *args: Any) -> tuple[Any, Any]:
    a = outcome(getattr(py_codec, name), *args)
    b = outcome(getattr(c_codec, name), *args)
    assert a == b, f"{name}: py {a!r}\n c {b!r}"
    return a, b


# --- random bytes --------------------------------------------------------------------------------

packets = st.one_of(
    st.binary(max_size=80),
    st.tuples(
        flag_values, st.binary(min_size=4, max_size=4), st.sampled_from([0, 0, 1, 3, 255]),
        st.sampled_from([b"", b"\xff", b"\xff\xff", b"\xff\xff\xff", b"\xff\xff\x00"]),
        st.binary(max_size=120),
    ).map(lambda t: bytes((t[0],)) + t[1] + bytes((t[2],)) + t[3] + t[4]),
)  # fmt: skip


@SETTINGS
@given(data=packets, strict=st.booleans(), max_size=st.sampled_from([8192, 0, 7, 300]))
def test_random_bytes_decode(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes, strict: bool, max_size: int
) -> None:
    a, _ = both(py_codec, c_codec, "decode", data, TEMPLATE, strict, max_size)
    assert a[0] in ("ok", "decode")
    both(py_codec, c_codec, "peek", data, TEMPLATE)
    both(py_codec, c_codec, "decode_many", [data, data[:7]], TEMPLATE, strict, max_size)


@SETTINGS
@given(data=packets, strict=st.booleans())
def test_random_bytes_all_types_template(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes, strict: bool
) -> None:
    template = ALL_TYPES
    data = data[:6] + b"\xff\xff\x03\xe8" + data[6:] if data[:1] != b"\x00" else data
    a, _ = both(py_codec, c_codec, "decode", data, template, strict, 8192)
    assert a[0] in ("ok", "decode")


@SETTINGS
@given(
    data=st.binary(max_size=60)
    | st.lists(st.sampled_from([b"\x00", b"\x00\xff", b"\x01"])).map(b"".join),
    max_size=st.integers(0, 1000),
)
def test_random_bytes_zero_decode(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes, max_size: int
) -> None:
    a, _ = both(py_codec, c_codec, "zero_decode", data, max_size)
    assert a[0] in ("ok", "decode")
    both(py_codec, c_codec, "zero_encode", data)


@SETTINGS
@given(
    data=packets,
    flags=st.none() | st.integers(-1, 256),
    sequence=st.none() | st.integers(-1, 1 << 32),
    acks=st.none() | st.lists(st.integers(-1, 1 << 32), max_size=4) | st.just(list(range(251))),
)
def test_random_bytes_forward(
    py_codec: ModuleType,
    c_codec: ModuleType,
    data: bytes,
    flags: int | None,
    sequence: int | None,
    acks: list[int] | None,
) -> None:
    both(py_codec, c_codec, "forward", data, flags, sequence, None if acks is None else tuple(acks))
    a, _ = both(py_codec, c_codec, "forward", data, None, None, None)
    assert a[0] in ("ok", "decode")


# --- valid messages -----------------------------------------------------------------------------


@SETTINGS
@given(made=messages(), mode=st.sampled_from(["flag", "smaller"]))
def test_valid_messages(
    py_codec: ModuleType, c_codec: ModuleType, made: tuple[Message, Template], mode: str
) -> None:
    msg, template = made
    a = py_codec.encode(msg, template, mode)
    b = c_codec.encode(msg, template, mode)
    assert a == b
    got_py = py_codec.decode(b, template, True, 1 << 16)
    got_c = c_codec.decode(a, template, True, 1 << 16)
    assert canon(got_py) == canon(got_c)
    assert (got_py.name, got_py.acks, got_py.sequence) == (msg.name, msg.acks, msg.sequence)
    assert py_codec.encode(got_c, template, "flag") == c_codec.encode(got_py, template, "flag") == a
    assert canon(py_codec.peek(a, template)) == canon(c_codec.peek(a, template))


@SETTINGS
@given(made=messages())
def test_valid_messages_round_trip_values(
    py_codec: ModuleType, c_codec: ModuleType, made: tuple[Message, Template]
) -> None:
    """Decoded values equal the built ones, as far as the wire keeps them."""
    msg, template = made
    wire = py_codec.encode(msg, template, "flag")
    got = c_codec.decode(wire, template, True, 1 << 16)
    spec = template[msg.name]
    for bspec in spec.blocks:
        for mine, theirs in zip(msg.blocks[bspec.name], got.blocks[bspec.name], strict=True):
            for f in bspec.fields:
                assert_kept(f.type, f.size, mine[f.name], theirs[f.name])
    # BOOL bytes other than 0/1 read as True, are listed, and come back as they were
    odd = [
        (bspec.name, k, f.name, int(block[f.name]))
        for bspec in spec.blocks
        for k, block in enumerate(msg.blocks[bspec.name])
        for f in bspec.fields
        if f.type == FieldType.BOOL and int(block[f.name]) > 1
    ]
    assert got.bool_bytes == tuple(odd)
    assert py_codec.encode(got, template, "flag") == c_codec.encode(got, template, "flag") == wire


def assert_kept(ftype: FieldType, size: int, given_value: Any, got: Any) -> None:
    if ftype in INT_RANGES:
        assert got == given_value
    elif ftype == FieldType.BOOL:
        assert got is (int(given_value) != 0)  # any non-zero byte is True
    elif ftype == FieldType.LLUUID:
        assert got.bytes == (
            given_value.bytes if isinstance(given_value, uuid.UUID) else given_value
        )
    elif ftype == FieldType.FIXED and isinstance(given_value, str):
        assert got == given_value.encode().ljust(size, b"\x00")  # padded with NULs
    elif ftype == FieldType.VARIABLE and isinstance(given_value, str):
        assert got == (given_value.encode() + b"\x00" if given_value else b"")  # text, NUL
    elif ftype in (FieldType.FIXED, FieldType.VARIABLE) or ftype == FieldType.IPADDR:
        assert got == given_value
    elif ftype == FieldType.LLQUATERNION:
        assert len(got) == 4
        if len(given_value) == 3:
            assert canon(tuple(got[:3])) == canon(tuple(given_value))
    else:
        items = [given_value] if isinstance(given_value, float) else list(given_value)
        values = [got] if isinstance(got, float) else list(got)
        for a, b in zip(items, values, strict=True):
            assert (math.isnan(a) and math.isnan(b)) or canon(a) == canon(b)


@SETTINGS
@given(made=messages(garbage=True), mode=st.sampled_from(["flag", "smaller"]))
def test_garbage_values_same_error(
    py_codec: ModuleType, c_codec: ModuleType, made: tuple[Message, Template], mode: str
) -> None:
    msg, template = made
    a, _ = both(py_codec, c_codec, "encode", msg, template, mode)
    assert a[0] in ("ok", "encode"), a


@SETTINGS
@given(made=messages(), data=st.data(), mode=st.sampled_from(["flag", "smaller"]))
def test_bool_bytes_same_bytes_or_error(
    py_codec: ModuleType,
    c_codec: ModuleType,
    made: tuple[Message, Template],
    data: Any,
    mode: str,
) -> None:
    """``Message.bool_bytes``, right or wrong, against any message: the same bytes
    or the same EncodeError on both twins."""
    msg, template = made
    spec = template[msg.name]
    entry = st.tuples(
        st.sampled_from([b.name for b in spec.blocks] + ["Nope"]),
        st.integers(-1, 3),
        st.sampled_from([f.name for b in spec.blocks for f in b.fields] + ["Nope"]),
        st.integers(-1, 256) | st.just(True),
    )
    bool_bytes = data.draw(
        st.lists(entry, max_size=4).map(tuple)
        | st.sampled_from([5, None, "x", ((1, 2),), (("a", 0, "b", 2.5),)])
    )
    a, _ = both(py_codec, c_codec, "encode", msg._replace(bool_bytes=bool_bytes), template, mode)
    assert a[0] in ("ok", "encode"), a


@SETTINGS
@given(data=st.data())
def test_all_types_messages(py_codec: ModuleType, c_codec: ModuleType, data: Any) -> None:
    template = ALL_TYPES
    msg, _ = data.draw(messages(template=template, garbage=data.draw(st.booleans())))
    a, _ = both(py_codec, c_codec, "encode", msg, template, "flag")
    if a[0] == "ok":
        wire = py_codec.encode(msg, template, "flag")
        both(py_codec, c_codec, "decode", wire, template, True, 1 << 17)


# --- mutated valid packets ------------------------------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid packet (encoded by the pure twin) with a few bytes changed, cut or added."""
    msg, template = draw(messages())
    wire = bytearray(_codec_py.encode(msg, template, "flag"))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "truncate", "extend", "flags", "count"]))
        if kind == "flip" and wire:
            i = draw(st.integers(0, len(wire) - 1))
            wire[i] ^= draw(st.integers(1, 255))
        elif kind == "truncate":
            del wire[draw(st.integers(0, len(wire))) :]
        elif kind == "extend":
            wire += draw(st.binary(min_size=1, max_size=8))
        elif kind == "flags" and wire:
            wire[0] = draw(flag_values)
        elif kind == "count" and wire:
            wire[-1] = draw(st.integers(0, 255))
    return bytes(wire)


@SETTINGS
@given(data=mutated(), strict=st.booleans())
def test_mutated_packets(
    py_codec: ModuleType, c_codec: ModuleType, data: bytes, strict: bool
) -> None:
    a, _ = both(py_codec, c_codec, "decode", data, TEMPLATE, strict, 8192)
    assert a[0] in ("ok", "decode")
    both(py_codec, c_codec, "peek", data, TEMPLATE)
    both(py_codec, c_codec, "forward", data, 0x40, 1, (7,))
    if a[0] != "ok":
        return
    msg = py_codec.decode(data, TEMPLATE, strict, 8192)
    again, _ = both(py_codec, c_codec, "encode", msg, TEMPLATE, "flag")
    if msg.truncated or again[0] != "ok":
        return
    wire = c_codec.encode(msg, TEMPLATE, "flag")
    if msg.flags & 0x80:  # zero-coded input need not be in the encoder's canonical form
        assert canon(py_codec.decode(wire, TEMPLATE, strict, 8192)) == canon(msg)
    else:
        assert wire == data  # an unmodified, untruncated message re-encodes exactly
