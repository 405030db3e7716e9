"""Write pcap and pcapng captures for tests, with dpkt's writers.

A capture is a list of :class:`Packet` (time, source, destination, transport,
payload, plus the TCP and IP details a test wants to control), written with a
chosen link type and file format::

    from tests.capture import pcapgen

    a, b = ("10.0.0.2", 51712), ("10.0.0.1", 9000)
    packets = [pcapgen.udp(1.0, a, b, datagram), pcapgen.udp(1.1, b, a, reply)]
    data = pcapgen.capture(packets, fmt="pcapng", link="sll2")   # the file's bytes
    pcapgen.write(tmp_path / "x.pcap", packets)                  # or a file

TCP: :class:`TcpConnection` numbers the segments of one connection so a test
can then reorder, repeat, drop or overlap them (they are plain list items)::

    conn = pcapgen.TcpConnection(client=a, server=b, time=1.0)
    packets = conn.open()                      # SYN, SYN-ACK, ACK
    packets += conn.send("to_server", b"mytanks\\n", segment=3)   # 3-byte segments
    packets += conn.send("to_client", b"ack 1.0\\n")
    packets += conn.close()                    # FIN from each side
    packets[4], packets[5] = packets[5], packets[4]          # out of order

A host with a ``:`` is IPv6, else IPv4. ``Packet.fragment`` splits an IPv4
packet into fragments of that many payload bytes (a multiple of 8);
``Packet.snap`` keeps only that many bytes of the link-layer frame (the record
keeps the original length, as tcpdump ``-s`` does).

IPv6 extension headers: ``Packet.v6_unfragmentable`` and ``Packet.v6_extensions``
are the types of the headers before and after where a Fragment header goes
(Hop-by-Hop 0, Routing 43, Destination Options 60, Authentication 51);
``Packet.v6_fragment`` splits the Fragmentable Part (``v6_extensions`` and the
UDP or TCP segment) into fragments of that many bytes (a multiple of 8; as many
as the part or more: one atomic fragment, offset 0 and M=0)::

    pcapgen.udp(1.0, a, b, datagram, v6_unfragmentable=(0, 43),
                v6_extensions=(60,), v6_fragment=64)
"""

from __future__ import annotations

import io
import socket
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, Literal

import dpkt

Link = Literal["ethernet", "sll", "sll2", "raw", "null", "loop"]
"""Link types: Ethernet, Linux cooked v1 and v2, raw IP, BSD loopback (host and network order)."""

LINKTYPES: dict[str, int] = {
    "ethernet": 1,
    "sll": 113,
    "sll2": 276,
    "raw": 101,
    "null": 0,
    "loop": 108,
}
"""The LINKTYPE_ number written in the file for each link type."""

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


@dataclass(frozen=True)
class Packet:
    """One packet to write: an IP datagram carrying one UDP datagram or TCP segment."""

    time: float
    src: tuple[str, int]
    dst: tuple[str, int]
    transport: Literal["udp", "tcp"]
    payload: bytes = b""
    seq: int = 0
    """TCP sequence number of the first payload byte (or of the SYN/FIN)."""
    ack: int = 0
    flags: int = PSH | ACK
    """TCP flags (``pcapgen.SYN | pcapgen.ACK``, ...)."""
    ip_id: int = 1
    fragment: int | None = None
    """IPv4 only: split into fragments carrying this many bytes of IP payload each."""
    snap: int | None = None
    """Keep only this many bytes of the link-layer frame in the capture."""
    v6_unfragmentable: tuple[int, ...] = ()
    """IPv6 only: extension headers before the Fragment header (or the others)."""
    v6_extensions: tuple[int, ...] = ()
    """IPv6 only: extension headers that begin the Fragmentable Part."""
    v6_fragment: int | None = None
    """IPv6 only: split the Fragmentable Part into fragments of this many bytes."""


def udp(
    time: float, src: tuple[str, int], dst: tuple[str, int], payload: bytes, **kw: object
) -> Packet:
    """A UDP datagram (``kw``: other :class:`Packet` fields: ``fragment``, ``snap``, ``ip_id``)."""
    return Packet(time, src, dst, "udp", payload, **kw)  # type: ignore[arg-type]


def tcp(
    time: float,
    src: tuple[str, int],
    dst: tuple[str, int],
    payload: bytes = b"",
    *,
    seq: int,
    ack: int = 0,
    flags: int = PSH | ACK,
    **kw: object,
) -> Packet:
    """A TCP segment with the given sequence number, ack and flags."""
    return Packet(time, src, dst, "tcp", payload, seq, ack, flags, **kw)  # type: ignore[arg-type]


class TcpConnection:
    """Numbers the segments of one TCP connection (client ``isn`` 1000, server 5000 by default).

    Each call returns new packets and advances the clock by ``step`` per packet;
    the sequence numbers are those a real stack would use, so a test can shuffle,
    repeat or drop the returned packets to make reordering, retransmission or loss.
    """

    def __init__(
        self,
        client: tuple[str, int],
        server: tuple[str, int],
        *,
        time: float = 1.0,
        step: float = 0.001,
        client_isn: int = 1000,
        server_isn: int = 5000,
    ) -> None:
        self.client, self.server = client, server
        self.time, self.step = time, step
        self.next_seq = {"to_server": client_isn, "to_client": server_isn}

    def _ends(self, direction: str) -> tuple[tuple[str, int], tuple[str, int], str]:
        if direction == "to_server":
            return self.client, self.server, "to_client"
        return self.server, self.client, "to_server"

    def _tick(self) -> float:
        self.time += self.step
        return self.time

    def segment(
        self, direction: str, payload: bytes, flags: int = PSH | ACK, **kw: object
    ) -> Packet:
        """One segment of ``payload`` in ``direction`` (``"to_server"``/``"to_client"``)."""
        src, dst, other = self._ends(direction)
        seq = self.next_seq[direction]
        self.next_seq[direction] = (
            seq + len(payload) + (1 if flags & (SYN | FIN) else 0)
        ) & 0xFFFFFFFF
        ack = self.next_seq[other] if flags & ACK else 0
        return tcp(self._tick(), src, dst, payload, seq=seq, ack=ack, flags=flags, **kw)

    def open(self) -> list[Packet]:
        """The three-way handshake."""
        return [
            self.segment("to_server", b"", SYN),
            self.segment("to_client", b"", SYN | ACK),
            self.segment("to_server", b"", ACK),
        ]

    def send(self, direction: str, data: bytes, segment: int = 1400) -> list[Packet]:
        """``data`` in ``direction``, cut into segments of at most ``segment`` bytes."""
        return [
            self.segment(direction, data[i : i + segment]) for i in range(0, len(data), segment)
        ]

    def close(self) -> list[Packet]:
        """A FIN from each side, each acknowledged."""
        return [
            self.segment("to_server", b"", FIN | ACK),
            self.segment("to_client", b"", FIN | ACK),
            self.segment("to_server", b"", ACK),
        ]


def _is_v6(host: str) -> bool:
    return ":" in host


def _transport_bytes(p: Packet) -> bytes:
    if p.transport == "udp":
        seg: dpkt.Packet = dpkt.udp.UDP(
            sport=p.src[1], dport=p.dst[1], ulen=8 + len(p.payload), data=p.payload
        )
    else:
        seg = dpkt.tcp.TCP(
            sport=p.src[1], dport=p.dst[1], seq=p.seq, ack=p.ack, flags=p.flags, data=p.payload
        )
    return bytes(seg)


def ip_packets(p: Packet) -> list[bytes]:
    """The IP datagram (or its IPv4 fragments) of ``p``, checksums filled in."""
    proto = 17 if p.transport == "udp" else 6
    if _is_v6(p.src[0]) and (p.v6_unfragmentable or p.v6_extensions or p.v6_fragment):
        return _ipv6_with_extensions(p, proto)
    if _is_v6(p.src[0]):
        seg = dpkt.udp.UDP if p.transport == "udp" else dpkt.tcp.TCP
        ip6 = dpkt.ip6.IP6(
            src=socket.inet_pton(socket.AF_INET6, p.src[0]),
            dst=socket.inet_pton(socket.AF_INET6, p.dst[0]),
            nxt=proto,
            hlim=64,
            data=seg(_transport_bytes(p)),
        )
        ip6.plen = len(bytes(ip6.data))
        return [bytes(ip6)]
    src = socket.inet_pton(socket.AF_INET, p.src[0])
    dst = socket.inet_pton(socket.AF_INET, p.dst[0])
    # Build once with dpkt so the transport checksum covers the pseudo-header.
    seg_cls = dpkt.udp.UDP if p.transport == "udp" else dpkt.tcp.TCP
    whole = bytes(
        dpkt.ip.IP(src=src, dst=dst, p=proto, id=p.ip_id, data=seg_cls(_transport_bytes(p)))
    )
    if p.fragment is None:
        return [whole]
    if p.fragment <= 0 or p.fragment % 8:
        raise ValueError("fragment size must be a positive multiple of 8")
    body = whole[20:]
    out = []
    for start in range(0, len(body), p.fragment):
        part = body[start : start + p.fragment]
        more = start + p.fragment < len(body)
        off = (start // 8) | (dpkt.ip.IP_MF if more else 0)
        out.append(
            bytes(dpkt.ip.IP(src=src, dst=dst, p=proto, id=p.ip_id, _flags_offset=off, data=part))
        )
    return out


_V6_EXTENSION_SIZE = {0: 8, 43: 24, 51: 24, 60: 16}


def ipv6_extension(kind: int, next_header: int, size: int | None = None) -> bytes:
    """An IPv6 extension header of type ``kind`` (0, 43, 51, 60, or any with the
    generic layout) followed by ``next_header``, ``size`` bytes long (a multiple of 8).

    Options headers carry PadN; a Routing header is a type 2 with Segments Left 0
    (so a node passes over it); an Authentication header has a zero ICV.
    """
    size = _V6_EXTENSION_SIZE.get(kind, 8) if size is None else size
    if size < 8 or size % 8:
        raise ValueError("an IPv6 extension header is a multiple of 8 bytes, at least 8")
    if kind == 51:
        return (
            bytes([next_header, size // 4 - 2, 0, 0])
            + struct.pack(">II", 0x100, 1)
            + bytes(size - 12)
        )
    if kind == 43:
        return bytes([next_header, size // 8 - 1, 2, 0]) + bytes(size - 4)
    return bytes([next_header, size // 8 - 1, 1, size - 4]) + bytes(size - 4)  # PadN


def ipv6_header(src: str, dst: str, next_header: int, payload_length: int) -> bytes:
    """A 40-byte IPv6 header."""
    return (
        struct.pack(">IHBB", 6 << 28, payload_length, next_header, 64)
        + socket.inet_pton(socket.AF_INET6, src)
        + socket.inet_pton(socket.AF_INET6, dst)
    )


def ipv6_fragment_header(next_header: int, offset: int, more: bool, ident: int) -> bytes:
    """An IPv6 Fragment header (``offset`` in bytes, a multiple of 8)."""
    return struct.pack(">BBHI", next_header, 0, offset | int(more), ident)


def _chain(kinds: Sequence[int], last: int) -> bytes:
    """Extension headers of ``kinds`` in turn, the last one followed by ``last``."""
    out = b""
    for k, kind in enumerate(kinds):
        out += ipv6_extension(kind, kinds[k + 1] if k + 1 < len(kinds) else last)
    return out


def _ipv6_with_extensions(p: Packet, proto: int) -> list[bytes]:
    """An IPv6 packet with extension headers (or its fragments), checksums filled in."""
    plain = replace(p, v6_unfragmentable=(), v6_extensions=(), v6_fragment=None)
    segment = ip_packets(plain)[0][40:]  # the checksum covers the pseudo-header only
    fragmentable = _chain(p.v6_extensions, proto) + segment
    first_of_part = p.v6_extensions[0] if p.v6_extensions else proto
    if p.v6_fragment is None:
        headers = _chain(p.v6_unfragmentable, first_of_part)
        nxt = p.v6_unfragmentable[0] if p.v6_unfragmentable else first_of_part
        body = headers + fragmentable
        return [ipv6_header(p.src[0], p.dst[0], nxt, len(body)) + body]
    if p.v6_fragment <= 0 or p.v6_fragment % 8:
        raise ValueError("fragment size must be a positive multiple of 8")
    headers = _chain(p.v6_unfragmentable, 44)
    nxt = p.v6_unfragmentable[0] if p.v6_unfragmentable else 44
    out = []
    for start in range(0, len(fragmentable), p.v6_fragment):
        part = fragmentable[start : start + p.v6_fragment]
        more = start + p.v6_fragment < len(fragmentable)
        body = headers + ipv6_fragment_header(first_of_part, start, more, p.ip_id) + part
        out.append(ipv6_header(p.src[0], p.dst[0], nxt, len(body)) + body)
    return out


def link_frame(ip: bytes, link: Link) -> bytes:
    """``ip`` wrapped in a link-layer header of type ``link``."""
    v6 = ip[0] >> 4 == 6
    ethertype = 0x86DD if v6 else 0x0800
    if link == "ethernet":
        return bytes(
            dpkt.ethernet.Ethernet(
                dst=b"\x02\x00\x00\x00\x00\x01",
                src=b"\x02\x00\x00\x00\x00\x02",
                type=ethertype,
                data=ip,
            )
        )
    if link == "sll":
        return bytes(
            dpkt.sll.SLL(
                type=0,
                hrd=1,
                hlen=6,
                hdr=b"\x02\x00\x00\x00\x00\x02\x00\x00",
                ethtype=ethertype,
                data=ip,
            )
        )
    if link == "sll2":
        return bytes(
            dpkt.sll2.SLL2(
                ethtype=ethertype,
                intindex=1,
                hrd=1,
                type=0,
                hlen=6,
                hdr=b"\x02\x00\x00\x00\x00\x02\x00\x00",
                data=ip,
            )
        )
    if link == "raw":
        return ip
    family = 30 if v6 else 2  # AF_INET6 as macOS writes it, AF_INET
    if link == "null":
        return struct.pack("=I", family) + ip
    if link == "loop":
        return struct.pack(">I", family) + ip
    raise ValueError(f"unknown link type {link!r}")


def frames(p: Packet, link: Link = "ethernet") -> list[tuple[bytes, int]]:
    """The link-layer frames of ``p`` as ``(captured bytes, original length)``."""
    out = []
    for ip in ip_packets(p):
        frame = link_frame(ip, link)
        out.append((frame if p.snap is None else frame[: p.snap], len(frame)))
    return out


def write_to(
    out: BinaryIO,
    packets: Iterable[Packet],
    *,
    fmt: Literal["pcap", "pcapng"] = "pcap",
    link: Link = "ethernet",
    nano: bool = False,
    snaplen: int = 65535,
) -> None:
    """Write ``packets`` as a capture to the binary file ``out``."""
    linktype = LINKTYPES[link]
    if fmt == "pcap":
        writer = dpkt.pcap.Writer(out, snaplen=snaplen, linktype=linktype, nano=nano)
        scale = 10**9 if nano else 10**6
        hdr = dpkt.pcap.LEPktHdr if struct.pack("=H", 1) == b"\x01\x00" else dpkt.pcap.PktHdr
        for p in packets:
            for data, length in frames(p, link):
                ticks = round(p.time * scale)
                out.write(
                    bytes(
                        hdr(
                            tv_sec=ticks // scale,
                            tv_usec=ticks % scale,
                            caplen=len(data),
                            len=length,
                        )
                    )
                    + data
                )
        del writer
    elif fmt == "pcapng":
        writer_ng = dpkt.pcapng.Writer(out, snaplen=snaplen, linktype=linktype)
        little = struct.pack("=H", 1) == b"\x01\x00"
        epb_cls = dpkt.pcapng.EnhancedPacketBlockLE if little else dpkt.pcapng.EnhancedPacketBlock
        order = "<I" if little else ">I"
        for p in packets:
            for data, length in frames(p, link):
                ticks = round(p.time * 10**6)
                block = bytearray(
                    bytes(epb_cls(ts_high=ticks >> 32, ts_low=ticks & 0xFFFFFFFF, pkt_data=data))
                )
                struct.pack_into(order, block, 24, length)  # dpkt writes pkt_len = caplen
                out.write(bytes(block))
        del writer_ng
    else:
        raise ValueError(f"unknown format {fmt!r}")


def capture(packets: Sequence[Packet], **kw: object) -> bytes:
    """The bytes of a capture of ``packets`` (``kw`` as :func:`write_to`)."""
    out = io.BytesIO()
    write_to(out, packets, **kw)  # type: ignore[arg-type]
    return out.getvalue()


def write(path: str | Path, packets: Sequence[Packet], **kw: object) -> Path:
    """Write a capture of ``packets`` to ``path`` (``kw`` as :func:`write_to`); returns the path."""
    path = Path(path)
    with path.open("wb") as out:
        write_to(out, packets, **kw)  # type: ignore[arg-type]
    return path


def shifted(packets: Sequence[Packet], dt: float) -> list[Packet]:
    """``packets`` with their times moved by ``dt`` seconds."""
    return [replace(p, time=p.time + dt) for p in packets]
