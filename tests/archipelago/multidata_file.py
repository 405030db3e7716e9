"""Writes ``.archipelago`` files shaped as Archipelago 0.6.8's generator writes them.

``Main.py`` (``write_multidata``) builds the multidata dict, then writes the
format byte 3 and ``zlib.compress(restricted_dumps(multidata), 9)``, where
``Utils.restricted_dumps`` is ``pickle.dumps(obj)`` (the default protocol: 4 on
the Pythons 0.6.8 runs on). The dict holds instances of ``NetUtils`` classes:
``NetworkSlot`` and ``Hint`` (``typing.NamedTuple``: pickled as NEWOBJ of the
class named ``NetUtils.<name>``) and the ``ByValue`` enums ``SlotType`` and
``HintStatus`` (``Utils.ByValue.__reduce_ex__``: REDUCE of the class with the
value). To write the same bytes without Archipelago, :func:`netutils_module`
builds stand-ins with those module and class names and :func:`write` puts them
in ``sys.modules["NetUtils"]`` only while pickling (pickle checks a class is
reachable by its name).
"""

from __future__ import annotations

import enum
import pickle
import sys
import types
import zlib
from pathlib import Path
from typing import Any, NamedTuple

PROTOCOL = 4
"""``pickle.DEFAULT_PROTOCOL`` of Python 3.8 to 3.13 (Archipelago 0.6.8 runs on 3.11-3.13)."""


class _ByValue:
    """``Utils.ByValue``: enums pickle as their class called with their value."""

    _value_: int

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, tuple[int]]:
        return self.__class__, (self._value_,)


class HintStatus(_ByValue, enum.IntEnum):
    """``NetUtils.HintStatus``."""

    HINT_UNSPECIFIED = 0
    HINT_NO_PRIORITY = 10
    HINT_AVOID = 20
    HINT_PRIORITY = 30
    HINT_FOUND = 40


class SlotType(_ByValue, enum.IntFlag):
    """``NetUtils.SlotType``."""

    spectator = 0b00
    player = 0b01
    group = 0b10


class NetworkSlot(NamedTuple):
    """``NetUtils.NetworkSlot``."""

    name: str
    game: str
    type: SlotType
    group_members: list[int] | tuple[int, ...] = ()


class Hint(NamedTuple):
    """``NetUtils.Hint``."""

    receiving_player: int
    finding_player: int
    location: int
    item: int
    found: bool
    entrance: str = ""
    item_flags: int = 0
    status: HintStatus = HintStatus.HINT_UNSPECIFIED


def netutils_module() -> types.ModuleType:
    """A module named ``NetUtils`` holding the stand-ins under their names."""
    module = types.ModuleType("NetUtils")
    for cls in (HintStatus, SlotType, NetworkSlot, Hint):
        cls.__module__ = "NetUtils"
        cls.__qualname__ = cls.__name__
        setattr(module, cls.__name__, cls)
    return module


def pickled(value: Any, protocol: int = PROTOCOL) -> bytes:
    """``pickle.dumps(value)`` with the stand-ins reachable as ``NetUtils.*``."""
    saved = sys.modules.get("NetUtils")
    sys.modules["NetUtils"] = netutils_module()
    try:
        return pickle.dumps(value, protocol=protocol)
    finally:
        if saved is None:
            del sys.modules["NetUtils"]
        else:
            sys.modules["NetUtils"] = saved


def write(path: Path, multidata: dict[str, Any], *, format_version: int = 3) -> Path:
    """Write ``multidata`` as ``Main.py`` writes a ``.archipelago`` file."""
    path.write_bytes(bytes([format_version]) + zlib.compress(pickled(multidata), 9))
    return path


CLIQUE_PACKAGE = {
    "item_name_groups": {"Everything": ["Button", "Cake", "Lamp"], "Food": ["Cake"]},
    "item_name_to_id": {"Button": 1, "Cake": 2, "Lamp": 3},
    "location_name_groups": {"Everywhere": ["Desk", "Door", "Press"]},
    "location_name_to_id": {"Press": 10, "Desk": 11, "Door": 12},
}
QUEST_PACKAGE = {
    "item_name_groups": {"Everything": ["Key", "Sword"]},
    "item_name_to_id": {"Sword": 501, "Key": 502},
    "location_name_groups": {"Everywhere": ["Altar", "Chest"]},
    "location_name_to_id": {"Chest": 2001, "Altar": 2002},
}
ARCHIPELAGO_PACKAGE = {
    "item_name_groups": {"Everything": ["Nothing"]},
    "item_name_to_id": {"Nothing": -1},
    "location_name_groups": {"Everywhere": ["Cheat Console", "Server"]},
    "location_name_to_id": {"Cheat Console": -1, "Server": -2},
    "checksum": "ac9141e9ad0318df2fa27da5f20c50a842afeecb",  # the corpus' RoomInfo
}


def example(**changes: Any) -> dict[str, Any]:
    """A two-player multiworld (Alice plays Clique, Bob Quest) with a spectator,
    in the layout of ``Main.py``'s ``multidata`` dict (its keys in its order)."""
    lamp = Hint(1, 2, 2002, 3, False, "", 0b001, HintStatus.HINT_PRIORITY)
    multidata: dict[str, Any] = {
        "slot_data": {1: {"color": "red"}, 2: {}, 3: {}},
        "slot_info": {
            1: NetworkSlot("Alice", "Clique", SlotType.player),
            2: NetworkSlot("Bob", "Quest", SlotType.player),
            3: NetworkSlot("Watcher", "Clique", SlotType.spectator),
        },
        "connect_names": {"Alice": (0, 1), "Bob": (0, 2), "Watcher": (0, 3)},
        "locations": {
            1: {10: (501, 2, 0b001), 11: (2, 1, 0), 12: (3, 1, 0b001)},
            2: {2001: (502, 2, 0b001), 2002: (3, 1, 0b001)},
            3: {},
        },
        "checks_in_area": {},
        "server_options": {
            "host": None,
            "port": 38281,
            "password": None,
            "server_password": None,
            "hint_cost": 50,
            "location_check_points": 2,
            "release_mode": "enabled",
            "collect_mode": "goal",
            "remaining_mode": "enabled",
            "countdown_mode": "auto",
            "disable_item_cheat": True,
            "compatibility": 2,
        },
        "er_hint_data": {2: {2002: "Behind the Waterfall"}},
        "precollected_items": {1: [2], 2: [], 3: []},
        "precollected_hints": {1: {lamp}, 2: {lamp}, 3: set()},
        "version": (0, 6, 8),
        "tags": ["AP"],
        "minimum_versions": {"server": (0, 5, 0), "clients": {1: (0, 5, 1), 2: (0, 5, 0)}},
        "seed_name": "12345678901234567890",
        "spheres": [{1: {11}, 2: {2001}}, {1: {10}, 2: {2002}}, {1: {12}}],
        "datapackage": {
            "Clique": {**CLIQUE_PACKAGE, "checksum": "c" * 40},
            "Quest": {**QUEST_PACKAGE, "checksum": "d" * 40},
            "Archipelago": ARCHIPELAGO_PACKAGE,
        },
        "race_mode": 0,
    }
    multidata.update(changes)
    return multidata
