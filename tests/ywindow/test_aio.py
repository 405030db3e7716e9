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
    connected: list[aio.Client] = []

    async def on_connect(conn: aio.Client) -> None:
        connected.append(conn)

    server = await aio.serve(on_call, "127.0.0.1", 0, authority=AUTH, on_connect=on_connect)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(
            ywindow.AuthenticationError, match="closed the connection on our digest"
        ):
            await aio.connect("127.0.0.1", port, authority=bytes(256))
        server.close()
    assert connected == []


def test_loopback(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(loopback(tmp_path), 10))


def test_wrong_authority_is_refused() -> None:
    """The server closes the connection on a digest that does not match (the
    spec: "the side that detects a mismatch closes the connection"), so the
    client sees only the end of the stream after its digest: that is an
    authentication error, not ``ConnectionError: ywindow connection closed``
    (before). Still a ConnectionError and a RemoteProtocolError."""
    asyncio.run(asyncio.wait_for(wrong_authority(), 10))
    assert issubclass(ywindow.AuthenticationError, ConnectionError)
    assert issubclass(ywindow.AuthenticationError, RemoteProtocolError)


async def reflected_cookie() -> str:
    """A server that sends the client's own cookie back: the client's peer
    refuses it (AuthenticationFailed), and connect says so."""

    async def mirror(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(ywindow.encode_greeting(ywindow.Role.SERVER, "mirror"))
        await reader.readline()
        writer.write(await reader.readexactly(ywindow.COOKIE_SIZE))
        await reader.read()
        writer.close()

    server = await asyncio.start_server(mirror, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(ywindow.AuthenticationError) as refused:
            await aio.connect("127.0.0.1", port, authority=AUTH)
        server.close()
    return str(refused.value)


def test_a_reflected_cookie_is_an_authentication_error() -> None:
    assert asyncio.run(asyncio.wait_for(reflected_cookie(), 10)) == (
        "authentication failed: server sent our own cookie"
    )


async def generated_authority(authority_file: Path | None) -> tuple[Value, ...]:
    server = await aio.serve(on_call, "127.0.0.1", 0, authority_file=authority_file)
    port = server.sockets[0].getsockname()[1]
    async with server:
        client = await aio.connect("127.0.0.1", port, authority_file=authority_file)
        values = await client.call("goto", 1, 2)
        await client.close()
        server.close()
    return values


def test_serve_without_authority_generates_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the docs say (and the protocol document: the server generates the
    authority at startup and writes it to ~/.Yauthority for clients to read),
    serve() without authority= writes a fresh one; before, it read
    ~/.Yauthority and raised FileNotFoundError where there was none. HOME is
    a temporary directory: the real ~/.Yauthority is not touched."""
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ywindow.default_path() == tmp_path / ".Yauthority"
    assert asyncio.run(asyncio.wait_for(generated_authority(None), 10)) == (Keyword("ok"),)
    first = ywindow.load_authority()
    assert (tmp_path / ".Yauthority").stat().st_mode & 0o777 == 0o600
    asyncio.run(asyncio.wait_for(generated_authority(None), 10))
    assert ywindow.load_authority() != first  # a fresh one at each start


def test_serve_writes_its_authority_to_authority_file(tmp_path: Path) -> None:
    path = tmp_path / "auth"
    assert asyncio.run(asyncio.wait_for(generated_authority(path), 10)) == (Keyword("ok"),)
    assert len(path.read_bytes()) == ywindow.AUTHORITY_SIZE


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


async def shut_down_with_a_client_connected(errors: list[dict[str, object]]) -> None:
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
    server = await aio.serve(on_call, "127.0.0.1", 0, authority=AUTH)
    port = server.sockets[0].getsockname()[1]
    client = await aio.connect("127.0.0.1", port, authority=AUTH)
    assert await client.call("goto", 1, 1) == (Keyword("ok"),)
    server.close()  # the connection's handler is still waiting: asyncio.run cancels it


def test_server_shutdown_with_a_client_connected_is_quiet() -> None:
    """Python 3.11's stream callback logged the cancelled connection handler
    (``Exception in callback ... CancelledError``), seen at the end of the
    guide's example."""
    errors: list[dict[str, object]] = []
    asyncio.run(shut_down_with_a_client_connected(errors))
    assert errors == []


def test_serve_refuses_a_bad_authority_at_once() -> None:
    """Before, a wrong-sized authority made a server that failed each
    connection (a ValueError in the connection handler, logged by asyncio)."""

    async def start() -> None:
        with pytest.raises(ValueError, match="authority of 10 bytes, not 256"):
            await aio.serve(on_call, "127.0.0.1", 0, authority=bytes(10))

    asyncio.run(asyncio.wait_for(start(), 10))
