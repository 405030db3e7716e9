"""Every mutable object reachable from a decode result, to check that two
decodes never hand out the same one (mutating one result would change the
other). Immutable by construction, and not collected: ints, floats, str,
bytes, None, msgspec.UNSET, enum members, classes, numpy scalars; tuples and frozensets are
walked but not collected. Everything else counts as mutable, including
``uuid.UUID`` and frozen Structs (``object.__setattr__`` changes them)."""

from __future__ import annotations

import contextlib
import enum
import types
from typing import Any

import numpy as np

try:
    import msgspec
except ImportError:  # a free-threaded 3.13 has no msgspec: no Archipelago values either
    msgspec = None

_IMMUTABLE = (
    int,
    float,
    complex,
    str,
    bytes,
    type(None),
    range,
    type(Ellipsis),
    enum.Enum,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.ModuleType,
    np.generic,
    np.dtype,
)
if msgspec is not None:
    _IMMUTABLE += (type(msgspec.UNSET),)  # a singleton like None


def _attributes(obj: Any) -> list[Any]:
    values = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    names: list[str] = []
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names.extend((slots,) if isinstance(slots, str) else slots)
    if msgspec is not None and isinstance(obj, msgspec.Struct):
        names.extend(obj.__struct_fields__)
    for name in names:
        with contextlib.suppress(AttributeError):
            values.append(object.__getattribute__(obj, name))
    return values


def mutable_objects(root: Any) -> dict[int, Any]:
    """id -> object for every mutable object reachable from ``root`` (the
    objects are held, so their ids stay unique while the dict lives)."""
    found: dict[int, Any] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _IMMUTABLE):
            continue
        seen.add(id(obj))
        # a tuple (NamedTuples too) or frozenset without a __dict__ cannot change
        exact_tuple = isinstance(obj, (tuple, frozenset)) and not hasattr(obj, "__dict__")
        if not exact_tuple:
            found[id(obj)] = obj
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, np.ndarray):
            if obj.base is not None:
                stack.append(obj.base)
            if obj.dtype.hasobject:
                stack.extend(obj.ravel().tolist())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        if not exact_tuple and not isinstance(obj, (list, dict, set, np.ndarray)):
            stack.extend(_attributes(obj))
    return found


def shared_mutables(first: Any, second: Any) -> list[Any]:
    """The mutable objects reachable from both results (empty when none is shared)."""
    a = mutable_objects(first)
    b = mutable_objects(second)
    return [a[key] for key in a.keys() & b.keys()]
