"""Avara datagram codec, pure-Python twin of ``_codec_c.pyx``.

Both twins give the same results and raise the same errors, with the same
messages and offsets (``tests/avara/test_parity.py`` holds them together).
"""

from __future__ import annotations

import binascii
from collections.abc import Iterable, Sequence
from struct import Struct
from typing import NamedTuple

from gamecodec.avara import _errors as msg
from gamecodec.avara._models import (
    DEFAULT_VERSION,
    MAX_DATA_LEN,
    MAX_DATAGRAM,
    PUNCH_SIZE,
    Batch,
    Command,
    Datagram,
    HolePunch,
    Layout,
    Status,
)
from gamecodec.avara.punch import decode_punch
from gamecodec.errors import DecodeError

__all__ = [
    "canonical_flags",
    "crc16_kermit",
    "datagram_crc",
    "decode",
    "decode_array",
    "decode_many",
    "encode",
    "encode_into",
]

_U16 = Struct("<H")
_I16 = Struct("<h")
_I32 = Struct("<i")
_CMD5 = Struct("<HBBb")
_CMD4 = Struct("<HBb")
_HEAD5 = Struct("<HBBB")
_HEAD4 = Struct("<HBB")

# CRC-16/KERMIT is CRC-16/XMODEM (binascii.crc_hqx) on bit-reversed bytes,
# bit-reversed: the reflected and the plain algorithm mirror each other.
_REVERSE = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))
_new = tuple.__new__  # NamedTuples built without their Python-level __new__ (faster)
# Cmd.field codes: the order of msg.FIELDS, then msg.BAD_DATA_LEN
(
    _FIELD_HEADER,
    _FIELD_DISTRIBUTION,
    _FIELD_P3,
    _FIELD_P2,
    _FIELD_DATA_LEN,
    _FIELD_P1,
    _FIELD_SENDER,
    _FIELD_DATA,
) = range(len(msg.FIELDS))


def _is_u16(value: object) -> bool:
    return isinstance(value, int) and 0 <= value <= 0xFFFF


# -- the wire primitives (the compiled twin's are in _codec_c.pxd) ---------------


def crc16(buf: bytes | bytearray, start: int, end: int, crc: int) -> int:
    """CRC-16/KERMIT of ``buf[start:end]``, continuing from ``crc``."""
    init = _REVERSE[crc & 0xFF] << 8 | _REVERSE[crc >> 8]
    out = binascii.crc_hqx(buf[start:end].translate(_REVERSE), init)
    return _REVERSE[out & 0xFF] << 8 | _REVERSE[out >> 8]


class Cmd(NamedTuple):
    """One command as read by :func:`parse_command`: ``end`` is the offset
    after it, or -1 when it does not parse (then ``field`` says why and
    ``data_pos`` is where that field starts; ``n`` is the bad dataLen for
    ``BAD_DATA_LEN``, the missing data's length for the data field).
    ``distribution`` and ``sender`` are 0 where the flags lack them."""

    end: int
    serial: int
    send_count: int
    flags: int
    command: int
    distribution: int
    p3: int
    p2: int
    p1: int
    sender: int
    data_pos: int
    n: int
    field: int


def _unparsed(field: int, flags: int, at: int, n: int = 0) -> Cmd:
    return Cmd(-1, 0, 0, flags, 0, 0, 0, 0, 0, 0, at, n, field)


def parse_command(buf: bytes, size: int, pos: int, current: bool) -> Cmd:
    """The command at ``buf[pos:size]``, read as the game's reader does (field
    order and precedence); ``end`` -1 (and ``field``) if it does not."""
    head = 5 if current else 4
    if size - pos < head:
        return _unparsed(_FIELD_HEADER, 0, pos)
    if current:
        serial, send_count, flags, command = _CMD5.unpack_from(buf, pos)
    else:
        serial, flags, command = _CMD4.unpack_from(buf, pos)
        send_count = 0
    pos += head
    distribution = p3 = p2 = p1 = sender = n = 0
    if flags & 0x40:
        if size - pos < 2:
            return _unparsed(_FIELD_DISTRIBUTION, flags, pos)
        distribution = _I16.unpack_from(buf, pos)[0]
        pos += 2
    if flags & 0x24:
        width = 4 if flags & 0x04 else 2
        if size - pos < width:
            return _unparsed(_FIELD_P3, flags, pos)
        p3 = (_I32 if width == 4 else _U16).unpack_from(buf, pos)[0]
        pos += width
    if flags & 0x02:
        if size - pos < 2:
            return _unparsed(_FIELD_P2, flags, pos)
        p2 = _I16.unpack_from(buf, pos)[0]
        pos += 2
    if flags & 0x18:
        width = 2 if flags & 0x08 else 1
        if size - pos < width:
            return _unparsed(_FIELD_DATA_LEN, flags, pos)
        n = _I16.unpack_from(buf, pos)[0] if width == 2 else buf[pos]
        if n < 0 or n > MAX_DATA_LEN:
            return _unparsed(msg.BAD_DATA_LEN, flags, pos, n)
        pos += width
    if flags & 0x01:
        if size - pos < 1:
            return _unparsed(_FIELD_P1, flags, pos)
        p1 = buf[pos] - 256 if buf[pos] > 127 else buf[pos]
        pos += 1
    if flags & 0x80:
        if size - pos < 1:
            return _unparsed(_FIELD_SENDER, flags, pos)
        sender = buf[pos] - 256 if buf[pos] > 127 else buf[pos]
        pos += 1
    if size - pos < n:
        return _unparsed(_FIELD_DATA, flags, pos, n)
    return Cmd(
        pos + n, serial, send_count, flags, command, distribution, p3, p2, p1, sender, pos, n, -1
    )


def command_object(c: Cmd, buf: bytes) -> Command:
    """The :class:`Command` for ``c``, its data from ``buf``."""
    flags = c.flags
    return _new(
        Command,
        (
            c.serial,
            c.send_count,
            flags,
            c.command,
            c.distribution if flags & 0x40 else None,
            c.p3,
            c.p2,
            c.p1,
            c.sender if flags & 0x80 else None,
            buf[c.data_pos : c.end],
        ),
    )


def writer_flags(  # noqa: PLR0917
    distribution: bool, p3: int, p2: int, n: int, p1: int, sender: bool
) -> int:
    """The flag byte the game's writer computes for these values."""
    flags = 0x40 if distribution else 0
    if p3 < 0 or p3 > 0xFFFF:
        flags |= 0x04
    elif p3:
        flags |= 0x20
    if p2:
        flags |= 0x02
    if n > 255:
        flags |= 0x08
    elif n:
        flags |= 0x10
    if p1:
        flags |= 0x01
    if sender:
        flags |= 0x80
    return flags


def write_acks(out: bytearray, ack: int, bitmap: int) -> int:
    """Write the ack block at ``out[2:]`` (the bitmap only after an odd
    ack); return the offset after it."""
    if ack & 1:
        out[2:8] = _U16.pack(ack & 0xFFFF) + (bitmap & 0xFFFFFFFF).to_bytes(4, "little")
        return 8
    out[2:4] = _U16.pack(ack & 0xFFFF)
    return 4


def write_command(  # noqa: PLR0917
    out: bytearray,
    pos: int,
    current: bool,
    serial: int,
    send_count: int,
    flags: int,
    command: int,
    distribution: int,
    p3: int,
    p2: int,
    p1: int,
    sender: int,
    data: bytes,
) -> int:
    """Write a command at ``out[pos:]`` as its flag byte says, each
    value as its low bytes; return the offset after it. ``out`` grows when
    ``pos`` is its end."""
    if current:
        head = _HEAD5.pack(serial & 0xFFFF, send_count & 0xFF, flags, command & 0xFF)
    else:
        head = _HEAD4.pack(serial & 0xFFFF, flags, command & 0xFF)
    if flags & 0x40:
        head += _U16.pack(distribution & 0xFFFF)
    if flags & 0x04:
        head += (p3 & 0xFFFFFFFF).to_bytes(4, "little")
    elif flags & 0x20:
        head += _U16.pack(p3 & 0xFFFF)
    if flags & 0x02:
        head += _U16.pack(p2 & 0xFFFF)
    n = len(data)
    if flags & 0x08:
        head += _U16.pack(n)
    elif flags & 0x10:
        head += bytes((n & 0xFF,))
    if flags & 0x01:
        head += bytes((p1 & 0xFF,))
    if flags & 0x80:
        head += bytes((sender & 0xFF,))
    end = pos + len(head) + n
    out[pos:end] = head + data
    return end


# -- public functions -------------------------------------------------------------


def crc16_kermit(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` (reflected 0x1021, no final XOR), continuing
    from ``crc``. ``crc16_kermit(b"123456789") == 0x2189``."""
    if not _is_u16(crc):
        raise ValueError(f"crc {crc} outside 0..65535")
    buf = memoryview(data).tobytes()
    return crc16(buf, 0, len(buf), crc)


def _datagram_crc(buf: bytes, version: int) -> int:
    return crc16(buf, 2, len(buf), crc16(_U16.pack(version), 0, 2, 0))


def datagram_crc(data: bytes | bytearray | memoryview, version: int = DEFAULT_VERSION) -> int:
    """The checksum a datagram should carry in bytes 0-1: CRC-16/KERMIT over
    the network version (u16 LE) followed by ``data[2:]``."""
    if not _is_u16(version):
        raise msg.bad_version(version)
    return _datagram_crc(memoryview(data).tobytes(), version)


def _payload(data: bytes | bytearray | memoryview) -> bytes:
    """``data`` as bytes; longer than ``MAX_DATAGRAM`` raises before any copy."""
    if type(data) is bytes:
        if len(data) > MAX_DATAGRAM:
            raise msg.oversize(len(data))
        return data
    view = memoryview(data)
    if view.nbytes > MAX_DATAGRAM:
        raise msg.oversize(view.nbytes)
    return view.tobytes()


def _is_current(layout: Layout | int) -> bool:
    if not isinstance(layout, int) or layout not in (0, 1):
        raise msg.bad_layout(layout)
    return layout == 1


def decode(
    data: bytes | bytearray | memoryview,
    *,
    version: int | None = DEFAULT_VERSION,
    layout: Layout | int = Layout.CURRENT,
    strict: bool = False,
) -> Datagram | HolePunch:
    """Decode one UDP payload.

    Exactly 7 bytes is a :class:`HolePunch`. Shorter than 4 bytes, or a
    checksum that does not match ``version``, gives ``crc_ok=False`` and no
    ack or commands (``strict=True`` raises instead); ``version=None`` skips
    the check (``crc_ok=None``). A command that runs past the end or has a bad
    dataLen raises :class:`~gamecodec.DecodeError`, with what was decoded
    before it in ``.partial``. ``strict=True`` also refuses flag bytes the
    game's writer never produces. Longer than ``MAX_DATAGRAM`` (the game's
    receive buffer) raises :class:`~gamecodec.avara.OversizeDatagramError`.
    """
    buf = _payload(data)
    if version is not None and not _is_u16(version):
        raise msg.bad_version(version)
    return _decode(buf, version, _is_current(layout), strict)


def _decode(buf: bytes, version: int | None, current: bool, strict: bool) -> Datagram | HolePunch:
    """:func:`decode` of ``buf`` with checked arguments."""
    size = len(buf)
    if size == PUNCH_SIZE:
        return decode_punch(buf)
    if size < 4:
        if strict:
            raise msg.short_datagram(size)
        return Datagram(False, None, None, ())
    crc_ok: bool | None = None
    if version is not None:
        crc_ok = _datagram_crc(buf, version) == _U16.unpack_from(buf)[0]
        if not crc_ok:
            if strict:
                raise msg.crc_mismatch(version)
            return Datagram(False, None, None, ())
    ack = _U16.unpack_from(buf, 2)[0]
    bitmap = None
    pos = 4
    if ack & 1:
        if size < 8:
            raise msg.truncated("ack bitmap", 4, size - 4, 4, Datagram(crc_ok, ack, None, ()))
        bitmap = _I32.unpack_from(buf, 4)[0]
        pos = 8
    commands: list[Command] = []
    head = 5 if current else 4
    while pos < size:
        c = parse_command(buf, size, pos, current)
        if c.end < 0:
            raise msg.unparsed(
                c.field,
                c.flags,
                c.n,
                c.data_pos,
                size,
                head,
                msg.so_far(crc_ok, ack, bitmap, commands),
            )
        if strict:
            why = msg.non_canonical_reason(c.flags, c.p1, c.p2, c.p3, c.n)
            if why is not None:
                raise msg.non_canonical(
                    c.flags, why, pos + head - 2, msg.so_far(crc_ok, ack, bitmap, commands)
                )
        commands.append(command_object(c, buf))
        pos = c.end
    return Datagram(crc_ok, ack, bitmap, tuple(commands))


def _checked(index: int, name: str, value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or not low <= value <= high:
        raise msg.out_of_range(index, name, value, low, high)
    return value


def canonical_flags(command: Command) -> int:
    """The flag byte the game's writer computes for these values."""
    return writer_flags(
        command.distribution is not None,
        command.p3,
        command.p2,
        len(command.data),
        command.p1,
        command.sender is not None,
    )


def _kept_flags(index: int, cmd: Command) -> int:
    """Check that a command's own flag byte (any 10-tuple's third item) can
    carry its values."""
    _, _, flags_obj, _, dist, p3, p2, p1, sender, data = cmd
    flags = _checked(index, "flags", flags_obj, 0, 255)
    if bool(flags & 0x40) != (dist is not None):
        raise msg.flags_disagree(index, flags, f"distribution {dist}")
    if not flags & 0x04 and (p3 < 0 or p3 > 0xFFFF if flags & 0x20 else p3 != 0):
        raise msg.flags_disagree(index, flags, f"p3 {p3}")
    if not flags & 0x02 and p2 != 0:
        raise msg.flags_disagree(index, flags, f"p2 {p2}")
    n = len(data)
    if not flags & 0x08 and (n > 255 if flags & 0x10 else n != 0):
        raise msg.flags_disagree(index, flags, f"{n} data bytes")
    if not flags & 0x01 and p1 != 0:
        raise msg.flags_disagree(index, flags, f"p1 {p1}")
    if bool(flags & 0x80) != (sender is not None):
        raise msg.flags_disagree(index, flags, f"sender {sender}")
    return flags


def _parts(
    datagram: Datagram | int, commands: Iterable[Command], ack_bitmap: int | None
) -> tuple[object, object, Sequence[Command]]:
    if isinstance(datagram, Datagram):
        return datagram.ack, datagram.ack_bitmap, datagram.commands
    return datagram, ack_bitmap, tuple(commands)


def encode(
    datagram: Datagram | int,
    commands: Iterable[Command] = (),
    ack_bitmap: int | None = None,
    *,
    version: int = DEFAULT_VERSION,
    layout: Layout | int = Layout.CURRENT,
    keep_flags: bool = False,
) -> bytes:
    """Encode a :class:`Datagram` (or an ack, commands and bitmap) to bytes.

    Flags are computed with the game's writer rules; ``keep_flags=True``
    writes each command's own flag byte instead (so a decoded non-canonical
    datagram re-encodes byte-exact), refusing values those flags cannot
    carry. The checksum is computed for ``version``.
    """
    ack, bitmap, cmds = _parts(datagram, commands, ack_bitmap)
    if not isinstance(version, int) or not 0 <= version <= 0xFFFF:
        raise msg.bad_encode_version(version)
    current = _is_current(layout)
    if not isinstance(ack, int) or not 0 <= ack <= 0xFFFF:
        raise msg.bad_ack(ack)
    if ack & 1:
        if bitmap is None:
            raise msg.missing_bitmap(ack)
        if not isinstance(bitmap, int) or not -(1 << 31) <= bitmap <= 0xFFFFFFFF:
            raise msg.bad_bitmap(bitmap)
    elif bitmap is not None:
        raise msg.unwanted_bitmap(ack)
    out = bytearray(_U16.pack(version))
    write_acks(out, ack, bitmap or 0)
    for index, cmd in enumerate(cmds):
        if not isinstance(cmd, tuple) or len(cmd) != 10:
            raise msg.not_a_command(index)
        serial, send_count, _, command, dist, p3, p2, p1, sender, data = cmd
        _checked(index, "serial", serial, 0, 0xFFFF)
        _checked(index, "send_count", send_count, 0, 0xFF if current else 0)
        _checked(index, "command", command, -128, 127)
        if dist is not None:
            _checked(index, "distribution", dist, -0x8000, 0x7FFF)
        _checked(index, "p3", p3, -(1 << 31), (1 << 31) - 1)
        _checked(index, "p2", p2, -0x8000, 0x7FFF)
        _checked(index, "p1", p1, -128, 127)
        if sender is not None:
            _checked(index, "sender", sender, -128, 127)
        if not isinstance(data, bytes):
            raise msg.data_not_bytes(index, data)
        n = len(data)
        if n > MAX_DATA_LEN:
            raise msg.data_too_long(index, n)
        if keep_flags:
            flags = _kept_flags(index, cmd)
        else:
            flags = writer_flags(dist is not None, p3, p2, n, p1, sender is not None)
        write_command(
            out,
            len(out),
            current,
            serial,
            send_count,
            flags,
            command,
            dist or 0,
            p3,
            p2,
            p1,
            sender or 0,
            data,
        )
    if len(out) > MAX_DATAGRAM:
        raise msg.too_big(len(out))
    if len(out) == PUNCH_SIZE:
        raise msg.punch_sized()
    out[0:2] = _U16.pack(crc16(out, 0, len(out), 0))
    return bytes(out)


def encode_into(
    datagram: Datagram | int,
    buf: bytearray,
    offset: int = 0,
    commands: Iterable[Command] = (),
    ack_bitmap: int | None = None,
    *,
    version: int = DEFAULT_VERSION,
    layout: Layout | int = Layout.CURRENT,
    keep_flags: bool = False,
) -> int:
    """Encode into ``buf`` at ``offset`` (growing it as needed); return the
    number of bytes written."""
    if not isinstance(buf, bytearray):
        raise TypeError("buf must be a bytearray")
    if not 0 <= offset <= len(buf):
        raise ValueError(f"offset {offset} outside 0..{len(buf)}")
    out = encode(
        datagram, commands, ack_bitmap, version=version, layout=layout, keep_flags=keep_flags
    )
    buf[offset : offset + len(out)] = out
    return len(out)


def decode_many(
    datagrams: Iterable[bytes | bytearray | memoryview],
    *,
    version: int | None = DEFAULT_VERSION,
    layout: Layout | int = Layout.CURRENT,
    strict: bool = False,
) -> list[Datagram | HolePunch | DecodeError]:
    """Decode each datagram as :func:`decode` does, independently.

    A datagram that does not decode gives its :class:`~gamecodec.DecodeError`
    in its place in the list (the others are unaffected).
    """
    if version is not None and not _is_u16(version):
        raise msg.bad_version(version)
    current = _is_current(layout)
    out: list[Datagram | HolePunch | DecodeError] = []
    append = out.append
    for item in datagrams:
        try:
            append(_decode(_payload(item), version, current, strict))
        except DecodeError as exc:
            append(exc)
    return out


def decode_array(
    datagrams: Iterable[bytes | bytearray | memoryview],
    *,
    version: int | None = DEFAULT_VERSION,
    layout: Layout | int = Layout.CURRENT,
) -> Batch:
    """Decode many datagrams into one numpy structured array of commands
    (``COMMAND_DTYPE``) and one row per datagram (``DATAGRAM_DTYPE``).

    A bad datagram does not stop the batch: its row says what went wrong and
    where, and the commands decoded before the error are kept.
    """
    import numpy as np

    from gamecodec.avara._arrays import COMMAND_DTYPE, DATAGRAM_DTYPE

    if version is not None and not _is_u16(version):
        raise msg.bad_version(version)
    current = _is_current(layout)
    rows: list[tuple[int, ...]] = []
    outcomes: list[tuple[int, ...]] = []
    for index, item in enumerate(datagrams):
        size = len(item) if type(item) is bytes else memoryview(item).nbytes
        if size > MAX_DATAGRAM:
            outcomes.append((Status.OVERSIZE, 0, 0, len(rows), 0, MAX_DATAGRAM))
            continue
        buf = item if type(item) is bytes else memoryview(item).tobytes()
        outcomes.append(_decode_one(buf, index, version, current, rows))
    return Batch(np.array(rows, dtype=COMMAND_DTYPE), np.array(outcomes, dtype=DATAGRAM_DTYPE))


def _decode_one(
    buf: bytes, index: int, version: int | None, current: bool, rows: list[tuple[int, ...]]
) -> tuple[int, ...]:
    """Append the rows of ``buf``'s commands to ``rows``; return its outcome row."""
    size = len(buf)
    first = len(rows)
    if size == PUNCH_SIZE:
        return (Status.PUNCH, 0, 0, first, 0, 0)
    if size < 4:
        return (Status.SHORT_DATAGRAM, 0, 0, first, 0, 0)
    if version is not None and _datagram_crc(buf, version) != _U16.unpack_from(buf)[0]:
        return (Status.CRC_MISMATCH, 0, 0, first, 0, 0)
    ack = _U16.unpack_from(buf, 2)[0]
    bitmap = 0
    pos = 4
    if ack & 1:
        if size < 8:
            return (Status.TRUNCATED, ack, 0, first, 0, 4)
        bitmap = _I32.unpack_from(buf, 4)[0]
        pos = 8
    status = Status.OK
    error_offset = 0
    while pos < size:
        c = parse_command(buf, size, pos, current)
        if c.end < 0:
            status = Status.BAD_DATA_LEN if c.field == msg.BAD_DATA_LEN else Status.TRUNCATED
            error_offset = c.data_pos
            break
        row = (
            index,
            c.serial,
            c.send_count,
            c.flags,
            c.command,
            c.distribution,
            c.p1,
            c.p2,
            c.p3,
            c.sender,
            c.data_pos,
            c.n,
            bool(c.flags & 0x40),
            bool(c.flags & 0x80),
        )
        rows.append(row)
        pos = c.end
    return (status, ack, bitmap, first, len(rows) - first, error_offset)
