"""Decoded models as plain JSON data: what ``gamecodec decode`` and ``dump`` print."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import uuid
from collections.abc import Iterator
from typing import Any

__all__ = ["to_json"]

_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def to_json(value: object) -> Any:
    """``value`` (a decoded model) as plain JSON data, the same on every run.

    Bytes become hex, UUIDs strings, enum members their names, numpy arrays
    lists, NaN and infinities the strings ``"NaN"``, ``"Infinity"`` and
    ``"-Infinity"``. NamedTuples, dataclasses and msgspec Structs become objects
    whose ``"type"`` is the class name, followed by their fields in order (a
    field that is itself called ``type`` is written ``type_``; unset fields are
    left out). A ``str`` subclass such as ``ywindow.Keyword`` becomes
    ``{"type": "Keyword", "value": "..."}``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, enum.Enum):
        return value.name if value.name is not None else to_json(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return _NON_FINITE.get(value, "NaN")
    if isinstance(value, str):
        if type(value) is str:
            return value
        return {"type": type(value).__name__, "value": str(value)}
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {_key(k): to_json(v) for k, v in value.items()}
    fields = _fields(value)
    if fields is not None:
        return _object(value, fields)
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((to_json(v) for v in value), key=repr)
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return to_json(value.tolist())
    return {"type": type(value).__name__, "repr": repr(value)}


def _key(key: object) -> str:
    if isinstance(key, str):
        return str(key)
    converted = to_json(key)
    return converted if isinstance(converted, str) else json.dumps(converted)


def _fields(value: object) -> tuple[str, ...] | None:
    """The field names of a NamedTuple, msgspec Struct or dataclass instance."""
    cls = type(value)
    if isinstance(value, tuple):
        names = getattr(cls, "_fields", None)
        return tuple(names) if isinstance(names, tuple) else None
    struct_fields = getattr(cls, "__struct_fields__", None)
    if isinstance(struct_fields, tuple):
        return struct_fields
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tuple(f.name for f in dataclasses.fields(value))
    return None


def _is_unset(value: object) -> bool:
    cls = type(value)
    return cls.__name__ == "UnsetType" and cls.__module__ == "msgspec"


def _object(value: object, fields: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(value).__name__}
    if isinstance(value, tuple):
        items: Iterator[tuple[str, object]] = zip(fields, value, strict=False)
    else:
        items = ((name, getattr(value, name)) for name in fields)
    for name, item in items:
        if not _is_unset(item):
            out["type_" if name == "type" else name] = to_json(item)
    return out
