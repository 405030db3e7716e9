"""Reading captures: formats, link types, IP versions, fragments, sources."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gamecodec import avara, capture, lludp
from tests.capture import pcapgen
from tests.capture.conftest import CLIENT, SERVER, avara_wires, lludp_wires

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
