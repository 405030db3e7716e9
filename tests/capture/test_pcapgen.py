"""The test helper writes captures dpkt reads back as written."""

from __future__ import annotations

import io

import dpkt
import pytest

from tests.capture import pcapgen

A, B = ("10.0.0.2", 51712), ("10.0.0.1", 9000)


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
@pytest.mark.parametrize("link", sorted(pcapgen.LINKTYPES))
def test_round_trip_through_dpkt(fmt: str, link: pcapgen.Link) -> None:
    packets = [pcapgen.udp(1.25, A, B, b"abc"), pcapgen.udp(2.5, ("::1", 5), ("::2", 6), b"v6")]
    data = pcapgen.capture(packets, fmt=fmt, link=link)
    reader = dpkt.pcap.UniversalReader(io.BytesIO(data))
    assert reader.datalink() == pcapgen.LINKTYPES[link]
    got = list(reader)
    assert [t for t, _ in got] == pytest.approx([1.25, 2.5])
    assert got[0][1].endswith(b"abc") and got[1][1].endswith(b"v6")


def test_fragments_and_snap() -> None:
    frames = pcapgen.frames(pcapgen.udp(1.0, A, B, bytes(100), fragment=32))
    assert len(frames) == 4  # 108 bytes of UDP in 32-byte fragments
    ((snapped, length),) = pcapgen.frames(pcapgen.udp(1.0, A, B, bytes(100), snap=40))
    assert len(snapped) == 40 and length == 14 + 20 + 8 + 100


def test_tcp_connection_numbers_segments() -> None:
    conn = pcapgen.TcpConnection(A, B)
    packets = conn.open() + conn.send("to_server", b"abcdef", segment=4) + conn.close()
    data = [p for p in packets if p.payload]
    assert [(p.seq, p.payload) for p in data] == [(1001, b"abcd"), (1005, b"ef")]
    assert packets[-2].ack == 1008
