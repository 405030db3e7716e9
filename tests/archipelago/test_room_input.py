"""Bad input to testing.Room, answered as the reference server answers it (the
InvalidPacket texts and key order of a real 0.6.8 server), never a crashed handler."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from gamecodec.archipelago.testing import OPERATIONS, Room
from tests.archipelago.room_peer import Peer, run


def packet(kind: str, text: str, original: str | None) -> dict[str, Any]:
    return {"cmd": "InvalidPacket", "type": kind, "text": text, "original_cmd": original}


LOGGED_IN_CASES = [
    # (frame, the reply, the client kept)
    ('[{"cmd":5}]', packet("cmd", "Command should be str, got <class 'int'>", None), True),
    ('[{"cmd":"Say","text":"bad\\u0007text"}]', packet("arguments", "Say", "Say"), True),
    ('[{"cmd":"Say","text":5}]', packet("arguments", "Say", "Say"), True),
    ('[{"cmd":"Get","keys":"x"}]', packet("arguments", "Retrieve", "Get"), True),
    ('[{"cmd":"SetNotify","keys":5}]', packet("arguments", "SetNotify", "SetNotify"), True),
    ('[{"cmd":"Set","key":"k","operations":"x"}]', packet("arguments", "Set", "Set"), True),
    (
        '[{"cmd":"LocationScouts","locations":[1001,"a"]}]',
        packet("arguments", "Locations has to be a list of integers", "LocationScouts"),
        True,
    ),
    (
        '[{"cmd":"ConnectUpdate","items_handling":"x"}]',
        packet(
            "arguments",
            "Invalid items_handling: unsupported operand type(s) for &: 'str' and 'int'",
            "ConnectUpdate",
        ),
        True,
    ),
    ('[{"cmd":"NoSuchCommand","x":1}]', None, True),  # ignored, as the reference
    ('[{"cmd":"LocationScouts","locations":[99999]}]', None, False),  # its lookup raises
    ('[{"cmd":"Set","key":"k","operations":[{"operation":"nope","value":1}]}]', None, False),
    ("[{", None, False),
    ('[{"nocmd":1}]', "Could not get command from {'nocmd': 1} at `cmd`", False),
    ('{"cmd":"Sync"}', "Could not get command from cmd at `cmd`", False),
]


@pytest.mark.parametrize(("frame", "reply", "kept"), LOGGED_IN_CASES)
def test_bad_input_is_answered_as_the_reference(frame: str, reply: Any, kept: bool) -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        await js.drain()
        await js.send_text(frame)
        got = await js.drain(0.5)
        if isinstance(reply, str):  # a missing cmd: the reference's own key order
            assert got == [
                {"cmd": "InvalidPacket", "type": "cmd", "original_cmd": None, "text": reply}
            ]
            assert room.frames[-1][1].startswith(
                '[{"cmd":"InvalidPacket","type":"cmd","original_cmd"'
            )
        else:
            assert got == ([] if reply is None else [reply])
        assert js.closed is not kept
        if kept:  # still served
            await js.send({"cmd": "Get", "keys": ["x"]})
            await js.expect("Retrieved")

    run(play)


def test_before_login_only_connect_and_data_package_are_served() -> None:
    async def play(room: Room) -> None:
        peer = await Peer.open(room)
        await peer.send_text('[{"cmd":"Say","text":5},{"cmd":"Get","keys":["x"]}]')
        await peer.send_text('[{"cmd":"Connect","name":"JSPlayer","game":"Clique"}]')
        await peer.send({"cmd": "GetDataPackage", "games": ["Quest"]})
        got = await peer.drain()
        assert [c["cmd"] for c in got] == ["InvalidPacket", "DataPackage"]
        assert got[0] == packet("arguments", "Connect", "Connect")
        assert list(got[1]["data"]["games"]) == ["Quest"]
        assert not peer.closed

    run(play)


def test_trackers_cannot_check_or_goal() -> None:
    async def play(room: Room) -> None:
        tracker = await Peer.login(room, "JSPlayer", "", tags=["Tracker"])
        await tracker.send({"cmd": "LocationChecks", "locations": [1001]})
        assert await tracker.expect("InvalidPacket") == packet(
            "cmd", "Trackers can't register new Location Checks", "LocationChecks"
        )
        await tracker.send({"cmd": "StatusUpdate", "status": 30})
        assert await tracker.expect("InvalidPacket") == packet(
            "cmd", "Trackers can't register Goal Complete", "StatusUpdate"
        )
        assert room.checked[1] == set() and room.status[1] != 30

    run(play)


@pytest.mark.parametrize(
    "operations",
    [
        [{"operation": "pow", "value": 5000}],
        [{"operation": "left_shift", "value": 100_000}],
        [{"operation": "replace", "value": 10**4000}, {"operation": "mul", "value": 10**1000}],
        [{"operation": "replace", "value": [1]}, {"operation": "mul", "value": 10**9}],
        # few items, each large: 20 MB to store and send to every watcher
        [{"operation": "replace", "value": ["x" * 20_000]}, {"operation": "mul", "value": 1000}],
        [{"operation": "replace", "value": 1000}, {"operation": "mul", "value": [[1] * 10_000]}],
    ],
)
def test_a_set_too_large_to_send_is_refused_and_the_key_stays_readable(
    operations: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        await js.drain()
        with caplog.at_level(logging.ERROR):
            await js.send(
                {
                    "cmd": "Set",
                    "key": "big",
                    "default": 10,
                    "want_reply": True,
                    "operations": operations,
                }
            )
            assert await js.expect("InvalidPacket") == packet("arguments", "Set", "Set")
            for _ in range(2):
                await js.send({"cmd": "Get", "keys": ["big"]})
                assert (await js.expect("Retrieved"))["keys"] == {"big": None}
        assert not js.closed and "big" not in room.storage
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]

    run(play)


def test_a_value_the_codec_cannot_write_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any value the encoder refuses (here: a set past the size guard) is kept out."""
    from gamecodec.archipelago.testing import _world

    monkeypatch.setattr(_world, "MAX_INT_BITS", 10**9)

    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        await js.send(
            {
                "cmd": "Set",
                "key": "big",
                "want_reply": True,
                "operations": [
                    {"operation": "replace", "value": 10},
                    {"operation": "pow", "value": 5000},
                ],
            }
        )
        assert await js.expect("InvalidPacket") == packet("arguments", "Set", "Set")
        await js.send({"cmd": "Get", "keys": ["big"]})
        assert (await js.expect("Retrieved"))["keys"] == {"big": None}

    run(play)


TEMPLATES: list[dict[str, Any]] = [
    {
        "cmd": "Connect",
        "password": None,
        "name": "JSPlayer",
        "game": "Clique",
        "uuid": "",
        "tags": [],
        "items_handling": 7,
        "version": {"major": 0, "minor": 6, "build": 8, "class": "Version"},
    },
    {"cmd": "ConnectUpdate", "items_handling": 7, "tags": ["AP"]},
    {"cmd": "Sync"},
    {"cmd": "LocationChecks", "locations": [1001]},
    {"cmd": "LocationScouts", "locations": [1002], "create_as_hint": 1},
    {"cmd": "CreateHints", "locations": [1003], "player": 1, "status": 0},
    {"cmd": "UpdateHint", "player": 1, "location": 1003, "status": 10},
    {"cmd": "StatusUpdate", "status": 20},
    {"cmd": "Say", "text": "!hint Cake"},
    {"cmd": "GetDataPackage", "games": ["Clique"]},
    {"cmd": "Bounce", "games": ["Quest"], "slots": [2], "tags": ["DeathLink"], "data": {}},
    {"cmd": "Get", "keys": ["a"]},
    {
        "cmd": "Set",
        "key": "a",
        "default": 1,
        "want_reply": True,
        "operations": [{"operation": "add", "value": 1}],
    },
    {"cmd": "SetNotify", "keys": ["a"]},
]
ODD_VALUES: list[Any] = [None, True, -1, 10**30, 1.5, "x", "", [], ["x"], [[1]], {}, {"a": 1}]


def _mutations() -> list[dict[str, Any]]:
    out = []
    for template in TEMPLATES:
        for key in template:
            if key == "cmd":
                continue
            out.extend({**template, key: value} for value in ODD_VALUES)
            out.append({k: v for k, v in template.items() if k != key})
    for operation in OPERATIONS:
        for default in (1, 2.5, "s", [1, 2], {"a": 1}):
            for value in ODD_VALUES:
                step = {"operation": operation, "value": value}
                out.append({"cmd": "Set", "key": "k", "default": default, "operations": [step]})
    return out


def test_no_argument_crashes_a_handler(caplog: pytest.LogCaptureFixture) -> None:
    """Every command with each argument missing or of every JSON type: answered,
    ignored or dropped as the reference does, never an exception in the room."""
    mutations = _mutations()

    async def play(room: Room) -> None:
        peer = await Peer.login(room, "JSPlayer", "Clique")
        for mutation in mutations:
            await peer.send(mutation)
            await peer.send({"cmd": "Get", "keys": ["__ping"]})
            try:
                await peer.expect("Retrieved", timeout=5, keys={"__ping": None})
            except AssertionError:
                assert peer.closed, mutation
            if peer.closed:
                peer = await Peer.login(room, "JSPlayer", "Clique")
            peer.seen.clear()
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        await buddy.send({"cmd": "Say", "text": "still here"})
        await buddy.expect("PrintJSON", type="Chat")

    with caplog.at_level(logging.WARNING):
        run(play)
    assert len(mutations) > 1000
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
