"""Packets out of pcap and pcapng files, streamed (dpkt checks the headers).

dpkt reads both formats record by record from any binary file object, so memory
stays flat whatever the file's size. Its readers trust the lengths in the file;
:class:`_GuardedFile` sits between them and the file to refuse a record longer
than ``max_record`` (a garbage length would otherwise read gigabytes), to notice
the file ending inside a record, and to know the file offset of each record for
located errors. The link layer is sliced by hand: building dpkt's packet objects
costs about 7 us a packet, five times the cost of reading the record.

A microsecond pcap file's records (a 16-byte header and the frame) are read
by :func:`_pcap_records` after dpkt has checked the file header: it reads the
file in 16 KiB chunks and slices the records out of them with one
``struct.unpack_from`` a record, under the same guard, where dpkt's reader
builds a header object for each (1.5 us a packet against 0.5 us, which is most
of what reading a UDP capture costs besides decoding). Nanosecond pcap (whose
times dpkt gives as :class:`~decimal.Decimal`) goes through dpkt. A pcapng
file's blocks are read by :func:`_pcapng_records` once dpkt has read its first
section header and interface (dpkt's own loop takes every packet for the first
interface's).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any


def _dpkt() -> Any:
    try:
        import dpkt  # type: ignore[import-untyped]
    except ImportError:
        raise ImportError("reading captures needs dpkt: pip install 'gamecodec[capture]'") from None
    return dpkt


__all__ = ["LINK_TYPES", "CaptureFile", "FileError", "link_slicer", "open_capture"]

LINK_TYPES: dict[int, str] = {
    0: "null",
    1: "ethernet",
    12: "raw",
    14: "raw",
    101: "raw",
    108: "loop",
    113: "sll",
    228: "ipv4",
    229: "ipv6",
    276: "sll2",
}
"""The link types read (LINKTYPE_ numbers) and their names."""

MAX_RECORD = 1 << 20
"""The longest record (pcap packet or pcapng block) read; longer is a file error."""

_PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1",
    b"\xa1\xb2\xc3\xd4",
    b"\x4d\x3c\xb2\xa1",
    b"\xa1\xb2\x3c\x4d",
}
_PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
_NANO_MAGICS = {b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"}
_RECORD_HEADERS = {
    b"\xd4\xc3\xb2\xa1": struct.Struct("<IIII"),
    b"\xa1\xb2\xc3\xd4": struct.Struct(">IIII"),
}
"""Microsecond pcap: a record's seconds, microseconds, captured and original length."""
_CHUNK = 1 << 14


class FileError(Exception):
    """The file cannot be read on from ``offset`` (bytes from its start)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class _GuardedFile:
    """A file object for dpkt: bounded reads, the position, where the file ran short."""

    __slots__ = ("_pending", "_read", "limit", "pos", "short_at")

    def __init__(self, read: Callable[[int], bytes], pending: bytes, limit: int) -> None:
        self._read = read
        self._pending = pending
        self.limit = limit
        self.pos = 0
        self.short_at: int | None = None

    def take(self) -> bytes:
        """The bytes read ahead and not yet given out (they are given out now)."""
        data, self._pending = self._pending, b""
        return data

    def read_more(self, n: int) -> bytes:
        """Up to ``n`` more bytes of the file, fewer only where it ends (not counted in ``pos``)."""
        data = self._read(n)
        while 0 < len(data) < n:
            more = self._read(n - len(data))
            if not more:
                break
            data += more
        return data

    def read(self, n: int = -1) -> bytes:
        if n < 0 or n > self.limit:
            raise FileError(f"a record of {n} bytes (the limit is {self.limit})", self.pos)
        if self._pending:
            data = self._pending[:n]
            self._pending = self._pending[n:]
            if len(data) < n:
                data += self._read(n - len(data))
        else:
            data = self._read(n)
        if len(data) < n and self.short_at is None:
            self.short_at = self.pos
        self.pos += len(data)
        return data


class CaptureFile:
    """An open capture: ``reader`` yields ``(time, frame)``; ``offset`` is the file position.

    ``format`` is ``"pcap"`` or ``"pcapng"``, ``linktype`` the LINKTYPE_ number,
    ``nano`` whether times come as :class:`~decimal.Decimal` (nanosecond pcap).
    """

    def __init__(
        self,
        reader: Any,
        guard: _GuardedFile,
        fmt: str,
        nano: bool,
        owned: IO[bytes] | None,
        *,
        magic: bytes = b"",
    ) -> None:
        self.guard = guard
        header = _RECORD_HEADERS.get(magic)
        self.reader: Iterator[tuple[Any, bytes]] = (
            _pcapng_records(guard, reader)
            if fmt == "pcapng"
            else iter(reader)
            if header is None
            else _pcap_records(guard, header)
        )
        """``(time, frame)`` per record; in pcapng, ``(time, frame, linktype)`` for a
        packet on an interface whose link type is not the first interface's
        (``linktype`` -1: an interface the file does not describe)."""
        self.format = fmt
        self.nano = nano
        self.linktype: int = reader.datalink()
        self._owned = owned

    @property
    def offset(self) -> int:
        """Bytes read from the file so far."""
        return self.guard.pos

    @property
    def short_at(self) -> int | None:
        """Where the file ended inside a record (``None`` while it has not)."""
        return self.guard.short_at

    def close(self) -> None:
        """Close the file if this object opened it."""
        if self._owned is not None:
            self._owned.close()
            self._owned = None


def open_capture(
    source: str | os.PathLike[str] | IO[bytes], max_record: int = MAX_RECORD
) -> CaptureFile:
    """Open ``source`` (a path or a binary file object) as pcap or pcapng.

    Raises :class:`FileError` (offset 0) if it is neither, :class:`OSError` if
    the path cannot be opened.
    """
    dpkt = _dpkt()
    owned: IO[bytes] | None = None
    if isinstance(source, str | os.PathLike):
        owned = open(source, "rb")  # noqa: SIM115 (closed by CaptureFile.close)
        fileobj: IO[bytes] = owned
    else:
        fileobj = source
    try:
        magic = fileobj.read(4)
        if not isinstance(magic, bytes):
            raise TypeError(f"{source!r} is not a binary file object")
        guard = _GuardedFile(fileobj.read, magic, max_record)
        if magic in _PCAP_MAGICS:
            fmt, reader_cls = "pcap", dpkt.pcap.Reader
        elif magic == _PCAPNG_MAGIC:
            fmt, reader_cls = "pcapng", dpkt.pcapng.Reader
        else:
            raise FileError(f"not a pcap or pcapng file (it starts {magic.hex()!r})", 0)
        try:
            reader = reader_cls(guard)
        except FileError:
            raise
        except Exception as exc:  # dpkt raises ValueError, NeedData, UnpackError, struct.error
            raise FileError(f"bad {fmt} file header: {exc}", 0) from None
        return CaptureFile(reader, guard, fmt, magic in _NANO_MAGICS, owned, magic=magic)
    except BaseException:
        if owned is not None:
            owned.close()
        raise


def _pcap_records(guard: _GuardedFile, header: struct.Struct) -> Iterator[tuple[float, bytes]]:
    """``(time, frame)`` of each record of a microsecond pcap file, as dpkt's reader gives.

    Past the file header. Keeps ``guard.pos`` at the end of the record given and
    ``guard.short_at`` where the file ran short, and raises what the guarded dpkt
    reader raises: :class:`FileError` for a record longer than the limit,
    :class:`EOFError` for a record header cut short (after setting ``short_at``).
    A frame cut short by the file's end is given as it is, ``short_at`` set.
    """
    unpack = header.unpack_from
    limit = guard.limit
    data = guard.take()
    base = guard.pos  # the file offset of data[0]
    at = 0
    while True:
        if len(data) - at < 16:
            data = data[at:]  # the old chunk goes before the next is read
            data += guard.read_more(_CHUNK)
            base += at
            at = 0
            if len(data) < 16:
                guard.pos = base + len(data)
                if data:
                    guard.short_at = base
                    raise EOFError("the file ends inside a record header")
                return
        sec, usec, caplen, _ = unpack(data, at)
        start = at + 16
        if caplen > limit:
            guard.pos = base + start
            raise FileError(f"a record of {caplen} bytes (the limit is {limit})", guard.pos)
        end = start + caplen
        if end > len(data):
            need = end - len(data)
            data = data[at:]
            data += guard.read_more(max(_CHUNK, need))
            base += at
            start -= at
            end -= at
            at = 0
            if end > len(data):
                guard.short_at = base + start
                guard.pos = base + len(data)
                yield sec + usec / 1e6, data[start:]
                return
        at = end
        guard.pos = base + end
        yield sec + usec / 1e6, data[start:end]


_SHB, _IDB, _PB, _SPB, _EPB = 0x0A0D0D0A, 1, 2, 3, 6  # _PB: the obsolete Packet Block
_TSRESOL, _TSOFFSET = 9, 14


def _interface(
    linktype: int, options: Iterable[tuple[int, bytes]], order: str
) -> tuple[int, float, int]:
    """An interface's link type, time units per second and time offset (seconds)."""
    per_second, offset = 1e6, 0
    for code, value in options:
        if code == _TSRESOL and len(value) >= 1:
            per_second = float((2 if value[0] & 0x80 else 10) ** (value[0] & 0x7F))
        elif code == _TSOFFSET and len(value) >= 8:
            offset = struct.unpack_from(order + "q", value)[0]
    return linktype, per_second, offset


def _options(block: bytes, at: int, order: str) -> Iterator[tuple[int, bytes]]:
    """The options of a pcapng block from ``at``: ``(code, value)`` each."""
    end = len(block) - 4
    while at + 4 <= end:
        code, size = struct.unpack_from(order + "HH", block, at)
        if code == 0:
            return
        yield code, block[at + 4 : at + 4 + size]
        at += 4 + size + (-size % 4)


def _pcapng_records(guard: _GuardedFile, reader: Any) -> Iterator[tuple[Any, ...]]:
    """The packets of a pcapng file, past dpkt's reading of its first section header
    and interface: each with its own interface's link type and time resolution.

    dpkt's own loop reads every packet as if it came from the first interface and
    skips Simple Packet Blocks and later sections. Raises :class:`EOFError` for a
    block cut short by the file's end (``guard.short_at`` set), :class:`FileError`
    for a block longer than the limit, :class:`ValueError` for a malformed block.
    """
    idb = reader.idb
    order = "<" if idb.__class__.__name__.endswith("LE") else ">"
    first = [(o.code, bytes(o.data)) for o in idb.opts]
    interfaces = [_interface(idb.linktype, first, order)]
    first_link = idb.linktype
    last = 0.0  # a Simple Packet Block has no time: it gets the one before
    while True:
        head = guard.read(8)
        if len(head) < 8:
            if head:
                raise EOFError("the file ends inside a block header")
            return
        kind, size = struct.unpack(order + "II", head)
        if kind == _SHB:  # a new section: its own byte order and interfaces
            magic = guard.read(4)
            if magic not in (b"\x4d\x3c\x2b\x1a", b"\x1a\x2b\x3c\x4d"):
                raise ValueError(f"bad section header block byte-order magic {magic.hex()}")
            order = "<" if magic == b"\x4d\x3c\x2b\x1a" else ">"
            size = struct.unpack(order + "I", head[4:])[0]
            if size < 28 or size % 4:
                raise ValueError(f"bad section header block length {size}")
            body = guard.read(size - 12)
            interfaces = []
        else:
            if size < 12 or size % 4:
                raise ValueError(f"bad block length {size}")
            body = guard.read(size - 8)
        if len(body) < size - (12 if kind == _SHB else 8):
            raise EOFError("the file ends inside a block")
        if kind == _IDB:
            block = head + body
            linktype = struct.unpack_from(order + "H", block, 8)[0]
            interfaces.append(_interface(linktype, _options(block, 16, order), order))
        elif kind in (_EPB, _PB):
            if size < 32:
                raise ValueError(f"bad packet block length {size}")
            if kind == _EPB:
                iface, high, low, caplen = struct.unpack_from(order + "IIII", body)
            else:  # a 16-bit interface and a drops count where the EPB has a 32-bit interface
                iface, _drops, high, low, caplen = struct.unpack_from(order + "HHIII", body)
            frame = body[20 : 20 + min(caplen, size - 32)]
            if iface >= len(interfaces):
                yield last, frame, -1
                continue
            linktype, per_second, offset = interfaces[iface]
            last = offset + (high << 32 | low) / per_second
            if linktype == first_link:
                yield last, frame
            else:
                yield last, frame, linktype
        elif kind == _SPB:
            if size < 16:
                raise ValueError(f"bad simple packet block length {size}")
            frame = body[4 : 4 + min(struct.unpack_from(order + "I", body)[0], size - 16)]
            linktype = interfaces[0][0] if interfaces else -1
            yield (last, frame) if linktype == first_link else (last, frame, linktype)


def _ethernet(buf: bytes) -> int:
    if len(buf) < 14:
        return -2
    kind = buf[12] << 8 | buf[13]
    off = 14
    while kind in {0x8100, 0x88A8}:  # VLAN tags
        if len(buf) < off + 4:
            return -2
        kind = buf[off + 2] << 8 | buf[off + 3]
        off += 4
    return off if kind in {0x0800, 0x86DD} else -1


def _sll(buf: bytes) -> int:
    if len(buf) < 16:
        return -2
    kind = buf[14] << 8 | buf[15]
    return 16 if kind in {0x0800, 0x86DD} else -1


def _sll2(buf: bytes) -> int:
    if len(buf) < 20:
        return -2
    kind = buf[0] << 8 | buf[1]
    return 20 if kind in {0x0800, 0x86DD} else -1


_BSD_FAMILIES = frozenset({2, 24, 28, 30})  # AF_INET, AF_INET6 (NetBSD/OpenBSD, FreeBSD, macOS)


def _null(buf: bytes) -> int:
    if len(buf) < 4:
        return -2
    # DLT_NULL is in the capturing host's byte order: the family is byte 0 or byte 3.
    return 4 if (buf[0] | buf[3]) in _BSD_FAMILIES and buf[1] == 0 and buf[2] == 0 else -1


def _raw(buf: bytes) -> int:
    return 0


_SLICERS: dict[str, Callable[[bytes], int]] = {
    "ethernet": _ethernet,
    "sll": _sll,
    "sll2": _sll2,
    "null": _null,
    "loop": _null,
    "raw": _raw,
    "ipv4": _raw,
    "ipv6": _raw,
}


def link_slicer(linktype: int) -> Callable[[bytes], int] | None:
    """For a link type, a function giving a frame's IP header offset.

    It returns -1 for a frame that does not carry IP (ARP, ...), -2 for one too
    short to hold its link header; ``None`` if the link type is not read.
    """
    name = LINK_TYPES.get(linktype)
    return None if name is None else _SLICERS[name]
