"""Frames the typed decoder refuses, answered command by command as the reference
answers them: ``InvalidPacket`` where it checks, the client dropped where its
handler would raise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gamecodec.archipelago import commands as C
from gamecodec.archipelago import compat
from gamecodec.archipelago._netutils import ClientStatus, HintStatus
from gamecodec.archipelago.frames import decode
from gamecodec.archipelago.testing import _handlers
from gamecodec.archipelago.testing._common import Client
from gamecodec.archipelago.testing._handlers import invalid
from gamecodec.errors import DecodeError

if TYPE_CHECKING:
    from gamecodec.archipelago.testing._room import Room

__all__ = ["handle_raw_frame"]

_BEFORE_LOGIN = frozenset({"Connect", "GetDataPackage"})


async def handle_raw_frame(room: Room, client: Client, message: str) -> bool:
    """Handle a frame the typed decoder refused; False drops the client."""
    try:
        frame = compat.decode(message)
    except DecodeError:
        return False  # not JSON (or nested too deep): the reference's decode raises
    if not isinstance(frame, (list, dict, str)):
        return False  # not iterable: the reference's loop raises
    for args in frame:  # a dict gives its keys, a string its characters, as in the reference
        if not isinstance(args, dict) or "cmd" not in args:
            text = f"Could not get command from {args} at `cmd`"
            await room._send_encoded(client, _no_command(text))
            return False  # the reference re-raises: the client is dropped
        cmd = args["cmd"]
        if type(cmd) is not str:
            text = f"Command should be str, got {type(cmd)}"
            await room._send_encoded(client, _no_command(text))
            continue
        if not await _one(room, client, args):
            return False
    return True


def _no_command(text: str) -> str:
    """The reference's InvalidPacket for a missing or non-string ``cmd`` (its key order)."""
    packet = {"cmd": "InvalidPacket", "type": "cmd", "original_cmd": None, "text": text}
    return compat.encode([packet])


async def _one(room: Room, client: Client, args: dict[str, Any]) -> bool:
    """One command with a string ``cmd``; False drops the client."""
    if args["cmd"] == "Connect":  # read from its raw arguments: which keys are there matters
        refused = _connect(client, args)
        if refused is not None:
            await room._send(client, [invalid(*refused)])
            return True
        return await _raw_connect(room, client, args)
    try:
        command = decode(compat.encode([args]))[0]
    except DecodeError:
        pass
    else:
        return await room._dispatch(client, command)
    cmd = args["cmd"]
    if cmd not in _BEFORE_LOGIN and not client.auth:
        return True  # ignored before login, as the reference does
    answer_raw = _ANSWERS.get(cmd)
    if answer_raw is not None:
        first = _CHECKS.get(cmd)
        refused = None if first is None else first(client, args)
        if refused is not None:
            await room._send(client, [invalid(*refused)])
            return True
        answered: bool = await answer_raw(room, client, args)
        return answered
    check = _CHECKS.get(cmd)
    if check is None:
        return False  # the reference's handler raises on these arguments
    answer = check(client, args)
    if answer is None:
        return False
    await room._send(client, [invalid(*answer)])
    return True


_Answer = tuple[str, str, str] | None


async def _raw_connect(room: Room, client: Client, args: dict[str, Any]) -> bool:
    """A Connect as the reference reads its arguments: refused (``name: 5``,
    ``items_handling: "abc"``), the client dropped where a key the reference reads
    is missing (``items_handling`` of a slot, ``uuid``, ``tags``; the typed command
    would fill in defaults), or logged in with its items_handling as the
    reference's setter takes it (``true`` is 1)."""
    try:
        errors, _number, handling = _handlers.connect_errors(room, args)
    except (KeyError, TypeError):
        return False  # the reference's handler raises
    if errors:
        await room._send(client, [C.ConnectionRefused(errors)])
        return True
    if "uuid" not in args or "tags" not in args:
        return False  # the reference's args["uuid"], args["tags"] raise: the client is dropped
    try:
        command = decode(compat.encode([{**args, "items_handling": handling}]))[0]
    except DecodeError:
        return False  # fields the room cannot take (the reference may)
    return await room._dispatch(client, command)


async def _raw_data_package(room: Room, client: Client, args: dict[str, Any]) -> bool:
    """``games`` as the reference reads it: ``set(games)``, so a string names its
    characters and ``[NaN]`` nothing (an empty DataPackage); a value ``set()``
    refuses (a number, null, an unhashable item) drops the client."""
    try:
        wanted = set(args["games"]) if "games" in args else None
    except TypeError:
        return False
    await _handlers.send_data_package(room, client, wanted)
    return True


async def _raw_checks(room: Room, client: Client, args: dict[str, Any]) -> bool:
    """``locations`` as ``register_location_checks`` reads it: the slot's locations
    equal to an item of ``set(locations)`` are checked, the rest (``"a"``) ignored."""
    if client.no_locations:
        text = "Trackers can't register new Location Checks"
        await room._send(client, [invalid("cmd", text, "LocationChecks")])
        return True
    try:
        wanted = set(args["locations"])
    except (KeyError, TypeError):
        return False
    own = room.slots[client.slot - 1].locations
    room.register_checks(client.slot, [loc for loc in own if loc in wanted])
    return True


async def _raw_status(room: Room, client: Client, args: dict[str, Any]) -> bool:
    """Any ``status`` is stored as the reference's ``update_client_status`` stores
    it (``"x"`` too: ``_read_client_status_`` gives it back); only 30 is a goal."""
    if "status" not in args:
        return False
    status = args["status"]
    if client.no_locations and status == ClientStatus.CLIENT_GOAL:
        text = "Trackers can't register Goal Complete"
        await room._send(client, [invalid("cmd", text, "StatusUpdate")])
    else:
        room.update_status(client, status)
    return True


async def _raw_connect_update(room: Room, client: Client, args: dict[str, Any]) -> bool:
    """``items_handling`` as the reference's setter takes it, then a list of ``tags``."""
    try:
        await _handlers.set_items_handling(room, client, args.get("items_handling"))
    except (ValueError, TypeError):
        return True  # answered with InvalidPacket
    if "tags" in args:
        tags = args["tags"]
        if type(tags) is not list:
            return False  # the reference takes any iterable; the room only lists
        try:
            _handlers.set_tags(room, client, tags)
        except TypeError:
            return False  # an unhashable tag: the reference's set() raises
    return True


def _connect(client: Client, args: dict[str, Any]) -> _Answer:
    password = args.get("password", 0)
    if "password" not in args or not (password is None or type(password) is str):
        return ("arguments", "Connect", "Connect")
    if "game" not in args:
        return ("arguments", "Connect", "Connect")
    return None


def _scouts(client: Client, args: dict[str, Any]) -> _Answer:
    locations = args.get("locations")
    if not isinstance(locations, (list, dict, str)):
        return None
    for location in locations:
        if type(location) is not int:
            return ("arguments", "Locations has to be a list of integers", "LocationScouts")
    return None


def _update_hint(client: Client, args: dict[str, Any]) -> _Answer:
    if not {"location", "player", "status"} <= args.keys():
        return None
    status = args["status"]
    if (
        not isinstance(args["player"], int)
        or not isinstance(args["location"], int)
        or (status is not None and not isinstance(status, int))
    ):
        return ("arguments", "UpdateHint", "UpdateHint")
    return None


def _create_hints(client: Client, args: dict[str, Any]) -> _Answer:
    if "locations" not in args:
        return None
    if not args["locations"]:
        return ("arguments", "CreateHints: No locations specified.", "CreateHints")
    try:
        HintStatus(args.get("status", HintStatus.HINT_UNSPECIFIED))
    except ValueError as err:
        return ("arguments", f"Unknown Status: {err}", "CreateHints")
    return None


def _say(client: Client, args: dict[str, Any]) -> _Answer:
    text = args.get("text")
    if type(text) is not str or not text.isprintable():
        return ("arguments", "Say", "Say")
    return None


def _keys(text: str, cmd: str) -> Any:
    def check(client: Client, args: dict[str, Any]) -> _Answer:
        if type(args.get("keys")) is not list:
            return ("arguments", text, cmd)
        return None

    return check


def _set(client: Client, args: dict[str, Any]) -> _Answer:
    if "key" not in args:
        return ("arguments", "Set", "Set")
    if type(args["key"]) is not str:
        return None  # the reference's key.startswith raises
    if args["key"].startswith("_read_") or type(args.get("operations")) is not list:
        return ("arguments", "Set", "Set")
    return None


_CHECKS: dict[str, Any] = {
    "Connect": _connect,
    "LocationScouts": _scouts,
    "UpdateHint": _update_hint,
    "CreateHints": _create_hints,
    "Say": _say,
    "Get": _keys("Retrieve", "Get"),
    "SetNotify": _keys("SetNotify", "SetNotify"),
    "Set": _set,
}


_ANSWERS: dict[str, Any] = {
    "Connect": _raw_connect,
    "GetDataPackage": _raw_data_package,
    "LocationChecks": _raw_checks,
    "StatusUpdate": _raw_status,
    "ConnectUpdate": _raw_connect_update,
}
"""Commands answered from their raw arguments (after the ``_CHECKS`` check, if any)."""
