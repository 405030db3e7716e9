"""Archipelago's NamedTuples, enums and constants (never compiled).

These mirror ``NetUtils`` / ``Utils`` of Archipelago 0.6.8: the
compat codec builds ``NetworkItem``, ``NetworkPlayer``, ``NetworkSlot`` and
``Version`` from ``"class"``-tagged objects, and tags every NamedTuple it
encodes with a trailing ``"class"`` key.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

if TYPE_CHECKING:
    from gamecodec.archipelago.names import Names

__all__ = [
    "ALLOWLIST",
    "DEFAULT_MAX_DEPTH",
    "ClientStatus",
    "Hint",
    "HintStatus",
    "JSONMessagePart",
    "JSONTypes",
    "NetworkItem",
    "NetworkPlayer",
    "NetworkSlot",
    "Permission",
    "SlotType",
    "Version",
    "version_of",
]

DEFAULT_MAX_DEPTH = 16
"""The reference's limit: the bracket count starts at 1 and may not exceed
this, so at most 15 nested containers are accepted."""


class HintStatus(enum.IntEnum):
    """The priority of a hint (``NetUtils.HintStatus``)."""

    HINT_UNSPECIFIED = 0
    HINT_NO_PRIORITY = 10
    HINT_AVOID = 20
    HINT_PRIORITY = 30
    HINT_FOUND = 40


class ClientStatus(enum.IntEnum):
    """A client's reported state (``StatusUpdate``)."""

    CLIENT_UNKNOWN = 0
    CLIENT_CONNECTED = 5
    CLIENT_READY = 10
    CLIENT_PLAYING = 20
    CLIENT_GOAL = 30


class SlotType(enum.IntFlag):
    """What a slot is: spectator, player or item-link group."""

    spectator = 0b00
    player = 0b01
    group = 0b10

    @property
    def always_goal(self) -> bool:
        """Non-player slots count as having reached their goal."""
        return self.value != 0b01


class Permission(enum.IntFlag):
    """Release / collect / remaining permission of a room."""

    disabled = 0b000
    enabled = 0b001
    goal = 0b010
    auto = 0b110
    auto_enabled = 0b111


class JSONTypes(enum.StrEnum):
    """The ``type`` of a :class:`JSONMessagePart`."""

    text = "text"
    color = "color"
    player_id = "player_id"
    player_name = "player_name"
    item_name = "item_name"
    item_id = "item_id"
    location_name = "location_name"
    location_id = "location_id"
    entrance_name = "entrance_name"
    hint_status = "hint_status"


class JSONMessagePart(TypedDict, total=False):
    """One piece of a ``PrintJSON`` message (a plain dict on the wire)."""

    text: str
    type: str
    color: str
    player: int
    flags: int
    hint_status: int


class NetworkPlayer(NamedTuple):
    """A player on a team: ``{"team","slot","alias","name","class"}``."""

    team: int
    slot: int
    alias: str
    name: str


class NetworkSlot(NamedTuple):
    """A slot across teams; ``group_members`` only for groups."""

    name: str
    game: str
    type: int
    group_members: list[int] | tuple[int, ...] = ()


class NetworkItem(NamedTuple):
    """An item at a location; ``player`` is the sender (receiver in LocationInfo)."""

    item: int
    location: int
    player: int
    flags: int = 0


class Version(NamedTuple):
    """``Utils.Version``: decoded from case-insensitive keys, coerced with ``int()``."""

    major: int
    minor: int
    build: int


STATUS_NAMES: dict[HintStatus, str] = {
    HintStatus.HINT_FOUND: "(found)",
    HintStatus.HINT_UNSPECIFIED: "(unspecified)",
    HintStatus.HINT_NO_PRIORITY: "(no priority)",
    HintStatus.HINT_AVOID: "(avoid)",
    HintStatus.HINT_PRIORITY: "(priority)",
}
"""The text of a ``hint_status`` part."""


class Hint(NamedTuple):
    """A hint as the server stores it; it decodes as a plain dict (not allow-listed)."""

    receiving_player: int
    finding_player: int
    location: int
    item: int
    found: bool
    entrance: str = ""
    item_flags: int = 0
    status: HintStatus = HintStatus.HINT_UNSPECIFIED

    def describe(self, names: Names) -> str:
        """The hint as the server's ``[Hint]:`` line reads in CommonClient, ids
        replaced by ``names`` (an unknown id reads ``Unknown item (ID: 7)``)."""
        where = f"'s World at {self.entrance}" if self.entrance else "'s World"
        return (
            f"[Hint]: {names.player_name(self.receiving_player)}'s "
            f"{names.item_name(self.item, self.receiving_player)} is at "
            f"{names.location_name(self.location, self.finding_player)} in "
            f"{names.player_name(self.finding_player)}{where}. "
            f"{STATUS_NAMES.get(self.status, '(unknown)')}"
        )


ALLOWLIST: dict[str, type[NetworkPlayer] | type[NetworkItem] | type[NetworkSlot]] = {
    "NetworkPlayer": NetworkPlayer,
    "NetworkItem": NetworkItem,
    "NetworkSlot": NetworkSlot,
}
"""``"class"`` names decode builds (besides ``Version``, which has its own hook)."""


def version_of(data: dict[str, Any]) -> Version:
    """A ``"class": "Version"`` object as the reference builds it: keys in any
    case (so .NET's ``Major``/``Minor``/``Build`` work), values through ``int()``."""
    lowered = {key.lower(): value for key, value in data.items()}
    return Version(int(lowered["major"]), int(lowered["minor"]), int(lowered["build"]))
