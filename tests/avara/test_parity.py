"""Hypothesis: both twins agree, round-trip, and raise only DecodeError."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec.avara import Command, Layout
from gamecodec.errors import DecodeError, EncodeError
from tests.avara.helpers import sign

SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

commands = st.builds(
    Command,
    serial=st.integers(0, 0xFFFF),
    send_count=st.integers(0, 0xFF),
    flags=st.just(0),
    command=st.integers(-128, 127),
    distribution=st.none() | st.integers(-0x8000, 0x7FFF),
    p3=st.integers(-(1 << 31), (1 << 31) - 1) | st.integers(0, 0x10000),
    p2=st.integers(-0x8000, 0x7FFF) | st.just(0),
    p1=st.integers(-128, 127) | st.just(0),
    sender=st.none() | st.integers(-128, 127),
    data=st.binary(max_size=40) | st.binary(min_size=250, max_size=984),
)
acks = st.integers(0, 0x7FFF).map(lambda n: 2 * n)
layouts = st.sampled_from([Layout.CURRENT, Layout.LEGACY])
versions = st.sampled_from([18, 17, 11, None])


def outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """A result, or the exception's type, message and offset."""
    try:
        return ("ok", fn(*args, **kwargs))
    except DecodeError as exc:
        return ("decode", (type(exc), str(exc), exc.offset, exc.partial))
    except EncodeError as exc:
        return ("encode", (type(exc), str(exc)))


@SETTINGS
@given(
    cmds=st.lists(commands, max_size=6),
    ack=acks,
    bitmap=st.none() | st.integers(-(1 << 31), (1 << 31) - 1),
    version=st.integers(0, 0xFFFF),
)
def test_round_trip(
    codec: ModuleType, cmds: list[Command], ack: int, bitmap: int | None, version: int
) -> None:
    if bitmap is not None:
        ack += 1
    wire = codec.encode(ack, cmds, bitmap, version=version)
    got = codec.decode(wire, version=version, strict=True)
    assert got.crc_ok is True
    assert (got.ack, got.ack_bitmap) == (ack, bitmap)
    assert got.commands == tuple(c._replace(flags=codec.canonical_flags(c)) for c in cmds)
    assert codec.encode(got, version=version, keep_flags=True) == wire


@SETTINGS
@given(cmds=st.lists(commands.map(lambda c: c._replace(send_count=0)), max_size=4), ack=acks)
def test_round_trip_legacy(codec: ModuleType, cmds: list[Command], ack: int) -> None:
    wire = codec.encode(ack, cmds, layout=Layout.LEGACY)
    got = codec.decode(wire, layout=Layout.LEGACY)
    assert got.commands == tuple(c._replace(flags=codec.canonical_flags(c)) for c in cmds)


@SETTINGS
@given(cmds=st.lists(commands, max_size=4), ack=acks)
def test_cross_twin_encode_decode(
    py_codec: ModuleType, c_codec: ModuleType, cmds: list[Command], ack: int
) -> None:
    a = py_codec.encode(ack, cmds)
    b = c_codec.encode(ack, cmds)
    assert a == b
    assert py_codec.decode(b) == c_codec.decode(a)


@SETTINGS
@given(data=st.binary(max_size=80), version=versions, layout=layouts, strict=st.booleans())
def test_random_bytes_agree(
    py_codec: ModuleType,
    c_codec: ModuleType,
    data: bytes,
    version: int | None,
    layout: Layout,
    strict: bool,
) -> None:
    kwargs = {"version": version, "layout": layout, "strict": strict}
    a = outcome(py_codec.decode, data, **kwargs)
    b = outcome(c_codec.decode, data, **kwargs)
    assert a == b


@SETTINGS
@given(body=st.binary(min_size=2, max_size=120), layout=layouts, strict=st.booleans())
def test_random_signed_bodies_agree(
    py_codec: ModuleType, c_codec: ModuleType, body: bytes, layout: Layout, strict: bool
) -> None:
    """Garbage behind a valid checksum reaches the command parser."""
    data = sign(body)
    a = outcome(py_codec.decode, data, layout=layout, strict=strict)
    b = outcome(c_codec.decode, data, layout=layout, strict=strict)
    assert a == b
    assert a[0] in ("ok", "decode")


@SETTINGS
@given(
    bodies=st.lists(st.binary(min_size=2, max_size=60), max_size=12),
    layout=layouts,
    raw=st.lists(st.binary(max_size=12), max_size=4),
)
def test_decode_array_agrees(
    py_codec: ModuleType, c_codec: ModuleType, bodies: list[bytes], layout: Layout, raw: list[bytes]
) -> None:
    datagrams = [sign(b) for b in bodies] + raw
    a = py_codec.decode_array(datagrams, layout=layout)
    b = c_codec.decode_array(datagrams, layout=layout)
    assert np.array_equal(a.commands, b.commands)
    assert np.array_equal(a.datagrams, b.datagrams)
    assert a.commands.dtype == b.commands.dtype


def _item(result: Any) -> Any:
    """A decode_many item, comparable across twins (errors by type, text, offset, partial)."""
    if isinstance(result, DecodeError):
        return (type(result), str(result), result.offset, result.protocol, result.partial)
    return result


@SETTINGS
@given(
    bodies=st.lists(st.binary(min_size=2, max_size=60), max_size=12),
    raw=st.lists(st.binary(max_size=12), max_size=4),
    version=versions,
    layout=layouts,
    strict=st.booleans(),
)
def test_decode_many_agrees(
    py_codec: ModuleType,
    c_codec: ModuleType,
    bodies: list[bytes],
    raw: list[bytes],
    version: int | None,
    layout: Layout,
    strict: bool,
) -> None:
    """The list form: both twins give the same results and errors, each the
    one :func:`decode` gives for that datagram alone."""
    datagrams = [sign(b) for b in bodies] + raw
    kwargs = {"version": version, "layout": layout, "strict": strict}
    got = c_codec.decode_many(iter(datagrams), **kwargs)
    assert [_item(r) for r in py_codec.decode_many(datagrams, **kwargs)] == [_item(r) for r in got]
    for data, result in zip(datagrams, got, strict=True):
        kind, value = outcome(c_codec.decode, data, **kwargs)
        if kind == "ok":
            assert result == value
        else:
            assert isinstance(result, DecodeError)
            assert (type(result), str(result), result.offset, result.partial) == value


@SETTINGS
@given(bodies=st.lists(st.binary(min_size=2, max_size=60), max_size=8))
def test_decode_array_matches_decode(codec: ModuleType, bodies: list[bytes]) -> None:
    datagrams = [sign(b) for b in bodies]
    batch = codec.decode_array(datagrams)
    for index, data in enumerate(datagrams):
        kind, value = outcome(codec.decode, data)
        result = value if kind == "ok" else value[3]
        row = batch.datagrams[index]
        mine = batch.commands[row["first_command"] : row["first_command"] + row["command_count"]]
        assert len(mine) == len(result.commands)
        for rec, cmd in zip(mine, result.commands, strict=True):
            assert rec["serial"] == cmd.serial and rec["p3"] == cmd.p3
            start = int(rec["data_offset"])
            assert data[start : start + int(rec["data_length"])] == cmd.data


values = st.one_of(
    st.integers(-(1 << 40), 1 << 40),
    st.none(),
    st.floats(),
    st.text(max_size=3),
    st.binary(max_size=3),
    st.booleans(),
)


@SETTINGS
@given(
    fields=st.lists(values, min_size=10, max_size=10),
    ack=values,
    bitmap=values,
    keep=st.booleans(),
    layout=layouts,
)
def test_encode_errors_agree(
    py_codec: ModuleType,
    c_codec: ModuleType,
    fields: list[Any],
    ack: Any,
    bitmap: Any,
    keep: bool,
    layout: Layout,
) -> None:
    """Arbitrary values: both twins give the same bytes or the same EncodeError."""
    cmd = Command(*fields)
    kwargs = {"keep_flags": keep, "layout": layout}
    a = outcome(py_codec.encode, ack, [cmd], bitmap, **kwargs)
    b = outcome(c_codec.encode, ack, [cmd], bitmap, **kwargs)
    assert a == b
    good = Command(0, 0, fields[2], 17, None, 0, 0, 0, None, b"")
    a = outcome(py_codec.encode, 0, [good, cmd], **kwargs)
    b = outcome(c_codec.encode, 0, [good, cmd], **kwargs)
    assert a == b


@SETTINGS
@given(data=st.binary(max_size=300), crc=st.integers(0, 0xFFFF))
def test_crc_agrees(py_codec: ModuleType, c_codec: ModuleType, data: bytes, crc: int) -> None:
    assert py_codec.crc16_kermit(data, crc) == c_codec.crc16_kermit(data, crc)


def _any_outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(*args, **kwargs))
    except (ValueError, TypeError) as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("version", ["18", 18.0, -1, 65536, 1 << 70, None, True, 18, 0])
@pytest.mark.parametrize("layout", [0, 1, 2, -1, 1.0, "1", Layout.LEGACY])
def test_argument_checks_agree(
    py_codec: ModuleType, c_codec: ModuleType, version: Any, layout: Any
) -> None:
    data = sign(bytes.fromhex("14000400001011056162636465"))
    for name in ("decode", "decode_array", "decode_many"):
        arg = data if name == "decode" else [data]
        a = _any_outcome(getattr(py_codec, name), arg, version=version, layout=layout)
        b = _any_outcome(getattr(c_codec, name), arg, version=version, layout=layout)
        if name == "decode_array" and a[0] == b[0] == "ok":
            assert np.array_equal(a[1].commands, b[1].commands)
        elif name == "decode_many" and a[0] == b[0] == "ok":
            assert [_item(r) for r in a[1]] == [_item(r) for r in b[1]]
        else:
            assert a == b
    a = _any_outcome(py_codec.datagram_crc, data, version)
    b = _any_outcome(c_codec.datagram_crc, data, version)
    assert a == b or version is None  # None is not a version for datagram_crc
