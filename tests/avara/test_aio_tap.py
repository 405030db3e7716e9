"""``tap=`` on avara.aio.open_endpoint sees every datagram in and out, with its time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType
from typing import Any

from gamecodec import avara
from gamecodec.avara import aio
from gamecodec.sessions import Traffic
from tests.avara.helpers import sign
from tests.avara.test_aio import _open

DOCS = Path(__file__).resolve().parents[2] / "docs" / "avara.md"


class _Raw(asyncio.DatagramProtocol):
    """A plain UDP socket that records what it receives, with the loop's time."""

    def __init__(self) -> None:
        self.got: list[tuple[bytes, float]] = []
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.got.append((data, asyncio.get_running_loop().time()))


async def _raw() -> _Raw:
    loop = asyncio.get_running_loop()
    _, proto = await loop.create_datagram_endpoint(_Raw, local_addr=("127.0.0.1", 0))
    return proto


def _command(serial: int, p3: int) -> bytes:
    return avara.encode(0xFFFE, [avara.Command.make(serial, 17, p1=-8, p3=p3, sender=2)])


async def _exchange(twin: ModuleType | None) -> tuple[list[Traffic], list[bytes], _Raw, Any]:
    loop = asyncio.get_running_loop()
    seen: list[Traffic] = []
    peer, stray = await _raw(), await _raw()
    kw = {"my_id": 1, "peer_id": 2}
    start = loop.time()  # before the endpoint opens: it may send an ACK-only datagram at once
    if twin is None:
        endpoint = await aio.open_endpoint(
            ("127.0.0.1", 0), peer.transport.get_extra_info("sockname"), tap=seen.append, **kw
        )
    else:
        endpoint = await _open(
            twin,
            ("127.0.0.1", 0),
            peer.transport.get_extra_info("sockname"),
            tap=seen.append,
            **kw,
        )
    sent = [
        _command(0, 10),
        sign(b"\xfe\xff")[:2] + b"\x00\x00",  # bad checksum: dropped, still tapped
        _command(4, 14),  # out of order: queued
        b"\x04\x02\x00\x00\x00\x00\x00",  # a hole punch
        _command(2, 12),
    ]
    try:
        for data in sent:
            peer.transport.sendto(data, endpoint.local_address)
            await asyncio.sleep(0.01)
        stray.transport.sendto(_command(6, 16), endpoint.local_address)  # another address
        got = [(await asyncio.wait_for(endpoint.recv(), 5)).p3 for _ in range(3)]
        assert got == [10, 12, 14]
        endpoint.send(6, data=b"to the peer")
        await asyncio.sleep(0.3)  # the ACK-only datagrams and the command arrive
    finally:
        endpoint.close()
        peer.transport.close()
        stray.transport.close()
    assert all(start <= t.time <= loop.time() for t in seen)
    return seen, [*sent, _command(6, 16)], peer, stray.transport.get_extra_info("sockname")


def _check(seen: list[Traffic], sent: list[bytes], peer: _Raw, stray: Any) -> None:
    incoming = [t for t in seen if t.direction == "in"]
    assert [t.data for t in incoming] == sent  # every datagram, even those dropped
    assert incoming[-1].peer == stray
    outgoing = [t for t in seen if t.direction == "out"]
    assert [t.data for t in outgoing] == [data for data, _ in peer.got]  # all it sent
    assert any(c.data == b"to the peer" for t in outgoing for c in avara.decode(t.data).commands)
    for t, (_, arrived) in zip(outgoing, peer.got, strict=True):
        assert t.time <= arrived  # stamped when written, before the peer read it
    times = [t.time for t in seen]
    assert times == sorted(times)


def test_tap_sees_every_datagram_with_its_time(twin: ModuleType) -> None:
    _check(*asyncio.run(_exchange(twin)))


def test_open_endpoint_tap_sees_every_datagram() -> None:
    _check(*asyncio.run(_exchange(None)))


def test_docs_show_the_tap() -> None:
    text = DOCS.read_text()
    assert "tap=" in text and "Traffic" in text and "t.time" in text
