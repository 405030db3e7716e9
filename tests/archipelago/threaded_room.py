"""A testing.Room served from its own thread and event loop, so that a test
can stall it (block its loop) while the clients under test keep running."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from typing import Any

from gamecodec.archipelago.testing import Room


class ThreadedRoom:
    """``with ThreadedRoom(room) as served:`` serves ``room`` until the block ends."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="room", daemon=True)
        self.url = ""

    def __enter__(self) -> ThreadedRoom:
        self._thread.start()
        self.url = self.call(self.room.start())
        return self

    def __exit__(self, *exc: object) -> None:
        self.call(self.room.stop(), timeout=30.0)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30.0)
        self.loop.close()

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 10.0) -> Any:
        """Run ``coroutine`` on the room's loop; its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stall(self, seconds: float) -> None:
        """Block the room's loop for ``seconds`` (returns at once): it reads,
        answers and pings nothing meanwhile, as a server busy broadcasting."""
        self.loop.call_soon_threadsafe(time.sleep, seconds)

    async def drop_everyone(self) -> None:
        """Close every client's connection from the server side."""

        async def close_all() -> None:
            for client in list(self.room.clients):
                await client.socket.close()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(close_all(), self.loop))
