"""Capture rows of ``gamecodec bench``: a pcap file decoded to Parquet.

The captures are written here, in memory, from the protocols' sample traffic
(:func:`gamecodec.lludp.sample.region_stream`, the Avara capture-like stream):
Ethernet, IPv4 and UDP headers around each datagram, one pcap record each. The
floor is the least any capture tool does: iterating the file's packets with
dpkt's pcap reader and nothing else. gamecodec's side reads the same bytes with
:func:`gamecodec.capture.read` and writes every table to Parquet; two more rows
split that cost: reading and decoding alone, and pyarrow writing the tables'
batches, built beforehand (untimed), alone.
"""

from __future__ import annotations

import importlib.util
import io
import struct
import tempfile
from collections.abc import Iterable
from functools import cache
from typing import Any, cast

from gamecodec._bench import Config, Contest, Lazy, Row, Side, run_all, skipped

__all__ = ["LIMIT", "contests", "pcap_bytes", "rows", "write_pcap"]

LIMIT = 3.0
"""Capture -> Parquet may cost at most this many times the floor."""

_GLOBAL = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")
_IPV4 = struct.Struct("!BBHHHBBH4s4s")
_UDP = struct.Struct("!HHHH")
_ETHERNET = b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00"

Datagram = tuple[float, tuple[str, int], tuple[str, int], bytes]
"""A UDP datagram in a capture: time, source, destination, payload."""


def _checksum(header: bytes) -> int:
    total: int = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _addr(host: str) -> bytes:
    return bytes(int(part) for part in host.split("."))


def write_pcap(out: io.RawIOBase | io.BufferedIOBase, datagrams: Iterable[Datagram]) -> int:
    """Write ``datagrams`` as a pcap file (Ethernet, IPv4, UDP); the bytes written."""
    written = out.write(_GLOBAL.pack(0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)) or 0
    for ident, (time, (src, sport), (dst, dport), payload) in enumerate(datagrams):
        udp = _UDP.pack(sport, dport, 8 + len(payload), 0)
        head = _IPV4.pack(
            0x45, 0, 28 + len(payload), ident & 0xFFFF, 0, 64, 17, 0, _addr(src), _addr(dst)
        )
        head = head[:10] + struct.pack("!H", _checksum(head)) + head[12:]
        frame = _ETHERNET + head + udp + payload
        seconds = int(time)
        record = _RECORD.pack(seconds, round((time - seconds) * 1e6), len(frame), len(frame))
        written += out.write(record + frame) or 0
    return written


def pcap_bytes(datagrams: Iterable[Datagram]) -> bytes:
    """``datagrams`` as the bytes of a pcap file."""
    out = io.BytesIO()
    write_pcap(out, datagrams)
    return out.getvalue()


_VIEWER_SENDS = frozenset({"AgentUpdate", "PacketAck", "ChatFromViewer", "AgentAnimation"})


@cache
def lludp_capture(count: int) -> bytes:
    """A region's traffic: ``count`` datagrams between a viewer and a simulator."""
    from gamecodec import lludp
    from gamecodec.lludp.sample import region_stream

    viewer, sim = ("10.0.0.2", 50_000), ("10.0.0.1", 9000)
    return pcap_bytes(
        (
            1.7e9 + n * 0.002,
            *((viewer, sim) if m.name in _VIEWER_SENDS else (sim, viewer)),
            lludp.encode(m),
        )
        for n, m in enumerate(region_stream(count))
    )


@cache
def avara_capture(count: int) -> bytes:
    """An Avara game's traffic: ``count`` datagrams between five players and a server."""
    from gamecodec.avara.sample import capture_stream

    server = ("10.0.0.1", 19567)
    return pcap_bytes(
        (1.7e9 + n * 0.001, (f"10.0.0.{10 + n % 5}", 50_000 + n % 5), server, data)
        for n, data in enumerate(capture_stream(count))
    )


def _contests(protocol: str, data: bytes, count: int, out: str) -> list[Contest]:
    import dpkt  # type: ignore[import-untyped]

    from gamecodec.capture import read
    from gamecodec.capture._output import TableFiles, write_tables
    from gamecodec.capture._tables import record_batches

    def floor(_: object) -> int:
        n = 0
        for _record in dpkt.pcap.Reader(io.BytesIO(data)):
            n += 1
        return n

    def ours(_: object) -> object:
        return write_tables(read(io.BytesIO(data)), out)

    def read_only(_: object) -> int:
        n = 0
        for _item in read(io.BytesIO(data)):
            n += 1
        return n

    batches = Lazy(lambda: list(record_batches(io.BytesIO(data))))

    def write_only(_: object) -> dict[str, int]:
        with TableFiles(out, "parquet") as files:
            for table, batch in cast(list[tuple[str, Any]], batches.get()):
                files.write(table, batch)
        return files.rows

    workload = f"{count:,} datagrams, {len(data) / 1e6:.1f} MB pcap"
    floor_side = Side("dpkt.pcap.Reader", floor)
    return [
        Contest(
            "capture",
            f"{protocol} capture -> Parquet vs iterating its packets with dpkt",
            workload,
            count,
            "packet",
            Side("read + write_tables", ours),
            floor_side,
            kind="cost",
            limit=LIMIT,
        ),
        Contest(
            "capture",
            f"{protocol} capture read and decoded, no tables, vs the same floor",
            workload,
            count,
            "packet",
            Side("read", read_only),
            floor_side,
            kind="cost",
        ),
        Contest(
            "capture",
            f"{protocol} tables, already built, written to Parquet vs the same floor",
            workload,
            count,
            "packet",
            Side("TableFiles.write", write_only, finish=batches.drop),
            floor_side,
            kind="cost",
        ),
    ]


def contests(config: Config, out: str) -> list[Contest | Row]:
    """The capture contests (Parquet files go to ``out``)."""
    missing = [name for name in ("dpkt", "pyarrow") if importlib.util.find_spec(name) is None]
    if missing:
        why = f"needs gamecodec[capture] ({', '.join(missing)} missing)"
        return [
            row
            for p in ("lludp", "avara")
            for row in (
                skipped(
                    "capture",
                    f"{p} capture -> Parquet vs iterating its packets with dpkt",
                    why,
                    peer="dpkt.pcap.Reader",
                    kind="cost",
                    limit=LIMIT,
                ),
                skipped(
                    "capture",
                    f"{p} capture read and decoded, no tables, vs the same floor",
                    why,
                    peer="dpkt.pcap.Reader",
                    kind="cost",
                ),
                skipped(
                    "capture",
                    f"{p} tables, already built, written to Parquet vs the same floor",
                    why,
                    peer="dpkt.pcap.Reader",
                    kind="cost",
                ),
            )
        ]
    count = config.size(5_000, 50_000)
    config.say(f"capture: writing LLUDP and Avara captures of {count:,} datagrams ...")
    return [
        *_contests("lludp", lludp_capture(count), count, out),
        *_contests("avara", avara_capture(count), count, out),
    ]


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    with tempfile.TemporaryDirectory(prefix="gamecodec-bench-") as out:
        return run_all(contests(config, out), config)
