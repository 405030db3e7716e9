"""Loopback TCP: our asyncio client plays against a server built on ServerSession."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from gamecodec.bzrc import (
    Base,
    CommandFailed,
    Constant,
    Fail,
    Flag,
    Listing,
    MyTank,
    Obstacle,
    OccGrid,
    Ok,
    OtherTank,
    Score,
    Shot,
    Team,
    Timer,
    aio,
)
from gamecodec.bzrc.session import Request
from gamecodec.errors import RemoteProtocolError
from gamecodec.sessions import Traffic

TANKS = [
    MyTank(
        i, f"red{i}", "alive" if i != 2 else "dead", 10, 0, "-", -390 + i, 5, 0.5 * i, -0.0, 0.0, 0
    )
    for i in range(4)
]
GRID = (np.arange(12 * 7).reshape(12, 7) % 3 == 0).astype(np.uint8)


class Game:
    """A tiny bzrflag stand-in: answers every command of the final server."""

    def __init__(self) -> None:
        self.speeds: dict[int, float] = {}
        self.shots: list[int] = []
        self.taunted = False
        self.seen: list[str] = []

    async def handle(self, request: Request) -> object:
        self.seen.append(request.command)
        name, args = request.command, request.args
        if name in ("speed", "angvel"):
            if not 0 <= args[0] < len(TANKS):
                return Fail(None, f"Invalid tank ID: {args[0]}", False)
            self.speeds[args[0]] = args[1]
            return Ok(None)
        if name == "shoot":
            if args[0] in self.shots:
                return Fail(None, "", False)  # reloading
            self.shots.append(args[0])
            return Ok(None)
        if name == "taunt":
            if self.taunted:
                return Fail(None, "", False)
            self.taunted = True
            return Ok(None)
        if name == "occgrid":
            if args[0] == 2:
                return (Fail(None, "", False), False)  # dead tank: no ack
            if not 0 <= args[0] < len(TANKS):
                return Fail(None, "Invalid parameter(s)", False)
            await asyncio.sleep(0.01)
            return OccGrid(None, -6, -3, GRID)
        if name == "timer":
            return Timer(None, 5.264403, 300000)
        lists: dict[str, list[object]] = {
            "teams": [Team("blue", 4), Team("red", 4)],
            "obstacles": [Obstacle(((10.0, 60.0), (10.0, -60.0), (-10.0, -60.0), (-10.0, 60.0)))],
            "bases": [Base("red", ((-340.0, 30.0), (-340.0, -30.0), (-400.0, -30.0)))],
            "flags": [Flag("red", "none", -370.0, 0.0)],
            "shots": [Shot(-393.892691057, -9.84966271376, -23.9, -97.1)],
            "mytanks": list(TANKS),
            "othertanks": [OtherTank("blue0", "blue", "alive", "-", 28.44, 329.49, 0.84)],
            "constants": [Constant("team", "red"), Constant("worldsize", "800")],
            "scores": [Score("red", "blue", -1.97), Score("blue", "red", 1.97)],
        }
        if name in lists:
            return Listing(None, lists[name])  # type: ignore[arg-type]
        return Fail(None, "not implemented", False)


async def play() -> None:
    game = Game()
    server = await aio.serve(game.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        bot = await aio.connect("127.0.0.1", port)
        assert bot.session.greeting is not None
        assert await bot.teams() == [Team("blue", 4), Team("red", 4)]
        assert (await bot.obstacles())[0].corners[0] == (10.0, 60.0)
        assert (await bot.bases())[0].color == "red"
        assert await bot.flags() == [Flag("red", "none", -370.0, 0.0)]
        assert (await bot.shots())[0].x == -393.892691057
        assert await bot.mytanks() == TANKS
        assert (await bot.othertanks())[0].callsign == "blue0"
        assert await bot.constants() == {"team": "red", "worldsize": "800"}
        assert (await bot.scores())[0].value == -1.97
        timer = await bot.timer()
        assert (timer.elapsed, timer.limit) == (5.264403, 300000)
        grid = await bot.occgrid(0)
        assert (grid.x, grid.y) == (-6, -3) and np.array_equal(grid.grid, GRID)
        assert grid.ack is not None and grid.ack.args == ()
        # actions
        assert await bot.shoot(0) is True
        assert await bot.shoot(0) is False
        assert await bot.speed(1, 0.5) is True and game.speeds[1] == 0.5
        assert await bot.angvel(1, -0.25) is True
        assert await bot.taunt("hello world") is True
        assert await bot.taunt("again") is False
        assert await bot.speed(99, 1.0) is False
        # pipelining: concurrent calls share writes, answers stay in order
        tanks, others, flags, shots = await asyncio.gather(
            bot.mytanks(), bot.othertanks(), bot.flags(), bot.shots()
        )
        assert tanks == TANKS and len(others) == 1 and len(flags) == 1 and len(shots) == 1
        results = await bot.do_commands(
            [aio.TankCommand(i, 1.0, -1.0, shoot=i % 2 == 1) for i in range(4)]
        )
        assert results == [
            aio.TankResult(True, True, None),
            aio.TankResult(True, True, True),
            aio.TankResult(True, True, None),
            aio.TankResult(True, True, True),
        ]
        assert await bot.do_commands([aio.TankCommand(3, 0, 0, shoot=True)]) == [
            aio.TankResult(True, True, False)
        ]
        raw = await bot.commands([("mytanks",), ("occgrid", 1), ("timer",)])
        assert [type(r) for r in raw] == [Listing, OccGrid, Timer]
        with pytest.raises(ValueError):  # all or none: the shot before it is not sent
            await bot.commands([("shoot", 2), ("speed", 0, "fast")])
        assert await bot.shoot(2) is True and game.shots.count(2) == 1  # not shot before
        # errors
        with pytest.raises(CommandFailed) as info:
            await bot.occgrid(2)  # dead tank: ack-less fail
        assert info.value.response == Fail(None, "", False)
        with pytest.raises(CommandFailed):
            await bot.occgrid(9)
        assert await bot.accelx(0, 1.0) is False  # not a command of the final server
        bad = await bot.command("speed", 0, float("nan"))
        assert isinstance(bad, Fail) and bad.comment == "not a number"
        help_all = await bot.help(quiet=0.05)
        assert len(help_all.lines) == 16 and help_all.lines[0].startswith(":angvel")
        assert (await bot.help("shoot", quiet=0.05)).lines[0].startswith(":shoot")
        with pytest.raises(CommandFailed):
            await bot.help("nope", quiet=0.05)
        assert await bot.timer()  # still in sync after help
        assert await bot.quit() is True
        assert bot.session.closed
        with pytest.raises(ConnectionError):
            await bot.teams()
        await bot.close()
        assert "accelx" not in game.seen and "quit" not in game.seen
    finally:
        server.close()
        await server.wait_closed()


def test_loopback_game() -> None:
    asyncio.run(asyncio.wait_for(play(), 30))


async def refused() -> None:
    async def greet_then_refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bzrobots 1\n")
        await reader.readline()
        writer.write(b"fail Unrecognized handshake\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet_then_refuse, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        bot = await aio.connect("127.0.0.1", port)
        with pytest.raises(RemoteProtocolError, match="handshake refused"):
            await bot.teams()
        await bot.close()
    finally:
        server.close()
        await server.wait_closed()


def test_refused_handshake() -> None:
    asyncio.run(asyncio.wait_for(refused(), 30))


async def tapped() -> None:
    seen_server: list[Traffic] = []
    seen_client: list[Traffic] = []
    server = await aio.serve(Game().handle, "127.0.0.1", 0, tap=seen_server.append)
    port = server.sockets[0].getsockname()[1]
    try:
        bot = await aio.connect("127.0.0.1", port, tap=seen_client.append, connect_timeout=5)
        assert await bot.teams() == [Team("blue", 4), Team("red", 4)]
        await bot.close()
    finally:
        server.close()
        await server.wait_closed()
    for seen in (seen_client, seen_server):
        assert all(isinstance(t, Traffic) and isinstance(t.time, float) for t in seen)
        assert all(isinstance(t.data, bytes) and t.data for t in seen)
        assert {t.direction for t in seen} == {"in", "out"}
    sent = b"".join(t.data for t in seen_client if t.direction == "out")
    received = b"".join(t.data for t in seen_client if t.direction == "in")
    assert sent == b"agent 1\nteams\n"
    assert received.startswith(b"bzrobots 1\nack ") and received.endswith(b"end\n")
    assert sent == b"".join(t.data for t in seen_server if t.direction == "in")
    assert received == b"".join(t.data for t in seen_server if t.direction == "out")
    assert seen_client[0].peer == ("127.0.0.1", port)


def test_tap_sees_every_chunk_both_ways() -> None:
    asyncio.run(asyncio.wait_for(tapped(), 30))


async def silent_server() -> None:
    async def never_greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(never_greet, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(TimeoutError):
            await aio.connect("127.0.0.1", port, connect_timeout=0.1)
    finally:
        server.close()
        await server.wait_closed()


def test_connect_timeout_bounds_the_greeting() -> None:
    asyncio.run(asyncio.wait_for(silent_server(), 30))


async def silent_client() -> None:
    server = await aio.serve(Game().handle, "127.0.0.1", 0, connect_timeout=0.1)
    port = server.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await reader.readline() == b"bzrobots 1\n"
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed: no agent 1
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"agent 1\n")
        await asyncio.sleep(0.3)  # past the timeout, but the handshake was done
        writer.write(b"timer\n")
        await reader.readline()
        assert (await reader.readline()).startswith(b"ack ")
        writer.close()
    finally:
        server.close()
        await server.wait_closed()


def test_serve_connect_timeout_closes_a_client_without_handshake() -> None:
    asyncio.run(asyncio.wait_for(silent_client(), 30))


async def shut_down_with_a_client_connected(errors: list[dict[str, object]]) -> None:
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
    server = await aio.serve(Game().handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = await aio.connect("127.0.0.1", port)
    assert await bot.timer()
    server.close()  # the handler is still reading: asyncio.run cancels it


def test_server_shutdown_with_a_client_connected_is_quiet() -> None:
    errors: list[dict[str, object]] = []
    asyncio.run(shut_down_with_a_client_connected(errors))
    assert errors == []


async def mistaken_handler(errors: list[dict[str, object]]) -> list[str]:
    """A test server whose handler makes each kind of mistake once."""
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))

    async def handle(request: Request) -> object:
        if request.command == "mytanks":
            return "ok"  # not an answer (mypy refuses it: tests/typing/bzrc_aio_bot.py)
        if request.command == "flags":
            return Fail(None, "line\nbreak", False)  # a comment the wire cannot carry
        if request.command == "shots":
            raise KeyError("no shots table")
        if request.command == "teams":
            return Listing(None, [Team("red", 4)])
        return Ok(None)

    server = await aio.serve(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = await aio.connect("127.0.0.1", port)
    messages = []
    for query in (bot.mytanks, bot.flags, bot.shots):
        with pytest.raises(CommandFailed) as failed:
            await query()
        messages.append(str(failed.value))
    assert await bot.teams() == [Team("red", 4)]  # the connection goes on
    assert await bot.speed(0, 1.0) is True
    await bot.close()
    server.close()
    await server.wait_closed()
    return messages


def test_a_handler_mistake_is_answered_fail_and_the_connection_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before, a handler answering ``"ok"`` closed the connection (the client saw
    only ``ConnectionError``; the server logged ``LocalProtocolError: str is not
    a command answer``). Now each mistake is answered ``fail`` naming it, and
    logged; the next commands are answered as usual."""
    errors: list[dict[str, object]] = []
    with caplog.at_level("ERROR", logger="gamecodec.bzrc.aio"):
        messages = asyncio.run(asyncio.wait_for(mistaken_handler(errors), 30))
    assert messages == [
        "mytanks: handler answer refused: str is not a command answer",
        "flags: handler answer refused: fail comment must not contain a newline",
        "shots: handler raised KeyError: 'no shots table'",
    ]
    assert errors == []
    logged = [r.getMessage() for r in caplog.records if r.name == "gamecodec.bzrc.aio"]
    assert len(logged) == 3 and "KeyError" not in logged[0]
    assert caplog.records[-1].exc_info is not None  # the raise, with its traceback
