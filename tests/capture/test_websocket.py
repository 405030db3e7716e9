"""Passive WebSocket decoding of captured byte streams (capture._websocket).

Streams are built from the recorded Archipelago corpus with the ``websockets``
package's own frame and permessage-deflate encoders (an encoder independent of
the decoder under test), plus hand-made frames for what no encoder writes.
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from collections.abc import Iterable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame
from websockets.frames import Opcode as WsOpcode

from gamecodec.capture._records import Direction
from gamecodec.capture._websocket import (
    Deflate,
    Event,
    Message,
    Opcode,
    PassiveWebSocket,
    Problem,
    parse_deflate,
)
from tests.conftest import data_path

DIRECTIONS: tuple[Direction, Direction] = ("to_server", "to_client")
MASKS = random.Random(20)


class _SeededSecrets:
    """Stands in for ``secrets`` in websockets.frames: mask keys from a seeded generator."""

    @staticmethod
    def token_bytes(size: int) -> bytes:
        return MASKS.randbytes(size)


@pytest.fixture(autouse=True)
def seeded_masks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Client mask keys repeat from run to run (the streams, and so the tests, are fixed)."""
    MASKS.seed(20)
    monkeypatch.setattr("websockets.frames.secrets", _SeededSecrets)
    yield


def corpus_messages() -> list[tuple[Direction, bytes]]:
    """Every recorded Archipelago frame text, with its direction, in capture order."""
    out: list[tuple[Direction, bytes]] = []
    for session in ("small", "js/ws", "js/native"):
        path = data_path("archipelago", *session.split("/"), "session.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out.append(("to_server" if row["dir"] == "c2s" else "to_client", row["raw"].encode()))
    return out


def extension_header(deflate: Deflate) -> str:
    params = ["permessage-deflate"]
    if deflate.server_no_context_takeover:
        params.append("server_no_context_takeover")
    if deflate.client_no_context_takeover:
        params.append("client_no_context_takeover")
    params.append(f"server_max_window_bits={deflate.server_max_window_bits}")
    params.append(f"client_max_window_bits={deflate.client_max_window_bits}")
    return "; ".join(params)


def request(offer: str = "permessage-deflate; client_max_window_bits") -> bytes:
    """A client's upgrade request offering ``offer``."""
    lines = [
        "GET / HTTP/1.1",
        "Host: 127.0.0.1:38281",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    if offer:
        lines.append(f"Sec-WebSocket-Extensions: {offer}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def response(accepted: str = "", status: str = "101 Switching Protocols") -> bytes:
    """A server's answer accepting ``accepted`` extensions."""
    lines = [f"HTTP/1.1 {status}", "Upgrade: websocket", "Connection: Upgrade"]
    lines.append("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    if accepted:
        lines.append(f"Sec-WebSocket-Extensions: {accepted}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def raw_frame(
    payload: bytes,
    *,
    masked: bool,
    opcode: int = Opcode.TEXT,
    fin: bool = True,
    rsv1: bool = False,
) -> bytes:
    """One frame written by hand (for what an encoder would refuse to write)."""
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    size = len(payload)
    mask_bit = 0x80 if masked else 0
    if size < 126:
        head = bytes([first, mask_bit | size])
    elif size < 1 << 16:
        head = bytes([first, mask_bit | 126]) + struct.pack("!H", size)
    else:
        head = bytes([first, mask_bit | 127]) + struct.pack("!Q", size)
    if masked:
        key = MASKS.randbytes(4)
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        head += key
    return head + payload


class Wire:
    """Both streams of one connection, and the events a decoder must give for them.

    Frames are written by ``websockets`` (with its permessage-deflate when
    ``deflate`` is given), masked from the client.
    """

    def __init__(self, deflate: Deflate | None = None, *, handshake: bool = True) -> None:
        self.deflate = deflate
        self.streams: dict[Direction, bytearray] = {d: bytearray() for d in DIRECTIONS}
        if handshake:
            self.streams["to_server"] += request()
            self.streams["to_client"] += response(extension_header(deflate) if deflate else "")
        self.extensions: dict[Direction, list[PerMessageDeflate]] = {
            d: self._encoder(d) for d in DIRECTIONS
        }
        self.expected: dict[Direction, list[Event]] = {d: [] for d in DIRECTIONS}

    def _encoder(self, direction: Direction) -> list[PerMessageDeflate]:
        d = self.deflate
        if d is None:
            return []
        client = direction == "to_server"
        return [
            PerMessageDeflate(
                remote_no_context_takeover=(
                    d.server_no_context_takeover if client else d.client_no_context_takeover
                ),
                local_no_context_takeover=(
                    d.client_no_context_takeover if client else d.server_no_context_takeover
                ),
                remote_max_window_bits=(
                    d.server_max_window_bits if client else d.client_max_window_bits
                ),
                local_max_window_bits=(
                    d.client_max_window_bits if client else d.server_max_window_bits
                ),
            )
        ]

    def _frame(self, direction: Direction, frame: Frame) -> bytes:
        data = frame.serialize(mask=direction == "to_server", extensions=self.extensions[direction])
        self.streams[direction] += data
        return data

    def offset(self, direction: Direction) -> int:
        return len(self.streams[direction])

    def message(
        self,
        direction: Direction,
        payload: bytes,
        *,
        opcode: int = Opcode.TEXT,
        pieces: int = 1,
        pings: bool = False,
    ) -> None:
        """``payload`` as one message in ``pieces`` frames (a ping and a pong between
        fragments when ``pings``)."""
        start = self.offset(direction)
        step = max(1, -(-len(payload) // pieces))
        chunks = [payload[i : i + step] for i in range(0, len(payload), step)] or [b""]
        controls: list[Event] = []
        for i, chunk in enumerate(chunks):
            first = WsOpcode(opcode) if i == 0 else WsOpcode.CONT
            self._frame(direction, Frame(first, chunk, fin=i == len(chunks) - 1))
            if pings and i < len(chunks) - 1:
                controls.append(self._control(direction, Opcode.PING, b"p%d" % i))
                controls.append(self._control(direction, Opcode.PONG, b""))
        size = self.offset(direction) - start - sum(e.size for e in controls if type(e) is Message)
        self.expected[direction] += controls
        self.expected[direction].append(
            Message(direction, opcode, payload, size, start, self.deflate is not None)
        )

    def _control(self, direction: Direction, opcode: int, payload: bytes) -> Message:
        start = self.offset(direction)
        data = self._frame(direction, Frame(WsOpcode(opcode), payload))
        return Message(direction, opcode, payload, len(data), start)

    def control(self, direction: Direction, opcode: int, payload: bytes = b"") -> None:
        """A ping, pong or close frame."""
        self.expected[direction].append(self._control(direction, opcode, payload))

    def raw(self, direction: Direction, data: bytes) -> int:
        """Append bytes as they are; returns their offset."""
        start = self.offset(direction)
        self.streams[direction] += data
        return start


def feed_all(
    ws: PassiveWebSocket, chunks: Iterable[tuple[Direction, bytes]], close: bool = True
) -> dict[Direction, list[Event]]:
    """Feed ``chunks`` in order; the events of each direction."""
    got: dict[Direction, list[Event]] = {d: [] for d in DIRECTIONS}
    events: list[Event] = []
    for direction, data in chunks:
        events += ws.feed(direction, data)
    if close:
        events += ws.close()
    for event in events:
        got[event.direction].append(event)
    return got


def whole(wire: Wire) -> list[tuple[Direction, bytes]]:
    """Each stream in one piece, the server's first (the order a capture shows)."""
    return [
        ("to_client", bytes(wire.streams["to_client"])),
        ("to_server", bytes(wire.streams["to_server"])),
    ]


def corpus_wire(deflate: Deflate | None, **kw: object) -> Wire:
    wire = Wire(deflate)
    for direction, raw in corpus_messages():
        wire.message(direction, raw, **kw)  # type: ignore[arg-type]
    return wire


# ---------------------------------------------------------------- handshake


def test_parse_deflate_reads_the_accepted_parameters() -> None:
    assert parse_deflate("") is None
    assert parse_deflate("x-other, foo; bar=1") is None
    assert parse_deflate("permessage-deflate") == Deflate()
    got = parse_deflate(
        'x-other; a=1, Permessage-Deflate; server_max_window_bits="11"; '
        "client_max_window_bits=9; client_no_context_takeover; server_no_context_takeover"
    )
    assert got == Deflate(
        client_max_window_bits=9,
        server_max_window_bits=11,
        client_no_context_takeover=True,
        server_no_context_takeover=True,
    )
    for bad in (
        "permessage-deflate; server_max_window_bits=16",
        "permessage-deflate; server_max_window_bits=7",
        "permessage-deflate; client_max_window_bits",
        "permessage-deflate; mystery",
    ):
        with pytest.raises(ValueError):
            parse_deflate(bad)


def test_handshake_is_recorded() -> None:
    deflate = Deflate(11, 11)
    wire = Wire(deflate)
    ws = PassiveWebSocket()
    feed_all(ws, whole(wire))
    assert ws.handshake.target == "/"
    assert ws.handshake.status == 101
    assert ws.handshake.offered == "permessage-deflate; client_max_window_bits"
    assert ws.handshake.deflate == deflate


def test_refused_upgrade_gives_a_problem_and_no_messages() -> None:
    wire = Wire(None, handshake=False)
    wire.raw("to_server", request())
    wire.raw("to_client", response(status="403 Forbidden") + b"go away")
    wire.raw("to_server", raw_frame(b"[]", masked=True))
    got = feed_all(PassiveWebSocket(), whole(wire))
    assert got["to_server"] == []
    assert got["to_client"] == [
        Problem("to_client", 0, "upgrade refused: 'HTTP/1.1 403 Forbidden'")
    ]


def test_digits_int_refuses_are_not_numbers() -> None:
    """``str.isdigit`` takes ``\xb2`` (latin-1 ``²``), which ``int`` refuses: a
    status or window bits holding one is not a number (it raised ValueError)."""
    ws = PassiveWebSocket()
    head = b"HTTP/1.1 1\xb21 Switching Protocols\r\n\r\n"
    assert ws.feed("to_client", head + raw_frame(b"[]", masked=False)) == [
        Problem("to_client", 0, "upgrade refused: 'HTTP/1.1 1\xb21 Switching Protocols'")
    ]
    with pytest.raises(ValueError, match=r"client_max_window_bits=1\xb2 is not 8..15"):
        parse_deflate("permessage-deflate; client_max_window_bits=1\xb2")


def test_not_an_upgrade_request() -> None:
    got = feed_all(
        PassiveWebSocket(),
        [("to_server", b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")],
    )
    (problem,) = got["to_server"]
    assert isinstance(problem, Problem) and problem.offset == 0
    assert "not a WebSocket upgrade" in problem.message


def test_endless_http_head_is_bounded() -> None:
    ws = PassiveWebSocket()
    events = ws.feed("to_server", b"GET / HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 70_000)
    assert [type(e) for e in events] == [Problem]
    assert ws.feed("to_server", b"more") == []


class _CountingBuffer(bytearray):
    """A stream buffer that counts the bytes its ``find`` calls look at."""

    looked_at = 0

    def find(self, sub: bytes, start: int = 0, *rest: int) -> int:  # type: ignore[override]
        _CountingBuffer.looked_at += len(self) - start
        return super().find(sub, start, *rest)


@pytest.mark.parametrize("piece", [1, 7])
def test_http_head_in_small_pieces_is_searched_once(
    monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    head = request().replace(b"\r\n\r\n", b"\r\nX-Pad: " + b"a" * 20_000 + b"\r\n\r\n")
    ws = PassiveWebSocket()
    stream = ws._streams["to_server"]
    monkeypatch.setattr(stream, "buffer", _CountingBuffer())
    monkeypatch.setattr(_CountingBuffer, "looked_at", 0)
    for at in range(0, len(head), piece):
        assert ws.feed("to_server", head[at : at + piece]) == []
    assert not stream.in_head and ws.handshake.target == "/"
    # each byte looked at about once (three more at each piece's start): 204,697,251 before
    assert _CountingBuffer.looked_at < 5 * len(head)


# ---------------------------------------------------------------- messages


def test_plain_frames_both_directions() -> None:
    wire = corpus_wire(None)
    assert feed_all(PassiveWebSocket(), whole(wire)) == wire.expected


@pytest.mark.parametrize("takeover", [True, False], ids=["takeover", "no_takeover"])
@pytest.mark.parametrize("bits", range(9, 16))
def test_deflate_window_bits_and_context_takeover(bits: int, takeover: bool) -> None:
    deflate = Deflate(bits, bits, not takeover, not takeover)
    wire = corpus_wire(deflate)
    got = feed_all(PassiveWebSocket(), whole(wire))
    assert got == wire.expected
    assert all(type(e) is Message and e.compressed for e in got["to_client"])


def test_deflate_with_different_parameters_per_direction() -> None:
    deflate = Deflate(
        client_max_window_bits=9,
        server_max_window_bits=15,
        client_no_context_takeover=True,
        server_no_context_takeover=False,
    )
    wire = corpus_wire(deflate)
    assert feed_all(PassiveWebSocket(), whole(wire)) == wire.expected


def test_no_context_takeover_inflates_each_message_alone() -> None:
    """With no_context_takeover a message refers to nothing before it: a sender
    that did (takeover) is caught, not misread."""
    deflate = Deflate(11, 11, False, False)
    wire = corpus_wire(deflate)
    told = response(extension_header(Deflate(11, 11, True, True)))
    server = bytes(wire.streams["to_client"])
    server = told + server[len(response(extension_header(deflate))) :]
    ws = PassiveWebSocket()
    events = ws.feed("to_client", server) + ws.close()
    messages = [e for e in events if type(e) is Message]
    by_offset = {e.offset: e for e in wire.expected["to_client"]}
    shift = len(told) - len(response(extension_header(deflate)))
    assert all(m.payload == by_offset[m.offset - shift].payload for m in messages)
    assert any(type(e) is Problem and "cannot inflate" in e.message for e in events)


@pytest.mark.parametrize("deflate", [None, Deflate(11, 11), Deflate(10, 12, True, True)])
def test_fragmented_messages_with_interleaved_control_frames(deflate: Deflate | None) -> None:
    wire = Wire(deflate)
    for i, (direction, raw) in enumerate(corpus_messages()[:60]):
        wire.message(direction, raw, pieces=1 + i % 5, pings=i % 2 == 0)
    wire.message("to_client", b'[{"cmd":"Bounced","data":{}}]', opcode=Opcode.BINARY, pieces=3)
    wire.control("to_server", Opcode.CLOSE, struct.pack("!H", 1000) + b"bye")
    wire.control("to_client", Opcode.CLOSE, struct.pack("!H", 1000))
    got = feed_all(PassiveWebSocket(), whole(wire))
    assert got == wire.expected
    pings = [e for e in got["to_client"] if type(e) is Message and e.opcode == Opcode.PING]
    assert len(pings) > 10


def small_wire(deflate: Deflate | None) -> Wire:
    """A short connection with every kind of frame: for splitting at every byte."""
    wire = Wire(deflate)
    messages = corpus_messages()
    wire.message("to_client", messages[0][1][:300])
    wire.message("to_server", messages[1][1], pieces=3, pings=True)
    wire.control("to_client", Opcode.PING, b"hello")
    wire.message("to_client", b'[{"cmd":"Say","text":"' + b"x" * 200 + b'"}]', pieces=2)
    wire.control("to_server", Opcode.PONG, b"hello")
    wire.message("to_server", b'[{"cmd":"Sync"}]')
    wire.message("to_client", b"[]")
    wire.control("to_server", Opcode.CLOSE, struct.pack("!H", 1000))
    wire.control("to_client", Opcode.CLOSE, struct.pack("!H", 1000))
    return wire


@pytest.mark.parametrize("deflate", [None, Deflate(11, 11), Deflate(9, 9, True, True)])
def test_split_at_every_byte_boundary_gives_the_same_messages(deflate: Deflate | None) -> None:
    wire = small_wire(deflate)
    server, client = bytes(wire.streams["to_client"]), bytes(wire.streams["to_server"])
    assert feed_all(PassiveWebSocket(), whole(wire)) == wire.expected
    for cut in range(max(len(server), len(client)) + 1):
        chunks: list[tuple[Direction, bytes]] = [
            ("to_server", client[:cut]),
            ("to_client", server[:cut]),
            ("to_server", client[cut:]),
            ("to_client", server[cut:]),
        ]
        assert feed_all(PassiveWebSocket(), chunks) == wire.expected, cut


def test_one_byte_at_a_time() -> None:
    wire = corpus_wire(Deflate(11, 11))
    chunks: list[tuple[Direction, bytes]] = []
    server, client = bytes(wire.streams["to_client"]), bytes(wire.streams["to_server"])
    for i in range(max(len(server), len(client))):
        chunks += [("to_client", server[i : i + 1]), ("to_server", client[i : i + 1])]
    assert feed_all(PassiveWebSocket(), chunks) == wire.expected


def test_client_frames_wait_for_the_response() -> None:
    """Client frames fed before the response (reordered delivery) are read once it comes."""
    wire = corpus_wire(Deflate(11, 11))
    ws = PassiveWebSocket()
    assert ws.feed("to_server", bytes(wire.streams["to_server"])) == []
    events = ws.feed("to_client", bytes(wire.streams["to_client"])) + ws.close()
    assert [e for e in events if e.direction == "to_server"] == wire.expected["to_server"]


def test_close_frame_and_bytes_after_it() -> None:
    wire = Wire(None)
    wire.message("to_client", b"[]")
    wire.control("to_client", Opcode.CLOSE, struct.pack("!H", 1001) + b"going away")
    at = wire.raw("to_client", raw_frame(b"[]", masked=False))
    wire.expected["to_client"].append(Problem("to_client", at, "bytes after the close"))
    assert feed_all(PassiveWebSocket(), whole(wire)) == wire.expected


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (bytes([0xB1, 0x82, 1, 2, 3, 4, 5, 6]), "reserved bits"),
        (bytes([0x83, 0x80, 1, 2, 3, 4]), "unknown opcode"),
        (bytes([0x81, 0x02, 0x5B, 0x5D]), "unmasked client frame"),
        (bytes([0x09, 0x80, 1, 2, 3, 4]), "fragmented control frame"),
        (bytes([0x89, 0xFE, 0, 200]) + b"\0" * 204, "control frame longer than 125"),
        (bytes([0x81, 0xFE, 0, 5, 1, 2, 3, 4]) + b"12345", "shortest form"),
        (bytes([0xC9, 0x80, 1, 2, 3, 4]), "compressed control frame"),
    ],
)
def test_bad_frame_header_is_located_and_reading_goes_on(bad: bytes, why: str) -> None:
    wire = Wire(Deflate(11, 11))
    messages = corpus_messages()
    for direction, raw in messages[:20]:
        wire.message(direction, raw)
    at = wire.raw("to_server", bad)
    for direction, raw in messages[20:30]:
        wire.message(direction, raw)
    got = feed_all(PassiveWebSocket(), whole(wire))
    server = [e for e in got["to_server"] if type(e) is Problem]
    assert server and server[0].offset == at and why in server[0].message
    assert sound(got["to_server"], wire.expected["to_server"])[:8] == [
        e for e in wire.expected["to_server"] if e.offset < at
    ]
    assert got["to_client"] == wire.expected["to_client"]


def test_garbage_between_frames_is_skipped_once() -> None:
    wire = Wire(None)
    messages = corpus_messages()
    for direction, raw in messages[:30]:
        wire.message(direction, raw)
    at = wire.raw("to_client", b"\x83garbage that is not a frame" * 3)
    before = list(wire.expected["to_client"])
    for direction, raw in messages[30:60]:
        wire.message(direction, raw)
    got = feed_all(PassiveWebSocket(), whole(wire))
    problems = [e for e in got["to_client"] if type(e) is Problem]
    assert [p.offset for p in problems] == [at]
    assert [e for e in got["to_client"] if type(e) is Message] == [
        e for e in wire.expected["to_client"] if e not in problems
    ]
    assert got["to_server"] == wire.expected["to_server"]
    assert before == wire.expected["to_client"][: len(before)]


def test_continuation_and_compression_misuse() -> None:
    wire = Wire(None)
    a = wire.raw("to_client", raw_frame(b"x", masked=False, opcode=Opcode.CONTINUATION))
    b = wire.raw("to_client", raw_frame(b"x", masked=False, rsv1=True))
    c = wire.raw("to_client", raw_frame(b"[1", masked=False, fin=False))
    wire.message("to_client", b"[]")
    got = feed_all(PassiveWebSocket(), whole(wire))["to_client"]
    assert got == [
        Problem("to_client", a, "continuation frame outside a message"),
        Problem("to_client", b, "compressed frame, but no deflate agreed"),
        Problem("to_client", c, "message never finished; a new one began"),
        wire.expected["to_client"][0],
    ]


def test_message_over_the_limit_is_dropped_and_the_next_read() -> None:
    wire = Wire(Deflate(15, 15, True, True))
    wire.message("to_client", b'["' + b"a" * 5000 + b'"]')
    wire.message("to_client", b"[1]", pieces=1)
    big = raw_frame(b"z" * 3000, masked=False)
    at = wire.raw("to_client", big)
    wire.message("to_client", b"[2]")
    got = feed_all(PassiveWebSocket(max_message_size=1000), whole(wire))["to_client"]
    assert [type(e) for e in got] == [Problem, Message, Problem, Message]
    assert got[0].offset == wire.expected["to_client"][0].offset
    assert "inflates past the 1000-byte limit" in got[0].message
    assert got[2].offset == at and "over the 1000-byte limit" in got[2].message
    assert [e.payload for e in got if type(e) is Message] == [b"[1]", b"[2]"]


def test_a_deflate_bomb_inflates_no_further_than_the_limit() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = compressor.compress(b" " * (32 << 20)) + compressor.flush(zlib.Z_SYNC_FLUSH)
    stream = response("permessage-deflate") + raw_frame(body[:-4], masked=False, rsv1=True)
    ws = PassiveWebSocket(max_message_size=1 << 20)
    (problem,) = ws.feed("to_client", stream)
    assert isinstance(problem, Problem) and "inflates past" in problem.message


@settings(max_examples=300, deadline=None)
@given(
    chunks=st.lists(st.tuples(st.sampled_from(DIRECTIONS), st.binary(max_size=64)), max_size=12),
    gaps=st.lists(st.tuples(st.sampled_from(DIRECTIONS), st.integers(1, 300)), max_size=3),
    prefix=st.booleans(),
)
def test_arbitrary_bytes_give_only_events(
    chunks: list[tuple[Direction, bytes]], gaps: list[tuple[Direction, int]], prefix: bool
) -> None:
    ws = PassiveWebSocket(max_message_size=4096)
    events: list[Event] = []
    if prefix:
        events += ws.feed("to_server", request())
        events += ws.feed("to_client", response("permessage-deflate"))
    for i, (direction, data) in enumerate(chunks):
        events += ws.feed(direction, data)
        if i < len(gaps):
            events += ws.gap(*gaps[i])
    events += ws.close()
    assert all(type(e) in (Message, Problem) for e in events)
    assert all(len(e.payload) <= 4096 for e in events if type(e) is Message)


def test_mutated_streams_never_raise() -> None:
    """Every single-byte corruption of a deflated connection gives events, never an exception."""
    wire = small_wire(Deflate(11, 11))
    for direction in DIRECTIONS:
        data = bytes(wire.streams[direction])
        for i in range(len(data)):
            for flip in (0x01, 0x80, 0xFF):
                mutated = bytearray(data)
                mutated[i] ^= flip
                streams = dict(whole(wire))
                streams[direction] = bytes(mutated)
                feed_all(PassiveWebSocket(), list(streams.items()))


# ---------------------------------------------------------------- gaps


def gap_feed(
    wire: Wire, direction: Direction, start: int, size: int
) -> dict[Direction, list[Event]]:
    """Feed both streams with ``size`` bytes of ``direction`` from ``start`` lost."""
    ws = PassiveWebSocket()
    other: Direction = "to_client" if direction == "to_server" else "to_server"
    data = bytes(wire.streams[direction])
    events = ws.feed("to_client", bytes(wire.streams["to_client"])) if other == "to_client" else []
    events += ws.feed(direction, data[:start])
    events += ws.gap(direction, size)
    events += ws.feed(direction, data[start + size :])
    if other == "to_server":
        events += ws.feed(other, bytes(wire.streams[other]))
    events += ws.close()
    got: dict[Direction, list[Event]] = {d: [] for d in DIRECTIONS}
    for event in events:
        got[event.direction].append(event)
    return got


def sound(got: list[Event], expected: list[Event]) -> list[Message]:
    """Every message given is one that was sent, at its offset (a gap may lose some,
    never misread one); returns them."""
    sent = {e.offset: e for e in expected if type(e) is Message}
    messages = [e for e in got if type(e) is Message]
    for message in messages:
        assert message == sent[message.offset]
    return messages


def test_gap_inside_a_frame_resynchronises_exactly() -> None:
    wire = corpus_wire(None)
    target = wire.expected["to_client"][10]
    assert type(target) is Message
    start, size = target.offset + 20, 30
    got = gap_feed(wire, "to_client", start, size)
    problems = [e for e in got["to_client"] if type(e) is Problem]
    assert problems == [Problem("to_client", start, "30 bytes lost in a message")]
    expected = [e for e in wire.expected["to_client"] if e is not target]
    assert [e for e in got["to_client"] if type(e) is Message] == expected
    assert got["to_server"] == wire.expected["to_server"]


def test_gap_in_a_control_frame_keeps_the_message_around_it() -> None:
    wire = Wire(Deflate(11, 11))
    wire.message("to_client", corpus_messages()[0][1], pieces=3, pings=True)
    wire.message("to_client", b'[{"cmd":"Sync"}]')
    ping = next(e for e in wire.expected["to_client"] if type(e) is Message and e.opcode == 9)
    got = gap_feed(wire, "to_client", ping.offset + 2, 2)
    assert got["to_client"] == [
        Problem("to_client", ping.offset + 2, "2 bytes lost in a control frame"),
        *[e for e in wire.expected["to_client"] if e is not ping],
    ]


@pytest.mark.parametrize("deflate", [None, Deflate(11, 11, True, True)])
def test_gap_across_frames_finds_the_next_frame(deflate: Deflate | None) -> None:
    wire = corpus_wire(deflate)
    for direction in DIRECTIONS:
        sent = [e for e in wire.expected[direction] if type(e) is Message]
        start = sent[5].offset + 3
        size = sent[9].offset + 1 - start
        got = gap_feed(wire, direction, start, size)
        problems = [e for e in got[direction] if type(e) is Problem]
        assert problems[0] == Problem(
            direction, start, f"{size} bytes lost; looking for the next frame"
        )
        assert len(problems) == 1
        messages = sound(got[direction], wire.expected[direction])
        assert messages[:5] == sent[:5]
        assert messages[5:] == sent[10:]


def test_gap_with_context_takeover_is_told_once_and_never_misreads() -> None:
    wire = corpus_wire(Deflate(11, 11))
    sent = [e for e in wire.expected["to_client"] if type(e) is Message]
    index = next(i for i, e in enumerate(sent) if i >= 20 and e.size > 40)
    start = sent[index].offset + 5
    got = gap_feed(wire, "to_client", start, 10)
    messages = sound(got["to_client"], wire.expected["to_client"])
    assert messages[:index] == sent[:index]
    problems = [e for e in got["to_client"] if type(e) is Problem]
    assert problems[0] == Problem("to_client", start, "10 bytes lost in a message")
    told = [p for p in problems if "context takeover" in p.message]
    assert len(problems) == 3 and len(told) == 2
    lost = len(sent) - (index + 1) - (len(messages) - index)
    assert told[1].message.startswith(f"{lost} messages could not be inflated")
    assert lost > 0


def test_gap_in_the_http_head() -> None:
    wire = corpus_wire(Deflate(11, 11, True, True))
    got = gap_feed(wire, "to_client", 10, 20)
    assert got["to_client"][0] == Problem("to_client", 10, "20 bytes lost in the HTTP upgrade")
    messages = sound(got["to_client"], wire.expected["to_client"])
    assert len(messages) >= len(wire.expected["to_client"]) - 2
    assert sound(got["to_server"], wire.expected["to_server"]) == wire.expected["to_server"]


def test_connection_joined_in_the_middle() -> None:
    wire = corpus_wire(Deflate(11, 11, True, True))
    sent = [e for e in wire.expected["to_client"] if type(e) is Message]
    cut = sent[3].offset + 7
    ws = PassiveWebSocket()
    events = ws.feed("to_client", bytes(wire.streams["to_client"][cut:])) + ws.close()
    assert events[0] == Problem(
        "to_client", 0, "the HTTP upgrade was not captured; reading frames from here"
    )
    messages = [e for e in events if type(e) is Message]
    assert [m.payload for m in messages] == [m.payload for m in sent[4:]]
    assert [m.offset + cut for m in messages] == [m.offset for m in sent[4:]]


@pytest.mark.parametrize(
    "deflate",
    [None, Deflate(11, 11, True, True), Deflate(11, 11)],
    ids=["plain", "nct", "takeover"],
)
def test_gaps_anywhere_never_misread_a_message(deflate: Deflate | None) -> None:
    """Gaps at 150 places per direction: every message given is one that was sent, at
    its offset; with plain frames or no context takeover, exactly the messages
    wholly outside the gap are given."""
    wire = corpus_wire(deflate)
    places = random.Random(5)
    for direction in DIRECTIONS:
        size_of = len(wire.streams[direction])
        sent = [e for e in wire.expected[direction] if type(e) is Message]
        for _ in range(150):
            start = places.randrange(300, size_of - 3100)
            size = places.choice([1, 5, 50, 500, 3000])
            got = gap_feed(wire, direction, start, size)
            messages = sound(got[direction], wire.expected[direction])
            if deflate is None or deflate.client_no_context_takeover:
                outside = [
                    m for m in sent if m.offset + m.size <= start or m.offset >= start + size
                ]
                assert messages == outside, (start, size)


def test_gap_in_held_client_frames_while_the_response_is_still_coming() -> None:
    """Client frames held for a response whose head is still arriving: a gap in the
    client's stream reads the held frames first, and the response head is not
    taken for frames."""
    wire = corpus_wire(Deflate(11, 11))
    server, client = bytes(wire.streams["to_client"]), bytes(wire.streams["to_server"])
    sent = [e for e in wire.expected["to_server"] if type(e) is Message]
    cut = sent[4].offset
    ws = PassiveWebSocket()
    events = ws.feed("to_client", server[:20])
    events += ws.feed("to_server", client[:cut])
    assert events == []
    events += ws.gap("to_server", 10)
    events += ws.feed("to_server", client[cut + 10 :])
    events += ws.feed("to_client", server[20:]) + ws.close()
    assert events[0] == Problem("to_server", cut, "a gap before any upgrade response")
    got = [e for e in events if e.direction == "to_server"]
    assert got[1:5] == sent[:4]
    assert got[5] == Problem("to_server", cut, "10 bytes lost; looking for the next frame")
    sound(got, wire.expected["to_server"])
    assert ws.handshake.deflate == Deflate(11, 11)
    assert [e for e in events if e.direction == "to_client"] == wire.expected["to_client"]


def test_a_scan_holds_no_more_than_the_message_limit() -> None:
    """A scan does not buffer a chain of frames longer than the message limit to
    confirm it (each frame under the limit, five of them well over it)."""
    limit = 2048
    wire = Wire(None)
    wire.raw("to_client", b"\x83")  # a bad header: the reader scans from here
    for _ in range(6):
        wire.raw("to_client", raw_frame(b"a" * 2000, masked=False))
    for direction, raw in corpus_messages()[:12]:
        wire.message(direction, raw[:200])
    data = bytes(wire.streams["to_client"])
    ws = PassiveWebSocket(max_message_size=limit)
    held = 0
    events: list[Event] = []
    for i in range(0, len(data), 100):
        events += ws.feed("to_client", data[i : i + 100])
        held = max(held, len(ws._streams["to_client"].buffer))
    assert held <= limit + 5 * 14 + 100
    sent = [e for e in wire.expected["to_client"] if type(e) is Message]
    assert [e for e in events if type(e) is Message][-len(sent) :] == sent


def test_a_message_ending_in_a_final_deflate_block() -> None:
    """A sender may end a message with a final deflate block (BFINAL); with context
    takeover the next message may still refer to it."""
    first, second = b'[{"cmd":"Say","text":"hello there"}]', b'[{"cmd":"Say","text":"hello again"}]'
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    body1 = compressor.compress(first) + compressor.flush(zlib.Z_FINISH)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15, zdict=first)
    body2 = compressor.compress(second) + compressor.flush(zlib.Z_SYNC_FLUSH)
    assert len(body2[:-4]) < len(second) // 2  # it does refer to the first
    stream = response("permessage-deflate")
    stream += raw_frame(body1, masked=False, rsv1=True)
    stream += raw_frame(body2[:-4], masked=False, rsv1=True)
    events = PassiveWebSocket().feed("to_client", stream)
    assert [e.payload for e in events if type(e) is Message] == [first, second]


def test_client_frames_are_read_at_the_close_when_no_response_came() -> None:
    wire = corpus_wire(Deflate(11, 11))
    ws = PassiveWebSocket()
    client = bytes(wire.streams["to_server"])
    assert ws.feed("to_server", client) == []
    events = ws.close()
    assert events[0] == Problem("to_server", len(client), "no upgrade response")
    assert events[1:] == wire.expected["to_server"]


@pytest.mark.parametrize("masked", [False, True], ids=["server", "client"])
def test_a_scan_checks_each_frame_of_its_chain_once(
    masked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Joined in the middle of large messages that come in small pieces: the scan
    checks each frame of the chain it confirms once, not again for every piece (a
    capture picked up before a few megabytes of messages took minutes)."""
    direction: Direction = "to_server" if masked else "to_client"
    texts = [(b'[{"cmd":"Print","text":"%d"}]' % i).ljust(20000, b" ") for i in range(6)]
    data = b"zz" + b"".join(raw_frame(t, masked=masked) for t in texts)
    checked: list[int] = []
    check = PassiveWebSocket._plausible_payload

    def counted(self: PassiveWebSocket, buf: bytearray, at: int, header: object) -> bool:
        checked.append(at)
        return check(self, buf, at, header)  # type: ignore[arg-type]

    monkeypatch.setattr(PassiveWebSocket, "_plausible_payload", counted)
    ws = PassiveWebSocket()
    if masked:
        ws.feed("to_client", response())
    events: list[Event] = []
    for at in range(0, len(data), 100):
        events += ws.feed(direction, data[at : at + 100])
    events += ws.close()
    assert len(checked) == 4  # the four frames before the fifth's header
    assert [e.payload for e in events if type(e) is Message] == texts
    in_one = PassiveWebSocket()
    if masked:
        in_one.feed("to_client", response())
    assert in_one.feed(direction, data) + in_one.close() == events
