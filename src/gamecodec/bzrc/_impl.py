"""The active decoder twin (compiled or pure), chosen once, and the verbs built on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gamecodec import _accel
from gamecodec.bzrc._errors import decode_error, truncated
from gamecodec.bzrc._models import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_RESPONSE,
    DOUBLE_FAIL_COMMANDS,
    Fail,
    Help,
    Response,
)
from gamecodec.errors import DecodeError

__all__ = ["Decoder", "decode", "decode_many", "parse_number"]

Buffer = bytes | bytearray | memoryview

if TYPE_CHECKING:  # both twins have the pure twin's API
    from gamecodec.bzrc import _codec_py as _codec
else:
    _codec = _accel.load("gamecodec.bzrc", "_codec", "bzrc")

Decoder = _codec.Decoder
parse_number = _codec.parse_number


def decode(
    data: Buffer,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
    max_response: int = DEFAULT_MAX_RESPONSE,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> list[Response]:
    """Every response in ``data``, a complete stream (or a complete part of one).

    Help output at the end counts as complete. A response or line left
    incomplete at the end raises :class:`~gamecodec.TruncatedError` at the
    offset where the input ended; bad bytes raise
    :class:`~gamecodec.DecodeError` at their offset. Either error's
    ``partial`` holds the responses decoded before it.
    """
    decoder = Decoder(
        max_line=max_line,
        max_grid_cells=max_grid_cells,
        max_response=max_response,
        max_items=max_items,
    )
    out = decoder.feed(data)
    try:
        out += decoder.close()
    except DecodeError as exc:
        exc.partial = out + list(exc.partial or ())
        raise
    return out


def decode_many(
    items: Iterable[Buffer],
    *,
    max_line: int = DEFAULT_MAX_LINE,
    max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
    max_response: int = DEFAULT_MAX_RESPONSE,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> list[Response | DecodeError]:
    """Decode each item on its own: one item holds exactly one complete response.

    The result has one entry per item, in order: the :data:`Response`, or
    the :class:`~gamecodec.DecodeError` that item raised (offsets count from
    the item's first byte). An item holding no response gives a
    :class:`~gamecodec.TruncatedError`, one holding more than one a
    ``DecodeError`` at the offset where the first response ended.
    """
    out: list[Response | DecodeError] = []
    for item in items:
        try:
            responses = decode(
                item,
                max_line=max_line,
                max_grid_cells=max_grid_cells,
                max_response=max_response,
                max_items=max_items,
            )
        except DecodeError as exc:
            out.append(exc)
            continue
        if len(responses) == 1:
            out.append(responses[0])
        elif not responses:
            out.append(truncated("no response in the item", len(item), []))
        else:
            caps = {
                "max_line": max_line,
                "max_grid_cells": max_grid_cells,
                "max_response": max_response,
                "max_items": max_items,
            }
            out.append(_extra(bytes(item), responses[0], caps))
    return out


def _extra(item: bytes, first: Response, caps: dict[str, int]) -> DecodeError:
    """The error for an item holding more than one response (an error path only)."""
    lo, hi = 0, len(item)  # the shortest prefix that completes a response
    while lo < hi:
        mid = (lo + hi) // 2
        decoder = Decoder(**caps)
        if decoder.feed(item[:mid]):
            hi = mid
        else:
            lo = mid + 1
    end = lo
    held = isinstance(first, Help) or (
        isinstance(first, Fail)
        and not first.extra
        and first.ack is not None
        and first.ack.command in DOUBLE_FAIL_COMMANDS
        and first.comment == "Invalid parameter(s)"
    )
    if held:  # it was completed by the first line of the next response
        end = item.rfind(b"\n", 0, end - 1) + 1
    while end < len(item) and item[end] in b" \t\n\r\x0b\x0c":
        end += 1
    return decode_error("more than one response in the item", end)
