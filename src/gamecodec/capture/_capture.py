"""Reading a capture: packets to flows to decoded units, in capture order."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from gamecodec.capture._connections import Connections
from gamecodec.capture._detect import Override, parse_override, port_guess, udp_content, verdict
from gamecodec.capture._ip import Defragmenter, IPError, address, host_text, ip_packet
from gamecodec.capture._read import (
    LINK_TYPES,
    MAX_RECORD,
    CaptureFile,
    FileError,
    link_slicer,
    open_capture,
)
from gamecodec.capture._records import CaptureError, Direction, Flow, Item, Unit
from gamecodec.capture._tally import FlowStats, OtherFlows, Tally
from gamecodec.capture._tcp import MAX_PENDING
from gamecodec.capture._udp import DatagramDecoder, datagram_decoder

__all__ = ["Capture", "read"]

Source = str | os.PathLike[str] | IO[bytes]

_FIXED_LINK: dict[int, tuple[int, int]] = {1: (12, 14), 113: (14, 16), 276: (0, 20)}
"""Link types whose EtherType is at a fixed place: (its offset, the IP header's)."""
_SWEEP_EVERY = 5.0  # seconds of capture time between looks for idle flows


def _fixed_headers(et_at: int, ip_at: int) -> struct.Struct:
    """The fields the fast path looks at, in one unpack: the EtherType, IPv4's
    version and header length, total length, flags and fragment offset, protocol,
    the addresses and ports (the flow's key) and the UDP length."""
    return struct.Struct(f"!{et_at}xH{ip_at - et_at - 2}xBxH2xHxB2x12sH")


class _UdpFlow:
    __slots__ = ("decode", "flow", "stats")

    def __init__(self, flow: Flow, decoder: DatagramDecoder | None, stats: FlowStats) -> None:
        self.flow = flow
        self.decode = None if decoder is None else decoder.decode
        self.stats = stats


class Capture:
    """A capture being read: iterate it (once) for its items, in capture order.

    Items are :class:`Unit` (one decoded datagram or message) and
    :class:`CaptureError` (something that could not be read or decoded, located
    by packet, flow and offset). Nothing in the capture raises: a bad file,
    packet or flow becomes an error item and reading goes on where it can.
    While and after iterating: :attr:`packets`, :attr:`errors` (by layer in
    :attr:`error_counts`), :attr:`units`, :attr:`flows`, a :class:`FlowStats`
    per flow (what it was taken for and why, and its counts), and
    :attr:`other_flows`. So that memory does not grow with the number of flows
    (a scan, a ``tcpdump -i any`` full of DNS), :attr:`flows` keeps the flows
    taken for a protocol, the flows being followed, and the first
    ``max_other_flows`` flows of no protocol to end; each later flow of no
    protocol is summed in :attr:`other_flows` when it ends.

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
        max_other_flows: int = 1000,
        udp_timeout: float = 300.0,
        tcp_timeout: float = 3600.0,
        max_pending: int = MAX_PENDING,
        max_record: int = MAX_RECORD,
    ) -> None:
        self.overrides: tuple[Override, ...] = tuple(
            p if isinstance(p, Override) else parse_override(p) for p in protocols
        )
        """The overrides, parsed."""
        self.max_flows = max_flows
        self.udp_timeout = udp_timeout
        self.tcp_timeout = tcp_timeout
        self.max_pending = max_pending
        self.max_other_flows = max_other_flows
        self._tally = Tally(max_other_flows)
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
        self._tcp = Connections(self._tally, self.overrides, max_flows, max_pending, tcp_timeout)
        self._defrag = Defragmenter()

    # -- public --

    @property
    def packets(self) -> int:
        """Packets (records) read so far."""
        return self._tally.packets

    @property
    def errors(self) -> int:
        """Error items yielded so far."""
        return self._tally.errors

    @property
    def error_counts(self) -> dict[str, int]:
        """Errors by ``CaptureError.where``."""
        return self._tally.error_counts

    @property
    def flows(self) -> list[FlowStats]:
        """The flows kept so far (see the class), in the order of their first packet."""
        return list(self._tally.flows.values())

    @property
    def other_flows(self) -> OtherFlows:
        """The ended flows of no protocol not in :attr:`flows`: how many, and their counts."""
        return self._tally.other_flows

    @property
    def units(self) -> int:
        """Units yielded so far."""
        return sum(s.units for s in self._tally.flows.values())

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
        return self._tally.error(item)

    def _items(self) -> Iterator[Item]:
        if self._open_error is not None or self._file is None:
            exc = self._open_error or FileError("no file", 0)
            yield self._error(CaptureError("file", exc.message, offset=exc.offset))
            return
        cf = self._file
        slicer = link_slicer(cf.linktype)
        if slicer is None and cf.format != "pcapng":
            yield self._error(
                CaptureError("file", f"link type {cf.linktype} is not read", offset=0)
            )
            cf.close()
            return
        # pcapng: the first interface's packets are each an error, the other interfaces' read
        unread = slicer is None
        # The fast path: an IPv4 UDP datagram of a known flow, no options, no fragment,
        # behind a link header whose EtherType sits at a fixed place.
        et_at, ip_at = _FIXED_LINK.get(cf.linktype, (-1, 0))
        fixed = None if et_at < 0 else _fixed_headers(et_at, ip_at).unpack_from
        min_len = ip_at + 28
        udp = self._udp
        tally = self._tally
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
                    record = next(reader)
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
                tally.packets = n
                ts, buf = record[0], record[1]
                if nano:  # (before the end below: the items at the end take this time)
                    ts = float(ts)
                if guard.short_at is not None:
                    message = "the file ends inside a packet record"
                    file_error = CaptureError("file", message, None, n, offset=guard.short_at)
                    break
                if ts >= next_sweep:
                    tally.now = ts
                    yield from self._sweep(ts)
                    next_sweep = ts + _SWEEP_EVERY
                if len(record) > 2 or unread:  # pcapng: an interface of another link type
                    tally.now = ts
                    yield from self._other_link(
                        ts, n, buf, record[2] if len(record) > 2 else cf.linktype
                    )
                    continue
                if fixed is not None and len(buf) >= min_len:
                    kind, vihl, total, frag, proto, ends, ulen = fixed(buf)
                    if kind == 0x0800 and vihl == 0x45 and proto == 17 and not frag & 0x3FFF:
                        entry = udp.get(ends)
                        end = ip_at + 20 + ulen
                        if entry is not None and ip_at + 28 <= end <= ip_at + total <= len(buf):
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
                tally.now = ts
                assert slicer is not None  # (unread: every packet went to _other_link)
                items = self._packet(ts, n, buf, slicer)
                if items:
                    yield from items
            if file_error is not None:
                yield self._error(file_error)
            yield from self._finish(ts, n)
        finally:
            cf.close()

    def _other_link(self, ts: float, n: int, buf: bytes, linktype: int) -> list[Item]:
        """A pcapng packet whose interface's link type is not the first interface's."""
        slicer = link_slicer(linktype)
        if slicer is not None:
            return self._packet(ts, n, buf, slicer)
        if linktype < 0:
            message = "a packet on an interface the file does not describe"
        else:
            message = f"link type {linktype} is not read"
        return [self._error(CaptureError("link", message, ts, n))]

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
            proto, whole, dropped = self._defrag.reassemble(proto, src, dst, frag, payload, time=ts)
            for frag_key, message in dropped:
                items.append(self._fragment_error(frag_key, message, ts, n))
            if whole is None:
                return items
            payload = whole
        if proto == 17:
            items += self._udp_datagram(src, dst, payload, ts, n)
        elif proto == 6:
            items += self._tcp.segment(src, dst, payload, ts, n)
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
            protocol, reason = verdict(
                guess,
                None if content is None else content.protocol,
                None if content is None else content.why,
            )
            if content is not None:
                version = content.version
                if guess is None or guess.protocol != content.protocol:
                    client_is_src = True
        if client_is_src:
            client, server = address(src, sport), address(dst, dport)
        else:
            client, server = address(dst, dport), address(src, sport)
        flow = Flow("udp", client, server, protocol, reason, self._tally.new_index())
        if protocol is None and guess is not None:
            errors.append(CaptureError("detect", reason, ts, n, flow))
        decoder = None if protocol is None else datagram_decoder(protocol, version)
        stats = FlowStats(flow, first=ts, last=ts)
        stats.errors += len(errors)
        self._tally.add_flow(stats)
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
        stale = {id(s): s for s, _ in self._udp.values() if now - s.stats.last > self.udp_timeout}
        self._forget_udp(stale)
        yield from self._tcp.sweep(now)

    def _evict(self, table: dict[Any, Any], now: float) -> None:
        """Forget the longest idle tenth of the UDP flows."""
        states = sorted({id(s): s for s, _ in table.values()}.values(), key=lambda s: s.stats.last)
        self._forget_udp({id(s): s for s in states[: max(1, len(states) // 10)]})

    def _forget_udp(self, states: dict[int, _UdpFlow]) -> None:
        """Stop following these UDP flows (a later packet starts a new flow)."""
        for key in [k for k, (s, _) in self._udp.items() if id(s) in states]:
            del self._udp[key]
        for state in states.values():
            self._tally.ended(state.stats)

    def _finish(self, ts: float, n: int) -> Iterator[Item]:
        for key, message in self._defrag.flush():
            yield self._fragment_error(key, message, ts, n)
        yield from self._tcp.finish(ts, n)
        self._forget_udp({id(s): s for s, _ in self._udp.values()})


def read(source: Source, *, protocols: Iterable[str | Override] = (), **options: Any) -> Capture:
    """Read a pcap or pcapng capture: a :class:`Capture` to iterate for its items.

    ``source`` is a path or a binary file object (read once, from where it is,
    never seeked). ``protocols`` are overrides such as ``"lludp:udp/9000"``;
    ``options`` are :class:`Capture`'s bounds. A path that cannot be opened
    raises :class:`OSError`; everything wrong inside the capture is an error item.
    """
    return Capture(source, protocols=protocols, **options)
