"""Archipelago connections in captures: ArchipelagoStream (capture._archipelago)."""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path

import dpkt
import pytest
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame
from websockets.frames import Opcode as WsOpcode
from websockets.streams import StreamReader

from gamecodec import archipelago, capture
from gamecodec.capture._archipelago import ArchipelagoStream
from gamecodec.capture._records import Address, CaptureError, Direction, Flow, Item, Unit
from gamecodec.capture._websocket import Deflate, Opcode, parse_deflate
from gamecodec.errors import DecodeError
from tests.capture import pcapgen
from tests.capture.conftest import real_capture
from tests.capture.test_websocket import (
    DIRECTIONS,
    Wire,
    corpus_wire,
    raw_frame,
    seeded_masks,  # noqa: F401  (autouse: fixed mask keys here too)
)
from tests.conftest import data_path

FLOW = Flow("tcp", Address("10.0.0.2", 51000), Address("10.0.0.1", 38281), "archipelago", "t", 1)


def session_rows() -> list[dict[str, object]]:
    rows = []
    for session in ("small", "js/ws", "js/native"):
        path = data_path("archipelago", *session.split("/"), "session.jsonl")
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def feed_wire(stream: ArchipelagoStream, wire: Wire) -> list[Item]:
    items = stream.feed("to_client", bytes(wire.streams["to_client"]), 1.0, 1)
    items += stream.feed("to_server", bytes(wire.streams["to_server"]), 2.0, 2)
    return items + stream.close(3.0, 3)


@pytest.mark.parametrize("deflate", [None, Deflate(11, 11), Deflate(15, 9, True, False)])
def test_one_unit_per_text_message_with_the_codecs_value(deflate: Deflate | None) -> None:
    wire = corpus_wire(deflate)
    items = feed_wire(ArchipelagoStream(FLOW), wire)
    rows = session_rows()
    sent = {d: [e for e in wire.expected[d]] for d in DIRECTIONS}
    for direction in DIRECTIONS:
        mine = [i for i in items if i.direction == direction]
        texts = [r for r in rows if (r["dir"] == "c2s") == (direction == "to_server")]
        assert len(mine) == len(texts) == len(sent[direction])
        for item, row, message in zip(mine, texts, sent[direction], strict=True):
            raw = str(row["raw"]).encode()
            try:
                value = archipelago.decode(raw)
            except DecodeError as exc:
                assert item == CaptureError(
                    "decode",
                    f"message at stream offset {message.offset}: {exc}",
                    item.time,
                    item.packet,
                    FLOW,
                    direction,
                    exc.offset,
                )
                continue
            assert isinstance(item, Unit)
            assert item.value == value and item.payload == raw
            assert item.names == tuple(row["cmds"])  # type: ignore[arg-type]
            assert item.size == message.size
            assert (item.flow, item.protocol) == (FLOW, "archipelago")
            assert (item.time, item.packet) == ((2.0, 2) if direction == "to_server" else (1.0, 1))
    refused = [i for i in items if isinstance(i, CaptureError)]
    assert [e.offset for e in refused] == [1, 1]  # [{"cmd": 5}], [{"nocmd": 1}]


def test_unit_carries_the_packet_that_completed_it() -> None:
    wire = Wire(Deflate(11, 11))
    wire.message("to_client", b'[{"cmd":"Say","text":"hi"}]', pieces=2)
    data = bytes(wire.streams["to_client"])
    stream = ArchipelagoStream(FLOW)
    assert stream.feed("to_client", data[:-3], 5.0, 7) == []
    (unit,) = stream.feed("to_client", data[-3:], 5.5, 9)
    assert isinstance(unit, Unit)
    assert (unit.time, unit.packet, unit.names) == (5.5, 9, ("Say",))


def test_bad_json_binary_and_framing_are_located_errors_and_the_stream_goes_on() -> None:
    wire = Wire(None)
    bad_at = wire.offset("to_client")
    wire.message("to_client", b'[{"cmd":"Say","text":')
    wire.message("to_client", b"\x00\x01", opcode=Opcode.BINARY)
    wire.control("to_client", Opcode.PING, b"x")
    garbage_at = wire.raw("to_client", b"\x8f\x00")
    wire.message("to_client", b'[{"cmd":"Sync"}]')
    wire.message("to_client", b'[{"cmd":"Retrieved","keys":{}}, {"cmd":"Whatever","x":1}]')
    items = feed_wire(ArchipelagoStream(FLOW), wire)
    assert [type(i) for i in items] == [CaptureError, CaptureError, CaptureError, Unit, Unit]
    bad_json, binary, framing, sync, mixed = items
    assert isinstance(bad_json, CaptureError) and bad_json.where == "decode"
    assert bad_json.offset == 21 and f"stream offset {bad_at}" in bad_json.message
    assert isinstance(binary, CaptureError) and binary.where == "decode"
    assert "binary message of 2 bytes" in binary.message
    assert isinstance(framing, CaptureError) and framing.where == "websocket"
    assert (framing.offset, framing.direction, framing.flow) == (garbage_at, "to_client", FLOW)
    assert isinstance(sync, Unit) and sync.names == ("Sync",)
    assert isinstance(mixed, Unit) and mixed.names == ("Retrieved", "Whatever")


def test_gap_becomes_an_error_and_later_messages_decode() -> None:
    wire = corpus_wire(Deflate(11, 11, True, True))
    data = bytes(wire.streams["to_client"])
    sent = [e for e in wire.expected["to_client"]]
    stream = ArchipelagoStream(FLOW)
    start = sent[10].offset + 1
    items = stream.feed("to_client", data[:start], 1.0, 1)
    items += stream.gap("to_client", 400, 1.5, 2)
    items += stream.feed("to_client", data[start + 400 :], 2.0, 3)
    errors = [i for i in items if isinstance(i, CaptureError)]
    assert errors[0] == CaptureError(
        "websocket", "400 bytes lost; looking for the next frame", 1.5, 2, FLOW, "to_client", start
    )
    units = [i for i in items if isinstance(i, Unit)]
    after = [e for e in sent if e.offset >= start + 400]
    assert [u.payload for u in units[10:]] == [e.payload for e in after]


# ---------------------------------------------------------------- captures


@dataclass
class _Connection:
    stream: ArchipelagoStream
    next_seq: dict[Direction, int] = field(default_factory=dict)
    data: dict[Direction, bytearray] = field(
        default_factory=lambda: {d: bytearray() for d in DIRECTIONS}
    )


def read_archipelago(path: Path, port: int = 38281) -> tuple[list[Item], list[_Connection]]:
    """Every item of the capture's connections to ``port``: TCP payloads taken with
    dpkt in capture order (the test captures have no loss or reordering; checked)."""
    connections: dict[tuple[object, ...], _Connection] = {}
    items: list[Item] = []
    time, number = 0.0, 0
    with path.open("rb") as file:
        reader = dpkt.pcapng.Reader(file) if path.suffix == ".pcapng" else dpkt.pcap.Reader(file)
        for number, (time, buf) in enumerate(reader, 1):
            link = reader.datalink()
            frame = dpkt.ethernet.Ethernet(buf) if link == 1 else dpkt.sll2.SLL2(buf)
            ip = frame.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            tcp = ip.data
            src = (socket.inet_ntoa(ip.src), tcp.sport)
            dst = (socket.inet_ntoa(ip.dst), tcp.dport)
            direction: Direction = "to_server" if tcp.dport == port else "to_client"
            key = (src, dst) if direction == "to_server" else (dst, src)
            if tcp.flags & dpkt.tcp.TH_SYN and not tcp.flags & dpkt.tcp.TH_ACK:
                flow = Flow(
                    "tcp", Address(*src), Address(*dst), "archipelago", "t", len(connections) + 1
                )
                connections[key] = _Connection(ArchipelagoStream(flow))
            conn = connections[key]
            if tcp.flags & dpkt.tcp.TH_SYN:
                conn.next_seq[direction] = tcp.seq + 1
                continue
            if tcp.data:
                assert tcp.seq == conn.next_seq[direction], "capture needs reassembly"
                conn.next_seq[direction] += len(tcp.data)
                conn.data[direction] += tcp.data
                items += conn.stream.feed(direction, bytes(tcp.data), time, number)
    for conn in connections.values():
        items += conn.stream.close(time, number)
    return items, list(connections.values())


def websockets_texts(data: bytes, *, client: bool, deflate: Deflate | None) -> list[bytes]:
    """The text messages of one direction's stream after its HTTP head, read by the
    ``websockets`` package's own frame parser (an independent decoder)."""
    body = data[data.index(b"\r\n\r\n") + 4 :]
    extensions = []
    if deflate is not None:
        # the reader of the client's frames is the server: local = server
        extensions = [
            PerMessageDeflate(
                remote_no_context_takeover=(
                    deflate.client_no_context_takeover
                    if client
                    else deflate.server_no_context_takeover
                ),
                local_no_context_takeover=(
                    deflate.server_no_context_takeover
                    if client
                    else deflate.client_no_context_takeover
                ),
                remote_max_window_bits=(
                    deflate.client_max_window_bits if client else deflate.server_max_window_bits
                ),
                local_max_window_bits=(
                    deflate.server_max_window_bits if client else deflate.client_max_window_bits
                ),
            )
        ]
    reader = StreamReader()
    reader.feed_data(body)
    reader.feed_eof()
    texts, parts = [], b""
    opcode = None
    while reader.buffer:
        parser = Frame.parse(reader.read_exact, mask=client, extensions=extensions)
        try:
            while True:
                next(parser)
        except StopIteration as done:
            frame: Frame = done.value
        if frame.opcode in (WsOpcode.TEXT, WsOpcode.BINARY):
            opcode, parts = frame.opcode, frame.data
        elif frame.opcode is WsOpcode.CONT:
            parts += frame.data
        else:
            if frame.opcode is WsOpcode.CLOSE:
                break
            continue
        if frame.fin and opcode is WsOpcode.TEXT:
            texts.append(bytes(parts))
    return texts


def test_real_capture_every_message_decodes() -> None:
    """The recorded Archipelago session (window bits 11): every message decodes,
    equals archipelago.decode of its payload, and the payloads are those the
    websockets package's own parser reads from the same streams."""
    items, connections = read_archipelago(real_capture("ap_gamecodec_session_first20s.pcapng"))
    assert [i for i in items if isinstance(i, CaptureError)] == []
    units = [i for i in items if isinstance(i, Unit)]
    assert units
    for unit in units:
        assert unit.value == archipelago.decode(unit.payload)
        assert unit.names and all(isinstance(name, str) for name in unit.names)
    assert len(connections) > 1
    compared = 0
    for conn in connections:
        handshake = conn.stream.websocket.handshake
        assert handshake.status == 101
        assert handshake.deflate == Deflate(11, 11)
        assert handshake.deflate == parse_deflate(handshake.accepted)
        for direction in DIRECTIONS:
            mine = [
                u.payload for u in units if u.flow == conn.stream.flow and u.direction == direction
            ]
            theirs = websockets_texts(
                bytes(conn.data[direction]),
                client=direction == "to_server",
                deflate=handshake.deflate,
            )
            assert mine == theirs
            compared += len(mine)
    assert compared == len(units)


@pytest.mark.parametrize(("fmt", "link"), [("pcapng", "ethernet"), ("pcap", "sll2")])
def test_capture_built_from_the_corpus(tmp_path: Path, fmt: str, link: str) -> None:
    """The corpus as a deflated WebSocket session in a capture file (pcapgen), read
    back: the same messages, in capture order, with their packets' times."""
    wire = corpus_wire(Deflate(11, 11))
    conn = pcapgen.TcpConnection(("10.0.0.2", 51000), ("10.0.0.1", 38281), time=100.0)
    packets = conn.open()
    streams = {d: bytes(wire.streams[d]) for d in DIRECTIONS}
    events = sorted(
        (e.offset, d, e) for d in DIRECTIONS for e in wire.expected[d]
    )  # interleave by offset: a plausible capture order
    done = {d: 0 for d in DIRECTIONS}
    for _, direction, event in events:
        end = event.offset + event.size
        if direction == "to_server" and done["to_client"] == 0:
            head = streams["to_client"].index(b"\r\n\r\n") + 4
            packets += conn.send("to_client", streams["to_client"][:head], segment=100)
            done["to_client"] = head
        packets += conn.send(direction, streams[direction][done[direction] : end], segment=536)
        done[direction] = end
    packets += conn.close()
    path = pcapgen.write(tmp_path / f"ap.{fmt}", packets, fmt=fmt, link=link)  # type: ignore[arg-type]
    items, _ = read_archipelago(path)
    units = [i for i in items if isinstance(i, Unit)]
    errors = [i for i in items if isinstance(i, CaptureError)]
    assert [e.offset for e in errors] == [1, 1]
    expected = [e for _, _, e in events]
    decodable = [e for e in expected if e.payload not in (b'[{"cmd": 5}]', b'[{"nocmd": 1}]')]
    assert [u.payload for u in units] == [e.payload for e in decodable]
    assert all(u.time > 100.0 for u in units)
    assert [u.time for u in units] == sorted(u.time for u in units)


def test_close_frames_give_nothing() -> None:
    """A close frame gives no unit and no error."""
    wire = Wire(None)
    wire.control("to_client", Opcode.CLOSE, struct.pack("!H", 1000) + b"bye")
    assert feed_wire(ArchipelagoStream(FLOW), wire) == []
    wire2 = Wire(None)
    wire2.raw("to_client", raw_frame(b"\x03\xe8", masked=False, opcode=Opcode.CLOSE))
    assert feed_wire(ArchipelagoStream(FLOW), wire2) == []


def test_capture_read_gives_the_same_units_as_the_streams() -> None:
    """Through the capture reader (its TCP reassembly and detection): the real
    session's units are those its streams give, with no error."""
    path = real_capture("ap_gamecodec_session_first20s.pcapng")
    items = list(capture.read(path))
    assert [i for i in items if isinstance(i, CaptureError)] == []
    units = [i for i in items if isinstance(i, Unit)]
    assert {u.protocol for u in units} == {"archipelago"}
    direct, _ = read_archipelago(path)
    assert [(u.time, u.packet, u.direction, u.payload, u.names, u.size) for u in units] == [
        (u.time, u.packet, u.direction, u.payload, u.names, u.size)
        for u in direct
        if isinstance(u, Unit)
    ]


@pytest.mark.parametrize(
    "acked", [False, True], ids=["hole_given_up_at_the_end", "hole_acknowledged"]
)
def test_capture_read_with_reordering_retransmission_and_loss(tmp_path: Path, acked: bool) -> None:
    """A deflated session (no context takeover) whose segments are reordered and
    repeated, and one server segment lost: the loss is a located error, and every
    message wholly outside the lost bytes comes back, and nothing else. The hole is
    given up when the capture ends, or when the client acknowledges past it."""
    wire = corpus_wire(Deflate(11, 11, True, True))
    streams = {d: bytes(wire.streams[d]) for d in DIRECTIONS}
    conn = pcapgen.TcpConnection(("10.0.0.2", 51000), ("10.0.0.1", 38281), time=10.0)
    handshake = conn.open()
    segments: dict[Direction, list[pcapgen.Packet]] = {}
    # a segment acknowledges what the other side sent before it was made: the
    # client's (captured after the server's) acknowledge the whole server stream,
    # or, without the ACK flag, nothing
    for direction in DIRECTIONS[::-1]:
        data = streams[direction]
        flags = pcapgen.PSH | (pcapgen.ACK if acked or direction == "to_client" else 0)
        segments[direction] = [
            conn.segment(direction, data[start : start + 300], flags)
            for start in range(0, len(data), 300)
        ]
    lost = len(segments["to_client"]) // 2
    lost_range = (lost * 300, lost * 300 + 300)
    server: list[pcapgen.Packet] = []
    for i, packet in enumerate(segments["to_client"]):
        if i == lost:
            continue
        server.append(packet)
        if i % 7 == 3:
            server.append(packet)  # retransmitted
    for i in range(1, len(server) - 1, 5):
        server[i], server[i + 1] = server[i + 1], server[i]  # reordered
    packets = handshake + server + segments["to_server"]
    path = pcapgen.write(tmp_path / "lossy.pcapng", packets, fmt="pcapng")
    items = list(capture.read(path))
    errors = [i for i in items if isinstance(i, CaptureError)]
    tcp_gaps = [e for e in errors if e.where == "tcp"]
    websocket = [e for e in errors if e.where == "websocket"]
    assert [(e.offset, e.direction) for e in tcp_gaps] == [(lost_range[0], "to_client")]
    assert websocket[0].offset == lost_range[0] and websocket[0].direction == "to_client"
    assert websocket[0].packet == tcp_gaps[0].packet
    assert {e.where for e in errors} == {"tcp", "websocket", "decode"}
    units = [i for i in items if isinstance(i, Unit)]
    refused = (b'[{"cmd": 5}]', b'[{"nocmd": 1}]')
    for direction in DIRECTIONS:
        outside = [
            e
            for e in wire.expected[direction]
            if direction == "to_server"
            or e.offset + e.size <= lost_range[0]
            or e.offset >= lost_range[1]
        ]
        assert [u.payload for u in units if u.direction == direction] == [
            e.payload for e in outside if e.payload not in refused
        ]
