"""A tracker bot: watch a multiworld and say, with names, who found what.

A tracker logs in to a slot without playing it (``game=None``, the
``"Tracker"`` tag, no items): the server then sends it the room's PrintJSON
messages; the ``ItemSend`` ones say who found what for whom, and
``client.render`` turns them into text with player, item and location
names. Here it runs against a test room on loopback, where another client
plays Alice and checks her locations; point ``connect`` at a real room
(``wss://archipelago.gg:38281``) and drop the room and the player to use it.

Needs ``pip install "gamecodec[archipelago]"``.
"""

from __future__ import annotations

import asyncio

from gamecodec import archipelago as ap
from gamecodec.archipelago import aio
from gamecodec.archipelago.testing import Game, Room, RoomSlot


def world() -> Room:
    """Two players of one small game: each of Alice's locations holds an item."""
    game = Game(
        "Clique",
        items={"Button": 1, "Lamp": 2, "Key": 3},
        locations={"Press": 10, "Shelf": 11, "Drawer": 12},
    )
    slots = [
        RoomSlot("Alice", "Clique", locations={10: (1, 2, 0), 11: (2, 1, 1), 12: (3, 2, 0)}),
        RoomSlot("Bob", "Clique", locations={}),
    ]
    return Room(games=[game], slots=slots)


async def track(tracker: aio.Client, messages: int) -> list[str]:
    """The first ``messages`` items sent in the room, as text with names."""
    lines: list[str] = []
    async for event in tracker:
        if isinstance(event, ap.session.MessageReceived) and event.message.type == "ItemSend":
            lines.append(tracker.render(event.message))
            if len(lines) == messages:
                break
    return lines


async def main() -> None:
    async with world() as room:
        # a tracker of Bob's slot: it plays no game and takes no items
        tracker = await aio.connect(
            room.url, name="Bob", game=None, tags=["Tracker"], items_handling=0
        )
        watching = asyncio.create_task(track(tracker, messages=3))
        alice = await aio.connect(room.url, name="Alice", game="Clique")
        for location in (10, 11, 12):
            await alice.check_locations([location])
        for line in await watching:
            print(line)
        await alice.close()
        await tracker.close()


if __name__ == "__main__":
    asyncio.run(main())
