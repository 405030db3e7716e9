"""The synchronous drop-in for the reference ``bzrc.py``, against ``aio.serve``
(run in a thread), with an agent written the way the reference's
``agent0.py`` is."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
from collections.abc import Callable, Iterator
from typing import BinaryIO

import numpy as np
import pytest

from gamecodec.bzrc import (
    Base,
    Constant,
    Fail,
    Flag,
    Listing,
    MyTank,
    Obstacle,
    OccGrid,
    Ok,
    OtherTank,
    Shot,
    Team,
    aio,
)
from gamecodec.bzrc.compat import (
    BZRC,
    Answer,
    BaseAnswer,
    Command,
    FlagAnswer,
    MyTankAnswer,
    OtherTankAnswer,
    ShotAnswer,
    TeamAnswer,
    UnexpectedResponse,
)
from gamecodec.bzrc.session import Request

# The reference client's result attributes (bzagents/bzrc.py, read_* methods).
REFERENCE_ATTRIBUTES = {
    "teams": ["color", "count", "base"],
    "flags": ["color", "poss_color", "x", "y"],
    "shots": ["x", "y", "vx", "vy"],
    "mytanks": [
        "index",
        "callsign",
        "status",
        "shots_avail",
        "time_to_reload",
        "flag",
        "x",
        "y",
        "angle",
        "vx",
        "vy",
        "angvel",
    ],
    "othertanks": ["callsign", "color", "status", "flag", "x", "y", "angle"],
    "bases": [
        "color",
        "corner1_x",
        "corner1_y",
        "corner2_x",
        "corner2_y",
        "corner3_x",
        "corner3_y",
        "corner4_x",
        "corner4_y",
    ],
}
REFERENCE_METHODS = [
    "close",
    "shoot",
    "speed",
    "angvel",
    "get_teams",
    "get_obstacles",
    "get_occgrid",
    "get_flags",
    "get_shots",
    "get_mytanks",
    "get_othertanks",
    "get_bases",
    "get_constants",
    "get_lots_o_stuff",
    "do_commands",
]
GRID = (np.arange(6 * 4).reshape(6, 4) % 3 == 0).astype(np.uint8)


class World:
    """A small bzrflag stand-in with state: our red tanks turn and move as
    told, shots appear when they fire, blue tanks stand still."""

    def __init__(self) -> None:
        self.tanks = [
            MyTank(i, f"red{i}", "alive", 10, 0, "-", -300 + 20 * i, 10, 0.0, 0.0, 0.0, 0)
            for i in range(3)
        ]
        self.enemies = [
            OtherTank("blue0", "blue", "alive", "-", 100.5, 40.25, 3.0),
            OtherTank("blue1", "blue", "dead", "-", -999999, -999999, 0.0),
            OtherTank("green0", "green", "alive", "red", 300.0, -200.0, 1.0),
        ]
        self.shots: list[Shot] = []
        self.orders: list[tuple[str, int, float]] = []
        self.lock = threading.Lock()

    def handle(self, request: Request) -> object:
        name, args = request.command, request.args
        with self.lock:
            tank_command = name in ("speed", "angvel", "shoot", "occgrid")
            if tank_command and not 0 <= args[0] < len(self.tanks):
                return Fail(None, f"Invalid tank ID: {args[0]}", False)
            if name in ("speed", "angvel"):
                self.orders.append((name, args[0], args[1]))
                tank = self.tanks[args[0]]
                if name == "angvel":
                    self.tanks[args[0]] = tank._replace(angvel=args[1], angle=tank.angle + 0.1)
                else:
                    self.tanks[args[0]] = tank._replace(vx=float(args[1]), x=tank.x + args[1])
                return Ok(None)
            if name == "shoot":
                tank = self.tanks[args[0]]
                if tank.shots_avail == 0 or tank.reload:
                    return Fail(None, "", False)
                self.orders.append(("shoot", args[0], 0.0))
                self.tanks[args[0]] = tank._replace(shots_avail=tank.shots_avail - 1, reload=2.5)
                self.shots.append(Shot(tank.x, tank.y, 100.0, 0.0))
                return Ok(None)
            if name == "occgrid":
                if args[0] == 2:
                    return (Fail(None, "", False), False)  # bzrflag: dead tank, no ack
                return OccGrid(None, -3, 7, GRID)
            lists: dict[str, list[object]] = {
                "teams": [Team("red", 3), Team("blue", 2), Team("green", 1)],
                "obstacles": [Obstacle(((10, 60), (10.5, -60), (-10, -60), (-10, 60)))],
                "bases": [Base("red", ((-340, 30), (-340, -30), (-400, -30), (-400, 30)))],
                "flags": [Flag("red", "none", -370.0, 0), Flag("blue", "green", 5, 6.5)],
                "shots": list(self.shots),
                "mytanks": list(self.tanks),
                "othertanks": list(self.enemies),
                "constants": [Constant("team", "red"), Constant("worldsize", "800")],
            }
            if name in lists:
                return Listing(None, lists[name])  # type: ignore[arg-type]
            return Fail(None, "not implemented", False)


def run_server(handler: Callable[[Request], object]) -> Iterator[int]:
    """``aio.serve(handler)`` on a loop in another thread; yields its port."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict[str, object] = {}

    async def start() -> None:
        server = await aio.serve(handler, "127.0.0.1", 0)
        box["server"] = server
        box["port"] = server.sockets[0].getsockname()[1]
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    started.wait(10)
    try:
        yield int(box["port"])  # type: ignore[call-overload]
    finally:

        async def stop() -> None:
            server = box["server"]
            assert isinstance(server, asyncio.Server)
            server.close()
            await server.wait_closed()
            handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in handlers:  # connections still open end quietly
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def port(world: World) -> Iterator[int]:
    yield from run_server(world.handle)


# -- an agent written as the reference's agent0.py is; only its import changed --


class Agent:
    """Class handles all command and control logic for a teams tanks."""

    def __init__(self, bzrc: BZRC) -> None:
        self.bzrc = bzrc
        self.constants = self.bzrc.get_constants()
        self.commands: list[Command] = []

    def tick(self, time_diff: float) -> list[tuple[bool, bool, bool]]:
        """Some time has passed; decide what to do next."""
        mytanks, othertanks, flags, shots = self.bzrc.get_lots_o_stuff()
        self.mytanks = mytanks
        self.othertanks = othertanks
        self.flags = flags
        self.shots = shots
        self.enemies = [tank for tank in othertanks if tank.color != self.constants["team"]]
        self.commands = []
        for tank in mytanks:
            self.attack_enemies(tank)
        return self.bzrc.do_commands(self.commands)

    def attack_enemies(self, tank: Answer) -> None:
        """Find the closest enemy and chase it, shooting as you go."""
        best_enemy = None
        best_dist = 2 * float(self.constants["worldsize"])
        for enemy in self.enemies:
            if enemy.status != "alive":
                continue
            dist = math.sqrt((enemy.x - tank.x) ** 2 + (enemy.y - tank.y) ** 2)
            if dist < best_dist:
                best_dist = dist
                best_enemy = enemy
        if best_enemy is None:
            self.commands.append(Command(tank.index, 0, 0, False))
        else:
            self.move_to_position(tank, best_enemy.x, best_enemy.y)

    def move_to_position(self, tank: Answer, target_x: float, target_y: float) -> None:
        """Set command to move to given coordinates."""
        target_angle = math.atan2(target_y - tank.y, target_x - tank.x)
        relative_angle = self.normalize_angle(target_angle - tank.angle)
        self.commands.append(Command(tank.index, 1, 2 * relative_angle, True))

    def normalize_angle(self, angle: float) -> float:
        """Make any angle be between +/- pi."""
        angle -= 2 * math.pi * int(angle / (2 * math.pi))
        if angle <= -math.pi:
            angle += 2 * math.pi
        elif angle > math.pi:
            angle -= 2 * math.pi
        return angle


def test_agent0_plays(world: World, port: int) -> None:
    bzrc = BZRC("127.0.0.1", port)
    agent = Agent(bzrc)
    first = agent.tick(0.0)
    assert first == [(True, True, True)] * 3  # every tank chases blue0 and fires
    second = agent.tick(0.1)
    assert second == [(True, True, False)] * 3  # reloading
    assert [t.callsign for t in agent.enemies] == ["blue0", "blue1", "green0"]
    assert len(agent.shots) == 3 and agent.mytanks[0].time_to_reload == 2.5
    aim = math.atan2(40.25 - 10, 100.5 - (-300))
    assert world.orders[:3] == [("speed", 0, 1), ("angvel", 0, 2 * aim), ("shoot", 0, 0.0)]
    assert world.tanks[0].x == -300 + 2  # moved twice
    bzrc.close()


def test_every_reference_method(world: World, port: int) -> None:
    bzrc = BZRC("127.0.0.1", port)
    for name in REFERENCE_METHODS:
        assert callable(getattr(bzrc, name))
    teams = bzrc.get_teams()
    assert [(t.color, t.count, t.base) for t in teams] == [
        ("red", 3.0, []),
        ("blue", 2.0, []),
        ("green", 1.0, []),
    ]
    assert isinstance(teams[0].count, float)
    obstacles = bzrc.get_obstacles()
    assert obstacles == [[(10.0, 60.0), (10.5, -60.0), (-10.0, -60.0), (-10.0, 60.0)]]
    assert all(isinstance(v, float) for corner in obstacles[0] for v in corner)
    pos, grid = bzrc.get_occgrid(0)  # type: ignore[misc]
    assert pos == (-3, 7) and grid == GRID.tolist() and isinstance(grid[0][0], int)
    # dead tank: bzrflag answers a bare fail without an ack (server.py:376-378);
    # the reference's get_occgrid reads the ack first, so read_ack raises
    # (bzagents/bzrc.py get_occgrid and read_ack, lines 115-121 and 354-358)
    with pytest.raises(UnexpectedResponse) as info:
        bzrc.get_occgrid(2)
    assert (info.value.expected, info.value.got) == ("ack", "fail")
    assert bzrc.get_occgrid(9) is None  # acked fail: read_occgrid returns None; in sync
    flags = bzrc.get_flags()
    assert [(f.color, f.poss_color, f.x, f.y) for f in flags] == [
        ("red", "none", -370.0, 0.0),
        ("blue", "green", 5.0, 6.5),
    ]
    assert bzrc.get_shots() == []
    assert bzrc.shoot(1) is True and bzrc.shoot(1) is False
    assert bzrc.speed(0, 0.5) is True and bzrc.angvel(0, -0.25) is True
    assert bzrc.speed(7, 1.0) is False
    shots = bzrc.get_shots()
    assert [(s.x, s.y, s.vx, s.vy) for s in shots] == [(-280.0, 10.0, 100.0, 0.0)]
    tanks = bzrc.get_mytanks()
    tank = tanks[0]
    assert (tank.index, tank.callsign, tank.status, tank.shots_avail) == (0, "red0", "alive", 10)
    # bzrflag truncates a mytank's x and y to ints (-299.5 is sent as -299)
    assert (tank.time_to_reload, tank.flag, tank.x, tank.y) == (0.0, "-", -299.0, 10.0)
    assert (tank.vx, tank.vy, tank.angvel) == (0.5, 0.0, -0.25)
    assert isinstance(tank.x, float) and isinstance(tank.index, int)
    others = bzrc.get_othertanks()
    assert [(o.callsign, o.color, o.status, o.flag) for o in others][2] == (
        "green0",
        "green",
        "alive",
        "red",
    )
    bases = bzrc.get_bases()
    assert (bases[0].color, bases[0].corner1_x, bases[0].corner4_y) == ("red", -340.0, 30.0)
    assert bzrc.get_constants() == {"team": "red", "worldsize": "800"}
    stuff = bzrc.get_lots_o_stuff()
    assert isinstance(stuff, tuple) and len(stuff) == 4
    for kind, items in (
        ("teams", teams),
        ("flags", flags),
        ("shots", shots),
        ("mytanks", tanks),
        ("othertanks", others),
        ("bases", bases),
    ):
        assert list(vars(items[0])) == REFERENCE_ATTRIBUTES[kind], kind
    assert bzrc.do_commands([Command(0, 1, 0, False), Command(2, -1, 1, True)]) == [
        (True, True, False),
        (True, True, True),
    ]
    bzrc.close()
    with pytest.raises(ConnectionError):
        bzrc.get_mytanks()


def test_numpy_scalars(port: int) -> None:
    """np.int64 ids and np.float32 speeds are sent as numbers."""
    with BZRC("127.0.0.1", port) as bzrc:
        assert bzrc.speed(np.int64(1), np.float32(0.5)) is True
        assert bzrc.angvel(np.int32(2), np.float64(-1.0)) is True
        assert bzrc.speed(0, float("nan")) is False
        assert len(bzrc.get_mytanks()) == 3


def one_shot_server(script: Callable[[socket.socket, BinaryIO], None]) -> Iterator[int]:
    """A raw server thread for one connection, running ``script(conn, lines)``
    (``lines.readline()`` reads one command)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as lines:
            script(conn, lines)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        thread.join(10)
        listener.close()


@pytest.mark.parametrize("cut", [0, 5, 20, None])
def test_lost_connection_is_connection_error(cut: int | None) -> None:
    reply = b"ack 0.1 mytanks\nbegin\nmytank 0 red0 alive 10 0 - 1 2 0.5 0 0 0\nend\n"

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        assert lines.readline() == b"agent 1\n"
        if cut is None:
            assert lines.readline() == b"mytanks\n"
            conn.sendall(reply)
            assert lines.readline() == b"mytanks\n"  # then closed, unanswered
        else:
            conn.sendall(reply[:cut])

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port, timeout=5)
        if cut is None:
            assert bzrc.get_mytanks()[0].callsign == "red0"
        with pytest.raises(ConnectionError):
            bzrc.get_mytanks()
        with pytest.raises(ConnectionError):
            bzrc.shoot(0)
        bzrc.close()


def test_timeout() -> None:
    done = threading.Event()

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        done.wait(10)

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port, timeout=0.2)
        with pytest.raises(TimeoutError):
            bzrc.get_flags()
        with pytest.raises(ConnectionError):  # closed: a late answer cannot be matched
            bzrc.get_flags()
        done.set()
        bzrc.close()


def test_no_greeting_times_out() -> None:
    done = threading.Event()

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        done.wait(10)

    for port in one_shot_server(script):
        with pytest.raises(TimeoutError):
            BZRC("127.0.0.1", port, timeout=0.2)
        done.set()


def test_unexpected_response() -> None:
    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        lines.readline()
        assert lines.readline() == b"obstacles\n"
        conn.sendall(b"ack 1 obstacles\nfail\n")  # bzrflag --no-report-obstacles
        lines.readline()

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port, timeout=5)
        with pytest.raises(UnexpectedResponse) as info:
            bzrc.get_obstacles()
        assert (info.value.expected, info.value.got) == ("begin", "fail")
        assert str(info.value) == 'BZRC: Expected "begin".  Instead got "fail".'
        bzrc.close()


def test_double_fail_does_not_shift_answers() -> None:
    """bzrflag answers a bad speed argument with ack, ``fail Invalid
    parameter(s)`` and a second ``fail``; the reference client leaves that
    second line to answer its next command, the drop-in does not."""

    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(b"bzrobots 1\n")
        lines.readline()
        assert lines.readline() == b"speed 0 1.0\n"
        conn.sendall(b"ack 1 speed 0 x\nfail Invalid parameter(s)\nfail\n")
        assert lines.readline() == b"constants\n"
        conn.sendall(b"ack 2 constants\nbegin\nconstant team red\nend\n")
        lines.readline()

    for port in one_shot_server(script):
        bzrc = BZRC("127.0.0.1", port, timeout=5)
        assert bzrc.speed(0, 1.0) is False
        assert bzrc.get_constants() == {"team": "red"}
        bzrc.close()


@pytest.mark.parametrize("sent", [b"", b"bzrob"])
def test_lost_before_the_greeting(sent: bytes) -> None:
    def script(conn: socket.socket, lines: BinaryIO) -> None:
        conn.sendall(sent)

    for port in one_shot_server(script):
        with pytest.raises(ConnectionError, match="closed by the server"):
            BZRC("127.0.0.1", port, timeout=5)


def test_debug_prints_whole_lines(port: int, capsys: pytest.CaptureFixture[str]) -> None:
    with BZRC("127.0.0.1", port, debug=True) as bzrc:
        bzrc.get_constants()
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "Received: ['bzrobots', '1']"
    assert printed[2:] == [
        "Received: ['begin']",
        "Received: ['constant', 'team', 'red']",
        "Received: ['constant', 'worldsize', '800']",
        "Received: ['end']",
    ]
    assert printed[1].startswith("Received: ['ack', ") and printed[1].endswith("'constants']")


def test_answers_are_plain_objects(world: World, port: int) -> None:
    """As the reference's ``Answer``: hashed and compared by identity, so an
    agent can key a dict or a set by its tanks, and two tanks with the same
    fields stay two."""
    bzrc = BZRC("127.0.0.1", port)
    tanks = bzrc.get_mytanks()
    again = bzrc.get_mytanks()
    targets = {tank: None for tank in tanks}
    assert len(targets) == len(tanks) and tanks[0] in targets
    assert vars(tanks[0]) == vars(again[0]) and tanks[0] != again[0]
    assert again[0] not in targets
    bzrc.close()


def test_answers_are_typed_and_stay_open(world: World, port: int) -> None:
    """Each ``get_*`` returns a typed subclass of ``Answer`` declaring the
    reference's attributes (a type checker knows ``tank.x`` is a float:
    tests/typing/bzrc_compat_agent.py), and an agent can still set its own
    attributes on them, as on the reference's ``Answer`` (``bzagents/bzrc.py``,
    ``class Answer``: a bare object whose fields ``read_mytanks`` sets one by one)."""
    bzrc = BZRC("127.0.0.1", port)
    kinds = {
        "teams": TeamAnswer,
        "flags": FlagAnswer,
        "shots": ShotAnswer,
        "mytanks": MyTankAnswer,
        "othertanks": OtherTankAnswer,
        "bases": BaseAnswer,
    }
    for kind, cls in kinds.items():
        items = getattr(bzrc, f"get_{kind}")()
        assert all(type(i) is cls and isinstance(i, Answer) for i in items), kind
        assert all(list(vars(i)) == REFERENCE_ATTRIBUTES[kind] for i in items), kind
    shot = ShotAnswer(x=1.0, y=2.0, vx=3.0, vy=4.0)  # the world has no shots in flight
    assert list(vars(shot)) == REFERENCE_ATTRIBUTES["shots"]
    tank = bzrc.get_mytanks()[0]
    tank.goal = (10.0, 20.0)  # type: ignore[attr-defined]
    assert vars(tank)["goal"] == (10.0, 20.0)
    assert repr(tank).startswith(f"MyTankAnswer(index={tank.index!r}, callsign=")
    bzrc.close()
