"""Decoded capture items as JSON lines: one object per unit or error."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from gamecodec._json import to_json
from gamecodec.capture._records import CaptureError, Flow, Item
from gamecodec.capture._source import Source, as_items

__all__ = ["json_lines", "record", "write_json_lines"]


def _flow(flow: Flow | None) -> dict[str, Any]:
    if flow is None:
        return {"flow": None, "flow_id": None}
    return {"flow": flow.index, "flow_id": flow.id}


def record(item: Item, capture: str = "") -> dict[str, Any]:
    """One item as a JSON object.

    A unit: ``capture``, ``time`` (seconds since the epoch), ``packet``, ``flow``
    (its number), ``flow_id``, ``direction``, ``protocol``, ``names`` (the message
    names it holds), ``size`` and ``value`` (what the protocol's decoder gave, as
    :func:`gamecodec.cli.to_json` writes it). An error: the same place keys,
    ``protocol`` (the flow's, or null) and ``error``: ``where``, ``offset``,
    ``message``."""
    if isinstance(item, CaptureError):
        return {
            "capture": capture,
            "time": item.time,
            "packet": item.packet,
            **_flow(item.flow),
            "direction": item.direction,
            "protocol": None if item.flow is None else item.flow.protocol,
            "error": {"where": item.where, "offset": item.offset, "message": item.message},
        }
    return {
        "capture": capture,
        "time": item.time,
        "packet": item.packet,
        **_flow(item.flow),
        "direction": item.direction,
        "protocol": item.protocol,
        "names": list(item.names),
        "size": item.size,
        "value": to_json(item.value),
    }


def json_lines(
    source: Source | Iterable[Item], *, protocols: Sequence[str] = (), capture: str | None = None
) -> Iterator[str]:
    """Each item of ``source`` (a capture, or items already read) as one line of
    JSON, without the newline; ``capture`` defaults to the file's name."""
    items, name = as_items(source, protocols, capture)
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for item in items:
        yield dumps(record(item, name))


def write_json_lines(
    source: Source | Iterable[Item],
    out: IO[str],
    *,
    protocols: Sequence[str] = (),
    capture: str | None = None,
) -> int:
    """Write ``source``'s items to ``out``, one JSON object a line; the number written."""
    count = 0
    for line in json_lines(source, protocols=protocols, capture=capture):
        out.write(line)
        out.write("\n")
        count += 1
    return count
