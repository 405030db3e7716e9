"""Reading captures: formats, link types, IP versions, fragments, sources."""

from __future__ import annotations

import io
import random
import struct
from pathlib import Path

import pytest

from gamecodec import avara, capture, lludp
from tests.capture import pcapgen
from tests.capture.conftest import CLIENT, SERVER, avara_wires, bzrc_streams, lludp_wires

V6_CLIENT, V6_SERVER = ("2001:db8::2", 51712), ("2001:db8::1", 9000)


def _units(items: list[capture.Item]) -> list[capture.Unit]:
    return [i for i in items if isinstance(i, capture.Unit)]


def _errors(items: list[capture.Item]) -> list[capture.CaptureError]:
    return [i for i in items if isinstance(i, capture.CaptureError)]


def _lludp_packets(client: tuple[str, int], server: tuple[str, int]) -> list[pcapgen.Packet]:
    wires = lludp_wires()
    return [
        pcapgen.udp(100.0 + k * 0.01, *((client, server) if k % 3 else (server, client)), w)
        for k, w in enumerate(wires)
    ]


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
@pytest.mark.parametrize("link", sorted(pcapgen.LINKTYPES))
@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_every_lludp_datagram_decodes(fmt: str, link: pcapgen.Link, v6: bool) -> None:
    client, server = (V6_CLIENT, V6_SERVER) if v6 else (CLIENT, SERVER)
    packets = _lludp_packets(client, server)
    data = pcapgen.capture(packets, fmt=fmt, link=link)
    cap = capture.read(io.BytesIO(data))
    items = list(cap)
    assert _errors(items) == []
    units = _units(items)
    assert [u.payload for u in units] == [p.payload for p in packets]
    assert [u.value for u in units] == [lludp.decode(p.payload) for p in packets]
    assert [u.time for u in units] == pytest.approx([p.time for p in packets])
    assert [u.packet for u in units] == list(range(1, len(packets) + 1))
    assert {u.flow.id for u in units} == {f"udp {units[0].flow.client} > {units[0].flow.server}"}
    flow = units[0].flow
    assert (flow.client.port, flow.server.port, flow.protocol) == (51712, 9000, "lludp")
    assert [u.direction for u in units] == [
        "to_server" if p.src == client else "to_client" for p in packets
    ]
    assert cap.packets == len(packets) and cap.units == len(packets) and cap.errors == 0
    assert cap.format == fmt
    [stats] = cap.flows
    assert (stats.packets, stats.units, stats.bytes) == (
        len(packets),
        len(packets),
        sum(len(p.payload) for p in packets),
    )


def test_avara_by_port_and_names() -> None:
    wires = avara_wires()
    server = ("10.0.0.1", 19567)
    packets = [pcapgen.udp(5.0 + k, CLIENT, server, w) for k, w in enumerate(wires)]
    units = _units(list(capture.read(io.BytesIO(pcapgen.capture(packets)))))
    assert [u.value for u in units] == [avara.decode(w) for w in wires]
    for unit in units:
        assert isinstance(unit.value, avara.Datagram)
        assert unit.names == tuple(avara.CommandId(c.command).name for c in unit.value.commands)
    assert "port udp/19567" in units[0].flow.reason


def test_path_and_file_object_give_the_same(tmp_path: Path) -> None:
    packets = _lludp_packets(CLIENT, SERVER)
    path = pcapgen.write(tmp_path / "c.pcapng", packets, fmt="pcapng")
    from_path = list(capture.read(path))
    from_str = list(capture.read(str(path)))
    with path.open("rb") as fh:
        from_file = list(capture.read(fh))
    assert from_path == from_str == from_file
    assert len(from_path) == len(packets)


class _Pipe(io.RawIOBase):
    """A stream that cannot seek or tell, like a pipe."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buf: memoryview) -> int:  # type: ignore[override]
        chunk = self._data.read(min(len(buf), 7))
        buf[: len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_unseekable_stream(fmt: str) -> None:
    packets = _lludp_packets(CLIENT, SERVER)
    stream = io.BufferedReader(_Pipe(pcapgen.capture(packets, fmt=fmt)))
    assert len(_units(list(capture.read(stream)))) == len(packets)


def test_nanosecond_pcap() -> None:
    packets = _lludp_packets(CLIENT, SERVER)[:3]
    units = _units(list(capture.read(io.BytesIO(pcapgen.capture(packets, nano=True)))))
    assert [type(u.time) for u in units] == [float] * 3
    assert [u.time for u in units] == pytest.approx([p.time for p in packets])


def test_nanosecond_pcap_ending_inside_a_record(tmp_path: Path) -> None:
    """A nanosecond pcap that ends inside a record: the items the end gives (here a
    packet's fragments never completed) have float times too (they had the cut
    record's Decimal, which write_tables refused with ArrowInvalid)."""
    wire = max(lludp_wires(), key=len)
    packet = pcapgen.udp(1.25, CLIENT, SERVER, wire, fragment=64)
    data = pcapgen.capture([packet], nano=True)[:-10]  # the last fragment cut short
    items = list(capture.read(io.BytesIO(data)))
    assert [(type(i).__name__, i.where, type(i.time)) for i in items] == [  # type: ignore[union-attr]
        ("CaptureError", "file", type(None)),
        ("CaptureError", "ip", float),
    ]
    pytest.importorskip("pyarrow")
    assert capture.write_tables(io.BytesIO(data), tmp_path) == {"errors": 2}


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_fragments_reassembled_in_any_order(v6: bool) -> None:
    wire = max(lludp_wires(), key=len)
    client, server = (V6_CLIENT, V6_SERVER) if v6 else (CLIENT, SERVER)
    packet = pcapgen.udp(1.0, client, server, wire, fragment=64, ip_id=77)
    frames = pcapgen.frames(packet)
    assert len(frames) > 2 or v6
    order = list(reversed(frames))
    data = _raw_capture(order)
    items = list(capture.read(io.BytesIO(data)))
    assert _errors(items) == []
    [unit] = _units(items)
    assert unit.payload == wire and unit.packet == len(frames)


def _raw_capture(frames: list[tuple[bytes, int]], t: float = 1.0) -> bytes:
    """A pcap of ready-made Ethernet frames."""
    import dpkt

    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, snaplen=65535)
    for k, (frame, _length) in enumerate(frames):
        writer.writepkt(frame, ts=t + k * 0.001)
    return out.getvalue()


def test_missing_fragment_reported_at_the_end() -> None:
    wire = max(lludp_wires(), key=len)
    frames = pcapgen.frames(pcapgen.udp(1.0, CLIENT, SERVER, wire, fragment=64))
    items = list(capture.read(io.BytesIO(_raw_capture(frames[:-1]))))
    [error] = _errors(items)
    assert error.where == "ip" and "incomplete" in error.message
    assert _units(items) == []


def test_non_ip_frames_are_skipped() -> None:
    import dpkt

    arp = bytes(dpkt.ethernet.Ethernet(type=0x0806, data=b"\x00" * 28))
    good = pcapgen.frames(pcapgen.udp(1.0, CLIENT, SERVER, lludp_wires()[0]))[0]
    items = list(capture.read(io.BytesIO(_raw_capture([(arp, len(arp)), good]))))
    assert len(_units(items)) == 1 and _errors(items) == []


def test_vlan_tagged_ethernet() -> None:
    frame, _ = pcapgen.frames(pcapgen.udp(1.0, CLIENT, SERVER, lludp_wires()[0]))[0]
    tagged = frame[:12] + b"\x81\x00\x00\x07" + frame[12:]
    units = _units(list(capture.read(io.BytesIO(_raw_capture([(tagged, len(tagged))])))))
    assert [u.payload for u in units] == [lludp_wires()[0]]


def test_capture_iterates_once_and_counts() -> None:
    cap = capture.read(io.BytesIO(pcapgen.capture(_lludp_packets(CLIENT, SERVER))))
    first = next(cap)
    rest = list(cap)
    assert isinstance(first, capture.Unit) and len(rest) == cap.packets - 1
    assert list(cap) == []


def test_unrecognised_flow_on_unknown_port_is_counted_not_an_error() -> None:
    packets = [pcapgen.udp(1.0, ("10.0.0.9", 5353), ("10.0.0.8", 5353), b"\x00" * 30)]
    cap = capture.read(io.BytesIO(pcapgen.capture(packets)))
    assert list(cap) == []
    [stats] = cap.flows
    assert stats.flow.protocol is None and stats.packets == 1
    assert stats.flow.reason == "no known port, content not recognised"


def _repeated_capture(path: Path, count: int, fmt: str) -> Path:
    """``count`` packets: the corpus datagrams over and over, with TCP beside them."""
    import dpkt

    wires = lludp_wires()
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 47200))
    tcp = conn.open() + conn.send("to_client", b"bzrobots 1\n")
    frames = [f for p in tcp for f, _ in pcapgen.frames(p)]
    udp = [pcapgen.frames(pcapgen.udp(0.0, CLIENT, SERVER, w))[0][0] for w in wires]
    with path.open("wb") as out:
        writer = (dpkt.pcap.Writer if fmt == "pcap" else dpkt.pcapng.Writer)(out, snaplen=65535)
        for k, frame in enumerate(frames):
            writer.writepkt(frame, ts=1.0 + k * 0.001)
        for k in range(count - len(frames)):
            writer.writepkt(udp[k % len(udp)], ts=2.0 + k * 0.001)
    return path


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_memory_does_not_grow_with_the_file(tmp_path: Path, fmt: str) -> None:
    import gc
    import tracemalloc

    peaks = []
    for count in (1_000, 12_000):
        path = _repeated_capture(tmp_path / f"{count}.{fmt}", count, fmt)
        gc.collect()
        tracemalloc.start()
        cap = capture.read(path)
        units = 0
        for k, item in enumerate(cap):
            units += isinstance(item, capture.Unit)
            if k % 500 == 0:
                gc.collect()  # what the reader keeps, not garbage waiting for the collector
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert units == count - 3 and cap.packets == count  # 4 TCP packets, 1 greeting
    assert peaks[1] < peaks[0] * 1.25 + 65536, peaks


# -- the fast paths give exactly what the general path gives ------------------------


def _varied_packets(seed: int) -> list[pcapgen.Packet]:
    """LLUDP (IPv4 and IPv6, two flows), Avara, an unknown flow, BZRC over TCP, IPv4
    fragments, snapped packets and datagrams longer than a read chunk, shuffled in time."""
    rng = random.Random(seed)
    lludp_ = lludp_wires()
    avara_ = avara_wires()
    other = ("10.0.0.3", 40001)
    avara_server = ("10.0.0.1", 19567)
    packets: list[pcapgen.Packet] = []
    for k in range(120):
        t = 10.0 + k * 0.013
        kind = rng.randrange(8)
        if kind < 3:
            a, b = (CLIENT, SERVER) if rng.random() < 0.6 else (SERVER, CLIENT)
            if kind == 2:
                a, b = (V6_CLIENT, V6_SERVER) if rng.random() < 0.6 else (V6_SERVER, V6_CLIENT)
            packets.append(pcapgen.udp(t, a, b, rng.choice(lludp_)))
        elif kind == 3:
            a, b = (other, avara_server) if rng.random() < 0.5 else (avara_server, other)
            packets.append(pcapgen.udp(t, a, b, rng.choice(avara_)))
        elif kind == 4:  # an unknown flow, sometimes a datagram longer than 16 KiB
            size = rng.choice([5, 300, 20_000, 40_000])
            packets.append(pcapgen.udp(t, other, ("10.0.0.9", 5555), rng.randbytes(size)))
        elif kind == 5:  # fragmented, or a garbage datagram in the LLUDP flow
            wire = rng.choice(lludp_)
            if rng.random() < 0.5:
                packets.append(pcapgen.udp(t, CLIENT, SERVER, wire, fragment=16, ip_id=k))
            else:
                packets.append(pcapgen.udp(t, CLIENT, SERVER, rng.randbytes(rng.randrange(40))))
        elif kind == 6:  # snapped inside the link, IP or UDP header or the payload
            wire = rng.choice(lludp_)
            packets.append(pcapgen.udp(t, CLIENT, SERVER, wire, snap=rng.randrange(60)))
        else:
            packets.append(pcapgen.udp(t, SERVER, CLIENT, rng.choice(lludp_)))
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 47200), time=10.5)
    sent, received = bzrc_streams()
    tcp = conn.open() + conn.send("to_client", b"bzrobots 1\n") + conn.send("to_server", sent)
    tcp += conn.send("to_client", received[:400], segment=100)
    packets += tcp
    packets.sort(key=lambda p: p.time)
    return packets


def _big_endian(data: bytes) -> bytes:
    """A little-endian microsecond pcap written big-endian."""
    out = bytearray(struct.pack(">IHHiIII", *struct.unpack_from("<IHHiIII", data)))
    at = 24
    while at + 16 <= len(data):
        header = struct.unpack_from("<IIII", data, at)
        out += struct.pack(">IIII", *header)
        out += data[at + 16 : at + 16 + header[2]]
        at += 16 + header[2]
    return bytes(out + data[at:])


def _general_items(
    data: bytes, monkeypatch: pytest.MonkeyPatch, **options: object
) -> tuple[list[capture.Item], list[object]]:
    """Items and flows with dpkt's record reader and without the known-flow fast path."""
    from gamecodec.capture import _capture, _read

    with monkeypatch.context() as patch:
        patch.setattr(_capture, "_FIXED_LINK", {})
        patch.setattr(_read, "_RECORD_HEADERS", {})
        return _items_and_flows(data, **options)


def _items_and_flows(data: bytes, **options: object) -> tuple[list[capture.Item], list[object]]:
    cap = capture.read(io.BytesIO(data), **options)  # type: ignore[arg-type]
    items = list(cap)
    return items, [cap.flows, cap.packets, cap.errors, cap.error_counts, cap.units]


@pytest.mark.parametrize("link", ["ethernet", "sll", "sll2", "raw"])
@pytest.mark.parametrize("fmt", ["pcap", "pcap-be", "pcapng"])
@pytest.mark.parametrize("seed", [1, 2])
def test_fast_paths_equal_the_general_path(
    link: pcapgen.Link, fmt: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    packets = _varied_packets(seed)
    data = pcapgen.capture(packets, fmt="pcapng" if fmt == "pcapng" else "pcap", link=link)
    if fmt == "pcap-be":
        data = _big_endian(data)
    fast = _items_and_flows(data)
    assert fast == _general_items(data, monkeypatch)
    kinds = {(i.protocol if isinstance(i, capture.Unit) else i.where) for i in fast[0]}
    assert {"lludp", "avara", "bzrc", "decode", "ip"} <= kinds
    rng = random.Random(seed)
    for cut in [*sorted(rng.sample(range(25, len(data)), 12)), len(data) - 1]:
        assert _items_and_flows(data[:cut]) == _general_items(data[:cut], monkeypatch), cut
    for limit in (300, 20_000):
        fast = _items_and_flows(data, max_record=limit)
        assert fast == _general_items(data, monkeypatch, max_record=limit)
        [error] = [i for i in fast[0] if isinstance(i, capture.CaptureError) and i.where == "file"]
        assert "the limit is" in error.message


def test_unknown_ids_are_named_and_their_names_kept_boundedly() -> None:
    from gamecodec.capture import _udp

    names = _udp._Names("command", {1: "one"})
    assert [names[1], names[-8], names[-8]] == ["one", "command -8", "command -8"]
    assert -8 in names
    for key in range(5000):
        assert names[1000 + key] == f"command {1000 + key}"
    assert len(names) <= _udp._MAX_NAMES


def _ng_block(order: str, kind: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    size = len(body) + 12
    return struct.pack(order + "II", kind, size) + body + struct.pack(order + "I", size)


def _ng_section(order: str, interfaces: list[tuple[int, bytes]]) -> bytes:
    """A section header and its interfaces: (link type, options) each."""
    out = _ng_block(order, 0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    for linktype, options in interfaces:
        out += _ng_block(order, 1, struct.pack(order + "HHI", linktype, 0, 0) + options)
    return out


def _ng_packet(order: str, interface: int, units: int, frame: bytes) -> bytes:
    head = struct.pack(
        order + "IIIII", interface, units >> 32, units & 0xFFFFFFFF, len(frame), len(frame)
    )
    return _ng_block(order, 6, head + frame)


def test_pcapng_interfaces_sections_and_simple_packets() -> None:
    """Each packet is read with its own interface's link type and time resolution,
    in every section; a Simple Packet Block is read; a packet on an interface the
    file does not describe is a located error. (dpkt's loop read all as the first
    interface's: the loopback packets were silently dropped.)"""
    wires = lludp_wires()[:6]
    ip = [pcapgen.ip_packets(pcapgen.udp(1.0, CLIENT, SERVER, w))[0] for w in wires]
    nanos = struct.pack("<HHb", 9, 1, 9) + b"\0" * 3  # if_tsresol: 10^-9
    data = _ng_section("<", [(1, b""), (0, nanos)])
    data += _ng_packet("<", 0, 1_000_000, pcapgen.link_frame(ip[0], "ethernet"))
    data += _ng_packet("<", 1, 2_500_000_000, pcapgen.link_frame(ip[1], "null"))
    data += _ng_packet("<", 7, 3_000_000, pcapgen.link_frame(ip[2], "ethernet"))
    frame = pcapgen.link_frame(ip[3], "ethernet")
    data += _ng_block("<", 3, struct.pack("<I", len(frame)) + frame)
    data += _ng_section(">", [(276, b"")])  # big-endian, Linux cooked v2
    data += _ng_packet(">", 0, 4_000_000, pcapgen.link_frame(ip[4], "sll2"))
    data += _ng_packet(">", 0, 5_000_000, pcapgen.link_frame(ip[5], "sll2"))
    items = list(capture.read(io.BytesIO(data)))
    units = _units(items)
    assert [u.payload for u in units] == [wires[k] for k in (0, 1, 3, 4, 5)]
    assert [u.time for u in units] == [1.0, 2.5, 2.5, 4.0, 5.0]
    assert [u.packet for u in units] == [1, 2, 4, 5, 6]
    [error] = _errors(items)
    assert error.where == "link" and error.packet == 3 and "does not describe" in error.message


def test_pcapng_obsolete_packet_blocks_are_read() -> None:
    """The obsolete Packet Block (type 2, a 16-bit interface and a drops count where
    the Enhanced Packet Block has a 32-bit interface) of old writers is read as one
    (it was skipped without a word)."""
    wires = lludp_wires()[:3]
    ip = [pcapgen.ip_packets(pcapgen.udp(1.0, CLIENT, SERVER, w))[0] for w in wires]
    data = _ng_section(">", [(1, b""), (0, b"")])
    for k, (interface, link) in enumerate([(0, "ethernet"), (1, "null"), (5, "ethernet")]):
        frame = pcapgen.link_frame(ip[k], link)  # type: ignore[arg-type]
        units = (k + 1) * 1_000_000
        head = struct.pack(
            ">HHIIII", interface, 7, units >> 32, units & 0xFFFFFFFF, len(frame), len(frame)
        )
        data += _ng_block(">", 2, head + frame)
    items = list(capture.read(io.BytesIO(data)))
    assert [(u.payload, u.time, u.packet) for u in _units(items)] == [
        (wires[0], 1.0, 1),
        (wires[1], 2.0, 2),
    ]
    [error] = _errors(items)
    assert error.where == "link" and error.packet == 3 and "does not describe" in error.message


def test_pcapng_first_interface_of_a_link_type_not_read() -> None:
    """A first interface of a link type not read (USB, netlink, ...) makes each of its
    packets an error; the packets of the other interfaces are read (it ended the
    whole file)."""
    wires = lludp_wires()[:3]
    ip = [pcapgen.ip_packets(pcapgen.udp(1.0, CLIENT, SERVER, w))[0] for w in wires]
    data = _ng_section("<", [(147, b""), (1, b"")])  # LINKTYPE_USER0, then Ethernet
    data += _ng_packet("<", 0, 1_000_000, b"\x01\x02\x03")
    data += _ng_packet("<", 1, 2_000_000, pcapgen.link_frame(ip[0], "ethernet"))
    data += _ng_packet("<", 1, 3_000_000, pcapgen.link_frame(ip[1], "ethernet"))
    data += _ng_packet("<", 0, 4_000_000, b"\x04\x05")
    data += _ng_section("<", [(147, b""), (113, b"")])
    data += _ng_packet("<", 1, 5_000_000, pcapgen.link_frame(ip[2], "sll"))
    cap = capture.read(io.BytesIO(data))
    items = list(cap)
    assert [u.payload for u in _units(items)] == wires
    assert [u.packet for u in _units(items)] == [2, 3, 5]
    errors = _errors(items)
    assert [(e.where, e.packet, e.message) for e in errors] == [
        ("link", 1, "link type 147 is not read"),
        ("link", 4, "link type 147 is not read"),
    ]
    assert cap.errors == 2 and cap.link == "linktype 147"
