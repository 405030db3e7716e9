"""The room's answer to each typed client command, as the reference server answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gamecodec.archipelago import commands as C
from gamecodec.archipelago._netutils import ClientStatus, HintStatus
from gamecodec.archipelago.frames import encode
from gamecodec.archipelago.testing import _chat, _hints
from gamecodec.archipelago.testing._common import (
    NON_PLAYING_TAGS,
    TEAM,
    Client,
    items_handling_of,
)
from gamecodec.archipelago.testing._world import OPERATIONS, check_size
from gamecodec.errors import EncodeError

if TYPE_CHECKING:
    from gamecodec.archipelago.testing._room import Room

__all__ = [
    "connect",
    "connect_errors",
    "handle",
    "invalid",
    "send_data_package",
    "set_items_handling",
    "set_tags",
]

TUTORIAL = (
    "Now that you are connected, you can use !help to list commands to run via the server. "
    "If your client supports it, you may have additional local commands you can list with /help."
)
NO_COMPRESSION = (
    "Warning: your client does not support compressed websocket connections! It may stop "
    "working in the future. If you are a player, please report this to the client's developer."
)


def invalid(kind: str, text: str, original_cmd: str | None) -> C.InvalidPacket:
    """An ``InvalidPacket`` as the reference words it."""
    return C.InvalidPacket(type=kind, text=text, original_cmd=original_cmd)


async def handle(room: Room, client: Client, command: Any) -> bool:
    """Handle one command; False drops the client."""
    if isinstance(command, C.Connect):
        return await connect(room, client, _connect_args(command))
    if isinstance(command, C.GetDataPackage):
        wanted = None if command.games is C.UNSET else set(command.games)
        await send_data_package(room, client, wanted)
        return True
    if not client.auth or not isinstance(command, C.Command):
        return True  # the reference ignores unknown commands and any before Connect
    handler = _HANDLERS.get(type(command))
    if handler is None:
        return True
    answer: bool = await handler(room, client, command)
    return answer


async def send_data_package(room: Room, client: Client, wanted: set[Any] | None) -> None:
    """The DataPackage of the games named in ``wanted`` (all when None), in the
    room's order, as the reference filters ``gamespackage`` (MultiServer
    ``process_client_cmd``, GetDataPackage): a name that is no game matches nothing."""
    games = {
        name: game.data()
        for name, game in room.packages.items()
        if wanted is None or name in wanted
    }
    await room._send(client, [C.DataPackage(C.DataPackageData(games))])


def _connect_args(command: C.Connect) -> dict[str, Any]:
    version = command.version
    return {
        "password": command.password,
        "name": command.name,
        "game": command.game,
        "tags": command.tags,
        "version": (version.major, version.minor, version.build),
        "items_handling": command.items_handling,
        "slot_data": command.slot_data is not False,
    }


def connect_errors(room: Room, args: Mapping[str, Any]) -> tuple[list[str], int, int]:
    """(errors, slot number, items_handling) of a Connect, checked in the reference's
    order (MultiServer ``process_client_cmd``, Connect): the game, version and
    items_handling only when the name is a slot. Raises (KeyError, TypeError) where
    the reference's handler raises: an unhashable name, a version that does not
    compare with a Version, a missing ``items_handling``."""
    errors = []
    if room.password and args["password"] != room.password:
        errors.append("InvalidPassword")
    number = room.slot_numbers.get(args["name"], 0)
    handling = 0
    if not number:
        errors.append("InvalidSlot")
    else:
        slot = room.slots[number - 1]
        ignore_game = not args.get("game") and any(tag in NON_PLAYING_TAGS for tag in args["tags"])
        if not ignore_game and args["game"] != slot.game:
            errors.append("InvalidGame")
        minimum = room.required_client_version
        if not ignore_game:
            minimum = max(minimum, slot.minimum_client_version)
        if minimum > args["version"]:
            errors.append("IncompatibleVersion")
        try:
            handling = items_handling_of(args["items_handling"])
        except (ValueError, TypeError):
            errors.append("InvalidItemsHandling")
    return errors, number, handling


async def connect(room: Room, client: Client, args: Mapping[str, Any]) -> bool:
    """Log ``client`` in (Connected, ReceivedItems, Join) or refuse (ConnectionRefused,
    the socket kept); False drops the client where the reference's handler raises."""
    try:
        errors, number, handling = connect_errors(room, args)
    except (KeyError, TypeError):
        return False
    if errors:
        await room._send(client, [C.ConnectionRefused(errors)])
        return True
    version = tuple(args["version"])
    slot = room.slots[number - 1]
    rejoin = client.auth and client.slot == number
    client.slot, client.tags, client.items_handling = number, list(args["tags"]), handling
    client.version = (int(version[0]), int(version[1]), int(version[2]))
    client.auth = True
    connected = C.Connected(
        team=TEAM,
        slot=number,
        players=room._players(),
        missing_locations=[loc for loc in slot.locations if loc not in room.checked[number]],
        checked_locations=[loc for loc in slot.locations if loc in room.checked[number]],
        slot_info={
            str(n): C.Slot(s.name, s.game, s.slot_type, []) for n, s in enumerate(room.slots, 1)
        },
        hint_points=room.points(number),
        slot_data=dict(slot.slot_data) if args.get("slot_data", True) else C.UNSET,
    )
    items = room._inventory(client)
    client.sent_items = len(items)
    frame: list[Any] = [connected]
    if items:
        frame.append(C.ReceivedItems(0, items))
    await room._send(client, frame)
    if rejoin:
        return True
    if room.status[number] == ClientStatus.CLIENT_UNKNOWN:
        room.update_status(client, ClientStatus.CLIENT_CONNECTED)
    verb = next((v for tag, v in NON_PLAYING_TAGS.items() if tag in client.tags), "playing")
    room.broadcast_text(
        f"{room.aliased_name(number)} (Team #{TEAM + 1}) {verb} {slot.game} has joined. "
        f"Client({'.'.join(map(str, client.version))}), {client.tags}.",
        type="Join",
        team=TEAM,
        slot=number,
        tags=list(client.tags),
    )
    room.notify_client(client, [TUTORIAL], type="Tutorial")
    if not client.compressed:
        room.notify_client(client, [NO_COMPRESSION])
    return True


async def set_items_handling(room: Room, client: Client, value: Any) -> None:
    """ConnectUpdate's ``items_handling`` as the reference takes it: a value other than
    the client's (as its getter gives it) is set (99 as 0b011) and everything the
    client now receives is sent again from index 0; a bad one is an InvalidPacket."""
    if value is None or value == client.items_handling:
        return
    try:
        client.items_handling = items_handling_of(value)
    except (ValueError, TypeError) as err:
        text = f"Invalid items_handling: {err}"
        await room._send(client, [invalid("arguments", text, "ConnectUpdate")])
        raise
    items = room._inventory(client)
    client.sent_items = len(items)
    if items:
        await room._send(client, [C.ReceivedItems(0, items)])


def set_tags(room: Room, client: Client, tags: list[Any]) -> None:
    """ConnectUpdate's ``tags``: a changed set is announced (TagsChanged)."""
    old = client.tags
    client.tags = list(tags)
    if set(old) != set(client.tags):
        room.broadcast_text(
            f"{room.aliased_name(client.slot)} (Team #{TEAM + 1}) has changed tags from {old} "
            f"to {client.tags}.",
            type="TagsChanged",
            team=TEAM,
            slot=client.slot,
            tags=list(client.tags),
        )


async def _connect_update(room: Room, client: Client, command: C.ConnectUpdate) -> bool:
    handling = command.items_handling
    if isinstance(handling, int):
        try:
            await set_items_handling(room, client, handling)
        except (ValueError, TypeError):
            return True
    if isinstance(command.tags, list):
        set_tags(room, client, command.tags)
    return True


async def _sync(room: Room, client: Client, command: C.Sync) -> bool:
    items = room._inventory(client)
    if items:
        client.sent_items = len(items)
        await room._send(client, [C.ReceivedItems(0, items)])
    return True


async def _checks(room: Room, client: Client, command: C.LocationChecks) -> bool:
    if client.no_locations:
        text = "Trackers can't register new Location Checks"
        await room._send(client, [invalid("cmd", text, "LocationChecks")])
    else:
        room.register_checks(client.slot, command.locations)
    return True


async def _scouts(room: Room, client: Client, command: C.LocationScouts) -> bool:
    own = room.slots[client.slot - 1].locations
    as_hint = 0 if command.create_as_hint is C.UNSET else int(command.create_as_hint)
    found = []
    hints = []
    for location in command.locations:
        if location not in own:
            return False  # the reference's lookup raises: the client is dropped
        item, receiver, flags = own[location]
        if as_hint:
            hints.extend(_hints.for_location(room, client.slot, location))
        found.append(C.Item(item, location, receiver, flags))
    # the reference awaits LocationInfo and schedules the hint messages
    # (notify_hints: async_start), so LocationInfo is on the wire first
    await room._send(client, [C.LocationInfo(found)])
    _hints.notify(room, hints, only_new=as_hint == 2, persist_even_if_found=True)
    return True


async def _create_hints(room: Room, client: Client, command: C.CreateHints) -> bool:
    finder = client.slot if command.player is C.UNSET else command.player
    raw_status = HintStatus.HINT_UNSPECIFIED if command.status is C.UNSET else command.status
    if not command.locations:
        text = "CreateHints: No locations specified."
        await room._send(client, [invalid("arguments", text, "CreateHints")])
        return True
    try:
        status = HintStatus(raw_status)
    except ValueError as err:
        await room._send(client, [invalid("arguments", f"Unknown Status: {err}", "CreateHints")])
        return True
    if not 0 < finder <= len(room.slots):
        return False  # the reference's lookup raises
    locations = room.slots[finder - 1].locations
    hints = []
    for location in command.locations:
        if finder != client.slot and location not in locations:
            text = (
                "CreateHints: One or more of the locations do not exist for the specified "
                "off-world player. Please refrain from hinting other slot's locations that you "
                "don't know contain your items."
            )
            await room._send(client, [invalid("arguments", text, "CreateHints")])
            return True
        if location not in locations:
            return False  # the reference's lookup raises
        _item, receiver, _flags = locations[location]
        if client.slot != receiver:
            text = ""
            if status != HintStatus.HINT_UNSPECIFIED:
                text = (
                    'CreateHints: Must use "unspecified"/None status for items from other players.'
                )
            elif client.slot != finder:
                text = "CreateHints: Can only create hints for own items or own locations."
            if text:
                await room._send(client, [invalid("arguments", text, "CreateHints")])
                return True
        hints += _hints.for_location(room, finder, location, status)
    _hints.notify(room, hints, only_new=True, persist_even_if_found=True)
    return True


async def _update_hint(room: Room, client: Client, command: C.UpdateHint) -> bool:
    hint = _hints.get(room, command.player, command.location)
    if not hint:
        return True
    if client.slot != hint.receiving_player:
        text = "UpdateHint: No Permission"
        await room._send(client, [invalid("arguments", text, "UpdateHint")])
        return True
    if command.status is None or command.status is C.UNSET:
        return True
    try:
        status = HintStatus(command.status)
    except ValueError:
        text = "UpdateHint: Invalid Status"
        await room._send(client, [invalid("arguments", text, "UpdateHint")])
        return True
    if status == HintStatus.HINT_FOUND:
        text = 'UpdateHint: Cannot manually update status to "HINT_FOUND"'
        await room._send(client, [invalid("arguments", text, "UpdateHint")])
        return True
    new = hint.re_prioritize(None, status)
    if new == hint:
        return True
    concerned = {hint.receiving_player, hint.finding_player}
    for slot in concerned:
        if hint in room.hints[slot]:
            room.hints[slot].remove(hint)
            room.hints[slot].add(new)
    for slot in sorted(concerned):
        room.on_changed_hints(slot)
    return True


async def _status(room: Room, client: Client, command: C.StatusUpdate) -> bool:
    if client.no_locations and command.status == ClientStatus.CLIENT_GOAL:
        text = "Trackers can't register Goal Complete"
        await room._send(client, [invalid("cmd", text, "StatusUpdate")])
    else:
        room.update_status(client, command.status)
    return True


async def _say(room: Room, client: Client, command: C.Say) -> bool:
    if not command.text.isprintable():
        await room._send(client, [invalid("arguments", "Say", "Say")])
        return True
    _chat.say(room, client, command.text)
    return True


async def _get(room: Room, client: Client, command: C.Get) -> bool:
    reply = C.Retrieved({key: room.read(key) for key in command.keys})
    reply.set_extra(command.extra)
    await room._send(client, [reply])
    return True


async def _set(room: Room, client: Client, command: C.Set) -> bool:
    refused = [invalid("arguments", "Set", "Set")]
    if command.key.startswith("_read_"):  # read-only: the reference's answer
        await room._send(client, refused)
        return True
    default = 0 if command.default is C.UNSET else command.default  # args.get("default", 0)
    original = room.storage.get(command.key, default)
    value = original
    try:
        for op in command.operations:
            function = OPERATIONS[op.operation]
            check_size(op.operation, value, op.value)
            value = function(value, op.value)
    except OverflowError:
        await room._send(client, refused)  # too large to store and send: refused, kept out
        return True
    except (KeyError, TypeError, ValueError, ArithmeticError, IndexError):
        return False  # the reference drops the client on a failing operation
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
    try:
        encode([reply])
    except EncodeError:
        await room._send(client, refused)  # a value no JSON encoder writes: kept out
        return True
    room.storage[command.key] = value
    targets = set(room.notify.get(command.key, set()))
    if command.want_reply is True:
        targets.add(client)
    room._broadcast(targets, [reply])
    return True


async def _set_notify(room: Room, client: Client, command: C.SetNotify) -> bool:
    for key in command.keys:
        room.notify.setdefault(key, set()).add(client)
    return True


async def _bounce(room: Room, client: Client, command: C.Bounce) -> bool:
    games = set(command.games) if isinstance(command.games, list) else set()
    slots = set(command.slots) if isinstance(command.slots, list) else set()
    tags = set(command.tags) if isinstance(command.tags, list) else set()
    targets = [
        c
        for c in room._authed()
        if c.slot in slots or room.slots[c.slot - 1].game in games or tags & set(c.tags)
    ]
    bounced = C.Bounced(command.games, command.slots, command.tags, command.data)
    bounced.set_extra(command.extra)
    room._broadcast(targets, [bounced])
    return True


_HANDLERS: dict[type[Any], Any] = {
    C.ConnectUpdate: _connect_update,
    C.Sync: _sync,
    C.LocationChecks: _checks,
    C.LocationScouts: _scouts,
    C.CreateHints: _create_hints,
    C.UpdateHint: _update_hint,
    C.StatusUpdate: _status,
    C.Say: _say,
    C.Get: _get,
    C.Set: _set,
    C.SetNotify: _set_notify,
    C.Bounce: _bounce,
}
