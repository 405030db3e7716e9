"""Archipelago: JSON lists of commands over WebSocket text frames.

Spec: ``../shared/specs/archipelago.md``.

Two APIs over one wire format:

* :mod:`gamecodec.archipelago.compat`: a byte-exact drop-in for the reference
  ``NetUtils.encode`` / ``NetUtils.decode`` (NamedTuples, plain dicts).
* The typed codec (:mod:`.frames`, on msgspec): :func:`decode_frame` gives
  msgspec Structs tagged by ``cmd`` (unknown commands stay dicts, extra keys are
  kept), :func:`encode_frame` writes them back (a decoded, unchanged frame byte
  for byte).
* :class:`ClientSession` (Sans-IO client), :mod:`.aio` (``aio.connect``, on
  websockets) and :mod:`.testing` (``testing.Room``, a room server for tests).

>>> from gamecodec import archipelago as ap
>>> frame = ap.decode_frame('[{"cmd":"ReceivedItems","index":0,"items":'
...     '[{"item":7,"location":9,"player":1,"flags":0,"class":"NetworkItem"}]}]')
>>> frame[0].items[0].item
7
>>> ap.encode_frame([ap.Say(text="hi")])
'[{"cmd":"Say","text":"hi"}]'
"""

from __future__ import annotations

from gamecodec.archipelago import compat, frames, session
from gamecodec.archipelago._models import (
    DEFAULT_MAX_DEPTH,
    ClientStatus,
    Hint,
    HintStatus,
    JSONMessagePart,
    JSONTypes,
    NetworkItem,
    NetworkPlayer,
    NetworkSlot,
    Permission,
    SlotType,
    Version,
)
from gamecodec.archipelago.commands import (
    CLIENT_COMMANDS,
    COMMANDS,
    SERVER_COMMANDS,
    UNSET,
    AnyCommand,
    Bounce,
    Bounced,
    Command,
    Connect,
    Connected,
    ConnectionRefused,
    ConnectUpdate,
    CreateHints,
    DataPackage,
    DataPackageData,
    DataStorageOperation,
    GameData,
    Get,
    GetDataPackage,
    InvalidPacket,
    Item,
    LocationChecks,
    LocationInfo,
    LocationScouts,
    MessagePart,
    Player,
    PrintJSON,
    ReceivedItems,
    Retrieved,
    RoomInfo,
    RoomUpdate,
    Say,
    Set,
    SetNotify,
    SetReply,
    Slot,
    StatusUpdate,
    Sync,
    UpdateHint,
    VersionInfo,
)
from gamecodec.archipelago.frames import Frame, decode_frame, encode_frame, encode_frame_bytes
from gamecodec.archipelago.session import ClientSession

__all__ = [
    "CLIENT_COMMANDS",
    "COMMANDS",
    "DEFAULT_MAX_DEPTH",
    "SERVER_COMMANDS",
    "UNSET",
    "AnyCommand",
    "Bounce",
    "Bounced",
    "ClientSession",
    "ClientStatus",
    "Command",
    "Connect",
    "ConnectUpdate",
    "Connected",
    "ConnectionRefused",
    "CreateHints",
    "DataPackage",
    "DataPackageData",
    "DataStorageOperation",
    "Frame",
    "GameData",
    "Get",
    "GetDataPackage",
    "Hint",
    "HintStatus",
    "InvalidPacket",
    "Item",
    "JSONMessagePart",
    "JSONTypes",
    "LocationChecks",
    "LocationInfo",
    "LocationScouts",
    "MessagePart",
    "NetworkItem",
    "NetworkPlayer",
    "NetworkSlot",
    "Permission",
    "Player",
    "PrintJSON",
    "ReceivedItems",
    "Retrieved",
    "RoomInfo",
    "RoomUpdate",
    "Say",
    "Set",
    "SetNotify",
    "SetReply",
    "Slot",
    "SlotType",
    "StatusUpdate",
    "Sync",
    "UpdateHint",
    "Version",
    "VersionInfo",
    "compat",
    "decode_frame",
    "encode_frame",
    "encode_frame_bytes",
    "frames",
    "session",
]
