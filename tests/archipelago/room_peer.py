"""A bare websocket peer for the test room's tests: exact frames in, plain dicts out."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from gamecodec.archipelago.testing import Room
from tests.archipelago.rooms import make_room

Command = dict[str, Any]


def run(test: Callable[[Room], Awaitable[None]], **options: Any) -> None:
    """Run ``test`` against a fresh two-slot room (tests/archipelago/rooms.py)."""

    async def main() -> None:
        async with asyncio.timeout(30), make_room(**options) as room:
            await test(room)

    asyncio.run(main())


def connect_command(name: str, game: str, **fields: Any) -> Command:
    """A Connect as CommonClient writes it."""
    return {
        "cmd": "Connect",
        "password": None,
        "name": name,
        "game": game,
        "uuid": "u",
        "tags": fields.pop("tags", ["AP"]),
        "items_handling": fields.pop("items_handling", 7),
        "version": {"major": 0, "minor": 6, "build": 8, "class": "Version"},
        **fields,
    }


class Peer:
    """One connection; every command received is kept in :attr:`seen`."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.seen: list[Command] = []
        """Commands received and not yet taken by :meth:`expect` or :meth:`drain`."""
        self.closed = False

    @classmethod
    async def open(cls, room: Room) -> Peer:
        peer = cls(await ws_connect(room.url, proxy=None, max_size=None))
        await peer.expect("RoomInfo")
        return peer

    @classmethod
    async def login(cls, room: Room, name: str, game: str, **fields: Any) -> Peer:
        peer = await cls.open(room)
        await peer.send(connect_command(name, game, **fields))
        await peer.expect("Connected")
        return peer

    async def send(self, *commands: Command) -> None:
        await self.send_text(json.dumps(list(commands)))

    async def send_text(self, text: str) -> None:
        await self.socket.send(text)

    async def _next(self, timeout: float) -> list[Command] | None:
        try:
            async with asyncio.timeout(timeout):
                text = await self.socket.recv()
        except TimeoutError:
            return None
        except ConnectionClosed:
            self.closed = True
            return None
        frame: list[Command] = json.loads(text)
        self.seen.extend(frame)
        return frame

    async def expect(self, cmd: str, timeout: float = 3.0, **match: Any) -> Command:
        """Take the first command named ``cmd`` whose fields equal ``match`` from
        :attr:`seen` (waiting for it to arrive)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for command in self.seen:
                if command.get("cmd") == cmd and all(command.get(k) == v for k, v in match.items()):
                    self.seen.remove(command)
                    return command
            left = deadline - loop.time()
            if left <= 0 or self.closed:
                raise AssertionError(f"no {cmd} {match} in {self.seen}")
            await self._next(left)

    async def drain(self, quiet: float = 0.3) -> list[Command]:
        """Take everything in :attr:`seen` and what arrives until ``quiet`` seconds
        pass without a frame."""
        while await self._next(quiet) is not None:
            pass
        got, self.seen = self.seen, []
        return got

    async def texts(self, quiet: float = 0.3) -> list[tuple[str | None, str]]:
        """Take the PrintJSONs (as (type, text)) of :attr:`seen` and of what arrives
        until ``quiet``; other commands stay in :attr:`seen`."""
        got = await self.drain(quiet)
        self.seen = [c for c in got if c["cmd"] != "PrintJSON"]
        return [
            (c.get("type"), "".join(p.get("text", "") for p in c["data"]))
            for c in got
            if c["cmd"] == "PrintJSON"
        ]

    async def close(self) -> None:
        await self.socket.close()
