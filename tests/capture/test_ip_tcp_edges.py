"""IPv6 extension headers around fragments, and TCP acks recorded before their data."""

from __future__ import annotations

import io
import random
from dataclasses import replace

import pytest

from gamecodec import bzrc, capture
from gamecodec.capture._ip import Defragmenter, ip_packet
from gamecodec.capture._tcp import TcpStream
from tests.capture import pcapgen
from tests.capture.conftest import bzrc_streams, lludp_wires

V6_CLIENT, V6_SERVER = ("2001:db8::2", 51712), ("2001:db8::1", 9000)
CLIENT, SERVER = ("10.0.0.2", 40000), ("10.0.0.1", 47200)

CHAINS = [
    pytest.param((), (60,), id="dest-opts"),
    pytest.param((0, 43), (60,), id="hop-routing|dest-opts"),
    pytest.param((0, 60, 43), (51, 60), id="hop-dest-routing|ah-dest-opts"),
    pytest.param((), (), id="plain"),
]
"""(headers before the Fragment header, headers beginning the Fragmentable Part)."""


def _units(items: list[capture.Item]) -> list[capture.Unit]:
    return [i for i in items if isinstance(i, capture.Unit)]


def _errors(items: list[capture.Item]) -> list[capture.CaptureError]:
    return [i for i in items if isinstance(i, capture.CaptureError)]


def _raw(ips: list[bytes], t: float = 1.0, step: float = 0.001) -> bytes:
    """A raw-IP pcap of ready-made IP packets."""
    import dpkt

    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, snaplen=65535, linktype=101)
    for k, ip in enumerate(ips):
        writer.writepkt(ip, ts=t + k * step)
    return out.getvalue()


def _v6(wire: bytes, **kw: object) -> pcapgen.Packet:
    return pcapgen.udp(1.0, V6_CLIENT, V6_SERVER, wire, ip_id=0x12345, **kw)


# -- IPv6 --


def _reassembled(ips: list[bytes]) -> list[tuple[int, bytes]]:
    """What the capture reader does with each packet: ``(protocol, payload)`` of each whole one."""
    defrag = Defragmenter()
    out = []
    for k, ip in enumerate(ips):
        proto, src, dst, payload, frag = ip_packet(ip, 0)
        if frag is None:
            out.append((proto, payload))
            continue
        proto, whole, dropped = defrag.reassemble(proto, src, dst, frag, payload, time=1.0 + k)
        assert dropped == []
        if whole is not None:
            out.append((proto, whole))
    assert len(defrag) == 0
    return out


@pytest.mark.parametrize(("unfragmentable", "extensions"), CHAINS)
@pytest.mark.parametrize("backwards", [False, True], ids=["in-order", "reversed"])
def test_ipv6_fragments_with_extension_headers(
    unfragmentable: tuple[int, ...], extensions: tuple[int, ...], backwards: bool
) -> None:
    """The Fragmentable Part may begin with extension headers (RFC 8200, 4.5): the
    fragments come back together and are walked to the UDP header, in any order."""
    wire = max(lludp_wires(), key=len)
    packet = _v6(wire, v6_unfragmentable=unfragmentable, v6_extensions=extensions, v6_fragment=64)
    ips = pcapgen.ip_packets(packet)
    assert len(ips) > 3
    segment = pcapgen.ip_packets(replace(packet, v6_fragment=None))[0][-len(wire) - 8 :]
    assert _reassembled(ips[::-1] if backwards else ips) == [(17, segment)]


def test_ip_packet_stops_at_a_fragment_header() -> None:
    """What follows a Fragment header that is not atomic is fragment data, not headers."""
    wire = max(lludp_wires(), key=len)
    packet = _v6(wire, v6_unfragmentable=(0, 43), v6_extensions=(60,), v6_fragment=64)
    for ip in pcapgen.ip_packets(packet):
        proto, _src, _dst, payload, frag = ip_packet(ip, 0)
        assert proto == 60 and frag is not None and frag[0] == 0x12345
        assert payload == ip[40 + 8 + 24 + 8 :]


@pytest.mark.parametrize(("unfragmentable", "extensions"), CHAINS[:-1])
def test_ipv6_fragments_with_extension_headers_decode(
    unfragmentable: tuple[int, ...], extensions: tuple[int, ...]
) -> None:
    wires = lludp_wires()[:5]
    ips = []
    for k, wire in enumerate(wires):
        packet = _v6(
            wire,
            v6_unfragmentable=unfragmentable,
            v6_extensions=extensions,
            v6_fragment=64 if k % 2 else 1 << 16,  # even ones: an atomic fragment
        )
        ips += pcapgen.ip_packets(packet)[::-1]
    items = list(capture.read(io.BytesIO(_raw(ips))))
    assert _errors(items) == []
    assert [u.payload for u in _units(items)] == wires


@pytest.mark.parametrize("extensions", [(), (60,), (0, 43, 60)], ids=["udp", "dest", "all"])
def test_ipv6_atomic_fragment_is_a_whole_packet(extensions: tuple[int, ...]) -> None:
    """A Fragment header with offset 0 and M=0 (RFC 8200, 4.5; RFC 6946)."""
    wire = lludp_wires()[0]
    packet = _v6(wire, v6_unfragmentable=extensions[:2], v6_extensions=extensions[2:])
    packet = replace(packet, v6_fragment=1 << 16)
    [ip] = pcapgen.ip_packets(packet)
    assert ip_packet(ip, 0)[4] is None
    items = list(capture.read(io.BytesIO(_raw([ip]))))
    assert _errors(items) == [] and [u.payload for u in _units(items)] == [wire]


def _broken(ip: bytes, at: int, value: int) -> bytes:
    return ip[:at] + bytes([value]) + ip[at + 1 :]


def test_ipv6_headers_not_read_are_located_errors() -> None:
    """An extension header not walked (Mobility), or Hop-by-Hop after another header:
    a counted error naming the header and where it is; the next packet decodes."""
    wire = lludp_wires()[0]
    [ip] = pcapgen.ip_packets(_v6(wire, v6_unfragmentable=(0, 43), v6_extensions=(60,)))
    mobility = _broken(ip, 40 + 8, 135)  # the Routing header says Mobility follows
    late_hop = _broken(ip, 40 + 8, 0)  # ... or Hop-by-Hop
    ok = pcapgen.ip_packets(_v6(wire))[0]
    cap = capture.read(io.BytesIO(_raw([mobility, late_hop, ok])))
    items = list(cap)
    first, second = _errors(items)
    assert first.where == "ip" and first.packet == 1
    assert "Mobility header (135) at byte 72" in first.message
    assert second.packet == 2 and "Hop-by-Hop header at byte 72" in second.message
    assert [u.payload for u in _units(items)] == [wire]
    assert cap.error_counts == {"ip": 2}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("mobility", "Mobility header (135) at byte 0 of the reassembled part"),
        ("hop", "Hop-by-Hop header at byte 0 of the reassembled part"),
        ("fragment", "a second IPv6 Fragment header at byte 0"),
        ("chain", "does not hold the header chain"),
    ],
)
def test_ipv6_fragmentable_part_that_cannot_be_read(change: str, message: str) -> None:
    wire = max(lludp_wires(), key=len)
    packet = _v6(wire, v6_extensions=(60,), v6_fragment=64)
    if change == "chain":  # headers longer than the first fragment
        packet = _v6(wire, v6_extensions=(60, 60, 60, 60, 60), v6_fragment=64)
    ips = pcapgen.ip_packets(packet)
    if change != "chain":
        kind = {"mobility": 135, "hop": 0, "fragment": 44}[change]
        ips = [_broken(ip, 6 + 34, kind) for ip in ips]  # the Fragment header's Next Header
    defrag = Defragmenter()
    results = []
    for ip in ips:
        proto, src, dst, payload, frag = ip_packet(ip, 0)
        assert frag is not None
        results.append(defrag.reassemble(proto, src, dst, frag, payload, time=1.0))
    assert all(whole is None for _p, whole, _d in results)
    [(key, why)] = [d for _p, _w, dropped in results for d in dropped]
    assert message in why and key[3] == 0x12345
    assert len(defrag) == 0


def _v6_fragments(wire: bytes, size: int = 64) -> list[bytes]:
    return pcapgen.ip_packets(_v6(wire, v6_fragment=size))


def test_ipv6_overlapping_fragments_give_up_the_packet() -> None:
    """RFC 8200 (after RFC 5722): an overlap discards the packet; an exact copy does not."""
    wire = max(lludp_wires(), key=len)
    ips = _v6_fragments(wire)
    shifted = bytearray(ips[1])
    shifted[40 + 2 : 40 + 4] = ((64 - 8) | 1).to_bytes(2, "big")  # at byte 56, over the first
    again = [ips[0], ips[0], *ips[1:]]  # an exact copy of the first
    items = list(capture.read(io.BytesIO(_raw([ips[0], bytes(shifted), *again]))))
    [error] = _errors(items)
    assert error.where == "ip" and "overlapping fragments at byte 56" in error.message
    assert "IP fragments 74565 from 2001:db8::2 to 2001:db8::1" in error.message
    assert [u.payload for u in _units(items)] == [wire]


def test_ipv6_fragment_not_a_multiple_of_8_before_the_last() -> None:
    wire = max(lludp_wires(), key=len)
    ips = _v6_fragments(wire)
    cut = ips[0][:-3]
    cut = cut[:4] + (len(cut) - 40).to_bytes(2, "big") + cut[6:]
    items = list(capture.read(io.BytesIO(_raw([cut, *ips[1:]]))))
    odd, rest = _errors(items)  # the rest waits for a first fragment until the end
    assert "a fragment of 61 bytes before the last, not a multiple of 8" in odd.message
    assert "incomplete at the end" in rest.message and _units(items) == []


def test_ipv6_fragments_are_bounded_and_wait_60_seconds() -> None:
    """As many IPv6 packets are held as IPv4 ones (1,024); an unfinished one is given
    up after 60 s of capture time (RFC 8200), an IPv4 one after 30 s."""
    wire = max(lludp_wires(), key=len)
    firsts = [
        pcapgen.ip_packets(replace(_v6(wire, v6_fragment=64), ip_id=k))[0] for k in range(1500)
    ]
    cap = capture.read(io.BytesIO(_raw(firsts, step=0.001)))
    peak = 0
    for _item in cap:
        peak = max(peak, len(cap._defrag))
    assert peak == 1024 and cap.error_counts == {"ip": 1500}

    v4_first = pcapgen.frames(
        pcapgen.udp(1.0, ("10.0.0.2", 1), ("10.0.0.1", 9000), wire, fragment=64)
    )
    v6_first = _v6_fragments(wire)[0]
    tick = pcapgen.ip_packets(pcapgen.udp(0, ("10.0.0.9", 1), ("10.0.0.8", 2), b"x"))[0]
    v4 = v4_first[0][0][14:]
    times = [1.0, 1.0, 40.0, 70.0]
    ips = [v4, v6_first, tick, tick]
    import dpkt

    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, linktype=101)
    for t, ip in zip(times, ips, strict=True):
        writer.writepkt(ip, ts=t)
    items = list(capture.read(io.BytesIO(out.getvalue())))
    assert [(e.packet, "30 s" in e.message, "60 s" in e.message) for e in _errors(items)] == [
        (3, True, False),
        (4, False, True),
    ]


# -- TCP: acks recorded before their data --


def _session(step: float = 0.001, segment: int = 40) -> list[pcapgen.Packet]:
    from tests.bzrc.conftest import load_transcript

    conn = pcapgen.TcpConnection(CLIENT, SERVER, step=step)
    packets = conn.open()
    for exchange in load_transcript("basic_four_ls.json")["exchanges"]:
        packets += conn.send("to_server", str(exchange["send"]).encode("latin-1"), segment)
        packets += conn.send("to_client", str(exchange["recv"]).encode("latin-1"), segment)
    return packets + conn.close()


def _ack_of(p: pcapgen.Packet, dt: float) -> pcapgen.Packet:
    """The receiver's pure ack of ``p``, ``dt`` seconds after it."""
    covered = (p.seq + len(p.payload) + (1 if p.flags & pcapgen.FIN else 0)) & 0xFFFFFFFF
    return pcapgen.tcp(p.time + dt, p.dst, p.src, seq=p.ack, ack=covered, flags=pcapgen.ACK)


def _check_whole(items: list[capture.Item]) -> None:
    assert _errors(items) == []
    sent, received = bzrc_streams()
    lines = [u.payload for u in _units(items) if u.direction == "to_server"]
    assert lines == sent.splitlines(keepends=True)
    assert [u.value for u in _units(items) if u.direction == "to_client"] == bzrc.decode(received)


def _read(packets: list[pcapgen.Packet]) -> list[capture.Item]:
    return list(capture.read(io.BytesIO(pcapgen.capture(packets))))


@pytest.mark.parametrize("step", [0.001, 0.3], ids=["fast", "over-seconds"])
def test_each_ack_recorded_just_before_its_data(step: float) -> None:
    """A tap or ``-i any`` records the receiver's ack first: every segment's ack
    comes before it (the session lasts far longer than the ack grace when slow)."""
    packets = []
    for p in _session(step):
        if p.payload or p.flags & pcapgen.FIN:
            packets.append(_ack_of(p, -step / 10))
        packets.append(p)
    assert packets[-1].time - packets[0].time > (20 if step > 0.1 else 0)
    _check_whole(_read(packets))


def test_a_burst_of_acks_before_the_data() -> None:
    """One direction held back by a few packets: the acks of a whole response first."""
    session = _session(segment=7)
    out: list[pcapgen.Packet] = []
    held: list[pcapgen.Packet] = []
    for p in session:
        if p.src == SERVER and p.payload:
            held.append(p)
            out.append(_ack_of(p, 0.0))
            continue
        out += held
        held = []
        out.append(p)
    _check_whole(_read(out + held))


def test_the_ack_of_a_fin_before_the_fin() -> None:
    """The FIN takes a sequence number but no byte: no one-byte gap."""
    packets = _session()
    fin, fin_ack, last = packets[-3:]
    _check_whole(_read([*packets[:-3], fin_ack, fin, last]))


def _lost_response() -> tuple[list[pcapgen.Packet], pcapgen.Packet, int]:
    """A session whose third server segment was never captured, though acked at
    once; then 10 s of silence. Returns the packets, the lost one, and where the
    silence starts."""
    session = _session(segment=1400)
    server = [k for k, p in enumerate(session) if p.src == SERVER and b"begin" in p.payload]
    k = server[2]
    lost = session[k]
    head = [*session[:k], _ack_of(lost, 0.0005)]
    tail = pcapgen.shifted(session[k + 1 :], 10.0)
    return head + tail, lost, len(head)


def test_a_real_gap_is_given_up_when_the_next_packet_comes() -> None:
    packets, lost, quiet = _lost_response()
    items = _read(packets)
    [gap] = _errors(items)
    assert gap.where == "tcp" and gap.direction == "to_client"
    assert f"{len(lost.payload)} bytes of the stream were not captured" in gap.message
    assert gap.packet == quiet + 1  # at the first packet after the silence
    _sent, received = bzrc_streams()
    responses = bzrc.decode(received)
    got = [u.value for u in _units(items) if u.direction == "to_client"]
    assert 1 <= len(responses) - len(got) <= 2 and got[-5:] == responses[-5:]


def test_a_real_gap_is_given_up_while_other_traffic_goes_on() -> None:
    """With the connection silent, the periodic sweep gives the hole up."""
    packets, lost, quiet = _lost_response()
    other = [
        pcapgen.udp(packets[quiet - 1].time + 0.5 * i, ("10.0.0.7", 5000), ("10.0.0.8", 5001), b"x")
        for i in range(1, 19)
    ]
    items = _read(sorted(packets + other, key=lambda p: p.time))
    [gap] = _errors(items)
    assert f"{len(lost.payload)} bytes" in gap.message
    assert lost.time + 1.0 < gap.time <= lost.time + 1.0 + 5.0 + 0.5
    assert gap.packet <= quiet + len(other)  # before the connection's next packet


def test_a_real_gap_followed_by_data_is_reported_at_once() -> None:
    packets, lost, quiet = _lost_response()
    next_data = next(p for p in packets[quiet:] if p.src == SERVER and p.payload)
    items = _read([*packets[:quiet], replace(next_data, time=packets[quiet - 1].time + 0.001)])
    gap, command = _errors(items)  # (the command it answers, acked, was left out)
    assert gap.packet == quiet + 1 and f"{len(lost.payload)} bytes" in gap.message
    assert command.direction == "to_server" and command.packet == quiet + 1


# -- TCP streams: hostile acks --


def test_stream_waits_for_acknowledged_bytes_then_gives_them_up() -> None:
    stream = TcpStream(grace=1.0)
    stream.syn(0xFFFFFFF0)  # the sequence numbers wrap inside the stream
    assert stream.ack(0x10, time=1.0) == []  # 31 bytes acked, none captured yet
    assert stream.add(0xFFFFFFF1, b"a" * 20) == [b"a" * 20]  # 20 come after their ack
    assert stream.expire(1.9) == [] and stream.expire(2.5) == []  # it progressed: wait anew
    assert stream.add(0x5, b"c") == [b"c"]
    assert stream.add(0x7, b"b" * 5) == [1, b"bbbbb"]  # bytes after an acked hole: it is lost
    assert stream.expire(3.0) == []
    assert stream.expire(4.5) == [4]  # the last 4 never came
    assert stream.offset == 31 and not stream.pending


def test_acks_far_ahead_or_behind_are_bounded() -> None:
    stream = TcpStream(max_pending=4096, grace=1.0)
    stream.syn(99)
    assert stream.add(100, b"x") == [b"x"]
    assert stream.ack(101 + (1 << 31), time=1.0) == []  # behind: ignored
    assert stream.ack(101 + (1 << 30), time=1.0) == []  # past the window: not of this stream
    assert stream.expire(100.0) == [] and stream.acked_to <= stream.offset
    assert stream.ack(101 + (1 << 30) - 1, time=1.0) == []  # far, but within the window
    assert stream.add(101, b"y") == [b"y"]
    assert stream.expire(3.0) == []
    assert stream.expire(4.5) == [(1 << 30) - 2]  # one gap, no bytes held for it
    assert stream.add(100 + (1 << 30), b"z") == [b"z"] and stream.offset == (1 << 30) + 1


def test_random_acks_and_segments_keep_the_stream_consistent() -> None:
    """Random acks (any value), segments and times: each piece is accounted for, the
    stream offset only grows, held bytes stay bounded, every call returns promptly."""
    for seed in range(20):
        rng = random.Random(seed)
        isn = rng.randrange(1 << 32)
        stream = TcpStream(max_pending=2048, grace=0.5)
        stream.syn(isn)
        released = 0
        t = 0.0
        for _ in range(3000):
            t += rng.choice((0.0, 0.01, 0.3, -0.2))
            start = (isn + 1 + rng.randrange(-100, 5000)) & 0xFFFFFFFF
            roll = rng.random()
            if roll < 0.5:
                pieces = stream.add(start, bytes(rng.randrange(1, 300)))
            elif roll < 0.8:
                ack = start if rng.random() < 0.9 else rng.randrange(1 << 32)
                pieces = stream.ack(ack, t)
            else:
                pieces = stream.expire(t)
            before = stream.offset - sum(p if isinstance(p, int) else len(p) for p in pieces)
            assert before == released
            released = stream.offset
            assert stream.pending_bytes <= 2048
            assert all(s > stream.offset for s in stream.pending)
        stream.flush()
        assert not stream.pending and stream.acked_to <= stream.offset
