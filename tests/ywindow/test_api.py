"""The one API on ywindow: verbs, old names, the peer's shape, events, errors, stubs."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from gamecodec import ywindow
from gamecodec.errors import (
    DecodeError,
    EncodeError,
    LocalProtocolError,
    RemoteProtocolError,
    TruncatedError,
)
from gamecodec.sessions import Event, StreamSession, Traffic
from gamecodec.ywindow import (
    Authenticated,
    AuthenticationFailed,
    Call,
    ConnectionClosed,
    Greeting,
    Keyword,
    Message,
    Notification,
    Peer,
    Reply,
    Role,
    _impl,
    aio,
)
from tests.conftest import PACKAGE_ROOT

ROOT = Path(__file__).resolve().parents[2]
AUTH = bytes(range(256))


@pytest.fixture
def verbs(codec: ModuleType, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``gamecodec.ywindow._impl`` running on the twin under test."""
    monkeypatch.setattr(_impl, "Decoder", codec.Decoder)
    monkeypatch.setattr(_impl, "decode", codec.decode)
    return _impl


def opened() -> tuple[Peer, Peer]:
    client = Peer.client(AUTH, cookie=b"\xcc" * 256)
    server = Peer.server(AUTH, cookie=b"\x55" * 256)
    for _ in range(3):
        for src, dst in ((server, client), (client, server)):
            data = src.data_to_send()
            if data:  # b"" would mean end of stream
                dst.receive_data(data, 0.0)
    assert client.state is ywindow.State.OPEN and server.state is ywindow.State.OPEN
    return client, server


# -- old names -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        (ywindow, "encode_message", "encode"),
        (ywindow, "Event", "PeerEvent"),
        (aio, "Connection", "Client"),
    ],
)
def test_old_names_warn_and_are_the_new_objects(module: ModuleType, old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"use {new}"):
        value = getattr(module, old)
    assert value is getattr(module, new)
    with pytest.warns(DeprecationWarning):
        exec(f"from {module.__name__} import {old}", {})
    assert old not in module.__all__


def test_the_old_event_union_still_matches_every_event() -> None:
    with pytest.warns(DeprecationWarning):
        old = ywindow.Event
    assert isinstance(Reply(0, ()), old)
    assert isinstance(Greeting(Role.SERVER, 0, 0, "x"), old)


# -- verbs ---------------------------------------------------------------------------


def test_encode_and_decode_round_trip(verbs: ModuleType) -> None:
    wire = ywindow.encode("c", [Keyword("goto"), 10, "é", b"\0"])
    assert wire == ywindow.call("goto", 10, "é", b"\0")
    assert verbs.decode(wire + ywindow.reply()) == [
        Message("c", (Keyword("goto"), 10, "é", b"\0")),
        Message("r", ()),
    ]


def test_decode_many_gives_one_entry_per_item(verbs: ModuleType) -> None:
    good = ywindow.notify("tick", 1)
    out = verbs.decode_many([good, bytearray(ywindow.reply()), b"?", memoryview(good)])
    assert out[0] == Message("v", (Keyword("tick"), 1))
    assert out[1] == Message("r", ())
    assert isinstance(out[2], DecodeError) and out[2].offset == 0
    assert out[3] == out[0]


def test_decode_many_refuses_empty_partial_and_double_items(verbs: ModuleType) -> None:
    one = ywindow.call("a", "long" * 100)  # a wide string word
    empty, partial, double = verbs.decode_many([b"", one[:-1], one + ywindow.reply()])
    assert isinstance(empty, TruncatedError) and empty.offset == 0
    assert isinstance(partial, TruncatedError) and partial.offset == len(one) - 1
    assert isinstance(double, DecodeError) and not isinstance(double, TruncatedError)
    assert double.offset == len(one) and "more than one message" in str(double)
    assert {e.protocol for e in (empty, partial, double)} == {"ywindow"}


# -- the peer ------------------------------------------------------------------------


def test_peer_follows_the_stream_session_protocol() -> None:
    assert isinstance(Peer.client(AUTH), StreamSession)
    assert isinstance(Peer.server(AUTH), StreamSession)
    peer = Peer.server(AUTH)
    assert peer.next_deadline() is None
    assert peer.handle_timeout(1.0) == []


def test_receive_data_returns_its_events_and_events_keeps_none_of_them() -> None:
    client, server = opened()
    client.notify("tick", 1)
    handle = client.call("echo", "x")
    got = server.receive_data(client.data_to_send(), 1.0)
    assert got == [Notification("tick", (1,)), Call(0, "echo", ("x",))]
    assert server.events() == []
    server.reply(0, "x")
    assert client.receive_data(server.data_to_send(), 2.0) == [Reply(handle.id, ("x",))]
    assert client.events() == []


def test_receive_data_without_now_warns_and_keeps_the_old_queue() -> None:
    client, server = opened()
    client.notify("tick")
    with pytest.warns(DeprecationWarning, match="receive_data"):
        got = server.receive_data(client.data_to_send())
    assert got == [Notification("tick", ())]
    assert server.events() == got  # old callers read them here
    assert server.events() == []


def test_events_of_a_call_that_raised_wait_in_events() -> None:
    _, server = opened()
    with pytest.raises(RemoteProtocolError) as info:
        server.receive_data(ywindow.notify("tick") + b"?", 1.0)
    assert info.value.protocol == "ywindow"
    assert server.events() == [Notification("tick", ())]
    assert server.events() == []


def test_close_raises_connection_closed_once_through_events() -> None:
    client, server = opened()
    first = client.call("a")
    client.close()
    client.close()
    assert client.events() == [ConnectionClosed((first.id,), by_peer=False)]
    assert client.events() == []
    assert server.receive_data(b"", 1.0) == [ConnectionClosed(())]


def test_events_are_frozen_dataclasses() -> None:
    events: list[Event] = [
        Greeting(Role.CLIENT, 0, 0, "x"),
        Authenticated(b"c"),
        AuthenticationFailed("no"),
        Call(0, "m", ()),
        Notification("m", ()),
        Reply(0, ()),
        ConnectionClosed(()),
    ]
    for event in events:
        assert isinstance(event, Event) and dataclasses.is_dataclass(event)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, dataclasses.fields(event)[0].name, 1)
    assert events[3] == Call(0, "m", ()) and events[3].method == "m"


# -- errors ----------------------------------------------------------------------------


def test_every_error_carries_the_protocol(codec: ModuleType) -> None:
    errors: list[Exception] = []
    with pytest.raises(DecodeError) as decode:
        codec.Decoder().feed(b"?")
    errors.append(decode.value)
    with pytest.raises(EncodeError) as encode:
        ywindow.encode_word(2**40)
    errors.append(encode.value)
    with pytest.raises(RemoteProtocolError) as greeting:
        Peer.client(AUTH).receive_data(b"hello\n", 0.0)
    errors.append(greeting.value)
    with pytest.raises(LocalProtocolError) as local:
        Peer.client(AUTH).call("x")
    errors.append(local.value)
    with pytest.raises(RemoteProtocolError) as eos:
        client, _ = opened()
        client.receive_data(ywindow.call("x")[:-1], 0.0)
        client.receive_data(b"", 0.0)
    errors.append(eos.value)
    assert [getattr(e, "protocol", None) for e in errors] == ["ywindow"] * len(errors)


# -- stubs and import cost ------------------------------------------------------------


def test_the_compiled_twin_stub_names_what_the_module_has(c_codec: ModuleType) -> None:
    stub = ast.parse((ROOT / "src/gamecodec/ywindow/_codec_c.pyi").read_text())
    for node in stub.body:
        if isinstance(node, ast.FunctionDef):
            assert callable(getattr(c_codec, node.name))
        elif isinstance(node, ast.ClassDef):
            cls = getattr(c_codec, node.name)
            for member in node.body:
                if isinstance(member, ast.FunctionDef):
                    assert hasattr(cls, member.name), (node.name, member.name)


def test_importing_ywindow_does_not_import_numpy(impl: str) -> None:
    code = (
        "import sys\n"
        "import gamecodec.ywindow\n"
        "from gamecodec import _accel\n"
        "print(_accel.active()['ywindow'], 'numpy' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE_ROOT), str(ROOT)]))
    env.pop("GAMECODEC_NO_EXTENSIONS", None)
    if impl == "py":
        env["GAMECODEC_NO_EXTENSIONS"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [impl, "False"]


# -- asyncio: tap and connect_timeout ----------------------------------------------------


async def echo(method: str, args: tuple[ywindow.Value, ...]) -> tuple[ywindow.Value, ...]:
    return (method, *args)


async def tapped() -> None:
    server_seen: list[Traffic] = []
    client_seen: list[Traffic] = []
    server = await aio.serve(echo, "127.0.0.1", 0, authority=AUTH, tap=server_seen.append)
    port = server.sockets[0].getsockname()[1]
    async with server:
        client = await aio.connect(
            "127.0.0.1", port, authority=AUTH, tap=client_seen.append, connect_timeout=5
        )
        assert isinstance(client, aio.Client)
        assert await client.call("ping", 1) == ("ping", 1)
        await client.close()
        server.close()
    sent = b"".join(t.data for t in client_seen if t.direction == "out")
    received = b"".join(t.data for t in client_seen if t.direction == "in")
    assert sent.startswith(b"Yclient ") and sent.endswith(ywindow.call("ping", 1))
    assert received.startswith(b"Yserver ") and received.endswith(ywindow.reply(Keyword("ping"), 1))
    assert all(isinstance(t.time, float) and t.data for t in client_seen + server_seen)
    assert client_seen[0].peer == ("127.0.0.1", port)
    assert sent.startswith(b"".join(t.data for t in server_seen if t.direction == "in"))


def test_tap_sees_every_chunk_both_ways() -> None:
    asyncio.run(asyncio.wait_for(tapped(), 10))


async def silent_server() -> None:
    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(TimeoutError):
            await aio.connect("127.0.0.1", port, authority=AUTH, connect_timeout=0.1)
        server.close()


def test_connect_timeout_bounds_the_login() -> None:
    asyncio.run(asyncio.wait_for(silent_server(), 10))


async def silent_client() -> None:
    server = await aio.serve(echo, "127.0.0.1", 0, authority=AUTH, connect_timeout=0.1)
    port = server.sockets[0].getsockname()[1]
    async with server:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert (await reader.readline()).startswith(b"Yserver ")
        assert await asyncio.wait_for(reader.read(), 5) == b""  # no login: closed
        writer.close()
        server.close()


def test_serve_connect_timeout_closes_a_client_that_does_not_log_in() -> None:
    asyncio.run(asyncio.wait_for(silent_client(), 10))
