"""testing.Room's hints over a real websocket: !hint, LocationScouts create_as_hint,
CreateHints, UpdateHint, the _read_hints_ key and its SetReply updates (texts and
shapes as a real Archipelago 0.6.8 server sends them, see tests/data/archipelago)."""

from __future__ import annotations

from typing import Any

from gamecodec.archipelago import aio
from gamecodec.archipelago.testing import Room
from tests.archipelago.room_peer import Peer, run


def hint_value(receiver: int, finder: int, location: int, item: int, **rest: Any) -> dict[str, Any]:
    return {
        "receiving_player": receiver,
        "finding_player": finder,
        "location": location,
        "item": item,
        "found": rest.get("found", False),
        "entrance": "",
        "item_flags": rest.get("flags", 0),
        "status": rest.get("status", 0),
        "class": "Hint",
    }


def hint_message(
    receiver: int, finder: int, location: int, item: int, flags: int, status: int, found: bool
) -> dict[str, Any]:
    names = {
        0: "(unspecified)",
        10: "(no priority)",
        20: "(avoid)",
        30: "(priority)",
        40: "(found)",
    }
    return {
        "cmd": "PrintJSON",
        "data": [
            {"text": "[Hint]: "},
            {"text": str(receiver), "type": "player_id"},
            {"text": "'s "},
            {"text": str(item), "player": receiver, "flags": flags, "type": "item_id"},
            {"text": " is at "},
            {"text": str(location), "player": finder, "type": "location_id"},
            {"text": " in "},
            {"text": str(finder), "type": "player_id"},
            {"text": "'s World"},
            {"text": ". "},
            {"text": names[status], "hint_status": status, "type": "hint_status"},
        ],
        "type": "Hint",
        "receiving": receiver,
        "item": {
            "item": item,
            "location": location,
            "player": finder,
            "flags": flags,
            "class": "NetworkItem",
        },
        "found": found,
    }


def test_hint_command_costs_points_and_updates_read_hints() -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        await js.send({"cmd": "SetNotify", "keys": ["_read_hints_0_1"]})
        await buddy.send({"cmd": "SetNotify", "keys": ["_read_hints_0_2"]})
        await js.drain()
        await js.send({"cmd": "Say", "text": "!hint Button Activation"})
        assert await js.texts() == [
            ("Chat", "JSPlayer: !hint Button Activation"),
            ("CommandResult", "You can't afford the hint. You have 0 points and need at least 1."),
        ]
        await js.send({"cmd": "LocationChecks", "locations": [1001]})
        await js.expect("RoomUpdate", hint_points=1)
        await js.send({"cmd": "Say", "text": "!hint button activation"})
        wanted = hint_message(1, 2, 2001, 1, 1, 30, False)
        assert await js.expect("PrintJSON", type="Hint") == wanted
        assert await buddy.expect("PrintJSON", type="Hint") == wanted
        value = [hint_value(1, 2, 2001, 1, flags=1, status=30)]
        assert await js.expect("SetReply", key="_read_hints_0_1") == {
            "cmd": "SetReply",
            "key": "_read_hints_0_1",
            "value": value,
        }
        assert (await buddy.expect("SetReply", key="_read_hints_0_2"))["value"] == value
        await js.expect("RoomUpdate", hint_points=0)

        await buddy.send({"cmd": "LocationChecks", "locations": [2001]})  # the hinted item
        found = [hint_value(1, 2, 2001, 1, flags=1, status=40, found=True)]
        assert (await js.expect("SetReply", key="_read_hints_0_1"))["value"] == found
        assert (await buddy.expect("SetReply", key="_read_hints_0_2"))["value"] == found
        await js.drain()
        await js.send({"cmd": "Say", "text": "!hint"})
        got = await js.drain()
        assert hint_message(1, 2, 2001, 1, 1, 40, True) in got
        texts = ["".join(p["text"] for p in c["data"]) for c in got if c.get("type") != "Hint"]
        assert texts[-1] == "A hint costs 1 points. You have 0 points."
        await js.send({"cmd": "Get", "keys": ["_read_hints_0_1", "_read_hints_0_9"]})
        assert (await js.expect("Retrieved"))["keys"] == {
            "_read_hints_0_1": found,
            "_read_hints_0_9": None,
        }
        await js.send({"cmd": "Say", "text": "!hint Buton Activaton"})  # a close match
        assert (await js.texts())[-1] == (
            "CommandResult",
            "Hint was previously used, no points deducted.",
        )
        await js.send({"cmd": "Say", "text": "!hint Lamp"})
        assert (await js.texts())[-1] == (
            "CommandResult",
            "Didn't find something that closely matches 'Lamp', did you mean 'Cake'? (25% sure)",
        )

    run(play)


def test_scouts_create_as_hint_and_create_hints() -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        await js.drain()
        scout = {"cmd": "LocationScouts", "locations": [1002], "create_as_hint": 2}
        await js.send(scout)
        wanted = hint_message(2, 1, 1002, 501, 1, 0, False)
        assert await js.expect("PrintJSON", type="Hint") == wanted
        assert await buddy.expect("PrintJSON", type="Hint") == wanted
        assert (await js.expect("LocationInfo"))["locations"] == [
            {"item": 501, "location": 1002, "player": 2, "flags": 1, "class": "NetworkItem"}
        ]
        await js.drain()
        await js.send(scout)  # create_as_hint 2: only new hints are announced
        got = await js.drain()
        assert [c["cmd"] for c in got] == ["LocationInfo"]
        await js.send({**scout, "create_as_hint": 1})  # 1: announced again
        assert await js.expect("PrintJSON", type="Hint") == wanted
        await buddy.drain()
        await js.drain()

        await buddy.send({"cmd": "CreateHints", "locations": [2002], "status": 30})
        assert await buddy.expect("PrintJSON", type="Hint") == hint_message(
            2, 2, 2002, 503, 0, 30, False
        )
        await js.send({"cmd": "CreateHints", "locations": [2001], "player": 2})
        assert await js.expect("PrintJSON", type="Hint") == hint_message(1, 2, 2001, 1, 1, 0, False)
        refusals = [
            ({"locations": [1003], "status": 30}, 'Must use "unspecified"/None status for items '),
            ({"locations": [2002], "player": 2}, "Can only create hints for own items or own "),
            ({"locations": [9999], "player": 2}, "One or more of the locations do not exist for "),
            ({"locations": []}, "No locations specified."),
            ({"locations": [1001], "status": 55}, "Unknown Status: 55 is not a valid HintStatus"),
        ]
        for fields, text in refusals:
            await js.send({"cmd": "CreateHints", **fields})
            refused = await js.expect("InvalidPacket")
            assert refused["type"] == "arguments" and refused["original_cmd"] == "CreateHints"
            assert text in refused["text"], (fields, refused)
        await js.send({"cmd": "Get", "keys": ["_read_hints_0_1"]})
        hints = (await js.expect("Retrieved"))["keys"]["_read_hints_0_1"]
        assert hint_value(2, 1, 1002, 501, flags=1) in hints
        assert hint_value(1, 2, 2001, 1, flags=1) in hints

    run(play)


def test_update_hint_as_the_reference() -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        await js.send({"cmd": "LocationScouts", "locations": [1002], "create_as_hint": 2})
        await js.expect("LocationInfo")
        await js.send({"cmd": "SetNotify", "keys": ["_read_hints_0_1"]})
        await buddy.send({"cmd": "SetNotify", "keys": ["_read_hints_0_2"]})
        await buddy.drain()
        update = {"cmd": "UpdateHint", "player": 1, "location": 1002}
        await js.send({**update, "status": 20})  # JSPlayer finds it; PyBuddy receives it
        assert (await js.expect("InvalidPacket"))["text"] == "UpdateHint: No Permission"
        await buddy.send({**update, "status": 40})
        assert (await buddy.expect("InvalidPacket"))["text"] == (
            'UpdateHint: Cannot manually update status to "HINT_FOUND"'
        )
        await buddy.send({**update, "status": 7})
        assert (await buddy.expect("InvalidPacket"))["text"] == "UpdateHint: Invalid Status"
        await buddy.send({**update, "status": 20})
        value = [hint_value(2, 1, 1002, 501, flags=1, status=20)]
        assert (await buddy.expect("SetReply", key="_read_hints_0_2"))["value"] == value
        assert (await js.expect("SetReply", key="_read_hints_0_1"))["value"] == value
        await buddy.send({"cmd": "UpdateHint", "player": 1, "location": 1003, "status": 20})
        await buddy.send({"cmd": "UpdateHint", "player": "1", "location": 1002, "status": 20})
        refused = await buddy.expect("InvalidPacket")
        assert refused == {
            "cmd": "InvalidPacket",
            "type": "arguments",
            "text": "UpdateHint",
            "original_cmd": "UpdateHint",
        }
        assert not buddy.closed

    run(play)


def test_the_aio_client_scouts_as_hint_against_the_room() -> None:
    async def play(room: Room) -> None:
        client = await aio.connect(room.url, name="JSPlayer", game="Clique")
        items = await client.scout([1003], create_as_hint=2)
        assert [(i.item, i.location, i.player) for i in items] == [(502, 1003, 2)]
        got = await client.get(["_read_hints_0_1"])
        assert got["_read_hints_0_1"] == [hint_value(2, 1, 1003, 502)]
        await client.close()

    run(play)
