"""Avara datagram codec, pure-Python twin of ``_codec_c.pyx`` (spec §2-§3).

Both twins give the same results and raise the same errors, with the same
messages and offsets (``tests/avara/test_parity.py`` holds them together).
"""

from __future__ import annotations

import binascii
from collections.abc import Iterable, Sequence
from struct import Struct

import numpy as np

from gamecodec.avara import _messages as msg
from gamecodec.avara._models import (
    COMMAND_DTYPE,
    DATAGRAM_DTYPE,
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
from gamecodec.errors import BadDataLengthError, DecodeError

__all__ = [
    "canonical_flags",
    "crc16_kermit",
    "datagram_crc",
    "decode_datagram",
    "decode_many",
    "encode_datagram",
    "encode_into",
]

_U16 = Struct("<H")
_I16 = Struct("<h")
_I32 = Struct("<i")
_CMD5 = Struct("<HBBb")
_CMD4 = Struct("<HBb")

# CRC-16/KERMIT is CRC-16/XMODEM (binascii.crc_hqx) on bit-reversed bytes,
# bit-reversed: the reflected and the plain algorithm mirror each other.
_REVERSE = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def _is_u16(value: object) -> bool:
    return isinstance(value, int) and 0 <= value <= 0xFFFF


def crc16_kermit(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` (reflected 0x1021, no final XOR), continuing
    from ``crc``. ``crc16_kermit(b"123456789") == 0x2189``."""
    if not _is_u16(crc):
        raise ValueError(f"crc {crc} outside 0..65535")
    mirrored = _REVERSE[crc & 0xFF] << 8 | _REVERSE[crc >> 8]
    out = binascii.crc_hqx(memoryview(data).tobytes().translate(_REVERSE), mirrored)
    return _REVERSE[out & 0xFF] << 8 | _REVERSE[out >> 8]


def datagram_crc(data: bytes | bytearray | memoryview, version: int = DEFAULT_VERSION) -> int:
    """The checksum a datagram should carry in bytes 0-1: CRC-16/KERMIT over
    the network version (u16 LE) followed by ``data[2:]``."""
    if not _is_u16(version):
        raise msg.bad_version(version)
    return crc16_kermit(memoryview(data).tobytes()[2:], crc16_kermit(_U16.pack(version)))


def _is_current(layout: Layout | int) -> bool:
    if not isinstance(layout, int) or layout not in (0, 1):
        raise msg.bad_layout(layout)
    return layout == 1


def _signed8(byte: int) -> int:
    return byte - 256 if byte > 127 else byte


def decode_datagram(
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
    game's writer never produces.
    """
    buf = data if type(data) is bytes else memoryview(data).tobytes()
    size = len(buf)
    if version is not None and not _is_u16(version):
        raise msg.bad_version(version)
    current = _is_current(layout)
    if size == PUNCH_SIZE:
        return decode_punch(buf)
    if size < 4:
        if strict:
            raise msg.short_datagram(size)
        return Datagram(False, None, None, ())
    crc_ok: bool | None = None
    if version is not None:
        crc_ok = datagram_crc(buf, version) == _U16.unpack_from(buf)[0]
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
        start = pos
        if size - pos < head:
            raise msg.truncated(
                "command header", head, size - pos, pos, msg.so_far(crc_ok, ack, bitmap, commands)
            )
        if current:
            serial, send_count, flags, command = _CMD5.unpack_from(buf, pos)
        else:
            serial, flags, command = _CMD4.unpack_from(buf, pos)
            send_count = 0
        pos += head
        distribution = sender = None
        p1 = p2 = p3 = n = 0
        # Field order and precedence of the game's reader (spec §3.1).
        if flags & 0x40:
            if size - pos < 2:
                raise msg.truncated(
                    "distribution", 2, size - pos, pos, msg.so_far(crc_ok, ack, bitmap, commands)
                )
            distribution = _I16.unpack_from(buf, pos)[0]
            pos += 2
        if flags & 0x24:
            width = 4 if flags & 0x04 else 2
            if size - pos < width:
                raise msg.truncated(
                    "p3", width, size - pos, pos, msg.so_far(crc_ok, ack, bitmap, commands)
                )
            p3 = (_I32 if width == 4 else _U16).unpack_from(buf, pos)[0]
            pos += width
        if flags & 0x02:
            if size - pos < 2:
                raise msg.truncated(
                    "p2", 2, size - pos, pos, msg.so_far(crc_ok, ack, bitmap, commands)
                )
            p2 = _I16.unpack_from(buf, pos)[0]
            pos += 2
        if flags & 0x18:
            width = 2 if flags & 0x08 else 1
            if size - pos < width:
                raise msg.truncated(
                    "dataLen", width, size - pos, pos, msg.so_far(crc_ok, ack, bitmap, commands)
                )
            n = _I16.unpack_from(buf, pos)[0] if width == 2 else buf[pos]
            if n < 0 or n > MAX_DATA_LEN:
                raise msg.bad_data_len(n, pos, msg.so_far(crc_ok, ack, bitmap, commands))
            pos += width
        if flags & 0x01:
            if size - pos < 1:
                raise msg.truncated("p1", 1, 0, pos, msg.so_far(crc_ok, ack, bitmap, commands))
            p1 = _signed8(buf[pos])
            pos += 1
        if flags & 0x80:
            if size - pos < 1:
                raise msg.truncated("sender", 1, 0, pos, msg.so_far(crc_ok, ack, bitmap, commands))
            sender = _signed8(buf[pos])
            pos += 1
        if size - pos < n:
            raise msg.truncated(
                "data", n, size - pos, pos, msg.so_far(crc_ok, ack, bitmap, commands)
            )
        if strict:
            why = msg.non_canonical_reason(flags, p1, p2, p3, n)
            if why is not None:
                raise msg.non_canonical(
                    flags, why, start + head - 2, msg.so_far(crc_ok, ack, bitmap, commands)
                )
        commands.append(
            Command(
                serial,
                send_count,
                flags,
                command,
                distribution,
                p3,
                p2,
                p1,
                sender,
                buf[pos : pos + n],
            )
        )
        pos += n
    return Datagram(crc_ok, ack, bitmap, tuple(commands))


def _checked(index: int, name: str, value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or not low <= value <= high:
        raise msg.out_of_range(index, name, value, low, high)
    return value


def canonical_flags(command: Command) -> int:
    """The flag byte the game's writer computes for these values (spec §3)."""
    flags = 0
    if command.distribution is not None:
        flags |= 0x40
    p3 = command.p3
    if p3 < 0 or p3 > 0xFFFF:
        flags |= 0x04
    elif p3:
        flags |= 0x20
    if command.p2:
        flags |= 0x02
    n = len(command.data)
    if n > 255:
        flags |= 0x08
    elif n:
        flags |= 0x10
    if command.p1:
        flags |= 0x01
    if command.sender is not None:
        flags |= 0x80
    return flags


def _kept_flags(index: int, cmd: Command) -> int:
    """Check that a command's own flag byte can carry its values."""
    flags = _checked(index, "flags", cmd.flags, 0, 255)
    if bool(flags & 0x40) != (cmd.distribution is not None):
        raise msg.flags_disagree(index, flags, f"distribution {cmd.distribution}")
    p3 = cmd.p3
    if not flags & 0x04 and (p3 < 0 or p3 > 0xFFFF if flags & 0x20 else p3 != 0):
        raise msg.flags_disagree(index, flags, f"p3 {p3}")
    if not flags & 0x02 and cmd.p2 != 0:
        raise msg.flags_disagree(index, flags, f"p2 {cmd.p2}")
    n = len(cmd.data)
    if not flags & 0x08 and (n > 255 if flags & 0x10 else n != 0):
        raise msg.flags_disagree(index, flags, f"{n} data bytes")
    if not flags & 0x01 and cmd.p1 != 0:
        raise msg.flags_disagree(index, flags, f"p1 {cmd.p1}")
    if bool(flags & 0x80) != (cmd.sender is not None):
        raise msg.flags_disagree(index, flags, f"sender {cmd.sender}")
    return flags


def _parts(
    datagram: Datagram | int, commands: Iterable[Command], ack_bitmap: int | None
) -> tuple[object, object, Sequence[Command]]:
    if isinstance(datagram, Datagram):
        return datagram.ack, datagram.ack_bitmap, datagram.commands
    return datagram, ack_bitmap, tuple(commands)


def encode_datagram(
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
    out = bytearray(_U16.pack(version))
    out += _U16.pack(ack)
    if ack & 1:
        if bitmap is None:
            raise msg.missing_bitmap(ack)
        if not isinstance(bitmap, int) or not -(1 << 31) <= bitmap <= 0xFFFFFFFF:
            raise msg.bad_bitmap(bitmap)
        out += (bitmap & 0xFFFFFFFF).to_bytes(4, "little")
    elif bitmap is not None:
        raise msg.unwanted_bitmap(ack)
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
        flags = _kept_flags(index, cmd) if keep_flags else canonical_flags(cmd)
        if current:
            out += _CMD5.pack(serial, send_count, flags, command)
        else:
            out += _CMD4.pack(serial, flags, command)
        if flags & 0x40:
            out += _I16.pack(dist)
        if flags & 0x04:
            out += _I32.pack(p3)
        elif flags & 0x20:
            out += _U16.pack(p3)
        if flags & 0x02:
            out += _I16.pack(p2)
        if flags & 0x08:
            out += _I16.pack(n)
        elif flags & 0x10:
            out.append(n)
        if flags & 0x01:
            out.append(p1 & 0xFF)
        if sender is not None:  # flags & 0x80, checked above
            out.append(sender & 0xFF)
        out += data
    if len(out) > MAX_DATAGRAM:
        raise msg.too_big(len(out))
    if len(out) == PUNCH_SIZE:
        raise msg.punch_sized()
    out[0:2] = _U16.pack(crc16_kermit(out))
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
    out = encode_datagram(
        datagram, commands, ack_bitmap, version=version, layout=layout, keep_flags=keep_flags
    )
    buf[offset : offset + len(out)] = out
    return len(out)


def decode_many(
    datagrams: Iterable[bytes | bytearray | memoryview],
    *,
    version: int | None = DEFAULT_VERSION,
    layout: Layout | int = Layout.CURRENT,
) -> Batch:
    """Decode many datagrams into one structured array of commands
    (:data:`COMMAND_DTYPE`) and one row per datagram (:data:`DATAGRAM_DTYPE`).

    A bad datagram does not stop the batch: its row says what went wrong and
    where, and the commands decoded before the error are kept.
    """
    if version is not None and not _is_u16(version):
        raise msg.bad_version(version)
    head = 5 if _is_current(layout) else 4
    rows: list[tuple[int, ...]] = []
    outcomes: list[tuple[int, ...]] = []
    for index, item in enumerate(datagrams):
        raw = item if type(item) is bytes else memoryview(item).tobytes()
        first = len(rows)
        status = Status.OK
        error_offset = 0
        try:
            result = decode_datagram(raw, version=version, layout=layout)
        except DecodeError as exc:
            result = exc.partial
            status = (
                Status.BAD_DATA_LEN if isinstance(exc, BadDataLengthError) else Status.TRUNCATED
            )
            error_offset = exc.offset
        if isinstance(result, HolePunch):
            outcomes.append((Status.PUNCH, 0, 0, first, 0, 0))
            continue
        if result.crc_ok is False:
            status = Status.SHORT_DATAGRAM if len(raw) < 4 else Status.CRC_MISMATCH
        pos = 8 if result.ack_bitmap is not None else 4
        for cmd in result.commands:
            flags = cmd.flags
            pos += (
                head
                + (2 if flags & 0x40 else 0)
                + (4 if flags & 0x04 else 2 if flags & 0x20 else 0)
            )
            pos += (2 if flags & 0x02 else 0) + (2 if flags & 0x08 else 1 if flags & 0x10 else 0)
            pos += (flags & 0x01) + (flags >> 7)
            n = len(cmd.data)
            rows.append(
                (
                    index,
                    cmd.serial,
                    cmd.send_count,
                    flags,
                    cmd.command,
                    cmd.distribution or 0,
                    cmd.p1,
                    cmd.p2,
                    cmd.p3,
                    cmd.sender or 0,
                    pos,
                    n,
                )
            )
            pos += n
        outcomes.append(
            (
                status,
                result.ack or 0,
                result.ack_bitmap or 0,
                first,
                len(result.commands),
                error_offset,
            )
        )
    return Batch(np.array(rows, dtype=COMMAND_DTYPE), np.array(outcomes, dtype=DATAGRAM_DTYPE))
