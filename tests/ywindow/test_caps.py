"""Everything a ywindow peer can make this side hold has a documented cap."""

from __future__ import annotations

import asyncio
from types import ModuleType

import pytest

from gamecodec.errors import BadDataLengthError, RemoteProtocolError
from gamecodec.ywindow import MAX_MESSAGE, MAX_UNANSWERED, Call, Notification, Peer, aio
from gamecodec.ywindow import _encode as encode
from gamecodec.ywindow.aio import MAX_QUEUED
from tests.ywindow.test_session import AUTH, C_COOKIE, S_COOKIE, pump


def opened(max_unanswered: int) -> tuple[Peer, Peer]:
    client = Peer.client(AUTH, cookie=C_COOKIE)
    server = Peer.server(AUTH, cookie=S_COOKIE, max_unanswered=max_unanswered)
    pump(client, server)
    server.events()
    client.events()
    return client, server


def test_message_cap(codec: ModuleType) -> None:
    assert MAX_MESSAGE == 16 * 1024 * 1024
    data = encode.call("put", b"x" * 1000)
    decoder = codec.Decoder(max_message=len(data) - 1)
    with pytest.raises(BadDataLengthError, match="over max_message"):
        for i in range(len(data)):  # refused once the length arrives, not at the end
            decoder.feed(data[i : i + 1])
    assert decoder.offset < 20


def test_unanswered_calls_stop_at_max_unanswered() -> None:
    assert MAX_UNANSWERED == 1024
    client, server = opened(3)
    for _ in range(3):
        client.call("work")
    events = server.receive_data(client.data_to_send(), 0.0)
    calls = [e for e in events if isinstance(e, Call)]
    assert len(calls) == 3
    server.reply(calls[1], 1)  # queued behind the first: still held
    client.call("work")
    with pytest.raises(RemoteProtocolError, match="max_unanswered"):
        server.receive_data(client.data_to_send(), 0.0)
    assert server.closed


def test_replies_make_room() -> None:
    client, server = opened(2)
    for _ in range(50):
        client.call("work")
        client.call("work")
        events = server.receive_data(client.data_to_send(), 0.0)
        for event in events:
            assert isinstance(event, Call)
            server.reply(event, 0)
        client.receive_data(server.data_to_send(), 0.0)
    assert not server.closed
    assert server.unanswered_calls == ()
    with pytest.raises(ValueError):
        Peer.server(AUTH, max_unanswered=0)


def test_client_stops_reading_while_its_queue_is_full() -> None:
    count = 50_000
    one = len(encode.notify("e"))

    async def run() -> tuple[int, int]:
        async def on_connect(conn: aio.Client) -> None:
            for _ in range(count):
                conn.peer.notify("e")
            await conn._send()

        server = await aio.serve(None, "127.0.0.1", 0, authority=AUTH, on_connect=on_connect)
        port = server.sockets[0].getsockname()[1]
        async with server:
            client = await aio.connect("127.0.0.1", port, authority=AUTH)
            await asyncio.sleep(0.3)  # the server has sent everything by now
            held = client._queue.qsize()
            taken = 0
            while taken < count:
                assert isinstance(await client.next_event(), Notification)
                taken += 1
            await client.close()
            server.close()
        return held, taken

    held, taken = asyncio.run(run())
    assert MAX_QUEUED <= held <= MAX_QUEUED + 65536 // one + 1
    assert taken == count
