"""Bad captures: a counted, located error for what is wrong and the rest decoded;
never an exception, a hang or memory that grows with the damage."""

from __future__ import annotations

import io
import random
import struct
import time
import tracemalloc
from pathlib import Path

import pytest

from gamecodec import capture, lludp
from tests.capture import pcapgen
from tests.capture.conftest import CLIENT, SERVER, lludp_wires


def _packets() -> list[pcapgen.Packet]:
    return [pcapgen.udp(10.0 + k, CLIENT, SERVER, w) for k, w in enumerate(lludp_wires())]


def _read(data: bytes, **options: object) -> tuple[capture.Capture, list[capture.Item]]:
    cap = capture.read(io.BytesIO(data), **options)  # type: ignore[arg-type]
    return cap, list(cap)


def _split(items: list[capture.Item]) -> tuple[list[capture.Unit], list[capture.CaptureError]]:
    units = [i for i in items if isinstance(i, capture.Unit)]
    errors = [i for i in items if isinstance(i, capture.CaptureError)]
    return units, errors


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_truncated_file_at_every_cut(fmt: str) -> None:
    packets = _packets()[:6]
    data = pcapgen.capture(packets, fmt=fmt)
    whole = len(_split(_read(data)[1])[0])
    header = 24 if fmt == "pcap" else 28 + 32  # file header (pcapng: section + interface block)
    for cut in range(header + 1, len(data)):
        cap, items = _read(data[:cut])
        units, errors = _split(items)
        assert len(units) < whole or cut == len(data)
        if errors:
            [error] = errors
            assert error.where == "file" and error.offset is not None and error.offset <= cut
            assert error.packet == len(units) + 1
        assert cap.errors == len(errors)
        # every datagram before the cut decodes as it should
        assert [u.payload for u in units] == [p.payload for p in packets[: len(units)]]


def test_truncated_inside_a_record_is_located() -> None:
    data = pcapgen.capture(_packets()[:3])
    first_record = 24 + 16 + len(pcapgen.frames(_packets()[0])[0][0])
    cap, items = _read(data[: first_record + 20])
    units, errors = _split(items)
    assert len(units) == 1
    assert [(e.where, e.message, e.packet, e.offset) for e in errors] == [
        ("file", "the file ends inside a packet record", 2, first_record + 16)
    ]
    assert cap.error_counts == {"file": 1}


def test_not_a_capture() -> None:
    cap, items = _read(b"GIF89a" + bytes(100))
    assert [(i.where, i.offset) for i in items] == [("file", 0)]  # type: ignore[union-attr]
    assert cap.format is None and cap.errors == 1


def test_empty_file() -> None:
    _cap, items = _read(b"")
    assert [i.where for i in items] == ["file"]  # type: ignore[union-attr]


def test_unsupported_link_type() -> None:
    data = bytearray(pcapgen.capture(_packets()[:2]))
    struct.pack_into("<I", data, 20, 147)  # LINKTYPE_USER0
    _cap, items = _read(bytes(data))
    [error] = items
    assert isinstance(error, capture.CaptureError) and "link type 147" in error.message


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_a_huge_record_length_is_refused_not_read(fmt: str) -> None:
    packets = _packets()[:3]
    data = bytearray(pcapgen.capture(packets, fmt=fmt))
    size = len(pcapgen.capture(packets[:1], fmt=fmt))  # where the second record starts
    if fmt == "pcap":
        struct.pack_into("<I", data, size + 8, 0xFFFFFFF0)  # caplen
    else:
        struct.pack_into("<I", data, size + 4, 0xFFFFFFF0)  # block length
    tracemalloc.start()
    _cap, items = _read(bytes(data))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    units, errors = _split(items)
    assert len(units) == 1
    [error] = errors
    assert error.where == "file" and error.packet == 2 and error.offset == size
    assert peak < 8 << 20


def test_snapped_packets_are_errors_and_the_rest_decodes() -> None:
    packets = _packets()
    snapped = {3, 7}
    data = pcapgen.capture(
        [pcapgen.udp(p.time, p.src, p.dst, p.payload, snap=50 if k in snapped else None)
         for k, p in enumerate(packets)]
    )  # fmt: skip
    cap, items = _read(data)
    units, errors = _split(items)
    assert [e.packet for e in errors] == [k + 1 for k in sorted(snapped)]
    assert all(e.where == "ip" and "snapped" in e.message for e in errors)
    assert [u.payload for u in units] == [
        p.payload for k, p in enumerate(packets) if k not in snapped
    ]
    assert cap.error_counts == {"ip": 2}


def test_snapped_link_header() -> None:
    data = pcapgen.capture([pcapgen.udp(1.0, CLIENT, SERVER, b"x", snap=10)])
    _cap, items = _read(data)
    assert [(i.where, i.packet) for i in items] == [("link", 1)]  # type: ignore[union-attr]


def test_garbage_datagram_in_a_flow() -> None:
    packets = _packets()
    bad = b"\x40\x00\x00\x00\x07"  # shorter than a header
    mixed = [*packets[:5], pcapgen.udp(15.5, CLIENT, SERVER, bad), *packets[5:]]
    with pytest.raises(lludp.DecodeError) as expected:
        lludp.decode(bad, strict=False)
    _cap, items = _read(pcapgen.capture(mixed))
    units, errors = _split(items)
    assert len(units) == len(packets)
    [error] = errors
    assert (error.where, error.packet, error.offset) == ("decode", 6, expected.value.offset)
    assert error.flow is not None and error.flow.protocol == "lludp"


def test_garbage_lines_in_a_bzrc_stream() -> None:
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 47200))
    packets = conn.open() + conn.send("to_client", b"bzrobots 1\n")
    packets += conn.send("to_server", b"agent 1\nteams\n")
    packets += conn.send("to_client", b"ack 1.0 teams\nbegin\n\x00\xffgarbage\nend\n")
    packets += conn.send("to_server", b"timer\n")
    packets += conn.send("to_client", b"ack 2.0 timer\ntimer 2.5 300\n")
    _cap, items = _read(pcapgen.capture(packets + conn.close()))
    units, errors = _split(items)
    [error] = errors
    assert error.where == "decode" and error.direction == "to_client"
    assert error.offset == len(b"bzrobots 1\nack 1.0 teams\nbegin\n")
    names = [u.names[0] for u in units if u.direction == "to_client"]
    assert names == ["Greeting", "Timer"]  # back in step at the next ack


def test_another_protocol_on_a_known_port() -> None:
    dns = bytes.fromhex("1234010000010000000000000377777706676f6f676c6503636f6d0000010001")
    packets = [pcapgen.udp(1.0 + k, CLIENT, SERVER, dns) for k in range(5)]
    cap, items = _read(pcapgen.capture(packets))
    units, errors = _split(items)
    assert units == []
    [error] = errors
    assert error.where == "detect" and error.packet == 1
    assert "udp/9000" in error.message and "not lludp" in error.message
    [stats] = cap.flows
    assert stats.flow.protocol is None and stats.packets == 5 and stats.errors == 1


def test_http_on_the_archipelago_port() -> None:
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 38281))
    packets = conn.open() + conn.send("to_server", b"POST /login HTTP/1.1\r\nHost: x\r\n\r\n")
    packets += conn.send("to_client", b"HTTP/1.1 404 Not Found\r\n\r\n") + conn.close()
    cap, items = _read(pcapgen.capture(packets))
    [error] = items
    assert isinstance(error, capture.CaptureError) and error.where == "detect"
    assert cap.flows[0].flow.protocol is None


@pytest.mark.parametrize("seed", range(4))
def test_random_damage_never_raises_or_hangs(seed: int) -> None:
    rng = random.Random(seed)
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 47200))
    packets = _packets() + conn.open() + conn.send("to_client", b"bzrobots 1\n")
    packets += conn.send("to_server", b"mytanks\n" * 50, segment=17)
    for fmt in ("pcap", "pcapng"):
        data = bytearray(pcapgen.capture(packets, fmt=fmt))
        for _ in range(40):
            data[rng.randrange(len(data))] = rng.randrange(256)
        start = time.monotonic()
        cap, items = _read(bytes(data))
        assert time.monotonic() - start < 10
        assert cap.errors == sum(isinstance(i, capture.CaptureError) for i in items)


@pytest.mark.parametrize("seed", range(3))
def test_random_bytes_as_packets(seed: int) -> None:
    """Frames of random bytes behind a valid file header: errors or nothing, never an exception."""
    import dpkt

    rng = random.Random(seed)
    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, linktype=101)
    for k in range(2000):
        frame = bytearray(rng.randbytes(rng.randrange(0, 120)))
        if frame and k % 2:
            frame[0] = rng.choice((0x45, 0x46, 0x60))
        writer.writepkt(bytes(frame), ts=k * 0.01)
    cap, items = _read(out.getvalue())
    assert cap.packets == 2000
    assert cap.errors == sum(isinstance(i, capture.CaptureError) for i in items)


def test_many_flows_are_bounded() -> None:
    """A scan of many address pairs: at most max_flows are followed at once."""
    wire = lludp_wires()[0]
    packets = [
        pcapgen.udp(1.0 + k * 0.001, ("10.1.0.1", 1024 + k), SERVER, wire) for k in range(3000)
    ]
    cap = capture.Capture(io.BytesIO(pcapgen.capture(packets)), max_flows=100)
    peak = 0
    for _item in cap:
        peak = max(peak, len(cap._udp))
    assert peak <= 2 * 100
    assert len(cap.flows) == 3000 and cap.units == 3000


def test_fragments_are_bounded() -> None:
    """Many first fragments that never complete: a bounded number held, the rest reported."""
    wire = max(lludp_wires(), key=len)
    packets = [
        pcapgen.udp(1.0 + k * 0.001, CLIENT, SERVER, wire, fragment=64, ip_id=k)
        for k in range(3000)
    ]
    frames = [pcapgen.frames(p)[0] for p in packets]  # first fragments only
    import dpkt

    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out)
    for k, (frame, _length) in enumerate(frames):
        writer.writepkt(frame, ts=1.0 + k * 0.001)
    cap = capture.read(io.BytesIO(out.getvalue()))
    peak = 0
    for _item in cap:
        peak = max(peak, len(cap._defrag))
    assert peak <= 1024
    assert cap.error_counts == {"ip": 3000}


def test_idle_flows_time_out_and_a_later_packet_is_a_new_flow() -> None:
    wire = lludp_wires()[0]
    packets = [pcapgen.udp(t, CLIENT, SERVER, wire) for t in (1.0, 2.0, 500.0)]
    _cap, items = _read(pcapgen.capture(packets), udp_timeout=60.0)
    units, _errors = _split(items)
    assert [u.flow.index for u in units] == [1, 1, 2]


def test_an_unrecognised_stream_of_tiny_segments_reads_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Detection looks at a direction's first bytes only when they grow, up to 4 KiB."""
    from gamecodec.capture import _connections

    calls = []
    real = _connections.tcp_content
    monkeypatch.setattr(
        _connections, "tcp_content", lambda data: calls.append(len(data)) or real(data)
    )
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 41000))
    packets = conn.open() + conn.send("to_server", bytes(range(256)) * 40, segment=1)
    cap, items = _read(pcapgen.capture(packets))
    assert items == [] and cap.flows[0].flow.protocol is None
    assert len(calls) <= 4096 and max(calls) <= 4096


def test_a_packet_in_thousands_of_tiny_fragments() -> None:
    """At most 1,024 fragments are held for one packet: no quadratic reassembly."""
    frames = pcapgen.frames(pcapgen.udp(1.0, CLIENT, SERVER, bytes(24_000), fragment=8))
    import dpkt

    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out)
    for k, (frame, _length) in enumerate(frames[:-1]):  # the last never comes
        writer.writepkt(frame, ts=1.0 + k * 1e-5)
    start = time.monotonic()
    cap, items = _read(out.getvalue())
    assert time.monotonic() - start < 30
    units, errors = _split(items)
    assert units == [] and {e.where for e in errors} == {"ip"}
    assert any("too many" in e.message for e in errors)
    assert cap.packets == len(frames) - 1


def _one_datagram_flows(path: Path, count: int) -> Path:
    """A capture of ``count`` DNS-like flows of one datagram each (no protocol of ours)."""
    query = bytes.fromhex("1234010000010000000000000377777706676f6f676c6503636f6d0000010001")
    packets = (
        pcapgen.udp(
            1.0 + k * 0.001,
            (f"10.{k >> 16 & 255}.{k >> 8 & 255}.{k & 255}", 50000 + k % 10000),
            ("10.255.0.1", 53),
            query,
        )
        for k in range(count)
    )
    with open(path, "wb") as out:
        pcapgen.write_to(out, packets)
    return path


def _read_flows(path: Path) -> tuple[capture.Capture, int]:
    """Read the capture at ``path``: it and the peak of memory allocated while reading it."""
    tracemalloc.start()
    try:
        with open(path, "rb") as stream:
            cap = capture.Capture(stream, max_flows=1000)
            items = sum(1 for _item in cap)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert items == 0
    return cap, peak


@pytest.mark.parametrize(
    "counts", [(2_000, 20_000), pytest.param((5_000, 50_000), marks=pytest.mark.slow)]
)
def test_flows_of_no_protocol_are_summed_and_memory_stays_flat(
    tmp_path: Path, counts: tuple[int, int]
) -> None:
    """Ten times the flows of no protocol: the same memory, every packet and byte counted."""
    peaks = []
    for count in counts:
        cap, peak = _read_flows(_one_datagram_flows(tmp_path / f"{count}.pcap", count))
        peaks.append(peak)
        kept = cap.flows
        other = cap.other_flows
        assert len(kept) == cap.max_other_flows == 1000
        assert {s.flow.protocol for s in kept} == {None}
        assert [s.flow.index for s in kept] == sorted(s.flow.index for s in kept)
        assert other.flows + len(kept) == count == cap.packets
        assert other.packets + sum(s.packets for s in kept) == count
        assert other.bytes + sum(s.bytes for s in kept) == 32 * count
        assert other.errors == cap.errors == cap.units == 0
        assert other.first is not None and other.last == pytest.approx(1.0 + (count - 1) * 0.001)
    assert peaks[1] < peaks[0] + 1_000_000, peaks


def test_flows_of_a_protocol_are_all_kept() -> None:
    """Only flows of no protocol are summed: every LLUDP flow keeps its own counts."""
    wire = lludp_wires()[0]
    packets = [
        pcapgen.udp(1.0 + k * 0.001, ("10.1.0.1", 1024 + k), SERVER, wire) for k in range(300)
    ]
    packets += [
        pcapgen.udp(1.5 + k * 0.001, ("10.1.0.2", 1024 + k), ("10.255.0.1", 53), b"\x12\x34")
        for k in range(300)
    ]
    cap = capture.Capture(io.BytesIO(pcapgen.capture(packets)), max_flows=50, max_other_flows=10)
    list(cap)
    protocols = [s.flow.protocol for s in cap.flows]
    assert protocols.count("lludp") == 300 and protocols.count(None) == 10
    assert cap.other_flows.flows == 290 and cap.other_flows.packets == 290
    assert cap.units == 300


def _what(item: capture.Item) -> tuple[int, str, str]:
    assert item.flow is not None
    if isinstance(item, capture.CaptureError):
        return item.flow.index, item.where, str(item.offset)
    return item.flow.index, "unit", ",".join(item.names)


def test_connections_closed_to_make_room_give_their_items() -> None:
    """Over max_flows connections: those closed to make room give what closing found."""
    packets: list[pcapgen.Packet] = []
    for k in range(40):
        conn = pcapgen.TcpConnection(("10.0.0.2", 40000 + k), ("10.0.0.1", 47200), time=1.0 + k)
        packets += conn.open() + conn.send("to_client", b"bzrobots 1\n")
        packets += conn.send("to_server", b"agent 1\nteams\n")
        packets += conn.send("to_client", b"ack 1.0 teams\nbegin\nteam red 2\n")  # no "end"
    data = pcapgen.capture(packets)
    found = []
    for max_flows in (10, 100):
        cap, items = _read(data, max_flows=max_flows)
        units, errors = _split(items)
        assert cap.units == len(units) and cap.errors == len(errors)
        found.append(sorted(_what(item) for item in items))
    assert found[0] == found[1] and len(found[0]) > 40
