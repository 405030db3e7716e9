"""IPv4 and IPv6 headers, sliced by hand, and fragment reassembly with bounded buffers."""

from __future__ import annotations

import socket

from gamecodec.capture._records import Address

__all__ = ["Defragmenter", "IPError", "address", "host_text", "ip_packet"]

_V6_EXTENSIONS = frozenset({0, 43, 60})  # hop-by-hop, routing, destination options
_V6_FRAGMENT = 44
_V6_AH = 51
_V6_HEADERS = _V6_EXTENSIONS | {_V6_FRAGMENT, _V6_AH}

_MAX_PARTS = 1024  # fragments of one packet (1,480-byte fragments of 64 KiB: 45)

Fragment = tuple[int, int, bool]
"""A fragment's identification, byte offset and more-fragments flag."""


class IPError(Exception):
    """An IP packet that cannot be read; ``snapped`` when the capture cut it short."""

    def __init__(self, message: str, snapped: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.snapped = snapped


def ip_packet(buf: bytes, off: int) -> tuple[int, bytes, bytes, bytes, Fragment | None]:
    """``(protocol, source, destination, payload, fragment)`` of the IP packet at ``off``.

    ``fragment`` is ``None`` for a whole packet. Link padding after the packet is
    dropped. Raises :class:`IPError` for a bad or cut-short header or packet.
    """
    size = len(buf) - off
    if size < 1:
        raise IPError("no IP header captured", snapped=True)
    version = buf[off] >> 4
    if version == 4:
        if size < 20:
            raise IPError(f"IPv4 header cut short: {size} of 20 bytes captured", snapped=True)
        ihl = (buf[off] & 15) * 4
        total = buf[off + 2] << 8 | buf[off + 3]
        if ihl < 20 or total < ihl:
            raise IPError(f"bad IPv4 header (length {ihl}, total length {total})")
        if total > size:
            raise IPError(f"IPv4 packet snapped: {size} of {total} bytes captured", snapped=True)
        flags = buf[off + 6] << 8 | buf[off + 7]
        payload = buf[off + ihl : off + total]
        src = buf[off + 12 : off + 16]
        dst = buf[off + 16 : off + 20]
        if flags & 0x3FFF:
            ident = buf[off + 4] << 8 | buf[off + 5]
            return (
                buf[off + 9],
                src,
                dst,
                payload,
                (ident, (flags & 0x1FFF) * 8, bool(flags & 0x2000)),
            )
        return buf[off + 9], src, dst, payload, None
    if version == 6:
        return _ipv6(buf, off, size)
    raise IPError(f"not an IP packet (version {version})")


def _ipv6(buf: bytes, off: int, size: int) -> tuple[int, bytes, bytes, bytes, Fragment | None]:
    if size < 40:
        raise IPError(f"IPv6 header cut short: {size} of 40 bytes captured", snapped=True)
    plen = buf[off + 4] << 8 | buf[off + 5]
    end = off + 40 + plen if plen else len(buf)  # 0: a jumbogram, up to the frame's end
    if end > len(buf):
        raise IPError(f"IPv6 packet snapped: {size} of {40 + plen} bytes captured", snapped=True)
    nxt = buf[off + 6]
    pos = off + 40
    fragment: Fragment | None = None
    while nxt in _V6_HEADERS:
        if pos + 8 > end:
            raise IPError("IPv6 extension header cut short")
        if nxt == _V6_FRAGMENT:
            field = buf[pos + 2] << 8 | buf[pos + 3]
            ident = int.from_bytes(buf[pos + 4 : pos + 8], "big")
            fragment = (ident, field & 0xFFF8, bool(field & 1))
            step = 8
        elif nxt == _V6_AH:
            step = (buf[pos + 1] + 2) * 4
        else:
            step = (buf[pos + 1] + 1) * 8
        nxt = buf[pos]
        pos += step
    if pos > end:
        raise IPError("IPv6 extension headers run past the packet")
    if fragment is not None and fragment[1] == 0 and not fragment[2]:
        fragment = None  # an atomic fragment is a whole packet
    return nxt, buf[off + 8 : off + 24], buf[off + 24 : off + 40], buf[pos:end], fragment


def address(host: bytes, port: int) -> Address:
    """The :class:`Address` of raw host bytes and a port."""
    return Address(host_text(host), port)


def host_text(raw: bytes) -> str:
    """An address's text form (``10.0.0.1``, ``::1``)."""
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


class _Pending:
    __slots__ = ("first_time", "last_packet", "parts", "size", "total")

    def __init__(self, time: float) -> None:
        self.first_time = time
        self.parts: dict[int, bytes] = {}
        self.size = 0
        self.total: int | None = None
        self.last_packet = 0


class Defragmenter:
    """Puts fragmented IP packets back together.

    Holds at most ``max_packets`` packets in reassembly (the oldest is dropped
    to make room), each at most ``max_size`` bytes in at most 1,024 fragments,
    each for at most ``timeout`` seconds of capture time. What is dropped comes
    back from :meth:`add` or :meth:`expire` as ``(key, message)`` so the caller
    can report it.
    """

    def __init__(
        self, max_packets: int = 1024, max_size: int = 65535, timeout: float = 30.0
    ) -> None:
        self.max_packets = max_packets
        self.max_size = max_size
        self.timeout = timeout
        self._pending: dict[tuple[int, bytes, bytes, int], _Pending] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(
        self, key: tuple[int, bytes, bytes, int], offset: int, more: bool, data: bytes, time: float
    ) -> tuple[bytes | None, list[tuple[tuple[int, bytes, bytes, int], str]]]:
        """Add one fragment; ``(whole payload or None, dropped packets)``.

        ``key`` is (protocol, source, destination, identification).
        """
        dropped: list[tuple[tuple[int, bytes, bytes, int], str]] = []
        entry = self._pending.get(key)
        if entry is None:
            if len(self._pending) >= self.max_packets:
                old_key = next(iter(self._pending))
                old = self._pending.pop(old_key)
                dropped.append((old_key, f"dropped unfinished ({old.size} bytes) to make room"))
            entry = self._pending[key] = _Pending(time)
        end = offset + len(data)
        if end > self.max_size or len(entry.parts) >= _MAX_PARTS:
            del self._pending[key]
            why = f"reach byte {end}, past {self.max_size}" if end > self.max_size else "too many"
            dropped.append((key, f"fragments {why}"))
            return None, dropped
        if offset not in entry.parts:
            entry.size += len(data)
        else:
            entry.size += len(data) - len(entry.parts[offset])
        entry.parts[offset] = data
        if not more:
            entry.total = end
        if entry.total is None or entry.size < entry.total:
            return None, dropped
        whole = bytearray(entry.total)
        covered = 0
        for start in sorted(entry.parts):
            part = entry.parts[start]
            if start > covered:
                return None, dropped  # a hole, though overlaps made the sizes add up
            whole[start : start + len(part)] = part
            covered = max(covered, start + len(part))
        del self._pending[key]
        return bytes(whole[: entry.total]), dropped

    def expire(self, now: float) -> list[tuple[tuple[int, bytes, bytes, int], str]]:
        """Drop the packets older than ``timeout``; what was dropped."""
        dropped = []
        for key in [k for k, v in self._pending.items() if now - v.first_time > self.timeout]:
            entry = self._pending.pop(key)
            dropped.append((key, f"incomplete after {self.timeout:g} s ({entry.size} bytes)"))
        return dropped

    def flush(self) -> list[tuple[tuple[int, bytes, bytes, int], str]]:
        """The capture ended: every unfinished packet, as dropped."""
        dropped = [
            (k, f"incomplete at the end of the capture ({v.size} bytes)")
            for k, v in self._pending.items()
        ]
        self._pending.clear()
        return dropped
