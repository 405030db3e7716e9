"""Reading a capture: packets to flows to decoded units, in capture order."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from gamecodec.capture._detect import (
    Guess,
    Override,
    parse_override,
    port_guess,
    tcp_content,
    udp_content,
)
from gamecodec.capture._ip import Defragmenter, IPError, host_text, ip_packet
from gamecodec.capture._read import (
    LINK_TYPES,
    MAX_RECORD,
    CaptureFile,
    FileError,
    link_slicer,
    open_capture,
)
from gamecodec.capture._records import (
    Address,
    CaptureError,
    Direction,
    Flow,
    Item,
    StreamDecoder,
    Unit,
)
from gamecodec.capture._streams import stream_decoder
from gamecodec.capture._tcp import MAX_PENDING, Piece, TcpStream
from gamecodec.capture._udp import DatagramDecoder, datagram_decoder

__all__ = ["Capture", "FlowStats", "read"]

Source = str | os.PathLike[str] | IO[bytes]

_SYN, _FIN, _RST, _ACK = 0x02, 0x01, 0x04, 0x10
_FIXED_LINK: dict[int, tuple[int, int]] = {1: (12, 14), 113: (14, 16), 276: (0, 20)}
"""Link types whose EtherType is at a fixed place: (its offset, the IP header's)."""
_DIRECTIONS: tuple[Direction, Direction] = ("to_server", "to_client")
_OTHER: dict[Direction, Direction] = {"to_server": "to_client", "to_client": "to_server"}
_HOLD_LIMIT = 64 * 1024  # bytes of a TCP connection held while its protocol is unknown
_SWEEP_EVERY = 1.0  # seconds of capture time between looks for idle flows
_CLOSED_LINGER = 30.0  # seconds a closed connection stays to absorb its last packets


@dataclass(slots=True)
class FlowStats:
    """What one flow carried: its :class:`Flow` and counts (``first``/``last``: capture times)."""

    flow: Flow
    packets: int = 0
    bytes: int = 0
    """Transport payload bytes (UDP data, TCP segment data, retransmissions included)."""
    units: int = 0
    errors: int = 0
    first: float = 0.0
    last: float = 0.0


class _UdpFlow:
    __slots__ = ("decode", "flow", "stats")

    def __init__(self, flow: Flow, decoder: DatagramDecoder | None, stats: FlowStats) -> None:
        self.flow = flow
        self.decode = None if decoder is None else decoder.decode
        self.stats = stats


class _Conn:
    """One TCP connection: its two streams, and its decoder once the protocol is known."""

    __slots__ = (
        "client",
        "closed",
        "decoder",
        "flow",
        "guess",
        "held",
        "held_bytes",
        "index",
        "oriented",
        "pos",
        "seen",
        "server",
        "stats",
        "streams",
    )

    def __init__(
        self, client: tuple[bytes, int], server: tuple[bytes, int], index: int, oriented: bool
    ) -> None:
        self.client = client
        self.server = server
        self.index = index
        self.oriented = oriented  # by a SYN: the client is known
        self.streams: dict[str, TcpStream] = {}
        self.flow: Flow | None = None
        self.decoder: StreamDecoder | None = None
        self.guess: Guess | None = None
        self.held: list[tuple[Direction, Piece, float, int]] = []
        self.held_bytes = 0
        self.pos: dict[Direction, int] = {"to_server": 0, "to_client": 0}  # stream offsets fed
        self.seen: set[Direction] = set()  # directions whose first bytes were looked at
        self.closed = False
        self.stats: FlowStats | None = None


def _address(host: bytes, port: int) -> Address:
    return Address(host_text(host), port)


class Capture:
    """A capture being read: iterate it (once) for its items, in capture order.

    Items are :class:`Unit` (one decoded datagram or message) and
    :class:`CaptureError` (something that could not be read or decoded, located
    by packet, flow and offset). Nothing in the capture raises: a bad file,
    packet or flow becomes an error item and reading goes on where it can.
    While and after iterating: :attr:`packets`, :attr:`errors` (by layer in
    :attr:`error_counts`), :attr:`units`, and :attr:`flows`, a
    :class:`FlowStats` per flow (what it was taken for and why, and its counts).

    ``protocols`` are overrides (``"lludp:udp/9000"``, ``"bzrc:tcp/47200-47203"``):
    a flow on such a port is taken for that protocol without looking at its
    content. Bounds: at most ``max_flows`` flows are followed at once (the
    longest idle is closed to make room); a UDP flow idle for ``udp_timeout``
    seconds, a TCP connection idle for ``tcp_timeout``, is closed (a later
    packet starts a new flow); a TCP direction holds at most ``max_pending``
    bytes out of order; a record longer than ``max_record`` bytes ends the file.
    """

    def __init__(
        self,
        source: Source,
        *,
        protocols: Iterable[str | Override] = (),
        max_flows: int = 65536,
        udp_timeout: float = 300.0,
        tcp_timeout: float = 3600.0,
        max_pending: int = MAX_PENDING,
        max_record: int = MAX_RECORD,
    ) -> None:
        self.overrides: tuple[Override, ...] = tuple(
            p if isinstance(p, Override) else parse_override(p) for p in protocols
        )
        self.max_flows = max_flows
        self.udp_timeout = udp_timeout
        self.tcp_timeout = tcp_timeout
        self.max_pending = max_pending
        self.packets = 0
        """Packets (records) read so far."""
        self.errors = 0
        self.error_counts: dict[str, int] = {}
        """Errors by ``CaptureError.where``."""
        self.flows: list[FlowStats] = []
        """Every flow seen so far, in the order of its first packet."""
        self.format: str | None = None
        """``"pcap"`` or ``"pcapng"`` (``None`` if the file is neither)."""
        self.link: str | None = None
        """The link type's name (``"ethernet"``, ``"sll2"``, ...)."""
        self._file: CaptureFile | None = None
        self._open_error: FileError | None = None
        try:
            self._file = open_capture(source, max_record)
            self.format = self._file.format
            self.link = LINK_TYPES.get(self._file.linktype, f"linktype {self._file.linktype}")
        except FileError as exc:
            self._open_error = exc
        self._iter: Iterator[Item] | None = None
        self._udp: dict[bytes, tuple[_UdpFlow, Direction]] = {}  # addresses + ports -> flow
        self._tcp: dict[tuple[bytes, int, bytes, int], tuple[_Conn, Direction]] = {}
        self._last_seen: dict[int, float] = {}  # id(flow state) -> capture time
        self._defrag = Defragmenter()
        self._next_index = 1
        self._now = 0.0

    # -- public --

    @property
    def units(self) -> int:
        """Units yielded so far."""
        return sum(s.units for s in self.flows)

    def __iter__(self) -> Iterator[Item]:
        if self._iter is None:
            self._iter = self._items()
        return self._iter

    def __next__(self) -> Item:
        return next(iter(self))

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (if this object opened it); iteration stops."""
        if self._file is not None:
            self._file.close()

    # -- the loop --

    def _error(self, item: CaptureError) -> CaptureError:
        self.errors += 1
        self.error_counts[item.where] = self.error_counts.get(item.where, 0) + 1
        return item

    def _items(self) -> Iterator[Item]:
        if self._open_error is not None or self._file is None:
            exc = self._open_error or FileError("no file", 0)
            yield self._error(CaptureError("file", exc.message, offset=exc.offset))
            return
        cf = self._file
        slicer = link_slicer(cf.linktype)
        if slicer is None:
            yield self._error(
                CaptureError("file", f"link type {cf.linktype} is not read", offset=0)
            )
            cf.close()
            return
        # The fast path: an IPv4 UDP datagram of a known flow, no options, no fragment,
        # behind a link header whose EtherType sits at a fixed place.
        et_at, ip_at = _FIXED_LINK.get(cf.linktype, (-1, 0))
        min_len = ip_at + 28
        udp = self._udp
        nano = cf.nano
        guard = cf.guard
        reader = cf.reader
        next_sweep = 0.0
        n = 0
        ts = 0.0
        file_error: CaptureError | None = None
        try:
            while True:
                try:
                    ts, buf = next(reader)
                except StopIteration:
                    if guard.short_at is not None and guard.short_at < guard.pos:
                        message = "the file ends inside a record header"
                        file_error = CaptureError(
                            "file", message, None, n + 1, offset=guard.short_at
                        )
                    break
                except FileError as exc:  # a record longer than max_record: point at its header
                    start = max(0, exc.offset - (16 if cf.format == "pcap" else 8))
                    file_error = CaptureError("file", exc.message, None, n + 1, offset=start)
                    break
                except Exception as exc:  # dpkt: NeedData, UnpackError, ValueError, struct.error
                    if guard.short_at is not None:
                        message, offset = "the file ends inside a record", guard.short_at
                    else:
                        message = f"unreadable record: {type(exc).__name__}: {exc}"
                        offset = guard.pos
                    file_error = CaptureError("file", message, None, n + 1, offset=offset)
                    break
                n += 1
                self.packets = n
                if guard.short_at is not None:
                    message = "the file ends inside a packet record"
                    file_error = CaptureError("file", message, None, n, offset=guard.short_at)
                    break
                if nano:
                    ts = float(ts)
                if ts >= next_sweep:
                    self._now = ts
                    yield from self._sweep(ts)
                    next_sweep = ts + _SWEEP_EVERY
                if (
                    et_at >= 0
                    and len(buf) >= min_len
                    and buf[ip_at] == 0x45
                    and buf[ip_at + 9] == 17
                    and buf[et_at] == 8
                    and buf[et_at + 1] == 0
                    and not (buf[ip_at + 6] & 0x3F or buf[ip_at + 7])
                ):
                    entry = udp.get(buf[ip_at + 12 : ip_at + 24])
                    if entry is not None:
                        end = ip_at + 20 + (buf[ip_at + 24] << 8 | buf[ip_at + 25])
                        if (
                            ip_at + 28
                            <= end
                            <= ip_at + (buf[ip_at + 2] << 8 | buf[ip_at + 3])
                            <= len(buf)
                        ):
                            state, direction = entry
                            stats = state.stats
                            stats.packets += 1
                            stats.bytes += end - ip_at - 28
                            stats.last = ts
                            decode = state.decode
                            if decode is not None:
                                item = decode(buf[ip_at + 28 : end], ts, n, state.flow, direction)
                                if item.__class__ is Unit:
                                    stats.units += 1
                                else:
                                    stats.errors += 1
                                    self._error(item)  # type: ignore[arg-type]
                                yield item
                            continue
                self._now = ts
                items = self._packet(ts, n, buf, slicer)
                if items:
                    yield from items
            if file_error is not None:
                yield self._error(file_error)
            yield from self._finish(ts, n)
        finally:
            cf.close()

    def _packet(self, ts: float, n: int, buf: bytes, slicer: Callable[[bytes], int]) -> list[Item]:
        """Everything but the fast path: any link, IP version, fragment, UDP or TCP."""
        off = slicer(buf)
        if off < 0:
            if off == -2:
                message = f"link header cut short: {len(buf)} bytes captured"
                return [self._error(CaptureError("link", message, ts, n))]
            return []
        try:
            proto, src, dst, payload, frag = ip_packet(buf, off)
        except IPError as exc:
            return [self._error(CaptureError("ip", exc.message, ts, n, offset=off))]
        items: list[Item] = []
        if frag is not None:
            whole, dropped = self._defrag.add(
                (proto, src, dst, frag[0]), frag[1], frag[2], payload, ts
            )
            for frag_key, message in dropped:
                items.append(self._fragment_error(frag_key, message, ts, n))
            if whole is None:
                return items
            payload = whole
        if proto == 17:
            items += self._udp_datagram(src, dst, payload, ts, n)
        elif proto == 6:
            items += self._tcp_segment(src, dst, payload, ts, n)
        return items

    def _udp_datagram(
        self, src: bytes, dst: bytes, payload: bytes, ts: float, n: int
    ) -> list[Item]:
        if len(payload) < 8:
            return [self._error(CaptureError("udp", "UDP header cut short", ts, n))]
        ulen = payload[4] << 8 | payload[5]
        if ulen < 8 or ulen > len(payload):
            message = f"UDP length {ulen} with {len(payload)} bytes in the packet"
            return [self._error(CaptureError("udp", message, ts, n))]
        data = payload[8:ulen]
        items: list[Item] = []
        key = src + dst + payload[:4]
        entry = self._udp.get(key)
        if entry is None:
            entry, errors = self._new_udp(src, dst, payload, ts, n)
            items += [self._error(e) for e in errors]
        state, direction = entry
        stats = state.stats
        stats.packets += 1
        stats.bytes += len(data)
        stats.last = ts
        if state.decode is not None:
            item = state.decode(data, ts, n, state.flow, direction)
            if item.__class__ is Unit:
                stats.units += 1
            else:
                stats.errors += 1
                self._error(item)  # type: ignore[arg-type]
            items.append(item)
        return items

    def _fragment_error(
        self, key: tuple[int, bytes, bytes, int], message: str, ts: float, n: int
    ) -> CaptureError:
        _proto, src, dst, ident = key
        text = f"IP fragments {ident} from {host_text(src)} to {host_text(dst)}: {message}"
        return self._error(CaptureError("ip", text, ts, n))

    # -- flows --

    def _new_index(self) -> int:
        index = self._next_index
        self._next_index += 1
        return index

    def _new_udp(
        self, src: bytes, dst: bytes, udp: bytes, ts: float, n: int
    ) -> tuple[tuple[_UdpFlow, Direction], list[CaptureError]]:
        sport = udp[0] << 8 | udp[1]
        dport = udp[2] << 8 | udp[3]
        data = udp[8 : udp[4] << 8 | udp[5]]
        if len(self._udp) >= 2 * self.max_flows:
            self._evict(self._udp, ts)
        guess = port_guess("udp", sport, dport, self.overrides)
        errors: list[CaptureError] = []
        client_is_src = not (guess is not None and guess.port == sport and guess.port != dport)
        version = None
        if guess is not None and guess.override:
            protocol: str | None = guess.protocol
            reason = guess.why
            if protocol == "avara":
                found = udp_content(data, "avara")
                version = found.version if found is not None and found.protocol == "avara" else None
        else:
            content = udp_content(data, None if guess is None else guess.protocol)
            protocol, reason = _verdict(
                guess,
                None if content is None else content.protocol,
                None if content is None else content.why,
            )
            if content is not None:
                version = content.version
                if guess is None or guess.protocol != content.protocol:
                    client_is_src = True
        if client_is_src:
            client, server = _address(src, sport), _address(dst, dport)
        else:
            client, server = _address(dst, dport), _address(src, sport)
        flow = Flow("udp", client, server, protocol, reason, self._new_index())
        if protocol is None and guess is not None:
            errors.append(CaptureError("detect", reason, ts, n, flow))
        decoder = None if protocol is None else datagram_decoder(protocol, version)
        stats = FlowStats(flow, first=ts, last=ts)
        stats.errors += len(errors)
        self.flows.append(stats)
        state = _UdpFlow(flow, decoder, stats)
        here: Direction = "to_server" if client_is_src else "to_client"
        there: Direction = "to_client" if client_is_src else "to_server"
        entry = (state, here)
        self._udp[src + dst + udp[:4]] = entry
        self._udp[dst + src + udp[2:4] + udp[:2]] = (state, there)
        return entry, errors

    def _sweep(self, now: float) -> Iterator[Item]:
        for key, message in self._defrag.expire(now):
            yield self._fragment_error(key, message, now, self.packets)
        stale_udp = [k for k, (s, _) in self._udp.items() if now - s.stats.last > self.udp_timeout]
        for udp_key in stale_udp:
            del self._udp[udp_key]
        conns = {id(c): c for c, _ in self._tcp.values()}
        for conn in conns.values():
            idle = now - conn.stats.last if conn.stats is not None else 0.0
            if not conn.closed and idle > self.tcp_timeout:
                yield from self._close_conn(conn, now, self.packets)
            if conn.closed and idle > _CLOSED_LINGER:
                self._forget(conn)

    def _forget(self, conn: _Conn) -> None:
        """Drop a closed connection from the table (later packets start a new one)."""
        (c_host, c_port), (s_host, s_port) = conn.client, conn.server
        for key in ((c_host, c_port, s_host, s_port), (s_host, s_port, c_host, c_port)):
            entry = self._tcp.get(key)
            if entry is not None and entry[0] is conn:
                del self._tcp[key]

    def _evict(self, table: dict[Any, Any], now: float) -> None:
        """Forget the longest idle tenth of the UDP flows."""
        states = sorted({id(s): s for s, _ in table.values()}.values(), key=lambda s: s.stats.last)
        drop = {id(s) for s in states[: max(1, len(states) // 10)]}
        for key in [k for k, (s, _) in table.items() if id(s) in drop]:
            del table[key]

    def _finish(self, ts: float, n: int) -> Iterator[Item]:
        for key, message in self._defrag.flush():
            yield self._fragment_error(key, message, ts, n)
        conns = {id(c): c for c, _ in self._tcp.values()}
        for conn in conns.values():
            yield from self._close_conn(conn, ts, n)
        self._tcp.clear()
        self._udp.clear()

    # -- TCP --

    def _tcp_segment(self, src: bytes, dst: bytes, seg: bytes, ts: float, n: int) -> list[Item]:
        if len(seg) < 20 or (seg[12] >> 4) * 4 < 20 or (seg[12] >> 4) * 4 > len(seg):
            return [self._error(CaptureError("tcp", "TCP header cut short or bad", ts, n))]
        sport = seg[0] << 8 | seg[1]
        dport = seg[2] << 8 | seg[3]
        seq = int.from_bytes(seg[4:8], "big")
        ack = int.from_bytes(seg[8:12], "big")
        flags = seg[13]
        data = seg[(seg[12] >> 4) * 4 :]
        key = (src, sport, dst, dport)
        entry = self._tcp.get(key)
        items: list[Item] = []
        if entry is not None and flags & _SYN and not flags & _ACK:
            conn = entry[0]
            stream = conn.streams[entry[1]]
            if conn.closed or stream.next != (seq + 1) & 0xFFFFFFFF:
                items += self._close_conn(conn, ts, n)
                entry = None
        if entry is None:
            if flags & _RST or (not data and not flags & (_SYN | _FIN)):
                return items  # a stray ack or reset of a connection not followed
            entry = self._new_conn(src, sport, dst, dport, flags)
        conn, direction = entry
        stats = conn.stats
        assert stats is not None
        stats.packets += 1
        stats.bytes += len(data)
        stats.last = ts
        if conn.closed:
            return items
        other_dir: Direction = "to_client" if direction == "to_server" else "to_server"
        stream = conn.streams[direction]
        other = conn.streams[other_dir]
        if flags & _SYN:
            stream.syn(seq)
            seq = (seq + 1) & 0xFFFFFFFF
        if flags & _ACK and other.started:
            pieces = other.acked(ack)
            if pieces:
                items += self._deliver(conn, other_dir, pieces, ts, n)
        if data:
            started = stream.started
            pieces = stream.add(seq, data)
            if not started and stream.picked_up:
                pieces.insert(0, 0)
            if pieces:
                items += self._deliver(conn, direction, pieces, ts, n)
        if flags & _FIN:
            stream.fin((seq + len(data)) & 0xFFFFFFFF)
        if flags & _RST or (
            stream.fin_at is not None
            and other.fin_at is not None
            and stream.next == stream.fin_at
            and other.next == other.fin_at
        ):
            items += self._close_conn(conn, ts, n)
        return items

    def _new_conn(
        self, src: bytes, sport: int, dst: bytes, dport: int, flags: int
    ) -> tuple[_Conn, Direction]:
        if len(self._tcp) >= 2 * self.max_flows:
            self._make_room()
        guess = port_guess("tcp", sport, dport, self.overrides)
        if flags & _SYN:
            client_is_src = not flags & _ACK
        else:
            client_is_src = not (guess is not None and guess.port == sport and guess.port != dport)
        a, b = (src, sport), (dst, dport)
        client, server = (a, b) if client_is_src else (b, a)
        conn = _Conn(client, server, self._new_index(), bool(flags & _SYN))
        conn.guess = guess
        conn.streams = {
            "to_server": TcpStream(self.max_pending),
            "to_client": TcpStream(self.max_pending),
        }
        conn.stats = FlowStats(
            self._make_flow(conn, None, "not yet recognised"), first=self._now, last=self._now
        )
        self.flows.append(conn.stats)
        self._tcp[(client[0], client[1], server[0], server[1])] = (conn, "to_server")
        self._tcp[(server[0], server[1], client[0], client[1])] = (conn, "to_client")
        return (conn, "to_server" if client_is_src else "to_client")

    def _make_room(self) -> None:
        """Too many connections: forget the closed ones, then close the longest idle tenth."""
        conns = {id(c): c for c, _ in self._tcp.values()}
        for conn in conns.values():
            if conn.closed:
                self._forget(conn)
        if len(self._tcp) < 2 * self.max_flows:
            return
        live = sorted(
            (c for c in conns.values() if not c.closed),
            key=lambda c: c.stats.last if c.stats else 0.0,
        )
        for conn in live[: max(1, len(live) // 10)]:
            for item in self._close_conn(conn, self._now, self.packets):
                del item  # what a forced close finds goes with the connection
            self._forget(conn)

    def _make_flow(self, conn: _Conn, protocol: str | None, reason: str) -> Flow:
        client = _address(*conn.client)
        server = _address(*conn.server)
        return Flow("tcp", client, server, protocol, reason, conn.index)

    def _deliver(
        self, conn: _Conn, direction: Direction, pieces: list[Piece], ts: float, n: int
    ) -> list[Item]:
        if conn.flow is None:
            for piece in pieces:
                conn.held.append((direction, piece, ts, n))
                if not isinstance(piece, int):
                    conn.held_bytes += len(piece)
            found = self._decide(conn, direction, ts, n)
            if found is None:
                return []
            held, conn.held, conn.held_bytes = conn.held, [], 0
            items: list[Item] = found
            for d, piece, t, k in held:
                items += self._feed(conn, d, [piece], t, k)
            return items
        return self._feed(conn, direction, pieces, ts, n)

    def _feed(
        self, conn: _Conn, direction: Direction, pieces: list[Piece], ts: float, n: int
    ) -> list[Item]:
        decoder = conn.decoder
        flow = conn.flow
        items: list[Item] = []
        pos = conn.pos
        for piece in pieces:
            if isinstance(piece, int):
                if piece == 0:
                    message = "the connection's start was not captured: it is picked up here"
                else:
                    message = f"{piece} bytes of the stream were not captured"
                items.append(CaptureError("tcp", message, ts, n, flow, direction, pos[direction]))
                pos[direction] += piece
                if decoder is not None:
                    items += decoder.gap(direction, piece, ts, n)
            else:
                pos[direction] += len(piece)
                if decoder is not None:
                    items += decoder.feed(direction, piece, ts, n)
        return self._count(conn, items)

    def _count(self, conn: _Conn, items: list[Item]) -> list[Item]:
        stats = conn.stats
        assert stats is not None
        for item in items:
            if item.__class__ is Unit:
                stats.units += 1
            else:
                stats.errors += 1
                self._error(item)  # type: ignore[arg-type]
        return items

    def _first_bytes(self, conn: _Conn, direction: Direction) -> bytes:
        out = bytearray()
        for d, piece, _t, _k in conn.held:
            if d == direction:
                if isinstance(piece, int):
                    if out:
                        break
                    continue
                out += piece
                if len(out) >= 4096:
                    break
        return bytes(out)

    def _decide(
        self, conn: _Conn, direction: Direction, ts: float, n: int, final: bool = False
    ) -> list[Item] | None:
        """Choose the connection's protocol if its first bytes allow (else ``None``).

        Returns what choosing found: a flow on a known port whose content is not
        that protocol's, a protocol without a stream decoder.
        """
        guess = conn.guess
        content = None
        if guess is None or not guess.override:
            for d in (direction, _OTHER[direction]):
                first = self._first_bytes(conn, d)
                if first:
                    conn.seen.add(d)
                    content = tcp_content(first)
                    if content is not None:
                        turned = content.from_server is not None and content.from_server != (
                            d == "to_client"
                        )
                        if turned and not conn.oriented:
                            self._swap(conn)
                        break
            waiting = len(conn.seen) < 2 and conn.held_bytes < _HOLD_LIMIT
            if content is None and waiting and not final:
                return None
        if guess is not None and guess.override:
            protocol: str | None = guess.protocol
            reason = guess.why
        else:
            protocol, reason = _verdict(
                guess,
                None if content is None else content.protocol,
                None if content is None else content.why,
            )
            if not conn.held_bytes and guess is not None and content is None:
                protocol, reason = guess.protocol, f"{guess.why}; no data to confirm it"
        flow = self._make_flow(conn, protocol, reason)
        conn.flow = flow
        assert conn.stats is not None
        conn.stats.flow = flow
        if protocol is None:
            if guess is not None:
                return self._count(conn, [CaptureError("detect", reason, ts, n, flow)])
            return []
        decoder = stream_decoder(protocol, flow)
        if isinstance(decoder, str):
            return self._count(conn, [CaptureError("decode", decoder, ts, n, flow)])
        conn.decoder = decoder
        return []

    def _swap(self, conn: _Conn) -> None:
        """The first bytes showed the client is the other end: turn the connection round."""
        conn.client, conn.server = conn.server, conn.client
        conn.oriented = True
        conn.streams = {
            "to_server": conn.streams["to_client"],
            "to_client": conn.streams["to_server"],
        }
        conn.pos = {"to_server": conn.pos["to_client"], "to_client": conn.pos["to_server"]}
        flip = _OTHER
        conn.held = [(flip[d], p, t, k) for d, p, t, k in conn.held]
        conn.seen = {flip[d] for d in conn.seen}
        for key, (c, d) in list(self._tcp.items()):
            if c is conn:
                self._tcp[key] = (c, flip[d])

    def _close_conn(self, conn: _Conn, ts: float, n: int) -> list[Item]:
        if conn.closed:
            return []
        conn.closed = True
        items: list[Item] = []
        for direction in _DIRECTIONS:
            pieces = conn.streams[direction].flush()
            if pieces:
                items += self._deliver(conn, direction, pieces, ts, n)
        if conn.flow is None:
            items += self._decide(conn, "to_server", ts, n, final=True) or []
            held, conn.held = conn.held, []
            for d, piece, t, k in held:
                items += self._feed(conn, d, [piece], t, k)
        if conn.decoder is not None:
            items += self._count(conn, conn.decoder.close(ts, n))
        return items


def _verdict(guess: Guess | None, protocol: str | None, why: str | None) -> tuple[str | None, str]:
    """The protocol and reason from what the port and the content said."""
    if protocol is not None:
        if guess is None:
            return protocol, f"content: {why}"
        if guess.protocol == protocol:
            return protocol, f"{guess.why}, confirmed by {why}"
        return protocol, f"content: {why} (the port is {guess.protocol}'s)"
    if guess is None:
        return None, "no known port, content not recognised"
    return None, f"{guess.why}, but the content is not {guess.protocol}"


def read(source: Source, *, protocols: Iterable[str | Override] = (), **options: Any) -> Capture:
    """Read a pcap or pcapng capture: a :class:`Capture` to iterate for its items.

    ``source`` is a path or a binary file object (read once, from where it is,
    never seeked). ``protocols`` are overrides such as ``"lludp:udp/9000"``;
    ``options`` are :class:`Capture`'s bounds. A path that cannot be opened
    raises :class:`OSError`; everything wrong inside the capture is an error item.
    """
    return Capture(source, protocols=protocols, **options)
