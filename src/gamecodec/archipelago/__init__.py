"""Archipelago: JSON lists of commands over WebSocket text frames.

Two APIs over one wire format:

* The typed codec (on msgspec): :func:`decode` gives msgspec Structs tagged by
  ``cmd`` (unknown commands stay dicts, extra keys are kept), :func:`encode`
  writes them back (a decoded, unchanged frame byte for byte),
  :func:`encode_bytes` as UTF-8 and :func:`decode_many` one result per frame.
* :mod:`gamecodec.archipelago.compat`: a byte-exact drop-in for Archipelago's
  own ``NetUtils.encode`` / ``NetUtils.decode`` (NamedTuples, plain dicts).
* :class:`ClientSession` (Sans-IO client), :mod:`.aio` (``aio.connect``, on
  websockets) and :mod:`.testing` (``testing.Room``, a room server for tests);
  :class:`Names` (ids to names, PrintJSON as text) and
  :class:`DataPackageCache` (DataPackages on disk, where CommonClient keeps them).

>>> from gamecodec import archipelago as ap
>>> frame = ap.decode('[{"cmd":"ReceivedItems","index":0,"items":'
...     '[{"item":7,"location":9,"player":1,"flags":0,"class":"NetworkItem"}]}]')
>>> frame[0].items[0].item
7
>>> ap.encode([ap.Say(text="hi")])
'[{"cmd":"Say","text":"hi"}]'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from gamecodec._deprecated import deprecated_names
from gamecodec._public import public_dir
from gamecodec.archipelago import compat, frames, session
from gamecodec.archipelago._errors import (
    LoginRefusedError,
    NotConnectedError,
    RequestRefusedError,
)
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
from gamecodec.archipelago.datapackage import DataPackageCache
from gamecodec.archipelago.frames import Frame, decode, decode_many, encode, encode_bytes
from gamecodec.archipelago.names import Names
from gamecodec.archipelago.session import ClientSession

if TYPE_CHECKING:  # loaded on first use (websockets): gamecodec.archipelago.aio.Client is typed
    from gamecodec.archipelago import aio as aio

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
    "DataPackageCache",
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
    "LoginRefusedError",
    "MessagePart",
    "Names",
    "NetworkItem",
    "NetworkPlayer",
    "NetworkSlot",
    "NotConnectedError",
    "Permission",
    "Player",
    "PrintJSON",
    "ReceivedItems",
    "RequestRefusedError",
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
    "decode",
    "decode_many",
    "encode",
    "encode_bytes",
    "frames",
    "session",
]

__getattr__ = deprecated_names(
    __name__,
    {
        "decode_frame": ("decode", lambda: decode),
        "encode_frame": ("encode", lambda: encode),
        "encode_frame_bytes": ("encode_bytes", lambda: encode_bytes),
    },
    lazy={"aio": lambda: importlib.import_module("gamecodec.archipelago.aio")},
)

__dir__ = public_dir(__name__)
