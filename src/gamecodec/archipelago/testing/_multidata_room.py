"""A generated multiworld (read by :func:`read_multidata`) as :class:`Room` arguments,
each part checked for the shape Archipelago 0.6.8's ``Main.py`` writes and
``MultiServer.Context._load`` reads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gamecodec.archipelago._models import HintStatus, NetworkSlot, SlotType
from gamecodec.archipelago._netutils import Hint
from gamecodec.archipelago.testing._multidata import (
    MAX_DECOMPRESSED,
    MultidataError,
    read_multidata,
)
from gamecodec.archipelago.testing._world import Game, RoomSlot

__all__ = ["room_arguments"]

_SERVER_VERSION = (0, 6, 8)


def _need(condition: bool, text: str) -> None:
    if not condition:
        raise MultidataError(f"the multiworld's {text}")


def _int_map(value: Any, what: str) -> dict[Any, Any]:
    _need(isinstance(value, dict), f"{what} is not a dict")
    _need(all(type(k) is int for k in value), f"{what} has a key that is not an int")
    return dict(value)


def _version(value: Any, what: str) -> tuple[int, int, int]:
    ok = isinstance(value, tuple | list) and len(value) == 3
    _need(ok and all(type(part) is int for part in value), f"{what} is not a version")
    return (value[0], value[1], value[2])


def _names(value: Any, what: str) -> dict[str, int]:
    _need(isinstance(value, dict), f"{what} is not a dict")
    ok = all(type(k) is str and type(v) is int for k, v in value.items())
    _need(ok, f"{what} is not names to ids")
    return dict(value)


def _groups(value: Any, what: str) -> dict[str, list[str]]:
    _need(isinstance(value, dict), f"{what} is not a dict")
    groups = {}
    for name, members in value.items():
        ok = type(name) is str and isinstance(members, list | tuple | set | frozenset)
        _need(ok and all(type(m) is str for m in members), f"{what} has a bad group")
        groups[name] = sorted(members)
    return groups


def _game(name: Any, package: Any) -> Game:
    _need(type(name) is str and isinstance(package, dict), "datapackage is malformed")
    what = f"datapackage of {name!r}"
    checksum = package.get("checksum", "")
    _need(type(checksum) is str, f"{what} has a checksum that is not a str")
    return Game(
        name,
        items=_names(package.get("item_name_to_id"), f"{what} item_name_to_id"),
        locations=_names(package.get("location_name_to_id"), f"{what} location_name_to_id"),
        item_name_groups=_groups(package.get("item_name_groups", {}), f"{what} item groups"),
        location_name_groups=_groups(
            package.get("location_name_groups", {}), f"{what} location groups"
        ),
        generator_checksum=checksum,
    )


def _locations(value: Any, slot: int) -> dict[int, tuple[int, int, int]]:
    placed = _int_map(value, f"locations of slot {slot}")
    out = {}
    for location, entry in placed.items():
        ok = isinstance(entry, tuple | list) and len(entry) == 3
        _need(ok and all(type(x) is int for x in entry), f"location {location} is malformed")
        out[location] = (entry[0], entry[1], entry[2])
    return out


def _slots(data: dict[str, Any]) -> list[RoomSlot]:
    info = _int_map(data.get("slot_info"), "slot_info")
    _need(sorted(info) == list(range(1, len(info) + 1)), "slots are not numbered 1 to N")
    locations = _int_map(data.get("locations"), "locations")
    slot_data = _int_map(data.get("slot_data", {}), "slot_data")
    start = _int_map(data.get("precollected_items", {}), "precollected_items")
    versions = data.get("minimum_versions", {})
    _need(isinstance(versions, dict), "minimum_versions is not a dict")
    clients = _int_map(versions.get("clients", {}), "minimum client versions")
    slots = []
    for number in sorted(info):
        network = info[number]
        _need(type(network) is NetworkSlot, f"slot {number} is not a NetworkSlot")
        _need(type(network.name) is str and type(network.game) is str, f"slot {number}")
        if int(network.type) & SlotType.group:
            raise MultidataError(
                f"slot {number} ({network.name!r}) is an item link group: not supported"
            )
        items = start.get(number, [])
        _need(isinstance(items, list), f"precollected items of slot {number}")
        _need(all(type(i) is int for i in items), f"precollected items of slot {number}")
        data_of = slot_data.get(number, {})
        _need(isinstance(data_of, dict), f"slot_data of slot {number} is not a dict")
        slots.append(
            RoomSlot(
                network.name,
                network.game,
                _locations(locations.get(number, {}), number),
                slot_data=data_of,
                start_inventory=list(items),
                slot_type=int(network.type),
                minimum_client_version=_version(
                    clients.get(number, (0, 0, 0)), f"client version of slot {number}"
                ),
            )
        )
    names = [slot.name for slot in slots]
    _need(len(set(names)) == len(names), "slot names are not unique")
    return slots


def _hints(value: Any, count: int) -> dict[int, set[Hint]]:
    kept = _int_map(value, "precollected_hints")
    out = {}
    for slot, hints in kept.items():
        _need(0 < slot <= count, f"precollected hints name slot {slot}")
        _need(isinstance(hints, set | frozenset | list), f"precollected hints of slot {slot}")
        out[slot] = {_hint(hint, slot) for hint in hints}
    return out


def _hint(hint: Any, slot: int) -> Hint:
    what = f"precollected hints of slot {slot}"
    _need(type(hint) is Hint, f"{what} hold a {type(hint).__name__}")
    numbers = (hint.receiving_player, hint.finding_player, hint.location, hint.item)
    _need(all(type(n) is int for n in (*numbers, hint.item_flags)), f"{what} hold a bad hint")
    _need(type(hint.found) is bool and type(hint.entrance) is str, f"{what} hold a bad hint")
    try:
        kept: Hint = hint._replace(status=HintStatus(hint.status))
    except ValueError:
        raise MultidataError(f"{what} hold an unknown status {hint.status!r}") from None
    return kept


def _spheres(value: Any) -> list[dict[int, set[int]]]:
    _need(isinstance(value, list), "spheres are not a list")
    spheres = []
    for sphere in value:
        by_slot = _int_map(sphere, "sphere")
        ok = all(
            isinstance(ids, set | frozenset | list) and all(type(i) is int for i in ids)
            for ids in by_slot.values()
        )
        _need(ok, "sphere holds a location that is not an int")
        spheres.append({slot: set(ids) for slot, ids in by_slot.items()})
    return spheres


def _entrances(value: Any) -> dict[int, dict[int, str]]:
    # Main.py: er_hint_data went through convert_to_base_types; MultiServer keys it by int()
    by_slot = _int_map(value, "er_hint_data")
    out: dict[int, dict[int, str]] = {}
    for slot, entrances in by_slot.items():
        _need(isinstance(entrances, dict), "er_hint_data is malformed")
        ok = all(type(k) is int and type(v) is str for k, v in entrances.items())
        _need(ok, "er_hint_data is malformed")
        out[slot] = dict(entrances)
    return out


_OPTION_TYPES: dict[str, Callable[[Any], Any]] = {
    "hint_cost": int,
    "location_check_points": int,
    "password": str,
    "release_mode": str,
    "remaining_mode": str,
    "collect_mode": str,
    "countdown_mode": str,
    "item_cheat": bool,
}
"""The reference's ``Context.simple_options`` the room takes (``server_password``
and ``compatibility`` have no meaning in the room)."""


def _options(value: Any) -> dict[str, Any]:
    """``Context._set_options``: each known option converted to its type (True,
    False and None kept as they are), ``disable_item_cheat`` inverted."""
    _need(isinstance(value, dict), "server_options are not a dict")
    options: dict[str, Any] = {}
    for key, option in value.items():
        convert = _OPTION_TYPES.get(key)
        if convert is not None:
            if option is None or isinstance(option, bool):
                if key == "password" and option is None:
                    options[key] = None  # no password
                elif isinstance(option, bool) and convert is not str:
                    options[key] = convert(option)
                continue  # a mode of None or True is one the room cannot run
            try:
                options[key] = convert(option)
            except (TypeError, ValueError):
                continue  # the reference logs "Could not set server option" and goes on
        elif key == "disable_item_cheat":
            options["item_cheat"] = not bool(option)
    return options


def room_arguments(
    path: str | Path, *, use_embedded_options: bool = True, max_size: int = MAX_DECOMPRESSED
) -> dict[str, Any]:
    """The :class:`Room` arguments for the multiworld at ``path``."""
    data = read_multidata(path, max_size=max_size)
    versions = data.get("minimum_versions")
    if not isinstance(versions, dict) or "server" not in versions:
        raise MultidataError("the multiworld's minimum_versions are missing")
    server = _version(versions["server"], "minimum server version")
    if server > _SERVER_VERSION:
        raise MultidataError(
            f"Supplied Multidata (.archipelago) requires a server of at least version "
            f"{server}, however this room is of version {_SERVER_VERSION}"
        )
    packages = data.get("datapackage", {})
    _need(isinstance(packages, dict), "datapackage is not a dict")
    games = [_game(name, package) for name, package in packages.items()]
    slots = _slots(data)
    known = {game.name for game in games}
    for slot in slots:
        if slot.game not in known:
            raise MultidataError(f"slot {slot.name!r} plays {slot.game!r}, not in the datapackage")
    seed_name = data.get("seed_name")
    _need(type(seed_name) is str, "seed_name is not a str")
    race_mode = data.get("race_mode", 0)
    _need(type(race_mode) is int, "race_mode is not an int")
    arguments: dict[str, Any] = {
        "games": games,
        "slots": slots,
        "seed_name": seed_name,
        "generator_version": _version(data.get("version"), "version"),
        "spheres": _spheres(data.get("spheres", [])),
        "hints": _hints(data.get("precollected_hints", {}), len(slots)),
        "entrances": _entrances(data.get("er_hint_data", {})),
        "race_mode": race_mode,
    }
    if use_embedded_options:
        arguments.update(_options(data.get("server_options", {})))
    return arguments
