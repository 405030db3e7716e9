"""Our asyncio client against testing.Room over real loopback websockets."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect

from gamecodec.archipelago import aio
from gamecodec.archipelago import session as S
from gamecodec.archipelago.testing import OPERATIONS, Room
from gamecodec.sessions import Traffic
from tests.archipelago.rooms import make_room


def run(test: Callable[[Room], Awaitable[None]], **options: Any) -> None:
    async def main() -> None:
        async with asyncio.timeout(20), make_room(**options) as room:
            await test(room)

    asyncio.run(main())


def test_login_items_chat_storage_and_death_link() -> None:
    async def play(room: Room) -> None:
        js = await aio.connect(room.url, name="JSPlayer", game="Clique", death_link=True)
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest", death_link=True)
        assert (
            js.compression
            == "permessage-deflate; server_max_window_bits=11; client_max_window_bits=11"
        )
        assert js.connected is not None and js.connected.slot_data == {
            "color": "red",
            "hard_mode": False,
        }
        assert js.connected.missing_locations == [1001, 1002, 1003]
        await js.check_locations([1001, 1002])
        got = await buddy.wait_for(S.ItemsReceived)
        assert [(i.item, i.location, i.player) for i in got.items] == [(501, 1002, 1)]
        await js.wait_for(S.ItemsReceived)
        assert [(i.item, i.location) for i in js.items] == [(3, 1001)]
        assert [(i.item, i.player) for i in await js.scout([1003])] == [(502, 2)]
        changed = await js.set("counter", [("add", 7), ("mul", 6)], default=0)
        assert (changed.original_value, changed.value) == (0, 42)
        assert await buddy.get(["counter", "_read_slot_data_1", "_read_race_mode"]) == {
            "counter": 42,
            "_read_slot_data_1": {"color": "red", "hard_mode": False},
            "_read_race_mode": 0,
        }
        await buddy.set_notify(["counter"])
        await js.set("counter", [("replace", 1)])
        notice = await buddy.wait_for(S.StorageChanged)
        assert (notice.request_id, notice.value, notice.original_value) == (None, 1, 42)
        await js.say("hello")
        message = await buddy.wait_for(S.MessageReceived)
        assert message.text == "JSPlayer: hello" and message.message.type == "Chat"
        await js.death_link("JSPlayer tripped.")
        death = await buddy.wait_for(S.DeathLinkReceived)
        assert (death.source, death.cause) == ("JSPlayer", "JSPlayer tripped.")
        await js.status_update(30)
        goal = await buddy.wait_for(S.MessageReceived)
        assert goal.message.type == "Goal"
        await js.close()
        await buddy.close()

    run(play)


@pytest.mark.parametrize(
    ("options", "kwargs", "errors"),
    [
        ({}, {"name": "Nobody", "game": "Clique"}, ["InvalidSlot"]),
        ({}, {"name": "JSPlayer", "game": "Quest"}, ["InvalidGame"]),
        ({"password": "pw"}, {"name": "JSPlayer", "game": "Clique"}, ["InvalidPassword"]),
        ({}, {"name": "JSPlayer", "game": "Clique", "version": (0, 4, 0)}, ["IncompatibleVersion"]),
        (
            {},
            {"name": "JSPlayer", "game": "Clique", "items_handling": 0b110},
            ["InvalidItemsHandling"],
        ),
    ],
)
def test_login_refused(options: dict[str, Any], kwargs: dict[str, Any], errors: list[str]) -> None:
    async def play(room: Room) -> None:
        with pytest.raises(aio.LoginRefusedError) as info:
            await aio.connect(room.url, **kwargs)
        assert info.value.errors == errors

    run(play, **options)


def test_tracker_tag_skips_the_game_check_and_password_works() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(
            room.url, name="JSPlayer", game="", tags=["AP", "Tracker"], password="pw"
        )
        assert client.connected is not None and client.connected.slot == 1
        await client.close()

    run(play, password="pw")


def test_reconnects_with_backoff_and_resends_checks() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", initial_backoff=0.05)
        await client.check_locations([1001])
        await client.wait_for(S.ItemsReceived)
        checks = len([f for d, f in room.frames if d == "c2s" and "GetDataPackage" in f])
        # the server side drops every connection
        for other in list(room.clients):
            await other.socket.close()
        login = await client.wait_for(S.LoggedIn)
        assert client.reconnects == 1
        assert login.connected.checked_locations == [1001]
        # the data package cache made a second download unnecessary
        assert len([f for d, f in room.frames if d == "c2s" and "GetDataPackage" in f]) == checks
        items = await client.wait_for(S.ItemsReceived)
        assert items.index == 0 and [i.item for i in client.items] == [3]
        await client.close()

    run(play)


def test_a_refused_relogin_ends_the_event_stream() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", initial_backoff=0.05)
        room.password = "changed"
        for other in list(room.clients):
            await other.socket.close()
        events = [e async for e in client]  # ends instead of waiting for ever
        assert isinstance(events[-1], S.LoginRefused)
        assert client.state is aio.ClientState.CLOSED
        with pytest.raises(aio.NotConnectedError):  # one error for every call made now
            await client.get(["x"])
        await client.close()

    run(play)


def test_set_on_a_new_key_without_default_starts_from_zero() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", reconnect=False)
        changed = await client.set("counter", [("add", 2)])
        assert (changed.original_value, changed.value) == (0, 2)
        await client.close()

    run(play)


def test_close_fails_pending_requests_and_ends_events() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", reconnect=False)
        await client.close()
        # events that arrived before the close are still delivered, then the stream ends
        assert all(isinstance(e, S.Event) for e in [e async for e in client])
        with pytest.raises(ConnectionError):
            await client.next_event()
        with pytest.raises(ConnectionError):
            await client.get(["x"])

    run(play)


async def _raw(room: Room, frames: list[str]) -> list[Any]:
    """Send raw frames as a bare websocket client; collect replies until the server closes."""
    replies: list[Any] = []
    async with ws_connect(room.url, proxy=None) as socket:
        replies.append(json.loads(await socket.recv()))
        for frame in frames:
            await socket.send(frame)
        try:
            async with asyncio.timeout(2):
                async for message in socket:
                    replies.append(json.loads(message))
        except TimeoutError:
            replies.append("open")
    return replies


@pytest.mark.parametrize(
    "frame",
    [
        "[{",
        '[{"cmd":"Connect","password":null,"name":"JSPlayer","game":"Clique","uuid":"",'
        '"tags":[],"items_handling":7,"version":{"major":0,"minor":6,"build":8}}]',
    ],
)
def test_room_drops_clients_sending_bad_frames(frame: str) -> None:
    async def play(room: Room) -> None:
        replies = await _raw(room, [frame])
        assert replies[0][0]["cmd"] == "RoomInfo"
        assert replies[1:] == []  # closed, no answer

    run(play)


def test_room_data_storage_operations_and_read_keys() -> None:
    assert len(OPERATIONS) == 18
    login = (
        '[{"cmd":"Connect","password":null,"name":"PyBuddy","game":"Quest","uuid":"",'
        '"tags":[],"items_handling":7,"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]'
    )
    ops = [
        ["add", 5],
        ["mul", 3],
        ["pow", 2],
        ["mod", 100],
        ["max", 30],
        ["min", 40],
        ["xor", 1],
        ["or", 4],
        ["and", 61],
        ["left_shift", 2],
        ["right_shift", 1],
    ]
    set_frame = json.dumps(
        [
            {
                "cmd": "Set",
                "key": "n",
                "default": 1,
                "want_reply": True,
                "tag": "x",
                "operations": [{"operation": o, "value": v} for o, v in ops],
            }
        ],
        separators=(",", ":"),
    )
    lists = (
        '[{"cmd":"Set","key":"l","default":[1,2],"want_reply":true,"operations":['
        '{"operation":"add","value":[3]},{"operation":"remove","value":1},'
        '{"operation":"update","value":[2,9]},{"operation":"pop","value":0}]}]'
    )

    async def play(room: Room) -> None:
        replies = await _raw(
            room,
            [
                login,
                set_frame,
                lists,
                '[{"cmd":"Get","keys":["n","l","_read_client_status_0_2"],"id":7}]',
            ],
        )
        by_cmd = {r[0]["cmd"]: r[0] for r in replies[1:-1] if r[0]["cmd"] in ("Retrieved",)}
        replies_set = [r[0] for r in replies[1:-1] if r[0]["cmd"] == "SetReply"]
        value = 1
        for o, v in ops:
            value = OPERATIONS[o](value, v)
        assert replies_set[0]["value"] == value and replies_set[0]["tag"] == "x"
        assert list(replies_set[0])[:5] == ["cmd", "key", "default", "want_reply", "operations"]
        assert replies_set[1]["value"] == [3, 9]
        assert by_cmd["Retrieved"] == {
            "cmd": "Retrieved",
            "keys": {"n": value, "l": [3, 9], "_read_client_status_0_2": 5},
            "id": 7,
        }
        assert replies[-1] == "open"

    run(play)


def test_room_refuses_a_set_on_a_read_key() -> None:
    """The reference answers InvalidPacket (arguments) and keeps the client."""
    login = (
        '[{"cmd":"Connect","password":null,"name":"PyBuddy","game":"Quest","uuid":"",'
        '"tags":[],"items_handling":7,"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]'
    )
    set_read = (
        '[{"cmd":"Set","key":"_read_race_mode","want_reply":true,'
        '"operations":[{"operation":"replace","value":1}]}]'
    )

    async def play(room: Room) -> None:
        replies = await _raw(room, [login, set_read, '[{"cmd":"Get","keys":["_read_race_mode"]}]'])
        cmds = [r[0]["cmd"] if isinstance(r, list) else r for r in replies]
        assert cmds[-3:] == ["InvalidPacket", "Retrieved", "open"]
        assert replies[-3][0] == {
            "cmd": "InvalidPacket",
            "type": "arguments",
            "text": "Set",
            "original_cmd": "Set",
        }
        assert replies[-2][0]["keys"] == {"_read_race_mode": 0}

    run(play)


def test_room_list_operations_follow_the_reference() -> None:
    """remove_from_list drops the first equal item; operator.add takes a list only
    with a list; remove on a non-list fails (the client is dropped)."""
    assert OPERATIONS["remove"]([1, 2, 1], 1) == [2, 1]
    assert OPERATIONS["remove"]([1, 2], 5) == [1, 2]
    assert OPERATIONS["add"]([1], [2, 3]) == [1, 2, 3]
    for op, current, value in (("add", [1], "ab"), ("remove", 5, 1)):
        with pytest.raises(TypeError):
            OPERATIONS[op](current, value)


def test_room_indexes_items_within_what_a_client_receives() -> None:
    """A client without its own items (items_handling 0b001) gets index 0 for its
    first item from another world, however many of its own were filtered out."""

    async def play(room: Room) -> None:
        js = await aio.connect(room.url, name="JSPlayer", game="Clique", items_handling=0b001)
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest")
        await js.check_locations([1001])  # Cake, its own item: filtered out for it
        await buddy.check_locations([2001])  # Button Activation for JSPlayer
        got = await js.wait_for(S.ItemsReceived)
        assert (got.index, [i.item for i in got.items]) == (0, [1])
        sent = [f for d, f in room.frames if d == "c2s" and '"Sync"' in f]
        assert sent == []  # in step: no Sync round trip
        await js.close()
        await buddy.close()

    run(play)


def test_room_unknown_operation_drops_the_client() -> None:
    login = (
        '[{"cmd":"Connect","password":null,"name":"PyBuddy","game":"Quest","uuid":"",'
        '"tags":[],"items_handling":7,"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]'
    )

    async def play(room: Room) -> None:
        replies = await _raw(
            room, [login, '[{"cmd":"Set","key":"k","operations":[{"operation":"nope","value":1}]}]']
        )
        assert replies[-1] != "open"

    run(play)


@pytest.mark.parametrize("option", ["connect_timeout", "login_timeout"])
def test_a_silent_server_times_the_login_out(option: str) -> None:
    """connect() waited forever on a server that never sends RoomInfo
    (``login_timeout`` is the deprecated name of ``connect_timeout``)."""
    from websockets.asyncio.server import ServerConnection, serve

    async def silent(socket: ServerConnection) -> None:
        await socket.wait_closed()

    async def main() -> None:
        async with serve(silent, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            started = asyncio.get_running_loop().time()
            with contextlib.ExitStack() as stack:
                if option == "login_timeout":
                    stack.enter_context(pytest.warns(DeprecationWarning, match="connect_timeout"))
                stack.enter_context(pytest.raises(TimeoutError, match=r"no login within 0\.3 s"))
                await aio.connect(
                    f"ws://127.0.0.1:{port}", name="JSPlayer", game="Clique", **{option: 0.3}
                )
            assert asyncio.get_running_loop().time() - started < 5.0

    asyncio.run(main())


def test_connect_timeout_bounds_the_websocket_handshake_too() -> None:
    """A server that accepts the TCP connection and never answers the upgrade."""

    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(mute, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        started = asyncio.get_running_loop().time()
        with pytest.raises(TimeoutError):
            await aio.connect(
                f"ws://127.0.0.1:{port}", name="JSPlayer", game="Clique", connect_timeout=0.3
            )
        assert asyncio.get_running_loop().time() - started < 5.0
        server.close()
        await server.wait_closed()

    asyncio.run(main())


def test_client_login_timeout_is_a_deprecated_connect_timeout() -> None:
    async def main() -> None:
        with pytest.warns(DeprecationWarning, match="connect_timeout"):
            client = aio.Client("ws://127.0.0.1:1", {"name": "A", "game": None}, login_timeout=2.0)
        assert client.connect_timeout == 2.0
        with pytest.warns(DeprecationWarning, match="connect_timeout"):
            assert client.login_timeout == 2.0

    asyncio.run(main())


ROOM_INFO = (
    '[{"cmd":"RoomInfo","password":false,"games":["Clique"],"tags":["AP"],'
    '"version":{"major":0,"minor":6,"build":8,"class":"Version"}}]'
)
CONNECTED = (
    '[{"cmd":"Connected","team":0,"slot":1,"players":[],'
    '"missing_locations":[],"checked_locations":[]}]'
)


def test_request_timeout_bounds_the_wait_for_a_reply() -> None:
    """A server that logs us in and then answers nothing."""
    from websockets.asyncio.server import ServerConnection, serve

    async def deaf(socket: ServerConnection) -> None:
        await socket.send(ROOM_INFO)
        async for message in socket:
            if '"cmd":"Connect"' in str(message):
                await socket.send(CONNECTED)

    async def main() -> None:
        async with asyncio.timeout(10), serve(deaf, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            client = await aio.connect(
                f"ws://127.0.0.1:{port}", name="A", game="Clique", request_timeout=0.3
            )
            loop = asyncio.get_running_loop()
            for request in (client.get(["k"]), client.scout([1]), client.set("k", [("add", 1)])):
                started = loop.time()
                with pytest.raises(TimeoutError, match="timed out"):
                    await request
                assert 0.25 <= loop.time() - started < 5.0
            await client.close()

    asyncio.run(main())


def test_the_tap_sees_every_frame_in_and_out() -> None:
    async def play(room: Room) -> None:
        seen: list[Traffic] = []
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", tap=seen.append)
        await client.say("hello")
        while "hello" not in (await client.wait_for(S.MessageReceived)).text:
            pass
        await client.close()
        assert all(type(t) is Traffic and t.peer == room.url for t in seen)
        assert [t.time for t in seen] == sorted(t.time for t in seen)
        sent = [t.data for t in seen if t.direction == "out"]
        received = [t.data for t in seen if t.direction == "in"]
        assert sent == [text for direction, text in room.frames if direction == "c2s"]
        server_sent = [text for direction, text in room.frames if direction == "s2c"]
        assert received == server_sent[: len(received)]
        assert '"cmd":"RoomInfo"' in received[0] and any('"cmd":"Connect"' in f for f in sent)
        assert '[{"cmd":"Say","text":"hello"}]' in sent
        assert any('"cmd":"PrintJSON"' in f and "hello" in f for f in received)

    run(play)
