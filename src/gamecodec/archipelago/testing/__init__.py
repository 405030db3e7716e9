"""A small Archipelago room server for tests and client authors.

:class:`Room` serves a multiworld you define in Python (games with item and
location names and name groups, slots with their locations, what is at each
and their start inventory) over real websockets (``websockets`` asyncio API,
permessage-deflate negotiated with the reference server's settings: window
bits 11, memLevel 4). It speaks the protocol through the typed codec and
answers as Archipelago's MultiServer does: RoomInfo, GetDataPackage, Connect
(password, slot, game, version and items_handling checks; Join, Tutorial
notices), LocationChecks (items delivered, ItemSend notices), LocationScouts
(``create_as_hint``), CreateHints, UpdateHint, Say (Chat and the ``!help``,
``!admin``, ``!players``, ``!status``, ``!alias``, ``!countdown``, ``!hint``, ``!hint_location``,
``!release``, ``!collect``, ``!remaining``, ``!missing``, ``!checked``,
``!getitem``, ``!license``, ``!options`` commands),
Get/Set/SetNotify data storage with the 18 operations and the ``_read_`` keys
(``hints``, ``client_status``, ``slot_data``, ``item_name_groups``,
``location_name_groups``, ``race_mode``, with SetReply updates), Bounce,
StatusUpdate (goal, release/collect per the room's modes), Sync and
ConnectUpdate (TagsChanged).

>>> import asyncio
>>> from gamecodec.archipelago.testing import Game, Room, RoomSlot
>>> room = Room(
...     games=[Game("Clique", items={"Button": 1}, locations={"Press": 10})],
...     slots=[RoomSlot("Alice", "Clique", locations={10: (1, 1, 0)})],
... )
>>> async def main() -> str:
...     async with room:                     # listens on 127.0.0.1, a free port
...         return room.url[:15]
>>> asyncio.run(main())
'ws://127.0.0.1:'

Bad input is answered as the reference answers it: ``InvalidPacket`` for a
``cmd`` that is not a string and for the arguments the reference checks
(``Say`` text, ``Get``/``SetNotify`` keys, ``Set`` on a ``_read_`` key,
scouted locations that are not integers, hint arguments, a Tracker's checks or
goal); the client is dropped where the reference's handler raises (not JSON, a
command without ``cmd``, a scout of a location the slot does not have, a
failing data storage operation); unknown commands, and any command but Connect
and GetDataPackage before login, are ignored. A ``Set`` whose result would be
too large to send is refused with ``InvalidPacket`` and not stored. The frame
log :attr:`Room.frames` is bounded. ``python -m gamecodec.archipelago.testing
--multiworld FILE.json --port N`` serves a multiworld described in JSON;
:meth:`Room.from_multidata` and ``python -m gamecodec.archipelago.testing serve
FILE.archipelago`` one Archipelago generated, read by a restricted unpickler
(:func:`read_multidata`: only the NetUtils classes a multiworld holds, anything
else refused with :class:`MultidataError`). It keeps everything in memory; it is
not a game server for real sessions.
"""

from __future__ import annotations

from gamecodec._public import public_dir
from gamecodec.archipelago.testing._framelog import FrameLog
from gamecodec.archipelago.testing._multidata import MultidataError, read_multidata
from gamecodec.archipelago.testing._multiworld import load_multiworld, room_from_json
from gamecodec.archipelago.testing._room import Room
from gamecodec.archipelago.testing._world import ARCHIPELAGO, OPERATIONS, Game, RoomSlot

__all__ = [
    "ARCHIPELAGO",
    "OPERATIONS",
    "FrameLog",
    "Game",
    "MultidataError",
    "Room",
    "RoomSlot",
    "load_multiworld",
    "read_multidata",
    "room_from_json",
]

__dir__ = public_dir(__name__)
