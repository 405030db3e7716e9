"""A decoded response as the lines the reference client ``bzrc.py`` reads.

The reference reads every reply with ``conn.readline().split()``. The
low-level readers of :mod:`gamecodec.bzrc.compat` (``read_arr``, ``expect``,
``read_mytanks`` ...) read the same words, taken from the response the
session decoded: each line's words, and the decoded value the line stands
for (a list line its item, a ``begin`` or ``at`` line the whole response), so
the readers build their results from the decoded values, as the high-level
methods do. Numbers are written back with ``str`` (ints) and ``repr``
(floats): the words bzrflag sent (its 12-digit floats come back digit for
digit), and the value exactly for any other server. The second ``fail`` of
a speed/angvel argument error is not repeated (it answered nothing).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from gamecodec.bzrc._models import (
    Ack,
    Error,
    Fail,
    Greeting,
    Help,
    Item,
    Listing,
    OccGrid,
    Ok,
    Response,
    Timer,
)

__all__ = ["Line", "response_lines"]


class Line(NamedTuple):
    """One line of a response: its words, and the decoded value it stands for."""

    words: list[str]
    value: object = None


def _number(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _words(value: Any) -> list[str]:
    """A field's words: text split as the wire splits it, numbers written
    back, corner tuples flattened."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, tuple):
        return [word for part in value for word in _words(part)]
    return [_number(value)]


def _item_line(item: Item) -> Line:
    words = [type(item).__name__.lower()]  # Team -> team, MyTank -> mytank ...
    for field in item:
        words += _words(field)
    return Line(words, item)


def _ack_lines(ack: Ack | None) -> list[Line]:
    if ack is None:
        return []
    echo = [ack.command, *ack.args] if ack.command else []
    return [Line(["ack", _number(ack.time), *echo])]


def _grid_lines(response: OccGrid) -> list[Line]:
    w, h = response.grid.shape
    lines = [
        Line(["begin"], response),
        Line(["at", f"{response.x},{response.y}"], response),
        Line(["size", f"{w}x{h}"], response),
    ]
    if w and h:
        cells = (response.grid + ord("0")).tobytes().decode("ascii")
        lines += [Line([cells[i * h : (i + 1) * h]]) for i in range(w)]
    return [*lines, Line(["end"])]


def response_lines(response: Response) -> list[Line]:
    """The lines the reference client would read for ``response``."""
    if isinstance(response, Greeting):
        return [Line([response.protocol, str(response.version)])]
    if isinstance(response, Error):
        return [Line(["error", *response.message.split()], response)]
    if isinstance(response, Help):
        return [Line(line.split(), response) for line in response.lines]
    head = _ack_lines(response.ack)
    if isinstance(response, Ok):
        return [*head, Line(["ok"], response)]
    if isinstance(response, Fail):
        return [*head, Line(["fail", *response.comment.split()], response)]
    if isinstance(response, Timer):
        return [*head, Line(["timer", _number(response.elapsed), _number(response.limit)])]
    if isinstance(response, OccGrid):
        return head + _grid_lines(response)
    assert isinstance(response, Listing)
    items = [_item_line(item) for item in response.items]
    return [*head, Line(["begin"], response), *items, Line(["end"])]
