"""The rest of ``NetUtils``' public names, as Archipelago 0.6.8 defines them.

:mod:`gamecodec.archipelago.compat` re-exports these next to ``encode`` and
``decode`` so code written against ``NetUtils`` runs unchanged. The classes the
decoder builds (``NetworkItem``, ``NetworkPlayer``, ``NetworkSlot``, ``Version``)
and the enums that already match (``ClientStatus``, ``HintStatus``,
``SlotType``) are the package's own; ``Hint`` adds the reference's methods to
the package's NamedTuple; ``Permission`` (with ``from_text``) and ``JSONTypes``
(a ``str`` mix-in ``Enum``, so ``str()`` gives ``"JSONTypes.text"``) follow the
reference exactly.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol, TypedDict

from gamecodec.archipelago import _models
from gamecodec.archipelago._models import (
    ClientStatus,
    HintStatus,
    NetworkItem,
    NetworkPlayer,
    NetworkSlot,
    SlotType,
    Version,
    version_of,
)

__all__ = [
    "ClientStatus",
    "DataPackage",
    "Endpoint",
    "GamesPackage",
    "HandlerMeta",
    "Hint",
    "HintStatus",
    "JSONMessagePart",
    "JSONTypes",
    "JSONtoTextParser",
    "MinimumVersions",
    "MultiData",
    "NetworkItem",
    "NetworkPlayer",
    "NetworkSlot",
    "Permission",
    "RawJSONtoTextParser",
    "SlotType",
    "Version",
    "add_json_hint_status",
    "add_json_item",
    "add_json_location",
    "add_json_text",
    "allowlist",
    "color",
    "color_code",
    "color_codes",
    "convert_to_base_types",
    "custom_hooks",
    "get_any_version",
    "status_colors",
    "status_names",
]


class Permission(enum.IntFlag):
    """Release / collect / remaining permission of a room (``NetUtils.Permission``)."""

    disabled = 0b000
    enabled = 0b001
    goal = 0b010
    auto = 0b110
    auto_enabled = 0b111

    @staticmethod
    def from_text(text: str) -> Permission:
        """A server option's text (``"auto-enabled"``, ``"goal"`` ...) as a Permission."""
        value = 0
        if "auto" in text:
            value |= 0b110
        elif "goal" in text:
            value |= 0b010
        if "enabled" in text:
            value |= 0b001
        return Permission(value)


class JSONTypes(str, enum.Enum):  # noqa: UP042 - str() as the reference
    """The ``type`` of a :class:`JSONMessagePart` (``NetUtils.JSONTypes``)."""

    color = "color"
    text = "text"
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
    hint_status: HintStatus


class _Checks(Protocol):
    location_checks: Mapping[tuple[int, int], Any]


class Hint(_models.Hint):
    """A hint as the reference server stores it, with its methods.

    Equal hints compare as tuples; the hash leaves out ``found``, ``item_flags``
    and ``status`` as the reference does.
    """

    __slots__ = ()

    def re_check(self, ctx: _Checks, team: int) -> Hint:
        """This hint marked found if ``ctx.location_checks[team, finder]`` holds its location."""
        if self.found and self.status == HintStatus.HINT_FOUND:
            return self
        if self.location in ctx.location_checks[team, self.finding_player]:
            return self._replace(found=True, status=HintStatus.HINT_FOUND)
        return self

    def re_prioritize(self, ctx: object, status: HintStatus) -> Hint:
        """This hint with ``status`` (a found hint stays ``HINT_FOUND``)."""
        if self.found and status != HintStatus.HINT_FOUND:
            status = HintStatus.HINT_FOUND
        if status != self.status:
            return self._replace(status=status)
        return self

    def __hash__(self) -> int:
        return hash(
            (self.receiving_player, self.finding_player, self.location, self.item, self.entrance)
        )

    def as_network_message(self) -> dict[str, Any]:
        """The ``PrintJSON`` (type ``Hint``) command the server sends for this hint."""
        parts: list[dict[str, Any]] = []
        add_json_text(parts, "[Hint]: ")
        add_json_text(parts, self.receiving_player, type="player_id")
        add_json_text(parts, "'s ")
        add_json_item(parts, self.item, self.receiving_player, self.item_flags)
        add_json_text(parts, " is at ")
        add_json_location(parts, self.location, self.finding_player)
        add_json_text(parts, " in ")
        add_json_text(parts, self.finding_player, type="player_id")
        if self.entrance:
            add_json_text(parts, "'s World at ")
            add_json_text(parts, self.entrance, type="entrance_name")
        else:
            add_json_text(parts, "'s World")
        add_json_text(parts, ". ")
        add_json_hint_status(parts, self.status)
        item = NetworkItem(self.item, self.location, self.finding_player, self.item_flags)
        return {
            "cmd": "PrintJSON",
            "data": parts,
            "type": "Hint",
            "receiving": self.receiving_player,
            "item": item,
            "found": self.found,
        }

    @property
    def local(self) -> bool:
        """Whether the finder is also the receiver."""
        return self.receiving_player == self.finding_player


def add_json_text(parts: list[Any], text: Any, **kwargs: Any) -> None:
    """Append ``{"text": str(text), **kwargs}``."""
    parts.append({"text": str(text), **kwargs})


def add_json_item(
    parts: list[Any], item_id: int, player: int = 0, item_flags: int = 0, **kwargs: Any
) -> None:
    """Append an ``item_id`` part (``player`` owns the item's game)."""
    part = {"text": str(item_id), "player": player, "flags": item_flags}
    parts.append({**part, "type": JSONTypes.item_id, **kwargs})


def add_json_location(parts: list[Any], location_id: int, player: int = 0, **kwargs: Any) -> None:
    """Append a ``location_id`` part (``player`` owns the location's game)."""
    part = {"text": str(location_id), "player": player}
    parts.append({**part, "type": JSONTypes.location_id, **kwargs})


status_names: dict[HintStatus, str] = _models.STATUS_NAMES
"""The text of a ``hint_status`` part."""

status_colors: dict[HintStatus, str] = {
    HintStatus.HINT_FOUND: "green",
    HintStatus.HINT_UNSPECIFIED: "white",
    HintStatus.HINT_NO_PRIORITY: "slateblue",
    HintStatus.HINT_AVOID: "salmon",
    HintStatus.HINT_PRIORITY: "plum",
}
"""The colour a text client gives each hint status."""


def add_json_hint_status(
    parts: list[Any], hint_status: HintStatus, text: str | None = None, **kwargs: Any
) -> None:
    """Append a ``hint_status`` part (its text from :data:`status_names` unless given)."""
    shown = text if text is not None else status_names.get(hint_status, "(unknown)")
    parts.append(
        {"text": shown, "hint_status": hint_status, "type": JSONTypes.hint_status, **kwargs}
    )


color_codes: dict[str, int] = {
    "reset": 0,
    "bold": 1,
    "underline": 4,
    "black": 30,
    "red": 31,
    "green": 32,
    "yellow": 33,
    "blue": 34,
    "magenta": 35,
    "cyan": 36,
    "white": 37,
    "black_bg": 40,
    "red_bg": 41,
    "green_bg": 42,
    "yellow_bg": 43,
    "blue_bg": 44,
    "magenta_bg": 45,
    "cyan_bg": 46,
    "white_bg": 47,
    "plum": 35,
    "slateblue": 34,
    "salmon": 31,
}
"""Colour names to ANSI SGR codes (UI colours mapped to terminal ones)."""


def color_code(*args: str) -> str:
    """The ANSI escape that selects the named colours."""
    return "\033[" + ";".join(str(color_codes[arg]) for arg in args) + "m"


def color(text: str, *args: str) -> str:
    """``text`` in the named colours, then a reset."""
    return color_code(*args) + text + color_code("reset")


class HandlerMeta(type):
    """Collects a class's ``_handle_<type>`` methods (and its bases') into the
    class's ``handlers``; :class:`JSONtoTextParser` binds them per instance."""

    def __new__(mcs, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> HandlerMeta:
        handlers: dict[str, Callable[..., Any]] = {}
        for base in bases:
            handlers.update(getattr(base, "handlers", {}))
        prefix = "_handle_"
        handlers.update(
            {key[len(prefix) :]: value for key, value in attrs.items() if key.startswith(prefix)}
        )
        attrs["handlers"] = handlers
        return super().__new__(mcs, name, bases, attrs)


class _Names(Protocol):
    def lookup_in_slot(self, code: int, slot: int) -> str: ...


class _TextContext(Protocol):
    player_names: Mapping[int, str]
    item_names: _Names
    location_names: _Names

    def slot_concerns_self(self, slot: int) -> bool: ...


class JSONtoTextParser(metaclass=HandlerMeta):
    """Renders a ``PrintJSON``'s parts to terminal text with names from ``ctx``
    (a CommonClient-like context: ``player_names``, ``item_names.lookup_in_slot``,
    ``location_names.lookup_in_slot``, ``slot_concerns_self``)."""

    handlers: dict[str, Callable[..., str]]
    color_codes: ClassVar[dict[str, str]] = {
        "black": "000000",
        "red": "EE0000",
        "green": "00FF7F",
        "yellow": "FAFAD2",
        "blue": "6495ED",
        "magenta": "EE00EE",
        "cyan": "00EEEE",
        "slateblue": "6D8BE8",
        "plum": "AF99EF",
        "salmon": "FA8072",
        "white": "FFFFFF",
        "orange": "FF7700",
    }

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        functions = type(self).handlers
        self.handlers = {key: method.__get__(self, type(self)) for key, method in functions.items()}

    def __call__(self, input_object: Sequence[JSONMessagePart]) -> str:
        return "".join(self.handle_node(section) for section in input_object)

    def handle_node(self, node: JSONMessagePart) -> str:
        """One part to text by its ``type`` (unknown types as plain text)."""
        handler = self.handlers.get(node.get("type", None) or "", self.handlers["text"])
        return str(handler(node))

    def _handle_color(self, node: JSONMessagePart) -> str:
        codes = node["color"].split(";")
        prefix = "".join(color_code(code) for code in codes if code in color_codes)
        return prefix + self._handle_text(node) + color_code("reset")

    def _handle_text(self, node: JSONMessagePart) -> str:
        return node.get("text", "")

    def _handle_player_id(self, node: JSONMessagePart) -> str:
        player = int(node["text"])
        node["color"] = "magenta" if self.ctx.slot_concerns_self(player) else "yellow"
        node["text"] = self.ctx.player_names[player]
        return self._handle_color(node)

    def _handle_player_name(self, node: JSONMessagePart) -> str:
        node["color"] = "yellow"
        return self._handle_color(node)

    def _handle_item_name(self, node: JSONMessagePart) -> str:
        flags = node.get("flags", 0)
        if flags == 0:
            node["color"] = "cyan"
        elif flags & 0b001:
            node["color"] = "plum"
        elif flags & 0b010:
            node["color"] = "slateblue"
        elif flags & 0b100:
            node["color"] = "salmon"
        else:
            node["color"] = "cyan"
        return self._handle_color(node)

    def _handle_item_id(self, node: JSONMessagePart) -> str:
        node["text"] = self.ctx.item_names.lookup_in_slot(int(node["text"]), node["player"])
        return self._handle_item_name(node)

    def _handle_location_name(self, node: JSONMessagePart) -> str:
        node["color"] = "green"
        return self._handle_color(node)

    def _handle_location_id(self, node: JSONMessagePart) -> str:
        node["text"] = self.ctx.location_names.lookup_in_slot(int(node["text"]), node["player"])
        return self._handle_location_name(node)

    def _handle_entrance_name(self, node: JSONMessagePart) -> str:
        node["color"] = "blue"
        return self._handle_color(node)

    def _handle_hint_status(self, node: JSONMessagePart) -> str:
        node["color"] = status_colors.get(node["hint_status"], "red")
        return self._handle_color(node)


class RawJSONtoTextParser(JSONtoTextParser):
    """:class:`JSONtoTextParser` without colour escapes."""

    def _handle_color(self, node: JSONMessagePart) -> str:
        return self._handle_text(node)


class Endpoint:
    """A connection's holder (``NetUtils.Endpoint``): just its ``socket``."""

    __slots__ = ("socket",)

    def __init__(self, socket: Any) -> None:
        self.socket = socket


def convert_to_base_types(obj: Any) -> Any:
    """Sequences and sets to tuples, dicts walked, str/int/float subclasses to the
    base type; anything else raises ``Exception`` as the reference does."""
    if isinstance(obj, (tuple, list, set, frozenset)):
        return tuple(convert_to_base_types(o) for o in obj)
    if isinstance(obj, dict):
        return {convert_to_base_types(k): convert_to_base_types(v) for k, v in obj.items()}
    if obj is None or type(obj) in (str, int, float, bool):
        return obj
    for base in (str, int, float):
        if isinstance(obj, base):
            return base(obj)
    raise Exception(f"Cannot handle {type(obj)}")


get_any_version = version_of
"""A ``"class": "Version"`` object's fields (keys in any case) as a :class:`Version`."""

allowlist: dict[str, type[Any]] = dict(_models.ALLOWLIST)
"""The ``"class"`` names ``decode`` builds (besides ``Version``)."""

custom_hooks: dict[str, Callable[[dict[str, Any]], Any]] = {"Version": version_of}
"""``"class"`` names decode builds with a function."""


class MinimumVersions(TypedDict):
    """``MultiData["minimum_versions"]``."""

    server: tuple[int, int, int]
    clients: dict[int, tuple[int, int, int]]


class GamesPackage(TypedDict, total=False):
    """One game's entry of a DataPackage."""

    item_name_groups: dict[str, list[str]]
    item_name_to_id: dict[str, int]
    location_name_groups: dict[str, list[str]]
    location_name_to_id: dict[str, int]
    checksum: str


class DataPackage(TypedDict):
    """A DataPackage's ``data``."""

    games: dict[str, GamesPackage]


class MultiData(TypedDict):
    """The contents of a ``.archipelago`` file."""

    slot_data: dict[int, Mapping[str, Any]]
    slot_info: dict[int, NetworkSlot]
    connect_names: dict[str, tuple[int, int]]
    locations: dict[int, dict[int, tuple[int, int, int]]]
    checks_in_area: dict[int, dict[str, int | list[int]]]
    server_options: dict[str, object]
    er_hint_data: dict[int, dict[int, str]]
    precollected_items: dict[int, list[int]] | dict[int, list[tuple[int, int]]]
    precollected_hints: dict[int, set[Hint]]
    version: tuple[int, int, int]
    tags: list[str]
    minimum_versions: MinimumVersions
    seed_name: str
    spheres: list[dict[int, set[int]]]
    datapackage: dict[str, GamesPackage]
    race_mode: int
