"""Load: 100 asyncio clients on one testing.Room served from its own thread,
each checking locations and chatting, with the room's loop blocked for 45 s in
the middle of the run while the clients keep going. Nothing may be lost: no
client disconnects, every inventory is exact, every chat line reaches every
client once. Run with ``-m slow`` (about a minute and a half).

The measured figures are printed (``-s`` shows them): clients, frames the
clients received, seconds.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from gamecodec.archipelago import aio
from gamecodec.archipelago import commands as C
from gamecodec.archipelago import session as S
from gamecodec.archipelago.testing import Game, Room, RoomSlot
from gamecodec.sessions import Traffic
from tests.archipelago.threaded_room import ThreadedRoom

CLIENTS = 100
LOCATIONS = 5  # per slot
CHATS = 3  # per client
STALL = 45.0
SPREAD = 60.0  # each client's actions are spread over this many seconds
STALL_AT = 8.0  # seconds into the run


def _room() -> tuple[Room, dict[int, set[tuple[int, int, int]]]]:
    """Slot n's location k holds item k+1 for slot n+k+1 (wrapping): every item
    goes to another slot. Returns the room and each slot's expected inventory."""
    locations = {
        f"Spot {n}-{k}": n * 100 + k for n in range(1, CLIENTS + 1) for k in range(LOCATIONS)
    }
    items = {f"Thing {k}": k + 1 for k in range(LOCATIONS)}
    game = Game("Load", items=items, locations=locations)
    expected: dict[int, set[tuple[int, int, int]]] = {n: set() for n in range(1, CLIENTS + 1)}
    slots = []
    for n in range(1, CLIENTS + 1):
        placed: dict[int, tuple[int, int, int]] = {}
        for k in range(LOCATIONS):
            receiver = (n + k) % CLIENTS + 1
            placed[n * 100 + k] = (k + 1, receiver, 0)
            expected[receiver].add((k + 1, n * 100 + k, n))
        slots.append(RoomSlot(f"P{n}", "Load", placed))
    return Room(games=[game], slots=slots), expected


class _Player:
    def __init__(self, client: aio.Client, slot: int) -> None:
        self.client = client
        self.slot = slot
        self.frames = 0
        self.chats: list[str] = []

    def tap(self, traffic: Traffic) -> None:
        if traffic.direction == "in":
            self.frames += 1

    async def read(self) -> None:
        async for event in self.client:
            if isinstance(event, S.MessageReceived) and event.message.type == "Chat":
                message = event.message.message
                assert isinstance(message, str)
                self.chats.append(message)

    async def act(self, started: float, rng: random.Random) -> None:
        actions: list[Any] = [("check", self.slot * 100 + k) for k in range(LOCATIONS)]
        actions += [("say", f"chat {self.slot}.{n}") for n in range(CHATS)]
        rng.shuffle(actions)
        times = sorted(rng.uniform(0.0, SPREAD) for _ in actions)
        loop = asyncio.get_running_loop()
        for at, (kind, value) in zip(times, actions, strict=True):
            await asyncio.sleep(max(0.0, started + at - loop.time()))
            if kind == "check":
                await self.client.check_locations([value])
            else:
                await self.client.say(value)


@pytest.mark.slow
def test_a_hundred_clients_through_a_45_second_stall() -> None:
    room, expected = _room()
    all_chats = sorted(f"chat {n}.{c}" for n in range(1, CLIENTS + 1) for c in range(CHATS))
    with ThreadedRoom(room) as served:

        async def main() -> tuple[int, float]:
            players: list[_Player] = []
            cache: dict[str, C.GameData] = {}
            for n in range(1, CLIENTS + 1):
                player = _Player(None, n)  # type: ignore[arg-type]
                player.client = await aio.connect(
                    served.url,
                    name=f"P{n}",
                    game="Load",
                    data_packages=cache,
                    tap=player.tap,
                    max_events=100_000,
                    request_timeout=120.0,
                )
                players.append(player)
            readers = [asyncio.create_task(p.read()) for p in players]
            loop = asyncio.get_running_loop()
            started = loop.time()
            wall = time.monotonic()
            rng = random.Random(23)
            actors = [asyncio.create_task(p.act(started, rng)) for p in players]
            await asyncio.sleep(STALL_AT)
            stalled_at = loop.time()
            served.stall(STALL)
            await asyncio.gather(*actors)  # the clients went on through the stall
            assert loop.time() - stalled_at > STALL * 0.8
            async with asyncio.timeout(120.0):
                while any(
                    len(p.client.items) < len(expected[p.slot]) or len(p.chats) < len(all_chats)
                    for p in players
                ):
                    await asyncio.sleep(0.25)
            await asyncio.sleep(1.0)  # anything extra (a duplicate) would show now
            seconds = time.monotonic() - wall
            for p in players:
                assert p.client.reconnects == 0 and p.client.state is aio.ClientState.LOGGED_IN
                assert p.client.events_dropped == 0
                got = [(i.item, i.location, i.player) for i in p.client.items]
                assert len(got) == len(expected[p.slot]) and set(got) == expected[p.slot]
                assert sorted(p.chats) == all_chats
            frames = sum(p.frames for p in players)
            for p in players:
                await p.client.close()
            await asyncio.gather(*readers)
            return frames, seconds

        frames, seconds = asyncio.run(main())
    assert len(room.extensions) == CLIENTS  # one connection each: no re-login
    print(
        f"\nload: {CLIENTS} clients, {frames} frames received, {seconds:.1f} s "
        f"(room stalled {STALL:.0f} s)"
    )
