"""TCP reassembly: a BZRC session's bytes come out whole however the segments go."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from typing import Any

import pytest

from gamecodec import bzrc, capture
from gamecodec.capture._tcp import TcpStream
from tests.capture import pcapgen
from tests.capture.conftest import bzrc_streams

CLIENT, SERVER = ("10.0.0.2", 40000), ("10.0.0.1", 47200)


def _session(segment: int = 40) -> tuple[pcapgen.TcpConnection, list[pcapgen.Packet]]:
    """The recorded session as a connection: greeting, then each exchange in turn."""
    from tests.bzrc.conftest import load_transcript

    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    packets = conn.open()
    for exchange in load_transcript("basic_four_ls.json")["exchanges"]:
        packets += conn.send("to_server", str(exchange["send"]).encode("latin-1"), segment)
        packets += conn.send("to_client", str(exchange["recv"]).encode("latin-1"), segment)
    return conn, packets


def _read(packets: list[pcapgen.Packet]) -> list[capture.Item]:
    return list(capture.read(io.BytesIO(pcapgen.capture(packets))))


def _server_units(items: list[capture.Item]) -> list[object]:
    return [i.value for i in items if isinstance(i, capture.Unit) and i.direction == "to_client"]


def _client_lines(items: list[capture.Item]) -> list[bytes]:
    return [i.payload for i in items if isinstance(i, capture.Unit) and i.direction == "to_server"]


def _expected() -> tuple[list[bytes], list[object]]:
    sent, received = bzrc_streams()
    return sent.splitlines(keepends=True), bzrc.decode(received)


def test_in_order() -> None:
    conn, packets = _session()
    items = _read(packets + conn.close())
    assert [i for i in items if isinstance(i, capture.CaptureError)] == []
    lines, responses = _expected()
    assert _client_lines(items) == lines
    assert _server_units(items) == responses
    flow = items[0].flow
    assert flow is not None and flow.protocol == "bzrc"
    assert flow.client.port == 40000 and flow.reason == "content: the 'bzrobots 1' greeting"


@pytest.mark.parametrize("seed", range(6))
def test_reordered_repeated_and_overlapping(seed: int) -> None:
    rng = random.Random(seed)
    conn, packets = _session(segment=23)
    head, body = packets[:3], packets[3:]
    streams = {
        end: (
            min(p.seq for p in body if p.src == end and p.payload),
            b"".join(p.payload for p in body if p.src == end),
        )
        for end in (CLIENT, SERVER)
    }
    mixed: list[pcapgen.Packet] = []
    for packet in body:
        mixed.append(packet)
        if not packet.payload:
            continue
        start, data = streams[packet.src]
        at = packet.seq - start
        if rng.random() < 0.3:  # a retransmission of a tail of it
            cut = rng.randrange(len(packet.payload))
            again = data[at + cut : at + len(packet.payload)]
            mixed.append(
                pcapgen.tcp(packet.time, packet.src, packet.dst, again, seq=packet.seq + cut)
            )
        if rng.random() < 0.2:  # an overlap reaching into the next segment
            more = data[at : at + len(packet.payload) + 5]
            mixed.append(pcapgen.tcp(packet.time, packet.src, packet.dst, more, seq=packet.seq))
    for _ in range(len(mixed) // 3):  # swap neighbours of one direction
        k = rng.randrange(len(mixed) - 3)
        if mixed[k].src == mixed[k + 1].src:
            mixed[k], mixed[k + 1] = mixed[k + 1], mixed[k]
    items = _read(head + mixed + conn.close())
    assert [i for i in items if isinstance(i, capture.CaptureError)] == []
    lines, responses = _expected()
    assert _client_lines(items) == lines
    assert _server_units(items) == responses


def test_overlaps_give_each_byte_once() -> None:
    stream = TcpStream()
    stream.syn(99)
    assert stream.add(100, b"abcdef") == [b"abcdef"]
    assert stream.add(103, b"XYZghi") == [b"ghi"]
    assert stream.add(110, b"kl") == []  # out of order
    assert stream.add(109, b"jQ") == [b"jQ", b"l"]  # the copy that reaches the end first
    assert stream.add(100, b"abc") == [] and stream.retransmitted == 1
    assert stream.offset == 12


def test_sequence_numbers_wrap() -> None:
    stream = TcpStream()
    stream.syn(0xFFFFFFFD)
    assert stream.add(0xFFFFFFFE, b"ab") == [b"ab"]
    assert stream.add(1, b"d") == []
    assert stream.add(0, b"c") == [b"c", b"d"]


def _overlapping_burst(stream: TcpStream, reverse: bool) -> int:
    """1,000 three-byte segments, each overlapping the next by one byte, held
    behind a one-byte hole (in ascending or descending order), then the hole."""
    assert stream.next is not None
    start = stream.next
    order = range(999, -1, -1) if reverse else range(1000)
    for i in order:
        assert stream.add((start + 1 + 2 * i) & 0xFFFFFFFF, b"abc") == []
    pieces = stream.add(start, b"x")
    return sum(len(p) for p in pieces if isinstance(p, bytes))


class _CountingSegments(dict[int, bytes]):
    """A ``pending`` map that counts the segments looked at: each one visited by
    an iteration, and each one read, stored or taken out by its key."""

    looked_at = 0

    def __iter__(self) -> Iterator[int]:
        for key in super().__iter__():
            self.looked_at += 1
            yield key

    def __getitem__(self, key: int) -> bytes:
        self.looked_at += 1
        return super().__getitem__(key)

    def __setitem__(self, key: int, value: bytes) -> None:
        self.looked_at += 1
        super().__setitem__(key, value)

    def get(self, key: int, default: Any = None) -> Any:
        self.looked_at += 1
        return super().get(key, default)

    def pop(self, key: int, *default: Any) -> Any:
        self.looked_at += 1
        return super().pop(key, *default)


def test_overlapping_segments_drain_in_linear_work() -> None:
    """Segments held out of order are released earliest first without rescanning
    them all for each release (acb4648: the drain visited every held segment for
    each release, ~1,000 times the segments for 1,000 arriving in descending order)."""
    for reverse in (False, True):
        stream = TcpStream()
        stream.syn(0xFFFFF000)  # the bursts cross the sequence numbers' wrap
        stream.pending = counted = _CountingSegments()
        for _ in range(5):
            assert _overlapping_burst(stream, reverse) == 2002
            assert not stream.pending and stream.pending_bytes == 0
        assert stream.offset == 5 * 2002
        # each of the 5,000 segments stored, then taken out: a few looks each
        assert 5_000 <= counted.looked_at <= 4 * 5_000, (reverse, counted.looked_at)


def test_dropped_segment_is_a_gap_and_the_stream_resynchronises() -> None:
    conn, packets = _session(segment=1400)
    server_data = [
        k for k, p in enumerate(packets) if p.payload and p.src == SERVER and b"begin" in p.payload
    ]
    dropped = packets[server_data[2]]
    items = _read(packets[: server_data[2]] + packets[server_data[2] + 1 :] + conn.close())
    errors = [i for i in items if isinstance(i, capture.CaptureError)]
    gaps = [e for e in errors if e.where == "tcp"]
    assert len(gaps) == 1
    assert f"{len(dropped.payload)} bytes" in gaps[0].message
    assert gaps[0].direction == "to_client"
    _lines, responses = _expected()
    got = _server_units(items)
    lost = len(responses) - len(got)
    assert 1 <= lost <= 2  # the response in the hole (and one cut by it)
    assert got[-5:] == responses[-5:]  # in step again after the gap


def test_gap_found_by_the_peers_ack() -> None:
    """A hole the other side acknowledged is reported at once, not at the end."""
    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    packets = conn.open() + conn.send("to_client", b"bzrobots 1\n")
    lost = conn.send("to_server", b"agent 1\n")
    packets += conn.send("to_server", b"teams\n")
    packets += conn.send("to_client", b"ack 1.5 teams\nbegin\nend\n")
    items = _read(packets)
    kinds = [
        (type(i).__name__, getattr(i, "names", None) or getattr(i, "where", None)) for i in items
    ]
    assert ("CaptureError", "tcp") in kinds
    gap = next(i for i in items if isinstance(i, capture.CaptureError))
    assert f"{len(lost[0].payload)} bytes" in gap.message and gap.offset == 0
    assert kinds.index(("CaptureError", "tcp")) < kinds.index(("Unit", ("Listing",)))


def test_connection_picked_up_mid_stream() -> None:
    conn, packets = _session(segment=1400)
    late = [p for p in packets[3:]][6:]  # no handshake, no greeting, some exchanges gone
    items = _read(late + conn.close())
    errors = [i for i in items if isinstance(i, capture.CaptureError)]
    assert {e.where for e in errors} <= {"tcp", "decode"}
    assert any("start was not captured" in e.message for e in errors)
    flow = next(i.flow for i in items if isinstance(i, capture.Unit))
    assert flow.protocol == "bzrc" and flow.server.port == 47200
    lines, responses = _expected()
    assert _server_units(items)[-5:] == responses[-5:]
    assert set(_client_lines(items)) <= set(lines)  # no line cut by the pickup is read


def test_reset_and_reused_ports_make_new_flows() -> None:
    first = pcapgen.TcpConnection(CLIENT, SERVER, time=1.0)
    second = pcapgen.TcpConnection(CLIENT, SERVER, time=5.0, client_isn=90000)
    packets = first.open() + first.send("to_client", b"bzrobots 1\n")
    packets.append(first.segment("to_server", b"", pcapgen.RST))
    packets += second.open() + second.send("to_client", b"bzrobots 1\n") + second.close()
    cap = capture.read(io.BytesIO(pcapgen.capture(packets)))
    units = [i for i in cap if isinstance(i, capture.Unit)]
    assert [u.flow.index for u in units] == [1, 2]
    assert len(cap.flows) == 2


def test_out_of_order_bytes_are_bounded() -> None:
    """A hole that never fills holds at most max_pending bytes before it is given up."""
    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    packets = conn.open() + conn.send("to_client", b"bzrobots 1\n")
    conn.send("to_server", b"x" * 1000)  # never captured
    packets += conn.send("to_server", b"teams\n" * 5000, segment=1000)
    cap = capture.Capture(io.BytesIO(pcapgen.capture(packets)), max_pending=8192)
    peak = 0
    for _item in cap:
        for c, _d in cap._tcp.table.values():
            peak = max(peak, c.streams["to_server"].pending_bytes)
    assert peak <= 8192 + 1000
    assert cap.error_counts.get("tcp") == 1
    assert cap.units >= 4990


def test_picked_up_inside_a_line() -> None:
    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    conn.open()
    conn.send("to_client", b"bzrobots 1\n")
    conn.send("to_server", b"agent 1\nmyta")  # before the capture started
    packets = conn.send("to_server", b"nks\nteams\nshots\n", segment=4)
    packets += conn.send("to_client", b"ack 1.0 mytanks\nbegin\nend\n")
    items = _read(packets)
    assert _client_lines(items) == [b"teams\n", b"shots\n"]
    requests = [
        i.value for i in items if isinstance(i, capture.Unit) and i.direction == "to_server"
    ]
    assert [r.id for r in requests] == [0, 1]  # type: ignore[attr-defined]
