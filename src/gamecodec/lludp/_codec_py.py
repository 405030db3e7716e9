"""LLUDP packet codec, pure-Python twin of ``_codec_c.pyx``.

Entry points take the template explicitly (the public wrappers in
``gamecodec.lludp`` supply the default). Semantics follow the LL viewer's
reader: zero-coding with LL's wrap rule and a size cap, acks stripped from
the end before expansion, extra header bytes after the message number, and
LL's tolerance unless ``strict``.
"""

from __future__ import annotations

import math
import struct
import sys
import uuid
from collections.abc import Iterable
from typing import Any

from gamecodec.errors import DecodeError
from gamecodec.lludp import _errors as M
from gamecodec.lludp._models import (
    ACK,
    MAX_ACKS,
    ZEROCODED,
    Block,
    Frequency,
    Header,
    Message,
    split_code,
)
from gamecodec.lludp.template import Template

__all__ = [
    "decode",
    "decode_many",
    "encode",
    "encode_into",
    "encode_packet",
    "forward",
    "peek",
    "zero_decode",
    "zero_encode",
]

_VARIABLE = 3  # BlockKind.VARIABLE
_UUID_NEW = object.__new__
_UUID_INT = uuid.UUID.__dict__["int"]
_UUID_SAFE = uuid.UUID.__dict__["is_safe"]
_SAFE_UNKNOWN = uuid.SafeUUID.unknown
_F = struct.Struct("<f")
_D = struct.Struct("<d")
_V3 = struct.Struct("<3f")
_V3D = struct.Struct("<3d")
_V4 = struct.Struct("<4f")
_MAX_VARIABLE = 0xFFFF  # a Variable 4 length above this cannot be in a real packet


def _nan32(bits: int) -> float:
    """The double of an F32 NaN with its bits kept: payload and quiet bit as sent
    (the hardware conversion struct uses would quieten a signalling NaN)."""
    double = (bits >> 31) << 63 | 0x7FF << 52 | (bits & 0x7FFFFF) << 29
    return float(_D.unpack(double.to_bytes(8, "little"))[0])


def _f32s(fmt: struct.Struct, raw: bytes) -> tuple[float, ...]:
    """F32 values, NaNs by their bits (:func:`_nan32`)."""
    values: tuple[float, ...] = fmt.unpack(raw)
    if any(map(math.isnan, values)):
        return tuple(
            _nan32(int.from_bytes(raw[4 * k : 4 * k + 4], "little")) if math.isnan(x) else x
            for k, x in enumerate(values)
        )
    return values


def _f32_bits(d: float) -> bytes:
    """One F32; a NaN keeps its quiet bit and the top of its payload when that
    payload is not empty (the inverse of :func:`_nan32`)."""
    if not math.isnan(d):
        return _F.pack(d)
    bits = int.from_bytes(_D.pack(d), "little")
    payload = (bits & 0xFFFFFFFFFFFFF) >> 29
    if not payload:
        return _F.pack(d)
    return ((bits >> 63) << 31 | 0x7F800000 | payload).to_bytes(4, "little")


def _uuid(raw: bytes) -> uuid.UUID:
    u: uuid.UUID = _UUID_NEW(uuid.UUID)
    _UUID_INT.__set__(u, int.from_bytes(raw, "big"))
    _UUID_SAFE.__set__(u, _SAFE_UNKNOWN)
    return u


# ---------------------------------------------------------------- zero-coding


def _as_bytes(data: bytes | bytearray | memoryview) -> bytes:
    """``data`` as bytes; anything not bytes-like is a TypeError (``bytes(40)``
    would be 40 zero bytes)."""
    return data if type(data) is bytes else memoryview(data).tobytes()


def _check_max_size(max_size: object) -> int:
    if type(max_size) is not int or max_size < 0:
        raise M.bad_max_size(max_size)
    return min(max_size, sys.maxsize)


def zero_decode(data: bytes, max_size: int = 8192) -> bytes:
    """Expand LL zero-coding; :class:`DecodeError` if the result passes ``max_size`` bytes."""
    data = _as_bytes(data)
    max_size = _check_max_size(max_size)
    return _expand(data, 0, len(data), max_size, 0)


def _expand(data: bytes, start: int, end: int, max_size: int, base: int) -> bytes:
    """LL zero-run expansion of ``data[start:end]``; the byte offsets reported start at ``base``.

    As in the viewer's ``zeroCodeExpand``, a literal byte may end at
    ``max_size`` but a zero run must end at least one byte before it (its
    check fires one byte early), save a lone ``00`` that ends the input."""
    find = data.find
    out = bytearray()
    i = start
    while i < end:
        z = find(b"\x00", i, end)
        stop = end if z < 0 else z
        if len(out) + (stop - i) > max_size:
            raise M.zero_run_too_long(base + i - start + (max_size - len(out)), max_size)
        out += data[i:stop]
        if z < 0:
            break
        j = z + 1
        while j < end and data[j] == 0:
            j += 1
        runs = j - z
        lone = False  # a lone 00 ending the input: checked as a literal byte
        if j < end:
            count = 256 * (runs - 1) + data[j]
            j += 1
        else:
            count = 256 * (runs - 1) + 1
            lone = runs == 1
        if len(out) + count > (max_size if lone else max_size - 1):
            raise M.zero_run_too_long(base + z - start, max_size)
        out += bytes(count)
        i = j
    return bytes(out)


def zero_encode(data: bytes) -> bytes:
    """LL zero-coding: each run of zeros becomes ``00 n``, runs cut at 255."""
    data = _as_bytes(data)
    find = data.find
    out = bytearray()
    i = 0
    end = len(data)
    while i < end:
        z = find(b"\x00", i)
        if z < 0:
            out += data[i:]
            break
        out += data[i:z]
        j = z
        while j < end and data[j] == 0:
            j += 1
        run = j - z
        while run > 0:
            n = 255 if run > 255 else run
            out += bytes((0, n))
            run -= n
        i = j
    return bytes(out)


# ---------------------------------------------------------------- header


def _split_acks(data: bytes, n: int) -> tuple[tuple[int, ...], int]:
    count = data[n - 1]
    if n - 1 < 4 * count + 7:
        raise M.bad_ack_count(count, n)
    body_end = n - 1 - 4 * count
    acks = tuple(int.from_bytes(data[n - 5 - 4 * k : n - 1 - 4 * k], "big") for k in range(count))
    return acks, body_end


def _read_number(region: bytes) -> tuple[int, int]:
    """(code, size) of the message number at the start of ``region``."""
    size = len(region)
    if size < 1:
        raise M.short_number(6)
    first = region[0]
    if first != 0xFF:
        return first, 1
    if size < 2:
        raise M.short_number(6 + size)
    second = region[1]
    if second != 0xFF:
        return 0xFF00 | second, 2
    if size < 4:
        raise M.short_number(6 + size)
    return 0xFFFF0000 | (region[2] << 8) | region[3], 4


def _region(data: bytes, body_end: int, flags: int, max_size: int) -> bytes:
    """The message from byte 6 to the acks, zero-decoded if the flag says so:
    the 6 header bytes and the expansion share ``max_size``, as they share the
    viewer's buffer."""
    if flags & ZEROCODED:
        try:
            return _expand(data, 6, body_end, max(0, max_size - 6), 6)
        except DecodeError as exc:
            raise M.packet_too_long(exc.offset, max_size) from None
    return data[6:body_end]


def _unknown_name(code: int) -> str:
    return f"Unknown:{code:#x}"


def peek(data: bytes, template: Template) -> Header:
    """Header, acks and message number, expanding at most the first bytes of the body."""
    data = _as_bytes(data)
    n = len(data)
    if n < 7:
        raise M.short_packet(n)
    flags = data[0]
    acks: tuple[int, ...] = ()
    body_end = n
    if flags & ACK:
        acks, body_end = _split_acks(data, n)
    if flags & ZEROCODED:
        # 4 number bytes expand from at most 4 input pairs: 8 bytes are enough.
        head = _expand(data, 6, min(body_end, 14), 1 << 20, 6)[:4]
    else:
        head = data[6 : min(body_end, 10)]
    code, _ = _read_number(head)
    frequency, number = split_code(code)
    plan = template.plan(code)
    name = None
    if plan is not False:
        name = plan[1]
        frequency = plan[2]
        number = plan[3]
    sequence = int.from_bytes(data[1:5], "big")
    return Header(flags, sequence, data[5], frequency, number, name, acks, body_end)


# ---------------------------------------------------------------- body


def _value(ftype: int, raw: bytes) -> Any:
    if ftype == 1:
        return raw[0]
    if ftype == 2:
        return raw[0] | raw[1] << 8
    if ftype in (3, 4):
        return int.from_bytes(raw, "little")
    if ftype in (5, 6, 7, 8):
        return int.from_bytes(raw, "little", signed=True)
    if ftype == 9:
        return _f32s(_F, raw)[0]
    if ftype == 10:
        return _D.unpack(raw)[0]
    if ftype == 11:
        return _f32s(_V3, raw)
    if ftype == 12:
        return _V3D.unpack(raw)
    if ftype == 13:
        return _f32s(_V4, raw)
    if ftype == 14:
        x, y, z = _f32s(_V3, raw)
        t = 1.0 - (x * x + y * y + z * z)
        return (x, y, z, math.sqrt(t) if t > 0 else 0.0)
    if ftype == 15:
        return _uuid(raw)
    if ftype == 16:
        return raw[0] != 0
    if ftype == 17:
        return f"{raw[0]}.{raw[1]}.{raw[2]}.{raw[3]}"
    if ftype == 18:
        return raw[0] << 8 | raw[1]
    return raw  # Fixed


def _walk(
    region: bytes, pos: int, plan: Any, strict: bool, name: str
) -> tuple[dict[str, tuple[Block, ...]], int, list[str], bool, list[tuple[str, int, str, int]]]:
    """The blocks from ``region[pos:]``, where the walk ended, the absent
    blocks, whether a field was cut short and the BOOL bytes other than 0/1."""
    end = len(region)
    out: dict[str, tuple[Block, ...]] = {}
    absent: list[str] = []
    truncated = False
    produced = 0
    bool_bytes: list[tuple[str, int, str, int]] = []
    for bname, kind, fixed_count, cls, layout in plan[4]:
        count = fixed_count
        if kind == _VARIABLE:
            if pos >= end:
                if strict:
                    raise M.missing_count(6 + pos, name, bname)
                absent.append(bname)
                out[bname] = ()
                continue
            count = region[pos]
            pos += 1
        items: list[Block] = []
        nfields = len(layout) // 3
        for index in range(count):
            values: list[Any] = []
            for f in range(nfields):
                ftype = layout[3 * f]
                size = layout[3 * f + 1] | layout[3 * f + 2] << 8
                if ftype == 20:  # Variable: a little-endian length prefix of `size` bytes
                    if pos + size > end:
                        if strict:
                            raise M.short_field(6 + pos, name, bname, cls._fields[f])
                        truncated = True
                        pos = end
                        values.append(b"")
                        continue
                    length = int.from_bytes(region[pos : pos + size], "little")
                    if length > _MAX_VARIABLE:
                        raise M.too_long_variable(6 + pos, name, bname, cls._fields[f], length)
                    pos += size
                    if pos + length > end:
                        if strict:
                            raise M.short_field(6 + pos, name, bname, cls._fields[f])
                        truncated = True
                        values.append(region[pos:end] + bytes(length - (end - pos)))
                        pos = end
                    else:
                        values.append(region[pos : pos + length])
                        pos += length
                    continue
                if pos + size > end:
                    if strict:
                        raise M.short_field(6 + pos, name, bname, cls._fields[f])
                    truncated = True
                    raw = bytes(size)  # as the viewer: all zeros, the bytes present unused
                    pos = end
                else:
                    raw = region[pos : pos + size]
                    pos += size
                    if ftype == 16 and raw[0] > 1:
                        bool_bytes.append((bname, index, cls._fields[f], raw[0]))
                values.append(_value(ftype, raw))
            items.append(tuple.__new__(cls, values))
        produced += count
        out[bname] = tuple(items)
    if produced == 0 and plan[4]:
        raise M.empty_message(6 + pos, name)
    return out, pos, absent, truncated, bool_bytes


def decode(data: bytes, template: Template, strict: bool = False, max_size: int = 8192) -> Message:
    """Decode one packet: header, acks, message number, extra bytes, every field."""
    data = _as_bytes(data)
    max_size = _check_max_size(max_size)
    n = len(data)
    if n < 7:
        raise M.short_packet(n)
    flags = data[0]
    sequence = data[1] << 24 | data[2] << 16 | data[3] << 8 | data[4]
    extra_len = data[5]
    acks: tuple[int, ...] = ()
    body_end = n
    if flags & ACK:
        acks, body_end = _split_acks(data, n)
    region = _region(data, body_end, flags, max_size)
    code, pos = _read_number(region)
    if pos + extra_len > len(region):
        raise M.short_extra(6 + len(region), extra_len)
    extra = region[pos : pos + extra_len]
    pos += extra_len
    plan = template.plan(code)
    if plan is False:
        frequency, number = split_code(code)
        return Message(
            _unknown_name(code), {}, flags, sequence, acks, extra, frequency, number,
            b"", (), False, region[pos:],
        )  # fmt: skip
    assert not isinstance(plan, bool)
    name = plan[1]
    blocks, pos, absent, truncated, bool_bytes = _walk(region, pos, plan, strict, name)
    excess = b""
    if pos < len(region):
        if strict:
            raise M.excess_bytes(6 + pos, name, len(region) - pos)
        excess = region[pos:]
    return Message(
        name, blocks, flags, sequence, acks, extra, plan[2], plan[3],
        excess, tuple(absent), truncated, None, tuple(bool_bytes),
    )  # fmt: skip


def decode_many(
    datagrams: Iterable[bytes], template: Template, strict: bool = False, max_size: int = 8192
) -> list[Message | DecodeError]:
    """Decode each packet; a bad one gives its :class:`DecodeError` in its place."""
    out: list[Message | DecodeError] = []
    for data in list(datagrams):
        try:
            out.append(decode(data, template, strict, max_size))
        except DecodeError as exc:
            out.append(exc)
    return out


# ---------------------------------------------------------------- encode


_NUMBER_LIMITS: dict[int, int] = {
    Frequency.HIGH: 0xFE,
    Frequency.MEDIUM: 0xFE,
    Frequency.LOW: 0xFFFF,
}


def _number_bytes(frequency: int, number: int, name: str = "message") -> bytes:
    if not (isinstance(frequency, int) and frequency in (1, 2, 4, 5)):
        raise M.encode_error(name, "frequency", f"{frequency!r} is not a Frequency")
    hi = _NUMBER_LIMITS.get(frequency, 0xFFFFFFFF)
    # a Fixed number is FF FF FF xx: any other would read back as another message
    lo = 0xFFFFFF00 if frequency == Frequency.FIXED else 0
    number = _int(number, lo, hi, "number", name)
    if frequency == Frequency.HIGH:
        return bytes((number,))
    if frequency == Frequency.MEDIUM:
        return bytes((0xFF, number))
    if frequency == Frequency.LOW:
        return bytes((0xFF, 0xFF, number >> 8, number & 0xFF))
    return number.to_bytes(4, "big")


def _int(value: Any, lo: int, hi: int, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = value.__index__()
        except (AttributeError, TypeError):
            raise M.encode_error(name, where, f"expected an int, got {value!r}") from None
    if not lo <= value <= hi:
        raise M.encode_error(name, where, f"{value} out of range {lo}..{hi}")
    return int(value)


def _float(value: Any, where: str, name: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an int past the double range
            raise M.encode_error(name, where, f"{value!r} does not fit a float") from None
    raise M.encode_error(name, where, f"expected a number, got {value!r}")


def _floats(value: Any, count: int, where: str, name: str) -> list[float]:
    try:
        items = list(value)
    except TypeError:
        raise M.encode_error(name, where, f"expected {count} numbers, got {value!r}") from None
    if len(items) != count:
        raise M.encode_error(name, where, f"expected {count} numbers, got {len(items)}")
    return [_float(v, where, name) for v in items]


def _f32(values: list[float], where: str, name: str) -> bytes:
    try:
        if not any(map(math.isnan, values)):
            return struct.pack(f"<{len(values)}f", *values)
        return b"".join(_f32_bits(v) for v in values)
    except (OverflowError, struct.error):
        raise M.encode_error(name, where, f"{values!r} does not fit a float32") from None


def _quaternion(value: Any, where: str, name: str) -> bytes:
    try:
        items = list(value)
    except TypeError:
        raise M.encode_error(name, where, f"expected 3 or 4 numbers, got {value!r}") from None
    if len(items) == 3:
        return _f32([_float(v, where, name) for v in items], where, name)
    if len(items) != 4:
        raise M.encode_error(name, where, f"expected 3 or 4 numbers, got {len(items)}")
    x, y, z, w = (_float(v, where, name) for v in items)
    t = 1.0 - (x * x + y * y + z * z)
    if w == (math.sqrt(t) if t > 0 else 0.0):
        # the w that decoding rebuilds: a decoded value, sent back as it came
        return _f32([x, y, z], where, name)
    mag = math.sqrt(x * x + y * y + z * z + w * w)
    if not math.isfinite(mag):
        raise M.encode_error(name, where, f"{value!r} is not a finite quaternion")
    if mag <= 1e-7:
        x = y = z = 0.0
    else:
        x, y, z, w = x / mag, y / mag, z / mag, w / mag
        if w < 0:
            x, y, z = -x, -y, -z
    return _f32([x, y, z], where, name)


def _bytes(value: Any, where: str, name: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise M.encode_error(name, where, f"expected bytes, got {value!r}")


def _text(value: str, fixed: int, where: str, name: str) -> bytes:
    """A ``str`` as LL writes text: UTF-8 and a NUL, and nothing for ``""``
    (the viewer's ``addString``); in a Fixed field of ``fixed`` bytes, padded
    with NULs (a text that fills it has no NUL)."""
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise M.encode_error(name, where, f"text not encodable as UTF-8: {exc.reason}") from None
    if not fixed:
        return raw + b"\x00" if raw else b""
    if len(raw) > fixed:
        raise M.encode_error(name, where, f"{len(raw)} bytes of UTF-8 text, at most {fixed}")
    return raw + bytes(fixed - len(raw))


def _field_bytes(ftype: int, size: int, value: Any, where: str, name: str) -> bytes:
    if ftype == 1:
        return bytes((_int(value, 0, 0xFF, where, name),))
    if ftype in (2, 3, 4):
        bits = 8 * size
        return _int(value, 0, (1 << bits) - 1, where, name).to_bytes(size, "little")
    if ftype in (5, 6, 7, 8):
        bits = 8 * size
        v = _int(value, -(1 << (bits - 1)), (1 << (bits - 1)) - 1, where, name)
        return v.to_bytes(size, "little", signed=True)
    if ftype == 9:
        return _f32([_float(value, where, name)], where, name)
    if ftype == 10:
        return _D.pack(_float(value, where, name))
    if ftype == 11:
        return _f32(_floats(value, 3, where, name), where, name)
    if ftype == 12:
        return _V3D.pack(*_floats(value, 3, where, name))
    if ftype == 13:
        return _f32(_floats(value, 4, where, name), where, name)
    if ftype == 14:
        return _quaternion(value, where, name)
    if ftype == 15:
        if isinstance(value, uuid.UUID):
            return value.bytes
        if isinstance(value, (bytes, bytearray)) and len(value) == 16:
            return bytes(value)
        raise M.encode_error(name, where, f"expected a UUID, got {value!r}")
    if ftype == 16:
        return bytes((_int(value, 0, 0xFF, where, name) if not isinstance(value, bool) else value,))
    if ftype == 17:
        parts = value.split(".") if isinstance(value, str) else []
        if len(parts) != 4 or not all(
            p.isascii() and p.isdigit() and int(p) <= 0xFF for p in parts
        ):
            raise M.encode_error(name, where, f"expected an IPv4 address, got {value!r}")
        return bytes(int(p) for p in parts)
    if ftype == 18:
        return _int(value, 0, 0xFFFF, where, name).to_bytes(2, "big")
    if isinstance(value, str):  # text: UTF-8 and a NUL, as LL sends it
        raw = _text(value, size if ftype == 19 else 0, where, name)
    else:
        raw = _bytes(value, where, name)
    if ftype == 20:  # Variable: a little-endian length prefix of `size` bytes
        if len(raw) >= 1 << (8 * size):
            raise M.encode_error(name, where, f"{len(raw)} bytes do not fit a {size}-byte length")
        return len(raw).to_bytes(size, "little") + raw
    if len(raw) != size:  # Fixed
        raise M.encode_error(name, where, f"expected {size} bytes, got {len(raw)}")
    return raw


def _absent_tail(specs: Any, blocks: Any, absent: Any) -> int:
    """Where the trailing run of empty Variable blocks listed in ``absent`` starts
    (``len(specs)`` if the last block is written)."""
    tail = len(specs)
    for bname, kind, _count, _cls, _layout in reversed(specs):
        items = blocks.get(bname, ())
        if kind != _VARIABLE or bname not in absent or type(items) not in (list, tuple) or items:
            break
        tail -= 1
    return tail


def _bool_map(bool_bytes: Any, name: str) -> dict[tuple[Any, Any, Any], int]:
    """``Message.bool_bytes`` as ``{(block, index, field): byte}``; EncodeError if malformed."""
    out: dict[tuple[Any, Any, Any], int] = {}
    try:
        entries = list(bool_bytes)
        for block, index, field, byte in entries:
            out[block, index, field] = _int(byte, 1, 0xFF, "bool_bytes", name)
    except (TypeError, ValueError):
        raise M.encode_error(
            name, "bool_bytes", f"expected (block, index, field, byte) tuples, got {bool_bytes!r}"
        ) from None
    return out


_MISSING: Any = object()  # a block the message does not have


def _check_blocks(name: str, blocks: Any, plan: Any, template: Template) -> None:
    """EncodeError if ``blocks`` (a message's) has a key that is not a block of ``plan``."""
    own = [block[0] for block in plan[4]]
    unknown = [key for key in list(blocks) if key not in own]
    if unknown:
        unknown.sort(key=lambda k: (type(k) is not str, str(k)))
        raise M.unknown_blocks(name, unknown, own, template)


def _body(message: Message, plan: Any, template: Template) -> bytes:
    """The body of ``message`` by ``plan``: its number, extra bytes, blocks and
    excess. A block ``plan`` does not have is an EncodeError, once the others
    are written (the compiled twin's order)."""
    name = plan[1]
    parts = [_number_bytes(plan[2], plan[3]), _bytes(message.extra, "extra", name)]
    bool_map = _bool_map(message.bool_bytes, name) if message.bool_bytes else None
    blocks = message.blocks
    absent = message.absent
    # an empty absent Variable block is left out only at the end (no count byte):
    # one a written block follows gets its count of 0, or the packet is misread
    tail = _absent_tail(plan[4], blocks, absent) if absent else len(plan[4])
    missed = False  # a block of the plan is not in the message
    for index, (bname, kind, count, _cls, layout) in enumerate(plan[4]):
        items = blocks.get(bname, _MISSING)
        if items is _MISSING:
            items = ()
            missed = True
        if not isinstance(items, (list, tuple)):
            items = list(items)
        if kind == _VARIABLE:
            if index >= tail:
                continue
            if len(items) > 0xFF:
                raise M.encode_error(name, bname, f"{len(items)} blocks, at most 255")
            parts.append(bytes((len(items),)))
        elif len(items) != count:
            raise M.encode_error(name, bname, f"expected {count} block(s), got {len(items)}")
        nfields = len(layout) // 3
        for k, item in enumerate(items):
            if not isinstance(item, tuple):
                raise M.encode_error(name, bname, f"expected a Block, got {type(item).__name__}")
            if len(item) != nfields:
                raise M.encode_error(name, bname, f"expected {nfields} fields, got {len(item)}")
            for f in range(nfields):
                ftype = layout[3 * f]
                size = layout[3 * f + 1] | layout[3 * f + 2] << 8
                value = tuple.__getitem__(item, f)
                if ftype == 16 and value is True and bool_map:
                    byte = bool_map.get((bname, k, _cls._fields[f]))
                    if byte is not None:  # a decoded byte other than 1, written back
                        parts.append(bytes((byte,)))
                        continue
                where = f"{bname}.{_cls._fields[f]}"
                parts.append(_field_bytes(ftype, size, value, where, name))
    # a block the plan does not have: the message has more blocks than the
    # plan, or as many and misses one of the plan's
    if missed or len(blocks) != len(plan[4]):
        _check_blocks(name, blocks, plan, template)
    parts.append(_bytes(message.excess, "excess", name))
    return b"".join(parts)


def encode(message: Message, template: Template, zero_coding: str = "flag") -> bytes:
    """The packet bytes of ``message`` (see ``gamecodec.lludp.encode``)."""
    if not isinstance(message, Message):
        raise TypeError(f"expected a Message, got {type(message).__name__}")
    if zero_coding not in ("flag", "smaller"):
        raise ValueError(f"zero_coding must be 'flag' or 'smaller', not {zero_coding!r}")
    name = message.name
    if message.body is not None:
        body = (
            _number_bytes(message.frequency, message.number, name)
            + _bytes(message.extra, "extra", name)
            + _bytes(message.body, "body", name)
        )
    else:
        try:
            plan = template.plan_by_name(name)
        except KeyError:
            raise M.encode_error(name, "name", "not in the template") from None
        body = _body(message, plan, template)
    flags = _int(message.flags, 0, 0xFF, "flags", name)
    sequence = _int(message.sequence, 0, 0xFFFFFFFF, "sequence", name)
    extra_len = len(message.extra)
    if extra_len > 0xFF:
        raise M.encode_error(name, "extra", f"{extra_len} bytes, at most 255")
    acks = message.acks
    # the message's own acks are written back as they are (decode takes up to 255,
    # on any message, as LL does); 250 and never on PacketAck is the rule of
    # encode_packet and forward, which add acks
    if len(acks) > 0xFF:
        raise M.encode_error(name, "acks", f"{len(acks)} acks, at most 255")
    if flags & ZEROCODED:
        coded = zero_encode(body)
        if zero_coding == "flag" or len(coded) < len(body):
            body = coded
        else:
            flags &= ~ZEROCODED
    if acks:
        flags |= ACK
    out = bytearray((flags,))
    out += sequence.to_bytes(4, "big")
    out.append(extra_len)
    out += body
    if flags & ACK:
        for ack in reversed(acks):
            out += _int(ack, 0, 0xFFFFFFFF, "acks", name).to_bytes(4, "big")
        out.append(len(acks))
    return bytes(out)


def encode_packet(  # noqa: PLR0917 - the circuit's one call per sent packet
    message: Message,
    template: Template,
    zero_coding: str,
    flags: int,
    sequence: int,
    acks: list[int] | tuple[int, ...],
    count: int,
    limit: int,
) -> bytes:
    """``message`` as a circuit sends it: :func:`encode`'s packet with another header.

    The body, the ZEROCODED flag and every error are :func:`encode`'s (the
    message's own ``flags``, ``sequence`` and ``acks`` are checked as it checks
    them, but only ZEROCODED is taken from them). The header gets ``flags``
    (their ZEROCODED and ACK bits replaced) and ``sequence``, and the first
    ``n`` ids of ``acks`` are appended in that order (so a decoder's ``acks``
    lists them last first), ``n`` = the most of ``count`` (0..250) and
    ``len(acks)`` that keep the datagram within ``limit`` bytes, 0 for
    PacketAck; ACK is set when ``n`` > 0. A circuit reads ``n`` back from the
    last byte when ACK is set.
    """
    data = encode(message, template, zero_coding)
    name = message.name
    head = _int(flags, 0, 0xFF, "flags", name) & ~(ZEROCODED | ACK) | data[0] & ZEROCODED
    seq = _int(sequence, 0, 0xFFFFFFFF, "sequence", name)
    count = _int(count, 0, MAX_ACKS, "acks", name)
    limit = _int(limit, 0, 0xFFFFFFFF, "limit", name)
    end = len(data) - 1 - 4 * data[-1] if data[0] & ACK else len(data)
    n = 0 if name == "PacketAck" else max(0, min(count, len(acks), (limit - end - 1) >> 2))
    out = bytearray((head | ACK if n else head,))
    out += seq.to_bytes(4, "big")
    out += data[5:end]
    if n:
        for k in range(n):
            out += _int(acks[k], 0, 0xFFFFFFFF, "acks", name).to_bytes(4, "big")
        out.append(n)
    return bytes(out)


def encode_into(
    message: Message, buf: bytearray, offset: int, template: Template, zero_coding: str = "flag"
) -> int:
    """Write ``message`` into ``buf`` at ``offset``; returns the bytes written."""
    data = encode(message, template, zero_coding)
    if not isinstance(buf, bytearray):
        raise TypeError(f"buf must be a bytearray, not {type(buf).__name__}")
    if offset < 0 or offset > len(buf):
        raise ValueError(f"offset {offset} outside the buffer of {len(buf)} bytes")
    buf[offset : offset + len(data)] = data
    return len(data)


PACKET_ACK_NUMBER = b"\xff\xff\xff\xfb"
"""PacketAck's message number (Fixed 0xFFFFFFFB) as it starts the body."""


def forward(
    data: bytes,
    flags: int | None = None,
    sequence: int | None = None,
    acks: tuple[int, ...] | list[int] | None = None,
) -> bytes:
    """Rewrite a packet's header and appended acks, copying its body untouched."""
    data = _as_bytes(data)
    n = len(data)
    if n < 7:
        raise M.short_packet(n)
    old_flags = data[0]
    body_end = n
    old_acks: tuple[int, ...] = ()
    if old_flags & ACK:
        old_acks, body_end = _split_acks(data, n)
    new_flags = old_flags if flags is None else _int(flags, 0, 0xFF, "flags", "forward")
    new_acks = old_acks if acks is None else tuple(acks)
    if len(new_acks) > MAX_ACKS:
        raise M.encode_error("forward", "acks", f"{len(new_acks)} acks, at most {MAX_ACKS}")
    if acks is not None and new_acks and data[6:10] == PACKET_ACK_NUMBER:
        raise M.encode_error("forward", "acks", "acks are never appended to PacketAck")
    if acks is not None:
        new_flags = new_flags | ACK if new_acks else new_flags & ~ACK
    out = bytearray((new_flags,))
    if sequence is None:
        out += data[1:5]
    else:
        out += _int(sequence, 0, 0xFFFFFFFF, "sequence", "forward").to_bytes(4, "big")
    out += data[5:body_end]
    if new_flags & ACK:
        for ack in reversed(new_acks):
            out += _int(ack, 0, 0xFFFFFFFF, "acks", "forward").to_bytes(4, "big")
        out.append(len(new_acks))
    return bytes(out)
