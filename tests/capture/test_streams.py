"""The stream decoders: ywindow and BZRC through a capture, and the registry."""

from __future__ import annotations

import io
import random

import pytest

from gamecodec import capture, ywindow
from gamecodec.capture import _bzrc_stream, _streams
from tests.capture import pcapgen
from tests.capture.conftest import bzrc_streams

CLIENT, SERVER = ("10.0.0.2", 40000), ("10.0.0.1", 7000)


def _ywindow_session() -> tuple[pcapgen.TcpConnection, list[pcapgen.Packet], list[bytes]]:
    conn = pcapgen.TcpConnection(CLIENT, SERVER)
    packets = conn.open()
    packets += conn.send("to_client", b"Yserver 0.0 ywin\n" + bytes(range(256)))
    packets += conn.send("to_server", b"Yclient 0.0 gamecodec\n" + bytes(256))
    packets += conn.send("to_client", b"\x11" * 16)
    packets += conn.send("to_server", b"\x22" * 16)
    calls = [ywindow.call("goto", k, 2 * k) for k in range(20)] + [ywindow.notify("bye", "x" * 300)]
    replies = [ywindow.reply("ok", k) for k in range(20)]
    packets += conn.send("to_server", b"".join(calls), segment=13)
    packets += conn.send("to_client", b"".join(replies), segment=7)
    return conn, packets, calls + replies


def _items(packets: list[pcapgen.Packet]) -> list[capture.Item]:
    return list(capture.read(io.BytesIO(pcapgen.capture(packets))))


def test_ywindow_session() -> None:
    conn, packets, messages = _ywindow_session()
    items = _items(packets + conn.close())
    assert [i for i in items if isinstance(i, capture.CaptureError)] == []
    units = [i for i in items if isinstance(i, capture.Unit)]
    assert units[0].flow.protocol == "ywindow"
    assert units[0].flow.reason == "content: the 'Yserver' greeting"
    head = [(u.direction, u.names) for u in units[:6]]
    assert head == [
        ("to_client", ("greeting",)),
        ("to_client", ("cookie",)),
        ("to_server", ("greeting",)),
        ("to_server", ("cookie",)),
        ("to_client", ("digest",)),
        ("to_server", ("digest",)),
    ]
    assert units[0].value == ywindow.parse_greeting(b"Yserver 0.0 ywin\n", ywindow.Role.SERVER)
    words = units[6:]
    assert [u.payload for u in words] == messages
    assert [u.value for u in words] == [ywindow.decode(m)[0] for m in messages]
    assert words[0].names == ("goto",) and words[-1].names == ("r",)


def test_ywindow_gap_in_the_last_message_skips_it() -> None:
    conn, packets, _messages = _ywindow_session()
    data = [k for k, p in enumerate(packets) if p.src == CLIENT and p.payload]
    del packets[data[-5]]
    items = _items(packets + conn.close())
    errors = [i for i in items if isinstance(i, capture.CaptureError)]
    assert [e.where for e in errors] == ["tcp", "decode"]
    assert errors[1].message == "1203 captured bytes skipped: no message in them"
    assert errors[1].offset == 22 + 256 + 16 + 20 * 24  # where the cut message starts
    replies = [i for i in items if isinstance(i, capture.Unit) and i.names == ("r",)]
    assert len(replies) == 20  # the other direction is untouched


def test_bzrc_stream_in_any_chunking() -> None:
    sent, received = bzrc_streams()
    flow = capture.Flow("tcp", capture.Address("a", 1), capture.Address("b", 2), "bzrc", "", 1)
    whole = _bzrc_stream.BzrcStream(flow)
    expected = whole.feed("to_client", received, 1.0, 1) + whole.feed("to_server", sent, 1.0, 1)
    expected += whole.close(1.0, 1)
    rng = random.Random(5)
    for _ in range(5):
        stream = _bzrc_stream.BzrcStream(flow)
        got: list[capture.Item] = []
        for direction, data in (("to_client", received), ("to_server", sent)):
            at = 0
            while at < len(data):
                step = rng.randrange(1, 60)
                got += stream.feed(direction, data[at : at + step], 1.0, 1)  # type: ignore[arg-type]
                at += step
        got += stream.close(1.0, 1)
        assert [(u.names, u.value, u.payload) for u in got] == [  # type: ignore[union-attr]
            (u.names, u.value, u.payload)
            for u in expected  # type: ignore[union-attr]
        ]


def test_bzrc_command_values() -> None:
    flow = capture.Flow("tcp", capture.Address("a", 1), capture.Address("b", 2), "bzrc", "", 1)
    stream = _bzrc_stream.BzrcStream(flow)
    units = stream.feed("to_server", b"agent 1\nspeed 0 0.5\nshoot x\n\nshots\n", 1.0, 1)
    assert [(u.value.id, u.value.command, u.value.args) for u in units] == [  # type: ignore[union-attr]
        (-1, "agent", (1,)),
        (0, "speed", (0, 0.5)),
        (1, "shoot", ("x",)),
        (2, "shots", ()),
    ]


def test_a_protocol_without_its_stream_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_streams.STREAM_DECODERS, "archipelago", "gamecodec.capture._absent:X")
    conn = pcapgen.TcpConnection(CLIENT, ("10.0.0.1", 38281))
    packets = conn.open() + conn.send(
        "to_server", b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Key: x\r\n\r\n"
    )
    items = _items(packets + conn.send("to_client", b"HTTP/1.1 101 OK\r\n\r\n") + conn.close())
    [error] = items
    assert isinstance(error, capture.CaptureError) and error.where == "decode"
    assert "archipelago stream decoder is not available" in error.message
