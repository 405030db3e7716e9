"""The room server: connections, commands and the multiworld's state."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory

from gamecodec.archipelago import commands as C
from gamecodec.archipelago import compat
from gamecodec.archipelago._netutils import ClientStatus, Hint, Permission
from gamecodec.archipelago.frames import decode, encode
from gamecodec.archipelago.testing import _handlers, _hints, _raw
from gamecodec.archipelago.testing._common import (
    NON_PLAYING_TAGS,
    TEAM,
    Client,
    hint_value,
    to_parts,
)
from gamecodec.archipelago.testing._framelog import FrameLog
from gamecodec.archipelago.testing._license import LICENSE_TEXT
from gamecodec.archipelago.testing._world import ARCHIPELAGO, Game, RoomSlot
from gamecodec.errors import DecodeError

__all__ = ["Room"]

_CHUNK = 140  # ItemSend notices per broadcast frame, as the reference
_log = logging.getLogger("gamecodec.archipelago.testing")


class Room:
    """An in-memory room server over websockets; ``async with room:`` starts it.

    ``release_mode`` and ``collect_mode`` take the reference's texts
    (``"disabled"``, ``"enabled"``, ``"goal"``, ``"auto"``, ``"auto-enabled"``),
    ``remaining_mode`` ``"disabled"``, ``"enabled"`` or ``"goal"``, ``countdown_mode``
    ``"enabled"``, ``"disabled"`` or ``"auto"`` (under 30 slots); ``hint_cost`` is
    a percentage of a slot's locations, as in the reference. ``frame_log`` bounds
    :attr:`frames` (``max_frames``, ``max_chars``; ``(0, 0)`` keeps none).

    A generated multiworld's data: ``spheres`` (each ``{slot: {location, ...}}``,
    the order ``!hint`` prefers), ``hints`` (precollected hints by slot),
    ``entrances`` (``{slot: {location: entrance}}``, the hints' entrance texts),
    ``race_mode``; ``item_cheat`` allows ``!getitem`` (the reference's default);
    ``license_text`` is what ``!license`` answers. :meth:`from_multidata` reads
    all of it from an ``.archipelago`` file.
    """

    def __init__(
        self,
        games: Iterable[Game],
        slots: Iterable[RoomSlot],
        *,
        password: str | None = None,
        seed_name: str = "gamecodec-test-room",
        hint_cost: int = 10,
        location_check_points: int = 1,
        release_mode: str = "auto",
        collect_mode: str = "auto",
        remaining_mode: str = "goal",
        countdown_mode: str = "auto",
        version: tuple[int, int, int] = (0, 6, 8),
        generator_version: tuple[int, int, int] | None = None,
        required_client_version: tuple[int, int, int] = (0, 5, 0),
        item_cheat: bool = True,
        spheres: Iterable[Mapping[int, Iterable[int]]] = (),
        hints: Mapping[int, Iterable[Hint]] | None = None,
        entrances: Mapping[int, Mapping[int, str]] | None = None,
        race_mode: int = 0,
        license_text: str = LICENSE_TEXT,
        host: str = "127.0.0.1",
        port: int = 0,
        frame_log: tuple[int, int] = (10_000, 8 * 1024 * 1024),
    ) -> None:
        self.games = {game.name: game for game in games}
        self.packages = {ARCHIPELAGO.name: ARCHIPELAGO, **self.games}
        """The DataPackages served: the reference's own "Archipelago" game and :attr:`games`."""
        self.slots = list(slots)
        self.slot_numbers = {slot.name: n for n, slot in enumerate(self.slots, 1)}
        for slot in self.slots:
            if slot.game not in self.games:
                raise ValueError(f"slot {slot.name!r} plays unknown game {slot.game!r}")
        self.password = password
        self.seed_name = seed_name
        self.hint_cost = hint_cost
        self.location_check_points = location_check_points
        self.release_mode = release_mode
        self.collect_mode = collect_mode
        self.remaining_mode = remaining_mode
        self.countdown_mode = countdown_mode
        self.version = version
        self.generator_version = version if generator_version is None else generator_version
        self.required_client_version = required_client_version
        self.item_cheat = item_cheat
        self.compatibility = 2
        """The reference's ``compatibility`` option (2: any client), for ``!options``."""
        self.spheres = [{int(k): set(v) for k, v in sphere.items()} for sphere in spheres]
        self.entrances = {int(k): dict(v) for k, v in (entrances or {}).items()}
        self.race_mode = race_mode
        self.license_text = license_text
        self.host = host
        self.port = port
        numbers = range(1, len(self.slots) + 1)
        self.checked: dict[int, set[int]] = {n: set() for n in numbers}
        self.received: dict[int, list[C.Item]] = {n: [] for n in numbers}
        """Each slot's received items in order (from its own world too)."""
        self._from_others: dict[int, list[C.Item]] = {n: [] for n in numbers}
        self.start_items: dict[int, list[C.Item]] = {
            n: [C.Item(item, -2, 0) for item in s.start_inventory]
            for n, s in enumerate(self.slots, 1)
        }
        self.status: dict[int, Any] = {
            n: int(ClientStatus.CLIENT_GOAL if s.slot_type != 1 else ClientStatus.CLIENT_UNKNOWN)
            for n, s in enumerate(self.slots, 1)
        }
        """Each slot's client status: what its last StatusUpdate sent, as the reference
        keeps it (any JSON value); a slot that is not a player has reached its goal."""
        self.hints: dict[int, set[Hint]] = {n: set() for n in numbers}
        for number, kept in (hints or {}).items():
            self.hints[number].update(kept)
        self.hints_used: dict[int, int] = {n: 0 for n in numbers}
        self.aliases: dict[int, str] = {}
        """Aliases set with ``!alias``, by slot."""
        self.storage: dict[str, Any] = {}
        self.notify: dict[str, set[Client]] = {}
        self.clients: set[Client] = set()
        self.frames = FrameLog(*frame_log)
        """The most recent frames as ``("c2s" | "s2c", text)`` (broadcasts once), bounded."""
        self.extensions: list[str | None] = []
        """The negotiated ``Sec-WebSocket-Extensions`` of each connection, in order."""
        self.random = random.Random(seed_name)
        self._readers = self._read_keys()
        self._server: Server | None = None
        self._countdown = 0
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def from_multidata(
        cls,
        path: str | Path,
        *,
        use_embedded_options: bool = True,
        max_size: int = 256 * 1024 * 1024,
        **overrides: Any,
    ) -> Room:
        """A room for a generated multiworld: the ``.archipelago`` file at ``path``
        (or the ``.zip`` holding one), read by a restricted unpickler
        (:func:`~gamecodec.archipelago.testing.read_multidata`); its embedded server
        options apply unless ``use_embedded_options`` is false; ``overrides`` (any
        :class:`Room` argument) win. Raises :class:`MultidataError` for a file
        that is not a multiworld this room can serve (or over ``max_size`` bytes)."""
        from gamecodec.archipelago.testing._multidata_room import room_arguments

        arguments = room_arguments(
            path, use_embedded_options=use_embedded_options, max_size=max_size
        )
        return cls(**{**arguments, **overrides})

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
        for task in list(self._tasks):
            task.cancel()
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

    async def _send(self, client: Client, commands: list[Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await client.socket.send(self._encode(commands))

    async def _send_encoded(self, client: Client, text: str) -> None:
        self.frames.append(("s2c", text))
        with contextlib.suppress(ConnectionClosed):
            await client.socket.send(text)

    def _broadcast(self, clients: Iterable[Client], commands: list[Any]) -> None:
        targets = [c.socket for c in clients]
        if targets:
            broadcast(targets, self._encode(commands))

    def _authed(self) -> list[Client]:
        return [c for c in self.clients if c.auth]

    def _clients_of(self, slot: int) -> list[Client]:
        return [c for c in self.clients if c.auth and c.slot == slot]

    def broadcast_text(self, text: str, **extra: Any) -> None:
        """A ``PrintJSON`` notice to every logged-in client that takes text."""
        targets = [c for c in self._authed() if not c.no_text]
        self._broadcast(targets, [C.PrintJSON([C.MessagePart(text)], **extra)])

    def notify_client(self, client: Client, texts: list[str], **extra: Any) -> None:
        """One ``PrintJSON`` per text to one client (if it takes text)."""
        if client.auth and not client.no_text and texts:
            commands = [C.PrintJSON([C.MessagePart(text)], **extra) for text in texts]
            broadcast([client.socket], self._encode(commands))

    # ------------------------------------------------------------------ state

    def permissions(self) -> dict[str, int]:
        """The room's ``permissions`` (release, remaining, collect) as the reference sends them."""
        return {
            "release": int(Permission.from_text(self.release_mode)),
            "remaining": int(Permission.from_text(self.remaining_mode)),
            "collect": int(Permission.from_text(self.collect_mode)),
        }

    def _room_info(self) -> C.RoomInfo:
        games = sorted({"Archipelago", *(slot.game for slot in self.slots)})
        return C.RoomInfo(
            password=bool(self.password),
            games=games,
            tags=["AP"],
            version=C.VersionInfo(*self.version),
            generator_version=C.VersionInfo(*self.generator_version),
            permissions=self.permissions(),
            hint_cost=self.hint_cost,
            location_check_points=self.location_check_points,
            datapackage_checksums={
                name: game.checksum for name, game in self.packages.items() if name in games
            },
            seed_name=self.seed_name,
            time=time.time(),
        )

    def name(self, slot: int) -> str:
        """The name of slot ``slot`` (numbered from 1)."""
        return self.slots[slot - 1].name

    def aliased_name(self, slot: int) -> str:
        """``"alias (name)"`` if the slot set an alias (``!alias``), else its name."""
        alias = self.aliases.get(slot)
        return f"{alias} ({self.name(slot)})" if alias else self.name(slot)

    def _players(self) -> list[C.Player]:
        return [
            C.Player(TEAM, n, self.aliased_name(n), s.name) for n, s in enumerate(self.slots, 1)
        ]

    def update_aliases(self) -> None:
        """Send every logged-in client the players with their aliases (RoomUpdate)."""
        self._broadcast(self._authed(), [C.RoomUpdate(players=self._players())])

    def item_name(self, slot: int, item: int) -> str:
        """An item's name in slot ``slot``'s game (or the Archipelago game's, as the
        reference adds those to every game), as the reference names unknown ones."""
        game = self.games[self.slots[slot - 1].game]
        names = {v: k for k, v in {**game.items, **ARCHIPELAGO.items}.items()}
        return names.get(item, f"Unknown item (ID:{item})")

    def location_name(self, slot: int, location: int) -> str:
        """A location's name in slot ``slot``'s game (or the Archipelago game's)."""
        game = self.games[self.slots[slot - 1].game]
        names = {v: k for k, v in {**game.locations, **ARCHIPELAGO.locations}.items()}
        return names.get(location, f"Unknown location (ID:{location})")

    def sphere_of(self, slot: int, location: int) -> int:
        """The reference's ``get_sphere``: the index of the sphere holding slot
        ``slot``'s ``location``, -1 without spheres (KeyError if none holds it)."""
        if not self.spheres:
            return -1
        for index, sphere in enumerate(self.spheres):
            if location in sphere.get(slot, ()):
                return index
        raise KeyError(
            f"No Sphere found for location ID {location} belonging to player {slot}. "
            "Location or player may not exist."
        )

    def hint_cost_of(self, slot: int) -> int:
        """Points one hint costs slot ``slot``."""
        if self.hint_cost:
            return max(1, int(self.hint_cost * 0.01 * len(self.slots[slot - 1].locations)))
        return 0

    def points(self, slot: int) -> int:
        """Slot ``slot``'s hint points."""
        earned = self.location_check_points * len(self.checked[slot])
        return earned - self.hint_cost_of(slot) * self.hints_used[slot]

    def _inventory_parts(self, client: Client) -> tuple[list[C.Item], list[C.Item]]:
        """(start inventory, received items) ``client`` gets by its items_handling."""
        if not client.items_handling & 0b001:
            return [], []
        slot = client.slot
        start = self.start_items[slot] if client.items_handling & 0b100 else []
        own = bool(client.items_handling & 0b010)
        return start, self.received[slot] if own else self._from_others[slot]

    def _inventory(self, client: Client) -> list[C.Item]:
        """What ``client`` receives, by its items_handling (start inventory first)."""
        start, items = self._inventory_parts(client)
        return start + items

    def _send_new_items(self, slots: set[int]) -> None:
        """Send the clients of ``slots`` what they have not been sent yet."""
        for client in self._authed():
            if client.slot not in slots:
                continue
            start, items = self._inventory_parts(client)
            total, sent = len(start) + len(items), client.sent_items
            if total > sent:
                new = start[sent:] + items[max(0, sent - len(start)) :]
                self._broadcast([client], [C.ReceivedItems(sent, new)])
                client.sent_items = total

    # ------------------------------------------------------------------ read keys

    def _read_keys(self) -> dict[str, Callable[[], Any]]:
        race_mode = functools.partial(int, self.race_mode)
        readers: dict[str, Callable[[], Any]] = {"race_mode": race_mode}
        for n, slot in enumerate(self.slots, 1):
            readers[f"hints_{TEAM}_{n}"] = functools.partial(self._hint_values, n)
            readers[f"client_status_{TEAM}_{n}"] = functools.partial(self.status.__getitem__, n)
            readers[f"slot_data_{n}"] = functools.partial(getattr, slot, "slot_data")
        for name, game in self.games.items():
            readers[f"item_name_groups_{name}"] = functools.partial(
                getattr, game, "all_item_name_groups"
            )
            readers[f"location_name_groups_{name}"] = functools.partial(
                getattr, game, "all_location_name_groups"
            )
        return readers

    def _hint_values(self, slot: int) -> list[dict[str, Any]]:
        hints = sorted(self.rechecked_hints(slot), key=lambda h: (h.finding_player, h.location))
        return [hint_value(h) for h in hints]

    def read(self, key: str) -> Any:
        """A key's value as ``Get`` answers it (the ``_read_`` keys computed)."""
        if key.startswith("_read_"):
            reader = self._readers.get(key[6:])
            return None if reader is None else reader()
        return self.storage.get(key)

    def _changed(self, key: str, value: Any) -> None:
        targets = self.notify.get(key)
        if targets:
            self._broadcast(targets, [C.SetReply(key=key, value=value)])

    # ------------------------------------------------------------------ serving

    async def _serve_client(self, socket: ServerConnection) -> None:
        client = Client(socket)
        self.clients.add(client)
        response = socket.response
        negotiated = None if response is None else response.headers.get("Sec-WebSocket-Extensions")
        self.extensions.append(negotiated)
        client.compressed = "permessage-deflate" in (negotiated or "")
        try:
            await self._send(client, [self._room_info()])
            async for message in socket:
                if isinstance(message, bytes):
                    break  # the reference drops binary frames
                self.frames.append(("c2s", message))
                if not await self._on_frame(client, message):
                    break
        except ConnectionClosed:
            pass
        finally:
            self._on_left(client)

    async def _on_frame(self, client: Client, message: str) -> bool:
        """Handle one frame; False drops the client."""
        try:
            commands = decode(message)
        except DecodeError:
            return await _raw.handle_raw_frame(self, client, message)
        if any(type(command) is C.Connect for command in commands):
            return await _raw.handle_raw_frame(self, client, message)  # keys left out matter
        for command in commands:
            if not await self._dispatch(client, command):
                return False
        return True

    async def _dispatch(self, client: Client, command: Any) -> bool:
        """Handle one decoded command; False drops the client (as the reference does
        when its handler raises). An unexpected error is logged, never raised."""
        try:
            return await _handlers.handle(self, client, command)
        except Exception:
            _log.exception("the room's handler failed; the client is dropped")
            return False

    def _on_left(self, client: Client) -> None:
        self.clients.discard(client)
        for subscribers in self.notify.values():
            subscribers.discard(client)
        if client.auth:
            if not self._clients_of(client.slot):
                self.update_status(client, ClientStatus.CLIENT_UNKNOWN)
            verb = next(
                (f"stopped {v}" for tag, v in NON_PLAYING_TAGS.items() if tag in client.tags),
                "left",
            )
            version = ".".join(map(str, client.version))
            self.broadcast_text(
                f"{self.aliased_name(client.slot)} (Team #{TEAM + 1}) has {verb} the game. "
                f"Client({version}), {client.tags}.",
                type="Part",
                team=TEAM,
                slot=client.slot,
            )

    # ------------------------------------------------------------------ shared actions

    def update_status(self, client: Client, status: int) -> None:
        """The reference's ``update_client_status`` (goal cannot be undone)."""
        slot = client.slot
        if self.status[slot] == ClientStatus.CLIENT_GOAL:
            return
        if status == ClientStatus.CLIENT_GOAL:
            self._on_goal(client)
            others = [n for n in self.status if n != slot]
            if all(self.status[n] == ClientStatus.CLIENT_GOAL for n in others):
                self.broadcast_text(
                    f"Team #{TEAM + 1} has completed all of their games! Congratulations!"
                )
        self.status[slot] = status
        self._changed(f"_read_client_status_{TEAM}_{slot}", status)

    def _on_goal(self, client: Client) -> None:
        slot = client.slot
        self.broadcast_text(
            f"{self.aliased_name(slot)} (Team #{TEAM + 1}) has completed their goal.",
            type="Goal",
            team=TEAM,
            slot=slot,
        )
        if "auto" in self.collect_mode:
            self.collect(slot)
        if "auto" in self.release_mode:
            self.release(slot)

    def release(self, slot: int) -> None:
        """Send every unchecked item of slot ``slot``'s world (``!release``)."""
        self.broadcast_text(
            f"{self.name(slot)} (Team #{TEAM + 1}) has released all remaining items from "
            "their world.",
            type="Release",
            team=TEAM,
            slot=slot,
        )
        self.register_checks(slot, self.slots[slot - 1].locations)
        self._send_checked(slot)

    def collect(self, slot: int) -> None:
        """Check every location, in any world, holding an item for slot ``slot`` (``!collect``)."""
        self.broadcast_text(
            f"{self.name(slot)} (Team #{TEAM + 1}) has collected their items from other worlds.",
            type="Collect",
            team=TEAM,
            slot=slot,
        )
        for source, other in enumerate(self.slots, 1):
            mine = [loc for loc, (_, receiver, _) in other.locations.items() if receiver == slot]
            if mine:
                self.register_checks(source, mine)
                self._send_checked(source)

    def cheat_item(self, slot: int, name: str, item_id: int) -> None:
        """``!getitem``: slot ``slot`` receives ``item_id`` from the cheat console
        (location -1), announced to everyone (ItemCheat), as the reference does."""
        item = C.Item(item_id, -1, slot, 0)
        self.received[slot].append(item)
        self._from_others[slot].append(item)
        self.broadcast_text(
            f'Cheat console: sending "{name}" to {self.aliased_name(slot)}',
            type="ItemCheat",
            team=TEAM,
            receiving=slot,
            item=item,
        )
        self._send_new_items({slot})

    def countdown(self, seconds: int) -> None:
        """Start (or reset) a countdown of ``seconds``: a ``Countdown`` notice each second."""
        self.broadcast_text(
            f"[Server]: Starting countdown of {seconds}s", type="Countdown", countdown=seconds
        )
        running = self._countdown > 0
        self._countdown = seconds
        if not running:
            task = asyncio.get_running_loop().create_task(self._count_down())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _count_down(self) -> None:
        while self._countdown > 0:
            n = self._countdown
            self.broadcast_text(f"[Server]: {n}", type="Countdown", countdown=n)
            self._countdown -= 1
            await asyncio.sleep(1)
        self.broadcast_text("[Server]: GO", type="Countdown", countdown=0)
        self._countdown = 0

    def _send_checked(self, slot: int) -> None:
        locations = [loc for loc in self.slots[slot - 1].locations if loc in self.checked[slot]]
        self._broadcast(self._clients_of(slot), [C.RoomUpdate(checked_locations=locations)])

    def register_checks(self, slot: int, locations: Iterable[int]) -> None:
        """The reference's ``register_location_checks``: items out, notices, hints rechecked."""
        own = self.slots[slot - 1].locations
        new = {loc for loc in locations if type(loc) is int and loc in own} - self.checked[slot]
        if not new:
            return
        ordered = sorted((own[loc][1], own[loc][0], loc, own[loc][2]) for loc in new)
        notices: list[Any] = []
        listeners = [c for c in self._authed() if not c.no_text]
        for receiver, item_id, location, flags in ordered:
            item = C.Item(item_id, location, slot, flags)
            self.received[receiver].append(item)
            if receiver != slot:
                self._from_others[receiver].append(item)
            if len(notices) >= _CHUNK:
                self._broadcast(listeners, notices)
                notices = []
            notices.append(_item_send(item, receiver))
        self._broadcast(listeners, notices)
        self.checked[slot] |= new
        self._send_new_items({receiver for receiver, *_ in ordered})
        update = C.RoomUpdate(hint_points=self.points(slot), checked_locations=sorted(new))
        self._broadcast(self._clients_of(slot), [update])
        for changed in _hints.recheck(self, slot):
            self.on_changed_hints(changed)

    def rechecked_hints(self, slot: int) -> set[Hint]:
        """Slot ``slot``'s hints, found ones marked (``_read_hints_``)."""
        _hints.recheck(self, slot)
        return self.hints[slot]

    def on_changed_hints(self, slot: int) -> None:
        """Tell ``_read_hints_`` subscribers of slot ``slot`` its hints changed."""
        key = f"_read_hints_{TEAM}_{slot}"
        if self.notify.get(key):
            self._changed(key, self._hint_values(slot))


def _item_send(item: C.Item, receiver: int) -> C.PrintJSON:
    """The reference's ``json_format_send_event``."""
    parts: list[dict[str, Any]] = []
    compat.add_json_text(parts, item.player, type=compat.JSONTypes.player_id)
    if item.player == receiver:
        compat.add_json_text(parts, " found their ")
        compat.add_json_item(parts, item.item, item.player, item.flags)
    else:
        compat.add_json_text(parts, " sent ")
        compat.add_json_item(parts, item.item, receiver, item.flags)
        compat.add_json_text(parts, " to ")
        compat.add_json_text(parts, receiver, type=compat.JSONTypes.player_id)
    compat.add_json_text(parts, " (")
    compat.add_json_location(parts, item.location, item.player)
    compat.add_json_text(parts, ")")
    return C.PrintJSON(to_parts(parts), type="ItemSend", receiving=receiver, item=item)
