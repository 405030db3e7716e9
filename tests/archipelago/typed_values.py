"""The corpus's typed-value form (``corpus/archipelago/README.md``) of a Python value.

Plain JSON cannot tell an int from a float or a NamedTuple from a dict; this
form can, so comparing ``to_typed(decoded)`` with ``expected.jsonl`` checks
types, key order and NamedTuple classes exactly.
"""

from __future__ import annotations

from typing import Any

from gamecodec.archipelago._models import NetworkItem, NetworkPlayer, NetworkSlot, Version

NAMED = {
    NetworkItem: "NetworkItem",
    NetworkPlayer: "NetworkPlayer",
    NetworkSlot: "NetworkSlot",
    Version: "Version",
}


def _str(value: str) -> dict[str, Any]:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return {"t": "str", "cp": [ord(c) for c in value]}
    return {"t": "str", "v": value}


def _key(key: str) -> Any:
    typed = _str(key)
    return typed if "cp" in typed else key


def to_typed(value: Any) -> dict[str, Any]:
    """``value`` in the tagged form of ``expected.jsonl``."""
    cls = type(value)
    if value is None:
        return {"t": "null"}
    if cls is bool:
        return {"t": "bool", "v": value}
    if cls is int:
        return {"t": "int", "v": str(value)}
    if cls is float:
        return {"t": "float", "v": repr(value)}
    if cls is str:
        return _str(value)
    if cls is list:
        return {"t": "list", "v": [to_typed(v) for v in value]}
    if cls is tuple:
        return {"t": "tuple", "v": [to_typed(v) for v in value]}
    if cls is dict:
        return {"t": "dict", "v": [[_key(k), to_typed(v)] for k, v in value.items()]}
    if cls in NAMED:
        return {
            "t": NAMED[cls],
            "v": [[f, to_typed(v)] for f, v in zip(cls._fields, value, strict=True)],
        }
    raise TypeError(f"no typed form for {cls.__name__}")
