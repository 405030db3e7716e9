"""A drop-in for Archipelago's own ``NetUtils``: ``encode`` / ``decode`` and the
names code imports next to them.

>>> from gamecodec.archipelago import compat, NetworkItem
>>> compat.encode([{"cmd": "ReceivedItems", "index": 0, "items": [NetworkItem(7, 9, 1)]}])
'[{"cmd":"ReceivedItems","index":0,"items":[{"item":7,"location":9,"player":1,"flags":0,"class":"NetworkItem"}]}]'
>>> compat.decode('[{"cmd":"Sync"}]')
[{'cmd': 'Sync'}]

``decode(data, *, max_depth=16)`` accepts ``str`` or UTF-8 ``bytes``; ``max_depth``
is the reference's bracket count limit (at most ``max_depth - 1`` nested containers).
``encode(obj, *, default=None)`` and ``encode_bytes`` take an optional ``default``
(as in ``json``): called for a value the encoder does not know, its result is
written instead by the same rules.

``from gamecodec.archipelago import compat as NetUtils`` also gives the
reference's ``NetworkItem``, ``NetworkPlayer``, ``NetworkSlot``, ``Version``,
``Hint`` (with ``as_network_message``, ``re_check``, ``re_prioritize``),
``HintStatus``, ``ClientStatus``, ``SlotType``, ``Permission`` (with
``from_text``), ``JSONTypes``, ``JSONMessagePart``, ``JSONtoTextParser`` /
``RawJSONtoTextParser``, ``Endpoint``, the ``add_json_*`` helpers, ``color`` /
``color_code`` / ``color_codes``, ``status_names`` / ``status_colors``,
``convert_to_base_types``, ``get_any_version``, ``allowlist``, ``custom_hooks``
and the ``GamesPackage`` / ``DataPackage`` / ``MultiData`` /
``MinimumVersions`` TypedDicts. The server-side ``LocationStore`` and
``HandlerMeta``'s handler classes beyond the two parsers are not included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gamecodec import _accel
from gamecodec._public import public_dir
from gamecodec.archipelago._models import DEFAULT_MAX_DEPTH
from gamecodec.archipelago._netutils import (
    ClientStatus,
    DataPackage,
    Endpoint,
    GamesPackage,
    HandlerMeta,
    Hint,
    HintStatus,
    JSONMessagePart,
    JSONtoTextParser,
    JSONTypes,
    MinimumVersions,
    MultiData,
    NetworkItem,
    NetworkPlayer,
    NetworkSlot,
    Permission,
    RawJSONtoTextParser,
    SlotType,
    Version,
    add_json_hint_status,
    add_json_item,
    add_json_location,
    add_json_text,
    allowlist,
    color,
    color_code,
    color_codes,
    convert_to_base_types,
    custom_hooks,
    get_any_version,
    status_colors,
    status_names,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
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
    "decode",
    "encode",
    "encode_bytes",
    "get_any_version",
    "status_colors",
    "status_names",
]

if TYPE_CHECKING:  # both twins have these signatures (_compat_c.pyi)
    from gamecodec.archipelago._compat_c import decode, encode, encode_bytes
else:
    _codec = _accel.load("gamecodec.archipelago", "_compat", "archipelago")
    encode = _codec.encode
    encode_bytes = _codec.encode_bytes
    decode = _codec.decode

__dir__ = public_dir(__name__)
