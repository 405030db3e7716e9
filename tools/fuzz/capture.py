"""Capture targets: a whole pcap or pcapng file read by ``gamecodec.capture``,
and the passive WebSocket reader fed two byte streams.

Nothing in a capture may raise: every problem is an error item (or a WebSocket
``Problem``), so any exception that escapes is a finding.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator

from tests.capture import pcapgen
from tools.fuzz.driver import Ops, target

from gamecodec import lludp
from gamecodec.archipelago import sample as ap_sample
from gamecodec.avara import sample as avara_sample
from gamecodec.capture import read
from gamecodec.capture._websocket import PassiveWebSocket
from gamecodec.lludp import sample as lludp_sample
from gamecodec.ywindow import sample as ywindow_sample

VIEWER, REGION = ("10.0.0.2", 51712), ("10.0.0.1", 9000)
PLAYER, GAME = ("fd00::2", 51000), ("fd00::1", 19567)
AGENT, SERVER = ("10.0.0.3", 40000), ("10.0.0.1", 47200)
AP_CLIENT, AP_SERVER = ("10.0.0.4", 41000), ("10.0.0.1", 38281)
Y_CLIENT, Y_SERVER = ("10.0.0.5", 42000), ("10.0.0.1", 7000)

UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: localhost:38281\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: " + base64.b64encode(bytes(16)) + b"\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
ACCEPT = (
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Accept: ICX+Yqv66kxgM0FcWaLWlFLwTAI=\r\n\r\n"
)
TOKENS = (b"\xd4\xc3\xb2\xa1", b"\x0a\x0d\x0d\x0a", b"\x08\x00", b"\x86\xdd", b"\x11", b"\x06")


def _text_frame(text: bytes, masked: bool) -> bytes:
    """One unfragmented WebSocket text frame (a zero mask when ``masked``)."""
    head = bytes([0x81])
    mask_bit = 0x80 if masked else 0
    n = len(text)
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([mask_bit | 127]) + n.to_bytes(8, "big")
    return head + (bytes(4) if masked else b"") + text


def _packets() -> Iterator[list[pcapgen.Packet]]:
    """Small captures of each protocol: UDP datagrams, and TCP connections."""
    messages = lludp_sample.region_stream(6)
    yield [
        pcapgen.udp(
            1.0 + i / 10, *((VIEWER, REGION) if i % 2 else (REGION, VIEWER)), lludp.encode(m)
        )
        for i, m in enumerate(messages)
    ]
    yield [
        pcapgen.udp(2.0 + i / 10, PLAYER, GAME, d)
        for i, d in enumerate(avara_sample.capture_stream(5))
    ]
    # IPv6 with extension headers before and after the Fragment header, in fragments
    yield [
        pcapgen.udp(
            2.5 + i / 10,
            PLAYER,
            GAME,
            d,
            v6_unfragmentable=(0, 43),
            v6_extensions=(60,),
            v6_fragment=32,
        )
        for i, d in enumerate(avara_sample.capture_stream(3))
    ]
    conn = pcapgen.TcpConnection(client=AGENT, server=SERVER, time=3.0)
    packets = conn.open() + conn.send("to_client", b"bzrobots 1\n")
    packets += conn.send("to_server", b"agent 1\nmytanks\n", segment=7)
    packets += conn.send("to_client", b"ack 1.0 agent 1\nok\nack 1.1 mytanks\nbegin\nend\n")
    yield packets + conn.close()
    conn = pcapgen.TcpConnection(client=Y_CLIENT, server=Y_SERVER, time=3.5)
    packets = conn.open() + conn.send("to_client", b"Yserver 0.0 ywin\n" + bytes(range(256)))
    packets += conn.send("to_server", b"Yclient 0.0 gamecodec\n" + bytes(256))
    packets += conn.send("to_client", bytes(16)) + conn.send("to_server", bytes(16))
    packets += conn.send("to_server", b"".join(ywindow_sample.sample_messages(12)), segment=40)
    yield packets + conn.close()
    conn = pcapgen.TcpConnection(client=AP_CLIENT, server=AP_SERVER, time=4.0)
    packets = conn.open() + conn.send("to_server", UPGRADE) + conn.send("to_client", ACCEPT)
    for text in ap_sample.sample_session(players=2, turns=2)[:3]:
        packets += conn.send("to_client", _text_frame(text.encode(), masked=False))
    yield packets + conn.close()


def _seeds() -> Iterator[bytes]:
    for n, packets in enumerate(_packets()):
        yield pcapgen.capture(packets, fmt="pcap", link="ethernet")
        yield pcapgen.capture(
            packets, fmt="pcapng", link=("sll2", "sll", "raw", "null", "ethernet", "sll")[n]
        )
    # an upgrade answered with a status of a digit int() refuses (superscript two)
    conn = pcapgen.TcpConnection(client=AP_CLIENT, server=AP_SERVER, time=1.0)
    packets = conn.open()[:1] + conn.send("to_server", UPGRADE)
    yield pcapgen.capture(packets + conn.send("to_client", b"HTTP/ \xb2\r\n\r\n"), link="raw")


@target("capture.read", _seeds, tokens=TOKENS)
def read_capture(data: bytes) -> None:
    """A whole file: every item is a Unit or a CaptureError, nothing raises."""
    for _item in read(io.BytesIO(data)):
        pass


def _ops(*streams: tuple[int, bytes]) -> bytes:
    """The op stream that feeds each (direction, bytes) in chunks of at most 255."""
    out = bytearray()
    for direction, data in streams:
        for at in range(0, len(data), 255):
            chunk = data[at : at + 255]
            out += bytes([direction, len(chunk)]) + chunk
    return bytes(out)


def _ws_seeds() -> Iterator[bytes]:
    frames = b"".join(
        _text_frame(t.encode(), masked=False)
        for t in [t for t in ap_sample.sample_session() if len(t) < 600][:6]
    )
    masked = _text_frame(b'[{"cmd":"Sync"}]', masked=True)
    deflate = ACCEPT.replace(
        b"\r\n\r\n", b"\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
    )
    yield _ops((0, UPGRADE), (1, ACCEPT), (1, frames), (0, masked))
    yield _ops((0, UPGRADE), (1, deflate), (0, masked), (1, frames))
    yield _ops((1, b"HTTP/ \xb2\r\n\r\n"))  # a status of a digit int() refuses


@target("capture.websocket", _ws_seeds, kind="session", tokens=(b"\x81", b"\x88", b"\x89"))
def websocket(data: bytes) -> None:
    """Two streams cut at chosen places: only events and Problems, nothing raises."""
    ops = Ops(data)
    ws = PassiveWebSocket()
    while not ops.done:
        direction = "to_server" if ops.pick(2) == 0 else "to_client"
        ws.feed(direction, ops.blob())
