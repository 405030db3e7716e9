"""gamecodec.avara.aio over real loopback UDP sockets, on both session twins."""

from __future__ import annotations

import asyncio
import textwrap
import time
from types import ModuleType
from typing import Any

import pytest

from gamecodec import avara
from gamecodec.avara import aio
from gamecodec.sessions import Traffic
from tests.aio_helpers import all_acked
from tests.conftest import load_twin

MESSAGES = 10_000


@pytest.fixture(scope="session")
def twin(impl: str) -> ModuleType:
    """The session twin under test: [py] the pure one, [c] the compiled one."""
    return load_twin("gamecodec.avara", "_session", impl)


async def _open(
    twin: ModuleType, local: aio.Address, remote: aio.Address | None = None, **kw: Any
) -> aio.Endpoint:
    """``aio.open_endpoint`` with a ``Connection`` of the twin under test."""
    loop = asyncio.get_running_loop()
    tap = kw.pop("tap", None)
    conn = twin.Connection(now=loop.time(), **kw)
    _, protocol = await loop.create_datagram_endpoint(
        lambda: aio.Endpoint(conn, remote, tap=tap), local_addr=local
    )
    return protocol


async def _pump(p: aio.Endpoint, count: int) -> list[int]:
    async def sender() -> None:
        for i in range(count):
            await p.drain()
            p.send(17, p1=-8, p3=i)

    task = asyncio.create_task(sender())
    got = [(await p.recv()).p3 for _ in range(count)]
    await task
    return got


async def _loopback(twin: ModuleType, count: int) -> tuple[list[int], list[int], aio.Endpoint]:
    # cramData 3 each way, as after kpPacketProtocolControl: bursts are resent
    # after 2 frames instead of waiting for an ACK-only datagram (41 ms + 2 s at first)
    a = await _open(twin, ("127.0.0.1", 0), my_id=1, peer_id=2, peer_cram_data=3)
    b = await _open(twin, ("127.0.0.1", 0), my_id=2, peer_id=1, peer_cram_data=3)
    a.peer, b.peer = b.local_address, a.local_address
    try:
        got_a, got_b = await asyncio.wait_for(asyncio.gather(_pump(a, count), _pump(b, count)), 60)
        assert not a.skipped and not b.skipped
        return got_a, got_b, a
    finally:
        a.close()
        b.close()


@pytest.mark.slow
def test_loopback_10000_reliable_messages_each_way(twin: ModuleType) -> None:
    start = time.perf_counter()
    got_a, got_b, a = asyncio.run(_loopback(twin, MESSAGES))
    assert got_a == list(range(MESSAGES))
    assert got_b == list(range(MESSAGES))
    assert a.lost is None
    assert time.perf_counter() - start < 60


def test_docstring_example_runs() -> None:
    """The module docstring's loopback example, executed as written (on the
    active twin, through ``aio.open_endpoint``)."""
    assert aio.__doc__ is not None
    code = textwrap.dedent(aio.__doc__.split("::\n", 1)[1])
    exec(compile(code, "aio-example", "exec"), {"__name__": "example"})


async def _server_learns_peer(twin: ModuleType) -> list[int]:
    server = await _open(twin, ("127.0.0.1", 0), my_id=0, peer_id=1)
    client = await _open(twin, ("127.0.0.1", 0), server.local_address, my_id=1, peer_id=0)
    try:
        for i in range(30):
            await client.drain()
            client.send(6, data=b"hello %d" % i)
        got = [int((await asyncio.wait_for(server.recv(), 10)).data.split()[1]) for _ in range(30)]
        assert server.peer == client.local_address
        return got
    finally:
        client.close()
        server.close()


def test_server_learns_its_peer_from_the_first_datagram(twin: ModuleType) -> None:
    assert asyncio.run(_server_learns_peer(twin)) == list(range(30))


async def _lost_peer(twin: ModuleType) -> aio.Endpoint:
    a = await _open(twin, ("127.0.0.1", 0), my_id=1, peer_id=2)
    b = await _open(twin, ("127.0.0.1", 0), my_id=2, peer_id=1)
    a.peer = b.local_address
    b.close()  # nobody answers: the transmit queue overflows
    try:
        for i in range(1025):  # MAX_TRANSMIT_QUEUE + 1
            a.send(17, p1=-8, p3=i)
        with pytest.raises(ConnectionError, match="transmit queue overflow"):
            await asyncio.wait_for(a.recv(), 5)
        return a
    finally:
        a.close()


def test_lost_peer_wakes_recv(twin: ModuleType) -> None:
    a = asyncio.run(_lost_peer(twin))
    assert a.lost is not None


async def _by_name() -> list[int]:
    server = await aio.open_endpoint(("127.0.0.1", 0), my_id=0, peer_id=1)
    port = server.local_address[1]
    client = await aio.open_endpoint(("127.0.0.1", 0), ("localhost", port), my_id=1, peer_id=0)
    try:
        for i in range(5):
            client.send(6, data=b"hello %d" % i)
        got = [int((await asyncio.wait_for(server.recv(), 10)).data.split()[1]) for _ in range(5)]
        assert await all_acked(client.connection)  # the acks come back from 127.0.0.1
        return got
    finally:
        client.close()
        server.close()


def test_a_remote_address_given_by_name_is_resolved() -> None:
    """("localhost", port) is compared as the address replies come from (they were
    dropped as from a stranger, so nothing was ever acked: found by an audit)."""
    assert asyncio.run(_by_name()) == list(range(5))


async def _stray_first(twin: ModuleType) -> tuple[list[int], aio.Address | None]:
    server = await _open(twin, ("127.0.0.1", 0), my_id=0, peer_id=1)
    loop = asyncio.get_running_loop()
    stray, _ = await loop.create_datagram_endpoint(
        asyncio.DatagramProtocol, local_addr=("127.0.0.1", 0)
    )
    stray.sendto(b"\x12\x34\xfe\xff", server.local_address)  # a wrong checksum
    await asyncio.sleep(0.05)
    stray_took = server.peer
    client = await _open(twin, ("127.0.0.1", 0), server.local_address, my_id=1, peer_id=0)
    try:
        for i in range(5):
            client.send(6, data=b"hello %d" % i)
        got = [int((await asyncio.wait_for(server.recv(), 10)).data.split()[1]) for _ in range(5)]
        assert server.peer == client.local_address
        return got, stray_took
    finally:
        stray.close()
        client.close()
        server.close()


def test_a_refused_first_datagram_does_not_make_its_sender_the_peer(twin: ModuleType) -> None:
    """A datagram with a wrong checksum from a stray address used to take the
    server endpoint for good."""
    got, stray_took = asyncio.run(_stray_first(twin))
    assert stray_took is None
    assert got == list(range(5))


async def _tapped(twin: ModuleType | None) -> tuple[list[Traffic], list[Traffic], Any, Any]:
    """Five commands from a client to a server, each endpoint with a tap; with
    ``twin`` None through the public ``open_endpoint``."""
    server_seen: list[Traffic] = []
    client_seen: list[Traffic] = []
    if twin is None:
        server = await aio.open_endpoint(
            ("127.0.0.1", 0), tap=server_seen.append, my_id=0, peer_id=1
        )
        client = await aio.open_endpoint(
            ("127.0.0.1", 0), server.local_address, tap=client_seen.append, my_id=1, peer_id=0
        )
    else:
        server = await _open(twin, ("127.0.0.1", 0), tap=server_seen.append, my_id=0, peer_id=1)
        client = await _open(
            twin, ("127.0.0.1", 0), server.local_address, tap=client_seen.append, my_id=1, peer_id=0
        )
    try:
        for i in range(5):
            client.send(6, data=b"hello %d" % i)
        got = [(await asyncio.wait_for(server.recv(), 10)).data for _ in range(5)]
        assert got == [b"hello %d" % i for i in range(5)]
        assert await all_acked(client.connection)
        return server_seen, client_seen, server.local_address, client.local_address
    finally:
        client.close()
        server.close()


def _check_taps(
    server_seen: list[Traffic], client_seen: list[Traffic], server: Any, client: Any
) -> None:
    sent = [t for t in client_seen if t.direction == "out"]
    assert sent and all(t.peer == server and isinstance(t.data, bytes) for t in sent)
    delivered = [c.data for t in sent for c in avara.decode(t.data).commands]
    assert [b"hello %d" % i for i in range(5)] == sorted(set(delivered))
    received = [t for t in server_seen if t.direction == "in"]
    assert [t.data for t in received] == [t.data for t in sent][: len(received)]
    assert all(t.peer == client for t in received)
    acks = [t for t in server_seen if t.direction == "out"]
    assert acks and all(t.peer == client for t in acks)
    assert [t.data for t in client_seen if t.direction == "in"] == [t.data for t in acks][
        : len([t for t in client_seen if t.direction == "in"])
    ]
    times = [t.time for t in client_seen]
    assert times == sorted(times)


def test_tap_sees_every_datagram_in_and_out(twin: ModuleType) -> None:
    _check_taps(*asyncio.run(_tapped(twin)))


def test_open_endpoint_passes_the_tap() -> None:
    _check_taps(*asyncio.run(_tapped(None)))


def test_old_names_warn_and_are_the_new_ones() -> None:
    for old, new in (("open_connection", aio.open_endpoint), ("AvaraProtocol", aio.Endpoint)):
        with pytest.warns(DeprecationWarning, match=old):
            assert getattr(aio, old) is new
        assert old not in aio.__all__
