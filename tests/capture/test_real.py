"""The real captures of ../shared/corpus/pcap: every message decodes as the protocol's decoder says.

The payloads to compare with are taken out of the files independently, with
dpkt's own packet objects; each test runs against both twins of the protocol's
decoder (the capture itself uses the active one).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import dpkt
import pytest

from gamecodec import bzrc, capture, lludp
from tests.capture.conftest import real_capture
from tests.conftest import load_twin

LLUDP = "lludp_opensim_live_first30s.pcap"
AVARA = "avara_direct_first8s.pcap"
BZRC = "bzrc_bzrflag_play_first5s5.pcapng"


def _dpkt_packets(path: Path) -> list[tuple[int, dpkt.ip.IP]]:
    out = []
    with path.open("rb") as fh:
        for number, (_ts, buf) in enumerate(dpkt.pcap.UniversalReader(fh), start=1):
            ip = dpkt.ethernet.Ethernet(buf).data
            if isinstance(ip, dpkt.ip.IP):
                out.append((number, ip))
    return out


def _udp_payloads(path: Path) -> list[tuple[int, bytes]]:
    return [
        (number, bytes(ip.data.data))
        for number, ip in _dpkt_packets(path)
        if isinstance(ip.data, dpkt.udp.UDP)
    ]


def _units(path: Path) -> tuple[capture.Capture, list[capture.Unit]]:
    cap = capture.read(path)
    items = list(cap)
    assert [i for i in items if isinstance(i, capture.CaptureError)] == []
    return cap, [i for i in items if isinstance(i, capture.Unit)]


def test_lludp_capture(impl: str) -> None:
    codec = load_twin("gamecodec.lludp", "_codec", impl)
    template = lludp.default_template()
    path = real_capture(LLUDP)
    expected = _udp_payloads(path)
    cap, units = _units(path)
    assert len(expected) == 709
    assert [(u.packet, u.payload) for u in units] == expected
    for unit in units:
        assert unit.protocol == "lludp"
        assert unit.value == codec.decode(unit.payload, template, False, 8192)
        assert unit.names == (unit.value.name,)
    assert {s.flow.protocol for s in cap.flows} == {"lludp", None}  # the login is HTTP on tcp/9000
    assert sum(s.units for s in cap.flows) == len(units)


def test_avara_capture(impl: str) -> None:
    codec = load_twin("gamecodec.avara", "_codec", impl)
    path = real_capture(AVARA)
    expected = _udp_payloads(path)
    cap, units = _units(path)
    assert len(expected) == 2790
    assert [(u.packet, u.payload) for u in units] == expected
    for unit in units:
        assert unit.value == codec.decode(unit.payload, version=18, layout=1)
        assert unit.value.crc_ok
    [stats] = cap.flows
    assert stats.flow.reason == "content: an Avara checksum with net version 18"


def _tcp_streams(path: Path) -> dict[tuple[int, int], bytes]:
    """Each direction's bytes, by (source port, destination port), in sequence order."""
    segments: dict[tuple[int, int], dict[int, bytes]] = defaultdict(dict)
    for _number, ip in _dpkt_packets(path):
        tcp = ip.data
        if isinstance(tcp, dpkt.tcp.TCP) and tcp.data:
            segments[(tcp.sport, tcp.dport)].setdefault(tcp.seq, bytes(tcp.data))
    streams = {}
    for key, parts in segments.items():
        data = b"".join(parts[s] for s in sorted(parts))
        streams[key] = data
    return streams


def test_bzrc_capture(impl: str) -> None:
    codec = load_twin("gamecodec.bzrc", "_codec", impl)
    path = real_capture(BZRC)
    streams = _tcp_streams(path)
    cap, units = _units(path)
    assert {s.flow.protocol for s in cap.flows} == {"bzrc"}
    checked = compared = 0
    for stats in cap.flows:
        flow = stats.flow
        mine = [u for u in units if u.flow == flow]
        to_client = streams[(flow.server.port, flow.client.port)]
        to_server = streams.get((flow.client.port, flow.server.port), b"")
        decoder = codec.Decoder()
        responses = decoder.feed(to_client) + decoder.flush()
        assert [u.value for u in mine if u.direction == "to_client"] == responses
        assert b"".join(u.payload for u in mine if u.direction == "to_client") == to_client
        lines = [u for u in mine if u.direction == "to_server"]
        assert [u.payload for u in lines] == to_server.splitlines(keepends=True)
        session = bzrc.ServerSession(max_pending=1 << 20)
        requests = session.receive_data(to_server, 0.0)
        by_id = {u.value.id: u.value for u in lines}
        assert all(by_id[r.id] == r for r in requests)
        compared += len(requests)
        checked += len(responses) + len(lines)
    assert checked == len(units) == 3865
    assert compared > 1000


@pytest.mark.parametrize("name", [LLUDP, AVARA, BZRC])
def test_flows_report(name: str) -> None:
    cap = capture.read(real_capture(name))
    for _item in cap:
        pass
    assert cap.packets == {LLUDP: 811, AVARA: 2790, BZRC: 4559}[name]
    assert sum(s.packets for s in cap.flows) == cap.packets
    for stats in cap.flows:
        assert stats.first <= stats.last and stats.flow.reason
