"""Everything a BZRC peer can make this side hold has a documented cap."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from gamecodec import bzrc
from gamecodec.bzrc import DEFAULT_MAX_PENDING, DEFAULT_MAX_RESPONSE, Error, Listing
from gamecodec.bzrc.aio import MAX_ERRORS, Bot
from gamecodec.bzrc.session import Unsolicited
from gamecodec.errors import DecodeError, RemoteProtocolError

TEAM = b"team red 1\n"
HEAD = b"ack 1 teams\nbegin\n"


def feed_bytewise(decoder: Any, data: bytes) -> list[Any]:
    out: list[Any] = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
    return out


def test_default_caps(codec: ModuleType) -> None:
    decoder = codec.Decoder()
    assert decoder.max_response == DEFAULT_MAX_RESPONSE == 1 << 22
    assert DEFAULT_MAX_PENDING == 1024
    with pytest.raises(ValueError):
        codec.Decoder(max_response=0)


def test_list_without_end_stops_at_max_response(codec: ModuleType) -> None:
    cap = len(b"begin\n") + 10 * len(TEAM)  # begin line and ten items fit
    fits = HEAD + TEAM * 10 + b"end\n"
    assert len(codec.Decoder(max_response=cap + 4).feed(fits)) == 1
    decoder = codec.Decoder(max_response=cap)
    with pytest.raises(DecodeError, match="list longer than max_response") as info:
        decoder.feed(HEAD + TEAM * 1000)
    eleventh = len(HEAD) + 10 * len(TEAM)
    assert info.value.offset == eleventh
    with pytest.raises(DecodeError, match="list longer") as again:
        feed_bytewise(codec.Decoder(max_response=cap), HEAD + TEAM * 12)
    assert again.value.offset == eleventh
    with pytest.raises(DecodeError):  # the decoder stays failed
        decoder.feed(b"end\n")


def test_help_output_stops_at_max_response(codec: ModuleType) -> None:
    line = b":help line\n"
    lines = [b":help line %d\n" % i for i in range(6)]  # a listing names each command once
    decoder = codec.Decoder(max_response=5 * len(lines[0]))
    assert decoder.feed(b"".join(lines[:5])) == []
    with pytest.raises(DecodeError, match="help output longer than max_response") as info:
        decoder.feed(lines[5])
    assert info.value.offset == 5 * len(lines[0])
    with pytest.raises(DecodeError, match="help output longer"):
        codec.Decoder(max_response=4).feed(line)


def test_cap_is_the_same_on_both_twins(py_codec: ModuleType, c_codec: ModuleType) -> None:
    data = HEAD + TEAM * 50 + b"end\n" + b":a\n" * 40 + b"ok\n"
    for cap in (1, 6, 50, 200, 500, 600):
        found = []
        for codec in (py_codec, c_codec):
            try:
                found.append(codec.Decoder(max_response=cap).feed(data))
            except DecodeError as exc:
                found.append((str(exc), exc.offset))
        assert found[0] == found[1], cap


def test_client_session_passes_max_response() -> None:
    client = bzrc.ClientSession(max_response=64)
    client.send("teams")
    client.receive_data(b"bzrobots 1\n", 0.0)
    with pytest.raises(RemoteProtocolError, match="max_response"):
        client.receive_data(HEAD + TEAM * 10, 0.0)
    assert client.closed


def test_decode_passes_max_response() -> None:
    data = HEAD + TEAM * 10 + b"end\n"
    assert isinstance(bzrc.decode(data)[0], Listing)
    with pytest.raises(DecodeError, match="max_response"):
        bzrc.decode(data, max_response=50)


def _server() -> bzrc.ServerSession:
    server = bzrc.ServerSession(0.0, max_pending=3)
    server.data_to_send()
    server.receive_data(b"agent 1\n", 0.0)
    return server


def test_server_unanswered_commands_stop_at_max_pending() -> None:
    server = _server()
    requests = server.receive_data(b"shoot 0\n" * 3, 0.0)
    assert len(requests) == 3
    with pytest.raises(RemoteProtocolError, match="max_pending"):
        server.receive_data(b"shoot 0\n", 0.0)
    assert server.closing
    assert bzrc.ServerSession(0.0).max_pending == DEFAULT_MAX_PENDING


def test_server_automatic_answers_behind_an_unanswered_one_count() -> None:
    server = _server()
    (request,) = server.receive_data(b"shoot 0\n", 0.0)
    server.receive_data(b"help\nbogus\n", 0.0)  # answered, but queued behind the shot
    with pytest.raises(RemoteProtocolError, match="max_pending"):
        server.receive_data(b"help\n", 0.0)
    answered = _server()
    (request,) = answered.receive_data(b"shoot 0\n", 0.0)
    answered.ok(request, 0.0)
    for _ in range(10):  # nothing waits: automatic answers leave at once
        answered.receive_data(b"help\nbogus\n", 0.0)


class _Writer:
    def get_extra_info(self, name: str) -> None:
        return None


def test_bot_keeps_the_latest_errors() -> None:
    async def run() -> list[Error]:
        session = bzrc.ClientSession()
        bot = Bot(session, asyncio.StreamReader(), _Writer())  # type: ignore[arg-type]
        bot._dispatch([Unsolicited(Error(f"e{i}")) for i in range(MAX_ERRORS + 50)])
        return bot.errors

    errors = asyncio.run(run())
    assert len(errors) == MAX_ERRORS
    assert errors[0] == Error("e50") and errors[-1] == Error(f"e{MAX_ERRORS + 49}")


MYTANK = b"mytank 0 red0 alive 10 0 -                            -375 -10 0.7 0.0 0.0 0\n"
SHOT = b"shot 1.5 2.5 3.5 4.5\n"


def test_default_max_items(codec: ModuleType) -> None:
    assert codec.Decoder().max_items == bzrc.DEFAULT_MAX_ITEMS == 16_384
    with pytest.raises(ValueError):
        codec.Decoder(max_items=-1)


@pytest.mark.parametrize("line", [TEAM, SHOT, MYTANK])
def test_list_without_end_stops_at_max_items(codec: ModuleType, line: bytes) -> None:
    """A server that never sends ``end`` makes the decoder hold at most
    ``max_items`` items, however short the lines (``max_response`` alone let
    4 MiB of ``shot`` lines become ~37 MB of tuples)."""
    fits = HEAD + line * 10 + b"end\n"
    assert len(codec.Decoder(max_items=10).feed(fits)[0].items) == 10
    for size in (1, 7, len(line) * 20):
        decoder = codec.Decoder(max_items=10)
        data = HEAD + line * 20
        with pytest.raises(DecodeError, match="list longer than max_items") as info:
            for i in range(0, len(data), size):
                decoder.feed(data[i : i + size])
        assert info.value.offset == len(HEAD) + 10 * len(line)


def test_corners_count_against_max_items(codec: ModuleType) -> None:
    obstacle = b"obstacle " + b"0 0 " * 4 + b"\n"  # one item and four corners: 5
    base = b"base red 1 1 2 2\n"  # 3
    assert len(codec.Decoder(max_items=13).feed(HEAD + obstacle * 2 + base + b"end\n")) == 1
    with pytest.raises(DecodeError, match="max_items") as info:
        codec.Decoder(max_items=12).feed(HEAD + obstacle * 2 + base + b"end\n")
    assert info.value.offset == len(HEAD) + 2 * len(obstacle)


def test_a_failed_decoder_holds_nothing(codec: ModuleType) -> None:
    """After a cap or a bad line, the list being read is dropped."""
    import tracemalloc

    data = HEAD + SHOT * (bzrc.DEFAULT_MAX_ITEMS + 1)  # the input is not counted
    tracemalloc.start()
    try:
        decoder = codec.Decoder()
        before = tracemalloc.get_traced_memory()[0]
        with pytest.raises(DecodeError, match="max_items"):
            decoder.feed(data)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 200_000
