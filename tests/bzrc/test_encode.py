"""Command encoders (client side), response encoders (server side), number formats."""

from __future__ import annotations

import numpy as np
import pytest

from gamecodec import bzrc
from gamecodec.bzrc import Ack, Fail, Listing, MyTank, OccGrid, Ok, Team, Timer
from gamecodec.errors import EncodeError


@pytest.mark.parametrize(
    ("args", "wire"),
    [
        (("shoot", 0), b"shoot 0\n"),
        (("speed", 1, -1.0), b"speed 1 -1.0\n"),
        (("speed", 0, 0.5), b"speed 0 0.5\n"),
        (("angvel", 0, 1), b"angvel 0 1\n"),
        (("accelx", 2, 0.25), b"accelx 2 0.25\n"),
        (("accely", 2, -0.1), b"accely 2 -0.1\n"),
        (("occgrid", 3), b"occgrid 3\n"),
        (("teams",), b"teams\n"),
        (("obstacles",), b"obstacles\n"),
        (("bases",), b"bases\n"),
        (("flags",), b"flags\n"),
        (("shots",), b"shots\n"),
        (("mytanks",), b"mytanks\n"),
        (("othertanks",), b"othertanks\n"),
        (("constants",), b"constants\n"),
        (("scores",), b"scores\n"),
        (("timer",), b"timer\n"),
        (("quit",), b"quit\n"),
        (("endgame",), b"endgame\n"),
        (("help",), b"help\n"),
        (("help", "speed"), b"help speed\n"),
        (("taunt", "hello  world"), b"taunt hello world\n"),
        (("taunt", "café", "ÿ"), b"taunt caf\xe9 \xff\n"),
        (("taunt",), b"taunt\n"),
        (("agent", 1), b"agent 1\n"),
    ],
)
def test_encode(args: tuple[object, ...], wire: bytes) -> None:
    assert bzrc.encode(*args) == wire  # type: ignore[arg-type]


def test_every_command_is_encodable() -> None:
    assert set(bzrc.COMMANDS) >= {
        "shoot",
        "speed",
        "angvel",
        "accelx",
        "accely",
        "teams",
        "obstacles",
        "occgrid",
        "bases",
        "flags",
        "shots",
        "mytanks",
        "othertanks",
        "constants",
        "scores",
        "timer",
        "quit",
        "endgame",
        "taunt",
        "help",
    }


@pytest.mark.parametrize(
    "args",
    [
        ("tanks",),
        ("shoot",),
        ("shoot", "0"),
        ("shoot", True),
        ("shoot", 0.5),
        ("speed", 0),
        ("speed", 0, "1"),
        ("teams", 1),
        ("taunt", "two\nlines"),
        ("taunt", "snow ☃"),
        ("help", "a b"),
        ("help", "a", "b"),
    ],
)
def test_encode_command_rejects(args: tuple[object, ...]) -> None:
    with pytest.raises(EncodeError):
        bzrc.encode(*args)  # type: ignore[arg-type]


def test_encode_commands_pipelined() -> None:
    assert bzrc.encode_commands([("mytanks",), ("speed", 0, 1.0)]) == b"mytanks\nspeed 0 1.0\n"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.609892845154, "0.609892845154"),
        (5.19573633741e-15, "5.19573633741e-15"),
        (1e16, "1e+16"),
        (1.23456789012e14, "1.23456789012e+14"),
        (12345678901.0, "12345678901.0"),
        (1e11, "1e+11"),
        (10.0, "10.0"),
        (-0.0, "-0.0"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (0.1 + 0.2, "0.3"),
        (-1.81213393195, "-1.81213393195"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (2.0, "2.0"),
    ],
)
def test_py2_str(value: float, text: str) -> None:
    assert bzrc.py2_str(value) == text


def test_format_number() -> None:
    assert bzrc.format_number(3) == "3"
    assert bzrc.format_number(3, "cpp") == "3"
    assert bzrc.format_number(0.5, "cpp") == "0.500000"
    assert bzrc.c_f(float("nan")) == "nan"
    with pytest.raises(TypeError):
        bzrc.format_number(True)


TANK = MyTank(0, "red0", "alive", 10, 0, "-", -390, 5, -1.81213393195, -0.0, -0.0, 0)


def test_mytank_gap_and_dialects() -> None:
    resp = Listing(Ack(0.786990880966, "mytanks", ()), [TANK])
    gap = b"-" + b" " * 28 + b"-390"
    assert gap in bzrc.encode_response(resp)
    assert b"- -390 5" in bzrc.encode_response(resp, mytank_gap=False)
    cpp = bzrc.encode_response(resp, dialect="cpp")
    assert cpp == (
        b"ack 0.786991 mytanks\nbegin\nmytank 0 red0 alive 10 0.000000 - -390.000000 5.000000"
        b" -1.812134 -0.000000 -0.000000 0.000000\nend\n"
    )
    floaty = TANK._replace(x=-390.7, y=5.2)
    assert b"-390 5 " in bzrc.encode_response(Listing(Ack(1.0, "mytanks", ()), [floaty]))


def test_other_responses() -> None:
    assert bzrc.encode_response(Ok(None)) == b"ok\n"
    assert bzrc.encode_response(Fail(None, "", False)) == b"fail\n"
    assert bzrc.encode_response(Fail(Ack(1, "speed", ()), "Invalid parameter(s)", True)) == (
        b"ack 1 speed\nfail Invalid parameter(s)\nfail\n"
    )
    assert bzrc.encode_response(Timer(Ack(2.5, "timer", ()), 5.264403, 300000)) == (
        b"ack 2.5 timer\ntimer 5.264403 300000\n"
    )
    assert bzrc.encode_response(bzrc.Error("x  y")) == b"error x  y\n"
    assert bzrc.encode_response(bzrc.Help((":a", ":b"))) == b":a\n:b\n"
    assert bzrc.encode_response(bzrc.Greeting("bzrobots", 1)) == b"bzrobots 1\n"
    grid = OccGrid(Ack(1, "occgrid", ()), -400, -19, np.array([[0, 1, 1], [1, 0, 0]], np.uint8))
    assert bzrc.encode_response(grid) == (
        b"ack 1 occgrid\nbegin\nat -400,-19\nsize 2x3\n011\n100\nend\n"
    )


@pytest.mark.parametrize(
    "response",
    [
        Listing(None, [Team("two words", 1)]),
        Listing(None, [Team("red", 1.5)]),  # type: ignore[arg-type]
        Listing(None, [("not", "an item")]),  # type: ignore[list-item]
        Listing(None, [bzrc.Obstacle(())]),
        Fail(None, "two\nlines", False),
        Ok(Ack(1, "", ("x",))),
        OccGrid(None, 0, 0, np.array([[2]], np.uint8)),
        OccGrid(None, 0, 0, np.zeros(3, np.uint8)),
        Timer(None, "1", 2),  # type: ignore[arg-type]
        "ok",
        # these follow their ack line: without one the reader would refuse the bytes
        Listing(None, [Team("red", 2)]),
        Timer(None, 1.0, 2.0),
        OccGrid(None, 0, 0, np.zeros((1, 1), np.uint8)),
    ],
)
def test_encode_response_rejects(response: object) -> None:
    with pytest.raises(EncodeError):
        bzrc.encode_response(response)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "wire"),
    [
        (("shoot", np.int64(3)), b"shoot 3\n"),
        (("occgrid", np.uint8(2)), b"occgrid 2\n"),
        (("speed", np.int64(1), np.float32(0.5)), b"speed 1 0.5\n"),
        (("speed", np.int32(1), np.float32(0.1)), b"speed 1 0.10000000149011612\n"),
        (("angvel", np.int16(0), np.float64(-0.25)), b"angvel 0 -0.25\n"),
        (("angvel", 0, np.int64(-1)), b"angvel 0 -1\n"),
    ],
)
def test_encode_numpy_scalars(args: tuple[object, ...], wire: bytes) -> None:
    """numpy scalars are numbers like any other; the float is written exactly."""
    assert bzrc.encode(*args) == wire  # type: ignore[arg-type]
    session = bzrc.ClientSession()
    session.receive_data(b"bzrobots 1\n", 0.0)
    session.send(*args)  # type: ignore[arg-type]
    assert session.data_to_send() == b"agent 1\n" + wire


@pytest.mark.parametrize(
    "args",
    [("shoot", np.True_), ("shoot", np.float64(1.0)), ("speed", 0, np.bool_(False))],
)
def test_encode_refuses_numpy_bools_and_float_ids(args: tuple[object, ...]) -> None:
    with pytest.raises(EncodeError):
        bzrc.encode(*args)  # type: ignore[arg-type]


def test_encode_response_numpy_scalars() -> None:
    tank = MyTank(
        np.int64(0), "red0", "alive", np.int64(10), np.float32(0.5), "-",
        np.float64(-375.7), np.int32(-10), np.float32(0.25), 0.0, -0.0, np.int64(0),
    )  # fmt: skip
    expected = b"mytank 0 red0 alive 10 0.5 -" + b" " * 28 + b"-375 -10 0.25 0.0 -0.0 0"
    assert bzrc.encode_item(tank).encode() == expected  # type: ignore[arg-type]
    timer = Timer(Ack(np.float32(1.5), "timer", ()), np.float64(2.5), np.int64(300000))
    assert bzrc.encode_response(timer) == b"ack 1.5 timer\ntimer 2.5 300000\n"
    assert bzrc.format_number(np.float32(0.5), "cpp") == "0.500000"
    assert bzrc.format_number(np.int64(7)) == "7"
    with pytest.raises(TypeError):
        bzrc.format_number(np.True_)
