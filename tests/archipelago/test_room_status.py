"""testing.Room's goal, status and release/collect per the room's permissions, the
_read_client_status_ key, Join/Tutorial/Part/TagsChanged notices, start inventory
and name groups, over a real websocket (texts as a real 0.6.8 server's)."""

from __future__ import annotations

import asyncio

from gamecodec.archipelago.testing import Game, Room, RoomSlot
from tests.archipelago.room_peer import Peer, run

TUTORIAL = (
    "Now that you are connected, you can use !help to list commands to run via the server. "
    "If your client supports it, you may have additional local commands you can list with /help."
)


def test_join_tutorial_tags_changed_and_part_notices() -> None:
    async def play(room: Room) -> None:
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        js = await Peer.login(room, "JSPlayer", "", tags=["AP", "Tracker"])
        assert await js.texts() == [
            (
                "Join",
                "JSPlayer (Team #1) tracking Clique has joined. Client(0.6.8), ['AP', 'Tracker'].",
            ),
            ("Tutorial", TUTORIAL),
        ]
        await js.send({"cmd": "ConnectUpdate", "tags": ["AP", "DeathLink"]})
        changed = await buddy.expect("PrintJSON", type="TagsChanged")
        assert changed == {
            "cmd": "PrintJSON",
            "data": [
                {
                    "text": "JSPlayer (Team #1) has changed tags from ['AP', 'Tracker'] to "
                    "['AP', 'DeathLink']."
                }
            ],
            "type": "TagsChanged",
            "team": 0,
            "slot": 1,
            "tags": ["AP", "DeathLink"],
        }
        await js.send({"cmd": "ConnectUpdate", "tags": ["DeathLink", "AP"]})  # same set: quiet
        await js.close()
        assert await buddy.expect("PrintJSON", type="Part") == {
            "cmd": "PrintJSON",
            "data": [
                {
                    "text": "JSPlayer (Team #1) has left the game. "
                    "Client(0.6.8), ['DeathLink', 'AP']."
                }
            ],
            "type": "Part",
            "team": 0,
            "slot": 1,
        }
        assert "TagsChanged" not in [kind for kind, _ in await buddy.texts()]  # one change only

    run(play)


def test_goal_auto_collect_and_release_and_client_status_key() -> None:
    async def play(room: Room) -> None:
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        await buddy.send({"cmd": "Get", "keys": ["_read_client_status_0_1"]})
        assert (await buddy.expect("Retrieved"))["keys"] == {"_read_client_status_0_1": 0}
        await buddy.send({"cmd": "SetNotify", "keys": ["_read_client_status_0_1"]})
        await buddy.send({"cmd": "Get", "keys": []})
        await buddy.expect("Retrieved")  # the SetNotify is in
        js = await Peer.login(room, "JSPlayer", "Clique")
        assert await buddy.expect("SetReply", key="_read_client_status_0_1") == {
            "cmd": "SetReply",
            "key": "_read_client_status_0_1",
            "value": 5,  # CLIENT_CONNECTED on login
        }
        await buddy.drain()
        await js.send({"cmd": "StatusUpdate", "status": 30})
        texts = [text for kind, text in await buddy.texts() if kind != "ItemSend"]
        assert texts == [
            "JSPlayer (Team #1) has completed their goal.",
            "JSPlayer (Team #1) has collected their items from other worlds.",
            "JSPlayer (Team #1) has released all remaining items from their world.",
        ]
        assert (await buddy.expect("SetReply", key="_read_client_status_0_1"))["value"] == 30
        assert room.checked == {1: {1001, 1002, 1003}, 2: {2001, 2003}}
        got = [c for c in await js.drain() if c["cmd"] == "ReceivedItems"]
        assert sorted(i["item"] for c in got for i in c["items"]) == [1, 2, 3]

        await js.send({"cmd": "StatusUpdate", "status": 20})  # a goal cannot be undone
        await buddy.send({"cmd": "StatusUpdate", "status": 30})
        texts = [text for kind, text in await buddy.texts() if kind != "ItemSend"]
        assert texts[0] == "PyBuddy (Team #1) has completed their goal."
        assert texts[-1] == "Team #1 has completed all of their games! Congratulations!"
        await js.close()
        await asyncio.sleep(0.1)
        await buddy.send({"cmd": "Get", "keys": ["_read_client_status_0_1"]})
        assert (await buddy.expect("Retrieved"))["keys"] == {"_read_client_status_0_1": 30}

    run(play)


def test_leaving_resets_the_status_unless_goal() -> None:
    async def play(room: Room) -> None:
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        js = await Peer.login(room, "JSPlayer", "Clique")
        await js.send({"cmd": "StatusUpdate", "status": 20})
        await asyncio.sleep(0.1)
        assert room.status[1] == 20
        await js.close()
        await buddy.expect("PrintJSON", type="Part")
        assert room.status[1] == 0

    run(play)


def test_release_collect_remaining_follow_the_permissions() -> None:
    async def play(room: Room) -> None:
        js = await Peer.open(room)
        assert room.permissions() == {"release": 0, "remaining": 1, "collect": 2}
        await js.send(
            {
                "cmd": "Connect",
                "password": None,
                "name": "JSPlayer",
                "game": "Clique",
                "uuid": "",
                "tags": [],
                "items_handling": 7,
                "version": {"major": 0, "minor": 6, "build": 8, "class": "Version"},
            }
        )
        await js.expect("Connected")
        await js.drain()
        for text in ("!release", "!collect", "!remaining"):
            await js.send({"cmd": "Say", "text": text})
        results = [text for kind, text in await js.texts() if kind == "CommandResult"]
        assert results == [
            "Sorry, client item releasing has been disabled on this server. "
            "You can ask the server admin for a /release",
            "Sorry, client collecting requires you to have beaten the game on this server. "
            "You can ask the server admin for a /collect",
            "Remaining items: Cake, Sword, Shield",
        ]
        await js.send({"cmd": "StatusUpdate", "status": 30})  # "goal": nothing automatic
        assert [t for t, _ in await js.texts()] == ["Goal"]
        await js.send({"cmd": "Say", "text": "!collect"})
        assert ("Collect", "JSPlayer (Team #1) has collected their items from other worlds.") in (
            await js.texts()
        )
        assert room.checked[2] == {2001, 2003}

    run(play, release_mode="disabled", collect_mode="goal", remaining_mode="enabled")


def test_release_when_enabled_sends_the_world_and_room_updates() -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        await js.drain()
        await js.send({"cmd": "Say", "text": "!release"})
        sends = [c for c in await buddy.drain() if c.get("type") == "ItemSend"]
        assert [c["data"][1]["text"] for c in sends] == [" found their ", " sent ", " sent "]
        new = [1001, 1002, 1003]
        await js.expect("RoomUpdate", checked_locations=new, hint_points=3)
        update = await js.expect("RoomUpdate", checked_locations=new)
        assert update == {"cmd": "RoomUpdate", "checked_locations": new}
        await js.send({"cmd": "Say", "text": "!remaining"})
        assert (await js.texts())[-1] == (
            "CommandResult",
            "Sorry, !remaining requires you to have beaten the game on this server",
        )

    run(play, release_mode="enabled")


def test_start_inventory_and_name_groups() -> None:
    game = Game(
        "Clique",
        items={"Button": 1, "Cake": 3},
        locations={"Press": 10, "Desk": 11},
        item_name_groups={"Food": ["Cake"]},
        location_name_groups={"Office": ["Desk"]},
    )
    room = Room(
        games=[game],
        slots=[RoomSlot("Alice", "Clique", {10: (1, 1, 0), 11: (3, 1, 0)}, start_inventory=[3])],
        hint_cost=0,
    )

    async def main() -> None:
        async with room:
            alice = await Peer.login(room, "Alice", "Clique", items_handling=7)
            start = {"item": 3, "location": -2, "player": 0, "flags": 0, "class": "NetworkItem"}
            assert await alice.expect("ReceivedItems") == {
                "cmd": "ReceivedItems",
                "index": 0,
                "items": [start],
            }
            keys = ["_read_item_name_groups_Clique", "_read_location_name_groups_Clique"]
            await alice.send({"cmd": "Get", "keys": [*keys, "_read_item_name_groups_Nope"]})
            assert (await alice.expect("Retrieved"))["keys"] == {
                # with the groups AutoWorldRegister gives every world
                keys[0]: {"Food": ["Cake"], "Everything": ["Button", "Cake"]},
                keys[1]: {"Office": ["Desk"], "Everywhere": ["Press", "Desk"]},
                "_read_item_name_groups_Nope": None,
            }
            await alice.send({"cmd": "LocationChecks", "locations": [10]})
            got = await alice.expect("ReceivedItems")
            assert (got["index"], [i["item"] for i in got["items"]]) == (1, [1])
            await alice.send({"cmd": "Say", "text": "!hint Food"})  # an item group
            hint = await alice.expect("PrintJSON", type="Hint")
            assert (hint["item"]["item"], hint["item"]["location"]) == (3, 11)

            other = await Peer.login(room, "Alice", "Clique", items_handling=3)
            first = await other.expect("ReceivedItems")
            assert first["items"] == [
                {"item": 1, "location": 10, "player": 1, "flags": 0, "class": "NetworkItem"}
            ]
            await other.send({"cmd": "ConnectUpdate", "items_handling": 7})
            got = await other.expect("ReceivedItems")
            assert (got["index"], [i["item"] for i in got["items"]]) == (0, [3, 1])
            await other.send({"cmd": "ConnectUpdate", "items_handling": 6})
            assert (await other.expect("InvalidPacket"))["text"] == (
                "Invalid items_handling: Invalid flag combination"
            )
            await other.send({"cmd": "Sync"})
            got = await other.expect("ReceivedItems")
            assert (got["index"], [i["item"] for i in got["items"]]) == (0, [3, 1])

    asyncio.run(asyncio.wait_for(main(), 30))
