"""Packets out of pcap and pcapng files, through dpkt's readers, streamed.

dpkt reads both formats record by record from any binary file object, so memory
stays flat whatever the file's size. Its readers trust the lengths in the file;
:class:`_GuardedFile` sits between them and the file to refuse a record longer
than ``max_record`` (a garbage length would otherwise read gigabytes), to notice
the file ending inside a record, and to know the file offset of each record for
located errors. The link layer is sliced by hand: building dpkt's packet objects
costs about 7 us a packet, five times the cost of reading the record.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import IO, Any

import dpkt  # type: ignore[import-untyped]

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
        self, reader: Any, guard: _GuardedFile, fmt: str, nano: bool, owned: IO[bytes] | None
    ) -> None:
        self.reader: Iterator[tuple[Any, bytes]] = iter(reader)
        self.guard = guard
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
        return CaptureFile(reader, guard, fmt, magic in _NANO_MAGICS, owned)
    except BaseException:
        if owned is not None:
            owned.close()
        raise


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
