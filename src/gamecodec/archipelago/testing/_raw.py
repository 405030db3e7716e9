"""Frames the typed decoder refuses, answered command by command as the reference
answers them: ``InvalidPacket`` where it checks, the client dropped where its
handler would raise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gamecodec.archipelago import compat
from gamecodec.archipelago._netutils import HintStatus
from gamecodec.archipelago.frames import decode
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
    try:
        command = decode(compat.encode([args]))[0]
    except DecodeError:
        pass
    else:
        return await room._dispatch(client, command)
    cmd = args["cmd"]
    if cmd not in _BEFORE_LOGIN and not client.auth:
        return True  # ignored before login, as the reference does
    check = _CHECKS.get(cmd)
    if check is None:
        return False  # the reference's handler raises on these arguments
    answer = check(client, args)
    if answer is None:
        return False
    await room._send(client, [invalid(*answer)])
    return True


_Answer = tuple[str, str, str] | None


def _connect(client: Client, args: dict[str, Any]) -> _Answer:
    password = args.get("password", 0)
    if "password" not in args or not (password is None or type(password) is str):
        return ("arguments", "Connect", "Connect")
    if "game" not in args:
        return ("arguments", "Connect", "Connect")
    return None


def _connect_update(client: Client, args: dict[str, Any]) -> _Answer:
    handling = args.get("items_handling")
    if handling is None or handling == client.items_handling:
        return None
    try:
        if not handling & 0b001 and handling & 0b110:
            return (
                "arguments",
                "Invalid items_handling: Invalid flag combination",
                "ConnectUpdate",
            )
    except TypeError as err:
        return ("arguments", f"Invalid items_handling: {err}", "ConnectUpdate")
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
    "ConnectUpdate": _connect_update,
    "LocationScouts": _scouts,
    "UpdateHint": _update_hint,
    "CreateHints": _create_hints,
    "Say": _say,
    "Get": _keys("Retrieve", "Get"),
    "SetNotify": _keys("SetNotify", "SetNotify"),
    "Set": _set,
}
