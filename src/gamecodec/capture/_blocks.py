"""The ``blocks`` column of the LLUDP table.

Each message's blocks are encoded by msgspec as JSON lines in one call, the text
kept in one buffer per batch (nothing per block outlives its message, so the
cyclic collector has nothing more to walk), and the batch's buffer becomes an
Arrow string array with no Python step per block.
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

_ENCODE_LINES = msgspec.json.Encoder().encode_lines
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


def _lines(text: bytes, count: int) -> pa.Array:
    """``count`` newline-ended lines of UTF-8 ``text`` as a string array (JSON text
    has no raw newline inside it)."""
    ends = np.flatnonzero(np.frombuffer(text, np.uint8) == 10)
    if len(ends) != count:  # pragma: no cover - msgspec escapes control characters
        raise AssertionError("a JSON line held a newline")
    offsets = np.zeros(count + 1, np.int64)
    offsets[1:] = ends - np.arange(count)  # each line's end once the newlines are gone
    data = text.replace(b"\n", b"")
    return pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data)).cast(
        pa.string()
    )


def _to_json_lines(blocks: list[Any]) -> bytes:
    """``blocks`` as JSON lines written by ``to_json``, which writes NaN and the
    infinities as strings where msgspec writes ``null`` (an LLUDP field is never
    null)."""
    out = []
    for block in blocks:
        data = to_json(block)
        data.pop("type", None)
        out.append(json.dumps(data, separators=(",", ":")).encode() + b"\n")
    return b"".join(out)


class Blocks:
    """The blocks of one batch's rows as JSON lines, and the name of each run of
    blocks; :meth:`array` makes the column.

    Each message's blocks become msgspec Structs (one class per template block,
    bytes as hex) encoded by one ``encode_lines`` call; the texts are kept (no
    Python object per block outlives the message), joined and split into a
    string array without a Python step per block when the batch is made."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget every block held."""
        self.texts: list[bytes] = []
        self.names: dict[str, int] = {}
        self.run_name: list[int] = []
        self.run_count: list[int] = []
        self.count = 0
        """Blocks held: where the next row's blocks start."""

    def add(self, blocks: dict[str, Any]) -> None:
        """One message's blocks (``Message.blocks``: instances by block name)."""
        structs: list[Any] = []
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
                    structs.append(struct(*values))
                else:
                    structs.append(struct(*block))
        text: bytes = _ENCODE_LINES(structs)
        if null and b"null" in text:  # msgspec writes a non-finite float as null
            text = _to_json_lines([b for instances in blocks.values() for b in instances])
        self.texts.append(text)
        self.count += len(structs)

    def array(self, starts: list[int]) -> pa.Array:
        """The ``blocks`` column of rows whose blocks start at ``starts``; then
        the blocks are forgotten."""
        text = b"".join(self.texts)
        self.texts = []  # freed before _lines asks for as much again
        fields = _lines(text, self.count)
        del text
        runs = np.repeat(np.array(self.run_name, np.int64), np.array(self.run_count, np.int64))
        names = pa.array(list(self.names), pa.string()).take(pa.array(runs, pa.int64()))
        blocks = pa.StructArray.from_arrays([names, fields], fields=list(BLOCK))
        offsets = pa.array([*starts, self.count], pa.int32())
        self.clear()
        return pa.ListArray.from_arrays(offsets, blocks, type=pa.list_(BLOCK))
