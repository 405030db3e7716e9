"""What a bot author expects from CommonClient and archipelago.js: names for
ids, PrintJSON as text, hints, sync, tags, send, players and aliases, hint
points, and the on-disk DataPackage cache."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago import commands as C
from gamecodec.archipelago import session as S
from gamecodec.archipelago._models import Hint, HintStatus
from gamecodec.archipelago.compat import Hint as ServerHint
from gamecodec.archipelago.datapackage import DataPackageCache, default_directory, safe_name
from gamecodec.archipelago.frames import decode, encode
from gamecodec.archipelago.names import Names
from gamecodec.archipelago.testing import Room
from tests.archipelago.rooms import CLIQUE, QUEST, make_room


def run(test: Callable[[Room], Awaitable[None]], **options: Any) -> None:
    async def main() -> None:
        async with asyncio.timeout(20), make_room(**options) as room:
            await test(room)

    asyncio.run(main())


def test_names_players_and_printjson_as_text() -> None:
    async def play(room: Room) -> None:
        js = await aio.connect(room.url, name="JSPlayer", game="Clique")
        buddy = await aio.connect(room.url, name="PyBuddy", game="Quest")
        assert [(p.slot, p.name) for p in js.players] == [(1, "JSPlayer"), (2, "PyBuddy")]
        assert js.names.item_name(501, 2) == "Sword"
        assert js.names.item_name(3) == "Cake"  # our own game by default
        assert js.names.location_name(1002) == "The Item on the Desk"
        assert js.names.location_name(2001, 2) == "Chest"
        assert js.names.item_name(99) == "Unknown item (ID: 99)"
        assert js.names.item_id("Sword", "Quest") == 501
        assert js.names.location_id("The Lamp") == 1003
        assert js.names.player_name(2) == "PyBuddy"
        assert js.names.player_name(0) == "Archipelago" and js.names.game_of(0) == "Archipelago"
        assert js.names.player_name(7) == "Unknown player (slot 7)"
        await js.check_locations([1002])
        while (message := await buddy.wait_for(S.MessageReceived)).message.type != "ItemSend":
            pass
        assert message.text == "1 sent 501 to 2 (1002)"  # the plain parts, as before
        assert (
            buddy.render(message.message) == "JSPlayer sent Sword to PyBuddy (The Item on the Desk)"
        )
        await js.close()
        await buddy.close()

    run(play)


def test_aliases_and_hint_points_follow_room_update() -> None:
    session = _logged_in()
    assert session.hint_points == 3 and session.names.player_name(2) == "PyBuddy"
    update = C.RoomUpdate(
        hint_points=7,
        players=[
            C.Player(0, 1, "JSPlayer", "JSPlayer"),
            C.Player(0, 2, "Bud (PyBuddy)", "PyBuddy"),
        ],
    )
    session.receive_frame(encode([update]), 0.0)
    assert session.hint_points == 7
    assert session.names.player_name(2) == "Bud (PyBuddy)"
    assert [p.alias for p in session.players] == ["JSPlayer", "Bud (PyBuddy)"]


def _logged_in(slot_info: dict[str, C.Slot] | None = None) -> S.ClientSession:
    session = S.ClientSession("JSPlayer", "Clique")
    room_info = C.RoomInfo(
        False,
        ["Clique", "Quest"],
        ["AP"],
        C.VersionInfo(0, 6, 8),
        datapackage_checksums={"Clique": CLIQUE.checksum, "Quest": QUEST.checksum},
    )
    session.receive_frame(encode([room_info]), 0.0)
    package = C.DataPackage(C.DataPackageData({"Clique": CLIQUE.data(), "Quest": QUEST.data()}))
    session.receive_frame(encode([package]), 0.0)
    connected = C.Connected(
        0,
        1,
        [C.Player(0, 1, "JSPlayer", "JSPlayer"), C.Player(0, 2, "PyBuddy", "PyBuddy")],
        [1001],
        [],
        slot_info=slot_info
        or {"1": C.Slot("JSPlayer", "Clique", 1), "2": C.Slot("PyBuddy", "Quest", 1)},
        hint_points=3,
    )
    session.receive_frame(encode([connected]), 0.0)
    session.frames_to_send()
    return session


def test_slot_info_keys_that_are_not_slot_numbers_are_left_out() -> None:
    # "\u00b2" (superscript two) passes str.isdigit but not int()
    slots = {"1": C.Slot("JSPlayer", "Clique", 1), "\u00b2": C.Slot("X", "Quest", 1)}
    slots |= {"-3": C.Slot("Group", "Quest", 2), "x": C.Slot("Y", "Quest", 1)}
    session = _logged_in(slots)
    assert sorted(session.slot_info) == [-3, 1]


HINT = {
    "receiving_player": 1,
    "finding_player": 2,
    "location": 2002,
    "item": 2,
    "found": False,
    "entrance": "",
    "item_flags": 1,
    "status": 30,
    "class": "Hint",
}


def test_hint_commands_and_hint_events() -> None:
    session = _logged_in()
    assert session.hints_key == "_read_hints_0_1"
    session.create_hints([2002], player=2)
    session.create_hints([1001], status=HintStatus.HINT_PRIORITY)
    session.update_hint(2, 2002, HintStatus.HINT_AVOID)
    session.watch_hints()
    request_id = session.get_hints(0.0)
    sent = [decode(f)[0] for f in session.frames_to_send()]
    assert sent[:3] == [
        C.CreateHints([2002], 2),
        C.CreateHints([1001], status=30),
        C.UpdateHint(2, 2002, 20),
    ]
    assert sent[3] == C.SetNotify(["_read_hints_0_1"])
    assert isinstance(sent[4], C.Get) and sent[4].keys == ["_read_hints_0_1"]
    retrieved = C.Retrieved({"_read_hints_0_1": [HINT]})
    retrieved.set_extra({"request_id": request_id})
    read, changed = session.receive_frame(encode([retrieved]), 0.0)
    assert isinstance(read, S.StorageRead) and isinstance(changed, S.HintsChanged)
    expected = Hint(1, 2, 2002, 2, False, "", 1, HintStatus.HINT_PRIORITY)
    assert changed.request_id == request_id and changed.hints == [expected]
    notice = C.SetReply("_read_hints_0_1", value=[HINT, {**HINT, "found": True, "status": 40}])
    _, changed = session.receive_frame(encode([notice]), 0.0)
    assert isinstance(changed, S.HintsChanged) and changed.request_id is None
    assert [h.status for h in session.hints] == [30, 40]


def test_hints_sync_send_and_tags_over_the_wire() -> None:
    async def play(room: Room) -> None:
        js = await aio.connect(room.url, name="JSPlayer", game="Clique")
        assert await js.hints() == []  # the room's hints key (empty)
        await js.watch_hints()
        await js.create_hints([1001])
        await js.update_hint(1, 1001, HintStatus.HINT_PRIORITY)
        await js.check_locations([1001])
        await js.wait_for(S.ItemsReceived)
        await js.sync()
        again = await js.wait_for(S.ItemsReceived)
        assert again.index == 0 and [i.item for i in again.items] == [3]
        await js.send({"cmd": "Say", "text": "plain dict"}, C.Say("typed"))
        texts = set()
        while len(texts) < 2:
            message = await js.wait_for(S.MessageReceived)
            texts.add(message.text)
        assert texts == {"JSPlayer: plain dict", "JSPlayer: typed"}
        await js.update_tags(["AP", "Tracker"])
        assert js.tags == ["AP", "Tracker"]
        await js.say("done")  # its echo: the room has read everything before it
        while "done" not in (await js.wait_for(S.MessageReceived)).text:
            pass
        sent = [f for d, f in room.frames if d == "c2s"]
        assert '[{"cmd":"ConnectUpdate","tags":["AP","Tracker"]}]' in sent
        assert '[{"cmd":"CreateHints","locations":[1001]}]' in sent
        assert '[{"cmd":"UpdateHint","player":1,"location":1001,"status":30}]' in sent
        await js.close()

    run(play)


# ------------------------------------------------------------------ the DataPackage cache


def test_the_disk_cache_is_where_and_how_common_client_keeps_it(tmp_path: Path) -> None:
    async def play(room: Room) -> None:
        cache = DataPackageCache(tmp_path)
        client = await aio.connect(room.url, name="JSPlayer", game="Clique", data_packages=cache)
        await client.close()
        path = tmp_path / "datapackage" / "Clique" / f"{CLIQUE.checksum}.json"
        raw = path.read_bytes()
        assert raw.startswith(b"\xef\xbb\xbf")  # utf-8-sig, as the reference writes
        assert json.loads(raw.decode("utf-8-sig")) == {
            "item_name_to_id": CLIQUE.items,
            "location_name_to_id": CLIQUE.locations,
            "checksum": CLIQUE.checksum,
        }
        downloads = sum(1 for d, f in room.frames if d == "c2s" and "GetDataPackage" in f)
        # a new cache object (a new process) reads the files: no download
        fresh = DataPackageCache(tmp_path)
        again = await aio.connect(room.url, name="PyBuddy", game="Quest", data_packages=fresh)
        assert again.names.item_name(501) == "Sword"
        assert sum(1 for d, f in room.frames if d == "c2s" and "GetDataPackage" in f) == downloads
        await again.close()
        # a damaged file is a miss, downloaded again
        path.write_text("{not json", encoding="utf-8")
        third = await aio.connect(
            room.url, name="JSPlayer", game="Clique", data_packages=DataPackageCache(tmp_path)
        )
        assert third.names.item_name(3) == "Cake"
        assert sum(1 for d, f in room.frames if d == "c2s" and "GetDataPackage" in f) > downloads
        await third.close()

    run(play)


def test_cache_paths_and_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_directory() == tmp_path / "Archipelago"
    assert safe_name('A<Link>: "to/the\\\\past"?*|') == "ALink tothepast"
    cache = DataPackageCache(tmp_path)
    cache.store("G", C.GameData({}, {}, "../../evil"))  # not a file name: memory only
    assert not list(tmp_path.rglob("*.json"))
    assert cache.lookup("G", "../../evil") is not None and len(cache) == 1
    cache.store("G", C.GameData({}, {}, "nul\x00"))  # not a file name either
    assert not list(tmp_path.rglob("*.json"))


@pytest.mark.parametrize("game", ["..", ".", "", "a\x00b", " ", "..\u2028"])
def test_a_game_name_from_the_server_stays_in_its_folder(tmp_path: Path, game: str) -> None:
    """The game's name comes from the server: ``..`` would write beside the
    ``datapackage`` folder, a NUL made the write raise ValueError in the
    session's handler. Such a package is kept in memory only."""
    root = tmp_path / "cache"
    cache = DataPackageCache(root)
    cache.store(game, C.GameData({"Cake": 1}, {}, "abc"))
    written = [p.relative_to(root / "datapackage") for p in root.rglob("*.json")]
    assert all(len(p.parts) == 2 and p.parts[0] not in ("", ".", "..") for p in written)
    assert cache.lookup(game, "abc") is not None


def _hint_names() -> Names:
    return Names(
        games={
            "Quest": C.GameData({"Sword": 501}, {"Chest": 2001}),
            "Clique": C.GameData({"Cake": 3}, {"The Lamp": 1003}),
        },
        slot_info={1: C.Slot("Alice", "Quest", 1), 2: C.Slot("Bob", "Clique", 1)},
        players=[C.Player(0, 1, "Alice", "Alice"), C.Player(0, 2, "Bobby (Bob)", "Bob")],
        slot=1,
    )


@pytest.mark.parametrize(
    ("hint", "line"),
    [
        (
            Hint(1, 2, 1003, 501, True, status=HintStatus.HINT_FOUND),
            "[Hint]: Alice's Sword is at The Lamp in Bobby (Bob)'s World. (found)",
        ),
        (
            Hint(2, 1, 2001, 3, False, "Cave Door", status=HintStatus.HINT_PRIORITY),
            "[Hint]: Bobby (Bob)'s Cake is at Chest in Alice's World at Cave Door. (priority)",
        ),
        (  # ids no package names: the numbers, as CommonClient shows them
            Hint(1, 7, 9, 99, False),
            "[Hint]: Alice's Unknown item (ID: 99) is at Unknown location (ID: 9) in"
            " Unknown player (slot 7)'s World. (unspecified)",
        ),
    ],
)
def test_a_hint_describes_itself_with_names(hint: Hint, line: str) -> None:
    # the text of NetUtils.py Hint.as_network_message (Archipelago), as
    # CommonClient's JSONtoTextParser prints it: item in the receiver's game,
    # location in the finder's
    names = _hint_names()
    assert hint.describe(names) == line
    sent = ServerHint(*hint).as_network_message()
    message = C.PrintJSON([C.MessagePart(**part) for part in sent["data"]], type="Hint")
    assert names.render(message) == line  # the server's own message renders the same
