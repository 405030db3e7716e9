"""Which protocol a flow is: port, content, overrides, and the reason given."""

from __future__ import annotations

import io

import pytest

from gamecodec import avara, capture, ywindow
from gamecodec.capture._detect import tcp_content, udp_content
from tests.capture import pcapgen
from tests.capture.conftest import avara_wires, lludp_wires


def _flows(
    packets: list[pcapgen.Packet], protocols: tuple[str, ...] = ()
) -> list[capture.FlowStats]:
    cap = capture.read(io.BytesIO(pcapgen.capture(packets)), protocols=protocols)
    for _item in cap:
        pass
    return cap.flows


def test_lludp_on_an_unknown_port_by_content() -> None:
    a, b = ("10.0.0.2", 40000), ("10.0.0.1", 41000)
    [stats] = _flows([pcapgen.udp(1.0, a, b, w) for w in lludp_wires()])
    assert stats.flow.protocol == "lludp" and stats.units == len(lludp_wires())
    assert stats.flow.reason.startswith("content: an LLUDP header with message ")


def test_second_life_ports() -> None:
    [stats] = _flows([pcapgen.udp(1.0, ("10.0.0.2", 40000), ("10.0.0.1", 13005), lludp_wires()[0])])
    assert stats.flow.protocol == "lludp" and "port udp/13005" in stats.flow.reason


def test_server_side_first_is_still_the_server() -> None:
    """The first datagram captured comes from the region: the region is still the server."""
    region, viewer = ("10.0.0.1", 9000), ("10.0.0.2", 40000)
    [stats] = _flows([pcapgen.udp(1.0, region, viewer, lludp_wires()[0])])
    assert stats.flow.server.port == 9000 and stats.flow.client.port == 40000


def test_avara_net_version_found_by_checksum() -> None:
    wire = avara_wires()[0]
    body = wire[2:]
    for version in (12, 666):
        crc = avara.crc16_kermit(version.to_bytes(2, "little") + body)
        other = crc.to_bytes(2, "little") + body
        [stats] = _flows([pcapgen.udp(1.0, ("10.0.0.2", 40000), ("10.0.0.1", 50000), other)])
        assert stats.flow.reason == f"content: an Avara checksum with net version {version}"
        assert stats.units == 1


def test_avara_hole_punch() -> None:
    punch = avara.encode_punch(avara.PunchCommand.kPunchPing)
    assert len(punch) == 7
    found = udp_content(punch)
    assert found is not None and found.protocol == "avara"


def test_random_datagrams_on_unknown_ports_are_not_lludp() -> None:
    """Noise (QUIC, media) on other ports is not taken for LLUDP; on LLUDP's ports,
    a datagram LLUDP's decoder reads with bytes left over still is."""
    import random

    rng = random.Random(20)
    noise = [rng.randbytes(rng.choice((40, 300, 1200))) for _ in range(6000)]
    found = [c.protocol for p in noise if (c := udp_content(p)) is not None]
    assert "lludp" not in found
    for wire in lludp_wires()[:50]:
        found = udp_content(wire)
        assert found is not None and found.protocol == "lludp"
        padded = udp_content(wire + b"\x00\x01", "lludp")
        assert padded is not None and padded.protocol == "lludp"


def test_override_takes_a_port_without_content() -> None:
    a, b = ("10.0.0.2", 40000), ("10.0.0.1", 5555)
    packets = [pcapgen.udp(1.0, a, b, w) for w in lludp_wires()[:3]]
    [stats] = _flows(packets, ("lludp:udp/5555",))
    assert stats.flow.reason == "override lludp:udp/5555" and stats.units == 3
    [stats] = _flows(packets, ("avara:udp/5000-6000",))
    assert stats.flow.protocol == "avara" and stats.errors == 3  # not Avara: checksum errors


def test_override_on_tcp() -> None:
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 47200))
    packets = conn.open() + conn.send("to_server", b"teams\n") + conn.close()
    [stats] = _flows(packets, ("bzrc:tcp/47200",))
    assert stats.flow.protocol == "bzrc" and stats.flow.reason == "override bzrc:tcp/47200"
    assert stats.units == 1


@pytest.mark.parametrize(
    "text",
    ["lludp", "lludp:udp", "lludp:tcp/9000", "quake:udp/1", "lludp:udp/9-1", "lludp:udp/70000"],
)
def test_bad_overrides(text: str) -> None:
    with pytest.raises(ValueError):
        capture.parse_override(text)


def test_override_round_trips() -> None:
    assert str(capture.parse_override(" bzrc:tcp/47200-47203 ")) == "bzrc:tcp/47200-47203"
    assert capture.parse_override("lludp:udp/9000") == capture.Override("lludp", "udp", 9000, 9000)


@pytest.mark.parametrize(
    ("data", "protocol", "from_server"),
    [
        (
            b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            "archipelago",
            False,
        ),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "archipelago", True),
        (b"bzrobots 1\n", "bzrc", True),
        (b"agent 1\nmytanks\n", "bzrc", False),
        (b"ack 0.38 teams\nbegin\n", "bzrc", True),
        (b"Yserver 0.0 gamecodec\n", "ywindow", True),
        (b"Yclient 0.0 x\n", "ywindow", False),
        (ywindow.call("goto", 1, 2), "ywindow", None),
    ],
)
def test_tcp_content(data: bytes, protocol: str, from_server: bool | None) -> None:
    found = tcp_content(data)
    assert found is not None and (found.protocol, found.from_server) == (protocol, from_server)


@pytest.mark.parametrize(
    "data", [b"", b"POST / HTTP/1.1\r\n\r\n", b"\x16\x03\x01\x02\x00", b"hello\n"]
)
def test_tcp_content_not_recognised(data: bytes) -> None:
    assert tcp_content(data) is None


def test_bzrc_connection_without_its_handshake_is_turned_round() -> None:
    """Picked up mid-way, the first bytes seen are the server's: it is still the server."""
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 47200))
    conn.open()
    packets = conn.send("to_client", b"ack 1.0 timer\ntimer 1.5 300\n") + conn.send(
        "to_server", b"timer\n"
    )
    [stats] = _flows(packets)
    assert (stats.flow.client.port, stats.flow.server.port) == (40000, 47200)
    assert stats.flow.protocol == "bzrc"


def test_connection_without_data_on_a_known_port() -> None:
    conn = pcapgen.TcpConnection(("10.0.0.2", 40000), ("10.0.0.1", 38281))
    [stats] = _flows(conn.open() + conn.close())
    assert stats.flow.protocol == "archipelago"
    assert stats.flow.reason.endswith("no data to confirm it")
