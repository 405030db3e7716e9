"""The typed Archipelago commands: msgspec Structs tagged by ``cmd``.

Every command the server sends (12) and accepts (14) is a :class:`Command`
subclass; nested wire objects (``NetworkItem``, ``NetworkPlayer``,
``NetworkSlot``, ``Version``, ``JSONMessagePart``, data-storage operations,
data packages) are Structs that carry their trailing ``"class"`` key where the
reference writes one. Field order is the order the reference emits.

The nested Structs are ``gc=False`` (they hold scalars and lists of ints only,
so they cannot be part of a reference cycle; decoding is faster untracked).
Optional keys default to ``UNSET`` and are left out on the wire (a key that is
present with ``null`` decodes to ``None`` and is written back). Keys a command
does not declare are kept in :attr:`Command.extra` (decode) and written after
the declared ones (encode).
"""

from __future__ import annotations

from typing import Any, ClassVar

from msgspec import UNSET, Struct, UnsetType, field

from gamecodec._public import public_dir

__all__ = [
    "CLIENT_COMMANDS",
    "COMMANDS",
    "SERVER_COMMANDS",
    "UNSET",
    "AnyCommand",
    "Bounce",
    "Bounced",
    "Command",
    "Connect",
    "ConnectUpdate",
    "Connected",
    "ConnectionRefused",
    "CreateHints",
    "DataPackage",
    "DataPackageData",
    "DataStorageOperation",
    "GameData",
    "Get",
    "GetDataPackage",
    "InvalidPacket",
    "Item",
    "LocationChecks",
    "LocationInfo",
    "LocationScouts",
    "MessagePart",
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
    "StatusUpdate",
    "Sync",
    "UpdateHint",
    "VersionInfo",
]


# ------------------------------------------------------------ nested objects


class Item(Struct, gc=False):
    """``NetworkItem`` on the wire (``player`` is the sender, the receiver in LocationInfo)."""

    item: int
    location: int
    player: int
    flags: int = 0
    cls: str = field(default="NetworkItem", name="class")


class Player(Struct, gc=False):
    """``NetworkPlayer`` on the wire."""

    team: int
    slot: int
    alias: str
    name: str
    cls: str = field(default="NetworkPlayer", name="class")


class Slot(Struct, gc=False):
    """``NetworkSlot`` on the wire; ``type`` is a :class:`SlotType` value."""

    name: str
    game: str
    type: int
    group_members: list[int] = field(default_factory=list)
    cls: str = field(default="NetworkSlot", name="class")


class VersionInfo(Struct, gc=False):
    """``Utils.Version`` on the wire (a client's Connect must carry the class)."""

    major: int
    minor: int
    build: int
    cls: str = field(default="Version", name="class")


class MessagePart(Struct, gc=False):
    """A ``JSONMessagePart`` of PrintJSON ``data`` (keys in the reference's order)."""

    text: str | UnsetType = UNSET
    player: int | UnsetType = UNSET
    flags: int | UnsetType = UNSET
    hint_status: int | UnsetType = UNSET
    type: str | UnsetType = UNSET
    color: str | UnsetType = UNSET


class DataStorageOperation(Struct):
    """One operation of a ``Set``: ``replace``, ``default``, ``add``, ... ``update``."""

    operation: str
    value: Any = None


class GameData(Struct):
    """One game of a DataPackage."""

    item_name_to_id: dict[str, int]
    location_name_to_id: dict[str, int]
    checksum: str | UnsetType = UNSET


class DataPackageData(Struct):
    """The ``data`` of a DataPackage: ``games`` by name."""

    games: dict[str, GameData]


# ------------------------------------------------------------ commands


class Command(Struct, tag_field="cmd", dict=True, forbid_unknown_fields=True):
    """Base of every typed command; ``cmd`` is the tag."""

    direction: ClassVar[str] = ""
    # extra keys live in the instance __dict__ (dict=True); the class default keeps
    # the lookup cheap and creates no __dict__ for commands without extras
    _extra: ClassVar[dict[str, Any] | None] = None

    @property
    def extra(self) -> dict[str, Any]:
        """A copy of the keys the command carried that it does not declare, in wire order."""
        return dict(self._extra or {})

    def set_extra(self, extra: dict[str, Any]) -> None:
        """Replace :attr:`extra` (written after the declared keys on encode)."""
        declared = {"cmd", *self.__struct_encode_fields__}
        clash = sorted(declared.intersection(extra))
        if clash:
            raise ValueError(f"extra keys clash with declared ones: {clash}")
        self.__dict__["_extra"] = dict(extra)


# server -> client


class RoomInfo(Command, tag="RoomInfo"):
    """Server -> client, first on connect: the room's games, version, permissions and data
    package checksums."""

    direction: ClassVar[str] = "s2c"
    password: bool
    games: list[str]
    tags: list[str]
    version: VersionInfo
    generator_version: VersionInfo | UnsetType = UNSET
    permissions: dict[str, int] = field(default_factory=dict)
    hint_cost: int = 0
    location_check_points: int = 0
    datapackage_checksums: dict[str, str] = field(default_factory=dict)
    seed_name: str = ""
    time: float | UnsetType = UNSET


class ConnectionRefused(Command, tag="ConnectionRefused"):
    """Server -> client: the Connect was refused; ``errors`` say why (``InvalidSlot``,
    ``InvalidPassword``, ...)."""

    direction: ClassVar[str] = "s2c"
    errors: list[str] | UnsetType = UNSET


class Connected(Command, tag="Connected"):
    """Server -> client: the Connect was accepted; our team and slot, the players, our locations."""

    direction: ClassVar[str] = "s2c"
    team: int
    slot: int
    players: list[Player]
    missing_locations: list[int]
    checked_locations: list[int]
    slot_info: dict[str, Slot] = field(default_factory=dict)
    hint_points: int = 0
    slot_data: Any = UNSET


class ReceivedItems(Command, tag="ReceivedItems"):
    """Server -> client: items for us, from ``index`` on in our item list (0: the whole list)."""

    direction: ClassVar[str] = "s2c"
    index: int
    items: list[Item]


class LocationInfo(Command, tag="LocationInfo"):
    """Server -> client: the answer to a LocationScouts, the item at each location."""

    direction: ClassVar[str] = "s2c"
    locations: list[Item]


class RoomUpdate(Command, tag="RoomUpdate"):
    """Server -> client: a change to the room or to us (any subset of RoomInfo's and
    Connected's keys)."""

    direction: ClassVar[str] = "s2c"
    hint_points: int | UnsetType = UNSET
    checked_locations: list[int] | UnsetType = UNSET
    players: list[Player] | UnsetType = UNSET
    permissions: dict[str, int] | UnsetType = UNSET
    hint_cost: int | UnsetType = UNSET
    location_check_points: int | UnsetType = UNSET
    password: bool | UnsetType = UNSET
    games: list[str] | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET
    missing_locations: list[int] | UnsetType = UNSET


class PrintJSON(Command, tag="PrintJSON"):
    """Server -> client: a text message; ``type`` says which of the optional keys are present:
    ItemSend (receiving, item), ItemCheat (team, receiving, item), Hint
    (receiving, item, found), Join/TagsChanged (team, slot, tags),
    Part/Goal/Release/Collect (team, slot), Chat (team, slot, message),
    ServerChat (message), Countdown (countdown), Tutorial/CommandResult/
    AdminCommandResult and untyped notices (none)."""

    direction: ClassVar[str] = "s2c"
    data: list[MessagePart]
    type: str | UnsetType = UNSET
    team: int | UnsetType = UNSET
    receiving: int | UnsetType = UNSET
    item: Item | UnsetType = UNSET
    found: bool | UnsetType = UNSET
    slot: int | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET
    message: str | UnsetType = UNSET
    countdown: int | UnsetType = UNSET

    @property
    def text(self) -> str:
        """The message as plain text (ids not resolved to names)."""
        return "".join(part.text for part in self.data if isinstance(part.text, str))


class DataPackage(Command, tag="DataPackage"):
    """Server -> client: the answer to GetDataPackage, each game's item and location ids."""

    direction: ClassVar[str] = "s2c"
    data: DataPackageData


class Bounced(Command, tag="Bounced"):
    """Server -> client: another client's (or our) Bounce, passed on (extra keys kept)."""

    direction: ClassVar[str] = "s2c"
    games: list[str] | UnsetType = UNSET
    slots: list[int] | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET
    data: Any = UNSET


class InvalidPacket(Command, tag="InvalidPacket"):
    """Server -> client: a command we sent was refused (``original_cmd`` names it)."""

    direction: ClassVar[str] = "s2c"
    type: str
    text: str = ""
    original_cmd: str | UnsetType | None = UNSET


class Retrieved(Command, tag="Retrieved"):
    """Server -> client: the reply to Get; the Get's extra keys (``request_id``,
    ``uuid``) are in :attr:`extra`."""

    direction: ClassVar[str] = "s2c"
    keys: dict[str, Any]


class SetReply(Command, tag="SetReply"):
    """Server -> client: the reply to Set (the Set echoed), or a SetNotify notice (key, value)."""

    direction: ClassVar[str] = "s2c"
    key: str
    default: Any = UNSET
    want_reply: bool | UnsetType = UNSET
    operations: list[DataStorageOperation] | UnsetType = UNSET
    original_value: Any = UNSET
    slot: int | UnsetType = UNSET
    value: Any = None


# client -> server


class Connect(Command, tag="Connect", kw_only=True):
    """Client -> server: log in to a slot (name, password, game, version, tags)."""

    direction: ClassVar[str] = "c2s"
    password: str | None
    name: str
    version: VersionInfo
    tags: list[str] = field(default_factory=list)
    items_handling: int = 0b111
    uuid: str = ""
    game: str | None
    slot_data: bool | UnsetType = UNSET


class ConnectUpdate(Command, tag="ConnectUpdate"):
    """Client -> server: change our tags or items handling after the login."""

    direction: ClassVar[str] = "c2s"
    items_handling: int | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET


class Sync(Command, tag="Sync"):
    """Client -> server: ask for our whole item list again (a ReceivedItems from index 0)."""

    direction: ClassVar[str] = "c2s"


class LocationChecks(Command, tag="LocationChecks"):
    """Client -> server: we checked these locations."""

    direction: ClassVar[str] = "c2s"
    locations: list[int]


class LocationScouts(Command, tag="LocationScouts"):
    """Client -> server: what is at these locations (optionally hinting them)?"""

    direction: ClassVar[str] = "c2s"
    locations: list[int]
    create_as_hint: int | UnsetType = UNSET


class CreateHints(Command, tag="CreateHints"):
    """Client -> server: create hints for these locations of ``player``'s world."""

    direction: ClassVar[str] = "c2s"
    locations: list[int]
    player: int | UnsetType = UNSET
    status: int | UnsetType = UNSET


class UpdateHint(Command, tag="UpdateHint"):
    """Client -> server: change the status of our hint for ``location`` of ``player``."""

    direction: ClassVar[str] = "c2s"
    player: int
    location: int
    status: int | UnsetType | None = UNSET


class StatusUpdate(Command, tag="StatusUpdate"):
    """Client -> server: our state, a :class:`ClientStatus` value (ready, playing, goal)."""

    direction: ClassVar[str] = "c2s"
    status: int


class Say(Command, tag="Say"):
    """Client -> server: a chat line, or a ``!command`` for the server."""

    direction: ClassVar[str] = "c2s"
    text: str


class GetDataPackage(Command, tag="GetDataPackage"):
    """Client -> server: ask for the data packages of ``games`` (all when left out)."""

    direction: ClassVar[str] = "c2s"
    games: list[str] | UnsetType = UNSET
    exclusions: list[str] | UnsetType = UNSET


class Bounce(Command, tag="Bounce"):
    """Client -> server: send ``data`` to the clients matching ``games``, ``slots`` or ``tags``."""

    direction: ClassVar[str] = "c2s"
    games: list[str] | UnsetType = UNSET
    slots: list[int] | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET
    data: Any = UNSET


class Get(Command, tag="Get"):
    """Client -> server: read data storage keys; extra keys (``request_id``) come back in
    Retrieved."""

    direction: ClassVar[str] = "c2s"
    keys: list[str]


class Set(Command, tag="Set"):
    """Client -> server: change data storage ``key`` by ``operations`` (SetReply if
    ``want_reply``)."""

    direction: ClassVar[str] = "c2s"
    key: str
    default: Any = UNSET
    want_reply: bool | UnsetType = UNSET
    operations: list[DataStorageOperation] = field(default_factory=list)


class SetNotify(Command, tag="SetNotify"):
    """Client -> server: be sent a SetReply whenever one of ``keys`` changes."""

    direction: ClassVar[str] = "c2s"
    keys: list[str]


SERVER_COMMANDS: tuple[type[Command], ...] = (
    RoomInfo,
    ConnectionRefused,
    Connected,
    ReceivedItems,
    LocationInfo,
    RoomUpdate,
    PrintJSON,
    DataPackage,
    Bounced,
    InvalidPacket,
    Retrieved,
    SetReply,
)
CLIENT_COMMANDS: tuple[type[Command], ...] = (
    Connect,
    ConnectUpdate,
    Sync,
    LocationChecks,
    LocationScouts,
    CreateHints,
    UpdateHint,
    StatusUpdate,
    Say,
    GetDataPackage,
    Bounce,
    Get,
    Set,
    SetNotify,
)
COMMANDS: dict[str, type[Command]] = {
    str(cls.__struct_config__.tag): cls for cls in SERVER_COMMANDS + CLIENT_COMMANDS
}
"""Every typed command by its ``cmd``."""

AnyCommand = (
    RoomInfo
    | ConnectionRefused
    | Connected
    | ReceivedItems
    | LocationInfo
    | RoomUpdate
    | PrintJSON
    | DataPackage
    | Bounced
    | InvalidPacket
    | Retrieved
    | SetReply
    | Connect
    | ConnectUpdate
    | Sync
    | LocationChecks
    | LocationScouts
    | CreateHints
    | UpdateHint
    | StatusUpdate
    | Say
    | GetDataPackage
    | Bounce
    | Get
    | Set
    | SetNotify
)
"""The tagged union msgspec decodes one command into."""

__dir__ = public_dir(__name__)
