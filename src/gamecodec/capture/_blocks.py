"""The ``blocks`` column of the LLUDP table.

Each block is written by msgspec into one buffer per batch, where it ends
noted (nothing per block outlives its message, so the cyclic collector has
nothing more to walk); the batch's buffer and the ends become an Arrow string
array without copying the text or a Python step per block.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa

from gamecodec._json import to_json

__all__ = ["BLOCK", "Blocks"]

BLOCK = pa.struct([("block", pa.string()), ("fields", pa.string())])

_ENCODE_INTO = msgspec.json.Encoder().encode_into
_BYTES_TYPES = ("VARIABLE", "FIXED")
_FLOAT_TYPES = ("F32", "F64", "LLVECTOR3", "LLVECTOR3D", "LLVECTOR4", "LLQUATERNION")


_SHAPES: dict[type, tuple[Any, tuple[int, ...], bool]] = {}


def _shape(cls: type) -> tuple[Any, tuple[int, ...], bool]:
    """A msgspec Struct with the block class's field names, which fields are
    bytes (written as hex, as JSON lines write them), and whether a block's
    text may hold ``null`` (a float field, which msgspec writes so when it is
    not finite; or a field name holding it)."""
    shape = _SHAPES.get(cls)
    if shape is None:
        fields = cls._spec.fields  # type: ignore[attr-defined]
        struct = msgspec.defstruct(cls.__name__, [f.name for f in fields], gc=False)
        hexed = tuple(i for i, f in enumerate(fields) if f.type.name in _BYTES_TYPES)
        null = any(f.type.name in _FLOAT_TYPES or "null" in f.name for f in fields)
        shape = _SHAPES[cls] = (struct, hexed, null)
    return shape


def _to_json_texts(blocks: list[Any]) -> list[bytes]:
    """Each of ``blocks`` as JSON text written by ``to_json``, which writes NaN
    and the infinities as strings where msgspec writes ``null`` (an LLUDP field
    is never null)."""
    out = []
    for block in blocks:
        data = to_json(block)
        data.pop("type", None)
        out.append(json.dumps(data, separators=(",", ":")).encode())
    return out


class Blocks:
    """The blocks of one batch's rows as JSON text, and the name of each run of
    blocks; :meth:`array` makes the column.

    Each block becomes a msgspec Struct (one class per template block, bytes as
    hex) written by msgspec into the batch's one buffer, where it ends noted
    (no Python object per block outlives the message); the buffer and the ends
    become a string array without a Python step per block, and without copying
    the text again."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget every block held."""
        self.text = bytearray()  # a new one: the last batch's array may still hold the old
        self.ends: list[int] = []
        self.names: dict[str, int] = {}
        self.run_name: list[int] = []
        self.run_count: list[int] = []

    @property
    def count(self) -> int:
        """Blocks held: where the next row's blocks start."""
        return len(self.ends)

    def add(self, blocks: dict[str, Any]) -> None:
        """One message's blocks (``Message.blocks``: instances by block name)."""
        text = self.text
        ends = self.ends
        start = len(text)
        first = len(ends)
        names = self.names
        null = False
        for name, instances in blocks.items():
            if not instances:
                continue
            number = names.get(name)
            if number is None:
                number = names[name] = len(names)
            self.run_name.append(number)
            self.run_count.append(len(instances))
            for block in instances:
                struct, hexed, may_null = _SHAPES.get(block.__class__) or _shape(block.__class__)
                null = null or may_null
                if hexed:
                    values = list(block)
                    for i in hexed:
                        values[i] = values[i].hex()
                    _ENCODE_INTO(struct(*values), text, -1)
                else:
                    _ENCODE_INTO(struct(*block), text, -1)
                ends.append(len(text))
        if null and text.find(b"null", start) >= 0:  # msgspec writes a non-finite float so
            del text[start:]
            del ends[first:]
            for data in _to_json_texts([b for bs in blocks.values() for b in bs]):
                text += data
                ends.append(len(text))

    def array(self, starts: list[int]) -> pa.Array:
        """The ``blocks`` column of rows whose blocks start at ``starts``; then
        the blocks are forgotten."""
        count = self.count
        offsets = np.zeros(count + 1, np.int64)
        offsets[1:] = self.ends
        fields = pa.LargeStringArray.from_buffers(
            count, pa.py_buffer(offsets), pa.py_buffer(self.text)
        ).cast(pa.string())
        runs = np.repeat(np.array(self.run_name, np.int64), np.array(self.run_count, np.int64))
        names = pa.array(list(self.names), pa.string()).take(pa.array(runs, pa.int64()))
        blocks = pa.StructArray.from_arrays([names, fields], fields=list(BLOCK))
        row_offsets = pa.array([*starts, count], pa.int32())
        self.clear()
        return pa.ListArray.from_arrays(row_offsets, blocks, type=pa.list_(BLOCK))
