"""A small Archipelago room server for tests and client authors.

:class:`Room` serves a multiworld you define in Python (games with item and
location names, slots with their locations and what is at each) over real
websockets (``websockets`` asyncio API, permessage-deflate negotiated with the
reference server's settings: window bits 11, memLevel 4). It speaks the
protocol through the typed codec, and implements what a client needs to be
tested against: RoomInfo, GetDataPackage, Connect (password, slot, game,
version and items_handling checks), LocationChecks (items are delivered to
their receivers, ItemSend notices broadcast), LocationScouts, Say (Chat),
Get/Set/SetNotify data storage with the 18 operations and the ``_read_`` keys,
Bounce (DeathLink), StatusUpdate, Sync and ConnectUpdate.

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

Like the reference, it drops a client whose frame cannot be decoded (bad
JSON, not a list, a command without a string ``cmd``, a Connect whose version
lacks its class) and ignores commands other than Connect/GetDataPackage until
the client is logged in. It keeps everything in memory; it is not a game
server for real sessions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory

from gamecodec.archipelago import commands as C
from gamecodec.archipelago._models import ClientStatus
from gamecodec.archipelago.frames import decode, encode
from gamecodec.errors import DecodeError

__all__ = ["OPERATIONS", "Game", "Room", "RoomSlot"]

NON_PLAYING_TAGS = frozenset({"Tracker", "TextOnly", "HintGame"})


@dataclass
class Game:
    """A game of the room: item and location names to ids (its DataPackage)."""

    name: str
    items: dict[str, int]
    locations: dict[str, int]

    @property
    def checksum(self) -> str:
        """The game's DataPackage checksum (SHA-1 of its sorted name-to-id tables)."""
        text = json.dumps(
            {"item_name_to_id": self.items, "location_name_to_id": self.locations},
            sort_keys=True,
        )
        return hashlib.sha1(text.encode()).hexdigest()

    def data(self) -> C.GameData:
        """The game's entry of a DataPackage."""
        return C.GameData(dict(self.items), dict(self.locations), self.checksum)


@dataclass
class RoomSlot:
    """A player slot: ``locations`` maps each of its location ids to
    ``(item id, receiving slot number, flags)``; slots are numbered from 1 in order."""

    name: str
    game: str
    locations: dict[int, tuple[int, int, int]]
    slot_data: dict[str, Any] = field(default_factory=dict)


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


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


@dataclass(eq=False)
class _Client:
    socket: ServerConnection
    slot: int = 0
    team: int = 0
    tags: list[str] = field(default_factory=list)
    items_handling: int = 0
    auth: bool = False
    sent_items: int = 0


class Room:
    """An in-memory room server over websockets; ``async with room:`` starts it."""

    def __init__(
        self,
        games: Iterable[Game],
        slots: Iterable[RoomSlot],
        *,
        password: str | None = None,
        seed_name: str = "gamecodec-test-room",
        hint_cost: int = 10,
        location_check_points: int = 1,
        version: tuple[int, int, int] = (0, 6, 8),
        required_client_version: tuple[int, int, int] = (0, 5, 0),
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.games = {game.name: game for game in games}
        self.slots = list(slots)
        for slot in self.slots:
            if slot.game not in self.games:
                raise ValueError(f"slot {slot.name!r} plays unknown game {slot.game!r}")
        self.password = password
        self.seed_name = seed_name
        self.hint_cost = hint_cost
        self.location_check_points = location_check_points
        self.version = version
        self.required_client_version = required_client_version
        self.host = host
        self.port = port
        self.checked: dict[int, set[int]] = {n: set() for n in range(1, len(self.slots) + 1)}
        self.received: dict[int, list[C.Item]] = {n: [] for n in range(1, len(self.slots) + 1)}
        self.status: dict[int, int] = {n: 0 for n in range(1, len(self.slots) + 1)}
        self.storage: dict[str, Any] = {}
        self.notify: dict[str, set[_Client]] = {}
        self.clients: set[_Client] = set()
        self.frames: list[tuple[str, str]] = []
        """Every frame, as ``("c2s" | "s2c", text)``, in order (broadcasts once)."""
        self.extensions: list[str | None] = []
        """The negotiated ``Sec-WebSocket-Extensions`` of each connection, in order."""
        self._server: Server | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        """``ws://host:port`` of the running server."""
        if self._server is None:
            raise RuntimeError("the room is not running")
        host, port = next(iter(self._server.sockets)).getsockname()[:2]
        return f"ws://{host}:{port}"

    async def start(self) -> str:
        """Start serving (permessage-deflate as the reference server); returns :attr:`url`."""
        deflate = ServerPerMessageDeflateFactory(
            server_max_window_bits=11,
            client_max_window_bits=11,
            compress_settings={"memLevel": 4},
        )
        self._server = await serve(
            self._serve_client, self.host, self.port, compression=None, extensions=[deflate]
        )
        return self.url

    async def stop(self) -> None:
        """Stop serving and close every client's connection."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> Room:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ sending

    def _encode(self, commands: list[Any]) -> str:
        text = encode(commands)
        self.frames.append(("s2c", text))
        return text

    async def _send(self, client: _Client, commands: list[Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await client.socket.send(self._encode(commands))

    def _broadcast(self, clients: Iterable[_Client], commands: list[Any]) -> None:
        targets = [c.socket for c in clients]
        if targets:
            broadcast(targets, self._encode(commands))

    def _authed(self) -> list[_Client]:
        return [c for c in self.clients if c.auth]

    # ------------------------------------------------------------------ state

    def _room_info(self) -> C.RoomInfo:
        version = C.VersionInfo(*self.version)
        return C.RoomInfo(
            password=self.password is not None,
            games=sorted({"Archipelago", *self.games}),
            tags=["AP"],
            version=version,
            generator_version=version,
            permissions={"release": 6, "remaining": 2, "collect": 6},
            hint_cost=self.hint_cost,
            location_check_points=self.location_check_points,
            datapackage_checksums={name: game.checksum for name, game in self.games.items()},
            seed_name=self.seed_name,
            time=time.time(),
        )

    def _players(self) -> list[C.Player]:
        return [C.Player(0, n, s.name, s.name) for n, s in enumerate(self.slots, 1)]

    def _items_for(self, client: _Client, items: list[C.Item]) -> list[C.Item]:
        if not client.items_handling & 0b001:
            return []
        own = bool(client.items_handling & 0b010)
        return [i for i in items if own or i.player != client.slot]

    # ------------------------------------------------------------------ serving

    async def _serve_client(self, socket: ServerConnection) -> None:
        client = _Client(socket)
        self.clients.add(client)
        response = socket.response
        self.extensions.append(
            None if response is None else response.headers.get("Sec-WebSocket-Extensions")
        )
        try:
            await self._send(client, [self._room_info()])
            async for message in socket:
                if isinstance(message, bytes):
                    break  # the reference drops binary frames
                self.frames.append(("c2s", message))
                try:
                    commands = decode(message)
                except DecodeError:
                    break
                for command in commands:
                    if not await self._dispatch(client, command):
                        return
        except ConnectionClosed:
            pass
        finally:
            self.clients.discard(client)
            for subscribers in self.notify.values():
                subscribers.discard(client)
            if client.auth:
                slot = self.slots[client.slot - 1]
                self._broadcast(
                    self._authed(),
                    [
                        C.PrintJSON(
                            [C.MessagePart(f"{slot.name} has left the game.")],
                            type="Part",
                            team=0,
                            slot=client.slot,
                        )
                    ],
                )

    async def _dispatch(self, client: _Client, command: Any) -> bool:
        """Handle one command; False drops the client."""
        if isinstance(command, C.Connect):
            await self._on_connect(client, command)
        elif isinstance(command, C.GetDataPackage):
            names = command.games if isinstance(command.games, list) else list(self.games)
            games = {n: self.games[n].data() for n in names if n in self.games}
            await self._send(client, [C.DataPackage(C.DataPackageData(games))])
        elif not client.auth or not isinstance(command, C.Command):
            return True
        elif isinstance(command, C.LocationChecks):
            await self._on_checks(client, command.locations)
        elif isinstance(command, C.LocationScouts):
            slot = self.slots[client.slot - 1]
            found = []
            for loc in command.locations:
                if loc in slot.locations:
                    item_id, receiver, flags = slot.locations[loc]
                    found.append(C.Item(item_id, loc, receiver, flags))
            await self._send(client, [C.LocationInfo(found)])
        elif isinstance(command, C.Say):
            name = self.slots[client.slot - 1].name
            self._broadcast(
                self._authed(),
                [
                    C.PrintJSON(
                        [C.MessagePart(f"{name}: {command.text}")],
                        type="Chat",
                        team=0,
                        slot=client.slot,
                        message=command.text,
                    )
                ],
            )
        elif isinstance(command, C.Get):
            reply = C.Retrieved({key: self._read(key) for key in command.keys})
            reply.set_extra(command.extra)
            await self._send(client, [reply])
        elif isinstance(command, C.Set):
            return await self._on_set(client, command)
        elif isinstance(command, C.SetNotify):
            for key in command.keys:
                self.notify.setdefault(key, set()).add(client)
        elif isinstance(command, C.Bounce):
            self._on_bounce(command)
        elif isinstance(command, C.StatusUpdate):
            self.status[client.slot] = command.status
            if command.status == ClientStatus.CLIENT_GOAL:
                name = self.slots[client.slot - 1].name
                self._broadcast(
                    self._authed(),
                    [
                        C.PrintJSON(
                            [C.MessagePart(f"{name} has completed their goal.")],
                            type="Goal",
                            team=0,
                            slot=client.slot,
                        )
                    ],
                )
        elif isinstance(command, C.Sync):
            items = self._items_for(client, self.received[client.slot])
            await self._send(client, [C.ReceivedItems(0, items)])
        elif isinstance(command, C.ConnectUpdate):
            if isinstance(command.tags, list):
                client.tags = list(command.tags)
            if isinstance(command.items_handling, int):
                client.items_handling = command.items_handling
        return True

    async def _on_connect(self, client: _Client, command: C.Connect) -> None:
        errors = []
        number = next((n for n, s in enumerate(self.slots, 1) if s.name == command.name), 0)
        if self.password is not None and command.password != self.password:
            errors.append("InvalidPassword")
        if not number:
            errors.append("InvalidSlot")
        elif command.game != self.slots[number - 1].game and not NON_PLAYING_TAGS & set(
            command.tags
        ):
            errors.append("InvalidGame")
        version = (command.version.major, command.version.minor, command.version.build)
        if version < self.required_client_version:
            errors.append("IncompatibleVersion")
        handling = command.items_handling
        if not 0 <= handling <= 7 or (handling & 0b110 and not handling & 0b001):
            errors.append("InvalidItemsHandling")
        if errors:
            await self._send(client, [C.ConnectionRefused(errors)])
            return
        slot = self.slots[number - 1]
        client.slot, client.tags, client.items_handling = number, list(command.tags), handling
        client.auth = True
        connected = C.Connected(
            team=0,
            slot=number,
            players=self._players(),
            missing_locations=[loc for loc in slot.locations if loc not in self.checked[number]],
            checked_locations=[loc for loc in slot.locations if loc in self.checked[number]],
            slot_info={str(n): C.Slot(s.name, s.game, 1, []) for n, s in enumerate(self.slots, 1)},
            hint_points=0,
            slot_data=dict(slot.slot_data) if command.slot_data is not False else C.UNSET,
        )
        items = self._items_for(client, self.received[number])
        client.sent_items = len(self.received[number])
        frame: list[Any] = [connected]
        if items:
            frame.append(C.ReceivedItems(0, items))
        await self._send(client, frame)
        client_version = ".".join(map(str, version))
        text = (
            f"{slot.name} (Team #1) playing {slot.game} has joined. "
            f"Client({client_version}), {command.tags}."
        )
        self._broadcast(
            self._authed(),
            [
                C.PrintJSON(
                    [C.MessagePart(text)], type="Join", team=0, slot=number, tags=list(command.tags)
                )
            ],
        )

    async def _on_checks(self, client: _Client, locations: list[int]) -> None:
        sender = client.slot
        slot = self.slots[sender - 1]
        new = [
            loc for loc in locations if loc in slot.locations and loc not in self.checked[sender]
        ]
        if not new:
            return
        notices: list[Any] = []
        by_receiver: dict[int, list[C.Item]] = {}
        for loc in new:
            self.checked[sender].add(loc)
            item_id, receiver, flags = slot.locations[loc]
            item = C.Item(item_id, loc, sender, flags)
            self.received[receiver].append(item)
            by_receiver.setdefault(receiver, []).append(item)
            notices.append(self._item_send(sender, receiver, item))
        self._broadcast(self._authed(), notices)
        for receiver, items in by_receiver.items():
            before = self.received[receiver][: len(self.received[receiver]) - len(items)]
            for other in self._authed():
                if other.slot == receiver:
                    mine = self._items_for(other, items)
                    if mine:  # indexed within what this client receives
                        start = len(self._items_for(other, before))
                        await self._send(other, [C.ReceivedItems(start, mine)])
        update = C.RoomUpdate(
            hint_points=len(self.checked[sender]) * self.location_check_points,
            checked_locations=new,
        )
        for other in self._authed():
            if other.slot == sender:
                await self._send(other, [update])

    @staticmethod
    def _item_send(sender: int, receiver: int, item: C.Item) -> C.PrintJSON:
        parts = [
            C.MessagePart(str(sender), type="player_id"),
            C.MessagePart(" sent "),
            C.MessagePart(str(item.item), player=receiver, flags=item.flags, type="item_id"),
            C.MessagePart(" to "),
            C.MessagePart(str(receiver), type="player_id"),
            C.MessagePart(" ("),
            C.MessagePart(str(item.location), player=sender, type="location_id"),
            C.MessagePart(")"),
        ]
        return C.PrintJSON(parts, type="ItemSend", receiving=receiver, item=item)

    def _read(self, key: str) -> Any:
        if key == "_read_race_mode":
            return 0
        if key.startswith("_read_slot_data_"):
            number = key.removeprefix("_read_slot_data_")
            if number.isdigit() and 0 < int(number) <= len(self.slots):
                return self.slots[int(number) - 1].slot_data
            return None
        if key.startswith("_read_hints_"):
            return []
        if key.startswith("_read_client_status_"):
            number = key.rsplit("_", 1)[-1]
            return self.status.get(int(number), 0) if number.isdigit() else None
        return self.storage.get(key)

    async def _on_set(self, client: _Client, command: C.Set) -> bool:
        if command.key.startswith("_read_"):  # read-only: the reference's answer
            await self._send(
                client, [C.InvalidPacket(type="arguments", text="Set", original_cmd="Set")]
            )
            return True
        default = 0 if command.default is C.UNSET else command.default  # args.get("default", 0)
        original = self.storage.get(command.key, default)
        value = original
        try:
            for op in command.operations:
                value = OPERATIONS[op.operation](value, op.value)
        except (KeyError, TypeError, ValueError, ArithmeticError, IndexError):
            return False  # the reference drops the client on a failing operation
        self.storage[command.key] = value
        reply = C.SetReply(
            key=command.key,
            default=command.default,
            want_reply=command.want_reply,
            operations=command.operations,
            original_value=original,
            slot=client.slot,
            value=value,
        )
        reply.set_extra(command.extra)
        targets = set(self.notify.get(command.key, set()))
        if command.want_reply is True:
            targets.add(client)
        self._broadcast(targets, [reply])
        return True

    def _on_bounce(self, command: C.Bounce) -> None:
        games = set(command.games) if isinstance(command.games, list) else set()
        slots = set(command.slots) if isinstance(command.slots, list) else set()
        tags = set(command.tags) if isinstance(command.tags, list) else set()
        targets = [
            c
            for c in self._authed()
            if c.slot in slots or self.slots[c.slot - 1].game in games or tags & set(c.tags)
        ]
        bounced = C.Bounced(command.games, command.slots, command.tags, command.data)
        bounced.set_extra(command.extra)
        self._broadcast(targets, [bounced])
