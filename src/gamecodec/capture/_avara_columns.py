"""The Avara table's own columns from a batch of payloads, decoded at once.

:func:`gamecodec.avara.decode_array` reads every payload into numpy arrays;
numpy then spreads each datagram's values over its commands' rows and gathers
the commands' data bytes, and the arrays become Arrow columns as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from gamecodec import avara
from gamecodec.capture._udp import _COMMAND_NAMES

__all__ = ["decoded_columns"]

_OK = int(avara.Status.OK)
_PUNCH = int(avara.Status.PUNCH)
_READ_ACK = (_OK, int(avara.Status.BAD_DATA_LEN), int(avara.Status.TRUNCATED))
"""Outcomes of a datagram whose checksum passed and whose ack block was read."""


def decoded_columns(
    payloads: Sequence[bytes],
    sizes: Sequence[int],
    names: Sequence[str | None],
    options: tuple[int, int],
) -> dict[str, Any]:
    """The own columns of the rows of ``payloads`` (one row per command, one for
    a datagram without any), decoded with ``options`` (net version, layout).

    ``names`` are the rows' command names as the reader gave them. The result's
    ``expand`` is the datagram of each row (``None`` when each gave one row)."""
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

    status = datagrams["status"]
    read_ack = np.isin(status, _READ_ACK)
    lengths = np.fromiter(map(len, payloads), np.int64, count)
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
        "data": _data(payloads, lengths, commands),
    }
    if len(names) != rows:  # names that do not match the payloads: the commands' own
        ids = commands["command"].tolist()
        own["command_name"] = pa.array([_COMMAND_NAMES[c] for c in ids], pa.string())
    if rows != len(commands):  # datagrams without commands: a row of nulls each
        has = np.repeat(per_datagram > 0, rows_per)
        take = pa.array(np.cumsum(has) - 1, mask=~has)
        own = {name: array.take(take) for name, array in own.items()}
    columns.update(own)
    if len(names) == rows:
        columns["command_name"] = pa.array(names, pa.string())
    return columns


def _data(
    payloads: Sequence[bytes], lengths: np.ndarray[Any, Any], commands: np.ndarray[Any, Any]
) -> pa.Array:
    """Each command's data bytes, gathered from the joined payloads."""
    starts = np.zeros(len(payloads), np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    sizes = commands["data_length"].astype(np.int64)
    offsets = np.zeros(len(commands) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    source = starts[commands["datagram"]] + commands["data_offset"]
    gather = np.repeat(source - offsets[:-1], sizes) + np.arange(offsets[-1])
    data = np.frombuffer(b"".join(payloads), np.uint8)[gather]
    buffers = [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.binary(), len(commands), buffers)
