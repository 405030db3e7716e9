"""Decode packet captures (pcap, pcapng) of the five protocols.

>>> from gamecodec import capture
>>> cap = capture.read("game.pcap")                       # doctest: +SKIP
>>> for item in cap:                                       # doctest: +SKIP
...     if isinstance(item, capture.Unit):
...         print(item.time, item.flow.id, item.direction, item.names)
>>> [(s.flow.id, s.flow.protocol, s.flow.reason) for s in cap.flows]  # doctest: +SKIP

:func:`read` takes a path or a binary file object and yields, in capture
order, a :class:`Unit` per decoded datagram or message and a
:class:`CaptureError` per thing that could not be read or decoded.
"""

from gamecodec._public import public_dir
from gamecodec.capture._capture import Capture, read
from gamecodec.capture._detect import PORTS, Override, parse_override
from gamecodec.capture._records import (
    Address,
    CaptureError,
    Direction,
    Flow,
    Item,
    StreamDecoder,
    Unit,
)
from gamecodec.capture._streams import STREAM_DECODERS
from gamecodec.capture._tally import FlowStats, OtherFlows

# the tables, JSON lines, statistics and the Dask path, imported when first used
# (pyarrow, matplotlib and dask are optional)
_LAZY = {
    "SCHEMAS": ("gamecodec.capture._tables", "SCHEMAS"),
    "record_batches": ("gamecodec.capture._tables", "record_batches"),
    "tables": ("gamecodec.capture._tables", "tables"),
    "write_tables": ("gamecodec.capture._output", "write_tables"),
    "json_lines": ("gamecodec.capture._jsonl", "json_lines"),
    "write_json_lines": ("gamecodec.capture._jsonl", "write_json_lines"),
    "stats": ("gamecodec.capture._stats", "collect"),
    "CaptureStats": ("gamecodec.capture._stats", "CaptureStats"),
    "dask_to_parquet": ("gamecodec.capture._dask", "to_parquet"),
}


def __getattr__(name: str) -> object:
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


__all__ = [
    "PORTS",
    "SCHEMAS",
    "STREAM_DECODERS",
    "Address",
    "Capture",
    "CaptureError",
    "CaptureStats",
    "Direction",
    "Flow",
    "FlowStats",
    "Item",
    "OtherFlows",
    "Override",
    "StreamDecoder",
    "Unit",
    "dask_to_parquet",
    "json_lines",
    "parse_override",
    "read",
    "record_batches",
    "stats",
    "tables",
    "write_json_lines",
    "write_tables",
]

__dir__ = public_dir(__name__)
