"""The Avara table's own columns from a batch of payloads, decoded at once.

:func:`gamecodec.avara.decode_array` reads every payload into numpy arrays;
numpy then spreads each datagram's values over its commands' rows and gathers
the commands' data bytes, and the arrays become Arrow columns as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gamecodec import avara
from gamecodec.capture._udp import _COMMAND_NAMES, _PUNCH_NAMES

__all__ = ["decoded_columns"]

_OK = int(avara.Status.OK)
_PUNCH = int(avara.Status.PUNCH)
_READ_ACK = (_OK, int(avara.Status.BAD_DATA_LEN), int(avara.Status.TRUNCATED))
"""Outcomes of a datagram whose checksum passed and whose ack block was read."""


def decoded_columns(
    payloads: Sequence[bytes],
    sizes: Sequence[int],
    options: tuple[int, int],
) -> dict[str, Any]:
    """The own columns of the rows of ``payloads`` (one row per command, one for
    a datagram without any), decoded with ``options`` (net version, layout).

    The result's ``expand`` is the datagram of each row (``None`` when each
    datagram gave one row)."""
    version, layout = options
    got = avara.decode_array(payloads, version=version, layout=layout)
    datagrams, commands = got.datagrams, got.commands
    count = len(datagrams)
    per_datagram = datagrams["command_count"].astype(np.int64)
    rows_per = np.maximum(per_datagram, 1)
    rows = int(rows_per.sum())
    expand = None if rows == count else np.repeat(np.arange(count, dtype=np.int64), rows_per)

    def spread(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        return values if expand is None else values[expand]

    joined = pa.array(payloads, pa.binary())  # the payloads' bytes end to end
    starts = np.frombuffer(joined.buffers()[1], np.int32)[: count + 1]
    lengths = np.diff(starts)
    status = datagrams["status"]
    read_ack = np.isin(status, _READ_ACK)
    ack = datagrams["ack"].astype(np.int32)
    has_bitmap = read_ack & ((ack & 1) != 0) & (lengths >= 8)
    no_crc = status == _PUNCH
    if version is None:  # decoded without a checksum test
        no_crc |= read_ack
    columns: dict[str, Any] = {
        "expand": expand,
        "size": pa.array(spread(np.asarray(sizes, np.int32))),
        "crc_ok": pa.array(spread(read_ack), mask=spread(no_crc)),
        "ack": pa.array(spread(ack), mask=spread(~read_ack)),
        "ack_bitmap": pa.array(
            spread(datagrams["ack_bitmap"].astype(np.int64)), mask=spread(~has_bitmap)
        ),
    }

    flags = commands["flags"]
    first = datagrams["first_command"].astype(np.int64)
    within = np.arange(len(commands), dtype=np.int64) - first[commands["datagram"]]
    own = {
        "index": pa.array(within.astype(np.int16)),
        "serial": pa.array(commands["serial"].astype(np.int32)),
        "send_count": pa.array(commands["send_count"].astype(np.int16)),
        "flags": pa.array(flags),
        "command": pa.array(commands["command"].astype(np.int16)),
        "distribution": pa.array(
            commands["distribution"].astype(np.int32), mask=(flags & 0x40) == 0
        ),
        "p1": pa.array(commands["p1"].astype(np.int32)),
        "p2": pa.array(commands["p2"].astype(np.int32)),
        "p3": pa.array(commands["p3"].astype(np.int32)),
        "sender": pa.array(commands["sender"].astype(np.int16), mask=(flags & 0x80) == 0),
        "data": _data(joined, starts, commands),
    }
    own["command_name"] = _command_names().take(pa.array(commands["command"].astype(np.uint8)))
    if rows != len(commands):  # datagrams without commands: a row of nulls each
        has = np.repeat(per_datagram > 0, rows_per)
        take = pa.array(np.cumsum(has) - 1, mask=~has)
        own = {name: array.take(take) for name, array in own.items()}
        punches = np.flatnonzero(status == _PUNCH)
        if len(punches):  # a hole punch's row is named after the punch
            first_rows = np.cumsum(rows_per) - rows_per
            at = np.zeros(rows, np.bool_)
            at[first_rows[punches]] = True
            named = [
                _PUNCH_NAMES[avara.decode_punch(payloads[i]).command] for i in punches.tolist()
            ]
            own["command_name"] = pc.replace_with_mask(own["command_name"], at, named)
    columns.update(own)
    return columns


@cache
def _command_names() -> pa.Array:
    """Every command number's name, indexed by the number's byte (its two's complement)."""
    return pa.array([_COMMAND_NAMES[(b ^ 0x80) - 0x80] for b in range(256)], pa.string())


def _data(
    joined: pa.Array, starts: np.ndarray[Any, Any], commands: np.ndarray[Any, Any]
) -> pa.Array:
    """Each command's data bytes, taken from the payloads' bytes end to end: an
    array whose items are alternately the bytes between two commands' data and a
    command's data, and every other item of it taken."""
    count = len(commands)
    begin = starts[commands["datagram"]] + commands["data_offset"].astype(np.int32)
    offsets = np.empty(2 * count + 1, np.int32)
    offsets[0] = 0
    offsets[1::2] = begin
    offsets[2::2] = begin + commands["data_length"]
    buffers = [None, pa.py_buffer(offsets), joined.buffers()[2]]
    spaced = pa.Array.from_buffers(pa.binary(), 2 * count, buffers)
    return spaced.take(pa.array(np.arange(1, 2 * count, 2, dtype=np.int32)))
