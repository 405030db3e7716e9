"""A load test: many clients in one room at once, every check delivered.

``python load_test.py [CLIENTS [CHECKS]]``: ``CLIENTS`` players log in
together and each checks its ``CHECKS`` locations one request at a time;
every location holds an item for the next player, so each client must also
receive ``CHECKS`` items. The test counts what arrived and reports the rate.
Here the room is a test room on loopback; to load a server of your own, point
``room_url`` at it with a multiworld of as many slots.

Needs ``pip install "gamecodec[archipelago]"``.
"""

from __future__ import annotations

import asyncio
import sys
import time

from gamecodec import archipelago as ap
from gamecodec.archipelago import aio
from gamecodec.archipelago.testing import Game, Room, RoomSlot

CLIENTS = 20
CHECKS = 25


def world(clients: int, checks: int) -> Room:
    """``clients`` slots of one game; slot n's locations hold items for slot n + 1."""
    game = Game(
        "Clique",
        items={f"Item {k}": 1000 + k for k in range(checks)},
        locations={f"Spot {k}": 2000 + k for k in range(checks)},
    )
    slots = [
        RoomSlot(
            f"Player{n}",
            "Clique",
            locations={2000 + k: (1000 + k, (n + 1) % clients + 1, 0) for k in range(checks)},
        )
        for n in range(clients)
    ]
    return Room(games=[game], slots=slots)


async def player(url: str, name: str, checks: int) -> int:
    """Log in, check every location, wait for every item; how many arrived."""
    client = await aio.connect(url, name=name, game="Clique")
    try:
        for k in range(checks):
            await client.check_locations([2000 + k])
        while len(client.items) < checks:
            await client.wait_for(ap.session.ItemsReceived)
        return len(client.items)
    finally:
        await client.close()


async def main(clients: int, checks: int) -> None:
    async with world(clients, checks) as room:
        start = time.perf_counter()
        received = await asyncio.gather(
            *(player(room.url, f"Player{n}", checks) for n in range(clients))
        )
        elapsed = time.perf_counter() - start
    total = sum(received)
    print(f"{clients} clients, {clients * checks} checks, {total} items received")
    print(f"every client got all its items: {all(n == checks for n in received)}")
    print(f"{elapsed:.2f} s, {clients * checks / elapsed:.0f} checks per second")


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:3]]  # load_test.py [CLIENTS [CHECKS]]
    asyncio.run(main(*(numbers + [CLIENTS, CHECKS][len(numbers) :])))
