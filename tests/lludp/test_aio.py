"""gamecodec.lludp.aio over real loopback UDP sockets, on both circuit twins."""

from __future__ import annotations

import asyncio
import textwrap
import time
from types import ModuleType
from typing import Any

import pytest

from gamecodec import lludp
from gamecodec._aio import SessionProtocol
from gamecodec.lludp import aio, decode
from gamecodec.sessions import Traffic
from tests.aio_helpers import all_acked
from tests.lludp.conftest import numbered
from tests.lludp.opensim_wire import IM

MESSAGES = 10_000
IM_ABSENT = ("MetaData",)  # what the Second Life template misses in OpenSimulator's IM


async def _pump(p: aio.Endpoint, count: int) -> list[int]:
    async def sender() -> None:
        for i in range(count):
            await p.drain()
            p.send(numbered(i), reliable=True)

    task = asyncio.create_task(sender())
    got = [(await p.recv()).TestBlock1[0].Test1 for _ in range(count)]
    await task
    return got


async def _loopback(
    twin: ModuleType, codec: ModuleType, count: int
) -> tuple[list[int], list[int], aio.Endpoint]:
    kw = {"circuit_type": twin.Circuit, "codec": codec}
    a = await aio.open_endpoint(("127.0.0.1", 0), **kw)
    b = await aio.open_endpoint(("127.0.0.1", 0), **kw)
    a.peer, b.peer = b.local_address, a.local_address
    try:
        got_a, got_b = await asyncio.wait_for(asyncio.gather(_pump(a, count), _pump(b, count)), 60)
        assert not (a.dropped or b.dropped or a.bad or b.bad)
        return got_a, got_b, a
    finally:
        a.close()
        b.close()


@pytest.mark.slow
def test_loopback_10000_reliable_messages_each_way(twin: ModuleType, codec: ModuleType) -> None:
    start = time.perf_counter()
    got_a, got_b, a = asyncio.run(_loopback(twin, codec, MESSAGES))
    assert len(got_a) == len(got_b) == MESSAGES
    assert sorted(got_a) == sorted(got_b) == list(range(MESSAGES))
    assert a.lost is None
    assert type(a.circuit) is twin.Circuit
    assert time.perf_counter() - start < 60


def test_docstring_example_runs() -> None:
    """The module docstring's loopback example, executed as written."""
    assert aio.__doc__ is not None
    code = textwrap.dedent(aio.__doc__.split("::\n", 1)[1].split("\nLLUDP does not", 1)[0])
    exec(compile(code, "aio-example", "exec"), {"__name__": "example"})


async def _server_learns_peer(twin: ModuleType, codec: ModuleType) -> list[int]:
    kw = {"circuit_type": twin.Circuit, "codec": codec}
    server = await aio.open_endpoint(("127.0.0.1", 0), **kw)
    client = await aio.open_endpoint(("127.0.0.1", 0), server.local_address, **kw)
    try:
        for i in range(30):
            client.send(numbered(i), reliable=True)
        got = [(await asyncio.wait_for(server.recv(), 10)).TestBlock1[0].Test1 for _ in range(30)]
        assert server.peer == client.local_address
        # the server's acks reach the client (appended or in a PacketAck)
        assert await all_acked(client.circuit)
        return got
    finally:
        client.close()
        server.close()


def test_server_learns_its_peer_from_the_first_datagram(
    twin: ModuleType, codec: ModuleType
) -> None:
    assert sorted(asyncio.run(_server_learns_peer(twin, codec))) == list(range(30))


async def _lost_peer(twin: ModuleType, codec: ModuleType) -> aio.Endpoint:
    kw = {"circuit_type": twin.Circuit, "codec": codec}
    a = await aio.open_endpoint(("127.0.0.1", 0), ping_interval=0.05, circuit_timeout=0.3, **kw)
    b = await aio.open_endpoint(("127.0.0.1", 0), **kw)
    a.peer = b.local_address
    b.close()  # nobody answers the pings
    try:
        a.send(numbered(1), reliable=True)
        with pytest.raises(ConnectionError, match="no CompletePingCheck"):
            await asyncio.wait_for(a.recv(), 5)
        return a
    finally:
        a.close()


def test_lost_peer_wakes_recv(twin: ModuleType, codec: ModuleType) -> None:
    a = asyncio.run(_lost_peer(twin, codec))
    assert a.lost is not None and a.lost.reason == "no CompletePingCheck for 0.3 s"


async def _late_first_client(twin: ModuleType, codec: ModuleType, remote_host: str) -> list[int]:
    kw = {"circuit_type": twin.Circuit, "codec": codec}
    quick = {"ping_interval": 0.05, "circuit_timeout": 0.3}
    server = await aio.open_endpoint(("127.0.0.1", 0), **quick, **kw)
    await asyncio.sleep(0.5)  # longer than the circuit timeout: nobody has written yet
    port = server.local_address[1]
    client = await aio.open_endpoint(("127.0.0.1", 0), (remote_host, port), **kw)
    try:
        for i in range(5):
            client.send(numbered(i), reliable=True)
        got = [(await asyncio.wait_for(server.recv(), 5)).TestBlock1[0].Test1 for _ in range(5)]
        assert server.lost is None
        assert await all_acked(client.circuit)  # the acks come back from 127.0.0.1
        return got
    finally:
        client.close()
        server.close()


@pytest.mark.parametrize("remote_host", ["127.0.0.1", "localhost"])
def test_a_server_endpoint_waits_for_its_first_client(
    twin: ModuleType, codec: ModuleType, remote_host: str
) -> None:
    """The circuit timeout counts from the first datagram, not from the bind (the
    first client was reported lost at once), and a remote given by name is
    resolved (replies from 127.0.0.1 were dropped as from a stranger): found by an audit."""
    assert sorted(asyncio.run(_late_first_client(twin, codec, remote_host))) == list(range(5))


async def _stray_first(twin: ModuleType, codec: ModuleType) -> tuple[list[int], int]:
    kw = {"circuit_type": twin.Circuit, "codec": codec}
    server = await aio.open_endpoint(("127.0.0.1", 0), **kw)
    loop = asyncio.get_running_loop()
    stray, _ = await loop.create_datagram_endpoint(
        asyncio.DatagramProtocol, local_addr=("127.0.0.1", 0)
    )
    client = await aio.open_endpoint(("127.0.0.1", 0), server.local_address, **kw)
    try:
        stray.sendto(b"\x00\x00\x00\x00\x01\x00", server.local_address)  # no message: refused
        for _ in range(100):
            if server.bad:
                break
            await asyncio.sleep(0.01)
        assert server.peer is None and len(server.bad) == 1
        for i in range(5):
            client.send(numbered(i), reliable=True)
        got = [(await asyncio.wait_for(server.recv(), 10)).TestBlock1[0].Test1 for _ in range(5)]
        assert server.peer == client.local_address
        return got, len(server.bad)
    finally:
        stray.close()
        client.close()
        server.close()


def test_a_refused_first_datagram_does_not_make_its_sender_the_peer(
    twin: ModuleType, codec: ModuleType
) -> None:
    """Garbage from a stray address used to take the server endpoint for good."""
    got, bad = asyncio.run(_stray_first(twin, codec))
    assert sorted(got) == list(range(5)) and bad == 1


async def _garbage_flood(twin: ModuleType, codec: ModuleType) -> aio.Endpoint:
    kw = {"circuit_type": twin.Circuit, "codec": codec}
    p = await aio.open_endpoint(("127.0.0.1", 0), ("127.0.0.1", 9), **kw)
    for i in range(p.history + 100):
        p.datagram_received(b"\x00" + i.to_bytes(3, "big"), ("127.0.0.1", 9))  # too short
    p.close()
    return p


def test_event_lists_keep_only_the_latest(twin: ModuleType, codec: ModuleType) -> None:
    """A peer (or a spoofer) sending garbage cannot grow ``bad`` without bound."""
    p = asyncio.run(_garbage_flood(twin, codec))
    assert len(p.bad) == p.history == 1024
    assert p.bad[-1].data == b"\x00" + (1123).to_bytes(3, "big")


async def _strict_bot(twin: ModuleType, codec: ModuleType, strict: bool) -> list[Any]:
    """A bot on the Second Life template given OpenSimulator's 210 IMs (no
    MetaData count: only the tolerant decode takes them) and a chat, as the
    socket would give them: everything :meth:`recv` returns, the endpoint and
    the acks it owes then."""
    kw = {"circuit_type": twin.Circuit, "codec": codec, "strict": strict}
    region = ("127.0.0.1", 9)
    p = await aio.open_endpoint(("127.0.0.1", 0), region, **kw)
    chat = lludp.build(
        "ChatFromSimulator",
        ChatData={
            "FromName": "Region", "SourceID": bytes(16), "OwnerID": bytes(16),
            "SourceType": 0, "ChatType": 1, "Audible": 1, "Position": (0.0, 0.0, 0.0),
            "Message": "done",
        },
    )  # fmt: skip
    try:
        for i in range(210):
            p.datagram_received(lludp.forward(IM, sequence=1000 + i), region)
        p.datagram_received(lludp.encode(chat._replace(sequence=2000)), region)
        acks = p.circuit.acks_pending  # (before the 0.1 s ack flush can run)
        return [await asyncio.wait_for(p.recv(), 5) for _ in range(211)] + [p, acks]
    finally:
        p.close()


def test_a_strict_bot_gets_every_im_from_recv(twin: ModuleType, codec: ModuleType) -> None:
    """Issue 30: a strict bot on the Second Life template against OpenSimulator
    got 0 of 210 IMs from ``recv()`` (they went only to ``strict_failures``);
    each now comes out of ``recv()``, in arrival order, as the
    StrictDecodeFailed event carrying the tolerant decode."""
    *got, p, acks = asyncio.run(_strict_bot(twin, codec, strict=True))
    failed = got[:210]
    assert all(isinstance(e, lludp.StrictDecodeFailed) for e in failed)
    assert [e.message.sequence for e in failed] == list(range(1000, 1210))
    assert {e.message.MessageBlock[0].Message for e in failed} == {b"im-ping-0\x00"}
    assert {(e.name, e.message.absent) for e in failed} == {("ImprovedInstantMessage", IM_ABSENT)}
    assert {e.error.offset for e in failed} == {len(IM)}
    assert isinstance(got[210], lludp.Message) and got[210].ChatData[0].Message == b"done\x00"
    assert list(p.strict_failures) == failed  # the deque is a view of the same events
    assert acks == list(range(1000, 1210))  # the IMs (reliable) acked, as before


def test_a_tolerant_bot_gets_the_ims_as_messages(twin: ModuleType, codec: ModuleType) -> None:
    *got, p, _ = asyncio.run(_strict_bot(twin, codec, strict=False))
    assert all(isinstance(m, lludp.Message) for m in got)
    assert [m.absent for m in got[:210]] == [IM_ABSENT] * 210 and not p.strict_failures


async def _tapped(twin: ModuleType, codec: ModuleType) -> tuple[list[Traffic], Any, Any, float]:
    kw = {"circuit_type": twin.Circuit, "codec": codec}
    seen: list[Traffic] = []
    loop = asyncio.get_running_loop()
    start = loop.time()
    b = await aio.open_endpoint(("127.0.0.1", 0), **kw)
    a = await aio.open_endpoint(("127.0.0.1", 0), b.local_address, tap=seen.append, **kw)
    try:
        a.send(numbered(7), reliable=True)
        assert (await asyncio.wait_for(b.recv(), 10)).TestBlock1[0].Test1 == 7
        assert await all_acked(a.circuit)  # b's ack came in (appended or in a PacketAck)
        return seen, a.local_address, b.local_address, start
    finally:
        a.close()
        b.close()


def test_the_tap_sees_every_datagram_in_and_out_with_its_time(
    twin: ModuleType, codec: ModuleType
) -> None:
    seen, a_address, b_address, start = asyncio.run(_tapped(twin, codec))
    assert all(isinstance(t, Traffic) for t in seen)
    out = [t for t in seen if t.direction == "out"]
    came = [t for t in seen if t.direction == "in"]
    assert out and came and len(out) + len(came) == len(seen)
    sent = decode(out[0].data)
    assert (sent.name, sent.TestBlock1[0].Test1, sent.reliable) == ("TestMessage", 7, True)
    assert all(t.peer == b_address for t in seen)
    # what came in carried the ack of packet 1 (appended to a packet or in a PacketAck)
    got = [decode(t.data) for t in came]
    assert any(1 in m.acks or m.name == "PacketAck" for m in got)
    times = [t.time for t in seen]
    assert times == sorted(times) and start <= times[0]
    assert a_address != b_address


class _Recorder(asyncio.DatagramProtocol):
    """A plain UDP socket's side: what it received, from whom."""

    def __init__(self) -> None:
        self.got: list[tuple[bytes, Any]] = []

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.got.append((data, addr))


async def _tap_everything(twin: ModuleType, codec: ModuleType) -> dict[str, Any]:
    """An endpoint with a tap, talking to a bare socket that never acks: its
    message, its resends and the message given up; garbage, a packet only the
    tolerant decode takes, a chat and its duplicate, the PacketAck for them,
    and a stranger's datagram."""
    loop = asyncio.get_running_loop()
    peer, peer_side = await loop.create_datagram_endpoint(_Recorder, local_addr=("127.0.0.1", 0))
    stranger, _ = await loop.create_datagram_endpoint(_Recorder, local_addr=("127.0.0.1", 0))
    peer_address = peer.get_extra_info("sockname")
    stranger_address = stranger.get_extra_info("sockname")
    seen: list[Traffic] = []
    start = loop.time()
    a = await aio.open_endpoint(
        ("127.0.0.1", 0),
        peer_address,
        tap=seen.append,
        circuit_type=twin.Circuit,
        codec=codec,
        strict=True,
        minimum_reliable_timeout=0.05,
        reliable_timeout_factor=0.0,
        max_resends=2,
        ack_collect_time=0.02,
        ping_interval=1000.0,
    )
    sent: list[tuple[bytes, Any]] = []
    try:
        a.send(numbered(1), reliable=True)
        chat = lludp.encode(
            lludp.build(
                "ChatFromViewer",
                flags=lludp.RELIABLE,
                sequence=100,
                AgentData={"AgentID": bytes(16), "SessionID": bytes(16)},
                ChatData={"Message": "hi", "Type": 1, "Channel": 0},
            )
        )
        for sock, address, data in (
            (peer, peer_address, b"\x40\x00\x00\x00\x05\x00\xff"),  # refused (too short)
            (peer, peer_address, IM),  # acked, not delivered (strict)
            (peer, peer_address, chat),
            (peer, peer_address, chat),  # a duplicate: acked again, not delivered
            (stranger, stranger_address, b"\x00" * 7),  # not the peer: ignored
        ):
            sock.sendto(data, a.local_address)
            sent.append((data, address))
            await asyncio.sleep(0.01)
        failed = await asyncio.wait_for(a.recv(), 5)  # the IM first, as it arrived
        assert isinstance(failed, lludp.StrictDecodeFailed) and failed.data == IM
        assert (await asyncio.wait_for(a.recv(), 5)).name == "ChatFromViewer"
        for _ in range(200):  # until packet 1 is given up after its 2 resends
            if a.dropped:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        return {
            "seen": seen, "sent": sent, "received": list(peer_side.got), "a": a,
            "start": start, "end": loop.time(), "peer": peer_address,
        }  # fmt: skip
    finally:
        a.close()
        peer.close()
        stranger.close()


def test_the_tap_sees_refused_resent_and_ack_datagrams(twin: ModuleType, codec: ModuleType) -> None:
    got = asyncio.run(_tap_everything(twin, codec))
    seen: list[Traffic] = got["seen"]
    a: aio.Endpoint = got["a"]
    # every datagram in, refused and ignored ones included, from its sender, in order
    assert [(t.data, t.peer) for t in seen if t.direction == "in"] == got["sent"]
    # every datagram out, exactly as the peer received them, in order
    out = [t for t in seen if t.direction == "out"]
    assert [(t.data, t.peer) for t in out] == [(d, got["peer"]) for d, _ in got["received"]]
    names = [(decode(t.data).name, t.data[0] & 0x20) for t in out]
    assert names.count(("TestMessage", 0)) == 1 and names.count(("TestMessage", 0x20)) == 2
    acked = {
        p.ID for t in out for m in [decode(t.data)] if m.name == "PacketAck" for p in m.Packets
    } | {ack for t in out for ack in decode(t.data).acks}
    assert acked == {7, 100}  # the IM and the chat (twice: its duplicate)
    times = [t.time for t in seen]
    assert times == sorted(times) and got["start"] <= times[0] and times[-1] <= got["end"]
    assert len(a.bad) == 1 and len(a.strict_failures) == 1 and len(a.dropped) == 1
    assert a.strict_failures[0].name == "ImprovedInstantMessage" and a.lost is None


def test_old_names_warn_and_are_the_new_objects() -> None:
    for old, new in (("open_circuit", aio.open_endpoint), ("CircuitProtocol", aio.Endpoint)):
        with pytest.warns(DeprecationWarning, match=f"{old} is deprecated"):
            assert getattr(aio, old) is new
        assert old not in aio.__all__
    with pytest.warns(DeprecationWarning):
        from gamecodec.lludp.aio import CircuitProtocol
    assert issubclass(CircuitProtocol, SessionProtocol) and CircuitProtocol is aio.Endpoint
    with pytest.raises(AttributeError):
        aio.no_such_name  # noqa: B018
