"""What a test room serves: games, slots and the data storage operations."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gamecodec.archipelago import commands as C

__all__ = ["ARCHIPELAGO", "MAX_INT_BITS", "OPERATIONS", "Game", "RoomSlot", "check_size"]


@dataclass
class Game:
    """A game of the room: item and location names to ids (its DataPackage), and
    optional name groups (``_read_item_name_groups_{game}``, ``!hint`` by group).

    As Archipelago's ``AutoWorldRegister`` does for every world, the room adds the
    groups ``"Everything"`` (every item) and ``"Everywhere"`` (every location) to
    the ones given (:attr:`all_item_name_groups`, :attr:`all_location_name_groups`).
    ``generator_checksum`` is the checksum a generated multiworld stored for the game;
    without one the room computes it as the generator does (:attr:`checksum`)."""

    name: str
    items: dict[str, int]
    locations: dict[str, int]
    item_name_groups: dict[str, list[str]] = field(default_factory=dict)
    location_name_groups: dict[str, list[str]] = field(default_factory=dict)
    generator_checksum: str = ""

    @property
    def all_item_name_groups(self) -> dict[str, list[str]]:
        """The item name groups with ``"Everything"``, as the reference serves them."""
        return {**self.item_name_groups, "Everything": list(self.items)}

    @property
    def all_location_name_groups(self) -> dict[str, list[str]]:
        """The location name groups with ``"Everywhere"``, as the reference serves them."""
        return {**self.location_name_groups, "Everywhere": list(self.locations)}

    @property
    def checksum(self) -> str:
        """The game's DataPackage checksum: the generator's if one was stored, else
        SHA-1 of the package as Archipelago's ``data_package_checksum`` writes it
        (``NetUtils.encode``: compact JSON, not ASCII-escaped) with the keys in
        alphabetical order and the name groups sorted."""
        if self.generator_checksum:
            return self.generator_checksum
        package = {
            "item_name_groups": _sorted_groups(self.all_item_name_groups),
            "item_name_to_id": self.items,
            "location_name_groups": _sorted_groups(self.all_location_name_groups),
            "location_name_to_id": self.locations,
        }
        text = json.dumps(package, ensure_ascii=False, check_circular=False, separators=(",", ":"))
        return hashlib.sha1(text.encode()).hexdigest()

    def data(self) -> C.GameData:
        """The game's entry of a DataPackage (the reference leaves the groups out)."""
        return C.GameData(dict(self.items), dict(self.locations), self.checksum)


def _sorted_groups(groups: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: sorted(groups[name]) for name in sorted(groups)}


ARCHIPELAGO = Game(
    "Archipelago",
    items={"Nothing": -1},
    locations={"Cheat Console": -1, "Server": -2},
)
"""The reference's own game (worlds/generic): every room serves its DataPackage."""


@dataclass
class RoomSlot:
    """A player slot: ``locations`` maps each of its location ids to
    ``(item id, receiving slot number, flags)``; slots are numbered from 1 in order.
    ``start_inventory`` lists item ids the slot starts with (sent to clients that
    ask for them with items_handling bit ``0b100``, as ``location -2``)."""

    name: str
    game: str
    locations: dict[int, tuple[int, int, int]]
    slot_data: dict[str, Any] = field(default_factory=dict)
    start_inventory: list[int] = field(default_factory=list)
    slot_type: int = 1
    """``SlotType``: 1 a player, 0 a spectator (whose goal counts as reached)."""
    minimum_client_version: tuple[int, int, int] = (0, 0, 0)
    """The client version the slot's world requires (the room's own minimum applies too)."""


MAX_INT_BITS = 14_000
"""Integers a ``Set`` may make: about 4,200 decimal digits, under the 4,300-digit
limit Python (and so the reference's JSON encoder) writes."""

_MAX_SEQUENCE = 1_000_000
"""Items a ``Set`` may make a list or string hold by ``mul``."""

_MAX_REPEATED_CHARS = 16 * 1024 * 1024
"""JSON text a list repeated by ``mul`` may come to (what a client reads in one frame)."""


def check_size(operation: str, current: Any, value: Any) -> None:
    """Raise OverflowError before an operation that would make a value too large
    to send (an integer past :data:`MAX_INT_BITS`, a sequence past a million items,
    a list repeated past 16 MiB of JSON)."""
    if type(current) is bool or type(value) is bool:
        return
    if isinstance(current, int) and isinstance(value, int):
        bits = abs(current).bit_length()
        if operation == "left_shift" and value > 0 and bits + value > MAX_INT_BITS:
            raise OverflowError("the result would be too large")
        if operation == "pow" and bits > 1 and value > 0 and (bits - 1) * value > MAX_INT_BITS:
            raise OverflowError("the result would be too large")
        if operation == "mul" and bits + abs(value).bit_length() > MAX_INT_BITS + 1:
            raise OverflowError("the result would be too large")
    if operation == "mul":
        for seq, times in ((current, value), (value, current)):
            sized = isinstance(seq, (list, str)) and isinstance(times, int)
            if sized and len(seq) * max(times, 0) > _MAX_SEQUENCE:
                raise OverflowError("the result would be too large")
            repeated = sized and isinstance(seq, list) and times > 1
            if (
                repeated
                and len(json.dumps(seq, separators=(",", ":"))) * times > _MAX_REPEATED_CHARS
            ):
                raise OverflowError("the result would be too large")


def _remove(current: Any, value: Any) -> Any:
    """``remove_from_list``: the first equal item, if any (only lists have one)."""
    if not isinstance(current, list):
        raise TypeError("remove needs a list")  # the reference's AttributeError
    out = list(current)
    if value in out:
        out.remove(value)
    return out


def _pop(current: Any, value: Any) -> Any:
    if isinstance(current, list):
        out = list(current)
        out.pop(value)
        return out
    if isinstance(current, dict):
        out_dict = dict(current)
        out_dict.pop(value)
        return out_dict
    raise TypeError("pop needs a list or a dict")


def _update(current: Any, value: Any) -> Any:
    if isinstance(current, dict):
        return {**current, **value}
    if isinstance(current, list):
        return current + [x for x in value if x not in current]
    raise TypeError("update needs a dict or a list")


def _add(current: Any, value: Any) -> Any:
    """``operator.add``: a list takes only a list (a list and a str raise)."""
    return current + value


OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "replace": lambda current, value: value,
    "default": lambda current, value: current,
    "add": _add,
    "mul": lambda current, value: current * value,
    "pow": lambda current, value: current**value,
    "mod": lambda current, value: current % value,
    "floor": lambda current, value: math.floor(current),
    "ceil": lambda current, value: math.ceil(current),
    "max": max,
    "min": min,
    "xor": lambda current, value: current ^ value,
    "or": lambda current, value: current | value,
    "and": lambda current, value: current & value,
    "left_shift": lambda current, value: current << value,
    "right_shift": lambda current, value: current >> value,
    "remove": _remove,
    "pop": _pop,
    "update": _update,
}
"""The data storage operations of the reference server (``Set``)."""
