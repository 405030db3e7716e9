"""Client robustness: call timeouts, one exception for a lost connection at
any point, in the Sans-IO session and the asyncio client."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable

import pytest

from gamecodec import bzrc
from gamecodec.bzrc import Answer, Closed, aio

REPLIES = {
    b"teams\n": b"ack 0.1 teams\nbegin\nteam red 10\nteam blue 10\nend\n",
    b"timer\n": b"ack 0.2 timer\ntimer 1.5 300000\n",
}


@pytest.mark.parametrize("cut", range(1, len(REPLIES[b"teams\n"])))
def test_session_end_of_stream_inside_a_reply_is_closed(cut: int) -> None:
    """The stream ending inside a reply is the connection lost, as between
    replies: a Closed event naming the cut command, not a protocol error."""
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    teams = client.send("teams")
    timer = client.send("timer")
    events = client.receive_data(REPLIES[b"teams\n"][:cut], 0.0)
    assert events == []
    assert client.receive_data(b"", 1.0) == [Closed((teams, timer))]
    assert client.closed and not client.pending


def test_session_end_of_stream_after_help_answers_it() -> None:
    client = bzrc.ClientSession()
    client.receive_data(b"bzrobots 1\n", 0.0)
    asked = client.send("help", "quit")
    client.receive_data(b":quit\n\n        Disconnects the session.\n", 0.0)
    assert client.receive_data(b"", 1.0) == [
        Answer(asked, bzrc.Help((":quit", "", "        Disconnects the session."))),
        Closed(()),
    ]


def test_default_timeout() -> None:
    """An idle limit above the 61 s bzrflag was seen silent while it
    generated another team's grids (issue 30)."""
    assert bzrc.DEFAULT_TIMEOUT == 120.0


Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def with_server(script: Script, body: Callable[[int], Awaitable[None]]) -> None:
    server = await asyncio.start_server(script, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        await body(port)
    finally:
        server.close()
        await server.wait_closed()


def serve_then(cut: int | None, *, reset: bool = False) -> Script:
    """A server that greets, answers ``teams`` with the first ``cut`` bytes of
    its reply (all of them when None, then ``timer`` too) and then closes the
    connection (a reset with ``reset``)."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bzrobots 1\n")
        await reader.readline()  # agent 1
        line = await reader.readline()
        reply = REPLIES[line]
        writer.write(reply[:cut] if cut is not None else reply)
        await writer.drain()
        if cut is None:
            writer.write(REPLIES[await reader.readline()])
            await writer.drain()
        await asyncio.sleep(0.05)
        if reset:
            linger_zero = struct.pack("ii", 1, 0)  # close sends a reset
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger_zero)
        writer.close()

    return script


@pytest.mark.parametrize("cut", [0, 1, 12, 20, 35, None])
@pytest.mark.parametrize("reset", [False, True])
def test_lost_connection_is_connection_error_at_any_point(cut: int | None, reset: bool) -> None:
    async def body(port: int) -> None:
        bot = await aio.connect("127.0.0.1", port, timeout=5)
        try:
            if cut is None:
                assert len(await bot.teams()) == 2
                assert (await bot.timer()).limit == 300000
            with pytest.raises(ConnectionError):
                await bot.teams() if cut is not None else await bot.shots()
            with pytest.raises(ConnectionError):  # and every later call
                await bot.mytanks()
        finally:
            await bot.close()

    asyncio.run(asyncio.wait_for(with_server(serve_then(cut, reset=reset), body), 30))


def test_lost_before_the_greeting_is_connection_error() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bzrob")
        await writer.drain()
        writer.close()

    async def body(port: int) -> None:
        with pytest.raises(ConnectionError):
            await aio.connect("127.0.0.1", port)

    asyncio.run(asyncio.wait_for(with_server(hang_up, body), 30))


def test_call_timeout_raises_and_closes() -> None:
    """A server that never answers: the call raises TimeoutError after
    ``timeout``; the connection is closed (answers carry no id, so a late or
    missing one would shift every later answer), later calls raise
    ConnectionError."""

    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bzrobots 1\n")
        await reader.read()
        writer.close()

    async def body(port: int) -> None:
        bot = await aio.connect("127.0.0.1", port, timeout=0.2)
        assert bot.timeout == 0.2
        loop = asyncio.get_running_loop()
        start = loop.time()
        first = asyncio.ensure_future(bot.teams())
        await asyncio.sleep(0.1)
        other = asyncio.ensure_future(bot.mytanks())  # waiting when the first times out
        with pytest.raises(TimeoutError):
            await first
        assert 0.15 < loop.time() - start < 2
        with pytest.raises(ConnectionError):
            await other
        with pytest.raises(ConnectionError):
            await bot.timer()
        await bot.close()

    asyncio.run(asyncio.wait_for(with_server(mute, body), 30))


def test_timeout_none_waits() -> None:
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bzrobots 1\n")
        await reader.readline()
        await reader.readline()
        await asyncio.sleep(0.3)
        writer.write(REPLIES[b"timer\n"])
        await writer.drain()
        await reader.read()
        writer.close()

    async def body(port: int) -> None:
        bot = await aio.connect("127.0.0.1", port, timeout=None)
        assert (await bot.timer()).elapsed == 1.5
        await bot.close()

    asyncio.run(asyncio.wait_for(with_server(slow, body), 30))
