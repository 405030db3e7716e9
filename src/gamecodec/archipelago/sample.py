"""Synthetic Archipelago traffic for benchmarks and examples (no corpus needed).

The frames follow the shapes and mix of a real session (``corpus/archipelago/``
of the shared data): RoomInfo, DataPackage, Connected, ReceivedItems, single
PrintJSON notices and release bursts of 140 PrintJSON per frame, RoomUpdate,
data storage replies, DeathLink bounces and the client's commands. Ids are in
the ranges real worlds use (``0x1000000`` and up). Everything is seeded, so the
same call gives the same bytes.
"""

from __future__ import annotations

import random
from typing import Any

from gamecodec._public import public_dir
from gamecodec.archipelago._models import (
    NetworkItem,
    NetworkPlayer,
    NetworkSlot,
    SlotType,
    Version,
)
from gamecodec.archipelago.compat import encode

__all__ = ["large_room_session", "received_items", "received_items_frame", "sample_session"]

BASE_ID = 0x1000000
GAMES = ("Hollow Knight", "ChecksFinder", "APQuest", "Risk of Rain 2")
NAMES = ("Knight", "Finder", "Quester", "Survivor")


def received_items(count: int = 1000, seed: int = 1) -> list[NetworkItem]:
    """``count`` items as a server sends them on login (realistic ids and flags)."""
    rng = random.Random(seed)
    return [
        NetworkItem(
            BASE_ID + rng.randrange(0, 600),
            BASE_ID + rng.randrange(0, 3000) if rng.random() > 0.02 else -2,
            rng.randrange(1, 5),
            rng.choice((0, 0, 0, 1, 1, 2, 4)),
        )
        for _ in range(count)
    ]


def received_items_frame(count: int = 1000, seed: int = 1) -> str:
    """One ``ReceivedItems`` frame with ``count`` items."""
    frame: str = encode(
        [{"cmd": "ReceivedItems", "index": 0, "items": received_items(count, seed)}]
    )
    return frame


def _item_send(rng: random.Random, players: int = 4) -> dict[str, Any]:
    sender, receiver = rng.randrange(1, players + 1), rng.randrange(1, players + 1)
    item = NetworkItem(
        BASE_ID + rng.randrange(0, 600),
        BASE_ID + rng.randrange(0, 3000),
        sender,
        rng.choice((0, 1, 2)),
    )
    data: list[dict[str, Any]] = [
        {"text": str(sender), "type": "player_id"},
        {"text": " sent "},
        {"text": str(item.item), "player": receiver, "flags": item.flags, "type": "item_id"},
        {"text": " to "},
        {"text": str(receiver), "type": "player_id"},
        {"text": " ("},
        {"text": str(item.location), "player": sender, "type": "location_id"},
        {"text": ")"},
    ]
    return {
        "cmd": "PrintJSON",
        "data": data,
        "type": "ItemSend",
        "receiving": receiver,
        "item": item,
    }


def _data_package(rng: random.Random) -> dict[str, Any]:
    games: dict[str, Any] = {}
    for game in GAMES:
        games[game] = {
            "item_name_to_id": {
                f"{game} item {i}": BASE_ID + i for i in range(rng.randrange(80, 250))
            },
            "location_name_to_id": {
                f"{game} location {i}": BASE_ID + i for i in range(rng.randrange(100, 400))
            },
            "checksum": f"{rng.getrandbits(160):040x}",
        }
    return {"cmd": "DataPackage", "data": {"games": games}}


def _name(slot: int) -> str:
    return NAMES[slot - 1] if slot <= len(NAMES) else f"Player{slot}"


def large_room_session(players: int = 120, turns: int = 600, seed: int = 11) -> list[str]:
    """A big multiworld's session: ``players`` slots, ``turns`` rounds of play."""
    return sample_session(seed, players=players, turns=turns)


def sample_session(seed: int = 7, *, players: int = 4, turns: int = 60) -> list[str]:
    """A session's frames (server and client), in capture-like proportions."""
    rng = random.Random(seed)
    version = Version(0, 6, 8)
    count = players
    players_list = [NetworkPlayer(0, i, _name(i), _name(i)) for i in range(1, count + 1)]
    slots = {
        i: NetworkSlot(_name(i), GAMES[(i - 1) % len(GAMES)], SlotType.player, [])
        for i in range(1, count + 1)
    }
    frames: list[Any] = [
        [
            {
                "cmd": "RoomInfo",
                "password": False,
                "games": ["Archipelago", *GAMES],
                "tags": ["AP"],
                "version": version,
                "generator_version": version,
                "permissions": {"release": 6, "remaining": 2, "collect": 6},
                "hint_cost": 10,
                "location_check_points": 1,
                "datapackage_checksums": {g: f"{rng.getrandbits(160):040x}" for g in GAMES},
                "seed_name": str(rng.getrandbits(63)),
                "time": 1795254715.6189244,
            }
        ],
        [{"cmd": "GetDataPackage", "games": list(GAMES)}],
        [_data_package(rng)],
        [
            {
                "cmd": "Connect",
                "password": None,
                "name": "Knight",
                "version": version,
                "tags": ["AP", "DeathLink"],
                "items_handling": 7,
                "uuid": f"{rng.getrandbits(64):016x}",
                "game": "Hollow Knight",
                "slot_data": True,
            }
        ],
        [
            {
                "cmd": "Connected",
                "team": 0,
                "slot": 1,
                "players": players_list,
                "missing_locations": [BASE_ID + i for i in range(300)],
                "checked_locations": [],
                "slot_info": slots,
                "hint_points": 0,
                "slot_data": {
                    "seed": rng.getrandbits(32),
                    "options": {"goal": 1, "deathlink": True},
                },
            },
            {"cmd": "ReceivedItems", "index": 0, "items": received_items(40, seed)},
        ],
    ]
    for turn in range(turns):
        kind = turn % 10
        if kind in (0, 5):
            frames.append([_item_send(rng, count)])
        elif kind == 1:
            locations = [BASE_ID + rng.randrange(0, 3000) for _ in range(rng.randrange(1, 4))]
            frames.append([{"cmd": "LocationChecks", "locations": locations}])
            frames.append(
                [{"cmd": "RoomUpdate", "hint_points": turn, "checked_locations": locations}]
            )
        elif kind == 2:
            frames.append(
                [{"cmd": "ReceivedItems", "index": 40 + turn, "items": received_items(2, turn)}]
            )
        elif kind == 3:
            text = f'message {turn} with ünïcödé and "quotes"'
            frames.append([{"cmd": "Say", "text": text}])
            frames.append(
                [
                    {
                        "cmd": "PrintJSON",
                        "data": [{"text": f"Knight: {text}"}],
                        "type": "Chat",
                        "team": 0,
                        "slot": 1,
                        "message": text,
                    }
                ]
            )
        elif kind == 4:
            frames.append(
                [
                    {
                        "cmd": "Set",
                        "key": "counter",
                        "default": 0,
                        "want_reply": True,
                        "operations": [{"operation": "add", "value": turn}],
                    }
                ]
            )
            frames.append(
                [
                    {
                        "cmd": "SetReply",
                        "key": "counter",
                        "default": 0,
                        "want_reply": True,
                        "operations": [{"operation": "add", "value": turn}],
                        "original_value": turn,
                        "slot": 1,
                        "value": 2 * turn,
                    }
                ]
            )
        elif kind == 6:
            frames.append([{"cmd": "Get", "keys": ["_read_hints_0_1", "counter"]}])
            frames.append([{"cmd": "Retrieved", "keys": {"_read_hints_0_1": [], "counter": turn}}])
        elif kind == 7:
            death = {"time": 1795254800.25 + turn, "cause": "Knight fell", "source": "Knight"}
            frames.append([{"cmd": "Bounce", "tags": ["DeathLink"], "data": death}])
            frames.append([{"cmd": "Bounced", "tags": ["DeathLink"], "data": death}])
        elif kind == 8:
            frames.append([{"cmd": "StatusUpdate", "status": 20}])
        else:
            frames.append([_item_send(rng, count) for _ in range(140)])
    return [encode(frame) for frame in frames]


__dir__ = public_dir(__name__)
