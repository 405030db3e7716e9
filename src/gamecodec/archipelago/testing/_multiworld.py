"""A multiworld described in JSON, for the standalone room."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gamecodec.archipelago.testing._room import Room
from gamecodec.archipelago.testing._world import Game, RoomSlot

__all__ = ["OPTIONS", "load_multiworld", "room_from_json"]

OPTIONS = (
    "password",
    "seed_name",
    "hint_cost",
    "location_check_points",
    "release_mode",
    "collect_mode",
    "remaining_mode",
    "countdown_mode",
)
"""Room options a multiworld file may set (top-level keys)."""


def _game(name: str, data: dict[str, Any]) -> Game:
    return Game(
        name,
        items={str(k): int(v) for k, v in data["items"].items()},
        locations={str(k): int(v) for k, v in data["locations"].items()},
        item_name_groups={k: list(v) for k, v in data.get("item_name_groups", {}).items()},
        location_name_groups={k: list(v) for k, v in data.get("location_name_groups", {}).items()},
    )


def _slot(data: dict[str, Any], games: dict[str, Game]) -> RoomSlot:
    game = games.get(data["game"])
    if game is None:
        raise ValueError(f"slot {data['name']!r} plays unknown game {data['game']!r}")
    locations: dict[int, tuple[int, int, int]] = {}
    for key, value in data["locations"].items():
        location = game.locations[key] if key in game.locations else int(key)
        item, receiver, *flags = value
        locations[location] = (int(item), int(receiver), int(flags[0]) if flags else 0)
    return RoomSlot(
        str(data["name"]),
        game.name,
        locations,
        slot_data=dict(data.get("slot_data", {})),
        start_inventory=[int(item) for item in data.get("start_inventory", [])],
    )


def room_from_json(data: dict[str, Any], **overrides: Any) -> Room:
    """A :class:`Room` for a multiworld description (the format in the docs)."""
    games = {name: _game(name, game) for name, game in data["games"].items()}
    slots = [_slot(slot, games) for slot in data["slots"]]
    options = {key: data[key] for key in OPTIONS if key in data}
    return Room(games=games.values(), slots=slots, **{**options, **overrides})


def load_multiworld(path: str | Path, **overrides: Any) -> Room:
    """A :class:`Room` for the multiworld file at ``path`` (UTF-8 JSON)."""
    with Path(path).open(encoding="utf-8") as file:
        return room_from_json(json.load(file), **overrides)
