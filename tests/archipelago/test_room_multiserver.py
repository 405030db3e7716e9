"""testing.Room answering as Archipelago 0.6.8's MultiServer.py where it used to
close the connection or differ: the raw-argument cases of ``process_client_cmd``,
the hint ``!hint`` picks by sphere (``ClientMessageProcessor.get_hints``), the order
after a ``create_as_hint`` scout, the generator's DataPackage checksums
(``worlds/AutoWorld.py`` ``data_package_checksum``), and ``!getitem``, ``!license``,
``!options``. Frame shapes are the corpus' (tests/data/archipelago/small)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago.datapackage import DataPackageCache
from gamecodec.archipelago.testing import ARCHIPELAGO, Game, Room, RoomSlot
from tests.archipelago.room_peer import Peer, connect_command, run
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "data" / "archipelago" / "small" / "session.jsonl"


def corpus_frame(seq: int) -> list[dict[str, Any]]:
    """The commands of frame ``seq`` of the small corpus session."""
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["seq"] == seq:
            frame: list[dict[str, Any]] = json.loads(row["raw"])
            return frame
    raise KeyError(seq)


# ---------------------------------------------------------------------- process_client_cmd


@pytest.mark.parametrize(
    ("fields", "errors"),
    [
        # client.items_handling = "abc": the setter's & raises TypeError -> InvalidItemsHandling
        ({"items_handling": "abc"}, ["InvalidItemsHandling"]),
        ({"items_handling": 1.5}, ["InvalidItemsHandling"]),
        ({"items_handling": None}, ["InvalidItemsHandling"]),
        ({"items_handling": 0b110}, ["InvalidItemsHandling"]),  # ValueError: flag combination
        # args['name'] not in ctx.connect_names -> InvalidSlot (items_handling not looked at)
        ({"name": 5}, ["InvalidSlot"]),
        ({"name": 5, "items_handling": "abc"}, ["InvalidSlot"]),
        ({"name": None, "game": 7}, ["InvalidSlot"]),
        # ignore_game needs an empty game: a Tracker naming the wrong game is refused
        ({"game": "Quest", "tags": ["Tracker"]}, ["InvalidGame"]),
    ],
)
def test_connect_is_refused_and_the_socket_kept(fields: dict[str, Any], errors: list[str]) -> None:
    """MultiServer process_client_cmd, Connect: errors go in ConnectionRefused."""

    async def play(room: Room) -> None:
        peer = await Peer.open(room)
        await peer.send({**connect_command("JSPlayer", "Clique"), **fields})
        assert await peer.drain() == [{"cmd": "ConnectionRefused", "errors": errors}]
        assert not peer.closed
        await peer.send(connect_command("JSPlayer", "Clique"))
        await peer.expect("Connected")

    run(play)


@pytest.mark.parametrize("key", ["uuid", "tags", "items_handling"])
def test_connect_without_a_key_the_reference_reads_drops_the_client(key: str) -> None:
    """Connect: args["uuid"], args["tags"], args["items_handling"] raise KeyError in
    the reference (the typed command would have filled in a default)."""

    async def play(room: Room) -> None:
        peer = await Peer.open(room)
        command = connect_command("JSPlayer", "Clique")
        del command[key]
        await peer.send(command)
        assert await peer.drain() == [] and peer.closed
        other = await Peer.open(room)
        await other.send({k: v for k, v in command.items() if k != "name"} | {"name": "Nobody"})
        assert await other.drain() == [{"cmd": "ConnectionRefused", "errors": ["InvalidSlot"]}]

    run(play)


@pytest.mark.parametrize(("value", "handling"), [(99, 0b011), (True, 0b001), (-1, 0b111)])
def test_connect_takes_items_handling_as_the_setter_does(value: Any, handling: int) -> None:
    """Client.items_handling: bit 0 set, the low three bits kept (99 is 0b011)."""

    async def play(room: Room) -> None:
        peer = await Peer.login(room, "JSPlayer", "Clique", items_handling=value)
        assert next(iter(room.clients)).items_handling == handling
        await peer.close()

    run(play)


@pytest.mark.parametrize("games", ['"ChecksFinder"', '"Clique"', "[NaN]", "[5, null]", "{}"])
def test_get_data_package_filters_by_set_of_games(games: str) -> None:
    """GetDataPackage: ``name in set(args.get("games", []))``: a string is a set of
    characters, NaN equals no name: an empty DataPackage."""

    async def play(room: Room) -> None:
        peer = await Peer.open(room)
        await peer.send_text(f'[{{"cmd":"GetDataPackage","games":{games}}}]')
        assert await peer.drain() == [{"cmd": "DataPackage", "data": {"games": {}}}]
        assert not peer.closed

    run(play)


def test_get_data_package_answers_in_the_servers_order() -> None:
    """The reply follows gamespackage's order, not the request's (corpus seq 4 and 5:
    ["ChecksFinder", "Archipelago"] answered Archipelago first)."""
    assert list(corpus_frame(5)[0]["data"]["games"]) == ["Archipelago", "ChecksFinder"]

    async def play(room: Room) -> None:
        peer = await Peer.open(room)
        await peer.send_text('[{"cmd":"GetDataPackage","games":{"Quest":1,"Clique":2}}]')
        reply = await peer.expect("DataPackage")
        assert list(reply["data"]["games"]) == ["Clique", "Quest"]
        await peer.send({"cmd": "GetDataPackage", "games": ["Quest", "Archipelago"]})
        reply = await peer.expect("DataPackage")
        assert list(reply["data"]["games"]) == ["Archipelago", "Quest"]

    run(play)


@pytest.mark.parametrize("games", ["5", "null", "[[1]]"])
def test_get_data_package_drops_what_set_refuses(games: str) -> None:
    async def play(room: Room) -> None:
        peer = await Peer.open(room)
        await peer.send_text(f'[{{"cmd":"GetDataPackage","games":{games}}}]')
        assert await peer.drain() == [] and peer.closed

    run(play)


def test_location_checks_of_strings_are_ignored() -> None:
    """register_location_checks: set(locations) & the slot's locations: "a" matches none."""

    async def play(room: Room) -> None:
        peer = await Peer.login(room, "JSPlayer", "Clique", items_handling=0)
        await peer.drain()
        await peer.send({"cmd": "LocationChecks", "locations": ["a", "b"]})
        await peer.send_text('[{"cmd":"LocationChecks","locations":"1001"}]')
        assert await peer.drain() == [] and not peer.closed
        assert room.checked[1] == set()
        await peer.send_text('[{"cmd":"LocationChecks","locations":[1001.0, "x"]}]')
        update = await peer.expect("RoomUpdate", checked_locations=[1001])
        assert update["hint_points"] == 1 and room.checked[1] == {1001}

    run(play)


def test_status_update_stores_any_status_as_the_reference() -> None:
    """update_client_status(ctx, client, args["status"]): "x" is stored (it is not
    CLIENT_GOAL) and told to _read_client_status_ subscribers; 30.0 is a goal."""

    async def play(room: Room) -> None:
        peer = await Peer.login(room, "JSPlayer", "Clique")
        await peer.send({"cmd": "SetNotify", "keys": ["_read_client_status_0_1"]})
        await peer.drain()
        await peer.send({"cmd": "StatusUpdate", "status": "x"})
        assert await peer.expect("SetReply") == {
            "cmd": "SetReply",
            "key": "_read_client_status_0_1",
            "value": "x",
        }
        await peer.send({"cmd": "Get", "keys": ["_read_client_status_0_1"]})
        assert (await peer.expect("Retrieved"))["keys"] == {"_read_client_status_0_1": "x"}
        await peer.send_text('[{"cmd":"StatusUpdate","status":30.0}]')
        assert "has completed their goal" in dict(await peer.texts())["Goal"]
        assert not peer.closed

    run(play)


def test_connect_update_takes_items_handling_as_the_setter_does() -> None:
    """ConnectUpdate items_handling 99: accepted as 0b011, the items sent again."""

    async def play(room: Room) -> None:
        peer = await Peer.login(room, "JSPlayer", "Clique", items_handling=0)
        await peer.send({"cmd": "LocationChecks", "locations": [1001]})  # its own Cake
        await peer.drain()
        await peer.send({"cmd": "ConnectUpdate", "items_handling": 99})
        got = await peer.expect("ReceivedItems")
        assert (got["index"], [i["item"] for i in got["items"]]) == (0, [3])
        assert next(iter(room.clients)).items_handling == 0b011
        await peer.send({"cmd": "ConnectUpdate", "items_handling": 3})  # unchanged: no resend
        await peer.send_text('[{"cmd":"ConnectUpdate","items_handling":"abc"}]')
        assert await peer.drain() == [
            {
                "cmd": "InvalidPacket",
                "type": "arguments",
                "text": (
                    "Invalid items_handling: unsupported operand type(s) for &: 'str' and 'int'"
                ),
                "original_cmd": "ConnectUpdate",
            }
        ]

    run(play)


# ---------------------------------------------------------------------- hints


def _hint_room(seed_name: str, spheres: list[dict[int, set[int]]]) -> Room:
    """Alice's Key is in Bob's world twice (2001, 2002) and in her own (1001)."""
    return Room(
        games=[
            Game("Clique", items={"Key": 1, "Cake": 2}, locations={"Desk": 1001, "Door": 1002}),
            Game("Quest", items={"Sword": 501}, locations={"Chest": 2001, "Altar": 2002}),
        ],
        slots=[
            RoomSlot("Alice", "Clique", {1001: (1, 1, 1), 1002: (2, 1, 0)}),
            RoomSlot("Bob", "Quest", {2001: (1, 1, 1), 2002: (1, 1, 1)}),
        ],
        seed_name=seed_name,
        spheres=spheres,
        hint_cost=0,
        location_check_points=0,
    )


async def _paid_hint(room: Room) -> tuple[int, int]:
    """(finder, location) of the one hint ``!hint Key`` pays for: one point, and a
    hint costs one (50% of Alice's two locations)."""
    room.hint_cost = 50
    room.location_check_points = 1
    room.checked[1].add(1002)  # one point
    peer = await Peer.login(room, "Alice", "Clique")
    await peer.drain()
    await peer.send({"cmd": "Say", "text": "!hint Key"})
    await peer.expect("PrintJSON", type="Hint")
    await peer.close()
    (hint,) = room.hints[1]
    return hint.finding_player, hint.location


@pytest.mark.parametrize("seed", [f"seed-{n}" for n in range(12)])
def test_hint_prefers_the_earliest_sphere(seed: str) -> None:
    """get_hints: shuffled, non-local first, then sorted by get_sphere (reverse):
    the copy in the earliest sphere is the one paid for, here the local one in
    sphere 0 before Bob's in spheres 1 and 2, whatever the shuffle did."""
    room = _hint_room(seed, [{1: {1001}}, {2: {2002}}, {1: {1002}, 2: {2001}}])

    async def main() -> None:
        async with asyncio.timeout(30), room:
            assert await _paid_hint(room) == (1, 1001)

    asyncio.run(main())


@pytest.mark.parametrize("seed", [f"seed-{n}" for n in range(12)])
def test_hint_within_a_sphere_prefers_other_worlds(seed: str) -> None:
    room = _hint_room(seed, [{1: {1001}, 2: {2001}}, {1: {1002}, 2: {2002}}])

    async def main() -> None:
        async with asyncio.timeout(30), room:
            assert await _paid_hint(room) == (2, 2001)

    asyncio.run(main())


def test_scout_as_hint_sends_location_info_first() -> None:
    """LocationScouts: notify_hints schedules its messages (async_start), the reply
    is awaited: LocationInfo, then SetReply, RoomUpdate, the hints (corpus 55-58)."""
    assert [c["cmd"] for n in (55, 56, 57, 58) for c in corpus_frame(n)] == [
        "LocationInfo",
        "SetReply",
        "RoomUpdate",
        "PrintJSON",
        "PrintJSON",
    ]

    async def play(room: Room) -> None:
        peer = await Peer.login(room, "JSPlayer", "Clique")
        await peer.send({"cmd": "SetNotify", "keys": ["_read_hints_0_1"]})
        await peer.drain()
        await peer.send({"cmd": "LocationScouts", "locations": [1002, 1001], "create_as_hint": 2})
        got = await peer.drain()
        assert [c["cmd"] for c in got] == [
            "LocationInfo",
            "SetReply",
            "RoomUpdate",
            "PrintJSON",
            "PrintJSON",
        ]

    run(play)


def test_precollected_entrances_name_the_hint() -> None:
    room = _hint_room("s", [])
    room.entrances = {2: {2001: "Behind the Waterfall"}}

    async def main() -> None:
        async with asyncio.timeout(30), room:
            peer = await Peer.login(room, "Alice", "Clique")
            await peer.send({"cmd": "Say", "text": "!hint_location Desk"})
            await peer.send({"cmd": "CreateHints", "locations": [2001], "player": 2})
            await peer.drain()
            assert {(h.location, h.entrance) for h in room.hints[1]} == {
                (1001, ""),
                (2001, "Behind the Waterfall"),
            }

    asyncio.run(main())


# ---------------------------------------------------------------------- checksums


def test_checksums_are_the_generators() -> None:
    """data_package_checksum: SHA-1 of NetUtils.encode of the sorted package, groups
    with Everything/Everywhere: the corpus server's checksums for Archipelago and
    ChecksFinder (RoomInfo seq 1) come out of the packages it served (seq 5, 160)."""
    (info,) = corpus_frame(1)
    packages = corpus_frame(5)[0]["data"]["games"]
    assert ARCHIPELAGO.checksum == info["datapackage_checksums"]["Archipelago"]
    checks_finder = packages["ChecksFinder"]
    game = Game(
        "ChecksFinder",
        items=checks_finder["item_name_to_id"],
        locations=checks_finder["location_name_to_id"],
    )
    assert game.checksum == info["datapackage_checksums"]["ChecksFinder"]
    assert game.checksum == checks_finder["checksum"]
    stored = Game("ChecksFinder", items={}, locations={}, generator_checksum="f" * 40)
    assert stored.checksum == "f" * 40 and stored.data().checksum == "f" * 40


def test_a_client_holding_the_real_packages_downloads_nothing(tmp_path: Path) -> None:
    """A cache filled from the real server (corpus seq 5, kept as CommonClient keeps
    it: datapackage/<game>/<checksum>.json) has every package the room serves."""
    packages = corpus_frame(5)[0]["data"]["games"]
    for name, package in packages.items():
        folder = tmp_path / "datapackage" / name
        folder.mkdir(parents=True)
        text = json.dumps(package)
        (folder / f"{package['checksum']}.json").write_text(text, encoding="utf-8-sig")
    checks_finder = packages["ChecksFinder"]
    room = Room(
        games=[
            Game(
                "ChecksFinder",
                items=checks_finder["item_name_to_id"],
                locations=checks_finder["location_name_to_id"],
            )
        ],
        slots=[RoomSlot("Finder", "ChecksFinder", {81000: (80000, 1, 0)})],
    )

    async def main() -> None:
        async with asyncio.timeout(30), room:
            cache = DataPackageCache(tmp_path)
            client = await aio.connect(
                room.url, name="Finder", game="ChecksFinder", data_packages=cache
            )
            assert client.names.item_name(80000) == "Map Width"
            await client.close()
        assert not [f for d, f in room.frames if d == "c2s" and "GetDataPackage" in f]

    asyncio.run(main())


def test_room_info_lists_the_games_in_play_with_archipelago() -> None:
    """on_client_connected: checksums of the slots' games and "Archipelago" only."""
    room = Room(
        games=[Game("Clique", {"A": 1}, {"B": 2}), Game("Unused", {}, {})],
        slots=[RoomSlot("A", "Clique", {2: (1, 1, 0)})],
    )
    info = room._room_info()
    assert info.games == ["Archipelago", "Clique"]
    assert list(info.datapackage_checksums) == ["Archipelago", "Clique"]


# ---------------------------------------------------------------------- !commands


def test_help_lists_the_commands_as_the_reference() -> None:
    """CommandMeta: the base classes' !help, !license, !options first (corpus seq 91)."""
    (expected,) = corpus_frame(91)

    async def play(room: Room) -> None:
        peer = await Peer.login(room, "JSPlayer", "Clique")
        await peer.drain()
        await peer.send({"cmd": "Say", "text": "!help"})
        assert (await peer.drain())[1] == expected

    run(play)


def test_getitem_cheats_in_an_item() -> None:
    """_cmd_getitem: a close match, location -1, ItemCheat to all (corpus seq 106-108)."""
    assert corpus_frame(108)[0]["item"]["location"] == -1

    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique", items_handling=7)
        buddy = await Peer.login(room, "PyBuddy", "Quest")
        await js.drain()
        await buddy.drain()
        await js.send({"cmd": "Say", "text": "!getitem cake"})
        cheat = {
            "cmd": "PrintJSON",
            "data": [{"text": 'Cheat console: sending "Cake" to JSPlayer'}],
            "type": "ItemCheat",
            "team": 0,
            "receiving": 1,
            "item": {"item": 3, "location": -1, "player": 1, "flags": 0, "class": "NetworkItem"},
        }
        got = await js.drain()
        assert got[1:] == [
            cheat,
            {"cmd": "ReceivedItems", "index": 0, "items": [cheat["item"]]},
        ]
        assert (await buddy.drain())[1] == cheat
        await js.send({"cmd": "Say", "text": "!getitem Sword"})  # another game's item
        assert (await js.texts())[1][1].startswith("Didn't find something that closely matches")

    run(play)


def test_getitem_refused_when_cheats_are_off() -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        await js.drain()
        await js.send({"cmd": "Say", "text": "!getitem Cake"})
        assert await js.texts() == [
            ("Chat", "JSPlayer: !getitem Cake"),
            ("CommandResult", "Cheating is disabled."),
        ]

    run(play, item_cheat=False)


def test_license_answers_the_licence_text() -> None:
    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique")
        await js.drain()
        await js.send({"cmd": "Say", "text": "!license"})
        licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
        assert (await js.texts())[1] == ("CommandResult", licence)

    run(play)


def test_options_lists_the_simple_options() -> None:
    """CommonCommandProcessor._cmd_options: one text each, server_password hidden."""

    async def play(room: Room) -> None:
        js = await Peer.login(room, "JSPlayer", "Clique", password="pw")
        await js.drain()
        await js.send({"cmd": "Say", "text": "!options"})
        texts = [text for kind, text in await js.texts() if kind == "CommandResult"]
        assert texts[0] == "Current options:"
        assert texts[3].startswith("Option server_password is set to *")
        assert set(texts[3].rpartition(" ")[2]) == {"*"}
        assert 4 <= len(texts[3].rpartition(" ")[2]) <= 16
        assert texts[:3] + texts[4:] == [
            "Current options:",
            "Option hint_cost is set to 10",
            "Option location_check_points is set to 1",
            "Option password is set to pw",
            "Option release_mode is set to auto",
            "Option remaining_mode is set to goal",
            "Option collect_mode is set to auto",
            "Option countdown_mode is set to auto",
            "Option item_cheat is set to True",
            "Option compatibility is set to 2",
        ]

    run(play, password="pw")


def test_the_licence_constant_is_the_license_file() -> None:
    from gamecodec.archipelago.testing._license import LICENSE_TEXT

    assert Path(ROOT / "LICENSE").read_text(encoding="utf-8") == LICENSE_TEXT
