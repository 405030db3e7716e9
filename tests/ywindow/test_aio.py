"""Loopback: an asyncio client and server log in, call, reply and exchange events."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gamecodec import ywindow
from gamecodec.errors import RemoteProtocolError
from gamecodec.ywindow import Call, Keyword, Notification, Value, aio

AUTH = bytes(range(256))


async def on_call(method: str, args: tuple[Value, ...]) -> tuple[Value, ...]:
    if method == "goto":
        return (Keyword("ok"),)
    if method == "slow":
        await asyncio.sleep(0.05)
    return (method, *args)


async def loopback(tmp_path: Path) -> None:
    seen: list[Notification] = []

    async def on_connect(conn: aio.Client) -> None:
        await conn.notify("mouse_moved", -1, 2)
        event = await conn.next_event()
        assert isinstance(event, Notification)
        seen.append(event)
        assert await conn.call("whoami") == ("client-1",)

    path = tmp_path / ".Yauthority"
    ywindow.save_authority(AUTH, path)
    server = await aio.serve(
        on_call, "127.0.0.1", 0, authority=AUTH, on_connect=on_connect, software="test server"
    )
    port = server.sockets[0].getsockname()[1]
    async with server:
        client = await aio.connect("127.0.0.1", port, authority_file=path, software="test")
        assert client.greeting is not None
        assert client.greeting.software == "test server"
        event = await client.next_event()
        assert event == Notification("mouse_moved", (-1, 2))
        assert await client.call("goto", 10, 10) == (Keyword("ok"),)
        slow, fast = await asyncio.gather(client.call("slow", 1), client.call("echo", "hé", b"x"))
        assert slow == ("slow", 1)
        assert fast == ("echo", "hé", b"x")
        await client.notify("goto", 10, 10)
        incoming = await client.next_event()
        assert isinstance(incoming, Call) and incoming.method == "whoami"
        await client.reply(incoming, "client-1")
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        assert seen == [Notification("goto", (10, 10))]
        await client.close()
        server.close()


async def wrong_authority() -> None:
    server = await aio.serve(on_call, "127.0.0.1", 0, authority=AUTH)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises((RemoteProtocolError, ConnectionError)):
            await aio.connect("127.0.0.1", port, authority=bytes(256))
        server.close()


def test_loopback(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(loopback(tmp_path), 10))


def test_wrong_authority_is_refused() -> None:
    asyncio.run(asyncio.wait_for(wrong_authority(), 10))


async def failing_handler() -> None:
    async def handler(method: str, args: tuple[Value, ...]) -> tuple[Value, ...]:
        if method == "boom":
            raise RuntimeError("handler failed")
        return (method,)

    server = await aio.serve(handler, "127.0.0.1", 0, authority=AUTH)
    port = server.sockets[0].getsockname()[1]
    async with server:
        client = await aio.connect("127.0.0.1", port, authority=AUTH)
        assert await client.call("fine") == ("fine",)
        with pytest.raises(ConnectionError):  # not left waiting for ever
            await asyncio.gather(client.call("boom"), client.call("after"))
        await client.close()
        server.close()


def test_a_failing_call_handler_ends_the_connection() -> None:
    """Replies are matched by order: a call the server cannot answer must end the
    connection, not hold every later reply back (found by an audit)."""
    asyncio.run(asyncio.wait_for(failing_handler(), 10))
