"""What the room's modules share: a connection's state and message builders."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection

from gamecodec.archipelago import commands as C
from gamecodec.archipelago._netutils import Hint

__all__ = [
    "NON_PLAYING_TAGS",
    "TEAM",
    "Client",
    "hint_message",
    "hint_value",
    "items_handling_of",
    "plain",
    "to_parts",
]

TEAM = 0
NON_PLAYING_TAGS = {"HintGame": "hinting", "Tracker": "tracking", "TextOnly": "viewing"}
"""Tags of clients that do not play (no checks, no goal), and the verb of their Join text."""


@dataclass(eq=False)
class Client:
    socket: ServerConnection
    slot: int = 0
    tags: list[str] = field(default_factory=list)
    items_handling: int = 0
    auth: bool = False
    sent_items: int = 0
    version: tuple[int, int, int] = (0, 0, 0)
    compressed: bool = True

    @property
    def no_locations(self) -> bool:
        return any(tag in NON_PLAYING_TAGS for tag in self.tags)

    @property
    def no_text(self) -> bool:
        return "NoText" in self.tags


def items_handling_of(value: Any) -> int:
    """The items_handling a client gets for ``value``, as the reference's
    ``Client.items_handling`` setter and getter make it: any int whose low bit is
    set keeps its three low bits (99 is 0b011), ValueError for bits 1-2 without
    bit 0, TypeError (from ``&``) for a value that is not an int."""
    if not (value & 0b001) and (value & 0b110):
        raise ValueError("Invalid flag combination")
    return int(value & 0b111) if value & 0b001 else 0


def plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def to_parts(parts: list[dict[str, Any]]) -> list[C.MessagePart]:
    return [C.MessagePart(**{k: plain(v) for k, v in part.items()}) for part in parts]


def hint_message(hint: Hint) -> C.PrintJSON:
    """The ``PrintJSON`` (type ``Hint``) the reference sends for ``hint``."""
    message = hint.as_network_message()
    return C.PrintJSON(
        to_parts(message["data"]),
        type="Hint",
        receiving=hint.receiving_player,
        item=C.Item(*message["item"]),
        found=hint.found,
    )


def hint_value(hint: Hint) -> dict[str, Any]:
    """A hint as the reference writes it in ``_read_hints_`` values."""
    return {**{k: plain(v) for k, v in hint._asdict().items()}, "class": "Hint"}
