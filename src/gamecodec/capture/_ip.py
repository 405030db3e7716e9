"""IPv4 and IPv6 headers, sliced by hand, and fragment reassembly with bounded buffers.

IPv6 extension headers are walked as RFC 8200 has them: Hop-by-Hop (first only),
Routing, Destination Options, Authentication and Fragment, up to the upper-layer
header. A fragment's Fragmentable Part is walked once the packet is whole (it may
begin with extension headers, as Destination Options before UDP).
"""

from __future__ import annotations

import bisect
import socket

from gamecodec.capture._records import Address

__all__ = ["Defragmenter", "IPError", "address", "host_text", "ip_packet"]

_HOP_BY_HOP, _ROUTING, _FRAGMENT, _AH, _DEST_OPTS = 0, 43, 44, 51, 60
_WALKED = frozenset({_HOP_BY_HOP, _ROUTING, _FRAGMENT, _AH, _DEST_OPTS})
_NOT_READ = {
    50: "Encapsulating Security Payload",
    135: "Mobility",
    139: "Host Identity Protocol",
    140: "Shim6",
    253: "experimental",
    254: "experimental",
}
"""The other IPv6 extension headers (IANA's list): a packet holding one is not read."""
_NAMES = {
    _HOP_BY_HOP: "Hop-by-Hop",
    _ROUTING: "Routing",
    _FRAGMENT: "Fragment",
    _AH: "Authentication",
    _DEST_OPTS: "Destination Options",
}
_UPPER_MIN = {6: 20, 17: 8}  # the TCP and UDP headers' sizes

_MAX_PARTS = 1024  # fragments of one packet (1,480-byte fragments of 64 KiB: 45)

Fragment = tuple[int, int, bool]
"""A fragment's identification, byte offset and more-fragments flag."""

FragmentKey = tuple[int, bytes, bytes, int]
"""(protocol, or ``_V6`` for IPv6, source, destination, identification): an IPv6
packet's fragments may carry different Next Header values (RFC 8200, 4.5)."""

_V6 = -1

Dropped = list[tuple[FragmentKey, str]]


class IPError(Exception):
    """An IP packet that cannot be read; ``snapped`` when the capture cut it short."""

    def __init__(self, message: str, snapped: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.snapped = snapped


def ip_packet(buf: bytes, off: int) -> tuple[int, bytes, bytes, bytes, Fragment | None]:
    """``(protocol, source, destination, payload, fragment)`` of the IP packet at ``off``.

    ``fragment`` is ``None`` for a whole packet (an IPv6 atomic fragment is one);
    for a fragment, ``protocol`` is what its Fragmentable Part begins with (for
    IPv6, maybe an extension header: see :meth:`Defragmenter.reassemble`) and
    ``payload`` its share of that part. Link padding after the packet is dropped.
    Raises :class:`IPError` for a bad or cut-short header or packet.
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
    pos, fragment = off + 40, None
    if nxt not in _UPPER_MIN:  # not straight to UDP or TCP
        nxt, pos, fragment = _walk(buf, pos, end, nxt, base=off, where="of the packet")
    return nxt, buf[off + 8 : off + 24], buf[off + 24 : off + 40], buf[pos:end], fragment


def _walk(
    buf: bytes, pos: int, end: int, nxt: int, *, base: int, where: str, fragmented: bool = False
) -> tuple[int, int, Fragment | None]:
    """Walk the IPv6 extension headers from ``pos``: ``(next header, its position, fragment)``.

    Stops at the first header that is not an extension header (UDP, TCP, ICMPv6,
    ...) or after a Fragment header that is not atomic (what follows is fragment
    data). ``base`` is where byte positions in messages count from; ``fragmented``
    when walking a reassembled Fragmentable Part (no Hop-by-Hop or Fragment there).
    """
    first = pos
    fragment: Fragment | None = None
    while nxt in _WALKED:
        at = pos - base
        if nxt == _HOP_BY_HOP and (pos != first or fragmented):
            raise IPError(f"IPv6 Hop-by-Hop header at byte {at} {where}, not after the IPv6 header")
        if pos + 8 > end:
            raise IPError(f"IPv6 {_NAMES[nxt]} header at byte {at} {where} cut short")
        if nxt == _FRAGMENT:
            if fragmented or fragment is not None:
                raise IPError(f"a second IPv6 Fragment header at byte {at} {where}")
            field = buf[pos + 2] << 8 | buf[pos + 3]
            ident = int.from_bytes(buf[pos + 4 : pos + 8], "big")
            fragment = (ident, field & 0xFFF8, bool(field & 1))
            nxt = buf[pos]
            pos += 8
            if fragment[1] or fragment[2]:
                return nxt, pos, fragment  # the rest is this fragment's data
            continue  # an atomic fragment is a whole packet: walk on
        step = (buf[pos + 1] + 2) * 4 if nxt == _AH else (buf[pos + 1] + 1) * 8
        if pos + step > end:
            raise IPError(f"IPv6 {_NAMES[nxt]} header at byte {at} {where} runs past its end")
        nxt = buf[pos]
        pos += step
    name = _NOT_READ.get(nxt)
    if name is not None:
        raise IPError(f"IPv6 {name} header ({nxt}) at byte {pos - base} {where} is not read")
    return nxt, pos, None


def address(host: bytes, port: int) -> Address:
    """The :class:`Address` of raw host bytes and a port."""
    return Address(host_text(host), port)


def host_text(raw: bytes) -> str:
    """An address's text form (``10.0.0.1``, ``::1``)."""
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


class _Pending:
    __slots__ = ("first_time", "parts", "proto", "size", "starts", "total")

    def __init__(self, time: float) -> None:
        self.first_time = time
        self.parts: dict[int, bytes] = {}
        self.starts: list[int] = []  # the keys of parts, sorted (IPv6: to find overlaps)
        self.size = 0
        self.total: int | None = None
        self.proto = -1  # IPv6: the Next Header of the fragment at offset zero


class Defragmenter:
    """Puts fragmented IP packets back together.

    Holds at most ``max_packets`` packets in reassembly (the oldest is dropped
    to make room), each at most ``max_size`` bytes in at most 1,024 fragments
    (holding at most twice that, however IPv4 fragments overlap),
    each for at most ``timeout`` seconds of capture time (``timeout_v6`` for
    IPv6: 60 s, as RFC 8200 has it). IPv6 fragments follow RFC 8200: one that
    overlaps another (not an exact copy) or, before the last, is not a multiple
    of 8 bytes gives up its packet. What is dropped comes back from :meth:`add`,
    :meth:`reassemble` or :meth:`expire` as ``(key, message)`` so the caller can
    report it.
    """

    def __init__(
        self,
        max_packets: int = 1024,
        max_size: int = 65535,
        timeout: float = 30.0,
        timeout_v6: float = 60.0,
    ) -> None:
        self.max_packets = max_packets
        self.max_size = max_size
        self.timeout = timeout
        self.timeout_v6 = timeout_v6
        self._pending: dict[FragmentKey, _Pending] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(
        self, key: FragmentKey, offset: int, more: bool, data: bytes, time: float
    ) -> tuple[bytes | None, Dropped]:
        """Add one fragment; ``(whole payload or None, dropped packets)``.

        ``key`` is (protocol, source, destination, identification). The payload
        of an IPv6 packet is its Fragmentable Part, extension headers and all
        (:meth:`reassemble` walks them).
        """
        dropped: Dropped = []
        entry = self._put(key, offset, more, data, time=time, dropped=dropped)
        if entry is None or entry.total is None or entry.size < entry.total:
            return None, dropped
        whole = bytearray(entry.total)
        covered = 0
        for start in entry.starts:  # the keys of parts, in order
            part = entry.parts[start]
            if start > covered:
                return None, dropped  # a hole, though overlaps made the sizes add up
            whole[start : start + len(part)] = part
            covered = max(covered, start + len(part))
        del self._pending[key]
        return bytes(whole[: entry.total]), dropped

    def reassemble(
        self, proto: int, src: bytes, dst: bytes, fragment: Fragment, data: bytes, *, time: float
    ) -> tuple[int, bytes | None, Dropped]:
        """Add one fragment as :func:`ip_packet` gave it: ``(protocol, payload or None, dropped)``.

        Once the packet is whole, the extension headers an IPv6 Fragmentable Part
        begins with are walked: ``protocol`` is then the upper layer's and the
        payload starts at its header. A chain that cannot be read, or that the
        first fragment does not hold up to the upper-layer header (RFC 8200, 4.5),
        gives up the packet (in ``dropped``).
        """
        v6 = len(src) == 16
        key = (_V6 if v6 else proto, src, dst, fragment[0])
        first = self._pending.get(key)
        first_len = len(first.parts.get(0, b"")) if first is not None else 0
        first_proto = first.proto if first is not None else -1
        whole, dropped = self.add(key, fragment[1], fragment[2], data, time)
        if fragment[1] == 0:
            first_len, first_proto = len(data), proto
            entry = self._pending.get(key) if whole is None else None
            if entry is not None:
                entry.proto = proto
        if whole is None or not v6:
            return proto, whole, dropped
        try:
            nxt, pos, _ = _walk(
                whole,
                0,
                len(whole),
                first_proto,
                base=0,
                where="of the reassembled part",
                fragmented=True,
            )
        except IPError as exc:
            dropped.append((key, exc.message))
            return proto, None, dropped
        if pos + _UPPER_MIN.get(nxt, 0) > first_len:
            message = (
                f"the first fragment ({first_len} bytes) does not hold the header chain"
                " through the upper-layer header"
            )
            dropped.append((key, message))
            return proto, None, dropped
        return nxt, whole[pos:], dropped

    def _put(
        self,
        key: FragmentKey,
        offset: int,
        more: bool,
        data: bytes,
        *,
        time: float,
        dropped: Dropped,
    ) -> _Pending | None:
        """File one fragment; its packet's entry (``None`` if the packet was given up)."""
        entry = self._pending.get(key)
        if entry is None:
            if len(self._pending) >= self.max_packets:
                old_key = next(iter(self._pending))
                oldest = self._pending.pop(old_key)
                dropped.append((old_key, f"dropped unfinished ({oldest.size} bytes) to make room"))
            entry = self._pending[key] = _Pending(time)
        end = offset + len(data)
        why = None
        if end > self.max_size:
            why = f"fragments reach byte {end}, past {self.max_size}"
        elif len(entry.parts) >= _MAX_PARTS:
            why = "fragments too many"
        elif len(key[1]) == 16:
            why = self._v6_fault(entry, offset, more, data)
        elif entry.size + len(data) - len(entry.parts.get(offset, b"")) > 2 * self.max_size:
            why = f"overlapping fragments hold more than {2 * self.max_size} bytes"
        if why is not None:
            del self._pending[key]
            dropped.append((key, why))
            return None
        old = entry.parts.get(offset)
        if old is None:
            entry.size += len(data)
            bisect.insort(entry.starts, offset)
        else:
            entry.size += len(data) - len(old)
        entry.parts[offset] = data
        if not more:
            entry.total = end
        return entry

    @staticmethod
    def _v6_fault(entry: _Pending, offset: int, more: bool, data: bytes) -> str | None:
        """Why RFC 8200 gives up this IPv6 fragment's packet (``None``: it does not)."""
        if more and len(data) % 8:
            return f"a fragment of {len(data)} bytes before the last, not a multiple of 8"
        end = offset + len(data)
        if entry.total is not None and (end > entry.total or (not more and end != entry.total)):
            return "fragments past the last one"
        if not more and entry.starts:
            last = entry.starts[-1]
            if last + len(entry.parts[last]) > end:
                return "fragments past the last one"
        k = bisect.bisect_left(entry.starts, offset)
        if k < len(entry.starts) and entry.starts[k] == offset:
            if entry.parts[offset] == data:
                return None  # a copy of one already held
            return f"overlapping fragments at byte {offset}"
        if k > 0:
            before = entry.starts[k - 1]
            if before + len(entry.parts[before]) > offset:
                return f"overlapping fragments at byte {offset}"
        if k < len(entry.starts) and entry.starts[k] < end:
            return f"overlapping fragments at byte {entry.starts[k]}"
        return None

    def expire(self, now: float) -> Dropped:
        """Drop the packets older than their timeout; what was dropped."""
        dropped = []
        for key in [k for k, v in self._pending.items() if now - v.first_time > self._limit(k)]:
            entry = self._pending.pop(key)
            dropped.append((key, f"incomplete after {self._limit(key):g} s ({entry.size} bytes)"))
        return dropped

    def _limit(self, key: FragmentKey) -> float:
        return self.timeout_v6 if len(key[1]) == 16 else self.timeout

    def flush(self) -> Dropped:
        """The capture ended: every unfinished packet, as dropped."""
        dropped = [
            (k, f"incomplete at the end of the capture ({v.size} bytes)")
            for k, v in self._pending.items()
        ]
        self._pending.clear()
        return dropped
