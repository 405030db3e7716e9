"""The recorded bzrflag transcripts: typed values, byte-exact re-encoding,
and the server-side session reproducing the recorded replies."""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from gamecodec import bzrc
from gamecodec.bzrc import (
    Ack,
    Base,
    Constant,
    Fail,
    Flag,
    Greeting,
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
)
from tests.bzrc.conftest import TRANSCRIPTS, load_transcript

ITEM_TYPES = {
    "teams": Team,
    "obstacles": Obstacle,
    "bases": Base,
    "flags": Flag,
    "shots": Shot,
    "mytanks": MyTank,
    "othertanks": OtherTank,
    "constants": Constant,
    "scores": Score,
}


def _recv(exchange: dict[str, Any]) -> bytes:
    return str(exchange["recv"]).encode("latin-1")


def _stream(name: str) -> bytes:
    return b"".join(_recv(e) for e in load_transcript(name)["exchanges"])


def _ack_tokens(recv: bytes) -> list[list[bytes]]:
    return [line.split() for line in recv.split(b"\n") if line.startswith(b"ack ")]


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_every_reply_parses_to_typed_values(codec: ModuleType, name: str) -> None:
    parser = codec.Decoder()
    for exchange in load_transcript(name)["exchanges"]:
        recv = _recv(exchange)
        responses = parser.feed(recv)
        acks = _ack_tokens(recv)
        with_ack = [r for r in responses if getattr(r, "ack", None) is not None]
        assert len(with_ack) == len(acks)
        for response, tokens in zip(with_ack, acks, strict=True):
            ack = response.ack
            assert isinstance(ack, Ack)
            assert repr(ack.time) == repr(float(tokens[1]))
            assert ack.command == tokens[2].decode("latin-1")
            assert ack.args == tuple(t.decode("latin-1") for t in tokens[3:])
            if isinstance(response, Listing):
                expected = ITEM_TYPES[ack.command]
                assert all(type(item) is expected for item in response.items)
                body = recv.split(b"\n")
                words = {expected.__name__.lower()}
                assert len(response.items) == sum(
                    1 for line in body if line.split()[:1] == [w.encode() for w in words]
                ) or ack.command in ("teams", "scores")
        if not recv:
            assert responses == []
        elif recv.startswith(b"bzrobots"):
            assert responses == [Greeting("bzrobots", 1)]
        else:
            assert len(responses) == max(1, len(acks))
    assert parser.close() == []


def test_basic_values(codec: ModuleType) -> None:
    by_send: dict[str, list[Any]] = {}
    parser = codec.Decoder()
    for exchange in load_transcript("basic_four_ls.json")["exchanges"]:
        by_send.setdefault(exchange["send"], []).append(parser.feed(_recv(exchange)))
    teams = by_send["teams\n"][0][0]
    assert teams.items == [Team(c, 10) for c in ("blue", "purple", "green", "red")]
    assert by_send["shots\n"][0] == [
        Listing(teams.ack._replace(time=0.706573009491, command="shots"), [])
    ]
    tanks = by_send["mytanks\n"][0][0].items
    assert len(tanks) == 10
    assert tanks[0] == MyTank(
        0, "red0", "alive", 10, 0, "-", -390, 5, -1.81213393195, -0.0, -0.0, 0
    )
    assert type(tanks[0].reload) is int and type(tanks[0].x) is int
    assert str(tanks[0].vx) == "-0.0"
    later = by_send["mytanks\n"][1][0].items
    assert later[0].reload == 1.694417 and later[0].angvel == 0.25
    assert later[2].status == "dead" and later[2].x == -999999
    consts = {c.name: c.value for c in by_send["constants\n"][0][0].items}
    assert consts["team"] == "red" and consts["tankangvel"] == "0.785398163397"
    assert len(consts) == 18
    timer = by_send["timer\n"][0][0]
    assert timer == Timer(Ack(1.1092338562, "timer", ()), 1.580439, 300000)
    grid = by_send["occgrid 0\n"][0][0]
    assert isinstance(grid, OccGrid)
    assert (grid.x, grid.y, grid.width, grid.height) == (-400, -19, 35, 50)
    assert grid.grid.dtype == np.uint8 and grid.grid.shape == (35, 50)
    assert not grid.grid.any()
    shoot = by_send["shoot 0\n"]
    assert isinstance(shoot[0][0], Ok) and shoot[1][0] == Fail(shoot[1][0].ack, "", False)
    obstacle = by_send["obstacles\n"][0][0].items[-1]
    assert obstacle.corners == ((10.0, 60.0), (10.0, -60.0), (-10.0, -60.0), (-10.0, 60.0))
    score = by_send["scores\n"][1][0].items
    assert score[0] == Score("blue", "purple", 0.8) and score[-1].value == -1.79
    pipelined = by_send["mytanks\nothertanks\nflags\nshots\n"][0]
    assert [r.ack.command for r in pipelined] == ["mytanks", "othertanks", "flags", "shots"]
    assert len(pipelined[1].items) == 30


def test_errors_values(codec: ModuleType) -> None:
    parser = codec.Decoder()
    got = {}
    for exchange in load_transcript("errors_four_ls.json")["exchanges"]:
        got.setdefault(exchange["send"], parser.feed(_recv(exchange)))
    assert got["foo\n"] == [Fail(None, "invalid command", False)]
    assert got["speed 0\n"][0].extra is True and got["speed 0\n"][0].comment == (
        "Invalid parameter(s)"
    )
    assert got["shoot 0 1\n"][0].extra is False
    assert got["speed 0 nan\n"][0].comment == "not a number"
    assert got["speed 0 1\x85\n"][0].ack.args == ("0", "1\x85")
    assert got["taunt café ÿ\n"][0].ack.args == ("café", "ÿ")
    assert got["eed 0 0\n"][0].ack.args == ("0", "0.0")
    assert got["shoot 99\n"][0].comment == "Invalid tank ID: 99"
    assert got["\n"] == [] and got["sp"] == []


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_any_chunking(codec: ModuleType, name: str) -> None:
    stream = _stream(name)
    whole = codec.Decoder().feed(stream)
    rnd = random.Random(name)
    for _ in range(5):
        parser = codec.Decoder()
        out: list[Any] = []
        pos = 0
        while pos < len(stream):
            step = rnd.choice((1, 2, 3, 7, 50, 400, 5000))
            out += parser.feed(stream[pos : pos + step])
            pos += step
        assert out == whole
        assert [repr(r) for r in out] == [repr(r) for r in whole]


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_reencode_byte_exact(codec: ModuleType, name: str) -> None:
    for exchange in load_transcript(name)["exchanges"]:
        recv = _recv(exchange)
        responses = codec.Decoder().feed(recv)
        assert b"".join(bzrc.encode_response(r) for r in responses) == recv


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_server_session_reproduces_transcript(codec: ModuleType, name: str) -> None:
    session = bzrc.ServerSession(0.0)
    out = bytearray(session.data_to_send())
    expected = bytearray()
    for exchange in load_transcript(name)["exchanges"]:
        recv = _recv(exchange)
        expected += recv
        responses = codec.Decoder().feed(recv)
        times = [r.ack.time for r in responses if getattr(r, "ack", None) is not None]
        sent = str(exchange["send"]).encode("latin-1")
        # b"" would be the client closing its end
        requests = session.receive_data(sent, times[0] if times else 0.0) if sent else []
        if requests:
            assert len(requests) == len(responses)
            for request, response in zip(requests, responses, strict=True):
                assert request.command == (response.ack.command if response.ack else "occgrid")
                now = response.ack.time if response.ack else 0.0
                session.respond(request, response, now, ack=response.ack is not None)
        out += session.data_to_send()
    assert bytes(out) == bytes(expected)
    assert session.closed
