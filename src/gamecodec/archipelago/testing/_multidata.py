"""Reading a generated multiworld (an ``.archipelago`` file) without running it.

Archipelago's generator (``Main.py``, ``write_multidata``) writes one format
byte (3), then ``zlib.compress(pickle.dumps(multidata), 9)``: a pickle (the
default protocol, 4) of a dict of builtins and of the ``NetUtils`` classes
``NetworkSlot``, ``SlotType``, ``Hint``, ``HintStatus`` (and ``NetworkItem``,
``ClientStatus``), which its server reads with ``Utils.restricted_loads``.

A pickle can name any global and call it, so this reader never uses
:func:`pickle.loads`: :class:`_Unpickler` maps exactly those names (and
``builtins.set``/``frozenset``) to this package's own classes and refuses every
other global with :class:`MultidataError` before anything is called. The
decompressed size is bounded (a zlib bomb stops at the bound), the format byte
must be one the reference reads (0 to 3, ``MultiServer.Context.decompress``),
and the unpickled value is copied into plain values with a bound on the values
the copy holds (shared references counted each time, without visiting them
again) and on nesting, so shared or cyclic references cannot make it explode.
"""

from __future__ import annotations

import io
import pickle
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gamecodec.archipelago._models import (
    ClientStatus,
    HintStatus,
    NetworkItem,
    NetworkSlot,
    SlotType,
)
from gamecodec.archipelago._netutils import Hint
from gamecodec.errors import GameCodecError

__all__ = [
    "ALLOWED_GLOBALS",
    "MAX_DECOMPRESSED",
    "MAX_VALUES",
    "MultidataError",
    "read_multidata",
]

MAX_DECOMPRESSED = 256 * 1024 * 1024
"""Bytes a multiworld's pickle may decompress to by default (256 MiB)."""

MAX_VALUES = 20_000_000
"""Values (containers and scalars, a shared one each time it is referred to) a
multiworld may hold."""

_MAX_DEPTH = 100
_FORMAT_VERSIONS = range(4)  # MultiServer.Context.decompress: format_version > 3 is refused

ALLOWED_GLOBALS: dict[tuple[str, str], Callable[..., Any]] = {
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("NetUtils", "NetworkItem"): NetworkItem,
    ("NetUtils", "NetworkSlot"): NetworkSlot,
    ("NetUtils", "SlotType"): SlotType,
    ("NetUtils", "Hint"): Hint,
    ("NetUtils", "HintStatus"): HintStatus,
    ("NetUtils", "ClientStatus"): ClientStatus,
}
"""The globals a multiworld's pickle may name (those of Archipelago's
``Utils.RestrictedUnpickler.find_class`` that a multiworld holds), and the
classes of this package each one is read as."""


class MultidataError(GameCodecError, ValueError):
    """A file that is not a multiworld the room can read: a wrong format byte, a
    broken or too large zlib stream, a pickle naming a forbidden global, or data
    of the wrong shape."""


class _Unpickler(pickle.Unpickler):
    """An unpickler that knows only :data:`ALLOWED_GLOBALS`."""

    def find_class(self, module: str, name: str) -> Any:
        found = ALLOWED_GLOBALS.get((module, name))
        if found is None:
            raise MultidataError(f"the multiworld names the forbidden global {module}.{name}")
        return found

    def persistent_load(self, pid: Any) -> Any:
        raise MultidataError("the multiworld uses persistent ids")


def _decompress(data: bytes, max_size: int) -> bytes:
    if not data:
        raise MultidataError("the multiworld file is empty")
    if data[0] not in _FORMAT_VERSIONS:
        raise MultidataError(
            f"unknown multiworld format {data[0]} (Archipelago 0.6.8 reads 0 to 3)"
        )
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(data[1:], max_size + 1)
    except zlib.error as err:
        raise MultidataError(f"the multiworld is not a zlib stream: {err}") from None
    if len(raw) > max_size or inflate.unconsumed_tail:
        raise MultidataError(f"the multiworld decompresses to more than {max_size} bytes")
    if not inflate.eof:
        raise MultidataError("the multiworld's zlib stream is truncated")
    return raw


def _read_bytes(path: Path, max_size: int) -> bytes:
    if path.suffix.lower() != ".zip":
        with path.open("rb") as file:
            return file.read(max_size + 1)
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.filename.endswith(".archipelago"):
                    with archive.open(info) as member:
                        return member.read(max_size + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as err:
        raise MultidataError(f"not a readable zip archive: {err}") from None
    raise MultidataError("No .archipelago found in archive.")


def read_multidata(
    path: str | Path, *, max_size: int = MAX_DECOMPRESSED, max_values: int = MAX_VALUES
) -> dict[str, Any]:
    """The multiworld dict of the ``.archipelago`` file (or ``.zip`` holding one)
    at ``path``, its NetUtils values as this package's classes. Refuses with
    :class:`MultidataError` anything the room should not run: a file or pickle over
    ``max_size`` bytes, more than ``max_values`` values (see the module)."""
    data = _read_bytes(Path(path), max_size)
    if len(data) > max_size:
        raise MultidataError(f"the multiworld file is larger than {max_size} bytes")
    raw = _decompress(data, max_size)
    try:
        loaded = _Unpickler(io.BytesIO(raw)).load()
    except MultidataError:
        raise
    except Exception as err:  # a broken pickle raises many kinds; none may escape
        raise MultidataError(f"the multiworld's pickle is broken: {err!r}") from None
    copier = _Copier(max_values)
    copier.size(loaded, 0)
    value = copier.copy(loaded)
    if not isinstance(value, dict):
        raise MultidataError("the multiworld is not a dict")
    return value


_SCALARS = (type(None), bool, int, float, str, HintStatus, SlotType, ClientStatus)
_RECORDS = (NetworkItem, NetworkSlot, Hint)
_SEQUENCES = (list, tuple, set, frozenset)


def _children(value: Any) -> list[Any]:
    kind = type(value)
    if kind in _RECORDS or kind in _SEQUENCES:
        return list(value)
    if kind is dict:
        return [part for pair in value.items() for part in pair]
    raise MultidataError(f"the multiworld holds a {kind.__name__}")


class _Copier:
    """Copies an unpickled value into fresh plain values. A pickle can refer to one
    object many times (its memo), so a 100-byte file can stand for 2**40 values
    once written out (as JSON to a client): before copying, the values the copy
    would hold are counted, once per distinct object (each object's count is
    kept), and refused past ``max_values``, as are cycles and deep nesting."""

    def __init__(self, max_values: int) -> None:
        self.max_values = max_values
        self.sizes: dict[int, int] = {}
        self.open: set[int] = set()

    def size(self, value: Any, depth: int) -> int:
        """The values a copy of ``value`` holds (itself included)."""
        if depth > _MAX_DEPTH:
            raise MultidataError(f"the multiworld nests deeper than {_MAX_DEPTH} levels")
        if type(value) in _SCALARS:
            return 1
        key = id(value)
        known = self.sizes.get(key)
        if known is not None:
            return known
        if key in self.open:
            raise MultidataError("the multiworld holds a value that contains itself")
        self.open.add(key)
        total = 1
        for child in _children(value):
            total += self.size(child, depth + 1)
            if total > self.max_values:
                raise MultidataError(f"the multiworld holds more than {self.max_values} values")
        self.open.discard(key)
        self.sizes[key] = total
        return total

    def copy(self, value: Any, depth: int = 0) -> Any:
        """A fresh copy of ``value`` (after :meth:`size` accepted it)."""
        kind = type(value)
        if kind in _SCALARS:
            return value
        if kind in _RECORDS:
            return kind(*(self.copy(field, depth + 1) for field in value))
        if kind in _SEQUENCES:
            return kind(self.copy(item, depth + 1) for item in value)
        return {self.copy(k, depth + 1): self.copy(v, depth + 1) for k, v in value.items()}
