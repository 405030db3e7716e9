"""``compat`` as ``NetUtils``: the names Archipelago's clients import from it,
used the way CommonClient / MultiServer use them (both codec twins)."""

from __future__ import annotations

import pickle
from types import ModuleType
from typing import Any, ClassVar

import pytest

from gamecodec.archipelago import compat as NetUtils
from gamecodec.archipelago.compat import (  # CommonClient's import line
    ClientStatus,
    Endpoint,
    HintStatus,
    JSONTypes,
    NetworkItem,
    NetworkSlot,
    Permission,
    RawJSONtoTextParser,
    SlotType,
    add_json_item,
    add_json_location,
    add_json_text,
    decode,
    encode,
)

NAMES = [
    "NetworkItem",
    "NetworkPlayer",
    "NetworkSlot",
    "JSONMessagePart",
    "Hint",
    "HintStatus",
    "SlotType",
    "ClientStatus",
    "Permission",
    "JSONTypes",
    "Version",
    "Endpoint",
    "JSONtoTextParser",
    "RawJSONtoTextParser",
    "HandlerMeta",
    "add_json_text",
    "add_json_item",
    "add_json_location",
    "add_json_hint_status",
    "color",
    "color_code",
    "color_codes",
    "status_names",
    "status_colors",
    "convert_to_base_types",
    "get_any_version",
    "allowlist",
    "custom_hooks",
    "GamesPackage",
    "DataPackage",
    "MultiData",
    "MinimumVersions",
    "encode",
    "decode",
]


def test_every_netutils_name_is_exported() -> None:
    missing = [name for name in NAMES if not hasattr(NetUtils, name)]
    assert missing == []
    assert set(NAMES) <= set(NetUtils.__all__)


def test_decoded_classes_are_the_exported_ones(codec: ModuleType) -> None:
    frame = codec.decode(
        '[{"cmd":"Connected","players":[{"team":0,"slot":1,"alias":"A","name":"A",'
        '"class":"NetworkPlayer"}],"slot_info":{"1":{"name":"A","game":"G","type":1,'
        '"group_members":[],"class":"NetworkSlot"}},"items":[{"item":1,"location":2,'
        '"player":1,"flags":0,"class":"NetworkItem"}],"version":{"Major":0,"Minor":6,'
        '"Build":8,"class":"Version"}}]'
    )[0]
    assert type(frame["players"][0]) is NetUtils.NetworkPlayer
    assert type(frame["slot_info"]["1"]) is NetworkSlot
    assert type(frame["items"][0]) is NetworkItem
    assert frame["version"] == NetUtils.Version(0, 6, 8)
    assert NetUtils.get_any_version({"MAJOR": "1", "minor": 2, "Build": 3}) == (1, 2, 3)
    assert set(NetUtils.allowlist) == {"NetworkPlayer", "NetworkItem", "NetworkSlot"}
    assert set(NetUtils.custom_hooks) == {"Version"}


def test_enums_and_flags_as_the_reference() -> None:
    assert Permission.from_text("auto-enabled") == Permission.auto_enabled == 7
    assert Permission.from_text("auto") == 6 and Permission.from_text("goal") == 2
    assert Permission.from_text("enabled") == 1 and Permission.from_text("disabled") == 0
    assert SlotType.group.always_goal and not SlotType.player.always_goal
    assert ClientStatus.CLIENT_GOAL == 30 and HintStatus.HINT_AVOID == 20
    # a str-mixin Enum: compares and encodes as its text, str() names the member
    assert JSONTypes.item_id == "item_id" and str(JSONTypes.item_id) == "JSONTypes.item_id"
    assert encode([JSONTypes.location_id]) == '["location_id"]'
    assert pickle.loads(pickle.dumps(HintStatus.HINT_FOUND)) is HintStatus.HINT_FOUND


def test_hint_methods_hash_and_network_message(codec: ModuleType) -> None:
    hint = NetUtils.Hint(1, 2, 1002, 501, False, item_flags=1, status=HintStatus.HINT_PRIORITY)
    found = hint._replace(found=True, status=HintStatus.HINT_FOUND)
    assert hash(hint) == hash(found) and hint != found  # the reference's hash
    assert not hint.local and NetUtils.Hint(1, 1, 5, 6, False).local

    class Ctx:
        location_checks: ClassVar[dict[tuple[int, int], set[int]]] = {(0, 2): {1002}}

    assert hint.re_check(Ctx(), 0) == found
    assert found.re_prioritize(Ctx(), HintStatus.HINT_AVOID) is found
    assert hint.re_prioritize(Ctx(), HintStatus.HINT_AVOID).status == HintStatus.HINT_AVOID
    assert codec.encode([hint.as_network_message()]) == (
        '[{"cmd":"PrintJSON","data":[{"text":"[Hint]: "},{"text":"1","type":"player_id"},'
        '{"text":"\'s "},{"text":"501","player":1,"flags":1,"type":"item_id"},'
        '{"text":" is at "},{"text":"1002","player":2,"type":"location_id"},'
        '{"text":" in "},{"text":"2","type":"player_id"},{"text":"\'s World"},{"text":". "},'
        '{"text":"(priority)","hint_status":30,"type":"hint_status"}],"type":"Hint",'
        '"receiving":1,"item":{"item":501,"location":1002,"player":2,"flags":1,'
        '"class":"NetworkItem"},"found":false}]'
    )
    entrance = NetUtils.Hint(1, 2, 3, 4, False, "Cave").as_network_message()["data"]
    assert entrance[-4:-2] == [{"text": "'s World at "}, {"text": "Cave", "type": "entrance_name"}]


class _Names:
    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def lookup_in_slot(self, code: int, slot: int) -> str:
        return self.names.get(code, f"Unknown (ID:{code})")


class _ClientContext:
    """The parts of CommonClient's context a text parser reads."""

    slot = 1
    player_names: ClassVar[dict[int, str]] = {1: "Alice", 2: "Bob"}
    item_names = _Names({501: "Sword"})
    location_names = _Names({1002: "Chest"})

    def slot_concerns_self(self, slot: int) -> bool:
        return slot == self.slot


def _item_send() -> list[dict[str, Any]]:
    """A PrintJSON ItemSend built as MultiServer builds it."""
    parts: list[dict[str, Any]] = []
    add_json_text(parts, 1, type=JSONTypes.player_id)
    add_json_text(parts, " sent ")
    add_json_item(parts, 501, 2, 0b001)
    add_json_text(parts, " to ")
    add_json_text(parts, 2, type=JSONTypes.player_id)
    add_json_text(parts, " (")
    add_json_location(parts, 1002, 1)
    add_json_text(parts, ")")
    return parts


def test_text_parsers_render_a_print_json_like_common_client(codec: ModuleType) -> None:
    wire = codec.encode([{"cmd": "PrintJSON", "data": _item_send(), "type": "ItemSend"}])
    parts = decode(wire)[0]["data"]
    assert RawJSONtoTextParser(_ClientContext())(parts) == "Alice sent Sword to Bob (Chest)"

    parts = decode(wire)[0]["data"]
    text = NetUtils.JSONtoTextParser(_ClientContext())(parts)
    magenta, plum = NetUtils.color_code("magenta"), NetUtils.color_code("plum")
    assert text.startswith(magenta + "Alice" + NetUtils.color_code("reset"))
    assert plum + "Sword" in text and NetUtils.color("x", "red") == "\x1b[31mx\x1b[0m"

    class Shouting(RawJSONtoTextParser):  # kvui-style override of one handler
        def _handle_item_name(self, node: Any) -> str:
            return str(node["text"]).upper()

    parser = Shouting(_ClientContext())
    assert set(parser.handlers) >= {"text", "player_id", "item_id", "item_name", "hint_status"}
    assert parser(decode(wire)[0]["data"]) == "Alice sent SWORD to Bob (Chest)"


def test_helpers_and_typed_dicts() -> None:
    parts: list[Any] = []
    NetUtils.add_json_hint_status(parts, HintStatus.HINT_FOUND)
    assert parts == [{"text": "(found)", "hint_status": 40, "type": "hint_status"}]
    assert NetUtils.status_colors[HintStatus.HINT_AVOID] == "salmon"
    converted = NetUtils.convert_to_base_types({"k": [HintStatus.HINT_FOUND, (2.5, None)]})
    assert converted == {"k": (40, (2.5, None))} and type(converted["k"][0]) is int
    with pytest.raises(Exception, match="Cannot handle"):
        NetUtils.convert_to_base_types(object())
    assert Endpoint("sock").socket == "sock"
    package: NetUtils.GamesPackage = {"item_name_to_id": {"A": 1}, "checksum": "x"}
    assert NetUtils.DataPackage(games={"G": package})["games"]["G"]["checksum"] == "x"
    slot = NetworkSlot("A", "G", SlotType.player)
    assert (
        encode([slot])
        == '[{"name":"A","game":"G","type":1,"group_members":[],"class":"NetworkSlot"}]'
    )
