"""Reading a capture for the tables, statistics and commands."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import BinaryIO, cast

from gamecodec.capture._capture import read
from gamecodec.capture._detect import Override
from gamecodec.capture._records import Item

__all__ = ["Source", "as_items", "capture_name"]


def capture_name(source: object) -> str:
    """The name the ``capture`` column gives ``source`` (a path's file name)."""
    if isinstance(source, str | os.PathLike):
        return os.path.basename(os.fspath(source))
    return str(getattr(source, "name", "") or "")


Source = str | os.PathLike[str] | BinaryIO
"""A capture: a path or a binary file object."""


def as_items(
    source: Source | Iterable[Item],
    protocols: Sequence[str | Override] = (),
    capture: str | None = None,
) -> tuple[Iterable[Item], str]:
    """Items and the capture's name: ``source`` read when it is a path or a file,
    else taken as items already read."""
    if isinstance(source, str | os.PathLike) or hasattr(source, "read"):
        name = capture_name(source) if capture is None else capture
        return read(cast(Source, source), protocols=tuple(protocols)), name
    return source, "" if capture is None else capture
