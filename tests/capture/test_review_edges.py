"""Edge cases found in review: work and results of the capture reader on hostile input."""

from __future__ import annotations

import pytest

from gamecodec.capture import _ip
from gamecodec.capture._ip import Defragmenter


@pytest.mark.parametrize("src", [b"\x0a\x00\x00\x01", bytes(15) + b"\x01"])
def test_fragments_after_the_last_do_not_rebuild_the_packet(
    src: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the last fragment is in, a packet is put together only when its
    bytes are all there, not again for each fragment that comes after."""
    built: list[int] = []

    def counting_bytearray(size: int) -> bytearray:
        built.append(size)
        return bytearray(size)

    monkeypatch.setattr(_ip, "bytearray", counting_bytearray, raising=False)
    defrag = Defragmenter()
    key = (17, src, src, 7)
    total = 8 * 1000
    assert defrag.add(key, total - 8, False, bytes(8), 0.0)[0] is None
    for start in range(0, total - 8, 8):
        whole, dropped = defrag.add(key, start, True, bytes(8), 0.0)
        assert not dropped
        assert (whole is None) == (start < total - 16)
    assert whole == bytes(total)
    assert len(built) <= 1


def _tcp_header(sport: int, dport: int, seq: int, ack: int, flags: int) -> bytes:
    return (
        sport.to_bytes(2, "big") + dport.to_bytes(2, "big") + seq.to_bytes(4, "big")
        + ack.to_bytes(4, "big") + bytes([0x50, flags]) + bytes(6)
    )  # fmt: skip


def test_gaps_alone_do_not_hold_an_unrecognised_connection_forever() -> None:
    """A connection whose protocol is not known yet holds what comes until it
    is; acks past bytes never captured, one a second, give gaps and no bytes:
    what is held stays bounded all the same."""
    from gamecodec.capture._connections import Connections
    from gamecodec.capture._tally import Tally

    tally = Tally()
    conns = Connections(tally, [], max_flows=100, max_pending=1 << 20, timeout=3600.0)
    client, server = b"\x0a\x00\x00\x01", b"\x0a\x00\x00\x02"
    conns.segment(client, server, _tcp_header(40000, 40001, 1000, 0, 0x02), 0.0, 1)
    conns.segment(server, client, _tcp_header(40001, 40000, 5000, 1001, 0x12), 0.0, 2)
    for i in range(1, 20001):
        t = 2.0 * i
        tally.now = t
        conns.segment(server, client, _tcp_header(40001, 40000, 5001, 1001 + i, 0x10), t, 2 + i)
    [(conn, _)] = {id(c): (c, d) for c, d in conns.table.values()}.values()
    assert len(conn.held) < 10000


def test_ywindow_two_gaps_before_the_messages_resume_exactly() -> None:
    """A second gap in the cookie or digest (after the first left the stream
    skipping to the messages' start) still resumes exactly where the messages
    start: the digest's captured bytes are not searched for a message."""
    from gamecodec import capture, ywindow
    from gamecodec.capture import _ywindow_stream

    flow = capture.Flow("tcp", capture.Address("a", 1), capture.Address("b", 2), "ywindow", "", 1)
    greeting = b"Yclient 0.0 gamecodec\n"
    calls = [ywindow.call("goto", k, k) for k in range(3)]
    digest = b"\x22" * 10 + b"r\x04\x00\x00\x00\x00"  # ends as a message would start
    data = greeting + bytes(range(256)) + digest + b"".join(calls)
    stream = _ywindow_stream.YwindowStream(flow)
    items = stream.feed("to_server", data[:100], 1.0, 1)
    items += stream.gap("to_server", 50, 1.0, 1)
    items += stream.feed("to_server", data[150:200], 1.0, 1)
    items += stream.gap("to_server", 80, 1.0, 1)  # up to the digest's 3rd byte
    items += stream.feed("to_server", data[280:], 1.0, 1) + stream.close(1.0, 1)
    assert [(type(i).__name__, getattr(i, "names", None)) for i in items] == [
        ("Unit", ("greeting",)),
        ("Unit", ("goto",)),
        ("Unit", ("goto",)),
        ("Unit", ("goto",)),
    ]


def test_ywindow_units_hold_their_own_bytes_when_not_written_as_the_encoder_does() -> None:
    """Messages the decoder takes though the encoder would write them shorter
    (an ``S`` word under 256 bytes, a wide header): each unit's payload is its
    own bytes, also before a message the decoder refuses."""
    from gamecodec import capture, ywindow
    from gamecodec.capture import _ywindow_stream

    flow = capture.Flow("tcp", capture.Address("a", 1), capture.Address("b", 2), "ywindow", "", 1)
    head = b"Yclient 0.0 gamecodec\n" + bytes(256) + bytes(16)
    long_s = b"r\x04\x00\x00\x00\x01S\x00\x00\x00\x04\x00\x00\x00a"
    wide_header = b"R\x00\x00\x00\x04\x00\x00\x00\x01i\x04\x00\x00\x00\x07"
    call = ywindow.call("goto", 1, 2)
    refused = b"r\x04\x00\x00\x00\x01s\x04\x00\x00\xd8\x00"  # a surrogate
    messages = [long_s, wide_header, call]
    for tail in (b"", refused):
        stream = _ywindow_stream.YwindowStream(flow)
        items = stream.feed("to_server", head + b"".join(messages) + tail, 1.0, 1)
        units = [i for i in items if isinstance(i, capture.Unit)][3:]
        assert [u.payload for u in units] == messages
        errors = [i for i in items if isinstance(i, capture.CaptureError)]
        refused_at = len(head) + sum(map(len, messages)) + 8  # the surrogate
        assert [e.offset for e in errors] == ([refused_at] if tail else [])


def test_ipv6_fragments_whose_next_headers_differ_are_one_packet() -> None:
    """RFC 8200, 4.5: the Next Header values of a packet's fragments may differ;
    only the first fragment's (offset zero) is used."""
    import io

    from gamecodec import capture
    from tests.capture.conftest import lludp_wires
    from tests.capture.test_ip_tcp_edges import _raw, _v6_fragments

    wire = max(lludp_wires(), key=len)
    ips = [bytearray(ip) for ip in _v6_fragments(wire)]
    assert len(ips) > 2 and all(ip[40] == 17 for ip in ips)
    ips[1][40] = 59  # No Next Header
    ips[-1][40] = 6
    for order in (ips, ips[::-1]):
        items = list(capture.read(io.BytesIO(_raw([bytes(ip) for ip in order]))))
        assert [type(i).__name__ for i in items] == ["Unit"]
        assert items[0].payload == wire  # type: ignore[union-attr]


def test_overlapping_ipv4_fragments_hold_bounded_bytes() -> None:
    """IPv4 fragments may overlap; however many do, a packet in reassembly holds
    at most twice its size limit (without a bound, a capture of overlapping
    fragments was held whole)."""
    defrag = Defragmenter(max_packets=4)
    src = b"\x0a\x00\x00\x01"
    for ident in range(4):
        for start in range(0, 8 * 1000, 8):
            defrag.add((17, src, src, ident), start, True, bytes(50000), 0.0)
    held = sum(len(p) for e in defrag._pending.values() for p in e.parts.values())
    assert held <= 4 * 2 * defrag.max_size
